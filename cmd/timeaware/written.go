package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// What the commands that write a dataset share besides their flags: the
// synth.Output the flags map to, the manifest's common fields, the error of
// a failed write and the summary they print.

// manifest is a command's manifest before its outputs are known.
func manifest(command string, config map[string]any) output.Manifest {
	return output.Manifest{Tool: "timeaware", Version: buildVersion(), Command: command, Config: config}
}

// synthOutput maps a synth command's output flags to a synth.Output; the
// command's manifest config is recorded in it. Progress goes to stderr
// when it is a terminal.
func (a *app) synthOutput(d *dataFlags, formatKey string, labels bool, testFraction float64, command string,
	config map[string]any, rows int) (synth.Output, *progress.Meter, error) {
	if d.out == "" {
		return synth.Output{}, nil, usagef("--out is required")
	}
	format, err := a.outputFormat(formatKey, d.out)
	if err != nil {
		return synth.Output{}, nil, err
	}
	if err := a.checkTestFraction(testFraction); err != nil {
		return synth.Output{}, nil, err
	}
	tuneGCForStreaming()
	prog := progress.New(a.stderr, "rows").Of(rows)
	return synth.Output{Path: d.out, Format: format, Labels: labels, TestFraction: testFraction,
		Manifest: manifest(command, d.record(config)), Progress: func() { prog.Add(1) }}, prog, nil
}

// writeError is the error of a failed write of --out: an interruption
// says that nothing was written, an option that failed validation names
// its key or flag (keys as for optionError), anything else names --out.
func (a *app) writeError(err error, out string, keys map[string]string) error {
	var oe *synth.OptionError
	switch {
	case errors.Is(err, context.Canceled):
		return streamError(err)
	case errors.As(err, &oe):
		return a.optionError(err, keys)
	}
	return pathError("out", out, err)
}

// printWritten prints a dataset command's summary: what was written where,
// the split, the command's own lines and the manifest's path.
func printWritten(w io.Writer, command, noun string, outs []output.Entry, split *output.SplitSummary, mp string, lines ...string) {
	fmt.Fprintf(w, "%s: %s\n", command, writtenTo(outs, noun))
	printSplit(w, split, outs)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "  manifest:    %s\n", mp)
}

// printSplit prints the split line of a synth summary.
func printSplit(w io.Writer, s *output.SplitSummary, outs []output.Entry) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "  split:       %s split by %s, test fraction %.3f (target %.3f): train %s, %s in %s; test %s, %s in %s\n",
		s.Strategy, s.Unit, s.TestFraction, s.Target, synth.Counted(s.Rows[splits.Train], "row"), synth.Counted(s.Units[splits.Train], s.Unit), outs[0].Path,
		synth.Counted(s.Rows[splits.Test], "row"), synth.Counted(s.Units[splits.Test], s.Unit), outs[1].Path)
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
	return fmt.Sprintf("%s written to %s (%s, %s)", synth.Counted(rows, noun), strings.Join(paths, " and "), outs[0].Format, humanBytes(size))
}

// streamError is the error of a streaming build: an interruption says that
// nothing was written (outputs are atomic), any other error is returned as
// it is.
func streamError(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted; no output written")
	}
	return err
}
