package timestamps

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/splits/scenario"
)

// Mode says what Stamp does with the times a record already has.
type Mode string

const (
	// ModeReplace draws every time anew; of the record's own times only the
	// start (see Options) is used.
	ModeReplace Mode = "replace"
	// ModeFill keeps every time the record has and draws only the missing ones.
	ModeFill Mode = "fill"
)

// ParseMode reads "replace" or "fill".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeReplace, ModeFill:
		return m, nil
	}
	return "", fmt.Errorf("mode %q is not replace or fill", s)
}

// Where a trajectory's sensitivity and start time came from (Info,
// Summary).
const (
	FromRecord  = "record"
	FromCatalog = "catalog"
	FromOption  = "option"
)

// Jitter holds the standard deviations, in seconds, of the Gaussian noise on
// each modelled message duration, by the role of the message. The TicToc
// paper adds such noise against artificial regularity without giving its
// size.
type Jitter struct {
	User, Assistant, Tool float64
}

// Gaps are the distributions, in seconds, of the gap before the final user
// message at the elapse levels small, medium and large.
type Gaps [conversation.NumElapse]TruncatedNormal

// PaperGap returns TN(μ, μ/3, [μ/3, 2μ]) in seconds for a mean gap μ: the
// rule of the TicToc paper, Table 4 that ties the spread and bounds to the mean.
func PaperGap(mean time.Duration) TruncatedNormal {
	mu := mean.Seconds()
	return TruncatedNormal{Mu: mu, Sigma: mu / 3, Min: mu / 3, Max: 2 * mu}
}

// Day and Month are the units of the paper's gap table. A month is 30 days,
// so the large gap of a low-sensitivity scenario, "3 months", is 90 days.
const (
	Day   = 24 * time.Hour
	Month = 30 * Day
)

// PaperGapMeans returns the mean final gaps of the TicToc paper, Table 4, small to
// large, by sensitivity.
func PaperGapMeans() map[string][conversation.NumElapse]time.Duration {
	return map[string][conversation.NumElapse]time.Duration{
		scenario.SensitivityLow:    {3 * time.Minute, 3 * Day, 3 * Month},
		scenario.SensitivityMedium: {3 * time.Minute, 3 * time.Hour, 3 * Day},
		scenario.SensitivityHigh:   {3 * time.Second, 3 * time.Minute, 3 * time.Hour},
	}
}

// GapsFromMeans applies PaperGap to every mean.
func GapsFromMeans(means map[string][conversation.NumElapse]time.Duration) map[string]Gaps {
	out := make(map[string]Gaps, len(means))
	for s, ms := range means {
		var g Gaps
		for k, m := range ms {
			g[k] = PaperGap(m)
		}
		out[s] = g
	}
	return out
}

// Options configure Stamp and Stream. DefaultOptions has
// the values of the TicToc paper, App. A.4; the zero value is not usable.
type Options struct {
	// Seed, with each trajectory's id, fixes that trajectory's times.
	Seed uint64
	// Mode is ModeReplace (also the meaning of the zero value) or ModeFill.
	Mode Mode
	// Start is the conversation's start for records that carry none.
	Start time.Time
	// Sensitivity (low, medium or high) is used for records whose own
	// field is empty and whose scenario the Catalog does not know.
	Sensitivity string
	// Catalog, when set, gives the sensitivity of records without one,
	// from the record's scenario field or else its id's alias.
	Catalog *scenario.Catalog

	// Read is the user's reading speed r in words per minute; Write the
	// writing speed w in words per minute (log-normal, log-space μ and σ);
	// Generate the assistant's generation speed g in words per second.
	// Each is drawn once per trajectory; their Src fields are ignored.
	// Min must be above zero, so that no message takes forever.
	Read     TruncatedNormal
	Write    TruncatedLogNormal
	Generate TruncatedNormal
	// ToolSeconds is the duration of a tool call's execution.
	ToolSeconds float64
	Jitter      Jitter
	// Gaps maps low, medium and high to the final-gap distributions.
	Gaps map[string]Gaps
	// Resolution rounds drawn times (1s gives whole seconds, as in the
	// TicToc release); 0 keeps nanoseconds. Times taken from the record
	// are never rounded.
	Resolution time.Duration

	// Workers is the number of goroutines Stream decodes and stamps
	// on; 0 means GOMAXPROCS.
	Workers int
	// Keep, when set, limits Stream to the trajectories whose id it
	// accepts (a shard of the input, say); the others are counted only.
	Keep func(id string) bool
}

