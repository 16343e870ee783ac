package puzzles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Level is the granularity of a fact (the Time Puzzles paper, App. A.2): what part
// of a date it constrains.
type Level string

// The three constraint levels.
const (
	LevelYear  Level = "year"
	LevelMonth Level = "month"
	LevelDay   Level = "day"
)

var allLevels = [3]Level{LevelYear, LevelMonth, LevelDay}

// Kind is a fact category of the Time Puzzles paper, Table 2. Each kind reads its own
// Fact fields, listed here.
type Kind string

// The fact kinds. Weekdays are ISO numbers, 1 Monday to 7 Sunday.
const (
	KindYear     Kind = "year"          // Year
	KindDecade   Kind = "decade"        // Year: the decade's first year (1980 for the 1980s)
	KindLeapYear Kind = "leap_year"     // Leap: whether the year is a leap year
	KindZodiac   Kind = "zodiac"        // Animal: the Chinese zodiac animal of the lunar year
	KindYearSet  Kind = "year_set"      // Event (what took place), Years (when it did) and Year (the last year counted): a YearSet; Relation "scheduled" when read by its rule
	KindMonth    Kind = "month"         // Month
	KindSeason   Kind = "season"        // Season (its name) and Months (what it means)
	KindLunar    Kind = "lunar_month"   // Month (1–12) and Leap of the Chinese lunar month
	KindWeekday  Kind = "weekday"       // Weekday
	KindNth      Kind = "nth_weekday"   // N (1–5 from the start, -1 to -5 from the end: -1 the last, -2 the second to last) and Weekday
	KindDay      Kind = "day_of_month"  // Day (1–31, or -1 for the last day)
	KindDayRange Kind = "day_range"     // Op ("before" or "after") and Day: day of month < Day or > Day
	KindWeekdays Kind = "multi_weekday" // Weekdays (2 to 6 of them)
	KindEvent    Kind = "event"         // Event, Relation, Start and End: a knowledge-base event
)

// Kinds lists every kind in the order of the Time Puzzles paper, Table 2.
var Kinds = []Kind{
	KindYear, KindDecade, KindLeapYear, KindZodiac, KindYearSet,
	KindMonth, KindSeason, KindLunar,
	KindNth, KindDay, KindWeekday, KindWeekdays, KindDayRange,
	KindEvent,
}

// kindLevel is the level of every kind but event, whose level depends
// on its relation.
var kindLevel = map[Kind]Level{
	KindYear: LevelYear, KindDecade: LevelYear, KindLeapYear: LevelYear,
	KindZodiac: LevelYear, KindYearSet: LevelYear, KindMonth: LevelMonth, KindSeason: LevelMonth,
	KindLunar: LevelMonth, KindWeekday: LevelDay, KindNth: LevelDay,
	KindDay: LevelDay, KindDayRange: LevelDay, KindWeekdays: LevelDay,
}

// Relation is how an event fact relates the date to a knowledge-base
// event. Point events (no end) allow same_day and anniversary (with a full
// date), same_month (with a month) and same_year; periods allow during (both
// ends full dates) and during_years.
type Relation string

// The event relations. Start and End of the fact hold the event's dates at
// the precision the relation reads.
const (
	SameDay     Relation = "same_day"     // the date is Start (YYYY-MM-DD)
	SameMonth   Relation = "same_month"   // in Start's month (YYYY-MM)
	SameYear    Relation = "same_year"    // in Start's year (YYYY)
	Anniversary Relation = "anniversary"  // Start's month and day (YYYY-MM-DD), any year
	During      Relation = "during"       // from Start to End (YYYY-MM-DD), both included
	DuringYears Relation = "during_years" // in a year from Start to End (YYYY), both included
	// Scheduled is the relation of a year_set fact read by its rule
	// (YearSetsRule): the years its editions were scheduled for. A year_set
	// fact without a relation is read by the editions held.
	Scheduled Relation = "scheduled"
)

