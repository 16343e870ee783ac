package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readResults(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func TestScoreWritesOneResultPerLineInOrder(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, filepath.Join(dir, "items.jsonl"), strings.Join([]string{
		`{"solution_str":"<answer>\\boxed{\\frac{3}{4}}</answer>","ground_truth":"0.75","extra_info":{"elapsed_s":10,"time_limit_s":10}}`,
		`{"data_source":"timely/general","solution_str":"<answer>12</answer>","ground_truth":12,"extra_info":{"elapsed_s":1,"time_limit_s":10}}`,
		`{"data_source":"timely/general","solution_str":"I think it is 12.","ground_truth":"12"}`,
		`{"data_source":"timely/general","solution_str":"<answer>12</answer>","ground_truth":"12","extra_info":{"elapsed_s":11,"time_limit_s":10}}`,
	}, "\n")+"\n")
	out := filepath.Join(dir, "scores.jsonl")
	code, _, stderr := runCLI(t, "score", "--data-source", "timely/general", "--input", in, "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "scored 4 items with timely/general")
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	res := readResults(t, string(raw))
	require.Len(t, res, 4)
	assert.InDelta(t, 1.0, res[0]["score"], 1e-12) // right at the deadline: 0.1+0.5+0.4
	assert.InDelta(t, 0.6+0.4*0.15643446504023087, res[1]["score"], 1e-12)
	assert.Equal(t, 0.0, res[2]["score"], "no answer tag: the format check fails")
	assert.Equal(t, 0.0, res[2]["format_ok"])
	assert.Equal(t, 0.0, res[3]["score"], "late")
	for _, r := range res {
		assert.Len(t, r, 10, "score and nine details on every line")
	}
}

// TestScoreLengthRewardsReadTheirKeys: the rewards.length keys reach the
// length rewards (α and δ of LCPO-Max, ThinkPrune's limit).
func TestScoreLengthRewardsReadTheirKeys(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_LCPO_ALPHA", "0.001")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_LCPO_DELTA", "0.25")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_THINKPRUNE_LIMIT", "899")
	score := func(ds, extra string) map[string]any {
		in := writeFile(t, filepath.Join(dir, "items.jsonl"), `{"solution_str":"<answer>7</answer>","ground_truth":"7","extra_info":`+extra+`}`+"\n")
		out := filepath.Join(dir, "scores.jsonl")
		code, _, stderr := runCLI(t, "score", "--data-source", ds, "--input", in, "--out", out)
		require.Equal(t, exitOK, code, stderr)
		raw, err := os.ReadFile(out)
		require.NoError(t, err)
		res := readResults(t, string(raw))
		require.Len(t, res, 1)
		return res[0]
	}
	got := score("length/lcpo_max", `{"response_tokens":900,"token_budget":1000}`)
	assert.InDelta(t, 0.001*100+0.25, got["score"], 1e-12) // 1·clip(α·(1000 − 900) + δ)
	got = score("length/thinkprune", `{"response_tokens":900}`)
	assert.Equal(t, 0.0, got["score"], "900 tokens is over a limit of 899")
	assert.Equal(t, 1.0, got["overshoot_tokens"])
	got = score("length/thinkprune", `{"response_tokens":800}`)
	assert.Equal(t, 1.0, got["score"], "an untagged response is all answer")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_THINK_IN_PROMPT", "true")
	got = score("length/thinkprune", `{"response_tokens":800}`)
	assert.Equal(t, 0.0, got["score"], "under think_in_prompt an untagged response is a thinking that never closed")
}

