package puzzles

import (
	"math/bits"
	"slices"
	"strings"
)

// Doubt about the lunar calendar comes in two forms.
//
// Unknown days lie outside the embedded table: their lunar month (and,
// after the table's end, their lunar year) is not known at all.
//
// Disputed days lie between the candidate dates of a disputed month start.
// Another source puts the start of a disputed month (one of the 1900s' four,
// whose new moon falls within minutes of midnight) a day earlier or later,
// and the new year of a disputed lunar year (the 1800s' four) up to a new
// moon earlier or later, which lunar month the package does not know. When
// the start moves, the days it passes over belong to the month on the other
// side of it: the month before it if the start is later, the month it begins
// if earlier. Every other day keeps the table's month and year, so the doubt
// covers only the days between the earliest and the latest candidate start.
//
// Lunar and zodiac facts are decided together, day by day, under each
// reading of the calendar: a day is in the answer for certain when every
// reading puts it there, and doubtful when some do and some do not. Two
// facts that are each doubtful on a day are read against one calendar at a
// time, so neither clears the other.

// lunarLabel is what the lunar calendar says of a day: its month and leap
// flag, and its lunar year, which gives the zodiac animal.
type lunarLabel struct {
	year, month int
	leap        bool
}

func (t *lunarTable) label(i int) lunarLabel {
	m := &t.months[i]
	return lunarLabel{m.year, m.month, m.leap}
}

// disputeGroup is one stretch of disputed days: the day indexes of the
// universe between the earliest and latest candidate starts of one or more
// disputed month starts, with the label of every day under each reading
// (labels[0] is the table's).
type disputeGroup struct {
	lo, hi int            // day indexes [lo, hi) of the universe
	labels [][]lunarLabel // labels[r][d-lo]: day d under reading r
}

// disputes are the disputed days of a universe: the groups, and all their
// days as a set.
type disputes struct {
	groups []disputeGroup
	days   dateSet
}

// disputedStart is one disputed month start: the index of the month in the
// table and its candidate starts (day numbers), the table's own first.
type disputedStart struct {
	month int
	cands []int
}

// disputedStarts lists the disputed month starts of years and months, in
// table order: a month start may move a day either way; a new year (the
// start of month 1 of a disputed year) to the previous or the next month's
// start.
func (t *lunarTable) disputedStarts(years []int, months []LunarRef) []disputedStart {
	var out []disputedStart
	add := func(i int, cands ...int) {
		k := slices.IndexFunc(out, func(d disputedStart) bool { return d.month == i })
		if k < 0 {
			out = append(out, disputedStart{month: i, cands: []int{t.months[i].start}})
			k = len(out) - 1
		}
		for _, c := range cands {
			if !slices.Contains(out[k].cands, c) {
				out[k].cands = append(out[k].cands, c)
			}
		}
	}
	for _, r := range months {
		if i := t.find(r); i >= 0 {
			s := t.months[i].start
			if i == 0 {
				add(i, s+1)
			} else {
				add(i, s-1, s+1)
			}
		}
	}
	for _, y := range years {
		if y < t.firstYear || y-t.firstYear >= len(t.newYear) {
			continue
		}
		i := t.newYear[y-t.firstYear]
		var cands []int
		if i > 0 {
			cands = append(cands, t.months[i-1].start)
		}
		if i+1 < len(t.months) {
			cands = append(cands, t.months[i+1].start)
		}
		add(i, cands...)
	}
	slices.SortFunc(out, func(a, b disputedStart) int { return a.month - b.month })
	return out
}

// disputes builds the disputed days of u for the given disputed years and
// months (both must name parts of the table; Options.Validate checks).
// Starts whose stretches overlap form one group, read under every
// combination of their candidates.
func (u *universe) disputes(years []int, months []LunarRef) *disputes {
	lt := u.lunar
	ds := &disputes{days: u.newScratch()}
	ds.days.clear()
	starts := lt.disputedStarts(years, months)
	span := func(d disputedStart) (int, int) { return slices.Min(d.cands), slices.Max(d.cands) }
	for k := 0; k < len(starts); {
		lo, hi := span(starts[k])
		j := k + 1
		for ; j < len(starts); j++ {
			a, b := span(starts[j])
			if a >= hi {
				break
			}
			lo, hi = min(lo, a), max(hi, b)
		}
		ds.addGroup(u, starts[k:j], lo, hi)
		k = j
	}
	ds.days.trim()
	return ds
}

