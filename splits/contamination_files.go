package splits

import (
	"context"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
)

// SideBenchmark names the benchmark side in an *ArgError.
const SideBenchmark = "benchmark"

// CheckContaminationFiles runs the contamination check: it indexes the
// benchmark files (files or directories of them) and scans the training
// arguments (files, directories, manifests: ExpandArg), whose columns are
// their preset's or cols' (ResolveColumns; a dataset that is no timeaware
// output but has a text column is read by it, with its id column). Only the text and id
// columns of the training side are read.
//
// An argument that cannot be expanded is an *ArgError (Side
// SideBenchmark or Train); a choice of columns that does not fit the
// training files a *ColumnsError; an option out of range an
// *OptionError. Other errors start with the file they are about.
func CheckContaminationFiles(ctx context.Context, benchmarks, train []string, cols Overrides, opt ContaminationOptions) (*ContaminationReport, error) {
	opt, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	var benchFiles []string
	for _, b := range benchmarks {
		files, _, err := ExpandArg(b, Test)
		if err != nil {
			return nil, &ArgError{Side: SideBenchmark, Arg: b, Err: err}
		}
		for _, f := range files {
			benchFiles = append(benchFiles, f.Path)
		}
	}
	var trainFiles []ArgFile
	for _, t := range train {
		files, _, err := ExpandArg(t, Train)
		if err != nil {
			return nil, &ArgError{Side: Train, Arg: t, Err: err}
		}
		trainFiles = append(trainFiles, files...)
	}
	var sets []Dataset
	for _, f := range trainFiles {
		fs, err := Fields(f.Path)
		if err != nil {
			return nil, err
		}
		if !fs.empty {
			sets = append(sets, Dataset{Path: f.Path, Preset: f.Preset})
		}
	}
	if len(sets) == 0 {
		return nil, &ArgError{Side: Train, Arg: strings.Join(train, ", "), Err: fmt.Errorf("%w on the training side", dataset.ErrNoRecords)}
	}
	none := ""
	cols.Group, cols.Split, cols.Sensitivity, cols.Label = &none, &none, &none, &none
	if cols.Text == nil && strings.TrimSpace(cols.Preset) != PresetNone {
		if fs, err := Fields(sets[0].Path); err == nil && sets[0].Preset == nil {
			if _, ok := DetectPreset(fs.Has); !ok && fs.Has("text") {
				text, id := "text", "id"
				cols.Text = &text
				if cols.ID == nil && fs.Has(id) {
					cols.ID = &id
				}
			}
		}
	}
	trainCols, err := ResolveColumns(sets, cols)
	if err != nil {
		return nil, &ColumnsError{err}
	}
	trainCols.Source, trainCols.GroupFromID = "", nil
	ix, err := NewContaminationIndex(ctx, benchFiles, opt)
	if err != nil {
		return nil, err
	}
	ins := make([]Input, 0, len(sets))
	for _, d := range sets {
		ins = append(ins, Input{Path: d.Path, Side: Train, Columns: trainCols})
	}
	return ix.Scan(ctx, Source(ins))
}
