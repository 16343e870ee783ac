package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/splits/scenario"
	"github.com/timeaware/timeaware/synth"
)

type pairsBuildFlags struct {
	inputs                          []string
	annotations, directAnswers, out string
	shard                           string
}

func (a *app) pairsBuildCmd() *cobra.Command {
	var f pairsBuildFlags
	cmd := &cobra.Command{
		Use:   "build --input PATH [--input PATH ...] --out FILE",
		Short: "Build DPO preference pairs with margins",
		Long:  longHelp("pairs build"),
		Example: `  timeaware pairs build --input examples/pairs/trajectories.jsonl --annotations examples/pairs/votes.jsonl \
    --direct-answers examples/pairs/direct.jsonl --out out/pairs.parquet
  timeaware pairs build --input examples/pairs/trajectories.jsonl --annotations examples/pairs/votes.jsonl \
    --direct-answers examples/pairs/direct.jsonl --time-format iso_delta --split group --seed 3 --out out/tictoc.parquet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := a.planPairsBuild(&f)
			if err != nil {
				return err
			}
			tuneGCForStreaming()
			d, err := p.execute(cmd.Context(), a.stderr)
			if err == nil {
				printPairsSummary(a.stdout, d)
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.inputs, "input", nil, "trajectory file (JSON array or JSONL) or directory of them; repeatable")
	fs.StringVar(&f.annotations, "annotations", "", "JSONL of human votes {sample_id, elapse, annotator, survey, choice}")
	fs.StringVar(&f.directAnswers, "direct-answers", "", "JSONL of direct replies {id, elapse?, direct_answer}")
	fs.StringVar(&f.out, "out", "", "output file; its extension picks the format unless --format is given")
	fs.String("generate-direct", "", "OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1) to generate missing direct replies")
	fs.String("model", "", "model name for --generate-direct")
	fs.String("time-format", "iso", "how message times are shown: none, iso or iso_delta")
	outputFormatFlag(fs, "pairs.format")
	fs.Float64("min-margin", 0, "drop pairs whose margin is below this (0 to 1.5)")
	fs.Bool("confident-only", false, "keep only samples with S <= 0.5 or S >= 2.5")
	fs.Float64("label-only-margin", 1.0, "margin for samples whose class is known but S is not")
	fs.Int("workers", 0, "decoding goroutines (0: one per CPU)")
	fs.String("split", "", "split whole scenarios into train and test: paper or group; writes <out>-train and <out>-test")
	fs.Uint64("seed", 0, "seed of the group split")
	fs.Float64("test-fraction", splits.DefaultTestFraction, "group split: target share of samples on the test side")
	fs.String("catalog", "", "scenario catalog YAML (default: the built-in "+scenario.DefaultSource+")")
	fs.StringVar(&f.shard, "shard", "", "build only shard i/n of the trajectories (by id hash), e.g. 0/4")
	for _, fk := range [][2]string{{"generate-direct", "generate.url"}, {"model", "generate.model"}, {"time-format", "time_format"},
		{"min-margin", "min_margin"}, {"confident-only", "confident_only"}, {"label-only-margin", "label_only_margin"}, {"workers", "workers"},
		{"split", "split"}, {"seed", "seed"}, {"test-fraction", "test_fraction"}, {"catalog", "catalog"}} {
		bindKey(fs, fk[0], "pairs."+fk[1])
	}
	return cmd
}

// pairsPlan is a validated pairs build; onPair, when set, sees every pair
// as it is written (the demo prints one).
type pairsPlan struct {
	opt    prefpairs.DatasetOptions
	onPair func(*prefpairs.Pair)
}

func (a *app) planPairsBuild(f *pairsBuildFlags) (*pairsPlan, error) {
	v := a.v
	if len(f.inputs) == 0 {
		return nil, usagef("--input is required")
	}
	if f.out == "" {
		return nil, usagef("--out is required")
	}
	files, err := a.expandInputs("input", f.inputs)
	if err != nil {
		return nil, err
	}
	o := prefpairs.DatasetOptions{Inputs: files, Out: f.out, Annotations: f.annotations, DirectAnswers: f.directAnswers}
	if o.Format, err = a.outputFormat("pairs.format", f.out); err != nil {
		return nil, err
	}
	if err := a.pairsOptions(&o); err != nil {
		return nil, err
	}
	if o.Build.Shard, err = parseShardFlag(f.shard); err != nil {
		return nil, err
	}
	o.Manifest = manifest("pairs build", typedConfig(v, "pairs.", "pairs.generate.api_key_env"))
	if f.shard != "" {
		o.Manifest.Config["shard"] = f.shard
	}
	for flag, path := range map[string]string{"annotations": f.annotations, "direct-answers": f.directAnswers} {
		if path != "" {
			a.named(flag, path)
		}
	}
	return &pairsPlan{opt: o}, nil
}

// pairsOptions reads the pairs.* keys into o: the build, the consistency
// check, the dataset writer, the split and the direct replies' generator.
func (a *app) pairsOptions(o *prefpairs.DatasetOptions) error {
	v := a.v
	o.Build, o.Consistency = prefpairs.DefaultOptions(), prefpairs.ConsistencyOptions{MaxInconsistencies: v.GetInt("pairs.max_inconsistencies")}
	o.Dataset = dataset.Options{ZstdLevel: v.GetInt("pairs.zstd_level"), RowGroupRows: v.GetInt64("pairs.row_group_rows")}
	b := &o.Build
	var err error
	if b.TimeFormat, err = prefpairs.ParseTimeFormat(v.GetString("pairs.time_format")); err != nil {
		return a.badKey("pairs.time_format", err)
	}
	b.MinMargin, b.ConfidentOnly, b.LabelOnlyMargin = v.GetFloat64("pairs.min_margin"), v.GetBool("pairs.confident_only"), v.GetFloat64("pairs.label_only_margin")
	b.ToolResponse, b.Workers = prefpairs.ToolResponse(v.GetString("pairs.tool_response")), v.GetInt("pairs.workers")
	if b.MinMargin < 0 || b.MinMargin > 1.5 {
		return a.badKeyf("pairs.min_margin", "want a margin from 0 to 1.5")
	}
	if b.LabelOnlyMargin < 0 || b.LabelOnlyMargin > 1.5 {
		return a.badKeyf("pairs.label_only_margin", "want a margin from 0 to 1.5")
	}
	if b.ToolResponse != prefpairs.RepeatLastTurn && b.ToolResponse != prefpairs.RepeatLastCall {
		return a.badKeyf("pairs.tool_response", "want last_turn or last_call")
	}
	if err := a.pairsSplit(o); err != nil {
		return err
	}
	o.Generate, err = a.pairsGenerator()
	return err
}

// pairsSplit maps the catalog and split keys of pairs build to its
// options: the catalog file (read here, so that its errors name
// --catalog) and the split strategy.
func (a *app) pairsSplit(o *prefpairs.DatasetOptions) error {
	v := a.v
	if path := v.GetString("pairs.catalog"); path != "" {
		cat, mf, err := readSideFile(a, "pairs.catalog", path, "catalog", scenario.Load)
		if err != nil {
			return err
		}
		o.Catalog, o.CatalogFile = cat, &mf
	}
	o.Split = prefpairs.SplitOptions{Strategy: v.GetString("pairs.split"), Seed: v.GetUint64("pairs.seed"),
		TestFraction: v.GetFloat64("pairs.test_fraction")}
	switch o.Split.Strategy {
	case "", splits.StrategyPaper:
	case splits.StrategyGroup:
		if !(o.Split.TestFraction > 0 && o.Split.TestFraction < 1) {
			return a.badKeyf("pairs.test_fraction", "want a share between 0 and 1")
		}
	default:
		return a.badKeyf("pairs.split", "want paper or group")
	}
	return nil
}

// pairsGenerator maps the pairs.generate keys to the options of the
// direct replies' generator; nil without pairs.generate.url.
func (a *app) pairsGenerator() (*prefpairs.GeneratorOptions, error) {
	v := a.v
	if v.GetString("pairs.generate.url") == "" {
		return nil, nil
	}
	timeout, err := time.ParseDuration(v.GetString("pairs.generate.timeout"))
	if err != nil {
		return nil, a.badKeyf("pairs.generate.timeout", "want a duration such as 120s")
	}
	g := &prefpairs.GeneratorOptions{URL: v.GetString("pairs.generate.url"), Model: v.GetString("pairs.generate.model"),
		Instruction: v.GetString("pairs.generate.instruction"), Temperature: v.GetFloat64("pairs.generate.temperature"),
		MaxTokens: v.GetInt("pairs.generate.max_tokens"), Concurrency: v.GetInt("pairs.generate.concurrency"),
		MaxRetries: v.GetInt("pairs.generate.max_retries"), Timeout: timeout, CacheDir: v.GetString("pairs.generate.cache_dir")}
	if env := v.GetString("pairs.generate.api_key_env"); env != "" {
		g.APIKey = os.Getenv(env)
	}
	if g.Model == "" {
		if where := a.origin("pairs.generate.url"); where != "--generate-direct" {
			return nil, a.badKeyf("pairs.generate.url", "needs a model too (--model or pairs.generate.model)")
		}
		return nil, usagef("--generate-direct needs --model")
	}
	return g, nil
}

// execute builds and writes the pairs, with progress on stderr when it is
// a terminal. A file an option names is reported with its flag.
func (p *pairsPlan) execute(ctx context.Context, stderr io.Writer) (*prefpairs.Dataset, error) {
	prog, opt := &progress.Meter{}, p.opt
	stop := func() {}
	opt.OnInputs = func(in []*output.Input) {
		prog = progress.New(stderr, "pairs").Reading(in)
		if gen := opt.Generated; gen != nil {
			// The replies come slower than the input is read: the line
			// follows them, and moves while a batch waits on its replies.
			prog.Waiting("direct replies", gen.Done, gen.Queued)
			stop = prog.Every(time.Second)
		}
	}
	if opt.Generate != nil {
		opt.Generated = &prefpairs.GenerationProgress{}
	}
	opt.OnPair = func(pair *prefpairs.Pair) {
		if p.onPair != nil {
			p.onPair(pair)
		}
		prog.Add(1)
	}
	d, err := prefpairs.BuildDataset(ctx, opt)
	stop()
	prog.Done()
	var oe *prefpairs.OptionError
	if errors.As(err, &oe) && oe.Path == "" {
		return nil, usageError{oe.Err}
	} else if errors.As(err, &oe) {
		return nil, pathError(strings.ReplaceAll(oe.Option, "_", "-"), oe.Path, oe.Err)
	}
	return d, streamError(err)
}

func printPairsSummary(w io.Writer, r *prefpairs.Dataset) {
	s := r.Summary
	for i, o := range r.Outputs {
		head := "pairs build:"
		if i > 0 {
			head = "            "
		}
		fmt.Fprintf(w, "%s %s written to %s (%s, %s)\n", head, synth.Counted(*o.Rows, "pair"), o.Path, o.Format, humanBytes(o.Bytes))
	}
	fmt.Fprintf(w, "  inputs:      %s, %s, %s\n", synth.Counted(len(s.Inputs), "file"), synth.Counted(s.Records, "record"), synth.Counted(s.Samples, "sample"))
	fmt.Fprintf(w, "  chosen:      %s\n  sensitivity: %s\n  split:       %s\n  preference:  %s\n  direct from: %s\n",
		countList(s.ByLabel), countList(s.BySensitivity), countList(s.BySplit), countList(s.ScoreSource), countList(s.DirectSource))
	d := s.Dropped
	fmt.Fprintf(w, "  dropped:     ties %d, below min margin %d, not confident %d, unlabelled %d\n", d.Ties, d.BelowMinMargin, d.NotConfident, d.Unlabelled)
	if v := r.Votes; v != nil {
		c := v.Consistency
		fmt.Fprintf(w, "  annotations: %d votes in %d submissions; kept %d votes in %d submissions; %d samples scored\n",
			c.VotesIn, c.Submissions, c.VotesKept, c.Kept, v.Samples)
		for _, ds := range c.Dropped {
			fmt.Fprintf(w, "    dropped submission %s/%s: %d inconsistent trajectories (%s), %d votes\n",
				ds.Annotator, ds.Survey, len(ds.Inconsistent), strings.Join(ds.Inconsistent, ", "), ds.Votes)
		}
		fmt.Fprintf(w, "    Krippendorff's alpha: interval %s, ordinal %s\n", fmtAlpha(v.AlphaInterval), fmtAlpha(v.AlphaOrdinal))
	}
	if g := r.Generator; g != nil {
		fmt.Fprintf(w, "  generator:   %d requests, %d cache hits, %d retries, %d failures\n", g.Requests, g.CacheHits, g.Retries, g.Failures)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if sp := r.Split; sp != nil {
		fmt.Fprintf(w, "  assignment:  %s; test fraction %.3f of samples (%s); %d train and %d test scenarios with data\n",
			sp.Assignment.Strategy, sp.Fractions.Test, fractionList(sp.BySensitivity), len(sp.TrainScenarios), len(sp.TestScenarios))
	}
	fmt.Fprintf(w, "  manifest:    %s\n", r.ManifestPath)
}
