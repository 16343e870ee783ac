package budget

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// writeInput writes lines to dir/name and returns its path.
func writeInput(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return p
}

// fileSHA is the hex SHA-256 of a file, read whole.
func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// jsonLines decodes a JSONL file into one map per line.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func jsonlOutput(path string, testFraction float64) synth.Output {
	return synth.Output{Path: path, Format: dataset.JSONL, TestFraction: testFraction,
		Manifest: output.Manifest{Tool: "timeaware", Version: "test", Command: "synth budget", Config: map[string]any{"seed": 7}}}
}

func TestWriteCommitsRowsTeacherRequestsAndManifest(t *testing.T) {
	dir := t.TempDir()
	tasks := writeInput(t, dir, "tasks.jsonl", taskLines(12))
	out, teacher := filepath.Join(dir, "rl.jsonl"), filepath.Join(dir, "teacher.jsonl")
	opt := DefaultOptions(FamilyGeneral)
	opt.Seed, opt.EveryMultiplier = 7, true
	progress := 0
	o := jsonlOutput(out, 0)
	o.Progress = func() { progress++ }
	w, err := Write(context.Background(), opt, Files{Tasks: output.OpenInput(tasks), TeacherPath: teacher,
		Teacher: TeacherOptions{Model: "teacher-1"}}, o)
	require.NoError(t, err)

	rows := jsonLines(t, out)
	require.GreaterOrEqual(t, len(rows), 12*len(opt.Multipliers), "every multiplier for every task")
	assert.Equal(t, len(rows), w.Summary.Rows)
	assert.Equal(t, len(rows), progress, "one call per row")
	requests := jsonLines(t, teacher)
	require.Len(t, requests, len(rows), "a request per row without a split")
	for i, req := range requests {
		ei := rows[i]["extra_info"].(map[string]any)
		assert.Equal(t, ei["request_id"], req["custom_id"])
		assert.Equal(t, "teacher-1", req["body"].(map[string]any)["model"])
	}
	assert.Nil(t, w.Split)
	require.NotNil(t, w.Teacher)
	assert.Equal(t, len(rows), *w.Teacher.Rows)
	assert.Equal(t, teacher, w.Teacher.Path)

	assert.Equal(t, output.ManifestPath(out), w.ManifestPath)
	m, err := output.ReadManifest(w.ManifestPath, true)
	require.NoError(t, err, "the manifest describes the files in place")
	require.Len(t, m.Outputs, 2)
	assert.Equal(t, []string{RoleRows, RoleTeacherRequests}, []string{m.Outputs[0].Role, m.Outputs[1].Role}, "the rows, then the requests")
	assert.Equal(t, fileSHA(t, out), m.Outputs[0].SHA256)
	assert.Equal(t, fileSHA(t, teacher), m.Outputs[1].SHA256)
	assert.Equal(t, "jsonl", m.Outputs[1].Format)
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, output.Entry{Path: tasks, Role: RoleTasks, SHA256: fileSHA(t, tasks), Bytes: int64(len(strings.Join(taskLines(12), "\n")) + 1)}, m.Inputs[0])
	assert.Equal(t, "synth budget", m.Command)
	assert.Equal(t, 7.0, m.Config["seed"])
	sum := m.Summary.(map[string]any)
	assert.Equal(t, float64(len(rows)), sum["rows"])
	assert.NotContains(t, sum, "split")
}

