package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The churn mode creates timers as a long training run does, as fast as
// the server takes them: -creations in all (default 5,000,000), each with
// a fresh rollout id and a ttl of -ttl, from -clients clients on keep-alive
// connections. The rollout ids have the lengths of -id-bytes, one per
// client in turn. The server holds every timer until its ttl passes and
// refuses new ones while its index is full (503 timer_index_full, with
// Retry-After); a refused client waits min(Retry-After, 200 ms) and goes
// on with the next id. It reports:
//
//   - creations, refusals, and the server's own count of refusals
//     (timeaware_timer_operations_total{op="create",outcome="full"}), which
//     must be equal: every refusal is counted where an operator sees it;
//   - probes: one timer in -probe-every is read (POST
//     /v1/tools/get_duration) at 80% of its ttl (at least 1 s before it),
//     which must answer 200 (a
//     timer is never lost before its ttl), and again 1.5 s after its ttl,
//     which must answer 410 (its tokens are refused once it expired);
//   - the most timers the server held and the most index bytes, scraped
//     from /metrics every second, against the index's limit, and the
//     server's peak resident memory (-server-pid).
//
// Any other answer, a lost probe, or a refusal count that differs fails
// the run.
//
// With -replicas, the creations and probes go through the router of the
// workers mode (router.go): each client to the first ready replica from
// its own, a request refused before it was written to the next (moved),
// a kept-alive connection the server closed meanwhile opened again. A
// replica may then be restarted under the load: a restarted one knows
// none of the timers but reads any token signed with the shared secret.
// The server's count of refusals is then not compared (a restarted
// replica's counters start again), and a probe reads on any replica.

// churnSummary is the churn mode's -json line.
type churnSummary struct {
	Mode      string  `json:"mode"`
	Clients   int     `json:"clients"`
	IDBytes   []int   `json:"id_bytes"`
	TTLS      float64 `json:"ttl_s"`
	Creations int64   `json:"creations"`
	Created   int64   `json:"created"`
	Refused   int64   `json:"refused"`
	// RefusedByServer is the server's count of refused creations (-url's
	// only, with -replicas).
	RefusedByServer float64 `json:"refused_by_server"`
	// Replicas is the number of replicas; Moved counts the requests sent
	// to another because theirs refused the connection before they were
	// written, Resent those sent again on a fresh connection because the
	// server closed their kept-alive one under them.
	Replicas    int     `json:"replicas"`
	Moved       int64   `json:"moved"`
	Resent      int64   `json:"resent"`
	Other       int64   `json:"other"`
	Seconds     float64 `json:"seconds"`
	CreatedPerS float64 `json:"created_per_s"`
	Probes      int64   `json:"probes"`
	// ProbesLost counts probes not answered 200 before their ttl, and
	// ProbesAlive those still answered 200 after it.
	ProbesLost      int64   `json:"probes_lost"`
	ProbesAlive     int64   `json:"probes_alive"`
	HeldMax         float64 `json:"held_max"`
	IndexBytesMax   float64 `json:"index_bytes_max"`
	IndexLimitBytes float64 `json:"index_limit_bytes"`
	ServerPeakRSSMB float64 `json:"server_peak_rss_mb,omitempty"`
}

// churnProbe is a timer the probes read back.
type churnProbe struct {
	created time.Time
	req     *request // POST /v1/tools/get_duration with the timer's token
}

func runChurn(c config) error {
	s, err := churn(c)
	if s.Mode == "" {
		return err
	}
	fmt.Fprintf(os.Stderr, "churn: %d timer creations (rollout ids of %v bytes, ttl %v) by %d clients in %.0f s: %d created (%.0f/s), %d refused while the index was full (the server counted %.0f), %d other answers\n",
		s.Creations, s.IDBytes, c.ttl, s.Clients, s.Seconds, s.Created, s.CreatedPerS, s.Refused, s.RefusedByServer, s.Other)
	fmt.Fprintf(os.Stderr, "  probes: %d, %d lost before their ttl, %d still read after it; held at most %.0f timers, index at most %.1f of %.1f MiB; server peak RSS %.0f MiB\n",
		s.Probes, s.ProbesLost, s.ProbesAlive, s.HeldMax, s.IndexBytesMax/(1<<20), s.IndexLimitBytes/(1<<20), s.ServerPeakRSSMB)
	if s.Replicas > 1 {
		fmt.Fprintf(os.Stderr, "  replicas: %d; requests moved to another before they were sent: %d; resent on a fresh connection: %d\n", s.Replicas, s.Moved, s.Resent)
	}
	emit(c, s)
	return err
}

