package puzzles

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldEditions are the years each built-in set's event was held, listed
// by hand from the public records (not from the rules of yearsets.csv).
var heldEditions = map[string][]int{
	"summer_olympics": {1896, 1900, 1904, 1908, 1912, 1920, 1924, 1928, 1932, 1936, 1948, 1952, 1956, 1960, 1964, 1968,
		1972, 1976, 1980, 1984, 1988, 1992, 1996, 2000, 2004, 2008, 2012, 2016, 2021, 2024},
	"winter_olympics": {1924, 1928, 1932, 1936, 1948, 1952, 1956, 1960, 1964, 1968, 1972, 1976, 1980, 1984, 1988, 1992,
		1994, 1998, 2002, 2006, 2010, 2014, 2018, 2022},
	"world_cup": {1930, 1934, 1938, 1950, 1954, 1958, 1962, 1966, 1970, 1974, 1978, 1982, 1986, 1990, 1994, 1998,
		2002, 2006, 2010, 2014, 2018, 2022},
}

// TestDefaultYearSets checks the built-in sets against the editions as
// listed by hand from the public records, not from the rules in the file.
func TestDefaultYearSets(t *testing.T) {
	want := heldEditions
	sets := DefaultYearSets()
	require.Len(t, sets, len(want))
	for _, s := range sets {
		assert.Equal(t, want[s.Name], s.Years, s.Name)
		assert.Equal(t, s.Years[len(s.Years)-1], s.Through, s.Name)
		f := s.fact()
		require.NoError(t, checkYearSet(&f))
	}
}

// TestScheduledYearsAreThePublishedRule: read by rule, the built-in Summer
// Olympic and World Cup sets are the published generator's arithmetic (every
// fourth year from 1896, without 1916, 1940 and 1944; every fourth from
// 1930, without 1942 and 1946), written out here by hand, through 2050.
func TestScheduledYearsAreThePublishedRule(t *testing.T) {
	byName := map[string]YearSet{}
	for _, s := range DefaultYearSets() {
		byName[s.Name] = s
	}
	summer := byName["summer_olympics"]
	assert.Equal(t, []int{1896, 1900, 1904, 1908, 1912, 1920, 1924, 1928, 1932, 1936, 1948, 1952, 1956, 1960, 1964, 1968,
		1972, 1976, 1980, 1984, 1988, 1992, 1996, 2000, 2004, 2008, 2012, 2016, 2020, 2024, 2028, 2032, 2036, 2040, 2044, 2048},
		summer.ScheduledYears(1, 2050))
	cup := byName["world_cup"]
	assert.Equal(t, []int{1930, 1934, 1938, 1950, 1954, 1958, 1962, 1966, 1970, 1974, 1978, 1982, 1986, 1990, 1994, 1998,
		2002, 2006, 2010, 2014, 2018, 2022, 2026, 2030, 2034, 2038, 2042, 2046, 2050}, cup.ScheduledYears(1, 2050))
	winter := byName["winter_olympics"]
	assert.Equal(t, []int{1988, 1992, 1994, 1998, 2002, 2006, 2010, 2014, 2018, 2022, 2026, 2030}, winter.ScheduledYears(1985, 2030))
	f := summer.scheduledFact(2030)
	require.NoError(t, checkYearSet(&f))
	assert.Equal(t, Scheduled, f.Relation)
	assert.Equal(t, 2030, f.Year)
	f.Relation = "held"
	assert.ErrorContains(t, checkYearSet(&f), `relation "held" is not scheduled or empty`)
}

