package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/examples"
)

// TestConfigDefaultsPrintsTheDocumentedFile: config defaults is the
// documented file, which loads as a config of defaults.
func TestConfigDefaultsPrintsTheDocumentedFile(t *testing.T) {
	code, stdout, stderr := runCLI(t, "config", "defaults")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	want, err := os.ReadFile(configExample)
	require.NoError(t, err)
	assert.Equal(t, string(want), stdout)
	assert.Equal(t, string(examples.DefaultConfig), stdout)
}

// TestConfigShowIsWhatCommandsUse: config show prints every key with the
// value in effect, names the source of each value that is not a default,
// hides secrets, and reads back as the same configuration.
func TestConfigShowIsWhatCommandsUse(t *testing.T) {
	for _, k := range []string{"TIMEAWARE_PAIRS_TIME_FORMAT", "TIMEAWARE_TIMERS_SECRET", "TIMEAWARE_SPLITS_BANDS", "TIMEAWARE_REWARDS_STOP_STRINGS"} {
		unsetenv(t, k)
	}
	tmp := t.TempDir()
	file := writeFile(t, filepath.Join(tmp, "my.yaml"), "pairs:\n  min_margin: 0.5\nsplits:\n  bands: 16\n")
	t.Setenv("TIMEAWARE_PAIRS_TIME_FORMAT", "iso_delta")
	t.Setenv("TIMEAWARE_TIMERS_SECRET", "a-secret-of-enough-bytes")
	t.Setenv("TIMEAWARE_SPLITS_BANDS", "32")

	code, stdout, stderr := runCLI(t, "--config", file, "config", "show")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "time_format: iso_delta # from TIMEAWARE_PAIRS_TIME_FORMAT\n")
	assert.Contains(t, stdout, "min_margin: 0.5 # from --config "+file+": pairs.min_margin\n")
	assert.Contains(t, stdout, "bands: 32 # from TIMEAWARE_SPLITS_BANDS\n", "a variable wins over the file")
	assert.Contains(t, stdout, `secret: "" # set by TIMEAWARE_TIMERS_SECRET; not shown`)
	assert.NotContains(t, stdout, "a-secret-of-enough-bytes")
	assert.Contains(t, stdout, "    utilization: sin\n", "a default has no comment")

	// Read back, the output is the configuration in effect, key for key.
	shown := writeFile(t, filepath.Join(tmp, "shown.yaml"), stdout)
	back := viper.New()
	back.SetConfigFile(shown)
	require.NoError(t, back.ReadInConfig())
	a := &app{v: newViper()}
	a.v.SetConfigFile(file)
	require.NoError(t, a.v.ReadInConfig())
	require.ElementsMatch(t, keysOf(defaults), back.AllKeys())
	for key := range defaults {
		want, err := configValue(a.v, key)
		require.NoError(t, err, key)
		got, err := configValue(back, key)
		require.NoError(t, err, key)
		if key == "timers.secret" {
			assert.Equal(t, "", got)
			continue
		}
		assert.Equal(t, want, got, key)
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestEmptyVariableSetsTheKey: an empty TIMEAWARE_* variable sets its key
// to "", as an empty value in a config file does: the one way to turn the
// direct-answer cache off from the environment.
func TestEmptyVariableSetsTheKey(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "off.yaml"), "pairs:\n  generate:\n    cache_dir: \"\"\n")
	code, fromFile, stderr := runCLI(t, "--config", file, "config", "show")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, fromFile, "    cache_dir: \"\" # from --config "+file+": pairs.generate.cache_dir\n")

	t.Setenv("TIMEAWARE_PAIRS_GENERATE_CACHE_DIR", "")
	code, fromEnv, stderr := runCLI(t, "config", "show")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, fromEnv, "    cache_dir: \"\" # from TIMEAWARE_PAIRS_GENERATE_CACHE_DIR\n")
}

