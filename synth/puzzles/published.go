package puzzles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/internal/output"
)

// The published Time Puzzles set is a JSON array (or JSON lines) of records
// with the fields below; constraints_meta holds one object per constraint,
// keyed by "type", in the published generator's vocabulary. ImportPublished
// reads it into Puzzles whose facts mean what the constraints say, solves
// them again and says, for each record, whether the published answer
// agrees, is wrong (and why) or cannot be decided.

// publishedRecord is one record of the published format. Fields this
// package does not read (seed_date, noise_date, solution_count) are ignored.
// The answer is solutions, a list of dates: [] when no date fits (the
// published None, solution_count 0).
// The identifier is the field the published experiment scripts key each
// record by (a UUID they add to the file when it has none).
type publishedRecord struct {
	Identifier  json.RawMessage   `json:"identifier"`
	Constraints []string          `json:"constraints"`
	Explicit    []string          `json:"explicit_constraints"`
	Meta        []json.RawMessage `json:"constraints_meta"`
	Solutions   json.RawMessage   `json:"solutions"`
	YearRange   []int             `json:"year_range"`
}

// ImportOptions configures ImportPublished. Zero fields take the defaults
// of DefaultOptions.
type ImportOptions struct {
	// KB resolves the people of person_alive and us_president constraints
	// ("the lifetime of NAME", "NAME's presidency of the United States").
	KB []Event
	// YearSets resolves the summer_olympics and world_cup events.
	YearSets []YearSet
	// Seasons resolves season names.
	Seasons []Season
	// Prompt, Explicit and Ability render the imported puzzles as Options
	// does for generated ones. Split is their extra_info.split, "test" when
	// empty: the published set is an evaluation set.
	Prompt         Prompt
	Explicit       bool
	Split, Ability string
	// Solver decides the answers; nil means NewSolver() (disputed lunar data
	// undecidable).
	Solver *Solver
	// YearSetReading reads the summer_olympics and world_cup events by the
	// editions held (YearSetsHeld, the default, "") or by their rule
	// (YearSetsRule), as the published generator does.
	YearSetReading string
}

// The verdicts of an imported record.
const (
	VerdictAgree        = "agree"         // the published answer is the solved one
	VerdictWrong        = "wrong"         // it differs; Cause says why
	VerdictUndecidable  = "undecidable"   // the calendars cannot decide it
	VerdictNotConverted = "not_converted" // a constraint has no counterpart here
)

// The causes ImportPublished gives a wrong published answer: the first
// reading of the published generator's that reproduces it, tried in this
// order, one at a time, then all together; then a lunar month start placed
// a day or two apart; else unexplained. CauseNoDay comes first: a
// constraint no day satisfies, so that the puzzle has no solution (an agreeing
// record with one carries it too).
const (
	CauseNoDay        = "no_day"                  // a constraint holds on no day (month 13, the 32nd day): no solution
	CauseLeapMonth    = "lunar_leap_month"        // "the n-th lunar month" read to include the leap month after it
	CauseYearSetRule  = "year_set_rule"           // Olympic and World Cup years by arithmetic: 2020 for the Games held in 2021, editions not yet held
	CauseBoundaryDays = "boundary_days"           // lifetimes and terms of office without their first and last days
	CauseSeveral      = "several"                 // only several of these readings together reproduce it
	CauseLunarTable   = "lunar_calendar_boundary" // the rest is what lunar month starts moved by a day or two give: another lunar calendar
	CauseUnexplained  = "unexplained"
)

// The causes of an undecidable record and of one not converted, besides
// "type_<type>" for a constraint type with no counterpart.
const (
	CauseLunarUnknown   = "lunar_unknown"    // the answer depends on days outside the lunar table
	CauseLunarDisputed  = "lunar_disputed"   // it depends on disputed lunar days
	CauseUnknownPerson  = "unknown_person"   // a person not in the knowledge base
	CauseUnknownSeason  = "unknown_season"   // a season not among the seasons
	CauseUnknownYearSet = "unknown_year_set" // an event that is not a year set
	CauseMalformed      = "malformed"        // the record is not in the published format: Err names the field
)

