package budget

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth"
	"github.com/timeaware/timeaware/timers"
)

// Prompts are the texts of a budgeted prompt. They are the project's
// own wording; the command layer replaces them from config.
type Prompts struct {
	// System is the system message of every row.
	System string
	// BudgetSentence ends the user message of a row with a time limit;
	// "{seconds}" is replaced by the limit with two decimals, the value
	// extra_info.time_limit_s holds.
	BudgetSentence string
	// NoLimitSentence ends the user message of a row without a limit; empty
	// leaves the question alone.
	NoLimitSentence string
}

// SecondsPlaceholder is the placeholder of Prompts.BudgetSentence.
const SecondsPlaceholder = "{seconds}"

// DefaultPrompts returns the built-in texts for a family. They ask for
// the answer inside <answer></answer>, the tag the timely/general reward
// reads by default.
func DefaultPrompts(f Family) Prompts {
	p := Prompts{
		BudgetSentence:  "Your time budget for this task is {seconds} seconds.",
		NoLimitSentence: "There is no time limit for this task.",
	}
	switch f {
	case FamilyGame:
		p.System = "You are playing a text adventure through tools, and the clock is running: every action you take and every moment you spend thinking count against the time you have. " +
			"Call get_duration to learn how many seconds have gone by. Earn as many points as you can, and stop playing before your time is up."
	case FamilyML:
		p.System = "You are solving a machine-learning task by writing and running code, and the clock is running: training and evaluating take time, and so does your thinking. " +
			"Call get_duration to learn how many seconds have gone by. Submit the best solution you can finish before your time is up."
	default:
		p.System = "You are working against the clock. The get_duration tool tells you how many seconds have gone by since the task began; check it as often as you need to. " +
			"Size your reasoning to the time you are given: a reply that arrives after the deadline earns nothing, however good it is. " +
			"Give your final answer inside <answer></answer>, for example <answer>42</answer>."
	}
	return p
}

// Options configures the rows built from a task file. DefaultOptions
// gives the documented defaults; Validate names the first bad field.
type Options struct {
	Family Family
	// Seed, with each task's id, seeds the task's random stream, so a task
	// gets the same rows whatever its position in the input or the shard
	// it falls in.
	Seed uint64
	// Multipliers scale a task's baseline time into its budget (the Timely Machine paper
	// App. A.1.5: n × x).
	Multipliers []float64
	// EveryMultiplier gives each task one row per multiplier (plus, with
	// probability NoLimitFraction, one row without a limit) instead of one
	// row with a multiplier drawn uniformly.
	EveryMultiplier bool
	// NoLimitFraction is the probability that a task's row has no time
	// limit (with EveryMultiplier: that it gets an extra row without one).
	NoLimitFraction float64
	// BaselineLogMu and BaselineLogSigma are the log-space parameters of the
	// log-normal baseline drawn for general tasks without baseline_seconds.
	BaselineLogMu, BaselineLogSigma float64
	// GameSteps × GameStepLatencyS is a game task's baseline when the task
	// sets neither baseline_seconds nor its own steps and latency.
	GameSteps        int
	GameStepLatencyS float64
	// MLRounds × MLRoundLatencyS is an ML task's baseline likewise.
	MLRounds        int
	MLRoundLatencyS float64
	// SpeedFactors is the set the timer's speed factor α is drawn from,
	// uniformly. SpeedFactorRange, when its upper end is positive, is used
	// instead: α is drawn log-uniformly from [min, max] and rounded to two
	// decimals.
	SpeedFactors     []float64
	SpeedFactorRange [2]float64
	// Jitter is the timer's relative noise on the time shown to the model
	// (0 to 1).
	Jitter float64
	// TTLS is the timer's lifetime in seconds; a row whose limit is more than
	// half of it gets twice its limit instead.
	TTLS float64
	// Split is extra_info.split for tasks that do not name one.
	Split   string
	Prompts Prompts
	// Select, when set, keeps only the tasks whose id it accepts (a shard).
	Select func(id string) bool
}

