package traveler

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// DataSource is the data_source of TRAVELER rows: the reward that
// scores them.
const DataSource = "traveler"

// Ability is the ability of TRAVELER rows.
const Ability = "temporal_reasoning"

// Activity is an event type of the TRAVELER household (the TRAVELER paper,
// Table 1) with the phrases questions and event lists use and the survey
// event whose curves give its vague ground truth.
type Activity struct {
	// Name is the event type as the TRAVELER paper names it.
	Name string
	// Past is the simple past ("ate a risotto"); Base the bare infinitive
	// ("eat a risotto").
	Past, Base string
	// Survey is the event of survey_means.csv rated for this activity.
	Survey string
}

// Activities are the seven event types of the TRAVELER paper's household.
var Activities = []Activity{
	{"watch film", "watched a film", "watch a film", "tom_watching_film"},
	{"eat risotto", "ate a risotto", "eat a risotto", "tom_eating_risotto"},
	{"read book", "read a book", "read a book", "tom_reading_book"},
	{"dance lively salsa", "danced a lively salsa", "dance a lively salsa", "tom_dancing_salsa"},
	{"store wine bottle", "stored a wine bottle", "store a wine bottle", "tom_storing_wineBottle"},
	{"drink juice", "drank a juice", "drink a juice", "tom_drinking_juice"},
	{"chat with friend", "chatted with a friend", "chat with a friend", "tom_chatting_friend"},
}

// Subjects and Locations are the household members and
// rooms of the TRAVELER paper, Table 1. The survey rated Tom's events; the same curves
// serve every subject.
var (
	Subjects  = []string{"Mary", "Tom", "Robot"}
	Locations = []string{"living room", "kitchen"}
)

// Categories and Templates are the question categories and
// templates of the TRAVELER paper, Tables 2–3, in the order rows cycle through them.
var (
	Categories = []string{rewards.TravelerExplicit, rewards.TravelerImplicit, rewards.TravelerVague}
	Templates  = []string{rewards.TravelerWho, rewards.TravelerDid, rewards.TravelerHowOften, rewards.TravelerWhenLast}
)

// templateFits reports whether a template is asked in a category:
// "when was the last time" names no time, so it belongs to the implicit
// (speech-time) category only, as in the TRAVELER paper.
func templateFits(category, template string) bool {
	return template != rewards.TravelerWhenLast || category == rewards.TravelerImplicit
}

// DefaultSystemPrompt is the system turn of TRAVELER rows unless
// Options.SystemPrompt replaces it.
const DefaultSystemPrompt = "You answer questions about what happened in a household. " +
	"Use only the list of events you are given and the current date and time."

// Options configure TRAVELER event-set questions.
type Options struct {
	// Seed decides every draw; a row depends only on Seed and its index.
	Seed uint64
	// Shard, when its Count > 1, makes Build write only the rows whose
	// index is in the shard: shards of one seed and count together hold
	// every row once.
	Shard shard.Shard
	// MinEvents and MaxEvents bound the size of a row's event set (drawn
	// uniformly; the TRAVELER paper uses 5 to 100).
	MinEvents, MaxEvents int
	// Categories and Templates are the question kinds to ask. Row i has
	// category Categories[i mod len]; its template is drawn among Templates
	// that fit the category.
	Categories, Templates []string
	// WindowDays is how far back events reach from the speech time (seed
	// 002: 2023-01-01 to 2023-09-29, about 270 days).
	WindowDays int
	// FirstYear and LastYear bound the speech time's year.
	FirstYear, LastYear int
	// Split is extra_info.split.
	Split string
	// SystemPrompt is the system turn; "" for DefaultSystemPrompt.
	SystemPrompt string
}

// DefaultOptions are the defaults of synth traveler.
func DefaultOptions() Options {
	return Options{
		MinEvents: 5, MaxEvents: 100,
		Categories: slices.Clone(Categories), Templates: slices.Clone(Templates),
		WindowDays: 270, FirstYear: 2023, LastYear: 2025, Split: "train",
	}
}

