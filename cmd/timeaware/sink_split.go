package main

import (
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/output"
	"github.com/timeaware/timeaware/splits"
)

// rowAppender is a synth record builder of rows R.
type rowAppender[R any] interface {
	Append(R)
	Len() int
	NewRecord() arrow.Record
	Release()
}

// splitUnit says how a synth command's rows split: the unit that must not
// straddle the split, and how to set a row's extra_info.split.
type splitUnit[R any] struct {
	name     string // what the unit is, for the manifest: "task_id", "answer set"
	of       func(R) string
	setSplit func(R, string)
}

// splitSinks writes a synth command's rows to --out, or, with a unit split
// (--test-fraction), to <out>-train.<ext> and <out>-test.<ext>, each row by
// its unit's side and labelled with it. One manifest beside --out lists
// the files.
type splitSinks[R any] struct {
	out   string
	split *splits.UnitSplit
	unit  splitUnit[R]
	roles []string
	sinks []*output.Sink // the only one, or train and test
	rbs   []rowAppender[R]
	seed  maphash.Seed
	units [2]map[uint64]struct{}
	rows  [2]int
}

// splitSummary is the manifest's summary.split of a synth command: what
// the gate needs to judge the split.
type splitSummary struct {
	Strategy     string         `json:"strategy"`
	Unit         string         `json:"unit"`
	Target       float64        `json:"target_test_fraction"`
	TestFraction float64        `json:"test_fraction"`
	Rows         map[string]int `json:"rows"`
	Units        map[string]int `json:"units"`
}

func newSplitSinks[R any](out string, format *dataset.Format, schema *arrow.Schema, role string, labels bool,
	split *splits.UnitSplit, unit splitUnit[R], newBuilder func() rowAppender[R]) (*splitSinks[R], error) {
	s := &splitSinks[R]{out: out, split: split, unit: unit, seed: maphash.MakeSeed(), roles: []string{role}}
	paths := []string{out}
	if split != nil {
		paths = []string{output.SidePath(out, splits.Train), output.SidePath(out, splits.Test)}
		s.roles = []string{splits.Train, splits.Test}
		s.units = [2]map[uint64]struct{}{{}, {}}
	}
	for _, p := range paths {
		sink, err := output.NewSink(p, format, schema, sinkOptions(labels))
		if err != nil {
			s.abort()
			return nil, fmt.Errorf("--out: %w", err)
		}
		s.sinks = append(s.sinks, sink)
		s.rbs = append(s.rbs, newBuilder())
	}
	return s, nil
}

// side returns the sink a row goes to, labelling the row with its side.
func (s *splitSinks[R]) side(row R) int {
	if s.split == nil {
		return 0
	}
	u := s.unit.of(row)
	side := s.split.Side(u)
	s.unit.setSplit(row, side)
	i := 0
	if side == splits.Test {
		i = 1
	}
	s.units[i][maphash.String(s.seed, u)] = struct{}{}
	return i
}

// add writes a row to its side.
func (s *splitSinks[R]) add(row R) error {
	i := s.side(row)
	s.rows[i]++
	s.rbs[i].Append(row)
	return s.sinks[i].FlushFull(s.rbs[i])
}

// finish writes every file's remaining rows and footer. A split that left
// a side without rows is an error: such a split is of no use, and a gate
// would refuse it.
func (s *splitSinks[R]) finish() error {
	if s.split != nil {
		for i, side := range []string{splits.Train, splits.Test} {
			if s.rows[i] == 0 {
				return fmt.Errorf("--test-fraction %g: the %s side has no rows (%s, all on the other side); give more rows or another fraction",
					s.split.TestFraction(), side, counted(len(s.units[1-i]), s.unit.name))
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

// records are the files for the manifest.
func (s *splitSinks[R]) records(format string) []output.Entry {
	var out []output.Entry
	for i, sink := range s.sinks {
		out = append(out, sink.Entry(s.roles[i], format))
	}
	return out
}

// summary is the manifest's split summary, nil without a split.
func (s *splitSinks[R]) summary() *splitSummary {
	if s.split == nil {
		return nil
	}
	sum := &splitSummary{
		Strategy: s.split.Strategy(), Unit: s.unit.name, Target: s.split.TestFraction(),
		Rows:  map[string]int{splits.Train: s.rows[0], splits.Test: s.rows[1]},
		Units: map[string]int{splits.Train: len(s.units[0]), splits.Test: len(s.units[1])},
	}
	if n := s.rows[0] + s.rows[1]; n > 0 {
		sum.TestFraction = float64(s.rows[1]) / float64(n)
	}
	return sum
}

// commit puts the files in place and writes the manifest beside --out,
// returning its path.
func (s *splitSinks[R]) commit(m *output.Manifest) (string, error) {
	files := make([]*output.File, len(s.sinks))
	for i, sink := range s.sinks {
		files[i] = sink.File()
	}
	mp := output.ManifestPath(s.out)
	return mp, output.Commit(mp, m, files...)
}

// abort discards what is not committed.
func (s *splitSinks[R]) abort() {
	for _, sink := range s.sinks {
		sink.Abort()
	}
}

// release frees the builders.
func (s *splitSinks[R]) release() {
	for _, rb := range s.rbs {
		rb.Release()
	}
}

// testFractionFlag adds --test-fraction to a synth command.
func testFractionFlag(fs *pflag.FlagSet, p *float64, unit string) {
	fs.Float64Var(p, "test-fraction", 0, fmt.Sprintf("write <out>-train and <out>-test instead of --out, the test side taking about this share, whole %ss to one side (0: one file)", unit))
}

// checkTestFraction validates --test-fraction.
func checkTestFraction(f float64) error {
	if f != 0 && !(f > 0 && f < 1) {
		return usagef("--test-fraction %g: want a share between 0 and 1 (0 writes one file)", f)
	}
	return nil
}

// printSplit prints the split line of a synth summary.
func printSplit(w io.Writer, s *splitSummary, outs []output.Entry) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "  split:       %s split by %s, test fraction %.3f (target %.3f): train %s, %s in %s; test %s, %s in %s\n",
		s.Strategy, s.Unit, s.TestFraction, s.Target, counted(s.Rows[splits.Train], "row"), counted(s.Units[splits.Train], s.Unit), outs[0].Path,
		counted(s.Rows[splits.Test], "row"), counted(s.Units[splits.Test], s.Unit), outs[1].Path)
}

// counted renders "1 task", "3 tasks".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// writtenTo describes outputs for a summary's first line: "120 rows written
// to a-train.parquet and a-test.parquet (parquet, 1.2 MB)"; noun names one
// row ("row", "puzzle").
func writtenTo(outs []output.Entry, noun string) string {
	rows, size := 0, int64(0)
	var paths []string
	for _, o := range outs {
		rows, size = rows+*o.Rows, size+o.Bytes
		paths = append(paths, o.Path)
	}
	return fmt.Sprintf("%s written to %s (%s, %s)", counted(rows, noun), strings.Join(paths, " and "), outs[0].Format, humanBytes(size))
}
