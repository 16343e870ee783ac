package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
)

type splitsCheckFlags struct {
	asJSON               bool
	train, test, against []string
}

func (a *app) splitsCheckCmd() *cobra.Command {
	var f splitsCheckFlags
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR|MANIFEST ...] [--train PATH ...] [--test PATH ...]",
		Short: "Check train/test splits of any dataset for leakage (for CI)",
		Long: `Check reads the two sides of a split (Parquet, Arrow IPC or JSONL files, directories
of them as sharded datasets, or the manifest of a timeaware build) and runs the leakage
gate:

  split_label           a row's split column agrees with its file's side
  group_disjoint        no group (scenario, task, event, ...) has rows on both sides
  duplicate_ids         no id appears twice, on one side or across sides
  duplicate_texts       no text appears twice on one side under different ids
  exact_duplicates      no test text appears in train after normalising case,
                        whitespace and time stamps
  near_duplicates       no train/test pair reaches the Jaccard threshold over word
                        shingles (MinHash with LSH banding, not all pairs)
  contamination         with --against, no train row duplicates or nearly duplicates a
                        row of an outside evaluation set
  test_fraction         the test side's share of rows is within tolerance of the target
  sensitivity_coverage  every required sensitivity level has rows on both sides
  label_balance         the share of each label per side (reported, never fails)

Files decide the side: a file (or a directory, or a directory on the way down to a
file) whose name is train or ends in -train/_train or starts with train-/train_ is
train, likewise test (or validation, eval, dev); --train and --test say it outright.
Only a file whose name says neither lets each row's split column decide.

The columns come from a preset for timeaware's own outputs (pairs, budget, puzzles,
traveler, negotiation: chosen from the manifest or the file's columns), or from
--text, --group, --id and the *-column flags, which also override a preset's ("none"
drops one). A column is a path: a.b.c into structs, a list goes on in each element, a
list of messages gives their contents, prompt:user only the user's. A check whose
column the dataset lacks is skipped, with the reason.

The exit code is 1 when a check fails, 2 on bad usage. With GITHUB_ACTIONS=true every
finding is also printed as an ::error annotation.`,
		Example: `  timeaware splits check out/rl.parquet.manifest.json
  timeaware splits check out/rl-train.parquet out/rl-test.parquet --json > out/gate.json
  # examples/splits has two leaks planted, so this check fails (exit 1):
  timeaware splits check --train examples/splits/train.jsonl --test examples/splits/test.jsonl \
    --text question --group topic --id id`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSplitsCheck(cmd.Context(), cmd, args, &f)
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
	fs.Float64("test-fraction", splits.DefaultTestFraction, "target share of rows on the test side; 0 skips the check (default: the manifest's target, else 0.35)")
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
	for flag, key := range map[string]string{
		"preset": "splits.preset", "text": "splits.text", "group": "splits.group", "id": "splits.id",
		"split-column": "splits.split_column", "sensitivity-column": "splits.sensitivity_column",
		"label-column": "splits.label_column", "against-text": "splits.against_text",
		"test-fraction": "splits.test_fraction", "tolerance": "splits.tolerance",
		"near-duplicate-threshold": "splits.near_duplicate_threshold", "shingle-words": "splits.shingle_words",
		"permutations": "splits.permutations", "bands": "splits.bands", "sensitivities": "splits.sensitivities",
		"max-findings": "splits.max_findings",
	} {
		bindKey(fs, flag, key)
	}
	return cmd
}

// errGateFailed is returned when a check fails: the report has been printed,
// so the command exits 1 with a one-line reason.
var errGateFailed = errors.New("splits check failed")

