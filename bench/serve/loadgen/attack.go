package main

// attack mode: hostile clients beside the measured batch run, so that the
// benchmark reports what legitimate clients get while the service is under
// attack. Five kinds run at once for -duration (or until SIGTERM/SIGINT):
//
//   - stall:    -stall connections that send a request head and one byte
//     of a 1,000-byte body, then nothing; when the server cuts one off (its
//     body deadline), it reconnects;
//   - announce: -announce connections that announce a body just under the
//     32 MiB limit and send none of it, reconnecting when cut off;
//   - flood:    -flood clients sending back to back a 30 MB body of ten
//     million empty items;
//   - deep:     -deep clients (default 1) sending back to back a body
//     nested 100,000 deep;
//   - hog:      -hog connections (default 0) that announce a -hog-bytes
//     batch body (default 30 MiB, under the 32 MiB limit) and send all of
//     it but its last 16 bytes, at once, then nothing: each holds as much of
//     the server's request memory as a body can until the server answers
//     (408 at its body deadline, or 429 when its memory budget is used up)
//     or closes the connection; then it reconnects. Enough of them use up
//     the budget, and the server sheds requests with 429;
//   - headers and endless: -headers and -headers-endless connections of
//     the header flood (headers.go): about 1 MB of request head each,
//     finished or never;
//   - idle: -idle keep-alive connections that each send GET /healthz (no
//     token), read the answer, and then send nothing (headers.go).
//
// Answers are counted by status, the hogs' and the header flood's apart;
// the summary also gives the server's peak resident memory (VmHWM) when
// -server-pid is set, the CPU time the attack took, and, with -healthz,
// what GET /healthz answered meanwhile.

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/timeaware/timeaware/internal/pace"
)

type attackSummary struct {
	Mode            string         `json:"mode"`
	Seconds         float64        `json:"seconds"`
	Stalled         int            `json:"stalled_connections"`
	Announced       int            `json:"announced_connections"`
	Floods          int            `json:"flood_clients"`
	Deep            int            `json:"deep_clients"`
	Hogs            int            `json:"hog_connections"`
	HogBytes        int            `json:"hog_bytes"`
	Statuses        map[string]int `json:"statuses"`
	HogStatuses     map[string]int `json:"hog_statuses"`
	Reconnects      int64          `json:"reconnects"`
	ServerPeakRSSMB float64        `json:"server_peak_rss_mb,omitempty"`
	// The header flood: its connections, the length of their heads, whether
	// they carried the token, the pacer's rate, how each kind's connections
	// ended (and after how many seconds on average), the connections opened
	// and the bytes sent.
	HeaderConns     int                `json:"header_connections"`
	EndlessConns    int                `json:"endless_connections"`
	HeaderBytes     int                `json:"header_bytes,omitempty"`
	HeaderPad       int                `json:"header_pad,omitempty"`
	HeaderAuth      bool               `json:"header_auth"`
	HeaderRateMBs   float64            `json:"header_rate_mb_s,omitempty"`
	HeaderOutcomes  map[string]int     `json:"header_outcomes,omitempty"`
	HeaderMeanS     map[string]float64 `json:"header_mean_s,omitempty"`
	EndlessOutcomes map[string]int     `json:"endless_outcomes,omitempty"`
	EndlessMeanS    map[string]float64 `json:"endless_mean_s,omitempty"`
	HeaderOpened    int64              `json:"header_connections_opened"`
	// The idle flood: its connections (those opened are counted in
	// header_connections_opened with the header flood's), how each ended, and the seconds
	// between its answer and its end on average ("open at end" for those
	// the server kept).
	IdleConns    int                `json:"idle_connections,omitempty"`
	IdleOutcomes map[string]int     `json:"idle_outcomes,omitempty"`
	IdleMeanS    map[string]float64 `json:"idle_mean_s,omitempty"`
	HeaderSentMB float64            `json:"header_sent_mb"`
	// LoadgenCPUS is the CPU time this process used during the attack.
	LoadgenCPUS float64        `json:"loadgen_cpu_s"`
	Healthz     *healthSummary `json:"healthz,omitempty"`
}

type attacker struct {
	addr, host string
	token      string
	mu         sync.Mutex
	statuses   map[string]int
	hogs       map[string]int // the hogs' answers
	reconnects atomic.Int64
}

func (a *attacker) count(status string) { a.countIn(a.statuses, status) }

func (a *attacker) countIn(m map[string]int, status string) {
	a.mu.Lock()
	m[status]++
	a.mu.Unlock()
}

func (a *attacker) head(path string, contentLength int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, a.host, contentLength)
	if a.token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", a.token)
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// hold sends head+start on a fresh connection and waits for the server to
// answer or close it; then it starts over, until stop.
func (a *attacker) hold(stop <-chan struct{}, head, start []byte) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", a.addr, 5*time.Second)
		if err != nil {
			a.count("dial error")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		go func() { <-stop; c.Close() }()
		if _, err := c.Write(append(append([]byte(nil), head...), start...)); err != nil {
			c.Close()
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			a.count(strconv.Itoa(resp.StatusCode))
			resp.Body.Close()
		}
		c.Close()
		a.reconnects.Add(1)
	}
}

