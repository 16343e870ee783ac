package puzzles

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/synth"
)

// DataSource is the data_source of Time Puzzles rows, the key of the
// rewards.TimePuzzles scorer.
const DataSource = "timepuzzles"

// MaxSolutions caps a puzzle's answer set (the Time Puzzles paper, §2.1).
const MaxSolutions = 6

// Season names a season and the months it covers.
type Season struct {
	Name   string
	Months []int
}

// DefaultSeasons are the meteorological seasons of the northern
// hemisphere, as the Time Puzzles paper's prompt defines them.
func DefaultSeasons() []Season {
	return []Season{
		{"winter", []int{12, 1, 2}}, {"spring", []int{3, 4, 5}},
		{"summer", []int{6, 7, 8}}, {"autumn", []int{9, 10, 11}},
	}
}

// LunarRef names a month of the Chinese calendar.
type LunarRef struct {
	Year, Month int
	Leap        bool
}

// The policies for disputed lunar data (Options.Disputed).
const (
	DisputedAvoid = "avoid"
	DisputedAllow = "allow"
)

// DefaultDisputedYears are the lunar years whose new year another
// astronomical source dates differently (as the reference tables' notes record).
func DefaultDisputedYears() []int { return []int{1808, 1814, 1890, 1896} }

// DefaultDisputedMonths are the month starts on which the reference
// table and Debian's lunar program differ by a day, each with a new moon
// within minutes of midnight (as the reference tables' notes record).
func DefaultDisputedMonths() []LunarRef {
	return []LunarRef{{1933, 6, false}, {1954, 11, false}, {1956, 11, false}, {1978, 8, false}}
}

// Prompt is the text of a puzzle's prompt, the project's own wording
// of the Time Puzzles paper, App. E.
type Prompt struct {
	// System, when not empty, is a system message before the user turn.
	System string
	// Instruction is the user turn. Placeholders: {constraints} (the
	// numbered constraints, one a line), {first_date} and {last_date} (the
	// range of dates that count), {season_note} (a sentence defining the
	// seasons, empty unless the puzzle names one) and {conventions}.
	Instruction string
	// Conventions states the calendars the puzzle is solved in, for the
	// {conventions} placeholder: the proleptic Gregorian calendar, and the
	// Chinese calendar as computed for UTC+8.
	Conventions string
}

// DefaultConventions is the conventions preamble of DefaultInstruction.
const DefaultConventions = "Dates are in the Gregorian calendar, its rules extended back before its adoption in 1582 (the proleptic Gregorian calendar), unless a constraint says otherwise. " +
	"Chinese lunar months and zodiac years are those of the Chinese calendar computed for China's time zone, UTC+8; a zodiac year begins at the Chinese New Year."

// DefaultInstruction asks for the answer on a last line "MY ANSWER:
// YYYY-MM-DD, ..." or "MY ANSWER: None", which rewards.ParseDateAnswer
// reads.
const DefaultInstruction = `Find every date that satisfies all of the constraints below. There may be no such date, exactly one, or several, and only dates from {first_date} to {last_date} count. {conventions}{season_note}

Constraints:
{constraints}

Work through the constraints step by step and check every candidate date against all of them. Then end your reply with a line that starts with "MY ANSWER: " followed by all the valid dates as YYYY-MM-DD, separated by commas, or with "MY ANSWER: None" if no date fits.`

// Options configures a puzzle set. DefaultOptions gives the
// documented defaults; Validate names the first bad field.
type Options struct {
	// Seed, with each puzzle's index, seeds the puzzle's random stream: the
	// same seed gives the same puzzle at every index, whatever the shard or
	// the number of workers.
	Seed uint64
	// FromYear and ToYear bound the dates of every puzzle (January 1 to
	// December 31, both included).
	FromYear, ToYear int
	// Puzzle i has MinSolutions + i mod (MaxSolutions-MinSolutions+1)
	// solutions, so counts are balanced; 0 makes puzzles without a solution.
	MinSolutions, MaxSolutions int
	// MinFacts and MaxFacts bound the facts of a puzzle, the event anchor
	// included (the Time Puzzles paper: the anchor and 3 to 5 more).
	MinFacts, MaxFacts int
	// Kinds are the calendar kinds facts are drawn from; nil means all.
	// Every puzzle has one event fact besides.
	Kinds []Kind
	// Seasons defines the season facts.
	Seasons []Season
	// KB is the knowledge base of event facts.
	KB []Event
	// YearSets are the sets of year_set facts (Olympic years and the like);
	// none turns the kind off.
	YearSets []YearSet
	// YearSetReading reads them by the editions held (YearSetsHeld, the
	// default, "") or by their rule (YearSetsRule, the published
	// generator's reading); the wording says which.
	YearSetReading string
	// DisputedYears and DisputedMonths are the parts of the lunar calendar
	// no puzzle's answer may depend on: a zodiac or lunar-month fact is used
	// only when the other facts already rule out every day whose lunar year
	// (month) they could move.
	DisputedYears  []int
	DisputedMonths []LunarRef
	// Disputed is the policy for them: DisputedAvoid (the default, "")
	// keeps every answer independent of them; DisputedAllow lets them
	// decide answers as the embedded table has them.
	Disputed string
	Prompt   Prompt
	// Explicit puts the explicit rendering of the constraints in the prompt
	// instead of the implicit one (both are in every row).
	Explicit bool
	// Split and Ability are extra_info.split and the row's ability.
	Split, Ability string
	// MaxAttempts bounds the tries at one puzzle before giving up.
	MaxAttempts int
}

