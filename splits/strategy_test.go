package splits

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPaperAssignment(t *testing.T) {
	cat, err := DefaultCatalog()
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
	cat, err := DefaultCatalog()
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
