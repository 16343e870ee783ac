package prefpairs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/timeaware/timeaware/atomicfile"
	"github.com/timeaware/timeaware/conversation"
)

// DefaultDirectInstruction is the guidance DirectGenerator gives the model
// unless GeneratorOptions.Instruction overrides it.
const DefaultDirectInstruction = "For this turn, reply to the user's most recent message using only " +
	"what is already in this conversation, including earlier tool results. Do not call any tool and " +
	"do not say that you will look something up. If the information you have may be out of date, " +
	"you may say so briefly, but still give your best answer. Keep the reply short and to the point."

// Defaults of GeneratorOptions.
const (
	defaultConcurrency = 8
	defaultMaxRetries  = 4
	defaultBackoff     = 500 * time.Millisecond
	defaultTimeout     = 120 * time.Second
	maxWait            = 60 * time.Second
	maxErrExcerpt      = 200
	maxResponseBytes   = 32 << 20
	chatCompletionPath = "/chat/completions"
)

// GeneratorOptions configures DirectGenerator.
type GeneratorOptions struct {
	// URL is an OpenAI-compatible base URL such as http://127.0.0.1:8000/v1
	// (to which /chat/completions is appended) or a full URL ending in
	// /chat/completions, used as is.
	URL string
	// Model is the model name sent with every request. Required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Instruction is the system guidance asking for a direct reply; "" means
	// DefaultDirectInstruction. It is added at the end of the conversation's
	// first system message (see DirectGenerator).
	Instruction string
	// Temperature is the sampling temperature (default 0, greedy).
	Temperature float64
	// MaxTokens caps the reply length; 0 omits max_tokens from the request.
	MaxTokens int
	// Concurrency is the maximum number of HTTP requests in flight across all
	// Generate calls; 0 means 8.
	Concurrency int
	// MaxRetries is the number of retries after the first attempt on 408,
	// 429, 5xx, timeouts and connection errors; 0 means 4, a negative value
	// disables retries.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each further
	// retry, with jitter. A Retry-After header (in seconds) takes precedence.
	// Every wait is capped at 60s. 0 means 500ms.
	Backoff time.Duration
	// Timeout bounds each attempt; 0 means 120s.
	Timeout time.Duration
	// CacheDir, when set, is a directory where replies are cached on disk
	// keyed by the request; "" disables the cache.
	CacheDir string
	// HTTPClient sends the requests; nil means a fresh http.Client.
	HTTPClient *http.Client
}

// DirectRequest asks for a direct reply to the final user message of
// Messages. Key names the sample in errors; Tools, if any, are sent so the
// chat template renders the same prompt the agent saw, with tool_choice
// "none".
type DirectRequest struct {
	Key      SampleKey
	Messages []conversation.Message
	Tools    []conversation.Tool
}

// GeneratorStats counts what a DirectGenerator did. Requests counts HTTP
// attempts (retries included), CacheHits the Generate calls answered from the
// cache, Retries the attempts that followed a failed one, and Failures the
// Generate calls that returned an error.
type GeneratorStats struct {
	Requests  int64 `json:"requests"`
	CacheHits int64 `json:"cache_hits"`
	Retries   int64 `json:"retries"`
	Failures  int64 `json:"failures"`
}

// DirectGenerator produces direct replies — answers to the user's latest
// question that call no tool — through an OpenAI-compatible chat-completions
// endpoint (vLLM, SGLang, OpenAI). It is safe for concurrent use.
//
// The instruction is merged into the conversation's first system message,
// after its text and separated by a blank line, so that it is the last
// system guidance the model reads; when the conversation has no system
// message one holding the instruction is inserted first. It is not sent as
// a trailing system message because many chat templates reject a system
// message anywhere but first.
//
// Generate touches no file unless CacheDir is set: then replies are stored
// in CacheDir/<first 2 hex>/<sha256>.json, where the hash covers the endpoint
// URL and the canonical request body. Files are written atomically (a
// temporary file in the same directory, then rename); an unreadable or
// corrupt cache file is ignored and overwritten.
type DirectGenerator struct {
	endpoint    string
	model       string
	apiKey      string
	instruction string
	temperature float64
	maxTokens   int
	maxRetries  int
	backoff     time.Duration
	timeout     time.Duration
	cacheDir    string
	client      *http.Client
	sem         chan struct{}

	requests  atomic.Int64
	cacheHits atomic.Int64
	retries   atomic.Int64
	failures  atomic.Int64
}

