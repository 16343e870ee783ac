package negotiation

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/synth"
)

var exampleScenarios = filepath.Join("..", "..", "examples", "negotiation", "scenarios.yaml")

func jsonRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

func testOutput(path string) synth.Output {
	return synth.Output{Path: path, Format: dataset.JSONL, Manifest: output.Manifest{Tool: "test", Command: "negotiation"}}
}

// TestWriteSplitsByScenario checks that a split puts each scenario's rows
// on one side, and that the files hold the rows Build makes, each once.
func TestWriteSplitsByScenario(t *testing.T) {
	scenarios, _, err := ReadScenarios(exampleScenarios)
	require.NoError(t, err)
	require.Len(t, scenarios, 4)
	opt := DefaultOptions()
	opt.Seed, opt.Count, opt.Scenarios = 3, 40, scenarios
	want := map[string]string{} // prompt -> scenario
	_, err = Build(context.Background(), opt, func(r *Row) error {
		want[r.System+"\x00"+r.User] = r.ScenarioID
		return nil
	})
	require.NoError(t, err)

	dir := t.TempDir()
	o := testOutput(filepath.Join(dir, "n.jsonl"))
	o.TestFraction = 0.25
	w, err := Write(context.Background(), opt, o)
	require.NoError(t, err)
	require.Len(t, w.Outputs, 2)
	assert.Equal(t, 40, w.Summary.Rows)
	side := map[string]string{}
	got := map[string]string{}
	for i, name := range []string{"n-train.jsonl", "n-test.jsonl"} {
		for _, r := range jsonRows(t, filepath.Join(dir, name)) {
			info := r["extra_info"].(map[string]any)
			scenario, split := info["scenario_id"].(string), info["split"].(string)
			assert.Equal(t, []string{"train", "test"}[i], split)
			if s, ok := side[scenario]; ok {
				assert.Equal(t, s, split, "scenario %s straddles the split", scenario)
			}
			side[scenario] = split
			prompt := r["prompt"].([]any)
			got[prompt[0].(map[string]any)["content"].(string)+"\x00"+prompt[1].(map[string]any)["content"].(string)] = scenario
		}
	}
	assert.Equal(t, want, got)
	assert.Len(t, side, 4)
	assert.Equal(t, "scenario", w.Split.Unit)
	assert.Equal(t, 1, w.Split.Units["test"], "round(0.25 × 4) scenarios")
}

func TestWriteOneFileAndShard(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed, opt.Count = 1, 10
	var err error
	opt.Shard, err = shard.Parse("0/2")
	require.NoError(t, err)
	o := testOutput(filepath.Join(t.TempDir(), "n.jsonl"))
	w, err := Write(context.Background(), opt, o)
	require.NoError(t, err)
	assert.Nil(t, w.Split)
	assert.Len(t, jsonRows(t, o.Path), 5)
	assert.Equal(t, 5, w.Summary.Skipped)
	b, err := os.ReadFile(w.ManifestPath)
	require.NoError(t, err)
	var m output.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, []output.Entry{}, m.Inputs)
	assert.Equal(t, "negotiation", m.Command)
}

func TestWriteSplitNeedsTwoScenarios(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed, opt.Count = 1, 4
	o := testOutput(filepath.Join(t.TempDir(), "n.jsonl"))
	o.TestFraction = 0.5
	_, err := Write(context.Background(), opt, o)
	var oe *synth.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "test_fraction", oe.Key)
	assert.NoFileExists(t, o.Path)
}

