package puzzles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

func TestCalendarMatchesTimePackage(t *testing.T) {
	for _, d := range []string{"0001-01-01", "0004-02-29", "1582-10-04", "1600-02-29", "1900-02-28", "1900-03-01", "2000-02-29", "2024-12-31", "9999-12-31"} {
		tm, err := time.Parse(time.DateOnly, d)
		require.NoError(t, err)
		n, err := parseDate(d)
		require.NoError(t, err, d)
		assert.Equal(t, d, formatDate(n))
		assert.Equal(t, (int(tm.Weekday())+6)%7+1, weekdayOf(n), d)
	}
	start := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < dayNumber(9999, 12, 31); n += 997 {
		tm := start.AddDate(0, 0, n)
		y, m, d := civil(n)
		require.Equal(t, tm.Format(time.DateOnly), fmt.Sprintf("%04d-%02d-%02d", y, m, d), n)
		require.Equal(t, n, dayNumber(y, m, d))
		require.Equal(t, (int(tm.Weekday())+6)%7+1, weekdayOf(n))
	}
	for _, bad := range []string{"", "1999", "1999-02-29", "1999-13-01", "0000-01-01", "99-01-01", "1999-1-01", "1999-01-01x"} {
		_, err := parseDate(bad)
		assert.Error(t, err, bad)
	}
}

// randomFact draws any fact of any kind, with parameters drawn
// without regard to a date, so that many conjunctions are empty.
func randomFact(rng *rand.Rand, u *universe, kb []Event) Fact {
	for {
		k := Kinds[rng.IntN(len(Kinds))]
		if (k == KindZodiac || k == KindLunar) && !u.lunarAny {
			continue
		}
		f := Fact{Kind: k}
		year := min(max(u.fromYear-2+rng.IntN(u.toYear-u.fromYear+5), 1), MaxYear)
		switch k {
		case KindYear:
			f.Year = year
		case KindDecade:
			f.Year = year / 10 * 10
			if rng.IntN(8) == 0 {
				f.Year += 5 // not a decade: no year is in it
			}
		case KindLeapYear:
			f.Leap = rng.IntN(2) == 0
		case KindZodiac:
			f.Animal = ZodiacAnimals[rng.IntN(12)]
		case KindYearSet:
			sets := DefaultYearSets()
			f = sets[rng.IntN(len(sets))].fact()
		case KindMonth:
			f.Month = rng.IntN(14) // 0 and 13 name no month
		case KindSeason:
			s := DefaultSeasons()[rng.IntN(4)]
			f.Season, f.Months = s.Name, s.Months
		case KindLunar:
			f.Month, f.Leap = 1+rng.IntN(12), rng.IntN(5) == 0
		case KindWeekday:
			f.Weekday = 1 + rng.IntN(7)
		case KindNth:
			f.Weekday, f.N = 1+rng.IntN(7), rng.IntN(13)-6 // -6..6: 0 and ±6 name no day
		case KindDay:
			f.Day = rng.IntN(32)
			if f.Day == 0 {
				f.Day = -1
			}
		case KindDayRange:
			f.Op, f.Day = [2]string{"before", "after"}[rng.IntN(2)], rng.IntN(35)-1 // -1..33: some bounds past the month's days
		case KindWeekdays:
			f.Weekdays = rng.Perm(7)[:2+rng.IntN(3)]
			for i := range f.Weekdays {
				f.Weekdays[i]++
			}
		case KindEvent:
			rel := kb[rng.IntN(len(kb))].relations()
			f = rel[rng.IntN(len(rel))]
		}
		return f
	}
}

// bruteForce enumerates every day of the universe against every fact.
func bruteForce(u *universe, facts []Fact) []string {
	out := []string{}
	for n := u.first; n < u.first+u.n; n++ {
		ok := true
		for i := range facts {
			if !u.holds(&facts[i], n) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, formatDate(n))
		}
	}
	return out
}

func TestSolverMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kb := DefaultKB()
	solver := NewSolverWith(SolverOptions{}) // set arithmetic only: no disputed days
	ranges := [][2]int{{1801, 1812}, {1900, 1903}, {1930, 1935}, {1998, 2004}, {2040, 2050}, {1580, 1590}, {1, 4}, {9990, 9999}, {1952, 1952}}
	var empty, some, noDay int
	for i := range 4000 {
		r := ranges[i%len(ranges)]
		u, err := solver.universe(r[0], r[1])
		require.NoError(t, err)
		facts := make([]Fact, 1+rng.IntN(4))
		for j := range facts {
			facts[j] = randomFact(rng, u, kb)
		}
		got, err := solver.Solve(facts, r[0], r[1])
		if errors.Is(err, ErrNoDay) {
			noDay++ // a value no day has: the empty answer, with the reason
		} else {
			require.NoError(t, err)
		}
		want := bruteForce(u, facts)
		require.Equal(t, want, got, "puzzle %d, years %v, facts %+v", i, r, facts)
		if len(want) == 0 {
			empty++
		} else {
			some++
		}
	}
	assert.Greater(t, noDay, 100, "and facts whose value no day has")
	assert.Greater(t, empty, 100, "the property test should cover empty answer sets")
	assert.Greater(t, some, 1000, "and non-empty ones")
}

