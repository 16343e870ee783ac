package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
)

func text(s string) *string { return &s }

// server answers every request with handle and records the bodies.
func server(t *testing.T, handle func(w http.ResponseWriter, body map[string]any, n int)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(hits.Add(1)) - 1
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		w.Header().Set("Content-Type", "application/json")
		handle(w, body, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

const toolCallReply = `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":"get_duration","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`

func TestNewDefaultsAndValidation(t *testing.T) {
	c, err := New(Options{URL: "https://api.example.com/v1/", Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com/v1/chat/completions", c.Endpoint())
	assert.Equal(t, "m", c.Model())
	assert.Equal(t, DefaultConcurrency, cap(c.sem))
	assert.Equal(t, DefaultMaxRetries, c.maxRetries)
	assert.Equal(t, DefaultBackoff, c.backoff)
	assert.Equal(t, DefaultTimeout, c.timeout)

	c, err = New(Options{URL: "http://h:1/v1/chat/completions", Model: "m", MaxRetries: -1})
	require.NoError(t, err)
	assert.Equal(t, "http://h:1/v1/chat/completions", c.Endpoint(), "a full URL is used as is")
	assert.Zero(t, c.maxRetries)

	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Model: "m"}, "chat: url is required"},
		{Options{Name: "eval", Model: "m"}, "eval: url is required"},
		{Options{URL: "ftp://h/v1", Model: "m"}, `chat: url "ftp://h/v1": scheme must be http or https`},
		{Options{URL: "http:///v1", Model: "m"}, "missing host"},
		{Options{URL: "http://h/v1"}, "chat: model is required"},
		{Options{URL: "http://h/v1", Model: "m", Concurrency: -2}, "concurrency must not be negative, got -2"},
		{Options{URL: "http://h/v1", Model: "m", Backoff: -1}, "backoff must not be negative"},
		{Options{URL: "http://h/v1", Model: "m", Timeout: -1}, "timeout must not be negative"},
	} {
		_, err := New(tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
}

func TestCompleteReadsToolCallsAndCachesThem(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, toolCallReply)
	})
	dir := t.TempDir()
	c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: dir})
	require.NoError(t, err)
	req := Request{
		Messages:   []conversation.Message{{Role: "user", Content: text("How long has it been?")}},
		Tools:      []conversation.Tool{{Function: conversation.ToolFunction{Name: "get_duration", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}},
		ToolChoice: "auto",
	}
	r, err := c.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []conversation.ToolCall{{ID: "call_7", Type: "function", Function: conversation.FunctionCall{Name: "get_duration", Arguments: "{}"}}}, r.ToolCalls)
	assert.Empty(t, r.Content)
	assert.Equal(t, "tool_calls", r.FinishReason)
	assert.GreaterOrEqual(t, r.Latency, 20*time.Millisecond, "latency covers the model's time")
	assert.False(t, r.Cached)

	again, err := c.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, again.Cached)
	assert.Equal(t, r.ToolCalls, again.ToolCalls)
	assert.Equal(t, r.FinishReason, again.FinishReason)
	assert.InDelta(t, r.Latency.Seconds(), again.Latency.Seconds(), 1e-6, "the first answer's latency is kept")
	assert.EqualValues(t, 1, hits.Load())
	assert.Equal(t, Stats{Requests: 1, CacheHits: 1}, c.Stats())
}

func TestRequestBody(t *testing.T) {
	var got map[string]any
	srv, _ := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		got = body
		io.WriteString(w, `{"choices":[{"message":{"content":" 42 \n"},"finish_reason":"stop"}]}`)
	})
	c, err := New(Options{URL: srv.URL, Model: "tiny"})
	require.NoError(t, err)
	seed := int64(7)
	r, err := c.Complete(context.Background(), Request{
		Messages: []conversation.Message{
			{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "a", Type: "function", Function: conversation.FunctionCall{Name: "get_duration", Arguments: "{}"}}}},
			{Role: "tool", ToolCallID: "a", Content: text("1.00 seconds.")},
		},
		Temperature: 0.7, MaxTokens: 64, Seed: &seed,
	})
	require.NoError(t, err)
	assert.Equal(t, "42", r.Content)
	assert.Equal(t, "tiny", got["model"])
	assert.Equal(t, 0.7, got["temperature"])
	assert.EqualValues(t, 64, got["max_tokens"])
	assert.EqualValues(t, 7, got["seed"])
	assert.NotContains(t, got, "tools")
	assert.NotContains(t, got, "tool_choice")
	msgs := got["messages"].([]any)
	assert.Nil(t, msgs[0].(map[string]any)["content"], "a tool-calling turn may have null content")
	assert.Equal(t, "a", msgs[1].(map[string]any)["tool_call_id"])
}

