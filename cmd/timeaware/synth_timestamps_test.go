package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
)

// stampedRecord is what the tests read back of a stamped record.
type stampedRecord struct {
	ID      string `json:"id"`
	History []struct {
		Role string          `json:"role"`
		Time json.RawMessage `json:"time"`
	} `json:"history"`
}

// readStamped reads a stamped output (JSON array or JSONL) as raw records.
func readStamped(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if strings.HasSuffix(path, ".json") {
		var recs []json.RawMessage
		require.NoError(t, json.Unmarshal(b, &recs), path)
		return recs
	}
	var recs []json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		recs = append(recs, json.RawMessage(append([]byte(nil), sc.Bytes()...)))
	}
	require.NoError(t, sc.Err())
	return recs
}

// fromV1Name is what stamping a v1 file adds to each record: the class and
// elapse level its file's name held.
var fromV1Name = regexp.MustCompile(`,"preference":"(tool|direct)","elapse":[0-2]}$`)

// stampedByID maps id to record, checking that copies of a trajectory agree
// but for the class and level their file names gave them.
func stampedByID(t *testing.T, recs []json.RawMessage) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, rec := range recs {
		rec = fromV1Name.ReplaceAll(rec, []byte("}"))
		var r stampedRecord
		require.NoError(t, json.Unmarshal(rec, &r))
		if prev, ok := m[r.ID]; ok {
			require.Equal(t, prev, string(rec), "%s: copies differ", r.ID)
		}
		m[r.ID] = string(rec)
	}
	return m
}

func runStamp(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"synth", "timestamps"}, args...)...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	return stdout
}

// TestSynthTimestampsV1ThroughPairs re-stamps every v1 file under its own
// name and builds pairs from the result: the builder must accept all 1379
// samples and show the new final times in its prompts.
func TestSynthTimestampsV1ThroughPairs(t *testing.T) {
	d := v1(t)
	tmp := t.TempDir()
	stamped := filepath.Join(tmp, "stamped")
	require.NoError(t, os.Mkdir(stamped, 0o755))
	finals := map[string][]string{}
	for _, name := range d.Files {
		out := filepath.Join(stamped, name)
		stdout := runStamp(t, "--input", filepath.Join(v1Dir, name), "--seed", "3", "--out", out)
		assert.Contains(t, stdout, "records written to "+out)
		for _, rec := range readStamped(t, out) {
			tr, err := conversation.ParseTrajectory(conversation.RawRecord{Source: name, Record: 1, Data: rec})
			require.NoError(t, err)
			field, err := tr.CheckTimes()
			require.NoError(t, err, "%s: %s", tr.ID, field)
			var ft []string
			for _, x := range tr.FinalTimes {
				ft = append(ft, conversation.FormatTime(x))
			}
			finals[tr.ID] = ft
		}
	}
	require.Len(t, finals, 725)

	direct := writeDirectAnswers(t, filepath.Join(tmp, "direct.jsonl"), d.IDs, nil)
	pairs := filepath.Join(tmp, "pairs.jsonl")
	code, stdout, stderr := runCLI(t, "pairs", "build", "--input", stamped, "--direct-answers", direct, "--time-format", "iso", "--out", pairs)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "1379 pairs written")
	rows := readPairsJSONL(t, pairs)
	require.Len(t, rows, 1379)
	for _, r := range rows {
		last := r.Prompt[len(r.Prompt)-1]
		want := "[" + finals[r.ID][r.Elapse] + "] "
		assert.True(t, strings.HasPrefix(last.text(t), want), "%s elapse %d: %q does not start with %q", r.ID, r.Elapse, last.text(t), want)
	}

	all := filepath.Join(tmp, "all.jsonl")
	runStamp(t, "--input", v1Dir, "--seed", "3", "--out", all)
	whole := stampedByID(t, readStamped(t, all))
	require.Len(t, whole, 725)
	for _, name := range d.Files {
		for id, rec := range stampedByID(t, readStamped(t, filepath.Join(stamped, name))) {
			assert.Equal(t, whole[id], rec, "%s: stamped alone and with the others", id)
		}
	}

	// The whole directory stamped into one file reads back to the same
	// pairs: each record keeps the class and level its file's name held.
	merged := filepath.Join(tmp, "merged-pairs.jsonl")
	code, stdout, stderr = runCLI(t, "pairs", "build", "--input", all, "--direct-answers", direct, "--time-format", "iso", "--out", merged)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "1379 pairs written")
	assert.Contains(t, stdout, "chosen:      direct 232, tool 1147")
	byKey := func(rows []pairRow) map[string]pairRow {
		m := map[string]pairRow{}
		for _, r := range rows {
			m[fmt.Sprintf("%s@%d", r.ID, r.Elapse)] = r
		}
		return m
	}
	assert.Equal(t, byKey(rows), byKey(readPairsJSONL(t, merged)), "the merged file makes the pairs the five files make")
}

