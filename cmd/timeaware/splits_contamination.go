package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
)

type splitsContaminationFlags struct {
	asJSON     bool
	benchmarks []string
}

// contaminationFlags are the check's settings, each a flag and a key under
// splits.contamination (dashes as underscores).
var contaminationFlags = []string{"preset", "text", "id", "benchmark-text", "benchmark-answer", "benchmark-id", "benchmark-splits",
	"ngram", "normalize", "min-overlap", "max-contaminated", "max-contaminated-per", "max-findings", "span-chars"}

// contaminationKey is the config key of a contamination flag.
func contaminationKey(flag string) string {
	return "splits.contamination." + strings.ReplaceAll(flag, "-", "_")
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
			return a.runSplitsContamination(cmd.Context(), args, &f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.StringArrayVar(&f.benchmarks, "benchmark", nil, "a benchmark file or directory whose records are looked for (repeatable)")
	fs.String("preset", "auto", "columns of timeaware training output: auto, none, "+splits.PresetNames())
	fs.String("text", "", "training columns whose text is scanned, comma-separated paths (default: the preset's, else text)")
	fs.String("id", "", "training columns that identify a row, comma-separated (default: the preset's; none drops them)")
	fs.String("benchmark-text", "", "benchmark columns of the question, comma-separated paths (default: extra_info.question, which benchmarks import writes, where a file has it, else prompt:user); naming columns reads them in every file")
	fs.String("benchmark-answer", def.Columns.Answer, "benchmark column of the ground truth (answers, letter and options, or label; none drops it)")
	fs.String("benchmark-id", def.Columns.ID, "benchmark column of the record id (the row number without)")
	fs.String("benchmark-splits", "test", "benchmark splits (extra_info.split) checked, comma-separated, or all; rows without a split always count")
	fs.Int("ngram", def.NGram, "words per n-gram; items shorter than this match only whole")
	fs.String("normalize", def.Norm.String(), "normalisation steps: lowercase, punctuation, numbers (fold to 0), unicode (NFKD, no accents), or none")
	fs.Float64("min-overlap", def.MinOverlap, "share of a record's n-grams in one training row that makes it a near duplicate")
	fs.Int("max-contaminated", 0, "contaminated records tolerated before the check fails (exit 1)")
	fs.String("max-contaminated-per", splits.ScopeBenchmark, "what --max-contaminated counts: benchmark (each) or total")
	fs.Int("max-findings", splits.DefaultMaxFindings, "records listed per benchmark, -1 for all (counts are always complete)")
	fs.Int("span-chars", splits.DefaultSpanChars, "characters of the matching span quoted per finding")
	for _, flag := range contaminationFlags {
		bindKey(fs, flag, contaminationKey(flag))
	}
	return cmd
}

// errContaminated is returned when the contamination check fails: the
// report has been printed, so the command exits 1 with a one-line reason.
var errContaminated = errors.New("splits contamination failed")

// contaminationOptions reads the check's settings, refusing a value out of
// range by where it was set (flag, variable or config file).
func (a *app) contaminationOptions() (splits.ContaminationOptions, error) {
	v, key := a.v, contaminationKey
	opt := splits.DefaultContaminationOptions()
	norm, err := splits.ParseTextNorm(v.GetString(key("normalize")))
	if err != nil {
		return opt, a.badKey(key("normalize"), err)
	}
	opt.Norm = norm
	opt.NGram, opt.MinOverlap, opt.MaxContaminated = v.GetInt(key("ngram")), v.GetFloat64(key("min-overlap")), v.GetInt(key("max-contaminated"))
	opt.Scope, opt.MaxFindings, opt.SpanChars = v.GetString(key("max-contaminated-per")), v.GetInt(key("max-findings")), v.GetInt(key("span-chars"))
	if opt.Splits = splits.SplitList(v.GetString(key("benchmark-splits"))); opt.Splits == nil {
		return opt, a.badKeyf(key("benchmark-splits"), "want split names or all")
	}
	// The library takes 0 for its default; here it is a value out of range.
	if opt.NGram == 0 {
		return opt, a.badKeyf(key("ngram"), "want 1 to 32 words")
	}
	if !(opt.MinOverlap > 0) {
		return opt, a.badKeyf(key("min-overlap"), "want a share in (0, 1]")
	}
	if text := splits.SplitList(v.GetString(key("benchmark-text"))); text != nil {
		opt.Columns.Text, opt.Columns.Item = text, "" // the columns named, in every file
	}
	if s := splits.ColumnSetting(v.GetString(key("benchmark-answer"))); s != nil {
		opt.Columns.Answer = *s
	}
	if s := splits.ColumnSetting(v.GetString(key("benchmark-id"))); s != nil {
		opt.Columns.ID = *s
	}
	opt, err = splits.StrictContaminationOptions(opt)
	if oe := (*splits.OptionError)(nil); errors.As(err, &oe) {
		return opt, a.contaminationOptionError(oe)
	}
	return opt, err
}

// contaminationOptionError names an option the library refused by its key.
func (a *app) contaminationOptionError(oe *splits.OptionError) error {
	flag := strings.ReplaceAll(oe.Key, "_", "-")
	if oe.Key == "scope" {
		flag = "max-contaminated-per"
	}
	return a.badKey(contaminationKey(flag), oe.Err)
}

func (a *app) runSplitsContamination(ctx context.Context, args []string, f *splitsContaminationFlags) error {
	if len(f.benchmarks) == 0 {
		return usagef("splits contamination needs --benchmark FILE (a benchmark's rows)")
	}
	if len(args) == 0 {
		return usagef("splits contamination needs training files or directories after the flags")
	}
	opt, err := a.contaminationOptions()
	if err != nil {
		return err
	}
	a.named("benchmark", f.benchmarks...)
	report, err := splits.CheckContaminationFiles(ctx, f.benchmarks, args, splits.Overrides{
		Preset: a.v.GetString(contaminationKey("preset")), Text: splits.ColumnSetting(a.v.GetString(contaminationKey("text"))),
		ID: splits.ColumnSetting(a.v.GetString(contaminationKey("id"))),
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
	}
	return err
}
