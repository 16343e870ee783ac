package verifier

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timeaware/timeaware/internal/pace"
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
//   - a connection that finds the cap reached or the budget spent takes
//     the place of one that does nothing: one closing after its last
//     answer, else the one that has waited longest for its next request
//     (at least EvictIdleAfter), which is closed (see evict);
//   - when no connection can make room, the newcomer is answered 503 with
//     Retry-After and closed, its head read through a small buffer and
//     dropped, never held (see refuse).
//
// A connection the server closes is closed for writing first and read
// until the client closes its side, for at most lingerWait (see linger):
// closed with bytes unread, the kernel would reset it, and a client still
// sending (a head or body over the limit, written before it reads) would
// lose the answer to the reset.

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
	// evictable lists the open connections that may make room for a new
	// one: closing ones first, then idle ones from the longest idle (see
	// evict); a ring through the sentinel, under mu.
	evictable limitedConn
	// discards paces what closing connections read (see linger).
	discards *pace.Pacer
	// listed and evicted are the metrics' series by state (idle, closing).
	listed  [connClosed]prometheus.Gauge
	evicted [connClosed]prometheus.Counter
}

// errDrained ends the server's accept loop once the backlog is drained.
var errDrained = errors.New("listener drained")

func (s *Server) limitListener(ln net.Listener) *connLimiter {
	l := &connLimiter{Listener: ln, s: s, cost: connCost(s.opts.MaxHeaderBytes), refuser: make(chan struct{}, 64),
		discards: pace.New(lingerRate)}
	l.evictable.prev, l.evictable.next = &l.evictable, &l.evictable
	for _, st := range []int32{connIdle, connClosing} {
		l.listed[st] = s.metrics.evictable.WithLabelValues(stateNames[st])
		l.evicted[st] = s.metrics.evicted.WithLabelValues(stateNames[st])
	}
	return l
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
		if why := l.admit(); why != "" {
			l.refuse(c, why)
			continue
		}
		l.s.metrics.conns.Inc()
		lc := &limitedConn{Conn: c, l: l}
		// A connection that has sent nothing yet waits for its request
		// like an idle one.
		l.idle(lc)
		return lc, nil
	}
}

// admit takes a place and a reservation for a new connection, making room
// by evicting connections that do nothing where it must; it returns the
// bound that refuses the connection, or "".
func (l *connLimiter) admit() string {
	for l.open.Add(1) > int64(l.s.opts.MaxConns) {
		l.open.Add(-1)
		if !l.evict() {
			return "connections"
		}
	}
	// A connection is never a large request: it may take from the whole
	// budget, including the quarter kept for small requests.
	for !l.s.mem.take(l.cost, 0) {
		if !l.evict() {
			l.open.Add(-1)
			return "connection_memory"
		}
	}
	return ""
}

// drain makes Accept take what is waiting and stop after quiet passes with
// no new connection, or at the latest by the deadline. New connection
// requests are dropped from now on where the system allows it (see
// refuseHandshakes), so that what waits is only what arrived before, and
// the listener closes on an empty queue even under clients that keep
// connecting. It reports whether the listener can drain (it must take
// deadlines); if not, the caller closes it at once.
func (l *connLimiter) drain(quiet time.Duration, deadline time.Time) bool {
	if _, ok := l.Listener.(interface{ SetDeadline(time.Time) error }); !ok {
		return false
	}
	if err := refuseHandshakes(l.Listener); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		l.s.opts.Logger.Warn("shutting down: new connections are not refused while the backlog drains; clients still connecting when the listener closes may be reset", "err", err)
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
// client reads the answer, until the client closes or the wait ends. Past
// 64 such connections at once, it closes without answering.
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
		_, _ = io.Copy(io.Discard, c)
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

// The states of a limitedConn, as eviction sees them.
const (
	connActive  = iota // reading or answering a request
	connIdle           // waiting for its next request (or its first)
	connClosing        // closed for writing; read until the client closes
	connClosed         // its place and reservation given back
)

// stateNames label the metrics of the evictable states.
var stateNames = [...]string{connIdle: "idle", connClosing: "closing"}

// lingerWait bounds how long a closing connection is read before it is
// closed, whatever the client still sends.
const lingerWait = 5 * time.Second

// limitedConn holds a place and a reservation until it closes, and tells
// the limiter whether it is doing anything.
type limitedConn struct {
	net.Conn
	l     *connLimiter
	state atomic.Int32 // written under l.mu; read without it on the read path
	since time.Time    // when it became idle, under l.mu
	// prev and next link it into l.evictable, under l.mu; nil when not in
	// the list.
	prev, next *limitedConn
	lingering  atomic.Bool
}

// Read marks the connection active once bytes of its next request arrive.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.state.Load() == connIdle {
		c.l.activate(c)
	}
	return n, err
}