func (a *app) runSplitsCheck(ctx context.Context, cmd *cobra.Command, args []string, f *splitsCheckFlags) error {
	if len(args)+len(f.train)+len(f.test) == 0 {
		return usagef("splits check needs split files, directories or a split manifest (or --train and --test)")
	}
	v := a.v
	opt, err := a.gateOptions()
	if err != nil {
		return err
	}
	var inputs []splits.ArgFile
	var msplit *splits.ManifestSplit
	for _, arg := range args {
		in, sp, err := a.expandSplitArg("", arg, "")
		if err != nil {
			return err
		}
		inputs = append(inputs, in...)
		if sp != nil {
			msplit = sp
		}
	}
	for _, side := range []struct {
		name  string
		paths []string
	}{{splits.Train, f.train}, {splits.Test, f.test}, {splits.Against, f.against}} {
		for _, p := range side.paths {
			in, _, err := a.expandSplitArg(side.name, p, side.name)
			if err != nil {
				return err
			}
			inputs = append(inputs, in...)
		}
	}
	var sides, against []splits.ArgFile
	for _, in := range inputs {
		if in.Side == splits.Against {
			against = append(against, in)
		} else {
			sides = append(sides, in)
		}
	}
	if len(sides) == 0 {
		return usagef("splits check needs train and test files besides --against")
	}
	cols, err := gateColumns(v, sides)
	if err != nil {
		return err
	}
	var againstCols *splits.Columns
	if len(against) > 0 {
		if againstCols, err = againstColumns(v, against, cols); err != nil {
			return err
		}
	}
	opt.GroupName = cols.GroupName
	opt.GroupFromID = cols.GroupFromID
	opt.Skip = cols.Skips()
	if cols.Sensitivity == "" {
		opt.Sensitivities = []string{}
		delete(opt.Skip, splits.CheckSensitivityCoverage)
		opt.Skip[splits.CheckSensitivityCoverage] = "the dataset has no sensitivity column (--sensitivity-column)"
	}
	// A manifest knows its own target: a group split's, a synth hash split's
	// (with the tolerance its randomness needs), or none for the paper
	// split, whose test share is whatever its scenarios hold. An explicit
	// setting (flag, environment or config file) still wins.
	explicit := a.origin("splits.test_fraction") != "splits.test_fraction"
	if !explicit {
		switch {
		case msplit != nil:
			opt.TestFraction = msplit.Target
			if units := msplit.Units[splits.Train] + msplit.Units[splits.Test]; units > 0 {
				opt.Tolerance = max(opt.Tolerance, splits.UnitTolerance(msplit.Strategy, msplit.Target, units))
			}
		case cols.Preset != splits.PairsPreset.Name:
			// Only pairs have a conventional split (the TicToc paper's 65:35).
			opt.TestFraction = 0
		}
	}
	var ins []splits.Input
	for _, in := range sides {
		ins = append(ins, splits.Input{Path: in.Path, Side: in.Side, Columns: cols})
	}
	for _, in := range against {
		ins = append(ins, splits.Input{Path: in.Path, Side: splits.Against, Columns: againstCols})
	}
	report, err := splits.Check(ctx, splits.Source(ins), opt)
	if err != nil {
		return err
	}
	report.Columns = cols
	annotations := a.stdout
	if f.asJSON {
		annotations = a.stderr
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		printGateReport(a.stdout, report, ins)
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		printGitHubAnnotations(annotations, report)
	}
	if !report.Passed {
		return errGateFailed
	}
	return nil
}