// MaxEvents bounds the event set of a row, which the prompt lists
// in full.
const MaxEvents = 1000

// Validate checks the options; an error is an *synth.OptionError keyed by the
// synth.traveler config key (events, categories, templates, window_days,
// years, split).
func (o *Options) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &synth.OptionError{Family: "traveler", Key: key, Err: fmt.Errorf(format, args...)}
	}
	if o.MinEvents < 1 || o.MaxEvents < o.MinEvents || o.MaxEvents > MaxEvents {
		return bad("events", "%d-%d: want A-B with 1 ≤ A ≤ B ≤ %d", o.MinEvents, o.MaxEvents, MaxEvents)
	}
	if err := checkList(o.Categories, Categories); err != nil {
		return &synth.OptionError{Family: "traveler", Key: "categories", Err: err}
	}
	if err := checkList(o.Templates, Templates); err != nil {
		return &synth.OptionError{Family: "traveler", Key: "templates", Err: err}
	}
	for _, c := range o.Categories {
		if !slices.ContainsFunc(o.Templates, func(t string) bool { return templateFits(c, t) }) {
			return bad("templates", "none of %s is asked in the %s category (when_last is implicit only)", strings.Join(o.Templates, ","), c)
		}
	}
	if o.WindowDays < 1 || o.WindowDays > 3660 {
		return bad("window_days", "%d is not in [1, 3660]", o.WindowDays)
	}
	if o.FirstYear < 1900 || o.LastYear > 2200 || o.LastYear < o.FirstYear {
		return bad("years", "%d-%d: want A-B with 1900 ≤ A ≤ B ≤ 2200", o.FirstYear, o.LastYear)
	}
	if o.Split == "" {
		return bad("split", "empty")
	}
	return nil
}

func checkList(got, known []string) error {
	if len(got) == 0 {
		return fmt.Errorf("empty: want some of %s", strings.Join(known, ","))
	}
	for i, g := range got {
		if !slices.Contains(known, g) {
			return fmt.Errorf("%q: want some of %s", g, strings.Join(known, ","))
		}
		if slices.Contains(got[:i], g) {
			return fmt.Errorf("%q twice", g)
		}
	}
	return nil
}

// Event is one event of a household's event set.
type Event struct {
	Subject  string
	Activity *Activity
	Location string
	// Time is when it happened (UTC, whole minutes, before the speech time).
	Time time.Time
}

// Row is one question with its event set, prompt and ground truth.
type Row struct {
	// Index is the row's number; with the seed it decides every draw.
	Index int64
	// Category, Template and Expression say what is asked: Expression is
	// the temporal expression as the question words it ("on 2023-09-29",
	// "yesterday", "recently"; "" for when_last).
	Category, Template, Expression string
	// Subject, Activity and Location are the question's (Subject is "" for
	// who).
	Subject  string
	Activity *Activity
	Location string
	// SpeechTime is "now" for the question.
	SpeechTime time.Time
	Events     []Event
	System     string
	User       string
	// GroundTruth is the JSON text of a rewards.TravelerGroundTruth.
	GroundTruth string
	// Answer is the gold answer as the model should write it after
	// "ANSWER:"; for vague questions, an answer no other beats.
	Answer string
	// BestScore is the highest score an answer can get: 1 for crisp
	// questions, max over answers of the soft accuracy for vague ones.
	BestScore float64
	Split     string
	// ID names the row uniquely across sets: traveler-s<seed>-<index>.
	ID string
}