// DefaultOptions returns the defaults for a family: multipliers
// {0.75, 1, 2, 3}, 10 % of rows without a limit, a log-normal baseline with
// median e^3.4 ≈ 30 s, 30 game steps of 2 s, 4 ML rounds of 30 s, speed
// factors {0.5, 1, 2}, 5 % jitter, a one-hour timer, split "train".
func DefaultOptions(f Family) Options {
	return Options{
		Family:           f,
		Multipliers:      []float64{0.75, 1, 2, 3},
		NoLimitFraction:  0.1,
		BaselineLogMu:    3.4,
		BaselineLogSigma: 0.5,
		GameSteps:        30,
		GameStepLatencyS: 2,
		MLRounds:         4,
		MLRoundLatencyS:  30,
		SpeedFactors:     []float64{0.5, 1, 2},
		Jitter:           0.05,
		TTLS:             3600,
		Split:            "train",
		Prompts:          DefaultPrompts(f),
	}
}

// Timer limits of the verifier service (timers.Store.Create): a speed
// factor in (0, 1e6], jitter in [0, 1], a TTL of at most 10^7 s.
const (
	maxSpeedFactor = 1e6
	maxTTLS        = 1e7
)

// Validate reports the first invalid option as an *synth.OptionError.
func (o *Options) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &synth.OptionError{Family: "budget", Key: key, Err: fmt.Errorf(format, args...)}
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	if _, err := ParseFamily(string(o.Family)); err != nil {
		return bad("family", "%v", err)
	}
	if len(o.Multipliers) == 0 {
		return bad("multipliers", "empty: give at least one")
	}
	for i, m := range o.Multipliers {
		if !(m > 0 && m <= 1e3) {
			return bad("multipliers", "entry %d (%v) is not in (0, 1000]", i+1, m)
		}
	}
	if !(o.NoLimitFraction >= 0 && o.NoLimitFraction <= 1) {
		return bad("no_limit_fraction", "%v is not in [0, 1]", o.NoLimitFraction)
	}
	if !finite(o.BaselineLogMu) || math.Abs(o.BaselineLogMu) > 15 {
		return bad("baseline_log_mu", "%v is not in [-15, 15] (log seconds)", o.BaselineLogMu)
	}
	if !(o.BaselineLogSigma >= 0 && o.BaselineLogSigma <= 3) {
		return bad("baseline_log_sigma", "%v is not in [0, 3]", o.BaselineLogSigma)
	}
	if o.GameSteps < 1 || o.GameSteps > maxTaskCount {
		return bad("game_steps", "%d is not from 1 to %d", o.GameSteps, maxTaskCount)
	}
	if !(o.GameStepLatencyS > 0 && o.GameStepLatencyS <= maxTaskSeconds) {
		return bad("game_step_latency_s", "%v is not a positive number of seconds", o.GameStepLatencyS)
	}
	if o.MLRounds < 1 || o.MLRounds > maxTaskCount {
		return bad("ml_rounds", "%d is not from 1 to %d", o.MLRounds, maxTaskCount)
	}
	if !(o.MLRoundLatencyS > 0 && o.MLRoundLatencyS <= maxTaskSeconds) {
		return bad("ml_round_latency_s", "%v is not a positive number of seconds", o.MLRoundLatencyS)
	}
	if lo, hi := o.SpeedFactorRange[0], o.SpeedFactorRange[1]; hi > 0 || lo != 0 {
		if !(lo >= 0.01 && lo <= hi && hi <= maxSpeedFactor) {
			return bad("speed_factor_range", "[%v, %v] is not a range with 0.01 <= min <= max <= %g", lo, hi, float64(maxSpeedFactor))
		}
	} else {
		if len(o.SpeedFactors) == 0 {
			return bad("speed_factors", "empty, and no speed_factor_range either")
		}
		for i, a := range o.SpeedFactors {
			if !(a > 0 && a <= maxSpeedFactor) {
				return bad("speed_factors", "entry %d (%v) is not in (0, %g]", i+1, a, float64(maxSpeedFactor))
			}
		}
	}
	if !(o.Jitter >= 0 && o.Jitter <= 1) {
		return bad("jitter", "%v is not in [0, 1]", o.Jitter)
	}
	if !(o.TTLS >= 1 && o.TTLS <= maxTTLS) {
		return bad("ttl_s", "%v is not from 1 to %g seconds", o.TTLS, float64(maxTTLS))
	}
	if strings.TrimSpace(o.Split) == "" {
		return bad("split", "empty")
	}
	if strings.TrimSpace(o.Prompts.System) == "" {
		return bad("system_prompt", "empty: every row has a system message")
	}
	if n := strings.Count(o.Prompts.BudgetSentence, SecondsPlaceholder); n != 1 {
		return bad("budget_sentence", "%q must contain %s exactly once (it has %d)", o.Prompts.BudgetSentence, SecondsPlaceholder, n)
	}
	return nil
}

