package splits

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/splits/scenario"
)

func TestPaperAssignment(t *testing.T) {
	cat, err := scenario.Default()
	require.NoError(t, err)
	a := PaperAssignment(cat)
	assert.Equal(t, StrategyPaper, a.Strategy)
	assert.Len(t, a.Test, 26)
	assert.Len(t, a.Train, 50)
	for _, name := range []string{"ICU Vitals Monitor", "Tide Height Tracker", "Airline Baggage Policy"} {
		side, err := a.Side(name)
		require.NoError(t, err)
		assert.Equal(t, Test, side, name)
	}
	side, err := a.Side("Tee Time Booker")
	require.NoError(t, err)
	assert.Equal(t, Train, side)
	_, err = a.Side("Time Machine Rental")
	require.ErrorIs(t, err, ErrUnassigned)
	assert.Contains(t, err.Error(), `paper split: scenario "Time Machine Rental"`)
}

// groupFixture is three levels of scenarios with varied sizes.
func groupFixture() []ScenarioSamples {
	var out []ScenarioSamples
	sizes := []int{3, 5, 8, 13, 21, 34, 7, 11, 2, 40}
	for li, level := range []string{"low", "medium", "high"} {
		for i, n := range sizes {
			out = append(out, ScenarioSamples{Scenario: fmt.Sprintf("%s-%d", level, i), Sensitivity: level, Samples: n * (li + 1)})
		}
	}
	return out
}

func TestGroupAssignment(t *testing.T) {
	scen := groupFixture()
	a, err := GroupAssignment(scen, GroupOptions{Seed: 7})
	require.NoError(t, err)
	assert.Equal(t, StrategyGroup, a.Strategy)
	require.NotNil(t, a.Seed)
	assert.EqualValues(t, 7, *a.Seed)
	assert.Equal(t, DefaultTestFraction, a.TargetTestFraction)
	assert.Len(t, append(a.Train, a.Test...), len(scen), "every scenario gets exactly one side")
	fr, err := a.Measure(scen)
	require.NoError(t, err)
	// Each level has 144·k samples in sizes fine enough to land within 2%.
	assert.InDelta(t, 0.35, fr.Test, 0.02)
	for level, f := range fr.BySensitivity {
		assert.InDelta(t, 0.35, f, 0.02, level)
	}
	assert.Equal(t, fr.TrainSamples+fr.TestSamples, 144*6)

	// The same seed gives the same split whatever the input order; another
	// seed gives another split.
	rev := make([]ScenarioSamples, len(scen))
	for i, s := range scen {
		rev[len(scen)-1-i] = s
	}
	b, err := GroupAssignment(rev, GroupOptions{Seed: 7})
	require.NoError(t, err)
	assert.Equal(t, a.Test, b.Test)
	c, err := GroupAssignment(scen, GroupOptions{Seed: 8})
	require.NoError(t, err)
	assert.NotEqual(t, a.Test, c.Test)

	// Another target is honoured.
	d, err := GroupAssignment(scen, GroupOptions{Seed: 7, TestFraction: 0.2})
	require.NoError(t, err)
	fr, err = d.Measure(scen)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, fr.Test, 0.02)
}

func TestGroupAssignmentErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		scen []ScenarioSamples
		opt  GroupOptions
		want string
	}{
		{"fraction 1", groupFixture(), GroupOptions{TestFraction: 1}, "test fraction 1 is not between 0 and 1"},
		{"negative fraction", groupFixture(), GroupOptions{TestFraction: -0.1}, "test fraction -0.1"},
		{"duplicate", []ScenarioSamples{{Scenario: "a", Samples: 1}, {Scenario: "a", Samples: 2}}, GroupOptions{}, `scenario "a" is listed twice`},
		{"negative count", []ScenarioSamples{{Scenario: "a", Samples: -1}}, GroupOptions{}, `scenario "a" has -1 samples`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := GroupAssignment(tt.scen, tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestMeasure(t *testing.T) {
	cat, err := scenario.Default()
	require.NoError(t, err)
	a := PaperAssignment(cat)
	fr, err := a.Measure([]ScenarioSamples{
		{Scenario: "ICU Vitals Monitor", Sensitivity: "high", Samples: 30},
		{Scenario: "Taxi Dispatch System", Sensitivity: "high", Samples: 70},
		{Scenario: "Tee Time Booker", Sensitivity: "medium", Samples: 50},
		{Scenario: "Office Finder", Sensitivity: "low", Samples: 0},
	})
	require.NoError(t, err)
	assert.Equal(t, 30, fr.TestSamples)
	assert.Equal(t, 120, fr.TrainSamples)
	assert.InDelta(t, 0.2, fr.Test, 1e-12)
	assert.Equal(t, map[string]float64{"high": 0.3, "medium": 0}, fr.BySensitivity)
	assert.Equal(t, []string{"ICU Vitals Monitor"}, fr.TestScenarios)
	assert.Equal(t, []string{"Taxi Dispatch System", "Tee Time Booker"}, fr.TrainScenarios)

	_, err = a.Measure([]ScenarioSamples{{Scenario: "Nowhere", Samples: 1}})
	require.ErrorIs(t, err, ErrUnassigned)
}

// refGroupWalks is GroupAssignment's documented method, written plainly
// for one level: trials walks over the scenarios (sorted by name), each in
// an order shuffled by a PCG generator seeded with the seed and FNV-1a of
// the level plus the trial number, putting a scenario on the test side when
// that brings the test samples strictly closer to fraction·total. It
// returns each walk's test scenarios and its distance to the target.
func refGroupWalks(group []ScenarioSamples, level string, seed uint64, fraction float64, trials int) ([]map[string]bool, []float64) {
	group = slices.Clone(group)
	slices.SortFunc(group, func(a, b ScenarioSamples) int { return strings.Compare(a.Scenario, b.Scenario) })
	total := 0
	for _, s := range group {
		total += s.Samples
	}
	target := fraction * float64(total)
	h := fnv.New64a()
	h.Write([]byte(level))
	var picks []map[string]bool
	var dists []float64
	for trial := range trials {
		order := make([]int, len(group))
		for i := range order {
			order[i] = i
		}
		rng := rand.New(rand.NewPCG(seed, h.Sum64()+uint64(trial)))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		pick, test := map[string]bool{}, 0
		for _, i := range order {
			n := group[i].Samples
			if math.Abs(float64(test+n)-target) < math.Abs(float64(test)-target) {
				pick[group[i].Scenario] = true
				test += n
			}
		}
		picks = append(picks, pick)
		dists = append(dists, math.Abs(float64(test)-target))
	}
	return picks, dists
}

// refBest returns the first walk closest to the target.
func refBest(picks []map[string]bool, dists []float64) map[string]bool {
	best := 0
	for i, d := range dists {
		if d < dists[best] {
			best = i
		}
	}
	return picks[best]
}

// TestGroupAssignmentMatchesReference compares GroupAssignment with the
// plain walks over many seeds: the first of the 64 walks closest to the
// target wins, which the seeds show matters (a 65th walk would do better
// for some, and walks tie with different scenarios for others).
func TestGroupAssignmentMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 51))
	var scen []ScenarioSamples
	byLevel := map[string][]ScenarioSamples{}
	for i := range 42 {
		level := []string{"low", "medium", "high"}[i%3]
		n := 50 + rng.IntN(950)
		if i%3 == 2 {
			n = 10 // equal sizes: many walks tie
		}
		s := ScenarioSamples{Scenario: fmt.Sprintf("sc%02d", i), Sensitivity: level, Samples: n}
		scen = append(scen, s)
		byLevel[level] = append(byLevel[level], s)
	}
	later, ties := 0, 0
	for seed := range uint64(60) {
		for _, f := range []float64{0.35, 0.2} {
			a, err := GroupAssignment(scen, GroupOptions{Seed: seed, TestFraction: f})
			require.NoError(t, err)
			want := map[string]bool{}
			for level, group := range byLevel {
				picks, dists := refGroupWalks(group, level, seed, f, groupTrials+1)
				best := refBest(picks[:groupTrials], dists[:groupTrials])
				for s := range best {
					want[s] = true
				}
				if dists[groupTrials] < slices.Min(dists[:groupTrials]) {
					later++
				}
				for i := range groupTrials {
					if i > 0 && dists[i] == slices.Min(dists[:groupTrials]) && !maps.Equal(picks[i], best) {
						ties++
						break
					}
				}
			}
			got := map[string]bool{}
			for _, s := range a.Test {
				got[s] = true
			}
			require.Equal(t, want, got, "seed %d, fraction %v", seed, f)
		}
	}
	t.Logf("a 65th walk would be closer in %d levels; later walks tie with other scenarios in %d", later, ties)
	assert.Positive(t, later)
	assert.Positive(t, ties)
}