// Group is the unit a train/test split keeps on one side: the speech time
// and the event set the question is asked over, as a hash ("events-" and
// 16 hexadecimal digits), so that two questions over one household's
// events never straddle the split.
func (row *Row) Group() string {
	events := make([]string, len(row.Events))
	for i, e := range row.Events {
		events[i] = e.Subject + "|" + e.Activity.Name + "|" + e.Location + "|" + e.Time.Format(time.RFC3339)
	}
	slices.Sort(events)
	h := sha256.New()
	h.Write([]byte(row.SpeechTime.Format(time.RFC3339)))
	for _, e := range events {
		h.Write([]byte{'\n'})
		h.Write([]byte(e))
	}
	return "events-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Generator makes TRAVELER rows. It is safe for concurrent use.
type Generator struct {
	opt    Options
	curves map[[2]string]*Curve
	system string
}

// NewGenerator validates the options and loads the survey curves.
func NewGenerator(opt Options) (*Generator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{opt: opt, curves: map[[2]string]*Curve{}, system: opt.SystemPrompt}
	if g.system == "" {
		g.system = DefaultSystemPrompt
	}
	for i := range Activities {
		for _, adv := range Adverbials {
			c, err := SurveyCurve(Activities[i].Survey, adv)
			if err != nil {
				return nil, err
			}
			g.curves[[2]string{Activities[i].Survey, adv}] = c
		}
	}
	return g, nil
}

// rowRand is the random stream of row index: PCG seeded from SHA-256
// of a domain tag, the seed and the index only.
func rowRand(seed uint64, index int64) *rand.Rand {
	const tag = "timeaware/synth/traveler\x00"
	buf := make([]byte, 0, len(tag)+16)
	buf = append(buf, tag...)
	buf = binary.LittleEndian.AppendUint64(buf, seed)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(index))
	sum := sha256.Sum256(buf)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

// interval is a half-open time interval [From, To).
type interval struct{ From, To time.Time }

func (iv interval) has(t time.Time) bool { return !t.Before(iv.From) && t.Before(iv.To) }

// expr is a crisp temporal expression: its wording and interval.
type expr struct {
	text string
	iv   interval
}

// implicit are the speech-time expressions of the TRAVELER paper, Table 3,
// with their intervals; every event is before now, so "today" and "this
// month" run up to now.
func implicit(now time.Time) []expr {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := now.Add(time.Minute)
	return []expr{
		{"today", interval{day, end}},
		{"yesterday", interval{day.AddDate(0, 0, -1), day}},
		{"this month", interval{month, end}},
		{"last month", interval{month.AddDate(0, -1, 0), month}},
		{"this year", interval{time.Date(now.Year(), 1, 1, 0, 0, 0, 0, time.UTC), end}},
	}
}

// explicit are the absolute expressions of the TRAVELER paper, Table 3, for
// the day, month and year of t.
func explicit(t time.Time) []expr {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	year := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	return []expr{
		{"on " + day.Format("2006-01-02"), interval{day, day.AddDate(0, 0, 1)}},
		{"in " + month.Format("2006-01"), interval{month, month.AddDate(0, 1, 0)}},
		{"in the year " + strconv.Itoa(t.Year()), interval{year, year.AddDate(1, 0, 0)}},
	}
}

// Row makes row index. The draws, in order: the speech time's day and
// minute, the number of events, each event's subject, activity, location
// and age (a coin for uniform or log-uniform, then the age), the template,
// the anchoring coin, the anchor event or a random subject, activity and
// location, then the temporal expression.
//
// Event ages are uniform over the window (as in the TRAVELER paper) for half of the
// events and log-uniform from 1 minute to the window for the other half, so
// that every expression, from "just" to "last month", has events to find.
// Half of the questions are anchored on an event of the set and ask about
// it with an expression that covers it (the TRAVELER paper builds questions from
// events); the others ask about a random subject, activity and location.
func (g *Generator) Row(index int64) (*Row, error) {
	o := &g.opt
	r := rowRand(o.Seed, index)
	first := time.Date(o.FirstYear, 1, 1, 0, 0, 0, 0, time.UTC)
	days := int(time.Date(o.LastYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Sub(first).Hours() / 24)
	now := first.AddDate(0, 0, r.IntN(days)).Add(time.Duration(r.IntN(24*60)) * time.Minute)

	n := o.MinEvents + r.IntN(o.MaxEvents-o.MinEvents+1)
	window := float64(o.WindowDays * 24 * 60)
	events := make([]Event, n)
	for i := range events {
		e := &events[i]
		e.Subject = Subjects[r.IntN(len(Subjects))]
		e.Activity = &Activities[r.IntN(len(Activities))]
		e.Location = Locations[r.IntN(len(Locations))]
		var age float64
		if r.IntN(2) == 0 {
			age = 1 + r.Float64()*(window-1)
		} else {
			age = math.Exp(r.Float64() * math.Log(window))
		}
		e.Time = now.Add(-time.Duration(max(1, math.Round(age))) * time.Minute)
	}

	row := &Row{Index: index, SpeechTime: now, Events: events, Split: o.Split, System: g.system,
		ID:       "traveler-s" + strconv.FormatUint(o.Seed, 10) + "-" + strconv.FormatInt(index, 10),
		Category: o.Categories[int(index%int64(len(o.Categories)))]}
	var fits []string
	for _, t := range o.Templates {
		if templateFits(row.Category, t) {
			fits = append(fits, t)
		}
	}
	row.Template = fits[r.IntN(len(fits))]
	var anchor *Event
	if r.IntN(2) == 0 {
		anchor = &events[r.IntN(n)]
		row.Subject, row.Activity, row.Location = anchor.Subject, anchor.Activity, anchor.Location
	} else {
		row.Subject = Subjects[r.IntN(len(Subjects))]
		row.Activity = &Activities[r.IntN(len(Activities))]
		row.Location = Locations[r.IntN(len(Locations))]
	}
	if row.Template == rewards.TravelerWho {
		row.Subject = ""
	}

	var gt rewards.TravelerGroundTruth
	var err error
	switch {
	case row.Template == rewards.TravelerWhenLast:
		err = g.whenLast(row, &gt)
	case row.Category == rewards.TravelerVague:
		row.Expression = Adverbials[r.IntN(len(Adverbials))]
		err = g.vague(row, &gt)
	default:
		var exprs []expr
		if row.Category == rewards.TravelerExplicit {
			at := events[r.IntN(n)].Time
			if anchor != nil {
				at = anchor.Time
			}
			exprs = explicit(at)
		} else {
			exprs = implicit(now)
			if anchor != nil {
				var covering []expr
				for _, x := range exprs {
					if x.iv.has(anchor.Time) {
						covering = append(covering, x)
					}
				}
				if len(covering) > 0 {
					exprs = covering
				}
			}
		}
		x := exprs[r.IntN(len(exprs))]
		row.Expression = x.text
		err = g.crisp(row, x.iv, &gt)
	}
	if err != nil {
		return nil, err
	}
	gt.Category, gt.Template = row.Category, row.Template
	b, err := json.Marshal(gt)
	if err != nil {
		return nil, fmt.Errorf("traveler: row %d: %w", index, err)
	}
	row.GroundTruth = string(b)
	row.User = user(row)
	return row, nil
}

// matches reports whether an event is one the question is about, in any
// time: same activity and location, and same subject unless the template
// is who.
func (row *Row) matches(e *Event) bool {
	return e.Activity == row.Activity && e.Location == row.Location && (row.Subject == "" || e.Subject == row.Subject)
}

func (g *Generator) crisp(row *Row, iv interval, gt *rewards.TravelerGroundTruth) error {
	var subjects []string
	count := 0
	for i := range row.Events {
		e := &row.Events[i]
		if row.matches(e) && iv.has(e.Time) {
			count++
			subjects = append(subjects, e.Subject)
		}
	}
	var answer any
	row.BestScore = 1
	switch row.Template {
	case rewards.TravelerWho:
		slices.Sort(subjects)
		subjects = slices.Compact(subjects)
		if subjects == nil {
			subjects = []string{}
		}
		answer, row.Answer = subjects, nameList(subjects)
	case rewards.TravelerDid:
		row.Answer = "no"
		if count > 0 {
			row.Answer = "yes"
		}
		answer = row.Answer
	default:
		answer, row.Answer = count, strconv.Itoa(count)
	}
	return setAnswer(gt, answer)
}

func (g *Generator) whenLast(row *Row, gt *rewards.TravelerGroundTruth) error {
	var last time.Time
	for i := range row.Events {
		if e := &row.Events[i]; row.matches(e) && e.Time.After(last) {
			last = e.Time
		}
	}
	row.Answer, row.BestScore = "never", 1
	if !last.IsZero() {
		row.Answer = last.Format("2006-01-02")
	}
	return setAnswer(gt, row.Answer)
}

func setAnswer(gt *rewards.TravelerGroundTruth, answer any) error {
	b, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("traveler: answer: %w", err)
	}
	gt.Answer = b
	return nil
}

// vague fills the probabilistic ground truth: for each matching event, the
// probability that the adverbial applies at its distance from the speech
// time (the TRAVELER paper), rounded to 6 decimals as the ground truth stores it.
func (g *Generator) vague(row *Row, gt *rewards.TravelerGroundTruth) error {
	curve := g.curves[[2]string{row.Activity.Survey, row.Expression}]
	p := func(e *Event) float64 {
		return math.Round(curve.P(row.SpeechTime.Sub(e.Time).Minutes())*1e6) / 1e6
	}
	var probs any
	switch row.Template {
	case rewards.TravelerWho:
		bySubject := map[string][]float64{}
		for _, s := range Subjects {
			bySubject[s] = []float64{}
		}
		for i := range row.Events {
			if e := &row.Events[i]; row.matches(e) {
				bySubject[e.Subject] = append(bySubject[e.Subject], p(e))
			}
		}
		var names []string
		row.BestScore = 1
		for _, s := range Subjects {
			ps := rewards.TravelerAtLeastOne(bySubject[s])
			if ps > 0.5 {
				names = append(names, s)
			}
			row.BestScore *= max(ps, 1-ps)
		}
		slices.Sort(names)
		row.Answer = nameList(names)
		probs = bySubject
	default:
		ps := []float64{}
		for i := range row.Events {
			if e := &row.Events[i]; row.matches(e) {
				ps = append(ps, p(e))
			}
		}
		if row.Template == rewards.TravelerDid {
			at := rewards.TravelerAtLeastOne(ps)
			row.Answer, row.BestScore = "no", 1-at
			if at > 0.5 {
				row.Answer, row.BestScore = "yes", at
			}
		} else {
			dist := rewards.TravelerCountDistribution(ps)
			k := 0
			for i, q := range dist {
				if q > dist[k] {
					k = i
				}
			}
			row.Answer, row.BestScore = strconv.Itoa(k), dist[k]
		}
		probs = ps
	}
	b, err := json.Marshal(probs)
	if err != nil {
		return fmt.Errorf("traveler: probabilities: %w", err)
	}
	gt.Probabilities = b
	return nil
}

func nameList(names []string) string {
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, ", ")
}

