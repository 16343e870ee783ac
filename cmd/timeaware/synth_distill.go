package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth/budget"
)

// synthDistillFlags are the flags of synth distill.
type synthDistillFlags struct {
	modelFlags
	input, out string
}

func (a *app) synthDistillCmd() *cobra.Command {
	var f synthDistillFlags
	cmd := &cobra.Command{
		Use:   "distill --input ROWS --endpoint URL --model NAME --out TRACES.jsonl",
		Short: "Teacher traces for synth sft: live conversations with a model, get_duration answered from a timer",
		Long:  longHelp("synth distill"),
		Example: standin + `  # out/timely-train.parquet is written by the second example of synth budget:
  timeaware synth distill --input out/timely-train.parquet --endpoint http://127.0.0.1:8000/v1 \
    --model teacher --samples 2 --out out/traces.jsonl
  timeaware synth sft --traces out/traces.jsonl --out out/teacher-sft.parquet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSynthDistill(cmd, &f) },
	}
	fs := cmd.Flags()
	f.add(fs, "seed of the requests (sample k: seed+k) and the timers' jitter")
	fs.StringVar(&f.input, "input", "", "rows of synth budget (Parquet, Arrow, JSONL, or a directory of them)")
	fs.StringVar(&f.out, "out", "", "TRACES.jsonl, written atomically with a manifest beside it")
	return cmd
}

func (a *app) runSynthDistill(cmd *cobra.Command, f *synthDistillFlags) error {
	switch {
	case f.input == "":
		return usagef("--input is required (rows of synth budget)")
	case f.out == "":
		return usagef("--out is required (TRACES.jsonl)")
	}
	if err := f.check(f.out); err != nil {
		return err
	}
	if format, ok := dataset.ForPath(f.out); !ok || format.Name != "jsonl" {
		return usagef("--out %s: traces are JSONL; name a .jsonl file", f.out)
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	all, err := a.readEvalData("input", []string{f.input}, f.out, f.cache(f.out))
	if err != nil {
		return err
	}
	var rows []eval.Row
	for _, r := range all {
		if r.Timer != nil && r.Skip == "" {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("--input %s: no timely/general rows to distill (%d rows of other data sources)", f.input, len(all))
	}
	if err := eval.CheckRows(rows, cfg); err != nil {
		return err
	}
	client, err := f.client("distill", f.out)
	if err != nil {
		return err
	}
	config := map[string]any{"input": f.input, "endpoint": client.Endpoint(), "model": f.model, "samples": f.samples,
		"temperature": f.temperature, "seed": f.seed, "max_turns": f.maxTurns, "max_tokens": f.maxTokens, "tool_choice": f.toolChoice}
	run := &modelRun{}
	d, err := budget.Distill(cmd.Context(), budget.DistillOptions{Path: f.out, Samples: f.samples, Rows: len(rows),
		Skipped: len(all) - len(rows), Manifest: manifest("synth distill", config)},
		func(context.Context) ([]*budget.Conversation, bool, error) {
			r, err := f.run(cmd, a, rows, client, cfg, true, 0, nil)
			if err != nil {
				return nil, false, err
			}
			run = r
			return eval.Conversations(rows, run.results), run.err == nil && !run.gaveUp, nil
		})
	if err != nil {
		return a.budgetError(err, nil)
	}
	return a.distilled(f, d, run, client.Stats())
}

// distilled prints what a distill run did and fails when it stopped or
// too many conversations failed.
func (a *app) distilled(f *synthDistillFlags, d *budget.Distilled, run *modelRun, stats chat.Stats) error {
	s := d.Summary
	if run.gaveUp || run.err != nil {
		// The run stopped: nothing is written (the error below says why).
		fmt.Fprintf(a.stdout, "synth distill: stopped; %d traces of %d rows made, none written to %s\n", s.Traces, s.Rows, f.out)
	} else {
		fmt.Fprintf(a.stdout, "synth distill: %d traces of %d rows written to %s\n", s.Traces, s.Rows, f.out)
	}
	fmt.Fprintf(a.stdout, "  ended:       %d answered on time (%d right), %d late or out of time, %d unfinished at --max-turns %d, %d failed\n",
		s.OnTime, s.Right, s.Late, s.Unfinished, f.maxTurns, s.Failed)
	fmt.Fprintf(a.stdout, "  requests:    %d sent, %d from the cache, %d retries\n", stats.Requests, stats.CacheHits, stats.Retries)
	if s.Skipped > 0 {
		fmt.Fprintf(a.stdout, "  skipped:     %d rows that are not timely/general\n", s.Skipped)
	}
	first := strings.Join(d.FirstErrors, "; ")
	switch {
	case run.gaveUp:
		return fmt.Errorf("stopped after %d failed conversations (--max-errors %d); nothing written; first: %s", s.Failed, f.maxErrors, first)
	case run.err != nil:
		return fmt.Errorf("interrupted with %d of %d conversations done; nothing written; run the same command again to resume from the cache", s.Traces+s.Failed, d.Conversations)
	case s.Failed > f.maxErrors:
		return fmt.Errorf("%d conversations failed (--max-errors %d); first: %s", s.Failed, f.maxErrors, first)
	}
	return nil
}
