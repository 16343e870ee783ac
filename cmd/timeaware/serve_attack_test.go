package main

// The attack suite: the real `timeaware serve` binary over loopback, probed
// the way a hostile or broken client would, each case bounded to a few
// seconds. Memory is the server process's resident set (VmRSS), read from
// /proc, so the bounds hold for what the kernel sees, not for Go's view of
// its heap.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attackMemoryBound is the resident memory the server must stay under
// through every attack below: its memory limit is set to it, and its
// request budget to half of it (the default ratio).
const attackMemoryBound = 256 << 20

func attackServer(t *testing.T, env ...string) *serverProc {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's memory from /proc")
	}
	base := []string{
		"TIMEAWARE_SERVE_MEMORY_LIMIT=" + strconv.Itoa(attackMemoryBound),
		"TIMEAWARE_SERVE_MEMORY_BUDGET=" + strconv.Itoa(attackMemoryBound/2),
		"TIMEAWARE_TIMERS_SECRET=attack-suite-secret-0123456789",
	}
	return startServer(t, append(base, env...)...)
}

// waitMetric polls a series of the server's /metrics, on a keep-alive
// connection of its own, until cond holds: the state a test waits for
// before its next step, instead of a sleep that assumes how long the server
// takes to get there.
func (p *serverProc) waitMetric(t *testing.T, series string, cond func(float64) bool, msg string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	last := -1.0
	require.Eventually(t, func() bool { last = p.metric(client, series); return cond(last) }, 30*time.Second, 5*time.Millisecond,
		"%s (%s is %v)", msg, series, last)
}

// rss is the server process's resident memory in bytes.
func (p *serverProc) rss(t *testing.T) int64 {
	t.Helper()
	return p.procStatus(t, "VmRSS:")
}

// peakRSS is the most resident memory the server process has had.
func (p *serverProc) peakRSS(t *testing.T) int64 {
	t.Helper()
	return p.procStatus(t, "VmHWM:")
}

// procStatus reads a size in kB from the server's /proc status, in bytes.
func (p *serverProc) procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// rawRequest opens a connection and writes a request head (and an optional
// start of body) as given; the caller owns the connection.
func rawRequest(t *testing.T, addr, head string, body []byte) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	_, err = c.Write(append([]byte(head), body...))
	require.NoError(t, err)
	return c
}

// readStatus reads the status code of the response on c, or the error
// that ended the read.
func readStatus(c net.Conn, within time.Duration) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// status reads the status code of the response on c (0 on a read error).
func status(c net.Conn, within time.Duration) int {
	code, _ := readStatus(c, within)
	return code
}

func postHead(path string, contentLength int64) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, contentLength)
}

func TestAttackAnnouncedBodiesTakeNoMemory(t *testing.T) {
	p := attackServer(t)
	addr := p.addr
	before := p.rss(t)
	// 64 connections announce more than the body limit, 64 announce just
	// under it; none sends a byte of body.
	var conns []net.Conn
	for i := range 128 {
		cl := int64(67108864)
		if i%2 == 1 {
			cl = 32<<20 - 1
		}
		conns = append(conns, rawRequest(t, addr, postHead("/v1/score/batch", cl), nil))
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < len(conns); i += 2 {
		assert.Equal(t, http.StatusRequestEntityTooLarge, status(conns[i], 2*time.Second), "conn %d: refused before reading", i)
	}
	p.waitMetric(t, "timeaware_http_inflight_requests", func(v float64) bool { return v == 64 }, "the other 64 bodies are being read")
	after := p.rss(t)
	t.Logf("server RSS: %d MiB before, %d MiB with 64 announced-but-unsent 32 MiB bodies", before>>20, after>>20)
	assert.Less(t, after, before+64<<20, "memory follows the bytes that arrived, not the bytes announced")
	assert.Less(t, after, int64(attackMemoryBound))
	// A normal request is served meanwhile.
	code, _ := doJSON(t, "POST", p.url+"/v1/score", `{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15"}`)
	assert.Equal(t, http.StatusOK, code)
}

func TestAttackTenMillionItemsAreRefusedInUnderASecond(t *testing.T) {
	p := attackServer(t)
	body := append(append([]byte(`{"items":[`), bytes.Repeat([]byte(`{},`), 10_000_000)...), `{}]}`...)
	require.Less(t, len(body), 32<<20, "within the body limit: only the item limit refuses it")
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"well formed", body},
		{"malformed after the items", append(body[:len(body)-2:len(body)-2], `,}`...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp, err := http.Post(p.url+"/v1/score/batch", "application/json", bytes.NewReader(tc.body))
			require.NoError(t, err)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			t.Logf("%d-byte body refused in %v: %s", len(tc.body), took, bytes.TrimSpace(raw))
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			assert.Contains(t, string(raw), `"too_many_items"`)
			assert.Less(t, took, time.Second)
			assert.Less(t, p.rss(t), int64(attackMemoryBound))
		})
	}
}

