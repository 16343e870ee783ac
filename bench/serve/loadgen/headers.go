package main

// The header flood of attack mode: connections whose cost to the server is
// all in the request head, before any handler, body limit or memory budget
// sees the request.
//
//   - headers: -headers connections that each send a head of -header-bytes
//     (default 1,000,000, under net/http's default 1 MiB limit):
//     POST /v1/score/batch with -header-pad padding headers,
//     Content-Length 32 MiB, the bearer token when -header-auth is set, then
//     one body byte; each waits for the server's answer (at most
//     -header-wait), then reconnects;
//   - endless: -headers-endless connections whose head never ends: they send
//     the same padding spread over -endless-over, then one short header line
//     every -endless-every, and never the blank line; when the server cuts
//     one off, it reconnects.
//
// The heads are encoded once, before the flood starts, and every byte of
// both kinds goes through one pacer (-header-rate bytes per second, all
// connections together), so that on a small machine the load generator
// does not take the CPU from the clients it is measured beside. A headers
// connection takes its whole head from the pacer at once and then writes it
// in one burst: connections start one after another at the pacer's rate,
// rather than all progressing together and finishing at once.
//
// Each connection's end is counted as an outcome: the HTTP status it got,
// or "reset" (ECONNRESET, EPIPE), "closed" (EOF without an answer),
// "timeout" (no answer within -header-wait), "dial error", "error" (any
// other), or "open at end" (still waiting when the flood stopped).
//
// -healthz polls GET /healthz at that interval during the attack, each poll
// on a new connection (as a kubelet probe does) with a one-second timeout,
// and reports its latencies and failures.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/timeaware/timeaware/internal/pace"
)

// headerFloodBody is the Content-Length a flood head announces: the
// service's default serve.max_body_bytes, so that the head is not refused
// for its length.
const headerFloodBody = 32 << 20

// endlessChunk is how many bytes an endless connection writes at a time
// while it sends its padding.
const endlessChunk = 16 << 10

// trickleLine is the header line an endless connection sends every
// -endless-every once its padding is out.
var trickleLine = []byte("X-Trickle: 1\r\n")

// floodHead encodes a request head of exactly n bytes, the blank line that
// ends it included when end is set (without it, n-2 bytes: the head never
// ends): the request line, Host, Content-Type, Content-Length 32 MiB, the
// bearer token when token is set, then pad headers X-Pad-NNN whose values
// (printable bytes from a fixed seed) fill the rest. It fails when n cannot
// hold the fixed lines and pad minimal headers.
func floodHead(host, token string, n, pad int, end bool) ([]byte, error) {
	if pad <= 0 {
		return nil, fmt.Errorf("%d padding headers: want at least 1", pad)
	}
	var fixed bytes.Buffer
	fmt.Fprintf(&fixed, "POST /v1/score/batch HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", host, headerFloodBody)
	if token != "" {
		fmt.Fprintf(&fixed, "Authorization: Bearer %s\r\n", token)
	}
	const blank = 2
	// Each pad line is "X-Pad-NNN: " + value + "\r\n".
	name := func(i int) string { return fmt.Sprintf("X-Pad-%03d: ", i) }
	overhead := fixed.Len() + blank
	for i := range pad {
		overhead += len(name(i)) + 2
	}
	values := n - overhead
	if values < pad {
		return nil, fmt.Errorf("a head of %d bytes cannot hold %d padding headers (want at least %d bytes)", n, pad, overhead+pad)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(20260101, uint64(n)))
	b := make([]byte, 0, n)
	b = append(b, fixed.Bytes()...)
	for i := range pad {
		v := values / pad
		if i < values%pad {
			v++
		}
		b = append(b, name(i)...)
		for range v {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		b = append(b, "\r\n"...)
	}
	if end {
		b = append(b, "\r\n"...)
	}
	return b, nil
}

// outcomes counts how flood connections ended, and how long they lasted.
type outcomes struct {
	mu   sync.Mutex
	n    map[string]int
	secs map[string]float64
}

func newOutcomes() *outcomes {
	return &outcomes{n: map[string]int{}, secs: map[string]float64{}}
}

func (o *outcomes) add(outcome string, lasted time.Duration) {
	o.mu.Lock()
	o.n[outcome]++
	o.secs[outcome] += lasted.Seconds()
	o.mu.Unlock()
}

// means is the mean seconds from dial to outcome, by outcome.
func (o *outcomes) means() map[string]float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := make(map[string]float64, len(o.n))
	for k, n := range o.n {
		m[k] = o.secs[k] / float64(n)
	}
	return m
}

