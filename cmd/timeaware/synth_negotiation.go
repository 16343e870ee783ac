package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/negotiation"
)

type synthNegotiationFlags struct {
	out, shard   string
	count        int
	seed         uint64
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSeed(cmd, "negotiations"); err != nil {
				return err
			}
			return a.runSynthNegotiation(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.count, "count", 0, "number of rows (required)")
	fs.StringVar(&f.shard, "shard", "", "write only the rows whose index is i mod n, e.g. 0/4 (shards together hold every row once)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the per-row draws (required)")
	fs.StringVar(&f.out, "out", "", "output rows; the extension picks the format unless --format is given")
	testFractionFlag(fs, &f.testFraction, "scenario")
	labelFlag(fs, &f.labels)
	fs.String("condition", "", "all, or a comma-separated list of control, time_aware, urgency, turn_limit (default all)")
	fs.String("scenario", "", "YAML or JSON file of scenarios (default: the built-in New Recruit)")
	outputFormatFlag(fs, "synth.negotiation.format")
	bindKey(fs, "condition", "synth.negotiation.condition")
	bindKey(fs, "scenario", "synth.negotiation.scenario")
	return cmd
}

// negotiationPlan is a validated negotiation build.
type negotiationPlan struct {
	out      string
	split    *splits.UnitSplit
	labels   bool
	format   *dataset.Format
	opt      negotiation.Options
	scenario *output.Entry
	config   map[string]any
}

func (a *app) planSynthNegotiation(f *synthNegotiationFlags) (*negotiationPlan, error) {
	v := a.v
	if f.count < 1 {
		return nil, usagef("--count is required: a number of rows from 1")
	}
	if f.out == "" {
		return nil, usagef("--out is required")
	}
	p := &negotiationPlan{out: f.out, labels: f.labels}
	var err error
	if p.format, err = a.outputFormat("synth.negotiation.format", f.out); err != nil {
		return nil, err
	}
	if p.opt, err = a.negotiationOptions(); err != nil {
		return nil, err
	}
	p.opt.Seed, p.opt.Count = f.seed, f.count
	if path := v.GetString("synth.negotiation.scenario"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, pathError("scenario", path, err)
		}
		if p.opt.Scenarios, err = negotiation.LoadScenarios(data); err != nil {
			return nil, pathError("scenario", path, err)
		}
		in, err := output.HashFile(path, "scenarios")
		if err != nil {
			return nil, pathError("scenario", path, err)
		}
		p.scenario = &in
	}
	if err := p.opt.Validate(); err != nil {
		return nil, a.optionError(err, negotiationKeys)
	}
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return nil, err
		}
		p.opt.Shard = sh
	}
	if err := a.checkTestFraction(f.testFraction); err != nil {
		return nil, err
	}
	if f.testFraction > 0 {
		var ids []string
		for _, s := range p.opt.Scenarios {
			ids = append(ids, s.ID)
		}
		if len(ids) < 2 {
			return nil, usagef("--test-fraction: scenarios go whole to one side, and there is only one (%s); give more with --scenario FILE", strings.Join(ids, ""))
		}
		if p.split, err = splits.NewExactSplit(f.seed, f.testFraction, ids); err != nil {
			return nil, usageError{err}
		}
	}
	p.config = typedConfig(v, "synth.negotiation.")
	p.config["seed"] = f.seed
	p.config["count"] = f.count
	p.config["test_fraction"] = f.testFraction
	if f.shard != "" {
		p.config["shard"] = f.shard
	}
	return p, nil
}

// negotiationKeys names the options of synth negotiation that are not a
// key synth.negotiation.OPTION.
var negotiationKeys = map[string]string{"count": "--count", "conditions": "synth.negotiation.condition", "scenarios": "synth.negotiation.scenario"}

