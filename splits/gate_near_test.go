package splits

// Tests of the near-duplicate and exact-duplicate checks at their edges:
// the threshold, the first indexed text, and the counts in summaries.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gnPairs returns n test texts of 40 words and, for each, a train text with
// 1 + i%10 of its words changed; every pair has words of its own.
func gnPairs(n int) gtRows {
	rng := rand.New(rand.NewPCG(71, 71))
	var rows gtRows
	for i := range n {
		words := make([]string, 40)
		for j := range words {
			words[j] = fmt.Sprintf("p%dw%d", i, rng.IntN(200))
		}
		test := strings.Join(words, " ")
		for k := range 1 + i%10 {
			words[(k*7)%40] = fmt.Sprintf("p%dchanged%d", i, k)
		}
		rows = append(rows,
			Row{File: gtTestFile, Index: i + 1, ID: fmt.Sprintf("test%d", i), Side: Test, Text: test},
			Row{File: gtTrainFile, Index: i + 1, ID: fmt.Sprintf("train%d", i), Side: Train, Text: strings.Join(words, " ")})
	}
	return rows
}

// gnNear runs the gate and returns the near-duplicate similarities by
// train id.
func gnNear(t *testing.T, rows gtRows, opt GateOptions) map[string]float64 {
	t.Helper()
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	near := gtCheck(rep, CheckNearDuplicates)
	got := map[string]float64{}
	for _, f := range near.Findings {
		require.Equal(t, "test"+strings.TrimPrefix(f.IDs[0], "train"), f.IDs[1], "unrelated pair reported")
		got[f.IDs[0]] = f.Similarity
	}
	require.Equal(t, near.Count, len(got))
	return got
}

// TestCheckNearDuplicateThresholdInclusive checks that a pair counts as a
// near-duplicate from the threshold on: rerun with the threshold at a
// pair's estimate, the gate reports exactly the pairs estimated at least
// that similar, at the same estimates; half a permutation higher, not the
// pair. With 100 permutations some estimates (0.07, 0.14, 0.28, 0.55,
// 0.56) times 100 exceed their whole number of agreeing positions in
// floating point, which must not raise the count needed.
func TestCheckNearDuplicateThresholdInclusive(t *testing.T) {
	rows := gnPairs(60)
	opt := DefaultGateOptions()
	opt.Permutations, opt.Bands = 100, 100 // any agreeing position makes a candidate
	opt.NearDuplicateThreshold = 0.01
	opt.Sensitivities = []string{}
	opt.MaxFindings = -1
	all := gnNear(t, rows, opt)
	require.Greater(t, len(all), 30)
	var sims []float64
	for _, s := range all {
		if !slices.Contains(sims, s) {
			sims = append(sims, s)
		}
	}
	slices.Sort(sims)
	inexact := 0
	for i, s := range sims {
		exact := s*100 == float64(int(s*100+0.5))
		if !exact {
			inexact++
		}
		opt.NearDuplicateThreshold = s
		want := map[string]float64{}
		for id, x := range all {
			if x >= s {
				want[id] = x
			}
		}
		assert.Equal(t, want, gnNear(t, rows, opt), "threshold %v", s)
		if s < 1 && (!exact || i%4 == 0) {
			opt.NearDuplicateThreshold = s + 0.005
			got := gnNear(t, rows, opt)
			for id, x := range all {
				_, ok := got[id]
				assert.Equal(t, x > s, ok, "threshold %v: %s at %v", s+0.005, id, x)
			}
		}
	}
	t.Logf("%d estimates from %v to %v; %d of them inexact times 100", len(sims), sims[0], sims[len(sims)-1], inexact)
	assert.Positive(t, inexact)
}

// gnPeriodic returns the words w1..w6 repeated n times: texts of two or
// more repetitions have the same six 5-word shingles, so they are
// near-duplicates at Jaccard 1 without being duplicates.
func gnPeriodic(prefix string, n int) string {
	var words []string
	for range n {
		for i := 1; i <= 6; i++ {
			words = append(words, fmt.Sprintf("%s%d", prefix, i))
		}
	}
	return strings.Join(words, " ")
}

