package verifier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
	"github.com/timeaware/timeaware/timers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	srv   *Server
	ts    *httptest.Server
	clock *testClock
	store *timers.Store
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	clk := &testClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	store, err := timers.New(timers.Options{Secret: []byte("verifier test secret, 32 bytes.."), Now: clk.Now})
	require.NoError(t, err)
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	require.NoError(t, err)
	opts := Options{Scorer: scorer, Timers: store, Version: "test"}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &fixture{srv: srv, ts: ts, clock: clk, store: store}
}

// do sends a request and returns the status and decoded JSON body.
func (f *fixture) do(t *testing.T, method, path, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body %s", raw)
	return resp.StatusCode, out
}

func errorOf(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	require.True(t, ok, "no error object in %v", body)
	return e
}

func general(answer string, elapsed, limit float64) string {
	return fmt.Sprintf(`{"data_source":"timely/general","solution_str":"thinking... <answer>%s</answer>","ground_truth":"42","extra_info":{"elapsed_s":%v,"time_limit_s":%v,"index":7,"split":"train"}}`, answer, elapsed, limit)
}

func TestScoreBatchKeepsOrderAndIsolatesBadItems(t *testing.T) {
	f := newFixture(t, nil)
	items := []string{
		general("42", 5, 10), // right, half the budget
		`{"data_source":"timely/game","extra_info":{"score":10}}`, // no max_score
		general("41", 5, 10), // wrong: r_f only
		`{"data_source":"no/such","solution_str":"x"}`,
		`{"data_source":"timely/general","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"elapsed_s":"soon"}}`,
		general("42", 12, 10), // late
		`[1,2]`,
	}
	code, body := f.do(t, "POST", "/v1/score/batch", `{"items":[`+strings.Join(items, ",")+`]}`)
	require.Equal(t, http.StatusOK, code, "%v", body)
	results := body["results"].([]any)
	require.Len(t, results, len(items))
	assert.Equal(t, 4.0, body["failed"])

	get := func(i int) map[string]any { return results[i].(map[string]any) }
	assert.InDelta(t, 0.1+0.5+0.4*0.7071067811865476, get(0)["score"], 1e-12)
	assert.Equal(t, 1.0, get(0)["acc"])
	assert.NotContains(t, get(0), "error")
	assert.InDelta(t, 0.1, get(2)["score"], 1e-12)
	assert.Equal(t, 0.0, get(5)["score"])
	assert.Equal(t, 0.0, get(5)["on_time"])

	for i, want := range map[int]string{1: "extra_info.max_score", 3: "unknown data_source", 4: "elapsed_s", 6: "want an object, got a list"} {
		r := get(i)
		assert.Equal(t, 0.0, r["score"], "item %d gets the fallback", i)
		assert.Contains(t, r["error"], want, "item %d", i)
	}
	// Every item of a known data source reports the same keys.
	keysOf := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			if k != "error" {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	assert.Equal(t, keysOf(get(0)), keysOf(get(4)))
	assert.Equal(t, keysOf(get(0)), keysOf(get(1)))
}

func TestLargeBatchScoresInParallelInOrder(t *testing.T) {
	f := newFixture(t, nil)
	var b strings.Builder
	b.WriteString(`{"items":[`)
	const n = 3 * parallelBatch
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		ans := "42"
		if i%3 == 0 {
			ans = "7"
		}
		b.WriteString(general(ans, float64(i%10), 10))
	}
	b.WriteString(`]}`)
	code, body := f.do(t, "POST", "/v1/score/batch", b.String())
	require.Equal(t, http.StatusOK, code)
	results := body["results"].([]any)
	require.Len(t, results, n)
	for i, r := range results {
		m := r.(map[string]any)
		assert.Equal(t, float64(i%10), m["elapsed_s"], "item %d out of order", i)
		assert.Equal(t, b2f(i%3 != 0), m["acc"], "item %d", i)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestRequestErrors(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.MaxBodyBytes, o.MaxBatchItems, o.MaxJSONDepth, o.MaxStringBytes = 4096, 3, 8, 256
	})
	big := `{"items":[` + strings.Repeat(general("42", 1, 2)+",", 40) + general("42", 1, 2) + `]}`
	four := `{"items":[` + strings.Repeat(general("42", 1, 2)+",", 3) + general("42", 1, 2) + `]}`
	deep := strings.Repeat("[", 12) + strings.Repeat("]", 12)
	long := `"` + strings.Repeat("x", 300) + `"`
	code, owned := f.do(t, "POST", "/v1/timers", `{"rollout_id":"owned"}`)
	require.Equal(t, http.StatusCreated, code, "%v", owned)
	tests := []struct {
		name, method, path, body string
		status                   int
		code, field, msg         string
		hdr                      []string
	}{
		{"no content type", "POST", "/v1/score", general("42", 1, 2), 415, "unsupported_media_type", "Content-Type", "got none", []string{"Content-Type", ""}},
		{"form content type", "POST", "/v1/score/batch", four, 415, "unsupported_media_type", "Content-Type", "application/x-www-form-urlencoded", []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"text content type", "POST", "/v1/openrlhf", `{"query":[]}`, 415, "unsupported_media_type", "Content-Type", "text/plain", []string{"Content-Type", "text/plain;charset=UTF-8"}},
		{"deep ground truth", "POST", "/v1/score/batch", `{"items":[{"data_source":"timepuzzles","ground_truth":` + deep + `}]}`, 400, "json_too_deep", "items[0]", "deeper than 8", nil},
		{"deep single item", "POST", "/v1/score", `{"data_source":"timepuzzles","ground_truth":` + deep + `}`, 400, "json_too_deep", "ground_truth", "deeper than 8", nil},
		{"deep top level", "POST", "/v1/score/batch", deep, 400, "json_too_deep", "body", "deeper than 8", nil},
		{"deep timer request", "POST", "/v1/timers", `{"rollout_id":` + deep + `}`, 400, "json_too_deep", "rollout_id", "deeper than 8", nil},
		{"long string", "POST", "/v1/score/batch", `{"items":[{"data_source":"timepuzzles","solution_str":` + long + `}]}`, 413, "string_too_long", "items[0]", "longer than 256 bytes", nil},
		{"long string single", "POST", "/v1/score", `{"data_source":"timepuzzles","solution_str":` + long + `}`, 413, "string_too_long", "solution_str", "longer than 256 bytes", nil},
		{"too many, then malformed", "POST", "/v1/score/batch", `{"items":[{},{},{},{},}`, 413, "too_many_items", "items", "more than 3", nil},
		{"too many under an escaped key", "POST", "/v1/score/batch", `{"it\u0065ms":[{},{},{},{"data_source":1}]}`, 413, "too_many_items", "it\u0065ms", "more than 3", nil},
		{"openrlhf: too many labels", "POST", "/v1/openrlhf", `{"query":["a"],"labels":["1","2","3","4"]}`, 413, "too_many_items", "labels", "more than 3", nil},
		{"span by rollout id", "POST", "/v1/timers/owned/spans", `{"seconds":100,"simulated":true}`, 403, "timer_token_required", "timer", "needs its token", nil},
		{"stop by rollout id", "DELETE", "/v1/timers/owned", ``, 403, "timer_token_required", "timer", "needs its token", nil},
		{"rebind a running rollout id", "POST", "/v1/timers", `{"rollout_id":"owned"}`, 409, "rollout_id_in_use", "rollout_id", `"owned"`, nil},
		{"span past the tool-time bound", "POST", "/v1/timers/" + owned["timer"].(string) + "/spans", `{"seconds":2e9}`, 400, "invalid_timer_request", "seconds", "not in [0, 1e+09]", nil},
		{"malformed json", "POST", "/v1/score/batch", `{"items":[{"data_source": }]}`, 400, "malformed_json", "", "malformed JSON at byte", nil},
		{"items missing", "POST", "/v1/score/batch", `{"itemz":[]}`, 400, "invalid_request", "items", "items: missing", nil},
		{"items wrong type", "POST", "/v1/score/batch", `{"items":{}}`, 400, "invalid_json", "items", "items", nil},
		{"empty body", "POST", "/v1/score/batch", ``, 400, "empty_body", "body", "empty", nil},
		{"body over limit", "POST", "/v1/score/batch", big, 413, "body_too_large", "body", "4096 bytes", nil},
		{"too many items", "POST", "/v1/score/batch", four, 413, "too_many_items", "items", "more than 3 entries", nil},
		{"single: field error", "POST", "/v1/score", `{"data_source":"timely/ml","extra_info":{"accuracy":1.5}}`, 400, "invalid_item", "extra_info.accuracy", "not in [0, 1]", nil},
		{"single: no data source", "POST", "/v1/score", `{"solution_str":"x"}`, 400, "invalid_item", "data_source", "missing", nil},
		{"single: unknown data source", "POST", "/v1/score", `{"data_source":"gsm8k"}`, 400, "unknown_data_source", "data_source", "gsm8k", nil},
		{"unknown route", "GET", "/v2/nothing", ``, 404, "not_found", "", "/v2/nothing", nil},
		{"wrong method", "GET", "/v1/score/batch", ``, 404, "not_found", "", "GET /v1/score/batch", nil},
		{"timer: unknown field", "POST", "/v1/timers", `{"speedfactor":2}`, 400, "malformed_json", "speedfactor", "speedfactor", nil},
		{"timer: bad speed", "POST", "/v1/timers", `{"speed_factor":-1}`, 400, "invalid_timer_request", "speed_factor", "speed_factor", nil},
		{"timer: forged", "GET", "/v1/timers/AAAA.BBBB", ``, 400, "invalid_timer", "timer", "signed with another secret", nil},
		{"timer: unknown rollout", "GET", "/v1/timers/nobody", ``, 404, "timer_not_found", "timer", "rollout id", nil},
		{"get_duration: nothing named", "POST", "/v1/tools/get_duration", `{}`, 400, "invalid_timer_request", "timer", "rollout id", nil},
		{"span: neither", "POST", "/v1/timers/x/spans", `{"simulated":true}`, 400, "invalid_timer_request", "seconds", "either", nil},
		{"openrlhf: lengths", "POST", "/v1/openrlhf", `{"query":["a","b"],"labels":["1"]}`, 400, "invalid_request", "labels", "1 entries for 2 queries", nil},
		{"openrlhf: source", "POST", "/v1/openrlhf?data_source=nope", `{"query":[]}`, 400, "unknown_data_source", "data_source", "nope", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.do(t, tc.method, tc.path, tc.body, tc.hdr...)
			require.Equal(t, tc.status, code, "%v", body)
			e := errorOf(t, body)
			assert.Equal(t, tc.code, e["code"])
			if tc.field != "" {
				assert.Equal(t, tc.field, e["field"])
			}
			assert.Contains(t, e["message"], tc.msg)
		})
	}
}

