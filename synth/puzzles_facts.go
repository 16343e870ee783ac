package synth

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PuzzleLevel is the granularity of a fact (seed 004 App. A.2): what part
// of a date it constrains.
type PuzzleLevel string

// The three constraint levels.
const (
	PuzzleLevelYear  PuzzleLevel = "year"
	PuzzleLevelMonth PuzzleLevel = "month"
	PuzzleLevelDay   PuzzleLevel = "day"
)

var puzzleLevels = [3]PuzzleLevel{PuzzleLevelYear, PuzzleLevelMonth, PuzzleLevelDay}

// PuzzleKind is a fact category of seed 004 Table 2. Each kind reads its own
// PuzzleFact fields, listed here.
type PuzzleKind string

// The fact kinds. Weekdays are ISO numbers, 1 Monday to 7 Sunday.
const (
	PuzzleKindYear     PuzzleKind = "year"          // Year
	PuzzleKindDecade   PuzzleKind = "decade"        // Year: the decade's first year (1980 for the 1980s)
	PuzzleKindLeapYear PuzzleKind = "leap_year"     // Leap: whether the year is a leap year
	PuzzleKindZodiac   PuzzleKind = "zodiac"        // Animal: the Chinese zodiac animal of the lunar year
	PuzzleKindMonth    PuzzleKind = "month"         // Month
	PuzzleKindSeason   PuzzleKind = "season"        // Season (its name) and Months (what it means)
	PuzzleKindLunar    PuzzleKind = "lunar_month"   // Month (1–12) and Leap of the Chinese lunar month
	PuzzleKindWeekday  PuzzleKind = "weekday"       // Weekday
	PuzzleKindNth      PuzzleKind = "nth_weekday"   // N (1–5, or -1 for the last) and Weekday
	PuzzleKindDay      PuzzleKind = "day_of_month"  // Day (1–31, or -1 for the last day)
	PuzzleKindDayRange PuzzleKind = "day_range"     // Op ("before" or "after") and Day: day of month < Day or > Day
	PuzzleKindWeekdays PuzzleKind = "multi_weekday" // Weekdays (2 to 6 of them)
	PuzzleKindEvent    PuzzleKind = "event"         // Event, Relation, Start and End: a knowledge-base event
)

// PuzzleKinds lists every kind in the order of seed 004 Table 2.
var PuzzleKinds = []PuzzleKind{
	PuzzleKindYear, PuzzleKindDecade, PuzzleKindLeapYear, PuzzleKindZodiac,
	PuzzleKindMonth, PuzzleKindSeason, PuzzleKindLunar,
	PuzzleKindNth, PuzzleKindDay, PuzzleKindWeekday, PuzzleKindWeekdays, PuzzleKindDayRange,
	PuzzleKindEvent,
}

// puzzleKindLevel is the level of every kind but event, whose level depends
// on its relation.
var puzzleKindLevel = map[PuzzleKind]PuzzleLevel{
	PuzzleKindYear: PuzzleLevelYear, PuzzleKindDecade: PuzzleLevelYear, PuzzleKindLeapYear: PuzzleLevelYear,
	PuzzleKindZodiac: PuzzleLevelYear, PuzzleKindMonth: PuzzleLevelMonth, PuzzleKindSeason: PuzzleLevelMonth,
	PuzzleKindLunar: PuzzleLevelMonth, PuzzleKindWeekday: PuzzleLevelDay, PuzzleKindNth: PuzzleLevelDay,
	PuzzleKindDay: PuzzleLevelDay, PuzzleKindDayRange: PuzzleLevelDay, PuzzleKindWeekdays: PuzzleLevelDay,
}

// PuzzleRelation is how an event fact relates the date to a knowledge-base
// event. Point events (no end) allow same_day and anniversary (with a full
// date), same_month (with a month) and same_year; periods allow during (both
// ends full dates) and during_years.
type PuzzleRelation string

