package main

import (
	"encoding/json"
	"fmt"
	"math"
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

// TestScoreLengthKeysArePinnedOneByOne: every rewards.length key reaches
// its reward on its own. Each case sets one key, leaving every other at its
// default, and scores an item whose score, worked by hand, differs between
// the default and the value set: a key read in place of another, or read
// into the wrong field, fails its case.
func TestScoreLengthKeysArePinnedOneByOne(t *testing.T) {
	const (
		right = `"solution_str":"<think>Add.</think><answer>7</answer>","ground_truth":"7"`
		wrong = `"solution_str":"<think>Add.</think><answer>8</answer>","ground_truth":"7"`
	)
	anytime := `"solution_str":"<think>Add","ground_truth":"7","extra_info":{"anytime":[{"budget":100,"summary":"<answer>7</answer>"},{"budget":200,"summary":"<answer>8</answer>"}]}`
	refused := math.Inf(-1) // the item is refused
	tests := []struct {
		key, value, source, item string
		before, after            float64 // the score at the default and with the value
	}{
		// 1 − α·|1000 − 900|
		{"lcpo_alpha", "0.001", "length/lcpo_exact", right + `,"extra_info":{"response_tokens":900,"token_budget":1000}`, 0.97, 0.9},
		// clip(α·100 + δ)
		{"lcpo_max_alpha", "0.001", "length/lcpo_max", right + `,"extra_info":{"response_tokens":900,"token_budget":1000}`, 0.53, 0.6},
		{"lcpo_delta", "0.25", "length/lcpo_max", right + `,"extra_info":{"response_tokens":900,"token_budget":1000}`, 0.53, 0.28},
		{"thinkprune_limit", "899", "length/thinkprune", right + `,"extra_info":{"response_tokens":900}`, 1, 0},
		{"elastic_think_budget", "299", "length/elastic", right + `,"extra_info":{"response_tokens":400,"think_tokens":300,"answer_tokens":90}`, 1, 0},
		{"elastic_answer_budget", "89", "length/elastic", right + `,"extra_info":{"response_tokens":400,"think_tokens":300,"answer_tokens":90}`, 1, 0},
		// right at the first budget only: uniform 1/2, base (the largest only) 0
		{"anytime_prior", "base", "length/anytime", anytime, 0.5, 0},
		// 1 + ((20,480 − 4,096) − 18,432)/4,096; with L_max 18,432: 1 − 1
		{"dapo_max_tokens", "18432", "length/dapo", right + `,"extra_info":{"response_tokens":18432}`, 0.5, 0},
		// with L_cache 2,048 the penalty starts at 18,432
		{"dapo_buffer_tokens", "2048", "length/dapo", right + `,"extra_info":{"response_tokens":18432}`, 0.5, 1},
		// half of L_max 4,096: 0.5 + (1 − 0.5)/2; at L_max 2,048: 0.5
		{"cosine_max_tokens", "2048", "length/cosine", right + `,"extra_info":{"response_tokens":2048}`, 0.75, 0.5},
		{"cosine_correct_short", "2", "length/cosine", right + `,"extra_info":{"response_tokens":2048}`, 0.75, 1.25},
		{"cosine_correct_long", "0", "length/cosine", right + `,"extra_info":{"response_tokens":2048}`, 0.75, 0.5},
		{"cosine_wrong_short", "-2", "length/cosine", wrong + `,"extra_info":{"response_tokens":2048}`, -0.75, -1.25},
		{"cosine_wrong_long", "0", "length/cosine", wrong + `,"extra_info":{"response_tokens":2048}`, -0.75, -0.5},
		{"answer_tag", "final", "length/thinkprune", `"solution_str":"<final>7</final>","ground_truth":"7","extra_info":{"response_tokens":9}`, 0, 1},
		{"think_open", "<reason>", "length/thinkprune", `"solution_str":"<reason>Add","ground_truth":"7","extra_info":{"response_tokens":9}`, 0, 0},
		{"think_close", "</reason>", "length/thinkprune", `"solution_str":"<think>Add.</reason><answer>7</answer>","ground_truth":"7","extra_info":{"response_tokens":9}`, 0, 1},
		// an untagged response: all answer, or a thinking never closed
		{"think_in_prompt", "true", "length/thinkprune", `"solution_str":"<answer>7</answer>","ground_truth":"7","extra_info":{"response_tokens":9}`, 1, 0},
		// 36 bytes in 2 tokens: within 32 bytes a token, not within 8
		{"max_bytes_per_token", "8", "length/thinkprune", right + `,"extra_info":{"response_tokens":2}`, 1, refused},
	}
	// Pinned by the tests named: they need a tokenizer, or a group, which
	// the service scores (score takes a group-wise reward's item alone).
	elsewhere := map[string]string{"tokenizer": "TestScoreLengthTokenizer", "count_slack": "TestScoreLengthTokenizer",
		"count_slack_fraction": "TestScoreLengthTokenizer", "kimi_weight": "TestServeGroupRewards",
		"shorterbetter_alpha": "TestServeGroupRewards", "shorterbetter_beta": "TestServeGroupRewards",
		"alp_beta": "TestServeGroupRewards", "alp_norm": "TestServeGroupRewards"}
	dir := t.TempDir()
	score := func(source, item string) (float64, error) {
		in := writeFile(t, filepath.Join(dir, "items.jsonl"), "{"+item+"}\n")
		code, stdout, stderr := runCLI(t, "score", "--data-source", source, "--input", in, "--max-errors", "0")
		if code != exitOK {
			return 0, fmt.Errorf("exit %d: %s", code, stderr)
		}
		return readResults(t, stdout)[0]["score"].(float64), nil
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.key] = true
		t.Run(tt.key, func(t *testing.T) {
			before, err := score(tt.source, tt.item)
			require.NoError(t, err)
			assert.InDelta(t, tt.before, before, 1e-12, "at the defaults")
			t.Setenv("TIMEAWARE_REWARDS_LENGTH_"+strings.ToUpper(tt.key), tt.value)
			after, err := score(tt.source, tt.item)
			if tt.after == refused {
				assert.ErrorContains(t, err, "rewards.length."+tt.key)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.after, after, 1e-12, "with %s = %s", tt.key, tt.value)
		})
	}
	for key := range defaults {
		if name, ok := strings.CutPrefix(key, "rewards.length."); ok {
			assert.True(t, covered[name] || elsewhere[name] != "", "no case pins %s", key)
		}
	}
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
