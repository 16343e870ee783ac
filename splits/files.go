package splits

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
)

// ArgError is an argument of the gate's command line that ExpandArgs
// could not expand: Side is the side it was given for (Train, Test or
// Against), or "" for an argument whose files say their side.
type ArgError struct {
	Side, Arg string
	Err       error
}

func (e *ArgError) Error() string { return e.Err.Error() }

func (e *ArgError) Unwrap() error { return e.Err }

// ExpandArgs expands the arguments of the gate's command line (ExpandArg):
// first args, whose files' names, roles or split columns tell their sides,
// then the paths given as train, test and against files, in that order.
// The split is that of the last manifest among args; a manifest given for
// a side says nothing of the split. An argument that cannot be expanded is
// an *ArgError.
func ExpandArgs(args, train, test, against []string) ([]ArgFile, *ManifestSplit, error) {
	var files []ArgFile
	var split *ManifestSplit
	for _, arg := range args {
		in, sp, err := ExpandArg(arg, "")
		if err != nil {
			return nil, nil, &ArgError{Arg: arg, Err: err}
		}
		files = append(files, in...)
		if sp != nil {
			split = sp
		}
	}
	for _, side := range []struct {
		name  string
		paths []string
	}{{Train, train}, {Test, test}, {Against, against}} {
		for _, p := range side.paths {
			in, _, err := ExpandArg(p, side.name)
			if err != nil {
				return nil, nil, &ArgError{Side: side.name, Arg: p, Err: err}
			}
			files = append(files, in...)
		}
	}
	return files, split, nil
}

// FilesOptions configure CheckFiles.
type FilesOptions struct {
	// Gate configures the gate. CheckFiles sets its GroupName, GroupFromID
	// and Skip from the columns, and requires no sensitivity level when
	// the files have no sensitivity column.
	Gate GateOptions
	// TestFractionSet says that the caller chose Gate.TestFraction.
	// Otherwise the target is that of Split, with a tolerance wide enough
	// for a hash split's randomness, or without a Split none (the check is
	// skipped) but for pairs, whose conventional split is the TicToc
	// paper's 65:35.
	TestFractionSet bool
	// Split is what a manifest among the files said of its split
	// (ExpandArgs); nil when none did.
	Split *ManifestSplit
	// Columns name the columns of the train and test files over their
	// preset's (ResolveColumns).
	Columns Overrides
	// AgainstText, when set and not empty, are the text columns of the
	// Against files, comma-separated; otherwise each file's preset's, else
	// the gate's (AgainstColumns).
	AgainstText *string
}

// ColumnsError is a choice of columns (a preset, an override) that does
// not fit the files: for a user to mend.
type ColumnsError struct{ Err error }

func (e *ColumnsError) Error() string { return e.Err.Error() }

func (e *ColumnsError) Unwrap() error { return e.Err }

// ErrNoSplitFiles is CheckFiles' error when every file is an Against file.
var ErrNoSplitFiles = errors.New("splits: no train or test files")

// CheckFiles runs the gate (Check) over dataset files: the train and test
// files with the columns their preset and opt.Columns give, and the
// Against files, an outside evaluation set, with their text columns. The
// report's Columns are those of the train and test files.
//
// Every file's columns are read before any is chosen, so that a file that
// cannot be read or parsed is reported as what it is; a choice of columns
// that does not fit the files is a *ColumnsError. Any other error is
// Check's.
func CheckFiles(ctx context.Context, files []ArgFile, opt FilesOptions) (*Report, error) {
	var sides, against []Dataset
	for _, f := range files {
		if f.Side == Against {
			against = append(against, Dataset{Path: f.Path})
		} else {
			sides = append(sides, Dataset{Path: f.Path, Preset: f.Preset})
		}
	}
	if len(sides) == 0 {
		return nil, ErrNoSplitFiles
	}
	withRows, err := filesWithRows(files)
	if err != nil {
		return nil, err
	}
	var rowSides []Dataset
	for _, d := range sides {
		if withRows[d.Path] {
			rowSides = append(rowSides, d)
		}
	}
	cols, err := resolveFiles(rowSides, func() (*Columns, error) { return ResolveColumns(rowSides, opt.Columns) })
	if err != nil {
		return nil, err
	}
	var text []string
	if opt.AgainstText != nil {
		text = SplitList(*opt.AgainstText)
	}
	againstCols, err := resolveFiles(against, func() (*Columns, error) { return AgainstColumns(against, text, cols) })
	if err != nil {
		return nil, err
	}
	ins := make([]Input, 0, len(files))
	for _, f := range files {
		if f.Side != Against {
			ins = append(ins, Input{Path: f.Path, Side: f.Side, Columns: cols})
		}
	}
	for _, d := range against {
		ins = append(ins, Input{Path: d.Path, Side: Against, Columns: againstCols})
	}
	report, err := Check(ctx, Source(ins), fileGateOptions(opt, cols))
	if err != nil {
		return nil, err
	}
	for _, side := range []string{Train, Test} {
		if st := report.Splits[side]; st == nil || st.Rows == 0 {
			return nil, noRows(files, side)
		}
	}
	report.Columns = cols
	return report, nil
}