// DefaultOptions returns the paper's model: r ~ TN(238, 60, [50, ∞))
// wpm, w ~ TLN(3.61, 0.40, [5, ∞)) wpm, g ~ TN(40, 16, [10, ∞)) words/s,
// tools 1 s, the gaps of PaperGapMeans, whole seconds, and jitter of 1 s on
// user messages, 0.5 s on assistant messages and 0.25 s on tool messages
// (our choice, as the paper gives none: small against the durations they
// perturb).
func DefaultOptions() Options {
	inf := math.Inf(1)
	return Options{
		Mode:        ModeReplace,
		Read:        TruncatedNormal{Mu: 238, Sigma: 60, Min: 50, Max: inf},
		Write:       TruncatedLogNormal{Mu: 3.61, Sigma: 0.40, Min: 5, Max: inf},
		Generate:    TruncatedNormal{Mu: 40, Sigma: 16, Min: 10, Max: inf},
		ToolSeconds: 1,
		Jitter:      Jitter{User: 1, Assistant: 0.5, Tool: 0.25},
		Gaps:        GapsFromMeans(PaperGapMeans()),
		Resolution:  time.Second,
	}
}

// FieldError is a problem with one field of one record. Stamp and
// RewriteTimes return it; Stream turns it into a
// *conversation.RecordError, which adds the input's name and position.
type FieldError struct {
	ID    string
	Field string
	Err   error
}

// Error names the id and the field, then the problem.
func (e *FieldError) Error() string {
	return fmt.Sprintf("id %s: %s: %v", e.ID, e.Field, e.Err)
}

// Unwrap returns the problem, for errors.Is and errors.As.
func (e *FieldError) Unwrap() error { return e.Err }

// Info says how one trajectory was stamped.
type Info struct {
	Sensitivity     string
	SensitivityFrom string // FromRecord, FromCatalog or FromOption
	StartFrom       string // FromRecord or FromOption
	// Filled and Kept count the messages whose times were drawn and kept;
	// the final message counts once for its three times.
	Filled, Kept int
}

// maxDelay bounds one modelled duration; beyond it the parameters are wrong
// (a speed bound near zero, say), and time.Duration would overflow.
const maxDelay = 100 * 365 * Day

// Stamper stamps trajectories with the interaction-time model of the TicToc paper
// §3.4 and App. A.4. It is safe for concurrent use.
type Stamper struct {
	opt Options
}

