package verifier

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A connection costs memory before it has sent a body: its read and write
// buffers, its goroutine, and the request head it is sending, which
// net/http reads in full before any handler runs. So that header bytes and
// idle connections count against the memory ceiling like bodies do:
//
//   - a request head is bounded in size (MaxHeaderBytes, answered 431) and
//     in time (HeaderTimeout, after which the connection is closed);
//   - every accepted connection reserves connCost from the request memory
//     budget for as long as it is open, and the number of open connections
//     is capped (MaxConns, by default what half the budget pays for);
//   - a connection that finds the cap reached or the budget spent is
//     answered 503 with Retry-After and closed, its head read through a
//     small buffer and dropped, never held (see refuse).

// connOverhead is what an open connection holds besides its request head:
// net/http's 4 KiB read and write buffers, its goroutine's stack, and the
// structures of one request.
const connOverhead = 16 << 10

// headerSlack is what net/http reads beyond MaxHeaderBytes before it
// answers 431.
const headerSlack = 4096

// connCost is the memory one connection reserves: its overhead and twice
// its largest head (the bytes read, then the header map built from them).
func connCost(maxHeaderBytes int) int64 {
	return connOverhead + 2*int64(maxHeaderBytes+headerSlack)
}

// defaultMaxHeaderBytes is Options.MaxHeaderBytes's default.
const defaultMaxHeaderBytes = 32 << 10

// defaultMaxConns is the connection cap that spends at most half of the
// request memory budget on connections, and no fewer than 64.
func defaultMaxConns(budget int64, maxHeaderBytes int) int {
	return int(max(64, budget/2/connCost(maxHeaderBytes)))
}

// connLimiter is the service's listener: it applies the connection cap and
// reservation above, and on shutdown it drains the accept backlog (see
// drain) so that connections the kernel has already accepted are served,
// not reset.
type connLimiter struct {
	net.Listener
	s       *Server
	cost    int64
	open    atomic.Int64
	refuser chan struct{} // bounds the goroutines answering refused connections

	mu       sync.Mutex
	draining bool
	quiet    time.Duration
	deadline time.Time // when draining stops, however busy the listener
}

// errDrained ends the server's accept loop once the backlog is drained.
var errDrained = errors.New("listener drained")

func (s *Server) limitListener(ln net.Listener) *connLimiter {
	return &connLimiter{Listener: ln, s: s, cost: connCost(s.opts.MaxHeaderBytes), refuser: make(chan struct{}, 64)}
}

// Accept returns the next connection within the cap. While draining, it
// returns connections already waiting, and errDrained once none has
// arrived for the quiet period.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		l.mu.Lock()
		draining := l.draining
		if draining && err == nil {
			l.extend()
		}
		l.mu.Unlock()
		if err != nil {
			var ne net.Error
			if draining && errors.As(err, &ne) && ne.Timeout() {
				return nil, errDrained
			}
			return nil, err
		}
		if l.open.Add(1) > int64(l.s.opts.MaxConns) {
			l.open.Add(-1)
			l.refuse(c, "connections")
			continue
		}
		// A connection is never a large request: it may take from the
		// whole budget, including the quarter kept for small requests.
		if !l.s.mem.take(l.cost, 0) {
			l.open.Add(-1)
			l.refuse(c, "connection_memory")
			continue
		}
		l.s.metrics.conns.Inc()
		return &limitedConn{Conn: c, l: l}, nil
	}
}

// drain makes Accept take what is waiting and stop after quiet passes with
// no new connection, or at the latest by the deadline. It reports whether
// the listener can drain (it must take deadlines); if not, the caller
// closes it at once.
func (l *connLimiter) drain(quiet time.Duration, deadline time.Time) bool {
	if _, ok := l.Listener.(interface{ SetDeadline(time.Time) error }); !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draining, l.quiet, l.deadline = true, quiet, deadline
	l.extend()
	return true
}

// extend moves the accept deadline a quiet period ahead, never past the
// drain's deadline; l.mu is held.
func (l *connLimiter) extend() {
	d := time.Now().Add(l.quiet)
	if d.After(l.deadline) {
		d = l.deadline
	}
	_ = l.Listener.(interface{ SetDeadline(time.Time) error }).SetDeadline(d)
}

// refuseBody is the whole answer to a refused connection.
var refuseBody = func() []byte {
	body := `{"error":{"code":"overloaded","message":"the server has too many connections open; retry shortly"}}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// refuseWait bounds each of a refused connection's two reads: its request
// head, then what it sends after the answer.
const refuseWait = time.Second

// refuse answers a connection 503 and closes it, counting why. It answers
// the request, not the connection: it first reads the head and drops it,
// through a small buffer and for at most refuseWait, because a client
// writes its request before it reads, and some (Go's among them) take an
// answer that arrives before the request for a broken connection. A client
// that sends nothing is answered when the wait ends. After the answer it
// reads and drops what the client still sends, for a moment, so that
// closing with unread bytes does not reset the connection before the
// client reads the answer. Past 64 such connections at once, it closes
// without answering.
func (l *connLimiter) refuse(c net.Conn, why string) {
	l.s.metrics.shed.WithLabelValues(why).Inc()
	select {
	case l.refuser <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.refuser }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseWait))
		skipHead(c)
		_ = c.SetDeadline(time.Now().Add(refuseWait))
		if _, err := c.Write(refuseBody); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.CopyN(io.Discard, c, 64<<10)
	}()
}

// skipHead reads r up to the blank line that ends a request head, at most
// 64 KiB, and drops what it read; it returns early when a read fails.
func skipHead(r io.Reader) {
	var buf [2048]byte
	newlines := 0 // line ends in a row, a CR between them not counting
	for read := 0; read < 64<<10; {
		n, err := r.Read(buf[:])
		for _, b := range buf[:n] {
			switch b {
			case '\n':
				if newlines++; newlines == 2 {
					return
				}
			case '\r':
			default:
				newlines = 0
			}
		}
		if err != nil {
			return
		}
		read += n
	}
}

// limitedConn gives its reservation back when it closes.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.s.mem.give(c.l.cost)
		c.l.s.metrics.conns.Dec()
	})
	return err
}
