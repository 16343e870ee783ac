package main

// attack mode: hostile clients beside the measured batch run, so that the
// benchmark reports what legitimate clients get while the service is under
// attack. Four kinds run at once for -duration:
//
//   - stall:    -stall connections that send a request head and one byte
//     of a 1,000-byte body, then nothing; when the server cuts one off (its
//     body deadline), it reconnects;
//   - announce: -announce connections that announce a body just under the
//     32 MiB limit and send none of it, reconnecting when cut off;
//   - flood:    -flood clients sending back to back a 30 MB body of ten
//     million empty items;
//   - deep:     one client sending back to back a body nested 100,000 deep.
//
// Answers are counted by status; the summary also gives the server's peak
// resident memory (VmHWM) when -server-pid is set.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type attackSummary struct {
	Mode            string         `json:"mode"`
	Seconds         float64        `json:"seconds"`
	Stalled         int            `json:"stalled_connections"`
	Announced       int            `json:"announced_connections"`
	Floods          int            `json:"flood_clients"`
	Statuses        map[string]int `json:"statuses"`
	Reconnects      int64          `json:"reconnects"`
	ServerPeakRSSMB float64        `json:"server_peak_rss_mb,omitempty"`
}

type attacker struct {
	addr, host string
	token      string
	mu         sync.Mutex
	statuses   map[string]int
	reconnects atomic.Int64
}

func (a *attacker) count(status string) {
	a.mu.Lock()
	a.statuses[status]++
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

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func runAttack(c config) error {
	u, err := url.Parse(c.url)
	if err != nil {
		return err
	}
	a := &attacker{addr: u.Host, host: u.Host, token: c.token, statuses: map[string]int{}}
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
	start(func() { a.send(stop, "/v1/score", deep) })

	t0 := time.Now()
	time.Sleep(c.duration)
	close(stop)
	wg.Wait()
	s := attackSummary{Mode: "attack", Seconds: time.Since(t0).Seconds(), Stalled: c.stall, Announced: c.announce,
		Floods: c.flood, Statuses: a.statuses, Reconnects: a.reconnects.Load()}
	if c.serverPID > 0 {
		if kb, err := procStatusKB(c.serverPID, "VmHWM"); err == nil {
			s.ServerPeakRSSMB = float64(kb) / 1024
		}
	}
	fmt.Fprintf(os.Stderr, "attack: %.0f s; %d stalled, %d announced, %d flood clients, 1 deep; answers %v; %d reconnects; server peak RSS %.0f MB\n",
		s.Seconds, s.Stalled, s.Announced, s.Floods, s.Statuses, s.Reconnects, s.ServerPeakRSSMB)
	emit(c, s)
	return nil
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
