package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSynthShardsTogetherHoldEveryRowOnce: for every synth command that
// takes --shard, the shards of one run hold the rows of the whole run,
// each once, byte for byte.
func TestSynthShardsTogetherHoldEveryRowOnce(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"traveler", []string{"synth", "traveler", "--count", "30", "--seed", "3"}},
		{"negotiation", []string{"synth", "negotiation", "--count", "30", "--seed", "3"}},
		{"puzzles", []string{"synth", "puzzles", "--count", "30", "--seed", "3"}},
		{"budget", []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "3", "--every-multiplier"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := func(path string) []string {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				if len(b) == 0 {
					return nil
				}
				return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
			}
			whole := filepath.Join(dir, tc.name+".jsonl")
			code, _, stderr := runCLI(t, append(tc.args, "--out", whole)...)
			require.Equal(t, 0, code, stderr)
			var parts []string
			for i := range 3 {
				part := filepath.Join(dir, fmt.Sprintf("%s-part%d.jsonl", tc.name, i))
				code, _, stderr := runCLI(t, append(tc.args, "--shard", fmt.Sprintf("%d/3", i), "--out", part)...)
				require.Equal(t, 0, code, stderr)
				parts = append(parts, lines(part)...)
			}
			want := lines(whole)
			for _, s := range [][]string{want, parts} {
				for i := range s {
					s[i] = strings.TrimSuffix(s[i], "\n")
				}
				slices.Sort(s)
			}
			assert.Equal(t, want, parts)
		})
	}
	code, _, stderr := runCLI(t, "synth", "traveler", "--count", "3", "--seed", "1", "--shard", "3/3", "--out", filepath.Join(dir, "x.jsonl"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--shard 3/3: want i/n with 0 <= i < n`)
}