// outcomeOf names how a connection ended from the error that ended its
// wait for an answer.
func outcomeOf(err error, stop <-chan struct{}) string {
	if stopped(stop) {
		return "open at end"
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "timeout"
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return "reset"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "closed"
	}
	return "error"
}

// flooder runs the header flood's connections.
type flooder struct {
	addr    string
	pace    *pace.Pacer
	wait    time.Duration // headers: the longest wait for an answer
	over    time.Duration // endless: the time the padding is spread over
	every   time.Duration // endless: the interval between trickled lines
	sent    atomic.Int64  // bytes written
	opened  atomic.Int64  // connections dialled
	headers *outcomes
	endless *outcomes
	idle    *outcomes
}

// dial opens a connection that closes when stop or done closes.
func (f *flooder) dial(stop <-chan struct{}) (net.Conn, chan struct{}, error) {
	c, err := net.DialTimeout("tcp", f.addr, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	f.opened.Add(1)
	done := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-done:
		}
		c.Close()
	}()
	return c, done, nil
}

func (f *flooder) write(c net.Conn, b []byte) error {
	n, err := c.Write(b)
	f.sent.Add(int64(n))
	return err
}

// answer waits for the server's answer on c and names it.
func answer(c net.Conn, stop <-chan struct{}) string {
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return outcomeOf(err, stop)
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// finished is one headers connection, again and again until stop: the
// whole head and one body byte, then the wait for an answer.
func (f *flooder) finished(stop <-chan struct{}, head []byte) {
	for {
		if !f.pace.Wait(stop, len(head)+1, time.Time{}) {
			return
		}
		t0 := time.Now()
		c, done, err := f.dial(stop)
		if err != nil {
			f.headers.add("dial error", time.Since(t0))
			continue
		}
		_ = c.SetReadDeadline(t0.Add(f.wait))
		// The head is written beside the read: a server that answers
		// before reading it all (431) stops reading, and the write then
		// blocks until the connection is closed.
		go func() {
			if f.write(c, head) == nil {
				_ = f.write(c, []byte("{"))
			}
		}()
		f.headers.add(answer(c, stop), time.Since(t0))
		close(done)
	}
}

// endlessConn is one endless connection, again and again until stop: the
// padding in endlessChunk pieces spread over f.over, then trickleLine every
// f.every, never the blank line, until the server answers or cuts it off.
func (f *flooder) endlessConn(stop <-chan struct{}, head []byte) {
	chunks := (len(head) + endlessChunk - 1) / endlessChunk
	step := f.over / time.Duration(chunks)
	first := head[:min(endlessChunk, len(head))]
	for {
		// The first chunk is paid for before the dial, and a connection
		// lasts at least f.every: a server that drops connections at once
		// does not make the flood dial in a tight loop.
		if !f.pace.Wait(stop, len(first), time.Time{}) {
			return
		}
		t0 := time.Now()
		c, done, err := f.dial(stop)
		if err != nil {
			f.endless.add("dial error", time.Since(t0))
		} else {
			go f.trickle(c, done, head, t0, step)
			f.endless.add(answer(c, stop), time.Since(t0))
			close(done)
		}
		if !sleepUntil(stop, t0.Add(f.every)) {
			return
		}
	}
}

// idleConn is one connection of the idle flood: it sends req (GET
// /healthz), reads the answer and then waits, sending nothing, until the
// server closes the connection or stop. Its outcome is the answer's status
// when it was not 200, else how the connection ended ("closed" by the
// server, "open at end"), timed from the answer. When the server closes
// it, another is opened after again (0: never).
func (f *flooder) idleConn(stop <-chan struct{}, req []byte, again time.Duration) {
	for {
		t0 := time.Now()
		c, done, err := f.dial(stop)
		if err != nil {
			f.idle.add("dial error", time.Since(t0))
		} else {
			f.idle.add(f.idleOnce(c, stop, req))
			close(done)
		}
		if again == 0 {
			<-stop
			return
		}
		if !sleepUntil(stop, time.Now().Add(again)) {
			return
		}
	}
}

// idleOnce is idleConn's one connection c.
func (f *flooder) idleOnce(c net.Conn, stop <-chan struct{}, req []byte) (string, time.Duration) {
	t0 := time.Now()
	if err := f.write(c, req); err != nil {
		return outcomeOf(err, stop), time.Since(t0)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return outcomeOf(err, stop), time.Since(t0)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return strconv.Itoa(resp.StatusCode), time.Since(t0)
	}
	t1 := time.Now()
	_, err = br.ReadByte() // returns when the server closes, or at stop
	return outcomeOf(err, stop), time.Since(t1)
}

// trickle writes head on c, its first chunk at once and the others one
// step apart from t0, each paid for to the pacer, then trickleLine every
// f.every, until a write fails or done closes.
func (f *flooder) trickle(c net.Conn, done <-chan struct{}, head []byte, t0 time.Time, step time.Duration) {
	for i := 0; i < len(head); i += endlessChunk {
		b := head[i:min(i+endlessChunk, len(head))]
		if i > 0 && (!sleepUntil(done, t0.Add(time.Duration(i/endlessChunk)*step)) || !f.pace.Wait(done, len(b), time.Time{})) {
			return
		}
		if f.write(c, b) != nil {
			return
		}
	}
	for {
		if !sleepUntil(done, time.Now().Add(f.every)) ||
			!f.pace.Wait(done, len(trickleLine), time.Time{}) || f.write(c, trickleLine) != nil {
			return
		}
	}
}

// sleepUntil sleeps until t, or returns false as soon as done closes.
func sleepUntil(done <-chan struct{}, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return !stopped(done)
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-done:
		return false
	}
}