// Fact is one constraint of a puzzle in structured form: enough to
// compute its set of dates again (PuzzleSolve) without the knowledge base or
// the configuration that made it. Fields a kind does not read are zero and
// are written as null.
type Fact struct {
	Kind     Kind     `json:"kind"`
	Level    Level    `json:"level"`
	Year     int      `json:"year"`
	Month    int      `json:"month"`
	Day      int      `json:"day"`
	Weekday  int      `json:"weekday"`
	N        int      `json:"n"`
	Leap     bool     `json:"leap"`
	Animal   string   `json:"animal"`
	Season   string   `json:"season"`
	Months   []int    `json:"months"`
	Weekdays []int    `json:"weekdays"`
	Op       string   `json:"op"`
	Event    string   `json:"event"`
	Relation Relation `json:"relation"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
	Years    []int    `json:"years"`
}

// monthNames and weekdayNames name months 1–12 and ISO weekdays 1–7.
var (
	monthNames   = [13]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	weekdayNames = [8]string{"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	nthWords     = [6]string{"", "first", "second", "third", "fourth", "fifth"}
)

// universe is the date range of a puzzle set with the day sets of
// every calendar fact precomputed. It is read-only once built, so
// generators on several goroutines share it.
type universe struct {
	first, n         int // day number of the first day, number of days
	fromYear, toYear int
	words            int
	lunar            *lunarTable
	// lunarAny says the table covers some day of the range: lunar and
	// zodiac facts can be used, and decide a puzzle unless its other facts
	// leave a day the table cannot place (monthUnknown, yearUnknown).
	lunarAny bool
	// monthUnknown holds the days of the range outside the table, whose
	// lunar month is unknown; yearUnknown those after its end, whose lunar
	// year (zodiac animal) is unknown. The days before its first new year
	// belong to the lunar year before the table's first, whose animal the
	// cycle gives.
	monthUnknown, yearUnknown dateSet

	full       dateSet
	weekday    [8]dateSet
	dom        [32]dateSet
	lastDom    dateSet
	domLE      [32]dateSet   // day of month ≤ d
	nth        [6][8]dateSet // n-th (1–5) weekday of the month
	nthLast    [6][8]dateSet // n-th to last (1–5, 1 the last)
	month      [13]dateSet
	leap       dateSet
	common     dateSet
	lunarMonth [13][2]dateSet
	zodiac     [12]dateSet
}

// Limits of a puzzle universe.
const (
	MinYear  = 1
	MaxYear  = 9999
	MaxYears = 2000 // years in one range
)

func newUniverse(fromYear, toYear int) (*universe, error) {
	lt, err := lunar()
	if err != nil {
		return nil, err
	}
	return newUniverseWith(fromYear, toYear, lt)
}

// newUniverseWith builds the universe on a given lunar calendar.
func newUniverseWith(fromYear, toYear int, lt *lunarTable) (*universe, error) {
	if fromYear < MinYear || toYear > MaxYear || fromYear > toYear {
		return nil, fmt.Errorf("years %d-%d: want %d <= from <= to <= %d", fromYear, toYear, MinYear, MaxYear)
	}
	if toYear-fromYear+1 > MaxYears {
		return nil, fmt.Errorf("years %d-%d: at most %d years", fromYear, toYear, MaxYears)
	}
	u := &universe{fromYear: fromYear, toYear: toYear, lunar: lt}
	u.first = dayNumber(fromYear, 1, 1)
	u.n = dayNumber(toYear, 12, 31) + 1 - u.first
	u.words = (u.n + 63) / 64
	u.lunarAny = u.first < lt.end() && u.first+u.n > lt.first()
	newSet := func() dateSet { return dateSet{w: make([]uint64, u.words), lo: 0, hi: u.words} }
	u.full = newSet()
	u.full.setRange(0, u.n)
	all := []*dateSet{&u.lastDom, &u.leap, &u.common}
	for i := 1; i <= 7; i++ {
		all = append(all, &u.weekday[i])
		for n := range 6 {
			all = append(all, &u.nth[n][i], &u.nthLast[n][i])
		}
	}
	for d := 0; d <= 31; d++ {
		all = append(all, &u.dom[d], &u.domLE[d])
	}
	for m := 0; m <= 12; m++ {
		all = append(all, &u.month[m], &u.lunarMonth[m][0], &u.lunarMonth[m][1])
	}
	for a := range u.zodiac {
		all = append(all, &u.zodiac[a])
	}
	all = append(all, &u.monthUnknown, &u.yearUnknown)
	for _, s := range all {
		*s = newSet()
	}
	for y := fromYear; y <= toYear; y++ {
		yearSet := &u.common
		if isLeap(y) {
			yearSet = &u.leap
		}
		for m := 1; m <= 12; m++ {
			start := dayNumber(y, m, 1)
			dim := daysIn(y, m)
			wd0 := weekdayOf(start) - 1
			s := start - u.first
			yearSet.setBitsRange(s, s+dim)
			u.month[m].setBitsRange(s, s+dim)
			u.lastDom.set(s + dim - 1)
			for d := 1; d <= dim; d++ {
				i := s + d - 1
				wd := (wd0+d-1)%7 + 1
				u.weekday[wd].set(i)
				u.dom[d].set(i)
				u.nth[(d-1)/7+1][wd].set(i)
				u.nthLast[(dim-d)/7+1][wd].set(i)
			}
		}
	}
	for d := 1; d <= 31; d++ {
		u.domLE[d].copyFrom(&u.domLE[d-1])
		u.domLE[d].or(&u.dom[d])
	}
	if u.lunarAny {
		if a, b := u.first, min(lt.first(), u.first+u.n); a < b {
			// Before the table's first new year: the lunar year before its
			// first, one step back in the animal cycle; months unknown.
			prev := (animalIndex(lt.animalOf(lt.firstYear)) + 11) % 12
			u.zodiac[prev].setBitsRange(0, b-a)
			u.monthUnknown.setBitsRange(0, b-a)
		}
		if a, b := max(lt.end(), u.first), u.first+u.n; a < b {
			u.monthUnknown.setBitsRange(a-u.first, b-u.first)
			u.yearUnknown.setBitsRange(a-u.first, b-u.first)
		}
		for _, lm := range lt.months {
			a, b := max(lm.start, u.first)-u.first, min(lm.start+lm.days, u.first+u.n)-u.first
			if a >= b {
				continue
			}
			leap := 0
			if lm.leap {
				leap = 1
			}
			u.lunarMonth[lm.month][leap].setBitsRange(a, b)
			u.zodiac[animalIndex(lt.animalOf(lm.year))].setBitsRange(a, b)
		}
	}
	for _, s := range all {
		s.trim()
	}
	return u, nil
}

// setBitsRange adds days [a, b) without touching the span (full-span sets).
func (s *dateSet) setBitsRange(a, b int) {
	for i := a; i < b; i++ {
		s.set(i)
	}
}

// newScratch returns an empty set the size of the universe.
func (u *universe) newScratch() dateSet {
	return dateSet{w: make([]uint64, u.words)}
}

func (u *universe) firstDate() string { return formatDate(u.first) }
func (u *universe) lastDate() string  { return formatDate(u.first + u.n - 1) }

// yearRange is the day-index range [a, b) of years y1..y2 clipped to the
// universe.
func (u *universe) yearRange(y1, y2 int) (int, int) {
	y1, y2 = max(y1, u.fromYear), min(y2, u.toYear)
	if y1 > y2 {
		return 0, 0
	}
	return dayNumber(y1, 1, 1) - u.first, dayNumber(y2, 12, 31) + 1 - u.first
}

// dayRange clips day numbers [a, b] (inclusive) to day indexes [a', b').
func (u *universe) dayRange(a, b int) (int, int) {
	a, b = max(a, u.first), min(b+1, u.first+u.n)
	if a >= b {
		return 0, 0
	}
	return a - u.first, b - u.first
}

// checkFact validates a fact's fields for its kind: an error is a fact
// that means nothing (an unknown kind or relation, an animal that is not of
// the zodiac, a malformed event date). A value outside what its kind can
// name is not an error here: noDay says why such a fact holds on no day.
func (u *universe) checkFact(f *Fact) error {
	switch f.Kind {
	case KindYear, KindDecade, KindLeapYear, KindMonth, KindLunar, KindWeekday, KindNth, KindDay:
	case KindYearSet:
		return checkYearSet(f)
	case KindZodiac:
		if animalIndex(f.Animal) < 0 {
			return fmt.Errorf("animal %q is not one of %s", f.Animal, strings.Join(ZodiacAnimals[:], ", "))
		}
	case KindSeason:
		if len(f.Months) == 0 {
			return fmt.Errorf("season %q has no months", f.Season)
		}
		for _, m := range f.Months {
			if m < 1 || m > 12 {
				return fmt.Errorf("season %q: month %d is not from 1 to 12", f.Season, m)
			}
		}
	case KindDayRange:
		if f.Op != "before" && f.Op != "after" {
			return fmt.Errorf("op %q is not before or after", f.Op)
		}
	case KindWeekdays:
		if len(f.Weekdays) == 0 {
			return fmt.Errorf("no weekdays")
		}
	case KindEvent:
		_, _, err := eventDays(f)
		return err
	default:
		return fmt.Errorf("unknown kind %q", f.Kind)
	}
	if (f.Kind == KindZodiac || f.Kind == KindLunar) && !u.lunarAny {
		return fmt.Errorf("%s facts need years that meet the lunar table (%s to %s)", f.Kind,
			formatDate(u.lunar.first()), formatDate(u.lunar.end()-1))
	}
	return nil
}

// noDay says why a fact that passed checkFact holds on no day at all, or
// returns nil: a value outside what its kind can name. Such a fact is
// what it says, a puzzle that no date solves.
func (u *universe) noDay(f *Fact) error {
	weekdayOK := func(w int) bool { return w >= 1 && w <= 7 }
	switch f.Kind {
	case KindYear:
		if f.Year < MinYear || f.Year > MaxYear {
			return fmt.Errorf("year %d is not from %d to %d", f.Year, MinYear, MaxYear)
		}
	case KindDecade:
		if f.Year < 0 || f.Year > MaxYear || f.Year%10 != 0 {
			return fmt.Errorf("decade %d is not a multiple of 10 from 0 to 9990", f.Year)
		}
	case KindMonth, KindLunar:
		if f.Month < 1 || f.Month > 12 {
			return fmt.Errorf("month %d is not from 1 to 12", f.Month)
		}
	case KindWeekday:
		if !weekdayOK(f.Weekday) {
			return fmt.Errorf("weekday %d is not from 1 (Monday) to 7 (Sunday)", f.Weekday)
		}
	case KindNth:
		if !weekdayOK(f.Weekday) {
			return fmt.Errorf("weekday %d is not from 1 (Monday) to 7 (Sunday)", f.Weekday)
		}
		if f.N == 0 || f.N < -5 || f.N > 5 {
			return fmt.Errorf("n %d is not from 1 to 5 (from the start) or -1 to -5 (from the end, -1 the last)", f.N)
		}
	case KindDay:
		if f.Day != -1 && (f.Day < 1 || f.Day > 31) {
			return fmt.Errorf("day %d is not from 1 to 31, or -1 for the last", f.Day)
		}
	case KindDayRange:
		if f.Op == "before" && f.Day <= 1 {
			return fmt.Errorf("no day of a month is before the %s", dayWord(f.Day))
		}
		if f.Op == "after" && f.Day >= 31 {
			return fmt.Errorf("no day of a month is after the %s", dayWord(f.Day))
		}
	case KindWeekdays:
		if !slices.ContainsFunc(f.Weekdays, weekdayOK) {
			return fmt.Errorf("weekdays %v: none is from 1 (Monday) to 7 (Sunday)", f.Weekdays)
		}
	}
	return nil
}

// dayWord writes a day of the month as an ordinal, 1st to 31st (and the
// numbers beyond or below as numbers with the suffix th).
func dayWord(d int) string {
	if d < 1 {
		return strconv.Itoa(d) + "th"
	}
	return ordinal(d)
}

// checkYearSet validates a year_set fact: an event, increasing years, and
// a last year counted no earlier than the last of them.
func checkYearSet(f *Fact) error {
	if strings.TrimSpace(f.Event) == "" {
		return fmt.Errorf("year set has no event")
	}
	if f.Relation != "" && f.Relation != Scheduled {
		return fmt.Errorf("year set %q: relation %q is not %s or empty (the editions held)", f.Event, f.Relation, Scheduled)
	}
	if len(f.Years) == 0 {
		return fmt.Errorf("year set %q has no years", f.Event)
	}
	for i, y := range f.Years {
		if y < MinYear || y > MaxYear || i > 0 && y <= f.Years[i-1] {
			return fmt.Errorf("year set %q: years are not increasing years from %d to %d at %d", f.Event, MinYear, MaxYear, y)
		}
	}
	if f.Year < f.Years[len(f.Years)-1] {
		return fmt.Errorf("year set %q: last year counted %d is before its year %d", f.Event, f.Year, f.Years[len(f.Years)-1])
	}
	return nil
}

// eventDays returns what an event fact's Start and End mean: for
// same_day, same_month, same_year and during, the inclusive day-number range;
// for anniversary, the month and day as a and b; for during_years, the
// years.
func eventDays(f *Fact) (a, b int, err error) {
	parse := func(s string, want int) (y, m, d int, err error) {
		y, m, d, prec, err := parsePartial(s)
		if err != nil {
			return 0, 0, 0, err
		}
		if prec != want {
			return 0, 0, 0, fmt.Errorf("%s needs %s as %s", f.Relation, s, [4]string{"", "YYYY", "YYYY-MM", "YYYY-MM-DD"}[want])
		}
		return y, m, d, nil
	}
	switch f.Relation {
	case SameDay:
		y, m, d, err := parse(f.Start, 3)
		if err != nil {
			return 0, 0, err
		}
		n := dayNumber(y, m, d)
		return n, n, nil
	case SameMonth:
		y, m, _, err := parse(f.Start, 2)
		if err != nil {
			return 0, 0, err
		}
		return dayNumber(y, m, 1), dayNumber(y, m, daysIn(y, m)), nil
	case SameYear:
		y, _, _, err := parse(f.Start, 1)
		if err != nil {
			return 0, 0, err
		}
		return dayNumber(y, 1, 1), dayNumber(y, 12, 31), nil
	case Anniversary:
		_, m, d, err := parse(f.Start, 3)
		return m, d, err
	case During, DuringYears:
		want := 3
		if f.Relation == DuringYears {
			want = 1
		}
		y1, m1, d1, err := parse(f.Start, want)
		if err != nil {
			return 0, 0, err
		}
		y2, m2, d2, err := parse(f.End, want)
		if err != nil {
			return 0, 0, err
		}
		if want == 1 {
			a, b = y1, y2
		} else {
			a, b = dayNumber(y1, m1, d1), dayNumber(y2, m2, d2)
		}
		if a > b {
			return 0, 0, fmt.Errorf("end %s is before start %s", f.End, f.Start)
		}
		return a, b, nil
	}
	return 0, 0, fmt.Errorf("unknown relation %q", f.Relation)
}

// factSet returns the set of f's days. The result is either one of the
// universe's shared sets (read-only) or scratch, which it overwrites. f must
// have passed checkFact.
func (u *universe) factSet(f *Fact, scratch *dateSet) *dateSet {
	switch f.Kind {
	case KindYear:
		scratch.setRange(u.yearRange(f.Year, f.Year))
	case KindDecade:
		scratch.setRange(u.yearRange(f.Year, f.Year+9))
	case KindLeapYear:
		if f.Leap {
			return &u.leap
		}
		return &u.common
	case KindZodiac:
		return &u.zodiac[animalIndex(f.Animal)]
	case KindYearSet:
		scratch.clear()
		for _, y := range f.Years {
			scratch.orRange(u.yearRange(y, y))
		}
		scratch.trim()
	case KindMonth:
		return &u.month[f.Month]
	case KindSeason:
		scratch.clear()
		for _, m := range f.Months {
			scratch.or(&u.month[m])
		}
		scratch.trim()
	case KindLunar:
		if f.Leap {
			return &u.lunarMonth[f.Month][1]
		}
		return &u.lunarMonth[f.Month][0]
	case KindWeekday:
		return &u.weekday[f.Weekday]
	case KindNth:
		if f.N < 0 {
			return &u.nthLast[-f.N][f.Weekday]
		}
		return &u.nth[f.N][f.Weekday]
	case KindDay:
		if f.Day == -1 {
			return &u.lastDom
		}
		return &u.dom[f.Day]
	case KindDayRange:
		// Bounds past the month's days hold on every day (before the 40th) or
		// none (noDay rules those out first).
		if f.Op == "before" {
			return &u.domLE[min(max(f.Day-1, 0), 31)]
		}
		scratch.copyFrom(&u.full)
		if f.Day < 1 {
			return scratch
		}
		le := &u.domLE[min(f.Day, 31)]
		for k := le.lo; k < le.hi; k++ {
			scratch.w[k] &^= le.w[k]
		}
		scratch.trim()
	case KindWeekdays:
		scratch.clear()
		for _, w := range f.Weekdays {
			if w >= 1 && w <= 7 {
				scratch.or(&u.weekday[w])
			}
		}
		scratch.trim()
	case KindEvent:
		a, b, _ := eventDays(f)
		switch f.Relation {
		case Anniversary:
			scratch.clear()
			for y := u.fromYear; y <= u.toYear; y++ {
				if b <= daysIn(y, a) {
					scratch.set(dayNumber(y, a, b) - u.first)
				}
			}
			scratch.trim()
		case DuringYears:
			scratch.setRange(u.yearRange(a, b))
		default:
			scratch.setRange(u.dayRange(a, b))
		}
	}
	return scratch
}

// holds reports whether f is true of day number n, straight from the
// calendar, without the precomputed sets: the reference the solver is
// tested against.
func (u *universe) holds(f *Fact, n int) bool {
	y, m, d := civil(n)
	wd := weekdayOf(n)
	dim := daysIn(y, m)
	switch f.Kind {
	case KindYear:
		return y == f.Year
	case KindDecade:
		return y/10*10 == f.Year
	case KindLeapYear:
		return isLeap(y) == f.Leap
	case KindZodiac:
		i := u.lunar.monthAt(n)
		return i >= 0 && strings.EqualFold(u.lunar.animalOf(u.lunar.months[i].year), f.Animal)
	case KindYearSet:
		return slices.Contains(f.Years, y)
	case KindMonth:
		return m == f.Month
	case KindSeason:
		return slices.Contains(f.Months, m)
	case KindLunar:
		i := u.lunar.monthAt(n)
		return i >= 0 && u.lunar.months[i].month == f.Month && u.lunar.months[i].leap == f.Leap
	case KindWeekday:
		return wd == f.Weekday
	case KindNth:
		if wd != f.Weekday {
			return false
		}
		if f.N < 0 {
			return (dim-d)/7+1 == -f.N
		}
		return (d+6)/7 == f.N
	case KindDay:
		if f.Day == -1 {
			return d == dim
		}
		return d == f.Day
	case KindDayRange:
		if f.Op == "before" {
			return d < f.Day
		}
		return d > f.Day
	case KindWeekdays:
		return slices.Contains(f.Weekdays, wd)
	case KindEvent:
		a, b, _ := eventDays(f)
		switch f.Relation {
		case Anniversary:
			return m == a && d == b
		case DuringYears:
			return y >= a && y <= b
		}
		return n >= a && n <= b
	}
	return false
}

// ordinal writes 1st, 2nd, 3rd, 4th, 11th, 21st ...
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// orList joins items as "a", "a or b", "a, b or c".
func orList(items []string) string { return joinList(items, " or ") }

// andList joins items as "a", "a and b", "a, b and c".
func andList(items []string) string { return joinList(items, " and ") }

// joinList joins items with commas, the last two with last.
func joinList(items []string, last string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// implicit renders f the way a puzzle states it: events by description,
// zodiac and lunar months by name.
func (u *universe) implicit(f *Fact) string {
	switch f.Kind {
	case KindDecade:
		// Written as a decade with its years: "the 1900s" alone reads as a
		// century to many people.
		if f.Year%10 == 0 {
			return fmt.Sprintf("It is in the %ds decade, %d–%d.", f.Year, f.Year, f.Year+9)
		}
	case KindZodiac:
		return fmt.Sprintf("It is in a Chinese zodiac year of the %s (the zodiac year begins at the Chinese New Year).", f.Animal)
	case KindSeason:
		return fmt.Sprintf("It is %s.", strings.ToLower(f.Season))
	case KindYearSet:
		// Held, not awarded; and a bound, so editions after what the
		// knowledge base covers are not guessed at.
		if f.Relation == Scheduled {
			return fmt.Sprintf("It is in a year for which %s were scheduled in their regular rhythm (a postponed edition counts in the year it was scheduled for, and so do editions still to come; cancelled editions do not count).", f.Event)
		}
		return fmt.Sprintf("It is in a year in which %s were held (an edition counts in the year it actually took place; cancelled editions do not count, nor any after %d).", f.Event, f.Year)
	case KindLunar:
		if f.Leap {
			return fmt.Sprintf("It is in the leap month that follows month %d of the Chinese lunar calendar.", f.Month)
		}
		return fmt.Sprintf("It is in month %d of the Chinese lunar calendar (not a leap month).", f.Month)
	case KindEvent:
		switch f.Relation {
		case SameDay:
			return fmt.Sprintf("It is the very day of %s.", f.Event)
		case SameMonth:
			return fmt.Sprintf("It is in the same month of the same year as %s.", f.Event)
		case SameYear:
			return fmt.Sprintf("It is in the same year as %s.", f.Event)
		case Anniversary:
			return fmt.Sprintf("It falls on an anniversary of %s: the same month and day, in any year.", f.Event)
		case During:
			return fmt.Sprintf("It falls during %s, first and last day included.", f.Event)
		case DuringYears:
			return fmt.Sprintf("The year is one of the calendar years in which %s took place, at least in part.", f.Event)
		}
	}
	return u.explicit(f)
}

// explicit renders f with its dates spelled out: what a solver needs no
// knowledge to check. Calendar facts read the same in both renderings.
func (u *universe) explicit(f *Fact) string {
	switch f.Kind {
	case KindYear:
		return fmt.Sprintf("The year is %d.", f.Year)
	case KindDecade:
		if f.Year%10 != 0 { // a decade no year is in (an imported value)
			return fmt.Sprintf("The year, rounded down to a multiple of 10, is %d.", f.Year)
		}
		return fmt.Sprintf("The year is between %d and %d (both included).", f.Year, f.Year+9)
	case KindLeapYear:
		if f.Leap {
			return "The year is a leap year."
		}
		return "The year is not a leap year."
	case KindMonth:
		if f.Month < 1 || f.Month > 12 { // no such month (an imported value)
			return fmt.Sprintf("The month is the %s month of the year.", dayWord(f.Month))
		}
		return fmt.Sprintf("The month is %s.", monthNames[f.Month])
	case KindSeason:
		names := make([]string, len(f.Months))
		for i, m := range f.Months {
			names[i] = monthNames[m]
		}
		return fmt.Sprintf("The month is %s.", orList(names))
	case KindZodiac, KindLunar:
		return u.periods(f)
	case KindYearSet:
		var in []string
		for _, y := range f.Years {
			if y >= u.fromYear && y <= u.toYear {
				in = append(in, strconv.Itoa(y))
			}
		}
		if len(in) == 0 {
			return "No year in the range qualifies."
		}
		if len(in) == 1 {
			return fmt.Sprintf("The year is %s.", in[0])
		}
		return fmt.Sprintf("The year is one of %s.", orList(in))
	case KindWeekday:
		return fmt.Sprintf("It is a %s.", weekdayNames[f.Weekday])
	case KindNth:
		switch {
		case f.N == 0 || f.N < -5 || f.N > 5: // no such weekday of a month (an imported value)
			if f.N < 0 {
				return fmt.Sprintf("It is the %s-to-last %s of its month.", dayWord(-f.N), weekdayNames[f.Weekday])
			}
			return fmt.Sprintf("It is the %s %s of its month.", dayWord(f.N), weekdayNames[f.Weekday])
		case f.N == -1:
			return fmt.Sprintf("It is the last %s of its month.", weekdayNames[f.Weekday])
		case f.N < 0:
			return fmt.Sprintf("It is the %s-to-last %s of its month.", nthWords[-f.N], weekdayNames[f.Weekday])
		}
		return fmt.Sprintf("It is the %s %s of its month.", nthWords[f.N], weekdayNames[f.Weekday])
	case KindDay:
		switch f.Day {
		case -1:
			return "It is the last day of its month."
		case 1:
			return "It is the first day of its month."
		}
		return fmt.Sprintf("It is the %s day of its month.", dayWord(f.Day))
	case KindDayRange:
		return fmt.Sprintf("The day of the month is %s the %s.", f.Op, dayWord(f.Day))
	case KindWeekdays:
		names := make([]string, len(f.Weekdays))
		for i, w := range f.Weekdays {
			names[i] = "a " + weekdayNames[w]
		}
		return fmt.Sprintf("It is %s.", orList(names))
	case KindEvent:
		a, b, _ := eventDays(f)
		switch f.Relation {
		case SameDay:
			return fmt.Sprintf("The date is %s.", f.Start)
		case SameMonth:
			y, m, _ := civil(a)
			return fmt.Sprintf("The date is in %s %d.", monthNames[m], y)
		case SameYear:
			y, _, _ := civil(a)
			return fmt.Sprintf("The year is %d.", y)
		case Anniversary:
			return fmt.Sprintf("The month and day are %s %d (in any year).", monthNames[a], b)
		case During:
			return fmt.Sprintf("The date is between %s and %s (both included).", f.Start, f.End)
		case DuringYears:
			return fmt.Sprintf("The year is between %d and %d (both included).", a, b)
		}
	}
	return ""
}

// periods spells out a lunar fact as the Gregorian periods it covers within
// the universe.
func (u *universe) periods(f *Fact) string {
	var b strings.Builder
	b.WriteString("The date falls in one of these periods (both ends included): ")
	last := u.first + u.n - 1
	k := 0
	add := func(s, e int) {
		s, e = max(s, u.first), min(e, last)
		if s > e {
			return
		}
		if k > 0 {
			b.WriteString("; ")
		}
		k++
		b.WriteString(formatDate(s))
		b.WriteString(" to ")
		b.WriteString(formatDate(e))
	}
	lt := u.lunar
	if f.Kind == KindZodiac {
		// The days before the table's first new year are of the lunar year
		// before its first, one step back in the animal cycle.
		if prev := ZodiacAnimals[(animalIndex(lt.animalOf(lt.firstYear))+11)%12]; strings.EqualFold(prev, f.Animal) {
			add(u.first, lt.first()-1)
		}
		for i, a := range lt.animals {
			if !strings.EqualFold(a, f.Animal) {
				continue
			}
			s := lt.months[lt.newYear[i]].start
			e := lt.end() - 1
			if i+1 < len(lt.newYear) {
				e = lt.months[lt.newYear[i+1]].start - 1
			}
			add(s, e)
		}
	} else {
		for _, m := range lt.months {
			if m.month == f.Month && m.leap == f.Leap {
				add(m.start, m.start+m.days-1)
			}
		}
	}
	if k == 0 {
		b.WriteString("none")
	}
	b.WriteString(".")
	return b.String()
}