func TestSolveRejectsBadFacts(t *testing.T) {
	solver := NewSolver()
	for _, tc := range []struct {
		name string
		fact Fact
		want string
	}{
		{"unknown kind", Fact{Kind: "moon"}, "unknown kind"},
		{"op", Fact{Kind: KindDayRange, Op: "around", Day: 3}, "op"},
		{"animal", Fact{Kind: KindZodiac, Animal: "Cat"}, "Cat"},
		{"relation", Fact{Kind: KindEvent, Relation: "near", Start: "1969-07-20"}, "relation"},
		{"precision", Fact{Kind: KindEvent, Relation: SameDay, Start: "1969-07"}, "YYYY-MM-DD"},
		{"order", Fact{Kind: KindEvent, Relation: During, Start: "1969-07-20", End: "1969-07-19"}, "before"},
		{"year set relation", Fact{Kind: KindYearSet, Event: "the Games", Years: []int{1968}, Year: 1968, Relation: During}, "relation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := solver.Solve([]Fact{{Kind: KindYear, Year: 1969}, tc.fact}, 1900, 2000)
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNoDay)
			assert.Contains(t, err.Error(), "fact 2")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A value its kind cannot name is no error: the fact holds on no day,
	// and the answer is empty.
	for _, tc := range []struct {
		name string
		fact Fact
		want string
	}{
		{"month", Fact{Kind: KindMonth, Month: 13}, "month 13 is not from 1 to 12"},
		{"lunar month", Fact{Kind: KindLunar, Month: 0}, "month 0 is not from 1 to 12"},
		{"weekday", Fact{Kind: KindWeekday, Weekday: 0}, "weekday 0 is not from 1 (Monday) to 7 (Sunday)"},
		{"nth", Fact{Kind: KindNth, Weekday: 1, N: 6}, "n 6 is not from 1 to 5 (from the start) or -1 to -5 (from the end, -1 the last)"},
		{"day", Fact{Kind: KindDay, Day: 32}, "day 32 is not from 1 to 31, or -1 for the last"},
		{"before the 1st", Fact{Kind: KindDayRange, Op: "before", Day: 1}, "no day of a month is before the 1st"},
		{"after the 31st", Fact{Kind: KindDayRange, Op: "after", Day: 40}, "no day of a month is after the 40th"},
		{"decade", Fact{Kind: KindDecade, Year: 1965}, "decade 1965 is not a multiple of 10 from 0 to 9990"},
		{"year", Fact{Kind: KindYear, Year: 0}, "year 0 is not from 1 to 9999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := solver.Solve([]Fact{{Kind: KindDecade, Year: 1960}, tc.fact}, 1900, 2000)
			var nd *NoDayError
			require.ErrorAs(t, err, &nd)
			assert.Equal(t, 2, nd.Fact)
			assert.Equal(t, tc.fact.Kind, nd.Kind)
			assert.ErrorContains(t, err, tc.want+", so no day satisfies it")
			assert.Equal(t, []string{}, got)
		})
	}
	// Bounds past the month's days that every day meets are kept as they are.
	got, err := solver.Solve([]Fact{{Kind: KindYear, Year: 2000}, {Kind: KindMonth, Month: 2}, {Kind: KindDayRange, Op: "before", Day: 40},
		{Kind: KindDayRange, Op: "after", Day: 27}}, 1900, 2000)
	require.NoError(t, err)
	assert.Equal(t, []string{"2000-02-28", "2000-02-29"}, got)
	_, err = solver.Solve([]Fact{{Kind: KindLunar, Month: 1}}, 1600, 1700)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lunar table")
	_, err = solver.Solve([]Fact{{Kind: KindLunar, Month: 1}}, 1700, 1900)
	assert.ErrorIs(t, err, ErrUndecidable, "a range the table covers in part decides only what it covers")
}

func testOptions(seed uint64, edit func(*Options)) Options {
	o := DefaultOptions()
	o.Seed = seed
	if edit != nil {
		edit(&o)
	}
	return o
}

