package dataset

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o644))
		return p
	}
	b, a := write("in/b.jsonl"), write("in/a.JSON")
	write("in/out.parquet")
	write("in/.hidden.jsonl")
	write("in/pairs.jsonl.manifest.json")
	write("in/nested/c.jsonl")
	single := write("single.txt")
	write("empty/x.parquet")

	got, err := ExpandJSON([]string{single, filepath.Join(dir, "in"), b})
	require.NoError(t, err)
	assert.Equal(t, []string{single, a, b}, got, "a file as given, a directory's JSON files sorted and not nested, each file once")

	for _, tc := range []struct {
		name, path string
		is         error
	}{
		{"missing", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"no JSON files", filepath.Join(dir, "empty"), ErrNoJSONFiles},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ExpandJSON([]string{single, tc.path})
			require.ErrorIs(t, err, tc.is)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.path, ie.Path)
		})
	}
}
