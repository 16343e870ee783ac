package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/atomicfile"
	"github.com/timeaware/timeaware/internal/chat"
	"github.com/timeaware/timeaware/internal/memlimit"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
	"github.com/timeaware/timeaware/verifier"
)

func (a *app) serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the verifier service: rewards, timers and get_duration over HTTP",
		Long: `serve runs the HTTP verifier service that GRPO trainers call for rewards.

It starts on built-in defaults with no config file, on 127.0.0.1:8080:
  POST /v1/score, /v1/score/batch     score items {data_source, solution_str, ground_truth, extra_info}
  POST /v1/openrlhf                   OpenRLHF's remote reward protocol (--remote_rm_url)
  POST /v1/timers, GET|DELETE /v1/timers/{id}, POST /v1/timers/{id}/spans
  POST /v1/tools/get_duration         the timer tool's text for a rollout
  GET  /v1/rewards, /healthz, /metrics, /openapi.json

Set timers.secret (TIMEAWARE_TIMERS_SECRET) to the same value on every replica
so that timers survive restarts and work behind a load balancer, and
serve.token (TIMEAWARE_SERVE_TOKEN) to require a bearer token. SIGINT or
SIGTERM fails /readyz and stops keep-alives, keeps serving for
serve.shutdown_grace, then stops accepting connections and drains requests
in flight. Listening beyond loopback needs serve.token, or --allow-no-token.

--addr 127.0.0.1:0 listens on a port the kernel picks; the log's "serving"
line names the address, and --addr-file PATH writes it (host:port) to PATH,
atomically, once the listener is bound, so that whoever started the service
waits for the file rather than guessing a free port.`,
		Example: `  timeaware serve
  timeaware serve --addr 127.0.0.1:0 --addr-file out/serve.addr`,
		Args: cobra.NoArgs,
		RunE: a.runServe,
	}
	fs := cmd.Flags()
	fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	bindKey(fs, "addr", "serve.addr")
	fs.String("addr-file", "", "write the bound address (host:port) to this file once listening, e.g. with --addr 127.0.0.1:0; removed at exit")
	bindKey(fs, "addr-file", "serve.addr_file")
	fs.Bool("allow-no-token", false, "listen beyond loopback without serve.token (anyone who reaches the port may call every route)")
	bindKey(fs, "allow-no-token", "serve.allow_no_token")
	return cmd
}

func (a *app) runServe(cmd *cobra.Command, _ []string) error {
	v := a.v
	log := slog.New(slog.NewTextHandler(a.stderr, nil))
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	store, shared, err := a.timerStore()
	if err != nil {
		return err
	}
	if !shared {
		log.Warn("timers.secret is not set: timer tokens are signed with a random key and readable only by this process, until it stops; set TIMEAWARE_TIMERS_SECRET on every replica")
	}
	scorer, err := rewards.NewScorer(cfg, store)
	if err != nil {
		return a.rewardsError(err)
	}
	durations := map[string]time.Duration{}
	for _, k := range []string{"serve.request_timeout", "serve.shutdown_timeout", "serve.shutdown_grace", "serve.body_timeout", "serve.header_timeout"} {
		if durations[k], err = a.duration(k); err != nil {
			return err
		}
	}
	for _, k := range []string{"serve.max_body_bytes", "serve.max_batch_items", "serve.max_inflight", "serve.max_json_depth", "serve.max_string_bytes", "serve.max_header_bytes"} {
		if v.GetInt(k) <= 0 {
			return a.badKeyf(k, "want a positive number")
		}
	}
	for _, k := range []string{"serve.memory_limit", "serve.memory_budget", "serve.max_conns"} {
		if v.GetInt64(k) < 0 {
			return a.badKeyf(k, "want 0 (chosen for the machine) or more")
		}
	}
	memLimit, budget, err := serveMemory(v.GetInt64("serve.memory_limit"), v.GetInt64("serve.memory_budget"))
	if err != nil {
		return err
	}
	token := v.GetString("serve.token")
	var opponent negotiation.Opponent
	if u, m := v.GetString("serve.negotiation_opponent_url"), v.GetString("serve.negotiation_opponent_model"); u != "" || m != "" {
		c, err := chat.New(chat.Options{Name: "serve.negotiation_opponent_url", URL: u, Model: m,
			APIKey: os.Getenv(v.GetString("serve.negotiation_opponent_api_key_env"))})
		if err != nil {
			return usageError{err}
		}
		opponent = negotiation.ModelOpponent{Client: c}
	}
	srv, err := verifier.New(verifier.Options{
		Scorer: scorer, Timers: store, Token: token,
		MaxBodyBytes: int64(v.GetInt("serve.max_body_bytes")), MaxBatchItems: v.GetInt("serve.max_batch_items"),
		MaxJSONDepth: v.GetInt("serve.max_json_depth"), MaxStringBytes: v.GetInt("serve.max_string_bytes"),
		MaxInflight: v.GetInt("serve.max_inflight"), MemoryBudget: budget,
		RequestTimeout: durations["serve.request_timeout"], BodyTimeout: durations["serve.body_timeout"],
		HeaderTimeout: durations["serve.header_timeout"], MaxHeaderBytes: v.GetInt("serve.max_header_bytes"),
		MaxConns: v.GetInt("serve.max_conns"), AuthAll: v.GetBool("serve.auth_all"),
		ShutdownGrace: durations["serve.shutdown_grace"], ShutdownTimeout: durations["serve.shutdown_timeout"],
		OpenRLHFDataSource:  v.GetString("serve.openrlhf_data_source"),
		NegotiationOpponent: opponent,
		EpisodeSecret:       []byte(v.GetString("timers.secret")),
		Logger:              log, Version: buildVersion(),
	})
	if err != nil {
		return a.verifierError(err)
	}
	addr := v.GetString("serve.addr")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return a.badKeyf("serve.addr", "the address is in use; --addr 127.0.0.1:0 takes a free port, and --addr-file FILE writes the one taken")
		}
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se
		}
		return a.badKey("serve.addr", err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() && token == "" && !v.GetBool("serve.allow_no_token") {
		ln.Close()
		return a.badKeyf("serve.addr", "listening beyond loopback needs serve.token (TIMEAWARE_SERVE_TOKEN); pass --allow-no-token to let anyone who reaches the port call every route")
	}
	if path := v.GetString("serve.addr_file"); path != "" {
		bound := ln.Addr().String()
		if err := atomicfile.WriteFile(path, []byte(bound+"\n")); err != nil {
			ln.Close()
			return pathError("addr-file", path, err)
		}
		defer removeAddrFile(path, bound, log)
	}
	tuneGCForServing()
	debug.SetMemoryLimit(memLimit - memoryReserve(memLimit))
	log.Info("memory", "limit_bytes", memLimit, "runtime_limit_bytes", memLimit-memoryReserve(memLimit), "request_budget_bytes", budget)
	start := time.Now()
	err = srv.Serve(cmd.Context(), ln)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("served", "uptime", time.Since(start).Round(time.Second).String())
	return nil
}

