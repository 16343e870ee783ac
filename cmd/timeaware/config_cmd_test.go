package main

import (
	"os"
	"path/filepath"
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