func TestAttackStalledBodiesLockNobodyOut(t *testing.T) {
	const stalled = 600
	p := attackServer(t, "TIMEAWARE_SERVE_BODY_TIMEOUT=3s")
	addr := p.addr
	conns := make([]net.Conn, stalled)
	for i := range conns {
		conns[i] = rawRequest(t, addr, postHead("/v1/score/batch", 1000), []byte("{"))
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	p.waitMetric(t, "timeaware_http_inflight_requests", func(v float64) bool { return v == stalled }, "all 600 are in their body reads")

	start := time.Now()
	code, out := doJSON(t, "POST", p.url+"/v1/score/batch",
		`{"items":[{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15"}]}`)
	took := time.Since(start)
	require.Equal(t, http.StatusOK, code, "%v", out)
	t.Logf("a normal request with %d stalled bodies connected: %v", stalled, took)
	m, err := p.metrics(http.DefaultClient)
	require.NoError(t, err)
	assert.NotContains(t, m, `timeaware_http_requests_total{code="408",route="/v1/score/batch"}`,
		"served while every stalled body was still within its deadline: none has been cut yet")

	// The stalled clients are cut off at the deadline with 408.
	var timedOut atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status(c, 6*time.Second) == http.StatusRequestTimeout {
				timedOut.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, stalled, timedOut.Load())
	assert.Less(t, p.rss(t), int64(attackMemoryBound))
}

// TestAttackHeaderFloodLeavesTheServiceUp: 600 connections send request
// heads of 1 MB (400 of them whole, 200 trickling without end) while
// legitimate clients score batches and a prober polls /healthz. Header bytes
// are bounded and counted, so the server stays under its memory bound and
// answers everyone else; the endless heads are cut at the header timeout.
func TestAttackHeaderFloodLeavesTheServiceUp(t *testing.T) {
	const whole, endless = 400, 200
	// Endless heads are cut at the default header timeout, 5 s.
	p := attackServer(t)
	pad := strings.Repeat("X-Padding-"+strings.Repeat("p", 20)+": "+strings.Repeat("v", 3000)+"\r\n", 340) // about 1 MB
	head := "POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 33554432\r\n"
	item := `{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15"}`
	batch := `{"items":[` + strings.Repeat(item+",", 63) + item + `]}`

	// The legitimate clients and the prober connect first, as a trainer's
	// workers already would be.
	stop := make(chan struct{})
	var legit, legitFailed, probes, probeFailed atomic.Int64
	var slowestProbe atomic.Int64
	var legitErr atomic.Value
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := postBatch(hc, p.url, batch); err != nil {
					legitFailed.Add(1)
					legitErr.CompareAndSwap(nil, err.Error())
					continue
				}
				legit.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		hc := &http.Client{Timeout: 10 * time.Second}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			resp, err := hc.Get(p.url + "/healthz")
			if err != nil {
				probeFailed.Add(1)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				probeFailed.Add(1)
				continue
			}
			probes.Add(1)
			if d := int64(time.Since(start)); d > slowestProbe.Load() {
				slowestProbe.Store(d)
			}
		}
	}()
	// Every client has been served once before the flood begins.
	require.Eventually(t, func() bool { return legit.Load() >= 4 && probes.Load() >= 1 }, 30*time.Second, 5*time.Millisecond,
		"the legitimate clients and the prober are served before the flood")

	var flood sync.WaitGroup
	var answered431, closed, otherwise, cut atomic.Int64
	for i := range whole + endless {
		flood.Add(1)
		go func() {
			defer flood.Done()
			c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			if i < whole {
				go func() { _, _ = io.WriteString(c, head+pad+"\r\n{") }()
				// The server answers 431 and closes; closing with the rest
				// of the head unread resets the connection, which may
				// discard the answer before the client reads it.
				switch code, err := readStatus(c, 10*time.Second); {
				case code == http.StatusRequestHeaderFieldsTooLarge:
					answered431.Add(1)
				case code == 0 && !isTimeout(err):
					closed.Add(1)
				default:
					otherwise.Add(1)
				}
				return
			}
			// Endless: a line of header now and then, never the blank line.
			_, _ = io.WriteString(c, head+pad[:20<<10])
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
				if _, err := io.Copy(io.Discard, c); !isTimeout(err) {
					cut.Add(1) // the server closed it
				}
			}()
			for {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
					if _, err := io.WriteString(c, "X-More: v\r\n"); err != nil {
						<-done
						return
					}
				}
			}
		}()
	}
	flood.Wait()
	close(stop)
	wg.Wait()
	peak := p.peakRSS(t)
	t.Logf("flood: %d heads answered 431, %d closed unread, %d otherwise; %d endless heads cut; legit batches: %d ok, %d failed; /healthz: %d ok, %d failed, slowest %v; peak RSS %d MiB",
		answered431.Load(), closed.Load(), otherwise.Load(), cut.Load(), legit.Load(), legitFailed.Load(), probes.Load(), probeFailed.Load(), time.Duration(slowestProbe.Load()), peak>>20)
	p.failIfExited(t)
	assert.Less(t, peak, int64(attackMemoryBound), "the server stays under its memory bound")
	assert.Zero(t, otherwise.Load(), "every oversized head is refused at once: 431, or closed unread")
	assert.Positive(t, answered431.Load())
	assert.EqualValues(t, endless, cut.Load(), "every endless head is cut at the header timeout")
	assert.Zero(t, legitFailed.Load(), "legitimate batches all succeed; first failure: %v", legitErr.Load())
	assert.Zero(t, probeFailed.Load(), "/healthz always answers")
	assert.Positive(t, legit.Load())
	// How fast they answer is measured by make bench-serve (runs g to i),
	// on a quiet machine; here the flood shares the cores with the test.
}