func TestBearerToken(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Token = "s3cret" })
	tests := []struct {
		name, path string
		hdr        []string
		status     int
	}{
		{"no token", "/v1/rewards", nil, 401},
		{"wrong token", "/v1/rewards", []string{"Authorization", "Bearer nope"}, 401},
		{"not bearer", "/v1/rewards", []string{"Authorization", "Basic s3cret"}, 401},
		{"right token", "/v1/rewards", []string{"Authorization", "Bearer s3cret"}, 200},
		{"health is open", "/healthz", nil, 200},
		{"openapi is open", "/openapi.json", nil, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.do(t, "GET", tc.path, "", tc.hdr...)
			assert.Equal(t, tc.status, code, "%v", body)
			if code == 401 {
				assert.Equal(t, "unauthorized", errorOf(t, body)["code"])
			}
		})
	}
}

func TestOverloadedIs429WithRetryAfter(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxInflight = 1 })
	f.srv.sem <- struct{}{} // a request being scored holds the only slot

	resp, err := http.Post(f.ts.URL+"/v1/score", "application/json", strings.NewReader(general("42", 1, 2)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))

	<-f.srv.sem
	code, _ := f.do(t, "POST", "/v1/score", general("42", 1, 2))
	assert.Equal(t, http.StatusOK, code)
}

