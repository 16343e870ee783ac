package atomicfile

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listing is every entry of dir, hidden ones included.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// modes runs a test with the unnamed temporary file (where the OS has it)
// and with the named fallback.
func modes(t *testing.T, f func(t *testing.T, unnamed bool)) {
	for _, unnamed := range []bool{true, false} {
		name := "named fallback"
		if unnamed {
			name = "unnamed tmpfile"
			if runtime.GOOS != "linux" {
				continue
			}
		}
		t.Run(name, func(t *testing.T) {
			old := useTmpfile
			useTmpfile = unnamed
			t.Cleanup(func() { useTmpfile = old })
			f(t, unnamed)
		})
	}
}

func TestCommitPutsTheWholeFileInPlace(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.parquet")
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
		f, err := Create(path)
		require.NoError(t, err)
		_, err = f.Write([]byte("new contents"))
		require.NoError(t, err)
		if unnamed {
			assert.Equal(t, []string{"out.parquet"}, listing(t, dir), "nothing is visible before Commit")
		} else {
			assert.Len(t, listing(t, dir), 2)
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "old", string(got), "readers see the old file until Commit")

		require.NoError(t, f.Commit())
		got, err = os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "new contents", string(got))
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(Perm), st.Mode().Perm())
		assert.Equal(t, []string{"out.parquet"}, listing(t, dir))
		require.NoError(t, f.Commit(), "a second Commit is a no-op")
	})
}

func TestAbortLeavesTheDirectoryAsItWas(t *testing.T) {
	modes(t, func(t *testing.T, _ bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.jsonl")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), nil, 0o644))
		before := listing(t, dir)
		f, err := Create(path)
		require.NoError(t, err)
		_, err = f.Write([]byte("partial"))
		require.NoError(t, err)
		f.Abort()
		f.Abort()
		assert.Equal(t, before, listing(t, dir))
	})
}

func TestCommitFailureLeavesNothing(t *testing.T) {
	modes(t, func(t *testing.T, _ bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out")
		f, err := Create(path)
		require.NoError(t, err)
		// A directory takes the file's place while it is written.
		require.NoError(t, os.Mkdir(path, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(path, "x"), nil, 0o644))
		_, err = f.Write([]byte("data"))
		require.NoError(t, err)
		err = f.Commit()
		require.Error(t, err)
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe, "a refusal of the file system is a *fs.PathError")
		assert.Equal(t, "commit", pe.Op)
		assert.Equal(t, path, pe.Path)
		assert.Equal(t, []string{"out"}, listing(t, dir))
	})
}

func TestCreateNamesThePath(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "out.parquet")
	_, err := Create(missing)
	require.EqualError(t, err, "create "+missing+": directory "+filepath.Join(dir, "no")+" does not exist")
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, missing, pe.Path)

	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	err = WriteFile(filepath.Join(notDir, "sub", "out"), []byte("x"))
	require.EqualError(t, err, "create "+filepath.Join(notDir, "sub", "out")+": "+notDir+" is not a directory")
	require.ErrorAs(t, err, &pe)

	locked := filepath.Join(dir, "locked")
	require.NoError(t, os.Mkdir(locked, 0o500))
	err = WriteFile(filepath.Join(locked, "sub", "out"), []byte("x"))
	if os.Geteuid() != 0 { // root writes anywhere
		require.EqualError(t, err, "create "+filepath.Join(locked, "sub", "out")+": cannot create "+filepath.Join(locked, "sub")+": permission denied")
	}
}

func TestWriteFile(t *testing.T) {
	modes(t, func(t *testing.T, _ bool) {
		path := filepath.Join(t.TempDir(), "a", "b", "m.json")
		require.NoError(t, WriteFile(path, []byte("{}\n")))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "{}\n", string(got))
	})
}

func TestStaleTemporaryFilesOfDeadWritersAreRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPID := dead.Process.Pid
	old := time.Now().Add(-2 * time.Hour)
	plant := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("leftover"), 0o600))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
	}
	plant(".out.parquet.tmp-"+strconv.Itoa(deadPID)+"-abc", time.Now())     // killed writer: removed
	plant(".out.parquet.tmp-"+strconv.Itoa(os.Getpid())+"-def", time.Now()) // a live writer: kept
	plant(".out.parquet.tmp-123456789", old)                                // earlier naming, old: removed
	plant(".out.parquet.tmp-987654321", time.Now())                         // earlier naming, recent: kept
	plant(".other.parquet.tmp-"+strconv.Itoa(deadPID)+"-abc", time.Now())   // another output's: kept
	plant("out.parquet.tmp-"+strconv.Itoa(deadPID)+"-abc", time.Now())      // not ours: kept

	f, err := Create(filepath.Join(dir, "out.parquet"))
	require.NoError(t, err)
	f.Abort()
	got := listing(t, dir)
	slices.Sort(got)
	assert.Equal(t, []string{
		".other.parquet.tmp-" + strconv.Itoa(deadPID) + "-abc",
		".out.parquet.tmp-" + strconv.Itoa(os.Getpid()) + "-def",
		".out.parquet.tmp-987654321",
		"out.parquet.tmp-" + strconv.Itoa(deadPID) + "-abc",
	}, got)
}

// TestCreateRefusesADirectory: a path that names a directory is refused at
// Create, before any work, naming the path.
func TestCreateRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir)
	assert.Nil(t, f)
	require.ErrorIs(t, err, ErrIsDir)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, dir, pe.Path)
	assert.Empty(t, listing(t, dir), "nothing written")
}