func TestSynthTimestampsShardInvariance(t *testing.T) {
	tmp := t.TempDir()
	whole := filepath.Join(tmp, "whole.jsonl")
	runStamp(t, "--input", v1Dir, "--seed", "9", "--out", whole)
	want := stampedByID(t, readStamped(t, whole))

	const n = 3
	got := map[string]string{}
	records := 0
	for i := 0; i < n; i++ {
		out := filepath.Join(tmp, fmt.Sprintf("part-%d.jsonl", i))
		stdout := runStamp(t, "--input", v1Dir, "--seed", "9", "--shard", fmt.Sprintf("%d/%d", i, n), "--workers", "2", "--out", out)
		assert.Contains(t, stdout, "in other shards")
		sh := shard.Shard{Index: i, Count: n}
		recs := readStamped(t, out)
		records += len(recs)
		for id, rec := range stampedByID(t, recs) {
			assert.True(t, sh.HasID(id), "%s is not in shard %d/%d", id, i, n)
			_, dup := got[id]
			require.False(t, dup, "%s in two shards", id)
			got[id] = rec
		}
	}
	assert.Equal(t, 1379, records)
	assert.Equal(t, want, got)
}

func TestSynthTimestampsDeterministic(t *testing.T) {
	tmp := t.TempDir()
	outs := []string{filepath.Join(tmp, "a.jsonl"), filepath.Join(tmp, "b.jsonl"), filepath.Join(tmp, "c.json")}
	for _, out := range outs {
		runStamp(t, "--input", v1Dir, "--seed", "5", "--out", out)
	}
	assert.Equal(t, sha256File(t, outs[0]), sha256File(t, outs[1]), "a rerun differs")
	jl, arr := readStamped(t, outs[0]), readStamped(t, outs[2])
	require.Len(t, jl, 1379)
	require.Len(t, arr, 1379)
	for i := range jl {
		assert.JSONEq(t, string(jl[i]), string(arr[i]))
	}
	other := filepath.Join(tmp, "d.jsonl")
	runStamp(t, "--input", v1Dir, "--seed", "6", "--out", other)
	assert.NotEqual(t, sha256File(t, outs[0]), sha256File(t, other))
}

func TestSynthTimestampsFillKeepsV1Times(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fill.jsonl")
	stdout := runStamp(t, "--input", filepath.Join(v1Dir, "preferTool_elapse_0.json"), "--seed", "1", "--mode", "fill", "--out", out)
	assert.Contains(t, stdout, "messages drawn 0")
	b, err := os.ReadFile(filepath.Join(v1Dir, "preferTool_elapse_0.json"))
	require.NoError(t, err)
	var in []json.RawMessage
	require.NoError(t, json.Unmarshal(b, &in))
	got := readStamped(t, out)
	require.Len(t, got, len(in))
	for i := range in {
		// Unchanged, but for the class and level of the file's name.
		want := append(bytes.TrimSuffix(bytes.TrimSpace(in[i]), []byte("}")), `,"preference":"tool","elapse":0}`...)
		assert.JSONEq(t, string(want), string(got[i]))
	}
}