func TestSlowBodiesHoldNoSlot(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxInflight = 1 })
	// A body that has not finished arriving is being read, not scored.
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		resp, err := http.Post(f.ts.URL+"/v1/score/batch", "application/json", pr)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	_, err := pw.Write([]byte(`{"items":[`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.srv.mem.used.Load() > 0 }, 5*time.Second, time.Millisecond)

	code, _ := f.do(t, "POST", "/v1/score", general("42", 1, 2))
	assert.Equal(t, http.StatusOK, code, "the only slot is free while the other body arrives")

	_, err = pw.Write([]byte(general("42", 1, 2) + `]}`))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	assert.Equal(t, http.StatusOK, <-done)
	assert.Zero(t, f.srv.mem.used.Load(), "the memory reserved for bodies is given back")
}

func TestTimersOverHTTP(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"r-1","speed_factor":2,"time_limit_s":30}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)
	assert.Equal(t, "r-1", created["rollout_id"])

	// 3 s of generation (×2) then a 5 s tool call, reported by the caller
	// when it returns.
	f.clock.Advance(3 * time.Second)
	f.clock.Advance(5 * time.Second) // the tool span's wall time
	code, spanned := f.do(t, "POST", "/v1/timers/"+tok+"/spans", `{"seconds":5}`)
	require.Equal(t, 200, code, "%v", spanned)
	tok = spanned["timer"].(string)

	code, got := f.do(t, "POST", "/v1/tools/get_duration", `{"rollout_id":"r-1","timer":"`+tok+`"}`)
	require.Equal(t, 200, code, "%v", got)
	assert.Equal(t, "11.00 seconds.", got["text"]) // 2·(8−5) + 5
	code, byID := f.do(t, "POST", "/v1/tools/get_duration", `{"rollout_id":"r-1"}`)
	require.Equal(t, 200, code)
	assert.Equal(t, got["text"], byID["text"])

	code, mismatch := f.do(t, "POST", "/v1/tools/get_duration", `{"rollout_id":"r-2","timer":"`+tok+`"}`)
	assert.Equal(t, 400, code)
	assert.Equal(t, "rollout_id", errorOf(t, mismatch)["field"])

	// A reward reads the same timer, with the limit it was created with.
	item := fmt.Sprintf(`{"data_source":"timely/general","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"timer":%q}}`, tok)
	code, scored := f.do(t, "POST", "/v1/score", item)
	require.Equal(t, 200, code, "%v", scored)
	assert.Equal(t, 11.0, scored["elapsed_s"])
	assert.Equal(t, 30.0, scored["time_limit_s"])

	code, stopped := f.do(t, "DELETE", "/v1/timers/"+tok, "")
	require.Equal(t, 200, code)
	assert.Equal(t, true, stopped["stopped"])
	f.clock.Advance(time.Hour - 30*time.Second)
	code, later := f.do(t, "GET", "/v1/timers/"+stopped["timer"].(string), "")
	require.Equal(t, 200, code)
	assert.Equal(t, 11.0, later["elapsed_s"], "a stopped timer is frozen")

	f.clock.Advance(time.Minute)
	code, gone := f.do(t, "GET", "/v1/timers/"+tok, "")
	assert.Equal(t, http.StatusGone, code)
	assert.Equal(t, "timer_expired", errorOf(t, gone)["code"])
	code, late := f.do(t, "POST", "/v1/score/batch", `{"items":[`+item+`]}`)
	require.Equal(t, 200, code)
	assert.Contains(t, late["results"].([]any)[0].(map[string]any)["error"], "extra_info.timer: timer expired")
}