// churn runs the churn mode; the summary is complete (Mode set) whenever
// the run got to its end, even when it returns an error.
func churn(c config) (churnSummary, error) {
	ids, err := parseIDBytes(c.idBytes)
	if err != nil {
		return churnSummary{}, err
	}
	if c.creations <= 0 || c.ttl < 2*time.Second || c.probeEvery <= 0 {
		return churnSummary{}, errors.New("-creations and -probe-every must be positive, -ttl at least 2s")
	}
	if c.client != "raw" {
		// Each creation writes its number into the raw request's bytes.
		return churnSummary{}, errors.New("-mode churn: only -client raw")
	}
	std := newStdClient(c)
	rt, err := newRouter(c)
	if err != nil {
		return churnSummary{}, err
	}
	stopWatch, watchEnded := make(chan struct{}), make(chan struct{})
	if len(rt.addrs) > 1 {
		go rt.watch(stopWatch, watchEnded, nil)
	} else {
		close(watchEnded)
	}
	defer func() { close(stopWatch); <-watchEnded }()
	var (
		seq, created, refused, other, lost, alive, probes, resent atomic.Int64
		errs                                                      errorLog
		due                                                       = make(chan churnProbe, c.creations/int64(c.probeEvery)+int64(c.clients)+1)
		expired                                                   = make(chan churnProbe, cap(due))
	)
	start := time.Now()
	var wg sync.WaitGroup
	for ci := range c.clients {
		tmpl, at, err := churnRequest(c, ids[ci%len(ids)])
		if err != nil {
			return churnSummary{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			home := ci % len(rt.addrs)
			p := &rawDoer{addr: rt.addrs[home], timeout: c.timeout}
			defer func() { p.close(); resent.Add(p.resent) }()
			digits := tmpl.raw[at : at+churnDigits]
			for {
				n := seq.Add(1)
				if n > c.creations {
					return
				}
				copy(digits, fmt.Appendf(nil, "%0*d", churnDigits, n))
				if p.conn != nil && p.dropped() {
					p.close()
				}
				status, body, err := rt.do(p, tmpl, home)
				switch {
				case err != nil:
					other.Add(1)
					errs.add("creation %d: %v", n, err)
				case status == http.StatusCreated:
					created.Add(1)
					if n%int64(c.probeEvery) == 0 {
						pr, err := churnProbeOf(c, body)
						if err != nil {
							errs.add("creation %d: %v", n, err)
							continue
						}
						probes.Add(1)
						due <- pr
					}
				case status == http.StatusServiceUnavailable && bytes.Contains(body, []byte(`"timer_index_full"`)):
					refused.Add(1)
					wait := 200 * time.Millisecond
					if d, ok := p.retryAfter(); ok {
						wait = min(wait, d)
					}
					time.Sleep(wait)
				default:
					other.Add(1)
					errs.add("creation %d: HTTP %d: %.200s", n, status, body)
				}
			}
		}()
	}
	// The probes: at 80% of the ttl (at least 1 s before it) a probe must
	// read, 1.5 s after the ttl it must be refused as expired.
	var probers sync.WaitGroup
	probe := func(in <-chan churnProbe, after time.Duration, want int, bad *atomic.Int64, what string, out chan<- churnProbe) {
		defer probers.Done()
		p := &rawDoer{addr: rt.addrs[0], timeout: c.timeout}
		defer p.close()
		for pr := range in {
			time.Sleep(time.Until(pr.created.Add(after)))
			if p.conn != nil && p.dropped() {
				p.close()
			}
			status, body, err := rt.do(p, pr.req, 0)
			if err != nil || status != want {
				bad.Add(1)
				errs.add("probe %v after its creation (ttl %v): want %d %s, got %d %v %.200s", time.Since(pr.created).Round(time.Millisecond), c.ttl, want, what, status, err, body)
			}
			if out != nil {
				out <- pr
			}
		}
		if out != nil {
			close(out)
		}
	}
	probers.Add(2)
	go probe(due, min(c.ttl*8/10, c.ttl-time.Second), http.StatusOK, &lost, "(held until its ttl)", expired)
	go probe(expired, c.ttl+1500*time.Millisecond, http.StatusGone, &alive, "(expired)", nil)

	// The server's gauges, every second.
	var held, idxBytes, idxLimit float64
	scrape := func() map[string]float64 { return scrapeMetrics(std, c) }
	stopScrape := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			m := scrape()
			held, idxBytes = max(held, m["timeaware_timers_held"]), max(idxBytes, m["timeaware_timer_index_bytes"])
			idxLimit = m["timeaware_timer_index_limit_bytes"]
			select {
			case <-stopScrape:
				return
			case <-t.C:
			}
		}
	}()
	wg.Wait()
	secs := time.Since(start).Seconds()
	close(due)
	probers.Wait()
	close(stopScrape)
	<-scraped
	m := scrape()
	s := churnSummary{Mode: "churn", Clients: c.clients, IDBytes: ids, TTLS: c.ttl.Seconds(), Creations: c.creations,
		Created: created.Load(), Refused: refused.Load(), RefusedByServer: m[`timeaware_timer_operations_total{op="create",outcome="full"}`],
		Other: other.Load(), Seconds: secs, CreatedPerS: float64(created.Load()) / secs,
		Probes: probes.Load(), ProbesLost: lost.Load(), ProbesAlive: alive.Load(),
		Replicas: len(rt.addrs), Moved: rt.moved.Load(), Resent: resent.Load(),
		HeldMax: held, IndexBytesMax: idxBytes, IndexLimitBytes: idxLimit}
	if c.serverPID > 0 {
		if kb, err := procStatusKB(c.serverPID, "VmHWM"); err == nil {
			s.ServerPeakRSSMB = float64(kb) / 1024
		}
	}
	if err := errs.err("errors"); err != nil {
		return s, err
	}
	if len(rt.addrs) == 1 && float64(s.Refused) != s.RefusedByServer {
		return s, fmt.Errorf("the clients were refused %d creations, the server counted %.0f", s.Refused, s.RefusedByServer)
	}
	return s, nil
}

