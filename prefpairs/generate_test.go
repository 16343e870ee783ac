package prefpairs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

	"github.com/timeaware/timeaware/conversation"
)

func strp(s string) *string { return &s }

// fakeServer is a scripted OpenAI-compatible chat-completions server.
type fakeServer struct {
	*httptest.Server
	hits atomic.Int64

	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
}

// handlerFunc answers the n-th request (0-based).
type handlerFunc func(w http.ResponseWriter, r *http.Request, n int)

func newFakeServer(t *testing.T, h handlerFunc) *fakeServer {
	t.Helper()
	s := &fakeServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1)) - 1
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) body(i int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

func reply(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, content)
}

func okHandler(content string) handlerFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { reply(w, content) }
}

func newGen(t *testing.T, opt GeneratorOptions) *DirectGenerator {
	t.Helper()
	if opt.Model == "" {
		opt.Model = "test-model"
	}
	if opt.Backoff == 0 {
		opt.Backoff = time.Millisecond
	}
	g, err := NewDirectGenerator(opt)
	require.NoError(t, err)
	return g
}

func sampleRequest() DirectRequest {
	return DirectRequest{
		Key: SampleKey{ID: "flight_1", Elapse: 2},
		Messages: []conversation.Message{
			{Role: "system", Content: strp("You are a travel agent.")},
			{Role: "user", Content: strp("Is flight UA100 on time?")},
			{Role: "assistant", ToolCalls: []conversation.ToolCall{{
				ID: "call_1", Type: "function",
				Function: conversation.FunctionCall{Name: "flight_status", Arguments: `{"flight":"UA100"}`},
			}}},
			{Role: "tool", ToolCallID: "call_1", Name: "flight_status", Content: strp(`{"status":"on time"}`)},
			{Role: "assistant", Content: strp("UA100 is on time.")},
			{Role: "user", Content: strp("Is it still on time?")},
		},
		Tools: []conversation.Tool{{
			Type: "function",
			Function: conversation.ToolFunction{
				Name: "flight_status", Description: "Look up a flight.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"flight":{"type":"string"}}}`),
			},
		}},
	}
}

func TestGenerateDirectSuccessRequestBody(t *testing.T) {
	srv := newFakeServer(t, okHandler("  It was on time when last checked.  "))
	g := newGen(t, GeneratorOptions{URL: srv.URL + "/v1", APIKey: "sk-test", Temperature: 0.25, MaxTokens: 64})

	got, err := g.Generate(context.Background(), sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, "It was on time when last checked.", got)

	require.EqualValues(t, 1, srv.hits.Load())
	assert.Equal(t, "/v1/chat/completions", srv.paths[0])
	assert.Equal(t, "Bearer sk-test", srv.headers[0].Get("Authorization"))
	assert.Equal(t, "application/json", srv.headers[0].Get("Content-Type"))

	b := srv.body(0)
	assert.Equal(t, "test-model", b["model"])
	assert.Equal(t, "none", b["tool_choice"])
	assert.EqualValues(t, 0.25, b["temperature"])
	assert.EqualValues(t, 64, b["max_tokens"])

	tools := b["tools"].([]any)
	require.Len(t, tools, 1)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, "flight_status", fn["name"])
	assert.Equal(t, "object", fn["parameters"].(map[string]any)["type"])

	msgs := b["messages"].([]any)
	require.Len(t, msgs, 6, "instruction is merged, not added as a message")
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.(map[string]any)["role"].(string)
	}
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "user"}, roles)

	sys := msgs[0].(map[string]any)
	assert.Equal(t, "You are a travel agent.\n\n"+DefaultDirectInstruction, sys["content"])

	call := msgs[2].(map[string]any)
	require.Contains(t, call, "content")
	assert.Nil(t, call["content"], "assistant tool-call turn keeps null content")
	assert.NotContains(t, call, "tool_call_id")
	assert.NotContains(t, call, "name")
	tc := call["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, "call_1", tc["id"])
	assert.Equal(t, "function", tc["type"])
	assert.Equal(t, `{"flight":"UA100"}`, tc["function"].(map[string]any)["arguments"], "arguments are JSON text")

	tool := msgs[3].(map[string]any)
	assert.Equal(t, "call_1", tool["tool_call_id"])
	assert.Equal(t, "flight_status", tool["name"])
	assert.NotContains(t, tool, "tool_calls")

	last := msgs[5].(map[string]any)
	assert.Equal(t, "Is it still on time?", last["content"])
	assert.NotContains(t, last, "tool_calls")

	assert.Equal(t, GeneratorStats{Requests: 1}, g.Stats())
}

