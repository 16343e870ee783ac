package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/traveler"
)

type synthTravelerFlags struct {
	out, shard   string
	count        int
	seed         uint64
	labels       bool
	testFraction float64
}

func (a *app) synthTravelerCmd() *cobra.Command {
	var f synthTravelerFlags
	cmd := &cobra.Command{
		Use:   "traveler --count N --seed S --out FILE",
		Short: "TRAVELER event-set questions (explicit, implicit, vague) as VeRL rows",
		Long: `Traveler writes questions about synthetic household event sets (the TRAVELER paper):
who did what, where and when, over 5 to 100 events of Mary, Tom and Robot.
Templates Who / Did / How often / When last; categories explicit (on
2023-09-29, in 2023-09, in the year 2023), implicit relative to the speech time
(today, yesterday, this month, last month, this year) and vague (just,
recently, some time ago, a long time ago).

Explicit and implicit questions have a crisp answer. A vague question's ground
truth is, for each matching event, the probability that the adverbial applies
at its age: the human survey means of vague time adverbials,
interpolated linearly in log(minutes). The "traveler" reward scores the last
"ANSWER:" line with crisp or soft accuracy.

Rows are VeRL RL rows (data_source "traveler"). Row i has category i mod the
number of categories; everything else is drawn from --seed and i alone, so the
same seed gives byte-identical output and the first rows of a longer run are
the rows of a shorter one. Output is written atomically, with a manifest
beside --out.

--test-fraction X writes <out>-train and <out>-test instead: each question's
event set (its speech time and events, extra_info.group) goes to the test
side when a hash of it and --seed falls below X, so no event set straddles the
split and "timeaware splits check" passes the two files.`,
		Example: `  timeaware synth traveler --count 20 --seed 1 --out out/traveler.parquet
  timeaware synth traveler --count 10 --seed 2 --events 50-50 --categories vague --format jsonl --out out/vague.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("count") {
				return usagef("--count is required")
			}
			if err := requireSeed(cmd, "questions"); err != nil {
				return err
			}
			return a.runSynthTraveler(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.count, "count", 0, "number of questions (rows) to write (required)")
	fs.StringVar(&f.shard, "shard", "", "write only the rows whose index is i mod n, e.g. 0/4 (shards together hold every row once)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every draw (required)")
	fs.StringVar(&f.out, "out", "", "output file; the extension picks the format unless --format is given")
	testFractionFlag(fs, &f.testFraction, "event set")
	labelFlag(fs, &f.labels)
	fs.String("events", "", `events per event set, "A-B" drawn uniformly or one number (default 5-100)`)
	fs.String("categories", "", "comma-separated categories: explicit, implicit, vague (default all)")
	fs.String("templates", "", "comma-separated templates: who, did, how_often, when_last (default all)")
	outputFormatFlag(fs, "synth.traveler.format")
	bindKey(fs, "events", "synth.traveler.events")
	bindKey(fs, "categories", "synth.traveler.categories")
	bindKey(fs, "templates", "synth.traveler.templates")
	return cmd
}

// travelerKeys names the options of synth traveler that are not a key
// synth.traveler.OPTION.
var travelerKeys = map[string]string{"count": "--count"}

// travelerOptions reads the synth.traveler.* keys over the defaults.
func (a *app) travelerOptions() (traveler.Options, error) {
	v := a.v
	o := traveler.DefaultOptions()
	var err error
	if o.MinEvents, o.MaxEvents, err = traveler.ParseRange(v.GetString("synth.traveler.events")); err != nil {
		return o, a.badKey("synth.traveler.events", err)
	}
	o.Categories = travelerList(v.GetString("synth.traveler.categories"))
	o.Templates = travelerList(v.GetString("synth.traveler.templates"))
	o.WindowDays = v.GetInt("synth.traveler.window_days")
	years := v.GetString("synth.traveler.years")
	if o.FirstYear, o.LastYear, err = traveler.ParseRange(years); err != nil {
		return o, a.badKeyf("synth.traveler.years", "want A-B, e.g. 2023-2025, or one year")
	}
	o.Split = v.GetString("synth.traveler.split")
	o.SystemPrompt = v.GetString("synth.traveler.system_prompt")
	return o, nil
}

func travelerList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (a *app) runSynthTraveler(ctx context.Context, f *synthTravelerFlags) error {
	if f.out == "" {
		return usagef("--out is required")
	}
	if f.count < 1 {
		return a.flagValueError("count", errors.New("want at least 1"))
	}
	format, err := a.outputFormat("synth.traveler.format", f.out)
	if err != nil {
		return err
	}
	opt, err := a.travelerOptions()
	if err != nil {
		return err
	}
	opt.Seed = f.seed
	if err := opt.Validate(); err != nil {
		return a.optionError(err, travelerKeys)
	}
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return err
		}
		opt.Shard = sh
	}
	if err := a.checkTestFraction(f.testFraction); err != nil {
		return err
	}
	var split *splits.UnitSplit
	if f.testFraction > 0 {
		if split, err = splits.NewHashSplit(f.seed, f.testFraction); err != nil {
			return usageError{err}
		}
	}
	tuneGCForStreaming()
	unit := splits.Unit[*traveler.Row]{Name: "event set", Of: (*traveler.Row).Group,
		SetSplit: func(r *traveler.Row, s string) { r.Split = s }}
	sinks, err := newSplitSinks(f.out, format, traveler.Schema, "traveler_rows", f.labels, split, unit,
		func() splits.RowBuilder[*traveler.Row] { return traveler.NewRecordBuilder(nil) })
	if err != nil {
		return err
	}
	defer sinks.Abort()
	defer sinks.Release()
	prog := newProgress(a.stderr, "rows").of(int(opt.Shard.Rows(0, int64(f.count))))
	sum, err := traveler.Build(ctx, opt, f.count, func(row *traveler.Row) error {
		prog.add(1)
		return sinks.Add(row)
	})
	prog.done()
	if err != nil {
		return streamError(a.optionError(err, travelerKeys))
	}
	if err := sinks.Finish(); err != nil {
		return pathError("out", f.out, err)
	}
	outs := sinks.Entries(format.Name)
	config := typedConfig(a.v, "synth.traveler.")
	config["count"] = f.count
	config["seed"] = f.seed
	config["test_fraction"] = f.testFraction
	if f.shard != "" {
		config["shard"] = f.shard
	}
	summary := struct {
		*traveler.Summary
		Split *splits.UnitSummary `json:"split,omitempty"`
	}{sum, sinks.Summary()}
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth traveler",
		Outputs: outs, Inputs: []output.Entry{}, Config: config, Summary: summary,
	}
	mp, err := sinks.Commit(ctx, m)
	if err != nil {
		return pathError("out", f.out, err)
	}
	printTravelerSummary(a.stdout, outs, sum, summary.Split, mp)
	return nil
}

func printTravelerSummary(w io.Writer, outs []output.Entry, s *traveler.Summary, split *splits.UnitSummary, mp string) {
	fmt.Fprintf(w, "synth traveler: %s\n", writtenTo(outs, "row"))
	printSplit(w, split, outs)
	fmt.Fprintf(w, "  categories:  %s\n", countList(s.ByCategory))
	fmt.Fprintf(w, "  templates:   %s\n", countList(s.ByTemplate))
	fmt.Fprintf(w, "  events:      min %d, mean %s, max %d per row\n", s.EventsMin, strconv.FormatFloat(s.EventsMean, 'f', 1, 64), s.EventsMax)
	if len(s.ByAnswer) > 0 {
		fmt.Fprintf(w, "  did answers: %s\n", countList(s.ByAnswer))
	}
	if s.ByCategory["vague"] > 0 {
		fmt.Fprintf(w, "  vague:       best score %.3f on average (what a perfect answerer gets on vague questions)\n", s.VagueBestMean)
	}
	fmt.Fprintf(w, "  manifest:    %s\n", mp)
}
