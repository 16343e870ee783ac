// Package chat is the client of OpenAI-compatible chat-completions
// endpoints (vLLM, SGLang, OpenAI) that every timeaware command talking to a
// model uses: `pairs build --generate-direct` asks it for direct replies and
// `eval run` for a model's answers and tool calls.
//
// A Client bounds the requests in flight, retries transient failures (408,
// 429, 5xx, timeouts, broken connections) with exponential backoff and
// jitter, honouring Retry-After, and can keep every reply in an on-disk cache
// keyed by the request, so that a run that stops for any reason resumes
// where it left off without sending an answered request again.
//
// Requests and replies are conversation's messages, tool schemas and tool
// calls: conversation is the message model every part of timeaware shares and
// this package one client of it, so imports run from chat to conversation and
// never back.
package chat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/atomicfile"
)

// Defaults of Options.
const (
	DefaultConcurrency = 8
	DefaultMaxRetries  = 4
	DefaultBackoff     = 500 * time.Millisecond
	DefaultTimeout     = 120 * time.Second

	maxWait          = 60 * time.Second
	maxErrExcerpt    = 200
	maxResponseBytes = 32 << 20
	completionsPath  = "/chat/completions"
)

// Options configures a Client.
type Options struct {
	// Name prefixes the client's errors, naming the command or flag that
	// configured it ("generate-direct", "eval"); "" means "chat".
	Name string
	// URL is an OpenAI-compatible base URL such as http://127.0.0.1:8000/v1
	// (to which /chat/completions is appended) or a full URL ending in
	// /chat/completions, used as is.
	URL string
	// Model is the model name sent with every request. Required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Concurrency is the maximum number of HTTP requests in flight across all
	// calls; 0 means DefaultConcurrency.
	Concurrency int
	// MaxRetries is the number of retries after the first attempt on 408,
	// 429, 5xx, timeouts and connection errors; 0 means DefaultMaxRetries, a
	// negative value disables retries.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each further
	// retry, with jitter. A Retry-After header (in seconds) takes precedence.
	// Every wait is capped at 60s. 0 means DefaultBackoff.
	Backoff time.Duration
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// CacheDir, when set, is a directory where replies are cached on disk
	// keyed by the endpoint and the request; "" disables the cache.
	CacheDir string
	// HTTPClient sends the requests; nil means a fresh http.Client whose
	// transport keeps up to Concurrency idle connections per host (Go's
	// default keeps 2), so that a full set of requests in flight reuses its
	// connections instead of opening new ones.
	HTTPClient *http.Client
}

// Request is one chat completion to ask for.
type Request struct {
	Messages []conversation.Message
	// Tools are offered to the model; ToolChoice ("none", "auto",
	// "required") is sent when not "".
	Tools      []conversation.Tool
	ToolChoice string
	// Temperature is the sampling temperature (0: greedy).
	Temperature float64
	// MaxTokens caps the reply; 0 omits it.
	MaxTokens int
	// Seed, when set, is sent as the request's sampling seed (vLLM, SGLang
	// and OpenAI accept it); requests that differ only by it are cached
	// apart.
	Seed *int64
	// Check, when set, vets a reply before it is returned or cached: a reply
	// it rejects is an error that is neither retried nor cached.
	Check func(Reply) error
}

// Reply is the model's answer: the first choice's message.
type Reply struct {
	// Content is the message text with surrounding white space removed.
	Content string
	// Reasoning is the reasoning text a server with a reasoning parser
	// returns apart from the content (vLLM and SGLang put it in
	// reasoning_content, newer vLLM in reasoning), with surrounding white
	// space removed; "" when the server returned none.
	Reasoning    string
	ToolCalls    []conversation.ToolCall
	FinishReason string
	// CompletionTokens is the server's usage.completion_tokens: the tokens
	// it generated for the reply, reasoning included. Nil when the server
	// reported none, as for a reply cached before counts were kept: the
	// count is unknown, not zero.
	CompletionTokens *int
	// ReasoningTokens is the server's
	// usage.completion_tokens_details.reasoning_tokens, the part of
	// CompletionTokens spent on reasoning; nil when not reported.
	ReasoningTokens *int
	// Latency is how long the successful attempt took on the wire (for a
	// cached reply, how long it took when it was first answered): the time
	// the model spent, without queueing for a slot or backing off.
	Latency time.Duration
	// Cached says the reply came from the cache.
	Cached bool
}

// Stats counts what a Client did. Requests counts HTTP attempts (retries
// included), CacheHits the calls answered from the cache, Retries the
// attempts that followed a failed one, and Failures the calls that returned
// an error.
type Stats struct {
	Requests  int64 `json:"requests"`
	CacheHits int64 `json:"cache_hits"`
	Retries   int64 `json:"retries"`
	Failures  int64 `json:"failures"`
}