// addGroup adds the group of starts whose candidates span day numbers
// [lo, hi), clipped to the universe and the table.
func (ds *disputes) addGroup(u *universe, starts []disputedStart, lo, hi int) {
	lt := u.lunar
	a, b := max(lo, u.first, lt.first()), min(hi, u.first+u.n, lt.end())
	if a >= b {
		return
	}
	g := disputeGroup{lo: a - u.first, hi: b - u.first}
	// The months whose days the group can touch: from the month before the
	// one holding lo to the month after the one holding hi-1.
	m0, m1 := max(lt.monthAt(a)-1, 0), min(lt.monthAt(b-1)+1, len(lt.months)-1)
	choice := make([]int, len(starts))
	for {
		startOf := func(i int) int { // the start of month i under this reading
			for k, s := range starts {
				if s.month == i {
					return s.cands[choice[k]]
				}
			}
			return lt.months[i].start
		}
		row := make([]lunarLabel, b-a)
		for n := a; n < b; n++ {
			// The month of day n: the last whose start is on or before it.
			best := m0
			for i := m0; i <= m1; i++ {
				if startOf(i) <= n {
					best = i
				}
			}
			row[n-a] = lt.label(best)
		}
		g.labels = append(g.labels, row)
		// Next combination of candidates (the first, all zero, is the table).
		k := 0
		for ; k < len(choice); k++ {
			if choice[k]++; choice[k] < len(starts[k].cands) {
				break
			}
			choice[k] = 0
		}
		if k == len(choice) {
			break
		}
	}
	for i := g.lo; i < g.hi; i++ {
		ds.days.set(i)
	}
	ds.groups = append(ds.groups, g)
}

// isLunarKind says a fact reads the lunar calendar.
func isLunarKind(k Kind) bool { return k == KindLunar || k == KindZodiac }

// holdsOn says whether lunar fact f holds on a day labelled l.
func (u *universe) holdsOn(f *Fact, l lunarLabel) bool {
	if f.Kind == KindZodiac {
		return strings.EqualFold(u.lunar.animalOf(l.year), f.Animal)
	}
	return l.month == f.Month && l.leap == f.Leap
}

// lunarDoubt is what the lunar facts of a puzzle leave undecided.
type lunarDoubt struct {
	// days are the day indexes that are in the answer under some reading of
	// the calendar and not under another, sorted.
	days []int
	// fact is the index of the lunar fact that decides days[0] differently
	// under some reading; disputed says days[0] is disputed, not unknown.
	fact     int
	disputed bool
	// facts are the indexes, sorted, of every lunar fact that some reading
	// decides differently on a doubtful day (or that is unknown there).
	facts []int
	// groups hold, for each dispute group with doubtful days, the days of
	// the group the other facts allow and whether each is in the answer
	// under each reading: in[r][k] for day at[k].
	groups []groupAnswers
	// unknown are the doubtful days outside the table: any of them may be in
	// the answer, in any combination.
	unknown []int
}

type groupAnswers struct {
	at []int
	in [][]bool
}

