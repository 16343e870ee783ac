package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The workers mode is a training cluster's rollout workers: -workers
// keep-alive connections, one per worker, of which -idle speak once every
// -speak-every and do nothing in between, and the rest send a -batch item
// request every -active-every, as workers paced by generation do. More
// connections than the server's cap: it makes room for a worker that
// speaks by closing connections that have done nothing for a while, and a
// worker whose connection was closed meanwhile opens another (the raw
// client sends once more on a fresh connection, as trainers' HTTP clients
// do on a connection the server closed while it was idle). Every request
// must be answered 200: a worker that speaks is served. After -warmup (in
// which every worker has connected and spoken once), -duration is
// measured. It reports the requests of the active and the idle workers
// with their latencies, the answers other than 200, the connections the
// server closed to make room (/metrics), and the server's peak resident
// memory.

// With -replicas (a comma-separated list of base URLs), the workers are
// spread over several replicas behind what a Kubernetes Service gives
// them: the load generator reads each replica's /readyz every 250 ms, as
// a readiness probe does, and a worker that opens a connection opens it to
// the first ready replica from its own; a connection already open stays
// where it is until the server closes it. A replica may then be restarted
// under the load (run.sh does it one at a time): on SIGTERM its readiness
// fails, its answers close their connections, and it refuses new ones
// once it stops. A request whose connection is refused before it is
// written goes to the next ready replica (moved). Before it sends on a
// kept-alive connection, a worker looks whether the server has closed it
// meanwhile, as Python's urllib3 does, and opens another if so. A request
// that a kept-alive connection loses before any of its answer arrives (the
// server closed the connection as it was sent: the request never reached
// a handler) is sent again at once on a fresh connection, as the project's
// Python client does, and counted as resent; a request lost on a fresh
// connection, or lost again, is reset, and fails the run.

// workersSummary is the workers mode's -json line.
type workersSummary struct {
	Mode    string  `json:"mode"`
	Workers int     `json:"workers"`
	Idle    int     `json:"idle_workers"`
	Batch   int     `json:"batch"`
	Seconds float64 `json:"seconds"`
	// Active and Speakers are the measured requests of the active and the
	// idle workers; ItemsPerS counts both.
	Active    int64     `json:"active_requests"`
	Speakers  int64     `json:"idle_requests"`
	ItemsPerS float64   `json:"items_per_s"`
	ActiveLat latencies `json:"active_latency"`
	IdleLat   latencies `json:"idle_latency"`
	// Refused counts 503s, Shed 429s, Failed transport errors: all of
	// them fail the run.
	Refused int64 `json:"refused"`
	Shed    int64 `json:"shed"`
	Failed  int64 `json:"failed"`
	// Moved counts the requests sent to another replica because theirs
	// refused the connection before they were written (-replicas), and
	// Reset the requests lost after they were written.
	Moved int64 `json:"moved"`
	Reset int64 `json:"reset"`
	// Resent counts the requests sent again on a fresh connection because
	// the server closed their kept-alive one under them.
	Resent int64 `json:"resent"`
	// Evicted is the connections the server closed to make room, by state.
	Evicted         map[string]float64 `json:"evicted"`
	MaxConns        float64            `json:"server_open_connections_max"`
	ServerPeakRSSMB float64            `json:"server_peak_rss_mb,omitempty"`
}

