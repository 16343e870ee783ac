package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth"
	"github.com/timeaware/timeaware/synth/puzzles"
)

type synthPuzzlesFlags struct {
	dataFlags
	solve, importPublished string
	verb                   bool // the file is a verb's argument, not a deprecated flag's value
	count, start           int64
	labels                 bool
	testFraction           float64
}

func (a *app) synthPuzzlesCmd() *cobra.Command {
	var f synthPuzzlesFlags
	cmd := &cobra.Command{
		Use:   "puzzles --count N --seed S --out FILE",
		Short: "Time Puzzles for VeRL: date-inference puzzles with verifiable answer sets",
		Long:  longHelp("synth puzzles"),
		Example: `  timeaware synth puzzles --count 20 --seed 1 --out out/puzzles.parquet
  timeaware synth puzzles --count 20 --seed 2 --solutions 3 --years 1950-2000 --kb examples/puzzles/kb.csv \
    --out out/puzzles-kb.jsonl
  timeaware synth puzzles solve out/puzzles-kb.jsonl
  timeaware synth puzzles import-published examples/puzzles/published_sample.json --out out/published.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPuzzlesCmd(cmd, &f) },
	}
	fs := cmd.Flags()
	fs.Int64Var(&f.count, "count", 0, "number of puzzles (required)")
	f.define(fs, "output rows; the extension picks the format unless --format is given", "the puzzles", "the puzzles whose index is i mod n")
	testFractionFlag(fs, &f.testFraction, "answer set")
	fs.StringVar(&f.solve, "solve", "", "deprecated: use \"synth puzzles solve FILE\"")
	fs.StringVar(&f.importPublished, "import-published", "", "deprecated: use \"synth puzzles import-published FILE\"")
	fs.Int64Var(&f.start, "start", 0, "index of the first puzzle")
	fs.String("solutions", "", "solutions per puzzle: K (0-6) or a range A-B cycled by index (default 1-6)")
	fs.String("years", "", "year range of the dates, A-B (default 1900-2030)")
	fs.Int("workers", 0, "generating goroutines (default: all cores)")
	puzzleSourceFlags(fs, &f.labels, "solutions", "years", "workers")
	cmd.AddCommand(a.synthPuzzlesSolveCmd(), a.synthPuzzlesImportCmd())
	return cmd
}

// runPuzzlesCmd runs synth puzzles: the puzzles, or what a deprecated
// --solve or --import-published asks for.
func (a *app) runPuzzlesCmd(cmd *cobra.Command, f *synthPuzzlesFlags) error {
	verb, does, takesNo, run := "solve", "checks", []string{"count", "seed", "out"}, a.runSolvePuzzles
	switch {
	case f.solve != "" && f.importPublished != "":
		return usagef("--solve and --import-published: give one")
	case f.importPublished != "":
		verb, does, takesNo, run = "import-published", "converts", []string{"count", "seed"}, a.runImportPublished
	case f.solve == "":
		if err := requireSeed(cmd, "puzzles"); err != nil {
			return err
		}
		return a.runSynthPuzzles(cmd.Context(), f)
	}
	for _, name := range append(takesNo, "start", "shard", "test-fraction") {
		if cmd.Flags().Changed(name) {
			return usagef("--%s %s a file; it takes no --%s", verb, does, name)
		}
	}
	if f.importPublished != "" && f.out == "" {
		return usagef("--import-published needs --out")
	}
	fmt.Fprintf(a.stderr, "timeaware: --%s FILE is deprecated: use \"timeaware synth puzzles %[1]s FILE\"\n", verb)
	return run(cmd.Context(), f)
}

// puzzleSourceFlags defines the flags synth puzzles shares with its
// import-published verb and binds them and more to synth.puzzles.KEY, KEY
// the flag's name with "_" for "-".
func puzzleSourceFlags(fs *pflag.FlagSet, labels *bool, more ...string) {
	labelFlag(fs, labels)
	fs.String("kb", "", "knowledge-base CSV of events (event,start,end; default: the built-in one)")
	fs.String("year-sets", "", "CSV of year sets (set,event,first,every,through,cancelled,moved; default: the built-in Olympic and World Cup years)")
	fs.String("disputed", "", "disputed lunar months and years: avoid (never decide an answer; the default) or allow")
	fs.String("year-set-reading", "", "read year sets by the editions held (held, the default) or by their rule, as the published Time Puzzles generator does (rule)")
	outputFormatFlag(fs, "synth.puzzles.format")
	fs.Bool("explicit", false, "put the explicit constraints in the prompt instead of the implicit ones")
	for _, flag := range append(more, "kb", "year-sets", "disputed", "year-set-reading", "explicit") {
		bindKey(fs, flag, "synth.puzzles."+strings.ReplaceAll(flag, "-", "_"))
	}
}

func (a *app) synthPuzzlesSolveCmd() *cobra.Command {
	f := synthPuzzlesFlags{verb: true}
	cmd := &cobra.Command{
		Use:   "solve FILE",
		Short: "solve every puzzle of a file again and report those whose stored answer differs",
		Long:  longHelp("synth puzzles solve"),
		Example: `  # out/puzzles-kb.jsonl is written by the second example of synth puzzles:
  timeaware synth puzzles solve out/puzzles-kb.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.solve = args[0]
			return a.runSolvePuzzles(cmd.Context(), &f)
		},
	}
	cmd.Flags().String("format", "", "FILE's format: "+dataset.Names()+" (default: from its extension)")
	bindKey(cmd.Flags(), "format", "synth.puzzles.format")
	return cmd
}