func TestSeedsAreCachedApart(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		fmt.Fprintf(w, `{"choices":[{"message":{"content":"sample %v"}}]}`, body["seed"])
	})
	c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: t.TempDir()})
	require.NoError(t, err)
	ask := func(seed int64) string {
		r, err := c.Complete(context.Background(), Request{Messages: []conversation.Message{{Role: "user", Content: text("q")}}, Seed: &seed})
		require.NoError(t, err)
		return r.Content
	}
	assert.Equal(t, "sample 1", ask(1))
	assert.Equal(t, "sample 2", ask(2))
	assert.Equal(t, "sample 1", ask(1))
	assert.EqualValues(t, 2, hits.Load())
}

func TestCheckRejectsWithoutRetryOrCache(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		io.WriteString(w, toolCallReply)
	})
	dir := t.TempDir()
	c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: dir})
	require.NoError(t, err)
	errTools := errors.New("no tools wanted")
	req := Request{Messages: []conversation.Message{{Role: "user", Content: text("q")}}, Check: func(r Reply) error {
		if len(r.ToolCalls) > 0 {
			return errTools
		}
		return nil
	}}
	_, err = c.Complete(context.Background(), req)
	require.ErrorIs(t, err, errTools)
	assert.EqualValues(t, 1, hits.Load())
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
	assert.EqualValues(t, 1, c.Stats().Failures)

	// Without the check the same reply is a reply, and is cached; a later
	// call with the check does not take the cached reply.
	req.Check = nil
	_, err = c.Complete(context.Background(), req)
	require.NoError(t, err)
	req.Check = func(Reply) error { return errTools }
	_, err = c.Complete(context.Background(), req)
	require.ErrorIs(t, err, errTools)
	assert.EqualValues(t, 3, hits.Load())
}