// CloseWrite closes the connection for writing, once net/http has written
// its last answer (a 431, or a request whose body it will not read): the
// connection is closing from then on.
func (c *limitedConn) CloseWrite() error {
	c.l.closing(c)
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection as described at linger, unless it was
// evicted, and gives its place back once it is closed.
func (c *limitedConn) Close() error {
	if c.state.Load() == connClosed {
		return c.Conn.Close()
	}
	c.l.closing(c)
	if c.lingering.CompareAndSwap(false, true) {
		go c.linger()
	}
	return nil
}

// linger closes a closing connection for writing, reads what the client
// still sends until it closes its side or lingerWait passes, then closes
// the connection and gives its place back. The place is held while it
// lingers; a new connection may take it (see evict).
func (c *limitedConn) linger() {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	deadline := time.Now().Add(lingerWait)
	if c.Conn.SetReadDeadline(deadline) == nil {
		var buf [lingerChunk]byte
		for {
			n, err := c.Conn.Read(buf[:])
			if err != nil || !c.l.discards.Wait(nil, n, deadline) {
				break
			}
		}
	}
	_ = c.Conn.Close()
	c.l.release(c)
}

// What lingering connections read is paced: lingerRate bytes a second
// for all of them together, read lingerChunk bytes at a time. A client
// that overran a limit by a little is answered at once; a flood of heads
// or bodies far over the limit, which the server would otherwise read as
// fast as it is sent, costs it no more than that rate, and its
// connections wait (they may be evicted meanwhile) or are cut at
// lingerWait.
const (
	lingerRate  = 64 << 20
	lingerChunk = 16 << 10
)

// connState tells the limiter when net/http waits for a connection's next
// request, and when it has read one (its bytes may have arrived with the
// previous request, without a Read of their own).
func connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	if st == http.StateIdle {
		c.l.idle(c)
	} else if st == http.StateActive {
		c.l.activate(c)
	}
}

// idle marks c as waiting for its next request and puts it at the back of
// the evictable list.
func (l *connLimiter) idle(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state.Load() != connActive {
		return
	}
	c.state.Store(connIdle)
	c.since = time.Now()
	l.link(c, l.evictable.prev)
	l.listed[connIdle].Inc()
}

// activate marks an idle c as serving a request and takes it out of the
// evictable list.
func (l *connLimiter) activate(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state.Load() != connIdle {
		return
	}
	l.unlink(c)
	c.state.Store(connActive)
}

// closing marks c as closing and puts it at the front of the evictable
// list.
func (l *connLimiter) closing(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := c.state.Load()
	if st == connClosing || st == connClosed {
		return
	}
	l.unlink(c)
	c.state.Store(connClosing)
	l.link(c, &l.evictable)
	l.listed[connClosing].Inc()
}

// release gives c's place and reservation back, once.
func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	if c.state.Load() == connClosed {
		l.mu.Unlock()
		return
	}
	l.unlink(c)
	c.state.Store(connClosed)
	l.mu.Unlock()
	l.giveBack()
}

// giveBack returns a closed connection's place and reservation.
func (l *connLimiter) giveBack() {
	l.open.Add(-1)
	l.s.mem.give(l.cost)
	l.s.metrics.conns.Dec()
}

// evict closes the connection at the front of the evictable list, if it
// is closing or has been idle for EvictIdleAfter, and gives its place back
// at once; it reports whether it made room. A closing connection loses
// what the client still sends; an idle one is closed cleanly (a client
// that reuses it reconnects), though one whose next request is arriving
// at that moment loses it, as at any keep-alive timeout: EvictIdleAfter
// keeps that to connections idle far longer than a worker between two
// requests.
func (l *connLimiter) evict() bool {
	l.mu.Lock()
	c := l.evictable.next
	st := c.state.Load()
	if c == &l.evictable || st == connIdle && time.Since(c.since) < l.s.opts.EvictIdleAfter {
		l.mu.Unlock()
		return false
	}
	l.unlink(c)
	c.state.Store(connClosed)
	l.mu.Unlock()
	_ = c.Conn.Close()
	l.giveBack()
	l.evicted[st].Inc()
	return true
}

// link puts c after at in the evictable list; l.mu is held.
func (l *connLimiter) link(c, at *limitedConn) {
	c.prev, c.next = at, at.next
	at.next.prev = c
	at.next = c
}

// unlink takes c out of the evictable list if it is in it, and counts it
// out of its state's gauge; l.mu is held.
func (l *connLimiter) unlink(c *limitedConn) {
	if c.next == nil {
		return
	}
	c.prev.next, c.next.prev = c.next, c.prev
	c.prev, c.next = nil, nil
	l.listed[c.state.Load()].Dec()
}
