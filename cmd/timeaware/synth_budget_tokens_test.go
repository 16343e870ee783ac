package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/synth/budget"
)

// tokenSentences are the built-in sentences that end a token row's user
// turn, per reward, written out here with the budgets they must state.
var tokenSentences = map[string]*regexp.Regexp{
	"length/lcpo_exact": regexp.MustCompile(`\n\nSpend (\d+) tokens on your reasoning, as close to that count as you can, before you answer\.$`),
	"length/lcpo_max":   regexp.MustCompile(`\n\nSpend at most (\d+) tokens on your reasoning before you answer\.$`),
	"length/thinkprune": regexp.MustCompile(`\n\nKeep your whole reply within (\d+) tokens; a reply that runs longer earns nothing\.$`),
	"length/elastic":    regexp.MustCompile(`\n\nSpend at most (\d+) tokens on your thinking and at most (\d+) tokens on the answer that follows it\.$`),
}

// rawJSONLines decodes a JSONL file keeping numbers as json.Number, so that
// an integer and a float are told apart.
func rawJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		require.NoError(t, d.Decode(&m), line)
		out = append(out, m)
	}
	return out
}

func TestSynthBudgetTokens(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tokens.parquet")
	code, stdout, stderr := runCLI(t, "synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "19", "--unit", "tokens", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	for _, want := range []string{
		"synth budget: 6 rows written to " + out + " (parquet,",
		"tasks:       6 read; family general, data source length/lcpo_max",
		"manifest:    " + out + ".manifest.json",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.Regexp(t, `budgets:     (\d+ \d+, )*\d+ \d+\n`, stdout)
	assert.NotContains(t, stdout, "multipliers")
	assert.ElementsMatch(t, []string{"tokens.parquet", "tokens.parquet.manifest.json"}, dirNames(t, dir))

	rows := readDataset(t, out, budget.TokenSchema)
	require.Len(t, rows, 6)
	tasks := readJSONLines(t, demoTasks)
	counts := map[int]int{}
	for i, row := range rows {
		assert.Equal(t, []string{"ability", "data_source", "extra_info", "prompt", "reward_model"}, sortedKeys(row), "no agent_name")
		assert.Equal(t, "length/lcpo_max", row["data_source"])
		assert.Equal(t, fmt.Sprint(tasks[i]["answer"]), get(row, "reward_model", "ground_truth"))
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, []string{"answer_check", "index", "request_id", "split", "task_id", "token_budget", "variant"}, sortedKeys(ei))
		assert.Equal(t, "", ei["answer_check"], "the plain ground-truth check")
		assert.Equal(t, tasks[i]["id"], ei["task_id"])
		assert.Equal(t, float64(i), ei["index"])
		n := int(ei["token_budget"].(float64))
		assert.True(t, n >= 100 && n <= 4000, "L1's range by default: %d", n)
		counts[n]++
		prompt := row["prompt"].([]any)
		require.Len(t, prompt, 2)
		assert.Contains(t, get(prompt[0], "content"), "<answer></answer>", "the answer tag the length rewards read")
		m := tokenSentences["length/lcpo_max"].FindStringSubmatch(get(prompt[1], "content").(string))
		require.NotNil(t, m)
		assert.Equal(t, strconv.Itoa(n), m[1], "the prompt states the row's budget")
	}
	for n, c := range counts {
		assert.Contains(t, stdout, fmt.Sprintf("%d %d", n, c))
	}

	m := readManifest(t, out)
	assert.Equal(t, "tokens", m.Config["synth.budget.unit"])
	assert.Equal(t, "length/lcpo_max", m.Config["synth.budget.token_reward"])
	assert.NotContains(t, m.Config, "synth.budget.multipliers", "the keys of the other unit are not recorded")
	assert.Equal(t, float64(19), m.Config["seed"])
	assert.Equal(t, sha256File(t, out), m.Outputs[0].SHA256)
}

func TestSynthBudgetSecondsManifestLeavesTokenKeysOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rl.jsonl")
	code, _, stderr := runCLI(t, "synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "1", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	m := readManifest(t, out)
	assert.Equal(t, "seconds", m.Config["synth.budget.unit"])
	assert.Equal(t, "0.75,1,2,3", m.Config["synth.budget.multipliers"])
	for key := range m.Config {
		assert.False(t, isTokenKey(key), key)
	}
}

