package verifier

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// metrics are the service's Prometheus series. Label values are resolved
// once per route and data source, so the hot path only adds to counters.
type metrics struct {
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	inflight   prometheus.Gauge
	items      *prometheus.CounterVec
	batchItems prometheus.Histogram
	timers     *prometheus.CounterVec
	bySource   map[string][2]prometheus.Counter
	// clientFallbacks counts the items clients report having given the
	// fallback score because they got no answer (header
	// Timeaware-Client-Fallbacks on their next batch request).
	clientFallbacks prometheus.Counter
	// shed counts requests refused with 429 before their handler ran, by
	// the bound they hit: memory (the body budget) or inflight (the slots);
	// and connections answered 503 without their head being parsed:
	// connections (the cap) or connection_memory (the budget).
	shed *prometheus.CounterVec
	// conns is the number of open connections.
	conns prometheus.Gauge
	// evictable counts the open connections a new one may replace, by
	// state (idle, closing); evicted counts those it replaced.
	evictable *prometheus.GaugeVec
	evicted   *prometheus.CounterVec
	// groupSolveRate is the solve rate of each group a group-wise reward
	// scored, and groupsFailed counts the groups that could not be, by data
	// source.
	groupSolveRate *prometheus.HistogramVec
	groupsFailed   *prometheus.CounterVec
}

// clientFallbacksHeader carries, on a batch request, how many items the
// client gave the fallback score since its last successful request.
const clientFallbacksHeader = "Timeaware-Client-Fallbacks"

// maxReportedFallbacks bounds one report, so a hostile header cannot make
// the counter meaningless.
const maxReportedFallbacks = 1 << 20

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timeaware_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "timeaware_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "timeaware_http_inflight_requests", Help: "Requests being served.",
		}),
		items: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timeaware_scored_items_total", Help: "Scored items by data source and outcome (ok or error).",
		}, []string{"data_source", "outcome"}),
		batchItems: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "timeaware_batch_items", Help: "Items per batch request (/v1/score/batch and /v1/openrlhf).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}),
		timers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timeaware_timer_operations_total", Help: "Timer operations by kind and outcome.",
		}, []string{"op", "outcome"}),
		bySource: map[string][2]prometheus.Counter{},
		clientFallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timeaware_client_fallback_items_total",
			Help: "Items clients scored with their fallback because no answer reached them, as they report on later requests.",
		}),
	}
	m.shed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "timeaware_shed_requests_total", Help: "Requests refused before scoring, by the bound they hit: memory or inflight (429), connections or connection_memory (503, the request head dropped unparsed).",
	}, []string{"reason"})
	m.conns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "timeaware_open_connections", Help: "Open client connections (bounded by serve.max_conns).",
	})
	m.evictable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "timeaware_evictable_connections", Help: "Open connections a new one may replace when serve.max_conns or the memory budget is reached: idle (waiting for a request) or closing (answered, waiting for the client to close).",
	}, []string{"state"})
	m.evicted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "timeaware_evicted_connections_total", Help: "Connections closed to make room for a new one, by the state they were in: idle or closing.",
	}, []string{"state"})
	m.groupSolveRate = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "timeaware_group_solve_rate", Help: "Solve rate of each group a group-wise reward scored (the completions of one prompt), by data source.",
		Buckets: prometheus.LinearBuckets(0, 0.1, 11),
	}, []string{"data_source"})
	m.groupsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "timeaware_groups_failed_total", Help: "Groups a group-wise reward could not score (a member that could not be), by data source.",
	}, []string{"data_source"})
	reg.MustRegister(m.requests, m.latency, m.inflight, m.items, m.batchItems, m.timers, m.clientFallbacks, m.shed, m.conns, m.evictable, m.evicted,
		m.groupSolveRate, m.groupsFailed)
	for _, r := range rewards.All {
		m.bySource[r.DataSource] = [2]prometheus.Counter{
			m.items.WithLabelValues(r.DataSource, "ok"), m.items.WithLabelValues(r.DataSource, "error"),
		}
	}
	m.bySource["unknown"] = [2]prometheus.Counter{m.items.WithLabelValues("unknown", "ok"), m.items.WithLabelValues("unknown", "error")}
	return m
}

// scored adds n items of a data source, failed of which failed.
func (m *metrics) scored(ds string, n, failed int) {
	c, ok := m.bySource[ds]
	if !ok {
		c = m.bySource["unknown"]
	}
	if n > failed {
		c[0].Add(float64(n - failed))
	}
	if failed > 0 {
		c[1].Add(float64(failed))
	}
}

// group records one group a group-wise reward scored: its solve rate, read
// from a member's details, or its failure.
func (m *metrics) group(r *rewards.Reward, res rewards.Result) {
	if res.Err != nil {
		m.groupsFailed.WithLabelValues(r.DataSource).Inc()
		return
	}
	if i := r.KeyIndex("solve_rate"); i >= 0 {
		m.groupSolveRate.WithLabelValues(r.DataSource).Observe(res.Details[i])
	}
}

// clientReport adds a client's report of fallback items; a value that is
// not a whole number in [0, maxReportedFallbacks] is ignored.
func (m *metrics) clientReport(header string) {
	if header == "" {
		return
	}
	n, err := strconv.ParseUint(header, 10, 32)
	if err != nil || n > maxReportedFallbacks {
		return
	}
	m.clientFallbacks.Add(float64(n))
}

func (m *metrics) timerOp(op string, err error) {
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, timers.ErrExpired):
		outcome = "expired"
	case errors.Is(err, timers.ErrFull):
		outcome = "full"
	default:
		outcome = "error"
	}
	m.timers.WithLabelValues(op, outcome).Inc()
}

// routeMetrics caches one route's series.
type routeMetrics struct {
	m       *metrics
	name    string
	latency prometheus.Observer
	mu      sync.Mutex
	codes   map[int]prometheus.Counter
}

func (m *metrics) route(name string) *routeMetrics {
	return &routeMetrics{m: m, name: name, latency: m.latency.WithLabelValues(name), codes: map[int]prometheus.Counter{}}
}

func (rm *routeMetrics) observe(code int, d time.Duration) {
	rm.latency.Observe(d.Seconds())
	rm.mu.Lock()
	c, ok := rm.codes[code]
	if !ok {
		c = rm.m.requests.WithLabelValues(rm.name, strconv.Itoa(code))
		rm.codes[code] = c
	}
	rm.mu.Unlock()
	c.Inc()
}