// question words the question. "just" goes before the verb, the
// other expressions after the location (the TRAVELER paper's examples).
func question(row *Row) string {
	a, loc := row.Activity, " in the "+row.Location
	pre, post := "", ""
	switch row.Expression {
	case "":
	case Just:
		pre = "just "
	case LongTimeAgo:
		post = " a long time ago"
	default:
		post = " " + row.Expression
	}
	switch row.Template {
	case rewards.TravelerWho:
		return "Who " + pre + a.Past + loc + post + "?"
	case rewards.TravelerDid:
		return "Did " + row.Subject + " " + pre + a.Base + loc + post + "?"
	case rewards.TravelerHowOften:
		return "How often did " + row.Subject + " " + pre + a.Base + loc + post + "?"
	}
	return "When was the last time " + row.Subject + " " + a.Past + loc + "?"
}

var answerForm = map[string]string{
	rewards.TravelerWho:      `the names of everyone who did it, separated by commas, or "nobody"`,
	rewards.TravelerDid:      `"yes" or "no"`,
	rewards.TravelerHowOften: `the number of times as a whole number (0 if it never happened)`,
	rewards.TravelerWhenLast: `that date as YYYY-MM-DD, or "never" if it never happened`,
}

// user is the user turn: the speech time, the event set in the
// order drawn, the question, and how to give the answer.
func user(row *Row) string {
	var b strings.Builder
	b.Grow(64 * (len(row.Events) + 8))
	b.WriteString("It is now ")
	b.WriteString(row.SpeechTime.Format("2006-01-02 15:04"))
	b.WriteString(". These events took place in the household (all times are household time):\n")
	for i := range row.Events {
		e := &row.Events[i]
		b.WriteString("- On ")
		b.WriteString(e.Time.Format("2006-01-02"))
		b.WriteString(" at ")
		b.WriteString(e.Time.Format("15:04"))
		b.WriteString(", ")
		b.WriteString(e.Subject)
		b.WriteByte(' ')
		b.WriteString(e.Activity.Past)
		b.WriteString(" in the ")
		b.WriteString(e.Location)
		b.WriteString(".\n")
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(question(row))
	b.WriteString("\n\nGo through the events one by one and note each one that fits the question.")
	if row.Category == rewards.TravelerVague {
		b.WriteString(" The question uses a vague time expression: read it the way people usually mean it.")
	}
	b.WriteString(" Then end your reply with a line of the form\nANSWER: <answer>\nwhere <answer> is ")
	b.WriteString(answerForm[row.Template])
	b.WriteByte('.')
	return b.String()
}

// Summary counts what a build wrote.
type Summary struct {
	Rows       int            `json:"rows"`
	ByCategory map[string]int `json:"by_category"`
	ByTemplate map[string]int `json:"by_template"`
	// ByAnswer counts the gold answers of did questions (yes, no).
	ByAnswer   map[string]int `json:"did_answers"`
	EventsMin  int            `json:"events_min"`
	EventsMax  int            `json:"events_max"`
	EventsMean float64        `json:"events_mean"`
	// VagueBestMean is the mean best score of the vague questions: what a
	// perfect answerer would average on them.
	VagueBestMean float64 `json:"vague_best_mean"`
	// Skipped counts the rows left to other shards.
	Skipped int `json:"skipped_other_shards,omitempty"`
}

// Build makes rows 0 … count−1 and passes each to emit, in order.
// It stops at the first error of emit or when ctx is done.
func Build(ctx context.Context, opt Options, count int, emit func(*Row) error) (*Summary, error) {
	if count < 1 {
		return nil, &synth.OptionError{Family: "traveler", Key: "count", Err: fmt.Errorf("%d: want at least 1", count)}
	}
	g, err := NewGenerator(opt)
	if err != nil {
		return nil, err
	}
	s := &Summary{ByCategory: map[string]int{}, ByTemplate: map[string]int{}, ByAnswer: map[string]int{}}
	events, vague, vagueBest := 0, 0, 0.0
	for i := range count {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if !opt.Shard.HasIndex(int64(i)) {
			s.Skipped++
			continue
		}
		row, err := g.Row(int64(i))
		if err != nil {
			return nil, err
		}
		if err := emit(row); err != nil {
			return nil, err
		}
		s.Rows++
		s.ByCategory[row.Category]++
		s.ByTemplate[row.Template]++
		if row.Template == rewards.TravelerDid {
			s.ByAnswer[row.Answer]++
		}
		n := len(row.Events)
		if s.Rows == 1 || n < s.EventsMin {
			s.EventsMin = n
		}
		s.EventsMax = max(s.EventsMax, n)
		events += n
		if row.Category == rewards.TravelerVague {
			vague++
			vagueBest += row.BestScore
		}
	}
	if s.Rows > 0 {
		s.EventsMean = float64(events) / float64(s.Rows)
	}
	if vague > 0 {
		s.VagueBestMean = vagueBest / float64(vague)
	}
	return s, nil
}

// ParseRange reads "A-B" or one number "A" (meaning A-A): the
// bounds of --events and of synth.traveler.years.
func ParseRange(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New(strconv.Quote(s) + ": want A-B, e.g. 5-100, or one number")
	}
	return lo, hi, nil
}
