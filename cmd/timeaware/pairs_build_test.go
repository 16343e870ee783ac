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

func TestPairsBuildV1EndToEnd(t *testing.T) {
	d := v1(t)
	tmp := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(tmp, "direct.jsonl"), d.IDs, nil)
	out := filepath.Join(tmp, "out", "pairs.jsonl")
	require.NoError(t, os.Mkdir(filepath.Dir(out), 0o755))

	code, stdout, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct,
		"--format", "jsonl", "--time-format", "iso", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "pairs build: 1379 pairs written to "+out+" (jsonl, ")
	assert.Contains(t, stdout, "inputs:      5 files, 1379 records, 1379 samples")
	assert.Contains(t, stdout, "chosen:      direct 232, tool 1147")
	assert.Contains(t, stdout, "preference:  label_only 1379")
	assert.Contains(t, stdout, "note: 1379 pairs are label-only")
	assert.ElementsMatch(t, []string{"pairs.jsonl", "pairs.jsonl.manifest.json"}, dirNames(t, filepath.Dir(out)))

	rows := readPairsJSONL(t, out)
	require.Len(t, rows, 1379)
	labels := map[string]int{}
	seen := map[string]bool{}
	for i, r := range rows {
		labels[r.Label]++
		key := v1Key(r.ID, r.Elapse)
		require.False(t, seen[key], "row %d: sample %s elapse %d repeated", i+1, r.ID, r.Elapse)
		seen[key] = true
		s, ok := d.ByKey[key]
		require.True(t, ok, "row %d: sample %s elapse %d is not in the v1 files", i+1, r.ID, r.Elapse)
		assert.Equal(t, s.Label, r.Label, "row %d (%s)", i+1, r.ID)
		assert.Equal(t, 1.0, r.Margin, "row %d (%s)", i+1, r.ID)
		assert.Equal(t, "null", string(r.Score), "row %d (%s): score", i+1, r.ID)

		require.NotEmpty(t, r.Prompt, "row %d", i+1)
		last := r.Prompt[len(r.Prompt)-1]
		assert.Equal(t, "user", last.Role, "row %d", i+1)
		want := "[" + s.FinalTime + "] "
		assert.True(t, strings.HasPrefix(last.text(t), want), "row %d (%s, %s): final message %q does not start with %q",
			i+1, r.ID, s.File, last.text(t), want)

		require.Len(t, r.Chosen, 1, "row %d", i+1)
		require.Len(t, r.Rejected, 1, "row %d", i+1)
		toolReply := r.Chosen[0]
		if r.Label == "direct" {
			toolReply = r.Rejected[0]
		}
		assert.Equal(t, "assistant", toolReply.Role, "row %d", i+1)
		assert.NotEmpty(t, toolReply.ToolCalls, "row %d: tool reply has no tool_calls", i+1)
		assert.Equal(t, "null", string(toolReply.Content), "row %d: tool reply content", i+1)
		assert.Equal(t, ourDirectAnswer(r.ID), r.directReply(t), "row %d", i+1)
	}
	assert.Equal(t, map[string]int{"tool": 1147, "direct": 232}, labels)

	m := requireManifestRows(t, out, "jsonl", 1379)
	assert.Equal(t, "timeaware", m.Tool)
	assert.Equal(t, "pairs build", m.Command)
	hashed := map[string]string{}
	for _, in := range m.Inputs {
		hashed[filepath.Base(in.Path)] = in.SHA256
		if in.Role == "" {
			st, err := os.Stat(in.Path)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), in.Bytes, "bytes of %s", in.Path)
		}
	}
	require.Len(t, hashed, 6, "five v1 files and the direct answers")
	for _, name := range d.Files {
		assert.Equal(t, sha256File(t, filepath.Join(v1Dir, name)), hashed[name], "sha256 of %s", name)
	}
	assert.Equal(t, sha256File(t, direct), hashed["direct.jsonl"])
	assert.Equal(t, "iso", m.Config["pairs.time_format"])

	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "pairs."+format)
			code, stdout, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct,
				"--format", format, "--out", out)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, "pairs build: 1379 pairs written to "+out+" ("+format+", ")
			requireManifestRows(t, out, format, 1379)
		})
	}
}

