package main

import (
	"context"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

// planSplit loads the scenario catalog, makes it resolve every trajectory's
// scenario, and checks the split flags.
func (p *pairsPlan) planSplit(a *app) error {
	v := a.v
	var err error
	if path := v.GetString("pairs.catalog"); path != "" {
		cat, mf, err := readSideFile(a, path, "catalog", splits.LoadCatalog)
		if err != nil {
			return err
		}
		p.catalog, p.catalogFile = cat, &mf
	} else if p.catalog, err = splits.DefaultCatalog(); err != nil {
		return err
	}
	p.opt.Scenario = p.catalog.ScenarioOf

	p.split = v.GetString("pairs.split")
	p.seed = v.GetUint64("pairs.seed")
	p.testFraction = v.GetFloat64("pairs.test_fraction")
	switch p.split {
	case "":
	case splits.StrategyPaper:
		p.assignment = splits.PaperAssignment(p.catalog)
	case splits.StrategyGroup:
		if !(p.testFraction > 0 && p.testFraction < 1) {
			return a.badKeyf("pairs.test_fraction", "want a share between 0 and 1")
		}
	default:
		return a.badKeyf("pairs.split", "want paper or group")
	}
	return nil
}

// prepareSplit fixes the assignment before the real build. The group
// strategy needs each scenario's sample count first, which a count-only pass
// over the inputs provides (no rendering, no direct replies). With --shard
// the pass still reads every shard's records, so that all shards of a build
// draw the same split.
func (p *pairsPlan) prepareSplit(ctx context.Context) error {
	if p.split != splits.StrategyGroup {
		return nil
	}
	opt := p.opt
	opt.CountOnly = true
	opt.Generator = nil
	opt.Split = nil
	// Every shard must draw the same split, so the counts cover all shards.
	opt.Shard = shard.Shard{}
	inputs, readers := p.openInputs()
	defer closeInputs(readers)
	counts := map[string]*splits.ScenarioSamples{}
	if _, err := prefpairs.Build(ctx, inputs, opt, func(pair *prefpairs.Pair) error {
		countScenario(counts, pair)
		return nil
	}); err != nil {
		return err
	}
	a, err := splits.GroupAssignment(scenarioList(counts), splits.GroupOptions{Seed: p.seed, TestFraction: p.testFraction})
	if err != nil {
		return err
	}
	p.assignment = a
	return nil
}

func (p *pairsPlan) openInputs() ([]prefpairs.Input, []*output.Input) {
	inputs := make([]prefpairs.Input, len(p.files))
	readers := make([]*output.Input, len(p.files))
	for i, path := range p.files {
		readers[i] = output.OpenInput(path)
		inputs[i] = prefpairs.InputFromName(path, readers[i])
	}
	return inputs, readers
}

func closeInputs(readers []*output.Input) {
	for _, r := range readers {
		r.Close()
	}
}

// outputSides lists the outputs of a build: one file, or one per side.
func outputSides(split string) []string {
	if split == "" {
		return []string{""}
	}
	return []string{splits.Train, splits.Test}
}

func (p *pairsPlan) openOutputs() (map[string]*pairsOutput, error) {
	outputs := map[string]*pairsOutput{}
	for _, side := range outputSides(p.split) {
		path := p.out
		if side != "" {
			path = output.SidePath(p.out, side)
		}
		o, err := newPairsOutput(path, p.format, p.dsOpt)
		if err != nil {
			for _, o := range outputs {
				o.abort()
			}
			return nil, err
		}
		outputs[side] = o
	}
	return outputs, nil
}

func countScenario(counts map[string]*splits.ScenarioSamples, pair *prefpairs.Pair) {
	c, ok := counts[pair.Scenario]
	if !ok {
		c = &splits.ScenarioSamples{Scenario: pair.Scenario, Sensitivity: pair.Sensitivity}
		counts[pair.Scenario] = c
	}
	c.Samples++
}

func scenarioList(counts map[string]*splits.ScenarioSamples) []splits.ScenarioSamples {
	out := make([]splits.ScenarioSamples, 0, len(counts))
	for _, c := range counts {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b splits.ScenarioSamples) int { return strings.Compare(a.Scenario, b.Scenario) })
	return out
}