// send posts body back to back on one keep-alive connection (reopened when
// the server closes it), counting the statuses.
func (a *attacker) send(stop <-chan struct{}, path string, body []byte) {
	req := append(a.head(path, len(body)), body...)
	var c net.Conn
	var br *bufio.Reader
	for {
		select {
		case <-stop:
			if c != nil {
				c.Close()
			}
			return
		default:
		}
		if c == nil {
			var err error
			if c, err = net.DialTimeout("tcp", a.addr, 5*time.Second); err != nil {
				a.count("dial error")
				time.Sleep(100 * time.Millisecond)
				continue
			}
			br = bufio.NewReader(c)
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		_, err := c.Write(req)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(br, nil)
		}
		if err != nil {
			a.count("connection error")
			c.Close()
			c = nil
			continue
		}
		a.count(strconv.Itoa(resp.StatusCode))
		_, _ = bufio.NewReader(resp.Body).WriteTo(nopWriter{})
		resp.Body.Close()
		if resp.Close {
			c.Close()
			c = nil
		}
	}
}

// hogHeld is how many bytes at the end of its body a hog never sends.
const hogHeld = 16

// hog sends a request head announcing len(body) bytes and all of body but
// its last hogHeld bytes, then waits for the server to answer or close the
// connection; then it starts over, until stop.
func (a *attacker) hog(stop <-chan struct{}, body []byte) {
	head := a.head("/v1/score/batch", len(body))
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", a.addr, 5*time.Second)
		if err != nil {
			a.countIn(a.hogs, "dial error")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-stop:
			case <-done:
			}
			c.Close()
		}()
		// The body is written beside the read: a server that answers
		// before reading it all (429) stops reading, and the write then
		// blocks until the connection is closed.
		go func() {
			if _, err := c.Write(head); err == nil {
				_, _ = c.Write(body[:len(body)-hogHeld])
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		switch {
		case err == nil:
			a.countIn(a.hogs, strconv.Itoa(resp.StatusCode))
			resp.Body.Close()
		case !stopped(stop):
			a.countIn(a.hogs, "connection error")
		}
		close(done)
		a.reconnects.Add(1)
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// hogBody is a batch body of exactly n bytes: at most 8,000 timely/general
// items of ~n/8,000 bytes each (so that the body would be a valid batch
// within the service's default limits, were it sent whole), then spaces.
func hogBody(n int) []byte {
	const (
		maxItems = 8000
		prefix   = `{"items":[`
		suffix   = `]}`
		head     = `{"data_source":"timely/general","solution_str":"<think>`
		tail     = `</think><answer>42</answer>","ground_truth":"42","extra_info":{"elapsed_s":1,"time_limit_s":60,"index":0,"split":"bench"}}`
	)
	text := max((n-len(prefix)-len(suffix))/maxItems-1-len(head)-len(tail), 0)
	item := head + strings.Repeat("Step by step. ", text/14+1)[:text] + tail
	b := make([]byte, 0, n)
	b = append(b, prefix...)
	for k := 0; k < maxItems && len(b)+1+len(item)+len(suffix) <= n; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	for len(b) < n-len(suffix) {
		b = append(b, ' ')
	}
	return append(b, suffix...)
}

// roundAll rounds m's values to a tenth, for printing.
func roundAll(m map[string]float64) map[string]float64 {
	r := make(map[string]float64, len(m))
	for k, v := range m {
		r[k] = math.Round(v*10) / 10
	}
	return r
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func runAttack(c config) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	s, err := attack(c, sig)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "attack: %.0f s; %d stalled, %d announced, %d flood clients, %d deep, %d hogs of %d bytes; answers %v, hogs' %v; %d reconnects; server peak RSS %.0f MB; attack used %.2f cores\n",
		s.Seconds, s.Stalled, s.Announced, s.Floods, s.Deep, s.Hogs, s.HogBytes, s.Statuses, s.HogStatuses, s.Reconnects, s.ServerPeakRSSMB, s.LoadgenCPUS/s.Seconds)
	if s.HeaderConns+s.EndlessConns > 0 {
		fmt.Fprintf(os.Stderr, "  header flood: %d finished and %d endless heads of %d bytes (token %v), %.1f MB sent on %d connections; finished heads got %v (mean seconds %v), endless %v (mean seconds %v)\n",
			s.HeaderConns, s.EndlessConns, s.HeaderBytes, s.HeaderAuth, s.HeaderSentMB, s.HeaderOpened, s.HeaderOutcomes, roundAll(s.HeaderMeanS), s.EndlessOutcomes, roundAll(s.EndlessMeanS))
	}
	if s.IdleConns > 0 {
		fmt.Fprintf(os.Stderr, "  idle flood: %d connections; they ended %v (mean seconds idle %v)\n", s.IdleConns, s.IdleOutcomes, roundAll(s.IdleMeanS))
	}
	if h := s.Healthz; h != nil {
		fmt.Fprintf(os.Stderr, "  GET /healthz: %d polls, %d failed; p50 %.2f ms, p99 %.2f ms, max %.1f ms; longest without an answer %.0f ms; first errors %q\n",
			h.Polls, h.Failures, h.P50, h.P99, h.Max, h.LongestGapMs, h.FirstErrors)
	}
	emit(c, s)
	return nil
}

// attack runs the attackers for c.duration, or until interrupt.
func attack(c config, interrupt <-chan os.Signal) (attackSummary, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return attackSummary{}, err
	}
	if c.hog > 0 && c.hogBytes <= hogHeld {
		return attackSummary{}, fmt.Errorf("-hog-bytes %d: want more than %d", c.hogBytes, hogHeld)
	}
	a := &attacker{addr: u.Host, host: u.Host, token: c.token, statuses: map[string]int{}, hogs: map[string]int{}}
	var heads, endless []byte
	if c.headers > 0 || c.endless > 0 {
		token := ""
		if c.headerAuth {
			token = c.token
		}
		if heads, err = floodHead(u.Host, token, c.headerBytes, c.headerPad, true); err != nil {
			return attackSummary{}, fmt.Errorf("-header-bytes: %w", err)
		}
		endless = heads[:len(heads)-2]
	}
	fl := &flooder{addr: u.Host, pace: pace.New(float64(c.headerRate)), wait: c.headerWait, over: c.endlessOver,
		every: c.endlessEvery, headers: newOutcomes(), endless: newOutcomes(), idle: newOutcomes()}
	cpu0 := sampleCPU(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for range c.stall {
		start(func() { a.hold(stop, a.head("/v1/score/batch", 1000), []byte("{")) })
	}
	for range c.announce {
		start(func() { a.hold(stop, a.head("/v1/score/batch", 32<<20-1), nil) })
	}
	flood := append(append([]byte(`{"items":[`), bytes.Repeat([]byte(`{},`), 10_000_000)...), `{}]}`...)
	for range c.flood {
		start(func() { a.send(stop, "/v1/score/batch", flood) })
	}
	deep := []byte(`{"data_source":"timepuzzles","ground_truth":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`)
	for range c.deep {
		start(func() { a.send(stop, "/v1/score", deep) })
	}
	if c.hog > 0 {
		hb := hogBody(c.hogBytes)
		for range c.hog {
			start(func() { a.hog(stop, hb) })
		}
	}

	for range c.headers {
		start(func() { fl.finished(stop, heads) })
	}
	for range c.endless {
		start(func() { fl.endlessConn(stop, endless) })
	}
	idleReq := []byte("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
	for range c.idle {
		start(func() { fl.idleConn(stop, idleReq, c.idleAgain) })
	}
	var health healthSummary
	if c.healthz > 0 {
		start(func() {
			if sleepUntil(stop, time.Now().Add(c.healthzAfter)) {
				health = pollHealth(stop, u.Host, u.Host, c.healthz)
			}
		})
	}

	t0 := time.Now()
	select {
	case <-time.After(c.duration):
	case <-interrupt:
	}
	close(stop)
	wg.Wait()
	s := attackSummary{Mode: "attack", Seconds: time.Since(t0).Seconds(), Stalled: c.stall, Announced: c.announce,
		Floods: c.flood, Deep: c.deep, Hogs: c.hog, HogBytes: c.hogBytes, Statuses: a.statuses, HogStatuses: a.hogs,
		Reconnects: a.reconnects.Load()}
	if c.hog == 0 {
		s.HogBytes = 0
	}
	s.LoadgenCPUS = (sampleCPU(0).self - cpu0.self).Seconds()
	if c.headers > 0 || c.endless > 0 {
		s.HeaderConns, s.EndlessConns, s.HeaderBytes, s.HeaderPad = c.headers, c.endless, c.headerBytes, c.headerPad
		s.HeaderAuth = c.headerAuth && c.token != ""
		s.HeaderRateMBs = float64(c.headerRate) / 1e6
		s.HeaderOutcomes, s.HeaderMeanS = fl.headers.n, fl.headers.means()
		s.EndlessOutcomes, s.EndlessMeanS = fl.endless.n, fl.endless.means()
		s.HeaderOpened, s.HeaderSentMB = fl.opened.Load(), float64(fl.sent.Load())/1e6
	}
	if c.idle > 0 {
		s.IdleConns, s.IdleOutcomes, s.IdleMeanS = c.idle, fl.idle.n, fl.idle.means()
		s.HeaderOpened = fl.opened.Load()
	}
	if c.healthz > 0 {
		s.Healthz = &health
	}
	if c.serverPID > 0 {
		if kb, err := procStatusKB(c.serverPID, "VmHWM"); err == nil {
			s.ServerPeakRSSMB = float64(kb) / 1024
		}
	}
	return s, nil
}

// procStatusKB reads one "Name: N kB" line of /proc/PID/status.
func procStatusKB(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, name)
}