// Imported is one record of a published file after import.
type Imported struct {
	// Record is the 1-based position of the record in the file. ID names
	// it: its identifier field, or "published-N" (N the record) when it has
	// none. The puzzle's row has the same ID.
	Record int
	ID     string
	// Puzzle is the record as a puzzle of this package (nil when not
	// converted): its facts, both renderings in this package's wording, and
	// as Solutions the solved answer (the published one when undecidable).
	Puzzle *Puzzle
	// Published is the record's answer set; Solved the answer of the facts
	// as converted: the whole answer when decided, else the days in it
	// whatever the lunar calendar says (nil when not converted).
	Published, Solved []string
	// Undecided are the days that are in the answer under some reading of
	// the lunar calendar and not under another: the record is undecidable
	// when the published answer is one of the answers these readings give,
	// and provably wrong (Verdict wrong) when it is none of them.
	Undecided []string
	Verdict   string
	// Cause says why a wrong answer is wrong, why a record is undecidable
	// (lunar_unknown, lunar_disputed) or why it was not converted; an
	// agreeing record whose puzzle has no solution because a constraint
	// holds on no day has Cause no_day.
	Cause string
	// Err is the error behind an undecidable or unconverted record, or the
	// constraint that holds on no day (a *NoDayError).
	Err error
}

// Decided reports whether the record's answer was decided: converted, and
// with no day the lunar calendar leaves in doubt. Decided records are the
// ones worth writing out with their solved answer.
func (im *Imported) Decided() bool {
	return im.Puzzle != nil && im.Verdict != VerdictNotConverted && len(im.Undecided) == 0
}

// ImportSummary counts what ImportPublished found.
type ImportSummary struct {
	Records      int            `json:"records"`
	Converted    int            `json:"converted"`
	NotConverted map[string]int `json:"not_converted"`
	Agree        int            `json:"agree"`
	AgreeNoDay   int            `json:"agree_no_day"` // of Agree, the records with a constraint no day satisfies: no solution, as published
	NoDay        int            `json:"no_day"`       // agreeing or wrong records with a constraint no day satisfies
	Wrong        map[string]int `json:"wrong"`
	Undecidable  map[string]int `json:"undecidable"`
	ByType       map[string]int `json:"constraint_types"`
}

