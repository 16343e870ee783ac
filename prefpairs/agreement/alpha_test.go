package agreement

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workedExample is the reliability data of Krippendorff's "Computing
// Krippendorff's Alpha-Reliability" (4 coders A–D, 12 units, values 1–5,
// missing judgements left out), regrouped per unit.
//
//	unit:  1 2 3 4 5 6 7 8 9 10 11 12
//	A:     1 2 3 3 2 1 4 1 2 .  .  .
//	B:     1 2 3 3 2 2 4 1 2 5  .  3
//	C:     . 3 3 3 2 3 4 2 2 5  1  .
//	D:     1 2 3 3 2 4 4 1 2 5  1  .
//
// Unit 12 has a single value and is not pairable.
var workedExample = [][]float64{
	{1, 1, 1},
	{2, 2, 3, 2},
	{3, 3, 3, 3},
	{3, 3, 3, 3},
	{2, 2, 2, 2},
	{1, 2, 3, 4},
	{4, 4, 4, 4},
	{1, 1, 2, 1},
	{2, 2, 2, 2},
	{5, 5, 5},
	{1, 1},
	{3},
}

func TestAlphaWorkedExample(t *testing.T) {
	// Published results, to three decimals: nominal .743, ordinal .815,
	// interval .849.
	tests := []struct {
		metric    Metric
		published float64
	}{
		{Nominal, 0.743},
		{Ordinal, 0.815},
		{Interval, 0.849},
	}
	for _, tc := range tests {
		t.Run(tc.metric.String(), func(t *testing.T) {
			got, err := Alpha(workedExample, tc.metric)
			require.NoError(t, err)
			assert.InDelta(t, tc.published, got, 0.0005)
		})
	}
}