// NewStamper validates the options.
func NewStamper(opt Options) (*Stamper, error) {
	if opt.Mode == "" {
		opt.Mode = ModeReplace
	}
	if _, err := ParseMode(string(opt.Mode)); err != nil {
		return nil, fmt.Errorf("timestamps: %w", err)
	}
	if opt.Sensitivity != "" {
		s, ok := conversation.NormalizeSensitivity(opt.Sensitivity)
		if !ok {
			return nil, fmt.Errorf("timestamps: sensitivity %q is not low, medium or high", opt.Sensitivity)
		}
		opt.Sensitivity = s
	}
	speeds := []struct {
		name string
		err  error
		min  float64
	}{
		{"reading speed", opt.Read.Validate(), opt.Read.Min},
		{"writing speed", opt.Write.Validate(), opt.Write.Min},
		{"generation speed", opt.Generate.Validate(), opt.Generate.Min},
	}
	for _, s := range speeds {
		if s.err != nil {
			return nil, fmt.Errorf("timestamps: %s: %w", s.name, s.err)
		}
		if !(s.min > 0) {
			return nil, fmt.Errorf("timestamps: %s: lower bound %g must be above 0", s.name, s.min)
		}
	}
	for _, v := range []struct {
		name string
		val  float64
	}{{"tool seconds", opt.ToolSeconds}, {"user jitter", opt.Jitter.User}, {"assistant jitter", opt.Jitter.Assistant}, {"tool jitter", opt.Jitter.Tool}} {
		if !(v.val >= 0) || math.IsInf(v.val, 0) {
			return nil, fmt.Errorf("timestamps: %s %g is not a finite number >= 0", v.name, v.val)
		}
	}
	for _, s := range scenario.Sensitivities {
		g, ok := opt.Gaps[s]
		if !ok {
			return nil, fmt.Errorf("timestamps: no final gaps for sensitivity %s", s)
		}
		for k, d := range g {
			if err := d.Validate(); err != nil {
				return nil, fmt.Errorf("timestamps: final gap %s/%s: %w", s, levelNames[k], err)
			}
			if d.Min < 0 {
				return nil, fmt.Errorf("timestamps: final gap %s/%s: lower bound %g s is negative", s, levelNames[k], d.Min)
			}
		}
	}
	if opt.Resolution < 0 {
		return nil, fmt.Errorf("timestamps: resolution %v is negative", opt.Resolution)
	}
	return &Stamper{opt: opt}, nil
}

var levelNames = [conversation.NumElapse]string{"small", "medium", "large"}