// ImportPublished reads a published Time Puzzles file (a JSON array of
// records, JSON lines, or an object holding the array under one key),
// converts each record and calls emit with it in file order. Every record
// gets a verdict: one that cannot be converted, malformed ones included, is
// not_converted with the error naming the record, its ID, the constraint and
// the field; errors are for a file that cannot be read or is not JSON, and
// for one without records (empty, or an empty array), which wraps
// dataset.ErrNoRecords.
func ImportPublished(ctx context.Context, r io.Reader, name string, opt ImportOptions, emit func(*Imported) error) (*ImportSummary, error) {
	def := DefaultOptions()
	if opt.KB == nil {
		opt.KB = def.KB
	}
	if opt.YearSets == nil {
		opt.YearSets = def.YearSets
	}
	if opt.Seasons == nil {
		opt.Seasons = def.Seasons
	}
	if opt.Prompt.Instruction == "" {
		opt.Prompt = def.Prompt
	}
	if opt.Split == "" {
		opt.Split = output.Test
	}
	if opt.Ability == "" {
		opt.Ability = def.Ability
	}
	if opt.Solver == nil {
		opt.Solver = NewSolver()
	}
	if opt.YearSetReading != "" && opt.YearSetReading != YearSetsHeld && opt.YearSetReading != YearSetsRule {
		return nil, fmt.Errorf("year set reading %q is not %s or %s", opt.YearSetReading, YearSetsHeld, YearSetsRule)
	}
	records, err := readPublished(r, name)
	if err != nil {
		return nil, err
	}
	sum := &ImportSummary{NotConverted: map[string]int{}, Wrong: map[string]int{}, Undecidable: map[string]int{}, ByType: map[string]int{}}
	im := importer{opt: &opt, render: &Options{Prompt: opt.Prompt, Explicit: opt.Explicit, Seasons: opt.Seasons}}
	for i, raw := range records {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := im.record(i+1, raw)
		sum.Records++
		var metas struct {
			Meta []struct {
				Type json.RawMessage `json:"type"`
			} `json:"constraints_meta"`
		}
		_ = json.Unmarshal(raw, &metas)
		for _, m := range metas.Meta {
			var t string
			if json.Unmarshal(m.Type, &t) != nil {
				t = ""
			}
			sum.ByType[t]++
		}
		if errors.Is(out.Err, ErrNoDay) {
			sum.NoDay++
		}
		switch out.Verdict {
		case VerdictNotConverted:
			sum.NotConverted[out.Cause]++
		case VerdictAgree:
			sum.Converted++
			sum.Agree++
			if out.Cause == CauseNoDay {
				sum.AgreeNoDay++
			}
		case VerdictWrong:
			sum.Converted++
			sum.Wrong[out.Cause]++
		case VerdictUndecidable:
			sum.Converted++
			sum.Undecidable[out.Cause]++
		}
		if err := emit(out); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// readPublished splits the file into raw records.
func readPublished(r io.Reader, name string) ([]json.RawMessage, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))
	if len(data) == 0 {
		return nil, noRecords(name)
	}
	var records []json.RawMessage
	if data[0] == '[' {
		if err := json.Unmarshal(data, &records); err != nil {
			return nil, fmt.Errorf("%s: %w", name, jsonscan.ExplainRecords(data, err))
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var v json.RawMessage
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: record %d: %w", name, len(records)+1, jsonscan.Explain("", nil, err))
			}
			records = append(records, v)
		}
		// One object that is not a record: the records are its one array.
		if len(records) == 1 && isWrapper(records[0]) {
			var wrap map[string]json.RawMessage
			if err := json.Unmarshal(records[0], &wrap); err == nil {
				var found []json.RawMessage
				for _, v := range wrap {
					var arr []json.RawMessage
					if json.Unmarshal(v, &arr) == nil && len(arr) > 0 && bytes.HasPrefix(bytes.TrimSpace(arr[0]), []byte("{")) {
						if found != nil {
							return nil, fmt.Errorf("%s: an object with several arrays: want an array of records", name)
						}
						found = arr
					}
				}
				if found != nil {
					records = found
				}
			}
		}
	}
	if len(records) == 0 {
		return nil, noRecords(name)
	}
	return records, nil
}

// noRecords is the error of a published file without records, empty or an
// empty array: dataset.ErrNoRecords, with what the file should hold.
func noRecords(name string) error {
	return fmt.Errorf("%s: %w: want a JSON array of published Time Puzzles records", name, dataset.ErrNoRecords)
}

// isWrapper says an object holds no constraints_meta of its own.
func isWrapper(raw json.RawMessage) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	_, ok := top["constraints_meta"]
	return !ok
}

type importer struct {
	opt    *ImportOptions
	render *Options
	to     int // the last year of the record being converted
}

// meta is one published constraint, with typed getters whose errors name
// the field.
type meta map[string]json.RawMessage

func (m meta) str(key string) (string, error) {
	var s string
	if err := json.Unmarshal(m[key], &s); err != nil || s == "" {
		return "", fmt.Errorf("field %q: want a non-empty string, have %s", key, shown(m[key]))
	}
	return s, nil
}

func (m meta) int(key string) (int, error) {
	var n int
	if err := json.Unmarshal(m[key], &n); err != nil || m[key] == nil {
		return 0, fmt.Errorf("field %q: want an integer, have %s", key, shown(m[key]))
	}
	return n, nil
}