// negotiationOptions reads the synth.negotiation.* keys over the defaults.
func (a *app) negotiationOptions() (negotiation.Options, error) {
	v := a.v
	o := negotiation.DefaultOptions()
	var err error
	if o.Conditions, err = negotiation.ParseConditions(v.GetString("synth.negotiation.condition")); err != nil {
		return o, a.badKey("synth.negotiation.condition", err)
	}
	if o.DeadlinesS, err = a.floatList("synth.negotiation.deadlines_s"); err != nil {
		return o, err
	}
	limits, err := a.floatList("synth.negotiation.turn_limits")
	if err != nil {
		return o, err
	}
	o.TurnLimits = o.TurnLimits[:0]
	for i, x := range limits {
		if x != math.Trunc(x) || math.Abs(x) > 1e9 {
			return o, a.badKeyf("synth.negotiation.turn_limits", "entry %d (%v) is not a whole number of messages", i+1, x)
		}
		o.TurnLimits = append(o.TurnLimits, int(x))
	}
	o.WPM = v.GetFloat64("synth.negotiation.wpm")
	o.Split = v.GetString("synth.negotiation.split")
	p := &o.Prompts
	for key, dst := range map[string]*string{
		"brief": &p.Brief, "format": &p.Format, "deadline": &p.Deadline, "latency": &p.Latency,
		"turn_limit": &p.TurnLimit, "time_aware_prefix": &p.TimeAwarePrefix, "urgency_prefix": &p.UrgencyPrefix,
		"start": &p.Start, "opening": &p.Opening,
	} {
		if s := v.GetString("synth.negotiation.prompt." + key); strings.TrimSpace(s) != "" {
			*dst = s
		}
	}
	return o, nil
}

func (a *app) runSynthNegotiation(ctx context.Context, f *synthNegotiationFlags) error {
	p, err := a.planSynthNegotiation(f)
	if err != nil {
		return err
	}
	sum, outs, split, err := p.execute(ctx, a.stderr)
	if err != nil {
		return err
	}
	w := a.stdout
	fmt.Fprintf(w, "synth negotiation: %s\n", writtenTo(outs, "row"))
	printSplit(w, split, outs)
	fmt.Fprintf(w, "  conditions:  %s\n", countList(sum.ByCondition))
	fmt.Fprintf(w, "  scenarios:   %s\n", countList(sum.ByScenario))
	fmt.Fprintf(w, "  roles:       %s\n", countList(sum.ByRole))
	fmt.Fprintf(w, "  opens:       %s\n", countList(sum.ByFirstSpeaker))
	fmt.Fprintf(w, "  budgets:     %s\n", countList(sum.ByBudget))
	fmt.Fprintf(w, "  manifest:    %s\n", output.ManifestPath(p.out))
	return nil
}

func (p *negotiationPlan) execute(ctx context.Context, progress io.Writer) (*negotiation.Summary, []output.Entry, *output.SplitSummary, error) {
	unit := output.Unit[*negotiation.Row]{Name: "scenario", Of: func(r *negotiation.Row) string { return r.ScenarioID },
		SetSplit: func(r *negotiation.Row, s string) { r.Split = s }}
	sinks, err := newSplitSinks(p.out, p.format, negotiation.Schema, "rl_rows", p.labels, p.split, unit,
		func() output.RowBuilder[*negotiation.Row] { return negotiation.NewRecordBuilder(nil) })
	if err != nil {
		return nil, nil, nil, err
	}
	defer sinks.Abort()
	defer sinks.Release()
	prog := newProgress(progress, "rows").of(int(p.opt.Shard.Rows(0, int64(p.opt.Count))))
	sum, err := negotiation.Build(ctx, p.opt, func(row *negotiation.Row) error {
		prog.add(1)
		return sinks.Add(row)
	})
	prog.done()
	if err != nil {
		return nil, nil, nil, streamError(err)
	}
	if err := sinks.Finish(); err != nil {
		return nil, nil, nil, pathError("out", p.out, err)
	}
	outs := sinks.Entries(p.format.Name)
	summary := struct {
		*negotiation.Summary
		Split *output.SplitSummary `json:"split,omitempty"`
	}{sum, sinks.Summary()}
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth negotiation",
		Outputs: outs, Inputs: []output.Entry{}, Config: p.config, Summary: summary,
	}
	if p.scenario != nil {
		m.Inputs = append(m.Inputs, *p.scenario)
	}
	if _, err := sinks.Commit(ctx, m); err != nil {
		return nil, nil, nil, pathError("out", p.out, err)
	}
	return sum, outs, summary.Split, nil
}
