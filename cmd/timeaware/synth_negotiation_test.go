package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
)

func TestSynthNegotiation(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "neg.parquet")
	code, stdout, stderr := runCLI(t, "synth", "negotiation", "--count", "12", "--seed", "5", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	for _, want := range []string{
		"synth negotiation: 12 rows written to " + out + " (parquet,",
		"conditions:  control 3, time_aware 3, turn_limit 3, urgency 3",
		"scenarios:   new_recruit 12",
		"manifest:    " + out + ".manifest.json",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.ElementsMatch(t, []string{"neg.parquet", "neg.parquet.manifest.json"}, dirNames(t, dir))

	rows := readDataset(t, out, negotiation.Schema)
	require.Len(t, rows, 12)
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	for i, row := range rows {
		assert.Equal(t, "negotiation", row["data_source"])
		assert.Equal(t, "negotiation", row["ability"])
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, float64(i), ei["index"])
		assert.Equal(t, "train", ei["split"])
		assert.Equal(t, rewards.NegotiationConditions[i%4], ei["condition"])
		assert.Equal(t, 150.0, ei["wpm"])
		prompt := row["prompt"].([]any)
		require.Len(t, prompt, 2)
		assert.Equal(t, "system", get(prompt[0], "role"))
		assert.Equal(t, "user", get(prompt[1], "role"))
		assert.Equal(t, "rule", get(row, "reward_model", "style"))
		gt := get(row, "reward_model", "ground_truth").(string)
		var g map[string]any
		require.NoError(t, json.Unmarshal([]byte(gt), &g))
		assert.Equal(t, ei["role"], g["role"])
		assert.Equal(t, ei["deadline_s"], g["deadline_s"])
		assert.Equal(t, ei["turn_limit"], g["turn_limit"])

		transcript := `{"role": "` + ei["role"].(string) + `", "text": "I walk away.", "action": {"action": "batna"}}`
		gtJSON, _ := json.Marshal(gt)
		res := s.Score(t.Context(), &rewards.Item{DataSource: "negotiation", SolutionStr: transcript, GroundTruth: gtJSON})
		require.NoError(t, res.Err)
		batna := map[string]float64{"hr_manager": 4500.0 / 16325, "candidate": 4500.0 / 19200}[ei["role"].(string)]
		assert.InDelta(t, batna, res.Score, 1e-12, "row %d", i)
	}

	m := readManifest(t, out)
	assert.Equal(t, "synth negotiation", m.Command)
	require.Len(t, m.Outputs, 1)
	assert.Equal(t, "parquet", m.Outputs[0].Format)
	require.NotNil(t, m.Outputs[0].Rows)
	assert.Equal(t, 12, *m.Outputs[0].Rows)
	assert.Equal(t, sha256File(t, out), m.Outputs[0].SHA256)
	assert.Empty(t, m.Inputs, "the built-in scenario is no input file")
	assert.Equal(t, "all", m.Config["synth.negotiation.condition"])
	assert.Equal(t, 150.0, m.Config["synth.negotiation.wpm"])
	assert.Equal(t, 5.0, m.Config["seed"])
}

func TestSynthNegotiationDeterministic(t *testing.T) {
	dir := t.TempDir()
	var sums []string
	for i, seed := range []string{"9", "9", "10"} {
		out := filepath.Join(dir, "n"+string(rune('a'+i))+".jsonl")
		code, _, stderr := runCLI(t, "synth", "negotiation", "--count", "30", "--seed", seed, "--out", out)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
		sums = append(sums, sha256File(t, out))
	}
	assert.Equal(t, sums[0], sums[1])
	assert.NotEqual(t, sums[0], sums[2])
}