func shown(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return string(raw)
}

// notConverted is a constraint with no counterpart: a verdict, not an
// error.
type notConverted struct{ cause, detail string }

func (e *notConverted) Error() string { return e.detail }

func weekdayNumber(name string) (int, error) {
	for i := 1; i <= 7; i++ {
		if strings.EqualFold(weekdayNames[i], strings.TrimSpace(name)) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not a weekday name", name)
}

// nameKey folds a person's name for lookup: "George H.W. Bush" and
// "George H. W. Bush" meet.
func nameKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r != ' ' && r != '.' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// person finds the knowledge-base period of a published person_alive or
// us_president name.
func (im *importer) person(name string, president bool) (Fact, bool) {
	want := nameKey(name)
	for i := range im.opt.KB {
		e := &im.opt.KB[i]
		if e.End == "" {
			continue
		}
		var who string
		switch {
		case president && strings.HasSuffix(e.Event, "presidency of the United States"):
			who = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(e.Event, " presidency of the United States"), "'s first"), "'s")
		case !president && strings.HasPrefix(e.Event, "the lifetime of "):
			who = strings.TrimPrefix(e.Event, "the lifetime of ")
		default:
			continue
		}
		if nameKey(who) == want {
			for _, f := range e.relations() {
				if f.Relation == During {
					return f, true
				}
			}
		}
	}
	return Fact{}, false
}

