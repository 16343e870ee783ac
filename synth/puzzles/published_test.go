package puzzles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

// examples/puzzles/published_sample.json is written by hand in the published
// format; each record's published answer and what it should be were worked
// out by hand from a calendar and the lunar table's text.
func importSample(t *testing.T, data []byte) ([]*Imported, *ImportSummary) {
	t.Helper()
	var got []*Imported
	sum, err := ImportPublished(context.Background(), bytes.NewReader(data), "sample.json", ImportOptions{}, func(im *Imported) error {
		got = append(got, im)
		return nil
	})
	require.NoError(t, err)
	return got, sum
}

func TestImportPublished(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "puzzles", "published_sample.json"))
	require.NoError(t, err)
	got, sum := importSample(t, data)
	want := []struct {
		verdict, cause string
		solved         []string
	}{
		{VerdictAgree, "", []string{"1969-07-20"}},
		{VerdictAgree, "", []string{"2024-11-22"}},                // the second-to-last Friday
		{VerdictWrong, CauseYearSetRule, []string{"2021-07-24"}},  // the Tokyo Games were held in 2021
		{VerdictWrong, CauseLeapMonth, []string{"2020-05-01"}},    // 2020-06-01 is in the leap 4th month
		{VerdictWrong, CauseBoundaryDays, []string{"1955-02-24"}}, // his birthday is in his lifetime
		{VerdictUndecidable, CauseLunarDisputed, []string{}},      // the 6th month of 1933 starts on a disputed day
		{VerdictNotConverted, "type_western_zodiac", nil},         // no counterpart
		{VerdictNotConverted, "unknown_person", nil},              // not in the knowledge base
		{VerdictWrong, CauseLunarTable, []string{}},               // the Rabbit year began on 2023-01-22
		{VerdictWrong, CauseUnexplained, []string{"2000-01-01"}},  // a published answer no reading explains
		{VerdictAgree, "", []string{"1990-06-17", "1994-06-18", "1994-06-19"}},
		{VerdictAgree, "", []string{}},
	}
	require.Len(t, got, len(want))
	var records []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &records))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, i+1, g.Record)
		// The record's identifier names it, else its position.
		var head struct{ Identifier string }
		require.NoError(t, json.Unmarshal(records[i], &head))
		wantID := head.Identifier
		if wantID == "" {
			wantID = fmt.Sprintf("published-%d", i+1)
		}
		assert.Equal(t, wantID, g.ID)
		if g.Puzzle != nil {
			assert.Equal(t, wantID, g.Puzzle.ID)
		}
		assert.Equal(t, w.verdict, g.Verdict, "record %d: %v", i+1, g.Err)
		assert.Equal(t, w.cause, g.Cause, "record %d", i+1)
		assert.Equal(t, w.solved, g.Solved, "record %d", i+1)
		if g.Verdict == VerdictNotConverted {
			assert.Nil(t, g.Puzzle)
			require.Error(t, g.Err)
			continue
		}
		p := g.Puzzle
		require.NotNil(t, p)
		assert.Equal(t, "test", p.Split, "the published set is an evaluation set")
		assert.Len(t, p.Constraints, len(p.Facts))
		assert.Len(t, p.Explicit, len(p.Facts))
		assert.Contains(t, p.Messages[len(p.Messages)-1].Text(), p.Constraints[0])
		if g.Verdict != VerdictUndecidable {
			assert.Equal(t, g.Solved, p.Solutions)
			assert.True(t, g.Decided())
		} else {
			assert.Equal(t, []string{"1933-07-23"}, g.Undecided)
			assert.False(t, g.Decided())
		}
	}
	assert.Equal(t, "It is the second-to-last Friday of its month.", got[1].Puzzle.Constraints[2])
	assert.Contains(t, got[2].Puzzle.Constraints[0], "the Summer Olympic Games were held")
	assert.Equal(t, &ImportSummary{
		Records: 12, Converted: 10, NotConverted: map[string]int{"type_western_zodiac": 1, "unknown_person": 1},
		Agree: 4, Wrong: map[string]int{CauseYearSetRule: 1, CauseLeapMonth: 1, CauseBoundaryDays: 1, CauseLunarTable: 1, CauseUnexplained: 1},
		Undecidable: map[string]int{"lunar_disputed": 1},
		ByType: map[string]int{"explicit_year": 10, "month": 9, "day_of_month_specific": 6, "weekday_in_month": 2, "event": 3,
			"lunar_month": 2, "person_alive": 2, "western_zodiac": 1, "first_day_of_month": 2, "chinese_zodiac": 1,
			"kb_event": 1, "multi_weekday": 1, "decade": 1, "day_of_month": 2, "season": 1},
	}, sum)

	// JSON lines and an object wrapping the array read the same.
	var lines bytes.Buffer
	for _, r := range records {
		lines.Write(bytes.ReplaceAll(r, []byte("\n"), nil))
		lines.WriteByte('\n')
	}
	_, sum2 := importSample(t, lines.Bytes())
	assert.Equal(t, sum, sum2)
	_, sum3 := importSample(t, append(append([]byte(`{"puzzles": `), data...), '}'))
	assert.Equal(t, sum, sum3)
}