// NewDirectGenerator validates opt and returns a generator.
func NewDirectGenerator(opt GeneratorOptions) (*DirectGenerator, error) {
	endpoint, err := chatEndpoint(opt.URL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(opt.Model) == "" {
		return nil, errors.New("generate-direct: model is required")
	}
	switch {
	case opt.Concurrency < 0:
		return nil, fmt.Errorf("generate-direct: concurrency must not be negative, got %d", opt.Concurrency)
	case opt.MaxTokens < 0:
		return nil, fmt.Errorf("generate-direct: max-tokens must not be negative, got %d", opt.MaxTokens)
	case opt.Temperature < 0:
		return nil, fmt.Errorf("generate-direct: temperature must not be negative, got %g", opt.Temperature)
	case opt.Backoff < 0:
		return nil, fmt.Errorf("generate-direct: backoff must not be negative, got %s", opt.Backoff)
	case opt.Timeout < 0:
		return nil, fmt.Errorf("generate-direct: timeout must not be negative, got %s", opt.Timeout)
	}
	g := &DirectGenerator{
		endpoint:    endpoint,
		model:       opt.Model,
		apiKey:      opt.APIKey,
		instruction: opt.Instruction,
		temperature: opt.Temperature,
		maxTokens:   opt.MaxTokens,
		maxRetries:  opt.MaxRetries,
		backoff:     opt.Backoff,
		timeout:     opt.Timeout,
		cacheDir:    opt.CacheDir,
		client:      opt.HTTPClient,
	}
	if strings.TrimSpace(g.instruction) == "" {
		g.instruction = DefaultDirectInstruction
	}
	concurrency := opt.Concurrency
	if concurrency == 0 {
		concurrency = defaultConcurrency
	}
	g.sem = make(chan struct{}, concurrency)
	switch {
	case g.maxRetries == 0:
		g.maxRetries = defaultMaxRetries
	case g.maxRetries < 0:
		g.maxRetries = 0
	}
	if g.backoff == 0 {
		g.backoff = defaultBackoff
	}
	if g.timeout == 0 {
		g.timeout = defaultTimeout
	}
	if g.client == nil {
		g.client = &http.Client{}
	}
	return g, nil
}

// chatEndpoint validates a base or full chat-completions URL and returns the
// full one.
func chatEndpoint(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("generate-direct: url is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("generate-direct: url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("generate-direct: url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("generate-direct: url %q: missing host", raw)
	}
	u.Fragment = ""
	u.RawFragment = ""
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), chatCompletionPath) {
		u.Path = strings.TrimRight(u.Path, "/") + chatCompletionPath
		u.RawPath = ""
	}
	return u.String(), nil
}

// Endpoint returns the chat-completions URL requests are sent to.
func (g *DirectGenerator) Endpoint() string { return g.endpoint }

// Stats returns a snapshot of the generator's counters.
func (g *DirectGenerator) Stats() GeneratorStats {
	return GeneratorStats{
		Requests:  g.requests.Load(),
		CacheHits: g.cacheHits.Load(),
		Retries:   g.retries.Load(),
		Failures:  g.failures.Load(),
	}
}

