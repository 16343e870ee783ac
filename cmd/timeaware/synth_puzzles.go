package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/puzzles"
)

type synthPuzzlesFlags struct {
	out, solve, shard, importPublished string
	// verb is true when the run came through a verb (solve,
	// import-published) rather than the deprecated flag of that name: the
	// file is then an argument, and the summary names the verb.
	verb         bool
	count, start int64
	seed         uint64
	labels       bool
	testFraction float64
}

func (a *app) synthPuzzlesCmd() *cobra.Command {
	var f synthPuzzlesFlags
	cmd := &cobra.Command{
		Use:   "puzzles --count N --seed S --out FILE",
		Short: "Time Puzzles for VeRL: date-inference puzzles with verifiable answer sets",
		Long: `Puzzles writes Time Puzzles (data_source timepuzzles): each puzzle is a few
facts about a hidden date — a knowledge-base event (same day, month or year,
an anniversary, during a period), and calendar facts at year level (year,
decade, leap year, Chinese zodiac, a year an event such as the Olympic Games
was held), month level (month, season, Chinese lunar month) and day level
(weekday, n-th or n-th to last weekday of the month, day of the month, a
range of days, a set of weekdays) — and its answer is every date from the
first to the last day of --years that satisfies them all.

A puzzle starts from an event and a seed date it allows, then adds facts at
balanced levels, each narrowing the answer set, until exactly --solutions
dates remain (a range A-B gives puzzle i the count A + i mod (B-A+1); 0 makes
puzzles with no answer). Each row carries the constraints in implicit and
explicit wording, constraints_meta (each fact structured), the solutions and
VeRL's fields; the prompt asks for a last line "MY ANSWER: YYYY-MM-DD, ..." or
"MY ANSWER: None", which the timepuzzles reward reads. Lunar facts follow the
Chinese calendar in UTC+8 (embedded table, lunar years 1800-2050); with
--disputed avoid (the default) the months and years whose dates are disputed
never decide an answer.

Puzzle i depends only on --seed and i: the same seed gives byte-identical
output, and --start and --shard split a set without changing its puzzles.
--kb reads events from a CSV with columns event,start,end and --year-sets
year sets from a CSV with columns set,event,first,every,through,cancelled,moved
(see docs/puzzles.md).
Output is written atomically, with a manifest beside it.

--test-fraction X writes <out>-train and <out>-test instead, split by the
knowledge-base event each puzzle is anchored on (extra_info.group): the
round(X × events) events of lowest hash with --seed go to the test side, so
puzzles about one event, whose answers overlap and whose texts nearly match,
never straddle the split, and "timeaware splits check" passes the two files.

"synth puzzles solve FILE" audits a set and "synth puzzles import-published
FILE" converts the published one; --solve and --import-published, which did
the same, still work and are deprecated.`,
		Example: `  timeaware synth puzzles --count 20 --seed 1 --out out/puzzles.parquet
  timeaware synth puzzles --count 20 --seed 2 --solutions 3 --years 1950-2000 --kb examples/puzzles/kb.csv \
    --out out/puzzles-kb.jsonl
  timeaware synth puzzles solve out/puzzles-kb.jsonl
  timeaware synth puzzles import-published examples/puzzles/published_sample.json --out out/published.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.solve != "" && f.importPublished != "" {
				return usagef("--solve and --import-published: give one")
			}
			if f.solve != "" {
				for _, name := range []string{"count", "seed", "out", "start", "shard", "test-fraction"} {
					if cmd.Flags().Changed(name) {
						return usagef("--solve checks a file; it takes no --%s", name)
					}
				}
				a.deprecated("--solve FILE", "synth puzzles solve FILE")
				return a.runSolvePuzzles(cmd.Context(), &f)
			}
			if f.importPublished != "" {
				for _, name := range []string{"count", "seed", "start", "shard", "test-fraction"} {
					if cmd.Flags().Changed(name) {
						return usagef("--import-published converts a file; it takes no --%s", name)
					}
				}
				if f.out == "" {
					return usagef("--import-published needs --out")
				}
				a.deprecated("--import-published FILE", "synth puzzles import-published FILE")
				return a.runImportPublished(cmd.Context(), &f)
			}
			if err := requireSeed(cmd, "puzzles"); err != nil {
				return err
			}
			return a.runSynthPuzzles(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.Int64Var(&f.count, "count", 0, "number of puzzles (required)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the puzzles (required)")
	fs.StringVar(&f.out, "out", "", "output rows; the extension picks the format unless --format is given")
	testFractionFlag(fs, &f.testFraction, "answer set")
	labelFlag(fs, &f.labels)
	fs.StringVar(&f.solve, "solve", "", "deprecated: use \"synth puzzles solve FILE\"")
	fs.StringVar(&f.importPublished, "import-published", "", "deprecated: use \"synth puzzles import-published FILE\"")
	fs.Int64Var(&f.start, "start", 0, "index of the first puzzle")
	fs.StringVar(&f.shard, "shard", "", "write only the puzzles whose index is i mod n, e.g. 0/4")
	fs.String("solutions", "", "solutions per puzzle: K (0-6) or a range A-B cycled by index (default 1-6)")
	fs.String("years", "", "year range of the dates, A-B (default 1900-2030)")
	fs.String("kb", "", "knowledge-base CSV of events (event,start,end; default: the built-in one)")
	fs.String("year-sets", "", "CSV of year sets (set,event,first,every,through,cancelled,moved; default: the built-in Olympic and World Cup years)")
	fs.String("disputed", "", "disputed lunar months and years: avoid (never decide an answer; the default) or allow")
	fs.String("year-set-reading", "", "read year sets by the editions held (held, the default) or by their rule, as the published Time Puzzles generator does (rule)")
	outputFormatFlag(fs, "synth.puzzles.format")
	fs.Int("workers", 0, "generating goroutines (default: all cores)")
	fs.Bool("explicit", false, "put the explicit constraints in the prompt instead of the implicit ones")
	bindKey(fs, "solutions", "synth.puzzles.solutions")
	bindKey(fs, "years", "synth.puzzles.years")
	bindKey(fs, "kb", "synth.puzzles.kb")
	bindKey(fs, "year-sets", "synth.puzzles.year_sets")
	bindKey(fs, "disputed", "synth.puzzles.disputed")
	bindKey(fs, "year-set-reading", "synth.puzzles.year_set_reading")
	bindKey(fs, "workers", "synth.puzzles.workers")
	bindKey(fs, "explicit", "synth.puzzles.explicit")
	cmd.AddCommand(a.synthPuzzlesSolveCmd(), a.synthPuzzlesImportCmd())
	return cmd
}

func (a *app) synthPuzzlesSolveCmd() *cobra.Command {
	f := synthPuzzlesFlags{verb: true}
	cmd := &cobra.Command{
		Use:   "solve FILE",
		Short: "solve every puzzle of a file again and report those whose stored answer differs",
		Long: `Solve solves every puzzle of FILE (a synth puzzles output, in any format)
again from its constraints_meta, puzzles without a solution included, prints
each whose stored answer (solutions or ground_truth) differs, and exits 1 if
any does; a puzzle whose answer depends on a disputed or unknown lunar day is
reported undecidable, not wrong.`,
		Example: `  timeaware synth puzzles solve out/puzzles-kb.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.solve = args[0]
			return a.runSolvePuzzles(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.String("format", "", "FILE's format: "+dataset.Names()+" (default: from its extension)")
	bindKey(fs, "format", "synth.puzzles.format")
	return cmd
}

func (a *app) synthPuzzlesImportCmd() *cobra.Command {
	f := synthPuzzlesFlags{verb: true}
	cmd := &cobra.Command{
		Use:   "import-published FILE --out FILE",
		Short: "convert the published Time Puzzles set to this schema, solve it again and report wrong answers",
		Long: `Import-published reads the published Time Puzzles set (JSON records with
constraints_meta), converts every constraint it can, solves each puzzle again
and writes the converted, decidable ones to --out in this schema, with the
solved answers; it prints each record whose published answer is wrong (with
its cause), undecidable or not converted, and a summary. Output is written
atomically, with a manifest beside it.`,
		Example: `  timeaware synth puzzles import-published examples/puzzles/published_sample.json --out out/published.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.importPublished = args[0]
			if f.out == "" {
				return usagef("import-published needs --out")
			}
			return a.runImportPublished(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", "output rows; the extension picks the format unless --format is given")
	labelFlag(fs, &f.labels)
	fs.String("kb", "", "knowledge-base CSV of events (event,start,end; default: the built-in one)")
	fs.String("year-sets", "", "CSV of year sets (set,event,first,every,through,cancelled,moved; default: the built-in Olympic and World Cup years)")
	fs.String("disputed", "", "disputed lunar months and years: avoid (never decide an answer; the default) or allow")
	fs.String("year-set-reading", "", "read year sets by the editions held (held, the default) or by their rule, as the published Time Puzzles generator does (rule)")
	outputFormatFlag(fs, "synth.puzzles.format")
	fs.Bool("explicit", false, "put the explicit constraints in the prompt instead of the implicit ones")
	for flag, key := range map[string]string{"kb": "kb", "year-sets": "year_sets", "disputed": "disputed",
		"year-set-reading": "year_set_reading", "explicit": "explicit"} {
		bindKey(fs, flag, "synth.puzzles."+key)
	}
	return cmd
}

// deprecated warns that a spelling of the command line still works but has
// a successor.
func (a *app) deprecated(old, instead string) {
	fmt.Fprintf(a.stderr, "timeaware: %s is deprecated: use \"timeaware %s\"\n", old, instead)
}

// inputFlag is the flag that named the file a puzzles verb reads: the
// deprecated flag (--solve, --import-published), or "" when a verb took the
// file as its argument.
func (f *synthPuzzlesFlags) inputFlag(flag string) string {
	if f.verb {
		return ""
	}
	return flag
}

// command is how the summary and the manifest name the run.
func (f *synthPuzzlesFlags) command(verb string) string {
	if f.verb {
		return "synth puzzles " + verb
	}
	return "synth puzzles --" + verb
}

// puzzleRangeKey reads "K" or "A-B" of non-negative integers.
func (a *app) puzzleRangeKey(key string) (int, int, error) {
	raw := strings.TrimSpace(a.v.GetString(key))
	first, last, ok := strings.Cut(raw, "-")
	if !ok {
		last = first
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(first))
	hi, err2 := strconv.Atoi(strings.TrimSpace(last))
	if err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return 0, 0, a.badKeyf(key, "want a number K or a range A-B with A <= B")
	}
	return lo, hi, nil
}

// puzzleOptions reads the synth.puzzles.* keys over the defaults; inputs
// is the knowledge-base file's manifest entry when one was read.
func (a *app) puzzleOptions() (puzzles.Options, []output.Entry, error) {
	v := a.v
	o := puzzles.DefaultOptions()
	var err error
	if o.FromYear, o.ToYear, err = puzzles.ParseYears(v.GetString("synth.puzzles.years")); err != nil {
		return o, nil, a.badKey("synth.puzzles.years", err)
	}
	if o.MinSolutions, o.MaxSolutions, err = a.puzzleRangeKey("synth.puzzles.solutions"); err != nil {
		return o, nil, err
	}
	if o.MinFacts, o.MaxFacts, err = a.puzzleRangeKey("synth.puzzles.facts"); err != nil {
		return o, nil, err
	}
	if raw := strings.TrimSpace(v.GetString("synth.puzzles.kinds")); raw != "" {
		o.Kinds = []puzzles.Kind{}
		for _, k := range strings.Split(raw, ",") {
			o.Kinds = append(o.Kinds, puzzles.Kind(strings.TrimSpace(k)))
		}
	}
	if o.Seasons, err = parsePuzzleSeasons(v.GetString("synth.puzzles.seasons")); err != nil {
		return o, nil, err
	}
	so, err := puzzleSolverOptions(v)
	if err != nil {
		return o, nil, err
	}
	o.DisputedYears, o.DisputedMonths = so.DisputedYears, so.DisputedMonths
	o.Explicit = v.GetBool("synth.puzzles.explicit")
	if s := v.GetString("synth.puzzles.instruction"); s != "" {
		o.Prompt.Instruction = s
	}
	o.Prompt.System = v.GetString("synth.puzzles.system_prompt")
	if s := v.GetString("synth.puzzles.conventions"); s != "" {
		o.Prompt.Conventions = s
	}
	o.Split = v.GetString("synth.puzzles.split")
	o.Ability = v.GetString("synth.puzzles.ability")
	o.MaxAttempts = v.GetInt("synth.puzzles.max_attempts")
	o.Disputed = v.GetString("synth.puzzles.disputed")
	o.YearSetReading = v.GetString("synth.puzzles.year_set_reading")
	var inputs []output.Entry
	if err := readPuzzleInput(a, "kb", "kb", "knowledge_base", puzzles.ParseKB, &o.KB, &inputs); err != nil {
		return o, nil, err
	}
	if err := readPuzzleInput(a, "year_sets", "year-sets", "year_sets", puzzles.ParseYearSets, &o.YearSets, &inputs); err != nil {
		return o, nil, err
	}
	if err := o.Validate(); err != nil {
		return o, nil, a.optionError(err, nil)
	}
	return o, inputs, nil
}

// puzzleSolverOptions reads the disputed lunar data
// (synth.puzzles.lunar_disputed_years and _months) a solver treats as
// undecidable.
func puzzleSolverOptions(v *viper.Viper) (puzzles.SolverOptions, error) {
	var so puzzles.SolverOptions
	for _, s := range strings.Split(v.GetString("synth.puzzles.lunar_disputed_years"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		y, err := strconv.Atoi(s)
		if err != nil {
			return so, usagef("synth.puzzles.lunar_disputed_years: %q is not a year", s)
		}
		so.DisputedYears = append(so.DisputedYears, y)
	}
	for _, s := range strings.Split(v.GetString("synth.puzzles.lunar_disputed_months"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		r, err := puzzles.ParseLunarRef(s)
		if err != nil {
			return so, usagef("synth.puzzles.lunar_disputed_months: %v", err)
		}
		so.DisputedMonths = append(so.DisputedMonths, r)
	}
	return so, nil
}

// readPuzzleInput parses the file of a --kb or --year-sets flag (key
// synth.puzzles.KEY) and records it as an input of the manifest with role.
func readPuzzleInput[T any](a *app, key, flag, role string, parse func(io.Reader, string) (T, error), dst *T, inputs *[]output.Entry) error {
	path := a.v.GetString("synth.puzzles." + key)
	if path == "" {
		return nil
	}
	a.named(flag, path)
	in := output.OpenInput(path)
	defer in.Close()
	got, err := parse(in, path)
	if err != nil {
		return pathError(flag, path, err)
	}
	*dst = got
	rec := in.Entry("")
	rec.Role = role
	*inputs = append(*inputs, rec)
	return nil
}

// parsePuzzleSeasons reads "name:m,m,m;name:m,...".
func parsePuzzleSeasons(raw string) ([]puzzles.Season, error) {
	var out []puzzles.Season
	for _, part := range strings.Split(raw, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, months, ok := strings.Cut(part, ":")
		if !ok {
			return nil, usagef("synth.puzzles.seasons: %q is not name:month,month,...", part)
		}
		s := puzzles.Season{Name: strings.TrimSpace(name)}
		for _, m := range strings.Split(months, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(m))
			if err != nil {
				return nil, usagef("synth.puzzles.seasons: season %s: %q is not a month number", s.Name, strings.TrimSpace(m))
			}
			s.Months = append(s.Months, n)
		}
		out = append(out, s)
	}
	return out, nil
}

func (a *app) runSynthPuzzles(ctx context.Context, f *synthPuzzlesFlags) error {
	if f.count <= 0 {
		return usagef("--count is required: a positive number of puzzles")
	}
	if f.out == "" {
		return usagef("--out is required")
	}
	v := a.v
	format, err := a.outputFormat("synth.puzzles.format", f.out)
	if err != nil {
		return err
	}
	opt, inputs, err := a.puzzleOptions()
	if err != nil {
		return err
	}
	opt.Seed = f.seed
	if err := a.checkTestFraction(f.testFraction); err != nil {
		return err
	}
	var split *splits.UnitSplit
	if f.testFraction > 0 {
		if split, err = splits.NewExactSplit(f.seed, f.testFraction, puzzles.Groups(opt.KB)); err != nil {
			return usagef("--test-fraction: the split is by knowledge-base event: %v", err)
		}
	}
	r := puzzles.Range{Start: f.start, Count: f.count}
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return err
		}
		r.Shard = sh
	}
	workers := v.GetInt("synth.puzzles.workers")
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	config := typedConfig(v, "synth.puzzles.")
	config["seed"] = f.seed
	config["count"] = f.count
	config["start"] = f.start
	config["test_fraction"] = f.testFraction
	if f.shard != "" {
		config["shard"] = f.shard
	}

	tuneGCForStreaming()
	unit := output.Unit[*puzzles.Puzzle]{Name: "event", Of: func(p *puzzles.Puzzle) string { return p.Group },
		SetSplit: func(p *puzzles.Puzzle, s string) { p.Split = s }}
	sinks, err := newSplitSinks(f.out, format, puzzles.Schema, "puzzles", f.labels, split, unit,
		func() output.RowBuilder[*puzzles.Puzzle] { return puzzles.NewRecordBuilder(nil) })
	if err != nil {
		return err
	}
	defer sinks.Abort()
	defer sinks.Release()
	prog := newProgress(a.stderr, "puzzles").of(int(r.Shard.Rows(r.Start, r.Count)))
	sum, err := puzzles.Generate(ctx, opt, r, workers, func(p *puzzles.Puzzle) error {
		prog.add(1)
		return sinks.Add(p)
	})
	prog.done()
	if err != nil {
		return streamError(err)
	}
	if err := sinks.Finish(); err != nil {
		return pathError("out", f.out, err)
	}
	outs := sinks.Entries(format.Name)
	summary := struct {
		*puzzles.Summary
		Split *output.SplitSummary `json:"split,omitempty"`
	}{sum, sinks.Summary()}
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth puzzles",
		Outputs: outs, Inputs: inputs, Config: config, Summary: summary,
	}
	mp, err := sinks.Commit(ctx, m)
	if err != nil {
		return pathError("out", f.out, err)
	}
	printPuzzleSummary(a.stdout, outs, sum, summary.Split, mp)
	return nil
}

func printPuzzleSummary(w io.Writer, outs []output.Entry, s *puzzles.Summary, split *output.SplitSummary, mp string) {
	fmt.Fprintf(w, "synth puzzles: %s\n", writtenTo(outs, "puzzle"))
	printSplit(w, split, outs)
	if s.Skipped > 0 {
		fmt.Fprintf(w, "  shard:       %d puzzles left to other shards\n", s.Skipped)
	}
	lunar := "on"
	if !s.LunarFacts {
		lunar = "off (years that miss the lunar table, or not enabled)"
	}
	fmt.Fprintf(w, "  years:       %s; lunar facts %s\n", s.Years, lunar)
	fmt.Fprintf(w, "  solutions:   %s\n", countList(s.BySolutions))
	fmt.Fprintf(w, "  levels:      %s\n", countList(s.ByLevel))
	fmt.Fprintf(w, "  kinds:       %s\n", countList(s.ByKind))
	if len(s.ByRelation) > 0 {
		fmt.Fprintf(w, "  events:      %s\n", countList(s.ByRelation))
	}
	if s.Puzzles > 0 {
		fmt.Fprintf(w, "  per puzzle:  %.2f facts, %.2f attempts\n", float64(s.Facts)/float64(s.Puzzles), float64(s.Attempts)/float64(s.Puzzles))
	}
	fmt.Fprintf(w, "  manifest:    %s\n", mp)
}

func (a *app) runSolvePuzzles(ctx context.Context, f *synthPuzzlesFlags) error {
	path, flag := f.solve, f.inputFlag("solve")
	if flag != "" {
		a.named(flag, path)
	}
	in, err := os.Open(path)
	if err != nil {
		return pathError(flag, path, err)
	}
	defer in.Close()
	if st, err := in.Stat(); err == nil && st.IsDir() {
		if flag != "" {
			return usagef("--%s %s: is a directory", flag, path)
		}
		return usagef("%s: is a directory", path)
	}
	format, err := a.outputFormat("synth.puzzles.format", path)
	if err != nil {
		return err
	}
	so, err := puzzleSolverOptions(a.v)
	if err != nil {
		return err
	}
	solver := puzzles.NewSolverWith(so)
	var checked, differ, undecidable, noDay int
	err = puzzles.Check(ctx, in, path, format, solver, func(c *puzzles.Verdict) error {
		checked++
		where := fmt.Sprintf("row %d (index %d)", c.Row+1, c.Index)
		if c.ID != "" {
			where = fmt.Sprintf("row %d (id %s, index %d)", c.Row+1, c.ID, c.Index)
		}
		if errors.Is(c.Err, puzzles.ErrNoDay) {
			noDay++
		}
		if !c.Differs() {
			if errors.Is(c.Err, puzzles.ErrNoDay) {
				fmt.Fprintf(a.stdout, "%s: no solution, as stored: %v\n", where, c.Err)
			}
			return nil
		}
		switch {
		case errors.Is(c.Err, puzzles.ErrUndecidable):
			undecidable++
			fmt.Fprintf(a.stdout, "%s: undecidable, stored %s: %v\n", where, answerList(c.Stored), c.Err)
		case c.Err != nil && !errors.Is(c.Err, puzzles.ErrNoDay):
			differ++
			fmt.Fprintf(a.stdout, "%s: cannot solve: %v\n", where, c.Err)
		default:
			differ++
			fmt.Fprintf(a.stdout, "%s: stored %s (ground_truth %q), solved %s", where, answerList(c.Stored), c.GroundTruth, answerList(c.Solved))
			if c.Err != nil {
				fmt.Fprintf(a.stdout, ": %v", c.Err)
			}
			fmt.Fprintln(a.stdout)
		}
		return nil
	})
	if err != nil {
		return streamError(err)
	}
	fmt.Fprintf(a.stdout, "%s: %d puzzles checked, %d differ, %d undecidable", f.command("solve"), checked, differ, undecidable)
	if noDay > 0 {
		fmt.Fprintf(a.stdout, ", %d without a solution (a fact no day satisfies)", noDay)
	}
	fmt.Fprintln(a.stdout)
	if differ > 0 {
		return fmt.Errorf("%s: %d of %d puzzles have a stored answer that differs from their constraints_meta", path, differ, checked)
	}
	return nil
}

// answerList writes an answer set as the prompt asks for it.
func answerList(xs []string) string {
	if len(xs) == 0 {
		return "None"
	}
	return strings.Join(xs, ",")
}

// runImportPublished converts a published Time Puzzles file: the
// converted, decidable puzzles to --out with the solved answers, a line for
// each record that is not simply right, and a summary.
func (a *app) runImportPublished(ctx context.Context, f *synthPuzzlesFlags) error {
	v := a.v
	format, err := a.outputFormat("synth.puzzles.format", f.out)
	if err != nil {
		return err
	}
	opt, inputs, err := a.puzzleOptions()
	if err != nil {
		return err
	}
	in := output.OpenInput(f.importPublished)
	defer in.Close()
	sinks, err := newSplitSinks(f.out, format, puzzles.Schema, "puzzles", f.labels, nil,
		output.Unit[*puzzles.Puzzle]{Name: "event", Of: func(p *puzzles.Puzzle) string { return p.Group },
			SetSplit: func(p *puzzles.Puzzle, s string) { p.Split = s }},
		func() output.RowBuilder[*puzzles.Puzzle] { return puzzles.NewRecordBuilder(nil) })
	if err != nil {
		return err
	}
	defer sinks.Abort()
	defer sinks.Release()
	iopt := puzzles.ImportOptions{
		KB: opt.KB, YearSets: opt.YearSets, Seasons: opt.Seasons, Prompt: opt.Prompt, Explicit: opt.Explicit,
		Split: opt.Split, Ability: opt.Ability, YearSetReading: opt.YearSetReading,
		Solver: puzzles.NewSolverWith(puzzles.SolverOptions{DisputedYears: opt.DisputedYears, DisputedMonths: opt.DisputedMonths}),
	}
	sum, err := puzzles.ImportPublished(ctx, in, f.importPublished, iopt, func(im *puzzles.Imported) error {
		where := fmt.Sprintf("%s (record %d)", im.ID, im.Record)
		solved := answerList(im.Solved)
		if len(im.Undecided) > 0 {
			solved += ", undecidable on " + strings.Join(im.Undecided, ",")
		}
		switch im.Verdict {
		case puzzles.VerdictNotConverted:
			fmt.Fprintf(a.stdout, "%s: not converted (%s): %v\n", where, im.Cause, im.Err)
		case puzzles.VerdictUndecidable:
			fmt.Fprintf(a.stdout, "%s: undecidable (%s), published %s: %v\n", where, im.Cause, answerList(im.Published), im.Err)
		case puzzles.VerdictWrong:
			fmt.Fprintf(a.stdout, "%s: wrong (%s): published %s, solved %s", where, im.Cause, answerList(im.Published), solved)
			if im.Cause == puzzles.CauseNoDay {
				fmt.Fprintf(a.stdout, ": %v", im.Err)
			}
			fmt.Fprintln(a.stdout)
		case puzzles.VerdictAgree:
			if im.Cause == puzzles.CauseNoDay {
				fmt.Fprintf(a.stdout, "%s: agree (%s), no solution: %v\n", where, im.Cause, im.Err)
			}
		}
		if !im.Decided() {
			return nil
		}
		return sinks.Add(im.Puzzle)
	})
	if err != nil {
		return pathError(f.inputFlag("import-published"), f.importPublished, err)
	}
	if err := sinks.Finish(); err != nil {
		return pathError("out", f.out, err)
	}
	rec := in.Entry("")
	rec.Role = "published_puzzles"
	inputs = append(inputs, rec)
	outs := sinks.Entries(format.Name)
	config := typedConfig(v, "synth.puzzles.")
	config["import_published"] = f.importPublished
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: f.command("import-published"),
		Outputs: outs, Inputs: inputs, Config: config, Summary: sum,
	}
	mp, err := sinks.Commit(ctx, m)
	if err != nil {
		return pathError("out", f.out, err)
	}
	wrong, undecidable, notConverted := 0, 0, 0
	for _, n := range sum.Wrong {
		wrong += n
	}
	for _, n := range sum.Undecidable {
		undecidable += n
	}
	for _, n := range sum.NotConverted {
		notConverted += n
	}
	w := a.stdout
	fmt.Fprintf(w, "%s: %d records, %d converted, %d not converted\n", f.command("import-published"), sum.Records, sum.Converted, notConverted)
	fmt.Fprintf(w, "  agree:         %d\n", sum.Agree)
	if sum.NoDay > 0 {
		fmt.Fprintf(w, "  no solution:   %d (a constraint no day satisfies)\n", sum.NoDay)
	}
	fmt.Fprintf(w, "  wrong:         %d%s\n", wrong, byCause(sum.Wrong))
	fmt.Fprintf(w, "  undecidable:   %d%s\n", undecidable, byCause(sum.Undecidable))
	if notConverted > 0 {
		fmt.Fprintf(w, "  not converted: %d%s\n", notConverted, byCause(sum.NotConverted))
	}
	fmt.Fprintf(w, "  written:       %s: the decided ones, agreeing and wrong, with the solved answers\n", writtenTo(outs, "puzzle"))
	fmt.Fprintf(w, "  manifest:      %s\n", mp)
	return nil
}

// byCause writes " (a 2, b 1)" for a non-empty count map.
func byCause(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + countList(m) + ")"
}
