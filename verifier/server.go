// Package verifier is the HTTP verifier service that GRPO trainers call for
// rewards: single and batch scoring, the OpenRLHF remote reward protocol,
// per-rollout timers and their get_duration tool, the reward registry,
// health, Prometheus metrics and an OpenAPI document.
//
// Handlers return (value, error); one wrapper writes the value as JSON or
// maps the error to a status and a JSON error body (errors.go), so every
// route answers bad input the same way. The service never trusts its input:
// bodies and batch sizes are limited, every item is scored in isolation
// (one bad item gets the fallback score and an error, the rest score), and
// a panic in a handler becomes a 500 without taking the process down.
//
// Run is the service as a process runs it: listening, an address file, the
// memory limit and a graceful shutdown. SampleRollout runs one timed
// rollout through a service on a loopback port, as a trainer would.
package verifier

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/timeaware/timeaware/internal/seal"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
	"github.com/timeaware/timeaware/timers"
)

// Options configures a Server. Zero values take the defaults noted.
type Options struct {
	// Scorer scores items; required.
	Scorer *rewards.Scorer
	// Timers issues and reads timers; required.
	Timers *timers.Store
	// Token, when set, is the bearer token every /v1 request must carry.
	Token string
	// MaxBodyBytes limits a request body (default 32 MiB). A larger
	// Content-Length is refused before the body is read.
	MaxBodyBytes int64
	// BodyTimeout bounds the time from the end of the headers to the end of
	// the body (default 10 s), so a client that stalls mid-body frees its
	// connection; it answers 408.
	BodyTimeout time.Duration
	// MemoryBudget bounds the memory that the bodies being read and decoded
	// hold at once, counted as they grow (default 1 GiB). A request that
	// does not fit gets 429 at once; set it below the process's memory
	// limit so requests are shed before that limit is reached.
	MemoryBudget int64
	// MaxBatchItems limits the items of one batch, and the entries of each
	// list of an OpenRLHF request (default 8192).
	MaxBatchItems int
	// MaxJSONDepth limits the nesting of a body (default 64); MaxStringBytes
	// limits any one string in it (default 8 MiB).
	MaxJSONDepth   int
	MaxStringBytes int
	// RequestTimeout bounds the work on one request (default 30 s).
	RequestTimeout time.Duration
	// MaxInflight bounds concurrent /v1 requests; more get 429 (default 512).
	MaxInflight int
	// MaxHeaderBytes bounds a request's head, its request line and headers
	// (default 32 KiB; this API needs a few hundred bytes); a larger one
	// answers 431. HeaderTimeout bounds the time to read it (default 5 s),
	// after which the connection is closed.
	MaxHeaderBytes int
	HeaderTimeout  time.Duration
	// MaxConns caps open connections; one more is answered 503 with
	// Retry-After, its head dropped unread, and closed. Every open
	// connection also reserves what it may hold before its body (its
	// buffers and a head of MaxHeaderBytes) from MemoryBudget. The default
	// is what half of MemoryBudget pays for (about 5,960 connections of
	// 88 KiB for a 1 GiB budget), and no fewer than 64.
	MaxConns int
	// EvictIdleAfter is how long a connection must have waited for its
	// next request before a new connection may take its place when
	// MaxConns or the budget is reached (default 1 s). Connections closing
	// after their last answer may be replaced at once.
	EvictIdleAfter time.Duration
	// AuthAll requires the token on every route. By default /healthz,
	// /readyz, /metrics and /openapi.json answer without it, so that
	// probes and scrapers need no secret; they reveal the service's
	// version, its per-route traffic and its API, nothing of any rollout.
	AuthAll bool
	// OpenRLHFDataSource is the data source of OpenRLHF requests that do not
	// name one in the data_source query parameter (default timely/general).
	OpenRLHFDataSource string
	// NegotiationOpponent, when set, plays the other side of negotiation
	// steps that ask for a model opponent ("opponent": {"kind": "model"}).
	NegotiationOpponent negotiation.Opponent
	// EpisodeSecret keys the signatures of the negotiation environment's
	// episode states; replicas that share it answer each other's steps. nil
	// means a random per-process secret.
	EpisodeSecret []byte
	// ShutdownGrace is how long the service keeps answering after it is
	// told to stop, with /readyz failing and keep-alives off, so a load
	// balancer sees it leave and clients move their connections before the
	// listener closes (default 0: none).
	ShutdownGrace time.Duration
	// ShutdownTimeout bounds the drain of in-flight requests (default 30 s).
	ShutdownTimeout time.Duration
	// Logger receives start, stop and handler-failure messages (default: discard).
	Logger *slog.Logger
	// Version is reported by /healthz.
	Version string
}