// Stamp sets the times of t's messages and the three times of its final
// user message; it modifies t in place.
//
// The model (the TicToc paper, §3.4, App. A.4): the trajectory draws a reading speed
// r, a writing speed w and a generation speed g. The leading system messages
// and the first message after them open the conversation at its start time.
// After that a user message takes words/w to write, plus words/r to read
// the assistant message right before it, if there is one; an assistant
// message takes words/g, counting its text and its tool calls' names and
// arguments; a tool message takes ToolSeconds; a later system message takes
// no time. Words are runs of non-space characters. Each duration gets
// Gaussian jitter with the role's σ, conditioned on keeping the duration
// non-negative (the jittered duration is drawn from TN(d, σ, [0, ∞)),
// which is what redrawing the noise until it fits gives), so times never go
// backwards. The final user message is asked after a gap Δt_k at each
// elapse level k, drawn from the record's sensitivity's Gaps, from the time
// of the message before it.
//
// The start is the first time among the opening messages, else
// Options.Start; with neither Stamp fails. The sensitivity is the
// record's, else the Catalog's for its scenario, else
// Options.Sensitivity.
//
// In fill mode every time the record has is kept (it must not be earlier
// than a time before it) and a drawn time never passes the next kept one.
// The final message's times are kept only as a list of three; a single time
// there is an error, since it cannot be kept in a list.
//
// The random stream is a PCG seeded from a hash of Options.Seed and
// t.ID alone, and every trajectory consumes it in the same order (three
// speeds, one draw per message before the final one, three gaps), so a
// trajectory's times do not depend on the other records, on their order, or
// on which of its times fill mode keeps. Errors are *FieldError.
func (s *Stamper) Stamp(t *conversation.Trajectory) (Info, error) {
	var info Info
	fail := func(field string, err error) (Info, error) {
		return Info{}, &FieldError{ID: t.ID, Field: field, Err: err}
	}
	n := len(t.History)
	if n == 0 {
		return fail("history", errors.New("empty"))
	}
	last := n - 1
	if role := t.History[last].Role; role != conversation.RoleUser {
		return fail(fmt.Sprintf("history[%d].role", last), fmt.Errorf("the final message is %q, want the user's follow-up question", role))
	}
	var err error
	if info.Sensitivity, info.SensitivityFrom, err = s.sensitivity(t); err != nil {
		return fail("sensitivity", err)
	}
	gaps := s.opt.Gaps[info.Sensitivity]
	fill := s.opt.Mode == ModeFill

	open := 0
	for open < last && t.History[open].Role == conversation.RoleSystem {
		open++
	}
	if open < last {
		open++
	}
	var start time.Time
	for i := 0; i < open && start.IsZero(); i++ {
		start = t.History[i].Time
	}
	info.StartFrom = FromRecord
	if start.IsZero() {
		if s.opt.Start.IsZero() {
			return fail("history[0].time", errors.New("missing, and no start time was given"))
		}
		start, info.StartFrom = s.opt.Start, FromOption
	}

	var next []time.Time // fill mode: the earliest kept time after each message
	if fill {
		if next, err = keptTimes(t); err != nil {
			return Info{}, err
		}
	}

	var pcg rand.PCG
	seedStream(&pcg, s.opt.Seed, t.ID)
	r, w, g := s.opt.Read, s.opt.Write, s.opt.Generate
	read := r.quantile(uniform(&pcg))
	write := w.quantile(uniform(&pcg))
	gen := g.quantile(uniform(&pcg))

	clock, prev := start, time.Time{}
	for i := 0; i < last; i++ {
		m := &t.History[i]
		u, uc := uniform(&pcg)
		var secs float64
		if i >= open {
			secs = s.duration(t, i, read, write, gen, u, uc)
			if !(secs <= maxDelay.Seconds()) {
				return fail(fmt.Sprintf("history[%d].time", i), fmt.Errorf("the modelled duration of %g s is over 100 years; check the pace parameters", secs))
			}
		}
		if fill && !m.Time.IsZero() {
			clock, prev = m.Time, m.Time
			info.Kept++
			continue
		}
		clock = clock.Add(seconds(secs))
		out := start
		if i >= open {
			out = s.round(clock)
		}
		if out.Before(prev) {
			out = prev
		}
		if fill && !next[i].IsZero() && out.After(next[i]) {
			out, clock = next[i], next[i]
		}
		m.Time, prev = out, out
		info.Filled++
	}

	var deltas [conversation.NumElapse]float64
	for k := range deltas {
		deltas[k] = gaps[k].quantile(uniform(&pcg))
		if !(deltas[k] <= maxDelay.Seconds()) {
			return fail(fmt.Sprintf("history[%d].time[%d]", last, k), fmt.Errorf("the final gap of %g s is over 100 years; check the gap parameters", deltas[k]))
		}
	}
	t.History[last].Time = time.Time{}
	if fill && len(t.FinalTimes) == conversation.NumElapse {
		info.Kept++
		return info, nil
	}
	base := prev
	if last == 0 {
		base = start
	}
	t.FinalTimes = make([]time.Time, conversation.NumElapse)
	for k, d := range deltas {
		ft := s.round(base.Add(seconds(d)))
		if ft.Before(base) {
			ft = base
		}
		t.FinalTimes[k] = ft
	}
	info.Filled++
	return info, nil
}

// keptTimes checks the times a record has, for fill mode, and returns for
// each message before the final one the earliest kept time after it (zero
// when there is none).
func keptTimes(t *conversation.Trajectory) ([]time.Time, error) {
	last := len(t.History) - 1
	fin := &t.History[last]
	if !fin.Time.IsZero() && len(t.FinalTimes) == 0 {
		return nil, &FieldError{ID: t.ID, Field: fmt.Sprintf("history[%d].time", last),
			Err: fmt.Errorf("one time, but the final message needs %d, one per elapse level; fill mode keeps times and cannot make this one a list (use replace mode)", conversation.NumElapse)}
	}
	var prev time.Time
	prevField := ""
	for i := 0; i < last; i++ {
		tm := t.History[i].Time
		if tm.IsZero() {
			continue
		}
		if tm.Before(prev) {
			return nil, &FieldError{ID: t.ID, Field: fmt.Sprintf("history[%d].time", i),
				Err: fmt.Errorf("%s is earlier than %s (%s); fill mode keeps both", conversation.FormatTime(tm), prevField, conversation.FormatTime(prev))}
		}
		prev, prevField = tm, fmt.Sprintf("history[%d].time", i)
	}
	var after time.Time
	for k, ft := range t.FinalTimes {
		if ft.Before(prev) {
			return nil, &FieldError{ID: t.ID, Field: fmt.Sprintf("history[%d].time[%d]", last, k),
				Err: fmt.Errorf("%s is earlier than %s (%s); fill mode keeps both", conversation.FormatTime(ft), prevField, conversation.FormatTime(prev))}
		}
		if after.IsZero() || ft.Before(after) {
			after = ft
		}
	}
	next := make([]time.Time, last)
	for i := last - 1; i >= 0; i-- {
		next[i] = after
		if tm := t.History[i].Time; !tm.IsZero() {
			after = tm
		}
	}
	return next, nil
}

