package verifier

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// scorerAndStore returns a default scorer and the timer store it reads,
// on the real clock.
func scorerAndStore(t *testing.T) (*rewards.Scorer, *timers.Store) {
	t.Helper()
	store, err := timers.New(timers.Options{Secret: []byte("verifier test secret, 32 bytes..")})
	require.NoError(t, err)
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	require.NoError(t, err)
	return scorer, store
}

// served is a Server answering on a real listener through Serve, as the
// serve command runs it (httptest.Server would bypass the listener).
type served struct {
	srv    *Server
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func serveReal(t *testing.T, mod func(*Options)) *served {
	t.Helper()
	scorer, store := scorerAndStore(t)
	opts := Options{Scorer: scorer, Timers: store, Version: "test"}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	p := &served{srv: srv, addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return p
}

// get sends one GET on a new connection and returns the status and the
// response (closed).
func (p *served) get(t *testing.T, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+p.addr+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// metric reads one sample of /metrics, the series named in full (with its
// labels); -1 when it is absent.
func (p *served) metric(t *testing.T, series string) float64 {
	t.Helper()
	_, b := p.get(t, "/metrics")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f
		}
	}
	return -1
}

// requestMemory reads the reserved request memory from /metrics.
func (p *served) requestMemory(t *testing.T) int64 {
	t.Helper()
	return int64(p.metric(t, "timeaware_request_memory_bytes"))
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// readAnswer reads one response from c within a few seconds.
func readAnswer(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// errorCode decodes an error body's code.
func errorCode(t *testing.T, r io.Reader) string {
	t.Helper()
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(r).Decode(&body))
	return body.Error.Code
}

// counterValue reads a counter of the server's metrics in process.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

// waitFor polls an in-process value until cond holds: the event a test
// waits on, read without a request that would itself take a connection.
func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

// sendingHeads opens n connections that send the start of a request head
// and no more: busy, they hold their places (an idle one could be
// evicted).
func sendingHeads(t *testing.T, p *served, n int) []net.Conn {
	t.Helper()
	var held []net.Conn
	for range n {
		c := dial(t, p.addr)
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\n")
		require.NoError(t, err)
		held = append(held, c)
	}
	waitFor(t, func() bool {
		var m dto.Metric
		require.NoError(t, p.srv.metrics.conns.Write(&m))
		idle, _ := p.evictable(t)
		return int(m.GetGauge().GetValue()) == n && idle == 0
	}, "the connections are accepted and their heads being read")
	return held
}

func TestConnectionsPastTheCapAre503(t *testing.T) {
	p := serveReal(t, func(o *Options) { o.MaxConns = 3; o.HeaderTimeout = time.Minute })
	cost := connCost(p.srv.opts.MaxHeaderBytes)
	held := sendingHeads(t, p, 3)
	waitFor(t, func() bool { return p.srv.mem.used.Load() == 3*cost }, "the three are accepted")

	// A request on a fourth connection is answered 503 + Retry-After, even
	// when the server has refused the connection before the client wrote
	// its request: Go's client takes an answer that arrives before its
	// request for a broken connection, so the answer waits for the head.
	shed := p.srv.metrics.shed.WithLabelValues("connections")
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		before := counterValue(t, shed)
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			waitFor(t, func() bool { return counterValue(t, shed) > before }, "the connection is refused")
		}
		return c, err
	}}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + p.addr + "/healthz")
	require.NoError(t, err, "the refusal reaches the client as an answer")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.True(t, resp.Close)
	assert.Equal(t, "overloaded", errorCode(t, resp.Body))

	// A connection that sends nothing is answered too, once the server has
	// waited for its head.
	resp = readAnswer(t, dial(t, p.addr))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, 2.0, counterValue(t, shed))

	// A place given back is taken again.
	held[0].Close()
	waitFor(t, func() bool { return p.srv.mem.used.Load() == 2*cost }, "the closed connection gives its place back")
	c := dial(t, p.addr)
	_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, readAnswer(t, c).StatusCode)
}

