package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
	"github.com/timeaware/timeaware/verifier"
)

// demoRewards starts the verifier service on a loopback port with the
// built-in defaults, runs one timed rollout through it over HTTP (a timer,
// the get_duration tool, batch scoring) and prints what a trainer sees.
func demoRewards(ctx context.Context, w io.Writer) error {
	store, err := timers.New(timers.Options{Secret: timers.RandomSecret()})
	if err != nil {
		return err
	}
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	if err != nil {
		return err
	}
	srv, err := verifier.New(verifier.Options{Scorer: scorer, Timers: store, Version: buildVersion()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: starting the verifier: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(w, "\ntimeaware demo: the verifier service (timeaware serve) on %s\n", base)

	call := func(path string, body any, out any) error {
		b, _ := json.Marshal(body)
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode >= 300 {
			return fmt.Errorf("demo: %s: status %d: %s", path, resp.StatusCode, raw)
		}
		return json.Unmarshal(raw, out)
	}

	var timer struct {
		Timer string `json:"timer"`
	}
	if err := call("/v1/timers", map[string]any{"rollout_id": "demo-rollout", "speed_factor": 25, "time_limit_s": 10}, &timer); err != nil {
		return err
	}
	time.Sleep(120 * time.Millisecond) // the model "generates" on hardware 25 times slower
	var dur struct {
		Text string `json:"text"`
	}
	if err := call("/v1/tools/get_duration", map[string]any{"timer": timer.Timer}, &dur); err != nil {
		return err
	}
	fmt.Fprintf(w, "  get_duration for rollout demo-rollout (speed factor 25, budget 10 s): %q\n", dur.Text)

	item := func(answer string, extra map[string]any) map[string]any {
		return map[string]any{"data_source": "timely/general", "ground_truth": "3/4", "extra_info": extra,
			"solution_str": "Three of the four slots are free. <answer>\\boxed{" + answer + "}</answer>"}
	}
	items := []map[string]any{
		item(`\frac{3}{4}`, map[string]any{"timer": timer.Timer}),
		item("0.75", map[string]any{"elapsed_s": 9.5, "time_limit_s": 10}),
		item("0.5", map[string]any{"elapsed_s": 4, "time_limit_s": 10}),
		item("75%", map[string]any{"elapsed_s": 12, "time_limit_s": 10}),
	}
	var scored struct {
		Results []map[string]any `json:"results"`
	}
	if err := call("/v1/score/batch", map[string]any{"items": items}, &scored); err != nil {
		return err
	}
	fmt.Fprintln(w, "  POST /v1/score/batch, data source timely/general, ground truth 3/4:")
	fmt.Fprintf(w, "    %-14s %9s %9s %6s %6s\n", "answer", "elapsed", "budget", "right", "score")
	for i, r := range scored.Results {
		ans := []string{`\frac{3}{4}`, "0.75", "0.5", "75%"}[i]
		fmt.Fprintf(w, "    %-14s %8.2fs %8.0fs %6v %6.3f\n", ans, r["elapsed_s"], r["time_limit_s"], r["acc"] == 1.0, r["score"])
	}
	fmt.Fprintln(w, "  (late answers score 0; on time: 0.1 for the format, +0.5 if right, +0.4·sin(π/2·t/T) for using the budget)")
	return nil
}
