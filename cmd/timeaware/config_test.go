package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/rewards"
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

// TestConfigDefaultsAreTyped checks that the defaults read from
// examples/timeaware.yaml type their keys as the options they feed: a
// fractional key stays fractional even at a whole default, so that a
// variable of 0.5 is not refused as "a whole number".
func TestConfigDefaultsAreTyped(t *testing.T) {
	for key, want := range map[string]any{
		"pairs.min_margin":                    float64(0),
		"pairs.label_only_margin":             1.0,
		"pairs.seed":                          0,
		"pairs.confident_only":                false,
		"pairs.time_format":                   "iso",
		"synth.timestamps.read.mu":            238.0,
		"synth.negotiation.wpm":               150.0,
		"rewards.timely.game_exponent":        1.0 / 3,
		"rewards.stop_strings":                rewards.DefaultStopStrings,
		"rewards.tictoc.tool_call_patterns":   []string{},
		"timers.max_rollouts":                 1048576,
		"timers.index_bytes":                  0,
		"timers.measured_spans_only":          false,
		"rewards.length.lcpo_alpha":           0.0003,
		"rewards.length.thinkprune_limit":     4000,
		"synth.budget.elastic_think_budget":   1024,
		"rewards.length.count_slack":          8,
		"rewards.length.count_slack_fraction": 0.02,
		"rewards.length.tokenizer":            "",
	} {
		assert.Equal(t, want, defaults[key], key)
	}
	assert.Len(t, defaults, 237, "keys in examples/timeaware.yaml")
}

func TestFlattenConfig(t *testing.T) {
	got, err := flattenConfig([]byte("a:\n  b: 1\n  c:\n    d: [x, y]\n  e: 0.5\nf: \"\"\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a.b": 1, "a.c.d": []string{"x", "y"}, "a.e": 0.5, "f": ""}, got)

	for _, tc := range []struct{ doc, err string }{
		{"a:\n  b:\n", "config: a.b: <nil> is not text"},
		{"a: [1, {x: 2}]\n", "config: a:"},
		{"a: [\n", "config: yaml"},
	} {
		_, err := flattenConfig([]byte(tc.doc))
		assert.ErrorContains(t, err, tc.err, tc.doc)
	}
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