func TestGenerateDirectBodyVariants(t *testing.T) {
	tests := []struct {
		name        string
		opt         GeneratorOptions
		req         DirectRequest
		wantFirst   string
		wantLen     int
		wantTools   bool
		wantMaxToks bool
		wantAuth    bool
	}{
		{
			name: "no system message inserts one first, no tools omits tools and tool_choice",
			opt:  GeneratorOptions{Instruction: "Answer now."},
			req: DirectRequest{Key: SampleKey{ID: "a"}, Messages: []conversation.Message{
				{Role: "user", Content: strp("hi")},
			}},
			wantFirst: "Answer now.",
			wantLen:   2,
		},
		{
			name: "empty system message becomes the instruction",
			opt:  GeneratorOptions{Instruction: "Answer now.", MaxTokens: 10, APIKey: "k"},
			req: DirectRequest{Key: SampleKey{ID: "b"}, Messages: []conversation.Message{
				{Role: "system", Content: nil},
				{Role: "user", Content: strp("hi")},
			}, Tools: sampleRequest().Tools},
			wantFirst:   "Answer now.",
			wantLen:     2,
			wantTools:   true,
			wantMaxToks: true,
			wantAuth:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, okHandler("ok"))
			tt.opt.URL = srv.URL
			g := newGen(t, tt.opt)
			_, err := g.Generate(context.Background(), tt.req)
			require.NoError(t, err)
			b := srv.body(0)
			msgs := b["messages"].([]any)
			require.Len(t, msgs, tt.wantLen)
			first := msgs[0].(map[string]any)
			assert.Equal(t, "system", first["role"])
			assert.Equal(t, tt.wantFirst, first["content"])
			_, hasTools := b["tools"]
			_, hasChoice := b["tool_choice"]
			_, hasMax := b["max_tokens"]
			assert.Equal(t, tt.wantTools, hasTools)
			assert.Equal(t, tt.wantTools, hasChoice)
			assert.Equal(t, tt.wantMaxToks, hasMax)
			assert.Contains(t, b, "temperature")
			assert.Equal(t, tt.wantAuth, srv.headers[0].Get("Authorization") != "")
		})
	}
}

func TestGenerateDirectURLHandling(t *testing.T) {
	tests := []struct {
		name   string
		suffix string
		want   string
	}{
		{"base url", "/v1", "/v1/chat/completions"},
		{"base url trailing slash", "/v1/", "/v1/chat/completions"},
		{"root", "", "/chat/completions"},
		{"full url", "/v1/chat/completions", "/v1/chat/completions"},
		{"full custom prefix", "/proxy/openai/chat/completions", "/proxy/openai/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, okHandler("ok"))
			g := newGen(t, GeneratorOptions{URL: srv.URL + tt.suffix})
			assert.Equal(t, srv.URL+tt.want, g.Endpoint())
			_, err := g.Generate(context.Background(), sampleRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.want, srv.paths[0])
			assert.Empty(t, srv.headers[0].Get("Authorization"), "no key, no header")
		})
	}
}

