package commitfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromIsOSUnlessGiven(t *testing.T) {
	assert.Equal(t, OS{}, From(context.Background()))
	f := &Faulty{}
	assert.Same(t, f, From(WithFS(context.Background(), f)))
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys func(dir string) *Faulty
		// fails says which of the renames a→b, b→c, c→d fail.
		fails [3]error
	}{
		{"nothing", func(string) *Faulty { return &Faulty{} }, [3]error{}},
		{"the first rename onto c, once", func(string) *Faulty {
			return FailFirst(OpRename, func(p string) bool { return filepath.Base(p) == "c" }, ErrInjected)
		}, [3]error{nil, ErrInjected, nil}},
		{"the disk fills after b", func(dir string) *Faulty {
			return DiskFullAfter(filepath.Join(dir, "b"), filepath.Join(dir, "d"))
		}, [3]error{nil, nil, syscall.ENOSPC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fsys := tc.fsys(dir)
			f, err := fsys.Create(filepath.Join(dir, "a"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			names := []string{"a", "b", "c", "d"}
			for i, want := range tc.fails {
				from, to := filepath.Join(dir, names[i]), filepath.Join(dir, names[i+1])
				err := fsys.Rename(from, to)
				if want == nil {
					require.NoError(t, err)
					continue
				}
				require.ErrorIs(t, err, want)
				require.NoError(t, os.Rename(from, to), "nothing was done")
			}
			assert.FileExists(t, filepath.Join(dir, "d"))
			assert.Len(t, fsys.Calls(), 4)
		})
	}
}
