package verifier

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keepAlive sends GET /healthz on c and reads the answer, leaving the
// connection open; it returns the status.
func keepAlive(t *testing.T, c net.Conn, br *bufio.Reader) int {
	t.Helper()
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// evictable reads how many open connections wait for a request or are
// closing: those a new connection may replace.
func (p *served) evictable(t *testing.T) (idle, closing int) {
	t.Helper()
	read := func(state string) int {
		var m dto.Metric
		require.NoError(t, p.srv.metrics.evictable.WithLabelValues(state).Write(&m))
		return int(m.GetGauge().GetValue())
	}
	return read("idle"), read("closing")
}

func TestIdleConnectionsMakeRoomForNewClients(t *testing.T) {
	p := serveReal(t, func(o *Options) { o.MaxConns = 4; o.EvictIdleAfter = time.Nanosecond })
	type kept struct {
		c  net.Conn
		br *bufio.Reader
	}
	var held []kept
	for i := range 4 {
		c := dial(t, p.addr)
		k := kept{c, bufio.NewReader(c)}
		require.Equal(t, http.StatusOK, keepAlive(t, k.c, k.br))
		held = append(held, k)
		waitFor(t, func() bool { idle, _ := p.evictable(t); return idle == i+1 }, "the connection waits for its next request")
	}

	// Every place is held by a connection that does nothing: a new client
	// takes the place of the one idle the longest, and is served.
	c := dial(t, p.addr)
	assert.Equal(t, http.StatusOK, keepAlive(t, c, bufio.NewReader(c)))
	assert.Equal(t, 1.0, counterValue(t, p.srv.metrics.evicted.WithLabelValues("idle")))
	assert.Equal(t, 0.0, counterValue(t, p.srv.metrics.shed.WithLabelValues("connections")))

	// The oldest was closed cleanly (end of stream, not a reset); the
	// others still serve.
	require.NoError(t, held[0].c.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := held[0].br.Read(make([]byte, 1))
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
	for _, k := range held[1:] {
		assert.Equal(t, http.StatusOK, keepAlive(t, k.c, k.br))
	}
}

func TestConnectionsIdleBrieflyAreNotEvicted(t *testing.T) {
	// A worker between two requests is idle for a moment: it keeps its
	// place, and the newcomer is refused with Retry-After instead.
	p := serveReal(t, func(o *Options) { o.MaxConns = 2; o.EvictIdleAfter = time.Hour })
	for i := range 2 {
		c := dial(t, p.addr)
		require.Equal(t, http.StatusOK, keepAlive(t, c, bufio.NewReader(c)))
		waitFor(t, func() bool { idle, _ := p.evictable(t); return idle == i+1 }, "the connection waits for its next request")
	}
	c := dial(t, p.addr)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, readAnswer(t, c).StatusCode)
	assert.Equal(t, 0.0, counterValue(t, p.srv.metrics.evicted.WithLabelValues("idle")))
}

func TestClosingConnectionsMakeRoomFirst(t *testing.T) {
	// Idle connections are young enough to keep their places, but one
	// connection is closing after a refusal: the newcomer takes its place.
	p := serveReal(t, func(o *Options) { o.MaxConns = 2; o.EvictIdleAfter = time.Hour; o.MaxBodyBytes = 1 << 10 })
	idle := dial(t, p.addr)
	require.Equal(t, http.StatusOK, keepAlive(t, idle, bufio.NewReader(idle)))

	// A body announced past the limit is refused at once; the client
	// reads the 413 and then neither sends nor closes.
	refused := dial(t, p.addr)
	_, err := io.WriteString(refused, "POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{")
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, readAnswer(t, refused).StatusCode)
	waitFor(t, func() bool { _, closing := p.evictable(t); return closing == 1 }, "the refused connection is closing")

	c := dial(t, p.addr)
	assert.Equal(t, http.StatusOK, keepAlive(t, c, bufio.NewReader(c)))
	assert.Equal(t, 1.0, counterValue(t, p.srv.metrics.evicted.WithLabelValues("closing")))
	assert.Equal(t, 0.0, counterValue(t, p.srv.metrics.evicted.WithLabelValues("idle")))
}

func TestRefusalsCloseTheirConnection(t *testing.T) {
	p := serveReal(t, func(o *Options) { o.Token = "s3cret"; o.AuthAll = true; o.MaxBodyBytes = 1 << 10 })
	tests := []struct {
		name, req string
		status    int
	}{
		{"unauthorized", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusUnauthorized},
		{"body announced too large", "POST /v1/score HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n", http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, p.addr)
			_, err := io.WriteString(c, tc.req)
			require.NoError(t, err)
			br := bufio.NewReader(c)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.True(t, resp.Close, "the answer says the connection closes")
			// The server closes its side: a client that sends nothing more
			// reads the end of the stream.
			if tc.status != http.StatusRequestEntityTooLarge {
				_, err = br.ReadByte()
				assert.ErrorIs(t, err, io.EOF)
			}
		})
	}
}

// TestOversizedRequestsAreAnsweredNotReset: a client that writes its whole
// request before it reads (as blocking clients do) gets the 431 or 413,
// not a reset, however much it sends past the limit.
func TestOversizedRequestsAreAnsweredNotReset(t *testing.T) {
	p := serveReal(t, func(o *Options) { o.MaxHeaderBytes = 4 << 10; o.MaxBodyBytes = 64 << 10 })
	const past = 32 << 20 // far more than the kernel buffers in between
	tests := []struct {
		name   string
		write  func(w io.Writer) error
		status int
	}{
		{"head", func(w io.Writer) error {
			if _, err := io.WriteString(w, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: "); err != nil {
				return err
			}
			if _, err := io.CopyN(w, pad{}, past); err != nil {
				return err
			}
			_, err := io.WriteString(w, "\r\n\r\n")
			return err
		}, http.StatusRequestHeaderFieldsTooLarge},
		{"announced body", func(w io.Writer) error {
			if _, err := fmt.Fprintf(w, "POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", past); err != nil {
				return err
			}
			_, err := io.CopyN(w, pad{}, past)
			return err
		}, http.StatusRequestEntityTooLarge},
		{"chunked body", func(w io.Writer) error {
			if _, err := io.WriteString(w, "POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
				return err
			}
			chunk := "10000\r\n" + strings.Repeat("a", 1<<16) + "\r\n"
			for range past >> 16 {
				if _, err := io.WriteString(w, chunk); err != nil {
					return err
				}
			}
			_, err := io.WriteString(w, "0\r\n\r\n")
			return err
		}, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, p.addr)
			require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
			require.NoError(t, tc.write(c), "the whole request is taken")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err, "the answer arrives")
			defer resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
		})
	}
}

// pad reads as an endless run of 'a'.
type pad struct{}

func (pad) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
