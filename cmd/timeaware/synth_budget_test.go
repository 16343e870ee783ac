package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth/budget"
)

const demoTasks = "../../examples/budget/tasks.jsonl"

// readDataset reads any dataset file back as JSON rows (through the JSONL
// writer, so nulls stay null).
func readDataset(t *testing.T, path string, schema *arrow.Schema) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := dataset.Open(f, path, nil, dataset.ReadOptions{Schema: schema})
	require.NoError(t, err)
	defer r.Close()
	var buf bytes.Buffer
	w, err := dataset.JSONL.NewWriter(&buf, schema, dataset.Options{})
	require.NoError(t, err)
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	var rows []map[string]any
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var row map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		rows = append(rows, row)
	}
	return rows
}

func readJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func get(m any, path ...string) any {
	for _, k := range path {
		m = m.(map[string]any)[k]
	}
	return m
}

var budgetSentence = regexp.MustCompile(`\n\nYour time budget for this task is (\d+\.\d\d) seconds\.$`)

func TestSynthBudget(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rl.parquet")
	teacher := filepath.Join(dir, "teacher.jsonl")
	code, stdout, stderr := runCLI(t, "synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "19",
		"--teacher-requests", teacher, "--teacher-model", "teacher-model-1", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	for _, want := range []string{
		"synth budget: 6 rows written to " + out + " (parquet,",
		"tasks:       6 read; family general, data source timely/general",
		"rows:        5 with a time limit, 1 without",
		"multipliers: 0.75 1, 1 2, 2 1, 3 1",
		"baselines:   drawn 2, task 4",
		"teacher:     6 requests for teacher-model-1 written to " + teacher,
		"manifest:    " + out + ".manifest.json",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.ElementsMatch(t, []string{"rl.parquet", "rl.parquet.manifest.json", "teacher.jsonl"}, dirNames(t, dir))

	rows := readDataset(t, out, budget.Schema)
	require.Len(t, rows, 6)
	requests := readJSONLines(t, teacher)
	require.Len(t, requests, 6)
	limited := 0
	for i, row := range rows {
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, "timely/general", row["data_source"])
		assert.Equal(t, "tool_agent", row["agent_name"])
		assert.Equal(t, true, ei["need_tools_kwargs"])
		assert.Equal(t, float64(i), ei["index"])
		ck := get(ei, "tools_kwargs", "get_duration", "create_kwargs").(map[string]any)
		assert.Equal(t, ei["timer"], map[string]any{"speed_factor": ck["speed_factor"], "jitter": ck["jitter"]})
		prompt := row["prompt"].([]any)
		require.Len(t, prompt, 2)
		user := get(prompt[1], "content").(string)
		if lim, ok := ei["time_limit_s"].(float64); ok {
			limited++
			m := budgetSentence.FindStringSubmatch(user)
			require.NotNil(t, m, user)
			assert.Equal(t, strconv.FormatFloat(lim, 'f', 2, 64), m[1])
			assert.Equal(t, lim, ck["time_limit_s"])
		} else {
			assert.Nil(t, ei["time_limit_s"])
			assert.Equal(t, 0.0, ck["time_limit_s"], "the timer reads 0 as no limit")
			assert.NotRegexp(t, budgetSentence, user)
		}
		req := requests[i]
		assert.Equal(t, ei["request_id"], req["custom_id"])
		assert.Equal(t, "POST", req["method"])
		assert.Equal(t, "/v1/chat/completions", req["url"])
		assert.Equal(t, "teacher-model-1", get(req, "body", "model"))
		assert.Equal(t, prompt, get(req, "body", "messages"), "the teacher sees the RL prompt")
		assert.Equal(t, "get_duration", get(get(req, "body", "tools").([]any)[0], "function", "name"))
	}
	assert.Equal(t, 5, limited)

	m := readManifest(t, out)
	assert.Equal(t, "synth budget", m.Command)
	require.Len(t, m.Outputs, 2)
	assert.Equal(t, sha256File(t, out), m.Outputs[0].SHA256)
	assert.Equal(t, 6, *m.Outputs[0].Rows)
	assert.Equal(t, sha256File(t, teacher), m.Outputs[1].SHA256)
	assert.Equal(t, "jsonl", m.Outputs[1].Format)
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, sha256File(t, demoTasks), m.Inputs[0].SHA256)
	assert.Equal(t, float64(19), m.Config["seed"])
	assert.Equal(t, "0.75,1,2,3", m.Config["synth.budget.multipliers"])
}

