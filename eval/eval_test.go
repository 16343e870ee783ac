package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
	"github.com/timeaware/timeaware/timers"
)

// script is a scripted OpenAI-compatible model: it answers each request
// with reply(messages), in the wire format of chat completions.
type script struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	// spent is the time the handler spent per request, in order.
	spent []time.Duration
}

type wireMsg struct {
	Role       string          `json:"role"`
	Content    *string         `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireReq struct {
	Messages   []wireMsg        `json:"messages"`
	Tools      []map[string]any `json:"tools"`
	ToolChoice *string          `json:"tool_choice"`
	Seed       *int64           `json:"seed"`
}

// answer is what a script says: text, or one tool call (by name); tokens,
// when set, is its usage.completion_tokens, and reasoning and
// reasoningTokens the reasoning a reasoning parser splits out.
type answer struct {
	text            string
	tool            string
	delay           time.Duration
	tokens          *int
	reasoning       string
	reasoningTokens *int
}

func newScript(t *testing.T, reply func(req wireReq) answer) *script {
	t.Helper()
	s := &script{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.hits.Add(1)
		var req wireReq
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a := reply(req)
		time.Sleep(a.delay)
		msg := map[string]any{"role": "assistant", "content": a.text}
		finish := "stop"
		if a.tool != "" {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", len(req.Messages)), "type": "function",
				"function": map[string]any{"name": a.tool, "arguments": "{}"}}}
			finish = "tool_calls"
		}
		if a.reasoning != "" {
			msg["reasoning_content"] = a.reasoning
		}
		body := map[string]any{"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}}
		if a.tokens != nil {
			usage := map[string]any{"prompt_tokens": 11, "completion_tokens": *a.tokens}
			if a.reasoningTokens != nil {
				usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": *a.reasoningTokens}
			}
			body["usage"] = usage
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(body)
		s.mu.Lock()
		s.spent = append(s.spent, time.Since(start))
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func lastUser(req wireReq) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "user" && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

func client(t *testing.T, url, cache string) *chat.Client {
	t.Helper()
	c, err := chat.New(chat.Options{URL: url, Model: "scripted", CacheDir: cache, Backoff: time.Millisecond})
	require.NoError(t, err)
	return c
}

func writeRows(t *testing.T, rows ...any) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func puzzleRow(i int, gold string) map[string]any {
	return map[string]any{
		"data_source":  "timepuzzles",
		"prompt":       []any{map[string]any{"role": "user", "content": fmt.Sprintf("puzzle %d: which dates?", i)}},
		"ability":      "temporal",
		"reward_model": map[string]any{"style": "rule", "ground_truth": gold},
		"extra_info":   map[string]any{"id": fmt.Sprintf("p%02d", i), "index": i},
	}
}

// TestPuzzlesEMIsTheShareAnsweredRight: a model that answers the gold
// dates for every third puzzle and a wrong date otherwise gets EM equal to
// the share it was scripted to answer right.
func TestPuzzlesEMIsTheShareAnsweredRight(t *testing.T) {
	gold := map[string]string{}
	var rows []any
	for i := range 30 {
		g := fmt.Sprintf("2024-03-%02d", i%28+1)
		gold[fmt.Sprintf("puzzle %d: which dates?", i)] = g
		rows = append(rows, puzzleRow(i, g))
	}
	right := map[string]bool{}
	srv := newScript(t, func(req wireReq) answer {
		q := lastUser(req)
		var n int
		fmt.Sscanf(q, "puzzle %d", &n)
		if n%3 == 0 {
			return answer{text: "Working it out.\nMY ANSWER: " + gold[q]}
		}
		return answer{text: "MY ANSWER: 1999-01-01"}
	})
	for q := range gold {
		var n int
		fmt.Sscanf(q, "puzzle %d", &n)
		right[q] = n%3 == 0
	}
	parsed, err := ReadRows(writeRows(t, rows...))
	require.NoError(t, err)
	require.Len(t, parsed, 30)
	assert.Equal(t, "p07", parsed[7].ID)

	res, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig(), Workers: 4})
	require.NoError(t, err)
	require.Len(t, res, 30)
	for i, r := range res {
		require.NotNil(t, r)
		assert.Equal(t, i, r.Index, "input order")
		assert.Empty(t, r.Error)
	}
	rep := Summarize(res, ReportOptions{Seed: 1})
	sr := rep.DataSources["timepuzzles"]
	require.NotNil(t, sr)
	assert.Equal(t, 30, sr.N)
	assert.InDelta(t, 10.0/30, sr.Metrics["em"].Mean, 1e-12)
	assert.InDelta(t, 10.0/30, sr.Metrics["score"].Mean, 1e-12)
	ci := sr.Metrics["em"].CI95
	assert.Less(t, ci[0], 10.0/30)
	assert.Greater(t, ci[1], 10.0/30)
	assert.EqualValues(t, 30, srv.hits.Load())
}

// TestLiveTimelyRowReadsTheTimer: the scripted model calls get_duration,
// then answers; the tool's answer is the timer's reading, and the reward's
// elapsed time is the speed factor times the time the model took.
func TestLiveTimelyRowReadsTheTimer(t *testing.T) {
	const alpha = 3.0
	row := map[string]any{
		"data_source":  "timely/general",
		"prompt":       []any{map[string]any{"role": "system", "content": "Answer in <answer></answer>."}, map[string]any{"role": "user", "content": "What is 3 x 7? You have 30 seconds."}},
		"ability":      "math",
		"reward_model": map[string]any{"style": "rule", "ground_truth": "21"},
		"extra_info": map[string]any{
			"request_id": "t1#0", "time_limit_s": 30.0, "timer": map[string]any{"speed_factor": alpha, "jitter": 0.0},
			"tools_kwargs": map[string]any{"get_duration": map[string]any{"create_kwargs": map[string]any{"speed_factor": alpha, "jitter": 0.0, "time_limit_s": 30.0, "ttl_s": 600.0}}},
		},
		"agent_name": "tool_agent",
	}
	var toolAnswers []string
	var mu sync.Mutex
	srv := newScript(t, func(req wireReq) answer {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			mu.Lock()
			toolAnswers = append(toolAnswers, *last.Content)
			mu.Unlock()
			assert.NotEmpty(t, last.ToolCallID, "the tool answer names its call")
			return answer{text: "<answer>21</answer>", delay: 150 * time.Millisecond}
		}
		assert.Len(t, req.Tools, 1, "get_duration is offered")
		return answer{tool: "get_duration", delay: 200 * time.Millisecond}
	})
	rows, err := ReadRows(writeRows(t, row))
	require.NoError(t, err)
	require.NotNil(t, rows[0].Timer)
	assert.Equal(t, timers.Settings{SpeedFactor: alpha, TimeLimitS: 30, TTLS: 600}, *rows[0].Timer)

	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	r := res[0]
	require.Empty(t, r.Error)
	require.Len(t, srv.spent, 2)
	require.Len(t, toolAnswers, 1)

	// The model saw α × its first reply's time; the reward took α × both.
	var shown float64
	_, err = fmt.Sscanf(toolAnswers[0], "%f seconds.", &shown)
	require.NoError(t, err, toolAnswers[0])
	first, both := srv.spent[0].Seconds(), (srv.spent[0] + srv.spent[1]).Seconds()
	assert.GreaterOrEqual(t, shown, alpha*first-0.01)
	assert.Less(t, shown, alpha*first+alpha*0.1, "loopback adds little")
	el := r.Details["elapsed_s"]
	assert.GreaterOrEqual(t, el, alpha*both)
	assert.Less(t, el, alpha*both+alpha*0.2)
	assert.Equal(t, 1.0, r.Details["acc"])
	assert.Equal(t, 1.0, r.Details["on_time"])
	assert.Equal(t, 30.0, r.Details["time_limit_s"])
	// The score is the Timely reward at that time, as the rewards compute it.
	// Timely-RL, written from the paper: r_f + r + λ·sin(π/2 · t/T), with
	// r_f = 0.1, r = 0.5, λ = 0.4 for a right answer on time.
	assert.InDelta(t, 0.1+0.5+0.4*math.Sin(math.Pi/2*el/30), r.Score, 1e-9)
	require.Len(t, r.Turns, 3)
	assert.Equal(t, "get_duration", r.Turns[0].ToolCalls[0].Function.Name)
	assert.Equal(t, toolAnswers[0], *r.Turns[1].Content)
	assert.Equal(t, "<answer>21</answer>", r.Reply)
}

// TestLiveRowsReplayFromTheCache: a rerun over the same cache sends no
// request and shows the model the same times, jitter included, because the
// timer's clock advances by the recorded time of each reply.
func TestLiveRowsReplayFromTheCache(t *testing.T) {
	row := map[string]any{
		"data_source": "timely/general", "prompt": []any{map[string]any{"role": "user", "content": "2+2? Use <answer>."}},
		"reward_model": map[string]any{"ground_truth": "4"},
		"extra_info":   map[string]any{"request_id": "j", "timer": map[string]any{"speed_factor": 1.5, "jitter": 0.3}, "time_limit_s": 5.0},
	}
	srv := newScript(t, func(req wireReq) answer {
		if n := len(req.Messages); n < 5 {
			return answer{tool: "get_duration", delay: 30 * time.Millisecond}
		}
		return answer{text: "<answer>4</answer>", delay: 10 * time.Millisecond}
	})
	rows, err := ReadRows(writeRows(t, row))
	require.NoError(t, err)
	cache := t.TempDir()
	opt := Options{Rewards: rewards.DefaultConfig(), Samples: 2, Seed: 5}
	opt.Client = client(t, srv.URL, cache)
	first, err := Run(context.Background(), rows, opt)
	require.NoError(t, err)
	sent := srv.hits.Load()
	assert.EqualValues(t, 6, sent, "two samples of three calls")
	opt.Client = client(t, srv.URL, cache)
	again, err := Run(context.Background(), rows, opt)
	require.NoError(t, err)
	assert.Equal(t, sent, srv.hits.Load(), "nothing is asked twice")
	for i := range first {
		assert.False(t, first[i].Cached)
		assert.True(t, again[i].Cached)
		assert.Equal(t, first[i].Turns, again[i].Turns, "the same times are shown")
		assert.InDelta(t, first[i].Details["elapsed_s"], again[i].Details["elapsed_s"], 1e-6)
	}
	assert.NotEqual(t, timerSeed("j", 5), timerSeed("j", 6), "samples have their own jitter")
}

// TestDecisionRows: a pairs row is sent with its tools; a tool call is an
// attempt. An always-calling model agrees on prefer-tool rows only.
func TestDecisionRows(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"flight_status","parameters":{"type":"object","properties":{}}}}]`
	pair := func(id string, elapse int, label, sens string) map[string]any {
		return map[string]any{
			"prompt": []any{map[string]any{"role": "user", "content": "Is UA100 on time?", "tool_calls": nil, "tool_call_id": nil, "name": nil}},
			"chosen": []any{map[string]any{"role": "assistant", "content": "x"}}, "rejected": []any{map[string]any{"role": "assistant", "content": "y"}},
			"tools": tools, "margin": 1.0, "score": nil, "id": id, "scenario": "s", "sensitivity": sens, "elapse": elapse, "label": label, "split": "test",
		}
	}
	path := writeRows(t, pair("a", 0, "tool", "high"), pair("a", 2, "direct", "high"), pair("b", 1, "tool", "low"), pair("c", 0, "direct", "low"))
	rows, err := ReadRows(path)
	require.NoError(t, err)
	assert.Equal(t, "a#2", rows[1].ID)
	assert.Equal(t, map[string]string{"elapse": "2", "sensitivity": "high"}, rows[1].Labels)
	srv := newScript(t, func(req wireReq) answer {
		require.Len(t, req.Tools, 1)
		return answer{tool: "flight_status"}
	})
	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	rep := Summarize(res, ReportOptions{Seed: 2})
	sr := rep.DataSources["tictoc/decision"]
	assert.Equal(t, 0.5, sr.Metrics["nar"].Mean)
	assert.Equal(t, 1.0, sr.Metrics["tpr"].Mean)
	assert.Equal(t, 0.0, sr.Metrics["tnr"].Mean)
	assert.Equal(t, 1.0, sr.Metrics["attempt"].Mean)
	assert.Equal(t, 0.5, sr.Metrics["score"].Mean)
	high := sr.Groups["sensitivity=high"]
	require.NotNil(t, high)
	assert.Equal(t, 2, high.N)
	assert.Equal(t, 0.5, high.Metrics["nar"].Mean)
	assert.Contains(t, sr.Groups, "elapse=2")
	_, hasTNR := sr.Groups["elapse=1"].Metrics["tnr"]
	assert.False(t, hasTNR, "no prefer-direct row at elapse 1: TNR is undefined there")
}