func TestSynthBudgetTokensPerReward(t *testing.T) {
	for _, reward := range []string{"length/lcpo_exact", "length/lcpo_max", "length/thinkprune", "length/elastic"} {
		t.Run(reward, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tokens.jsonl")
			args := []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "3", "--unit", "tokens", "--reward", reward, "--out", out}
			if reward != "length/elastic" {
				args = append(args, "--token-budgets", "700,1500")
			}
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, "data source "+reward)
			for _, row := range rawJSONLines(t, out) {
				assert.Equal(t, reward, row["data_source"])
				ei := row["extra_info"].(map[string]any)
				user := get(row["prompt"].([]any)[1], "content").(string)
				m := tokenSentences[reward].FindStringSubmatch(user)
				require.NotNil(t, m, user)
				for _, f := range []string{"index", "variant", "token_budget", "think_budget", "answer_budget"} {
					if v, ok := ei[f]; ok {
						_, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
						assert.NoError(t, err, "%s is a JSON integer: %v", f, v)
					}
				}
				if reward != "length/elastic" {
					assert.Contains(t, []string{"700", "1500"}, string(ei["token_budget"].(json.Number)))
					assert.Equal(t, string(ei["token_budget"].(json.Number)), m[1])
					assert.NotContains(t, ei, "think_budget")
					continue
				}
				assert.Equal(t, json.Number("1024"), ei["think_budget"])
				assert.Equal(t, json.Number("1024"), ei["answer_budget"])
				assert.Equal(t, json.Number("2048"), ei["token_budget"], "t + s")
				assert.Equal(t, []string{"1024", "1024"}, m[1:])
			}
		})
	}
}

func TestSynthBudgetTokensConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, filepath.Join(dir, "timeaware.yaml"), `synth:
  budget:
    unit: tokens
    token_reward: length/thinkprune
    token_budgets: "4000,3000,2000"
    token_system_prompt: "Answer in <answer></answer>."
    token_prompts:
      thinkprune: "Stay under {budget} tokens."
    split: rl
`)
	rows, _ := budgetRowsByTask(t, demoTasks, "--config", config, "--seed", "1", "--every-token-budget")
	require.Len(t, rows, 6)
	for id, rs := range rows {
		require.Len(t, rs, 3, id)
		for v, row := range rs {
			ei := row["extra_info"].(map[string]any)
			assert.Equal(t, "length/thinkprune", row["data_source"])
			assert.Equal(t, float64(v), ei["variant"])
			assert.Equal(t, id+"#"+strconv.Itoa(v), ei["request_id"])
			assert.Equal(t, []float64{4000, 3000, 2000}[v], ei["token_budget"])
			assert.Equal(t, "rl", ei["split"])
			prompt := row["prompt"].([]any)
			assert.Equal(t, "Answer in <answer></answer>.", get(prompt[0], "content"))
			assert.True(t, strings.HasSuffix(get(prompt[1], "content").(string), fmt.Sprintf("\n\nStay under %.0f tokens.", ei["token_budget"])))
		}
	}

	t.Setenv("TIMEAWARE_REWARDS_LENGTH_ANSWER_TAG", "final")
	rows, out := budgetRowsByTask(t, demoTasks, "--seed", "1", "--unit", "tokens")
	for _, rs := range rows {
		assert.Equal(t, "Work the problem through, then give your final answer inside <final></final>, for example <final>42</final>.",
			get(rs[0]["prompt"].([]any)[0], "content"), "the tag the length rewards read")
	}
	assert.Equal(t, "final", readManifest(t, out).Config["rewards.length.answer_tag"])

	t.Setenv("TIMEAWARE_SYNTH_BUDGET_TOKEN_BUDGET_RANGE", "10,12")
	t.Setenv("TIMEAWARE_SYNTH_BUDGET_ELASTIC_THINK_BUDGET", "300")
	rows, _ = budgetRowsByTask(t, demoTasks, "--seed", "1", "--unit", "tokens")
	for _, rs := range rows {
		n := rs[0]["extra_info"].(map[string]any)["token_budget"].(float64)
		assert.Contains(t, []float64{10, 11, 12}, n)
	}
	rows, _ = budgetRowsByTask(t, demoTasks, "--config", config, "--seed", "1")
	for _, rs := range rows {
		assert.Len(t, rs, 1, "the set of the config file wins over the range")
		assert.Contains(t, []float64{4000, 3000, 2000}, rs[0]["extra_info"].(map[string]any)["token_budget"])
	}
	rows, _ = budgetRowsByTask(t, demoTasks, "--config", config, "--seed", "1", "--reward", "length/elastic")
	for _, rs := range rows {
		ei := rs[0]["extra_info"].(map[string]any)
		assert.Equal(t, []float64{300, 1024, 1324}, []float64{ei["think_budget"].(float64), ei["answer_budget"].(float64), ei["token_budget"].(float64)})
	}
}