// The event relations. Start and End of the fact hold the event's dates at
// the precision the relation reads.
const (
	PuzzleSameDay     PuzzleRelation = "same_day"     // the date is Start (YYYY-MM-DD)
	PuzzleSameMonth   PuzzleRelation = "same_month"   // in Start's month (YYYY-MM)
	PuzzleSameYear    PuzzleRelation = "same_year"    // in Start's year (YYYY)
	PuzzleAnniversary PuzzleRelation = "anniversary"  // Start's month and day (YYYY-MM-DD), any year
	PuzzleDuring      PuzzleRelation = "during"       // from Start to End (YYYY-MM-DD), both included
	PuzzleDuringYears PuzzleRelation = "during_years" // in a year from Start to End (YYYY), both included
)

// PuzzleFact is one constraint of a puzzle in structured form: enough to
// compute its set of dates again (PuzzleSolve) without the knowledge base or
// the configuration that made it. Fields a kind does not read are zero and
// are written as null.
type PuzzleFact struct {
	Kind     PuzzleKind     `json:"kind"`
	Level    PuzzleLevel    `json:"level"`
	Year     int            `json:"year"`
	Month    int            `json:"month"`
	Day      int            `json:"day"`
	Weekday  int            `json:"weekday"`
	N        int            `json:"n"`
	Leap     bool           `json:"leap"`
	Animal   string         `json:"animal"`
	Season   string         `json:"season"`
	Months   []int          `json:"months"`
	Weekdays []int          `json:"weekdays"`
	Op       string         `json:"op"`
	Event    string         `json:"event"`
	Relation PuzzleRelation `json:"relation"`
	Start    string         `json:"start"`
	End      string         `json:"end"`
}