// Baseline sources, as Row.BaselineSource reports them.
const (
	BaselineFromTask   = "task"   // the task's baseline_seconds
	BaselineDrawn      = "drawn"  // log-normal draw (general)
	BaselineFromSteps  = "steps"  // steps × per-step latency (game)
	BaselineFromRounds = "rounds" // rounds × per-round latency (ML)
)

// Row is one RL prompt with its budget and timer settings: what
// RecordBuilder writes as a VeRL row.
type Row struct {
	DataSource string
	System     string
	// User is the question followed by the budget sentence.
	User    string
	Ability string
	// GroundTruth is the reference answer; nil for game and ML tasks
	// without one.
	GroundTruth *string
	Split       string
	// Index is the task's position in the input (Task.Record).
	Index  int64
	TaskID string
	// Variant numbers the rows of one task from 0.
	Variant int
	// Multiplier is the budget's multiple of the baseline; 0 without a limit.
	Multiplier     float64
	BaselineS      float64
	BaselineSource string
	// Settings are the row's timer: TimeLimitS is the budget, rounded to
	// 0.01 s as the prompt shows it (0 when the row has no limit).
	timers.Settings
}

// HasLimit reports whether the row has a time limit.
func (r *Row) HasLimit() bool { return r.TimeLimitS > 0 }

// RequestID is the custom_id of the row's teacher request:
// "<task id>#<variant>". A trace that answers the request carries it back.
func (r *Row) RequestID() string { return r.TaskID + "#" + strconv.Itoa(r.Variant) }

// Generator turns tasks into rows. It is safe for concurrent use.
type Generator struct {
	opt   Options
	speed func(r *rand.Rand) float64
}

// NewGenerator validates the options and returns a Generator.
func NewGenerator(opt Options) (*Generator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt.Multipliers = append([]float64(nil), opt.Multipliers...)
	opt.SpeedFactors = append([]float64(nil), opt.SpeedFactors...)
	b := &Generator{opt: opt}
	if lo, hi := opt.SpeedFactorRange[0], opt.SpeedFactorRange[1]; hi > 0 {
		llo, lhi := math.Log(lo), math.Log(hi)
		b.speed = func(r *rand.Rand) float64 {
			a := math.Round(math.Exp(llo+r.Float64()*(lhi-llo))*100) / 100
			return min(max(a, lo), hi)
		}
	} else {
		set := opt.SpeedFactors
		b.speed = func(r *rand.Rand) float64 { return set[r.IntN(len(set))] }
	}
	return b, nil
}

// taskRand is the random stream of one task: PCG seeded from SHA-256 of a
// domain tag, the seed and the id. It depends on nothing else, so order,
// sharding and the other tasks of the input do not change a task's draws.
func taskRand(seed uint64, id string) *rand.Rand {
	return domainRand("timeaware/synth/budget\x00", seed, id)
}