// TestImportPublishedFileErrors: only a file that cannot be split into
// records stops the import.
func TestImportPublishedFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, err string
		noRecords       bool
	}{
		// A file without records gets every command's answer, with what the
		// file should hold.
		{"empty", "", "sample.json: no records: want a JSON array of published Time Puzzles records", true},
		{"blank", " \n\n", "sample.json: no records: want a JSON array of published Time Puzzles records", true},
		{"no records", "[]", "sample.json: no records: want a JSON array of published Time Puzzles records", true},
		{"not json", "[{", "sample.json: record 1 at byte 2: the file ends inside the record", false},
		{"cut in a record", "[{\"constraints_meta\": []},\n {\"constraints_meta\": [{\"type\"", "sample.json: record 2 at byte 29: the file ends inside the record", false},
		{"bad jsonl", "{\"constraints_meta\": []}\n{", "sample.json: record 2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportPublished(context.Background(), strings.NewReader(tc.body), "sample.json", ImportOptions{}, func(*Imported) error { return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.Equal(t, tc.noRecords, errors.Is(err, dataset.ErrNoRecords))
		})
	}
}

// TestImportPublishedMalformedRecords: a record that is not in the
// published format is a verdict (not_converted, malformed) whose error names
// the constraint and the field, and the records after it are still judged.
func TestImportPublishedMalformedRecords(t *testing.T) {
	good := `{"identifier": "good", "constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "month", "value": 1}, {"type": "first_day_of_month", "value": true}], "solutions": ["2000-01-01"], "year_range": [1990, 2010]}`
	rec := func(meta string) string {
		return `{"identifier": "bad", "constraints_meta": [{"type": "explicit_year", "value": 2000}, ` + meta + `], "solutions": [], "year_range": [1990, 2010]}`
	}
	for _, tc := range []struct{ name, record, err string }{
		{"no year range", `{"identifier": "bad", "constraints_meta": [{"type": "decade", "value": 1990}], "solutions": []}`, "year_range: want [first, last] years"},
		{"range too wide", `{"identifier": "bad", "constraints_meta": [{"type": "month", "value": 1}], "solutions": [], "year_range": [1, 5000]}`, "year_range: years 1-5000: at most 2000 years"},
		{"no constraints", `{"identifier": "bad", "constraints_meta": [], "solutions": [], "year_range": [1990, 2000]}`, "constraints_meta: no constraints"},
		{"not a record", `{"identifier": "bad", "constraints_meta": "month", "year_range": [1990, 2000]}`, "not a published record"},
		{"bad solution", `{"identifier": "bad", "constraints_meta": [{"type": "month", "value": 1}], "solutions": ["2000-02-30"], "year_range": [1990, 2010]}`, `solutions: "2000-02-30" is not a date`},
		// A record without an answer is not one whose answer is None ([]).
		{"no solutions", `{"identifier": "bad", "constraints_meta": [{"type": "month", "value": 1}], "solution_count": 1, "year_range": [1990, 2010]}`, `solutions: want a list of dates, [] when no date fits, have nothing`},
		{"null solutions", `{"identifier": "bad", "constraints_meta": [{"type": "month", "value": 1}], "solutions": null, "solution_count": 1, "year_range": [1990, 2010]}`, `solutions: want a list of dates, [] when no date fits, have null`},
		{"solutions not a list", `{"identifier": "bad", "constraints_meta": [{"type": "month", "value": 1}], "solutions": "None", "year_range": [1990, 2010]}`, `solutions: want a list of dates, [] when no date fits, have "None"`},
		{"no type", rec(`{"value": 3}`), `constraint 2: field "type": want a non-empty string, have nothing`},
		{"bad value", rec(`{"type": "month", "value": "May"}`), `constraint 2: field "value": want an integer, have "May"`},
		{"bad weekday", rec(`{"type": "weekday", "value": "Funday"}`), `constraint 2: field "value": "Funday" is not a weekday name`},
		{"bad direction", rec(`{"type": "weekday_in_month", "direction": "up", "weekday": "Monday", "n": 1}`), `constraint 2: field "direction": "up" is not forward or backward`},
		{"bad operator", rec(`{"type": "day_of_month", "operator": "=", "value": 3}`), `constraint 2: field "operator": "=" is not < or >`},
		{"bad animal", rec(`{"type": "chinese_zodiac", "value": "Cat"}`), `constraint 2: field "value": "Cat" is not a zodiac animal`},
		{"bad level", rec(`{"type": "kb_event", "event": "x", "aspect": "start", "level": "week", "value": 3}`), `constraint 2: field "level": "week" is not year, month or day`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, sum := importSample(t, []byte("["+good+","+tc.record+","+good+"]"))
			require.Len(t, got, 3)
			bad := got[1]
			assert.Equal(t, "bad", bad.ID)
			assert.Equal(t, VerdictNotConverted, bad.Verdict)
			assert.Equal(t, CauseMalformed, bad.Cause)
			assert.ErrorContains(t, bad.Err, tc.err)
			assert.Nil(t, bad.Puzzle)
			assert.False(t, bad.Decided())
			for _, g := range []*Imported{got[0], got[2]} {
				assert.Equal(t, VerdictAgree, g.Verdict)
			}
			assert.Equal(t, 3, sum.Records)
			assert.Equal(t, map[string]int{CauseMalformed: 1}, sum.NotConverted)
		})
	}
}