func TestSynthBudgetTokensIsReproducible(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf(`{"id":"q%d","question":"What is %d squared?","answer":%d}`, i, i, i*i))
	}
	input := writeFile(t, filepath.Join(dir, "tasks.jsonl"), strings.Join(lines, "\n")+"\n")
	args := []string{"--unit", "tokens", "--token-budget-range", "100,4000"}
	shas := map[string]string{}
	for _, run := range []struct{ name, seed string }{{"a", "5"}, {"b", "5"}, {"c", "6"}} {
		out := filepath.Join(dir, run.name+".parquet")
		code, _, stderr := runCLI(t, append([]string{"synth", "budget", "--input", input, "--family", "general", "--seed", run.seed, "--out", out}, args...)...)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
		shas[run.name] = sha256File(t, out)
	}
	assert.Equal(t, shas["a"], shas["b"], "same seed: byte-identical outputs")
	assert.NotEqual(t, shas["a"], shas["c"], "another seed: other budgets")

	whole, _ := budgetRowsByTask(t, input, append([]string{"--seed", "5"}, args...)...)
	union := map[string][]map[string]any{}
	for i := range 3 {
		part, _ := budgetRowsByTask(t, input, append([]string{"--seed", "5", "--shard", fmt.Sprintf("%d/3", i)}, args...)...)
		for id, rows := range part {
			require.NotContains(t, union, id)
			union[id] = rows
		}
	}
	assert.Equal(t, whole, union, "the shards together give the whole")
}

func TestSynthBudgetTokensUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tokens.parquet")
	base := []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "1", "--out", out}
	tokens := append(append([]string(nil), base...), "--unit", "tokens")
	with := func(args []string, more ...string) []string { return append(append([]string(nil), args...), more...) }
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown unit", with(base, "--unit", "words"), nil, `--unit words: unit is not seconds or tokens`},
		{"unknown reward", with(tokens, "--reward", "length/lcpo"), nil, `--reward length/lcpo: reward is not one of length/lcpo_exact, length/lcpo_max, length/thinkprune or length/elastic`},
		{"anytime", with(tokens, "--reward", "length/anytime"), nil, "--reward length/anytime: length/anytime scores the summaries a rollout writes"},
		{"reward with seconds", with(base, "--reward", "length/lcpo_max"), nil, "--reward applies to --unit tokens only; the unit here is seconds"},
		{"budgets with seconds", with(base, "--token-budgets", "512"), nil, "--token-budgets applies to --unit tokens only"},
		{"every budget with seconds", with(base, "--every-token-budget"), nil, "--every-token-budget applies to --unit tokens only"},
		{"teacher with tokens", with(tokens, "--teacher-requests", filepath.Join(dir, "t.jsonl"), "--teacher-model", "m"), nil,
			"--teacher-requests applies to --unit seconds only; the unit here is tokens"},
		{"every multiplier with tokens", with(tokens, "--every-multiplier"), nil, "--every-multiplier applies to --unit seconds only"},
		{"zero budget", with(tokens, "--token-budgets", "512,0"), nil, "--token-budgets 512,0: entry 2 (0) is not a whole number of tokens from 1 to 10000000"},
		{"negative budget", with(tokens, "--token-budgets", "-4"), nil, "--token-budgets -4: entry 1 (-4)"},
		{"fractional budget", with(tokens, "--token-budgets", "512.5"), nil, `--token-budgets 512.5: entry 1 is not a whole number`},
		{"range min > max", with(tokens, "--token-budget-range", "4000,100"), nil, "--token-budget-range 4000,100: [4000, 100] is not a range of tokens with 1 <= min <= max"},
		{"range of zero", with(tokens, "--token-budget-range", "0,0"), nil, "--token-budget-range 0,0: no range, and no token_budgets either"},
		{"set and range", with(tokens, "--token-budgets", "512", "--token-budget-range", "1,9"), nil, "--token-budgets and --token-budget-range both give the budgets; give one"},
		{"range of three", with(tokens, "--token-budget-range", "1,2,3"), nil, `--token-budget-range 1,2,3: want "min,max" or empty, got 3 numbers`},
		{"every budget of a range", with(tokens, "--token-budget-range", "1,9", "--every-token-budget"), nil, "--every-token-budget true: needs a set of budgets"},
		{"budgets with elastic", with(tokens, "--reward", "length/elastic", "--token-budgets", "512"), nil,
			"--token-budgets is not used by length/elastic, whose rows take synth.budget.elastic_think_budget and elastic_answer_budget"},
		{"game tasks", []string{"synth", "budget", "--input", demoTasks, "--family", "game", "--seed", "1", "--unit", "tokens", "--out", out}, nil,
			"--family game: token budgets need tasks with a reference answer (general)"},
		{"elastic budget of zero", with(tokens, "--reward", "length/elastic"), map[string]string{"TIMEAWARE_SYNTH_BUDGET_ELASTIC_ANSWER_BUDGET": "0"},
			"TIMEAWARE_SYNTH_BUDGET_ELASTIC_ANSWER_BUDGET=0: 0 is not a whole number of tokens"},
		{"elastic budget not a number", with(tokens, "--reward", "length/elastic"), map[string]string{"TIMEAWARE_SYNTH_BUDGET_ELASTIC_THINK_BUDGET": "lots"},
			"TIMEAWARE_SYNTH_BUDGET_ELASTIC_THINK_BUDGET=lots: want a whole number"},
		{"sentence without budget", tokens, map[string]string{"TIMEAWARE_SYNTH_BUDGET_TOKEN_PROMPTS_LCPO_MAX": "Be brief."},
			`TIMEAWARE_SYNTH_BUDGET_TOKEN_PROMPTS_LCPO_MAX="Be brief.": "Be brief." does not contain {budget}`},
		{"unit from the environment", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_UNIT": "token"}, "TIMEAWARE_SYNTH_BUDGET_UNIT=token: unit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, tt.args...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, filepath.Join(dir, "t.jsonl"))
		})
	}
}

func TestSynthBudgetTokensDataErrorLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, filepath.Join(dir, "in", "tasks.jsonl"), `{"id":"a","question":"Q","answer":1}`+"\n"+`{"id":"b","question":"Q"}`)
	code, stdout, stderr := runCLI(t, "synth", "budget", "--input", input, "--family", "general", "--seed", "1", "--unit", "tokens",
		"--out", filepath.Join(dir, "tokens.parquet"))
	assert.Equal(t, exitData, code, "stderr: %s", stderr)
	assert.Contains(t, stderr, "tasks.jsonl: line 2 (id b): answer: missing")
	assert.Empty(t, stdout)
	assert.Equal(t, []string{"in"}, dirNames(t, dir))
}

func TestSynthBudgetTokensOpenRLHFLabel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tokens.jsonl")
	code, _, stderr := runCLI(t, "synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "2", "--unit", "tokens",
		"--reward", "length/elastic", "--openrlhf-label", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	for _, row := range readJSONLines(t, out) {
		var label map[string]any
		require.NoError(t, json.Unmarshal([]byte(row["label"].(string)), &label))
		assert.Equal(t, "length/elastic", label["data_source"])
		assert.Equal(t, get(row, "reward_model", "ground_truth"), label["ground_truth"])
		assert.Equal(t, row["extra_info"], label["extra_info"])
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
