package puzzles

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoDoubtfulLunarFactsDoNotClearEachOther: over 1890, whose new year
// (1890-01-21 in the table) is disputed, 1890-02-01 is in month 1 of the
// Tiger year by the table, and in month 12 of the Ox year if the new year
// falls a new moon later (1890-02-19). Either lunar fact alone leaves it
// undecidable; both together must too, since a calendar with the later new
// year makes both true at once.
func TestTwoDoubtfulLunarFactsDoNotClearEachOther(t *testing.T) {
	solver := NewSolver()
	base := []Fact{{Kind: KindMonth, Month: 2}, {Kind: KindDay, Day: 1}}
	ox := Fact{Kind: KindZodiac, Animal: "Ox"}
	m12 := Fact{Kind: KindLunar, Month: 12}
	for name, facts := range map[string][]Fact{
		"Ox year":        append(base[:2:2], ox),
		"lunar month 12": append(base[:2:2], m12),
		"both":           append(base[:2:2], ox, m12),
		"both reversed":  append(base[:2:2], m12, ox),
	} {
		_, err := solver.Solve(facts, 1890, 1890)
		var ue *UndecidableError
		require.ErrorAs(t, err, &ue, name)
		assert.True(t, ue.Disputed, name)
		assert.Equal(t, "1890-02-01", ue.Day, name)
		assert.Equal(t, 3, ue.Fact, name)
	}
}

// TestGeneratorKeepsNoPuzzleTheDisputeDecides: the generator's check reads
// the lunar facts together too, so the 1890 puzzle above is never kept, while
// a lunar fact months away from the disputed new year is.
func TestGeneratorKeepsNoPuzzleTheDisputeDecides(t *testing.T) {
	g, err := NewGenerator(testOptions(1, func(o *Options) { o.FromYear, o.ToYear = 1890, 1890 }))
	require.NoError(t, err)
	feb1 := []Fact{{Kind: KindMonth, Month: 2}, {Kind: KindDay, Day: 1}}
	ox := Fact{Kind: KindZodiac, Animal: "Ox"}
	m12 := Fact{Kind: KindLunar, Month: 12}
	assert.False(t, g.undisputed(append(feb1[:2:2], ox)))
	assert.False(t, g.undisputed(append(feb1[:2:2], m12)))
	assert.False(t, g.undisputed(append(feb1[:2:2], ox, m12)), "two doubtful facts must not clear each other")
	// 1890-06-01 is in lunar month 4 (May 19 to June 16) whatever the new
	// year's date.
	assert.True(t, g.undisputed([]Fact{{Kind: KindMonth, Month: 6}, {Kind: KindDay, Day: 1}, {Kind: KindLunar, Month: 4}}))
	// With the allow policy the table decides.
	g, err = NewGenerator(testOptions(1, func(o *Options) { o.FromYear, o.ToYear, o.Disputed = 1890, 1890, DisputedAllow }))
	require.NoError(t, err)
	assert.True(t, g.undisputed(append(feb1[:2:2], ox, m12)))
}

// TestUndecidableNamesEveryFactAndDay: an undecidable answer's message
// names every lunar fact in doubt, every day in doubt (disputed, and outside
// the table) and every day in the answer for sure, runs of days as ranges.
func TestUndecidableNamesEveryFactAndDay(t *testing.T) {
	solver := NewSolver()
	for _, tc := range []struct {
		name     string
		facts    []Fact
		from, to int
		want     string
		sure     []string
		doubtful []string
	}{
		{
			// 1890-02-01: month 1 of the Tiger year by the table, month 12 of
			// the Ox year if the new year is 1890-02-19: both facts in doubt.
			name:  "two facts in doubt on one day",
			facts: []Fact{{Kind: KindMonth, Month: 2}, {Kind: KindDay, Day: 1}, {Kind: KindZodiac, Animal: "Ox"}, {Kind: KindLunar, Month: 12}},
			from:  1890, to: 1890,
			want:     "facts 3 (zodiac) and 4 (lunar_month): undecidable: the answer depends on 1890-02-01, a day whose lunar month or year is disputed; in the answer under every reading: none",
			sure:     []string{},
			doubtful: []string{"1890-02-01"},
		},
		{
			// The Ox year began 1889-01-31 (sure); 1890-02-01 to 09 are in it
			// only if the next new year is 1890-02-19.
			name:  "runs of days as ranges",
			facts: []Fact{{Kind: KindZodiac, Animal: "Ox"}, {Kind: KindMonth, Month: 2}, {Kind: KindDayRange, Op: "before", Day: 10}},
			from:  1889, to: 1890,
			want: "fact 1 (zodiac): undecidable: the answer depends on 1890-02-01 to 1890-02-09, days whose lunar month or year is disputed; " +
				"in the answer under every reading: 1889-02-01 to 1889-02-09",
			sure:     []string{"1889-02-01", "1889-02-02", "1889-02-03", "1889-02-04", "1889-02-05", "1889-02-06", "1889-02-07", "1889-02-08", "1889-02-09"},
			doubtful: []string{"1890-02-01", "1890-02-02", "1890-02-03", "1890-02-04", "1890-02-05", "1890-02-06", "1890-02-07", "1890-02-08", "1890-02-09"},
		},
		{
			// 1800-01-10 precedes the table; 1808's new year is disputed.
			name:  "unknown and disputed days",
			facts: []Fact{{Kind: KindMonth, Month: 1}, {Kind: KindDay, Day: 10}, {Kind: KindLunar, Month: 12}},
			from:  1800, to: 1810,
			want: "fact 3 (lunar_month): undecidable: the answer depends on 1808-01-10, a day whose lunar month or year is disputed, " +
				"and the lunar calendar is not known on 1800-01-10, a day the other facts allow; " +
				"in the answer under every reading: 1802-01-10, 1803-01-10, 1805-01-10, 1807-01-10 and 1810-01-10",
			sure:     []string{"1802-01-10", "1803-01-10", "1805-01-10", "1807-01-10", "1810-01-10"},
			doubtful: []string{"1800-01-10", "1808-01-10"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := solver.Solve(tc.facts, tc.from, tc.to)
			var ue *UndecidableError
			require.ErrorAs(t, err, &ue)
			assert.EqualError(t, err, tc.want)
			assert.Equal(t, tc.sure, ue.Sure)
			assert.Equal(t, tc.doubtful, ue.Doubtful)
		})
	}
}

func TestDayRuns(t *testing.T) {
	for _, tc := range []struct {
		days []string
		want string
	}{
		{[]string{"2000-01-01"}, "2000-01-01"},
		{[]string{"2000-01-01", "2000-01-02"}, "2000-01-01 and 2000-01-02"},
		{[]string{"1999-12-30", "1999-12-31", "2000-01-01", "2000-01-05"}, "1999-12-30 to 2000-01-01 and 2000-01-05"},
		{[]string{"2000-02-28", "2000-02-29", "2000-03-01", "2000-03-03", "2000-03-04", "2000-03-05", "2000-03-06"}, "2000-02-28 to 2000-03-01 and 2000-03-03 to 2000-03-06"},
	} {
		assert.Equal(t, tc.want, dayRuns(tc.days))
	}
}