func TestGenerateDirectRetries(t *testing.T) {
	tests := []struct {
		name        string
		maxRetries  int
		handler     handlerFunc
		wantErr     []string
		wantHits    int64
		wantRetries int64
	}{
		{
			name: "503 twice then success",
			handler: func(w http.ResponseWriter, _ *http.Request, n int) {
				if n < 2 {
					http.Error(w, "overloaded", http.StatusServiceUnavailable)
					return
				}
				reply(w, "fine")
			},
			wantHits: 3, wantRetries: 2,
		},
		{
			name: "429 with Retry-After 0",
			handler: func(w http.ResponseWriter, _ *http.Request, n int) {
				if n == 0 {
					w.Header().Set("Retry-After", "0")
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return
				}
				reply(w, "fine")
			},
			wantHits: 2, wantRetries: 1,
		},
		{
			name: "408 is retried",
			handler: func(w http.ResponseWriter, _ *http.Request, n int) {
				if n == 0 {
					http.Error(w, "timeout", http.StatusRequestTimeout)
					return
				}
				reply(w, "fine")
			},
			wantHits: 2, wantRetries: 1,
		},
		{
			name: "400 is not retried",
			handler: func(w http.ResponseWriter, _ *http.Request, _ int) {
				http.Error(w, `{"error":{"message":"tool_choice none is not supported"}}`+strings.Repeat("x", 500), http.StatusBadRequest)
			},
			wantErr:  []string{"generate-direct: sample flight_1 (elapse 2)", "400", "tool_choice none is not supported"},
			wantHits: 1, wantRetries: 0,
		},
		{
			name:       "retries exhausted",
			maxRetries: 2,
			handler: func(w http.ResponseWriter, _ *http.Request, _ int) {
				http.Error(w, "boom", http.StatusInternalServerError)
			},
			wantErr:  []string{"generate-direct: sample flight_1 (elapse 2)", "giving up after 3 attempts", "500", "boom"},
			wantHits: 3, wantRetries: 2,
		},
		{
			name:       "negative MaxRetries disables retries",
			maxRetries: -1,
			handler: func(w http.ResponseWriter, _ *http.Request, _ int) {
				http.Error(w, "boom", http.StatusBadGateway)
			},
			wantErr:  []string{"giving up after 1 attempts", "502"},
			wantHits: 1, wantRetries: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.handler)
			g := newGen(t, GeneratorOptions{URL: srv.URL, MaxRetries: tt.maxRetries})
			got, err := g.Generate(context.Background(), sampleRequest())
			st := g.Stats()
			assert.Equal(t, tt.wantHits, srv.hits.Load())
			assert.Equal(t, tt.wantRetries, st.Retries)
			assert.Equal(t, tt.wantHits, st.Requests)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, "fine", got)
				assert.Zero(t, st.Failures)
				return
			}
			require.Error(t, err)
			assert.Empty(t, got)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
			assert.EqualValues(t, 1, st.Failures)
		})
	}
}

func TestGenerateDirectErrorExcerptIsShort(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		http.Error(w, strings.Repeat("é", 1000), http.StatusUnprocessableEntity)
	})
	g := newGen(t, GeneratorOptions{URL: srv.URL})
	_, err := g.Generate(context.Background(), sampleRequest())
	require.Error(t, err)
	msg := err.Error()
	i := strings.Index(msg, "é")
	require.GreaterOrEqual(t, i, 0)
	assert.LessOrEqual(t, len([]rune(msg[i:])), 200)
	assert.EqualValues(t, 1, srv.hits.Load())
}

func TestGenerateDirectRetriesAttemptTimeout(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		reply(w, "fine")
	})
	g := newGen(t, GeneratorOptions{URL: srv.URL, Timeout: 50 * time.Millisecond})
	got, err := g.Generate(context.Background(), sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, "fine", got)
	assert.EqualValues(t, 1, g.Stats().Retries)
}

func TestGenerateDirectRetriesConnectionError(t *testing.T) {
	srv := newFakeServer(t, okHandler("never"))
	url := srv.URL
	srv.Close() // nothing listens any more
	g := newGen(t, GeneratorOptions{URL: url, MaxRetries: 2})
	_, err := g.Generate(context.Background(), sampleRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "giving up after 3 attempts")
	assert.EqualValues(t, 2, g.Stats().Retries)
}

func TestGenerateDirectBoundedConcurrency(t *testing.T) {
	var inFlight, maxSeen atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		cur := inFlight.Add(1)
		for {
			m := maxSeen.Load()
			if cur <= m || maxSeen.CompareAndSwap(m, cur) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		reply(w, "ok")
	})
	g := newGen(t, GeneratorOptions{URL: srv.URL, Concurrency: 3})

	const n = 50
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := sampleRequest()
			req.Key = SampleKey{ID: fmt.Sprintf("s%d", i)}
			_, errs[i] = g.Generate(context.Background(), req)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, n, srv.hits.Load())
	assert.LessOrEqual(t, maxSeen.Load(), int64(3))
	assert.Greater(t, maxSeen.Load(), int64(1))
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	}))
	return files
}

