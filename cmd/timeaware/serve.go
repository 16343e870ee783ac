package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/verifier"
)

func (a *app) serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the verifier service: rewards, timers and get_duration over HTTP",
		Long:  longHelp("serve"),
		Example: `  timeaware serve
  timeaware serve --addr 127.0.0.1:0 --addr-file out/serve.addr`,
		Args: noArgs,
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
	log := slog.New(slog.NewTextHandler(a.stderr, nil))
	opt, err := a.serveOptions(log)
	if err != nil {
		return err
	}
	tuneGCForServing()
	err = verifier.Run(cmd.Context(), opt)
	var oe *verifier.OptionError
	var me *verifier.MemoryError
	switch {
	case err == nil || errors.As(err, new(*verifier.ServeError)):
		return err
	case errors.As(err, &me):
		return usagef("serve.memory_budget %d: exceeds the memory limit %d", me.Budget, me.Limit)
	case !errors.As(err, &oe):
		return usageError{err}
	case oe.Field == "AddrFile":
		return pathError("addr-file", opt.AddrFile, oe.Err)
	case oe.Field == "MemoryLimit":
		return fmt.Errorf("serve.memory_limit: %w", oe.Err)
	case errors.Is(oe.Err, syscall.EADDRINUSE):
		return a.badKeyf("serve.addr", "the address is in use; --addr 127.0.0.1:0 takes a free port, and --addr-file FILE writes the one taken")
	case oe.Field == "Addr" && errors.As(oe.Err, new(*net.AddrError)):
		var ae *net.AddrError
		errors.As(oe.Err, &ae)
		return a.badKey("serve.addr", errors.New(ae.Err)) // "missing port in address", without the address again
	case errors.Is(oe.Err, verifier.ErrNoToken):
		return a.badKeyf("serve.addr", "listening beyond loopback needs serve.token (TIMEAWARE_SERVE_TOKEN); pass --allow-no-token to let anyone who reaches the port call every route")
	}
	if key, ok := map[string]string{"Addr": "serve.addr", "Token": "serve.token", "MemoryBudget": "serve.memory_budget"}[oe.Field]; ok {
		return a.badKey(key, oe.Err) // never shows a secret's value
	}
	return usageError{err}
}

// serveOptions reads the serve.*, timers.* and rewards.* keys into the
// service's options.
func (a *app) serveOptions(log *slog.Logger) (o verifier.RunOptions, err error) {
	v := a.v
	cfg, err := a.rewardsConfig()
	if err != nil {
		return o, err
	}
	store, shared, err := a.timerStore()
	if err != nil {
		return o, err
	}
	if !shared {
		o.Warnings = append(o.Warnings, "timers.secret is not set: timer tokens are signed with a random key and readable only by this process, until it stops; set TIMEAWARE_TIMERS_SECRET on every replica")
	}
	scorer, err := rewards.NewScorer(cfg, store)
	if err != nil {
		return o, a.rewardsError(err)
	}
	d := map[string]time.Duration{}
	for _, k := range []string{"request_timeout", "shutdown_timeout", "shutdown_grace", "body_timeout", "header_timeout", "evict_idle_after"} {
		if d[k], err = a.duration("serve." + k); err != nil {
			return o, err
		}
	}
	for _, k := range []string{"max_body_bytes", "max_batch_items", "max_inflight", "max_json_depth", "max_string_bytes", "max_header_bytes"} {
		if v.GetInt("serve."+k) <= 0 {
			return o, a.badKeyf("serve."+k, "want a positive number")
		}
	}
	for _, k := range []string{"memory_limit", "memory_budget", "max_conns"} {
		if v.GetInt64("serve."+k) < 0 {
			return o, a.badKeyf("serve."+k, "want 0 (chosen for the machine) or more")
		}
	}
	o.Options = verifier.Options{Scorer: scorer, Timers: store, Token: v.GetString("serve.token"), Logger: log, Version: buildVersion(),
		MaxBodyBytes: v.GetInt64("serve.max_body_bytes"), MaxBatchItems: v.GetInt("serve.max_batch_items"),
		MaxJSONDepth: v.GetInt("serve.max_json_depth"), MaxStringBytes: v.GetInt("serve.max_string_bytes"),
		MaxInflight: v.GetInt("serve.max_inflight"), MemoryBudget: v.GetInt64("serve.memory_budget"),
		RequestTimeout: d["request_timeout"], BodyTimeout: d["body_timeout"], HeaderTimeout: d["header_timeout"],
		EvictIdleAfter: d["evict_idle_after"],
		MaxHeaderBytes: v.GetInt("serve.max_header_bytes"), MaxConns: v.GetInt("serve.max_conns"), AuthAll: v.GetBool("serve.auth_all"),
		ShutdownGrace: d["shutdown_grace"], ShutdownTimeout: d["shutdown_timeout"],
		OpenRLHFDataSource: v.GetString("serve.openrlhf_data_source"), EpisodeSecret: []byte(v.GetString("timers.secret"))}
	o.Opponent = chat.Options{Name: "serve.negotiation_opponent_url", URL: v.GetString("serve.negotiation_opponent_url"),
		Model: v.GetString("serve.negotiation_opponent_model"), APIKey: os.Getenv(v.GetString("serve.negotiation_opponent_api_key_env"))}
	o.Addr, o.AddrFile = v.GetString("serve.addr"), v.GetString("serve.addr_file")
	o.AllowNoToken, o.MemoryLimit = v.GetBool("serve.allow_no_token"), v.GetInt64("serve.memory_limit")
	o.TimerIndexBytes = v.GetInt64("timers.index_bytes") // checked by timerStore
	return o, nil
}