func TestOpenConnectionsReserveRequestMemory(t *testing.T) {
	const header = 8 << 10
	cost := connCost(header)
	// Room for four connections and half of a fifth.
	p := serveReal(t, func(o *Options) {
		o.MaxHeaderBytes = header
		o.MemoryBudget = 4*cost + cost/2
		o.MaxConns = 100
		o.HeaderTimeout = time.Minute
	})
	used := p.srv.mem.used.Load
	// A scrape's own connection holds one reservation while it is open,
	// and /metrics reports it.
	assert.Equal(t, cost, p.requestMemory(t))
	waitFor(t, func() bool { return used() == 0 }, "the scrape's connection, closed, gives its reservation back")

	held := sendingHeads(t, p, 4)
	waitFor(t, func() bool { return used() == 4*cost }, "four connections sending their heads hold four reservations")
	// The budget is spent: one more connection is refused for memory.
	c := dial(t, p.addr)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, readAnswer(t, c).StatusCode)
	assert.Equal(t, 1.0, counterValue(t, p.srv.metrics.shed.WithLabelValues("connection_memory")))
	assert.Equal(t, 4*cost, used(), "a refused connection reserves nothing")
	for _, c := range held {
		c.Close()
	}
	waitFor(t, func() bool { return used() == 0 }, "closed connections give their reservations back")
}

func TestLargeHeadsAre431AndSlowHeadsAreCut(t *testing.T) {
	p := serveReal(t, func(o *Options) { o.MaxHeaderBytes = 4 << 10; o.HeaderTimeout = 300 * time.Millisecond })
	c := dial(t, p.addr)
	go func() {
		// A head past the bound; the server may close before all is sent.
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
	}()
	resp := readAnswer(t, c)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)

	// A head that never ends is cut at the header timeout.
	c = dial(t, p.addr)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(c) // ends when the server closes
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server kept the connection: %v", err)
	assert.Less(t, time.Since(start), 3*time.Second)
}

// TestShutdownServesTheAcceptBacklog: connections the kernel accepted
// before the server stopped are answered, not reset.
func TestShutdownServesTheAcceptBacklog(t *testing.T) {
	scorer, store := scorerAndStore(t)
	srv, err := New(Options{Scorer: scorer, Timers: store})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	// Fifty clients connect and send their request while nothing accepts:
	// they wait in the listen backlog.
	const n = 50
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, ln.Addr().String())
		_, err := io.WriteString(conns[i], "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
	}
	// The server starts and is told to stop at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, srv.Serve(ctx, ln))
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if r, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				codes[i] = r.StatusCode
			}
		}()
	}
	wg.Wait()
	for i, code := range codes {
		assert.Equal(t, http.StatusOK, code, "connection %d was not answered", i)
	}
}