func TestGeneratedHaveTheirTargetCount(t *testing.T) {
	cases := []struct {
		name  string
		opt   Options
		count int
		brute bool
	}{
		{"defaults", testOptions(1, nil), 600, false},
		{"with none", testOptions(2, func(o *Options) { o.MinSolutions = 0 }), 350, false},
		{"small range", testOptions(3, func(o *Options) { o.FromYear, o.ToYear = 1950, 1960 }), 300, true},
		{"no lunar table", testOptions(4, func(o *Options) { o.FromYear, o.ToYear = 1700, 1790 }), 300, false},
		{"few facts", testOptions(5, func(o *Options) { o.MinFacts, o.MaxFacts = 2, 3 }), 300, false},
		{"many facts", testOptions(6, func(o *Options) { o.MinFacts, o.MaxFacts = 7, 8 }), 200, false},
		{"some kinds", testOptions(7, func(o *Options) {
			o.Kinds = []Kind{KindYear, KindMonth, KindWeekday, KindDay}
			o.MinFacts, o.MaxFacts = 3, 4
		}), 200, false},
		{"one solution", testOptions(8, func(o *Options) { o.MinSolutions, o.MaxSolutions = 6, 6 }), 200, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGenerator(tc.opt)
			require.NoError(t, err)
			solver := NewSolver()
			u := g.sh.u
			for i := range int64(tc.count) {
				p, err := g.Generate(i)
				require.NoError(t, err)
				want := tc.opt.MinSolutions + int(i)%(tc.opt.MaxSolutions-tc.opt.MinSolutions+1)
				require.Equal(t, want, p.Target)
				require.Len(t, p.Solutions, want, "puzzle %d", i)
				got, err := solver.Solve(p.Facts, tc.opt.FromYear, tc.opt.ToYear)
				require.NoError(t, err)
				require.Equal(t, p.Solutions, got, "puzzle %d", i)
				if tc.brute {
					require.Equal(t, p.Solutions, bruteForce(u, p.Facts), "puzzle %d", i)
				}
				require.GreaterOrEqual(t, len(p.Facts), tc.opt.MinFacts)
				require.LessOrEqual(t, len(p.Facts), tc.opt.MaxFacts)
				require.Len(t, p.Constraints, len(p.Facts))
				require.Len(t, p.Explicit, len(p.Facts))
				kinds := map[Kind]int{}
				levels := map[Level]int{}
				for _, f := range p.Facts {
					kinds[f.Kind]++
					levels[f.Level]++
					if tc.opt.Kinds != nil && f.Kind != KindEvent {
						require.Contains(t, tc.opt.Kinds, f.Kind)
					}
					if !u.lunarAny {
						require.NotContains(t, []Kind{KindZodiac, KindLunar}, f.Kind)
					}
				}
				require.Equal(t, 1, kinds[KindEvent], "one event fact")
				for k, n := range kinds {
					require.Equal(t, 1, n, "kind %s used twice", k)
				}
				if tc.opt.Kinds == nil {
					lo, hi := len(p.Facts), 0
					for _, l := range allLevels {
						lo, hi = min(lo, levels[l]), max(hi, levels[l])
					}
					require.LessOrEqual(t, hi-lo, 1, "levels balanced: %v", levels)
				}
			}
		})
	}
}

func TestAreDeterministicPerIndex(t *testing.T) {
	opt := testOptions(42, nil)
	collect := func(r Range, workers int) map[int64]*Puzzle {
		out := map[int64]*Puzzle{}
		var last int64 = -1
		_, err := Generate(context.Background(), opt, r, workers, func(p *Puzzle) error {
			require.Greater(t, p.Index, last, "index order")
			last = p.Index
			out[p.Index] = p
			return nil
		})
		require.NoError(t, err)
		return out
	}
	all := collect(Range{Count: 300}, 1)
	require.Len(t, all, 300)
	parallel := collect(Range{Count: 300}, 3)
	require.Equal(t, all, parallel)
	for s := range 3 {
		shard := collect(Range{Count: 300, Shard: shard.Shard{Index: s, Count: 3}}, 2)
		require.Len(t, shard, 100)
		for i, p := range shard {
			require.Equal(t, int(i%3), s)
			require.Equal(t, all[i], p)
		}
	}
	tail := collect(Range{Start: 250, Count: 50}, 2)
	for i, p := range tail {
		require.Equal(t, all[i], p)
	}
	other := collect(Range{Count: 20}, 1)
	opt.Seed = 43
	differ := 0
	for i, p := range collect(Range{Count: 20}, 1) {
		if !slices.Equal(p.Constraints, other[i].Constraints) {
			differ++
		}
	}
	assert.Greater(t, differ, 15, "another seed gives other puzzles")
}

var reCache = map[string]*regexp.Regexp{}

// re compiles a pattern once.
func re(p string) *regexp.Regexp {
	if r, ok := reCache[p]; ok {
		return r
	}
	reCache[p] = regexp.MustCompile(p)
	return reCache[p]
}