// Server is the verifier service.
type Server struct {
	opts     Options
	mux      *http.ServeMux
	metrics  *metrics
	sem      chan struct{}
	mem      memBudget
	bodies   *sync.Pool // request body buffers (body.go)
	lim      limits
	stopping atomic.Bool  // set when shutdown begins; /readyz fails from then on
	episodes *seal.Sealer // seals negotiation episode states (negotiation.go)
}

// New checks opts and builds the service's routes.
func New(opts Options) (*Server, error) {
	if opts.Scorer == nil || opts.Timers == nil {
		return nil, errors.New("verifier: a scorer and a timer store are required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 32 << 20
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 10 * time.Second
	}
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = 1 << 30
	}
	if opts.MaxBatchItems <= 0 {
		opts.MaxBatchItems = 8192
	}
	if opts.MaxJSONDepth <= 0 {
		opts.MaxJSONDepth = defaultMaxDepth
	}
	if opts.MaxStringBytes <= 0 {
		opts.MaxStringBytes = defaultMaxString
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = 512
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if opts.HeaderTimeout <= 0 {
		opts.HeaderTimeout = 5 * time.Second
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns(opts.MemoryBudget, opts.MaxHeaderBytes)
	}
	if opts.EvictIdleAfter <= 0 {
		opts.EvictIdleAfter = time.Second
	}
	if c := connCost(opts.MaxHeaderBytes); opts.MemoryBudget < 4*c {
		return nil, &OptionError{Field: "MemoryBudget", Err: fmt.Errorf(
			"a budget of %d bytes holds fewer than 4 connections, which reserve %d bytes each (%d for buffers, and twice a head of %d bytes and net/http's %d); raise the budget or lower the head bound",
			opts.MemoryBudget, c, connOverhead, opts.MaxHeaderBytes, headerSlack)}
	}
	if err := checkToken(opts.Token); err != nil {
		return nil, err
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	if opts.OpenRLHFDataSource == "" {
		opts.OpenRLHFDataSource = "timely/general"
	}
	if _, ok := rewards.Lookup(opts.OpenRLHFDataSource); !ok {
		return nil, errors.New("verifier: openrlhf data source " + opts.OpenRLHFDataSource + " is not a registered reward")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), sem: make(chan struct{}, opts.MaxInflight),
		lim: limits{maxItems: opts.MaxBatchItems, maxDepth: opts.MaxJSONDepth, maxString: opts.MaxStringBytes}}
	s.mem.limit = opts.MemoryBudget
	s.bodies = newBodyPool()
	var err error
	if s.episodes, err = episodeSealerFor(opts.EpisodeSecret); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = newMetrics(reg)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "timeaware_request_memory_bytes", Help: "Memory reserved for request bodies being read and decoded (bounded by the memory budget).",
	}, func() float64 { return float64(s.mem.used.Load()) }))
	held := func(i int) func() float64 {
		return func() float64 {
			n, b, max := opts.Timers.Held()
			return float64([3]int64{n, b, max}[i])
		}
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "timeaware_timers_held", Help: "Timers the service holds until they expire (bounded by timers.max_rollouts).",
	}, held(0)), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "timeaware_timer_index_bytes", Help: "Memory the held timers take, as the index counts it.",
	}, held(1)), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "timeaware_timer_index_limit_bytes", Help: "The bound on timeaware_timer_index_bytes (timers.index_bytes); past it new timers are refused with 503.",
	}, held(2)))

	for _, rt := range s.routes() {
		s.mux.Handle(rt.pattern, s.wrap(rt))
	}
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	s.mux.Handle("GET /metrics", s.guard(metricsHandler))
	s.mux.Handle("/", s.wrap(route{pattern: "/", name: "other", open: true, h: func(r *http.Request, _ []byte) (any, error) {
		return nil, &apiError{Status: http.StatusNotFound, Code: "not_found", Message: "no route for " + r.Method + " " + r.URL.Path + "; see GET /openapi.json"}
	}}))
	return s, nil
}

