package examples

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteSample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "input")
	require.NoError(t, WriteSample(dir))
	for name, embedded := range map[string]string{
		"trajectories.jsonl": "pairs/trajectories.jsonl", "votes.jsonl": "pairs/votes.jsonl",
		"direct.jsonl": "pairs/direct.jsonl", "tasks.jsonl": "budget/tasks.jsonl",
	} {
		want, err := Sample.ReadFile(embedded)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 4, "the four files and nothing else")
	notDir := filepath.Join(dir, "votes.jsonl")
	assert.ErrorContains(t, WriteSample(filepath.Join(notDir, "input")), notDir+" is not a directory")
}
