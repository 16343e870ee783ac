package splits

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits/scenario"
)

// Split sides: the names output uses for a split's files.
const (
	Train = output.Train
	Test  = output.Test
)

// Strategies for assigning scenarios to sides.
const (
	// StrategyPaper puts the scenarios the catalog marks paper_split: test
	// (the 26 of the TicToc paper, App. D.1) on the test side.
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
func PaperAssignment(c *scenario.Catalog) *Assignment {
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

// Strategies of UnitSplit, for synthetic data: whole units (a task, a
// puzzle's answer set, a negotiation scenario) go to one side.
const (
	// StrategyHash puts a unit on the test side when a seeded hash of its
	// name falls below the target fraction: every unit is decided alone, so
	// shards and streams agree, and the test share is binomial around the
	// target.
	StrategyHash = "hash"
	// StrategyExact puts the round(target·n) units of lowest seeded hash on
	// the test side (at least one on each), for a known, small set of units.
	StrategyExact = "exact"
)

// UnitSplit assigns units to sides by StrategyHash or StrategyExact.
type UnitSplit struct {
	strategy string
	seed     uint64
	fraction float64
	test     map[string]bool // StrategyExact
}

// NewHashSplit returns a StrategyHash split with the target test fraction,
// in (0, 1).
func NewHashSplit(seed uint64, fraction float64) (*UnitSplit, error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, fmt.Errorf("splits: test fraction %g is not between 0 and 1", fraction)
	}
	return &UnitSplit{strategy: StrategyHash, seed: seed, fraction: fraction}, nil
}

// NewExactSplit returns a StrategyExact split of the units (at least two,
// distinct) with the target test fraction, in (0, 1).
func NewExactSplit(seed uint64, fraction float64, units []string) (*UnitSplit, error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, fmt.Errorf("splits: test fraction %g is not between 0 and 1", fraction)
	}
	if len(units) < 2 {
		return nil, fmt.Errorf("splits: a split needs at least two units, got %d", len(units))
	}
	u := &UnitSplit{strategy: StrategyExact, seed: seed, fraction: fraction, test: map[string]bool{}}
	sorted := slices.Clone(units)
	slices.SortFunc(sorted, func(a, b string) int { return cmp.Or(cmp.Compare(u.hash(a), u.hash(b)), cmp.Compare(a, b)) })
	if len(slices.Compact(slices.Sorted(slices.Values(units)))) != len(units) {
		return nil, fmt.Errorf("splits: the units are not distinct")
	}
	k := int(math.Round(fraction * float64(len(units))))
	k = min(max(k, 1), len(units)-1)
	for _, name := range sorted[:k] {
		u.test[name] = true
	}
	return u, nil
}

// hash is the unit's seeded 64-bit hash.
func (u *UnitSplit) hash(unit string) uint64 {
	h := uint64(fnvOffset64)
	for i := range 8 {
		h = (h ^ uint64(byte(u.seed>>(8*i)))) * fnvPrime64
	}
	for i := 0; i < len(unit); i++ {
		h = (h ^ uint64(unit[i])) * fnvPrime64
	}
	return mix64(h)
}

// Side returns Train or Test for a unit.
func (u *UnitSplit) Side(unit string) string {
	if u.strategy == StrategyExact {
		if u.test[unit] {
			return Test
		}
		return Train
	}
	if float64(u.hash(unit)>>11)/(1<<53) < u.fraction {
		return Test
	}
	return Train
}

// Strategy is StrategyHash or StrategyExact.
func (u *UnitSplit) Strategy() string { return u.strategy }

// TestFraction is the target.
func (u *UnitSplit) TestFraction() float64 { return u.fraction }

// UnitTolerance is how far a split's test share of units may fall from its
// target by construction: three standard deviations of the binomial share
// for StrategyHash, 1/units (rounding to whole units, one on each side at
// least) for StrategyExact. The gate widens its tolerance to it for a
// split whose manifest says so.
func UnitTolerance(strategy string, target float64, units int) float64 {
	if units <= 0 {
		return 0
	}
	if strategy == StrategyExact {
		return 1 / float64(units)
	}
	return 3 * math.Sqrt(target*(1-target)/float64(units))
}
