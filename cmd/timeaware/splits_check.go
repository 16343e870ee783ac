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

func (a *app) splitsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "splits", Short: "Scenario-level train/test splits and the leakage gate"}
	cmd.AddCommand(a.splitsCheckCmd(), a.splitsContaminationCmd())
	return groupCommand(cmd)
}

type splitsCheckFlags struct {
	asJSON               bool
	train, test, against []string
}

func (a *app) splitsCheckCmd() *cobra.Command {
	var f splitsCheckFlags
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR|MANIFEST ...] [--train PATH ...] [--test PATH ...]",
		Short: "Check train/test splits of any dataset for leakage (for CI)",
		Long:  longHelp("splits check"),
		Example: `  # out/timely.parquet.manifest.json, out/timely-train.parquet and out/timely-test.parquet: the
  # split that the second example of synth budget writes (--test-fraction 0.34):
  timeaware splits check out/timely.parquet.manifest.json
  timeaware splits check out/timely-train.parquet out/timely-test.parquet --json > out/gate.json
  # examples/splits has two leaks planted, so this check fails (exit 1):
  timeaware splits check --train examples/splits/train.jsonl --test examples/splits/test.jsonl \
    --text question --group topic --id id`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSplitsCheck(cmd.Context(), args, &f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.StringArrayVar(&f.train, "train", nil, "a train-side file or directory (repeatable)")
	fs.StringArrayVar(&f.test, "test", nil, "a test-side file or directory (repeatable)")
	fs.StringArrayVar(&f.against, "against", nil, "a file or directory of an outside evaluation set to check train rows against (repeatable)")
	fs.String("preset", "auto", "columns of a timeaware output: auto, none, "+splits.PresetNames())
	fs.String("text", "", "columns whose text is compared, comma-separated paths (default: the preset's)")
	fs.String("group", "", "column of the unit that must not straddle the split (default: the preset's; none drops it)")
	fs.String("id", "", "columns that identify a row together, comma-separated (default: the preset's; none drops them)")
	fs.String("split-column", "", "column of a row's own split label (default: the preset's; none drops it)")
	fs.String("sensitivity-column", "", "column of the sensitivity level (default: the preset's; none drops it)")
	fs.String("label-column", "", "column of the label whose balance is reported (default: the preset's; none drops it)")
	fs.String("against-text", "", "text columns of the --against files (default: their preset's, else --text)")
	fs.Float64("test-fraction", splits.DefaultTestFraction, "target share of rows on the test side; 0 skips the check (default: the target of the split's manifest; pairs files without one, 0.35; other files, skipped)")
	// The usage says the default, which depends on the inputs; pflag would
	// add a second one ("(default 0.35)") that is not always true.
	fs.Lookup("test-fraction").DefValue = "0"
	fs.Float64("tolerance", splits.DefaultTolerance, "allowed difference between the achieved and the target test fraction")
	fs.Float64("near-duplicate-threshold", splits.DefaultNearDuplicateThreshold, "Jaccard similarity from which a train/test pair is a near-duplicate (negative disables)")
	fs.Int("shingle-words", splits.DefaultShingleWords, "words per shingle")
	fs.Int("permutations", splits.DefaultPermutations, "MinHash signature length")
	fs.Int("bands", 0, "LSH bands (0: chosen from the permutations and the threshold)")
	fs.String("sensitivities", "low,medium,high", "levels that must have rows on both sides (comma-separated; empty disables)")
	fs.Int("max-findings", splits.DefaultMaxFindings, "findings listed per check, -1 for all (counts are always complete)")
	for _, flag := range []string{"preset", "text", "group", "id", "split-column", "sensitivity-column", "label-column", "against-text",
		"test-fraction", "tolerance", "near-duplicate-threshold", "shingle-words", "permutations", "bands", "sensitivities", "max-findings"} {
		bindKey(fs, flag, "splits."+strings.ReplaceAll(flag, "-", "_"))
	}
	return cmd
}

// errGateFailed is returned when a check fails: the report has been printed,
// so the command exits 1 with a one-line reason.
var errGateFailed = errors.New("splits check failed")

func (a *app) runSplitsCheck(ctx context.Context, args []string, f *splitsCheckFlags) error {
	if len(args)+len(f.train)+len(f.test) == 0 {
		return usagef("splits check needs split files, directories or a split manifest (or --train and --test)")
	}
	gate, err := a.gateOptions()
	if err != nil {
		return err
	}
	files, split, err := splits.ExpandArgs(args, f.train, f.test, f.against)
	if ae := (*splits.ArgError)(nil); errors.As(err, &ae) {
		if err = ae.Err; !errors.Is(err, output.ErrChanged) && !isFileSystemError(err) {
			err = usageError{err}
		}
		return pathError(ae.Side, ae.Arg, err)
	}
	for flag, paths := range map[string][]string{"train": f.train, "test": f.test, "against": f.against} {
		a.named(flag, paths...)
	}
	col := func(key string) *string { return splits.ColumnSetting(a.v.GetString("splits." + key)) }
	report, err := splits.CheckFiles(ctx, files, splits.FilesOptions{Gate: gate, Split: split, Columns: splits.Overrides{
		Preset: a.v.GetString("splits.preset"), Text: col("text"), Group: col("group"), ID: col("id"), Split: col("split_column"),
		Sensitivity: col("sensitivity_column"), Label: col("label_column"),
	}, AgainstText: col("against_text"), TestFractionSet: a.origin("splits.test_fraction") != "splits.test_fraction"})
	if ce := (*splits.ColumnsError)(nil); errors.As(err, &ce) {
		return usageError{ce.Err}
	} else if errors.Is(err, splits.ErrNoSplitFiles) {
		return usagef("splits check needs train and test files besides --against")
	} else if ae := (*splits.ArgError)(nil); errors.As(err, &ae) {
		return pathError(ae.Side, ae.Arg, ae.Err)
	} else if err != nil {
		return err
	}
	annotations := a.stdout
	if f.asJSON {
		annotations = a.stderr
		if err := report.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else {
		report.WriteText(a.stdout, len(files))
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		report.WriteGitHubAnnotations(annotations)
	}
	if !report.Passed {
		return errGateFailed
	}
	return nil
}

// gateOptions reads the gate's tuning keys.
func (a *app) gateOptions() (splits.GateOptions, error) {
	v, opt := a.v, splits.DefaultGateOptions()
	opt.ShingleWords, opt.Permutations, opt.Bands = v.GetInt("splits.shingle_words"), v.GetInt("splits.permutations"), v.GetInt("splits.bands")
	opt.NearDuplicateThreshold, opt.Tolerance = v.GetFloat64("splits.near_duplicate_threshold"), v.GetFloat64("splits.tolerance")
	opt.TestFraction, opt.MaxFindings = v.GetFloat64("splits.test_fraction"), v.GetInt("splits.max_findings")
	opt.Sensitivities = append([]string{}, splits.SplitList(v.GetString("splits.sensitivities"))...)
	opt, err := splits.StrictOptions(opt)
	if oe := (*splits.OptionError)(nil); errors.As(err, &oe) {
		return opt, a.badKey("splits."+oe.Key, oe.Err)
	}
	return opt, err
}
