package puzzles

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// YearSet is a set of years given by rule in a knowledge base: the years
// in which a recurring event took place, as the Time Puzzles paper's
// Olympic and World Cup facts. A year counts when an edition was held in
// it: a cancelled edition does not count, and a postponed one counts in the
// year it was held, not the year it was awarded for.
type YearSet struct {
	// Name keys the set in the file and in the published format
	// ("summer_olympics").
	Name string
	// Event is what took place, as a noun phrase puzzles quote ("the
	// Summer Olympic Games").
	Event string
	// Through is the last year the knowledge base accounts for: later
	// editions, held or not, are outside the set, and the puzzle says so.
	Through int
	// Years are the years of the set, sorted, none after Through.
	Years []int
	// Rules are the rows the set was read from, in file order: the rhythm
	// of its editions, which ScheduledYears reads.
	Rules []YearRule
}

// YearRule is one row of a year set: the years First, First+Every, ... up
// to Through, without those in Cancelled (moved editions are in the set's
// Years, not here).
type YearRule struct {
	First, Every, Through int
	Cancelled             []int
}

// The readings of a year set (Options.YearSetReading).
const (
	// YearSetsHeld reads a year set as the years an edition was held in:
	// a cancelled edition does not count, a postponed one counts in the
	// year it took place, and none after the set's last checked year.
	YearSetsHeld = "held"
	// YearSetsRule reads it by its rule, as the published Time Puzzles
	// generator does: the years its editions were scheduled for in their
	// regular rhythm, cancelled editions left out, a postponed edition
	// counted in the year it was scheduled for, and the latest rhythm
	// continued past the last checked year.
	YearSetsRule = "rule"
)

// ScheduledYears returns the years of the set read by its rule, from
// from to to (both included), sorted: each rule's years without its
// cancelled ones, and the rule that reaches furthest continued past its
// Through in the same rhythm.
func (s *YearSet) ScheduledYears(from, to int) []int {
	last := -1
	for i, r := range s.Rules {
		if last < 0 || r.Through > s.Rules[last].Through {
			last = i
		}
	}
	var out []int
	for i, r := range s.Rules {
		end := r.Through
		if i == last {
			end = to
		}
		for y := r.First; y <= min(end, to); y += r.Every {
			if y >= from && !slices.Contains(r.Cancelled, y) {
				out = append(out, y)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scheduledFact is the year-set fact of s read by its rule, for dates up
// to the end of year to.
func (s *YearSet) scheduledFact(to int) Fact {
	return Fact{Kind: KindYearSet, Level: LevelYear, Event: s.Event, Relation: Scheduled, Year: to, Years: s.ScheduledYears(MinYear, to)}
}

// yearSetColumns are the columns of a year-set CSV; cancelled and moved
// may be missing.
var yearSetColumns = []string{"set", "event", "first", "every", "through", "cancelled", "moved"}

//go:embed yearsets.csv
var defaultYearSets string

// DefaultYearSets returns the built-in year sets: the Summer and Winter
// Olympic Games and the men's FIFA World Cup finals, editions held through
// 2024 (written for this project from the public records of each).
func DefaultYearSets() []YearSet {
	sets, err := ParseYearSets(strings.NewReader(defaultYearSets), "built-in year sets")
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return sets
}

// ParseYearSets reads a year-set CSV. Each row is a rule: the years first,
// first+every, ... up to through, minus the space-separated years in
// cancelled, with each "a>b" of moved (space-separated) replacing year a
// by year b, the year the postponed edition was held. Rows with the same
// set name add up (a set whose rhythm changed takes one row per rhythm) and
// must name the same event; the set's Through is the latest row's. An
// error names the file, the line, the column and the field.
func ParseYearSets(r io.Reader, name string) ([]YearSet, error) {
	var out []YearSet
	err := readTable(r, name, yearSetColumns, 5, func(row *tableRow) error {
		set, i := row.field("set")
		if set == "" || strings.ContainsAny(set, " ,\t") {
			return row.bad(i, "set", "%q: want a name without spaces or commas", set)
		}
		event, i := row.field("event")
		if event == "" || strings.ContainsAny(event, "\r\n") {
			return row.bad(i, "event", "empty or spans lines: name what took place")
		}
		year := func(c string) (int, error) {
			s, i := row.field(c)
			y, err := strconv.Atoi(s)
			if err != nil || y < MinYear || y > MaxYear {
				return 0, row.bad(i, c, "%q is not a year from %d to %d", s, MinYear, MaxYear)
			}
			return y, nil
		}
		first, err := year("first")
		if err != nil {
			return err
		}
		through, err := year("through")
		if err != nil {
			return err
		}
		if through < first {
			_, i := row.field("through")
			return row.bad(i, "through", "%d is before first %d", through, first)
		}
		s, i := row.field("every")
		every, err := strconv.Atoi(s)
		if err != nil || every < 1 || every > 100 {
			return row.bad(i, "every", "%q is not a number of years from 1 to 100", s)
		}
		years := map[int]bool{}
		for y := first; y <= through; y += every {
			years[y] = true
		}
		rule := YearRule{First: first, Every: every, Through: through}
		s, i = row.field("cancelled")
		for _, w := range strings.Fields(s) {
			y, err := strconv.Atoi(w)
			if err != nil || !years[y] {
				return row.bad(i, "cancelled", "%q is not a year of the rule (%d every %d through %d)", w, first, every, through)
			}
			delete(years, y)
			rule.Cancelled = append(rule.Cancelled, y)
		}
		s, i = row.field("moved")
		for _, w := range strings.Fields(s) {
			a, b, ok := strings.Cut(w, ">")
			from, err1 := strconv.Atoi(a)
			to, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil {
				return row.bad(i, "moved", "%q is not FROM>TO, two years", w)
			}
			if !years[from] {
				return row.bad(i, "moved", "%d is not a year of the rule (%d every %d through %d)", from, first, every, through)
			}
			if to < MinYear || to > through {
				return row.bad(i, "moved", "%d is after through %d or not a year", to, through)
			}
			delete(years, from)
			years[to] = true
		}
		k := slices.IndexFunc(out, func(s YearSet) bool { return s.Name == set })
		if k < 0 {
			out = append(out, YearSet{Name: set, Event: event})
			k = len(out) - 1
		} else if out[k].Event != event {
			_, i := row.field("event")
			return row.bad(i, "event", "%q: set %s is %q on an earlier line", event, set, out[k].Event)
		}
		for y := range years {
			if !slices.Contains(out[k].Years, y) {
				out[k].Years = append(out[k].Years, y)
			}
		}
		out[k].Through = max(out[k].Through, through)
		out[k].Rules = append(out[k].Rules, rule)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no year sets after the header", name)
	}
	for k := range out {
		slices.Sort(out[k].Years)
	}
	return out, nil
}

// fact is the year-set fact of s.
func (s *YearSet) fact() Fact {
	return Fact{Kind: KindYearSet, Level: LevelYear, Event: s.Event, Year: s.Through, Years: slices.Clone(s.Years)}
}