// convert turns one published constraint into a fact meaning what its
// wording says.
func (im *importer) convert(m meta) (Fact, error) {
	typ, err := m.str("type")
	if err != nil {
		return Fact{}, err
	}
	level := func(k Kind) Fact { return Fact{Kind: k, Level: kindLevel[k]} }
	switch typ {
	case "explicit_year", "decade", "month", "day_of_month_specific":
		v, err := m.int("value")
		if err != nil {
			return Fact{}, err
		}
		f := level(map[string]Kind{"explicit_year": KindYear, "decade": KindDecade, "month": KindMonth, "day_of_month_specific": KindDay}[typ])
		switch f.Kind {
		case KindYear, KindDecade:
			f.Year = v
		case KindMonth:
			f.Month = v
		default:
			f.Day = v
		}
		return f, nil
	case "first_day_of_month":
		f := level(KindDay)
		f.Day = 1
		return f, nil
	case "last_day_of_month":
		f := level(KindDay)
		f.Day = -1
		return f, nil
	case "weekday":
		s, err := m.str("value")
		if err != nil {
			return Fact{}, err
		}
		f := level(KindWeekday)
		if f.Weekday, err = weekdayNumber(s); err != nil {
			return Fact{}, fmt.Errorf("field \"value\": %w", err)
		}
		return f, nil
	case "multi_weekday":
		var names []string
		if err := json.Unmarshal(m["value"], &names); err != nil || len(names) == 0 {
			return Fact{}, fmt.Errorf("field \"value\": want a list of weekday names, have %s", shown(m["value"]))
		}
		f := level(KindWeekdays)
		for _, n := range names {
			w, err := weekdayNumber(n)
			if err != nil {
				return Fact{}, fmt.Errorf("field \"value\": %w", err)
			}
			f.Weekdays = append(f.Weekdays, w)
		}
		slices.Sort(f.Weekdays)
		return f, nil
	case "weekday_in_month":
		dir, err := m.str("direction")
		if err != nil {
			return Fact{}, err
		}
		s, err := m.str("weekday")
		if err != nil {
			return Fact{}, err
		}
		n, err := m.int("n")
		if err != nil {
			return Fact{}, err
		}
		f := level(KindNth)
		if f.Weekday, err = weekdayNumber(s); err != nil {
			return Fact{}, fmt.Errorf("field \"weekday\": %w", err)
		}
		switch dir {
		case "forward":
			f.N = n
		case "backward":
			f.N = -n
		default:
			return Fact{}, fmt.Errorf("field \"direction\": %q is not forward or backward", dir)
		}
		return f, nil
	case "day_of_month":
		op, err := m.str("operator")
		if err != nil {
			return Fact{}, err
		}
		v, err := m.int("value")
		if err != nil {
			return Fact{}, err
		}
		f := level(KindDayRange)
		f.Day = v
		switch op {
		case "<":
			f.Op = "before"
		case ">":
			f.Op = "after"
		default:
			return Fact{}, fmt.Errorf("field \"operator\": %q is not < or >", op)
		}
		return f, nil
	case "season":
		s, err := m.str("value")
		if err != nil {
			return Fact{}, err
		}
		for _, se := range im.opt.Seasons {
			if strings.EqualFold(se.Name, s) {
				f := level(KindSeason)
				f.Season, f.Months = se.Name, slices.Clone(se.Months)
				return f, nil
			}
		}
		return Fact{}, &notConverted{CauseUnknownSeason, fmt.Sprintf("season %q is not one of the seasons", s)}
	case "chinese_zodiac":
		s, err := m.str("value")
		if err != nil {
			return Fact{}, err
		}
		i := animalIndex(s)
		if i < 0 {
			return Fact{}, fmt.Errorf("field \"value\": %q is not a zodiac animal", s)
		}
		f := level(KindZodiac)
		f.Animal = ZodiacAnimals[i]
		return f, nil
	case "lunar_month":
		v, err := m.int("value")
		if err != nil {
			return Fact{}, err
		}
		f := level(KindLunar)
		f.Month = v // "the n-th month": the month itself, not the leap month after it
		return f, nil
	case "event":
		n, err := m.str("name")
		if err != nil {
			return Fact{}, err
		}
		if n == "leap_year" {
			f := level(KindLeapYear)
			f.Leap = true
			return f, nil
		}
		for _, ys := range im.opt.YearSets {
			if ys.Name == n {
				if im.opt.YearSetReading == YearSetsRule {
					return ys.scheduledFact(im.to), nil
				}
				return ys.fact(), nil
			}
		}
		return Fact{}, &notConverted{CauseUnknownYearSet, fmt.Sprintf("event %q is not a year set", n)}
	case "person_alive", "us_president":
		who, err := m.str("person")
		if err != nil {
			return Fact{}, err
		}
		if f, ok := im.person(who, typ == "us_president"); ok {
			return f, nil
		}
		return Fact{}, &notConverted{CauseUnknownPerson, fmt.Sprintf("%s %q is not in the knowledge base", typ, who)}
	case "kb_event":
		lvl, err := m.str("level")
		if err != nil {
			return Fact{}, err
		}
		v, err := m.int("value")
		if err != nil {
			return Fact{}, err
		}
		switch Level(lvl) {
		case LevelYear:
			// The published answer holds the one year named, whatever the
			// aspect (a multi-year event's other years included).
			f := level(KindYear)
			f.Year = v
			return f, nil
		case LevelMonth:
			f := level(KindMonth) // the event's calendar month, in any year
			f.Month = v
			return f, nil
		case LevelDay:
			f := level(KindDay) // the event's day of the month, in any month
			f.Day = v
			return f, nil
		}
		return Fact{}, fmt.Errorf("field \"level\": %q is not year, month or day", lvl)
	}
	return Fact{}, &notConverted{"type_" + typ, fmt.Sprintf("constraint type %q has no counterpart", typ)}
}