// explicitSet reads an explicit rendering back into a set of dates by
// brute force over the universe: the test's own reading of the wording.
func explicitSet(t *testing.T, u *universe, text string) []string {
	t.Helper()
	month := func(name string) int {
		i := slices.Index(monthNames[:], name)
		require.Positive(t, i, "month %q in %q", name, text)
		return i
	}
	weekday := func(name string) int {
		i := slices.Index(weekdayNames[:], name)
		require.Positive(t, i, "weekday %q in %q", name, text)
		return i
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	date := func(s string) int {
		n, err := parseDate(s)
		require.NoError(t, err, text)
		return n
	}
	var pred func(n, y, m, d, wd, dim int) bool
	switch {
	case re(`^The year is (\d+)\.$`).MatchString(text):
		y0 := atoi(re(`\d+`).FindString(text))
		pred = func(_, y, _, _, _, _ int) bool { return y == y0 }
	case re(`^The year is between (\d+) and (\d+) \(both included\)\.$`).MatchString(text):
		m := re(`(\d+) and (\d+)`).FindStringSubmatch(text)
		a, b := atoi(m[1]), atoi(m[2])
		pred = func(_, y, _, _, _, _ int) bool { return y >= a && y <= b }
	case strings.HasPrefix(text, "The year is one of "):
		var ys []int
		for _, y := range re(`\d+`).FindAllString(text, -1) {
			ys = append(ys, atoi(y))
		}
		pred = func(_, y, _, _, _, _ int) bool { return slices.Contains(ys, y) }
	case text == "The year is a leap year." || text == "The year is not a leap year.":
		want := text == "The year is a leap year."
		pred = func(_, y, _, _, _, _ int) bool { return isLeap(y) == want }
	case strings.HasPrefix(text, "The month is "):
		var ms []int
		for _, name := range re(`[A-Z][a-z]+`).FindAllString(strings.TrimPrefix(text, "The month is "), -1) {
			ms = append(ms, month(name))
		}
		pred = func(_, _, m, _, _, _ int) bool { return slices.Contains(ms, m) }
	case strings.HasPrefix(text, "The date falls in one of these periods (both ends included): "):
		ps := re(`(\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)`).FindAllStringSubmatch(text, -1)
		require.NotEmpty(t, ps, text)
		periods := make([][2]int, len(ps))
		for i, p := range ps {
			periods[i] = [2]int{date(p[1]), date(p[2])}
		}
		pred = func(n, _, _, _, _, _ int) bool {
			for _, p := range periods {
				if n >= p[0] && n <= p[1] {
					return true
				}
			}
			return false
		}
	case re(`^The date is (\d{4}-\d\d-\d\d)\.$`).MatchString(text):
		d0 := date(text[12:22])
		pred = func(n, _, _, _, _, _ int) bool { return n == d0 }
	case re(`^The date is in ([A-Z][a-z]+) (\d+)\.$`).MatchString(text):
		m := re(`^The date is in ([A-Z][a-z]+) (\d+)\.$`).FindStringSubmatch(text)
		m0, y0 := month(m[1]), atoi(m[2])
		pred = func(_, y, m, _, _, _ int) bool { return y == y0 && m == m0 }
	case re(`^The date is between (\S+) and (\S+) \(both included\)\.$`).MatchString(text):
		m := re(`^The date is between (\S+) and (\S+) \(both`).FindStringSubmatch(text)
		a, b := date(m[1]), date(m[2])
		pred = func(n, _, _, _, _, _ int) bool { return n >= a && n <= b }
	case re(`^The month and day are ([A-Z][a-z]+) (\d+) \(in any year\)\.$`).MatchString(text):
		m := re(`^The month and day are ([A-Z][a-z]+) (\d+)`).FindStringSubmatch(text)
		m0, d0 := month(m[1]), atoi(m[2])
		pred = func(_, _, m, d, _, _ int) bool { return m == m0 && d == d0 }
	case re(`^It is the (first|second|third|fourth|fifth|last) ([A-Z][a-z]+) of its month\.$`).MatchString(text):
		m := re(`^It is the (\w+) (\w+) of`).FindStringSubmatch(text)
		w := weekday(m[2])
		if m[1] == "last" {
			// The last: no later one in the month.
			pred = func(_, _, _, d, wd, dim int) bool { return wd == w && d+7 > dim }
			break
		}
		k := slices.Index([]string{"first", "second", "third", "fourth", "fifth"}, m[1]) + 1
		pred = func(_, _, _, d, wd, _ int) bool { return wd == w && d > 7*(k-1) && d <= 7*k }
	case re(`^It is the (second|third|fourth|fifth)-to-last ([A-Z][a-z]+) of its month\.$`).MatchString(text):
		m := re(`^It is the (\w+)-to-last (\w+) of`).FindStringSubmatch(text)
		w := weekday(m[2])
		k := slices.Index([]string{"first", "second", "third", "fourth", "fifth"}, m[1]) + 1
		// The k-th to last: exactly k-1 more of its weekday follow in the month.
		pred = func(_, _, _, d, wd, dim int) bool {
			later := 0
			for e := d + 7; e <= dim; e += 7 {
				later++
			}
			return wd == w && later == k-1
		}
	case text == "It is the last day of its month.":
		pred = func(_, _, _, d, _, dim int) bool { return d == dim }
	case text == "It is the first day of its month.":
		pred = func(_, _, _, d, _, _ int) bool { return d == 1 }
	case re(`^It is the (\d+)(st|nd|rd|th) day of its month\.$`).MatchString(text):
		d0 := atoi(re(`\d+`).FindString(text))
		pred = func(_, _, _, d, _, _ int) bool { return d == d0 }
	case re(`^The day of the month is (before|after) the (\d+)(st|nd|rd|th)\.$`).MatchString(text):
		m := re(`(before|after) the (\d+)`).FindStringSubmatch(text)
		op, d0 := m[1], atoi(m[2])
		pred = func(_, _, _, d, _, _ int) bool { return op == "before" && d < d0 || op == "after" && d > d0 }
	case strings.HasPrefix(text, "It is a "):
		var ws []int
		for _, name := range re(`[A-Z][a-z]+day`).FindAllString(text, -1) {
			ws = append(ws, weekday(name))
		}
		require.NotEmpty(t, ws, text)
		pred = func(_, _, _, _, wd, _ int) bool { return slices.Contains(ws, wd) }
	default:
		t.Fatalf("no reading of explicit text %q", text)
	}
	out := []string{}
	for n := u.first; n < u.first+u.n; n++ {
		y, m, d := civil(n)
		if pred(n, y, m, d, weekdayOf(n), daysIn(y, m)) {
			out = append(out, formatDate(n))
		}
	}
	return out
}

func TestExplicitRenderingHasTheSameAnswers(t *testing.T) {
	for _, years := range [][2]int{{1960, 1975}, {1800, 1812}, {1700, 1720}} {
		t.Run(fmt.Sprint(years), func(t *testing.T) {
			opt := testOptions(9, func(o *Options) { o.FromYear, o.ToYear, o.MinSolutions = years[0], years[1], 0 })
			g, err := NewGenerator(opt)
			require.NoError(t, err)
			u := g.sh.u
			seen := map[Kind]bool{}
			for i := range int64(120) {
				p, err := g.Generate(i)
				require.NoError(t, err)
				all := make([]string, 0)
				for j, f := range p.Facts {
					seen[f.Kind] = true
					scratch := u.newScratch()
					want := []string{}
					u.factSet(&f, &scratch).members(func(k int) { want = append(want, formatDate(u.first+k)) })
					got := explicitSet(t, u, p.Explicit[j])
					require.Equal(t, want, got, "fact %+v rendered %q", f, p.Explicit[j])
					switch f.Kind {
					case KindEvent:
						require.Contains(t, p.Constraints[j], f.Event)
						require.NotContains(t, p.Constraints[j], f.Start, "the implicit text hides the date")
					case KindYearSet:
						require.Contains(t, p.Constraints[j], f.Event)
						require.NotRegexp(t, `\d{4}, \d{4}`, p.Constraints[j], "the implicit text does not list the years")
					case KindZodiac, KindLunar, KindDecade, KindSeason:
						require.NotEqual(t, p.Explicit[j], p.Constraints[j])
					default:
						require.Equal(t, p.Explicit[j], p.Constraints[j])
					}
					if j == 0 {
						all = got
					} else {
						keep := make(map[string]bool, len(got))
						for _, d := range got {
							keep[d] = true
						}
						all = slices.DeleteFunc(all, func(s string) bool { return !keep[s] })
					}
				}
				require.Equal(t, p.Solutions, all, "puzzle %d: the explicit constraints give the same answers", i)
			}
			assert.GreaterOrEqual(t, len(seen), 9, "kinds covered: %v", seen)
		})
	}
}

func TestPromptAndSeasons(t *testing.T) {
	opt := testOptions(3, func(o *Options) {
		o.Kinds = []Kind{KindSeason, KindYear, KindWeekday}
		o.MinFacts, o.MaxFacts = 4, 4
		o.Seasons = []Season{{"dry season", []int{11, 12, 1, 2, 3, 4}}, {"wet season", []int{5, 6, 7, 8, 9, 10}}}
		o.Prompt.System = "You are careful."
	})
	g, err := NewGenerator(opt)
	require.NoError(t, err)
	p, err := g.Generate(0)
	require.NoError(t, err)
	// The prompt's turns are the codebase's one message type.
	require.IsType(t, []conversation.Message{}, any(p.Messages))
	require.Len(t, p.Messages, 2)
	assert.Equal(t, conversation.RoleSystem, p.Messages[0].Role)
	assert.Equal(t, "You are careful.", p.Messages[0].Text())
	assert.Equal(t, conversation.RoleUser, p.Messages[1].Role)
	user := p.Messages[1].Text()
	assert.Contains(t, user, "only dates from 1900-01-01 to 2030-12-31 count")
	assert.Contains(t, user, "dry season is November, December, January, February, March and April; wet season is May")
	for i, c := range p.Constraints {
		assert.Contains(t, user, fmt.Sprintf("%d. %s\n", i+1, c))
	}
	assert.Contains(t, user, `"MY ANSWER: None"`)
	opt.Explicit = true
	g, err = NewGenerator(opt)
	require.NoError(t, err)
	e, err := g.Generate(0)
	require.NoError(t, err)
	assert.Equal(t, "explicit", e.Variant)
	assert.Equal(t, p.Solutions, e.Solutions)
	assert.NotContains(t, e.Messages[1].Text(), "dry season is")
	for i, c := range e.Explicit {
		assert.Contains(t, e.Messages[1].Text(), fmt.Sprintf("%d. %s", i+1, c))
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		key  string
		edit func(*Options)
	}{
		{"years", func(o *Options) { o.FromYear, o.ToYear = 2000, 1990 }},
		{"years", func(o *Options) { o.FromYear, o.ToYear = 1, 3000 }},
		{"solutions", func(o *Options) { o.MaxSolutions = 7 }},
		{"solutions", func(o *Options) { o.MinSolutions = -1 }},
		{"facts", func(o *Options) { o.MinFacts = 1 }},
		{"kinds", func(o *Options) { o.Kinds = []Kind{"moon_phase"} }},
		{"seasons", func(o *Options) { o.Seasons = []Season{{"a", []int{1}}, {"b", []int{1}}} }},
		{"kb", func(o *Options) { o.KB = nil }},
		{"lunar_disputed_years", func(o *Options) { o.DisputedYears = []int{1700} }},
		{"lunar_disputed_months", func(o *Options) { o.DisputedMonths = []LunarRef{{1933, 6, true}} }},
		{"year_set_reading", func(o *Options) { o.YearSetReading = "awarded" }},
		{"instruction", func(o *Options) { o.Prompt.Instruction = "no placeholder" }},
		{"max_attempts", func(o *Options) { o.MaxAttempts = 0 }},
	} {
		t.Run(tc.key, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			err := o.Validate()
			var oe *synth.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.key, oe.Key)
		})
	}
	o := DefaultOptions()
	o.KB = mustKB(t, "event,start,end\nthe year 1 of the Common Era,0001,\n")
	_, err := NewGenerator(o)
	require.ErrorContains(t, err, "no event of the knowledge base falls in 1900-2030")
}

