package splits

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Split sides.
const (
	Train = "train"
	Test  = "test"
)

// Strategies for assigning scenarios to sides.
const (
	// StrategyPaper puts the scenarios the catalog marks paper_split: test
	// (the 26 of seed 000 App. D.1) on the test side.
	StrategyPaper = "paper"
	// StrategyGroup draws whole scenarios for the test side, per
	// sensitivity level, until each level's test share of samples is as
	// close as it can get to the target fraction.
	StrategyGroup = "group"
)

// groupTrials is the number of shuffled greedy walks per sensitivity level.
const groupTrials = 64

// DefaultTestFraction is the group strategy's target share of samples on
// the test side, the 65:35 of the TicToc paper.
const DefaultTestFraction = 0.35

// ScenarioSamples is how many samples a scenario contributes, and its
// sensitivity level, the unit of the group strategy.
type ScenarioSamples struct {
	Scenario    string `json:"scenario"`
	Sensitivity string `json:"sensitivity"`
	Samples     int    `json:"samples"`
}

// Assignment puts every scenario it knows on one side. A trajectory's
// samples all belong to its scenario, so its elapse levels never land on
// different sides, and no scenario is on both.
type Assignment struct {
	Strategy           string   `json:"strategy"`
	Seed               *uint64  `json:"seed,omitempty"`
	TargetTestFraction float64  `json:"target_test_fraction,omitempty"`
	Train              []string `json:"train_scenarios"`
	Test               []string `json:"test_scenarios"`
	side               map[string]string
}

// ErrUnassigned is wrapped when a scenario has no side.
var ErrUnassigned = errors.New("scenario has no side")

// Side returns Train or Test for a scenario.
func (a *Assignment) Side(scenario string) (string, error) {
	s, ok := a.side[scenario]
	if !ok {
		return "", fmt.Errorf("splits: %s split: scenario %q: %w (is it in the scenario catalog?)", a.Strategy, scenario, ErrUnassigned)
	}
	return s, nil
}

func newAssignment(strategy string, side map[string]string) *Assignment {
	a := &Assignment{Strategy: strategy, side: side, Train: []string{}, Test: []string{}}
	for name, s := range side {
		if s == Test {
			a.Test = append(a.Test, name)
		} else {
			a.Train = append(a.Train, name)
		}
	}
	slices.Sort(a.Train)
	slices.Sort(a.Test)
	return a
}

// PaperAssignment is the fixed split of the catalog's paper_split fields.
func PaperAssignment(c *Catalog) *Assignment {
	side := map[string]string{}
	for _, s := range c.Scenarios() {
		side[s.Name] = Train
		if s.PaperSplit == Test {
			side[s.Name] = Test
		}
	}
	return newAssignment(StrategyPaper, side)
}

// GroupOptions configures GroupAssignment.
type GroupOptions struct {
	Seed uint64
	// TestFraction is the target share of samples on the test side, in
	// (0, 1); 0 means DefaultTestFraction.
	TestFraction float64
}

// GroupAssignment assigns whole scenarios, stratified by sensitivity. For
// each level it walks the level's scenarios in an order shuffled by a
// generator seeded from Seed and the level, putting a scenario on the test
// side whenever that brings the level's test samples closer to TestFraction
// of the level's samples. It makes groupTrials such walks and keeps the one
// that lands closest to the target. The result depends only on the seed and
// the counts, not on their order.
func GroupAssignment(scenarios []ScenarioSamples, opt GroupOptions) (*Assignment, error) {
	f := opt.TestFraction
	if f == 0 {
		f = DefaultTestFraction
	}
	if !(f > 0 && f < 1) {
		return nil, fmt.Errorf("splits: group split: test fraction %g is not between 0 and 1", f)
	}
	byLevel := map[string][]ScenarioSamples{}
	seen := map[string]bool{}
	for _, s := range scenarios {
		if seen[s.Scenario] {
			return nil, fmt.Errorf("splits: group split: scenario %q is listed twice", s.Scenario)
		}
		seen[s.Scenario] = true
		if s.Samples < 0 {
			return nil, fmt.Errorf("splits: group split: scenario %q has %d samples", s.Scenario, s.Samples)
		}
		byLevel[s.Sensitivity] = append(byLevel[s.Sensitivity], s)
	}
	side := map[string]string{}
	for level, group := range byLevel {
		slices.SortFunc(group, func(a, b ScenarioSamples) int { return cmp.Compare(a.Scenario, b.Scenario) })
		total := 0
		for _, s := range group {
			total += s.Samples
		}
		target := f * float64(total)
		h := fnv.New64a()
		h.Write([]byte(level))
		best, bestDiff := []bool(nil), math.Inf(1)
		order := make([]int, len(group))
		for trial := uint64(0); trial < groupTrials; trial++ {
			rng := rand.New(rand.NewPCG(opt.Seed, h.Sum64()+trial))
			for i := range order {
				order[i] = i
			}
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			pick := make([]bool, len(group))
			test := 0
			for _, i := range order {
				n := group[i].Samples
				if n > 0 && math.Abs(float64(test+n)-target) < math.Abs(float64(test)-target) {
					pick[i] = true
					test += n
				}
			}
			if d := math.Abs(float64(test) - target); d < bestDiff {
				best, bestDiff = pick, d
			}
		}
		for i, s := range group {
			side[s.Scenario] = Train
			if best[i] {
				side[s.Scenario] = Test
			}
		}
	}
	a := newAssignment(StrategyGroup, side)
	seed := opt.Seed
	a.Seed = &seed
	a.TargetTestFraction = f
	return a, nil
}

// Fractions is what an assignment gives on a set of samples: the share of
// samples on the test side, overall and per sensitivity level.
type Fractions struct {
	TrainSamples  int                `json:"train_samples"`
	TestSamples   int                `json:"test_samples"`
	Test          float64            `json:"test_fraction"`
	BySensitivity map[string]float64 `json:"test_fraction_by_sensitivity"`
	// TrainScenarios and TestScenarios list the scenarios that have samples
	// on each side.
	TrainScenarios []string `json:"train_scenarios_present"`
	TestScenarios  []string `json:"test_scenarios_present"`
}

// Measure applies the assignment to per-scenario sample counts.
func (a *Assignment) Measure(scenarios []ScenarioSamples) (Fractions, error) {
	fr := Fractions{BySensitivity: map[string]float64{}, TrainScenarios: []string{}, TestScenarios: []string{}}
	levelAll, levelTest := map[string]int{}, map[string]int{}
	for _, s := range scenarios {
		side, err := a.Side(s.Scenario)
		if err != nil {
			return Fractions{}, err
		}
		if s.Samples == 0 {
			continue
		}
		levelAll[s.Sensitivity] += s.Samples
		if side == Test {
			fr.TestSamples += s.Samples
			levelTest[s.Sensitivity] += s.Samples
			fr.TestScenarios = append(fr.TestScenarios, s.Scenario)
		} else {
			fr.TrainSamples += s.Samples
			fr.TrainScenarios = append(fr.TrainScenarios, s.Scenario)
		}
	}
	if n := fr.TrainSamples + fr.TestSamples; n > 0 {
		fr.Test = float64(fr.TestSamples) / float64(n)
	}
	for level, n := range levelAll {
		fr.BySensitivity[level] = float64(levelTest[level]) / float64(n)
	}
	slices.Sort(fr.TrainScenarios)
	slices.Sort(fr.TestScenarios)
	return fr, nil
}
