package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/rewards"
)

// evalRunFlags are the flags of eval run: the model's, and the options
// the others map to.
type evalRunFlags struct {
	modelFlags
	opt           eval.FilesOptions
	bootstrapSeed int64
	asJSON        bool
}

func (a *app) evalRunCmd() *cobra.Command {
	var f evalRunFlags
	cmd := &cobra.Command{
		Use:   "run --endpoint URL --model NAME --data FILE [--data FILE...] --out RESULTS.jsonl",
		Short: "Evaluate a model behind an OpenAI-compatible endpoint on pairs and synth datasets",
		Long:  longHelp("eval run"),
		Example: standin + `  # out/tictoc-test.parquet and out/puzzles.parquet are written by the second example of pairs build
  # and the first of synth puzzles:
  timeaware eval run --endpoint http://127.0.0.1:8000/v1 --model my-model \
    --data out/tictoc-test.parquet --data out/puzzles.parquet --out out/before.jsonl
  timeaware eval run --endpoint http://127.0.0.1:8000/v1 --model my-model --samples 4 --temperature 0.7 --seed 1 \
    --data out/tictoc-test.parquet --data out/puzzles.parquet --out out/after.jsonl --json > out/report.json
  timeaware eval compare out/before.jsonl out/after.jsonl
  timeaware eval run --endpoint http://127.0.0.1:8000/v1 --model my-model \
    --data examples/eval/length.jsonl --out out/length.jsonl --plot out/length.png`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runEvalRun(cmd, f) },
	}
	fs := cmd.Flags()
	f.add(fs, "seed of the requests (sample k: seed+k), the timers' jitter and, unless --bootstrap-seed, the bootstrap")
	fs.StringArrayVar(&f.opt.Data, "data", nil, "a pairs or synth dataset (Parquet, Arrow, JSONL) or a directory of them (repeatable)")
	fs.StringVar(&f.opt.Out, "out", "", "RESULTS.jsonl: one line per row and sample, in input order; written atomically")
	fs.StringVar(&f.opt.Plot, "plot", "", "FILE.png: draw the token-budget rows' accuracy against budget, a line per data source; written atomically")
	fs.Int64Var(&f.bootstrapSeed, "bootstrap-seed", 0, "seed of the bootstrap alone (default: --seed); changing it asks the model nothing new")
	fs.IntVar(&f.opt.Report.Resamples, "bootstrap", eval.DefaultResamples, "bootstrap resamples of the intervals")
	fs.Float64Var(&f.opt.Run.OpponentBeta, "opponent-beta", 1, "negotiation rows: the scripted opponent's concession curve (1 linear, above 1 concedes early, below 1 late)")
	fs.StringVar(&f.opt.OpponentURL, "opponent-endpoint", "", "negotiation rows: an OpenAI-compatible endpoint whose model plays the other role instead of the scripted opponent")
	fs.StringVar(&f.opt.OpponentModel, "opponent-model", "", "the model --opponent-endpoint serves")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	return cmd
}

func (a *app) runEvalRun(cmd *cobra.Command, f evalRunFlags) error {
	o, r := &f.opt, &f.opt.Run
	if err := f.checkRun(); err != nil {
		return err
	}
	var err error
	if r.Rewards, err = a.rewardsConfig(); err != nil {
		return err
	}
	o.Report.Seed = uint64(f.seed)
	if cmd.Flags().Changed("bootstrap-seed") {
		o.Report.Seed = uint64(f.bootstrapSeed)
	}
	o.Model = chat.Options{Name: "eval", URL: f.endpoint, Model: f.model, APIKey: os.Getenv(f.apiKeyEnv),
		Concurrency: f.concurrency, Timeout: f.timeout, CacheDir: f.cache(o.Out)}
	r.Samples, r.Temperature, r.MaxTokens, r.Seed, r.MaxTurns = f.samples, f.temperature, f.maxTokens, f.seed, f.maxTurns
	r.Workers, r.ToolChoice, o.MaxErrors = f.concurrency, f.toolChoice, f.maxErrors
	a.named("data", o.Data...)
	prog := progress.New(a.stderr, "results")
	o.Progress = func(n int) { prog.Of(n).Add(1) }
	rep, err := eval.RunFiles(cmd.Context(), *o)
	prog.Done()
	if err != nil {
		return a.evalError(err, map[string]string{"Data": "data", "Out": "out", "Plot": "plot", "Endpoint": "endpoint", "OpponentEndpoint": "opponent-endpoint"})
	}
	if err := a.report(f.asJSON, rep, rep.Text()); err != nil {
		return err
	}
	plot := ""
	if rep.Plot != "" {
		plot = ", the plot to " + rep.Plot
	}
	fmt.Fprintf(a.stderr, "eval run: %d results of %d rows written to %s%s; %d requests, %d from the cache, %d retries, %d failed\n",
		rep.Done, rep.Rows, o.Out, plot, rep.Requests.Requests, rep.Requests.CacheHits, rep.Requests.Retries, rep.Failed)
	first := strings.Join(rep.FirstErrors, "; ")
	switch {
	case rep.GaveUp:
		return fmt.Errorf("stopped after %d failed results (--max-errors %d), %d of %d results done (written to %s); first: %s",
			rep.Failed, f.maxErrors, rep.Done, rep.Total, o.Out, first)
	case rep.Interrupted:
		return fmt.Errorf("interrupted with %d of %d results done (written to %s); run the same command again to resume from the cache", rep.Done, rep.Total, o.Out)
	case rep.Failed > f.maxErrors:
		return fmt.Errorf("%d of %d results failed (--max-errors %d); first: %s", rep.Failed, rep.Done, f.maxErrors, first)
	}
	return nil
}