func mustKB(t *testing.T, text string) []Event {
	t.Helper()
	kb, err := ParseKB(strings.NewReader(text), "kb.csv")
	require.NoError(t, err)
	return kb
}

func TestParseKB(t *testing.T) {
	kb := mustKB(t, "\ufeffStart,Event\n1969-07-20,the Moon landing\n1990,\"a year, quoted\"\n")
	require.Len(t, kb, 2)
	assert.Equal(t, "the Moon landing", kb[0].Event)
	assert.Equal(t, []Relation{SameDay, Anniversary, SameMonth, SameYear},
		relationsOf(kb[0].relations()))
	assert.Equal(t, []Relation{SameYear}, relationsOf(kb[1].relations()))
	p := mustKB(t, "event,start,end\ntwo weeks,2001-01-01,2001-01-14\na year,2001-01-01,2001-12-31\nlong,2001-01-01,2010-06-30\nyears,1990,1995\n")
	levels := func(e Event) []Level {
		var out []Level
		for _, f := range e.relations() {
			out = append(out, f.Level)
		}
		return out
	}
	assert.Equal(t, []Level{LevelDay, LevelYear}, levels(p[0]))
	assert.Equal(t, []Level{LevelMonth, LevelYear}, levels(p[1]))
	assert.Equal(t, []Level{LevelYear, LevelYear}, levels(p[2]))
	assert.Equal(t, []Relation{DuringYears}, relationsOf(p[3].relations()))

	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "kb.csv: empty"},
		{"unknown column", "event,start,when\n", "kb.csv: line 1, column 13: unknown column \"when\""},
		{"duplicate column", "event,start,event\n", "line 1, column 13: column \"event\" given twice"},
		{"missing column", "event,end\n", "missing column \"start\""},
		{"no rows", "event,start\n", "no events"},
		{"bad start", "event,start,end\nok,1969-07-20,\nbad,1969-02-30,\n", "kb.csv: line 3, column 5 (start): \"1969-02-30\" is not a date"},
		{"bad end", "event,start,end\nx,1969,19x0\n", "line 2, column 8 (end)"},
		{"end first", "event,start,end\nx,1970-05-01,1970-04\n", "line 2, column 14 (end): 1970-04 is before start 1970-05-01"},
		{"empty event", "start,event\n1969,\n", "line 2, column 6 (event): empty"},
		{"field count", "event,start,end\nx,1969\n", "line 2: 2 fields, the header has 3"},
		{"not UTF-8", "event,start,end\ncaf\xe9 opening,1969,\n", "line 2, column 1: not UTF-8 text"},
		{"quote", "event,start\n\"x,1969\n", "kb.csv: line 2, column"},
		{"bare quote", "event,start\nx\"y,1969\n", "line 2, column 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKB(strings.NewReader(tc.text), "kb.csv")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func relationsOf(fs []Fact) []Relation {
	var out []Relation
	for _, f := range fs {
		out = append(out, f.Relation)
	}
	return out
}