func TestOpenRLHF(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"query":["Q: 6*7? <answer>42</answer>","Q: 6*7? <answer>41</answer>","Q: 6*7? no answer"],
	          "prompts":["Q: 6*7? ","Q: 6*7? ","Q: 6*7? "],"labels":["42","42","42"]}`
	code, out := f.do(t, "POST", "/v1/openrlhf", body)
	require.Equal(t, 200, code, "%v", out)
	assert.Equal(t, []any{0.6, 0.1, 0.0}, out["rewards"])
	assert.Equal(t, out["rewards"], out["scores"])
	logs := out["extra_logs"].(map[string]any)
	assert.Equal(t, []any{1.0, 0.0, 0.0}, logs["acc"])
	assert.Equal(t, []any{1.0, 1.0, 0.0}, logs["format_ok"])
	assert.Equal(t, []any{0.0, 0.0, 0.0}, logs["failed"])

	code, out = f.do(t, "POST", "/v1/openrlhf?data_source=timepuzzles", `{"query":["MY ANSWER: 2024-02-29"],"labels":["2024-02-29"]}`)
	require.Equal(t, 200, code, "%v", out)
	assert.Equal(t, []any{1.0}, out["rewards"])
}

// TestOpenRLHFLabelItems: a label that is a whole item (an object, or
// text holding one, as a dataset's string column gives it) carries its data
// source and extra_info, so a Timely row gets its limit and measured time,
// and end-of-sequence tokens left by OpenRLHF's decoding do not matter.
func TestOpenRLHFLabelItems(t *testing.T) {
	f := newFixture(t, nil)
	sin45 := 0.1 + 0.5 + 0.4*math.Sin(math.Pi/4) // t/T = 0.5
	tests := []struct {
		name, path, query, label string
		reward                   float64
		failed                   float64
		logs                     map[string]float64
	}{
		{"object", "/v1/openrlhf", "<answer>21</answer><|im_end|>",
			`{"data_source": "timely/general", "ground_truth": "21", "extra_info": {"time_limit_s": 10, "elapsed_s": 5}}`,
			sin45, 0, map[string]float64{"on_time": 1, "time_limit_s": 10, "elapsed_s": 5}},
		{"text holding an object", "/v1/openrlhf", "<answer>21</answer></s>",
			`"{\"data_source\": \"timely/general\", \"ground_truth\": \"21\", \"extra_info\": {\"time_limit_s\": 10, \"elapsed_s\": 5}}"`,
			sin45, 0, map[string]float64{"utilization": math.Sin(math.Pi / 4)}},
		{"late", "/v1/openrlhf", "<answer>21</answer>",
			`{"ground_truth": "21", "extra_info": {"time_limit_s": 10, "elapsed_s": 11}}`, 0, 0, map[string]float64{"on_time": 0}},
		{"data source from the label beats the route", "/v1/openrlhf?data_source=timely/ml", "MY ANSWER: 2023-08-15<|eot_id|>",
			`{"data_source": "timepuzzles", "ground_truth": "2023-08-15"}`, 1, 0, map[string]float64{"em": 1}},
		{"route's data source when the label names none", "/v1/openrlhf?data_source=timepuzzles", "MY ANSWER: 2023-08-15<|im_end|>",
			`{"ground_truth": "2023-08-15", "extra_info": {}}`, 1, 0, map[string]float64{"f1": 1}},
		{"an object without ground_truth is the ground truth", "/v1/openrlhf?data_source=traveler", "ANSWER: 2<|im_end|>",
			`{"category": "explicit", "template": "how_often", "answer": 2}`, 1, 0, nil},
		{"unknown data source fails the item", "/v1/openrlhf", "x", `{"data_source": "nope", "ground_truth": "1"}`, 0, 1, nil},
		{"data source not a string", "/v1/openrlhf", "x", `{"data_source": 3, "ground_truth": "1"}`, 0, 1, nil},
		{"extra_info of the wrong type", "/v1/openrlhf", "<answer>21</answer>",
			`{"ground_truth": "21", "extra_info": {"time_limit_s": "ten"}}`, 0, 1, map[string]float64{"on_time": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"query": [` + strconv.Quote(tt.query) + `], "prompts": [""], "labels": [` + tt.label + `]}`
			code, out := f.do(t, "POST", tt.path, body)
			require.Equal(t, 200, code, "%v", out)
			require.Len(t, out["rewards"], 1)
			assert.InDelta(t, tt.reward, out["rewards"].([]any)[0], 1e-12)
			logs := out["extra_logs"].(map[string]any)
			assert.Equal(t, []any{tt.failed}, logs["failed"])
			for k, v := range tt.logs {
				require.Contains(t, logs, k)
				assert.InDelta(t, v, logs[k].([]any)[0], 1e-12, k)
			}
		})
	}

	// A mixed batch: every key of every data source present has one value
	// per query, zero where the query's reward lacks it.
	body := `{"query": ["<answer>21</answer>", "MY ANSWER: None"], "labels": [
		{"ground_truth": "21", "extra_info": {"time_limit_s": 10, "elapsed_s": 10}},
		{"data_source": "timepuzzles", "ground_truth": "None"}]}`
	code, out := f.do(t, "POST", "/v1/openrlhf", body)
	require.Equal(t, 200, code, "%v", out)
	assert.Equal(t, []any{1.0, 1.0}, out["rewards"])
	logs := out["extra_logs"].(map[string]any)
	assert.Equal(t, []any{1.0, 0.0}, logs["on_time"])
	assert.Equal(t, []any{0.0, 1.0}, logs["em"])
	assert.Equal(t, []any{0.0, 0.0}, logs["failed"])
}