// DefaultOptions returns the defaults: years 1900–2030, 1 to 6
// solutions, 4 to 6 facts, every kind, the default seasons, knowledge base
// and disputed lunar data, the default instruction with implicit
// constraints, split "train", ability "temporal_reasoning".
func DefaultOptions() Options {
	return Options{
		FromYear: 1900, ToYear: 2030,
		MinSolutions: 1, MaxSolutions: MaxSolutions,
		MinFacts: 4, MaxFacts: 6,
		Seasons:        DefaultSeasons(),
		KB:             DefaultKB(),
		YearSets:       DefaultYearSets(),
		DisputedYears:  DefaultDisputedYears(),
		DisputedMonths: DefaultDisputedMonths(),
		Disputed:       DisputedAvoid,
		Prompt:         Prompt{Instruction: DefaultInstruction, Conventions: DefaultConventions},
		Split:          "train",
		Ability:        "temporal_reasoning",
		MaxAttempts:    100000,
	}
}

// ParseYears reads a year range "A-B" (or one year "A"), years 1 to
// 9999, at most MaxYears of them.
func ParseYears(s string) (from, to int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		b = a
	}
	from, err1 := strconv.Atoi(strings.TrimSpace(a))
	to, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not a year range like 1900-2030", s)
	}
	if from < MinYear || to > MaxYear || from > to {
		return 0, 0, fmt.Errorf("%q: want years %d <= A <= B <= %d", s, MinYear, MaxYear)
	}
	if to-from+1 > MaxYears {
		return 0, 0, fmt.Errorf("%q: at most %d years", s, MaxYears)
	}
	return from, to, nil
}

// Validate reports the first invalid option as an *synth.OptionError whose Key is
// the config key under synth.puzzles.
func (o *Options) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &synth.OptionError{Family: "puzzles", Key: key, Err: fmt.Errorf(format, args...)}
	}
	if _, _, err := ParseYears(fmt.Sprintf("%d-%d", o.FromYear, o.ToYear)); err != nil {
		return bad("years", "%v", err)
	}
	if o.MinSolutions < 0 || o.MinSolutions > o.MaxSolutions || o.MaxSolutions > MaxSolutions {
		return bad("solutions", "%d-%d: want 0 <= min <= max <= %d", o.MinSolutions, o.MaxSolutions, MaxSolutions)
	}
	if o.MinFacts < 2 || o.MinFacts > o.MaxFacts || o.MaxFacts > len(Kinds) {
		return bad("facts", "%d-%d: want 2 <= min <= max <= %d", o.MinFacts, o.MaxFacts, len(Kinds))
	}
	for _, k := range o.Kinds {
		if _, ok := kindLevel[k]; !ok {
			return bad("kinds", "unknown kind %q (calendar kinds: %s)", k, kindNames())
		}
	}
	seen := map[int]bool{}
	for _, s := range o.Seasons {
		if s.Name == "" || strings.ContainsAny(s.Name, ":;,\n") {
			return bad("seasons", "season name %q is empty or holds one of : ; ,", s.Name)
		}
		if len(s.Months) == 0 {
			return bad("seasons", "season %s has no months", s.Name)
		}
		for _, m := range s.Months {
			if m < 1 || m > 12 || seen[m] {
				return bad("seasons", "season %s: month %d is not from 1 to 12 or is in two seasons", s.Name, m)
			}
			seen[m] = true
		}
	}
	if len(o.KB) == 0 {
		return bad("kb", "the knowledge base is empty")
	}
	names := map[string]bool{}
	for _, ys := range o.YearSets {
		f := ys.fact()
		if err := checkYearSet(&f); err != nil || ys.Name == "" || names[ys.Name] {
			if err == nil {
				err = fmt.Errorf("name %q is empty or given twice", ys.Name)
			}
			return bad("year_sets", "set %s: %v", ys.Name, err)
		}
		names[ys.Name] = true
	}
	lt, err := lunar()
	if err != nil {
		return err
	}
	for _, y := range o.DisputedYears {
		if y < lt.firstYear || y >= lt.firstYear+len(lt.animals) {
			return bad("lunar_disputed_years", "%d is not a lunar year of the table (%d-%d)", y, lt.firstYear, lt.firstYear+len(lt.animals)-1)
		}
	}
	for _, m := range o.DisputedMonths {
		if lt.find(m) < 0 {
			return bad("lunar_disputed_months", "%s is not a month of the table", m)
		}
	}
	if o.YearSetReading != "" && o.YearSetReading != YearSetsHeld && o.YearSetReading != YearSetsRule {
		return bad("year_set_reading", "%q is not %s or %s", o.YearSetReading, YearSetsHeld, YearSetsRule)
	}
	if o.Disputed != "" && o.Disputed != DisputedAvoid && o.Disputed != DisputedAllow {
		return bad("disputed", "%q is not %s or %s", o.Disputed, DisputedAvoid, DisputedAllow)
	}
	if !strings.Contains(o.Prompt.Instruction, "{constraints}") {
		return bad("instruction", "has no {constraints} placeholder")
	}
	if o.Split == "" {
		return bad("split", "empty")
	}
	if o.Ability == "" {
		return bad("ability", "empty")
	}
	if o.MaxAttempts < 1 {
		return bad("max_attempts", "%d is not positive", o.MaxAttempts)
	}
	return nil
}

