package puzzles

import (
	_ "embed"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
)

// Day numbers count days from 0001-01-01 (day 0) in the proleptic Gregorian
// calendar; every date of the puzzles is one.

// epoch is days_from_civil(1, 1, 1): day numbers start at 0001-01-01.
const epoch = -719162

// dayNumber returns the day number of a valid Gregorian date (years
// 1 to 9999), after H. Hinnant's days_from_civil.
func dayNumber(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468 - epoch
}

// civil returns the Gregorian date of a day number (civil_from_days).
func civil(n int) (y, m, d int) {
	z := n + epoch + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = (mp+2)%12 + 1
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekdayOf is the ISO weekday of a day number: 1 Monday … 7 Sunday.
func weekdayOf(n int) int { return n%7 + 1 }

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// formatDate writes a day number as YYYY-MM-DD.
func formatDate(n int) string {
	y, m, d := civil(n)
	var b [10]byte
	b[0], b[1], b[2], b[3] = byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10)
	b[4] = '-'
	b[5], b[6] = byte('0'+m/10), byte('0'+m%10)
	b[7] = '-'
	b[8], b[9] = byte('0'+d/10), byte('0'+d%10)
	return string(b[:])
}

// parseDate reads YYYY-MM-DD (years 1 to 9999) into a day number.
func parseDate(s string) (int, error) {
	y, m, d, prec, err := parsePartial(s)
	if err != nil {
		return 0, err
	}
	if prec != 3 {
		return 0, fmt.Errorf("%q is not a full date (YYYY-MM-DD)", s)
	}
	return dayNumber(y, m, d), nil
}

// parsePartial reads YYYY, YYYY-MM or YYYY-MM-DD; prec is the number
// of parts (1 year, 2 month, 3 day).
func parsePartial(s string) (y, m, d, prec int, err error) {
	bad := fmt.Errorf("%q is not a date (YYYY, YYYY-MM or YYYY-MM-DD, years 0001 to 9999)", s)
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 {
		return 0, 0, 0, 0, bad
	}
	num := func(p string, width int) (int, bool) {
		if len(p) != width {
			return 0, false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
		}
		v, err := strconv.Atoi(p)
		return v, err == nil
	}
	var ok bool
	if y, ok = num(parts[0], 4); !ok || y < 1 {
		return 0, 0, 0, 0, bad
	}
	m, d = 1, 1
	if len(parts) > 1 {
		if m, ok = num(parts[1], 2); !ok || m < 1 || m > 12 {
			return 0, 0, 0, 0, bad
		}
	}
	if len(parts) > 2 {
		if d, ok = num(parts[2], 2); !ok || d < 1 || d > daysIn(y, m) {
			return 0, 0, 0, 0, bad
		}
	}
	return y, m, d, len(parts), nil
}

// lunarMonth is one month of the embedded Chinese calendar.
type lunarMonth struct {
	start, days int // day number of the first day, length
	year        int // lunar year
	month       int // 1–12
	leap        bool
}

// lunarTable is the embedded Chinese calendar: every month of lunar
// years 1800–2050 in order, with each lunar year's zodiac animal.
type lunarTable struct {
	months    []lunarMonth
	firstYear int
	animals   []string // by lunar year - firstYear
	newYear   []int    // index into months of each year's month 1
}

//go:embed lunar.txt
var lunarText string

var (
	lunarOnce sync.Once
	lunarData *lunarTable
	lunarErr  error
)

// lunar returns the embedded calendar, parsed once.
func lunar() (*lunarTable, error) {
	lunarOnce.Do(func() { lunarData, lunarErr = parseLunar(lunarText) })
	return lunarData, lunarErr
}

// ZodiacAnimals are the twelve animals in cycle order; lunar year 4
// (and every twelfth after it) is a year of the Rat.
var ZodiacAnimals = [12]string{"Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey", "Rooster", "Dog", "Pig"}

func animalIndex(name string) int {
	for i, a := range ZodiacAnimals {
		if strings.EqualFold(a, name) {
			return i
		}
	}
	return -1
}

func parseLunar(text string) (*lunarTable, error) {
	t := &lunarTable{}
	next := -1
	for ln, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		bad := func(msg string) error { return fmt.Errorf("puzzles: lunar table line %d: %s", ln+1, msg) }
		if len(f) != 5 {
			return nil, bad("want 5 fields")
		}
		year, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, bad("bad year")
		}
		start, err := parseDate(f[1])
		if err != nil {
			return nil, bad(err.Error())
		}
		if next >= 0 && start != next {
			return nil, bad("new year does not follow the previous year's last month")
		}
		if t.months == nil {
			t.firstYear = year
		} else if year != t.firstYear+len(t.animals) {
			return nil, bad("years are not consecutive")
		}
		if animalIndex(f[2]) != ((year-4)%12+12)%12 {
			return nil, bad("zodiac animal out of cycle")
		}
		leap, err := strconv.Atoi(f[3])
		if err != nil || leap < 0 || leap > 12 || (leap > 0) != (len(f[4]) == 13) || (leap == 0 && len(f[4]) != 12) {
			return nil, bad("bad leap month or month count")
		}
		t.animals = append(t.animals, f[2])
		t.newYear = append(t.newYear, len(t.months))
		month, isLeap := 1, false
		for _, c := range f[4] {
			days := 29
			if c == 'L' {
				days = 30
			} else if c != 'S' {
				return nil, bad("month lengths must be L or S")
			}
			t.months = append(t.months, lunarMonth{start: start, days: days, year: year, month: month, leap: isLeap})
			start += days
			if month == leap && !isLeap {
				isLeap = true
			} else {
				month++
				isLeap = false
			}
		}
		next = start
	}
	if len(t.months) == 0 {
		return nil, fmt.Errorf("puzzles: lunar table is empty")
	}
	return t, nil
}