func TestDefaultKB(t *testing.T) {
	kb := DefaultKB()
	assert.GreaterOrEqual(t, len(kb), 60)
	u, err := newUniverse(1900, 2030)
	require.NoError(t, err)
	for _, e := range kb {
		for _, f := range e.relations() {
			require.NoError(t, u.checkFact(&f), e.Event)
		}
	}
}

func TestParseYears(t *testing.T) {
	for _, tc := range []struct {
		in       string
		from, to int
		err      bool
	}{
		{"1900-2030", 1900, 2030, false},
		{" 1969 ", 1969, 1969, false},
		{"1 - 4", 1, 4, false},
		{"2030-1900", 0, 0, true},
		{"0-10", 0, 0, true},
		{"1000-3000", 0, 0, true},
		{"9999-10000", 0, 0, true},
		{"19x0-2000", 0, 0, true},
		{"", 0, 0, true},
	} {
		from, to, err := ParseYears(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, [2]int{tc.from, tc.to}, [2]int{from, to}, tc.in)
	}
}

// write writes puzzles through the record builder in a format.
func write(t *testing.T, ps []*Puzzle, format *dataset.Format) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, Schema, dataset.Options{})
	require.NoError(t, err)
	rb := NewRecordBuilder(nil)
	defer rb.Release()
	for _, p := range ps {
		rb.Append(p)
	}
	rec := rb.NewRecord()
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestCheckRoundTrip(t *testing.T) {
	opt := testOptions(5, func(o *Options) { o.MinSolutions = 0 })
	var ps []*Puzzle
	_, err := Generate(context.Background(), opt, Range{Count: 70}, 2, func(p *Puzzle) error {
		ps = append(ps, p)
		return nil
	})
	require.NoError(t, err)
	for _, format := range []*dataset.Format{dataset.JSONL, dataset.Parquet} {
		t.Run(format.Name, func(t *testing.T) {
			data := write(t, ps, format)
			var checks []*Verdict
			require.NoError(t, Check(context.Background(), bytes.NewReader(data), "p", format, nil, func(c *Verdict) error {
				checks = append(checks, c)
				return nil
			}))
			require.Len(t, checks, len(ps))
			for i, c := range checks {
				require.False(t, c.Differs(), "row %d: %+v", i, c)
				require.Equal(t, ps[i].Solutions, c.Solved)
				require.Equal(t, ps[i].Index, c.Index)
			}
		})
	}
	tampered := slices.Clone(ps)
	tp := *ps[3]
	tp.Facts = slices.Clone(tp.Facts)
	for i, f := range tp.Facts {
		if f.Kind == KindEvent {
			tp.Facts[i].Relation = SameYear
			tp.Facts[i].Start = "1850"
		}
	}
	tampered[3] = &tp
	data := write(t, tampered, dataset.JSONL)
	var bad []int64
	require.NoError(t, Check(context.Background(), bytes.NewReader(data), "p", dataset.JSONL, nil, func(c *Verdict) error {
		if c.Differs() {
			bad = append(bad, c.Row)
		}
		return nil
	}))
	assert.Equal(t, []int64{3}, bad)
	assert.True(t, (&Verdict{Stored: []string{"2000-01-01"}, GroundTruth: "2000-01-02", Solved: []string{"2000-01-01"}}).Differs())
	assert.False(t, (&Verdict{Stored: nil, GroundTruth: "None", Solved: []string{}}).Differs())
}

