package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/chat"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/negotiation"
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
	var opp negotiation.Opponent
	if f.opponentURL != "" || f.opponentModel != "" {
		if f.opponentURL == "" || f.opponentModel == "" {
			return usagef("--opponent-endpoint and --opponent-model go together")
		}
		oc, err := chat.New(chat.Options{Name: "opponent", URL: f.opponentURL, Model: f.opponentModel,
			APIKey: os.Getenv(f.apiKeyEnv), Concurrency: f.concurrency, Timeout: f.timeout, CacheDir: f.cache(f.out)})
		if err != nil {
			return usagef("--opponent-endpoint %s: %v", f.opponentURL, err)
		}
		opp = negotiation.ModelOpponent{Client: oc, Temperature: f.temperature, MaxTokens: f.maxTokens}
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	cache := f.cache(f.out)
	rows, err := a.readEvalData("data", f.data, f.out, cache)
	if err != nil {
		return err
	}
	client, af, err := f.start("eval", f.out, rows, cfg)
	if err != nil {
		return err
	}
	defer af.Abort()
	run, err := f.run(cmd, a, rows, client, cfg, false, f.opponentBeta, opp)
	if err != nil {
		return err
	}
	results, runErr, gaveUp := run.results, run.err, run.gaveUp
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	failed, done := 0, 0
	var firstErrs []string
	for _, r := range results {
		if r == nil {
			continue
		}
		done++
		if r.Error != "" {
			failed++
			if len(firstErrs) < 3 {
				firstErrs = append(firstErrs, fmt.Sprintf("%s (%s): %s", r.RequestID, r.DataSource, r.Error))
			}
		}
		if err := enc.Encode(r); err != nil {
			return pathError("out", f.out, err)
		}
	}
	if _, err := af.Write(buf.Bytes()); err != nil {
		return pathError("out", f.out, err)
	}
	if err := output.Commit(cmd.Context(), "", nil, af); err != nil {
		return pathError("out", f.out, err)
	}
	bseed := f.seed
	if cmd.Flags().Changed("bootstrap-seed") {
		bseed = f.bootstrapSeed
	}
	rep := eval.Summarize(results, eval.ReportOptions{Resamples: f.resamples, Seed: uint64(bseed)})
	stats := client.Stats()
	if f.asJSON {
		err = writeJSON(a.stdout, struct {
			Endpoint    string     `json:"endpoint"`
			Model       string     `json:"model"`
			Results     string     `json:"results"`
			Concurrency int        `json:"concurrency"`
			Requests    chat.Stats `json:"requests"`
			*eval.Report
		}{client.Endpoint(), f.model, f.out, f.concurrency, stats, rep})
	} else {
		printEvalReport(a.stdout, rep)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "eval run: %d results of %d rows written to %s; %d requests, %d from the cache, %d retries, %d failed\n",
		done, len(rows), f.out, stats.Requests, stats.CacheHits, stats.Retries, failed)
	if gaveUp {
		return fmt.Errorf("stopped after %d failed results (--max-errors %d), %d of %d results done (written to %s); first: %s",
			failed, f.maxErrors, done, len(results), f.out, strings.Join(firstErrs, "; "))
	}
	if runErr != nil {
		return fmt.Errorf("interrupted with %d of %d results done (written to %s); run the same command again to resume from the cache", done, len(results), f.out)
	}
	if failed > f.maxErrors {
		return fmt.Errorf("%d of %d results failed (--max-errors %d); first: %s", failed, done, f.maxErrors, strings.Join(firstErrs, "; "))
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printEvalReport prints a report as a table: a block per data source, a
// line per metric, then its groups.
func printEvalReport(w io.Writer, rep *eval.Report) {
	names := make([]string, 0, len(rep.DataSources))
	for n := range rep.DataSources {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			fmt.Fprintln(w)
		}
		sr := rep.DataSources[n]
		fmt.Fprintf(w, "%s: %d results of %d rows", n, sr.N, sr.Rows)
		if sr.Failed > 0 {
			fmt.Fprintf(w, ", %d failed", sr.Failed)
		}
		if sr.Skipped > 0 {
			fmt.Fprintf(w, ", %d skipped", sr.Skipped)
		}
		fmt.Fprintln(w)
		oneClass := printMetrics(w, "", sr)
		groups := make([]string, 0, len(sr.Groups))
		for g := range sr.Groups {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			gr := sr.Groups[g]
			fmt.Fprintf(w, "  %s (%d results)\n", g, gr.N)
			oneClass = printMetrics(w, "  ", gr) || oneClass
		}
		if oneClass {
			fmt.Fprintln(w, "  * one class only: NAR is that class's rate (TPR or TNR) alone")
		}
	}
	if rep.Missing > 0 {
		fmt.Fprintf(w, "\n%d results did not finish.\n", rep.Missing)
	}
	for _, note := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}

// printMetrics prints a metric a line; it reports whether a NAR was of
// one class only (marked *).
func printMetrics(w io.Writer, indent string, sr *eval.SourceReport) (oneClass bool) {
	for _, m := range sr.Order {
		iv := sr.Metrics[m]
		mark := " "
		if iv.OneClass {
			mark, oneClass = "*", true
		}
		fmt.Fprintf(w, "%s  %-16s %8s%s [%s, %s]\n", indent, m, num(iv.Mean), mark, num(iv.CI95[0]), num(iv.CI95[1]))
	}
	return oneClass
}

// num renders a metric value with four decimals.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }

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
			var runs [2][]*eval.Result
			for i, p := range args {
				fh, err := os.Open(p)
				if err != nil {
					return pathError("", p, err)
				}
				runs[i], err = eval.ReadResults(fh, p)
				fh.Close()
				if err != nil {
					return err
				}
			}
			cmp, err := eval.Compare(runs[0], runs[1], eval.ReportOptions{Resamples: resamples, Seed: seed})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, cmp)
			}
			printComparison(a.stdout, args[0], args[1], cmp)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	fs.IntVar(&resamples, "bootstrap", eval.DefaultResamples, "bootstrap resamples of the intervals")
	fs.Uint64Var(&seed, "seed", 0, "seed of the bootstrap")
	return cmd
}