func TestPairsBuildMissingDirectAnswers(t *testing.T) {
	d := v1(t)
	tmp := t.TempDir()
	skip := map[string]bool{d.IDs[10]: true, d.IDs[300]: true, d.IDs[700]: true}
	direct := writeDirectAnswers(t, filepath.Join(tmp, "direct.jsonl"), d.IDs, skip)
	outDir := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(outDir, 0o755))

	// The CLI reads the files in name order and the records in file order.
	var missing []v1Sample
	for _, s := range d.Samples {
		if skip[s.ID] {
			missing = append(missing, s)
		}
	}
	require.NotEmpty(t, missing)

	for _, format := range []string{"jsonl", "parquet"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(outDir, "pairs."+format)
			code, stdout, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--out", out)
			require.Equal(t, exitData, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, fmt.Sprintf("%d samples have no direct answer", len(missing)))
			assert.Contains(t, stderr, fmt.Sprintf("first %s (elapse %d)", missing[0].ID, missing[0].Elapse))
			assert.NotContains(t, stderr, "Run 'timeaware --help'", "a data error is not a usage error")
			assert.Empty(t, dirNames(t, outDir), "a failed build leaves nothing behind")
		})
	}
}

func TestPairsBuildUsageErrors(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out", "pairs.jsonl")
	require.NoError(t, os.Mkdir(filepath.Dir(out), 0o755))
	missing := filepath.Join(tmp, "does-not-exist.jsonl")
	unknownKey := writeFile(t, filepath.Join(tmp, "unknown.yaml"), "pairs:\n  time_fromat: none\n")
	base := []string{"pairs", "build", "--input", demoTrajectories, "--direct-answers", demoDirect,
		"--annotations", demoVotes, "--out", out}

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no input", []string{"pairs", "build", "--out", out}, exitUsage, []string{"--input is required"}},
		{"no out", []string{"pairs", "build", "--input", demoTrajectories}, exitUsage, []string{"--out is required"}},
		{"format xml", append(base, "--format", "xml"), exitUsage, []string{"--format xml: want parquet, arrow or jsonl"}},
		{"time format utc", append(base, "--time-format", "utc"), exitUsage, []string{`--time-format utc: unknown time format (want`, "none, iso or iso_delta"}},
		{"min margin 2", append(base, "--min-margin", "2"), exitUsage, []string{"--min-margin 2: want a margin from 0 to 1.5"}},
		{"label-only margin -1", append(base, "--label-only-margin", "-1"), exitUsage, []string{"--label-only-margin -1: want a margin from 0 to 1.5"}},
		{"unknown flag", append(base, "--no-such-flag"), exitUsage, []string{"unknown flag --no-such-flag"}},
		{"positional argument", append(base, "extra.jsonl"), exitUsage, []string{`"timeaware pairs build" takes no arguments; got "extra.jsonl"`}},
		{"input does not exist", []string{"pairs", "build", "--input", missing, "--out", out}, exitIO, []string{"--input " + missing + ": no such file or directory"}},
		{"generate without model", append(base, "--generate-direct", "http://127.0.0.1:9/v1"), exitUsage, []string{"--generate-direct needs --model"}},
		{"config does not exist", append([]string{"--config", missing}, base...), exitIO, []string{"--config " + missing + ": no such file or directory"}},
		{"config unknown key", append([]string{"--config", unknownKey}, base...), exitUsage, []string{"--config " + unknownKey + ": unknown key pairs.time_fromat; did you mean pairs.time_format?"}},
		{"annotations do not exist", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", missing, "--out", out},
			exitIO, []string{"--annotations " + missing + ": no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			if tt.code == exitUsage {
				assert.Contains(t, stderr, "Run 'timeaware pairs build --help' for usage.")
			} else {
				assert.NotContains(t, stderr, "--help")
			}
			assert.Empty(t, dirNames(t, filepath.Dir(out)))
		})
	}
}