// handWorked are records in the published format, each answer worked by
// hand from a calendar and the lunar table's text (synth/puzzles/lunar.txt:
// a year's new year, its leap month, then S for a 29-day and L for a 30-day
// month). Disputed: 1890's new year, 1890-01-21 in the table, may fall a new
// moon earlier (1889-12-22, the start of the month before) or later
// (1890-02-19, the start of month 2), so 1889-12-22 to 1890-02-18 are in
// doubt, and nothing else of 1889 or 1890.
var handWorked = []struct {
	name, record string
	verdict      string
	cause        string
	solved       []string // the days in the answer whatever the calendar
	undecided    []string
}{
	{
		// 1890: 1890-01-21 Tiger, leap 2, SLSLSLLSLSLSL: month 1 (S) Jan 21 –
		// Feb 18, 2 (L) Feb 19 – Mar 20, leap 2 (S) Mar 21 – Apr 18, 3 (L)
		// Apr 19 – May 18, 4 (S) May 19 – Jun 16. 1890-06-01 is in month 4,
		// months away from the disputed new year: decided, and the published
		// answer is right. (Before: undecidable, the whole year in doubt.)
		name:    "lunar month far from a disputed new year",
		record:  `{"identifier": "far", "constraints_meta": [{"type": "explicit_year", "value": 1890}, {"type": "month", "value": 6}, {"type": "first_day_of_month", "value": true}, {"type": "lunar_month", "value": 4}], "solutions": ["1890-06-01"], "year_range": [1850, 1899]}`,
		verdict: VerdictAgree, solved: []string{"1890-06-01"},
	},
	{
		// The same puzzle with the answer None, as the published generator
		// gives for any lunar fact before 1900: provably wrong, since
		// 1890-06-01 is in month 4 whatever the new year's date; no month
		// start lies within two days of it (May 19, Jun 17). (Before:
		// undecidable.)
		name:    "provably wrong in a disputed year",
		record:  `{"identifier": "far-none", "constraints_meta": [{"type": "explicit_year", "value": 1890}, {"type": "month", "value": 6}, {"type": "first_day_of_month", "value": true}, {"type": "lunar_month", "value": 4}], "solutions": [], "year_range": [1850, 1899]}`,
		verdict: VerdictWrong, cause: CauseUnexplained, solved: []string{"1890-06-01"},
	},
	{
		// Ox year, February 15th, 1889–1890. 1889: 1889-01-31 Ox, month 1
		// (L) Jan 31 – Mar 1: 1889-02-15 is in the Ox year for sure. 1890-02-15
		// is in month 1 of the Tiger year by the table, in the Ox year if the
		// new year is 1890-02-19: in doubt. The published None leaves out
		// 1889-02-15: provably wrong, whatever 1890 holds. (Before:
		// undecidable.)
		name:    "zodiac: one day sure, one in doubt, published none",
		record:  `{"identifier": "ox-none", "constraints_meta": [{"type": "chinese_zodiac", "value": "Ox"}, {"type": "month", "value": 2}, {"type": "day_of_month_specific", "value": 15}], "solutions": [], "year_range": [1889, 1890]}`,
		verdict: VerdictWrong, cause: CauseUnexplained, solved: []string{"1889-02-15"}, undecided: []string{"1890-02-15"},
	},
	{
		// The same puzzle answered 1889-02-15 alone: the table's answer, so
		// it is right unless the new year of 1890 moves: undecidable.
		name:    "zodiac: the table's answer",
		record:  `{"identifier": "ox-table", "constraints_meta": [{"type": "chinese_zodiac", "value": "Ox"}, {"type": "month", "value": 2}, {"type": "day_of_month_specific", "value": 15}], "solutions": ["1889-02-15"], "year_range": [1889, 1890]}`,
		verdict: VerdictUndecidable, cause: CauseLunarDisputed, solved: []string{"1889-02-15"}, undecided: []string{"1890-02-15"},
	},
	{
		// Answered with both days: right if 1890's new year is 1890-02-19:
		// undecidable too.
		name:    "zodiac: the later new year's answer",
		record:  `{"identifier": "ox-later", "constraints_meta": [{"type": "chinese_zodiac", "value": "Ox"}, {"type": "month", "value": 2}, {"type": "day_of_month_specific", "value": 15}], "solutions": ["1889-02-15", "1890-02-15"], "year_range": [1889, 1890]}`,
		verdict: VerdictUndecidable, cause: CauseLunarDisputed, solved: []string{"1889-02-15"}, undecided: []string{"1890-02-15"},
	},
	{
		// February 1st, 1890, Ox year and lunar month 12. By the table it is
		// month 1 of the Tiger year (both facts false); with the new year on
		// 1890-02-19 it is month 12 of the Ox year (both true). Each fact is
		// in doubt on the same day, and read together they still are: the
		// published answer may be right. (Before: decided None, each fact
		// clearing the other's doubt, and the published answer called wrong.)
		name:    "two lunar facts in doubt on one day",
		record:  `{"identifier": "two-lunar", "constraints_meta": [{"type": "month", "value": 2}, {"type": "first_day_of_month", "value": true}, {"type": "chinese_zodiac", "value": "Ox"}, {"type": "lunar_month", "value": 12}], "solutions": ["1890-02-01"], "year_range": [1890, 1890]}`,
		verdict: VerdictUndecidable, cause: CauseLunarDisputed, solved: []string{}, undecided: []string{"1890-02-01"},
	},
	{
		// 2022: 2022-02-01 Tiger; 2023: 2023-01-22 Rabbit. 2022-02-01 is the
		// first day of the Tiger year, so "Rabbit" holds on no day of
		// February 2022. Moving the Tiger year's start a day or two later
		// makes the day part of the Ox year, never the Rabbit's: the published
		// answer is a whole zodiac year off, not a boundary case. (Before:
		// lunar_calendar_boundary, the day being a month start.)
		name:    "a whole zodiac year apart",
		record:  `{"identifier": "rabbit", "constraints_meta": [{"type": "explicit_year", "value": 2022}, {"type": "month", "value": 2}, {"type": "first_day_of_month", "value": true}, {"type": "chinese_zodiac", "value": "Rabbit"}], "solutions": ["2022-02-01"], "year_range": [1950, 2050]}`,
		verdict: VerdictWrong, cause: CauseUnexplained, solved: []string{},
	},
	{
		// The same day said to be in the Ox year: moving the Tiger year's
		// start (2022-02-01) one day later puts it in the Ox year, so a lunar
		// calendar a day apart explains the answer.
		name:    "a boundary explains it",
		record:  `{"identifier": "ox-2022", "constraints_meta": [{"type": "explicit_year", "value": 2022}, {"type": "month", "value": 2}, {"type": "first_day_of_month", "value": true}, {"type": "chinese_zodiac", "value": "Ox"}], "solutions": ["2022-02-01"], "year_range": [1950, 2050]}`,
		verdict: VerdictWrong, cause: CauseLunarTable, solved: []string{},
	},
	{
		// Lunar month 13 does not exist: no day satisfies the constraint, so
		// the puzzle has no solution, and the published None agrees.
		name:    "lunar month 13, published none",
		record:  `{"identifier": "m13", "constraints_meta": [{"type": "explicit_year", "value": 2020}, {"type": "lunar_month", "value": 13}], "solutions": [], "year_range": [1950, 2050]}`,
		verdict: VerdictAgree, cause: CauseNoDay, solved: []string{},
	},
	{
		// The same with a date published: wrong, for the same reason.
		name:    "lunar month 13, published a date",
		record:  `{"identifier": "m13-date", "constraints_meta": [{"type": "explicit_year", "value": 2020}, {"type": "lunar_month", "value": 13}], "solutions": ["2020-05-01"], "year_range": [1950, 2050]}`,
		verdict: VerdictWrong, cause: CauseNoDay, solved: []string{},
	},
	{
		// No month has a 32nd day, and no weekday a sixth occurrence in one.
		name:    "the 32nd day",
		record:  `{"constraints_meta": [{"type": "day_of_month_specific", "value": 32}, {"type": "weekday_in_month", "direction": "forward", "weekday": "Monday", "n": 6}], "solutions": [], "year_range": [2000, 2001]}`,
		verdict: VerdictAgree, cause: CauseNoDay, solved: []string{},
	},
	{
		// A numeric identifier names the record as written.
		name:    "numeric identifier",
		record:  `{"identifier": 42, "constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "month", "value": 2}, {"type": "last_day_of_month", "value": true}], "solutions": ["2000-02-29"], "year_range": [1990, 2010]}`,
		verdict: VerdictAgree, solved: []string{"2000-02-29"},
	},
}

