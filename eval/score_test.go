package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/rewards"
)

// timelyItems are n timely/general items whose answers are right on every
// third; each has its elapsed time and limit, so no timer is needed.
func timelyItems(n int) []string {
	var lines []string
	for i := range n {
		answer := "7"
		if i%3 == 0 {
			answer = "42"
		}
		lines = append(lines, fmt.Sprintf(`{"solution_str":"<answer>%s</answer>","ground_truth":"42","extra_info":{"elapsed_s":%d,"time_limit_s":10}}`, answer, i%10))
	}
	return lines
}

func scoreOptions(t *testing.T, input string) ScoreOptions {
	t.Helper()
	rw, ok := rewards.Lookup("timely/general")
	require.True(t, ok)
	return ScoreOptions{Reward: rw, Rewards: rewards.DefaultConfig(), Input: input}
}

// scoresOf decodes result lines' scores.
func scoresOf(t *testing.T, out string) []float64 {
	t.Helper()
	var scores []float64
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r struct{ Score float64 }
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		scores = append(scores, r.Score)
	}
	return scores
}

// TestScoreDirectoryAndShards: a directory of parts scores as the file
// they were cut from, to stdout or to Out; its shards, numbered across
// the parts, together score every line once.
func TestScoreDirectoryAndShards(t *testing.T) {
	dir := t.TempDir()
	lines := timelyItems(9)
	whole := filepath.Join(dir, "whole.jsonl")
	require.NoError(t, os.WriteFile(whole, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	parts := filepath.Join(dir, "parts")
	require.NoError(t, os.MkdirAll(parts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "part-0.jsonl"), []byte(strings.Join(lines[:4], "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "part-1.jsonl"), []byte(strings.Join(lines[4:], "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "notes.parquet"), []byte("not JSONL"), 0o644))

	var stdout bytes.Buffer
	opt := scoreOptions(t, whole)
	opt.Stdout = &stdout
	sum, err := Score(context.Background(), opt)
	require.NoError(t, err)
	assert.Equal(t, 9, sum.Items)
	assert.Equal(t, 9, sum.Lines)
	want := scoresOf(t, stdout.String())
	require.Len(t, want, 9)
	assert.InDelta(t, sum.Sum/9, sum.Mean(), 1e-12)

	opt = scoreOptions(t, parts)
	opt.Out = filepath.Join(dir, "out.jsonl")
	sum, err = Score(context.Background(), opt)
	require.NoError(t, err)
	assert.Equal(t, 9, sum.Items)
	b, err := os.ReadFile(opt.Out)
	require.NoError(t, err)
	assert.Equal(t, want, scoresOf(t, string(b)))

	got := map[int]float64{}
	for i := range 2 {
		var out bytes.Buffer
		opt := scoreOptions(t, parts)
		opt.Stdout, opt.Shard = &out, shard.Shard{Index: i, Count: 2}
		sum, err := Score(context.Background(), opt)
		require.NoError(t, err)
		assert.Equal(t, 9, sum.Items+sum.Skipped)
		for k, s := range scoresOf(t, out.String()) {
			got[i+2*k] = s
		}
	}
	require.Len(t, got, 9)
	for i, w := range want {
		assert.Equal(t, w, got[i], "line %d", i+1)
	}
}

// TestScoreFailures: more failed items than allowed write nothing and name
// the first errors, prefixed by their part.
func TestScoreFailures(t *testing.T) {
	dir := t.TempDir()
	lines := timelyItems(4)
	lines[1], lines[3] = `{"solution_str": 5}`, `{"data_source":"timely/game"}`
	parts := filepath.Join(dir, "parts")
	require.NoError(t, os.MkdirAll(parts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "a.jsonl"), []byte(strings.Join(lines[:2], "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "b.jsonl"), []byte(strings.Join(lines[2:], "\n")+"\n"), 0o644))
	opt := scoreOptions(t, parts)
	opt.Out = filepath.Join(dir, "out.jsonl")
	opt.MaxErrors = 1
	_, err := Score(context.Background(), opt)
	var fe *FailuresError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, parts, fe.Input)
	assert.Equal(t, 2, fe.Failed)
	assert.Equal(t, 4, fe.Items)
	assert.Equal(t, 1, fe.MaxErrors)
	require.Len(t, fe.FirstErrors, 2)
	assert.True(t, strings.HasPrefix(fe.FirstErrors[0], filepath.Join(parts, "a.jsonl")+": line 2: "), fe.FirstErrors[0])
	assert.True(t, strings.HasPrefix(fe.FirstErrors[1], filepath.Join(parts, "b.jsonl")+": line 2: data_source: "), fe.FirstErrors[1])
	assert.Equal(t, "eval: "+parts+": 2 of 4 items could not be scored (at most 1 may fail); first: "+strings.Join(fe.FirstErrors, "; "), fe.Error())
	assert.NoFileExists(t, opt.Out)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")

	opt.MaxErrors = 2
	sum, err := Score(context.Background(), opt)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Failed)
	assert.FileExists(t, opt.Out)

	opt = scoreOptions(t, "-")
	opt.Stdin, opt.Stdout = strings.NewReader(lines[1]+"\n"), &bytes.Buffer{}
	_, err = Score(context.Background(), opt)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "stdin", fe.Input)
	assert.True(t, strings.HasPrefix(fe.FirstErrors[0], "line 1: "), "one input: no prefix")
}

func TestScoreInputErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.MkdirAll(empty, 0o755))
	onlyParquet := filepath.Join(dir, "parquet")
	require.NoError(t, os.MkdirAll(onlyParquet, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(onlyParquet, "a.parquet"), nil, 0o644))
	file := filepath.Join(dir, "file.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(timelyItems(1)[0]+"\n"), 0o644))
	for _, tc := range []struct {
		name, input, out, option string
		invalid                  bool
		want                     string
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), "", "Input", false, "no such file"},
		{"no dataset files", empty, "", "Input", true, "holds no dataset files"},
		{"no JSONL files", onlyParquet, "", "Input", true, "the directory holds no JSONL files"},
		{"out under a file", file, filepath.Join(file, "out.jsonl"), "Out", false, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := scoreOptions(t, tc.input)
			opt.Out, opt.Stdout = tc.out, &bytes.Buffer{}
			_, err := Score(context.Background(), opt)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.option, oe.Option)
			assert.Equal(t, tc.invalid, oe.Invalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestScoreRefusesABadConfig(t *testing.T) {
	opt := scoreOptions(t, "-")
	opt.Rewards.TicToc.ToolCallPatterns = []string{"("}
	_, err := Score(context.Background(), opt)
	var ce *rewards.ConfigError
	assert.ErrorAs(t, err, &ce)
}