func TestSynthTimestampsConfig(t *testing.T) {
	tmp := t.TempDir()
	config := writeFile(t, filepath.Join(tmp, "c.yaml"), "synth:\n  timestamps:\n    resolution: 0s\n    gaps:\n      high: \"10s,20s,30s\"\n")
	input := writeFile(t, filepath.Join(tmp, "in.jsonl"),
		`{"id":"x_1","sensitivity":"high","history":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"},{"role":"user","content":"q"}]}`+"\n")
	out := filepath.Join(tmp, "out.jsonl")
	code, stdout, stderr := runCLI(t, "--config", config, "synth", "timestamps", "--input", input, "--seed", "1",
		"--start", "2025-01-01T00:00:00Z", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "start from:  option 1")
	recs := readStamped(t, out)
	require.Len(t, recs, 1)
	tr, err := conversation.ParseTrajectory(conversation.RawRecord{Data: recs[0]})
	require.NoError(t, err)
	assert.Equal(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), tr.History[0].Time)
	assert.NotEqual(t, tr.History[1].Time, tr.History[1].Time.Round(time.Second), "resolution 0s keeps sub-second times")
	for k, mean := range []float64{10, 20, 30} {
		gap := tr.FinalTimes[k].Sub(tr.History[1].Time).Seconds()
		assert.True(t, gap >= mean/3 && gap <= 2*mean, "level %d: gap %g", k, gap)
	}
}

func TestSynthTimestampsUsageErrors(t *testing.T) {
	tmp := t.TempDir()
	input := filepath.Join(v1Dir, "preferTool_elapse_0.json")
	out := filepath.Join(tmp, "out.jsonl")
	badGaps := writeFile(t, filepath.Join(tmp, "gaps.yaml"), "synth:\n  timestamps:\n    gaps:\n      low: \"3d,3h,3m\"\n")
	badRead := writeFile(t, filepath.Join(tmp, "read.yaml"), "synth:\n  timestamps:\n    read:\n      min: 0\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no seed", []string{"--input", input, "--out", out}, "--seed is required"},
		{"no input", []string{"--seed", "1", "--out", out}, "--input is required"},
		{"no out", []string{"--input", input, "--seed", "1"}, "--out is required"},
		{"bad extension", []string{"--input", input, "--seed", "1", "--out", filepath.Join(tmp, "out.parquet")}, "want a .json (JSON array) or .jsonl"},
		{"bad start", []string{"--input", input, "--seed", "1", "--start", "yesterday", "--out", out}, "--start yesterday: invalid time"},
		{"bad sensitivity", []string{"--input", input, "--seed", "1", "--sensitivity", "extreme", "--out", out}, `--sensitivity extreme: want low, medium or high`},
		{"bad mode", []string{"--input", input, "--seed", "1", "--mode", "merge", "--out", out}, `--mode merge: mode is not replace or fill`},
		{"bad shard", []string{"--input", input, "--seed", "1", "--shard", "3/3", "--out", out}, "--shard"},
		{"bad seed", []string{"--input", input, "--seed", "-1", "--out", out}, "seed"},
		{"output among the inputs", []string{"--input", filepath.Dir(input), "--seed", "1", "--out", input}, "is also an input"},
		{"gaps out of order", []string{"--config", badGaps, "--input", input, "--seed", "1", "--out", out}, "synth.timestamps.gaps.low"},
		{"speed bound", []string{"--config", badRead, "--input", input, "--seed", "1", "--out", out}, "reading speed: lower bound 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if len(tt.args) > 0 && tt.args[0] == "--config" {
				args = append(args, tt.args[:2]...)
				tt.args = tt.args[2:]
			}
			args = append(append(args, "synth", "timestamps"), tt.args...)
			code, _, stderr := runCLI(t, args...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NoFileExists(t, out)
		})
	}
	// A file that is not there is an I/O error, named by its flag.
	for _, flag := range []string{"input", "catalog"} {
		args := []string{"synth", "timestamps", "--input", input, "--seed", "1", "--out", out, "--" + flag, filepath.Join(tmp, "none.yaml")}
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitIO, code, "stderr: %s", stderr)
		assert.Equal(t, "timeaware: --"+flag+" "+filepath.Join(tmp, "none.yaml")+": no such file or directory\n", stderr)
		assert.NoFileExists(t, out)
	}
}

