package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
	"github.com/timeaware/timeaware/verifier"
)

// The corpus is the same for the same seed (the Python baseline scores the
// dumped copy, the load generator rebuilds it), and buildCorpus's own check
// passes: every item scores as the generator meant it to.
func TestCorpusDeterministic(t *testing.T) {
	a, err := buildCorpus(600, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildCorpus(600, 7)
	if err != nil {
		t.Fatal(err)
	}
	if a.hash != b.hash || a.scoreSum != b.scoreSum {
		t.Fatalf("two builds differ: hash %x vs %x", a.hash, b.hash)
	}
	c, err := buildCorpus(600, 8)
	if err != nil {
		t.Fatal(err)
	}
	if c.hash == a.hash {
		t.Fatal("another seed gave the same corpus")
	}
	for i, it := range a.items {
		if n := len(it.line); n < 900 || n > 3600 {
			t.Errorf("item %d: %d bytes, want a 1-3 KB response", i, n)
		}
	}
	if a.correct == 0 || a.correct == len(a.items) || a.formatFails == 0 || a.late == 0 {
		t.Errorf("want a mix of right, wrong, malformed and late items: %+v", statsOf(a))
	}
}

// The raw client reads Content-Length and chunked responses, reuses its
// connection, and reconnects after the server closes one.
func TestRawClient(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/chunked":
			w.WriteHeader(http.StatusAccepted)
			for range 3 {
				w.Write(body)
				w.(http.Flusher).Flush()
			}
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write(body)
		default:
			w.Header().Set("Content-Length", "5")
			w.Write([]byte("hello"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	c := config{url: srv.URL, client: "raw", timeout: 5 * time.Second}
	d, err := newDoer(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	do := func(path, body string) (int, string) {
		t.Helper()
		req, err := newRequest(c, path, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		status, got, err := d.do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return status, string(got)
	}
	for range 3 {
		if s, b := do("/", "x"); s != 200 || b != "hello" {
			t.Fatalf("got %d %q", s, b)
		}
	}
	if s, b := do("/chunked", "ab"); s != 202 || b != "ababab" {
		t.Fatalf("chunked: got %d %q", s, b)
	}
	if s, b := do("/close", strings.Repeat("z", 100_000)); s != 200 || !bytes.Equal([]byte(b), bytes.Repeat([]byte("z"), 100_000)) {
		t.Fatalf("close: got %d, %d bytes", s, len(b))
	}
	if s, b := do("/", "x"); s != 200 || b != "hello" {
		t.Fatalf("after close: got %d %q", s, b)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (one kept alive, one after the server closed it)", n)
	}
}

// With -retry-429 a 429 is counted as shed and the request is sent again
// after the server's Retry-After, capped by -retry-max, by either client;
// without it, or for another status, the answer is returned as it is.
func TestRetry429(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/busy" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if calls.Add(1)%3 != 0 { // two 429s, then an answer
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"overloaded"}}`))
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()

	for _, client := range []string{"raw", "std"} {
		c := config{url: srv.URL, client: client, timeout: 5 * time.Second, clients: 1, retry429: true, retryMax: 20 * time.Millisecond}
		d, err := newDoer(c, newStdClient(c))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := newRequest(c, "/", []byte("{}"))
		t0 := time.Now()
		status, body, shed, err := doShed(c, d, req, time.Time{})
		if err != nil || status != 200 || string(body) != "ok" || shed != 2 {
			t.Fatalf("%s: got %d %q, %d shed, %v; want 200 \"ok\" after 2 shed", client, status, body, shed, err)
		}
		// Two waits of Retry-After would take 2 s at least.
		if el := time.Since(t0); el < 40*time.Millisecond || el >= 2*time.Second {
			t.Errorf("%s: took %v; want two waits of -retry-max (20 ms), not of Retry-After (1 s)", client, el)
		}
		if ra, ok := d.retryAfter(); ok || ra != 0 {
			t.Errorf("%s: the 200 has no Retry-After, got %v %v", client, ra, ok)
		}

		// Past until, the 429 is returned.
		status, _, shed, err = doShed(c, d, req, time.Now().Add(5*time.Millisecond))
		if err != nil || status != http.StatusTooManyRequests || shed != 1 {
			t.Errorf("%s: with no time left: got %d, %d shed, %v; want the 429", client, status, shed, err)
		}
		if ra, ok := d.retryAfter(); !ok || ra != time.Second {
			t.Errorf("%s: Retry-After %v %v, want 1s", client, ra, ok)
		}
		calls.Store(0)

		busy, _ := newRequest(c, "/busy", []byte("{}"))
		if status, _, shed, err := doShed(c, d, busy, time.Time{}); err != nil || status != 503 || shed != 0 {
			t.Errorf("%s: 503: got %d, %d shed, %v; want it returned, not retried", client, status, shed, err)
		}
		c.retry429 = false
		if status, _, shed, err := doShed(c, d, req, time.Time{}); err != nil || status != 429 || shed != 0 {
			t.Errorf("%s: without -retry-429: got %d, %d shed, %v; want the 429 returned", client, status, shed, err)
		}
		calls.Store(0)
	}
}

// A hog's body is exactly as long as asked, valid JSON, and a batch within
// the service's default item limit.
func TestHogBody(t *testing.T) {
	for _, n := range []int{100, 1 << 10, 700 << 10, 30 << 20} {
		b := hogBody(n)
		var req struct{ Items []itemJSON }
		if len(b) != n || json.Unmarshal(b, &req) != nil {
			t.Fatalf("hogBody(%d): %d bytes, valid %v", n, len(b), json.Valid(b))
		}
		if len(req.Items) > 8000 || n >= 1<<10 && len(req.Items) == 0 {
			t.Errorf("hogBody(%d): %d items", n, len(req.Items))
		}
		if n == 30<<20 && len(req.Items) < 7000 {
			t.Errorf("hogBody(30 MiB): %d items, want close to 8,000", len(req.Items))
		}
	}
}

// Hogs against the service with a 1 MiB request memory budget, of which
// large requests may hold three quarters: a body of 400 KiB grows its
// buffer to 512 KiB, so one hog holds its share until the body deadline
// (408), the other is refused part-way (429), and a small legitimate
// request meanwhile is served from the quarter kept for small ones.
func TestHogsUseUpTheMemoryBudget(t *testing.T) {
	store, err := timers.New(timers.Options{Secret: []byte("loadgen test secret, 32 bytes..")})
	if err != nil {
		t.Fatal(err)
	}
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := verifier.New(verifier.Options{Scorer: scorer, Timers: store, MemoryBudget: 1 << 20,
		MaxBodyBytes: 2 << 20, BodyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	c := config{url: ts.URL, client: "raw", timeout: 5 * time.Second, hog: 2, hogBytes: 400 << 10, duration: 1200 * time.Millisecond}
	probed := make(chan string, 1)
	go func() {
		d, _ := newDoer(c, nil)
		req, _ := newRequest(c, "/v1/score/batch", []byte(`{"items":[{"data_source":"timely/general","solution_str":"<answer>4</answer>","ground_truth":"4"}]}`))
		for range 100 {
			time.Sleep(10 * time.Millisecond)
			status, _, err := d.do(req)
			if err != nil || status != http.StatusOK {
				probed <- fmt.Sprintf("a legitimate request got %d (%v) while the hogs ran", status, err)
				return
			}
		}
		probed <- ""
	}()
	s, err := attack(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if msg := <-probed; msg != "" {
		t.Error(msg)
	}
	if s.HogStatuses["408"] == 0 || s.HogStatuses["429"] == 0 {
		t.Errorf("hogs got %v; want 408s (held to the body deadline) and 429s (refused memory)", s.HogStatuses)
	}
	if len(s.Statuses) != 0 || s.Hogs != 2 || s.HogBytes != 400<<10 {
		t.Errorf("summary %+v", s)
	}
}