func TestImportPublishedHandWorked(t *testing.T) {
	var body bytes.Buffer
	for _, h := range handWorked {
		body.WriteString(h.record + "\n")
	}
	got, sum := importSample(t, body.Bytes())
	require.Len(t, got, len(handWorked))
	for i, h := range handWorked {
		g := got[i]
		assert.Equal(t, h.verdict, g.Verdict, "%s: %v", h.name, g.Err)
		assert.Equal(t, h.cause, g.Cause, h.name)
		assert.Equal(t, h.solved, g.Solved, h.name)
		assert.Equal(t, h.undecided, g.Undecided, h.name)
		assert.Equal(t, len(h.undecided) == 0, g.Decided(), h.name)
		if h.cause == CauseNoDay {
			var nd *NoDayError
			require.ErrorAs(t, g.Err, &nd, h.name)
			assert.ErrorContains(t, g.Err, "so no day satisfies it", h.name)
			// Rendered in words a solver can check: none of the dates.
			assert.NotEmpty(t, g.Puzzle.Constraints[nd.Fact-1], h.name)
		}
	}
	assert.Equal(t, "m13", got[8].ID)
	assert.Equal(t, "published-11", got[10].ID, "no identifier: named by position")
	assert.Equal(t, "42", got[11].ID)
	assert.Equal(t, "It is in month 13 of the Chinese lunar calendar (not a leap month).", got[8].Puzzle.Constraints[1])
	assert.Equal(t, "It is the 32nd day of its month.", got[10].Puzzle.Constraints[0])
	assert.Equal(t, "It is the 6th Monday of its month.", got[10].Puzzle.Constraints[1])
	assert.Equal(t, 3, sum.NoDay)
	assert.Equal(t, 2, sum.AgreeNoDay, "m13 and the 32nd day agree on no solution; m13-date is wrong")
	assert.Equal(t, len(handWorked), sum.Records)
}