// verifierOptionKeys are the config keys of the verifier's options that
// it checks beyond their ranges here.
var verifierOptionKeys = map[string]string{"Token": "serve.token", "MemoryBudget": "serve.memory_budget"}

// verifierError names the key of a verifier option error (a
// *verifier.OptionError) where the user set it; badKey never shows a
// secret's value.
func (a *app) verifierError(err error) error {
	var oe *verifier.OptionError
	if errors.As(err, &oe) {
		if key, ok := verifierOptionKeys[oe.Field]; ok {
			return a.badKey(key, oe.Err)
		}
	}
	return usageError{err}
}

// removeAddrFile removes the --addr-file written at start, unless another
// process has written its own address there since.
func removeAddrFile(path, bound string, log *slog.Logger) {
	b, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(b)) != bound {
		return
	}
	if err := os.Remove(path); err != nil {
		log.Warn("removing the address file", "path", path, "err", err)
	}
}

// memoryReserve is the part of the memory limit kept from the Go runtime's
// soft limit for what the runtime does not count but the kernel does: the
// program's text and data, and the runtime's own lag (it lets the heap
// overshoot rather than spend more than half the CPU collecting). With
// GOGC=400 the heap grows to the runtime's limit before it is collected, so
// the resident set settles that much above it: 30–40 MiB under the attack
// benchmark. An eighth of the limit, from 64 MiB to 256 MiB, and never more
// than a quarter.
func memoryReserve(limit int64) int64 {
	return min(max(64<<20, limit/8), 256<<20, limit/4)
}

// serveMemory resolves the service's soft memory limit and its request
// memory budget. A limit of 0 is 90% of the cgroup's limit, else half the
// machine's memory; GOMEMLIMIT in the environment wins over both. A budget
// of 0 is half the limit: requests are shed well before the limit, which
// leaves room for the scorer's work and the garbage collector's lag.
func serveMemory(limit, budget int64) (int64, int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		limit = debug.SetMemoryLimit(-1) // the runtime parsed it at start
	} else if limit == 0 {
		c, err := memlimit.Find()
		if err != nil {
			return 0, 0, fmt.Errorf("serve.memory_limit: 0 asks for the cgroup or machine limit: %w", err)
		}
		limit = c.Bytes / 2
		if c.Source != memlimit.Machine {
			limit = c.Bytes / 10 * 9
		}
	}
	if budget == 0 {
		budget = limit / 2
	}
	if budget > limit {
		return 0, 0, usagef("serve.memory_budget %d: exceeds the memory limit %d", budget, limit)
	}
	return limit, budget, nil
}