// first and end bound the days the table covers: [first, end).
func (t *lunarTable) first() int { return t.months[0].start }
func (t *lunarTable) end() int {
	m := t.months[len(t.months)-1]
	return m.start + m.days
}

// monthAt returns the index of the month holding day n, or -1 outside the
// table.
func (t *lunarTable) monthAt(n int) int {
	if n < t.first() || n >= t.end() {
		return -1
	}
	lo, hi := 0, len(t.months)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if t.months[mid].start <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func (t *lunarTable) animalOf(lunarYear int) string {
	return t.animals[lunarYear-t.firstYear]
}

// dateSet is a set of days of a universe as a bitset. Only the words in
// [lo, hi) may hold members; words outside it are ignored, whatever they
// hold, so a set can be narrowed without clearing memory.
type dateSet struct {
	w      []uint64
	lo, hi int
}

func (s *dateSet) count() int {
	c := 0
	for _, x := range s.w[s.lo:s.hi] {
		c += bits.OnesCount64(x)
	}
	return c
}

func (s *dateSet) has(i int) bool {
	k := i >> 6
	return k >= s.lo && k < s.hi && s.w[k]&(1<<(uint(i)&63)) != 0
}

// andCount is |a ∩ b|.
func andCount(a, b *dateSet) int {
	lo, hi := max(a.lo, b.lo), min(a.hi, b.hi)
	c := 0
	if lo >= hi {
		return 0
	}
	aw, bw := a.w[lo:hi], b.w[lo:hi]
	for i := range aw {
		c += bits.OnesCount64(aw[i] & bw[i])
	}
	return c
}

// and narrows s to s ∩ b, in place.
func (s *dateSet) and(b *dateSet) {
	s.lo, s.hi = max(s.lo, b.lo), min(s.hi, b.hi)
	if s.lo >= s.hi {
		s.lo, s.hi = 0, 0
		return
	}
	sw, bw := s.w[s.lo:s.hi], b.w[s.lo:s.hi]
	for i := range sw {
		sw[i] &= bw[i]
	}
	s.trim()
}

// trim drops empty words from both ends of the span.
func (s *dateSet) trim() {
	for s.lo < s.hi && s.w[s.lo] == 0 {
		s.lo++
	}
	for s.hi > s.lo && s.w[s.hi-1] == 0 {
		s.hi--
	}
	if s.lo == s.hi {
		s.lo, s.hi = 0, 0
	}
}

// copyFrom makes s a copy of b (s must have as many words).
func (s *dateSet) copyFrom(b *dateSet) {
	copy(s.w[b.lo:b.hi], b.w[b.lo:b.hi])
	s.lo, s.hi = b.lo, b.hi
}

// clear empties s over all of its words.
func (s *dateSet) clear() {
	clear(s.w)
	s.lo, s.hi = 0, len(s.w)
}

// set adds day index i; the span must already cover it.
func (s *dateSet) set(i int) { s.w[i>>6] |= 1 << (uint(i) & 63) }

// setRange clears s and makes it [a, b) (day indexes).
func (s *dateSet) setRange(a, b int) {
	if a >= b {
		s.lo, s.hi = 0, 0
		return
	}
	s.lo, s.hi = a>>6, (b-1)>>6+1
	clear(s.w[s.lo:s.hi])
	s.orRange(a, b)
}

// orRange adds days [a, b) to s; s must span every word (a full-span
// scratch set).
func (s *dateSet) orRange(a, b int) {
	for i := a; i < b; {
		if i&63 == 0 && i+64 <= b {
			s.w[i>>6] = ^uint64(0)
			i += 64
			continue
		}
		s.set(i)
		i++
	}
}

// or adds b to s; s must span every word (a full-span scratch set).
func (s *dateSet) or(b *dateSet) {
	sw, bw := s.w[b.lo:b.hi], b.w[b.lo:b.hi]
	for i := range sw {
		sw[i] |= bw[i]
	}
}

// members calls fn with each member's day index in order.
func (s *dateSet) members(fn func(i int)) {
	for k := s.lo; k < s.hi; k++ {
		for x := s.w[k]; x != 0; x &= x - 1 {
			fn(k<<6 + bits.TrailingZeros64(x))
		}
	}
}

// nth returns the day index of the k-th member (0-based), or -1.
func (s *dateSet) nth(k int) int {
	for i := s.lo; i < s.hi; i++ {
		c := bits.OnesCount64(s.w[i])
		if k < c {
			x := s.w[i]
			for ; k > 0; k-- {
				x &= x - 1
			}
			return i<<6 + bits.TrailingZeros64(x)
		}
		k -= c
	}
	return -1
}