// churnDigits is the width of the creation number in a churn rollout id.
const churnDigits = 12

// churnRequest is a creation request whose rollout id is idBytes long, and
// the offset in its raw bytes of the id's number, which each creation
// overwrites.
func churnRequest(c config, idBytes int) (*request, int, error) {
	id := "churn-" + strings.Repeat("0", churnDigits)
	id += strings.Repeat("x", idBytes-len(id))
	body := fmt.Sprintf(`{"rollout_id":%q,"ttl_s":%g,"time_limit_s":60}`, id, c.ttl.Seconds())
	req, err := newRequest(c, "/v1/timers", []byte(body))
	if err != nil {
		return nil, 0, err
	}
	at := bytes.Index(req.raw, []byte(`"churn-`))
	return req, at + len(`"churn-`), nil
}

// churnProbeOf is the probe of a created timer, from its creation's answer.
func churnProbeOf(c config, body []byte) (churnProbe, error) {
	var rd struct {
		Timer string `json:"timer"`
	}
	if err := json.Unmarshal(body, &rd); err != nil || rd.Timer == "" {
		return churnProbe{}, fmt.Errorf("unexpected answer %.200s", body)
	}
	b, _ := json.Marshal(map[string]string{"timer": rd.Timer})
	req, err := newRequest(c, "/v1/tools/get_duration", b)
	return churnProbe{created: time.Now(), req: req}, err
}

// parseIDBytes reads -id-bytes, a comma-separated list of rollout id
// lengths.
func parseIDBytes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < len("churn-")+churnDigits || n > 1024 {
			return nil, fmt.Errorf("-id-bytes %q: want lengths from %d to 1024, separated by commas", s, len("churn-")+churnDigits)
		}
		out = append(out, n)
	}
	return out, nil
}

// scrapeMetrics reads the server's /metrics into series → value (the
// series as exposed, labels included); a failed scrape is empty.
func scrapeMetrics(hc *http.Client, c config) map[string]float64 {
	m := map[string]float64{}
	req, err := http.NewRequest(http.MethodGet, c.url+"/metrics", nil)
	if err != nil {
		return m
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil && i > 0 {
			m[line[:i]] = v
		}
	}
	return m
}