// gateOptions reads the gate's tuning keys.
func (a *app) gateOptions() (splits.GateOptions, error) {
	v := a.v
	opt := splits.DefaultGateOptions()
	opt.NearDuplicateThreshold = v.GetFloat64("splits.near_duplicate_threshold")
	opt.ShingleWords = v.GetInt("splits.shingle_words")
	opt.Permutations = v.GetInt("splits.permutations")
	opt.Bands = v.GetInt("splits.bands")
	opt.Tolerance = v.GetFloat64("splits.tolerance")
	opt.MaxFindings = v.GetInt("splits.max_findings")
	opt.TestFraction = v.GetFloat64("splits.test_fraction")
	opt.Sensitivities = []string{}
	for _, s := range strings.Split(v.GetString("splits.sensitivities"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			opt.Sensitivities = append(opt.Sensitivities, s)
		}
	}
	switch {
	case opt.ShingleWords < 1:
		return opt, a.badKeyf("splits.shingle_words", "want at least 1")
	case opt.Permutations < 1:
		return opt, a.badKeyf("splits.permutations", "want at least 1")
	case opt.Bands < 0 || (opt.Bands > 0 && opt.Permutations%opt.Bands != 0):
		return opt, a.badKeyf("splits.bands", "want a divisor of the permutations (%d)", opt.Permutations)
	case opt.TestFraction < 0 || opt.TestFraction >= 1:
		return opt, a.badKeyf("splits.test_fraction", "want 0 (skip) or a share between 0 and 1")
	case opt.Tolerance < 0:
		return opt, a.badKeyf("splits.tolerance", "want 0 or more")
	case opt.NearDuplicateThreshold > 1 || opt.NearDuplicateThreshold == 0:
		return opt, a.badKeyf("splits.near_duplicate_threshold", "want a similarity in (0, 1], or a negative value to disable the check")
	case opt.MaxFindings < -1:
		return opt, a.badKeyf("splits.max_findings", "want -1 (all) or more")
	}
	if opt.Bands == 0 {
		opt.Bands = splits.DefaultBands(opt.Permutations, opt.NearDuplicateThreshold)
	}
	return opt, nil
}

// expandSplitArg is splits.ExpandArg with the command's errors, named by
// the flag that gave arg (none for an argument): bad usage, but for a file
// that cannot be read (an I/O error) and an output changed since its build
// (a data error).
func (a *app) expandSplitArg(flag, arg, side string) ([]splits.ArgFile, *splits.ManifestSplit, error) {
	if flag != "" {
		a.named(flag, arg)
	}
	files, sp, err := splits.ExpandArg(arg, side)
	if err != nil {
		if !errors.Is(err, output.ErrChanged) && !isFileSystemError(err) {
			err = usageError{err}
		}
		return nil, nil, pathError(flag, arg, err)
	}
	return files, sp, err
}

// columnKey reads a column setting: nil when it is not set (the preset's
// applies); "none" drops the column.
func columnKey(v *viper.Viper, key string) *string {
	raw := strings.TrimSpace(v.GetString(key))
	if raw == "" {
		return nil
	}
	if strings.EqualFold(raw, "none") {
		raw = ""
	}
	return &raw
}

// gateColumns decides the columns of the train and test files from the
// preset and the column flags.
func gateColumns(v *viper.Viper, ins []splits.ArgFile) (*splits.Columns, error) {
	sets := make([]splits.Dataset, len(ins))
	for i, in := range ins {
		sets[i] = splits.Dataset{Path: in.Path, Preset: in.Preset}
	}
	if err := readableColumns(sets); err != nil {
		return nil, err
	}
	cols, err := splits.ResolveColumns(sets, splits.Overrides{
		Preset: v.GetString("splits.preset"), Text: columnKey(v, "splits.text"), Group: columnKey(v, "splits.group"),
		ID: columnKey(v, "splits.id"), Split: columnKey(v, "splits.split_column"),
		Sensitivity: columnKey(v, "splits.sensitivity_column"), Label: columnKey(v, "splits.label_column"),
	})
	if err != nil {
		return nil, usageError{err}
	}
	return cols, nil
}