// recordID reads a record's identifier: a string as it is, another JSON
// value as its compact text; "" when there is none.
func recordID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// record converts, solves and judges one record; whatever it holds, the
// record gets a verdict.
func (im *importer) record(n int, raw json.RawMessage) *Imported {
	out := &Imported{Record: n, ID: "published-" + strconv.Itoa(n)}
	var head struct {
		Identifier json.RawMessage `json:"identifier"`
	}
	if json.Unmarshal(raw, &head) == nil {
		if id := recordID(head.Identifier); id != "" {
			out.ID = id
		}
	}
	malformed := func(err error) *Imported {
		out.Verdict, out.Cause, out.Err = VerdictNotConverted, CauseMalformed, err
		out.Puzzle = nil
		return out
	}
	var rec publishedRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return malformed(fmt.Errorf("not a published record: %w", jsonscan.Explain("", raw, err)))
	}
	published, err := publishedSolutions(rec.Solutions)
	if err != nil {
		return malformed(fmt.Errorf("solutions: %w", err))
	}
	out.Published = published
	if len(rec.YearRange) != 2 || rec.YearRange[0] > rec.YearRange[1] {
		return malformed(fmt.Errorf("year_range: want [first, last] years, have %v", rec.YearRange))
	}
	if len(rec.Meta) == 0 {
		return malformed(fmt.Errorf("constraints_meta: no constraints"))
	}
	from, to := rec.YearRange[0], rec.YearRange[1]
	u, err := im.opt.Solver.universe(from, to)
	if err != nil {
		return malformed(fmt.Errorf("year_range: %w", err))
	}
	im.to = to
	facts := make([]Fact, 0, len(rec.Meta))
	cons := make([]constraint, len(rec.Meta))
	group := ""
	for i, raw := range rec.Meta {
		var m meta
		if err := json.Unmarshal(raw, &m); err != nil {
			return malformed(fmt.Errorf("constraint %d: %w", i+1, jsonscan.Explain("", raw, err)))
		}
		f, err := im.convert(m)
		var nc *notConverted
		if errors.As(err, &nc) {
			out.Verdict, out.Cause, out.Err = VerdictNotConverted, nc.cause, fmt.Errorf("constraint %d: %w", i+1, err)
			return out
		}
		if err != nil {
			return malformed(fmt.Errorf("constraint %d: %w", i+1, err))
		}
		if err := u.checkFact(&f); err != nil {
			return malformed(fmt.Errorf("constraint %d (%s): %w", i+1, f.Kind, err))
		}
		if ev, _ := m.str("event"); m["aspect"] != nil && ev != "" {
			group = ev
		}
		cons[i] = readConstraint(m, &f)
		facts = append(facts, f)
	}
	p := &Puzzle{
		Index: int64(n - 1), Facts: facts, FirstDate: u.firstDate(), LastDate: u.lastDate(),
		Split: im.opt.Split, Ability: im.opt.Ability, ID: out.ID, Group: group,
	}
	season := false
	for i := range facts {
		p.Constraints = append(p.Constraints, u.implicit(&facts[i]))
		p.Explicit = append(p.Explicit, u.explicit(&facts[i]))
		season = season || facts[i].Kind == KindSeason
	}
	out.Puzzle = p
	sol, err := im.opt.Solver.solve(facts, from, to)
	if err != nil {
		return malformed(err)
	}
	pub := make([]int, len(out.Published))
	for i, d := range out.Published {
		n, _ := parseDate(d)
		pub[i] = n - u.first
	}
	switch {
	case sol.noDay != nil:
		e := *sol.noDay
		out.Err = &e
		out.Solved = []string{}
		out.Cause = CauseNoDay
		out.Verdict = VerdictAgree
		if len(out.Published) > 0 {
			out.Verdict = VerdictWrong
		}
	case sol.doubt != nil:
		ue := sol.undecidable(facts)
		out.Solved, out.Undecided = ue.Sure, ue.Doubtful
		if sol.doubt.possible(sol.answer, pub) {
			out.Verdict, out.Err = VerdictUndecidable, ue
			out.Cause = CauseLunarUnknown
			if ue.Disputed {
				out.Cause = CauseLunarDisputed
			}
		} else {
			out.Verdict, out.Cause = VerdictWrong, im.cause(u, cons, facts, pub, sol)
		}
	default:
		out.Solved = sol.dates()
		if slices.Equal(out.Solved, out.Published) {
			out.Verdict = VerdictAgree
		} else {
			out.Verdict, out.Cause = VerdictWrong, im.cause(u, cons, facts, pub, sol)
		}
	}
	p.Solutions = out.Solved
	if out.Undecided != nil {
		p.Solutions = out.Published
	}
	p.Target = len(p.Solutions)
	buildMessages(im.render, p, season)
	return out
}

