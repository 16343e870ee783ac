package output

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
)

// The sides of a split, and the roles of its two files in a manifest.
const (
	Train = "train"
	Test  = "test"
)

// Splitter puts each unit (a task, an event set) on one side of a split:
// splits.UnitSplit is the one the commands use.
type Splitter interface {
	// Side is the unit's side, Train or Test.
	Side(unit string) string
	// Strategy names how sides are drawn, for the manifest.
	Strategy() string
	// TestFraction is the share of units meant for the test side.
	TestFraction() float64
}

// RowBuilder is a record builder of rows R (the synth task families'
// builders), which SplitSinks fills and drains.
type RowBuilder[R any] interface {
	Builder
	Append(R)
	Release()
}

// Unit says how rows R split: the unit that must not straddle the split,
// and how to set a row's own split label.
type Unit[R any] struct {
	// Name is what the unit is, for the manifest and messages: "task",
	// "event set".
	Name string
	// Of returns a row's unit.
	Of func(R) string
	// SetSplit labels a row with its side (Train or Test).
	SetSplit func(R, string)
}

// SplitSinksOptions configure NewSplitSinks.
type SplitSinksOptions[R any] struct {
	// Out is the one file's path, and without a split the only file;
	// with one the files are <out>-train.<ext> and <out>-test.<ext>
	// (SidePath), and the manifest goes beside Out.
	Out string
	// Format and Schema are the files' format and their rows' schema.
	Format *dataset.Format
	Schema *arrow.Schema
	// Sink tunes every file's sink.
	Sink SinkOptions
	// Role is the one file's role in the manifest; with a split the
	// roles are Train and Test.
	Role string
	// Split, when set, puts each row in the file of its unit's side.
	Split Splitter
	// Unit is the unit of Split; unused without one.
	Unit Unit[R]
	// NewBuilder makes a file's record builder.
	NewBuilder func() RowBuilder[R]
}

// SplitSinks writes rows R to one dataset file, or, with a Splitter, to a
// train and a test file, each row by its unit's side and labelled with
// it, so that no unit straddles the split. The files are committed
// together with one manifest.
type SplitSinks[R any] struct {
	out   string
	split Splitter
	unit  Unit[R]
	roles []string
	sinks []*Sink // the only one, or train and test
	rbs   []RowBuilder[R]
	seed  maphash.Seed
	units [2]map[uint64]struct{}
	rows  [2]int
}

// SplitSummary is a Splitter's record in a manifest's summary (its
// "split"): what the gate needs to judge the split.
type SplitSummary struct {
	Strategy     string         `json:"strategy"`
	Unit         string         `json:"unit"`
	Target       float64        `json:"target_test_fraction"`
	TestFraction float64        `json:"test_fraction"`
	Rows         map[string]int `json:"rows"`
	Units        map[string]int `json:"units"`
}

// NewSplitSinks starts the files of opt.Out. On an error, the files already
// started are discarded.
func NewSplitSinks[R any](opt SplitSinksOptions[R]) (*SplitSinks[R], error) {
	s := &SplitSinks[R]{out: opt.Out, split: opt.Split, unit: opt.Unit, seed: maphash.MakeSeed(), roles: []string{opt.Role}}
	paths := []string{opt.Out}
	if opt.Split != nil {
		paths = []string{SidePath(opt.Out, Train), SidePath(opt.Out, Test)}
		s.roles = []string{Train, Test}
		s.units = [2]map[uint64]struct{}{{}, {}}
	}
	for _, p := range paths {
		sink, err := NewSink(p, opt.Format, opt.Schema, opt.Sink)
		if err != nil {
			s.Abort()
			return nil, err
		}
		s.sinks = append(s.sinks, sink)
		s.rbs = append(s.rbs, opt.NewBuilder())
	}
	return s, nil
}

// side returns the sink a row goes to, labelling the row with its side.
func (s *SplitSinks[R]) side(row R) int {
	if s.split == nil {
		return 0
	}
	u := s.unit.Of(row)
	side := s.split.Side(u)
	s.unit.SetSplit(row, side)
	i := 0
	if side == Test {
		i = 1
	}
	s.units[i][maphash.String(s.seed, u)] = struct{}{}
	return i
}

// Add writes a row to its side.
func (s *SplitSinks[R]) Add(row R) error {
	i := s.side(row)
	s.rows[i]++
	s.rbs[i].Append(row)
	return s.sinks[i].FlushFull(s.rbs[i])
}

// Finish writes every file's remaining rows and footer. A split that left
// a side without rows is an error (naming the synth commands'
// --test-fraction): such a split is of no use, and the gate would refuse
// it.
func (s *SplitSinks[R]) Finish() error {
	if s.split != nil {
		for i, side := range []string{Train, Test} {
			if s.rows[i] == 0 {
				return fmt.Errorf("--test-fraction %g: the %s side has no rows (%s, all on the other side); give more rows or another fraction",
					s.split.TestFraction(), side, countOf(len(s.units[1-i]), s.unit.Name))
			}
		}
	}
	for i, sink := range s.sinks {
		if err := sink.Drain(s.rbs[i]); err != nil {
			return err
		}
	}
	return nil
}

// countOf renders "1 task", "3 tasks".
func countOf(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return strconv.Itoa(n) + " " + noun
}

// Entries are the files for the manifest, the one file or train and test,
// format naming their format.
func (s *SplitSinks[R]) Entries(format string) []Entry {
	var out []Entry
	for i, sink := range s.sinks {
		out = append(out, sink.Entry(s.roles[i], format))
	}
	return out
}

// Files are the files being written, in the order of Entries, for a
// caller that commits them with files of its own (Commit).
func (s *SplitSinks[R]) Files() []*File {
	files := make([]*File, len(s.sinks))
	for i, sink := range s.sinks {
		files[i] = sink.File()
	}
	return files
}

// Summary is the manifest's split summary: nil without a split.
func (s *SplitSinks[R]) Summary() *SplitSummary {
	if s.split == nil {
		return nil
	}
	sum := &SplitSummary{
		Strategy: s.split.Strategy(), Unit: s.unit.Name, Target: s.split.TestFraction(),
		Rows:  map[string]int{Train: s.rows[0], Test: s.rows[1]},
		Units: map[string]int{Train: len(s.units[0]), Test: len(s.units[1])},
	}
	if n := s.rows[0] + s.rows[1]; n > 0 {
		sum.TestFraction = float64(s.rows[1]) / float64(n)
	}
	return sum
}

// Commit puts the files in place with the manifest m beside Out
// (ManifestPath), returning its path: all of them or, after an
// error, none, the previous ones staying (Commit).
func (s *SplitSinks[R]) Commit(ctx context.Context, m *Manifest) (string, error) {
	mp := ManifestPath(s.out)
	return mp, Commit(ctx, mp, m, s.Files()...)
}

// Abort discards the files not committed; after Commit it leaves them
// alone.
func (s *SplitSinks[R]) Abort() {
	for _, sink := range s.sinks {
		sink.Abort()
	}
}

// Release frees the record builders.
func (s *SplitSinks[R]) Release() {
	for _, rb := range s.rbs {
		rb.Release()
	}
}