func TestSynthNegotiationScenarioAndConfig(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, filepath.Join(dir, "toy.json"), `{"id": "toy", "roles": [{"id": "seller", "name": "seller", "batna": 1}, {"id": "buyer", "batna": 2}],
  "issues": [{"id": "price", "options": ["low", "high"], "points": {"seller": [0, 5], "buyer": [5, 0]}}]}`)
	config := writeFile(t, filepath.Join(dir, "timeaware.yaml"), "synth:\n  negotiation:\n    wpm: 60\n    turn_limits: \"4\"\n    split: eval\n    prompt:\n      urgency_prefix: \"(Hurry.)\"\n")
	out := filepath.Join(dir, "toy.jsonl")
	code, stdout, stderr := runCLI(t, "--config", config, "synth", "negotiation", "--count", "6", "--seed", "1",
		"--condition", "urgency,turn_limit", "--scenario", scen, "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "conditions:  turn_limit 3, urgency 3")
	assert.Contains(t, stdout, "budgets:     ")
	assert.Contains(t, stdout, "4 turns 3")
	rows := readJSONLines(t, out)
	require.Len(t, rows, 6)
	for i, row := range rows {
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, "toy", ei["scenario_id"])
		assert.Equal(t, "eval", ei["split"])
		assert.Equal(t, 60.0, ei["wpm"])
		user := get(row["prompt"].([]any)[1], "content").(string)
		if i%2 == 0 {
			assert.Equal(t, "urgency", ei["condition"])
			assert.Equal(t, "(Hurry.)", ei["turn_prefix"])
			assert.True(t, strings.HasPrefix(user, "(Hurry.)\n"), user)
			assert.Contains(t, get(row["prompt"].([]any)[0], "content"), "60 words per minute, so each word of a message's text uses up 1 seconds")
		} else {
			assert.Equal(t, "turn_limit", ei["condition"])
			assert.Equal(t, 4.0, ei["turn_limit"])
		}
	}
	m := readManifest(t, out)
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, scen, m.Inputs[0].Path)
	assert.Equal(t, sha256File(t, scen), m.Inputs[0].SHA256)
}

func TestSynthNegotiationUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.parquet")
	badScen := writeFile(t, filepath.Join(dir, "bad.yaml"), "id: x\nroles: []\nissues: []\n")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no seed", nil, []string{"--count", "3", "--out", out}, "--seed is required"},
		{"no count", nil, []string{"--seed", "1", "--out", out}, "--count is required"},
		{"negative count", nil, []string{"--seed", "1", "--count", "-1", "--out", out}, "--count -1: want a number of rows from 1"},
		{"no out", nil, []string{"--seed", "1", "--count", "3"}, "--out is required"},
		{"condition", nil, []string{"--seed", "1", "--count", "3", "--condition", "calm", "--out", out}, `--condition calm: not one of`},
		{"format", nil, []string{"--seed", "1", "--count", "3", "--format", "csv", "--out", out}, "--format"},
		{"wpm", map[string]string{"TIMEAWARE_SYNTH_NEGOTIATION_WPM": "-1"}, []string{"--seed", "1", "--count", "3", "--out", out}, "TIMEAWARE_SYNTH_NEGOTIATION_WPM=-1: -1 is not from 1 to 10000 words per minute"},
		{"deadlines", map[string]string{"TIMEAWARE_SYNTH_NEGOTIATION_DEADLINES_S": "300,x"}, []string{"--seed", "1", "--count", "3", "--out", out}, `TIMEAWARE_SYNTH_NEGOTIATION_DEADLINES_S=300,x: entry 2 "x" is not a number`},
		{"turn limits", map[string]string{"TIMEAWARE_SYNTH_NEGOTIATION_TURN_LIMITS": "5.5"}, []string{"--seed", "1", "--count", "3", "--out", out}, "TIMEAWARE_SYNTH_NEGOTIATION_TURN_LIMITS=5.5: entry 1 (5.5) is not a whole number"},
		{"prefix", map[string]string{"TIMEAWARE_SYNTH_NEGOTIATION_PROMPT_TIME_AWARE_PREFIX": "hurry"}, []string{"--seed", "1", "--count", "3", "--out", out}, "TIMEAWARE_SYNTH_NEGOTIATION_PROMPT_TIME_AWARE_PREFIX=hurry: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, append([]string{"synth", "negotiation"}, tc.args...)...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.want)
			assert.NotContains(t, dirNames(t, dir), "x.parquet")
		})
	}
	// A scenario file that does not hold scenarios is a data error.
	code, _, stderr := runCLI(t, "synth", "negotiation", "--seed", "1", "--count", "3", "--scenario", badScen, "--out", out)
	assert.Equal(t, exitData, code, stderr)
	assert.Equal(t, "timeaware: --scenario "+badScen+": scenarios[0].roles: has 0 roles, want exactly 2", firstLine(stderr))
}