func TestEmptyRepliesAreCachedAndContentOnlyEntriesRead(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		io.WriteString(w, `{"choices":[{"message":{"content":""},"finish_reason":"length"}]}`)
	})
	dir := t.TempDir()
	c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: dir})
	require.NoError(t, err)
	req := Request{Messages: []conversation.Message{{Role: "user", Content: text("q")}}}
	for range 2 {
		r, err := c.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Empty(t, r.Content)
		assert.Equal(t, "length", r.FinishReason)
	}
	assert.EqualValues(t, 1, hits.Load(), "an empty answer is an answer: not asked twice")

	// An entry from before tool calls and latencies were kept.
	var path string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			path = p
		}
		return err
	}))
	require.NoError(t, os.WriteFile(path, []byte(`{"content":"old answer"}`), 0o644))
	r, err := c.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, Reply{Content: "old answer", Cached: true}, r)
	for _, bad := range []string{`{"content":"x","latency_s":-1}`, `[1]`, ``} {
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		r, err := c.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.False(t, r.Cached, "%q is a miss", bad)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		if n == 0 {
			w.Header().Set("Retry-After", "0.2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"}}]}`)
	})
	c, err := New(Options{URL: srv.URL, Model: "m", Backoff: time.Hour})
	require.NoError(t, err)
	start := time.Now()
	r, err := c.Complete(context.Background(), Request{Messages: []conversation.Message{{Role: "user", Content: text("q")}}})
	require.NoError(t, err)
	assert.Equal(t, "ok", r.Content)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	assert.Less(t, time.Since(start), 10*time.Second, "Retry-After wins over the hour-long backoff")
	assert.EqualValues(t, 2, hits.Load())
	assert.Equal(t, Stats{Requests: 2, Retries: 1}, c.Stats())
}

func TestBadRequests(t *testing.T) {
	c, err := New(Options{URL: "http://127.0.0.1:1/v1", Model: "m"})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), Request{})
	assert.EqualError(t, err, "no messages")
	_, err = c.Complete(context.Background(), Request{Messages: []conversation.Message{{Role: "user"}}, Temperature: -1})
	assert.ErrorContains(t, err, "must not be negative")
	assert.EqualValues(t, 2, c.Stats().Failures)
	assert.Zero(t, c.Stats().Requests)
}

func TestParseRetryAfter(t *testing.T) {
	assert.Equal(t, 1500*time.Millisecond, parseRetryAfter(" 1.5 "))
	assert.Equal(t, maxWait, parseRetryAfter("3600"))
	assert.Equal(t, time.Duration(-1), parseRetryAfter(""))
	assert.Equal(t, time.Duration(-1), parseRetryAfter("-2"))
	assert.Equal(t, time.Duration(-1), parseRetryAfter("soon"))
	d := parseRetryAfter(time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat))
	assert.InDelta(t, 30, d.Seconds(), 2, "an HTTP date")
	assert.Equal(t, time.Duration(0), parseRetryAfter(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)))
}

func intp(n int) *int { return &n }

// TestUsageAndReasoningAreReadAndCached: the server's token counts and its
// separate reasoning text come back with the reply, and a cached reply
// has the same; a reply without usage has unknown counts, not zero.
func TestUsageAndReasoningAreReadAndCached(t *testing.T) {
	for _, tc := range []struct {
		name, body        string
		reasoning         string
		completion, think *int
	}{
		{"vllm reasoning_content", `{"choices":[{"message":{"content":" 42 ","reasoning_content":"\nsix times seven\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":17,"total_tokens":26}}`,
			"six times seven", intp(17), nil},
		{"newer vllm reasoning", `{"choices":[{"message":{"content":"42","reasoning":"six times seven"}}],"usage":{"completion_tokens":17,"completion_tokens_details":{"reasoning_tokens":11}}}`,
			"six times seven", intp(17), intp(11)},
		{"empty reasoning_content, reasoning set", `{"choices":[{"message":{"content":"42","reasoning_content":"","reasoning":"r"}}],"usage":{"completion_tokens":3}}`,
			"r", intp(3), nil},
		{"openai zero reasoning", `{"choices":[{"message":{"content":"42"}}],"usage":{"completion_tokens":0,"completion_tokens_details":{"reasoning_tokens":0}}}`,
			"", intp(0), intp(0)},
		{"no usage", `{"choices":[{"message":{"content":"42"}}]}`, "", nil, nil},
		{"null usage", `{"choices":[{"message":{"content":"42"}}],"usage":null}`, "", nil, nil},
		// odd usage never fails the reply: a whole float counts, anything else is unknown
		{"float counts", `{"choices":[{"message":{"content":"42"}}],"usage":{"completion_tokens":12.0,"completion_tokens_details":{"reasoning_tokens":4.5}}}`,
			"", intp(12), nil},
		{"counts of nines", `{"choices":[{"message":{"content":"42","reasoning":"r"}}],"usage":{"completion_tokens":97,"completion_tokens_details":{"reasoning_tokens":9}}}`,
			"r", intp(97), intp(9)},
		{"odd types", `{"choices":[{"message":{"content":"42","reasoning":7,"reasoning_content":{"a":1}}}],"usage":{"completion_tokens":"12","completion_tokens_details":{"reasoning_tokens":null}}}`,
			"", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) { io.WriteString(w, tc.body) })
			c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: t.TempDir()})
			require.NoError(t, err)
			req := Request{Messages: []conversation.Message{{Role: "user", Content: text("6 x 7?")}}}
			first, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			again, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load())
			for _, r := range []Reply{first, again} {
				assert.Equal(t, "42", r.Content)
				assert.Equal(t, tc.reasoning, r.Reasoning)
				assert.Equal(t, tc.completion, r.CompletionTokens)
				assert.Equal(t, tc.think, r.ReasoningTokens)
			}
			assert.True(t, again.Cached)
		})
	}
}

// TestNegativeUsageIsAnError: a server that reports a negative count is
// refused, not retried and not cached; a cache entry with one is a miss.
func TestNegativeUsageIsAnError(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, body map[string]any, n int) {
		io.WriteString(w, `{"choices":[{"message":{"content":"x"}}],"usage":{"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":-1}}}`)
	})
	dir := t.TempDir()
	c, err := New(Options{URL: srv.URL, Model: "m", CacheDir: dir})
	require.NoError(t, err)
	req := Request{Messages: []conversation.Message{{Role: "user", Content: text("q")}}}
	_, err = c.Complete(context.Background(), req)
	assert.ErrorContains(t, err, "usage.completion_tokens_details.reasoning_tokens is -1: must not be negative")
	assert.EqualValues(t, 1, hits.Load())

	path := c.cachePath(mustJSON(t, c.wire(req)))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(`{"content":"x","completion_tokens":-3}`), 0o644))
	_, ok := readCache(path)
	assert.False(t, ok)
	require.NoError(t, os.WriteFile(path, []byte(`{"content":"x","completion_tokens":3,"reasoning":"r"}`), 0o644))
	r, ok := readCache(path)
	require.True(t, ok)
	assert.Equal(t, Reply{Content: "x", Reasoning: "r", CompletionTokens: intp(3), Cached: true}, r)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