// doubt decides the days on which the lunar facts of facts (whose sets are
// sets) cannot be read from the table alone; dz are the disputed days (nil
// for none). It returns nil when the answer is the same under every reading.
func (u *universe) doubt(facts []Fact, sets []*dateSet, dz *disputes, scratch *dateSet) *lunarDoubt {
	var lunarFacts []int
	month, year := false, false
	for i := range facts {
		if isLunarKind(facts[i].Kind) {
			lunarFacts = append(lunarFacts, i)
			month = month || facts[i].Kind == KindLunar
			year = year || facts[i].Kind == KindZodiac
		}
	}
	if len(lunarFacts) == 0 {
		return nil
	}
	// rest: the days every other fact allows.
	rest := scratch
	rest.copyFrom(&u.full)
	for i := range facts {
		if !isLunarKind(facts[i].Kind) {
			rest.and(sets[i])
		}
	}
	var d lunarDoubt
	first := -1
	note := func(day, fact int, disputed bool) {
		if first < 0 || day < first {
			first, d.fact, d.disputed = day, fact, disputed
		}
		if k, found := slices.BinarySearch(d.facts, fact); !found {
			d.facts = slices.Insert(d.facts, k, fact)
		}
	}
	// Unknown days: a lunar fact is unknown there, true or false.
	unknownOf := func(f *Fact) *dateSet {
		if f.Kind == KindLunar {
			return &u.monthUnknown
		}
		return &u.yearUnknown
	}
	if month && u.monthUnknown.hi > 0 || year && u.yearUnknown.hi > 0 {
		var unknownFacts []int
		u.unknownMembers(rest, month, year, func(day int) {
			unknownFacts = unknownFacts[:0]
			for _, i := range lunarFacts {
				switch {
				case unknownOf(&facts[i]).has(day):
					unknownFacts = append(unknownFacts, i)
				case !sets[i].has(day):
					return // known false: out whatever the calendar
				}
			}
			if len(unknownFacts) > 0 {
				d.unknown = append(d.unknown, day)
				for _, i := range unknownFacts {
					note(day, i, false)
				}
			}
		})
	}
	if dz != nil {
		for gi := range dz.groups {
			g := &dz.groups[gi]
			var ga groupAnswers
			varies := false
			for day := g.lo; day < g.hi; day++ {
				if !rest.has(day) {
					continue
				}
				ga.at = append(ga.at, day)
			}
			if len(ga.at) == 0 {
				continue
			}
			ga.in = make([][]bool, len(g.labels))
			for r, row := range g.labels {
				ga.in[r] = make([]bool, len(ga.at))
				for k, day := range ga.at {
					in := true
					for _, i := range lunarFacts {
						if !u.holdsOn(&facts[i], row[day-g.lo]) {
							in = false
							break
						}
					}
					ga.in[r][k] = in
				}
			}
			for k, day := range ga.at {
				doubtful := false
				for r := 1; r < len(ga.in); r++ {
					if ga.in[r][k] == ga.in[0][k] {
						continue
					}
					doubtful = true
					// Name every lunar fact that reads the day differently
					// under a reading that changes the answer.
					for _, i := range lunarFacts {
						if u.holdsOn(&facts[i], g.labels[r][day-g.lo]) != u.holdsOn(&facts[i], g.labels[0][day-g.lo]) {
							note(day, i, true)
						}
					}
				}
				if doubtful {
					varies = true
					d.days = append(d.days, day)
				}
			}
			if varies {
				d.groups = append(d.groups, ga)
			}
		}
	}
	d.days = append(d.days, d.unknown...)
	if len(d.days) == 0 {
		return nil
	}
	slices.Sort(d.days)
	return &d
}

// possible reports whether answer (day indexes, sorted) is the answer under
// some reading of the calendar, given the table's answer and the doubt.
func (d *lunarDoubt) possible(table, answer []int) bool {
	doubtful := func(day int) bool { _, ok := slices.BinarySearch(d.days, day); return ok }
	in := func(xs []int, day int) bool { _, ok := slices.BinarySearch(xs, day); return ok }
	// Off the doubtful days, the answer must be the table's.
	for _, day := range table {
		if !doubtful(day) && !in(answer, day) {
			return false
		}
	}
	for _, day := range answer {
		if !doubtful(day) && !in(table, day) {
			return false
		}
	}
	// On each group's days, some one reading must give the answer.
	for _, g := range d.groups {
		ok := false
		for r := range g.in {
			match := true
			for k, day := range g.at {
				if g.in[r][k] != in(answer, day) {
					match = false
					break
				}
			}
			if match {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// unknownMembers calls fn with each day of s the table cannot place: whose
// lunar month is unknown (when month) or whose lunar year is (when year).
func (u *universe) unknownMembers(s *dateSet, month, year bool, fn func(day int)) {
	word := func(set *dateSet, k int) uint64 {
		if k < set.lo || k >= set.hi {
			return 0
		}
		return set.w[k]
	}
	for k := s.lo; k < s.hi; k++ {
		var mask uint64
		if month {
			mask |= word(&u.monthUnknown, k)
		}
		if year {
			mask |= word(&u.yearUnknown, k)
		}
		for x := s.w[k] & mask; x != 0; x &= x - 1 {
			fn(k<<6 + bits.TrailingZeros64(x))
		}
	}
}
