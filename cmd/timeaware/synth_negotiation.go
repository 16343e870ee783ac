package main

import (
	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth/negotiation"
)

type synthNegotiationFlags struct {
	dataFlags
	count        int
	labels       bool
	testFraction float64
}

func (a *app) synthNegotiationCmd() *cobra.Command {
	var f synthNegotiationFlags
	cmd := &cobra.Command{
		Use:   "negotiation --count N --seed S --out FILE",
		Short: "Deadline negotiations for VeRL: role prompts under four time conditions, scored from the transcript",
		Long:  longHelp("synth negotiation"),
		Example: `  timeaware synth negotiation --count 8 --seed 1 --out out/negotiation.parquet
  timeaware synth negotiation --count 8 --seed 2 --condition turn_limit \
    --scenario examples/negotiation/scenarios.yaml --out out/turn-limit.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSynthNegotiation(cmd, &f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.count, "count", 0, "number of rows (required)")
	fs.StringVar(&f.shard, "shard", "", "write only the rows whose index is i mod n, e.g. 0/4 (shards together hold every row once)")
	f.define(fs, "output rows; the extension picks the format unless --format is given", "the per-row draws", "")
	testFractionFlag(fs, &f.testFraction, "scenario")
	labelFlag(fs, &f.labels)
	fs.String("condition", "", "all, or a comma-separated list of control, time_aware, urgency, turn_limit (default all)")
	fs.String("scenario", "", "YAML or JSON file of scenarios (default: the built-in New Recruit)")
	outputFormatFlag(fs, "synth.negotiation.format")
	bindKey(fs, "condition", "synth.negotiation.condition")
	bindKey(fs, "scenario", "synth.negotiation.scenario")
	return cmd
}

// negotiationKeys names the options of synth negotiation that are not a
// key synth.negotiation.OPTION.
var negotiationKeys = map[string]string{"count": "--count", "conditions": "synth.negotiation.condition", "scenarios": "synth.negotiation.scenario"}

// negotiationOptions reads the synth.negotiation.* keys over the defaults,
// and the scenario file they name.
func (a *app) negotiationOptions() (negotiation.Options, error) {
	key := func(k string) string { return a.v.GetString("synth.negotiation." + k) }
	c := negotiation.Config{Condition: key("condition"), DeadlinesS: key("deadlines_s"), TurnLimits: key("turn_limits"),
		WPM: a.v.GetFloat64("synth.negotiation.wpm"), Split: key("split")}
	p := &c.Prompts
	for k, dst := range map[string]*string{"brief": &p.Brief, "format": &p.Format, "deadline": &p.Deadline, "latency": &p.Latency,
		"turn_limit": &p.TurnLimit, "time_aware_prefix": &p.TimeAwarePrefix, "urgency_prefix": &p.UrgencyPrefix, "start": &p.Start, "opening": &p.Opening} {
		*dst = key("prompt." + k)
	}
	o, err := c.Options()
	if err != nil {
		return o, a.optionError(err, negotiationKeys)
	}
	return o, nil
}

func (a *app) runSynthNegotiation(cmd *cobra.Command, f *synthNegotiationFlags) error {
	if err := requireSeed(cmd, "negotiations"); err != nil {
		return err
	} else if f.count == 0 {
		return usagef("--count is required: a number of rows from 1")
	} else if f.count < 0 {
		return usagef("--count %d: want a number of rows from 1", f.count)
	}
	config := typedConfig(a.v, "synth.negotiation.")
	config["count"], config["test_fraction"] = f.count, f.testFraction
	o, prog, err := a.synthOutput(&f.dataFlags, "synth.negotiation.format", f.labels, f.testFraction, "synth negotiation", config, 0)
	if err != nil {
		return err
	}
	opt, err := a.negotiationOptions()
	if err != nil {
		return err
	}
	opt.Seed, opt.Count = f.seed, f.count
	if path := a.v.GetString("synth.negotiation.scenario"); path != "" {
		scenarios, in, err := negotiation.ReadScenarios(path)
		if err != nil {
			return a.keyFileError("synth.negotiation.scenario", "scenario", path, err)
		}
		opt.Scenarios, o.Manifest.Inputs = scenarios, []output.Entry{in}
	}
	if err := opt.Validate(); err != nil {
		return a.optionError(err, negotiationKeys)
	}
	if opt.Shard, err = parseShardFlag(f.shard); err != nil {
		return err
	}
	if f.testFraction > 0 && len(opt.Scenarios) < 2 {
		return usagef("--test-fraction: scenarios go whole to one side, and there is only one (%s); give more with --scenario FILE", opt.Scenarios[0].ID)
	}
	prog.Of(int(opt.Shard.Rows(0, int64(opt.Count))))
	w, err := negotiation.Write(cmd.Context(), opt, o)
	prog.Done()
	if err != nil {
		return a.writeError(err, f.out, negotiationKeys)
	}
	printWritten(a.stdout, "synth negotiation", "row", w.Outputs, w.Split, w.ManifestPath, w.Summary.Lines()...)
	return nil
}