// filesWithRows tells which files have a row that the gate reads columns
// from (an empty JSONL file has none), and refuses a side every file of
// which is empty, or files that are all empty (dataset.ErrNoRecords).
func filesWithRows(files []ArgFile) (map[string]bool, error) {
	withRows := map[string]bool{}
	bySide := map[string]bool{}
	for _, f := range files {
		fs, err := Fields(f.Path)
		if err != nil {
			return nil, err
		}
		withRows[f.Path] = !fs.empty
		bySide[f.Side] = bySide[f.Side] || !fs.empty
	}
	for _, side := range []string{Train, Test, Against, ""} {
		if has, named := bySide[side]; named && !has {
			return nil, noRows(files, side)
		}
	}
	return withRows, nil
}

// noRows is the error for a side without rows: the side's files, named by
// the flag the side has on the command line, wrap dataset.ErrNoRecords.
// Files whose rows' split column decides their side stand for Train and
// Test when no file was given for that side alone.
func noRows(files []ArgFile, side string) error {
	var paths []string
	for _, f := range files {
		if f.Side == side {
			paths = append(paths, f.Path)
		}
	}
	if len(paths) == 0 {
		for _, f := range files {
			if f.Side == "" {
				paths = append(paths, f.Path)
			}
		}
		side = ""
	}
	return &ArgError{Side: side, Arg: strings.Join(paths, ", "), Err: fmt.Errorf("%w on the %s side", dataset.ErrNoRecords, sideName(side))}
}

// sideName is how a report names side.
func sideName(side string) string {
	if side == "" {
		return "train or test"
	}
	return side
}

// resolveFiles reads the columns of every file, then chooses the columns
// with resolve, whose errors are ColumnsErrors.
func resolveFiles(sets []Dataset, resolve func() (*Columns, error)) (*Columns, error) {
	for _, d := range sets {
		if _, err := Fields(d.Path); err != nil {
			return nil, err
		}
	}
	cols, err := resolve()
	if err != nil {
		return nil, &ColumnsError{err}
	}
	return cols, nil
}

// fileGateOptions is opt.Gate as CheckFiles applies it to files with the
// columns cols.
func fileGateOptions(opt FilesOptions, cols *Columns) GateOptions {
	g := opt.Gate
	g.GroupName = cols.GroupName
	g.GroupFromID = cols.GroupFromID
	g.Skip = cols.Skips()
	if cols.Sensitivity == "" {
		g.Sensitivities = []string{}
	}
	if opt.TestFractionSet {
		return g
	}
	if s := opt.Split; s != nil {
		g.TestFraction = s.Target
		g.Tolerance = max(g.Tolerance, UnitTolerance(s.Strategy, s.Target, s.Units[Train]+s.Units[Test]))
	} else if cols.Preset != PairsPreset.Name {
		g.TestFraction = 0
	}
	return g
}

// ColumnSetting reads a column setting as a user writes it (a flag, a
// config key) into an Overrides field: nil when it is blank, so that the
// preset's column applies; a pointer to "" when it is "none" (in any
// case), which drops the column; else the setting, trimmed.
func ColumnSetting(raw string) *string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	if strings.EqualFold(raw, PresetNone) {
		raw = ""
	}
	return &raw
}

// OptionError is a gate option that StrictOptions rejects: Key names it
// as the config file does under splits (shingle_words, bands, ...).
type OptionError struct {
	Key string
	Err error
}

func (e *OptionError) Error() string { return "splits: " + e.Key + ": " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// StrictOptions checks gate options that a user set in full, as a command
// line's are, where a zero is a value rather than a default: at least one
// shingle word and one permutation; bands that divide the permutations, or
// 0 for DefaultBands, which StrictOptions fills in; a test fraction in
// [0, 1), 0 skipping the check; a tolerance of 0 or more; a near-duplicate
// threshold in (0, 1], or negative to disable the check; and -1 (all) or
// more findings. The first problem, in that order, is an *OptionError.
func StrictOptions(opt GateOptions) (GateOptions, error) {
	bad := func(key, format string, args ...any) (GateOptions, error) {
		return opt, &OptionError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	if opt.ShingleWords < 1 {
		return bad("shingle_words", "want at least 1")
	} else if opt.Permutations < 1 {
		return bad("permutations", "want at least 1")
	} else if opt.Bands < 0 || (opt.Bands > 0 && opt.Permutations%opt.Bands != 0) {
		return bad("bands", "want a divisor of the permutations (%d)", opt.Permutations)
	} else if opt.TestFraction < 0 || opt.TestFraction >= 1 {
		return bad("test_fraction", "want 0 (skip) or a share between 0 and 1")
	} else if opt.Tolerance < 0 {
		return bad("tolerance", "want 0 or more")
	} else if opt.NearDuplicateThreshold > 1 || opt.NearDuplicateThreshold == 0 {
		return bad("near_duplicate_threshold", "want a similarity in (0, 1], or a negative value to disable the check")
	} else if opt.MaxFindings < -1 {
		return bad("max_findings", "want -1 (all) or more")
	}
	if opt.Bands == 0 {
		opt.Bands = DefaultBands(opt.Permutations, opt.NearDuplicateThreshold)
	}
	return opt, nil
}