// TestScoreLengthTokenizer: with rewards.length.tokenizer, the length
// rewards take a count within the slack of the tokenizer's and refuse one
// past it, naming the count and the key; a file that cannot be read, or a
// model it does not know, is a usage error naming the key and the field.
func TestScoreLengthTokenizer(t *testing.T) {
	dir := t.TempDir()
	// package tokenizer's Qwen-like test tokenizer
	tok := filepath.Join("..", "..", "tokenizer", "testdata", "qwen2.json")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_TOKENIZER", tok)
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_COUNT_SLACK", "1")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_COUNT_SLACK_FRACTION", "0")
	const text = "The deadline is in 3 hours. <answer>7</answer>"
	n := countOf(t, "qwen2", text)
	score := func(tokens int) (int, string, string) {
		in := writeFile(t, filepath.Join(dir, "items.jsonl"), fmt.Sprintf(`{"solution_str":%q,"ground_truth":"7","extra_info":{"response_tokens":%d}}`, text, tokens)+"\n")
		return runCLI(t, "score", "--data-source", "length/thinkprune", "--input", in)
	}
	for _, ok := range []int{n - 1, n, n + 1} {
		code, stdout, stderr := score(ok)
		require.Equal(t, exitOK, code, "%d tokens: %s", ok, stderr)
		assert.Equal(t, 1.0, readResults(t, stdout)[0]["score"])
	}
	code, _, stderr := score(n - 2)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, fmt.Sprintf("extra_info.response_tokens: %d, but rewards.length.tokenizer makes %d tokens of solution_str", n-2, n))

	bad := writeFile(t, filepath.Join(dir, "wordpiece.json"), `{"model":{"type":"WordPiece","vocab":{"a":0}}}`)
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_TOKENIZER", bad)
	code, _, stderr = score(n)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "TIMEAWARE_REWARDS_LENGTH_TOKENIZER="+bad+": model: type: the WordPiece model is not read here (only BPE)")
	t.Setenv("TIMEAWARE_REWARDS_LENGTH_TOKENIZER", filepath.Join(dir, "missing.json"))
	code, _, stderr = score(n)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "missing.json: no such file or directory")
}