// Client sends chat completions. It is safe for concurrent use.
type Client struct {
	name       string
	endpoint   string
	model      string
	apiKey     string
	maxRetries int
	backoff    time.Duration
	timeout    time.Duration
	cacheDir   string
	client     *http.Client
	sem        chan struct{}

	requests  atomic.Int64
	cacheHits atomic.Int64
	retries   atomic.Int64
	failures  atomic.Int64
}

// New validates opt and returns a Client.
func New(opt Options) (*Client, error) {
	name := opt.Name
	if name == "" {
		name = "chat"
	}
	endpoint, err := completionsEndpoint(opt.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case strings.TrimSpace(opt.Model) == "":
		return nil, fmt.Errorf("%s: model is required", name)
	case opt.Concurrency < 0:
		return nil, fmt.Errorf("%s: concurrency must not be negative, got %d", name, opt.Concurrency)
	case opt.Backoff < 0:
		return nil, fmt.Errorf("%s: backoff must not be negative, got %s", name, opt.Backoff)
	case opt.Timeout < 0:
		return nil, fmt.Errorf("%s: timeout must not be negative, got %s", name, opt.Timeout)
	}
	c := &Client{
		name: name, endpoint: endpoint, model: opt.Model, apiKey: opt.APIKey,
		maxRetries: opt.MaxRetries, backoff: opt.Backoff, timeout: opt.Timeout,
		cacheDir: opt.CacheDir, client: opt.HTTPClient,
	}
	concurrency := opt.Concurrency
	if concurrency == 0 {
		concurrency = DefaultConcurrency
	}
	c.sem = make(chan struct{}, concurrency)
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.backoff == 0 {
		c.backoff = DefaultBackoff
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = concurrency
		t.MaxIdleConns = max(t.MaxIdleConns, concurrency)
		c.client = &http.Client{Transport: t}
	}
	return c, nil
}

// Concurrency returns the most HTTP requests the client has in flight at
// once across all calls (Options.Concurrency, or its default).
func (c *Client) Concurrency() int { return cap(c.sem) }

// completionsEndpoint validates a base or full chat-completions URL and
// returns the full one.
func completionsEndpoint(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("url %q: missing host", raw)
	}
	u.Fragment = ""
	u.RawFragment = ""
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), completionsPath) {
		u.Path = strings.TrimRight(u.Path, "/") + completionsPath
		u.RawPath = ""
	}
	return u.String(), nil
}

// Endpoint returns the chat-completions URL requests are sent to.
func (c *Client) Endpoint() string { return c.endpoint }

// Model returns the model name the requests carry.
func (c *Client) Model() string { return c.model }

// Stats returns a snapshot of the client's counters.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:  c.requests.Load(),
		CacheHits: c.cacheHits.Load(),
		Retries:   c.retries.Load(),
		Failures:  c.failures.Load(),
	}
}

// Complete returns the model's reply to req, from the cache when it holds
// one. Errors after the last retry, and replies req.Check rejects, count as
// failures.
func (c *Client) Complete(ctx context.Context, req Request) (Reply, error) {
	r, err := c.complete(ctx, req)
	if err != nil {
		c.failures.Add(1)
		return Reply{}, err
	}
	return r, nil
}

func (c *Client) complete(ctx context.Context, req Request) (Reply, error) {
	if len(req.Messages) == 0 {
		return Reply{}, errors.New("no messages")
	}
	if req.Temperature < 0 || req.MaxTokens < 0 {
		return Reply{}, fmt.Errorf("temperature %g and max tokens %d must not be negative", req.Temperature, req.MaxTokens)
	}
	body, err := json.Marshal(c.wire(req))
	if err != nil {
		return Reply{}, fmt.Errorf("encode request: %w", err)
	}
	var cachePath string
	if c.cacheDir != "" {
		cachePath = c.cachePath(body)
		if r, ok := readCache(cachePath); ok && (req.Check == nil || req.Check(r) == nil) {
			c.cacheHits.Add(1)
			return r, nil
		}
	}
	r, err := c.post(ctx, body)
	if err != nil {
		return Reply{}, err
	}
	if req.Check != nil {
		if err := req.Check(r); err != nil {
			return Reply{}, err
		}
	}
	if cachePath != "" {
		if err := writeCache(cachePath, r); err != nil {
			return Reply{}, fmt.Errorf("write cache: %w", err)
		}
	}
	return r, nil
}