// Generate returns the model's direct reply for req, from the cache when
// possible. It never returns placeholder text: a reply that is empty or
// calls tools is an error.
func (g *DirectGenerator) Generate(ctx context.Context, req DirectRequest) (string, error) {
	text, err := g.generate(ctx, req)
	if err != nil {
		g.failures.Add(1)
		return "", fmt.Errorf("generate-direct: sample %s (elapse %d): %w", req.Key.ID, req.Key.Elapse, err)
	}
	return text, nil
}

func (g *DirectGenerator) generate(ctx context.Context, req DirectRequest) (string, error) {
	if len(req.Messages) == 0 {
		return "", errors.New("no messages")
	}
	body, err := json.Marshal(g.buildBody(req))
	if err != nil {
		return "", fmt.Errorf("encode request: %w", err)
	}
	var cachePath string
	if g.cacheDir != "" {
		cachePath = g.cachePath(body)
		if text, ok := readCache(cachePath); ok {
			g.cacheHits.Add(1)
			return text, nil
		}
	}
	text, err := g.post(ctx, body)
	if err != nil {
		return "", err
	}
	if cachePath != "" {
		if err := writeCache(cachePath, text); err != nil {
			return "", fmt.Errorf("write cache: %w", err)
		}
	}
	return text, nil
}

// Wire format of the chat-completions request.

type wireRequest struct {
	Model       string              `json:"model"`
	Messages    []wireMessage       `json:"messages"`
	Tools       []conversation.Tool `json:"tools,omitempty"`
	ToolChoice  string              `json:"tool_choice,omitempty"`
	Temperature float64             `json:"temperature"`
	MaxTokens   int                 `json:"max_tokens,omitempty"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func (g *DirectGenerator) buildBody(req DirectRequest) wireRequest {
	msgs := make([]wireMessage, 0, len(req.Messages)+1)
	merged := false
	for _, m := range req.Messages {
		w := wireMessage{Role: m.Role, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			typ := tc.Type
			if typ == "" {
				typ = "function"
			}
			args := string(tc.Function.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			w.ToolCalls = append(w.ToolCalls, wireToolCall{
				ID: tc.ID, Type: typ,
				Function: wireFunction{Name: tc.Function.Name, Arguments: args},
			})
		}
		// null content is only valid for an assistant turn that calls tools.
		if m.Content != nil || m.Role != conversation.RoleAssistant || len(w.ToolCalls) == 0 {
			text := m.Text()
			w.Content = &text
		}
		if m.Role == conversation.RoleSystem && !merged {
			merged = true
			text := g.instruction
			if base := strings.TrimRight(m.Text(), " \t\r\n"); base != "" {
				text = base + "\n\n" + g.instruction
			}
			w.Content = &text
		}
		msgs = append(msgs, w)
	}
	if !merged {
		text := g.instruction
		msgs = append([]wireMessage{{Role: conversation.RoleSystem, Content: &text}}, msgs...)
	}
	body := wireRequest{
		Model:       g.model,
		Messages:    msgs,
		Temperature: g.temperature,
		MaxTokens:   g.maxTokens,
	}
	if len(req.Tools) > 0 {
		body.Tools = make([]conversation.Tool, len(req.Tools))
		for i, t := range req.Tools {
			if t.Type == "" {
				t.Type = "function"
			}
			body.Tools[i] = t
		}
		body.ToolChoice = "none"
	}
	return body
}

// Wire format of the chat-completions response.

type wireResponse struct {
	Choices []struct {
		Message struct {
			Content   *string           `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// attemptError is a failed attempt; retryable ones are tried again.
type attemptError struct {
	err        error
	retryable  bool
	retryAfter time.Duration // from a Retry-After header; -1 when absent
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// post sends body, retrying transient failures.
func (g *DirectGenerator) post(ctx context.Context, body []byte) (string, error) {
	wait := g.backoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			g.retries.Add(1)
		}
		text, aerr := g.attempt(ctx, body)
		if aerr == nil {
			return text, nil
		}
		if !aerr.retryable || ctx.Err() != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", aerr.err
		}
		if attempt >= g.maxRetries {
			return "", fmt.Errorf("giving up after %d attempts: %w", attempt+1, aerr.err)
		}
		d := aerr.retryAfter
		if d < 0 {
			// Jitter: a uniform wait in [wait/2, wait].
			d = wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
		}
		if d > maxWait {
			d = maxWait
		}
		if wait < maxWait {
			wait *= 2
		}
		if err := sleep(ctx, d); err != nil {
			return "", err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// attempt makes one HTTP request while holding a concurrency slot.
func (g *DirectGenerator) attempt(ctx context.Context, body []byte) (string, *attemptError) {
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return "", &attemptError{err: ctx.Err()}
	}
	defer func() { <-g.sem }()

	actx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, g.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", &attemptError{err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if g.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+g.apiKey)
	}
	g.requests.Add(1)
	resp, err := g.client.Do(hreq)
	if err != nil {
		return "", &attemptError{err: describeTransportErr(err, g.timeout), retryable: true, retryAfter: -1}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", &attemptError{err: fmt.Errorf("read response: %w", describeTransportErr(err, g.timeout)), retryable: true, retryAfter: -1}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code := resp.StatusCode
		return "", &attemptError{
			err:        fmt.Errorf("HTTP %s: %s", resp.Status, excerpt(data)),
			retryable:  code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500,
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
		}
	}
	var wr wireResponse
	if err := json.Unmarshal(data, &wr); err != nil {
		return "", &attemptError{err: fmt.Errorf("decode response: %v: %s", err, excerpt(data))}
	}
	if len(wr.Choices) == 0 {
		if wr.Error != nil && wr.Error.Message != "" {
			return "", &attemptError{err: fmt.Errorf("server error: %s", excerpt([]byte(wr.Error.Message)))}
		}
		return "", &attemptError{err: fmt.Errorf("response has no choices: %s", excerpt(data))}
	}
	c := wr.Choices[0]
	text := ""
	if c.Message.Content != nil {
		text = strings.TrimSpace(*c.Message.Content)
	}
	if len(c.Message.ToolCalls) > 0 || text == "" {
		reason := c.FinishReason
		if reason == "" && len(c.Message.ToolCalls) > 0 {
			reason = "tool_calls"
		}
		return "", &attemptError{err: fmt.Errorf("model returned no text (finish_reason %q)", reason)}
	}
	return text, nil
}

