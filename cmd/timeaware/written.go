package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/synth"
)

// What the commands that write a dataset share: the --out, --seed and
// --shard flags, the synth.Output they map to, the manifest's common
// fields, the error of a failed write and the summary they print.

// dataFlags are the flags of a command that writes a seeded dataset in
// shards: --out, --seed and --shard.
type dataFlags struct {
	out, shard string
	seed       uint64
}

// define adds the flags: out says what the file holds ("output rows"),
// seed what the seed decides ("the puzzles"), shard which part a shard
// writes ("the rows whose index is i mod n"). An empty seed or shard
// leaves that flag out.
func (d *dataFlags) define(fs *pflag.FlagSet, out, seed, shard string) {
	fs.StringVar(&d.out, "out", "", out)
	if seed != "" {
		fs.Uint64Var(&d.seed, "seed", 0, "seed of "+seed+" (required)")
	}
	if shard != "" {
		fs.StringVar(&d.shard, "shard", "", "write only "+shard+", e.g. 0/4")
	}
}

// record adds the seed and, when given, the shard to a manifest's config.
func (d *dataFlags) record(config map[string]any) map[string]any {
	config["seed"] = d.seed
	if d.shard != "" {
		config["shard"] = d.shard
	}
	return config
}

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