// healthSummary is what the /healthz polls saw.
type healthSummary struct {
	Polls    int `json:"polls"`
	Failures int `json:"failures"`
	// The latencies are over all polls, a failed one counted at the time it
	// took (at most the one-second timeout).
	latencies
	// LongestGapMs is the longest time without a successful answer: between
	// two, or from the start to the first, or from the last to the end.
	LongestGapMs float64  `json:"longest_gap_ms"`
	FirstErrors  []string `json:"first_errors,omitempty"`
}

// healthTimeout bounds one /healthz poll.
const healthTimeout = time.Second

// pollHealth polls GET /healthz every interval until stop, each poll on a
// new connection; a poll that has not got 200 within healthTimeout fails.
// A poll that takes longer than interval delays the next one.
func pollHealth(stop <-chan struct{}, addr, host string, interval time.Duration) healthSummary {
	req := []byte("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
	var (
		s        healthSummary
		lat      []time.Duration
		errs     errorLog
		start    = time.Now()
		lastGood = start
	)
	for next := start; sleepUntil(stop, next); {
		t0 := time.Now()
		err := healthPoll(addr, req, t0.Add(healthTimeout))
		t1 := time.Now()
		if next = next.Add(interval); next.Before(t1) {
			next = t1
		}
		s.Polls++
		lat = append(lat, t1.Sub(t0))
		if err != nil {
			s.Failures++
			errs.add("%s: %v", t0.Sub(start).Round(time.Millisecond), err)
			continue
		}
		s.LongestGapMs = max(s.LongestGapMs, float64(t1.Sub(lastGood))/1e6)
		lastGood = t1
	}
	s.LongestGapMs = max(s.LongestGapMs, float64(time.Since(lastGood))/1e6)
	s.latencies = summarize([][]time.Duration{lat})
	s.FirstErrors = errs.first
	return s
}

// healthPoll sends req on a new connection and wants 200 before deadline.
func healthPoll(addr string, req []byte, deadline time.Time) error {
	c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := c.Write(req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: HTTP %d", resp.StatusCode)
	}
	return nil
}
