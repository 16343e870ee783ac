package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