func (a *app) synthPuzzlesImportCmd() *cobra.Command {
	f := synthPuzzlesFlags{verb: true}
	cmd := &cobra.Command{
		Use:     "import-published FILE --out FILE",
		Short:   "convert the published Time Puzzles set to this schema, solve it again and report wrong answers",
		Long:    longHelp("synth puzzles import-published"),
		Example: `  timeaware synth puzzles import-published examples/puzzles/published_sample.json --out out/published.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.importPublished = args[0]; f.out == "" {
				return usagef("import-published needs --out")
			}
			return a.runImportPublished(cmd.Context(), &f)
		},
	}
	f.define(cmd.Flags(), "output rows; the extension picks the format unless --format is given", "", "")
	puzzleSourceFlags(cmd.Flags(), &f.labels)
	return cmd
}

// command names a run of verb in its summary and manifest, and the flag
// that named its file: the deprecated flag, or "" for a verb's argument.
func (f *synthPuzzlesFlags) command(verb string) (name, flag string) {
	if f.verb {
		return "synth puzzles " + verb, ""
	}
	return "synth puzzles --" + verb, verb
}

// puzzleConfig reads the synth.puzzles.* keys.
func (a *app) puzzleConfig() puzzles.Config {
	key := func(k string) string { return a.v.GetString("synth.puzzles." + k) }
	return puzzles.Config{Years: key("years"), Solutions: key("solutions"), Facts: key("facts"), Kinds: key("kinds"),
		Seasons: key("seasons"), LunarDisputedYears: key("lunar_disputed_years"), LunarDisputedMonths: key("lunar_disputed_months"),
		Instruction: key("instruction"), Conventions: key("conventions"), SystemPrompt: key("system_prompt"), Split: key("split"),
		Ability: key("ability"), Disputed: key("disputed"), YearSetReading: key("year_set_reading"),
		Explicit: a.v.GetBool("synth.puzzles.explicit"), MaxAttempts: a.v.GetInt("synth.puzzles.max_attempts")}
}

// puzzleOptions reads the synth.puzzles.* keys over the defaults, and the
// files they name; inputs are the files' manifest entries.
func (a *app) puzzleOptions() (puzzles.Options, []output.Entry, error) {
	o, err := a.puzzleConfig().Options()
	if err != nil {
		return o, nil, a.puzzleKeyError(err)
	}
	inputs, err := o.ReadFiles(a.v.GetString("synth.puzzles.kb"), a.v.GetString("synth.puzzles.year_sets"))
	if ie := (*puzzles.InputError)(nil); errors.As(err, &ie) {
		return o, nil, a.keyFileError("synth.puzzles."+ie.Key, strings.ReplaceAll(ie.Key, "_", "-"), ie.Path, ie.Err)
	}
	if err := o.Validate(); err != nil {
		return o, nil, a.optionError(err, nil)
	}
	return o, inputs, nil
}

// puzzleKeyError names a key of puzzles.Config that could not be read: a
// range by its origin and value, a list or the seasons by the key alone.
func (a *app) puzzleKeyError(err error) error {
	if oe := (*synth.OptionError)(nil); errors.As(err, &oe) && oe.Key != "years" && oe.Key != "solutions" && oe.Key != "facts" {
		return usagef("synth.puzzles.%s: %w", oe.Key, oe.Err)
	}
	return a.optionError(err, nil)
}

func (a *app) runSynthPuzzles(ctx context.Context, f *synthPuzzlesFlags) error {
	if f.count == 0 {
		return usagef("--count is required: a positive number of puzzles")
	}
	if f.count < 0 {
		return usagef("--count %d: want a positive number of puzzles", f.count)
	}
	config := typedConfig(a.v, "synth.puzzles.")
	config["count"], config["start"], config["test_fraction"] = f.count, f.start, f.testFraction
	o, prog, err := a.synthOutput(&f.dataFlags, "synth.puzzles.format", f.labels, f.testFraction, "synth puzzles", config, 0)
	if err != nil {
		return err
	}
	r := puzzles.Range{Start: f.start, Count: f.count}
	opt, inputs, err := a.puzzleOptions()
	if err == nil {
		r.Shard, err = parseShardFlag(f.shard)
	}
	if err != nil {
		return err
	}
	opt.Seed, o.Manifest.Inputs = f.seed, inputs
	prog.Of(int(r.Shard.Rows(r.Start, r.Count))).Counting("puzzles")
	w, err := puzzles.Write(ctx, opt, r, a.v.GetInt("synth.puzzles.workers"), o)
	prog.Done()
	var oe *synth.OptionError
	switch {
	case errors.As(err, &oe) && oe.Key == "test_fraction":
		return usagef("--test-fraction: %v", oe.Err)
	case errors.As(err, &oe), errors.Is(err, puzzles.ErrAttempts):
		return err // the options make no puzzle set, whatever the output
	case err != nil:
		return a.writeError(err, f.out, nil)
	}
	printWritten(a.stdout, "synth puzzles", "puzzle", w.Outputs, w.Split, w.ManifestPath, w.Summary.Lines()...)
	return nil
}

func (a *app) runSolvePuzzles(ctx context.Context, f *synthPuzzlesFlags) error {
	path := f.solve
	name, flag := f.command("solve")
	if st, err := os.Stat(path); err != nil {
		return pathError(flag, path, err)
	} else if st.IsDir() {
		return usageError{pathError(flag, path, errors.New("is a directory"))}
	}
	format, err := a.fileFormat("synth.puzzles.format", flag, path)
	if err != nil {
		return err
	}
	so, err := a.puzzleConfig().SolverOptions()
	if err != nil {
		return a.puzzleKeyError(err)
	}
	sum, err := puzzles.Solve(ctx, path, format, so, func(c *puzzles.Verdict) error { return a.printReport(c) })
	if errors.Is(err, context.Canceled) {
		return streamError(err)
	} else if err != nil {
		return pathError(flag, path, err)
	}
	fmt.Fprintf(a.stdout, "%s: %s\n", name, sum)
	if sum.Differ > 0 {
		return pathError(flag, path, fmt.Errorf("%d of %d puzzles have a stored answer that differs from their constraints_meta", sum.Differ, sum.Checked))
	}
	return nil
}

// printReport prints the line of a verdict or record that is not simply
// right.
func (a *app) printReport(r interface{ Report() string }) error {
	if line := r.Report(); line != "" {
		fmt.Fprintln(a.stdout, line)
	}
	return nil
}

// runImportPublished converts a published Time Puzzles file: the
// converted, decidable puzzles to --out with the solved answers, a line for
// each record that is not simply right, and a summary.
func (a *app) runImportPublished(ctx context.Context, f *synthPuzzlesFlags) error {
	format, err := a.outputFormat("synth.puzzles.format", f.out)
	if err != nil {
		return err
	}
	opt, inputs, err := a.puzzleOptions()
	if err != nil {
		return err
	}
	name, flag := f.command("import-published")
	config := typedConfig(a.v, "synth.puzzles.")
	config["import_published"] = f.importPublished
	o := synth.Output{Path: f.out, Format: format, Labels: f.labels, Manifest: manifest(name, config)}
	o.Manifest.Inputs = inputs
	w, err := puzzles.WritePublished(ctx, opt, f.importPublished, o, func(im *puzzles.Imported) error { return a.printReport(im) })
	if ie := (*puzzles.InputError)(nil); errors.As(err, &ie) {
		return pathError(flag, f.importPublished, ie.Err)
	} else if err != nil {
		return pathError("out", f.out, err)
	}
	lines := w.Summary.Lines()
	fmt.Fprintf(a.stdout, "%s: %s\n", name, lines[0])
	for _, l := range append(lines[1:], "written:       "+writtenTo(w.Outputs, "puzzle")+": the decided ones, agreeing and wrong, with the solved answers",
		"manifest:      "+w.ManifestPath) {
		fmt.Fprintf(a.stdout, "  %s\n", l)
	}
	return nil
}
