package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/traveler"
)

// TestSynthTravelerRowsScore writes a Parquet file through the CLI, reads it
// back, and scores every row's extra_info.answer with the traveler reward:
// 1 for crisp questions, best_score (the highest soft accuracy) for vague.
func TestSynthTravelerRowsScore(t *testing.T) {
	out := filepath.Join(t.TempDir(), "traveler.parquet")
	code, stdout, stderr := runCLI(t, "synth", "traveler", "--count", "120", "--seed", "4", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "synth traveler: 120 rows written to "+out+" (parquet,")
	assert.Contains(t, stdout, "categories:  explicit 40, implicit 40, vague 40")

	rows := readDataset(t, out, traveler.Schema)
	require.Len(t, rows, 120)
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	for i, row := range rows {
		assert.Equal(t, "traveler", row["data_source"])
		assert.Equal(t, "temporal_reasoning", row["ability"])
		assert.Equal(t, "rule", get(row, "reward_model", "style"))
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, float64(i), ei["index"])
		assert.Equal(t, "train", ei["split"])
		assert.Equal(t, traveler.Categories[i%3], ei["category"])
		n := ei["n_events"].(float64)
		assert.True(t, n >= 5 && n <= 100)
		prompt := row["prompt"].([]any)
		require.Len(t, prompt, 2)
		user := prompt[1].(map[string]any)["content"].(string)
		assert.Equal(t, int(n), strings.Count(user, "\n- On "))

		gt := get(row, "reward_model", "ground_truth").(string)
		res := s.Score(context.Background(), &rewards.Item{DataSource: "traveler", GroundTruth: json.RawMessage(gt),
			SolutionStr: "Checked every event.\nANSWER: " + ei["answer"].(string)})
		require.NoError(t, res.Err, gt)
		if ei["category"] == "vague" {
			assert.InDelta(t, ei["best_score"].(float64), res.Score, 1e-12, "row %d", i)
		} else {
			assert.Equal(t, 1.0, res.Score, "row %d", i)
			assert.Equal(t, 1.0, ei["best_score"])
		}
	}
	var m map[string]any
	b, err := os.ReadFile(out + ".manifest.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "synth traveler", m["command"])
	assert.Equal(t, float64(4), get(m, "config", "seed"))
	assert.Equal(t, "5-100", get(m, "config", "synth.traveler.events"))
	assert.Equal(t, float64(120), get(m, "summary", "rows"))
}

func TestSynthTravelerDeterministicAndFormats(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		code, _, stderr := runCLI(t, append([]string{"synth", "traveler", "--seed", "9", "--out", p}, args...)...)
		require.Equal(t, 0, code, stderr)
		return p
	}
	a := run("a.jsonl", "--count", "30")
	b := run("b.jsonl", "--count", "30")
	short := run("short.jsonl", "--count", "10")
	pq := run("c.parquet", "--count", "30")
	other := run("d.data", "--count", "30", "--format", "jsonl", "--seed", "10")
	ab, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.Equal(t, ab, bb, "the same seed gives byte-identical output")
	sb, err := os.ReadFile(short)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(ab), string(sb)), "the first rows of a longer run are the rows of a shorter one")
	assert.Equal(t, readDataset(t, a, traveler.Schema), readDataset(t, pq, traveler.Schema))
	otherRows := readJSONLines(t, other)
	assert.Len(t, otherRows, 30, "--format jsonl whatever the extension")
	assert.NotEqual(t, readJSONLines(t, a), otherRows, "another seed, other rows")
}

func TestSynthTravelerOptions(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, filepath.Join(dir, "timeaware.yaml"),
		"synth:\n  traveler:\n    events: \"8-8\"\n    categories: implicit\n    templates: when_last\n    years: \"2030\"\n    split: test\n")
	out := filepath.Join(dir, "t.jsonl")
	code, _, stderr := runCLI(t, "--config", config, "synth", "traveler", "--count", "6", "--seed", "1", "--out", out)
	require.Equal(t, 0, code, stderr)
	for _, row := range readJSONLines(t, out) {
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, float64(8), ei["n_events"])
		assert.Equal(t, "implicit", ei["category"])
		assert.Equal(t, "when_last", ei["template"])
		assert.Equal(t, "test", ei["split"])
		assert.True(t, strings.HasPrefix(ei["speech_time"].(string), "2030-"))
	}
	code, _, stderr = runCLI(t, "--config", config, "synth", "traveler", "--count", "6", "--seed", "1", "--events", "3",
		"--categories", "explicit,vague", "--templates", "did", "--out", out)
	require.Equal(t, 0, code, stderr)
	for _, row := range readJSONLines(t, out) {
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, float64(3), ei["n_events"], "flags override the config file")
		assert.Contains(t, []any{"explicit", "vague"}, ei["category"])
		assert.Equal(t, "did", ei["template"])
	}
}

func TestSynthTravelerUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.parquet")
	badWindow := writeFile(t, filepath.Join(dir, "w.yaml"), "synth:\n  traveler:\n    window_days: 0\n")
	badYears := writeFile(t, filepath.Join(dir, "y.yaml"), "synth:\n  traveler:\n    years: soon\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no count", []string{"--seed", "1", "--out", out}, "--count is required"},
		{"zero count", []string{"--count", "0", "--seed", "1", "--out", out}, "--count 0: want at least 1"},
		{"no seed", []string{"--count", "3", "--out", out}, "--seed is required"},
		{"no out", []string{"--count", "3", "--seed", "1"}, "--out is required"},
		{"bad events", []string{"--count", "3", "--seed", "1", "--events", "many", "--out", out}, "--events many: want A-B, e.g. 5-100, or one number"},
		{"events out of range", []string{"--count", "3", "--seed", "1", "--events", "10-5", "--out", out}, "--events 10-5: 10-5"},
		{"bad category", []string{"--count", "3", "--seed", "1", "--categories", "explicit,fuzzy", "--out", out}, "--categories explicit,fuzzy: \"fuzzy\""},
		{"template never asked", []string{"--count", "3", "--seed", "1", "--categories", "vague", "--templates", "when_last", "--out", out}, "--templates when_last: none of when_last"},
		{"bad format", []string{"--count", "3", "--seed", "1", "--format", "xml", "--out", out}, "--format"},
		{"bad window", []string{"--config", badWindow, "--count", "3", "--seed", "1", "--out", out}, ": synth.traveler.window_days 0: 0 is not in"},
		{"bad years", []string{"--config", badYears, "--count", "3", "--seed", "1", "--out", out}, ": synth.traveler.years soon: want A-B"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if len(args) > 0 && args[0] == "--config" {
				args = append([]string{args[0], args[1], "synth", "traveler"}, args[2:]...)
			} else {
				args = append([]string{"synth", "traveler"}, args...)
			}
			code, _, stderr := runCLI(t, args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing is written")
		})
	}
}
