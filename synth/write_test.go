package synth

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/output"
)

// TestWithSplitMatchesEmbedding checks that a manifest summary built by
// withSplit is, once indented as manifests are, byte for byte what the
// commands wrote by embedding their summary beside a Split field.
func TestWithSplitMatchesEmbedding(t *testing.T) {
	type family struct {
		Rows  int            `json:"rows"`
		Notes map[string]int `json:"notes,omitempty"`
		HTML  string         `json:"html"`
	}
	split := &output.SplitSummary{Strategy: "hash", Unit: "task", Target: 0.2, TestFraction: 0.25,
		Rows: map[string]int{output.Train: 3, output.Test: 1}, Units: map[string]int{output.Train: 2, output.Test: 1}}
	for _, tc := range []struct {
		name  string
		sum   *family
		split *output.SplitSummary
	}{
		{"no split", &family{Rows: 4, HTML: "<a&b>"}, nil},
		{"split", &family{Rows: 4, Notes: map[string]int{"b": 1, "a": 2}, HTML: "<a&b>"}, split},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(struct {
				*family
				Split *output.SplitSummary `json:"split,omitempty"`
			}{tc.sum, tc.split}, "", "  ")
			require.NoError(t, err)
			raw, err := withSplit(tc.sum, tc.split)
			require.NoError(t, err)
			got, err := json.MarshalIndent(raw, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestWithSplitEdges(t *testing.T) {
	split := &output.SplitSummary{Strategy: "exact", Unit: "event"}
	raw, err := withSplit(struct{}{}, split)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Equal(t, []string{"split"}, keys(m), "an empty summary gets only the split, with no stray comma")

	_, err = withSplit([]int{1}, split)
	require.ErrorContains(t, err, "want a JSON object")
	_, err = withSplit(func() {}, nil)
	require.ErrorContains(t, err, "synth: manifest summary")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCountList(t *testing.T) {
	assert.Equal(t, "-", CountList(nil))
	assert.Equal(t, "a 2, b 1, c 0", CountList(map[string]int{"b": 1, "c": 0, "a": 2}))
}