func TestAttackTimerOverflowCannotBendAReward(t *testing.T) {
	p := attackServer(t)
	code, created := doJSON(t, "POST", p.url+"/v1/timers", `{"time_limit_s":10}`)
	require.Equal(t, http.StatusCreated, code)
	tok := created["timer"].(string)
	last := 0.0
	for i := range 10 {
		code, rd := doJSON(t, "POST", p.url+"/v1/timers/"+tok+"/spans", `{"seconds":1e9,"simulated":true}`)
		if code == http.StatusOK {
			tok = rd["timer"].(string)
		} else {
			require.Equal(t, http.StatusBadRequest, code, "span %d: %v", i, rd)
		}
		_, now := doJSON(t, "GET", p.url+"/v1/timers/"+tok, "")
		el := now["elapsed_s"].(float64)
		assert.GreaterOrEqual(t, el, last, "span %d: the reading went back", i)
		last = el
	}
	code, res := doJSON(t, "POST", p.url+"/v1/score", `{"data_source":"timely/general","solution_str":"<answer>21</answer>","ground_truth":"21","extra_info":{"timer":"`+tok+`"}}`)
	require.Equal(t, http.StatusOK, code, "%v", res)
	assert.Equal(t, 0.0, res["score"], "a right answer far past its limit earns nothing")
	assert.Equal(t, 0.0, res["on_time"])
}

