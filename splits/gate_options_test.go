package splits

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckOptionsApplied checks the options a report says it applied:
// defaults for zero fields (as documented on GateOptions), and the values
// given otherwise.
func TestCheckOptionsApplied(t *testing.T) {
	rows := gtClean(81, 30)
	for _, tc := range []struct {
		name string
		opt  GateOptions
		want GateOptions
	}{
		{
			name: "zero options",
			opt:  GateOptions{},
			want: GateOptions{NearDuplicateThreshold: 0.8, ShingleWords: 5, Permutations: 128, Bands: 16, Tolerance: 0.05,
				Sensitivities: []string{"low", "medium", "high"}, MaxFindings: 20, Seed: DefaultMinHashSeed, GroupName: "group"},
		},
		{
			// 64 permutations at 0.5: 21 bands of 3 rows catch a pair at
			// 0.5 with probability 1 − (1 − 0.5³)²¹ ≈ 0.94; 16 of 4 only
			// with 0.64.
			name: "values given",
			opt: GateOptions{NearDuplicateThreshold: 0.5, ShingleWords: 3, Permutations: 64, TestFraction: 1, Tolerance: 0.1,
				Sensitivities: []string{" High ", "low", "HIGH"}, MaxFindings: 7, Seed: 9, GroupName: "topic"},
			want: GateOptions{NearDuplicateThreshold: 0.5, ShingleWords: 3, Permutations: 64, Bands: 21, TestFraction: 1, Tolerance: 0.1,
				Sensitivities: []string{"high", "low"}, MaxFindings: 7, Seed: 9, GroupName: "topic"},
		},
		{
			name: "near-duplicates off: the default bands",
			opt:  GateOptions{NearDuplicateThreshold: -1, MaxFindings: -1, Sensitivities: []string{}},
			want: GateOptions{NearDuplicateThreshold: -1, ShingleWords: 5, Permutations: 128, Bands: 16, Tolerance: 0.05,
				Sensitivities: []string{}, MaxFindings: -1, Seed: DefaultMinHashSeed, GroupName: "group"},
		},
		{
			name: "one row per band",
			opt:  GateOptions{Permutations: 8, Bands: 8, NearDuplicateThreshold: 1},
			want: GateOptions{NearDuplicateThreshold: 1, ShingleWords: 5, Permutations: 8, Bands: 8, Tolerance: 0.05,
				Sensitivities: []string{"low", "medium", "high"}, MaxFindings: 20, Seed: DefaultMinHashSeed, GroupName: "group"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(context.Background(), rows.source(), tc.opt)
			require.NoError(t, err)
			assert.Equal(t, tc.want, rep.Options)
		})
	}
}

// gcIter counts the rows read from it and can fail to close.
type gcIter struct {
	gtIter
	reads    int
	closeErr error
}

func (it *gcIter) Next() (Row, error) {
	it.reads++
	return it.gtIter.Next()
}

func (it *gcIter) Close() error { return it.closeErr }

// TestCheckCloseAndCancel checks that an error closing the rows is the
// gate's error when nothing else failed, and that a cancelled context
// stops the gate before it reads a row, even from an empty source.
func TestCheckCloseAndCancel(t *testing.T) {
	rows := gtClean(82, 20)
	boom := errors.New("lost the file handle")
	it := &gcIter{gtIter: gtIter{rows: rows}, closeErr: boom}
	rep, err := Check(context.Background(), func() (RowIterator, error) { return it, nil }, gtOptions())
	assert.Nil(t, rep)
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "splits: close rows: lost the file handle")

	// A read error wins over the close error.
	it = &gcIter{gtIter: gtIter{rows: rows, err: errors.New("bad row")}, closeErr: boom}
	_, err = Check(context.Background(), func() (RowIterator, error) { return it, nil }, gtOptions())
	assert.EqualError(t, err, "splits: bad row")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, rows := range []gtRows{nil, rows} {
		it := &gcIter{gtIter: gtIter{rows: rows}}
		rep, err := Check(ctx, func() (RowIterator, error) { return it, nil }, gtOptions())
		assert.Nil(t, rep)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, it.reads, "%d rows", len(rows))
	}
}