// TestCheckDuplicatesOfTheFirstTestText plants an exact duplicate, a
// near-duplicate and a contamination of the first text indexed (the first
// test or outside row with text), which the index numbers 0.
func TestCheckDuplicatesOfTheFirstTestText(t *testing.T) {
	for _, bands := range []int{1, 4, 0} {
		t.Run(fmt.Sprintf("%d bands", bands), func(t *testing.T) {
			rows := gtRows{
				{File: "eval.jsonl", Index: 1, ID: "e1", Side: Against, Text: gnPeriodic("e", 3)},
				{File: gtTestFile, Index: 1, ID: "t1", Side: Test, Text: ""},
				{File: gtTestFile, Index: 2, ID: "t2", Side: Test, Text: gnPeriodic("a", 2)},
				{File: gtTestFile, Index: 3, ID: "t3", Side: Test, Text: gnPeriodic("b", 2)},
				{File: gtTrainFile, Index: 1, ID: "r1", Side: Train, Text: strings.ToUpper(gnPeriodic("e", 3))},
				{File: gtTrainFile, Index: 2, ID: "r2", Side: Train, Text: gnPeriodic("a", 3)},
				{File: gtTrainFile, Index: 3, ID: "r3", Side: Train, Text: "  " + gnPeriodic("b", 2)},
				{File: gtTrainFile, Index: 4, ID: "r4", Side: Train, Text: gnPeriodic("e", 4)},
			}
			opt := DefaultGateOptions()
			opt.Permutations, opt.Bands = 8, bands
			opt.Sensitivities = []string{}
			rep, err := Check(context.Background(), rows.source(), opt)
			require.NoError(t, err)
			exact := gtCheck(rep, CheckExactDuplicates)
			assert.Equal(t, 1, exact.Count)
			require.Len(t, exact.Findings, 1)
			assert.Equal(t, []string{"r3", "t3"}, exact.Findings[0].IDs)
			near := gtCheck(rep, CheckNearDuplicates)
			assert.Equal(t, 1, near.Count)
			require.Len(t, near.Findings, 1)
			assert.Equal(t, Finding{Message: "train r2 (pairs-train.parquet row 2) is a near-duplicate of test t2 (pairs-test.parquet row 2) (estimated Jaccard 1.00)",
				IDs: []string{"r2", "t2"}, File: gtTrainFile, Row: 2, Similarity: 1}, near.Findings[0])
			contam := gtCheck(rep, CheckContamination)
			assert.Equal(t, 2, contam.Count)
			require.Len(t, contam.Findings, 2)
			assert.Equal(t, Finding{Message: "train r1 (pairs-train.parquet row 1) duplicates evaluation row e1 (eval.jsonl row 1) after normalisation",
				IDs: []string{"r1", "e1"}, File: gtTrainFile, Row: 1}, contam.Findings[0])
			assert.Equal(t, Finding{Message: "train r4 (pairs-train.parquet row 4) is a near-duplicate of evaluation row e1 (eval.jsonl row 1) (estimated Jaccard 1.00)",
				IDs: []string{"r4", "e1"}, File: gtTrainFile, Row: 4, Similarity: 1}, contam.Findings[1])
			assert.Equal(t, "2 train/evaluation pairs are duplicates or near-duplicates: train rows against the 1 row of the outside evaluation set", contam.Summary)
		})
	}
}