// TestImportPublishedYearSetReading: the published record of an Olympic
// year (2020, whose Games were held in 2021) agrees when year sets are read
// by their rule, and is wrong (year_set_rule) when read by the editions
// held, the default.
func TestImportPublishedYearSetReading(t *testing.T) {
	// July 24th of a Summer Olympic year, 2018–2022. Held: 2021 (the Tokyo
	// Games, postponed). By rule: every fourth year from 1896, so 2020.
	rec := []byte(`[{"identifier": "tokyo", "constraints_meta": [{"type": "event", "name": "summer_olympics"}, {"type": "month", "value": 7}, {"type": "day_of_month_specific", "value": 24}], "solutions": ["2020-07-24"], "year_range": [2018, 2022]}]`)
	for _, tc := range []struct {
		reading, verdict, cause, solved, wording string
	}{
		{"", VerdictWrong, CauseYearSetRule, "2021-07-24", "were held"},
		{YearSetsHeld, VerdictWrong, CauseYearSetRule, "2021-07-24", "were held"},
		{YearSetsRule, VerdictAgree, "", "2020-07-24", "were scheduled in their regular rhythm"},
	} {
		var got []*Imported
		_, err := ImportPublished(context.Background(), bytes.NewReader(rec), "p.json", ImportOptions{YearSetReading: tc.reading}, func(im *Imported) error {
			got = append(got, im)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, tc.verdict, got[0].Verdict, tc.reading)
		assert.Equal(t, tc.cause, got[0].Cause, tc.reading)
		assert.Equal(t, []string{tc.solved}, got[0].Solved, tc.reading)
		assert.Contains(t, got[0].Puzzle.Constraints[0], tc.wording, tc.reading)
	}
}