// String writes the month as its config form: 1933-6, or 1933-4L for a leap
// month.
func (r LunarRef) String() string {
	s := fmt.Sprintf("%d-%d", r.Year, r.Month)
	if r.Leap {
		s += "L"
	}
	return s
}

// ParseLunarRef reads YEAR-MONTH, with an L after the month for a
// leap month (1933-6, 2023-2L).
func ParseLunarRef(s string) (LunarRef, error) {
	var r LunarRef
	y, m, ok := strings.Cut(strings.TrimSpace(s), "-")
	if ok {
		if rest, leap := strings.CutSuffix(strings.ToUpper(m), "L"); leap {
			m, r.Leap = rest, true
		}
	}
	var err1, err2 error
	r.Year, err1 = strconv.Atoi(y)
	r.Month, err2 = strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || r.Month < 1 || r.Month > 12 {
		return LunarRef{}, fmt.Errorf("%q is not a lunar month like 1933-6 or 2023-2L", s)
	}
	return r, nil
}

func (t *lunarTable) find(r LunarRef) int {
	if r.Year < t.firstYear || r.Year >= t.firstYear+len(t.animals) {
		return -1
	}
	for i := t.newYear[r.Year-t.firstYear]; i < len(t.months) && t.months[i].year == r.Year; i++ {
		if t.months[i].month == r.Month && t.months[i].leap == r.Leap {
			return i
		}
	}
	return -1
}