// TestCheckRowsWithoutNames checks findings about rows that have no id or
// no file name, and the statistics of the sides, the outside set included.
func TestCheckRowsWithoutNames(t *testing.T) {
	rows := gtRows{
		{Index: 1, Side: Train, Group: "g", Sensitivity: "High", Label: "Tool", Text: "one two three four five six"},
		{Index: 2, Side: Train, Group: "h", Text: "seven eight nine"},
		{File: gtTestFile, Index: 1, Side: Test, Group: "G", Sensitivity: "low", Label: "direct", Text: "ONE two three four five six"},
		{File: "eval.jsonl", Index: 4, Side: Against, Sensitivity: "high", Label: "x", Text: "seven  eight nine"},
	}
	opt := DefaultGateOptions()
	opt.Sensitivities = []string{"high"}
	rep := gtLeak(t, rows, opt, CheckGroupDisjoint, CheckExactDuplicates, CheckContamination, CheckSensitivityCoverage)
	assert.Equal(t, `group "g" is in train ((no id), row 1) and test ((no id), pairs-test.parquet row 1)`,
		gtCheck(rep, CheckGroupDisjoint).Findings[0].Message)
	assert.Equal(t, "train (no id) (row 1) duplicates test (no id) (pairs-test.parquet row 1) after normalisation",
		gtCheck(rep, CheckExactDuplicates).Findings[0].Message)
	assert.Equal(t, "train (no id) (row 2) duplicates evaluation row (no id) (eval.jsonl row 4) after normalisation",
		gtCheck(rep, CheckContamination).Findings[0].Message)
	assert.Equal(t, `split "test" has no rows with sensitivity "high"`, gtCheck(rep, CheckSensitivityCoverage).Findings[0].Message)
	assert.Equal(t, map[string]*SplitStats{
		Train: {Rows: 2, Groups: 2, BySensitivity: map[string]int{"high": 1, "unknown": 1}, ByLabel: map[string]int{"tool": 1, "unknown": 1},
			LabelShare: map[string]float64{"tool": 0.5, "unknown": 0.5}},
		Test: {Rows: 1, Groups: 1, BySensitivity: map[string]int{"high": 0, "low": 1}, ByLabel: map[string]int{"direct": 1},
			LabelShare: map[string]float64{"direct": 1}},
		Against: {Rows: 1, BySensitivity: map[string]int{}, ByLabel: map[string]int{}, LabelShare: map[string]float64{}},
	}, rep.Splits)
	assert.Equal(t, "train: tool 50.0%, unknown 50.0%; test: direct 100.0%", gtCheck(rep, CheckLabelBalance).Summary)

	// Without outside rows there are no outside statistics.
	rep = gtLeak(t, rows[:3], opt, CheckGroupDisjoint, CheckExactDuplicates, CheckSensitivityCoverage)
	assert.NotContains(t, rep.Splits, Against)
	assert.Len(t, rep.Splits, 2)
}

// TestCheckCandidatesCounted checks the LSH index against a brute-force
// comparison of all pairs: the candidate pairs the passing summary counts
// are the train/test pairs whose signatures (of the package's MinHasher,
// checked against its definition elsewhere) agree in every row of at least
// one band.
func TestCheckCandidatesCounted(t *testing.T) {
	rows := gnPairs(30)
	opt := DefaultGateOptions()
	opt.Permutations, opt.Bands, opt.NearDuplicateThreshold = 32, 16, 1
	opt.Sensitivities = []string{}
	mh, err := NewMinHasher(32, opt.Seed)
	require.NoError(t, err)
	var train, test [][]uint32
	for _, r := range rows {
		sig := mh.Signature(Shingles(r.Text, 5), nil)
		if r.Side == Train {
			train = append(train, sig)
		} else {
			test = append(test, sig)
		}
	}
	candidates, found := 0, 0
	for _, a := range train {
		for _, b := range test {
			if slices.Equal(a, b) {
				found++
			}
			for band := range 16 {
				if slices.Equal(a[2*band:2*band+2], b[2*band:2*band+2]) {
					candidates++
					break
				}
			}
		}
	}
	require.Zero(t, found)
	require.Greater(t, candidates, 10)
	rep := gtLeak(t, rows, opt)
	assert.Equal(t, fmt.Sprintf("no train/test pair reaches estimated Jaccard 1.00 (%d candidate pairs verified; LSH 16 bands × 2 rows)", candidates),
		gtCheck(rep, CheckNearDuplicates).Summary)
}