// domainRand is PCG seeded from SHA-256 of tag, seed and id: one stream per
// task and use, each use with a tag of its own.
func domainRand(tag string, seed uint64, id string) *rand.Rand {
	buf := make([]byte, 0, len(tag)+8+len(id))
	buf = append(buf, tag...)
	buf = binary.LittleEndian.AppendUint64(buf, seed)
	buf = append(buf, id...)
	sum := sha256.Sum256(buf)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

// Rows appends the task's rows to dst. The draws of a task, in order: the
// no-limit uniform, the multiplier index (one row per task only), the
// baseline's standard normal, then one speed factor per row. Every draw is
// made whether or not it is used, so that setting a task's baseline does not
// shift its other draws.
func (b *Generator) Rows(t *Task, dst []Row) ([]Row, error) {
	o := &b.opt
	r := taskRand(o.Seed, t.ID)
	noLimit := r.Float64() < o.NoLimitFraction
	pick := 0
	if !o.EveryMultiplier {
		pick = r.IntN(len(o.Multipliers))
	}
	z := r.NormFloat64()

	base := Row{
		DataSource:  o.Family.DataSource(),
		System:      o.Prompts.System,
		Ability:     string(o.Family),
		GroundTruth: t.Answer,
		Split:       o.Split,
		Index:       int64(t.Record),
		TaskID:      t.ID,
		Settings:    timers.Settings{Jitter: o.Jitter},
	}
	if t.Ability != "" {
		base.Ability = t.Ability
	}
	if t.Split != "" {
		base.Split = t.Split
	}
	switch {
	case t.BaselineSeconds > 0:
		base.BaselineS, base.BaselineSource = t.BaselineSeconds, BaselineFromTask
	case o.Family == FamilyGame:
		steps, tau := o.GameSteps, o.GameStepLatencyS
		if t.Steps > 0 {
			steps = t.Steps
		}
		if t.StepLatencyS > 0 {
			tau = t.StepLatencyS
		}
		base.BaselineS, base.BaselineSource = float64(steps)*tau, BaselineFromSteps
	case o.Family == FamilyML:
		rounds, tau := o.MLRounds, o.MLRoundLatencyS
		if t.Rounds > 0 {
			rounds = t.Rounds
		}
		if t.RoundLatencyS > 0 {
			tau = t.RoundLatencyS
		}
		base.BaselineS, base.BaselineSource = float64(rounds)*tau, BaselineFromRounds
	default:
		base.BaselineS, base.BaselineSource = math.Exp(o.BaselineLogMu+o.BaselineLogSigma*z), BaselineDrawn
	}

	question := strings.TrimRight(t.Question, " \t\r\n")
	emit := func(variant int, mult float64) error {
		row := base
		row.Variant = variant
		row.SpeedFactor = b.speed(r)
		row.TTLS = o.TTLS
		if mult == 0 {
			row.User = question
			if o.Prompts.NoLimitSentence != "" {
				row.User += "\n\n" + o.Prompts.NoLimitSentence
			}
		} else {
			limit := max(math.Round(mult*row.BaselineS*100)/100, 0.01)
			if limit > maxTaskSeconds {
				field := ""
				if row.BaselineSource == BaselineFromTask {
					field = "baseline_seconds"
				}
				return &LineError{ID: t.ID, Field: field, Err: fmt.Errorf("budget %g s (%g × a %s baseline of %g s) is beyond %g s", limit, mult, row.BaselineSource, row.BaselineS, float64(maxTaskSeconds))}
			}
			row.Multiplier, row.TimeLimitS = mult, limit
			row.TTLS = max(o.TTLS, math.Ceil(2*limit))
			secs := strconv.FormatFloat(limit, 'f', 2, 64)
			row.User = question + "\n\n" + strings.Replace(o.Prompts.BudgetSentence, SecondsPlaceholder, secs, 1)
		}
		dst = append(dst, row)
		return nil
	}
	if !o.EveryMultiplier {
		mult := o.Multipliers[pick]
		if noLimit {
			mult = 0
		}
		return dst, emit(0, mult)
	}
	for i, m := range o.Multipliers {
		if err := emit(i, m); err != nil {
			return dst, err
		}
	}
	if noLimit {
		return dst, emit(len(o.Multipliers), 0)
	}
	return dst, nil
}

// Summary counts what a build read and wrote.
type Summary struct {
	Family     Family `json:"family"`
	DataSource string `json:"data_source"`
	// Tasks is the number of tasks read; Skipped of those, the ones another
	// shard builds.
	Tasks   int `json:"tasks"`
	Skipped int `json:"skipped_other_shards"`
	Rows    int `json:"rows"`
	// WithLimit and NoLimit split the rows by whether they have a budget.
	WithLimit int `json:"with_limit"`
	NoLimit   int `json:"no_limit"`
	// ByMultiplier counts rows with a limit by multiplier ("0.75", "2").
	ByMultiplier map[string]int `json:"by_multiplier"`
	// BaselineSource counts tasks by where their baseline came from.
	BaselineSource map[string]int `json:"baseline_source"`
	// BySpeedFactor counts rows by speed factor (two decimals).
	BySpeedFactor map[string]int `json:"by_speed_factor"`
	// LimitMinS, LimitMeanS and LimitMaxS describe the budgets (0 when no
	// row has one).
	LimitMinS  float64 `json:"limit_min_s"`
	LimitMeanS float64 `json:"limit_mean_s"`
	LimitMaxS  float64 `json:"limit_max_s"`
}

func newSummary(f Family) *Summary {
	return &Summary{Family: f, DataSource: f.DataSource(), ByMultiplier: map[string]int{}, BaselineSource: map[string]int{}, BySpeedFactor: map[string]int{}}
}

func (s *Summary) add(r *Row) {
	s.Rows++
	s.BySpeedFactor[strconv.FormatFloat(r.SpeedFactor, 'f', 2, 64)]++
	if !r.HasLimit() {
		s.NoLimit++
		return
	}
	s.ByMultiplier[strconv.FormatFloat(r.Multiplier, 'f', -1, 64)]++
	if s.WithLimit == 0 || r.TimeLimitS < s.LimitMinS {
		s.LimitMinS = r.TimeLimitS
	}
	s.LimitMaxS = max(s.LimitMaxS, r.TimeLimitS)
	s.WithLimit++
	s.LimitMeanS += (r.TimeLimitS - s.LimitMeanS) / float64(s.WithLimit)
}

// Build reads a JSONL task file from r (name is used in errors) and
// hands every row to emit, task by task in input order. It stops at the
// first bad line with a *LineError, at the first error from emit, or when
// ctx is done.
func Build(ctx context.Context, r io.Reader, name string, opt Options, emit func(*Row) error) (*Summary, error) {
	b, err := NewGenerator(opt)
	if err != nil {
		return nil, err
	}
	sum := newSummary(opt.Family)
	gen := func(t *Task, dst []Row) ([]Row, error) {
		rows, err := b.Rows(t, dst)
		if err == nil {
			sum.BaselineSource[rows[0].BaselineSource]++
		}
		return rows, err
	}
	err = eachRow(ctx, NewTaskReader(r, name, opt.Family), opt.Select, &sum.Tasks, &sum.Skipped, gen,
		func(row *Row) error { sum.add(row); return emit(row) })
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// eachRow reads tasks from tr in input order, counting them in *tasks and
// the ones sel leaves out in *skipped, makes every selected task's rows
// with gen and hands them to emit one by one. It stops at the first bad
// line (a *LineError, or gen's error, which the task's line annotates), at
// the first error of emit, or when ctx is done (checked every 1024 tasks).
// A file without a task is refused (dataset.ErrNoRecords).
func eachRow[R any](ctx context.Context, tr *TaskReader, sel func(string) bool, tasks, skipped *int,
	gen func(t *Task, dst []R) ([]R, error), emit func(*R) error) error {
	var rows []R
	for {
		if *tasks%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		t, err := tr.Next()
		if errors.Is(err, io.EOF) && *tasks == 0 {
			return &FileError{Role: RoleTasks, Path: tr.lines.name, Err: dataset.ErrNoRecords}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		*tasks++
		if sel != nil && !sel(t.ID) {
			*skipped++
			continue
		}
		if rows, err = gen(t, rows[:0]); err != nil {
			return tr.lines.annotate(err)
		}
		for i := range rows {
			if err := emit(&rows[i]); err != nil {
				return err
			}
		}
	}
}
