package puzzles

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{VerdictUndecidable, "lunar_disputed", nil},               // the 6th month of 1933 starts on a disputed day
		{VerdictNotConverted, "type_western_zodiac", nil},         // no counterpart
		{VerdictNotConverted, "unknown_person", nil},              // not in the knowledge base
		{VerdictWrong, CauseLunarTable, []string{}},               // the Rabbit year began on 2023-01-22
		{VerdictWrong, CauseUnexplained, []string{"2000-01-01"}},  // a published answer no reading explains
		{VerdictAgree, "", []string{"1990-06-17", "1994-06-18", "1994-06-19"}},
		{VerdictAgree, "", []string{}},
	}
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, i+1, g.Record)
		assert.Equal(t, "p"+strings.TrimPrefix(g.ID, "p"), g.ID)
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
		assert.Len(t, p.Constraints, len(p.Facts))
		assert.Len(t, p.Explicit, len(p.Facts))
		assert.Contains(t, p.Messages[len(p.Messages)-1].Content, p.Constraints[0])
		if g.Verdict != VerdictUndecidable {
			assert.Equal(t, g.Solved, p.Solutions)
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
	var records []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &records))
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

func TestImportPublishedErrors(t *testing.T) {
	rec := func(meta string) string {
		return `[{"constraints_meta": [{"type": "explicit_year", "value": 2000}, ` + meta + `], "solutions": [], "year_range": [1990, 2010]}]`
	}
	for _, tc := range []struct{ name, body, err string }{
		{"empty", "", "sample.json: empty"},
		{"not json", "[{", "sample.json: not a JSON array of records"},
		{"no records", "[]", "sample.json: no records"},
		{"bad jsonl", "{\"constraints_meta\": []}\n{", "sample.json: record 2"},
		{"no year range", `[{"constraints_meta": [{"type": "decade", "value": 1990}], "solutions": []}]`, "record 1: year_range: want [first, last] years"},
		{"no constraints", `[{"constraints_meta": [], "solutions": [], "year_range": [1990, 2000]}]`, "record 1: constraints_meta: no constraints"},
		{"no type", rec(`{"value": 3}`), `record 1: constraint 2: field "type": want a non-empty string, have nothing`},
		{"bad value", rec(`{"type": "month", "value": "May"}`), `record 1: constraint 2: field "value": want an integer, have "May"`},
		{"bad month", rec(`{"type": "month", "value": 13}`), "record 1: constraint 2 (month): month 13 is not from 1 to 12"},
		{"bad weekday", rec(`{"type": "weekday", "value": "Funday"}`), `record 1: constraint 2: field "value": "Funday" is not a weekday name`},
		{"bad direction", rec(`{"type": "weekday_in_month", "direction": "up", "weekday": "Monday", "n": 1}`), `field "direction": "up" is not forward or backward`},
		{"bad n", rec(`{"type": "weekday_in_month", "direction": "backward", "weekday": "Monday", "n": 6}`), "n -6 is not from 1 to 5"},
		{"bad operator", rec(`{"type": "day_of_month", "operator": "=", "value": 3}`), `field "operator": "=" is not < or >`},
		{"bad animal", rec(`{"type": "chinese_zodiac", "value": "Cat"}`), `field "value": "Cat" is not a zodiac animal`},
		{"bad level", rec(`{"type": "kb_event", "event": "x", "aspect": "start", "level": "week", "value": 3}`), `field "level": "week" is not year, month or day`},
		{"id named", `[{"id": 7, "constraints_meta": [{"type": "month"}], "solutions": [], "year_range": [1990, 2010]}]`, "record 1 (id 7): constraint 1"},
		{"range too wide", `[{"constraints_meta": [{"type": "month", "value": 1}], "solutions": [], "year_range": [1, 5000]}]`, "record 1: year_range: years 1-5000: at most 2000 years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportPublished(context.Background(), strings.NewReader(tc.body), "sample.json", ImportOptions{}, func(*Imported) error { return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