// route is one endpoint: its Go 1.22 pattern, a metrics label, whether it
// is open without a token, and its handler. Routes whose pattern starts
// with POST get their JSON body, read within the body limits; the others
// get nil.
type route struct {
	pattern string
	name    string
	open    bool
	status  int // success status (default 200)
	h       func(r *http.Request, body []byte) (any, error)
}

func (s *Server) routes() []route {
	return []route{
		{pattern: "GET /healthz", name: "/healthz", open: true, h: s.health},
		{pattern: "GET /readyz", name: "/readyz", open: true, h: s.ready},
		{pattern: "GET /openapi.json", name: "/openapi.json", open: true, h: s.openAPI},
		{pattern: "GET /v1/rewards", name: "/v1/rewards", h: s.listRewards},
		{pattern: "POST /v1/score", name: "/v1/score", h: s.scoreOne},
		{pattern: "POST /v1/score/batch", name: "/v1/score/batch", h: s.scoreBatch},
		{pattern: "POST /v1/openrlhf", name: "/v1/openrlhf", h: s.openRLHF},
		{pattern: "POST /v1/timers", name: "/v1/timers", status: http.StatusCreated, h: s.createTimer},
		{pattern: "GET /v1/timers/{id}", name: "/v1/timers/{id}", h: s.readTimer},
		{pattern: "DELETE /v1/timers/{id}", name: "/v1/timers/{id}", h: s.stopTimer},
		{pattern: "POST /v1/timers/{id}/spans", name: "/v1/timers/{id}/spans", h: s.addSpan},
		{pattern: "POST /v1/tools/get_duration", name: "/v1/tools/get_duration", h: s.getDuration},
		{pattern: "POST /v1/envs/negotiation/step", name: "/v1/envs/negotiation/step", h: s.negotiationStep},
	}
}

// Handler returns the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Serve answers requests on ln until ctx is cancelled, then stops accepting
// connections and waits up to ShutdownTimeout for in-flight requests to
// finish. It returns nil after a clean drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: s.opts.HeaderTimeout,
		MaxHeaderBytes:    s.opts.MaxHeaderBytes,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
		ConnState:         connState,
	}
	cl := s.limitListener(ln)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(cl) }()
	s.opts.Logger.Info("serving", "addr", ln.Addr().String(), "auth", s.opts.Token != "", "max_conns", s.opts.MaxConns)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Leave as load balancers expect: fail readiness and stop keep-alives
	// (each response now closes its connection, so clients reconnect
	// elsewhere), keep answering for the grace period, then close the
	// listener and drain what is in flight.
	// Keep-alives stop by answering with Connection: close (see wrap), not
	// with SetKeepAlivesEnabled, which would also close idle connections at
	// once, under a client that may be sending on one.
	s.stopping.Store(true)
	if s.opts.ShutdownGrace > 0 {
		s.opts.Logger.Info("shutting down: readiness failing, still serving", "grace", s.opts.ShutdownGrace)
		select {
		case <-time.After(s.opts.ShutdownGrace):
		case err := <-errc:
			return err
		}
	}
	s.opts.Logger.Info("shutting down: draining in-flight requests", "timeout", s.opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	// Connections the kernel has accepted but the server has not are in the
	// listen backlog; closing the listener would reset them. Take them
	// first, until none has arrived for drainQuiet (their requests are
	// answered with Connection: close), then close the listener.
	stopped := false
	if cl.drain(drainQuiet, time.Now().Add(min(drainMax, s.opts.ShutdownTimeout))) {
		select {
		case err := <-errc:
			if !errors.Is(err, errDrained) {
				return err
			}
			stopped = true
		case <-sctx.Done():
		}
	}
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if !stopped {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	s.opts.Logger.Info("stopped")
	return nil
}

// Shutdown drains the listen backlog until no connection has arrived for
// drainQuiet, for at most drainMax.
const (
	drainQuiet = 100 * time.Millisecond
	drainMax   = 5 * time.Second
)

// wrap applies auth, the in-flight limit, the body limit, the request
// timeout, panic recovery and metrics around a route's handler, and writes
// its result.
func (s *Server) wrap(rt route) http.Handler {
	ok := rt.status
	if ok == 0 {
		ok = http.StatusOK
	}
	obs := s.metrics.route(rt.name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if s.stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		s.metrics.inflight.Inc()
		defer s.metrics.inflight.Dec()
		status := s.serveRoute(rt, ok, w, r)
		obs.observe(status, time.Since(start))
	})
}

