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
