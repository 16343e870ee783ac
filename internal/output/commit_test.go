package output

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/commitfs"
)

// dirState is every entry of dir, hidden ones included, with its contents
// (a directory as NAME/, empty).
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	state := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			state[e.Name()+"/"] = ""
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		state[e.Name()] = string(b)
	}
	return state
}

// outputSet is what one run writes to dir: a.jsonl, or a-train.jsonl and
// a-test.jsonl, and a.jsonl.manifest.json.
type outputSet struct {
	dir   string
	split bool
}

func (o outputSet) manifest() string { return filepath.Join(o.dir, "a.jsonl.manifest.json") }

func (o outputSet) dataPaths() []string {
	if o.split {
		return []string{filepath.Join(o.dir, "a-train.jsonl"), filepath.Join(o.dir, "a-test.jsonl")}
	}
	return []string{filepath.Join(o.dir, "a.jsonl")}
}

// commit writes the set with data of run and commits it with fsys.
func (o outputSet) commit(t *testing.T, fsys commitfs.FS, run string) error {
	t.Helper()
	return o.commitAfter(t, fsys, run, func() {})
}

// commitAfter is commit, calling between the files' writing and their
// commit (a directory may take a file's place there).
func (o outputSet) commitAfter(t *testing.T, fsys commitfs.FS, run string, between func()) error {
	t.Helper()
	m := &Manifest{Tool: "timeaware", Command: "test " + run}
	var files []*File
	for _, p := range o.dataPaths() {
		f, err := Create(p)
		require.NoError(t, err)
		_, err = f.Write([]byte("rows of " + run + " in " + filepath.Base(p) + "\n"))
		require.NoError(t, err)
		e := f.Entry("rows", "jsonl", nil)
		e.Path = filepath.Base(p) // found beside the manifest, whatever the directory
		m.Outputs = append(m.Outputs, e)
		files = append(files, f)
	}
	between()
	ctx := context.Background()
	if fsys != nil {
		ctx = commitfs.WithFS(ctx, fsys)
	}
	return Commit(ctx, o.manifest(), m, files...)
}

func is(path string) func(string) bool { return func(p string) bool { return p == path } }

func contains(s string) func(string) bool {
	return func(p string) bool { return strings.Contains(filepath.Base(p), s) }
}

// TestCommitFailureKeepsThePreviousOutputs: whatever step of a commit
// fails, the previous outputs and manifest are in place afterwards, byte
// for byte, and no temporary file, backup or journal is left; without
// previous outputs the directory stays empty. The same commit then
// succeeds and replaces them all.
func TestCommitFailureKeepsThePreviousOutputs(t *testing.T) {
	for _, split := range []bool{false, true} {
		for _, tc := range []struct {
			name  string
			fsys  func(o outputSet) *commitfs.Faulty
			wants error
		}{
			{"the manifest cannot be written", func(outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpWrite, contains(".manifest.json.tmp-"), commitfs.ErrInjected)
			}, commitfs.ErrInjected},
			{"the manifest cannot be flushed", func(outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpSync, contains(".manifest.json.tmp-"), commitfs.ErrInjected)
			}, commitfs.ErrInjected},
			{"the disk is full for the manifest", func(outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpCreate, contains(".manifest.json.tmp-"), syscall.ENOSPC)
			}, syscall.ENOSPC},
			{"the journal cannot be written", func(outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpWrite, contains(journalKind), syscall.ENOSPC)
			}, syscall.ENOSPC},
			{"no backup can be made", func(outputSet) *commitfs.Faulty {
				f := commitfs.FailFirst(commitfs.OpLink, contains(".bak-"), syscall.ENOSPC)
				link := f.Fail
				f.Fail = func(c commitfs.Call) error {
					if c.Op == commitfs.OpRename && strings.Contains(c.To, ".bak-") {
						return syscall.ENOSPC
					}
					return link(c)
				}
				return f
			}, syscall.ENOSPC},
			{"the directory cannot be synced", func(outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpSyncDir, func(string) bool { return true }, commitfs.ErrInjected)
			}, commitfs.ErrInjected},
			{"the first data rename fails", func(o outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpRename, is(o.dataPaths()[0]), commitfs.ErrInjected)
			}, commitfs.ErrInjected},
			{"the last data rename fails", func(o outputSet) *commitfs.Faulty {
				return commitfs.FailFirst(commitfs.OpRename, is(o.dataPaths()[len(o.dataPaths())-1]), commitfs.ErrInjected)
			}, commitfs.ErrInjected},
			{"the disk fills between the data and the manifest", func(o outputSet) *commitfs.Faulty {
				return commitfs.DiskFullAfter(o.dataPaths()[len(o.dataPaths())-1], o.manifest())
			}, syscall.ENOSPC},
			{"the directory cannot be synced after the renames", func(o outputSet) *commitfs.Faulty {
				renamed := false
				return &commitfs.Faulty{Fail: func(c commitfs.Call) error {
					if c.Op == commitfs.OpRename && c.To == o.manifest() {
						renamed = true
					}
					if renamed && c.Op == commitfs.OpSyncDir {
						return commitfs.ErrInjected
					}
					return nil
				}}
			}, commitfs.ErrInjected},
		} {
			for _, previous := range []bool{true, false} {
				if !previous && strings.Contains(tc.name, "backup") {
					continue // nothing to back up: the commit succeeds
				}
				name := tc.name
				if split {
					name += "/split"
				}
				if !previous {
					name += "/no previous outputs"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					o := outputSet{dir: t.TempDir(), split: split}
					if previous {
						require.NoError(t, o.commit(t, nil, "one"))
					}
					before := dirState(t, o.dir)
					if previous {
						require.Len(t, before, len(o.dataPaths())+1)
					}

					fsys := tc.fsys(o)
					err := o.commit(t, fsys, "two")
					require.ErrorIs(t, err, tc.wants)
					assert.NotContains(t, err.Error(), "putting the previous files back")
					assert.Equal(t, before, dirState(t, o.dir), "the previous outputs and manifest, nothing else")

					require.NoError(t, o.commit(t, nil, "two"))
					after := dirState(t, o.dir)
					require.Len(t, after, len(o.dataPaths())+1, "the new outputs and manifest, nothing else")
					for name, content := range after {
						assert.Contains(t, content, "two", name)
					}
					_, err = ReadManifest(o.manifest(), true)
					require.NoError(t, err)
				})
			}
		}
	}
}