// TestAttackClientsCannotBendTheClock: what sets a timely reward (the
// limit, the elapsed time) comes from the service's signed timer, whatever
// the row or the client states.
func TestAttackClientsCannotBendTheClock(t *testing.T) {
	p := attackServer(t)
	timer := func(t *testing.T, spec string) string {
		t.Helper()
		code, created := doJSON(t, "POST", p.url+"/v1/timers", spec)
		require.Equal(t, http.StatusCreated, code, "%v", created)
		return created["timer"].(string)
	}
	span := func(t *testing.T, tok, body string) (int, map[string]any) {
		t.Helper()
		return doJSON(t, "POST", p.url+"/v1/timers/"+tok+"/spans", body)
	}
	score := func(t *testing.T, tok, extra string) (int, map[string]any) {
		t.Helper()
		return doJSON(t, "POST", p.url+"/v1/score", `{"data_source":"timely/general","solution_str":"<answer>21</answer>","ground_truth":"21","extra_info":{"timer":"`+tok+`"`+extra+`}}`)
	}

	t.Run("a row cannot loosen the signed limit", func(t *testing.T) {
		tok := timer(t, `{"time_limit_s":2}`)
		code, rd := span(t, tok, `{"seconds":3,"simulated":true}`) // 3 s of tool latency: late
		require.Equal(t, http.StatusOK, code, "%v", rd)
		tok = rd["timer"].(string)
		code, res := score(t, tok, `,"time_limit_s":1e9`)
		require.Equal(t, http.StatusBadRequest, code, "%v", res)
		e := res["error"].(map[string]any)
		assert.Equal(t, "extra_info.time_limit_s", e["field"])
		assert.Contains(t, e["message"], "1e+09")
		assert.Contains(t, e["message"], "limit of 2 s signed into extra_info.timer")
		code, res = score(t, tok, "")
		require.Equal(t, http.StatusOK, code, "%v", res)
		assert.Equal(t, 0.0, res["score"], "late by the signed limit")
		assert.Equal(t, 2.0, res["time_limit_s"])
	})

	t.Run("an old token reads the newest state", func(t *testing.T) {
		first := timer(t, `{"time_limit_s":10}`)
		code, rd := span(t, first, `{"seconds":30,"simulated":true}`)
		require.Equal(t, http.StatusOK, code, "%v", rd)
		code, stopped := doJSON(t, "DELETE", p.url+"/v1/timers/"+rd["timer"].(string), "")
		require.Equal(t, http.StatusOK, code, "%v", stopped)
		code, res := score(t, first, "")
		require.Equal(t, http.StatusOK, code, "%v", res)
		assert.GreaterOrEqual(t, res["elapsed_s"], 30.0, "the span added after the first token counts")
		assert.Equal(t, 0.0, res["score"])
		code, res = span(t, first, `{"action":"start"}`)
		assert.Equal(t, http.StatusBadRequest, code, "the token issued before the stop cannot restart the timer: %v", res)
		code, res = doJSON(t, "GET", p.url+"/v1/timers/"+first, "")
		require.Equal(t, http.StatusOK, code)
		assert.Equal(t, true, res["stopped"])
	})

	t.Run("a stated span is capped at the wall clock", func(t *testing.T) {
		began := time.Now()
		tok := timer(t, `{"speed_factor":100,"time_limit_s":10}`)
		code, rd := span(t, tok, `{"seconds":1000}`)
		wall := time.Since(began).Seconds()
		require.Equal(t, http.StatusOK, code, "%v", rd)
		assert.LessOrEqual(t, rd["tool_s"], wall, "no more tool time than the wall clock ran")
	})

	t.Run("a span never ended does not shorten the rollout", func(t *testing.T) {
		tok := timer(t, `{"speed_factor":50,"time_limit_s":5}`)
		code, rd := span(t, tok, `{"action":"start"}`)
		require.Equal(t, http.StatusOK, code, "%v", rd)
		time.Sleep(200 * time.Millisecond) // 10 s at α = 50: late
		code, res := score(t, rd["timer"].(string), "")
		require.Equal(t, http.StatusOK, code, "%v", res)
		assert.GreaterOrEqual(t, res["elapsed_s"], 10.0)
		assert.Equal(t, 0.0, res["score"])
		code, stopped := doJSON(t, "DELETE", p.url+"/v1/timers/"+rd["timer"].(string), "")
		require.Equal(t, http.StatusOK, code)
		assert.GreaterOrEqual(t, stopped["elapsed_s"], 10.0, "stopping leaves the open span out of the tool time")
		assert.Equal(t, 0.0, stopped["tool_s"])
	})
}