// demoRecords returns the demo trajectories as generic JSON objects.
func demoRecords(t *testing.T) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(demoTrajectories)
	require.NoError(t, err)
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		recs = append(recs, r)
	}
	require.GreaterOrEqual(t, len(recs), 3)
	return recs
}

func writeJSONL(t *testing.T, path string, recs []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return writeFile(t, path, b.String())
}

// historyMsg returns message i of record r's history for editing.
func historyMsg(r map[string]any, i int) map[string]any {
	h := r["history"].([]any)
	if i < 0 {
		i += len(h)
	}
	return h[i].(map[string]any)
}

func TestPairsBuildDataErrors(t *testing.T) {
	tmp := t.TempDir()

	recs := demoRecords(t)
	historyMsg(recs[1], 1)["time"] = "yesterday"
	badTime := writeJSONL(t, filepath.Join(tmp, "bad_time.jsonl"), recs)

	recs = demoRecords(t)
	historyMsg(recs[2], -1)["role"] = "assistant"
	lastIdx := len(recs[2]["history"].([]any)) - 1
	assistantLast := writeJSONL(t, filepath.Join(tmp, "assistant_last.jsonl"), recs)

	orig, err := os.ReadFile(demoTrajectories)
	require.NoError(t, err)
	copyA := writeFile(t, filepath.Join(tmp, "a", "trajectories.jsonl"), string(orig))
	copyB := writeFile(t, filepath.Join(tmp, "b", "trajectories.jsonl"), string(orig))

	votes, err := os.ReadFile(demoVotes)
	require.NoError(t, err)
	lines := strings.Split(string(votes), "\n")
	require.Contains(t, lines[3], `"choice": "direct"`)
	lines[3] = strings.Replace(lines[3], `"choice": "direct"`, `"choice": "maybe"`, 1)
	badVotes := writeFile(t, filepath.Join(tmp, "bad_votes.jsonl"), strings.Join(lines, "\n"))
	var line4 struct {
		SampleID string `json:"sample_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[3]), &line4))
	firstID := demoRecords(t)[0]["id"].(string)

	tests := []struct {
		name   string
		inputs []string
		votes  string
		want   []string
	}{
		{"bad time", []string{badTime}, demoVotes,
			[]string{badTime + ": record 2 (line 2, id " + recs[1]["id"].(string) + "): history[1].time: ", `invalid time "yesterday"`}},
		{"final message from the assistant", []string{assistantLast}, demoVotes,
			[]string{assistantLast + ": record 3 (line 3, id " + recs[2]["id"].(string) + fmt.Sprintf("): history[%d].role: ", lastIdx),
				`the final message is "assistant"`}},
		{"duplicate sample", []string{copyA, copyB}, demoVotes,
			[]string{copyB + ": record 1 (id " + firstID + "): sample at elapse 0 was already given by " + copyA}},
		{"invalid vote choice", []string{demoTrajectories}, badVotes,
			[]string{"bad_votes.jsonl: line 4 (sample_id " + line4.SampleID + "): choice: ", `"maybe" is not one of direct, lean_direct, lean_tool, tool`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outDir := filepath.Join(t.TempDir(), "out")
			require.NoError(t, os.Mkdir(outDir, 0o755))
			args := []string{"pairs", "build", "--annotations", tt.votes, "--direct-answers", demoDirect,
				"--out", filepath.Join(outDir, "pairs.parquet")}
			for _, in := range tt.inputs {
				args = append(args, "--input", in)
			}
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, exitData, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "Run 'timeaware --help'")
			assert.Empty(t, dirNames(t, outDir), "a failed build leaves nothing behind")
		})
	}
}
