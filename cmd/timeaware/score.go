package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/suggest"
	"github.com/timeaware/timeaware/rewards"
)

func (a *app) scoreCmd() *cobra.Command {
	var o eval.ScoreOptions
	var ds, shard string
	cmd := &cobra.Command{
		Use:   "score --input FILE.jsonl [--data-source NAME] [--out FILE]",
		Short: "Score JSONL items offline with the service's reward functions",
		Long:  longHelp("score"),
		Example: `  timeaware score --data-source timepuzzles --input examples/score/puzzles.jsonl
  timeaware score --data-source timely/general --input examples/score/rollouts.jsonl --out out/scores.jsonl
  timeaware score --input examples/score/rollout-log.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runScore(cmd.Context(), o, ds, shard) },
	}
	fs := cmd.Flags()
	fs.StringVar(&ds, "data-source", "", "reward to apply (see GET /v1/rewards; default: each item's own data_source): "+dataSources())
	fs.StringVar(&o.Input, "input", "", "JSONL items to score (- for stdin; a directory: its JSONL parts in name order, as one input)")
	fs.StringVar(&o.Out, "out", "", "write results here (default stdout); written atomically")
	fs.IntVar(&o.MaxErrors, "max-errors", 0, "items that may fail before the run fails")
	fs.StringVar(&shard, "shard", "", "score only the lines whose 0-based number is i mod n, e.g. 0/4 (shards together score every line once)")
	return cmd
}

// dataSources lists the registered rewards' data sources.
func dataSources() string {
	names := make([]string, len(rewards.All))
	for i, r := range rewards.All {
		names[i] = r.DataSource
	}
	return strings.Join(names, ", ")
}

func (a *app) runScore(ctx context.Context, o eval.ScoreOptions, ds, shard string) error {
	var err error
	if o.Shard, err = parseShardFlag(shard); err != nil {
		return err
	}
	if ds != "" {
		var ok bool
		if o.Reward, ok = rewards.Lookup(ds); !ok {
			return a.flagValueError("data-source", fmt.Errorf("not a registered reward (one of %s)%s", dataSources(),
				suggest.DidYouMean(ds, strings.Split(dataSources(), ", "), func(s string) string { return s })))
		}
	}
	if o.Input == "" {
		return usagef("--input is required (a JSONL file, or - for stdin)")
	}
	if o.MaxErrors < 0 {
		return a.flagValueError("max-errors", errors.New("must not be negative"))
	}
	if o.Rewards, err = a.rewardsConfig(); err != nil {
		return err
	}
	store, shared, err := a.timerStore()
	if err != nil {
		return err
	}
	if shared {
		o.Timers = store
	}
	a.named("input", o.Input)
	o.Stdin, o.Stdout = a.stdin, a.stdout
	sum, err := eval.Score(ctx, o)
	var fe *eval.FailuresError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s: %d of %d items could not be scored (--max-errors %d); first: %s", fe.Input, fe.Failed, fe.Items, fe.MaxErrors, strings.Join(fe.FirstErrors, "; "))
	} else if err != nil {
		return a.evalError(err, map[string]string{"Input": "input", "Out": "out"})
	}
	with := "each item's own data source"
	if o.Reward != nil {
		with = o.Reward.DataSource
	}
	fmt.Fprintf(a.stderr, "scored %d items with %s: mean score %.4f, %d failed\n", sum.Items, with, sum.Mean(), sum.Failed)
	if sum.Failed > 0 {
		fmt.Fprintf(a.stderr, "failed items: %s\n", strings.Join(sum.FirstErrors, "; "))
	}
	if sum.Logged > 0 {
		still := ""
		if sum.Unscored > 0 {
			still = fmt.Sprintf("; %d unscored then and now", sum.Unscored)
		}
		fmt.Fprintf(a.stderr, "%d of %d logged rewards changed%s\n", sum.Changed, sum.Logged, still)
		if sum.Changed > 0 {
			fmt.Fprintf(a.stderr, "changed: %s\n", strings.Join(sum.FirstChanges, "; "))
		}
	}
	return nil
}