// TestAttackSigtermUnderLoadResetsNothing: SIGTERM under load resets no
// request, whether the clients leave when readiness fails, as a load
// balancer makes them, or keep sending on new connections until the
// listener refuses them, as clients that talk to the replica directly do.
// A refused connection has sent nothing and may go elsewhere; a reset one
// has lost its request.
func TestAttackSigtermUnderLoadResetsNothing(t *testing.T) {
	tests := []struct {
		name           string
		clients, items int
		readiness      bool // the clients look at /readyz when the server closes their connection
	}{
		{"clients that follow readiness, 256-item batches", 32, 256, true},
		{"clients that ignore readiness, 64-item batches", 64, 64, false},
		{"clients that ignore readiness, 512-item batches", 32, 512, false},
		{"clients that ignore readiness, 8192-item batches", 8, 8192, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sigtermUnderLoad(t, tc.clients, tc.items, tc.readiness)
		})
	}
}

func sigtermUnderLoad(t *testing.T, clients, items int, readiness bool) {
	p := attackServer(t, "TIMEAWARE_SERVE_SHUTDOWN_GRACE=1s")
	item := `{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15"}`
	body := `{"items":[` + strings.Repeat(item+",", items-1) + item + `]}`
	var served, failed, left atomic.Int64
	var errs sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One keep-alive client each, as trainers' reward workers are.
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				closed, err := postBatch(hc, p.url, body)
				if err != nil {
					if errorsIsRefused(err) {
						left.Add(1) // the listener had closed: the request never reached the server
						return
					}
					failed.Add(1)
					errs.Store(c, err.Error())
					return
				}
				served.Add(1)
				if closed && readiness {
					// The server asked for the connection back: as a load
					// balancer would, look at readiness before sending more.
					r, err := hc.Get(p.url + "/readyz")
					if err == nil {
						r.Body.Close()
						if r.StatusCode == http.StatusServiceUnavailable {
							left.Add(1)
							return
						}
					}
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return served.Load() >= int64(clients) }, 30*time.Second, 5*time.Millisecond,
		"the clients are served before SIGTERM")
	before := served.Load()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- <-p.done }()
	var exitErr error
	select {
	case exitErr = <-exited:
		p.done <- exitErr
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
	}
	close(stop)
	wg.Wait()
	errs.Range(func(k, v any) bool { t.Errorf("client %v: %v", k, v); return true })
	t.Logf("%d requests before SIGTERM, %d in all; %d clients left on readiness or a closed listener", before, served.Load(), left.Load())
	assert.Zero(t, failed.Load(), "no request that reached the server was reset")
	assert.Greater(t, served.Load(), before, "requests were served during the grace period")
	assert.NoError(t, exitErr, "a clean drain exits 0")
	assert.Contains(t, p.stderr.String(), "readiness failing")
}

// postBatch posts a batch body to the server at base and reads the answer
// through; err is the request's error, or the status of an answer other
// than 200, and closed says whether the server asked for the connection
// back.
func postBatch(hc *http.Client, base, body string) (closed bool, err error) {
	resp, err := hc.Post(base+"/v1/score/batch", "application/json", strings.NewReader(body))
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.Close, errors.New(resp.Status)
	}
	return resp.Close, nil
}

func errorsIsRefused(err error) bool {
	return strings.Contains(err.Error(), "connection refused")
}

// TestAttackTokensNoClientCanSendStopTheStart: a token that begins or ends
// with white space, or holds a control character, would lock every client
// out; serve refuses it at start, naming the key and never the value.
func TestAttackTokensNoClientCanSendStopTheStart(t *testing.T) {
	for _, tok := range []string{"   ", " s3cret-value", "s3cret-value\t", "s3cret\x01value"} {
		t.Run(strconv.Quote(tok), func(t *testing.T) {
			t.Setenv("TIMEAWARE_SERVE_TOKEN", tok)
			code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0")
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, "TIMEAWARE_SERVE_TOKEN: ")
			assert.Contains(t, stderr, "no client can send it in a header")
			assert.NotContains(t, stderr, "s3cret", "the secret is never printed")
		})
	}
	t.Setenv("TIMEAWARE_SERVE_MEMORY_BUDGET", "60500")
	code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "TIMEAWARE_SERVE_MEMORY_BUDGET=60500: a budget of 60500 bytes holds fewer than 4 connections")
}

