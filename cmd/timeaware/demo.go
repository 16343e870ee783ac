package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/examples"
	"github.com/timeaware/timeaware/internal/atomicfile"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/verifier"
)

func (a *app) demoCmd() *cobra.Command {
	var dir, format string
	cmd := &cobra.Command{
		Use:     "demo",
		Short:   "Run the toolkit end to end on a built-in sample: pairs, a rollout scored by the verifier, budgeted prompts",
		Long:    longHelp("demo"),
		Example: `  timeaware demo --out out/demo`,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.runDemo(cmd.Context(), dir, format) },
	}
	cmd.Flags().StringVar(&dir, "out", "out/demo", "directory for the sample input and the output")
	cmd.Flags().StringVar(&format, "format", "", "output format (default parquet)")
	return cmd
}

func (a *app) runDemo(ctx context.Context, dir, format string) error {
	// Checked before anything is written: a usage error writes nothing.
	if format != "" {
		if _, err := dataset.Lookup(format); err != nil {
			return usagef("--format %s: want %s", showValue(format), dataset.Names())
		}
	}
	inDir := filepath.Join(dir, "input")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		return pathError("out", dir, &fs.PathError{Op: "create", Path: dir, Err: atomicfile.DirError(err)})
	}
	if err := examples.WriteSample(inDir); err != nil {
		return err
	}
	ext := ".parquet"
	if format != "" && format != "parquet" {
		ext = "." + format
	}
	if format != "" {
		a.v.Set("pairs.format", format)
	}
	p, err := a.planPairsBuild(&pairsBuildFlags{inputs: []string{filepath.Join(inDir, "trajectories.jsonl")},
		annotations: filepath.Join(inDir, "votes.jsonl"), directAnswers: filepath.Join(inDir, "direct.jsonl"),
		out: filepath.Join(dir, "pairs"+ext)})
	if err != nil {
		return err
	}
	var example *prefpairs.Pair
	p.onPair = func(pair *prefpairs.Pair) {
		if example == nil && pair.Label == conversation.PreferTool && pair.Elapse == conversation.ElapseLarge {
			example = pair
		}
	}
	fmt.Fprintf(a.stdout, "timeaware demo: building pairs from the built-in sample in %s\n\n", inDir)
	res, err := p.execute(ctx, a.stderr)
	if err != nil {
		return err
	}
	printPairsSummary(a.stdout, res)
	if example != nil {
		printPair(a.stdout, example)
	}
	if err := a.demoRewards(ctx); err != nil {
		return err
	}
	if err := demoBudget(ctx, a.stdout, dir); err != nil {
		return err
	}
	printDemoNext(a.stdout, dir)
	return nil
}

// printDemoNext says what to run next, on the sample the demo wrote: every
// "timeaware" line runs as printed (a test runs them).
func printDemoNext(w io.Writer, dir string) {
	in := func(name string) string { return filepath.Join(dir, "input", name) }
	split := filepath.Join(dir, "split", "pairs.parquet")
	fmt.Fprintf(w, `
Next:
  split the sample's pairs by scenario, then check the split for leaks, as a CI job would (on a sample
  this small the gate fails: its one low-sensitivity scenario went to the train side):
    timeaware pairs build --input %s --annotations %s \
      --direct-answers %s --split group --seed 3 --out %s
    timeaware splits check %s.manifest.json
  serve the rewards and timers to a trainer (TRL, VeRL, OpenRLHF; docs/serve.md):
    timeaware serve
  every command: timeaware --help; the guides: README.md and docs/
`, in("trajectories.jsonl"), in("votes.jsonl"), in("direct.jsonl"), split, split)
}

// printPair shows one pair the way a trainer will see it.
func printPair(w io.Writer, p *prefpairs.Pair) {
	score := "null"
	if p.Score != nil {
		score = fmt.Sprintf("%.2f", *p.Score)
	}
	fmt.Fprintf(w, "\nOne pair (%s, elapse %d, S = %s, margin %.2f):\n", p.ID, p.Elapse, score, p.Margin)
	show := func(part string, m conversation.Message) {
		s := []string{}
		if t := m.Text(); t != "" {
			s = append(s, t)
		}
		for _, tc := range m.ToolCalls {
			s = append(s, fmt.Sprintf("<call %s(%s)>", tc.Function.Name, tc.Function.Arguments))
		}
		fmt.Fprintf(w, "  %-8s %-9s %s\n", part, m.Role, strings.Join(s, " "))
	}
	for _, m := range p.Prompt {
		show("prompt", m)
	}
	show("chosen", p.Chosen[0])
	show("rejected", p.Rejected[0])
}

// demoRewards runs one timed rollout through the verifier service on a
// loopback port (verifier.SampleRollout) and prints what a trainer sees.
func (a *app) demoRewards(ctx context.Context) error {
	ro, err := verifier.SampleRollout(ctx, buildVersion())
	if err != nil {
		return err
	}
	w := a.stdout
	fmt.Fprintf(w, "\ntimeaware demo: the verifier service (timeaware serve) on %s\n", ro.URL)
	fmt.Fprintf(w, "  get_duration for rollout %s (speed factor %g, budget %g s): %q\n", ro.ID, ro.SpeedFactor, ro.TimeLimitS, ro.Duration)
	fmt.Fprintf(w, "  POST /v1/score/batch, data source timely/general, ground truth %s:\n", ro.GroundTruth)
	fmt.Fprintf(w, "    %-14s %9s %9s %6s %6s\n", "answer", "elapsed", "budget", "right", "score")
	for _, s := range ro.Scores {
		fmt.Fprintf(w, "    %-14s %8.2fs %8.0fs %6v %6.3f\n", s.Answer, s.ElapsedS, s.TimeLimitS, s.Right, s.Score)
	}
	fmt.Fprintln(w, "  (late answers score 0; on time: 0.1 for the format, +0.5 if right, +0.4·sin(π/2·t/T) for using the budget)")
	return nil
}