func TestAlphaHandComputed(t *testing.T) {
	// Two units: u1 = {1, 2}, u2 = {2, 4}; each has m_u = 2, weight 1.
	// Coincidences: o(1,2) = o(2,1) = 1, o(2,4) = o(4,2) = 1, all others 0.
	// Marginals: n1 = 1, n2 = 2, n4 = 1, n = 4.
	// alpha = 1 − (n−1)·Σ o·δ² / Σ n_c·n_k·δ² (sums over ordered pairs).
	//
	// Nominal (δ² = 1 off the diagonal):
	//   Σ o·δ² = 4; Σ n n δ² = 2·(1·2 + 1·1 + 2·1) = 10
	//   alpha = 1 − 3·4/10 = −0.2
	// Interval (δ² = (c−k)²: δ²(1,2)=1, δ²(1,4)=9, δ²(2,4)=4):
	//   Σ o·δ² = 2·1 + 2·4 = 10; Σ n n δ² = 2·(2·1 + 1·9 + 2·4) = 38
	//   alpha = 1 − 3·10/38 = 4/19 ≈ 0.2105
	// Ordinal (δ²(c,k) = (Σ_{g=c..k} n_g − (n_c+n_k)/2)²):
	//   δ²(1,2) = (3 − 1.5)² = 2.25; δ²(2,4) = (3 − 1.5)² = 2.25;
	//   δ²(1,4) = (4 − 1)² = 9
	//   Σ o·δ² = 2·2.25 + 2·2.25 = 9; Σ n n δ² = 2·(2·2.25 + 1·9 + 2·2.25) = 36
	//   alpha = 1 − 3·9/36 = 0.25
	twoUnits := [][]float64{{1, 2}, {2, 4}}

	// Three-value unit plus a pair: u1 = {1, 1, 3} (weight 1/2),
	// u2 = {3, 3} (weight 1). o(1,1) = 2·1/2 = 1, o(1,3) = o(3,1) = 2·1/2 = 1,
	// o(3,3) = 2·1 = 2; n1 = 2, n3 = 3, n = 5. With only two distinct values
	// every metric gives the same ratio; nominal: 1 − 4·2/(2·2·3) = 1/3.
	weighted := [][]float64{{1, 1, 3}, {3, 3}}

	tests := []struct {
		name   string
		units  [][]float64
		metric Metric
		want   float64
	}{
		{"two units nominal", twoUnits, Nominal, -0.2},
		{"two units interval", twoUnits, Interval, 4.0 / 19},
		{"two units ordinal", twoUnits, Ordinal, 0.25},
		{"weighted nominal", weighted, Nominal, 1.0 / 3},
		{"weighted interval", weighted, Interval, 1.0 / 3},
		{"weighted ordinal", weighted, Ordinal, 1.0 / 3},
		{"perfect agreement, two values", [][]float64{{0, 0}, {3, 3, 3}, {1, 1}}, Interval, 1},
		{"perfect agreement ordinal", [][]float64{{0, 0}, {3, 3, 3}, {1, 1}}, Ordinal, 1},
		{"single value everywhere is 1 by definition", [][]float64{{2, 2}, {2, 2, 2}}, Nominal, 1},
		{"single-value units are ignored", [][]float64{{1, 2}, {7}, {2, 4}, nil, {}}, Interval, 4.0 / 19},
		{"order of values does not matter", [][]float64{{2, 1}, {4, 2}}, Ordinal, 0.25},
		{"maximal disagreement", [][]float64{{0, 3}, {3, 0}}, Interval, -0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Alpha(tc.units, tc.metric)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

// TestAlphaMatchesPythonKrippendorff checks against the `krippendorff` PyPI
// package (version 0.9.0). The datasets were drawn once with numpy
// (default_rng(20251204); per unit a true score 0..3 plus coder noise in
// {−1,0,1}, clipped to 0..3, some judgements removed) and the expected values
// computed by hand with
//
//	krippendorff.alpha(reliability_data=data, level_of_measurement=lv)
//
// on the coders×units matrix (NaN = missing); they are pasted here as
// literals. The units below are the same data regrouped per unit.
func TestAlphaMatchesPythonKrippendorff(t *testing.T) {
	datasets := []struct {
		name                       string
		units                      [][]float64
		nominal, ordinal, interval float64
	}{
		{
			name:     "3 coders 8 units",
			units:    [][]float64{{0, 0}, {0, 1, 1}, {0, 0, 0}, {0}, {1}, {1, 1, 1}, {1, 2}, {3, 2}},
			nominal:  0.43243243243243235,
			ordinal:  0.7929107021131561,
			interval: 0.7613636363636364,
		},
		{
			name: "5 coders 10 units",
			units: [][]float64{
				{2, 2, 2, 3}, {0, 0, 0}, {3, 1, 2}, {1, 1, 0}, {1, 1, 2, 0},
				{2, 2, 3}, {2, 3, 2, 1}, {2, 2, 3, 3}, {1, 1}, {1, 2, 3, 1},
			},
			nominal:  0.1467780429594272,
			ordinal:  0.4913470373194143,
			interval: 0.5050505050505051,
		},
		{
			name: "4 coders 15 units",
			units: [][]float64{
				{2, 2, 3, 3}, {1, 0, 0, 0}, {3, 2, 3, 1}, {3, 3, 1}, {2, 2, 3},
				{2, 0, 0, 1}, {3, 2, 3}, {2, 3, 2, 2}, {0, 0, 1, 0}, {1, 1, 1, 0},
				{2, 0}, {3, 3, 3, 3}, {0, 0}, {1, 2}, {3},
			},
			nominal:  0.2351987023519868,
			ordinal:  0.6256479442988587,
			interval: 0.6341845878136201,
		},
		{
			name:     "worked example",
			units:    workedExample,
			nominal:  0.743421052631579,
			ordinal:  0.8153875037548814,
			interval: 0.8491071428571428,
		},
	}
	for _, ds := range datasets {
		for _, mc := range []struct {
			metric Metric
			want   float64
		}{{Nominal, ds.nominal}, {Ordinal, ds.ordinal}, {Interval, ds.interval}} {
			t.Run(ds.name+"/"+mc.metric.String(), func(t *testing.T) {
				got, err := Alpha(ds.units, mc.metric)
				require.NoError(t, err)
				assert.InDelta(t, mc.want, got, 1e-9)
			})
		}
	}
}

func TestAlphaErrors(t *testing.T) {
	tests := []struct {
		name        string
		units       [][]float64
		metric      Metric
		noPairable  bool
		errContains string
	}{
		{"nil units", nil, Interval, true, "no unit has two or more values"},
		{"only singletons", [][]float64{{1}, {2}, {}}, Ordinal, true, "over 3 units"},
		{"unknown metric", [][]float64{{1, 2}}, Metric(7), false, "unknown metric Metric(7)"},
		{"NaN value", [][]float64{{1, 2}, {math.NaN(), 1}}, Nominal, false, "unit 1 value 0: NaN is not a finite number"},
		{"infinite value", [][]float64{{1, math.Inf(1)}}, Interval, false, "unit 0 value 1: +Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Alpha(tc.units, tc.metric)
			require.Error(t, err)
			assert.Zero(t, got)
			assert.Contains(t, err.Error(), tc.errContains)
			assert.Equal(t, tc.noPairable, errors.Is(err, ErrNoPairableValues))
		})
	}
}

func TestMetricStringAndParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Metric
		wantErr string
	}{
		{"nominal", Nominal, ""},
		{"Ordinal", Ordinal, ""},
		{" INTERVAL ", Interval, ""},
		{"ratio", 0, `unknown metric "ratio"`},
		{"", 0, `unknown metric ""`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMetric(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseMetric(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	assert.Equal(t, "Metric(-1)", Metric(-1).String())
}