func TestReadRowsErrors(t *testing.T) {
	for _, tc := range []struct {
		row  any
		want string
	}{
		{map[string]any{"prompt": []any{}}, "row 1: neither a pairs row"},
		{map[string]any{"data_source": "nope", "prompt": []any{}}, `row 1: data_source: unknown data_source "nope"`},
		{map[string]any{"data_source": "timepuzzles", "prompt": []any{}, "reward_model": map[string]any{}}, "row 1: prompt: empty"},
		{map[string]any{"data_source": "timepuzzles", "reward_model": map[string]any{}}, "row 1: prompt: missing"},
		{map[string]any{"data_source": "timepuzzles", "prompt": "hi", "reward_model": map[string]any{}}, `row 1: prompt: want a list, got "hi"`},
		{map[string]any{"data_source": "timepuzzles", "prompt": []any{map[string]any{"role": "user", "content": "x"}, map[string]any{"role": "user", "content": 5}}, "reward_model": map[string]any{}},
			"row 1: prompt[1].content: want a string, got 5"},
		{map[string]any{"data_source": "timely/general", "prompt": []any{map[string]any{"role": "user", "content": "x"}}, "reward_model": map[string]any{}, "extra_info": map[string]any{"time_limit_s": "ten"}},
			`row 1: extra_info.time_limit_s: want a number, got "ten"`},
		{map[string]any{"data_source": "timepuzzles", "prompt": []any{map[string]any{"content": "x"}}, "reward_model": map[string]any{}}, "row 1: prompt[0].role: missing"},
		{map[string]any{"data_source": "timepuzzles", "prompt": []any{map[string]any{"role": "user", "content": "x"}}}, "row 1: reward_model: missing"},
		{map[string]any{"chosen": []any{}, "tools": "[]", "label": "maybe"}, `row 1: label: want "tool" or "direct"`},
		{map[string]any{"chosen": []any{}, "tools": "[]", "label": "tool", "elapse": 0}, "row 1: id: missing"},
		{map[string]any{"chosen": []any{}, "tools": "{", "label": "tool", "id": "a", "elapse": 0, "prompt": []any{map[string]any{"role": "user", "content": "x"}}}, "row 1: tools: invalid JSON at byte 1: the text ends inside a value"},
		{map[string]any{"chosen": []any{}, "tools": `[{"type": "function", "function": 3}]`, "label": "tool", "id": "a", "elapse": 0, "prompt": []any{map[string]any{"role": "user", "content": "x"}}},
			"row 1: tools[0].function: want an object, got 3"},
	} {
		p := writeRows(t, tc.row)
		_, err := ReadRows(p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "eval: "+p+": ")
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := ReadRows(filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.ErrorContains(t, err, "no such file")
	bad := filepath.Join(t.TempDir(), "rows.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"data_source\": \"timepuzzles\"}\nnot json\n"), 0o644))
	_, err = ReadRows(bad)
	assert.ErrorContains(t, err, "row 1: prompt")
}