// describeTransportErr names per-attempt timeouts plainly.
func describeTransportErr(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("attempt timed out after %s: %w", timeout, err)
	}
	return err
}

// parseRetryAfter reads a Retry-After header given in seconds; -1 when it is
// absent or not a number of seconds.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 {
		return -1
	}
	if n >= maxWait.Seconds() {
		return maxWait
	}
	return time.Duration(n * float64(time.Second))
}

// excerpt returns at most maxErrExcerpt characters of a response body on one
// line.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(bytes.ToValidUTF8(b, []byte("?")))), " ")
	if s == "" {
		return "(empty body)"
	}
	if utf8.RuneCountInString(s) <= maxErrExcerpt {
		return s
	}
	r := []rune(s)
	return string(r[:maxErrExcerpt-1]) + "…"
}

// Cache.

type cacheEntry struct {
	Content string `json:"content"`
}

func (g *DirectGenerator) cachePath(body []byte) string {
	h := sha256.New()
	h.Write([]byte(g.endpoint))
	h.Write([]byte{0})
	h.Write(body)
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(g.cacheDir, sum[:2], sum+".json")
}

// readCache returns a cached reply; a missing, unreadable or corrupt file is
// a miss.
func readCache(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil || strings.TrimSpace(e.Content) == "" {
		return "", false
	}
	return e.Content, true
}

// writeCache stores a reply atomically.
func writeCache(path, text string) error {
	data, err := json.Marshal(cacheEntry{Content: text})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}