// checkRun validates eval run's flags before anything is read.
func (f *evalRunFlags) checkRun() error {
	o := &f.opt
	switch {
	case len(o.Data) == 0:
		return usagef("--data is required (a pairs or synth dataset; repeatable)")
	case o.Out == "":
		return usagef("--out is required (RESULTS.jsonl)")
	case o.Report.Resamples <= 0:
		return usagef("--bootstrap %d: want at least 1 resample", o.Report.Resamples)
	case !(o.Run.OpponentBeta > 0 && o.Run.OpponentBeta <= 100):
		return usagef("--opponent-beta %g: want a number above 0, up to 100", o.Run.OpponentBeta)
	}
	if err := f.check(o.Out); err != nil {
		return err
	}
	if st, err := os.Stat(o.Plot); o.Plot != "" && err == nil && st.IsDir() {
		return usagef("--plot %s: is a directory; want the PNG file to write", o.Plot)
	}
	if (o.OpponentURL == "") != (o.OpponentModel == "") {
		return usagef("--opponent-endpoint and --opponent-model go together")
	}
	return nil
}

func (a *app) evalCompareCmd() *cobra.Command {
	var asJSON bool
	var opt eval.ReportOptions
	cmd := &cobra.Command{
		Use:   "compare A.jsonl B.jsonl",
		Short: "Paired differences B − A of two eval runs on the same rows",
		Long:  longHelp("eval compare"),
		Example: `  # out/before.jsonl and out/after.jsonl are written by the first two examples of eval run:
  timeaware eval compare out/before.jsonl out/after.jsonl
  timeaware eval compare out/before.jsonl out/after.jsonl --json > out/compare.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare takes two RESULTS.jsonl files, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Resamples <= 0 {
				return usagef("--bootstrap %d: want at least 1 resample", opt.Resamples)
			}
			cmp, err := eval.CompareFiles(args[0], args[1], opt)
			if err != nil {
				return a.evalError(err, map[string]string{"A": "", "B": ""})
			}
			return a.report(asJSON, cmp, cmp.Text(args[0], args[1]))
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	fs.IntVar(&opt.Resamples, "bootstrap", eval.DefaultResamples, "bootstrap resamples of the intervals")
	fs.Uint64Var(&opt.Seed, "seed", 0, "seed of the bootstrap")
	return cmd
}

// report prints an eval command's report: v as indented JSON with asJSON,
// else text.
func (a *app) report(asJSON bool, v any, text string) error {
	if !asJSON {
		fmt.Fprint(a.stdout, text)
		return nil
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// evalError names where the user set what an eval error is about: the
// flag (by flags; "" for an argument) of an option's path or URL
// (*eval.OptionError), the key of a rewards setting; other errors are
// returned as they are.
func (a *app) evalError(err error, flags map[string]string) error {
	var oe *eval.OptionError
	switch {
	case errors.As(err, new(*rewards.ConfigError)):
		return a.rewardsError(err)
	case !errors.As(err, &oe):
		return err
	case oe.Invalid:
		return usageError{pathError(flags[oe.Option], oe.Value, oe.Err)}
	}
	return pathError(flags[oe.Option], oe.Value, oe.Err)
}

// readEvalData reads the rows of dataset files and directories
// (eval.ReadData), leaving out the results file and the reply cache.
// flag is the flag that named data (--input for synth distill).
func (a *app) readEvalData(flag string, data []string, out, cache string) ([]eval.Row, error) {
	a.named(flag, data...)
	rows, err := eval.ReadData(data, out, cache)
	return rows, a.evalError(err, map[string]string{"Data": flag})
}