// TestCommitWithoutHardLinks: on a file system without hard links the
// previous files are backed up by renaming them, and the commit, or its
// rollback, works all the same.
func TestCommitWithoutHardLinks(t *testing.T) {
	noLinks := func(c commitfs.Call) error {
		if c.Op == commitfs.OpLink {
			return syscall.EPERM
		}
		return nil
	}
	o := outputSet{dir: t.TempDir(), split: true}
	require.NoError(t, o.commit(t, nil, "one"))
	before := dirState(t, o.dir)

	failed := false
	fsys := &commitfs.Faulty{Fail: func(c commitfs.Call) error {
		if !failed && c.Op == commitfs.OpRename && c.To == o.manifest() {
			failed = true
			return commitfs.ErrInjected
		}
		return noLinks(c)
	}}
	require.ErrorIs(t, o.commit(t, fsys, "two"), commitfs.ErrInjected)
	assert.Equal(t, before, dirState(t, o.dir))

	require.NoError(t, o.commit(t, &commitfs.Faulty{Fail: noLinks}, "two"))
	after := dirState(t, o.dir)
	assert.Len(t, after, 3)
	_, err := ReadManifest(o.manifest(), true)
	require.NoError(t, err)
}

// TestCommitSingleFile: a file without a manifest is renamed into place;
// if that fails, the previous file stays and the temporary file goes.
func TestCommitSingleFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scores.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("previous\n"), 0o644))
	write := func(fsys commitfs.FS) error {
		f, err := Create(path)
		require.NoError(t, err)
		_, err = f.Write([]byte("new\n"))
		require.NoError(t, err)
		return Commit(commitfs.WithFS(context.Background(), fsys), "", nil, f)
	}
	require.ErrorIs(t, write(commitfs.FailFirst(commitfs.OpRename, is(path), commitfs.ErrInjected)), commitfs.ErrInjected)
	assert.Equal(t, map[string]string{"scores.jsonl": "previous\n"}, dirState(t, dir))
	require.NoError(t, write(commitfs.OS{}))
	assert.Equal(t, map[string]string{"scores.jsonl": "new\n"}, dirState(t, dir))
}

// TestCommitRefusesANonFileInTheWay: a directory that takes an output's
// place while the outputs are written fails the commit before anything is
// renamed. (One there from the start is refused at Create.)
func TestCommitRefusesANonFileInTheWay(t *testing.T) {
	o := outputSet{dir: t.TempDir(), split: true}
	require.NoError(t, o.commit(t, nil, "one"))
	test := o.dataPaths()[1]
	var before map[string]string
	err := o.commitAfter(t, nil, "two", func() {
		require.NoError(t, os.Remove(test))
		require.NoError(t, os.MkdirAll(filepath.Join(test, "x"), 0o755))
		before = dirState(t, o.dir)
	})
	require.ErrorIs(t, err, errNotAFile)
	assert.ErrorContains(t, err, "writing "+test)
	assert.Equal(t, before, dirState(t, o.dir))
}