func TestSynthTimestampsDataErrors(t *testing.T) {
	good := `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`
	tests := []struct {
		name  string
		input string
		args  []string
		want  []string
	}{
		{"no start", good + "\n" + `{"id":"b_2","sensitivity":"low","history":[{"role":"user","content":"hi"},{"role":"user","content":"q"}]}` + "\n",
			nil, []string{"in.jsonl: record 2 (line 2, id b_2): history[0].time: missing, and no start time was given"}},
		{"no sensitivity", `{"id":"nowhere_1","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`,
			nil, []string{"record 1 (line 1, id nowhere_1): sensitivity: missing", `catalog does not know "nowhere"`}},
		{"bad field", `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"soon"},{"role":"user","content":"q"}]}`,
			nil, []string{"id a_1): history[0].time: invalid time"}},
		{"fill going backwards", `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"assistant","content":"x","time":"2024-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`,
			[]string{"--mode", "fill"}, []string{"id a_1): history[1].time: 2024-01-01T00:00:00Z is earlier than history[0].time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			input := writeFile(t, filepath.Join(dir, "in.jsonl"), tt.input)
			out := filepath.Join(dir, "out.json")
			args := append([]string{"synth", "timestamps", "--input", input, "--seed", "1", "--out", out}, tt.args...)
			code, _, stderr := runCLI(t, args...)
			assert.Equal(t, exitData, code, "stderr: %s", stderr)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			assert.Equal(t, []string{"in.jsonl"}, dirNames(t, dir), "no output and no temporary file")
		})
	}
}

// TestSynthTimestampsWritesAManifest: like every command that writes data,
// synth timestamps records its output (hash, rows), its inputs, settings
// and summary beside it, and a directory of its outputs reads as
// trajectories without the manifest.
func TestSynthTimestampsWritesAManifest(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stamped", "part-0.jsonl")
	code, stdout, stderr := runCLI(t, "synth", "timestamps", "--input", demoTrajectories, "--seed", "5", "--shard", "0/2", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  manifest:    "+out+".manifest.json\n")
	m, err := output.ReadManifest(out+".manifest.json", true)
	require.NoError(t, err, "the manifest checks out against the file")
	assert.Equal(t, "synth timestamps", m.Command)
	require.Len(t, m.Outputs, 1)
	rows := len(readResultLines(t, out))
	assert.Equal(t, rows, *m.Outputs[0].Rows)
	assert.Equal(t, "jsonl", m.Outputs[0].Format)
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, demoTrajectories, m.Inputs[0].Path)
	assert.Equal(t, sha256File(t, demoTrajectories), m.Inputs[0].SHA256)
	assert.EqualValues(t, 5, m.Config["seed"])
	assert.Equal(t, "0/2", m.Config["shard"])
	assert.Equal(t, "replace", m.Config["synth.timestamps.mode"])

	// The directory, manifest and all, is an input of pairs build.
	code, _, stderr = runCLI(t, "pairs", "build", "--input", filepath.Dir(out), "--annotations", demoVotes,
		"--direct-answers", demoDirect, "--out", filepath.Join(dir, "pairs.jsonl"))
	require.Equal(t, exitOK, code, stderr)
	pm := readManifest(t, filepath.Join(dir, "pairs.jsonl"))
	require.Len(t, pm.Inputs, 3, "the trajectories, the votes and the direct replies; not the manifest")
	assert.Equal(t, out, pm.Inputs[0].Path)
}