// constraint is what the published generator's readings need of one
// published constraint, read from its JSON once rather than for every day
// a reading is tried on: its type, the name of an event, and the first and
// last day of a lifetime or term of office.
type constraint struct {
	typ, name   string
	first, last int
}

// readConstraint reads the constraint m, converted to the fact f.
func readConstraint(m meta, f *Fact) constraint {
	c := constraint{}
	c.typ, _ = m.str("type")
	c.name, _ = m.str("name")
	if f.Kind == KindEvent {
		c.first, c.last, _ = eventDays(f)
	}
	return c
}

// publishedSolutions reads a record's answer: a list of dates, sorted and
// without repeats, [] when no date fits. A record without one, or with null,
// says nothing of its answer: it is malformed, not a published None.
func publishedSolutions(raw json.RawMessage) ([]string, error) {
	var dates []string
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &dates) != nil {
		return nil, fmt.Errorf("want a list of dates, [] when no date fits, have %s", shown(raw))
	}
	for _, d := range dates {
		if _, err := parseDate(d); err != nil {
			return nil, err
		}
	}
	return setOf(dates), nil
}

// readings are the published generator's own readings of some constraint
// types, each written here from its wording in the published format.
var readings = []struct {
	cause string
	types []string
}{
	{CauseLeapMonth, []string{"lunar_month"}},
	{CauseYearSetRule, []string{"event"}},
	{CauseBoundaryDays, []string{"person_alive", "us_president"}},
}

// cause finds why the published answer (day indexes pub) differs from
// the solved one: the first of readings that reproduces it, else all of
// them together, else whether lunar month starts a day or two apart
// explain what is left. A reading reproduces the answer when the two
// differ at most on days the lunar calendar leaves in doubt.
func (im *importer) cause(u *universe, cons []constraint, facts []Fact, pub []int, sol *solution) string {
	var doubtful []int
	if sol.doubt != nil {
		doubtful = sol.doubt.days
	}
	solveWith := func(causes ...string) []int { return im.answerAs(u, cons, facts, causes) }
	sameOffDoubt := func(a, b []int) bool {
		for _, d := range symmetricDifference(a, b) {
			if _, ok := slices.BinarySearch(doubtful, d); !ok {
				return false
			}
		}
		return true
	}
	all := make([]string, len(readings))
	for i, r := range readings {
		all[i] = r.cause
		if sameOffDoubt(solveWith(r.cause), pub) {
			return r.cause
		}
	}
	rest := solveWith(all...)
	if sameOffDoubt(rest, pub) {
		return CauseSeveral
	}
	if im.boundaryExplains(u, cons, facts, rest, pub, doubtful, all) {
		return CauseLunarTable
	}
	return CauseUnexplained
}

// answerAs is the answer (day indexes) of facts, converted from the
// constraints cons, with the published reading of the causes given.
func (im *importer) answerAs(u *universe, cons []constraint, facts []Fact, causes []string) []int {
	out := []int{}
	for n := u.first; n < u.first+u.n; n++ {
		ok := true
		for i := range facts {
			if !im.holdsAs(u, &facts[i], &cons[i], n, causes) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, n-u.first)
		}
	}
	return out
}

