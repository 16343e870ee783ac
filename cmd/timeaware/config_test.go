package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/spf13/cast"
	"github.com/spf13/viper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unsetenv removes key for the duration of the test, restoring it after.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // registers the restore
	require.NoError(t, os.Unsetenv(key))
}

func TestConfigPrecedenceTimeFormat(t *testing.T) {
	const env = "TIMEAWARE_PAIRS_TIME_FORMAT"
	tmp := t.TempDir()
	config := writeFile(t, filepath.Join(tmp, "timeaware.yaml"), "pairs:\n  time_format: none\n")

	// A stamp, then the message text; an assistant turn that only calls
	// tools has no text and gets the bare stamp.
	const iso = `\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	const delta = `; \d+ (second|minute|hour|day|month)s? passed`
	stamped := map[string][2]*regexp.Regexp{
		"iso":       {regexp.MustCompile(`^` + iso + `\] \S`), regexp.MustCompile(`^` + iso + `\]$`)},
		"iso_delta": {regexp.MustCompile(`^` + iso + delta + `\] \S`), regexp.MustCompile(`^` + iso + delta + `\]$`)},
	}

	tests := []struct {
		name   string
		config bool
		env    string
		flag   string
		want   string
	}{
		{name: "defaults only", want: "iso"},
		{name: "file", config: true, want: "none"},
		{name: "file and env", config: true, env: "iso_delta", want: "iso_delta"},
		{name: "file, env and flag", config: true, env: "iso_delta", flag: "iso", want: "iso"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv(env, tt.env)
			} else {
				unsetenv(t, env)
			}
			out := filepath.Join(t.TempDir(), "pairs.jsonl")
			var args []string
			if tt.config {
				args = append(args, "--config", config)
			}
			args = append(args, "pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes,
				"--direct-answers", demoDirect, "--out", out)
			if tt.flag != "" {
				args = append(args, "--time-format", tt.flag)
			}
			code, _, stderr := runCLI(t, args...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)

			m := requireManifestRows(t, out, "jsonl", 16)
			assert.Equal(t, tt.want, m.Config["pairs.time_format"])
			rows := readPairsJSONL(t, out)
			require.Len(t, rows, 16)
			for i, r := range rows {
				for j, msg := range r.Prompt {
					callOnly := len(msg.ToolCalls) > 0
					if tt.want == "none" {
						if callOnly {
							assert.Equal(t, "null", string(msg.Content), "row %d message %d", i+1, j)
						} else {
							assert.NotRegexp(t, `^\[`, msg.text(t), "row %d message %d", i+1, j)
						}
						continue
					}
					format := tt.want
					if j == 0 {
						format = "iso" // the first message has no gap to report
					}
					re := stamped[format][0]
					if callOnly {
						re = stamped[format][1]
					}
					assert.Regexp(t, re, msg.text(t), "row %d message %d", i+1, j)
				}
			}
		})
	}
}

// TestConfigExampleMatchesDefaults keeps examples/timeaware.yaml, which
// documents every key, in step with the built-in defaults.
func TestConfigExampleMatchesDefaults(t *testing.T) {
	v := viper.New()
	v.SetConfigFile(configExample)
	v.SetConfigType("yaml")
	require.NoError(t, v.ReadInConfig())

	norm := func(x any) any {
		switch x.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			return cast.ToFloat64(x)
		case []any, []string:
			return cast.ToStringSlice(x)
		}
		return x
	}
	got := map[string]any{}
	for _, k := range v.AllKeys() {
		got[k] = norm(v.Get(k))
	}
	want := map[string]any{}
	for k, val := range defaults {
		want[k] = norm(val)
	}
	assert.Equal(t, want, got)
}

// TestConfigExampleIsAValidConfig runs a build with the example file: it
// must load, and with it the output must equal the one built on defaults.
func TestConfigExampleIsAValidConfig(t *testing.T) {
	unsetenv(t, "TIMEAWARE_PAIRS_TIME_FORMAT")
	tmp := t.TempDir()
	outs := []string{filepath.Join(tmp, "defaults.jsonl"), filepath.Join(tmp, "example.jsonl")}
	for i, out := range outs {
		var args []string
		if i == 1 {
			args = []string{"--config", configExample}
		}
		args = append(args, "pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes,
			"--direct-answers", demoDirect, "--out", out)
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
	}
	assert.Equal(t, sha256File(t, outs[0]), sha256File(t, outs[1]))
}
