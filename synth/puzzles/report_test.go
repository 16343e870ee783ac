package puzzles

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVerdictReport(t *testing.T) {
	noDay := fmt.Errorf("fact 1 (month): month 13: %w", ErrNoDay)
	for _, tc := range []struct {
		name string
		v    Verdict
		want string
	}{
		{"agrees", Verdict{Row: 0, Index: 4, ID: "p-4", Stored: []string{"2000-01-01"}, GroundTruth: "2000-01-01", Solved: []string{"2000-01-01"}}, ""},
		{"no solution as stored", Verdict{Row: 2, Index: 9, GroundTruth: "None", Solved: []string{}, Err: noDay},
			"row 3 (index 9): no solution, as stored: fact 1 (month): month 13: no day satisfies it"},
		{"undecidable", Verdict{Row: 1, Index: 1, ID: "p-1", Stored: []string{"1933-07-23"}, GroundTruth: "1933-07-23", Err: fmt.Errorf("lunar: %w", ErrUndecidable)},
			"row 2 (id p-1, index 1): undecidable, stored 1933-07-23: lunar: undecidable"},
		{"cannot solve", Verdict{Row: 0, Index: 0, GroundTruth: "None", Err: errors.New("unknown kind")},
			"row 1 (index 0): cannot solve: unknown kind"},
		{"differs", Verdict{Row: 4, Index: 4, ID: "p-4", Stored: []string{"1999-12-31"}, GroundTruth: "1999-12-31", Solved: []string{"2000-01-01", "2000-01-02"}},
			`row 5 (id p-4, index 4): stored 1999-12-31 (ground_truth "1999-12-31"), solved 2000-01-01,2000-01-02`},
		{"differs on a day", Verdict{Row: 0, Index: 0, Stored: []string{"2001-01-01"}, GroundTruth: "2001-01-01", Solved: []string{}, Err: noDay},
			`row 1 (index 0): stored 2001-01-01 (ground_truth "2001-01-01"), solved None: fact 1 (month): month 13: no day satisfies it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.v.Report())
		})
	}
}

func TestImportedReport(t *testing.T) {
	noDay := fmt.Errorf("fact 2: %w", ErrNoDay)
	for _, tc := range []struct {
		name string
		im   Imported
		want string
	}{
		{"agrees", Imported{ID: "a", Record: 1, Verdict: VerdictAgree, Published: []string{"2000-01-01"}, Solved: []string{"2000-01-01"}}, ""},
		{"agrees on no solution", Imported{ID: "b", Record: 2, Verdict: VerdictAgree, Cause: CauseNoDay, Err: noDay},
			"b (record 2): agree (no_day), no solution: fact 2: no day satisfies it"},
		{"not converted", Imported{ID: "c", Record: 3, Verdict: VerdictNotConverted, Cause: "type_x", Err: errors.New("no counterpart")},
			"c (record 3): not converted (type_x): no counterpart"},
		{"undecidable", Imported{ID: "d", Record: 4, Verdict: VerdictUndecidable, Cause: CauseLunarDisputed, Published: []string{"1933-07-23"}, Err: errors.New("disputed")},
			"d (record 4): undecidable (lunar_disputed), published 1933-07-23: disputed"},
		{"wrong", Imported{ID: "e", Record: 5, Verdict: VerdictWrong, Cause: CauseYearSetRule, Published: []string{"2020-07-24"}, Solved: []string{"2021-07-24"}},
			"e (record 5): wrong (year_set_rule): published 2020-07-24, solved 2021-07-24"},
		{"wrong with undecided days", Imported{ID: "f", Record: 6, Verdict: VerdictWrong, Cause: CauseUnexplained, Solved: []string{"2000-01-01"}, Undecided: []string{"2000-02-01", "2000-02-02"}},
			"f (record 6): wrong (unexplained): published None, solved 2000-01-01, undecidable on 2000-02-01 and 2000-02-02"},
		{"wrong on no day", Imported{ID: "g", Record: 7, Verdict: VerdictWrong, Cause: CauseNoDay, Published: []string{"2000-01-01"}, Solved: []string{}, Err: noDay},
			"g (record 7): wrong (no_day): published 2000-01-01, solved None: fact 2: no day satisfies it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.im.Report())
		})
	}
}

func TestSummaryLines(t *testing.T) {
	s := &Summary{Puzzles: 4, Years: "1900-2030", LunarFacts: true, BySolutions: map[string]int{"2": 1, "1": 3},
		ByKind: map[string]int{"year": 4, "event": 4}, ByLevel: map[string]int{"year": 8}, ByRelation: map[string]int{}, Facts: 10, Attempts: 6}
	assert.Equal(t, []string{
		"years:       1900-2030; lunar facts on",
		"solutions:   1 3, 2 1",
		"levels:      year 8",
		"kinds:       event 4, year 4",
		"per puzzle:  2.50 facts, 1.50 attempts",
	}, s.Lines())
	s = &Summary{Skipped: 3, Years: "1950-1960", ByRelation: map[string]int{"same_year": 1}}
	assert.Equal(t, []string{
		"shard:       3 puzzles left to other shards",
		"years:       1950-1960; lunar facts off (years that miss the lunar table, or not enabled)",
		"solutions:   -",
		"levels:      -",
		"kinds:       -",
		"events:      same_year 1",
	}, s.Lines())
}

func TestSolveSummaryString(t *testing.T) {
	assert.Equal(t, "6 puzzles checked, 0 differ, 0 undecidable", (&SolveSummary{Checked: 6}).String())
	assert.Equal(t, "30 puzzles checked (3 without a solution: a fact no day satisfies), 1 differ, 2 undecidable",
		(&SolveSummary{Checked: 30, Differ: 1, Undecidable: 2, NoDay: 3}).String())
}

func TestImportSummaryLines(t *testing.T) {
	s := &ImportSummary{Records: 12, Converted: 10, Agree: 4, NotConverted: map[string]int{"type_a": 1, "malformed": 1},
		Wrong: map[string]int{"b": 1, "a": 2}, Undecidable: map[string]int{}}
	assert.Equal(t, []string{
		"12 records, 10 converted, 2 not converted",
		"agree:         4",
		"wrong:         3 (a 2, b 1)",
		"undecidable:   0",
		"not converted: 2 (malformed 1, type_a 1)",
	}, s.Lines())
	// Records without a solution are counted inside their verdict, so that
	// the verdicts add up to the records: agreeing ones in agree, wrong ones
	// by their cause, no_day.
	s = &ImportSummary{Records: 3, Converted: 3, Agree: 2, AgreeNoDay: 1, NoDay: 2, Wrong: map[string]int{CauseNoDay: 1}}
	assert.Equal(t, []string{
		"3 records, 3 converted, 0 not converted",
		"agree:         2 (no solution 1)",
		"wrong:         1 (no_day 1)",
		"undecidable:   0",
	}, s.Lines())
}