// boundaryExplains says whether lunar month starts placed a day or two
// apart from the table's turn answer (day indexes, under the readings in
// causes) into pub: every day the two differ on, bar doubtful ones, lies
// within two days of a month start that, moved by one or two days, puts it
// on pub's side, and moving it keeps every other day it passes over on
// pub's side too. Answers a whole zodiac year or lunar month apart are not
// explained: moving a start passes a day to the month next to it, never
// further.
func (im *importer) boundaryExplains(u *universe, cons []constraint, facts []Fact, answer, pub, doubtful []int, causes []string) bool {
	if !slices.ContainsFunc(facts, func(f Fact) bool { return isLunarKind(f.Kind) }) {
		return false
	}
	in := func(xs []int, d int) bool { _, ok := slices.BinarySearch(xs, d); return ok }
	lt := u.lunar
	// inWith: day index d is in the answer when its lunar label is l.
	inWith := func(d int, l lunarLabel) bool {
		for i := range facts {
			f := &facts[i]
			if !isLunarKind(f.Kind) {
				if !im.holdsAs(u, f, &cons[i], u.first+d, causes) {
					return false
				}
				continue
			}
			if f.Kind == KindLunar && im.readsAs(&cons[i], causes, CauseLeapMonth) {
				if l.month != f.Month {
					return false
				}
			} else if !u.holdsOn(f, l) {
				return false
			}
		}
		return true
	}
	// explains: moving the start of month i by delta days puts every day it
	// passes over on pub's side.
	explains := func(i, delta int) bool {
		if i <= 0 || i >= len(lt.months) {
			return false
		}
		s := lt.months[i].start
		a, b, l := s+delta, s, lt.label(i) // earlier: the days pass to month i
		if delta > 0 {
			a, b, l = s, s+delta, lt.label(i-1) // later: to month i-1
		}
		for n := a; n < b; n++ {
			d := n - u.first
			if d < 0 || d >= u.n {
				continue
			}
			if inWith(d, l) != in(pub, d) {
				return false
			}
		}
		return true
	}
	diff := symmetricDifference(answer, pub)
	if len(diff) == 0 {
		return false
	}
	for _, d := range diff {
		if in(doubtful, d) {
			continue
		}
		n := u.first + d
		i := lt.monthAt(n)
		if i < 0 {
			return false
		}
		ok := false
		// The start of d's month moved later (d passes to the month
		// before), or the next month's start moved earlier (d passes to it).
		for delta := 1; delta <= 2 && !ok; delta++ {
			ok = n < lt.months[i].start+delta && explains(i, delta) ||
				i+1 < len(lt.months) && n >= lt.months[i+1].start-delta && explains(i+1, -delta)
		}
		if !ok {
			return false
		}
	}
	return true
}

// readsAs says a constraint is read the published generator's way for
// cause c, among causes.
func (im *importer) readsAs(k *constraint, causes []string, c string) bool {
	for _, r := range readings {
		if r.cause == c && slices.Contains(causes, c) && slices.Contains(r.types, k.typ) {
			return true
		}
	}
	return false
}

// holdsAs is holds with the published reading of the causes given.
func (im *importer) holdsAs(u *universe, f *Fact, k *constraint, n int, causes []string) bool {
	for _, c := range causes {
		for _, r := range readings {
			if r.cause != c || !slices.Contains(r.types, k.typ) {
				continue
			}
			switch c {
			case CauseLeapMonth:
				i := u.lunar.monthAt(n)
				return i >= 0 && u.lunar.months[i].month == f.Month
			case CauseYearSetRule:
				y, _, _ := civil(n)
				switch k.name {
				case "summer_olympics":
					return y >= 1896 && (y-1896)%4 == 0 && y != 1916 && y != 1940 && y != 1944
				case "world_cup":
					return y >= 1930 && (y-1930)%4 == 0 && y != 1942 && y != 1946
				}
			case CauseBoundaryDays:
				return n > k.first && n < k.last
			}
		}
	}
	return u.holds(f, n)
}

// symmetricDifference lists the members (sorted) of one sorted list and
// not the other.
func symmetricDifference(a, b []int) []int {
	var out []int
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if _, ok := slices.BinarySearch(a, x); !ok {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