// TestGolden pins the wire format of the registry and of a batch response.
func TestGolden(t *testing.T) {
	f := newFixture(t, nil)
	cases := []struct{ name, method, path, body string }{
		{"rewards", "GET", "/v1/rewards", ""},
		{"batch", "POST", "/v1/score/batch", `{"items":[` + general("42", 2.5, 10) + `,` + general("x", 2.5, 10) +
			`,{"data_source":"timely/game","extra_info":{"score":8,"max_score":64,"elapsed_s":30,"time_limit_s":60}}` +
			`,{"data_source":"timely/ml","extra_info":{"accuracy":0.9}}` +
			`,{"data_source":"timely/ml","extra_info":{}}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.ts.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, raw, "", "  "))
			golden := filepath.Join("testdata", tc.name+".golden.json")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./verifier -run TestGolden -update")
			assert.Equal(t, string(want), pretty.String())
		})
	}
}

// TestOpenAPIDescribesEveryRoute keeps the document and the routes in step.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	f := newFixture(t, nil)
	code, doc := f.do(t, "GET", "/openapi.json", "")
	require.Equal(t, 200, code)
	paths := doc["paths"].(map[string]any)
	for _, rt := range f.srv.routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		p, ok := paths[path].(map[string]any)
		if assert.True(t, ok, "openapi.json lacks path %s", path) {
			assert.Contains(t, p, strings.ToLower(method), "openapi.json lacks %s", rt.pattern)
		}
	}
	assert.Contains(t, paths, "/metrics")

	enum := doc["components"].(map[string]any)["schemas"].(map[string]any)["Item"].(map[string]any)["properties"].(map[string]any)["data_source"].(map[string]any)["enum"]
	var registered []any
	for _, r := range rewards.All {
		registered = append(registered, r.DataSource)
	}
	assert.Equal(t, registered, enum, "the Item schema lists every registered data source")
}

func TestMetricsCountBatches(t *testing.T) {
	f := newFixture(t, nil)
	// Clients report the items they gave their fallback; reports that are
	// not a whole number within the bound are ignored.
	for i, report := range []string{"5", "7", "-1"} {
		code, _ := f.do(t, "POST", "/v1/score/batch", `{"items":[`+general("42", 1, 2)+`,{"data_source":"timely/ml"}]}`,
			"Timeaware-Client-Fallbacks", report)
		require.Equal(t, 200, code, "request %d", i)
	}
	for _, bad := range []string{"x", "1.5", "99999999999", "1048577"} {
		code, _ := f.do(t, "POST", "/v1/score/batch", `{"items":[]}`, "Timeaware-Client-Fallbacks", bad)
		require.Equal(t, 200, code)
	}
	resp, err := http.Get(f.ts.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	for _, want := range []string{
		`timeaware_http_requests_total{code="200",route="/v1/score/batch"} 7`,
		`timeaware_client_fallback_items_total 12`,
		`timeaware_scored_items_total{data_source="timely/general",outcome="ok"} 3`,
		`timeaware_scored_items_total{data_source="timely/ml",outcome="error"} 3`,
		`timeaware_batch_items_count 7`,
		`timeaware_batch_items_sum 6`,
	} {
		assert.Contains(t, text, want)
	}
}

// FuzzScoreBatchRequest: no body crashes the service or breaks the contract
// (a 200 has one result per item; anything else is a JSON error).
func FuzzScoreBatchRequest(f *testing.F) {
	f.Add([]byte(`{"items":[` + general("42", 1, 2) + `]}`))
	f.Add([]byte(`{"items":[{"data_source":"tictoc/decision","solution_str":"<tool_call>{\"name\":\"x\"}</tool_call>","ground_truth":{"preferred":"tool","margin":1}}]}`))
	f.Add([]byte(`{"items":[{"data_source":"timepuzzles","solution_str":"MY ANSWER: None","ground_truth":"None"}, 3, null]}`))
	f.Add([]byte(`{"items":null}`))
	f.Add([]byte(`{"items":[{"extra_info":{"timer":"AAAA.BBBB","elapsed_s":-1}}]}`))
	clk := &testClock{t: time.Unix(1_800_000_000, 0)}
	store, _ := timers.New(timers.Options{Secret: []byte("fuzz secret that is long enough"), Now: clk.Now})
	scorer, _ := rewards.NewScorer(rewards.DefaultConfig(), store)
	srv, err := New(Options{Scorer: scorer, Timers: store, MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/score/batch", "/v1/score", "/v1/openrlhf"} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", path, bytes.NewReader(body)).WithContext(context.Background())
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			var out map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("%s: status %d: body is not JSON: %q", path, rec.Code, rec.Body.String())
			}
			switch {
			case rec.Code == 200 && path == "/v1/score/batch":
				var req struct{ Items []json.RawMessage }
				if json.Unmarshal(body, &req) == nil && len(out["results"].([]any)) != len(req.Items) {
					t.Fatalf("%d results for %d items", len(out["results"].([]any)), len(req.Items))
				}
			case rec.Code == 200:
			case rec.Code == 400 || rec.Code == 413:
				if _, ok := out["error"].(map[string]any); !ok {
					t.Fatalf("%s: status %d without an error object: %s", path, rec.Code, rec.Body)
				}
			default:
				t.Fatalf("%s: unexpected status %d: %s", path, rec.Code, rec.Body)
			}
		}
	})
}

func TestRequestTimeoutIs503WithRetryAfter(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.RequestTimeout = time.Nanosecond })
	resp, err := http.Post(f.ts.URL+"/v1/score/batch", "application/json", strings.NewReader(`{"items":[`+general("42", 1, 2)+`]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "timeout", errorOf(t, body)["code"])
}

// rawExchange writes raw bytes to the fixture's server and reads one
// response, as a client that does not follow the protocol would.
func rawExchange(t *testing.T, f *fixture, raw string, within time.Duration) (int, map[string]any) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte(raw))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(within)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.True(t, resp.Close, "a bad body closes its connection")
	return resp.StatusCode, out
}