// TestConfigShowRefusesWhatCommandsRefuse: for a bad value of every
// section, config show refuses it in the words of the command that reads
// it, with its exit code, and prints nothing on stdout.
func TestConfigShowRefusesWhatCommandsRefuse(t *testing.T) {
	tmp := t.TempDir()
	out := func(name string) string { return filepath.Join(tmp, name) }
	tests := []struct {
		env, value string
		command    []string
	}{
		{"TIMEAWARE_PAIRS_TIME_FORMAT", "utc", []string{"pairs", "build", "--input", demoTrajectories, "--out", out("p.parquet")}},
		{"TIMEAWARE_PAIRS_FORMAT", "xml", []string{"pairs", "build", "--input", demoTrajectories, "--out", out("p.parquet")}},
		{"TIMEAWARE_PAIRS_SPLIT", "random", []string{"pairs", "build", "--input", demoTrajectories, "--out", out("p.parquet")}},
		{"TIMEAWARE_SPLITS_BANDS", "-3", []string{"splits", "check", "--text", "question", "--train", splitsTrain, "--test", splitsTest}},
		{"TIMEAWARE_SPLITS_CONTAMINATION_MAX_CONTAMINATED_PER", "file", []string{"splits", "contamination", "--benchmark", contaminationBench, splitsTrain}},
		{"TIMEAWARE_SYNTH_TIMESTAMPS_MODE", "nope", []string{"synth", "timestamps", "--input", demoTrajectories, "--seed", "1", "--out", out("t.jsonl")}},
		{"TIMEAWARE_SYNTH_BUDGET_UNIT", "hours", []string{"synth", "budget", "--input", budgetTasks, "--family", "general", "--seed", "1", "--out", out("b.jsonl")}},
		{"TIMEAWARE_SYNTH_BUDGET_MULTIPLIERS", "0", []string{"synth", "budget", "--input", budgetTasks, "--family", "game", "--seed", "1", "--out", out("b.jsonl")}},
		{"TIMEAWARE_BENCHMARKS_FORMAT", "csv", []string{"benchmarks", "import", "tram", "../../examples/benchmarks/tram/arithmetic_shots_saq.csv", "--out", out("r.jsonl")}},
		{"TIMEAWARE_SYNTH_PUZZLES_YEARS", "2030-1900", []string{"synth", "puzzles", "--count", "2", "--seed", "1", "--out", out("z.jsonl")}},
		{"TIMEAWARE_SYNTH_TRAVELER_CATEGORIES", "nope", []string{"synth", "traveler", "--count", "2", "--seed", "1", "--out", out("v.jsonl")}},
		{"TIMEAWARE_SYNTH_NEGOTIATION_CONDITION", "nope", []string{"synth", "negotiation", "--count", "2", "--seed", "1", "--out", out("n.jsonl")}},
		{"TIMEAWARE_REWARDS_TIMELY_UTILIZATION", "nope", []string{"score", "--data-source", "timepuzzles", "--input", scorePuzzles}},
		{"TIMEAWARE_TIMERS_DEFAULT_TTL", "soon", []string{"score", "--data-source", "timepuzzles", "--input", scorePuzzles}},
		{"TIMEAWARE_SERVE_MAX_INFLIGHT", "0", []string{"serve", "--addr", "127.0.0.1:0"}},
		{"TIMEAWARE_PAIRS_CATALOG", out("missing.json"), []string{"pairs", "build", "--input", demoTrajectories, "--out", out("p.parquet")}},
	}
	sections := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			code, stdout, stderr := runCLI(t, "config", "show")
			require.NotEqual(t, exitOK, code, "config show accepted %s=%s", tt.env, tt.value)
			assert.Empty(t, stdout)
			wantCode, _, wantErr := runCLI(t, tt.command...)
			require.NotEqual(t, exitOK, wantCode, "%v accepted %s=%s", tt.command, tt.env, tt.value)
			assert.Equal(t, wantCode, code)
			assert.Equal(t, firstLine(wantErr), firstLine(stderr))
			assert.NotContains(t, firstLine(stderr), "settings are refused")
		})
		sections[sectionOf(keyOfEnv(tt.env))] = true
	}
	for _, c := range configChecks {
		assert.True(t, sections[c.section], "no bad value of section %s is tried", c.section)
	}

	t.Run("several", func(t *testing.T) {
		t.Setenv("TIMEAWARE_PAIRS_TIME_FORMAT", "utc")
		t.Setenv("TIMEAWARE_SPLITS_BANDS", "-3")
		code, stdout, stderr := runCLI(t, "config", "show")
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, stdout)
		assert.Equal(t, []string{"timeaware: 2 settings are refused:",
			`  TIMEAWARE_PAIRS_TIME_FORMAT=utc: unknown time format (want none, iso or iso_delta)`,
			"  TIMEAWARE_SPLITS_BANDS=-3: want a divisor of the permutations (128)"}, strings.Split(stderr, "\n")[:3])
	})
}

// TestConfigChecksCoverEveryKey: every key of the configuration is under
// a section that config show checks.
func TestConfigChecksCoverEveryKey(t *testing.T) {
	for key := range defaults {
		assert.NotEmpty(t, sectionOf(key), "key %s is under no section that config show checks", key)
	}
}

// sectionOf is the section of configChecks that key is under, or "".
func sectionOf(key string) string {
	best := ""
	for _, c := range configChecks {
		if strings.HasPrefix(key, c.section+".") && len(c.section) > len(best) {
			best = c.section
		}
	}
	return best
}

// keyOfEnv is the config key of a TIMEAWARE_* variable, found among the
// keys (an oracle apart from the CLI's own mapping).
func keyOfEnv(env string) string {
	for key := range defaults {
		if "TIMEAWARE_"+strings.ToUpper(strings.NewReplacer(".", "_").Replace(key)) == env {
			return key
		}
	}
	return ""
}