func printComparison(w io.Writer, a, b string, cmp *eval.Comparison) {
	names := make([]string, 0, len(cmp.DataSources))
	for n := range cmp.DataSources {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "A: %s\nB: %s\n", a, b)
	if len(cmp.OnlyA)+len(cmp.OnlyB) > 0 {
		fmt.Fprintf(w, "left out: data sources only in A %v, only in B %v\n", cmp.OnlyA, cmp.OnlyB)
	}
	for _, n := range names {
		sc := cmp.DataSources[n]
		fmt.Fprintf(w, "\n%s: %d rows in both", n, sc.Rows)
		if sc.OnlyA+sc.OnlyB > 0 {
			fmt.Fprintf(w, " (%d only in A, %d only in B, left out)", sc.OnlyA, sc.OnlyB)
		}
		fmt.Fprintf(w, "\n  %-16s %8s %8s %8s  %s\n", "metric", "A", "B", "B − A", "95% interval")
		for _, m := range sc.Order {
			d := sc.Metrics[m]
			fmt.Fprintf(w, "  %-16s %8s %8s %8s  [%s, %s]\n", m, num(d.A), num(d.B), num(d.Diff), num(d.CI95[0]), num(d.CI95[1]))
		}
	}
}

// readEvalData reads the --data rows: files, and directories of dataset
// files. In a directory, the results file and the reply cache are left out,
// and a directory that holds both sides of a split is refused: a report of
// train and test rows together measures neither.
// flag is the flag that named data (--data, or --input for synth distill).
func (a *app) readEvalData(flag string, data []string, out, cache string) ([]eval.Row, error) {
	a.named(flag, data...)
	skip := map[string]bool{}
	for _, p := range []string{out, cache} {
		if p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				skip[abs] = true
			}
		}
	}
	under := func(path string) bool {
		abs, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		for p := range skip {
			if abs == p || strings.HasPrefix(abs, p+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	var rows []eval.Row
	for _, p := range data {
		st, err := os.Stat(p)
		if err != nil {
			return nil, pathError(flag, p, err)
		}
		files := []string{p}
		if st.IsDir() {
			all, err := splits.ExpandDir(p)
			if err != nil {
				return nil, pathError(flag, p, err)
			}
			files = files[:0]
			sides := map[string]string{}
			for _, file := range all {
				if under(file) {
					continue
				}
				files = append(files, file)
				if side := splits.SideFromPath(p, file); side != "" && sides[side] == "" {
					sides[side] = file
				}
			}
			if sides[splits.Train] != "" && sides[splits.Test] != "" {
				return nil, usagef("--%s %s: holds both sides of a split (%s, %s); name the side to evaluate", flag, p, sides[splits.Train], sides[splits.Test])
			}
			if len(files) == 0 {
				return nil, usagef("--%s %s: no dataset files besides the results and the cache", flag, p)
			}
		}
		for _, file := range files {
			rs, err := eval.ReadRows(file)
			if err != nil {
				return nil, err
			}
			rows = append(rows, rs...)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("--%s %s: no rows", flag, strings.Join(data, ", "))
	}
	return rows, nil
}