func TestWriteSplitsTasksWholeAndRequestsTheTrainSideOnly(t *testing.T) {
	dir := t.TempDir()
	tasks := writeInput(t, dir, "tasks.jsonl", taskLines(10))
	out, teacher := filepath.Join(dir, "rl.jsonl"), filepath.Join(dir, "teacher.jsonl")
	opt := DefaultOptions(FamilyGeneral)
	opt.Seed, opt.EveryMultiplier = 3, true
	w, err := Write(context.Background(), opt, Files{Tasks: output.OpenInput(tasks), TeacherPath: teacher,
		Teacher: TeacherOptions{Model: "m"}}, jsonlOutput(out, 0.3))
	require.NoError(t, err)
	require.Len(t, w.Outputs, 2)
	side := map[string]string{}
	for _, s := range []string{output.Train, output.Test} {
		path := output.SidePath(out, s)
		assert.Equal(t, path, w.Outputs[map[string]int{output.Train: 0, output.Test: 1}[s]].Path)
		for _, row := range jsonLines(t, path) {
			ei := row["extra_info"].(map[string]any)
			id := ei["task_id"].(string)
			assert.Equal(t, s, ei["split"], "a row's split is its side")
			if prev, ok := side[id]; ok {
				assert.Equal(t, prev, s, "task %s straddles the split", id)
			}
			side[id] = s
		}
	}
	test := 0
	for _, s := range side {
		if s == output.Test {
			test++
		}
	}
	assert.Len(t, side, 10)
	assert.Equal(t, 3, test, "round(0.3 × 10) tasks on the test side")
	for _, req := range jsonLines(t, teacher) {
		id, _, _ := strings.Cut(req["custom_id"].(string), "#")
		assert.Equal(t, output.Train, side[id], "no request for a test task")
	}
	assert.Equal(t, w.Split.Rows[output.Train], *w.Teacher.Rows)
	m, err := output.ReadManifest(w.ManifestPath, true)
	require.NoError(t, err)
	assert.Equal(t, []string{output.Train, output.Test, RoleTeacherRequests}, []string{m.Outputs[0].Role, m.Outputs[1].Role, m.Outputs[2].Role})
	split := m.Summary.(map[string]any)["split"].(map[string]any)
	assert.Equal(t, "task", split["unit"])
	assert.Equal(t, 3.0, split["units"].(map[string]any)[output.Test])
}

func TestWriteFailsWithoutWritingAnything(t *testing.T) {
	good := taskLines(4)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		lines  []string
		opt    func(*Options)
		files  func(dir string, f *Files)
		out    string
		ctx    context.Context
		frac   float64
		assert func(t *testing.T, dir string, err error)
	}{
		{name: "bad option", lines: good, opt: func(o *Options) { o.Jitter = 2 }, assert: func(t *testing.T, _ string, err error) {
			var oe *synth.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "jitter", oe.Key)
		}},
		{name: "bad teacher option", lines: good, files: func(dir string, f *Files) {
			f.TeacherPath, f.Teacher = filepath.Join(dir, "teacher.jsonl"), TeacherOptions{Model: "m", MaxCompletionTokens: -1}
		}, assert: func(t *testing.T, _ string, err error) {
			var oe *synth.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "teacher.max_tokens", oe.Key)
		}},
		{name: "bad task line", lines: append(good, `{"id":"x","question":"Q"}`), assert: func(t *testing.T, dir string, err error) {
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, LineError{Name: filepath.Join(dir, "tasks.jsonl"), Line: 5, ID: "x", Field: "answer", Err: le.Err}, *le)
		}},
		{name: "a split of one task", lines: good[:1], frac: 0.5, assert: func(t *testing.T, dir string, err error) {
			assert.EqualError(t, err, "--test-fraction: "+filepath.Join(dir, "tasks.jsonl")+" has 1 task(s); tasks go whole to one side, so a split needs two or more")
		}},
		{name: "a bad line read for the split", lines: append(good, `{`), frac: 0.5, assert: func(t *testing.T, _ string, err error) {
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, 5, le.Line)
		}},
		{name: "rows cannot be created", lines: good, out: "tasks.jsonl/rl.jsonl", assert: func(t *testing.T, dir string, err error) {
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, FileError{Role: RoleRows, Path: filepath.Join(dir, "tasks.jsonl", "rl.jsonl"), Err: fe.Err}, *fe)
		}},
		{name: "requests cannot be created", lines: good, files: func(dir string, f *Files) {
			f.TeacherPath, f.Teacher = filepath.Join(dir, "tasks.jsonl", "t.jsonl"), TeacherOptions{Model: "m"}
		}, assert: func(t *testing.T, dir string, err error) {
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, RoleTeacherRequests, fe.Role)
			assert.Equal(t, filepath.Join(dir, "tasks.jsonl", "t.jsonl"), fe.Path)
		}},
		{name: "cancelled", lines: good, ctx: cancelled, assert: func(t *testing.T, _ string, err error) {
			assert.ErrorIs(t, err, context.Canceled)
			var fe *FileError
			assert.False(t, errors.As(err, &fe), "the build's interruption is not a file's error")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tasks := writeInput(t, dir, "tasks.jsonl", tt.lines)
			opt := DefaultOptions(FamilyGeneral)
			if tt.opt != nil {
				tt.opt(&opt)
			}
			f := Files{Tasks: output.OpenInput(tasks)}
			if tt.files != nil {
				tt.files(dir, &f)
			}
			out := filepath.Join(dir, "rl.jsonl")
			if tt.out != "" {
				out = filepath.Join(dir, tt.out)
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx
			}
			w, err := Write(ctx, opt, f, jsonlOutput(out, tt.frac))
			require.Error(t, err)
			assert.Nil(t, w)
			tt.assert(t, dir, err)
			assert.Equal(t, []string{"tasks.jsonl"}, entries(t, dir), "nothing written")
		})
	}
}

