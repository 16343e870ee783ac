package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A flood head is exactly as long as asked and, read by net/http, the
// request the flood means: POST /v1/score/batch announcing 32 MiB, the
// token only when given, the padding headers; without its blank line it
// never ends.
func TestFloodHead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		n     int
		pad   int
	}{
		{"1 MB with the token", "tok", 1_000_000, 300},
		{"1 MB without", "", 1_000_000, 300},
		{"small, odd split", "t", 4_099, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, err := floodHead("h:1", tc.token, tc.n, tc.pad, true)
			require.NoError(t, err)
			require.Len(t, head, tc.n)
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(append(head, '{'))))
			require.NoError(t, err)
			assert.Equal(t, "POST", req.Method)
			assert.Equal(t, "/v1/score/batch", req.URL.Path)
			assert.Equal(t, "h:1", req.Host)
			assert.EqualValues(t, 32<<20, req.ContentLength)
			assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
			if tc.token != "" {
				assert.Equal(t, "Bearer "+tc.token, req.Header.Get("Authorization"))
			} else {
				assert.NotContains(t, req.Header, "Authorization")
			}
			pads, padBytes := 0, 0
			for k, v := range req.Header {
				if strings.HasPrefix(k, "X-Pad-") {
					pads++
					require.Len(t, v, 1)
					padBytes += len(v[0])
				}
			}
			assert.Equal(t, tc.pad, pads)
			// The values fill what the fixed lines leave, evenly.
			assert.Greater(t, padBytes, tc.n*9/10-600)

			endless, err := floodHead("h:1", tc.token, tc.n, tc.pad, false)
			require.NoError(t, err)
			assert.Equal(t, head[:tc.n-2], endless)
			_, err = http.ReadRequest(bufio.NewReader(bytes.NewReader(endless)))
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		})
	}
	_, err := floodHead("h:1", "", 200, 10, true)
	assert.ErrorContains(t, err, "a head of 200 bytes cannot hold 10 padding headers")
	_, err = floodHead("h:1", "", 3000, 0, true)
	assert.ErrorContains(t, err, "want at least 1")
}

func TestOutcomeOf(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{op(syscall.ECONNRESET), "reset"},
		{op(syscall.EPIPE), "reset"},
		{io.EOF, "closed"},
		{fmt.Errorf("reading the status line: %w", io.ErrUnexpectedEOF), "closed"},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, "timeout"},
		{errors.New("malformed HTTP response"), "error"},
	} {
		assert.Equal(t, tc.want, outcomeOf(tc.err, nil), "%v", tc.err)
	}
	stop := make(chan struct{})
	close(stop)
	assert.Equal(t, "open at end", outcomeOf(op(syscall.ECONNRESET), stop))
}

// floodConfig is an attack with only the header flood.
func floodConfig(url string) config {
	return config{url: url, token: "tok", headerBytes: 200_000, headerPad: 50, headerAuth: true, headerRate: 1 << 30,
		headerWait: 5 * time.Second, endlessOver: 300 * time.Millisecond, endlessEvery: 50 * time.Millisecond,
		duration: time.Second}
}

// The flood against net/http servers, whose answers are the oracle: a head
// over MaxHeaderBytes gets 431; under it, the handler sees the request
// (401 without the token; with it, the body read times out: 408); a head
// that never ends is cut off at ReadHeaderTimeout without an answer.
func TestHeaderFloodAgainstNetHTTP(t *testing.T) {
	// serve starts a server with s's limits; reached counts the requests
	// its handler saw.
	serve := func(t *testing.T, s *http.Server) (url string, reached *atomic.Int32) {
		reached = new(atomic.Int32)
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached.Add(1)
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if _, err := io.ReadAll(r.Body); err != nil {
				w.WriteHeader(http.StatusRequestTimeout)
			}
		}))
		ts.Config.MaxHeaderBytes, ts.Config.ReadHeaderTimeout, ts.Config.ReadTimeout = s.MaxHeaderBytes, s.ReadHeaderTimeout, s.ReadTimeout
		ts.Start()
		t.Cleanup(ts.Close)
		return ts.URL, reached
	}

	t.Run("over MaxHeaderBytes", func(t *testing.T) {
		url, reached := serve(t, &http.Server{MaxHeaderBytes: 64 << 10})
		c := floodConfig(url)
		c.headers, c.endless = 3, 3
		s, err := attack(c, nil)
		require.NoError(t, err)
		assert.Greater(t, s.HeaderOutcomes["431"], 3, "%v", s.HeaderOutcomes)
		assert.Greater(t, s.EndlessOutcomes["431"], 3, "%v", s.EndlessOutcomes)
		assertOnly(t, s.HeaderOutcomes, "431", "open at end")
		assertOnly(t, s.EndlessOutcomes, "431", "open at end")
		assert.Zero(t, reached.Load(), "no head reached the handler")
		assert.Equal(t, 3, s.HeaderConns)
		assert.Equal(t, 3, s.EndlessConns)
		assert.True(t, s.HeaderAuth)
		assert.GreaterOrEqual(t, s.HeaderOpened, int64(s.HeaderOutcomes["431"]+s.EndlessOutcomes["431"]))
	})
	t.Run("the default limit, with and without the token", func(t *testing.T) {
		for _, auth := range []bool{false, true} {
			// A server each: heads still in the first one's buffers when
			// its flood stops reach its handler afterwards, and count there.
			url, reached := serve(t, &http.Server{ReadTimeout: 300 * time.Millisecond})
			c := floodConfig(url)
			c.headers, c.headerBytes, c.headerPad, c.headerAuth = 2, 1_000_000, 300, auth
			s, err := attack(c, nil)
			require.NoError(t, err)
			want := map[bool]string{false: "401", true: "408"}[auth]
			assert.Positive(t, s.HeaderOutcomes[want], "%v", s.HeaderOutcomes)
			assertOnly(t, s.HeaderOutcomes, want, "open at end")
			// Every answer came from the handler; a head still waiting for
			// its answer at the end may have reached it too.
			assert.GreaterOrEqual(t, int(reached.Load()), s.HeaderOutcomes[want])
			assert.LessOrEqual(t, int(reached.Load()), s.HeaderOutcomes[want]+s.HeaderOutcomes["open at end"], "%v", s.HeaderOutcomes)
			assert.Equal(t, auth, s.HeaderAuth)
			// Each connection sent its whole head and the body byte.
			assert.GreaterOrEqual(t, s.HeaderSentMB, float64(s.HeaderOutcomes[want])*1.000001)
		}
	})
	t.Run("endless heads and ReadHeaderTimeout", func(t *testing.T) {
		url, reached := serve(t, &http.Server{ReadHeaderTimeout: 200 * time.Millisecond})
		c := floodConfig(url)
		c.endless, c.endlessOver = 4, time.Hour // the padding is still coming when the server gives up
		s, err := attack(c, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, s.EndlessOutcomes["closed"], 4, "%v", s.EndlessOutcomes)
		assertOnly(t, s.EndlessOutcomes, "closed", "open at end")
		// Cut off at the server's timeout, not at the end of the client's
		// padding (an hour away) nor of the flood.
		assert.GreaterOrEqual(t, s.EndlessMeanS["closed"], 0.19)
		assert.Less(t, s.EndlessMeanS["closed"], c.duration.Seconds())
		assert.Zero(t, reached.Load())
		assert.Empty(t, s.HeaderOutcomes)
	})
}

