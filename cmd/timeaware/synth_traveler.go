package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/synth/traveler"
)

type synthTravelerFlags struct {
	dataFlags
	count        int
	labels       bool
	testFraction float64
}

func (a *app) synthTravelerCmd() *cobra.Command {
	var f synthTravelerFlags
	cmd := &cobra.Command{
		Use:   "traveler --count N --seed S --out FILE",
		Short: "TRAVELER event-set questions (explicit, implicit, vague) as VeRL rows",
		Long:  longHelp("synth traveler"),
		Example: `  timeaware synth traveler --count 20 --seed 1 --out out/traveler.parquet
  timeaware synth traveler --count 10 --seed 2 --events 50-50 --categories vague --format jsonl --out out/vague.jsonl`,
		Args: noArgs,
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
	f.define(fs, "output file; the extension picks the format unless --format is given", "every draw",
		"the rows whose index is i mod n (shards together hold every row once)")
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
	if f.count < 1 {
		return a.flagValueError("count", errors.New("want at least 1"))
	}
	opt, err := a.travelerOptions()
	if err != nil {
		return err
	}
	opt.Seed = f.seed
	if err := opt.Validate(); err != nil {
		return a.optionError(err, travelerKeys)
	}
	if opt.Shard, err = parseShardFlag(f.shard); err != nil {
		return err
	}
	config := typedConfig(a.v, "synth.traveler.")
	config["count"], config["test_fraction"] = f.count, f.testFraction
	o, prog, err := a.synthOutput(&f.dataFlags, "synth.traveler.format", f.labels, f.testFraction, "synth traveler",
		config, int(opt.Shard.Rows(0, int64(f.count))))
	if err != nil {
		return err
	}
	w, err := traveler.Write(ctx, opt, f.count, o)
	prog.Done()
	if err != nil {
		return a.writeError(err, f.out, travelerKeys)
	}
	s := w.Summary
	lines := []string{
		"categories:  " + countList(s.ByCategory),
		"templates:   " + countList(s.ByTemplate),
		fmt.Sprintf("events:      min %d, mean %s, max %d per row", s.EventsMin, strconv.FormatFloat(s.EventsMean, 'f', 1, 64), s.EventsMax),
	}
	if len(s.ByAnswer) > 0 {
		lines = append(lines, "did answers: "+countList(s.ByAnswer))
	}
	if s.ByCategory["vague"] > 0 {
		lines = append(lines, fmt.Sprintf("vague:       best score %.3f on average (what a perfect answerer gets on vague questions)", s.VagueBestMean))
	}
	printWritten(a.stdout, "synth traveler", "row", w.Outputs, w.Split, w.ManifestPath, lines...)
	return nil
}
