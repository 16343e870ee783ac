package prefpairs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/splits/scenario"
)

// SplitOptions say how BuildDataset splits pairs into a train and a test
// file. The unit is the scenario: a trajectory's samples all belong to its
// scenario, so no trajectory, and no scenario, is on both sides.
type SplitOptions struct {
	// Strategy is splits.StrategyPaper (the catalog's paper_split fields),
	// splits.StrategyGroup (splits.GroupAssignment on the pairs' counts per
	// scenario), or "" for one file and no split.
	Strategy string
	// Seed and TestFraction are the group strategy's (splits.GroupOptions).
	Seed         uint64
	TestFraction float64
}

// SplitReport is the manifest's record of a split: the assignment of the
// scenarios and what it gave on the pairs written.
type SplitReport struct {
	*splits.Assignment
	splits.Fractions
}

func (s SplitOptions) validate() error {
	if s.Strategy != "" && s.Strategy != splits.StrategyPaper && s.Strategy != splits.StrategyGroup {
		return fmt.Errorf("prefpairs: split %q is not %s or %s", s.Strategy, splits.StrategyPaper, splits.StrategyGroup)
	}
	return nil
}

// sides are the sides a build writes a file for: "" alone without a
// split, else train and test.
func (s SplitOptions) sides() []string {
	if s.Strategy == "" {
		return []string{""}
	}
	return []string{splits.Train, splits.Test}
}

// assign fixes the sides of the scenarios before the build; nil without a
// split. The group strategy needs each scenario's number of pairs first,
// which a count-only pass over the inputs gives (opt.CountOnly: no
// rendering, no direct replies). The pass reads every shard's records, so
// that all shards of a build draw the same split.
func assign(ctx context.Context, paths []string, opt Options, catalog *scenario.Catalog, s SplitOptions) (*splits.Assignment, error) {
	if s.Strategy == "" {
		return nil, nil
	}
	if s.Strategy == splits.StrategyPaper {
		return splits.PaperAssignment(catalog), nil
	}
	opt.CountOnly, opt.Generator, opt.Split, opt.Shard = true, nil, nil, shard.Shard{}
	inputs, readers := openInputs(paths)
	defer closeInputs(readers)
	counts := scenarioCounts{}
	if _, err := Build(ctx, inputs, opt, func(p *Pair) error {
		counts.add(p)
		return nil
	}); err != nil {
		return nil, err
	}
	return splits.GroupAssignment(counts.list(), splits.GroupOptions{Seed: s.Seed, TestFraction: s.TestFraction})
}

// scenarioCounts counts pairs per scenario, with the scenario's
// sensitivity.
type scenarioCounts map[string]*splits.ScenarioSamples

func (c scenarioCounts) add(p *Pair) {
	s, ok := c[p.Scenario]
	if !ok {
		s = &splits.ScenarioSamples{Scenario: p.Scenario, Sensitivity: p.Sensitivity}
		c[p.Scenario] = s
	}
	s.Samples++
}

// list is the counts in scenario order.
func (c scenarioCounts) list() []splits.ScenarioSamples {
	out := make([]splits.ScenarioSamples, 0, len(c))
	for _, s := range c {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b splits.ScenarioSamples) int { return strings.Compare(a.Scenario, b.Scenario) })
	return out
}