func TestReadScenarios(t *testing.T) {
	data, err := os.ReadFile(exampleScenarios)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	scenarios, in, err := ReadScenarios(exampleScenarios)
	require.NoError(t, err)
	assert.Equal(t, output.Entry{Path: exampleScenarios, Role: "scenarios", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}, in)
	assert.Equal(t, "used_car", scenarios[0].ID)

	dir := t.TempDir()
	_, _, err = ReadScenarios(filepath.Join(dir, "none.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("- 1\n"), 0o644))
	_, _, err = ReadScenarios(bad)
	assert.ErrorContains(t, err, "want a mapping")
}

// defaultConfig is the documented config's synth.negotiation section.
func defaultConfig() Config {
	return Config{Condition: "all", DeadlinesS: "240,300,360", TurnLimits: "5,6,7,8,9", WPM: 150, Split: "train"}
}

func TestConfigDefaultsAreTheDefaultOptions(t *testing.T) {
	o, err := defaultConfig().Options()
	require.NoError(t, err)
	assert.Equal(t, DefaultOptions(), o)
}

func TestConfigOptions(t *testing.T) {
	c := Config{Condition: "urgency, turn_limit", DeadlinesS: " 60 , 90.5", TurnLimits: "4", WPM: 60, Split: "eval"}
	c.Prompts.UrgencyPrefix, c.Prompts.Start = "(Hurry.)", "  "
	o, err := c.Options()
	require.NoError(t, err)
	assert.Equal(t, []string{"urgency", "turn_limit"}, o.Conditions)
	assert.Equal(t, []float64{60, 90.5}, o.DeadlinesS)
	assert.Equal(t, []int{4}, o.TurnLimits)
	assert.Equal(t, 60.0, o.WPM)
	assert.Equal(t, "eval", o.Split)
	want := DefaultPrompts()
	want.UrgencyPrefix = "(Hurry.)"
	assert.Equal(t, want, o.Prompts, "a blank prompt keeps the default")

	o, err = Config{}.Options()
	require.NoError(t, err)
	assert.Nil(t, o.DeadlinesS)
	assert.Empty(t, o.TurnLimits)
}

func TestConfigErrorsNameTheirKey(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
		edit            func(*Config)
	}{
		{"condition", "condition", `"nope" is not one of all, control, time_aware, urgency, turn_limit`, func(c *Config) { c.Condition = "nope" }},
		{"deadline", "deadlines_s", `entry 2 "x" is not a number`, func(c *Config) { c.DeadlinesS = "60, x" }},
		{"deadline NaN", "deadlines_s", `entry 1 "NaN" is not a number`, func(c *Config) { c.DeadlinesS = "NaN" }},
		{"deadline Inf", "deadlines_s", `entry 1 "+Inf" is not a number`, func(c *Config) { c.DeadlinesS = "+Inf" }},
		{"turn limit", "turn_limits", "entry 1 (4.5) is not a whole number of messages", func(c *Config) { c.TurnLimits = "4.5" }},
		{"huge turn limit", "turn_limits", "entry 2 (2e+09) is not a whole number of messages", func(c *Config) { c.TurnLimits = "5,2e9" }},
		{"turn limit text", "turn_limits", `entry 1 "five" is not a number`, func(c *Config) { c.TurnLimits = "five" }},
		{"first bad key wins", "deadlines_s", `entry 1 "x" is not a number`, func(c *Config) { c.DeadlinesS, c.TurnLimits = "x", "x" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			tc.edit(&c)
			_, err := c.Options()
			var oe *synth.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "negotiation", oe.Family)
			assert.Equal(t, tc.key, oe.Key)
			assert.EqualError(t, oe.Err, tc.want)
		})
	}
}

func TestSummaryLines(t *testing.T) {
	s := &Summary{ByCondition: map[string]int{"urgency": 3, "control": 1}, ByScenario: map[string]int{"new_recruit": 4},
		ByRole: map[string]int{"recruit": 2, "hr_manager": 2}, ByFirstSpeaker: map[string]int{"self": 4}, ByBudget: map[string]int{}}
	assert.Equal(t, []string{
		"conditions:  control 1, urgency 3",
		"scenarios:   new_recruit 4",
		"roles:       hr_manager 2, recruit 2",
		"opens:       self 4",
		"budgets:     -",
	}, s.Lines())
}
