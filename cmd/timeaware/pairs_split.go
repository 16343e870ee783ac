package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/configs"
	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/output"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

// planSplit loads the scenario catalog, makes it resolve every trajectory's
// scenario, and checks the split flags.
func (p *pairsPlan) planSplit(a *app) error {
	v := a.v
	var err error
	if path := v.GetString("pairs.catalog"); path != "" {
		cat, mf, err := readSideFile(path, "catalog", splits.LoadCatalog)
		if err != nil {
			return err
		}
		p.catalog, p.catalogFile = cat, &mf
	} else if p.catalog, err = splits.LoadCatalog(bytes.NewReader(configs.Scenarios), "configs/scenarios.yaml"); err != nil {
		return err
	}
	p.opt.Scenario = catalogResolver(p.catalog)

	p.split = v.GetString("pairs.split")
	p.seed = v.GetUint64("pairs.seed")
	p.testFraction = v.GetFloat64("pairs.test_fraction")
	switch p.split {
	case "":
	case splits.StrategyPaper:
		p.assignment = splits.PaperAssignment(p.catalog)
	case splits.StrategyGroup:
		if !(p.testFraction > 0 && p.testFraction < 1) {
			return usagef("--test-fraction %g is not between 0 and 1", p.testFraction)
		}
	default:
		return usagef("--split %q: want paper or group", p.split)
	}
	return nil
}

// catalogResolver names a trajectory's scenario from the catalog: the
// record's own scenario field when it has one (a canonical name or an
// alias), otherwise its id's alias. Either must be in the catalog: a
// misspelt scenario would otherwise form a group of its own and could land
// on the other side of a split from its siblings, unseen by the gate. A
// sensitivity in the record wins over the catalog's.
func catalogResolver(cat *splits.Catalog) func(*conversation.Trajectory) (string, string, error) {
	return func(t *conversation.Trajectory) (string, string, error) {
		var sc *splits.Scenario
		if t.Scenario != "" {
			s, ok := cat.ByName(t.Scenario)
			if !ok {
				s2, err := cat.Resolve(t.Scenario)
				if err != nil {
					return "", "", fmt.Errorf("scenario %q is not in the scenario catalog (add it, or give --catalog)", t.Scenario)
				}
				s = s2
			}
			// An id that is itself an alias must agree with the field.
			if byID, err := cat.Resolve(t.ID); err == nil && byID != s {
				return "", "", fmt.Errorf("scenario %q contradicts the id, whose alias belongs to %q", t.Scenario, byID.Name)
			}
			sc = s
		} else {
			s, err := cat.Resolve(t.ID)
			if err != nil {
				return "", "", err
			}
			sc = s
		}
		sens := t.Sensitivity
		if sens == "" {
			sens = sc.Sensitivity
		}
		return sc.Name, sens, nil
	}
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
	opt.Shard = prefpairs.Shard{}
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