func TestGenerateDirectCache(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		reply(w, fmt.Sprintf("answer %d", n))
	})
	dir := t.TempDir()
	g := newGen(t, GeneratorOptions{URL: srv.URL, CacheDir: dir})
	ctx := context.Background()

	first, err := g.Generate(ctx, sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, "answer 0", first)

	files := cacheFiles(t, dir)
	require.Len(t, files, 1)
	name := filepath.Base(files[0])
	assert.Len(t, name, 64+len(".json"))
	assert.Equal(t, name[:2], filepath.Base(filepath.Dir(files[0])), "sharded by the first two hex digits")
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var entry map[string]any
	require.NoError(t, json.Unmarshal(raw, &entry))
	assert.Equal(t, "answer 0", entry["content"])

	// Identical request: served from the cache, no HTTP request.
	again, err := g.Generate(ctx, sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.EqualValues(t, 1, srv.hits.Load())

	// A fresh generator over the same directory also hits.
	g2 := newGen(t, GeneratorOptions{URL: srv.URL, CacheDir: dir})
	again, err = g2.Generate(ctx, sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.EqualValues(t, 1, srv.hits.Load())
	assert.Equal(t, GeneratorStats{CacheHits: 1}, g2.Stats())

	// A different request misses.
	other := sampleRequest()
	other.Messages[len(other.Messages)-1].Content = strp("And tomorrow?")
	got, err := g.Generate(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, "answer 1", got)
	assert.EqualValues(t, 2, srv.hits.Load())

	// A different model misses too.
	g3 := newGen(t, GeneratorOptions{URL: srv.URL, CacheDir: dir, Model: "other-model"})
	got, err = g3.Generate(ctx, sampleRequest())
	require.NoError(t, err)
	assert.Equal(t, "answer 2", got)
	assert.EqualValues(t, 3, srv.hits.Load())

	assert.Equal(t, GeneratorStats{Requests: 2, CacheHits: 1}, g.Stats())
	assert.Len(t, cacheFiles(t, dir), 3, "no temporary files left behind")
}

func TestGenerateDirectCorruptCacheRecovered(t *testing.T) {
	for _, corrupt := range []string{"{not json", `{"content":""}`, ""} {
		t.Run(fmt.Sprintf("%q", corrupt), func(t *testing.T) {
			srv := newFakeServer(t, okHandler("fresh"))
			dir := t.TempDir()
			g := newGen(t, GeneratorOptions{URL: srv.URL, CacheDir: dir})
			_, err := g.Generate(context.Background(), sampleRequest())
			require.NoError(t, err)
			files := cacheFiles(t, dir)
			require.Len(t, files, 1)
			require.NoError(t, os.WriteFile(files[0], []byte(corrupt), 0o644))

			got, err := g.Generate(context.Background(), sampleRequest())
			require.NoError(t, err)
			assert.Equal(t, "fresh", got)
			assert.EqualValues(t, 2, srv.hits.Load(), "corrupt entry is a miss")

			raw, err := os.ReadFile(files[0])
			require.NoError(t, err)
			var entry map[string]any
			require.NoError(t, json.Unmarshal(raw, &entry), "corrupt entry is overwritten")
			assert.Equal(t, "fresh", entry["content"])

			_, err = g.Generate(context.Background(), sampleRequest())
			require.NoError(t, err)
			assert.EqualValues(t, 2, srv.hits.Load())
		})
	}
}

func TestGenerateDirectNoTextIsError(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "tool calls",
			body: `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"flight_status","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			want: `generate-direct: sample flight_1 (elapse 2): model returned no text (finish_reason "tool_calls")`,
		},
		{
			name: "empty content",
			body: `{"choices":[{"message":{"role":"assistant","content":"  \n "},"finish_reason":"length"}]}`,
			want: `generate-direct: sample flight_1 (elapse 2): model returned no text (finish_reason "length")`,
		},
		{
			name: "null content",
			body: `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`,
			want: `generate-direct: sample flight_1 (elapse 2): model returned no text (finish_reason "stop")`,
		},
		{
			name: "no choices",
			body: `{"choices":[]}`,
			want: `generate-direct: sample flight_1 (elapse 2): response has no choices`,
		},
		{
			name: "not json",
			body: `<html>oops</html>`,
			want: `generate-direct: sample flight_1 (elapse 2): decode response`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
			})
			dir := t.TempDir()
			g := newGen(t, GeneratorOptions{URL: srv.URL, CacheDir: dir})
			got, err := g.Generate(context.Background(), sampleRequest())
			require.Error(t, err)
			assert.Empty(t, got)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), err.Error())
			assert.EqualValues(t, 1, srv.hits.Load(), "not retried")
			assert.Empty(t, cacheFiles(t, dir), "errors are not cached")
			assert.EqualValues(t, 1, g.Stats().Failures)
		})
	}
}

func TestGenerateDirectContextCancellation(t *testing.T) {
	t.Run("during request", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		g := newGen(t, GeneratorOptions{URL: srv.URL})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := g.Generate(ctx, sampleRequest())
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), err.Error())
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.EqualValues(t, 1, srv.hits.Load(), "a cancelled attempt is not retried")
	})
	t.Run("during backoff", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		})
		g := newGen(t, GeneratorOptions{URL: srv.URL, Backoff: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := g.Generate(ctx, sampleRequest())
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), err.Error())
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("waiting for a slot", func(t *testing.T) {
		release := make(chan struct{})
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			<-release
			reply(w, "ok")
		})
		g := newGen(t, GeneratorOptions{URL: srv.URL, Concurrency: 1})
		done := make(chan error, 1)
		go func() {
			_, err := g.Generate(context.Background(), sampleRequest())
			done <- err
		}()
		require.Eventually(t, func() bool { return srv.hits.Load() == 1 }, 2*time.Second, time.Millisecond)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := g.Generate(ctx, sampleRequest())
		require.ErrorIs(t, err, context.Canceled)
		assert.EqualValues(t, 1, srv.hits.Load())

		close(release)
		require.NoError(t, <-done)
	})
}

func TestNewDirectGeneratorValidation(t *testing.T) {
	tests := []struct {
		name string
		opt  GeneratorOptions
		want string
	}{
		{"missing url", GeneratorOptions{Model: "m"}, "generate-direct: url is required"},
		{"bad scheme", GeneratorOptions{URL: "ftp://host/v1", Model: "m"}, "generate-direct: url"},
		{"no scheme", GeneratorOptions{URL: "localhost:8000/v1", Model: "m"}, "generate-direct: url"},
		{"unparseable", GeneratorOptions{URL: "http://[::1", Model: "m"}, "generate-direct: url"},
		{"no host", GeneratorOptions{URL: "http:///v1", Model: "m"}, "generate-direct: url"},
		{"missing model", GeneratorOptions{URL: "http://127.0.0.1:8000/v1"}, "generate-direct: model is required"},
		{"blank model", GeneratorOptions{URL: "http://127.0.0.1:8000/v1", Model: "  "}, "generate-direct: model is required"},
		{"negative concurrency", GeneratorOptions{URL: "http://h/v1", Model: "m", Concurrency: -1}, "generate-direct: concurrency"},
		{"negative max tokens", GeneratorOptions{URL: "http://h/v1", Model: "m", MaxTokens: -1}, "generate-direct: max-tokens"},
		{"negative temperature", GeneratorOptions{URL: "http://h/v1", Model: "m", Temperature: -0.1}, "generate-direct: temperature"},
		{"negative backoff", GeneratorOptions{URL: "http://h/v1", Model: "m", Backoff: -1}, "generate-direct: backoff"},
		{"negative timeout", GeneratorOptions{URL: "http://h/v1", Model: "m", Timeout: -1}, "generate-direct: timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewDirectGenerator(tt.opt)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	g, err := NewDirectGenerator(GeneratorOptions{URL: "https://api.example.com/v1", Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com/v1/chat/completions", g.Endpoint())
	assert.Equal(t, DefaultDirectInstruction, g.instruction)
}

func TestGenerateDirectEmptyMessages(t *testing.T) {
	srv := newFakeServer(t, okHandler("ok"))
	g := newGen(t, GeneratorOptions{URL: srv.URL})
	_, err := g.Generate(context.Background(), DirectRequest{Key: SampleKey{ID: "e"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sample e (elapse 0): no messages")
	assert.Zero(t, srv.hits.Load())
}

func TestGeneratorStatsJSON(t *testing.T) {
	b, err := json.Marshal(GeneratorStats{Requests: 1, CacheHits: 2, Retries: 3, Failures: 4})
	require.NoError(t, err)
	assert.JSONEq(t, `{"requests":1,"cache_hits":2,"retries":3,"failures":4}`, string(b))
}