// budgetRowsByTask runs a build to JSONL and returns its rows by task id,
// without the index (the task's position in the input).
func budgetRowsByTask(t *testing.T, input string, args ...string) (map[string][]map[string]any, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rl.jsonl")
	code, _, stderr := runCLI(t, append([]string{"synth", "budget", "--input", input, "--family", "general", "--out", out}, args...)...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	byTask := map[string][]map[string]any{}
	for _, row := range readJSONLines(t, out) {
		ei := row["extra_info"].(map[string]any)
		delete(ei, "index")
		id := ei["task_id"].(string)
		byTask[id] = append(byTask[id], row)
	}
	return byTask, out
}

func TestSynthBudgetIsReproducible(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf(`{"id":"q%d","question":"What is %d squared?","answer":%d}`, i, i, i*i))
	}
	input := writeFile(t, filepath.Join(dir, "tasks.jsonl"), strings.Join(lines, "\n")+"\n")

	shas := map[string]string{}
	for _, run := range []struct{ name, seed, format string }{
		{"a", "5", "parquet"}, {"b", "5", "parquet"}, {"c", "6", "parquet"}, {"d", "5", "jsonl"}, {"e", "5", "jsonl"},
	} {
		out := filepath.Join(dir, run.name+"."+run.format)
		teacher := filepath.Join(dir, run.name+"-teacher.jsonl")
		code, _, stderr := runCLI(t, "synth", "budget", "--input", input, "--family", "general", "--seed", run.seed,
			"--teacher-requests", teacher, "--teacher-model", "m", "--out", out)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
		shas[run.name] = sha256File(t, out) + sha256File(t, teacher)
	}
	assert.Equal(t, shas["a"], shas["b"], "same seed: byte-identical outputs")
	assert.Equal(t, shas["d"], shas["e"])
	assert.NotEqual(t, shas["a"], shas["c"], "another seed: other budgets")
	assert.Equal(t, readDataset(t, filepath.Join(dir, "a.parquet"), budget.Schema),
		readDataset(t, filepath.Join(dir, "d.jsonl"), budget.Schema), "Parquet and JSONL hold the same rows")

	whole, _ := budgetRowsByTask(t, input, "--seed", "5")
	shuffled := append([]string(nil), lines...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	reordered, _ := budgetRowsByTask(t, writeFile(t, filepath.Join(dir, "shuffled.jsonl"), strings.Join(shuffled, "\n")), "--seed", "5")
	assert.Equal(t, whole, reordered, "a task's rows do not depend on its position")

	union := map[string][]map[string]any{}
	for i := range 3 {
		part, _ := budgetRowsByTask(t, input, "--seed", "5", "--shard", fmt.Sprintf("%d/3", i))
		assert.NotEmpty(t, part)
		for id, rows := range part {
			require.NotContains(t, union, id)
			union[id] = rows
		}
	}
	assert.Equal(t, whole, union, "the shards together give the whole")
}

func TestSynthBudgetConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, filepath.Join(dir, "timeaware.yaml"), `synth:
  budget:
    multipliers: "2"
    no_limit_fraction: 0
    speed_factor_range: "0.5,0.6"
    budget_sentence: "You may spend {seconds} seconds."
    system_prompt:
      general: "Be quick."
    split: rl
`)
	t.Setenv("TIMEAWARE_SYNTH_BUDGET_JITTER", "0.2")
	rows, _ := budgetRowsByTask(t, demoTasks, "--config", config, "--seed", "1", "--every-multiplier")
	require.Len(t, rows, 6)
	for id, rs := range rows {
		require.Len(t, rs, 1, id)
		row := rs[0]
		ei := row["extra_info"].(map[string]any)
		assert.Equal(t, 2.0, ei["multiplier"])
		assert.Equal(t, "rl", ei["split"])
		a := get(ei, "timer", "speed_factor").(float64)
		assert.True(t, a >= 0.5 && a <= 0.6, a)
		assert.Equal(t, 0.2, get(ei, "timer", "jitter"))
		prompt := row["prompt"].([]any)
		assert.Equal(t, "Be quick.", get(prompt[0], "content"))
		assert.Regexp(t, `\n\nYou may spend \d+\.\d\d seconds\.$`, get(prompt[1], "content"))
	}
}

func TestSynthBudgetGameFamily(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, filepath.Join(dir, "games.jsonl"),
		`{"id":"zork","question":"You stand west of a white house.","steps":20,"step_latency_s":2.5}`+"\n"+
			`{"id":"advent","question":"You stand at the end of a road."}`+"\n")
	t.Setenv("TIMEAWARE_SYNTH_BUDGET_MULTIPLIERS", "1")
	t.Setenv("TIMEAWARE_SYNTH_BUDGET_NO_LIMIT_FRACTION", "0")
	rows, _ := budgetRowsByTask(t, input, "--family", "game", "--seed", "1")
	for id, want := range map[string]float64{"zork": 50, "advent": 60} {
		row := rows[id][0]
		assert.Equal(t, "timely/game", row["data_source"])
		assert.Equal(t, "game", row["ability"])
		assert.Nil(t, get(row, "reward_model", "ground_truth"))
		assert.Equal(t, want, get(row, "extra_info", "time_limit_s"))
		assert.Equal(t, "steps", get(row, "extra_info", "baseline_source"))
		assert.Contains(t, get(row["prompt"].([]any)[0], "content"), "text adventure")
	}
}

func TestSynthBudgetUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rl.parquet")
	base := []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "1", "--out", out}
	with := func(args ...string) []string { return append(append([]string(nil), base...), args...) }
	without := func(flag string) []string {
		var args []string
		for i := 0; i < len(base); i++ {
			if base[i] == flag {
				i++
				continue
			}
			args = append(args, base[i])
		}
		return args
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no input", without("--input"), nil, "--input is required"},
		{"no family", without("--family"), nil, "--family is required"},
		{"no seed", without("--seed"), nil, "--seed is required"},
		{"no out", without("--out"), nil, "--out is required"},
		{"bad family", append(without("--family"), "--family", "chess"), nil, `--family chess: family is not general, game or ml`},
		{"bad seed", append(without("--seed"), "--seed", "-3"), nil, "--seed"},
		{"bad format", with("--format", "xml"), nil, "--format xml: want parquet, arrow or jsonl"},
		{"bad shard", with("--shard", "3/2"), nil, "--shard"},
		{"teacher without model", with("--teacher-requests", filepath.Join(dir, "t.jsonl")), nil, "--teacher-requests needs --teacher-model"},
		{"teacher file is out", with("--teacher-requests", out, "--teacher-model", "m"), nil, "name the same file"},
		{"multipliers not numbers", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_MULTIPLIERS": "1,x"}, `TIMEAWARE_SYNTH_BUDGET_MULTIPLIERS=1,x: entry 2 "x" is not a number`},
		{"jitter out of range", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_JITTER": "2"}, "TIMEAWARE_SYNTH_BUDGET_JITTER=2: 2 is not in [0, 1]"},
		{"jitter not a number", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_JITTER": "lots"}, "TIMEAWARE_SYNTH_BUDGET_JITTER=lots: want a finite number"},
		{"range of three", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_SPEED_FACTOR_RANGE": "1,2,3"}, "TIMEAWARE_SYNTH_BUDGET_SPEED_FACTOR_RANGE=1,2,3: want"},
		{"sentence without seconds", base, map[string]string{"TIMEAWARE_SYNTH_BUDGET_BUDGET_SENTENCE": "Hurry."}, "TIMEAWARE_SYNTH_BUDGET_BUDGET_SENTENCE=Hurry.: "},
		{"bad teacher temperature", with("--teacher-requests", filepath.Join(dir, "t.jsonl"), "--teacher-model", "m"), map[string]string{"TIMEAWARE_SYNTH_BUDGET_TEACHER_TEMPERATURE": "5"}, "TIMEAWARE_SYNTH_BUDGET_TEACHER_TEMPERATURE=5: 5 is not in [0, 2]"},
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
	code, _, stderr := runCLI(t, append(without("--input"), "--input", filepath.Join(dir, "nope.jsonl"))...)
	assert.Equal(t, exitIO, code, "a missing input is an I/O error: %s", stderr)
	assert.Contains(t, stderr, "--input "+filepath.Join(dir, "nope.jsonl")+": no such file")
}

func TestSynthBudgetDataErrorsLeaveNoFiles(t *testing.T) {
	tests := []struct {
		name, family, input, want string
	}{
		{"unknown field", "general", `{"id":"a","question":"Q","answer":1}` + "\n" + `{"id":"b","question":"Q","answer":2,"baseline":3}`,
			"tasks.jsonl: line 2 (id b): baseline: unknown field"},
		{"no answer", "general", `{"id":"a","question":"Q"}`, "tasks.jsonl: line 1 (id a): answer: missing"},
		{"steps in a general set", "general", "\n\n" + `{"id":"a","question":"Q","answer":1,"steps":4}`, "tasks.jsonl: line 3 (id a): steps: only a game task"},
		{"not JSON", "ml", `{"id":"a","question":"Q"}` + "\n" + `{"id":`, "tasks.jsonl: line 2: invalid JSON at byte 6: the text ends inside a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			input := writeFile(t, filepath.Join(dir, "in", "tasks.jsonl"), tt.input)
			out := filepath.Join(dir, "rl.parquet")
			code, stdout, stderr := runCLI(t, "synth", "budget", "--input", input, "--family", tt.family, "--seed", "1",
				"--teacher-requests", filepath.Join(dir, "teacher.jsonl"), "--teacher-model", "m", "--out", out)
			assert.Equal(t, exitData, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tt.want)
			assert.Empty(t, stdout)
			assert.Equal(t, []string{"in"}, dirNames(t, dir), "a failed run leaves nothing behind")
		})
	}
}

func TestSynthSFT(t *testing.T) {
	dir := t.TempDir()
	msgs := func(final string) string {
		return `[{"role":"system","content":"Work against the clock."},` +
			`{"role":"user","content":"What is 6 times 7?\n\nYour time budget for this task is 10.00 seconds."},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_duration","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"2.10 seconds."},` +
			`{"role":"assistant","content":` + strconv.Quote(final) + `}]`
	}
	trace := func(id, final string, elapsed float64) string {
		return fmt.Sprintf(`{"custom_id":%q,"messages":%s,"ground_truth":"42","time_limit_s":10,"elapsed_s":%g}`, id, msgs(final), elapsed)
	}
	traces := writeFile(t, filepath.Join(dir, "traces.jsonl"), strings.Join([]string{
		trace("a#0", "<answer>42</answer>", 6),
		trace("b#0", "<answer>42</answer>", 12),
		trace("c#0", "<answer>41</answer>", 6),
		trace("d#0", "It is 42.", 6),
		trace("e#0", `<answer>\boxed{42}</answer>`, 9.5),
	}, "\n")+"\n")
	for _, format := range []string{"parquet", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sft."+format)
			code, stdout, stderr := runCLI(t, "synth", "sft", "--traces", traces, "--out", out)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, "synth sft: 2 rows written to "+out)
			assert.Contains(t, stdout, "traces:      5 read, 2 kept, 3 dropped")
			assert.Contains(t, stdout, "dropped:     bad_format 1, bad_tool_call 0, late 1, unfinished 0, wrong_answer 1")
			rows := readDataset(t, out, budget.SFTSchema)
			require.Len(t, rows, 2)
			assert.Equal(t, []any{"a#0", "e#0"}, []any{rows[0]["id"], rows[1]["id"]})
			msgs := rows[0]["messages"].([]any)
			require.Len(t, msgs, 5)
			assert.Equal(t, "get_duration", get(get(msgs[2], "tool_calls").([]any)[0], "function", "name"))
			assert.Equal(t, "{}", get(get(msgs[2], "tool_calls").([]any)[0], "function", "arguments"))
			assert.Equal(t, "get_duration", get(rows[0]["tools"].([]any)[0], "function", "name"))
			m := readManifest(t, out)
			assert.Equal(t, "synth sft", m.Command)
			assert.Equal(t, sha256File(t, out), m.Outputs[0].SHA256)
			assert.Equal(t, 2, *m.Outputs[0].Rows)
		})
	}

	t.Run("data error", func(t *testing.T) {
		dir := t.TempDir()
		bad := writeFile(t, filepath.Join(dir, "in", "traces.jsonl"), trace("a#0", "<answer>42</answer>", 6)+"\n"+`{"custom_id":"b#0","messages":[],"ground_truth":1,"elapsed_s":1}`+"\n")
		code, _, stderr := runCLI(t, "synth", "sft", "--traces", bad, "--out", filepath.Join(dir, "sft.parquet"))
		assert.Equal(t, exitData, code)
		assert.Contains(t, stderr, "traces.jsonl: line 2 (id b#0): messages: empty")
		assert.Equal(t, []string{"in"}, dirNames(t, dir))
	})

	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no traces", []string{"--out", filepath.Join(dir, "x.parquet")}, nil, "--traces is required"},
		{"no out", []string{"--traces", traces}, nil, "--out is required"},
		{"bad format", []string{"--traces", traces, "--out", filepath.Join(dir, "x.parquet"), "--format", "csv"}, nil, "--format"},
		{"bad reward config", []string{"--traces", traces, "--out", filepath.Join(dir, "x.parquet")}, map[string]string{"TIMEAWARE_REWARDS_TIMELY_UTILIZATION": "cubic"}, "TIMEAWARE_REWARDS_TIMELY_UTILIZATION=cubic: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, append([]string{"synth", "sft"}, tt.args...)...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NoFileExists(t, filepath.Join(dir, "x.parquet"))
		})
	}
}

func TestSynthBudgetSpeedRangeSummary(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf(`{"id":"q%d","question":"Q%d","answer":%d}`, i, i, i))
	}
	input := writeFile(t, filepath.Join(dir, "tasks.jsonl"), strings.Join(lines, "\n"))
	t.Setenv("TIMEAWARE_SYNTH_BUDGET_SPEED_FACTOR_RANGE", "0.5,2")
	code, stdout, stderr := runCLI(t, "synth", "budget", "--input", input, "--family", "general", "--seed", "2", "--out", filepath.Join(dir, "rl.jsonl"))
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Regexp(t, `speed:       \d+ values from 0\.5\d to [12]\.\d\d \(counts in the manifest\)`, stdout)
	m := readManifest(t, filepath.Join(dir, "rl.jsonl"))
	assert.Equal(t, "0.5,2", m.Config["synth.budget.speed_factor_range"])
}
