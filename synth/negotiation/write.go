package negotiation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// Write builds opt's rows (Build) and writes them to o's files with their
// manifest. With o.TestFraction above zero the rows are split by scenario:
// an exact split of opt.Scenarios' IDs with opt.Seed, so that no
// scenario's payoffs straddle it; it needs two scenarios or more, else it
// is an *synth.OptionError with Key "test_fraction".
func Write(ctx context.Context, opt Options, o synth.Output) (*synth.Written[*Summary], error) {
	var split output.Splitter
	if o.TestFraction > 0 {
		ids := make([]string, 0, len(opt.Scenarios))
		for _, s := range opt.Scenarios {
			ids = append(ids, s.ID)
		}
		s, err := splits.NewExactSplit(opt.Seed, o.TestFraction, ids)
		if err != nil {
			return nil, &synth.OptionError{Family: "negotiation", Key: "test_fraction", Err: err}
		}
		split = s
	}
	rows := synth.RowsOf[*Row]{Schema: Schema, Role: "rl_rows",
		Unit: output.Unit[*Row]{Name: "scenario", Of: func(r *Row) string { return r.ScenarioID },
			SetSplit: func(r *Row, s string) { r.Split = s }},
		NewBuilder: func() output.RowBuilder[*Row] { return NewRecordBuilder(nil) }}
	return synth.Write(ctx, o, rows, split, func(emit func(*Row) error) (*Summary, error) {
		return Build(ctx, opt, emit)
	})
}

// ReadScenarios reads a YAML or JSON file of scenarios (LoadScenarios) and
// its manifest entry, role "scenarios".
func ReadScenarios(path string) ([]rewards.NegotiationScenario, output.Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, output.Entry{}, err
	}
	s, err := LoadScenarios(data)
	if err != nil {
		return nil, output.Entry{}, err
	}
	sum := sha256.Sum256(data)
	return s, output.Entry{Path: path, Role: "scenarios", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}, nil
}

// Config is a negotiation set's settings as a config file writes them,
// under synth.negotiation: lists as text, blank prompt texts for the
// defaults. Options turns it into Options.
type Config struct {
	// Condition is "all" or a list of conditions (ParseConditions).
	Condition string
	// DeadlinesS and TurnLimits are comma-separated budgets, seconds and
	// whole numbers of messages; "" is none.
	DeadlinesS, TurnLimits string
	// WPM and Split are Options' fields of those names.
	WPM   float64
	Split string
	// Prompts replace the default texts, each unless blank.
	Prompts Prompts
}

// Options reads c over DefaultOptions. A value it cannot read is a
// *synth.OptionError naming its key under synth.negotiation (condition,
// deadlines_s, turn_limits); the first one found, in that order, is
// returned. Options does not validate the result: Options.Validate does.
func (c Config) Options() (Options, error) {
	o := DefaultOptions()
	bad := func(key string, err error) (Options, error) {
		return o, &synth.OptionError{Family: "negotiation", Key: key, Err: err}
	}
	var err error
	if o.Conditions, err = ParseConditions(c.Condition); err != nil {
		return bad("condition", err)
	}
	if o.DeadlinesS, err = parseDeadlines(c.DeadlinesS); err != nil {
		return bad("deadlines_s", err)
	}
	if o.TurnLimits, err = parseTurnLimits(c.TurnLimits); err != nil {
		return bad("turn_limits", err)
	}
	o.WPM, o.Split = c.WPM, c.Split
	p := &o.Prompts
	for dst, s := range map[*string]string{&p.Brief: c.Prompts.Brief, &p.Format: c.Prompts.Format,
		&p.Deadline: c.Prompts.Deadline, &p.Latency: c.Prompts.Latency, &p.TurnLimit: c.Prompts.TurnLimit,
		&p.TimeAwarePrefix: c.Prompts.TimeAwarePrefix, &p.UrgencyPrefix: c.Prompts.UrgencyPrefix,
		&p.Start: c.Prompts.Start, &p.Opening: c.Prompts.Opening} {
		if strings.TrimSpace(s) != "" {
			*dst = s
		}
	}
	return o, nil
}

// Lines are the summary as a command shows it under its first line: the
// rows by condition, scenario, role, opening side and budget.
func (s *Summary) Lines() []string {
	return []string{"conditions:  " + synth.CountList(s.ByCondition), "scenarios:   " + synth.CountList(s.ByScenario),
		"roles:       " + synth.CountList(s.ByRole), "opens:       " + synth.CountList(s.ByFirstSpeaker), "budgets:     " + synth.CountList(s.ByBudget)}
}

// parseDeadlines reads a comma-separated list of deadlines in seconds
// (Options.DeadlinesS); "" is none. Options.Validate checks their range.
func parseDeadlines(s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []float64
	for i, x := range strings.Split(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("entry %d %q is not a number", i+1, strings.TrimSpace(x))
		}
		out = append(out, f)
	}
	return out, nil
}

// parseTurnLimits reads a comma-separated list of message budgets
// (Options.TurnLimits), whole numbers; "" is none. Options.Validate checks
// their range.
func parseTurnLimits(s string) ([]int, error) {
	xs, err := parseDeadlines(s)
	if err != nil {
		return nil, err
	}
	out := []int{}
	for i, x := range xs {
		if x != math.Trunc(x) || math.Abs(x) > 1e9 {
			return nil, fmt.Errorf("entry %d (%v) is not a whole number of messages", i+1, x)
		}
		out = append(out, int(x))
	}
	return out, nil
}