func TestAuthScopeAndScheme(t *testing.T) {
	open := serveReal(t, func(o *Options) { o.Token = "s3cret" })
	closed := serveReal(t, func(o *Options) { o.Token = "s3cret"; o.AuthAll = true })
	tests := []struct {
		name   string
		p      *served
		path   string
		hdr    []string
		status int
	}{
		{"healthz open by default", open, "/healthz", nil, 200},
		{"metrics open by default", open, "/metrics", nil, 200},
		{"readyz open by default", open, "/readyz", nil, 200},
		{"openapi open by default", open, "/openapi.json", nil, 200},
		{"healthz under auth_all", closed, "/healthz", nil, 401},
		{"readyz under auth_all", closed, "/readyz", nil, 401},
		{"metrics under auth_all", closed, "/metrics", nil, 401},
		{"openapi under auth_all", closed, "/openapi.json", nil, 401},
		{"unknown route under auth_all", closed, "/nope", nil, 401},
		{"metrics with the token", closed, "/metrics", []string{"Authorization", "Bearer s3cret"}, 200},
		{"healthz with the token", closed, "/healthz", []string{"Authorization", "Bearer s3cret"}, 200},
		{"scheme in capitals", open, "/v1/rewards", []string{"Authorization", "BEARER s3cret"}, 200},
		{"scheme in lower case", open, "/v1/rewards", []string{"Authorization", "bearer s3cret"}, 200},
		{"two spaces", open, "/v1/rewards", []string{"Authorization", "Bearer  s3cret"}, 200},
		{"no space", open, "/v1/rewards", []string{"Authorization", "Bearers3cret"}, 401},
		{"scheme alone", open, "/v1/rewards", []string{"Authorization", "Bearer"}, 401},
		{"another scheme", open, "/v1/rewards", []string{"Authorization", "Basic s3cret"}, 401},
		{"token as a prefix", open, "/v1/rewards", []string{"Authorization", "Bearer s3cret2"}, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := tc.p.get(t, tc.path, tc.hdr...)
			assert.Equal(t, tc.status, resp.StatusCode)
			if tc.status == 401 {
				assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			}
		})
	}
}

func TestTokensNoClientCanSendAreRefused(t *testing.T) {
	scorer, store := scorerAndStore(t)
	for _, tok := range []string{" ", "   ", "\t", " s3cret", "s3cret\n", "s3c\x00ret", "s3c\x7fret"} {
		_, err := New(Options{Scorer: scorer, Timers: store, Token: tok})
		assert.Error(t, err, "%q", tok)
	}
	for _, tok := range []string{"", "s3cret", "a b"} {
		_, err := New(Options{Scorer: scorer, Timers: store, Token: tok})
		assert.NoError(t, err, "%q", tok)
	}
}

func TestExpiredTimerOnAnItemIs410(t *testing.T) {
	f := newFixture(t, nil)
	rd, err := f.store.Create(timers.Spec{TTL: time.Minute, TimeLimitS: 10})
	require.NoError(t, err)
	f.clock.Advance(2 * time.Minute)
	item := `{"data_source":"timely/general","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"timer":"` + rd.Timer + `"}}`
	code, body := f.do(t, "POST", "/v1/score", item)
	assert.Equal(t, http.StatusGone, code)
	e := errorOf(t, body)
	assert.Equal(t, "timer_expired", e["code"])
	assert.Equal(t, "extra_info.timer", e["field"])
	// A forged token on an item names the item's field too. One character
	// inside the signature is changed to another, so the token always
	// differs from the one issued (its last character carries padding bits).
	forged := []byte(rd.Timer)
	i := len(forged) - 5
	if forged[i] == 'A' {
		forged[i] = 'B'
	} else {
		forged[i] = 'A'
	}
	code, body = f.do(t, "POST", "/v1/score", strings.Replace(item, rd.Timer, string(forged), 1))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "invalid_timer", errorOf(t, body)["code"])
	assert.Equal(t, "extra_info.timer", errorOf(t, body)["field"])
}

func TestABudgetMustHoldFourConnections(t *testing.T) {
	scorer, store := scorerAndStore(t)
	// By hand: 16 KiB, and twice a 1 KiB head with net/http's 4 KiB.
	const reservation = 16384 + 2*(1024+4096)
	assert.EqualValues(t, reservation, connCost(1024))
	assert.EqualValues(t, 16384+2*(32768+4096), connCost(defaultMaxHeaderBytes), "the default head bound")
	_, err := New(Options{Scorer: scorer, Timers: store, MaxHeaderBytes: 1024, MemoryBudget: 4*reservation - 1})
	require.Error(t, err)
	assert.ErrorContains(t, err, "fewer than 4 connections")
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "MemoryBudget", oe.Field)
	_, err = New(Options{Scorer: scorer, Timers: store, MaxHeaderBytes: 1024, MemoryBudget: 4 * reservation})
	require.NoError(t, err)
}
