package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedModel is an OpenAI-compatible chat-completions server whose
// replies a test scripts from the request's messages and tools.
type scriptedModel struct {
	*httptest.Server
	mu       sync.Mutex
	answered map[[32]byte]int // request body hash → times answered
	requests int
	// hold, when set, is consulted before answering: a request it returns
	// true for is never answered (until the client gives up).
	hold func(n int) bool
}

type scriptedRequest struct {
	Messages []struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

func (r scriptedRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

// newScriptedModel answers with text(req), or with a call of tool when
// text returns "", its usage.completion_tokens the reply's words.
func newScriptedModel(t *testing.T, text func(scriptedRequest) string, tool string) *scriptedModel {
	t.Helper()
	m := &scriptedModel{answered: map[[32]byte]int{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		n := m.requests
		m.requests++
		hold := m.hold
		m.mu.Unlock()
		if hold != nil && hold(n) {
			<-r.Context().Done()
			return
		}
		var req scriptedRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg := map[string]any{"role": "assistant", "content": text(req)}
		if msg["content"] == "" {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": tool, "arguments": "{}"}}}
		}
		// A word of the reply counts as a token.
		content, _ := msg["content"].(string)
		words := len(strings.Fields(content))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}},
			"usage": map[string]any{"completion_tokens": words}})
		m.mu.Lock()
		m.answered[sha256.Sum256(raw)]++
		m.mu.Unlock()
	}))
	t.Cleanup(m.Server.Close)
	return m
}

func (m *scriptedModel) counts() (requests, distinct, twice int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.answered {
		distinct++
		if n > 1 {
			twice++
		}
	}
	return m.requests, distinct, twice
}

type evalJSONReport struct {
	DataSources map[string]struct {
		N       int `json:"n"`
		Rows    int `json:"rows"`
		Failed  int `json:"failed"`
		Metrics map[string]struct {
			Mean float64    `json:"mean"`
			CI95 [2]float64 `json:"ci95"`
		} `json:"metrics"`
		Groups map[string]json.RawMessage `json:"groups"`
	} `json:"data_sources"`
	Requests struct {
		Requests  int `json:"requests"`
		CacheHits int `json:"cache_hits"`
	} `json:"requests"`
	Notes []string `json:"notes"`
}

func readResultLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestEvalRunAlwaysCallingModelOnThePaperTestSplit: a model that calls a
// tool on every turn, on the TicToc paper's test split of v1, agrees with
// every prefer-tool sample and no prefer-direct one: NAR 0.5, TPR 1, TNR 0.
func TestEvalRunAlwaysCallingModelOnThePaperTestSplit(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	out := filepath.Join(dir, "pairs.parquet")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "paper", "--out", out)
	require.Equal(t, 0, code, stderr)
	test := filepath.Join(dir, "pairs-test.parquet")

	model := newScriptedModel(t, func(req scriptedRequest) string {
		if len(req.Tools) == 0 {
			t.Error("a decision is asked with the conversation's tools")
		}
		return ""
	}, "lookup")
	results := filepath.Join(dir, "results.jsonl")
	code, stdout, stderr := runCLI(t, "eval", "run", "--endpoint", model.URL+"/v1", "--model", "m", "--data", test, "--out", results, "--json", "--bootstrap", "200")
	require.Equal(t, 0, code, stderr)
	var rep evalJSONReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	sr := rep.DataSources["tictoc/decision"]
	lines := readResultLines(t, results)
	assert.Equal(t, len(lines), sr.N)
	assert.Positive(t, sr.N)
	assert.Equal(t, 0.5, sr.Metrics["nar"].Mean)
	assert.Equal(t, [2]float64{0.5, 0.5}, sr.Metrics["nar"].CI95)
	assert.Equal(t, 1.0, sr.Metrics["tpr"].Mean)
	assert.Equal(t, 0.0, sr.Metrics["tnr"].Mean)
	assert.Equal(t, 1.0, sr.Metrics["attempt"].Mean)
	for _, g := range []string{"sensitivity=high", "sensitivity=medium", "sensitivity=low", "elapse=0", "elapse=1", "elapse=2"} {
		assert.Contains(t, sr.Groups, g)
	}
	for i, l := range lines {
		assert.EqualValues(t, i, l["index"], "input order")
	}
	requests, distinct, _ := model.counts()
	assert.Equal(t, sr.N, requests)
	assert.Equal(t, sr.N, distinct)
}