// TestAttackTimerFloodForgetsNoTimer: creating timers far past what the
// service may hold neither grows it past its bound nor makes it forget a
// running timer, whose older token would then undo its spans and its
// stop: the surplus is refused with 503 and Retry-After, and counted.
func TestAttackTimerFloodForgetsNoTimer(t *testing.T) {
	p := attackServer(t, "TIMEAWARE_TIMERS_MAX_ROLLOUTS=200")
	code, created := doJSON(t, "POST", p.url+"/v1/timers", `{"time_limit_s":100}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	first := created["timer"].(string)
	code, rd := doJSON(t, "POST", p.url+"/v1/timers/"+first+"/spans", `{"seconds":40,"simulated":true}`)
	require.Equal(t, http.StatusOK, code, "%v", rd)
	code, stopped := doJSON(t, "DELETE", p.url+"/v1/timers/"+rd["timer"].(string), "")
	require.Equal(t, http.StatusOK, code, "%v", stopped)

	refused := 0
	for i := range 1000 {
		code, res := doJSON(t, "POST", p.url+"/v1/timers", fmt.Sprintf(`{"rollout_id":"flood-%d"}`, i))
		if code == http.StatusServiceUnavailable {
			assert.Equal(t, "timer_index_full", res["error"].(map[string]any)["code"])
			refused++
			continue
		}
		require.Equal(t, http.StatusCreated, code, "%v", res)
	}
	assert.Equal(t, 801, refused, "the service holds 200 timers, the first among them")
	code, got := doJSON(t, "GET", p.url+"/v1/timers/"+first, "")
	require.Equal(t, http.StatusOK, code, "%v", got)
	assert.Equal(t, true, got["stopped"], "the token issued before the stop reads the stopped timer")
	assert.Equal(t, stopped["elapsed_s"], got["elapsed_s"], "with the span added after it")
	code, res := doJSON(t, "POST", p.url+"/v1/timers/"+first+"/spans", `{"action":"start"}`)
	assert.Equal(t, http.StatusBadRequest, code, "and cannot restart it: %v", res)
	p.waitMetric(t, `timeaware_timer_operations_total{op="create",outcome="full"}`, func(v float64) bool { return v == 801 }, "every refusal is counted")
	p.waitMetric(t, "timeaware_timers_held", func(v float64) bool { return v == 200 }, "the service holds what it may")
}

// TestAttackStatedSpansRefusedWhereToolTimeIsMeasured: with
// timers.measured_spans_only a stated span cannot turn generation time
// into tool time (α = 4: a 3 s wait stated as a span); spans the service
// measures still count.
func TestAttackStatedSpansRefusedWhereToolTimeIsMeasured(t *testing.T) {
	p := attackServer(t, "TIMEAWARE_TIMERS_MEASURED_SPANS_ONLY=true")
	code, created := doJSON(t, "POST", p.url+"/v1/timers", `{"speed_factor":4,"time_limit_s":10}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)
	code, res := doJSON(t, "POST", p.url+"/v1/timers/"+tok+"/spans", `{"seconds":3}`)
	require.Equal(t, http.StatusBadRequest, code, "%v", res)
	assert.Equal(t, "seconds", res["error"].(map[string]any)["field"])
	code, res = doJSON(t, "POST", p.url+"/v1/timers/"+tok+"/spans", `{"action":"start"}`)
	require.Equal(t, http.StatusOK, code, "%v", res)
	code, res = doJSON(t, "POST", p.url+"/v1/timers/"+res["timer"].(string)+"/spans", `{"action":"end"}`)
	require.Equal(t, http.StatusOK, code, "%v", res)
	assert.Positive(t, res["tool_s"], "the measured span counts")
}
