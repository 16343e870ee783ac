package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/chat"
)

// evalRunFlags are the flags of eval run.
type evalRunFlags struct {
	modelFlags
	out           string
	data          []string
	resamples     int
	bootstrapSeed int64
	opponentBeta  float64
	opponentURL   string
	opponentModel string
	asJSON        bool
}

func (a *app) evalRunCmd() *cobra.Command {
	var f evalRunFlags
	cmd := &cobra.Command{
		Use:   "run --endpoint URL --model NAME --data FILE [--data FILE...] --out RESULTS.jsonl",
		Short: "Evaluate a model behind an OpenAI-compatible endpoint on pairs and synth datasets",
		Long: `run puts every row of the --data files to a model served behind an
OpenAI-compatible chat-completions endpoint (vLLM, SGLang, OpenAI), scores
each reply with its data source's reward, and reports every metric with a
95% bootstrap interval.

  pairs files (pairs build)   TicToc decisions: the conversation is sent with
                              its tools; a reply that calls a tool is an
                              attempt. NAR, TPR, TNR, attempt rates, by
                              sensitivity and elapse level.
  synth rows                  scored by their data_source's reward: Time
                              Puzzles em/f1/jaccard, TRAVELER crisp and soft
                              accuracy; negotiation rows play whole episodes
                              against the scripted opponent (--opponent-beta).
  timely/general rows         run live: the model's get_duration calls are
                              answered from a timer with the row's speed
                              factor; the reward reads the timer (acc,
                              on_time, utilization, score).

Replies are cached under --cache (default RESULTS.jsonl.cache): a rerun,
after a crash or Ctrl-C, sends no request already answered. RESULTS.jsonl
holds one line per row and sample, in input order. Ctrl-C writes the
results that finished and exits 1.`,
		Example: `  timeaware eval run --endpoint http://127.0.0.1:8000/v1 --model my-model \
    --data out/pairs-test.parquet --data out/puzzles.parquet --out out/before.jsonl
  timeaware eval run --endpoint http://127.0.0.1:8000/v1 --model my-model --samples 4 --temperature 0.7 --seed 1 \
    --data out/pairs-test.parquet --data out/puzzles.parquet --out out/after.jsonl --json > out/report.json
  timeaware eval compare out/before.jsonl out/after.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runEvalRun(cmd, f) },
	}
	fs := cmd.Flags()
	f.add(fs, "seed of the requests (sample k: seed+k), the timers' jitter and, unless --bootstrap-seed, the bootstrap")
	fs.StringArrayVar(&f.data, "data", nil, "a pairs or synth dataset (Parquet, Arrow, JSONL) or a directory of them (repeatable)")
	fs.StringVar(&f.out, "out", "", "RESULTS.jsonl: one line per row and sample, in input order; written atomically")
	fs.Int64Var(&f.bootstrapSeed, "bootstrap-seed", 0, "seed of the bootstrap alone (default: --seed); changing it asks the model nothing new")
	fs.IntVar(&f.resamples, "bootstrap", eval.DefaultResamples, "bootstrap resamples of the intervals")
	fs.Float64Var(&f.opponentBeta, "opponent-beta", 1, "negotiation rows: the scripted opponent's concession curve (1 linear, above 1 concedes early, below 1 late)")
	fs.StringVar(&f.opponentURL, "opponent-endpoint", "", "negotiation rows: an OpenAI-compatible endpoint whose model plays the other role instead of the scripted opponent")
	fs.StringVar(&f.opponentModel, "opponent-model", "", "the model --opponent-endpoint serves")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	return cmd
}

func (a *app) runEvalRun(cmd *cobra.Command, f evalRunFlags) error {
	switch {
	case len(f.data) == 0:
		return usagef("--data is required (a pairs or synth dataset; repeatable)")
	case f.out == "":
		return usagef("--out is required (RESULTS.jsonl)")
	case f.resamples <= 0:
		return usagef("--bootstrap %d: want at least 1 resample", f.resamples)
	case !(f.opponentBeta > 0 && f.opponentBeta <= 100):
		return usagef("--opponent-beta %g: want a number above 0, up to 100", f.opponentBeta)
	}
	if err := f.check(f.out); err != nil {
		return err
	}
	if (f.opponentURL == "") != (f.opponentModel == "") {
		return usagef("--opponent-endpoint and --opponent-model go together")
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	bseed := f.seed
	if cmd.Flags().Changed("bootstrap-seed") {
		bseed = f.bootstrapSeed
	}
	model := f.chatOptions("eval", f.endpoint, f.model)
	a.named("data", f.data...)
	prog := newProgress(a.stderr, "results")
	rep, err := eval.RunFiles(cmd.Context(), eval.FilesOptions{Data: f.data, Out: f.out, Model: model,
		Opponent: f.chatOptions("opponent", f.opponentURL, f.opponentModel), MaxErrors: f.maxErrors,
		Run: eval.Options{Rewards: cfg, Samples: f.samples, Temperature: f.temperature, MaxTokens: f.maxTokens, Seed: f.seed,
			MaxTurns: f.maxTurns, Workers: f.concurrency, ToolChoice: f.toolChoice, OpponentBeta: f.opponentBeta},
		Report: eval.ReportOptions{Resamples: f.resamples, Seed: uint64(bseed)}, Progress: func(n int) { prog.of(n).add(1) }})
	prog.done()
	if err != nil {
		return evalError(err, map[string]string{"Data": "data", "Out": "out", "Endpoint": "endpoint", "OpponentEndpoint": "opponent-endpoint"})
	}
	if f.asJSON {
		err = writeJSON(a.stdout, rep)
	} else {
		fmt.Fprint(a.stdout, rep.Text())
	}
	if err != nil {
		return err
	}
	st := rep.Requests
	fmt.Fprintf(a.stderr, "eval run: %d results of %d rows written to %s; %d requests, %d from the cache, %d retries, %d failed\n",
		rep.Done, rep.Rows, f.out, st.Requests, st.CacheHits, st.Retries, rep.Failed)
	first := strings.Join(rep.FirstErrors, "; ")
	switch {
	case rep.GaveUp:
		return fmt.Errorf("stopped after %d failed results (--max-errors %d), %d of %d results done (written to %s); first: %s",
			rep.Failed, f.maxErrors, rep.Done, rep.Total, f.out, first)
	case rep.Interrupted:
		return fmt.Errorf("interrupted with %d of %d results done (written to %s); run the same command again to resume from the cache", rep.Done, rep.Total, f.out)
	case rep.Failed > f.maxErrors:
		return fmt.Errorf("%d of %d results failed (--max-errors %d); first: %s", rep.Failed, rep.Done, f.maxErrors, first)
	}
	return nil
}

// chatOptions are the client options of an endpoint and model ("" URL:
// none), with the flags' concurrency, timeout, key and cache.
func (f *evalRunFlags) chatOptions(name, url, model string) chat.Options {
	if url == "" {
		return chat.Options{}
	}
	return chat.Options{Name: name, URL: url, Model: model, APIKey: os.Getenv(f.apiKeyEnv),
		Concurrency: f.concurrency, Timeout: f.timeout, CacheDir: f.cache(f.out)}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *app) evalCompareCmd() *cobra.Command {
	var (
		asJSON    bool
		resamples int
		seed      uint64
	)
	cmd := &cobra.Command{
		Use:   "compare A.jsonl B.jsonl",
		Short: "Paired differences B − A of two eval runs on the same rows",
		Long: `compare reads the RESULTS.jsonl files of two eval run invocations (before and
after training, two models, two prompts), pairs their rows by data source and
request id, and reports for every metric A, B and B − A with a paired
bootstrap interval (each resample draws rows and takes both runs' results of
those rows). Rows only one run scored are counted and left out.`,
		Example: `  timeaware eval compare out/before.jsonl out/after.jsonl
  timeaware eval compare out/before.jsonl out/after.jsonl --json > out/compare.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare takes two RESULTS.jsonl files, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if resamples <= 0 {
				return usagef("--bootstrap %d: want at least 1 resample", resamples)
			}
			cmp, err := eval.CompareFiles(args[0], args[1], eval.ReportOptions{Resamples: resamples, Seed: seed})
			if err != nil {
				return evalError(err, map[string]string{"A": "", "B": ""})
			}
			if asJSON {
				return writeJSON(a.stdout, cmp)
			}
			fmt.Fprint(a.stdout, cmp.Text(args[0], args[1]))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	fs.IntVar(&resamples, "bootstrap", eval.DefaultResamples, "bootstrap resamples of the intervals")
	fs.Uint64Var(&seed, "seed", 0, "seed of the bootstrap")
	return cmd
}

// evalError names the flag (or, for "", the argument) of an eval option
// error (*eval.OptionError); flags maps the option to its flag. Other
// errors are returned as they are.
func evalError(err error, flags map[string]string) error {
	var oe *eval.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	e := pathError(flags[oe.Option], oe.Value, oe.Err)
	if oe.Invalid {
		return usageError{e}
	}
	return e
}

// readEvalData reads the rows of dataset files and directories
// (eval.ReadData), leaving out the results file and the reply cache.
// flag is the flag that named data (--data, or --input for synth distill).
func (a *app) readEvalData(flag string, data []string, out, cache string) ([]eval.Row, error) {
	a.named(flag, data...)
	rows, err := eval.ReadData(data, out, cache)
	return rows, evalError(err, map[string]string{"Data": flag})
}