// puzzleRows writes n Time Puzzles rows with synth puzzles and returns the
// file and each prompt's gold answer.
func puzzleRows(t *testing.T, dir string, n int) (string, map[string]string) {
	t.Helper()
	path := filepath.Join(dir, "puzzles.jsonl")
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", fmt.Sprint(n), "--seed", "4", "--out", path)
	require.Equal(t, 0, code, stderr)
	gold := map[string]string{}
	for _, l := range readResultLines(t, path) {
		prompt := l["prompt"].([]any)
		q := prompt[len(prompt)-1].(map[string]any)["content"].(string)
		gold[q] = l["reward_model"].(map[string]any)["ground_truth"].(string)
	}
	require.Len(t, gold, n)
	return path, gold
}

// TestEvalRunKilledMidwayResumesWithoutAskingTwice: a run killed with
// SIGKILL while requests are in flight, then run again, sends no request
// that was answered before; the second run completes every row.
func TestEvalRunKilledMidwayResumesWithoutAskingTwice(t *testing.T) {
	bin := serverBinary(t)
	dir := t.TempDir()
	rows, _ := puzzleRows(t, dir, 40)
	model := newScriptedModel(t, func(scriptedRequest) string { return "MY ANSWER: 2000-01-01" }, "")
	model.hold = func(n int) bool { return n >= 15 }
	results := filepath.Join(dir, "results.jsonl")
	args := []string{"eval", "run", "--endpoint", model.URL, "--model", "m", "--data", rows, "--out", results, "--concurrency", "4"}

	cmd := exec.Command(bin, args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // however the test ends
	require.Eventually(t, func() bool { r, _, _ := model.counts(); return r >= 15+4 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.NoFileExists(t, results, "a killed run leaves no results file")
	_, answered, _ := model.counts()
	assert.Equal(t, 15, answered)

	model.mu.Lock()
	model.hold = nil
	model.mu.Unlock()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "40 results of 40 rows")
	assert.Contains(t, string(out), "15 from the cache")
	_, distinct, twice := model.counts()
	assert.Equal(t, 40, distinct)
	assert.Zero(t, twice, "no request is answered twice")
	assert.Len(t, readResultLines(t, results), 40)
}

// TestEvalRunInterruptedWritesWhatIsDone: Ctrl-C writes the finished
// results, says how to resume, and exits 1.
func TestEvalRunInterruptedWritesWhatIsDone(t *testing.T) {
	bin := serverBinary(t)
	dir := t.TempDir()
	rows, _ := puzzleRows(t, dir, 12)
	model := newScriptedModel(t, func(scriptedRequest) string { return "MY ANSWER: 2000-01-01" }, "")
	model.hold = func(n int) bool { return n >= 5 }
	results := filepath.Join(dir, "results.jsonl")
	cmd := exec.Command(bin, "eval", "run", "--endpoint", model.URL, "--model", "m", "--data", rows, "--out", results, "--concurrency", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // however the test ends
	// One request at a time: the five answered are rows 0 to 4, the sixth
	// is held. (With two in flight, row 5's request may arrive before row
	// 4's and be answered in its place.)
	require.Eventually(t, func() bool { r, _, _ := model.counts(); return r >= 6 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stderr.String(), "interrupted with 5 of 12 results done")
	assert.Contains(t, stderr.String(), "run the same command again to resume")
	lines := readResultLines(t, results)
	require.Len(t, lines, 5)
	for i, l := range lines {
		assert.EqualValues(t, i, l["index"])
	}
}

// TestEvalCompareBeforeAndAfter: two runs on the same puzzles, one model
// always wrong, one right on every row: EM goes from 0 to 1.
func TestEvalCompareBeforeAndAfter(t *testing.T) {
	dir := t.TempDir()
	rows, gold := puzzleRows(t, dir, 20)
	wrong := newScriptedModel(t, func(scriptedRequest) string { return "MY ANSWER: 1066-10-14" }, "")
	right := newScriptedModel(t, func(r scriptedRequest) string { return "Let me see.\nMY ANSWER: " + gold[r.lastUser()] }, "")
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, run := range []struct{ url, out string }{{wrong.URL, a}, {right.URL, b}} {
		code, _, stderr := runCLI(t, "eval", "run", "--endpoint", run.url, "--model", "m", "--data", rows, "--out", run.out, "--no-cache")
		require.Equal(t, 0, code, stderr)
	}
	code, stdout, stderr := runCLI(t, "eval", "compare", a, b, "--json")
	require.Equal(t, 0, code, stderr)
	var cmp struct {
		DataSources map[string]struct {
			Rows    int `json:"rows"`
			Metrics map[string]struct {
				A, B, Diff float64
				CI95       [2]float64 `json:"ci95"`
			} `json:"metrics"`
		} `json:"data_sources"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &cmp))
	sc := cmp.DataSources["timepuzzles"]
	assert.Equal(t, 20, sc.Rows)
	em := sc.Metrics["em"]
	assert.Equal(t, 0.0, em.A)
	assert.Equal(t, 1.0, em.B)
	assert.Equal(t, 1.0, em.Diff)
	assert.Equal(t, [2]float64{1, 1}, em.CI95)

	code, stdout, _ = runCLI(t, "eval", "compare", a, b)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "timepuzzles: 20 rows in both")
	assert.Regexp(t, `em\s+0\.0000\s+1\.0000\s+1\.0000\s+\[1\.0000, 1\.0000\]`, stdout)
}

func TestEvalRunErrors(t *testing.T) {
	dir := t.TempDir()
	rows, _ := puzzleRows(t, dir, 3)
	bad := writeFile(t, filepath.Join(dir, "bad.jsonl"), `{"data_source": "timepuzzles", "prompt": [], "reward_model": {}}`+"\n")
	badTruth := writeFile(t, filepath.Join(dir, "truth.jsonl"), `{"data_source": "timepuzzles", "prompt": [{"role": "user", "content": "q"}], "reward_model": {"ground_truth": "2024-02-30"}}`+"\n")
	sides := filepath.Join(dir, "sides")
	require.NoError(t, os.MkdirAll(sides, 0o755))
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", "20", "--seed", "1", "--test-fraction", "0.3", "--out", filepath.Join(sides, "p.jsonl"))
	require.Equal(t, 0, code, stderr)
	down := newScriptedModel(t, func(scriptedRequest) string { return "x" }, "")
	down.Close()
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such model", http.StatusNotFound) }))
	defer notFound.Close()
	base := func(extra ...string) []string {
		return append([]string{"eval", "run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--data", rows, "--out", filepath.Join(dir, "r.jsonl")}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no endpoint", []string{"eval", "run", "--model", "m", "--data", rows, "--out", "r.jsonl"}, 2, "--endpoint is required"},
		{"no model", []string{"eval", "run", "--endpoint", "http://h/v1", "--data", rows, "--out", "r.jsonl"}, 2, "--model is required"},
		{"no data", []string{"eval", "run", "--endpoint", "http://h/v1", "--model", "m", "--out", "r.jsonl"}, 2, "--data is required"},
		{"no out", []string{"eval", "run", "--endpoint", "http://h/v1", "--model", "m", "--data", rows}, 2, "--out is required"},
		{"bad endpoint", append(base(), "--endpoint", "ftp://h"), 2, `--endpoint ftp://h: url: scheme must be http or https`},
		{"zero samples", base("--samples", "0"), 2, "--samples 0: want at least 1"},
		{"negative temperature", base("--temperature", "-1"), 2, "--temperature -1: want a number from 0 to 100"},
		{"missing data", base("--data", filepath.Join(dir, "nope.parquet")), 3, "--data " + filepath.Join(dir, "nope.parquet") + ": no such file or directory"},
		{"bad row", base("--data", bad), 1, "--data " + bad + ": row 1: prompt: empty"},
		{"failing endpoint", append(base(), "--endpoint", notFound.URL, "--no-cache", "--concurrency", "1"), 1, "stopped after 1 failed results (--max-errors 0), 1 of 3 results done"},
		{"bad endpoint url", append(base(), "--endpoint", "127.0.0.1:8000/v1"), 2, "--endpoint 127.0.0.1:8000/v1: url"},
		{"infinite temperature", base("--temperature", "inf"), 2, "--temperature +Inf: want a number from 0 to 100"},
		{"bad tool choice", base("--tool-choice", "maybe"), 2, `--tool-choice maybe: want auto, none or omit`},
		{"out is a directory", append(base(), "--out", dir), 2, "--out " + dir + ": is a directory"},
		{"bad ground truth", base("--data", badTruth), 1, "--data " + badTruth + ": row 1: ground_truth"},
		{"both sides in a directory", base("--data", sides), 2, "holds both sides of a split"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	// With --max-errors the failed results are written and reported.
	out := filepath.Join(dir, "failed.jsonl")
	code, _, stderr = runCLI(t, "eval", "run", "--endpoint", notFound.URL, "--model", "m", "--data", rows, "--out", out, "--no-cache", "--max-errors", "3")
	require.Equal(t, 0, code, stderr)
	lines := readResultLines(t, out)
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0]["error"], "HTTP 404")

	code, _, stderr = runCLI(t, "eval", "compare", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "compare takes two RESULTS.jsonl files, got 1 arguments")
	code, _, stderr = runCLI(t, "eval", "compare", out, rows)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "timeaware: "+rows+": line 1: a result needs data_source and request_id")

	// One side of a split in a directory is evaluated; the results and the
	// cache beside the data are not read as data.
	side := filepath.Join(dir, "side")
	require.NoError(t, os.MkdirAll(side, 0o755))
	require.NoError(t, os.Rename(filepath.Join(sides, "p-test.jsonl"), filepath.Join(side, "p-test.jsonl")))
	model := newScriptedModel(t, func(scriptedRequest) string { return "MY ANSWER: 2000-01-01" }, "")
	for range 2 {
		code, _, stderr = runCLI(t, "eval", "run", "--endpoint", model.URL, "--model", "m", "--data", side, "--out", filepath.Join(side, "results.jsonl"))
		require.Equal(t, 0, code, stderr)
	}
	assert.Contains(t, stderr, "from the cache")
}

// TestEvalRunTokenBudgets: thinkprune rows at budgets 4 and 8 tokens, a
// model whose replies are 6 words (a word a token): over at 4 (overshoot
// 2), within at 8. The text report has the curve's table, the JSON report
// its points, and --plot a PNG of it.
func TestEvalRunTokenBudgets(t *testing.T) {
	dir := t.TempDir()
	var rows strings.Builder
	for i, budget := range []int{4, 4, 8, 8, 8} {
		fmt.Fprintf(&rows, `{"data_source": "length/thinkprune", "prompt": [{"role": "user", "content": "q%d"}], "reward_model": {"ground_truth": "42"}, "extra_info": {"id": "r%d", "token_budget": %d}}`+"\n", i, i, budget)
	}
	data := writeFile(t, filepath.Join(dir, "length.jsonl"), rows.String())
	model := newScriptedModel(t, func(scriptedRequest) string { return "It is six times seven: <answer>42</answer>" }, "")
	plot := filepath.Join(dir, "plots", "curve.png")
	args := []string{"eval", "run", "--endpoint", model.URL + "/v1", "--model", "m", "--data", data, "--out", filepath.Join(dir, "r.jsonl"), "--plot", plot, "--bootstrap", "200"}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, ", the plot to "+plot+";")
	assert.Contains(t, stdout, "  accuracy against token budget\n")
	assert.Regexp(t, `\n\s+4\s+2\s+1\.0000\s+\[1\.0000, 1\.0000\]\s+0\.0000\n\s+8\s+3\s+1\.0000\s+\[1\.0000, 1\.0000\]\s+1\.0000\n`, stdout)

	f, err := os.Open(plot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 400)
	assert.Greater(t, img.Bounds().Dy(), 300)
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(5000))

	code, stdout, stderr = runCLI(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Plot        string `json:"plot"`
		DataSources map[string]struct {
			Metrics map[string]struct{ Mean float64 } `json:"metrics"`
			Curve   []struct {
				Budget       float64
				N            int
				WithinBudget struct{ Mean float64 } `json:"within_budget"`
			} `json:"curve"`
		} `json:"data_sources"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Equal(t, plot, rep.Plot)
	sr := rep.DataSources["length/thinkprune"]
	assert.InDelta(t, 3.0/5, sr.Metrics["within_budget"].Mean, 1e-12)
	assert.InDelta(t, 4.0/5, sr.Metrics["overshoot_tokens"].Mean, 1e-12, "2 tokens over on two rows of five")
	require.Len(t, sr.Curve, 2)
	assert.Equal(t, 4.0, sr.Curve[0].Budget)
	assert.Equal(t, 2, sr.Curve[0].N)
	assert.Equal(t, 0.0, sr.Curve[0].WithinBudget.Mean)
	assert.Equal(t, 1.0, sr.Curve[1].WithinBudget.Mean)

	// Bad plots name --plot, before anything is asked.
	requests, _, _ := model.counts()
	puzzles, _ := puzzleRows(t, dir, 2)
	notDir := writeFile(t, filepath.Join(dir, "file"), "x")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not a png", []string{"--data", data, "--plot", filepath.Join(dir, "curve.svg")}, 2, "--plot " + filepath.Join(dir, "curve.svg") + ": want a .png file"},
		{"a directory", []string{"--data", data, "--plot", dir}, 2, "--plot " + dir + ": is a directory"},
		{"under a file", []string{"--data", data, "--plot", filepath.Join(notDir, "c.png")}, 3, "--plot " + filepath.Join(notDir, "c.png")},
		{"no token-budget rows", []string{"--data", puzzles, "--plot", plot}, 2, "--plot " + plot + ": no rows of a token-budget data source (length/elastic, length/lcpo_exact, length/lcpo_max, length/thinkprune)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := append([]string{"eval", "run", "--endpoint", model.URL + "/v1", "--model", "m", "--no-cache", "--out", filepath.Join(dir, "bad.jsonl")}, tc.args...)
			code, _, stderr := runCLI(t, a...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	after, _, _ := model.counts()
	assert.Equal(t, requests, after, "nothing was asked")
	assert.NoFileExists(t, filepath.Join(dir, "bad.jsonl"))
}
