package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// budgetRows writes synth budget rows (general family, every multiplier)
// and returns the file and each user prompt's ground truth.
func budgetRows(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	path := filepath.Join(dir, "budget.jsonl")
	code, _, stderr := runCLI(t, "synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "3", "--every-multiplier", "--out", path)
	require.Equal(t, 0, code, stderr)
	gold := map[string]string{}
	for _, l := range readResultLines(t, path) {
		prompt := l["prompt"].([]any)
		gold[prompt[len(prompt)-1].(map[string]any)["content"].(string)] = l["reward_model"].(map[string]any)["ground_truth"].(string)
	}
	return path, gold
}

// TestSynthDistillThroughSFT: a scripted teacher that calls get_duration
// once and then answers — right on the prompts that mention a cake or a
// train, wrong on the others — yields one trace per row with the timer's
// reading in it, and synth sft keeps exactly the right ones (all are on
// time). A rerun asks nothing.
func TestSynthDistillThroughSFT(t *testing.T) {
	dir := t.TempDir()
	rows, gold := budgetRows(t, dir)
	right := 0
	for q := range gold {
		if strings.Contains(q, "cake") || strings.Contains(q, "train") {
			right++
		}
	}
	require.Positive(t, right)
	require.Less(t, right, len(gold))
	teacher := newScriptedModel(t, func(r scriptedRequest) string {
		if last := r.Messages[len(r.Messages)-1]; last.Role != "tool" {
			return "" // call get_duration
		}
		q := r.lastUser()
		if strings.Contains(q, "cake") || strings.Contains(q, "train") {
			return "Done.\n<answer>" + gold[q] + "</answer>"
		}
		return "<answer>-1</answer>"
	}, "get_duration")
	traces := filepath.Join(dir, "traces.jsonl")
	args := []string{"synth", "distill", "--input", rows, "--endpoint", teacher.URL + "/v1", "--model", "teacher", "--out", traces}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "synth distill: 24 traces of 24 rows written to "+traces)
	assert.Contains(t, stdout, "24 answered on time")
	lines := readResultLines(t, traces)
	require.Len(t, lines, len(gold))
	reading := regexp.MustCompile(`^\d+\.\d\d seconds\.$`)
	for _, l := range lines {
		msgs := l["messages"].([]any)
		require.Len(t, msgs, 5, "system, user, the call, the timer's answer, the answer")
		tool := msgs[3].(map[string]any)
		assert.Equal(t, "tool", tool["role"])
		assert.Regexp(t, reading, tool["content"])
		assert.Greater(t, l["elapsed_s"], 0.0, "the timer's time")
		assert.Positive(t, l["time_limit_s"])
	}
	require.FileExists(t, traces+".manifest.json")

	sft := filepath.Join(dir, "sft.jsonl")
	code, stdout, stderr = runCLI(t, "synth", "sft", "--traces", traces, "--out", sft)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, readResultLines(t, sft), right, "exactly the right, on-time traces: %s", stdout)

	requests, _, _ := teacher.counts()
	code, stdout, stderr = runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	again, _, twice := teacher.counts()
	assert.Equal(t, requests, again, "a rerun sends nothing")
	assert.Zero(t, twice)
	assert.Contains(t, stdout, "0 sent, 48 from the cache")
}

// TestSynthDistillCutsATeacherThatNeverAnswers: a teacher that calls
// get_duration forever is cut at --max-turns and counted unfinished; its
// traces end in a call, which synth sft drops.
func TestSynthDistillCutsATeacherThatNeverAnswers(t *testing.T) {
	dir := t.TempDir()
	rows, _ := budgetRows(t, dir)
	teacher := newScriptedModel(t, func(scriptedRequest) string { return "" }, "get_duration")
	traces := filepath.Join(dir, "traces.jsonl")
	code, stdout, stderr := runCLI(t, "synth", "distill", "--input", rows, "--endpoint", teacher.URL, "--model", "t", "--out", traces, "--max-turns", "3", "--no-cache")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "0 answered on time (0 right), 0 late or out of time, 24 unfinished at --max-turns 3, 0 failed")
	requests, _, _ := teacher.counts()
	assert.Equal(t, 24*3, requests)
	code, _, stderr = runCLI(t, "synth", "sft", "--traces", traces, "--out", filepath.Join(dir, "sft.jsonl"))
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, readResultLines(t, filepath.Join(dir, "sft.jsonl")))

	// Errors name the flag.
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--out", filepath.Join(dir, "t.parquet")}, "traces are JSONL", exitUsage},
		{[]string{"--input", filepath.Join(dir, "nope.jsonl"), "--out", filepath.Join(dir, "x.jsonl")}, "--input " + filepath.Join(dir, "nope.jsonl") + ": no such file or directory", exitIO},
	} {
		args := append([]string{"synth", "distill", "--input", rows, "--endpoint", teacher.URL, "--model", "t"}, tc.args...)
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, tc.code, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
	// A teacher that is not there: the run stops, and says that nothing
	// was written, not "written to".
	gone := filepath.Join(dir, "gone.jsonl")
	code, stdout, stderr = runCLI(t, "synth", "distill", "--input", rows, "--endpoint", "http://127.0.0.1:9/v1", "--model", "t",
		"--out", gone, "--no-cache")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stdout, "synth distill: stopped; 0 traces of 24 rows made, none written to "+gone+"\n")
	assert.NotContains(t, stdout, "rows written to")
	assert.Contains(t, stderr, "nothing written")
	assert.NoFileExists(t, gone)
	puzzles := filepath.Join(dir, "p.jsonl")
	code, _, _ = runCLI(t, "synth", "puzzles", "--count", "3", "--seed", "1", "--out", puzzles)
	require.Equal(t, 0, code)
	code, _, stderr = runCLI(t, "synth", "distill", "--input", puzzles, "--endpoint", teacher.URL, "--model", "t", "--out", filepath.Join(dir, "y.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no timely/general rows to distill (3 rows of other data sources)")
}