// TestGameAndMLRowsAreSkipped: they need their environment; no request is
// sent and the report says so.
func TestGameAndMLRowsAreSkipped(t *testing.T) {
	row := map[string]any{"data_source": "timely/game", "prompt": []any{map[string]any{"role": "user", "content": "play"}}, "reward_model": map[string]any{"ground_truth": nil}, "extra_info": map[string]any{"request_id": "g"}}
	srv := newScript(t, func(wireReq) answer { return answer{text: "x"} })
	rows, err := ReadRows(writeRows(t, row))
	require.NoError(t, err)
	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	assert.Contains(t, res[0].Skipped, "environment")
	assert.Zero(t, srv.hits.Load())
	rep := Summarize(res, ReportOptions{})
	assert.Equal(t, 1, rep.DataSources["timely/game"].Skipped)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "timely/game: 1 results skipped")
}

// TestRequestFailuresAreRecordedAndCancellationStops: a request that fails
// after its retries is the result's error; a cancelled run returns what
// finished.
func TestRequestFailuresAreRecordedAndCancellationStops(t *testing.T) {
	var rows []any
	for i := range 6 {
		rows = append(rows, puzzleRow(i, "2024-01-01"))
	}
	parsed, err := ReadRows(writeRows(t, rows...))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such model", http.StatusNotFound)
	}))
	defer srv.Close()
	res, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	assert.Contains(t, res[0].Error, "HTTP 404")
	assert.Equal(t, 6, Summarize(res, ReportOptions{}).DataSources["timepuzzles"].Failed)

	release := make(chan struct{})
	var hits atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) > 2 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"MY ANSWER: 2024-01-01"}}]}`)
	}))
	defer slow.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for hits.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	res, err = Run(ctx, parsed, Options{Client: client(t, slow.URL, ""), Rewards: rewards.DefaultConfig(), Workers: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, res, 6)
	assert.NotNil(t, res[0])
	assert.NotNil(t, res[1])
	assert.Nil(t, res[2])
	rep := Summarize(res, ReportOptions{})
	assert.Equal(t, 4, rep.Missing)
	assert.Equal(t, 1.0, rep.DataSources["timepuzzles"].Metrics["em"].Mean)
}

func TestTextToolCalls(t *testing.T) {
	calls := textToolCalls("Let me check.<tool_call>\n{\"name\": \"get_duration\", \"arguments\": {}}\n</tool_call> and <tool_call>{bad}</tool_call><tool_call>{\"name\":\"x\",\"arguments\":{\"a\":1}}")
	require.Len(t, calls, 2)
	assert.Equal(t, conversation.ToolCall{Type: "function", Function: conversation.FunctionCall{Name: "get_duration", Arguments: "{}"}}, calls[0])
	assert.Equal(t, conversation.Arguments(`{"a":1}`), calls[1].Function.Arguments)
	assert.Empty(t, textToolCalls("no calls <tool_call>{\"arguments\":{}}</tool_call>"))
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	assert.Equal(t, 1.0, Quantile(v, 0))
	assert.Equal(t, 1.75, Quantile(v, 0.25))
	assert.Equal(t, 2.5, Quantile(v, 0.5))
	assert.Equal(t, 4.0, Quantile(v, 1))
	assert.Equal(t, 7.0, Quantile([]float64{7}, 0.975))
	assert.True(t, math.IsNaN(Quantile(nil, 0.5)))
}

// TestBootstrapHandComputed checks intervals against exact bootstrap
// distributions worked out by hand. Resampling four values {0, 1, 1, 1}, a
// resample's mean is k/4 with k ~ Binomial(4, 3/4): P(k ≤ 0) = 1/256,
// P(k ≤ 1) = 13/256 ≈ 0.051, P(k ≤ 3) = 175/256 ≈ 0.684. The 2.5th
// percentile is therefore 1/4 and the 97.5th is 1. For {0, 0, 1}: k ~
// Binomial(3, 1/3), P(k ≤ 0) = 8/27 ≈ 0.30 and P(k ≤ 2) = 26/27 ≈ 0.963,
// so the interval is [0, 1]. Equal values give a point.
func TestBootstrapHandComputed(t *testing.T) {
	for _, tc := range []struct {
		vals   []float64
		lo, hi float64
	}{
		{[]float64{0, 1, 1, 1}, 0.25, 1},
		{[]float64{0, 0, 1}, 0, 1},
		{[]float64{0.3, 0.3, 0.3}, 0.3, 0.3},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		lo, hi := bootstrap(len(tc.vals), 20000, rng, func(idx []int) (float64, bool) {
			s := 0.0
			for _, i := range idx {
				s += tc.vals[i]
			}
			return s / float64(len(idx)), true
		})
		assert.InDelta(t, tc.lo, lo, 1e-12, "%v", tc.vals)
		assert.InDelta(t, tc.hi, hi, 1e-12, "%v", tc.vals)
	}

	// Through Summarize: the same four rows as puzzle results.
	var res []*Result
	for i, v := range []float64{0, 1, 1, 1} {
		res = append(res, &Result{Row: i, RequestID: fmt.Sprint(i), DataSource: "timepuzzles", Score: v, Details: map[string]float64{"em": v}})
	}
	iv := Summarize(res, ReportOptions{Resamples: 20000, Seed: 3}).DataSources["timepuzzles"].Metrics["em"]
	assert.Equal(t, Interval{Mean: 0.75, CI95: [2]float64{0.25, 1}}, iv)
}

// TestSamplesOfARowResampleTogether: two rows, each with two samples; a
// resample draws rows, so a row's samples never split. With rows scoring
// {1, 1} and {0, 0} every resample's mean is 0, 1/2 or 1, each row's
// samples moving together; with samples resampled apart, means of 1/4 and
// 3/4 would appear.
func TestSamplesOfARowResampleTogether(t *testing.T) {
	var res []*Result
	for row, v := range []float64{1, 0} {
		for k := range 2 {
			res = append(res, &Result{Row: row, Sample: k, RequestID: fmt.Sprint(row), DataSource: "timepuzzles", Score: v, Details: map[string]float64{}})
		}
	}
	rows, _ := sumRows(res, metricsFor("timepuzzles"), &SourceReport{}, byRow)
	require.Len(t, rows, 2)
	seen := map[float64]bool{}
	rng := rand.New(rand.NewPCG(4, 4))
	bootstrap(2, 500, rng, func(idx []int) (float64, bool) {
		s := sumOver(rows, idx, 0, 2)
		seen[s[0]/s[1]] = true
		return s[0] / s[1], true
	})
	assert.Equal(t, map[float64]bool{0: true, 0.5: true, 1: true}, seen)
}

// TestCompare: a paired comparison of two runs on the same rows.
func TestCompare(t *testing.T) {
	mk := func(scores ...float64) []*Result {
		var out []*Result
		for i, v := range scores {
			out = append(out, &Result{Row: i, RequestID: fmt.Sprintf("r%d", i), DataSource: "timepuzzles", Score: v, Details: map[string]float64{"em": v}})
		}
		return out
	}
	a := mk(0, 0, 1, 0, 1)
	b := mk(1, 0, 1, 1, 1)
	b = append(b, &Result{Row: 9, RequestID: "extra", DataSource: "timepuzzles", Score: 1, Details: map[string]float64{}})
	cmp, err := Compare(a, b, ReportOptions{Resamples: 20000, Seed: 1})
	require.NoError(t, err)
	sc := cmp.DataSources["timepuzzles"]
	assert.Equal(t, 5, sc.Rows)
	assert.Equal(t, 1, sc.OnlyB)
	d := sc.Metrics["em"]
	assert.InDelta(t, 0.4, d.A, 1e-12)
	assert.InDelta(t, 0.8, d.B, 1e-12)
	assert.InDelta(t, 0.4, d.Diff, 1e-12)
	// Per-row differences are {1, 0, 0, 1, 0}: a resample's mean difference
	// is k/5 with k ~ Binomial(5, 2/5); P(k ≤ 0) ≈ 0.078, P(k ≤ 4) ≈ 0.990,
	// P(k ≤ 3) ≈ 0.913: the interval is [0, 0.8].
	assert.InDelta(t, 0, d.CI95[0], 1e-12)
	assert.InDelta(t, 0.8, d.CI95[1], 1e-12)

	_, err = Compare(a, []*Result{{Row: 0, RequestID: "x", DataSource: "traveler"}}, ReportOptions{})
	assert.ErrorContains(t, err, "share no data source")
	_, err = Compare(append(a, &Result{Row: 7, RequestID: "r0", DataSource: "timepuzzles"}), b, ReportOptions{})
	assert.ErrorContains(t, err, `request id "r0" sample 0 appears twice in run A`)
	_, err = Compare(a, append(b, &Result{Row: 0, RequestID: "r1", DataSource: "timepuzzles"}), ReportOptions{})
	assert.ErrorContains(t, err, `request id "r1" sample 0 appears twice in run B`)

	// Rows pair by request id, not by their position in a run: B written
	// as two shards whose row numbers restart pairs the same as B whole.
	shards := mk(1, 0, 1, 1, 1)
	for i, r := range shards {
		r.Row = i % 3
	}
	cmp2, err := Compare(a, shards, ReportOptions{Resamples: 20000, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, 5, cmp2.DataSources["timepuzzles"].Rows)
	assert.Equal(t, sc.Metrics["em"], cmp2.DataSources["timepuzzles"].Metrics["em"])

	// A data source only one run has is named.
	cmp3, err := Compare(append(a, &Result{Row: 8, RequestID: "t", DataSource: "traveler", Details: map[string]float64{}}), b, ReportOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"traveler"}, cmp3.OnlyA)
}

func TestReadResults(t *testing.T) {
	res, err := ReadResults(strings.NewReader(`{"index":0,"row":0,"request_id":"a","data_source":"timepuzzles","score":1,"details":{"em":1}}`+"\n\n"), "r.jsonl")
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, 1.0, res[0].Details["em"])
	_, err = ReadResults(strings.NewReader("{\"row\":0}\n"), "r.jsonl")
	assert.EqualError(t, err, "eval: r.jsonl: line 1: a result needs data_source and request_id")
	_, err = ReadResults(strings.NewReader("{\n  \"endpoint\": \"http://h/v1\",\n"), "rep.json")
	assert.ErrorContains(t, err, "rep.json: this is an eval report (eval run --json); compare reads the RESULTS.jsonl files")
	_, err = ReadResults(strings.NewReader("{\"request_id\":\"a\",\"data_source\":\"x\"}\n[1]\n"), "r.jsonl")
	assert.EqualError(t, err, "eval: r.jsonl: line 2: want an object, got a list")
	_, err = ReadResults(strings.NewReader("{\"request_id\":\"a\",\"data_source\":\"x\",\"details\":{\"em\":\"1\"}}\n"), "r.jsonl")
	assert.EqualError(t, err, `eval: r.jsonl: line 1: details.em: want a number, got "1"`)
}

// TestNARResamplesKeepBothClasses: on rows of both classes, a resample
// that lost one class is not counted (its "NAR" would be the other
// class's rate, another statistic). Two agreeing prefer-tool rows and a
// disagreeing prefer-direct row have NAR ½(1 + 0) in every resample that
// has both classes; on rows of one class, NAR is that class's rate.
func TestNARResamplesKeepBothClasses(t *testing.T) {
	dec := func(row int, prefer, called float64) *Result {
		return &Result{Row: row, RequestID: fmt.Sprint(row), DataSource: "tictoc/decision",
			Details: map[string]float64{"preferred_tool": prefer, "called_tool": called}}
	}
	res := []*Result{dec(0, 1, 1), dec(1, 1, 1), dec(2, 0, 1)}
	iv := Summarize(res, ReportOptions{Seed: 9}).DataSources["tictoc/decision"].Metrics["nar"]
	assert.Equal(t, Interval{Mean: 0.5, CI95: [2]float64{0.5, 0.5}}, iv)

	one := Summarize(res[:2], ReportOptions{Seed: 9}).DataSources["tictoc/decision"].Metrics
	assert.Equal(t, Interval{Mean: 1, CI95: [2]float64{1, 1}, OneClass: true}, one["nar"])
	assert.NotContains(t, one, "tnr")
}

// TestEverySourceIsARewardAndEveryRewardHasMetrics: the list of sources
// names registered rewards only, and every reward is reported with score
// and each of its detail keys.
func TestEverySourceIsARewardAndEveryRewardHasMetrics(t *testing.T) {
	for name := range sources {
		_, ok := rewards.Lookup(name)
		assert.True(t, ok, "eval source %q is not a registered reward", name)
	}
	for _, rw := range rewards.All {
		var names []string
		for _, m := range metricsFor(rw.DataSource) {
			names = append(names, m.name)
		}
		assert.Equal(t, append([]string{"score"}, rw.Keys...), names[:1+len(rw.Keys)], rw.DataSource)
		seen := map[string]bool{}
		for _, n := range names {
			assert.False(t, seen[n], "%s: metric %s twice", rw.DataSource, n)
			seen[n] = true
		}
	}
}

func timelyRow(id string) map[string]any {
	return map[string]any{
		"data_source": "timely/general", "prompt": []any{map[string]any{"role": "user", "content": "2+2? Use <answer>."}},
		"reward_model": map[string]any{"ground_truth": "4"},
		"extra_info":   map[string]any{"request_id": id, "timer": map[string]any{"speed_factor": 1.0, "jitter": 0.0}, "time_limit_s": 5.0},
	}
}

// TestLiveTurnLimit: a model that never stops calling tools gets MaxTurns
// replies; its last call is not answered (the model would never read the
// answer), and the result says it hit the limit.
func TestLiveTurnLimit(t *testing.T) {
	srv := newScript(t, func(wireReq) answer { return answer{tool: "get_duration"} })
	rows, err := ReadRows(writeRows(t, timelyRow("loop")))
	require.NoError(t, err)
	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig(), MaxTurns: 3})
	require.NoError(t, err)
	r := res[0]
	assert.EqualValues(t, 3, srv.hits.Load())
	var roles []string
	for _, m := range r.Turns {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"assistant", "tool", "assistant", "tool", "assistant"}, roles)
	assert.True(t, r.TurnLimit)
	assert.Empty(t, r.Error)
	assert.Equal(t, 0.0, r.Score, "a call is no answer")
}

// TestLiveTextToolCalls: with tool choice "none" the server leaves calls
// in the text; the runner reads Hermes-style blocks and answers them.
func TestLiveTextToolCalls(t *testing.T) {
	var choices []string
	var mu sync.Mutex
	srv := newScript(t, func(req wireReq) answer {
		mu.Lock()
		if req.ToolChoice != nil {
			choices = append(choices, *req.ToolChoice)
		}
		mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			assert.Empty(t, last.ToolCallID, "a call written in text has no id")
			return answer{text: "<answer>4</answer>"}
		}
		return answer{text: "Checking the clock.\n<tool_call>\n{\"name\": \"get_duration\", \"arguments\": {}}\n</tool_call>"}
	})
	rows, err := ReadRows(writeRows(t, timelyRow("text")))
	require.NoError(t, err)
	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig(), ToolChoice: "none"})
	require.NoError(t, err)
	r := res[0]
	require.Len(t, r.Turns, 3)
	assert.Contains(t, *r.Turns[0].Content, "<tool_call>")
	assert.Regexp(t, `^\d+\.\d\d seconds\.$`, *r.Turns[1].Content)
	assert.Equal(t, 1.0, r.Details["acc"])
	assert.False(t, r.TurnLimit)
	assert.Equal(t, []string{"none", "none"}, choices)

	_, err = Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), ToolChoice: "maybe"})
	assert.ErrorContains(t, err, `tool choice "maybe": want auto, none or omit`)
}

// TestCheckRows: a row whose ground truth the reward cannot read fails
// before anything is sent, naming the file, the row and the field; rows
// the reward reads pass, whatever the reply will be.
func TestCheckRows(t *testing.T) {
	good := writeRows(t, puzzleRow(0, "2024-01-01"), timelyRow("t"))
	rows, err := ReadRows(good)
	require.NoError(t, err)
	require.NoError(t, CheckRows(rows, rewards.DefaultConfig()))

	bad := puzzleRow(1, "2024-13-45")
	trav := map[string]any{"data_source": "traveler", "prompt": []any{map[string]any{"role": "user", "content": "q"}},
		"reward_model": map[string]any{"ground_truth": `{"category": "sideways"}`}}
	for _, tc := range []struct {
		row  any
		want string
	}{
		{bad, "row 1: ground_truth"},
		{trav, "row 1: ground_truth"},
	} {
		p := writeRows(t, tc.row)
		rows, err := ReadRows(p)
		require.NoError(t, err)
		err = CheckRows(rows, rewards.DefaultConfig())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "eval: "+p+": "+tc.want)
	}
}

// negotiationRow is a row of the two-issue negotiation worked out by hand
// in synth/negotiation's tests (the candidate's deal of a mid salary and a
// June start is worth 4 of its 0–10 points).
func negotiationRow() map[string]any {
	gt := `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
		`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}},` +
		`{"id":"start","options":["June","July"],"points":{"cand":[0,2],"hr":[3,0]}}]},` +
		`"role":"cand","condition":"time_aware","deadline_s":60,"first_speaker":"cand"}`
	return map[string]any{
		"data_source": "negotiation", "prompt": []any{map[string]any{"role": "system", "content": "You are the candidate."}, map[string]any{"role": "user", "content": "Make your first offer."}},
		"reward_model": map[string]any{"ground_truth": gt},
		"extra_info":   map[string]any{"id": "neg-1", "condition": "time_aware", "turn_prefix": "[{seconds} seconds left]"},
	}
}

