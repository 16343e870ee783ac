package puzzles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// rows is how puzzles are written: Schema, role "puzzles", split by the
// knowledge-base event each is anchored on.
var rows = synth.RowsOf[*Puzzle]{Schema: Schema, Role: "puzzles",
	Unit: output.Unit[*Puzzle]{Name: "event", Of: func(p *Puzzle) string { return p.Group },
		SetSplit: func(p *Puzzle, s string) { p.Split = s }},
	NewBuilder: func() output.RowBuilder[*Puzzle] { return NewRecordBuilder(nil) }}

// Write generates the puzzles of r (Generate, on workers goroutines; 0 or
// less is one per core) and writes them to o's files with their manifest.
// With o.TestFraction above zero the puzzles are split by the
// knowledge-base event each is anchored on (Puzzle.Group): an exact split
// of opt.KB's events with opt.Seed, so that puzzles about one event, whose
// answers overlap, never straddle it. A split that cannot be made is an
// *synth.OptionError with Key "test_fraction".
func Write(ctx context.Context, opt Options, r Range, workers int, o synth.Output) (*synth.Written[*Summary], error) {
	var split output.Splitter
	if o.TestFraction > 0 {
		s, err := splits.NewExactSplit(opt.Seed, o.TestFraction, Groups(opt.KB))
		if err != nil {
			return nil, &synth.OptionError{Family: "puzzles", Key: "test_fraction",
				Err: fmt.Errorf("the split is by knowledge-base event: %w", err)}
		}
		split = s
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return synth.Write(ctx, o, rows, split, func(emit func(*Puzzle) error) (*Summary, error) {
		return Generate(ctx, opt, r, workers, emit)
	})
}

// InputError is the error of an input file: Key is the option that named
// it (kb, year_sets, import_published), Path the file. It cannot be read
// or parsed, or, for the published file, the import stopped while reading
// it. Its message is Err's, which names the file where the file is at
// fault.
type InputError struct {
	Key, Path string
	Err       error
}

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// WritePublished imports the published Time Puzzles file at path
// (ImportPublished), calls report with every record in file order, and
// writes the decided ones (Imported.Decided), with their solved answers, to
// o's files with their manifest, which records the file among its inputs
// with role "published_puzzles". The rows' split is output.Test, whatever
// opt.Split: the published set is an evaluation set. opt renders and solves
// them: its KB, YearSets, Seasons, Prompt, Explicit, Ability, YearSetReading and
// disputed lunar data with its policy, as in generation: DisputedAvoid
// leaves a record whose answer depends on a disputed day undecidable,
// DisputedAllow lets the embedded table decide it (days outside the table
// stay undecidable); the rest is not used. The rows are not split: o's
// TestFraction must be zero. An error while the file is read (from the
// file, from report, or ctx's) is an *InputError with Key
// "import_published"; the others are about o's files.
func WritePublished(ctx context.Context, opt Options, path string, o synth.Output,
	report func(*Imported) error) (*synth.Written[*ImportSummary], error) {
	if o.TestFraction != 0 {
		return nil, &synth.OptionError{Family: "puzzles", Key: "test_fraction", Err: errors.New("an imported set is not split")}
	}
	so := SolverOptions{DisputedYears: opt.DisputedYears, DisputedMonths: opt.DisputedMonths}
	if opt.Disputed == DisputedAllow {
		so = SolverOptions{} // the table decides the disputed days
	}
	iopt := ImportOptions{KB: opt.KB, YearSets: opt.YearSets, Seasons: opt.Seasons, Prompt: opt.Prompt,
		Explicit: opt.Explicit, Split: output.Test, Ability: opt.Ability, YearSetReading: opt.YearSetReading,
		Solver: NewSolverWith(so)}
	in := output.OpenInput(path)
	defer in.Close()
	// The file's entry is known once it is read: its place among the
	// manifest's inputs (a copy's, which synth.Write shares) is kept now
	// and filled in before synth.Write commits.
	inputs := append(slices.Clip(o.Manifest.Inputs), output.Entry{})
	o.Manifest.Inputs = inputs
	return synth.Write(ctx, o, rows, nil, func(emit func(*Puzzle) error) (*ImportSummary, error) {
		sum, err := ImportPublished(ctx, in, path, iopt, func(im *Imported) error {
			if err := report(im); err != nil {
				return err
			}
			if !im.Decided() {
				return nil
			}
			return emit(im.Puzzle)
		})
		if err != nil {
			return nil, &InputError{Key: "import_published", Path: path, Err: err}
		}
		inputs[len(inputs)-1] = in.Entry("published_puzzles")
		return sum, nil
	})
}

// SolveSummary counts the verdicts of Solve.
type SolveSummary struct {
	// Checked counts the puzzles read.
	Checked int
	// Differ counts those whose stored answer differs from the solved one
	// (Verdict.Differs), or that cannot be solved, the undecidable aside.
	Differ int
	// Undecidable counts those that differ because the lunar data cannot
	// decide their answer.
	Undecidable int
	// NoDay counts those with a fact no day satisfies, whether their
	// stored answer agrees or not.
	NoDay int
}

// Solve reads the puzzle file at path in format, solves every puzzle again
// from its constraints_meta with a solver of so (Check), calls report with
// each verdict in file order and counts them. Every error but ctx's is
// about the file: an *fs.PathError when it cannot be opened, one wrapping
// dataset.ErrNoRecords when it holds no puzzle.
func Solve(ctx context.Context, path string, format *dataset.Format, so SolverOptions,
	report func(*Verdict) error) (*SolveSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := &SolveSummary{}
	err = Check(ctx, f, path, format, NewSolverWith(so), func(v *Verdict) error {
		sum.Checked++
		if errors.Is(v.Err, ErrNoDay) {
			sum.NoDay++
		}
		switch {
		case !v.Differs():
		case errors.Is(v.Err, ErrUndecidable):
			sum.Undecidable++
		default:
			sum.Differ++
		}
		return report(v)
	})
	if err != nil {
		return nil, err
	}
	if sum.Checked == 0 {
		return nil, fmt.Errorf("%s: %w", path, dataset.ErrNoRecords)
	}
	return sum, nil
}

// ReadFiles reads the knowledge base (ParseKB) from the file kb and the
// year sets (ParseYearSets) from the file yearSets into o, and returns
// their manifest entries, roles "knowledge_base" and "year_sets"; an empty
// name leaves its option as it is. An error is an *InputError whose Key is
// the option's, kb or year_sets.
func (o *Options) ReadFiles(kb, yearSets string) ([]output.Entry, error) {
	var inputs []output.Entry
	if kb != "" {
		in, err := readInput(kb, "kb", "knowledge_base", ParseKB, &o.KB)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
	}
	if yearSets != "" {
		in, err := readInput(yearSets, "year_sets", "year_sets", ParseYearSets, &o.YearSets)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// readInput parses the file at path into dst, hashing it as it is read
// for its manifest entry.
func readInput[T any](path, key, role string, parse func(io.Reader, string) (T, error), dst *T) (output.Entry, error) {
	in := output.OpenInput(path)
	defer in.Close()
	got, err := parse(in, path)
	if err != nil {
		return output.Entry{}, &InputError{Key: key, Path: path, Err: err}
	}
	*dst = got
	return in.Entry(role), nil
}