// duration is the modelled, jittered time in seconds that message i takes.
func (s *Stamper) duration(t *conversation.Trajectory, i int, read, write, gen, u, uc float64) float64 {
	m := &t.History[i]
	var d, sigma float64
	switch m.Role {
	case conversation.RoleUser:
		d = float64(countWords(m.Text())) / write * 60
		if i > 0 && t.History[i-1].Role == conversation.RoleAssistant {
			d += float64(countWords(t.History[i-1].Text())) / read * 60
		}
		sigma = s.opt.Jitter.User
	case conversation.RoleAssistant:
		words := countWords(m.Text())
		for _, tc := range m.ToolCalls {
			words += 1 + countWords(string(tc.Function.Arguments))
		}
		d = float64(words) / gen
		sigma = s.opt.Jitter.Assistant
	case conversation.RoleTool:
		d, sigma = s.opt.ToolSeconds, s.opt.Jitter.Tool
	default:
		return 0
	}
	if sigma == 0 {
		return d
	}
	return TruncatedNormal{Mu: d, Sigma: sigma, Min: 0, Max: math.Inf(1)}.quantile(u, uc)
}

func (s *Stamper) round(t time.Time) time.Time {
	if s.opt.Resolution > 0 {
		return t.Round(s.opt.Resolution)
	}
	return t
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// sensitivity picks the trajectory's sensitivity and says where it came from.
func (s *Stamper) sensitivity(t *conversation.Trajectory) (string, string, error) {
	if t.Sensitivity != "" {
		v, ok := conversation.NormalizeSensitivity(t.Sensitivity)
		if !ok {
			return "", "", fmt.Errorf("%q is not low, medium or high", t.Sensitivity)
		}
		return v, FromRecord, nil
	}
	known := ""
	if c := s.opt.Catalog; c != nil {
		key := t.ID
		if t.Scenario != "" {
			key = t.Scenario
		}
		sc, ok := c.ByName(key)
		if !ok {
			sc, _ = c.Resolve(key)
		}
		if sc != nil {
			return sc.Sensitivity, FromCatalog, nil
		}
		known = fmt.Sprintf(", the scenario catalog does not know %q", scenario.AliasOf(key))
	}
	if s.opt.Sensitivity != "" {
		return s.opt.Sensitivity, FromOption, nil
	}
	return "", "", fmt.Errorf("missing: the record has none%s, and no default sensitivity was given", known)
}

// seedStream seeds pcg from the seed and the id alone. Its two words are
// FNV-1a (64 bits) over the seed's 8 little-endian bytes, a byte 0 or 1,
// and the id, each mixed by SplitMix64's finaliser so that ids differing in
// one byte get unrelated streams. Changing this changes every output.
func seedStream(pcg *rand.PCG, seed uint64, id string) {
	pcg.Seed(mix64(streamHash(seed, 0, id)), mix64(streamHash(seed, 1, id)))
}

func streamHash(seed uint64, domain byte, id string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h = (h ^ (seed >> (8 * i) & 0xff)) * prime
	}
	h = (h ^ uint64(domain)) * prime
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	return h
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// countWords counts runs of non-space characters.
func countWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		space, size := false, 1
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			in = false
		} else if !in {
			in = true
			n++
		}
		i += size
	}
	return n
}