// The idle flood against net/http servers: each connection is answered
// (the oracle's handler asks for no token) and then kept until the
// server's IdleTimeout closes it; with -idle-again it reconnects.
func TestIdleFloodAgainstNetHTTP(t *testing.T) {
	serve := func(t *testing.T, idle time.Duration) string {
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		ts.Config.IdleTimeout = idle
		ts.Start()
		t.Cleanup(ts.Close)
		return ts.URL
	}
	t.Run("kept", func(t *testing.T) {
		c := floodConfig(serve(t, time.Hour))
		c.idle = 3
		s, err := attack(c, nil)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"open at end": 3}, s.IdleOutcomes)
		assert.Equal(t, int64(3), s.HeaderOpened, "no connection is opened again")
		assert.Equal(t, 3, s.IdleConns)
	})
	t.Run("closed by the server and opened again", func(t *testing.T) {
		c := floodConfig(serve(t, 200*time.Millisecond))
		c.idle, c.idleAgain = 3, 10*time.Millisecond
		s, err := attack(c, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, s.IdleOutcomes["closed"], 3, "%v", s.IdleOutcomes)
		assertOnly(t, s.IdleOutcomes, "closed", "open at end")
		assert.GreaterOrEqual(t, s.IdleMeanS["closed"], 0.19, "idle until the server's timeout")
		assert.Equal(t, int64(s.IdleOutcomes["closed"]+s.IdleOutcomes["open at end"]), s.HeaderOpened)
	})
}

func assertOnly(t *testing.T, got map[string]int, want ...string) {
	t.Helper()
	for k := range got {
		assert.Contains(t, want, k, "outcomes %v", got)
	}
}

// The /healthz poller polls at its interval, each time on a new
// connection, and counts a poll without 200 within a second as failed,
// reporting the longest time without an answer. The server ends each run
// on the poll it counts (an event, not a clock), so the counts hold on a
// loaded machine; the times are bounded only by what they mean.
func TestPollHealth(t *testing.T) {
	var slow atomic.Bool
	var polls, conns, stopAt atomic.Int32
	var stop chan struct{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) == stopAt.Load() {
			close(stop) // the poller ends after this poll
		}
		if r.URL.Path != "/healthz" || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if slow.Load() {
			<-r.Context().Done() // no answer: the poller gives up and closes
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")

	stop = make(chan struct{})
	stopAt.Store(10)
	s := pollHealth(stop, addr, addr, 20*time.Millisecond)
	assert.Zero(t, s.Failures, "%v", s.FirstErrors)
	assert.Equal(t, 10, s.Polls)
	assert.EqualValues(t, s.Polls, polls.Load())
	assert.EqualValues(t, s.Polls, conns.Load(), "a new connection for each poll")
	assert.Less(t, s.LongestGapMs, 1000.0, "no poll went unanswered for the timeout")
	assert.Less(t, s.Max, 1000.0)

	slow.Store(true)
	polls.Store(0)
	stop = make(chan struct{})
	stopAt.Store(2)
	s = pollHealth(stop, addr, addr, 20*time.Millisecond)
	require.Equal(t, 2, s.Polls)
	assert.Equal(t, 2, s.Failures)
	assert.GreaterOrEqual(t, s.P50, 1000.0, "each poll waits out its second")
	assert.Greater(t, s.LongestGapMs, 2000.0, "two unanswered polls")
	require.Len(t, s.FirstErrors, 2)
	assert.Contains(t, s.FirstErrors[0], "i/o timeout")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln.Close() // nothing listens there now
	stop = make(chan struct{})
	time.AfterFunc(120*time.Millisecond, func() { close(stop) })
	s = pollHealth(stop, ln.Addr().String(), "x", 50*time.Millisecond)
	assert.Equal(t, s.Polls, s.Failures)
	assert.Positive(t, s.Failures)
	assert.Contains(t, s.FirstErrors[0], "connection refused")
}