// TestGroupAssignmentByHand checks walks whose outcome does not depend on
// the order.
func TestGroupAssignmentByHand(t *testing.T) {
	// One scenario of 10 at 0.5: putting it on the test side lands 5 from
	// the target, as leaving it does; not closer, so it stays in train.
	a, err := GroupAssignment([]ScenarioSamples{{Scenario: "only", Sensitivity: "low", Samples: 10}}, GroupOptions{TestFraction: 0.5})
	require.NoError(t, err)
	assert.Equal(t, []string{"only"}, a.Train)
	assert.Empty(t, a.Test)
	assert.Equal(t, 0.5, a.TargetTestFraction)

	// Two of 10 at 0.35 (target 7): the first walked lands 3 away, the
	// second would land 13 away. Scenarios without samples are allowed and
	// never help.
	scen := []ScenarioSamples{
		{Scenario: "a", Sensitivity: "high", Samples: 10}, {Scenario: "b", Sensitivity: "high", Samples: 10},
		{Scenario: "empty", Sensitivity: "high", Samples: 0},
	}
	for seed := range uint64(20) {
		a, err := GroupAssignment(scen, GroupOptions{Seed: seed})
		require.NoError(t, err)
		require.Len(t, a.Test, 1, "seed %d", seed)
		assert.NotEqual(t, "empty", a.Test[0])
		assert.Len(t, a.Train, 2)
		side, err := a.Side("empty")
		require.NoError(t, err)
		assert.Equal(t, Train, side)
	}
}

func TestMeasureNoSamples(t *testing.T) {
	a, err := GroupAssignment([]ScenarioSamples{{Scenario: "a", Samples: 0}, {Scenario: "b", Samples: 0}}, GroupOptions{})
	require.NoError(t, err)
	fr, err := a.Measure([]ScenarioSamples{{Scenario: "a", Samples: 0}, {Scenario: "b", Samples: 0}})
	require.NoError(t, err)
	assert.Equal(t, Fractions{BySensitivity: map[string]float64{}, TrainScenarios: []string{}, TestScenarios: []string{}}, fr)
}

// TestUnitSplitBoundaries checks the edges of the unit splits: a hash
// split puts a unit on the test side when its hash, scaled to [0, 1),
// falls strictly below the fraction; an exact split of two units puts one
// on each side.
func TestUnitSplitBoundaries(t *testing.T) {
	u, err := NewHashSplit(9, 0.5)
	require.NoError(t, err)
	for _, unit := range []string{"a", "task-17", "event set 3"} {
		scaled := float64(u.hash(unit)>>11) / (1 << 53)
		at, err := NewHashSplit(9, scaled)
		require.NoError(t, err)
		assert.Equal(t, Train, at.Side(unit), "%s: a fraction equal to its hash", unit)
		above, err := NewHashSplit(9, math.Nextafter(scaled, 1))
		require.NoError(t, err)
		assert.Equal(t, Test, above.Side(unit), "%s: a fraction just above its hash", unit)
	}
	for _, f := range []float64{0.01, 0.5, 0.99} {
		x, err := NewExactSplit(4, f, []string{"p", "q"})
		require.NoError(t, err, "%v", f)
		assert.ElementsMatch(t, []string{Train, Test}, []string{x.Side("p"), x.Side("q")}, "%v", f)
		assert.Equal(t, StrategyExact, x.Strategy())
		assert.Equal(t, f, x.TestFraction())
	}
}