func TestWriteSFT(t *testing.T) {
	dir := t.TempDir()
	good := answerMsg("<answer>42</answer>")
	timed := `,"time_limit_s":10,"elapsed_s":5`
	traces := writeInput(t, dir, "traces.jsonl", []string{
		traceLine("kept", []string{sysMsg, userMsg, callMsg, toolMsg, good}, timed),
		traceLine("late", []string{sysMsg, userMsg, good}, `,"time_limit_s":10,"elapsed_s":11`),
	})
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	opt := SFTOptions{Scorer: scorer, ToolDescription: "How long it has been."}
	out := filepath.Join(dir, "sft.jsonl")
	o := synth.Output{Path: out, Format: dataset.JSONL, Manifest: output.Manifest{Tool: "timeaware", Command: "synth sft"}}
	w, err := WriteSFT(context.Background(), opt, output.OpenInput(traces), o)
	require.NoError(t, err)
	assert.Equal(t, &SFTSummary{Traces: 2, Kept: 1, Dropped: map[string]int{DropUnfinished: 0, DropBadToolCall: 0,
		DropBadFormat: 0, DropLate: 1, DropWrongAnswer: 0}}, w.Summary)
	rows := jsonLines(t, out)
	require.Len(t, rows, 1)
	assert.Equal(t, "kept", rows[0]["id"])
	tool := rows[0]["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, "How long it has been.", tool["description"])
	m, err := output.ReadManifest(w.ManifestPath, true)
	require.NoError(t, err)
	require.Len(t, m.Outputs, 1)
	assert.Equal(t, RoleSFTRows, m.Outputs[0].Role)
	require.Len(t, m.Inputs, 1, "the trace file, filled in once read")
	assert.Equal(t, RoleTraces, m.Inputs[0].Role)
	assert.Equal(t, fileSHA(t, traces), m.Inputs[0].SHA256)
	assert.Equal(t, 2.0, m.Summary.(map[string]any)["traces"])

	t.Run("errors", func(t *testing.T) {
		dir := t.TempDir()
		bad := writeInput(t, dir, "traces.jsonl", []string{traceLine("a", []string{sysMsg, userMsg, good}, timed), `{"custom_id":"b"}`})
		_, err := WriteSFT(context.Background(), opt, output.OpenInput(bad), synth.Output{Path: filepath.Join(dir, "sft.jsonl"), Format: dataset.JSONL})
		var le *LineError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, 2, le.Line)
		var fe *FileError
		assert.False(t, errors.As(err, &fe), "a bad line is the input's, not the output's")

		_, err = WriteSFT(context.Background(), opt, output.OpenInput(traces), synth.Output{Path: filepath.Join(bad, "sft.jsonl"), Format: dataset.JSONL})
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, RoleSFTRows, fe.Role)
		assert.Equal(t, filepath.Join(bad, "sft.jsonl"), fe.Path)
		assert.Equal(t, []string{"traces.jsonl"}, entries(t, dir), "nothing written")
	})
}