func TestBadBodiesOnTheWire(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeout = 300 * time.Millisecond; o.MaxBodyBytes = 1 << 20 })
	head := "POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	tests := []struct {
		name, raw   string
		status      int
		code, field string
	}{
		{"malformed chunk size", head + "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n", 400, "malformed_body", "body"},
		{"stalled body", head + "Content-Length: 100\r\n\r\n{\"items\":", 408, "body_timeout", "body"},
		{"announced over the limit", head + "Content-Length: 67108864\r\n\r\n", 413, "body_too_large", "body"},
		{"chunked over the limit", head + "Transfer-Encoding: chunked\r\n\r\n100001\r\n" + strings.Repeat("x", 1<<20+1) + "\r\n0\r\n\r\n", 413, "body_too_large", "body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, body := rawExchange(t, f, tc.raw, 5*time.Second)
			assert.Equal(t, tc.status, code, "%v", body)
			e := errorOf(t, body)
			assert.Equal(t, tc.code, e["code"])
			assert.Equal(t, tc.field, e["field"])
			assert.Less(t, time.Since(start), 2*time.Second)
		})
	}
	assert.Zero(t, f.srv.mem.used.Load(), "every reservation was given back")
}

func TestMemoryBudgetShedsWith429(t *testing.T) {
	// (a small head bound, so that a budget this small is allowed)
	f := newFixture(t, func(o *Options) { o.MemoryBudget = 100 << 10; o.MaxHeaderBytes = 512 })
	// A 60 KB batch needs its bytes plus twice them for decoding: 180 KB.
	big := `{"items":[` + strings.Repeat(general("42", 1, 2)+",", 400) + general("42", 1, 2) + `]}`
	require.Greater(t, len(big), 50<<10)
	code, body := f.do(t, "POST", "/v1/score/batch", big)
	require.Equal(t, http.StatusTooManyRequests, code, "%v", body)
	assert.Equal(t, "overloaded", errorOf(t, body)["code"])
	assert.Contains(t, errorOf(t, body)["message"], "memory")
	code, _ = f.do(t, "POST", "/v1/score/batch", `{"items":[`+general("42", 1, 2)+`]}`)
	assert.Equal(t, http.StatusOK, code, "a request that fits is served")
	assert.Zero(t, f.srv.mem.used.Load())

	resp, err := http.Get(f.ts.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(metrics), `timeaware_shed_requests_total{reason="memory"} 1`)
}

// TestLargeBodiesLeaveAQuarterForSmallOnes: requests holding more than a
// 64th of the memory budget share three quarters of it; the rest stays for
// small requests, which large bodies held open cannot shut out.
func TestLargeBodiesLeaveAQuarterForSmallOnes(t *testing.T) {
	b := &memBudget{limit: 64 << 10} // large: over 1 KiB; large share: 48 KiB
	require.True(t, b.take(40<<10, 40<<10), "a large request within three quarters")
	assert.False(t, b.take(10<<10, 10<<10), "another large one would pass three quarters")
	assert.True(t, b.take(8<<10, 8<<10), "up to exactly three quarters")
	assert.False(t, b.take(1, 48<<10+1), "a large request growing past them")
	for range 16 {
		require.True(t, b.take(1<<10, 1<<10), "small requests use the last quarter")
	}
	assert.False(t, b.take(1, 1), "and no more")
	assert.Equal(t, int64(64<<10), b.used.Load())
	b.give(64 << 10)

	// Over HTTP: bodies of large requests held open do not shut out a
	// small request. Each step waits for the reservation it makes.
	f := newFixture(t, func(o *Options) { o.MemoryBudget = 4 << 20; o.BodyTimeout = time.Minute })
	used := f.srv.mem.used.Load
	addr := strings.TrimPrefix(f.ts.URL, "http://")
	send := func(body int) net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		head := fmt.Sprintf("POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2<<20)
		_, err = c.Write(append([]byte(head), bytes.Repeat([]byte(" "), body)...))
		require.NoError(t, err)
		return c
	}
	// 1 MiB of a 2 MiB body fills 1 MiB of room, reserved as it doubled
	// from 64 KiB, and the next 1 MiB, reserved before it is read: 2 MiB.
	send(1 << 20)
	waitFor(t, func() bool { return used() == 2<<20 }, "the first body holds 2 MiB")
	// 512 KiB of another: 1 MiB, three quarters of the budget in all.
	send(512 << 10)
	waitFor(t, func() bool { return used() == 3<<20 }, "the second body holds 1 MiB")
	// A third fills its first 64 KiB from the whole budget, then, large,
	// may not grow past three quarters: 429.
	c := send(64 << 10)
	resp := readAnswer(t, c)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "overloaded", errorCode(t, resp.Body))
	waitFor(t, func() bool { return used() == 3<<20 }, "the refused body gives its reservation back")
	// A small request is served from the quarter kept for small ones.
	code, body := f.do(t, "POST", "/v1/score/batch", `{"items":[`+general("42", 1, 2)+`]}`)
	assert.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, int64(3<<20), used(), "the small request gives back what it took")
}

// trickle is a request body that hands out at most a few bytes per read
// and checks, at every read, that the bytes the server has read and may
// read now are reserved: the request is the only one on its server.
type trickle struct {
	t       *testing.T
	srv     *Server
	data    []byte
	read    int
	overrun int // the largest excess of a read over the reservation
}

func (r *trickle) Read(p []byte) (int, error) {
	if over := int64(r.read+len(p)) - r.srv.mem.used.Load(); over > int64(r.overrun) {
		r.overrun = int(over)
	}
	if r.read == len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.read:min(len(r.data), r.read+3000)])
	r.read += n
	return n, nil
}