func TestParseYearSets(t *testing.T) {
	const header = "set,event,first,every,through,cancelled,moved\n"
	sets, err := ParseYearSets(strings.NewReader(header+
		"games,the Games,2000,2,2010,2004,2008>2009\n"+
		"games,the Games,2012,3,2018,,\n"+
		"fair,the Fair,1990,5,2000,,\n"), "sets.csv")
	require.NoError(t, err)
	assert.Equal(t, []YearSet{
		{Name: "games", Event: "the Games", Through: 2018, Years: []int{2000, 2002, 2006, 2009, 2010, 2012, 2015, 2018},
			Rules: []YearRule{{First: 2000, Every: 2, Through: 2010, Cancelled: []int{2004}}, {First: 2012, Every: 3, Through: 2018}}},
		{Name: "fair", Event: "the Fair", Through: 2000, Years: []int{1990, 1995, 2000}, Rules: []YearRule{{First: 1990, Every: 5, Through: 2000}}},
	}, sets)
	// By rule: the moved edition counts in 2008, the year it was scheduled
	// for, not 2009; the cancelled 2004 stays out; the latest rhythm (every
	// third year from 2012) goes on past 2018.
	assert.Equal(t, []int{2000, 2002, 2006, 2008, 2010, 2012, 2015, 2018, 2021, 2024}, sets[0].ScheduledYears(1990, 2025))
	assert.Equal(t, []int{2006, 2008}, sets[0].ScheduledYears(2005, 2009))
	assert.Equal(t, []int{1995, 2000, 2005}, sets[1].ScheduledYears(1991, 2009))
	// A file without the optional columns reads too.
	sets, err = ParseYearSets(strings.NewReader("set,event,first,every,through\nx,the X,1,1,3\n"), "sets.csv")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, sets[0].Years)

	for _, tc := range []struct{ name, body, err string }{
		{"empty", "", "sets.csv: empty: want a header line"},
		{"no rows", header, "sets.csv: no year sets after the header"},
		{"unknown column", "set,event,first,every,through,when\n", `line 1, column 31: unknown column "when"`},
		{"missing column", "set,event,first,every\n", `missing column "through"`},
		{"bad name", header + "a b,the A,2000,4,2020,,\n", `line 2, column 1 (set): "a b": want a name`},
		{"no event", header + "a,,2000,4,2020,,\n", "line 2, column 3 (event): empty"},
		{"bad first", header + "a,the A,20x0,4,2020,,\n", `line 2, column 9 (first): "20x0" is not a year`},
		{"through before first", header + "a,the A,2000,4,1990,,\n", "(through): 1990 is before first 2000"},
		{"bad every", header + "a,the A,2000,0,2020,,\n", `(every): "0" is not a number of years`},
		{"cancelled off rule", header + "a,the A,2000,4,2020,2002,\n", `(cancelled): "2002" is not a year of the rule`},
		{"moved bad form", header + "a,the A,2000,4,2020,,2004-2005\n", `(moved): "2004-2005" is not FROM>TO`},
		{"moved off rule", header + "a,the A,2000,4,2020,,2001>2002\n", "(moved): 2001 is not a year of the rule"},
		{"moved past through", header + "a,the A,2000,4,2020,,2020>2021\n", "(moved): 2021 is after through 2020"},
		{"event differs", header + "a,the A,2000,4,2020,,\na,the B,2024,4,2028,,\n", `line 3, column 3 (event): "the B": set a is "the A" on an earlier line`},
		{"short row", header + "a,the A,2000\n", "line 2: 3 fields, the header has 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseYearSets(strings.NewReader(tc.body), "sets.csv")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.True(t, strings.HasPrefix(err.Error(), "sets.csv: "), err.Error())
		})
	}
}

// TestYearSetFacts: a year_set fact holds in the years an edition was held,
// and its wording says so; the Tokyo Games count in 2021, not 2020.
func TestYearSetFacts(t *testing.T) {
	var summer YearSet
	for _, s := range DefaultYearSets() {
		if s.Name == "summer_olympics" {
			summer = s
		}
	}
	f := summer.fact()
	solver := NewSolver()
	got, err := solver.Solve([]Fact{f, {Kind: KindMonth, Month: 7}, {Kind: KindDay, Day: 23}}, 2015, 2030)
	require.NoError(t, err)
	assert.Equal(t, []string{"2016-07-23", "2021-07-23", "2024-07-23"}, got, "2020 was not a year the Games were held; 2028 is past what the set counts")
	u, err := solver.universe(2015, 2030)
	require.NoError(t, err)
	assert.Equal(t, "The year is one of 2016, 2021 or 2024.", u.explicit(&f))
	assert.Equal(t, "It is in a year in which the Summer Olympic Games were held (an edition counts in the year it actually took place; cancelled editions do not count, nor any after 2024).", u.implicit(&f))

	bad := f
	bad.Years = []int{2000, 1996}
	_, err = solver.Solve([]Fact{bad}, 1990, 2000)
	assert.ErrorContains(t, err, "fact 1 (year_set): year set \"the Summer Olympic Games\": years are not increasing")
	bad = f
	bad.Year = 2000
	_, err = solver.Solve([]Fact{bad}, 1990, 2000)
	assert.ErrorContains(t, err, "last year counted 2000 is before its year 2024")

	opt := testOptions(1, func(o *Options) { o.YearSets = append(DefaultYearSets(), summer) })
	_, err = NewGenerator(opt)
	assert.ErrorContains(t, err, "summer_olympics")
}

// TestPublishedKindsAreGenerated: over the published range, generation
// draws year-set facts and n-th to last weekdays besides the rest.
func TestPublishedKindsAreGenerated(t *testing.T) {
	g, err := NewGenerator(testOptions(4, func(o *Options) { o.FromYear, o.ToYear = 1801, 2050 }))
	require.NoError(t, err)
	var yearSets, toLast int
	for i := range 600 {
		p, err := g.Generate(int64(i))
		require.NoError(t, err)
		for j, f := range p.Facts {
			switch {
			case f.Kind == KindYearSet:
				yearSets++
			case f.Kind == KindNth && f.N <= -2:
				toLast++
				assert.Regexp(t, `^It is the (second|third|fourth|fifth)-to-last [A-Z][a-z]+day of its month\.$`, p.Constraints[j])
			}
		}
	}
	assert.Greater(t, yearSets, 20)
	assert.Greater(t, toLast, 20)
}
