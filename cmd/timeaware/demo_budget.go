package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/examples"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth/budget"
)

// demoBudgetSeed fixes the demo's draws; with it the six built-in tasks
// give rows with and without a time limit.
const demoBudgetSeed = 19

// demoBudget builds a time-budgeted prompt set from the built-in tasks
// (examples/budget/tasks.jsonl) with the built-in defaults into dir/budget.parquet,
// as "synth budget --family general" would, and prints two of its rows the
// way VeRL will see them: one with a time limit and, when the draws gave
// one, one without.
func demoBudget(ctx context.Context, w io.Writer, dir string) error {
	in, err := examples.Sample.Open("budget/tasks.jsonl")
	if err != nil {
		return err
	}
	defer in.Close()
	out := filepath.Join(dir, "budget.parquet")
	sink, err := output.NewSink(out, dataset.Parquet, budget.Schema, output.SinkOptions{})
	if err != nil {
		return err
	}
	defer sink.Abort()
	rb := budget.NewRecordBuilder(nil)
	defer rb.Release()
	opt := budget.DefaultOptions(budget.FamilyGeneral)
	opt.Seed = demoBudgetSeed
	first := map[bool]*budget.Row{} // the first row with a time limit, and without
	sum, err := budget.Build(ctx, in, "tasks.jsonl", opt, func(row *budget.Row) error {
		rb.Append(row)
		if first[row.HasLimit()] == nil {
			r := *row
			first[row.HasLimit()] = &r
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("demo: budget: %w", err)
	}
	if err := sink.Drain(rb); err != nil {
		return err
	}
	if err := output.Commit(ctx, "", nil, sink.File()); err != nil {
		return pathError("out", out, err)
	}
	fmt.Fprintf(w, "\ntimeaware demo: a time-budgeted prompt set for VeRL from %d built-in tasks (synth budget, seed %d)\n", sum.Tasks, demoBudgetSeed)
	fmt.Fprintf(w, "  %d rows written to %s: %d with a time limit (multipliers %s), %d without; data source %s\n",
		sum.Rows, out, sum.WithLimit, countList(sum.ByMultiplier), sum.NoLimit, sum.DataSource)
	for _, r := range []*budget.Row{first[true], first[false]} {
		if r != nil {
			printBudgetRow(w, r)
		}
	}
	return nil
}

// printBudgetRow shows one row's prompt and the settings VeRL hands the
// get_duration tool and the reward.
func printBudgetRow(w io.Writer, r *budget.Row) {
	limit, head, truth, system := "null (no limit)", "no time limit", "", []rune(r.System)
	if r.HasLimit() {
		limit = fmt.Sprintf("%.2f", r.TimeLimitS)
		head = fmt.Sprintf("budget %g × baseline %.2f s (%s)", r.Multiplier, r.BaselineS, r.BaselineSource)
	}
	if r.GroundTruth != nil {
		truth = *r.GroundTruth
	}
	if len(system) > 96 {
		system = append(system[:96], '…')
	}
	fmt.Fprintf(w, "\n  row %s: %s\n", r.TaskID, head)
	fmt.Fprintf(w, "    prompt  system  %s\n", string(system))
	fmt.Fprintf(w, "    prompt  user    %s\n", strings.ReplaceAll(r.User, "\n", `\n`))
	fmt.Fprintf(w, "    reward_model.ground_truth %q, extra_info.time_limit_s %s\n", truth, limit)
	fmt.Fprintf(w, "    extra_info.tools_kwargs.get_duration.create_kwargs {speed_factor: %g, jitter: %g, time_limit_s: %g, ttl_s: %g}\n",
		r.SpeedFactor, r.Jitter, r.TimeLimitS, r.TTLS)
}
