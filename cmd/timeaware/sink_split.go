package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
)

// testFractionFlag adds --test-fraction to a synth command.
func testFractionFlag(fs *pflag.FlagSet, p *float64, unit string) {
	fs.Float64Var(p, "test-fraction", 0, fmt.Sprintf("write <out>-train and <out>-test instead of --out, the test side taking about this share, whole %ss to one side (0: one file)", unit))
}

// checkTestFraction validates --test-fraction.
func (a *app) checkTestFraction(f float64) error {
	if f != 0 && !(f > 0 && f < 1) {
		return a.flagValueError("test-fraction", errors.New("want a share between 0 and 1 (0 writes one file)"))
	}
	return nil
}

// printSplit prints the split line of a synth summary.
func printSplit(w io.Writer, s *output.SplitSummary, outs []output.Entry) {
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
