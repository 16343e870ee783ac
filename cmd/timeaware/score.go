package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/suggest"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/splits"
)

func (a *app) scoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "score --data-source NAME --input FILE.jsonl [--out FILE]",
		Short: "Score JSONL items offline with the service's reward functions",
		Long: `score reads items {data_source, solution_str, ground_truth, extra_info}, one
JSON object per line, scores each with the reward registered for --data-source
(the same code the verifier service runs), and writes one JSON result per input
line, in order: {"score": x, <detail keys>...}, plus "error" for an item that
could not be scored (it then gets rewards.fallback_score).

An item's own data_source, when present, must name the same reward. Items
whose extra_info names a timer need timers.secret (TIMEAWARE_TIMERS_SECRET),
the secret of the service that issued the timer.

More than --max-errors failed items fail the run (exit 1); with --out, no file
is written then.`,
		Example: `  timeaware score --data-source timepuzzles --input examples/score/puzzles.jsonl
  timeaware score --data-source timely/general --input examples/score/rollouts.jsonl --out out/scores.jsonl`,
		Args: cobra.NoArgs,
		RunE: a.runScore,
	}
	fs := cmd.Flags()
	fs.String("data-source", "", "reward to apply (see GET /v1/rewards): "+dataSources())
	fs.String("input", "", "JSONL items to score (- for stdin; a directory: its JSONL parts in name order, as one input)")
	fs.String("out", "", "write results here (default stdout); written atomically")
	fs.Int("max-errors", 0, "items that may fail before the run fails")
	fs.String("shard", "", "score only the lines whose 0-based number is i mod n, e.g. 0/4 (shards together score every line once)")
	return cmd
}

func dataSources() string {
	var b bytes.Buffer
	for i, r := range rewards.All {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.DataSource)
	}
	return b.String()
}

func (a *app) runScore(cmd *cobra.Command, _ []string) error {
	fs := cmd.Flags()
	ds, _ := fs.GetString("data-source")
	in, _ := fs.GetString("input")
	out, _ := fs.GetString("out")
	maxErrors, _ := fs.GetInt("max-errors")
	var lopt rewards.LinesOptions
	if sh, _ := fs.GetString("shard"); sh != "" {
		shard, err := parseShardFlag(sh)
		if err != nil {
			return err
		}
		lopt.Shard = shard
	}
	if ds == "" {
		return usagef("--data-source is required: one of %s", dataSources())
	}
	rw, ok := rewards.Lookup(ds)
	if !ok {
		var names []string
		for _, r := range rewards.All {
			names = append(names, r.DataSource)
		}
		return a.flagValueError("data-source", fmt.Errorf("not a registered reward (one of %s)%s", dataSources(), suggest.DidYouMean(ds, names, func(s string) string { return s })))
	}
	if in == "" {
		return usagef("--input is required (a JSONL file, or - for stdin)")
	}
	if maxErrors < 0 {
		return a.flagValueError("max-errors", errors.New("must not be negative"))
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	store, shared, err := a.timerStore()
	if err != nil {
		return err
	}
	var ts rewards.TimeSource
	if shared {
		ts = store
	}
	scorer, err := rewards.NewScorer(cfg, ts)
	if err != nil {
		return a.rewardsError(err)
	}

	// --input is a file, stdin, or a directory of JSONL parts (a sharded
	// run's output) read in name order as one input.
	inputs := []string{in}
	if in != "-" {
		a.named("input", in)
		st, err := os.Stat(in)
		if err != nil {
			return pathError("input", in, err)
		}
		if st.IsDir() {
			all, err := splits.ExpandDir(in)
			if err != nil {
				if isFileSystemError(err) {
					return pathError("input", in, err)
				}
				return usageError{pathError("input", in, err)}
			}
			inputs = inputs[:0]
			for _, p := range all {
				if f, ok := dataset.ForPath(p); ok && f.Name == "jsonl" {
					inputs = append(inputs, p)
				}
			}
			if len(inputs) == 0 {
				return usagef("--input %s: the directory holds no JSONL files", in)
			}
		}
	}
	var w io.Writer = a.stdout
	var af *output.File
	if out != "" {
		if af, err = output.Create(out); err != nil {
			return pathError("out", out, err)
		}
		defer af.Abort()
		w = af
	}
	sum := &rewards.LinesSummary{}
	name := in
	for _, p := range inputs {
		var r io.Reader = a.stdin
		name = "stdin"
		if p != "-" {
			f, err := os.Open(p)
			if err != nil {
				return pathError("input", p, err)
			}
			defer f.Close()
			r, name = f, p
		}
		part, err := scorer.ScoreLines(cmd.Context(), rw, r, name, w, lopt)
		if err != nil {
			return err
		}
		lopt.Before += part.Lines
		sum.Items += part.Items
		sum.Failed += part.Failed
		sum.Skipped += part.Skipped
		sum.Sum += part.Sum
		for _, e := range part.FirstErrors {
			if len(sum.FirstErrors) < 3 {
				if len(inputs) > 1 {
					e = name + ": " + e
				}
				sum.FirstErrors = append(sum.FirstErrors, e)
			}
		}
	}
	if len(inputs) > 1 {
		name = in
	}
	if sum.Failed > maxErrors {
		return fmt.Errorf("%s: %d of %d items could not be scored (--max-errors %d); first: %s", name, sum.Failed, sum.Items, maxErrors, strings.Join(sum.FirstErrors, "; "))
	}
	if af != nil {
		if err := output.Commit(cmd.Context(), "", nil, af); err != nil {
			return pathError("out", out, err)
		}
	}
	fmt.Fprintf(a.stderr, "scored %d items with %s: mean score %.4f, %d failed\n", sum.Items, rw.DataSource, sum.Mean(), sum.Failed)
	if sum.Failed > 0 {
		fmt.Fprintf(a.stderr, "failed items: %s\n", strings.Join(sum.FirstErrors, "; "))
	}
	return nil
}
