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
		Long: `Negotiation writes RL prompts for bilateral multi-issue negotiations under a
deadline (data_source negotiation): each row puts the model in one role of a
scenario, with the role's brief, its private payoff table and BATNA, the JSON
reply format and the budget rules in the system turn, and the first turn it
receives (the other role's scripted opening, or the start line) in the user
turn. The ground truth carries the payoffs, the role, the condition and the
budget, which the negotiation reward scores a transcript against.

Conditions (--condition, cycled by row index): control (the deadline is stated
once), time_aware (every turn begins with the seconds left), urgency (every
turn begins with an urgency reminder), turn_limit (a number of messages instead
of a clock). Under the clock conditions every message costs its words at
synth.negotiation.wpm words per minute (150) of the deadline.

The default scenario is New Recruit; --scenario reads others from a YAML or
JSON file (format in docs/negotiation.md). Each row draws its scenario, role, first
speaker and budget from --seed and its index: the same seed gives
byte-identical output. Output is written atomically, with a manifest beside it.

--test-fraction X writes <out>-train and <out>-test instead, splitting the
scenarios whole: the round(X·n) scenarios of lowest hash with --seed (at least
one on each side) are the test side's, so no scenario's payoffs straddle the
split and "timeaware splits check" passes the two files. It needs two
scenarios or more (--scenario).`,
		Example: `  timeaware synth negotiation --count 8 --seed 1 --out out/negotiation.parquet
  timeaware synth negotiation --count 8 --seed 2 --condition turn_limit \
    --scenario examples/negotiation/scenarios.yaml --out out/turn-limit.jsonl`,
		Args: cobra.NoArgs,
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
	} else if f.count < 1 {
		return usagef("--count is required: a number of rows from 1")
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
			return pathError("scenario", path, err)
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
	prog.of(int(opt.Shard.Rows(0, int64(opt.Count))))
	w, err := negotiation.Write(cmd.Context(), opt, o)
	prog.done()
	if err != nil {
		return a.writeError(err, f.out, negotiationKeys)
	}
	printWritten(a.stdout, "synth negotiation", "row", w.Outputs, w.Split, w.ManifestPath, w.Summary.Lines()...)
	return nil
}
