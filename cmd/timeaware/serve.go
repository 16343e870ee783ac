package main

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/rewards"
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
SIGTERM stops accepting connections and drains requests in flight.`,
		Args: cobra.NoArgs,
		RunE: a.runServe,
	}
	fs := cmd.Flags()
	fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	bindKey(fs, "addr", "serve.addr")
	return cmd
}

func (a *app) runServe(cmd *cobra.Command, _ []string) error {
	v := a.v
	log := slog.New(slog.NewTextHandler(a.stderr, nil))
	cfg, err := rewardsConfig(v)
	if err != nil {
		return err
	}
	store, shared, err := timerStore(v)
	if err != nil {
		return err
	}
	if !shared {
		log.Warn("timers.secret is not set: timer tokens are signed with a random key and readable only by this process, until it stops; set TIMEAWARE_TIMERS_SECRET on every replica")
	}
	scorer, err := rewards.NewScorer(cfg, store)
	if err != nil {
		return usageError{err}
	}
	reqTimeout, err := duration(v, "serve.request_timeout")
	if err != nil {
		return err
	}
	shutdown, err := duration(v, "serve.shutdown_timeout")
	if err != nil {
		return err
	}
	for _, k := range []string{"serve.max_body_bytes", "serve.max_batch_items", "serve.max_inflight"} {
		if v.GetInt(k) <= 0 {
			return usagef("%s: %d must be positive", k, v.GetInt(k))
		}
	}
	srv, err := verifier.New(verifier.Options{
		Scorer: scorer, Timers: store, Token: v.GetString("serve.token"),
		MaxBodyBytes: int64(v.GetInt("serve.max_body_bytes")), MaxBatchItems: v.GetInt("serve.max_batch_items"),
		MaxInflight: v.GetInt("serve.max_inflight"), RequestTimeout: reqTimeout, ShutdownTimeout: shutdown,
		OpenRLHFDataSource: v.GetString("serve.openrlhf_data_source"),
		Logger:             log, Version: buildVersion(),
	})
	if err != nil {
		return usageError{err}
	}
	addr := v.GetString("serve.addr")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--addr %s: %v", addr, err)
	}
	tuneGCForServing()
	start := time.Now()
	err = srv.Serve(cmd.Context(), ln)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("served", "uptime", time.Since(start).Round(time.Second).String())
	return nil
}