// TestCommitCrashAtEveryStep stops a commit dead before each of its file
// system operations in turn (that operation and every later one fail, the
// rollback's included, as if the process had been killed). A mix it leaves
// is detected by the manifest's check. The next commit finds the journal
// and, though it fails as well, leaves the directory holding either the
// previous outputs and manifest or the new ones, and nothing else but the
// temporary files a dead process leaves (atomicfile.RemoveStale removes
// them at the next run).
func TestCommitCrashAtEveryStep(t *testing.T) {
	for _, split := range []bool{false, true} {
		// A successful commit's operations, counted.
		probe := outputSet{dir: t.TempDir(), split: split}
		require.NoError(t, probe.commit(t, nil, "one"))
		counting := &commitfs.Faulty{}
		require.NoError(t, probe.commit(t, counting, "two"))
		steps := len(counting.Calls())
		require.Greater(t, steps, 6)
		newState := dirState(t, probe.dir)

		mixes := 0
		for crashAt := range steps {
			t.Run("", func(t *testing.T) {
				o := outputSet{dir: t.TempDir(), split: split}
				require.NoError(t, o.commit(t, nil, "one"))
				before := dirState(t, o.dir)
				n := 0
				dead := &commitfs.Faulty{Fail: func(commitfs.Call) error {
					n++
					if n > crashAt {
						return commitfs.ErrInjected
					}
					return nil
				}}
				_ = o.commit(t, dead, "two") // fails, unless only the cleaning up did

				crashed := withoutTemps(dirState(t, o.dir))
				consistent := equalOutputs(crashed, before) || equalOutputs(crashed, newState)
				_, err := ReadManifest(o.manifest(), true)
				if !consistent {
					mixes++
					assert.ErrorIs(t, err, ErrChanged, "the mix is detected")
				}

				// The next run fails too, but first finishes the dead one's
				// commit.
				err = o.commit(t, commitfs.FailFirst(commitfs.OpWrite, contains(".manifest.json.tmp-"), commitfs.ErrInjected), "three")
				require.ErrorIs(t, err, commitfs.ErrInjected)
				got := withoutTemps(dirState(t, o.dir))
				if !assert.True(t, maps.Equal(got, before) || maps.Equal(got, newState), "crash before operation %d of %d: %v", crashAt, steps, got) {
					t.Log(dead.Calls())
				}
			})
		}
		assert.Positive(t, mixes, "some crash points leave a mix until recovery")
	}
}

// withoutTemps leaves out the temporary files of a dead writer.
func withoutTemps(state map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range state {
		if !strings.Contains(name, ".tmp-") {
			out[name] = content
		}
	}
	return out
}

// equalOutputs compares the visible files only.
func equalOutputs(a, b map[string]string) bool {
	visible := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if !strings.HasPrefix(k, ".") {
				out[k] = v
			}
		}
		return out
	}
	return maps.Equal(visible(a), visible(b))
}

// TestRecoverLeavesALiveCommitAlone: a journal still locked is a commit
// under way in another process, not one to finish.
func TestRecoverLeavesALiveCommitAlone(t *testing.T) {
	o := outputSet{dir: t.TempDir()}
	require.NoError(t, o.commit(t, nil, "one"))
	c := &commit{fs: commitfs.OS{}, anchor: o.manifest(),
		targets: []target{{Path: o.manifest(), Temp: filepath.Join(o.dir, ".gone"), SHA256: "not yet"}}}
	require.NoError(t, c.writeJournal())
	before := dirState(t, o.dir)
	require.NoError(t, recoverCommits(commitfs.OS{}, o.manifest()))
	assert.Equal(t, before, dirState(t, o.dir), "the live journal stays")
	require.NoError(t, c.jfile.Close())
	require.NoError(t, recoverCommits(commitfs.OS{}, o.manifest()))
	assert.Len(t, dirState(t, o.dir), 2, "once its process is gone, its journal goes")
}

// TestCommitErrorsNameThePath: a failed commit's error names the output
// and wraps the cause.
func TestCommitErrorsNameThePath(t *testing.T) {
	o := outputSet{dir: t.TempDir(), split: true}
	err := o.commit(t, commitfs.FailFirst(commitfs.OpRename, is(o.dataPaths()[1]), commitfs.ErrInjected), "one")
	require.ErrorIs(t, err, commitfs.ErrInjected)
	assert.ErrorContains(t, err, "writing "+o.dataPaths()[1]+": ")
	var le *os.LinkError
	assert.True(t, errors.As(err, &le))
}
