package splits

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtReport is a failed report over two sides and an outside set: a check
// with more findings than listed, one with all of them, one failing
// without findings, and passing, skipped and informational ones.
func rtReport() *Report {
	return &Report{
		Passed: false,
		Checks: []CheckResult{
			{Name: CheckSplitLabel, Status: StatusPass, Summary: "every row's split agrees with its file"},
			{Name: CheckGroupDisjoint, Status: StatusFail, Summary: "2 groups on both sides", Count: 2, Findings: []Finding{
				{Message: "group rivers: train t1, test q1", File: "data/train.jsonl", Row: 1},
				{Message: "group lakes: train t3, test q3", File: "data/train.parquet", Row: 3},
			}},
			{Name: CheckDuplicateIDs, Status: StatusFail, Summary: "3 ids repeated", Count: 3, Findings: []Finding{
				{Message: "id x: rows 1, 2", File: "d:1,2%\r\n.jsonl", Row: 2},
			}},
			{Name: CheckExactDuplicates, Status: StatusFail, Summary: "text: 50% of\nrows", Count: 1},
			{Name: CheckNearDuplicates, Status: StatusFail, Summary: "1 pair", Count: 1, Findings: []Finding{
				{Message: "t9 ~ q9", File: "x.jsonl"},
				{Message: "no file"},
			}},
			{Name: CheckTestFraction, Status: StatusSkipped, Summary: "no target"},
			{Name: CheckLabelBalance, Status: StatusInfo, Summary: "labels reported", Count: 4, Findings: []Finding{{Message: "info"}}},
		},
		Splits: map[string]*SplitStats{
			Train:   {Rows: 3, Groups: 1, BySensitivity: map[string]int{"low": 2, "high": 1}, LabelShare: map[string]float64{"tool": 2.0 / 3, "direct": 1.0 / 3}},
			Test:    {Rows: 1, Groups: 2, BySensitivity: map[string]int{}, LabelShare: map[string]float64{"tool": 1}},
			Against: {Rows: 1, Groups: 7},
		},
		Options: GateOptions{GroupName: "topic"},
		Columns: &Columns{Preset: "pairs", Text: []string{"prompt", "answer"}, Group: "scenario", ID: []string{"id", "elapse"},
			Sensitivity: "sensitivity", Label: "label"},
	}
}

func TestReportWriteText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, rtReport().WriteText(&b, 5))
	assert.Equal(t, `splits check: FAILED (4 of 7 checks) — 5 files
  columns: preset pairs; text prompt,answer; group scenario; id id,elapse
  train:   3 rows, 1 topic; sensitivity high 1, low 2; labels direct 33.3%, tool 66.7%
  test:    1 rows, 2 topics; sensitivity -; labels tool 100.0%
  against: 1 rows
  PASS    split_label           every row's split agrees with its file
  FAIL    group_disjoint        2 groups on both sides
            - group rivers: train t1, test q1
            - group lakes: train t3, test q3
  FAIL    duplicate_ids         3 ids repeated
            - id x: rows 1, 2
            ... and 2 more (see --json, --max-findings)
  FAIL    exact_duplicates      text: 50% of
rows
  FAIL    near_duplicates       1 pair
            - t9 ~ q9
            - no file
  SKIPPED test_fraction         no target
  INFO    label_balance         labels reported
            - info
            ... and 3 more (see --json, --max-findings)
`, b.String())

	// Columns the dataset lacks leave their parts out; no columns at all
	// (a report of Check) keeps every part.
	r := rtReport()
	r.Passed, r.Checks = true, []CheckResult{{Name: CheckSplitLabel, Status: StatusPass, Summary: "ok", Count: 2}}
	r.Columns = &Columns{Text: []string{"question"}}
	b.Reset()
	require.NoError(t, r.WriteText(&b, 1))
	assert.Equal(t, `splits check: passed — 1 file
  columns: preset none; text question; group -; id -
  train:   3 rows
  test:    1 rows
  against: 1 rows
  PASS    split_label           ok
`, b.String())

	r.Columns = nil
	delete(r.Splits, Against)
	b.Reset()
	require.NoError(t, r.WriteText(&b, 2))
	assert.Equal(t, `splits check: passed — 2 files
  train:   3 rows, 1 topic; sensitivity high 1, low 2; labels direct 33.3%, tool 66.7%
  test:    1 rows, 2 topics; sensitivity -; labels tool 100.0%
  PASS    split_label           ok
`, b.String())
}

func TestReportWriteGitHubAnnotations(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, rtReport().WriteGitHubAnnotations(&b))
	assert.Equal(t, `::error file=data/train.jsonl,line=1,title=splits check%3A group_disjoint::group rivers: train t1, test q1
::error file=data/train.parquet,title=splits check%3A group_disjoint::group lakes: train t3, test q3
::error file=d%3A1%2C2%25%0D%0A.jsonl,line=2,title=splits check%3A duplicate_ids::id x: rows 1, 2
::error title=splits check%3A exact_duplicates::text: 50%25 of%0Arows
::error file=x.jsonl,title=splits check%3A near_duplicates::t9 ~ q9
::error title=splits check%3A near_duplicates::no file
`, b.String(), "failed checks only; a JSONL file's line when the row is known")

	b.Reset()
	require.NoError(t, (&Report{Passed: true, Checks: []CheckResult{{Name: CheckSplitLabel, Status: StatusPass}}}).WriteGitHubAnnotations(&b))
	assert.Empty(t, b.String())
}

func TestReportWriteJSON(t *testing.T) {
	var b bytes.Buffer
	r := rtReport()
	require.NoError(t, r.WriteJSON(&b))
	assert.True(t, strings.HasPrefix(b.String(), "{\n  \"passed\": false,\n  \"checks\": [\n    {\n"), b.String())
	assert.True(t, strings.HasSuffix(b.String(), "\n}\n"))
	var back Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, r.Checks, back.Checks)
	assert.Equal(t, r.Columns, back.Columns)
}

// rtFailing accepts ok bytes, then fails every write.
type rtFailing struct {
	ok     int
	writes int
}

var errRTFull = errors.New("disk full")

func (w *rtFailing) Write(p []byte) (int, error) {
	w.writes++
	if len(p) > w.ok {
		return 0, errRTFull
	}
	w.ok -= len(p)
	return len(p), nil
}

func TestReportWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  func(*Report, *rtFailing) error
		writes int
	}{
		{"text", func(r *Report, w *rtFailing) error { return r.WriteText(w, 1) }, 2},
		{"annotations", func(r *Report, w *rtFailing) error { return r.WriteGitHubAnnotations(w) }, 2},
		{"json", func(r *Report, w *rtFailing) error { return r.WriteJSON(w) }, 1},
	} {
		w := &rtFailing{ok: 120}
		assert.ErrorIs(t, tc.write(rtReport(), w), errRTFull, tc.name)
		assert.Equal(t, tc.writes, w.writes, "%s: nothing is written after the first error", tc.name)
	}
}

func TestListOf(t *testing.T) {
	assert.Equal(t, "-", listOf(map[string]int{}, func(int) string { return "x" }))
	assert.Equal(t, "-", listOf[int](nil, func(int) string { return "x" }))
	assert.Equal(t, "a 1, b 2, c 3", listOf(map[string]int{"c": 3, "a": 1, "b": 2}, func(n int) string { return string(rune('0' + n)) }))
}