func kindNames() string {
	var names []string
	for _, k := range Kinds {
		if k != KindEvent {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ", ")
}

// Puzzle is one generated Time Puzzle: its facts in three forms (implicit
// text, explicit text, structured), its answer set and its prompt.
type Puzzle struct {
	Index int64
	// Target is the number of solutions the puzzle was made to have;
	// Solutions always has exactly that many.
	Target int
	// Attempts counts the tries the generator needed.
	Attempts int
	// Facts, Constraints and Explicit are parallel: the i-th fact, its
	// implicit and its explicit rendering.
	Facts       []Fact
	Constraints []string
	Explicit    []string
	// Solutions are the answer dates, sorted, as YYYY-MM-DD.
	Solutions []string
	// FirstDate and LastDate bound the dates that count (YYYY-MM-DD).
	FirstDate, LastDate string
	// Messages are the prompt's turns: a system turn when the options give
	// one, then the user turn.
	Messages       []conversation.Message
	Split, Ability string
	// Variant is "implicit" or "explicit": the rendering in the prompt.
	Variant string
	// ID names the puzzle uniquely across sets: puzzles-s<seed>-<index>.
	ID string
	// Group is the unit a train/test split keeps on one side: the
	// knowledge-base event the puzzle is anchored on (every puzzle has
	// exactly one event fact). Puzzles about one event share its date
	// region and its sentence, so their answer sets overlap and their
	// texts nearly match; an answer set alone as the unit lets such
	// near-twins straddle a split.
	Group string
}

// groupOf computes Puzzle.Group: the name of its event fact.
func groupOf(p *Puzzle) string {
	for _, f := range p.Facts {
		if f.Kind == KindEvent {
			return f.Event
		}
	}
	return ""
}

// Groups returns the units a split of puzzles drawn from kb can have: its
// distinct event names, sorted.
func Groups(kb []Event) []string {
	names := make([]string, 0, len(kb))
	for _, e := range kb {
		names = append(names, e.Event)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// GroundTruth is the reward's ground truth: the solutions joined by
// commas, or "None".
func (p *Puzzle) GroundTruth() string {
	if len(p.Solutions) == 0 {
		return "None"
	}
	return strings.Join(p.Solutions, ",")
}

// eventChoice is an event fact usable in the universe.
type eventChoice struct {
	fact  Fact
	count int
}

// setShared is what every generator of one puzzle set shares.
type setShared struct {
	opt    Options
	u      *universe
	kinds  [3][]Kind // enabled calendar kinds by level
	events [3][]eventChoice
	// disputes are the disputed lunar days no answer may depend on (nil
	// with the allow policy).
	disputes *disputes
	seasonOf [13]int // index into opt.Seasons, -1 for none
	// yearSets are the year-set facts, one per set, read as
	// opt.YearSetReading says.
	yearSets []Fact
}

// Generator makes puzzles (the Time Puzzles paper, Alg. 1–3). It is not safe for
// concurrent use; Generate runs one per worker.
type Generator struct {
	sh   *setShared
	a    dateSet
	tmp  dateSet
	cand []dateSet
}

func levelIndex(l Level) int { return slices.Index(allLevels[:], l) }

// NewGenerator validates opt and precomputes the calendar sets of its
// year range. Zodiac and lunar-month facts are used whenever the range
// meets the lunar table (1800-01-25 to the end of 2050); a puzzle with one
// is kept only when its other facts rule out every day the table cannot
// place, as for the disputed months and years.
func NewGenerator(opt Options) (*Generator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	u, err := newUniverse(opt.FromYear, opt.ToYear)
	if err != nil {
		return nil, &synth.OptionError{Family: "puzzles", Key: "years", Err: err}
	}
	sh := &setShared{opt: opt, u: u}
	kinds := opt.Kinds
	if kinds == nil {
		kinds = Kinds
	}
	for i := range sh.seasonOf {
		sh.seasonOf[i] = -1
	}
	for i := range opt.YearSets {
		f := opt.YearSets[i].fact()
		if opt.YearSetReading == YearSetsRule {
			f = opt.YearSets[i].scheduledFact(opt.ToYear)
		}
		sh.yearSets = append(sh.yearSets, f)
	}
	for i, s := range opt.Seasons {
		for _, m := range s.Months {
			sh.seasonOf[m] = i
		}
	}
	for _, k := range kinds {
		if k == KindEvent || (k == KindZodiac || k == KindLunar) && !u.lunarAny ||
			k == KindSeason && len(opt.Seasons) == 0 || k == KindYearSet && len(opt.YearSets) == 0 || slices.Contains(sh.kinds[levelIndex(kindLevel[k])], k) {
			continue
		}
		l := levelIndex(kindLevel[k])
		sh.kinds[l] = append(sh.kinds[l], k)
	}
	scratch := u.newScratch()
	for i := range opt.KB {
		for _, f := range opt.KB[i].relations() {
			if err := u.checkFact(&f); err != nil {
				return nil, &synth.OptionError{Family: "puzzles", Key: "kb", Err: fmt.Errorf("event %q: %w", f.Event, err)}
			}
			if c := u.factSet(&f, &scratch).count(); c > 0 {
				l := levelIndex(f.Level)
				sh.events[l] = append(sh.events[l], eventChoice{fact: f, count: c})
			}
		}
	}
	if len(sh.events[0])+len(sh.events[1])+len(sh.events[2]) == 0 {
		return nil, &synth.OptionError{Family: "puzzles", Key: "kb", Err: fmt.Errorf("no event of the knowledge base falls in %d-%d", opt.FromYear, opt.ToYear)}
	}
	if u.lunarAny && opt.Disputed != DisputedAllow {
		sh.disputes = u.disputes(opt.DisputedYears, opt.DisputedMonths)
	}
	return sh.generator(), nil
}

func (sh *setShared) generator() *Generator {
	g := &Generator{sh: sh, a: sh.u.newScratch(), tmp: sh.u.newScratch()}
	g.cand = make([]dateSet, len(Kinds))
	for i := range g.cand {
		g.cand[i] = sh.u.newScratch()
	}
	return g
}

// LunarFacts reports whether zodiac and lunar-month facts are in use: the
// year range lies within the lunar table and the options enable them.
func (g *Generator) LunarFacts() bool {
	return slices.Contains(g.sh.kinds[0], KindZodiac) || slices.Contains(g.sh.kinds[1], KindLunar)
}

// mix spreads a puzzle index over 64 bits (SplitMix64's finaliser).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// ErrAttempts is wrapped by Generate's error when no puzzle with the
// target solution count turned up within MaxAttempts tries.
var ErrAttempts = errors.New("too many attempts")

// Generate makes puzzle index: deterministic in (Seed, index).
func (g *Generator) Generate(index int64) (*Puzzle, error) {
	o := &g.sh.opt
	rng := rand.New(rand.NewPCG(o.Seed, mix(uint64(index))))
	span := int64(o.MaxSolutions - o.MinSolutions + 1)
	target := o.MinSolutions + int(((index%span)+span)%span)
	for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
		if facts := g.attempt(rng, target); facts != nil {
			return g.finish(rng, index, target, attempt, facts), nil
		}
	}
	return nil, fmt.Errorf("puzzle %d: no puzzle with %d solutions in years %d-%d: %w after %d", index, target, o.FromYear, o.ToYear, ErrAttempts, o.MaxAttempts)
}

// attempt runs one try of Alg. 1: an event anchor and a seed date in it,
// then facts at balanced levels (Alg. 2). Each step prefers a fact that
// narrows the answer set while keeping it above the target, and the last
// must bring it to exactly the target; a fact that narrows nothing is taken
// only when no kind left at the remaining levels narrows the set (a month
// fact after an anniversary, say). The target is never reached before the
// last fact, so no fact after it is idle by construction. It returns nil
// when the try fails.
func (g *Generator) attempt(rng *rand.Rand, target int) []Fact {
	sh, u := g.sh, g.sh.u
	var evLevels []int
	for l := range 3 {
		if len(sh.events[l]) > 0 {
			evLevels = append(evLevels, l)
		}
	}
	l0 := evLevels[rng.IntN(len(evLevels))]
	ev := sh.events[l0][rng.IntN(len(sh.events[l0]))].fact
	g.a.copyFrom(u.factSet(&ev, &g.a))
	seed := g.a.nth(rng.IntN(g.a.count()))

	nFacts := sh.opt.MinFacts + rng.IntN(sh.opt.MaxFacts-sh.opt.MinFacts+1)
	var perLevel, want [3]int
	perLevel[l0]++
	for range nFacts - 1 {
		best := -1
		for _, l := range rng.Perm(3) {
			if len(sh.kinds[l]) > want[l] && (best < 0 || perLevel[l] < perLevel[best]) {
				best = l
			}
		}
		if best < 0 {
			break
		}
		perLevel[best]++
		want[best]++
	}
	facts := make([]Fact, 1, nFacts)
	facts[0] = ev
	var used [3][]Kind
	type cand struct {
		fact Fact
		set  *dateSet
		n    int
	}
	var good, fallback []cand
	remaining := want[0] + want[1] + want[2]
	for remaining > 0 {
		last := remaining == 1
		from := seed
		if last && target == 0 {
			from = min(max(seed+rng.IntN(801)-400, 0), u.n-1)
		}
		size := g.a.count()
		good, fallback = good[:0], fallback[:0]
		slot := 0
		for l := range 3 {
			if want[l] == 0 {
				continue
			}
			for _, k := range sh.kinds[l] {
				if slices.Contains(used[l], k) {
					continue
				}
				f, ok := g.instantiate(rng, k, from)
				if !ok {
					continue
				}
				set := u.factSet(&f, &g.cand[slot])
				slot++
				n := andCount(&g.a, set)
				switch {
				case n < size && (last && n == target || !last && n > target):
					good = append(good, cand{f, set, n})
				case n == size && n >= target:
					fallback = append(fallback, cand{f, set, n})
				}
			}
		}
		pick := good
		if len(pick) == 0 {
			pick = fallback
		}
		if len(pick) == 0 {
			return nil
		}
		c := pick[rng.IntN(len(pick))]
		g.a.and(c.set)
		l := levelIndex(c.fact.Level)
		used[l] = append(used[l], c.fact.Kind)
		want[l]--
		remaining--
		facts = append(facts, c.fact)
	}
	if g.a.count() != target || !g.undisputed(facts) {
		return nil
	}
	return facts
}

// undisputed reports whether the answer set is the same whichever way the
// lunar calendar falls on the days the table cannot place or whose month
// start is disputed: the lunar and zodiac facts are read together under
// every reading of those days (doubt.go).
func (g *Generator) undisputed(facts []Fact) bool {
	if !slices.ContainsFunc(facts, func(f Fact) bool { return isLunarKind(f.Kind) }) {
		return true
	}
	sets := make([]*dateSet, len(facts))
	for i := range facts {
		sets[i] = g.sh.u.factSet(&facts[i], &g.cand[i])
	}
	return g.sh.u.doubt(facts, sets, g.sh.disputes, &g.tmp) == nil
}

// instantiate makes a fact of kind k that is true of day index i, with
// random parameters where the kind has a choice.
func (g *Generator) instantiate(rng *rand.Rand, k Kind, i int) (Fact, bool) {
	u := g.sh.u
	n := u.first + i
	y, m, d := civil(n)
	wd := weekdayOf(n)
	dim := daysIn(y, m)
	f := Fact{Kind: k, Level: kindLevel[k]}
	switch k {
	case KindYear:
		f.Year = y
	case KindDecade:
		f.Year = y / 10 * 10
	case KindLeapYear:
		f.Leap = isLeap(y)
	case KindZodiac:
		j := u.lunar.monthAt(n)
		if j < 0 {
			return f, false
		}
		f.Animal = u.lunar.animalOf(u.lunar.months[j].year)
	case KindYearSet:
		var in []int
		for k := range g.sh.yearSets {
			if _, ok := slices.BinarySearch(g.sh.yearSets[k].Years, y); ok {
				in = append(in, k)
			}
		}
		if len(in) == 0 {
			return f, false
		}
		f = g.sh.yearSets[in[rng.IntN(len(in))]]
		f.Years = slices.Clone(f.Years)
	case KindMonth:
		f.Month = m
	case KindSeason:
		s := g.sh.seasonOf[m]
		if s < 0 {
			return f, false
		}
		f.Season, f.Months = g.sh.opt.Seasons[s].Name, g.sh.opt.Seasons[s].Months
	case KindLunar:
		j := u.lunar.monthAt(n)
		if j < 0 {
			return f, false
		}
		f.Month, f.Leap = u.lunar.months[j].month, u.lunar.months[j].leap
	case KindWeekday:
		f.Weekday = wd
	case KindNth:
		f.Weekday, f.N = wd, (d+6)/7
		if rng.IntN(2) == 0 {
			f.N = -((dim-d)/7 + 1) // counted from the month's end
		}
	case KindDay:
		f.Day = d
		if d == dim && rng.IntN(2) == 0 {
			f.Day = -1
		}
	case KindDayRange:
		before, after := 31-d, d-1 // choices of bound
		if before+after == 0 {
			return f, false
		}
		if r := rng.IntN(before + after); r < before {
			f.Op, f.Day = "before", d+1+r
		} else {
			f.Op, f.Day = "after", r-before+1
		}
	case KindWeekdays:
		f.Weekdays = []int{wd}
		for _, o := range rng.Perm(6)[:1+rng.IntN(2)] {
			f.Weekdays = append(f.Weekdays, (wd+o)%7+1)
		}
		slices.Sort(f.Weekdays)
	}
	return f, true
}

// finish shuffles the facts, renders them and builds the prompt.
func (g *Generator) finish(rng *rand.Rand, index int64, target, attempts int, facts []Fact) *Puzzle {
	sh, u := g.sh, g.sh.u
	rng.Shuffle(len(facts), func(i, j int) { facts[i], facts[j] = facts[j], facts[i] })
	p := &Puzzle{
		Index: index, Target: target, Attempts: attempts, Facts: facts,
		FirstDate: u.firstDate(), LastDate: u.lastDate(),
		Split: sh.opt.Split, Ability: sh.opt.Ability, Variant: "implicit",
		ID: "puzzles-s" + strconv.FormatUint(sh.opt.Seed, 10) + "-" + strconv.FormatInt(index, 10),
	}
	p.Solutions = make([]string, 0, target)
	g.a.members(func(i int) { p.Solutions = append(p.Solutions, formatDate(u.first+i)) })
	season := false
	for i := range facts {
		p.Constraints = append(p.Constraints, u.implicit(&facts[i]))
		p.Explicit = append(p.Explicit, u.explicit(&facts[i]))
		season = season || facts[i].Kind == KindSeason
	}
	p.Group = groupOf(p)
	buildMessages(&sh.opt, p, season)
	return p
}

// buildMessages renders the prompt of p from its constraints in the
// rendering opt asks for; season says a fact names a season, so the
// implicit prompt defines them.
func buildMessages(opt *Options, p *Puzzle, season bool) {
	shown := p.Constraints
	p.Variant = "implicit"
	if opt.Explicit {
		shown, p.Variant = p.Explicit, "explicit"
	}
	var list strings.Builder
	for i, c := range shown {
		if i > 0 {
			list.WriteByte('\n')
		}
		list.WriteString(strconv.Itoa(i + 1))
		list.WriteString(". ")
		list.WriteString(c)
	}
	note := ""
	if season && !opt.Explicit {
		note = " " + seasonNote(opt.Seasons)
	}
	text := strings.NewReplacer("{constraints}", list.String(), "{first_date}", p.FirstDate,
		"{last_date}", p.LastDate, "{season_note}", note, "{conventions}", opt.Prompt.Conventions).Replace(opt.Prompt.Instruction)
	p.Messages = p.Messages[:0]
	if opt.Prompt.System != "" {
		system := opt.Prompt.System
		p.Messages = append(p.Messages, conversation.Message{Role: conversation.RoleSystem, Content: &system})
	}
	p.Messages = append(p.Messages, conversation.Message{Role: conversation.RoleUser, Content: &text})
}

// seasonNote defines the seasons: "Seasons go by month: winter is
// December, January and February; ...".
func seasonNote(seasons []Season) string {
	parts := make([]string, len(seasons))
	for i, s := range seasons {
		names := make([]string, len(s.Months))
		for j, m := range s.Months {
			names[j] = monthNames[m]
		}
		parts[i] = strings.ToLower(s.Name) + " is " + andList(names)
	}
	return "Seasons go by month: " + strings.Join(parts, "; ") + "."
}

// ErrUndecidable marks a puzzle whose answer the calendars cannot decide.
var ErrUndecidable = errors.New("undecidable")

// UndecidableError says why a puzzle is undecidable: a lunar or zodiac fact
// would decide a day the other facts allow, but the lunar calendar of that
// day is unknown (outside the table) or disputed. It matches
// ErrUndecidable with errors.Is. Its message names every fact in doubt,
// every day in doubt and every day in the answer for sure.
type UndecidableError struct {
	Fact     int    // 1-based position of the first lunar or zodiac fact in doubt (on Day)
	Kind     Kind   // its kind
	Day      string // the first day in doubt, YYYY-MM-DD
	Disputed bool   // the day is in the table but disputed, not unknown
	// Facts are the 1-based positions, in order, of every lunar or zodiac
	// fact some reading of the calendar decides differently on a day in
	// doubt, or that is unknown there; Kinds their kinds.
	Facts []int
	Kinds []Kind
	// Sure are the days in the answer whatever the calendar says, Doubtful
	// those in it under some reading of the calendar and not under another
	// (YYYY-MM-DD, sorted); Unknown are the doubtful days outside the table,
	// the others being disputed.
	Sure, Doubtful, Unknown []string
}

func (e *UndecidableError) Error() string {
	facts := make([]string, len(e.Facts))
	for i, n := range e.Facts {
		facts[i] = fmt.Sprintf("%d (%s)", n, e.Kinds[i])
	}
	which := "fact " + andList(facts)
	if len(facts) > 1 {
		which = "facts " + andList(facts)
	}
	var disputed []string
	for _, d := range e.Doubtful {
		if _, unknown := slices.BinarySearch(e.Unknown, d); !unknown {
			disputed = append(disputed, d)
		}
	}
	plural := func(days []string, one, many string) string {
		if len(days) == 1 {
			return one
		}
		return many
	}
	var why []string
	if len(disputed) > 0 {
		why = append(why, fmt.Sprintf("the answer depends on %s, %s whose lunar month or year is disputed",
			dayRuns(disputed), plural(disputed, "a day", "days")))
	}
	if len(e.Unknown) > 0 {
		why = append(why, fmt.Sprintf("the lunar calendar is not known on %s, %s the other facts allow",
			dayRuns(e.Unknown), plural(e.Unknown, "a day", "days")))
	}
	sure := "none"
	if len(e.Sure) > 0 {
		sure = dayRuns(e.Sure)
	}
	return fmt.Sprintf("%s: %v: %s; in the answer under every reading: %s", which, ErrUndecidable, strings.Join(why, ", and "), sure)
}

// dayRuns writes sorted dates (YYYY-MM-DD) for a reader: runs of three or
// more consecutive days as "FIRST to LAST", the rest one by one, joined by
// commas and a last "and".
func dayRuns(days []string) string {
	var parts []string
	for i := 0; i < len(days); {
		j := i + 1
		prev, _ := parseDate(days[i])
		for ; j < len(days); j++ {
			n, _ := parseDate(days[j])
			if n != prev+1 {
				break
			}
			prev = n
		}
		if j-i >= 3 {
			parts = append(parts, days[i]+" to "+days[j-1])
		} else {
			parts = append(parts, days[i:j]...)
		}
		i = j
	}
	return andList(parts)
}

// Is makes errors.Is(err, ErrUndecidable) true.
func (e *UndecidableError) Is(target error) bool { return target == ErrUndecidable }

// ErrNoDay marks a fact that holds on no day: its value is outside what
// its kind can name (month 13, lunar month 0, the 32nd day, the sixth
// Monday). A puzzle with such a fact has no solution.
var ErrNoDay = errors.New("no day satisfies it")

// NoDayError says which fact holds on no day, and why. It matches ErrNoDay
// with errors.Is.
type NoDayError struct {
	Fact int  // 1-based position of the fact
	Kind Kind // its kind
	Err  error
}

func (e *NoDayError) Error() string {
	return fmt.Sprintf("fact %d (%s): %v, so %v", e.Fact, e.Kind, e.Err, ErrNoDay)
}

// Is makes errors.Is(err, ErrNoDay) true.
func (e *NoDayError) Is(target error) bool { return target == ErrNoDay }

// Unwrap returns why the fact holds on no day.
func (e *NoDayError) Unwrap() error { return e.Err }

// SolverOptions are the lunar data a Solver treats as unsettled.
type SolverOptions struct {
	// DisputedYears and DisputedMonths are the lunar years and months whose
	// dates are disputed: an answer that depends on them is undecidable.
	DisputedYears  []int
	DisputedMonths []LunarRef
}

// Solver computes answer sets from structured facts (Alg. 3). It
// caches the calendar sets of each year range it sees; it is safe for
// concurrent use.
type Solver struct {
	opt   SolverOptions
	mu    sync.Mutex
	cache map[[2]int]*solverRange
}

// solverRange is a universe with its disputed days.
type solverRange struct {
	u        *universe
	disputes *disputes
}

// NewSolver returns a solver that treats the default disputed lunar
// data (DefaultDisputedYears, DefaultDisputedMonths) as undecidable.
func NewSolver() *Solver {
	return NewSolverWith(SolverOptions{DisputedYears: DefaultDisputedYears(), DisputedMonths: DefaultDisputedMonths()})
}

// NewSolverWith returns a solver with the given disputed lunar data.
func NewSolverWith(opt SolverOptions) *Solver {
	return &Solver{opt: opt, cache: map[[2]int]*solverRange{}}
}

func (s *Solver) universe(from, to int) (*universe, error) {
	r, err := s.rangeOf(from, to)
	if err != nil {
		return nil, err
	}
	return r.u, nil
}

func (s *Solver) rangeOf(from, to int) (*solverRange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.cache[[2]int{from, to}]; ok {
		return r, nil
	}
	u, err := newUniverse(from, to)
	if err != nil {
		return nil, err
	}
	r := &solverRange{u: u}
	if u.lunarAny {
		r.disputes = u.disputes(s.opt.DisputedYears, s.opt.DisputedMonths)
	}
	if len(s.cache) >= 16 {
		clear(s.cache)
	}
	s.cache[[2]int{from, to}] = r
	return r, nil
}

// Solve returns the dates from January 1 of fromYear to December 31 of
// toYear that satisfy every fact, sorted, as YYYY-MM-DD. It intersects the
// facts' sets in order of information gain, the smallest set first, and
// stops early when the intersection is empty. A fact that is malformed is
// an error naming its position (1-based). A fact whose value names no day
// (month 13, the 32nd day) makes the answer empty: Solve returns the empty
// answer with a *NoDayError. A puzzle whose answer depends on a day whose
// lunar month or year is unknown or disputed is an *UndecidableError, which
// says which days are in the answer whatever the calendar and which are
// in doubt.
func (s *Solver) Solve(facts []Fact, fromYear, toYear int) ([]string, error) {
	sol, err := s.solve(facts, fromYear, toYear)
	if err != nil {
		return nil, err
	}
	if sol.doubt != nil {
		return nil, sol.undecidable(facts)
	}
	out := sol.dates()
	if sol.noDay != nil {
		return out, sol.noDay
	}
	return out, nil
}

// solution is what solve finds: the answer on the embedded table (day
// indexes), what the lunar calendar leaves in doubt and the first fact that
// holds on no day.
type solution struct {
	u      *universe
	answer []int
	doubt  *lunarDoubt
	noDay  *NoDayError
}

func (sol *solution) dates() []string {
	out := make([]string, 0, len(sol.answer))
	for _, i := range sol.answer {
		out = append(out, formatDate(sol.u.first+i))
	}
	return out
}

// undecidable is the error of a solution with doubt.
func (sol *solution) undecidable(facts []Fact) *UndecidableError {
	d, u := sol.doubt, sol.u
	e := &UndecidableError{Fact: d.fact + 1, Kind: facts[d.fact].Kind, Day: formatDate(u.first + d.days[0]), Disputed: d.disputed}
	for _, i := range d.facts {
		e.Facts, e.Kinds = append(e.Facts, i+1), append(e.Kinds, facts[i].Kind)
	}
	for _, i := range d.unknown {
		e.Unknown = append(e.Unknown, formatDate(u.first+i))
	}
	e.Sure = []string{}
	for _, i := range sol.answer {
		if _, ok := slices.BinarySearch(d.days, i); !ok {
			e.Sure = append(e.Sure, formatDate(u.first+i))
		}
	}
	for _, i := range d.days {
		e.Doubtful = append(e.Doubtful, formatDate(u.first+i))
	}
	return e
}

func (s *Solver) solve(facts []Fact, fromYear, toYear int) (*solution, error) {
	r, err := s.rangeOf(fromYear, toYear)
	if err != nil {
		return nil, err
	}
	u := r.u
	sol := &solution{u: u, answer: []int{}}
	for i := range facts {
		if err := u.checkFact(&facts[i]); err != nil {
			return nil, fmt.Errorf("fact %d (%s): %w", i+1, facts[i].Kind, err)
		}
		if err := u.noDay(&facts[i]); err != nil && sol.noDay == nil {
			sol.noDay = &NoDayError{Fact: i + 1, Kind: facts[i].Kind, Err: err}
		}
	}
	if sol.noDay != nil {
		return sol, nil
	}
	sets := make([]*dateSet, len(facts))
	counts := make([]int, len(facts))
	order := make([]int, len(facts))
	for i := range facts {
		scratch := u.newScratch()
		sets[i] = u.factSet(&facts[i], &scratch)
		counts[i] = sets[i].count()
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return counts[a] - counts[b] })
	a := u.newScratch()
	a.copyFrom(&u.full)
	for _, i := range order {
		if a.and(sets[i]); a.hi == 0 {
			break
		}
	}
	a.members(func(i int) { sol.answer = append(sol.answer, i) })
	// The lunar facts decide nothing on a day the table cannot place or
	// whose month start is disputed: read them there under every reading.
	scratch := u.newScratch()
	sol.doubt = u.doubt(facts, sets, r.disputes, &scratch)
	return sol, nil
}

// YearsOf reads the year range of a puzzle back from its first and
// last dates, which must be a January 1 and a December 31.
func YearsOf(firstDate, lastDate string) (from, to int, err error) {
	a, err := parseDate(firstDate)
	if err != nil {
		return 0, 0, fmt.Errorf("first_date: %w", err)
	}
	b, err := parseDate(lastDate)
	if err != nil {
		return 0, 0, fmt.Errorf("last_date: %w", err)
	}
	y1, m1, d1 := civil(a)
	y2, m2, d2 := civil(b)
	if m1 != 1 || d1 != 1 || m2 != 12 || d2 != 31 || y1 > y2 {
		return 0, 0, fmt.Errorf("dates %s to %s are not whole years (January 1 to December 31)", firstDate, lastDate)
	}
	return y1, y2, nil
}

// Summary counts what a puzzle set holds.
type Summary struct {
	Puzzles     int            `json:"puzzles"`
	Skipped     int            `json:"skipped_other_shards"`
	Years       string         `json:"years"`
	LunarFacts  bool           `json:"lunar_facts"`
	BySolutions map[string]int `json:"by_solutions"`
	ByKind      map[string]int `json:"by_kind"`
	ByLevel     map[string]int `json:"by_level"`
	ByRelation  map[string]int `json:"by_relation"`
	Facts       int            `json:"facts"`
	Attempts    int            `json:"attempts"`
}

func (s *Summary) add(p *Puzzle) {
	s.Puzzles++
	s.BySolutions[strconv.Itoa(len(p.Solutions))]++
	s.Attempts += p.Attempts
	for i := range p.Facts {
		f := &p.Facts[i]
		s.Facts++
		s.ByKind[string(f.Kind)]++
		s.ByLevel[string(f.Level)]++
		if f.Kind == KindEvent {
			s.ByRelation[string(f.Relation)]++
		}
	}
}

// Range selects the indexes of a puzzle set: Start to Start+Count-1,
// and of those only the shard's (shard.Shard.HasIndex).
type Range struct {
	Start, Count int64
	Shard        shard.Shard
}

// Generate makes the puzzles of r on workers goroutines (at least
// one) and calls emit with each in index order. It stops at the first error
// from the generator, emit or ctx.
func Generate(ctx context.Context, opt Options, r Range, workers int, emit func(*Puzzle) error) (*Summary, error) {
	g0, err := NewGenerator(opt)
	if err != nil {
		return nil, err
	}
	sum := &Summary{
		Years: fmt.Sprintf("%d-%d", opt.FromYear, opt.ToYear), LunarFacts: g0.LunarFacts(),
		BySolutions: map[string]int{}, ByKind: map[string]int{}, ByLevel: map[string]int{}, ByRelation: map[string]int{},
	}
	inShard := r.Shard.HasIndex
	workers = max(workers, 1)
	const chunk = 64
	nChunks := int((max(r.Count, 0) + chunk - 1) / chunk)
	type result struct {
		ps      []*Puzzle
		skipped int
		err     error
	}
	results := make([]chan result, nChunks)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	next := make(chan int)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for w := range workers {
		g := g0
		if w > 0 {
			g = g0.sh.generator()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				var res result
				for i := r.Start + int64(c)*chunk; i < r.Start+min(int64(c+1)*chunk, r.Count); i++ {
					if !inShard(i) {
						res.skipped++
						continue
					}
					if ctx.Err() != nil {
						res.err = ctx.Err()
						break
					}
					p, err := g.Generate(i)
					if err != nil {
						res.err = err
						break
					}
					res.ps = append(res.ps, p)
				}
				results[c] <- res
			}
		}()
	}
	ahead := make(chan struct{}, 4*workers) // chunks handed out and not yet emitted
	go func() {
		defer close(next)
		for c := range nChunks {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	for c := range nChunks {
		var res result
		select {
		case res = <-results[c]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		<-ahead
		sum.Skipped += res.skipped
		for _, p := range res.ps {
			sum.add(p)
			if err := emit(p); err != nil {
				return nil, err
			}
		}
		if res.err != nil {
			return nil, res.err
		}
	}
	return sum, nil
}