// againstColumns decides the text columns of the outside evaluation set:
// --against-text, else its own preset's, else the gate's.
func againstColumns(v *viper.Viper, ins []splits.ArgFile, gate *splits.Columns) (*splits.Columns, error) {
	sets := make([]splits.Dataset, len(ins))
	for i, in := range ins {
		sets[i] = splits.Dataset{Path: in.Path}
	}
	var text []string
	if s := columnKey(v, "splits.against_text"); s != nil && *s != "" {
		text = splits.SplitList(*s)
	}
	if err := readableColumns(sets); err != nil {
		return nil, err
	}
	cols, err := splits.AgainstColumns(sets, text, gate)
	if err != nil {
		return nil, usageError{err}
	}
	return cols, nil
}

// readableColumns reads the columns of every file, so that a file that
// cannot be read or parsed is reported as what it is (an I/O or a data
// error) before a choice of columns can be a usage error.
func readableColumns(sets []splits.Dataset) error {
	for _, d := range sets {
		if _, err := splits.Fields(d.Path); err != nil {
			return err
		}
	}
	return nil
}

func printGateReport(w io.Writer, r *splits.Report, ins []splits.Input) {
	failed := 0
	for _, c := range r.Checks {
		if c.Status == splits.StatusFail {
			failed++
		}
	}
	verdict := "passed"
	if !r.Passed {
		verdict = fmt.Sprintf("FAILED (%d of %d checks)", failed, len(r.Checks))
	}
	fmt.Fprintf(w, "splits check: %s — %d files\n", verdict, len(ins))
	if c := r.Columns; c != nil {
		preset := c.Preset
		if preset == "" {
			preset = "none"
		}
		fmt.Fprintf(w, "  columns: preset %s; text %s; group %s; id %s\n", preset, strings.Join(c.Text, ","), orDash(c.Group), orDash(strings.Join(c.ID, ",")))
	}
	for _, side := range []string{splits.Train, splits.Test, splits.Against} {
		st := r.Splits[side]
		if st == nil {
			continue
		}
		if side == splits.Against {
			fmt.Fprintf(w, "  %-8s %d rows\n", side+":", st.Rows)
			continue
		}
		line := fmt.Sprintf("%d rows", st.Rows)
		if r.Columns == nil || r.Columns.Group != "" {
			line += ", " + counted(st.Groups, r.Options.GroupName)
		}
		if r.Columns == nil || r.Columns.Sensitivity != "" {
			line += "; sensitivity " + countList(st.BySensitivity)
		}
		if r.Columns == nil || r.Columns.Label != "" {
			line += "; labels " + shareList(st.LabelShare)
		}
		fmt.Fprintf(w, "  %-8s %s\n", side+":", line)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-7s %-21s %s\n", strings.ToUpper(c.Status), c.Name, c.Summary)
		for _, f := range c.Findings {
			fmt.Fprintf(w, "            - %s\n", f.Message)
		}
		if c.Count > len(c.Findings) && len(c.Findings) > 0 {
			fmt.Fprintf(w, "            ... and %d more (see --json, --max-findings)\n", c.Count-len(c.Findings))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shareList(m map[string]float64) string {
	return mapList(m, func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" })
}

// printGitHubAnnotations writes an ::error workflow command per finding of
// every failed check (or one per check without findings), so that failures
// show up on the pull request.
func printGitHubAnnotations(w io.Writer, r *splits.Report) {
	for _, c := range r.Checks {
		if c.Status != splits.StatusFail {
			continue
		}
		title := "splits check: " + c.Name
		if len(c.Findings) == 0 {
			fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty(title), escapeData(c.Summary))
			continue
		}
		for _, f := range c.Findings {
			props := "title=" + escapeProperty(title)
			if f.File != "" {
				props = "file=" + escapeProperty(f.File) + "," + props
				if strings.HasSuffix(f.File, ".jsonl") && f.Row > 0 {
					props = "file=" + escapeProperty(f.File) + ",line=" + fmt.Sprint(f.Row) + ",title=" + escapeProperty(title)
				}
			}
			fmt.Fprintf(w, "::error %s::%s\n", props, escapeData(f.Message))
		}
	}
}

// escapeData and escapeProperty follow the workflow-command escaping rules.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