// countOf is the count testdata/texts.jsonl of package tokenizer holds for
// text under the tokenizer name, as Hugging Face's tokenizers made it.
func countOf(t *testing.T, name, text string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "tokenizer", "testdata", "texts.jsonl"))
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var row struct {
			Text   string         `json:"text"`
			Counts map[string]int `json:"counts"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		if row.Text == text {
			return row.Counts[name]
		}
	}
	t.Fatalf("tokenizer/testdata/texts.jsonl has no %q; add it to make.py's EDGE and remake the files", text)
	return 0
}

func TestScoreErrors(t *testing.T) {
	dir := t.TempDir()
	good := `{"data_source":"timely/ml","extra_info":{"accuracy":0.8}}`
	bad := `{"data_source":"timely/ml","extra_info":{}}`
	in := writeFile(t, filepath.Join(dir, "mixed.jsonl"), good+"\n"+bad+"\n"+`{"data_source":"timely/game"}`+"\n"+`{oops`+"\n")

	t.Run("over max-errors: exit 1 and no file", func(t *testing.T) {
		out := filepath.Join(dir, "none.jsonl")
		code, _, stderr := runCLI(t, "score", "--data-source", "timely/ml", "--input", in, "--out", out)
		assert.Equal(t, exitData, code)
		assert.Contains(t, stderr, "3 of 4 items could not be scored")
		assert.Contains(t, stderr, "line 2: extra_info.accuracy: missing")
		assert.Contains(t, stderr, `line 3: data_source: "timely/game" differs from the data source being scored, timely/ml`)
		assert.NoFileExists(t, out)
		assert.Equal(t, []string{"mixed.jsonl"}, dirNames(t, dir), "no temporary file left")
	})
	t.Run("within max-errors: fallback rows keep their place", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "score", "--data-source", "timely/ml", "--input", in, "--max-errors", "3")
		require.Equal(t, exitOK, code, stderr)
		res := readResults(t, stdout)
		require.Len(t, res, 4)
		assert.InDelta(t, 0.1+0.4, res[0]["score"], 1e-12)
		for i := 1; i < 4; i++ {
			assert.Equal(t, 0.0, res[i]["score"])
			assert.NotEmpty(t, res[i]["error"])
			assert.Len(t, res[i], 11, "details and error on a failed line")
		}
		assert.Contains(t, res[3]["error"], "not a valid item")
	})
	usage := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown data source", []string{"score", "--data-source", "gsm8k", "--input", in}, exitUsage, "--data-source gsm8k: not a registered reward (one of "},
		{"misspelt data source", []string{"score", "--data-source", "timepuzles", "--input", in}, exitUsage, "; did you mean timepuzzles?"},
		{"no input", []string{"score", "--data-source", "timely/ml"}, exitUsage, "--input is required"},
		{"missing input", []string{"score", "--data-source", "timely/ml", "--input", filepath.Join(dir, "nope.jsonl")}, exitIO,
			"--input " + filepath.Join(dir, "nope.jsonl") + ": no such file or directory"},
		{"negative max-errors", []string{"score", "--data-source", "timely/ml", "--input", in, "--max-errors", "-1"}, exitUsage, "--max-errors -1: must not be negative"},
	}
	for _, tc := range usage {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestScoreTimerTokensNeedTheSecret(t *testing.T) {
	dir := t.TempDir()
	item := `{"data_source":"timely/general","solution_str":"<answer>1</answer>","ground_truth":"1","extra_info":{"timer":"AAAA.BBBB"}}`
	in := writeFile(t, filepath.Join(dir, "t.jsonl"), item+"\n")
	code, _, stderr := runCLI(t, "score", "--data-source", "timely/general", "--input", in)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, "extra_info.timer: the item names a timer")

	t.Setenv("TIMEAWARE_TIMERS_SECRET", "an offline secret for scoring")
	code, _, stderr = runCLI(t, "score", "--data-source", "timely/general", "--input", in)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, "extra_info.timer: invalid timer token")
}

// TestScoreShards: the shards of one input score its lines i mod n, each
// once, as the whole run scores them; errors name the input's own lines.
func TestScoreShards(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 7 {
		lines = append(lines, `{"solution_str":"<answer>`+strings.Repeat("1", i+1)+`</answer>","ground_truth":"111","extra_info":{"elapsed_s":1,"time_limit_s":10}}`)
	}
	lines[5] = `{"solution_str": 5}`
	in := writeFile(t, filepath.Join(dir, "items.jsonl"), strings.Join(lines, "\n")+"\n")
	whole := filepath.Join(dir, "whole.jsonl")
	code, _, stderr := runCLI(t, "score", "--data-source", "timely/general", "--input", in, "--out", whole, "--max-errors", "1")
	require.Equal(t, exitOK, code, stderr)
	raw, err := os.ReadFile(whole)
	require.NoError(t, err)
	want := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	got := map[int]string{}
	for i := range 3 {
		part := filepath.Join(dir, "part"+strings.Repeat("x", i)+".jsonl")
		code, _, stderr := runCLI(t, "score", "--data-source", "timely/general", "--input", in, "--out", part, "--shard", strings.Join([]string{string(rune('0' + i)), "3"}, "/"), "--max-errors", "1")
		require.Equal(t, exitOK, code, stderr)
		if i == 2 {
			assert.Contains(t, stderr, "line 6: ", "errors name the input's line")
		}
		raw, err := os.ReadFile(part)
		require.NoError(t, err)
		for k, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
			got[i+3*k] = l
		}
	}
	require.Len(t, got, 7)
	for i, w := range want {
		assert.Equal(t, w, got[i], "line %d", i+1)
	}
	code, _, stderr = runCLI(t, "score", "--data-source", "timely/general", "--input", in, "--shard", "1/0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--shard")
}

// TestScoreDirectoryOfParts: a directory of JSONL parts scores as the file
// they were cut from, and its shards, numbered across the parts, together
// score every line once.
func TestScoreDirectoryOfParts(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 9 {
		lines = append(lines, `{"solution_str":"<answer>`+strings.Repeat("2", i%3+1)+`</answer>","ground_truth":"22","extra_info":{"elapsed_s":1,"time_limit_s":10}}`)
	}
	whole := writeFile(t, filepath.Join(dir, "whole.jsonl"), strings.Join(lines, "\n")+"\n")
	parts := filepath.Join(dir, "parts")
	require.NoError(t, os.MkdirAll(parts, 0o755))
	writeFile(t, filepath.Join(parts, "part-00000-of-00002.jsonl"), strings.Join(lines[:4], "\n")+"\n")
	writeFile(t, filepath.Join(parts, "part-00001-of-00002.jsonl"), strings.Join(lines[4:], "\n")+"\n")
	run := func(args ...string) string {
		out := filepath.Join(dir, fmt.Sprintf("out-%d.jsonl", len(args)+len(strings.Join(args, ""))))
		code, _, stderr := runCLI(t, append([]string{"score", "--data-source", "timely/general", "--out", out}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return string(b)
	}
	want := run("--input", whole)
	assert.Equal(t, want, run("--input", parts))
	wantLines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	var got []string
	for i := range 2 {
		got = append(got, strings.Split(strings.TrimSuffix(run("--input", parts, "--shard", fmt.Sprintf("%d/2", i)), "\n"), "\n")...)
	}
	require.Len(t, got, 9)
	for i, l := range wantLines {
		k := i / 2
		if i%2 == 1 {
			k = 5 + i/2
		}
		assert.Equal(t, l, got[k], "line %d", i+1)
	}
	code, _, stderr := runCLI(t, "score", "--data-source", "timely/general", "--input", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no dataset files")
}

// TestScoreRolloutLog: a rollout log, as the Python adapters write it, is
// re-scored by each line's own data source; each result says whether the
// logged reward changed, and stderr counts and names the changes.
func TestScoreRolloutLog(t *testing.T) {
	dir := t.TempDir()
	line := func(ds, answer, gt, extra, logged string) string {
		return `{"prompt_id":7,"data_source":"` + ds + `","solution_str":"` + answer + `","ground_truth":` + gt +
			`,"extra_info":` + extra + `,"reward":` + logged + `,"details":{},"unscored":null,"time":1.5}`
	}
	in := writeFile(t, filepath.Join(dir, "rollouts-host-1.jsonl"), strings.Join([]string{
		line("timepuzzles", "MY ANSWER: 2023-08-15", `"2023-08-15"`, `{}`, "1"),
		line("timely/general", "<answer>12</answer>", `"12"`, `{"elapsed_s":5,"time_limit_s":10}`, "0.6"),
		line("timepuzzles", "MY ANSWER: 2023-08-15", `"2023-08-15"`, `{}`, "null"),
	}, "\n")+"\n")
	code, stdout, stderr := runCLI(t, "score", "--input", in)
	require.Equal(t, exitOK, code, stderr)
	res := readResults(t, stdout)
	require.Len(t, res, 3)
	assert.Equal(t, false, res[0]["changed"])
	// 0.1 + 0.5 + 0.4·sin(π/4): the log's 0.6 left the time out.
	assert.InDelta(t, 0.6+0.4*0.7071067811865476, res[1]["score"], 1e-12)
	assert.Equal(t, 0.6, res[1]["logged_reward"])
	assert.Equal(t, true, res[1]["changed"])
	assert.Len(t, res[1], 12, "score, nine details, the logged reward and the change")
	assert.Nil(t, res[2]["logged_reward"])
	assert.Equal(t, true, res[2]["changed"], "unscored then, scored now")
	assert.Contains(t, stderr, "scored 3 items with each item's own data source: mean score ")
	assert.Contains(t, stderr, "2 of 3 logged rewards changed\nchanged: line 2 (timely/general): 0.6 -> 0.88284271247")
	assert.Contains(t, stderr, "; line 3 (timepuzzles): unscored -> 1\n")

	// A directory of per-process logs is one input; changes name their file.
	writeFile(t, filepath.Join(dir, "rollouts-host-2.jsonl"), line("timepuzzles", "MY ANSWER: 1999-01-01", `"2023-08-15"`, `{}`, "1")+"\n")
	code, stdout, stderr = runCLI(t, "score", "--input", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.Len(t, readResults(t, stdout), 4)
	assert.Contains(t, stderr, "3 of 4 logged rewards changed")
	assert.Contains(t, stderr, filepath.Join(dir, "rollouts-host-1.jsonl")+": line 2 (timely/general)")

	// An item of a data source that has no reward fails alone, named.
	bad := writeFile(t, filepath.Join(t.TempDir(), "log.jsonl"), line("gsm8k", "x", `"1"`, `{}`, "1")+"\n")
	code, _, stderr = runCLI(t, "score", "--input", bad)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, `line 1: data_source: "gsm8k" is not a registered reward`)
}
