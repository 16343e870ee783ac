package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

type pairsBuildFlags struct {
	inputs        []string
	annotations   string
	directAnswers string
	out           string
	shard         string
}

func (a *app) pairsBuildCmd() *cobra.Command {
	var f pairsBuildFlags
	cmd := &cobra.Command{
		Use:   "build --input PATH [--input PATH ...] --out FILE",
		Short: "Build DPO preference pairs with margins",
		Long: `Build turns TicToc trajectories into DPO preference pairs in TRL's
conversational preference layout (prompt, chosen, rejected, margin, ...).

Each sample (trajectory, elapse level) gets its preference from, in order:
the --annotations votes (mean score S), the record's pref_score, or its class
(the v1 file name prefer(Tool|NoTool)_elapse_<k>.json, or the record's
preference field). S > 1.5 prefers calling the tool, S < 1.5 a direct reply;
ties (S = 1.5) are dropped; margin = |S - 1.5|, or --label-only-margin when S
is unknown.

The direct reply comes from the record's direct_answer, the --direct-answers
file, or an OpenAI-compatible endpoint (--generate-direct). Samples with none
of these fail the build, naming them; nothing is written.

Output is written atomically with a manifest beside it (<out>.manifest.json).`,
		Example: `  timeaware pairs build --input examples/pairs/trajectories.jsonl --annotations examples/pairs/votes.jsonl \
    --direct-answers examples/pairs/direct.jsonl --out out/pairs.parquet
  timeaware pairs build --input examples/pairs/trajectories.jsonl --annotations examples/pairs/votes.jsonl \
    --direct-answers examples/pairs/direct.jsonl --time-format iso_delta --split group --seed 3 --out out/pairs.parquet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPairsBuild(cmd.Context(), &f)
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
	fs.String("catalog", "", "scenario catalog YAML (default: the built-in configs/scenarios.yaml)")
	fs.StringVar(&f.shard, "shard", "", "build only shard i/n of the trajectories (by id hash), e.g. 0/4")
	bindKey(fs, "generate-direct", "pairs.generate.url")
	bindKey(fs, "model", "pairs.generate.model")
	bindKey(fs, "time-format", "pairs.time_format")
	bindKey(fs, "min-margin", "pairs.min_margin")
	bindKey(fs, "confident-only", "pairs.confident_only")
	bindKey(fs, "label-only-margin", "pairs.label_only_margin")
	bindKey(fs, "workers", "pairs.workers")
	bindKey(fs, "split", "pairs.split")
	bindKey(fs, "seed", "pairs.seed")
	bindKey(fs, "test-fraction", "pairs.test_fraction")
	bindKey(fs, "catalog", "pairs.catalog")
	return cmd
}

// pairsPlan is a validated pairs build: everything the command line and
// config decided, before any data is read.
type pairsPlan struct {
	files   []string
	out     string
	format  *dataset.Format
	opt     prefpairs.Options
	dsOpt   dataset.Options
	consist prefpairs.ConsistencyOptions
	genOpt  *prefpairs.GeneratorOptions
	config  map[string]any
	f       *pairsBuildFlags
	a       *app
	// onPair, when set, sees every pair as it is written (the demo prints one).
	onPair func(*prefpairs.Pair)

	catalog      *splits.Catalog
	catalogFile  *output.Entry
	split        string // "", splits.StrategyPaper or splits.StrategyGroup
	seed         uint64
	testFraction float64
	assignment   *splits.Assignment
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
	p := &pairsPlan{a: a, files: files, out: f.out, f: f}
	if p.format, err = a.outputFormat("pairs.format", f.out); err != nil {
		return nil, err
	}
	p.opt = prefpairs.DefaultOptions()
	if p.opt.TimeFormat, err = prefpairs.ParseTimeFormat(v.GetString("pairs.time_format")); err != nil {
		return nil, a.badKey("pairs.time_format", err)
	}
	p.opt.MinMargin = v.GetFloat64("pairs.min_margin")
	p.opt.ConfidentOnly = v.GetBool("pairs.confident_only")
	p.opt.LabelOnlyMargin = v.GetFloat64("pairs.label_only_margin")
	p.opt.ToolResponse = prefpairs.ToolResponse(v.GetString("pairs.tool_response"))
	p.opt.Workers = v.GetInt("pairs.workers")
	if p.opt.MinMargin < 0 || p.opt.MinMargin > 1.5 {
		return nil, a.badKeyf("pairs.min_margin", "want a margin from 0 to 1.5")
	}
	if p.opt.LabelOnlyMargin < 0 || p.opt.LabelOnlyMargin > 1.5 {
		return nil, a.badKeyf("pairs.label_only_margin", "want a margin from 0 to 1.5")
	}
	if p.opt.ToolResponse != prefpairs.RepeatLastTurn && p.opt.ToolResponse != prefpairs.RepeatLastCall {
		return nil, a.badKeyf("pairs.tool_response", "want last_turn or last_call")
	}
	if f.shard != "" {
		if p.opt.Shard, err = parseShardFlag(f.shard); err != nil {
			return nil, err
		}
	}
	if err := p.planSplit(a); err != nil {
		return nil, err
	}
	p.dsOpt = dataset.Options{ZstdLevel: v.GetInt("pairs.zstd_level"), RowGroupRows: v.GetInt64("pairs.row_group_rows")}
	p.consist = prefpairs.ConsistencyOptions{MaxInconsistencies: v.GetInt("pairs.max_inconsistencies")}

	if url := v.GetString("pairs.generate.url"); url != "" {
		timeout, err := time.ParseDuration(v.GetString("pairs.generate.timeout"))
		if err != nil {
			return nil, a.badKeyf("pairs.generate.timeout", "want a duration such as 120s")
		}
		g := prefpairs.GeneratorOptions{
			URL:         url,
			Model:       v.GetString("pairs.generate.model"),
			Instruction: v.GetString("pairs.generate.instruction"),
			Temperature: v.GetFloat64("pairs.generate.temperature"),
			MaxTokens:   v.GetInt("pairs.generate.max_tokens"),
			Concurrency: v.GetInt("pairs.generate.concurrency"),
			MaxRetries:  v.GetInt("pairs.generate.max_retries"),
			Timeout:     timeout,
			CacheDir:    v.GetString("pairs.generate.cache_dir"),
		}
		if env := v.GetString("pairs.generate.api_key_env"); env != "" {
			g.APIKey = os.Getenv(env)
		}
		if g.Model == "" {
			return nil, usagef("--generate-direct needs --model")
		}
		p.genOpt = &g
	}
	p.config = typedConfig(v, "pairs.", "pairs.generate.api_key_env")
	if f.shard != "" {
		p.config["shard"] = f.shard
	}
	return p, nil
}

func (a *app) runPairsBuild(ctx context.Context, f *pairsBuildFlags) error {
	p, err := a.planPairsBuild(f)
	if err != nil {
		return err
	}
	tuneGCForStreaming()
	res, err := p.execute(ctx, a.stderr)
	if err != nil {
		return err
	}
	printPairsSummary(a.stdout, res)
	return nil
}

// pairsResult is what a finished build reports.
type pairsResult struct {
	summary  *prefpairs.Summary
	votes    *prefpairs.VoteSummary
	outputs  []output.Entry
	split    *splitReport
	manifest string
	notes    []string
	genStats *prefpairs.GeneratorStats
}

func (p *pairsPlan) execute(ctx context.Context, progress io.Writer) (*pairsResult, error) {
	res := &pairsResult{}
	var sideFiles []output.Entry
	if p.f.annotations != "" {
		votes, mf, err := readSideFile(p.a, p.f.annotations, "annotations", prefpairs.ReadVotes)
		if err != nil {
			return nil, err
		}
		_, scores, vs := prefpairs.SummarizeVotes(votes, p.consist)
		p.opt.Scores = scores
		res.votes = &vs
		sideFiles = append(sideFiles, mf)
	}
	if p.f.directAnswers != "" {
		d, mf, err := readSideFile(p.a, p.f.directAnswers, "direct_answers", prefpairs.ReadDirectAnswers)
		if err != nil {
			return nil, err
		}
		p.opt.Direct = d
		sideFiles = append(sideFiles, mf)
	}
	var gen *prefpairs.DirectGenerator
	if p.genOpt != nil {
		var err error
		if gen, err = prefpairs.NewDirectGenerator(*p.genOpt); err != nil {
			return nil, usageError{err}
		}
		p.opt.Generator = gen
	}

	if err := p.prepareSplit(ctx); err != nil {
		return nil, err
	}
	if p.assignment != nil {
		a := p.assignment
		p.opt.Split = func(pair *prefpairs.Pair) (string, error) { return a.Side(pair.Scenario) }
	}
	outputs, err := p.openOutputs()
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			for _, o := range outputs {
				o.abort()
			}
		}
	}()
	route := func(pair *prefpairs.Pair) *pairsOutput { return outputs[pair.Split] }
	inputs, readers := p.openInputs()
	defer closeInputs(readers)
	perScenario := map[string]*splits.ScenarioSamples{}
	prog := newProgress(progress, "pairs").reading(readers)
	sum, err := prefpairs.Build(ctx, inputs, p.opt, func(pair *prefpairs.Pair) error {
		if p.onPair != nil {
			p.onPair(pair)
		}
		prog.add(1)
		countScenario(perScenario, pair)
		return route(pair).add(pair)
	})
	prog.done()
	if err != nil {
		return nil, streamError(err)
	}
	for _, side := range outputSides(p.split) {
		if err := outputs[side].finish(); err != nil {
			return nil, err
		}
		res.outputs = append(res.outputs, outputs[side].record(p.format.Name))
	}
	res.summary = sum
	if gen != nil {
		st := gen.Stats()
		res.genStats = &st
	}
	if p.assignment != nil {
		fr, err := p.assignment.Measure(scenarioList(perScenario))
		if err != nil {
			return nil, err
		}
		res.split = &splitReport{Assignment: p.assignment, Fractions: fr}
	}
	if n := sum.ScoreSource[prefpairs.SourceLabelOnly]; n > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d pairs are label-only: their score S is unknown (null) and their margin is label_only_margin = %g", n, p.opt.LabelOnlyMargin))
	}
	if sum.UnmatchedScores > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d annotated samples match no input sample; their votes were not used", sum.UnmatchedScores))
	}
	if sum.LabelDisagreements > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d samples have a human score that contradicts their file or record label; the score decided", sum.LabelDisagreements))
	}
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "pairs build",
		Outputs: res.outputs,
		Config:  p.config,
		Summary: pairsManifestSummary{Summary: sum, Annotations: res.votes, Generator: res.genStats, Split: res.split},
		Notes:   res.notes,
	}
	for _, r := range readers {
		m.Inputs = append(m.Inputs, r.Entry(""))
	}
	m.Inputs = append(m.Inputs, sideFiles...)
	if p.catalogFile != nil {
		m.Inputs = append(m.Inputs, *p.catalogFile)
	}
	res.manifest = output.ManifestPath(p.out)
	// Commit every data file or none, and the manifest with them: a train
	// file without its test file (or beside an older one) would be a split
	// that was never built.
	var files []*output.File
	for _, side := range outputSides(p.split) {
		files = append(files, outputs[side].sink.File())
	}
	committed = true
	if err := output.Commit(ctx, res.manifest, m, files...); err != nil {
		return nil, pathError("out", p.out, err)
	}
	return res, nil
}

type pairsManifestSummary struct {
	*prefpairs.Summary
	Annotations *prefpairs.VoteSummary    `json:"annotations,omitempty"`
	Generator   *prefpairs.GeneratorStats `json:"generator,omitempty"`
	Split       *splitReport              `json:"split,omitempty"`
}

// splitReport is the manifest's record of a split: the strategy, the
// scenario lists and what it achieved on the data.
type splitReport struct {
	*splits.Assignment
	splits.Fractions
}

// readSideFile opens, reads and hashes a whole side file, named by the
// flag of its role (annotations_file is --annotations-file).
func readSideFile[T any](a *app, path, role string, read func(io.Reader, string) (T, error)) (T, output.Entry, error) {
	var zero T
	flag := strings.ReplaceAll(role, "_", "-")
	a.named(flag, path)
	in := output.OpenInput(path)
	defer in.Close()
	if _, err := os.Stat(path); err != nil {
		return zero, output.Entry{}, pathError(flag, path, err)
	}
	v, err := read(in, path)
	if err != nil {
		return zero, output.Entry{}, err
	}
	mf := in.Entry("")
	mf.Role = role
	return v, mf, nil
}

func printPairsSummary(w io.Writer, r *pairsResult) {
	s := r.summary
	for i, o := range r.outputs {
		head := "pairs build:"
		if i > 0 {
			head = "            "
		}
		fmt.Fprintf(w, "%s %s written to %s (%s, %s)\n", head, counted(*o.Rows, "pair"), o.Path, o.Format, humanBytes(o.Bytes))
	}
	fmt.Fprintf(w, "  inputs:      %s, %s, %s\n", counted(len(s.Inputs), "file"), counted(s.Records, "record"), counted(s.Samples, "sample"))
	fmt.Fprintf(w, "  chosen:      %s\n", countList(s.ByLabel))
	fmt.Fprintf(w, "  sensitivity: %s\n", countList(s.BySensitivity))
	fmt.Fprintf(w, "  split:       %s\n", countList(s.BySplit))
	fmt.Fprintf(w, "  preference:  %s\n", countList(s.ScoreSource))
	fmt.Fprintf(w, "  direct from: %s\n", countList(s.DirectSource))
	d := s.Dropped
	fmt.Fprintf(w, "  dropped:     ties %d, below min margin %d, not confident %d, unlabelled %d\n", d.Ties, d.BelowMinMargin, d.NotConfident, d.Unlabelled)
	if v := r.votes; v != nil {
		c := v.Consistency
		fmt.Fprintf(w, "  annotations: %d votes in %d submissions; kept %d votes in %d submissions; %d samples scored\n",
			c.VotesIn, c.Submissions, c.VotesKept, c.Kept, v.Samples)
		for _, ds := range c.Dropped {
			fmt.Fprintf(w, "    dropped submission %s/%s: %d inconsistent trajectories (%s), %d votes\n",
				ds.Annotator, ds.Survey, len(ds.Inconsistent), strings.Join(ds.Inconsistent, ", "), ds.Votes)
		}
		fmt.Fprintf(w, "    Krippendorff's alpha: interval %s, ordinal %s\n", fmtAlpha(v.AlphaInterval), fmtAlpha(v.AlphaOrdinal))
	}
	if g := r.genStats; g != nil {
		fmt.Fprintf(w, "  generator:   %d requests, %d cache hits, %d retries, %d failures\n", g.Requests, g.CacheHits, g.Retries, g.Failures)
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if sp := r.split; sp != nil {
		fmt.Fprintf(w, "  assignment:  %s; test fraction %.3f of samples (%s); %d train and %d test scenarios with data\n",
			sp.Assignment.Strategy, sp.Fractions.Test, fractionList(sp.BySensitivity), len(sp.TrainScenarios), len(sp.TestScenarios))
	}
	fmt.Fprintf(w, "  manifest:    %s\n", r.manifest)
}

// mapList renders a map as "a 1, b 2" in key order, "-" when empty.
func mapList[V any](m map[string]V, value func(V) string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + value(m[k])
	}
	return strings.Join(parts, ", ")
}

func countList(m map[string]int) string { return mapList(m, strconv.Itoa) }

func fractionList(m map[string]float64) string {
	return mapList(m, func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) })
}

func fmtAlpha(a *float64) string {
	if a == nil {
		return "n/a (no sample has two votes)"
	}
	return fmt.Sprintf("%.4f", *a)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
