package rewards

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfusionRates(t *testing.T) {
	// 40 prefer-tool samples, 30 with a call: TP 30, FN 10.
	// 60 prefer-direct samples, 24 with a call: TN 36, FP 24.
	// TPR = 30/40 = 0.75; TNR = 36/60 = 0.6; NAR = (0.75 + 0.6)/2 = 0.675.
	// Attempt rate = (30 + 24)/100 = 0.54; on prefer-tool 0.75; on prefer-direct 24/60 = 0.4.
	var c Confusion
	for i := range 40 {
		c.Add(true, i < 30)
	}
	for i := range 60 {
		c.Add(false, i < 24)
	}
	require.Equal(t, Confusion{TP: 30, FN: 10, TN: 36, FP: 24}, c)
	assert.Equal(t, 100, c.Samples())
	assert.Equal(t, 40, c.PreferTool())
	assert.Equal(t, 60, c.PreferDirect())
	assert.True(t, c.BothClasses())
	assert.InDelta(t, 0.75, c.TPR(), 1e-12)
	assert.InDelta(t, 0.6, c.TNR(), 1e-12)
	assert.InDelta(t, 0.675, c.NAR(), 1e-12)
	assert.InDelta(t, 0.54, c.AttemptRate(), 1e-12)
	assert.InDelta(t, 0.75, c.AttemptRateTool(), 1e-12)
	assert.InDelta(t, 0.4, c.AttemptRateDirect(), 1e-12)

	var d Confusion
	d.Merge(c)
	d.Merge(c)
	assert.Equal(t, Confusion{TP: 60, FN: 20, TN: 72, FP: 48}, d)
	assert.InDelta(t, 0.675, d.NAR(), 1e-12)
}

func TestConfusionEmptyClasses(t *testing.T) {
	for _, tc := range []struct {
		name                                    string
		c                                       Confusion
		nar, tpr, tnr, attempt, attTool, attDir float64
		both                                    bool
	}{
		{"no samples", Confusion{}, 0, 0, 0, 0, 0, 0, false},
		// Only prefer-tool: NAR is TPR = 3/4.
		{"only prefer-tool", Confusion{TP: 3, FN: 1}, 0.75, 0.75, 0, 0.75, 0.75, 0, false},
		// Only prefer-direct: NAR is TNR = 1/4; attempt rate 3/4.
		{"only prefer-direct", Confusion{TN: 1, FP: 3}, 0.25, 0, 0.25, 0.75, 0, 0.75, false},
		// Always calling: TPR 1, TNR 0, NAR ½ (chance).
		{"always calls", Confusion{TP: 5, FP: 7}, 0.5, 1, 0, 1, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			assert.Equal(t, tc.both, c.BothClasses())
			assert.InDelta(t, tc.nar, c.NAR(), 1e-12, "nar")
			assert.InDelta(t, tc.tpr, c.TPR(), 1e-12, "tpr")
			assert.InDelta(t, tc.tnr, c.TNR(), 1e-12, "tnr")
			assert.InDelta(t, tc.attempt, c.AttemptRate(), 1e-12, "attempt")
			assert.InDelta(t, tc.attTool, c.AttemptRateTool(), 1e-12, "attempt tool")
			assert.InDelta(t, tc.attDir, c.AttemptRateDirect(), 1e-12, "attempt direct")
			_, err := json.Marshal(c.Stats())
			require.NoError(t, err)
		})
	}
}

func TestConfusionStatsJSON(t *testing.T) {
	b, err := json.Marshal(Confusion{TP: 3, FN: 1}.Stats())
	require.NoError(t, err)
	assert.JSONEq(t, `{"samples":4,"prefer_tool":4,"prefer_direct":0,"tp":3,"fn":1,"tn":0,"fp":0,
		"both_classes":false,"nar":0.75,"tpr":0.75,"tnr":null,"attempt_rate":0.75,
		"attempt_rate_tool":0.75,"attempt_rate_direct":null}`, string(b))
}

func TestNARDecisionEvaluator(t *testing.T) {
	e := NewDecisionEvaluator([]string{"sensitivity", "elapse"})
	for _, s := range []struct {
		prefer, called bool
		labels         map[string]string
	}{
		{true, true, map[string]string{"sensitivity": "high", "elapse": "2"}},
		{true, false, map[string]string{"sensitivity": "high", "elapse": "10"}},
		{false, false, map[string]string{"sensitivity": "low", "elapse": "0"}},
		{false, true, map[string]string{"sensitivity": "low", "elapse": "2"}},
		{true, true, map[string]string{"sensitivity": "medium"}},
		{false, false, map[string]string{"sensitivity": "medium", "elapse": "n/a"}},
	} {
		e.Add(s.prefer, s.called, s.labels)
	}
	r := e.Report()
	assert.Equal(t, []string{"sensitivity", "elapse"}, r.By)
	// TP 2, FN 1, TN 2, FP 1: NAR = (2/3 + 2/3)/2.
	assert.Equal(t, Confusion{TP: 2, FN: 1, TN: 2, FP: 1}, e.Overall())
	assert.Equal(t, 6, r.Overall.Samples)
	assert.InDelta(t, 2.0/3, r.Overall.NAR, 1e-12)

	type key struct {
		field, value string
		missing      bool
		samples      int
		nar          float64
	}
	var got []key
	for _, g := range r.Groups {
		got = append(got, key{g.Field, g.Value, g.Missing, g.Samples, g.NAR})
	}
	assert.Equal(t, []key{
		{"sensitivity", "high", false, 2, 0.5}, // TP 1, FN 1: TPR ½ only
		{"sensitivity", "low", false, 2, 0.5},  // TN 1, FP 1: TNR ½ only
		{"sensitivity", "medium", false, 2, 1}, // TP 1, TN 1
		{"elapse", "0", false, 1, 1},           // TN 1
		{"elapse", "2", false, 2, 0.5},         // TP 1, FP 1: (1 + 0)/2
		{"elapse", "10", false, 1, 0},          // FN 1
		{"elapse", "n/a", false, 1, 1},         // TN 1
		{"elapse", "", true, 1, 1},             // TP 1
	}, got)

	empty := NewDecisionEvaluator(nil).Report()
	b, err := json.Marshal(empty)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"by":[],"groups":[]`)
}