func (r *trickle) Close() error { return nil }

// TestBodiesAreReadOnlyIntoReservedRoom: a buffer from the pool larger
// than what is reserved for it is read only up to the reservation, so the
// memory budget counts every byte a body holds.
func TestBodiesAreReadOnlyIntoReservedRoom(t *testing.T) {
	for _, announced := range []bool{true, false} {
		t.Run(fmt.Sprintf("length announced %v", announced), func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.bodies.New = func() any { return bytes.NewBuffer(make([]byte, 0, 4<<20)) }
			data := []byte(`{"items":[` + strings.Repeat(general("42", 1, 2)+",", 2000) + general("42", 1, 2) + `]}`)
			body := &trickle{t: t, srv: f.srv, data: data}
			req := httptest.NewRequest("POST", "/v1/score/batch", body)
			req.ContentLength = -1
			if announced {
				req.ContentLength = int64(len(data))
			}
			b, err := f.srv.readBody(httptest.NewRecorder(), req)
			require.NoError(t, err)
			defer b.release()
			assert.Equal(t, data, b.buf.Bytes())
			assert.Zero(t, body.overrun, "bytes read past the reservation")
			assert.GreaterOrEqual(t, f.srv.mem.used.Load(), int64(len(data))*(1+decodeFactor))
		})
	}
}

func TestReadinessFailsFirstOnShutdown(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.do(t, "GET", "/readyz", "")
	require.Equal(t, http.StatusOK, code, "%v", body)
	f.srv.stopping.Store(true) // what Serve does first when its context ends
	code, body = f.do(t, "GET", "/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "shutting_down", errorOf(t, body)["code"])
	code, _ = f.do(t, "GET", "/healthz", "")
	assert.Equal(t, http.StatusOK, code, "liveness holds while draining")
	resp, err := http.Post(f.ts.URL+"/v1/score", "application/json", strings.NewReader(general("42", 1, 2)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "requests are still served")
	assert.True(t, resp.Close, "with Connection: close, so clients move their connections")
}

// TestNegotiationEnvironment: an episode played over HTTP, one step at a
// time: the first step sends the row and the rollout's timer, each later
// one the state the previous step returned; the agent's think time is its
// timer's.
func TestNegotiationEnvironment(t *testing.T) {
	f := newFixture(t, nil)
	gt := `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
		`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}},` +
		`{"id":"start","options":["June","July"],"points":{"cand":[0,2],"hr":[3,0]}}]},` +
		`"role":"cand","condition":"time_aware","deadline_s":60,"first_speaker":"cand"}`
	propose := `{"text":"I propose a middle salary and a June start.","action":{"action":"propose","offer":{"salary":"mid","start":"June"}}}`
	timer := func(rollout string) string {
		code, tm := f.do(t, "POST", "/v1/timers", `{"rollout_id":"`+rollout+`"}`)
		require.Equal(t, 201, code, "%v", tm)
		return tm["timer"].(string)
	}

	// A hard-liner counters with its best; the agent, 2 s into its
	// rollout, sees the time left.
	tm := timer("neg-1")
	f.clock.Advance(2 * time.Second)
	code, body := f.do(t, "POST", "/v1/envs/negotiation/step", `{"ground_truth":`+gt+`,"turn_prefix":"[{seconds} seconds left]","timer":"`+tm+`","message":`+propose+`}`)
	require.Equal(t, 200, code, "%v", body)
	assert.Equal(t, false, body["done"])
	assert.Nil(t, body["score"])
	assert.Equal(t, "[52 seconds left]\n"+`{"text":"Here is what I can offer.","action":{"action":"propose","offer":{"salary":"low","start":"June"}}}`, body["shown"])
	assert.InDelta(t, 2, body["transcript"].([]any)[0].(map[string]any)["think_s"], 1e-9)
	state, ok := body["state"].(string)
	require.True(t, ok, "%v", body)

	// The agent accepts: the episode ends, scored (0 points of 0–10).
	code, body = f.do(t, "POST", "/v1/envs/negotiation/step", `{"state":"`+state+`","timer":"`+tm+`","message":{"text":"Fine.","action":{"action":"accept"}}}`)
	require.Equal(t, 200, code, "%v", body)
	assert.Equal(t, true, body["done"])
	assert.Nil(t, body["reply"])
	assert.Equal(t, 0.0, body["score"])
	assert.Equal(t, 1.0, body["details"].(map[string]any)["deal"])
	assert.Len(t, body["transcript"], 3)

	// A conceding opponent accepts the first proposal: 0.4.
	code, body = f.do(t, "POST", "/v1/envs/negotiation/step", `{"ground_truth":`+gt+`,"opponent":{"beta":10},"timer":"`+timer("neg-2")+`","message":`+propose+`}`)
	require.Equal(t, 200, code, "%v", body)
	assert.Equal(t, true, body["done"])
	assert.InDelta(t, 0.4, body["score"], 1e-12)

	// 50 s of thinking are charged: 2 s are left after the opponent's
	// counter.
	tm = timer("neg-3")
	f.clock.Advance(50 * time.Second)
	code, body = f.do(t, "POST", "/v1/envs/negotiation/step", `{"ground_truth":`+gt+`,"turn_prefix":"[{seconds} seconds left]","timer":"`+tm+`","message":{"text":"Let me think about a big and generous proposal for you now.","action":{"action":"message"}}}`)
	require.Equal(t, 200, code, "%v", body)
	msgs := body["transcript"].([]any)
	assert.InDelta(t, 50, msgs[0].(map[string]any)["think_s"], 1e-9)
	assert.True(t, strings.HasPrefix(body["shown"].(string), "[2 seconds left]\n"), "%v", body["shown"])

	tm = timer("neg-4")
	for _, tc := range []struct{ body, code, field string }{
		{`{"ground_truth":{"scenario":{}},"timer":"` + tm + `","message":{"text":"x"}}`, "invalid_request", "ground_truth.scenario.id"},
		{`{"timer":"` + tm + `","message":{"text":"x"}}`, "invalid_request", "ground_truth"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","message":{"text":"x","think_s":-1}}`, "invalid_request", "message.think_s"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","opponent":{"beta":-1},"message":{"text":"x"}}`, "invalid_request", "opponent.beta"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","opponent":{"beta":1,"speed":2},"message":{"text":"x"}}`, "malformed_json", "opponent.speed"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","opponent":{"beta":"low"},"message":{"text":"x"}}`, "invalid_json", "opponent.beta"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","opponent":[],"message":{"text":"x"}}`, "invalid_json", "opponent"},
		{`{"ground_truth":` + gt + `,"timer":"` + tm + `","turn_prefix":5,"message":{"text":"x"}}`, "invalid_json", "turn_prefix"},
		{`{"ground_truth":` + gt + `,"timer":"not.a-timer","message":{"text":"x"}}`, "invalid_timer", "timer"},
		{`{"ground_truth":` + gt + `,"timer":"nobody","message":{"text":"x"}}`, "timer_not_found", "timer"},
	} {
		code, body := f.do(t, "POST", "/v1/envs/negotiation/step", tc.body)
		assert.Contains(t, []int{400, 404}, code, "%s: %v", tc.body, body)
		assert.Equal(t, tc.code, errorOf(t, body)["code"], "%s", tc.body)
		assert.Equal(t, tc.field, errorOf(t, body)["field"], "%s", tc.body)
	}
}