func runWorkers(c config) error {
	if c.workers <= 0 || c.idleWorkers < 0 || c.idleWorkers > c.workers || c.speakEvery <= 0 || c.activeEvery <= 0 {
		return errors.New("-workers must be positive, -idle-workers within it, -speak-every and -active-every positive")
	}
	if c.warmup < c.speakEvery {
		return fmt.Errorf("-warmup %v must be at least -speak-every %v, so that every worker has spoken before the measurement", c.warmup, c.speakEvery)
	}
	// every is how often worker w sends a request: the first -idle-workers
	// are the idle ones.
	every := func(w int) time.Duration {
		if w < c.idleWorkers {
			return c.speakEvery
		}
		return c.activeEvery
	}
	bodies, err := loadBodies(c)
	if err != nil {
		return err
	}
	std := newStdClient(c)
	rt, err := newRouter(c)
	if err != nil {
		return err
	}
	var (
		reset, resent           atomic.Int64
		errs                    errorLog
		refused, shed, failed   atomic.Int64
		activeN, idleN          atomic.Int64
		lat                     = make([][]time.Duration, c.workers)
		start                   = time.Now()
		measureFrom             = start.Add(c.warmup)
		deadline                = measureFrom.Add(c.duration)
		rng                     = rand.New(rand.NewPCG(c.seed, 7))
		offsets                 = make([]time.Duration, c.workers)
		maxOpen                 atomic.Int64
		stopScrape, scrapeEnded = make(chan struct{}), make(chan struct{})
	)
	for i := range offsets {
		offsets[i] = time.Duration(rng.Int64N(int64(every(i))))
	}
	go rt.watch(stopScrape, scrapeEnded, func() {
		if len(rt.addrs) == 1 {
			if v := int64(scrapeMetrics(std, c)["timeaware_open_connections"]); v > maxOpen.Load() {
				maxOpen.Store(v)
			}
		}
	})
	before := scrapeMetrics(std, c)
	var wg sync.WaitGroup
	for w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idle := w < c.idleWorkers
			home := w % len(rt.addrs)
			p := &rawDoer{addr: rt.addrs[home], timeout: c.timeout}
			defer func() { p.close(); resent.Add(p.resent) }()
			mine := make([]time.Duration, 0, 64)
			next := start.Add(offsets[w])
			for k := w % len(bodies); ; k = (k + c.workers) % len(bodies) {
				time.Sleep(time.Until(next))
				t0 := time.Now()
				if t0.After(deadline) {
					break
				}
				if p.conn != nil && p.dropped() {
					p.close()
				}
				status, body, err := rt.do(p, bodies[k].req, home)
				t1 := time.Now()
				next = next.Add(every(w))
				switch {
				case err != nil:
					if unsent(err) {
						failed.Add(1)
						errs.add("worker %d: no replica took the connection: %v", w, err)
					} else {
						reset.Add(1)
						errs.add("worker %d: lost after it was sent: %v", w, err)
					}
					continue
				case status == http.StatusServiceUnavailable:
					refused.Add(1)
					errs.add("worker %d (%s): HTTP 503: %.200s", w, map[bool]string{true: "idle", false: "active"}[idle], body)
					continue
				case status == http.StatusTooManyRequests:
					shed.Add(1)
					errs.add("worker %d: HTTP 429: %.200s", w, body)
					continue
				case status != http.StatusOK:
					failed.Add(1)
					errs.add("worker %d: HTTP %d: %.200s", w, status, body)
					continue
				}
				if t0.Before(measureFrom) {
					continue
				}
				mine = append(mine, t1.Sub(t0))
				if idle {
					idleN.Add(1)
				} else {
					activeN.Add(1)
				}
			}
			lat[w] = mine
		}()
	}
	wg.Wait()
	close(stopScrape)
	<-scrapeEnded
	after := scrapeMetrics(std, c)
	s := workersSummary{Mode: "workers", Workers: c.workers, Idle: c.idleWorkers, Batch: c.batch, Seconds: c.duration.Seconds(),
		Active: activeN.Load(), Speakers: idleN.Load(),
		ActiveLat: summarize(lat[c.idleWorkers:]), IdleLat: summarize(lat[:c.idleWorkers]),
		Refused: refused.Load(), Shed: shed.Load(), Failed: failed.Load(), Moved: rt.moved.Load(), Reset: reset.Load(), Resent: resent.Load(), Evicted: map[string]float64{},
		MaxConns: float64(maxOpen.Load())}
	s.ItemsPerS = float64((s.Active+s.Speakers)*int64(c.batch)) / s.Seconds
	if len(rt.addrs) == 1 { // a restarted replica's counters start again
		for _, st := range []string{"idle", "closing"} {
			key := fmt.Sprintf(`timeaware_evicted_connections_total{state=%q}`, st)
			s.Evicted[st] = after[key] - before[key]
		}
	}
	if c.serverPID > 0 {
		if kb, err := procStatusKB(c.serverPID, "VmHWM"); err == nil {
			s.ServerPeakRSSMB = float64(kb) / 1024
		}
	}
	fmt.Fprintf(os.Stderr, "workers: %d keep-alive workers, %d of them idle (one request every %v), the others one every %v, %d items each; %.0f s measured after %.0f s\n",
		s.Workers, s.Idle, c.speakEvery, c.activeEvery, s.Batch, s.Seconds, c.warmup.Seconds())
	fmt.Fprintf(os.Stderr, "  active: %d requests, p50 / p99 %.1f / %.1f ms; idle: %d requests, p50 / p99 %.1f / %.1f ms; %.0f items/s\n",
		s.Active, s.ActiveLat.P50, s.ActiveLat.P99, s.Speakers, s.IdleLat.P50, s.IdleLat.P99, s.ItemsPerS)
	fmt.Fprintf(os.Stderr, "  replicas: %d; requests moved to another replica before they were sent: %d; resent on a fresh connection after the server closed a kept-alive one under them: %d; lost: %d\n", len(rt.addrs), s.Moved, s.Resent, s.Reset)
	if len(rt.addrs) == 1 {
		fmt.Fprintf(os.Stderr, "  503: %d, 429: %d, failed: %d; the server closed %.0f idle and %.0f closing connections to make room, held at most %.0f open; peak RSS %.0f MiB\n",
			s.Refused, s.Shed, s.Failed, s.Evicted["idle"], s.Evicted["closing"], s.MaxConns, s.ServerPeakRSSMB)
	} else {
		fmt.Fprintf(os.Stderr, "  503: %d, 429: %d, failed: %d\n", s.Refused, s.Shed, s.Failed)
	}
	emit(c, s)
	if err := errs.err("requests not served"); err != nil {
		return err
	}
	if s.Active == 0 || (s.Idle > 0 && s.Speakers == 0) {
		return errors.New("no request completed in the measured window")
	}
	return nil
}
