package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
)

type splitsContaminationFlags struct {
	asJSON                                    bool
	benchmarks                                []string
	preset, text, id                          string
	benchText, benchAnswer, benchID, benchSpl string
	benchTextSet                              bool // --benchmark-text given
	ngram, maxContaminated, maxFindings, span int
	minOverlap                                float64
	normalize, per                            string
}

func (a *app) splitsContaminationCmd() *cobra.Command {
	var f splitsContaminationFlags
	def := splits.DefaultContaminationOptions()
	cmd := &cobra.Command{
		Use:   "contamination --benchmark FILE [--benchmark FILE ...] TRAIN [TRAIN ...]",
		Short: "Check training files for public benchmarks' test records (word n-grams, for CI)",
		Long:  longHelp("splits contamination"),
		Example: `  # out/traveler.parquet, from synth traveler's example, against benchmark rows imported in
  # synth.RowSchema's shape (TimeQA, TempReason, TRAM, Test of Time test records):
  timeaware splits contamination --benchmark examples/splits/benchmark.jsonl out/traveler.parquet
  # a corpus with a text column that holds two of the test records, so this check fails (exit 1):
  timeaware splits contamination --benchmark examples/splits/benchmark.jsonl examples/splits/corpus.jsonl
  # the same, as JSON, with two contaminated records tolerated in all:
  timeaware splits contamination --benchmark examples/splits/benchmark.jsonl examples/splits/corpus.jsonl \
    --json --max-contaminated 2 --max-contaminated-per total
`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.benchTextSet = cmd.Flags().Changed("benchmark-text")
			return a.runSplitsContamination(cmd.Context(), args, &f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.StringArrayVar(&f.benchmarks, "benchmark", nil, "a benchmark file or directory whose records are looked for (repeatable)")
	fs.StringVar(&f.preset, "preset", "auto", "columns of timeaware training output: auto, none, "+splits.PresetNames())
	fs.StringVar(&f.text, "text", "", "training columns whose text is scanned, comma-separated paths (default: the preset's, else text)")
	fs.StringVar(&f.id, "id", "", "training columns that identify a row, comma-separated (default: the preset's; none drops them)")
	fs.StringVar(&f.benchText, "benchmark-text", "prompt:user", "benchmark columns of the question, comma-separated paths, for files without extra_info.question (which benchmarks import writes; naming the columns reads them in every file)")
	fs.StringVar(&f.benchAnswer, "benchmark-answer", def.Columns.Answer, "benchmark column of the ground truth (answers, letter and options, or label; none drops it)")
	fs.StringVar(&f.benchID, "benchmark-id", def.Columns.ID, "benchmark column of the record id (the row number without)")
	fs.StringVar(&f.benchSpl, "benchmark-splits", "test", "benchmark splits (extra_info.split) checked, comma-separated, or all; rows without a split always count")
	fs.IntVar(&f.ngram, "ngram", def.NGram, "words per n-gram; items shorter than this match only whole")
	fs.StringVar(&f.normalize, "normalize", def.Norm.String(), "normalisation steps: lowercase, punctuation, numbers (fold to 0), unicode (NFKD, no accents), or none")
	fs.Float64Var(&f.minOverlap, "min-overlap", def.MinOverlap, "share of a record's n-grams in one training row that makes it a near duplicate")
	fs.IntVar(&f.maxContaminated, "max-contaminated", 0, "contaminated records tolerated before the check fails (exit 1)")
	fs.StringVar(&f.per, "max-contaminated-per", splits.ScopeBenchmark, "what --max-contaminated counts: benchmark (each) or total")
	fs.IntVar(&f.maxFindings, "max-findings", splits.DefaultMaxFindings, "records listed per benchmark, -1 for all (counts are always complete)")
	fs.IntVar(&f.span, "span-chars", splits.DefaultSpanChars, "characters of the matching span quoted per finding")
	return cmd
}

// errContaminated is returned when the contamination check fails: the
// report has been printed, so the command exits 1 with a one-line reason.
var errContaminated = errors.New("splits contamination failed")

// contaminationOptions builds the check's options from the flags, refusing
// a value out of range with a usage error naming its flag.
func contaminationOptions(f *splitsContaminationFlags) (splits.ContaminationOptions, error) {
	opt := splits.DefaultContaminationOptions()
	norm, err := splits.ParseTextNorm(f.normalize)
	if err != nil {
		return opt, usagef("--normalize %s: %w", f.normalize, err)
	}
	opt.NGram, opt.Norm, opt.MinOverlap, opt.MaxContaminated = f.ngram, norm, f.minOverlap, f.maxContaminated
	opt.Scope, opt.MaxFindings, opt.SpanChars = f.per, f.maxFindings, f.span
	opt.Splits = splits.SplitList(f.benchSpl)
	if opt.Splits == nil {
		return opt, usagef("--benchmark-splits: want split names or all")
	}
	opt.Columns.Text = splits.SplitList(f.benchText)
	if f.benchTextSet {
		opt.Columns.Item = "" // the columns named are read, whatever the file has
	}
	if len(opt.Columns.Text) == 0 {
		return opt, usagef("--benchmark-text: want a column")
	}
	if s := splits.ColumnSetting(f.benchAnswer); s != nil {
		opt.Columns.Answer = *s
	}
	if s := splits.ColumnSetting(f.benchID); s != nil {
		opt.Columns.ID = *s
	}
	for _, c := range []struct {
		flag  string
		value any
		bad   bool
		want  string
	}{
		{"ngram", f.ngram, f.ngram < 1 || f.ngram > 32, "want 1 to 32 words"},
		{"min-overlap", f.minOverlap, !(f.minOverlap > 0 && f.minOverlap <= 1), "want a share in (0, 1]"},
		{"max-contaminated", f.maxContaminated, f.maxContaminated < 0, "want 0 or more"},
		{"max-contaminated-per", f.per, f.per != splits.ScopeBenchmark && f.per != splits.ScopeTotal, "want benchmark or total"},
		{"max-findings", f.maxFindings, f.maxFindings < -1, "want -1 (all) or more"},
		{"span-chars", f.span, f.span < 0, "want 0 or more"},
	} {
		if c.bad {
			return opt, usagef("--%s %v: %s", c.flag, c.value, c.want)
		}
	}
	return opt, nil
}

func (a *app) runSplitsContamination(ctx context.Context, args []string, f *splitsContaminationFlags) error {
	if len(f.benchmarks) == 0 {
		return usagef("splits contamination needs --benchmark FILE (a benchmark's rows)")
	}
	if len(args) == 0 {
		return usagef("splits contamination needs training files or directories after the flags")
	}
	opt, err := contaminationOptions(f)
	if err != nil {
		return err
	}
	a.named("benchmark", f.benchmarks...)
	report, err := splits.CheckContaminationFiles(ctx, f.benchmarks, args, splits.Overrides{
		Preset: f.preset, Text: splits.ColumnSetting(f.text), ID: splits.ColumnSetting(f.id),
	}, opt)
	if err != nil {
		return contaminationError(err)
	}
	annotations := a.stdout
	if f.asJSON {
		annotations = a.stderr
		if err := report.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else if err := report.WriteText(a.stdout); err != nil {
		return err
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		report.WriteGitHubAnnotations(annotations)
	}
	if !report.Passed {
		return errContaminated
	}
	return nil
}

// contaminationError words an error of the check: a column or option error
// is a usage error, and a file's error names its flag.
func contaminationError(err error) error {
	if ce := (*splits.ColumnsError)(nil); errors.As(err, &ce) {
		return usageError{ce.Err}
	} else if ae := (*splits.ArgError)(nil); errors.As(err, &ae) {
		flag := ""
		if ae.Side == splits.SideBenchmark {
			flag = "benchmark"
		}
		if err = ae.Err; !errors.Is(err, output.ErrChanged) && !isFileSystemError(err) && flag != "" {
			err = usageError{err}
		}
		return pathError(flag, ae.Arg, err)
	} else if oe := (*splits.OptionError)(nil); errors.As(err, &oe) {
		return usageError{oe}
	}
	return err
}