// wireRequest is the chat-completions request body. Its fields and their
// order are part of every cache key: change them and old caches miss.
type wireRequest struct {
	Model       string                 `json:"model"`
	Messages    []conversation.Message `json:"messages"`
	Tools       []conversation.Tool    `json:"tools,omitempty"`
	ToolChoice  string                 `json:"tool_choice,omitempty"`
	Temperature float64                `json:"temperature"`
	MaxTokens   int                    `json:"max_tokens,omitempty"`
	Seed        *int64                 `json:"seed,omitempty"`
}

func (c *Client) wire(req Request) wireRequest {
	w := wireRequest{
		Model: c.model, Messages: req.Messages, ToolChoice: req.ToolChoice,
		Temperature: req.Temperature, MaxTokens: req.MaxTokens, Seed: req.Seed,
	}
	if len(req.Tools) > 0 {
		w.Tools = make([]conversation.Tool, len(req.Tools))
		for i, t := range req.Tools {
			if t.Type == "" {
				t.Type = "function"
			}
			w.Tools[i] = t
		}
	}
	return w
}

// wireResponse is the part of a chat-completions response read.
type wireResponse struct {
	Choices []struct {
		Message struct {
			Content          *string                 `json:"content"`
			ReasoningContent optionalText            `json:"reasoning_content"`
			Reasoning        optionalText            `json:"reasoning"`
			ToolCalls        []conversation.ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens        optionalCount `json:"completion_tokens"`
		CompletionTokensDetails *struct {
			ReasoningTokens optionalCount `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// optionalCount is a token count of the usage block, read leniently: a
// whole number (12 or 12.0) is the count, and anything else (a fraction, a
// string, an object) leaves it unknown, so that a server's odd usage never
// fails a reply that no token count is needed for; the rows that need one
// then say it is missing.
type optionalCount struct{ n *int }

// UnmarshalJSON reads a whole number into the count; anything else,
// null included, leaves it unknown.
func (c *optionalCount) UnmarshalJSON(b []byte) error {
	var f float64
	if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') &&
		json.Unmarshal(b, &f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		n := int(f)
		c.n = &n
	}
	return nil
}

// optionalText is a reasoning text, read leniently: a string is the text,
// anything else none.
type optionalText string

// UnmarshalJSON reads a string; anything else leaves the text empty.
func (t *optionalText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = optionalText(s)
	}
	return nil
}

// attemptError is a failed attempt; retryable ones are tried again.
type attemptError struct {
	err        error
	retryable  bool
	retryAfter time.Duration // from a Retry-After header; -1 when absent
}

// post sends body, retrying transient failures.
func (c *Client) post(ctx context.Context, body []byte) (Reply, error) {
	wait := c.backoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			c.retries.Add(1)
		}
		r, aerr := c.attempt(ctx, body)
		if aerr == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		if !aerr.retryable {
			return Reply{}, aerr.err
		}
		if attempt >= c.maxRetries {
			return Reply{}, fmt.Errorf("giving up after %d attempts: %w", attempt+1, aerr.err)
		}
		d := aerr.retryAfter
		if d < 0 {
			// Jitter: a uniform wait in [wait/2, wait].
			d = wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
		}
		d = min(d, maxWait)
		if wait < maxWait {
			wait *= 2
		}
		if err := sleep(ctx, d); err != nil {
			return Reply{}, err
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
func (c *Client) attempt(ctx context.Context, body []byte) (Reply, *attemptError) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Reply{}, &attemptError{err: ctx.Err()}
	}
	defer func() { <-c.sem }()

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return Reply{}, &attemptError{err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	c.requests.Add(1)
	start := time.Now()
	resp, err := c.client.Do(hreq)
	if err != nil {
		return Reply{}, &attemptError{err: describeTransportErr(err, c.timeout), retryable: true, retryAfter: -1}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	// Whole microseconds: what the cache keeps, so that a replay reads
	// the very latency the first answer had.
	latency := time.Since(start).Round(time.Microsecond)
	if err != nil {
		return Reply{}, &attemptError{err: fmt.Errorf("read response: %w", describeTransportErr(err, c.timeout)), retryable: true, retryAfter: -1}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code := resp.StatusCode
		return Reply{}, &attemptError{
			err:        fmt.Errorf("HTTP %s: %s", resp.Status, excerpt(data)),
			retryable:  code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500,
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
		}
	}
	var wr wireResponse
	if err := json.Unmarshal(data, &wr); err != nil {
		return Reply{}, &attemptError{err: fmt.Errorf("decode response: %v: %s", err, excerpt(data))}
	}
	if len(wr.Choices) == 0 {
		if wr.Error != nil && wr.Error.Message != "" {
			return Reply{}, &attemptError{err: fmt.Errorf("server error: %s", excerpt([]byte(wr.Error.Message)))}
		}
		return Reply{}, &attemptError{err: fmt.Errorf("response has no choices: %s", excerpt(data))}
	}
	ch := wr.Choices[0]
	r := Reply{ToolCalls: ch.Message.ToolCalls, FinishReason: ch.FinishReason, Latency: latency}
	if ch.Message.Content != nil {
		r.Content = strings.TrimSpace(*ch.Message.Content)
	}
	for _, s := range []optionalText{ch.Message.ReasoningContent, ch.Message.Reasoning} {
		if r.Reasoning == "" {
			r.Reasoning = strings.TrimSpace(string(s))
		}
	}
	if err := readUsage(&wr, &r); err != nil {
		return Reply{}, &attemptError{err: fmt.Errorf("%w: %s", err, excerpt(data))}
	}
	if r.FinishReason == "" && len(r.ToolCalls) > 0 {
		r.FinishReason = "tool_calls"
	}
	return r, nil
}

// readUsage copies the response's token counts into r; a negative count is
// an error (a server that reports one is broken, and a guess would be
// worse than none).
func readUsage(wr *wireResponse, r *Reply) error {
	if wr.Usage == nil {
		return nil
	}
	r.CompletionTokens = wr.Usage.CompletionTokens.n
	if d := wr.Usage.CompletionTokensDetails; d != nil {
		r.ReasoningTokens = d.ReasoningTokens.n
	}
	for _, c := range []struct {
		name string
		n    *int
	}{{"usage.completion_tokens", r.CompletionTokens}, {"usage.completion_tokens_details.reasoning_tokens", r.ReasoningTokens}} {
		if c.n != nil && *c.n < 0 {
			return fmt.Errorf("response's %s is %d: must not be negative", c.name, *c.n)
		}
	}
	return nil
}

// describeTransportErr names per-attempt timeouts plainly.
func describeTransportErr(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("attempt timed out after %s: %w", timeout, err)
	}
	return err
}

// parseRetryAfter reads a Retry-After header, in seconds or as an HTTP
// date; -1 when it is absent or unreadable.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t, derr := http.ParseTime(v)
		if derr != nil {
			return -1
		}
		n = max(0, time.Until(t).Seconds())
	} else if n < 0 || math.IsNaN(n) {
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

// cacheEntry is a cached reply. Entries written before tool calls were kept
// hold content only, and read back as replies without tool calls; entries
// written before token counts were kept read back with the counts unknown
// (nil).
type cacheEntry struct {
	Content          string                  `json:"content"`
	Reasoning        string                  `json:"reasoning,omitempty"`
	ToolCalls        []conversation.ToolCall `json:"tool_calls,omitempty"`
	FinishReason     string                  `json:"finish_reason,omitempty"`
	LatencyS         float64                 `json:"latency_s,omitempty"`
	CompletionTokens *int                    `json:"completion_tokens,omitempty"`
	ReasoningTokens  *int                    `json:"reasoning_tokens,omitempty"`
}

// cachePath is CacheDir/<first 2 hex>/<sha256>.json, the hash covering the
// endpoint and the canonical request body.
func (c *Client) cachePath(body []byte) string {
	h := sha256.New()
	h.Write([]byte(c.endpoint))
	h.Write([]byte{0})
	h.Write(body)
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(c.cacheDir, sum[:2], sum+".json")
}

// readCache returns a cached reply; a missing, unreadable or corrupt file is
// a miss.
func readCache(path string) (Reply, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Reply{}, false
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return Reply{}, false
	}
	if !(e.LatencyS >= 0) || (e.CompletionTokens != nil && *e.CompletionTokens < 0) || (e.ReasoningTokens != nil && *e.ReasoningTokens < 0) {
		return Reply{}, false
	}
	return Reply{
		Content: strings.TrimSpace(e.Content), Reasoning: strings.TrimSpace(e.Reasoning), ToolCalls: e.ToolCalls,
		FinishReason: e.FinishReason, CompletionTokens: e.CompletionTokens, ReasoningTokens: e.ReasoningTokens,
		Latency: time.Duration(math.Round(e.LatencyS*1e6)) * time.Microsecond, Cached: true,
	}, true
}

// writeCache stores a reply atomically.
func writeCache(path string, r Reply) error {
	data, err := json.Marshal(cacheEntry{
		Content: r.Content, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls, FinishReason: r.FinishReason,
		LatencyS: r.Latency.Seconds(), CompletionTokens: r.CompletionTokens, ReasoningTokens: r.ReasoningTokens,
	})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}