// TestNegotiationModelOpponent: a server configured with a model opponent
// lets it answer steps that ask for it.
func TestNegotiationModelOpponent(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"{\"text\": \"Agreed.\", \"action\": {\"action\": \"accept\"}}"}}]}`)
	}))
	defer model.Close()
	c, err := chat.New(chat.Options{URL: model.URL, Model: "opponent"})
	require.NoError(t, err)
	gt := `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
		`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}}]},` +
		`"role":"cand","condition":"control","deadline_s":60,"first_speaker":"cand"}`
	f := newFixture(t, func(o *Options) { o.NegotiationOpponent = negotiation.ModelOpponent{Client: c} })
	code, tm := f.do(t, "POST", "/v1/timers", `{"rollout_id":"model-1"}`)
	require.Equal(t, 201, code, "%v", tm)
	step := `{"ground_truth":` + gt + `,"opponent":{"kind":"model"},"timer":"` + tm["timer"].(string) + `","message":{"text":"Mid?","action":{"action":"propose","offer":{"salary":"mid"}}}}`
	code, body := f.do(t, "POST", "/v1/envs/negotiation/step", step)
	require.Equal(t, 200, code, "%v", body)
	assert.Equal(t, true, body["done"])
	assert.InDelta(t, 0.5, body["score"], 1e-12, "4 of the candidate's 0–8 points")

	// The timer's token reads on a server of the same secret.
	bare := newFixture(t, nil)
	code, body = bare.do(t, "POST", "/v1/envs/negotiation/step", step)
	assert.Equal(t, 400, code)
	assert.Equal(t, "opponent.kind", errorOf(t, body)["field"])
	code, body = bare.do(t, "POST", "/v1/envs/negotiation/step", strings.Replace(step, `"model"`, `"human"`, 1))
	assert.Equal(t, 400, code)
	assert.Contains(t, errorOf(t, body)["message"], `"human" is not scripted or model`)
}

// TestAFullTimerIndexIs503: past the timers it may hold, the service
// refuses a new timer with 503 and Retry-After (the time until the first
// timer held expires), counts the refusal, and reports what it holds.
func TestAFullTimerIndexIs503(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	store, err := timers.New(timers.Options{Secret: []byte("verifier test secret, 32 bytes.."), Now: clk.Now, MaxRollouts: 2})
	require.NoError(t, err)
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	require.NoError(t, err)
	srv, err := New(Options{Scorer: scorer, Timers: store})
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	create := func(id string) *http.Response {
		resp, err := http.Post(ts.URL+"/v1/timers", "application/json", strings.NewReader(`{"rollout_id":"`+id+`","ttl_s":90.5}`))
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, id := range []string{"a", "b"} {
		require.Equal(t, http.StatusCreated, create(id).StatusCode)
	}
	resp := create("c")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "91", resp.Header.Get("Retry-After"), "90.5 s until the first expires, rounded up")
	assert.Equal(t, "timer_index_full", errorCode(t, resp.Body))
	assert.Equal(t, 1.0, counterValue(t, srv.metrics.timers.WithLabelValues("create", "full")))

	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.Contains(t, rec.Body.String(), "\ntimeaware_timers_held 2\n")
	assert.Contains(t, rec.Body.String(), "\ntimeaware_timer_index_bytes 800\n", "two timers of 384 bytes and a one-byte id's 16")
	assert.Contains(t, rec.Body.String(), "\ntimeaware_timer_index_limit_bytes 2.68435456e+08\n")

	// Once the first expires, its room is taken again.
	clk.Advance(91 * time.Second)
	assert.Equal(t, http.StatusCreated, create("c").StatusCode)
}