func TestRowsScoreFullMarks(t *testing.T) {
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	opt := testOptions(11, func(o *Options) { o.MinSolutions = 0 })
	var ps []*Puzzle
	_, err = Generate(context.Background(), opt, Range{Count: 140}, 1, func(p *Puzzle) error {
		ps = append(ps, p)
		return nil
	})
	require.NoError(t, err)
	data := write(t, ps, dataset.JSONL)
	rows := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	require.Len(t, rows, len(ps))
	for i, line := range rows {
		var row struct {
			DataSource  string `json:"data_source"`
			RewardModel struct {
				Style       string `json:"style"`
				GroundTruth string `json:"ground_truth"`
			} `json:"reward_model"`
			Solutions []string `json:"solutions"`
			Prompt    []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"prompt"`
		}
		require.NoError(t, json.Unmarshal(line, &row))
		require.Equal(t, DataSource, row.DataSource)
		require.Equal(t, "rule", row.RewardModel.Style)
		require.Equal(t, "user", row.Prompt[len(row.Prompt)-1].Role)
		answer := "None"
		if len(row.Solutions) > 0 {
			answer = strings.Join(row.Solutions, ", ")
		}
		gt, _ := json.Marshal(row.RewardModel.GroundTruth)
		res := scorer.Score(context.Background(), &rewards.Item{
			DataSource: row.DataSource, GroundTruth: gt,
			SolutionStr: "Checking each candidate...\nMY ANSWER: " + answer,
		})
		require.NoError(t, res.Err)
		require.Equal(t, 1.0, res.Score, "row %d: answer %s, ground truth %s", i, answer, row.RewardModel.GroundTruth)
		if len(row.Solutions) > 1 {
			wrong := scorer.Score(context.Background(), &rewards.Item{
				DataSource: row.DataSource, GroundTruth: gt, SolutionStr: "MY ANSWER: " + row.Solutions[0],
			})
			require.Equal(t, 0.0, wrong.Score, "a partial answer is not an exact match")
		}
	}
}

// TestGroupIsTheAnchorEvent: the split unit is the one event fact's event,
// one of Groups(kb), so a split over Groups keeps every puzzle of an event
// on one side.
func TestGroupIsTheAnchorEvent(t *testing.T) {
	opt := testOptions(11, nil)
	g, err := NewGenerator(opt)
	require.NoError(t, err)
	groups := Groups(opt.KB)
	require.True(t, slices.IsSorted(groups))
	require.Len(t, groups, len(opt.KB), "the built-in events have distinct names")
	seen := map[string]int{}
	for i := range int64(400) {
		p, err := g.Generate(i)
		require.NoError(t, err)
		var events []string
		for _, f := range p.Facts {
			if f.Kind == KindEvent {
				events = append(events, f.Event)
			}
		}
		require.Len(t, events, 1, "puzzle %d", i)
		require.Equal(t, events[0], p.Group, "puzzle %d", i)
		_, ok := slices.BinarySearch(groups, p.Group)
		require.True(t, ok, "puzzle %d: %q is not a unit of the split", i, p.Group)
		seen[p.Group]++
	}
	assert.Greater(t, len(seen), 30, "puzzles spread over the events")

	kb := []Event{{Event: "b"}, {Event: "a"}, {Event: "b"}}
	assert.Equal(t, []string{"a", "b"}, Groups(kb))
}

// TestWordingLeavesNoRoomForMisreading: decades are written as decades with
// their years (never "the 1900s" alone, which reads as a century), and the
// prompt states the calendars: proleptic Gregorian, the Chinese calendar at
// UTC+8; the conventions text is replaceable.
func TestWordingLeavesNoRoomForMisreading(t *testing.T) {
	bare := regexp.MustCompile(`\bthe \d{3}0s\b(?: [^d]|[.,;]|$)`)
	opt := testOptions(5, func(o *Options) { o.FromYear, o.ToYear = 1, 2000 })
	g, err := NewGenerator(opt)
	require.NoError(t, err)
	decades := 0
	for i := range 300 {
		p, err := g.Generate(int64(i))
		require.NoError(t, err)
		user := p.Messages[len(p.Messages)-1].Text()
		assert.NotRegexp(t, bare, user)
		assert.Contains(t, user, "proleptic Gregorian calendar")
		assert.Contains(t, user, "UTC+8")
		for _, c := range p.Constraints {
			if strings.Contains(c, "decade") {
				decades++
				assert.Regexp(t, `^It is in the (\d+)0s decade, \d+0–\d+9\.$`, c)
			}
		}
	}
	assert.Positive(t, decades)

	opt.Prompt.Conventions = "All dates are Gregorian."
	g, err = NewGenerator(opt)
	require.NoError(t, err)
	p, err := g.Generate(0)
	require.NoError(t, err)
	assert.Contains(t, p.Messages[len(p.Messages)-1].Text(), "count. All dates are Gregorian.")
}

// TestThePublishedRangeWorks: over 1800–2050, the published setting, the
// lunar table misses only 1800-01-01 to 01-24. Zodiac facts still decide
// those days (the Goat year began in 1799); lunar-month facts make only
// the puzzles that leave such a day undecidable; generation uses both.
func TestThePublishedRangeWorks(t *testing.T) {
	solver := NewSolver()
	early := []Fact{{Kind: KindYear, Year: 1800}, {Kind: KindMonth, Month: 1}, {Kind: KindDay, Day: 10}}
	got, err := solver.Solve(append(early, Fact{Kind: KindZodiac, Animal: "Goat"}), 1800, 2050)
	require.NoError(t, err)
	assert.Equal(t, []string{"1800-01-10"}, got, "the days before the table's first new year are of the Goat year")
	got, err = solver.Solve(append(early, Fact{Kind: KindZodiac, Animal: "Monkey"}), 1800, 2050)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = solver.Solve(append(early, Fact{Kind: KindLunar, Month: 12}), 1800, 2050)
	require.ErrorIs(t, err, ErrUndecidable)
	assert.ErrorContains(t, err, "fact 4 (lunar_month): undecidable: the lunar calendar is not known on 1800-01-10")
	// A lunar fact whose other facts keep away from January 1800 decides.
	got, err = solver.Solve([]Fact{{Kind: KindYear, Year: 1800}, {Kind: KindMonth, Month: 3}, {Kind: KindDay, Day: 1}, {Kind: KindLunar, Month: 2}}, 1800, 2050)
	require.NoError(t, err)
	u, err := solver.universe(1800, 2050)
	require.NoError(t, err)
	assert.Equal(t, bruteForce(u, []Fact{{Kind: KindYear, Year: 1800}, {Kind: KindMonth, Month: 3}, {Kind: KindDay, Day: 1}, {Kind: KindLunar, Month: 2}}), got)

	opt := testOptions(9, func(o *Options) { o.FromYear, o.ToYear = 1800, 2050 })
	g, err := NewGenerator(opt)
	require.NoError(t, err)
	assert.True(t, g.LunarFacts())
	kinds := map[Kind]int{}
	for i := range 400 {
		p, err := g.Generate(int64(i))
		require.NoError(t, err)
		for _, f := range p.Facts {
			kinds[f.Kind]++
		}
		ans, err := solver.Solve(p.Facts, 1800, 2050)
		require.NoError(t, err, "every generated puzzle is decidable: %+v", p.Facts)
		assert.Equal(t, p.Solutions, ans)
	}
	assert.Positive(t, kinds[KindZodiac])
	assert.Positive(t, kinds[KindLunar])
}

// TestDisputedPolicy: with the default policy no generated answer depends on
// a disputed lunar day; with "allow" some do, and Solve calls those
// undecidable rather than answering them.
func TestDisputedPolicy(t *testing.T) {
	solver := NewSolver()
	u, err := solver.universe(1930, 1936)
	require.NoError(t, err)
	i := u.lunar.find(LunarRef{Year: 1933, Month: 6})
	require.GreaterOrEqual(t, i, 0)
	y, m, d := civil(u.lunar.months[i].start)
	facts := []Fact{{Kind: KindYear, Year: y}, {Kind: KindMonth, Month: m}, {Kind: KindDay, Day: d}, {Kind: KindLunar, Month: 6}}
	_, err = solver.Solve(facts, 1930, 1936)
	var ue *UndecidableError
	require.ErrorAs(t, err, &ue)
	assert.True(t, ue.Disputed)
	assert.Equal(t, 4, ue.Fact)
	assert.Equal(t, formatDate(u.lunar.months[i].start), ue.Day)
	assert.ErrorIs(t, err, ErrUndecidable)
	got, err := NewSolverWith(SolverOptions{}).Solve(facts, 1930, 1936)
	require.NoError(t, err, "without disputes the table decides")
	assert.Equal(t, []string{formatDate(u.lunar.months[i].start)}, got)

	count := func(policy string) (undecidable int) {
		g, err := NewGenerator(testOptions(5, func(o *Options) {
			o.FromYear, o.ToYear, o.Disputed = 1930, 1936, policy
			o.Kinds = []Kind{KindYear, KindLunar, KindZodiac, KindMonth, KindDay, KindWeekday, KindDayRange}
		}))
		require.NoError(t, err)
		for i := range 400 {
			p, err := g.Generate(int64(i))
			require.NoError(t, err)
			if _, err := solver.Solve(p.Facts, 1930, 1936); err != nil {
				require.ErrorIs(t, err, ErrUndecidable)
				undecidable++
			}
		}
		return undecidable
	}
	assert.Zero(t, count(DisputedAvoid))
	assert.Positive(t, count(DisputedAllow))

	opt := testOptions(1, func(o *Options) { o.Disputed = "ignore" })
	assert.ErrorContains(t, opt.Validate(), `"ignore" is not avoid or allow`)
}