// TestNegotiationEpisodes: rows are played as whole episodes against the
// scripted opponent; a conceding one accepts the first offer (score 0.4),
// a hard-liner counters and the model's acceptance ends it at 0.
func TestNegotiationEpisodes(t *testing.T) {
	const offer = `{"text": "I propose a middle salary and a June start.", "action": {"action": "propose", "offer": {"salary": "mid", "start": "June"}}}`
	var seen []string
	var mu sync.Mutex
	srv := newScript(t, func(req wireReq) answer {
		last := *req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		seen = append(seen, last)
		mu.Unlock()
		if strings.Contains(last, "Here is what I can offer") {
			return answer{text: `{"text": "Fine.", "action": {"action": "accept"}}`}
		}
		return answer{text: offer}
	})
	rows, err := ReadRows(writeRows(t, negotiationRow()))
	require.NoError(t, err)
	require.NotNil(t, rows[0].Episode)
	assert.Equal(t, "[{seconds} seconds left]", rows[0].Episode.TurnPrefix)

	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig(), OpponentBeta: 10})
	require.NoError(t, err)
	r := res[0]
	require.Empty(t, r.Error)
	assert.InDelta(t, 0.4, r.Score, 1e-12)
	assert.Equal(t, 1.0, r.Details["deal"])
	assert.Equal(t, 2.0, r.Details["turns"])

	res, err = Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	r = res[0]
	require.Empty(t, r.Error)
	assert.Equal(t, 0.0, r.Score)
	assert.Equal(t, 1.0, r.Details["deal"])
	assert.Equal(t, 3.0, r.Details["turns"], "offer, counter-offer, acceptance")
	require.Len(t, r.Turns, 3)
	assert.Regexp(t, `^\[\d+ seconds left\]\n`, *r.Turns[1].Content, "the agent reads the clock")
	assert.Contains(t, Summarize(res, ReportOptions{}).Notes[0], "whole episodes")
}

// TestNegotiationAgainstAModelOpponent: a model plays the other role; its
// acceptance of the first offer closes the deal.
func TestNegotiationAgainstAModelOpponent(t *testing.T) {
	const offer = `{"text": "I propose a middle salary and a June start.", "action": {"action": "propose", "offer": {"salary": "mid", "start": "June"}}}`
	agent := newScript(t, func(wireReq) answer { return answer{text: offer} })
	opponent := newScript(t, func(req wireReq) answer {
		assert.Contains(t, *req.Messages[0].Content, "You are the hr")
		return answer{text: `{"text": "Agreed.", "action": {"action": "accept"}}`}
	})
	rows, err := ReadRows(writeRows(t, negotiationRow()))
	require.NoError(t, err)
	opp := negotiation.ModelOpponent{Client: client(t, opponent.URL, "")}
	res, err := Run(context.Background(), rows, Options{Client: client(t, agent.URL, ""), Rewards: rewards.DefaultConfig(), Opponent: opp})
	require.NoError(t, err)
	require.Empty(t, res[0].Error)
	assert.InDelta(t, 0.4, res[0].Score, 1e-12)
	assert.EqualValues(t, 1, opponent.hits.Load())
}