// guard requires the token for h when AuthAll is set.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.AuthAll && s.opts.Token != "" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="timeaware"`)
			writeError(w, errUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) serveRoute(rt route, ok int, w http.ResponseWriter, r *http.Request) (status int) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("handler panic", "route", rt.name, "panic", p)
			status = writeError(w, &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"})
		}
	}()
	if (!rt.open || s.opts.AuthAll) && s.opts.Token != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="timeaware"`)
		return writeError(w, errUnauthorized)
	}
	var body []byte
	if strings.HasPrefix(rt.pattern, "POST ") {
		if err := checkContentType(r); err != nil {
			return writeError(w, err)
		}
		// The body is read before a slot is taken: a slow client holds its
		// connection and the memory its bytes take, never a slot.
		b, err := s.readBody(w, r)
		if err != nil {
			return writeError(w, err)
		}
		defer b.release()
		body = b.buf.Bytes()
	}
	if !rt.open {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		default:
			s.metrics.shed.WithLabelValues("inflight").Inc()
			return writeError(w, errOverloaded)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	v, err := rt.h(r.WithContext(ctx), body)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return writeError(w, err)
	}
	return writeJSON(w, ok, v)
}

// authorized reports whether r carries the bearer token. The scheme is
// matched without regard to case (RFC 9110 §11.1), and the token must
// follow it after one or more spaces.
func (s *Server) authorized(r *http.Request) bool {
	scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	tok = strings.TrimLeft(tok, " ")
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1
}

// checkToken refuses a token no client could send: an HTTP header value
// cannot begin or end with white space (net/http trims it), nor hold
// control characters, so such a token would lock every client out.
func checkToken(tok string) error {
	if strings.TrimSpace(tok) != tok || strings.IndexFunc(tok, unicode.IsControl) >= 0 {
		return &OptionError{Field: "Token", Err: errors.New("begins or ends with white space, or holds a control character: no client can send it in a header")}
	}
	return nil
}

// OptionError is the error of an invalid Options or RunOptions field,
// named by the field (Token, MemoryBudget, Addr, AddrFile, MemoryLimit),
// so that a caller can say where the user set it.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string { return "verifier: " + e.Field + ": " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// health is liveness: the process answers.
func (s *Server) health(*http.Request, []byte) (any, error) {
	return map[string]string{"status": "ok", "version": s.opts.Version}, nil
}

// ready is readiness: 503 from the moment shutdown begins, so a load
// balancer stops sending new requests during the grace period.
func (s *Server) ready(*http.Request, []byte) (any, error) {
	if s.stopping.Load() {
		return nil, &apiError{Status: http.StatusServiceUnavailable, Code: "shutting_down", Message: "the service is shutting down"}
	}
	return map[string]string{"status": "ready"}, nil
}