// TestCheckRowLimit checks the gate's limit of 2^32 − 1 rows (a row's
// position is 32 bits) on its reader: the last row allowed passes, the
// next is an error.
func TestCheckRowLimit(t *testing.T) {
	opt, err := resolveGateOptions(DefaultGateOptions())
	require.NoError(t, err)
	g := &gate{opt: opt}
	g.init()
	g.rows1 = math.MaxUint32 - 1
	added := 0
	add := func(Row) error { added++; return nil }
	require.NoError(t, g.read1(Row{File: "f", Index: 1, Side: Train, Text: "x"}, sideTrain, add))
	assert.Equal(t, 1, added)
	err = g.read1(Row{File: "f", Index: 2, Side: Train, Text: "y"}, sideTrain, add)
	assert.EqualError(t, err, "splits: more than 4294967295 rows")
	assert.Equal(t, 1, added)
}

// TestCheckCancelledWhileReading cancels the context in the middle of the
// second pass, over rows that pass hands no work (test rows without text):
// the reader notices within 1024 rows and the gate returns the context's
// error, not a report.
func TestCheckCancelledWhileReading(t *testing.T) {
	rows := gtRows{
		{File: gtTrainFile, Index: 1, ID: "r1", Group: "g", Side: Train},
		{File: gtTestFile, Index: 1, ID: "t1", Group: "G", Side: Test},
	}
	for i := range 5000 {
		rows = append(rows, Row{File: gtTestFile, Index: i + 2, ID: fmt.Sprintf("t%d", i+2), Side: Test})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opens := 0
	var second *cancelIter
	src := func() (RowIterator, error) {
		opens++
		if opens == 1 {
			return &gtIter{rows: rows}, nil
		}
		second = &cancelIter{gtIter: gtIter{rows: rows}, at: 100, cancel: cancel}
		return second, nil
	}
	opt := DefaultGateOptions()
	opt.Sensitivities = []string{}
	rep, err := Check(ctx, src, opt)
	assert.Nil(t, rep)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, opens)
	assert.LessOrEqual(t, second.reads, 1024, "rows read in the second pass")
	assert.Greater(t, second.reads, 100)
}

// cancelIter cancels a context when it has read at rows.
type cancelIter struct {
	gtIter
	at, reads int
	cancel    func()
}

func (it *cancelIter) Next() (Row, error) {
	it.reads++
	if it.reads == it.at {
		it.cancel()
	}
	return it.gtIter.Next()
}

// TestCheckTestFractionAtTheTolerance checks that a test share exactly
// the tolerance off target passes, though 0.4 − 0.35 is a little more than
// 0.05 in floating point, and that one off by a hair more fails.
func TestCheckTestFractionAtTheTolerance(t *testing.T) {
	var rows gtRows
	for i := range 10 {
		side, file := Train, gtTrainFile
		if i < 4 {
			side, file = Test, gtTestFile
		}
		rows = append(rows, Row{File: file, Index: i + 1, ID: fmt.Sprintf("r%d", i), Side: side, Text: fmt.Sprintf("text %d", i)})
	}
	opt := DefaultGateOptions()
	opt.Sensitivities = []string{}
	opt.TestFraction, opt.Tolerance = 0.35, 0.05
	achieved, target := float64(4)/10, opt.TestFraction // variables: constants would subtract exactly
	require.Greater(t, achieved-target, 0.05)
	rep := gtLeak(t, rows, opt)
	assert.Equal(t, "test fraction 0.400 (4 of 10 rows), target 0.350 ± 0.050", gtCheck(rep, CheckTestFraction).Summary)

	// The slack is 1e-9: a tolerance that much below the difference still
	// passes, one a hair lower fails.
	d := achieved - target
	tol := d - 1e-9
	for range 100 {
		if tol+1e-9 == d {
			break
		}
		if tol+1e-9 < d {
			tol = math.Nextafter(tol, 1)
		} else {
			tol = math.Nextafter(tol, 0)
		}
	}
	require.Equal(t, d, tol+1e-9)
	opt.Tolerance = tol
	gtLeak(t, rows, opt)
	opt.Tolerance = math.Nextafter(tol, 0)
	rep = gtLeak(t, rows, opt, CheckTestFraction)
	assert.Equal(t, "test fraction 0.400 (4 of 10 rows), target 0.350 ± 0.050: outside the tolerance", gtCheck(rep, CheckTestFraction).Findings[0].Message)
}
