package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth"
)

// rows is how imported records are written: Schema, role "benchmark", not
// split (a benchmark's splits are its files').
var rows = synth.RowsOf[*Row]{Schema: Schema, Role: "benchmark",
	Unit:       output.Unit[*Row]{Name: "record", Of: func(r *Row) string { return r.Split + "/" + r.ID }, SetSplit: func(*Row, string) {}},
	NewBuilder: func() output.RowBuilder[*Row] { return NewRecordBuilder(nil) }}

// InputError is the error of an input file: it cannot be read, or it is
// not the benchmark's format. Its message is Err's, which names the file.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// Write imports the released files of b at paths (Import), in order,
// calls report with every record, converted or not, and writes the
// converted ones to o's files with their manifest, which records each file
// among its inputs with role "benchmark_file". Before anything is read,
// every file's split and subset are settled (Target): a name that says
// neither (a *NameError) or an import for training that the benchmark's
// terms or a test split forbid (wrapping ErrTrainingRefused) stops it, and
// so do opt's errors. An error while a file is read (the file's, report's
// or ctx's) is an *InputError; the others are about o's files. Nothing is
// written unless every file was read and one record at least was
// converted. o's TestFraction must be zero.
func Write(ctx context.Context, b *Benchmark, paths []string, opt Options, o synth.Output,
	report func(*Record) error) (*synth.Written[*Summary], error) {
	if o.TestFraction != 0 {
		return nil, &synth.OptionError{Family: "benchmarks", Key: "test_fraction", Err: errors.New("an imported benchmark is not split")}
	}
	if len(paths) == 0 {
		return nil, errors.New("no files to import")
	}
	for _, p := range paths {
		t, err := b.Target(p, opt)
		if err != nil {
			return nil, err
		}
		if _, err := b.newRun(p, t, opt, nil); err != nil {
			return nil, err
		}
	}
	inputs := slices.Clip(o.Manifest.Inputs)
	first := len(inputs)
	inputs = append(inputs, make([]output.Entry, len(paths))...)
	o.Manifest.Inputs = inputs
	return synth.Write(ctx, o, rows, nil, func(emit func(*Row) error) (*Summary, error) {
		total := &Summary{NotConverted: map[string]int{}}
		for i, p := range paths {
			in := output.OpenInput(p)
			sum, err := b.Import(ctx, in, p, opt, func(r *Record) error {
				if err := report(r); err != nil {
					return err
				}
				if r.Row == nil {
					return nil
				}
				return emit(r.Row)
			})
			in.Close()
			if err != nil {
				return nil, &InputError{Path: p, Err: err}
			}
			inputs[first+i] = in.Entry("benchmark_file")
			total.Add(sum)
		}
		if total.Converted == 0 {
			return nil, &InputError{Path: strings.Join(paths, ", "), Err: fmt.Errorf("%s: no record was converted (%s)", strings.Join(paths, ", "), total)}
		}
		return total, nil
	})
}
