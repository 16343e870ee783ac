package splits

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckDocsExample runs the gate on examples/splits as docs/splits.md
// shows it (--text question --group topic --id id, and the published set
// --against with --against-text question), and checks the figures and
// findings the page prints: a test question that is a train question with
// one word changed (estimated Jaccard 0.91), and a train question copied
// from the published set.
func TestCheckDocsExample(t *testing.T) {
	const dir = "../examples/splits/"
	cols := &Columns{Text: []string{"question"}, Group: "topic", GroupName: "topic", ID: []string{"id"}}
	src := Source([]Input{
		{Path: dir + "train.jsonl", Side: Train, Columns: cols},
		{Path: dir + "test.jsonl", Side: Test, Columns: cols},
		{Path: dir + "published.jsonl", Side: Against, Columns: &Columns{Text: []string{"question"}}},
	})
	opt := DefaultGateOptions()
	opt.GroupName = cols.GroupName
	opt.Skip = cols.Skips()
	opt.Sensitivities = []string{}
	rep, err := Check(context.Background(), src, opt)
	require.NoError(t, err)
	assert.False(t, rep.Passed)
	assert.Equal(t, 13, rep.Splits[Train].Rows)
	assert.Equal(t, 5, rep.Splits[Train].Groups)
	assert.Equal(t, 5, rep.Splits[Test].Rows)
	assert.Equal(t, 2, rep.Splits[Test].Groups)
	assert.Equal(t, 2, rep.Splits[Against].Rows)
	assert.Equal(t, map[string]string{
		CheckSplitLabel: StatusSkipped, CheckGroupDisjoint: StatusPass, CheckDuplicateIDs: StatusPass,
		CheckDuplicateTexts: StatusPass, CheckExactDuplicates: StatusPass, CheckNearDuplicates: StatusFail,
		CheckContamination: StatusFail, CheckTestFraction: StatusSkipped, CheckSensitivityCoverage: StatusSkipped,
		CheckLabelBalance: StatusSkipped,
	}, gtStatuses(rep))
	summaries := map[string]string{
		CheckSplitLabel:      "the dataset has no split column (--split-column)",
		CheckGroupDisjoint:   "no topic appears in both splits (5 train, 2 test topics)",
		CheckDuplicateIDs:    "no id appears twice",
		CheckDuplicateTexts:  "no text appears twice on one side under different ids",
		CheckExactDuplicates: "no test text reappears in train after normalisation",
		CheckNearDuplicates:  "1 train/test pair is a near-duplicate (estimated Jaccard ≥ 0.80)",
		CheckContamination:   "1 train row duplicates or nearly duplicates a row of the 2 rows of the outside evaluation set",
		CheckTestFraction:    "no target test fraction set: give --test-fraction, or the split's manifest (achieved 0.278, 5 of 18 rows)",
	}
	for name, want := range summaries {
		assert.Equal(t, want, gtCheck(rep, name).Summary, name)
	}
	near := gtCheck(rep, CheckNearDuplicates)
	require.Len(t, near.Findings, 1)
	assert.Equal(t, "train t1 ("+dir+"train.jsonl row 1) is a near-duplicate of test q4 ("+dir+"test.jsonl row 4) (estimated Jaccard 0.91)",
		near.Findings[0].Message)
	contam := gtCheck(rep, CheckContamination)
	require.Len(t, contam.Findings, 1)
	assert.Equal(t, "train t13 ("+dir+"train.jsonl row 13) duplicates evaluation row (no id) ("+dir+"published.jsonl row 2) after normalisation",
		contam.Findings[0].Message)
}