// puzzleMonthNames and puzzleWeekdayNames name months 1–12 and ISO weekdays 1–7.
var (
	puzzleMonthNames   = [13]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	puzzleWeekdayNames = [8]string{"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	puzzleNthWords     = [6]string{"last", "first", "second", "third", "fourth", "fifth"}
)

// puzzleUniverse is the date range of a puzzle set with the day sets of
// every calendar fact precomputed. It is read-only once built, so
// generators on several goroutines share it.
type puzzleUniverse struct {
	first, n         int // day number of the first day, number of days
	fromYear, toYear int
	words            int
	lunar            *puzzleLunarTable
	lunarOK          bool // the table covers every day of the range

	full       puzzleBits
	weekday    [8]puzzleBits
	dom        [32]puzzleBits
	lastDom    puzzleBits
	domLE      [32]puzzleBits // day of month ≤ d
	nth        [6][8]puzzleBits
	month      [13]puzzleBits
	leap       puzzleBits
	common     puzzleBits
	lunarMonth [13][2]puzzleBits
	zodiac     [12]puzzleBits
}

// Limits of a puzzle universe.
const (
	PuzzleMinYear  = 1
	PuzzleMaxYear  = 9999
	PuzzleMaxYears = 2000 // years in one range
)

func newPuzzleUniverse(fromYear, toYear int) (*puzzleUniverse, error) {
	lt, err := puzzleLunar()
	if err != nil {
		return nil, err
	}
	return newPuzzleUniverseWith(fromYear, toYear, lt)
}

// newPuzzleUniverseWith builds the universe on a given lunar calendar.
func newPuzzleUniverseWith(fromYear, toYear int, lt *puzzleLunarTable) (*puzzleUniverse, error) {
	if fromYear < PuzzleMinYear || toYear > PuzzleMaxYear || fromYear > toYear {
		return nil, fmt.Errorf("years %d-%d: want %d <= from <= to <= %d", fromYear, toYear, PuzzleMinYear, PuzzleMaxYear)
	}
	if toYear-fromYear+1 > PuzzleMaxYears {
		return nil, fmt.Errorf("years %d-%d: at most %d years", fromYear, toYear, PuzzleMaxYears)
	}
	u := &puzzleUniverse{fromYear: fromYear, toYear: toYear, lunar: lt}
	u.first = puzzleDayNumber(fromYear, 1, 1)
	u.n = puzzleDayNumber(toYear, 12, 31) + 1 - u.first
	u.words = (u.n + 63) / 64
	u.lunarOK = u.first >= lt.first() && u.first+u.n <= lt.end()
	newSet := func() puzzleBits { return puzzleBits{w: make([]uint64, u.words), lo: 0, hi: u.words} }
	u.full = newSet()
	u.full.setRange(0, u.n)
	all := []*puzzleBits{&u.lastDom, &u.leap, &u.common}
	for i := 1; i <= 7; i++ {
		all = append(all, &u.weekday[i])
		for n := range 6 {
			all = append(all, &u.nth[n][i])
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
	for _, s := range all {
		*s = newSet()
	}
	for y := fromYear; y <= toYear; y++ {
		yearSet := &u.common
		if puzzleIsLeap(y) {
			yearSet = &u.leap
		}
		for m := 1; m <= 12; m++ {
			start := puzzleDayNumber(y, m, 1)
			dim := puzzleDaysIn(y, m)
			wd0 := puzzleWeekday(start) - 1
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
				if d+7 > dim {
					u.nth[0][wd].set(i)
				}
			}
		}
	}
	for d := 1; d <= 31; d++ {
		u.domLE[d].copyFrom(&u.domLE[d-1])
		u.domLE[d].or(&u.dom[d])
	}
	if u.lunarOK {
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
			u.zodiac[puzzleAnimalIndex(lt.animalOf(lm.year))].setBitsRange(a, b)
		}
	}
	for _, s := range all {
		s.trim()
	}
	return u, nil
}

// setBitsRange adds days [a, b) without touching the span (full-span sets).
func (s *puzzleBits) setBitsRange(a, b int) {
	for i := a; i < b; i++ {
		s.set(i)
	}
}

// newScratch returns an empty set the size of the universe.
func (u *puzzleUniverse) newScratch() puzzleBits {
	return puzzleBits{w: make([]uint64, u.words)}
}

func (u *puzzleUniverse) firstDate() string { return puzzleFormatDate(u.first) }
func (u *puzzleUniverse) lastDate() string  { return puzzleFormatDate(u.first + u.n - 1) }

// yearRange is the day-index range [a, b) of years y1..y2 clipped to the
// universe.
func (u *puzzleUniverse) yearRange(y1, y2 int) (int, int) {
	y1, y2 = max(y1, u.fromYear), min(y2, u.toYear)
	if y1 > y2 {
		return 0, 0
	}
	return puzzleDayNumber(y1, 1, 1) - u.first, puzzleDayNumber(y2, 12, 31) + 1 - u.first
}

// dayRange clips day numbers [a, b] (inclusive) to day indexes [a', b').
func (u *puzzleUniverse) dayRange(a, b int) (int, int) {
	a, b = max(a, u.first), min(b+1, u.first+u.n)
	if a >= b {
		return 0, 0
	}
	return a - u.first, b - u.first
}

// checkFact validates a fact's fields for its kind.
func (u *puzzleUniverse) checkFact(f *PuzzleFact) error {
	weekdayOK := func(w int) bool { return w >= 1 && w <= 7 }
	switch f.Kind {
	case PuzzleKindYear:
		if f.Year < PuzzleMinYear || f.Year > PuzzleMaxYear {
			return fmt.Errorf("year %d is not from %d to %d", f.Year, PuzzleMinYear, PuzzleMaxYear)
		}
	case PuzzleKindDecade:
		if f.Year < 0 || f.Year > PuzzleMaxYear || f.Year%10 != 0 {
			return fmt.Errorf("decade %d is not a multiple of 10 from 0 to 9990", f.Year)
		}
	case PuzzleKindLeapYear:
	case PuzzleKindZodiac:
		if puzzleAnimalIndex(f.Animal) < 0 {
			return fmt.Errorf("animal %q is not one of %s", f.Animal, strings.Join(PuzzleZodiacAnimals[:], ", "))
		}
	case PuzzleKindMonth, PuzzleKindLunar:
		if f.Month < 1 || f.Month > 12 {
			return fmt.Errorf("month %d is not from 1 to 12", f.Month)
		}
	case PuzzleKindSeason:
		if len(f.Months) == 0 {
			return fmt.Errorf("season %q has no months", f.Season)
		}
		for _, m := range f.Months {
			if m < 1 || m > 12 {
				return fmt.Errorf("season %q: month %d is not from 1 to 12", f.Season, m)
			}
		}
	case PuzzleKindWeekday:
		if !weekdayOK(f.Weekday) {
			return fmt.Errorf("weekday %d is not from 1 (Monday) to 7 (Sunday)", f.Weekday)
		}
	case PuzzleKindNth:
		if !weekdayOK(f.Weekday) {
			return fmt.Errorf("weekday %d is not from 1 (Monday) to 7 (Sunday)", f.Weekday)
		}
		if f.N != -1 && (f.N < 1 || f.N > 5) {
			return fmt.Errorf("n %d is not from 1 to 5, or -1 for the last", f.N)
		}
	case PuzzleKindDay:
		if f.Day != -1 && (f.Day < 1 || f.Day > 31) {
			return fmt.Errorf("day %d is not from 1 to 31, or -1 for the last", f.Day)
		}
	case PuzzleKindDayRange:
		if f.Op != "before" && f.Op != "after" {
			return fmt.Errorf("op %q is not before or after", f.Op)
		}
		if f.Day < 1 || f.Day > 31 {
			return fmt.Errorf("day %d is not from 1 to 31", f.Day)
		}
	case PuzzleKindWeekdays:
		if len(f.Weekdays) == 0 {
			return fmt.Errorf("no weekdays")
		}
		for _, w := range f.Weekdays {
			if !weekdayOK(w) {
				return fmt.Errorf("weekday %d is not from 1 (Monday) to 7 (Sunday)", w)
			}
		}
	case PuzzleKindEvent:
		_, _, err := puzzleEventDays(f)
		return err
	default:
		return fmt.Errorf("unknown kind %q", f.Kind)
	}
	if (f.Kind == PuzzleKindZodiac || f.Kind == PuzzleKindLunar) && !u.lunarOK {
		return fmt.Errorf("%s facts need years within the lunar table (%s to %s)", f.Kind,
			puzzleFormatDate(u.lunar.first()), puzzleFormatDate(u.lunar.end()-1))
	}
	return nil
}

// puzzleEventDays returns what an event fact's Start and End mean: for
// same_day, same_month, same_year and during, the inclusive day-number range;
// for anniversary, the month and day as a and b; for during_years, the
// years.
func puzzleEventDays(f *PuzzleFact) (a, b int, err error) {
	parse := func(s string, want int) (y, m, d int, err error) {
		y, m, d, prec, err := puzzleParsePartial(s)
		if err != nil {
			return 0, 0, 0, err
		}
		if prec != want {
			return 0, 0, 0, fmt.Errorf("%s needs %s as %s", f.Relation, s, [4]string{"", "YYYY", "YYYY-MM", "YYYY-MM-DD"}[want])
		}
		return y, m, d, nil
	}
	switch f.Relation {
	case PuzzleSameDay:
		y, m, d, err := parse(f.Start, 3)
		if err != nil {
			return 0, 0, err
		}
		n := puzzleDayNumber(y, m, d)
		return n, n, nil
	case PuzzleSameMonth:
		y, m, _, err := parse(f.Start, 2)
		if err != nil {
			return 0, 0, err
		}
		return puzzleDayNumber(y, m, 1), puzzleDayNumber(y, m, puzzleDaysIn(y, m)), nil
	case PuzzleSameYear:
		y, _, _, err := parse(f.Start, 1)
		if err != nil {
			return 0, 0, err
		}
		return puzzleDayNumber(y, 1, 1), puzzleDayNumber(y, 12, 31), nil
	case PuzzleAnniversary:
		_, m, d, err := parse(f.Start, 3)
		return m, d, err
	case PuzzleDuring, PuzzleDuringYears:
		want := 3
		if f.Relation == PuzzleDuringYears {
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
			a, b = puzzleDayNumber(y1, m1, d1), puzzleDayNumber(y2, m2, d2)
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
func (u *puzzleUniverse) factSet(f *PuzzleFact, scratch *puzzleBits) *puzzleBits {
	switch f.Kind {
	case PuzzleKindYear:
		scratch.setRange(u.yearRange(f.Year, f.Year))
	case PuzzleKindDecade:
		scratch.setRange(u.yearRange(f.Year, f.Year+9))
	case PuzzleKindLeapYear:
		if f.Leap {
			return &u.leap
		}
		return &u.common
	case PuzzleKindZodiac:
		return &u.zodiac[puzzleAnimalIndex(f.Animal)]
	case PuzzleKindMonth:
		return &u.month[f.Month]
	case PuzzleKindSeason:
		scratch.clear()
		for _, m := range f.Months {
			scratch.or(&u.month[m])
		}
		scratch.trim()
	case PuzzleKindLunar:
		if f.Leap {
			return &u.lunarMonth[f.Month][1]
		}
		return &u.lunarMonth[f.Month][0]
	case PuzzleKindWeekday:
		return &u.weekday[f.Weekday]
	case PuzzleKindNth:
		return &u.nth[max(f.N, 0)][f.Weekday]
	case PuzzleKindDay:
		if f.Day == -1 {
			return &u.lastDom
		}
		return &u.dom[f.Day]
	case PuzzleKindDayRange:
		if f.Op == "before" {
			return &u.domLE[f.Day-1]
		}
		scratch.copyFrom(&u.full)
		le := &u.domLE[f.Day]
		for k := le.lo; k < le.hi; k++ {
			scratch.w[k] &^= le.w[k]
		}
		scratch.trim()
	case PuzzleKindWeekdays:
		scratch.clear()
		for _, w := range f.Weekdays {
			scratch.or(&u.weekday[w])
		}
		scratch.trim()
	case PuzzleKindEvent:
		a, b, _ := puzzleEventDays(f)
		switch f.Relation {
		case PuzzleAnniversary:
			scratch.clear()
			for y := u.fromYear; y <= u.toYear; y++ {
				if b <= puzzleDaysIn(y, a) {
					scratch.set(puzzleDayNumber(y, a, b) - u.first)
				}
			}
			scratch.trim()
		case PuzzleDuringYears:
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
func (u *puzzleUniverse) holds(f *PuzzleFact, n int) bool {
	y, m, d := puzzleCivil(n)
	wd := puzzleWeekday(n)
	dim := puzzleDaysIn(y, m)
	switch f.Kind {
	case PuzzleKindYear:
		return y == f.Year
	case PuzzleKindDecade:
		return y/10*10 == f.Year
	case PuzzleKindLeapYear:
		return puzzleIsLeap(y) == f.Leap
	case PuzzleKindZodiac:
		i := u.lunar.monthAt(n)
		return i >= 0 && strings.EqualFold(u.lunar.animalOf(u.lunar.months[i].year), f.Animal)
	case PuzzleKindMonth:
		return m == f.Month
	case PuzzleKindSeason:
		return slices.Contains(f.Months, m)
	case PuzzleKindLunar:
		i := u.lunar.monthAt(n)
		return i >= 0 && u.lunar.months[i].month == f.Month && u.lunar.months[i].leap == f.Leap
	case PuzzleKindWeekday:
		return wd == f.Weekday
	case PuzzleKindNth:
		if wd != f.Weekday {
			return false
		}
		if f.N == -1 {
			return d > dim-7
		}
		return (d+6)/7 == f.N
	case PuzzleKindDay:
		if f.Day == -1 {
			return d == dim
		}
		return d == f.Day
	case PuzzleKindDayRange:
		if f.Op == "before" {
			return d < f.Day
		}
		return d > f.Day
	case PuzzleKindWeekdays:
		return slices.Contains(f.Weekdays, wd)
	case PuzzleKindEvent:
		a, b, _ := puzzleEventDays(f)
		switch f.Relation {
		case PuzzleAnniversary:
			return m == a && d == b
		case PuzzleDuringYears:
			return y >= a && y <= b
		}
		return n >= a && n <= b
	}
	return false
}

// puzzleOrdinal writes 1st, 2nd, 3rd, 4th, 11th, 21st ...
func puzzleOrdinal(n int) string {
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

// puzzleOrList joins items as "a", "a or b", "a, b or c".
func puzzleOrList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// implicit renders f the way a puzzle states it: events by description,
// zodiac and lunar months by name.
func (u *puzzleUniverse) implicit(f *PuzzleFact) string {
	switch f.Kind {
	case PuzzleKindDecade:
		return fmt.Sprintf("It is in the %ds.", f.Year)
	case PuzzleKindZodiac:
		return fmt.Sprintf("It is in a Chinese zodiac year of the %s (the zodiac year begins at the Chinese New Year).", f.Animal)
	case PuzzleKindSeason:
		return fmt.Sprintf("It is %s.", strings.ToLower(f.Season))
	case PuzzleKindLunar:
		if f.Leap {
			return fmt.Sprintf("It is in the leap month that follows month %d of the Chinese lunar calendar.", f.Month)
		}
		return fmt.Sprintf("It is in month %d of the Chinese lunar calendar (not a leap month).", f.Month)
	case PuzzleKindEvent:
		switch f.Relation {
		case PuzzleSameDay:
			return fmt.Sprintf("It is the very day of %s.", f.Event)
		case PuzzleSameMonth:
			return fmt.Sprintf("It is in the same month of the same year as %s.", f.Event)
		case PuzzleSameYear:
			return fmt.Sprintf("It is in the same year as %s.", f.Event)
		case PuzzleAnniversary:
			return fmt.Sprintf("It falls on an anniversary of %s: the same month and day, in any year.", f.Event)
		case PuzzleDuring:
			return fmt.Sprintf("It falls during %s, first and last day included.", f.Event)
		case PuzzleDuringYears:
			return fmt.Sprintf("The year is one of the calendar years in which %s took place, at least in part.", f.Event)
		}
	}
	return u.explicit(f)
}

// explicit renders f with its dates spelled out: what a solver needs no
// knowledge to check. Calendar facts read the same in both renderings.
func (u *puzzleUniverse) explicit(f *PuzzleFact) string {
	switch f.Kind {
	case PuzzleKindYear:
		return fmt.Sprintf("The year is %d.", f.Year)
	case PuzzleKindDecade:
		return fmt.Sprintf("The year is between %d and %d (both included).", f.Year, f.Year+9)
	case PuzzleKindLeapYear:
		if f.Leap {
			return "The year is a leap year."
		}
		return "The year is not a leap year."
	case PuzzleKindMonth:
		return fmt.Sprintf("The month is %s.", puzzleMonthNames[f.Month])
	case PuzzleKindSeason:
		names := make([]string, len(f.Months))
		for i, m := range f.Months {
			names[i] = puzzleMonthNames[m]
		}
		return fmt.Sprintf("The month is %s.", puzzleOrList(names))
	case PuzzleKindZodiac, PuzzleKindLunar:
		return u.periods(f)
	case PuzzleKindWeekday:
		return fmt.Sprintf("It is a %s.", puzzleWeekdayNames[f.Weekday])
	case PuzzleKindNth:
		return fmt.Sprintf("It is the %s %s of its month.", puzzleNthWords[max(f.N, 0)], puzzleWeekdayNames[f.Weekday])
	case PuzzleKindDay:
		switch f.Day {
		case -1:
			return "It is the last day of its month."
		case 1:
			return "It is the first day of its month."
		}
		return fmt.Sprintf("It is the %s day of its month.", puzzleOrdinal(f.Day))
	case PuzzleKindDayRange:
		return fmt.Sprintf("The day of the month is %s the %s.", f.Op, puzzleOrdinal(f.Day))
	case PuzzleKindWeekdays:
		names := make([]string, len(f.Weekdays))
		for i, w := range f.Weekdays {
			names[i] = "a " + puzzleWeekdayNames[w]
		}
		return fmt.Sprintf("It is %s.", puzzleOrList(names))
	case PuzzleKindEvent:
		a, b, _ := puzzleEventDays(f)
		switch f.Relation {
		case PuzzleSameDay:
			return fmt.Sprintf("The date is %s.", f.Start)
		case PuzzleSameMonth:
			y, m, _ := puzzleCivil(a)
			return fmt.Sprintf("The date is in %s %d.", puzzleMonthNames[m], y)
		case PuzzleSameYear:
			y, _, _ := puzzleCivil(a)
			return fmt.Sprintf("The year is %d.", y)
		case PuzzleAnniversary:
			return fmt.Sprintf("The month and day are %s %d (in any year).", puzzleMonthNames[a], b)
		case PuzzleDuring:
			return fmt.Sprintf("The date is between %s and %s (both included).", f.Start, f.End)
		case PuzzleDuringYears:
			return fmt.Sprintf("The year is between %d and %d (both included).", a, b)
		}
	}
	return ""
}

// periods spells out a lunar fact as the Gregorian periods it covers within
// the universe.
func (u *puzzleUniverse) periods(f *PuzzleFact) string {
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
		b.WriteString(puzzleFormatDate(s))
		b.WriteString(" to ")
		b.WriteString(puzzleFormatDate(e))
	}
	lt := u.lunar
	if f.Kind == PuzzleKindZodiac {
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
