// Package rewards holds the reward functions that GRPO trainers call through
// the verifier service, keyed by the data_source of each rollout: the
// Timely-RL reward for time-budgeted tasks, the TicToc tool-call decision
// reward, and task scorers such as Time Puzzles.
//
// Every reward is a *Reward in the explicit list All. A reward declares the
// numeric detail keys it reports next to the score, and reports exactly those
// keys for every item, scored or failed, so that trainers that log details
// (VeRL's reward managers, OpenRLHF's extra_logs) see a fixed schema.
//
// Adding a reward is one file defining a *Reward and one line in All; the
// shared tests in rewards_test.go run every entry of All through the checks
// every reward must pass (finite scores, fixed keys, no panic on any input).
package rewards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Item is one rollout to score, in the shape VeRL's compute_score receives:
// the data source naming the reward, the model's response text, the
// reference answer (whose shape depends on the data source), and the row's
// extra_info.
type Item struct {
	DataSource  string          `json:"data_source"`
	SolutionStr string          `json:"solution_str"`
	GroundTruth json.RawMessage `json:"ground_truth"`
	ExtraInfo   ExtraInfo       `json:"extra_info"`
	// Group and GroupSize name the group of a reward scored group-wise
	// (GroupRewards): the completions of one prompt in one step share the
	// key, and the group has GroupSize of them. Other rewards ignore them.
	Group     string `json:"group"`
	GroupSize int    `json:"group_size"`
}

// ExtraInfo holds the fields of a row's extra_info that rewards read. Other
// fields (VeRL adds index, split, tools_kwargs and more) are ignored.
type ExtraInfo struct {
	// TimeLimitS is the budget T_max in seconds; nil when the task has none.
	TimeLimitS *float64 `json:"time_limit_s"`
	// Timer is a timer token issued by the service (POST /v1/timers); when
	// set, the measured time comes from it.
	Timer TimerToken `json:"timer"`
	// ElapsedS is a time measured by the caller, used when Timer is empty.
	ElapsedS *float64 `json:"elapsed_s"`
	// Score and MaxScore are a game's achieved and maximum score.
	Score    *float64 `json:"score"`
	MaxScore *float64 `json:"max_score"`
	// Accuracy is an ML task's test-set accuracy in [0, 1].
	Accuracy *float64 `json:"accuracy"`
	// ResponseTokens, ThinkTokens and AnswerTokens are the lengths in
	// tokens of the response, of its thinking (before the closing think
	// tag) and of its answer (after it), counted by the trainer from the
	// ids it generated. Whole numbers; the length rewards check them.
	ResponseTokens *float64 `json:"response_tokens"`
	ThinkTokens    *float64 `json:"think_tokens"`
	AnswerTokens   *float64 `json:"answer_tokens"`
	// TokenBudget is the length rewards' budget: n_gold of LCPO, L of
	// ThinkPrune. ThinkBudget and AnswerBudget are Elastic Reasoning's t
	// and s.
	TokenBudget  *float64 `json:"token_budget"`
	ThinkBudget  *float64 `json:"think_budget"`
	AnswerBudget *float64 `json:"answer_budget"`
	// AnswerCheck names the answer checker a length reward takes its
	// correctness from (AnswerChecks); "" is the plain ground-truth check.
	AnswerCheck string `json:"answer_check"`
	// Anytime is the anytime reward's answers at each budget, a JSON list
	// of {"budget", "summary"} objects, read by that reward.
	Anytime json.RawMessage `json:"anytime"`
}

// TimerToken is extra_info.timer: a timer token (a JSON string). A JSON
// object is accepted and names no timer: rows built by synth budget carry
// the timer's settings there ({speed_factor, jitter}) until the
// rollout's token replaces them, and a row scored without one must still
// score, with its time from elapsed_s.
type TimerToken string

// UnmarshalJSON accepts a string, an object (no timer) or null.
func (t *TimerToken) UnmarshalJSON(b []byte) error {
	b = trimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fieldErrorf("extra_info.timer", "not a valid string: %v", err)
		}
		*t = TimerToken(s)
		return nil
	case b[0] == '{':
		*t = ""
		return nil
	}
	return fieldErrorf("extra_info.timer", "want a timer token (a string) or the timer settings (an object)")
}

// Result is the outcome of scoring one item. Details is parallel to the
// reward's Keys. Err is set when the item could not be scored; Score is then
// the configured fallback and every detail is zero.
type Result struct {
	Score   float64
	Details []float64
	Err     error
}

// Reward is one reward function, registered in All under its data source.
type Reward struct {
	// DataSource is the data_source value that selects this reward.
	DataSource string
	// Summary says in one line what the reward scores.
	Summary string
	// GroundTruth describes the expected ground_truth, for the registry listing.
	GroundTruth string
	// Keys are the detail keys reported next to "score", in order.
	Keys []string
	// score fills details (len(Keys), zeroed) and returns the score; nil
	// for a reward scored group-wise.
	score func(ctx context.Context, s *Scorer, it *Item, details []float64) (float64, error)
	// group, for a reward scored group-wise, fills the details of every
	// member of one whole group and returns their scores; a lone item is
	// a group of one.
	group func(ctx context.Context, s *Scorer, members []*Item, details [][]float64) ([]float64, error)
}

// scoreItem scores one item: a group-wise reward scores it as a group of
// one, and refuses it as a member of a larger group, which must be scored
// whole (Scorer.ScoreGroup).
func (r *Reward) scoreItem(ctx context.Context, s *Scorer, it *Item, details []float64) (float64, error) {
	if r.group == nil {
		return r.score(ctx, s, it, details)
	}
	if it.GroupSize > 1 {
		return 0, fieldErrorf("group_size", "%d: %s scores the completions of one prompt together; send the group's members together (one POST /v1/score/batch, or one file to timeaware score)", it.GroupSize, r.DataSource)
	}
	scores, err := r.group(ctx, s, []*Item{it}, [][]float64{details})
	if err != nil {
		return 0, err
	}
	return scores[0], nil
}

// KeyIndex is the index of a detail key among Keys (and a Result's
// Details), or -1 when the reward does not report it.
func (r *Reward) KeyIndex(key string) int { return slices.Index(r.Keys, key) }

// Grouped reports whether the reward scores the completions of one prompt
// together (Scorer.ScoreGroup), as a GRPO trainer forms its groups.
func (r *Reward) Grouped() bool { return r.group != nil }

// All lists every reward, in the order the registry shows them.
var All = []*Reward{
	TimelyGeneral,
	TimelyGame,
	TimelyML,
	TicTocDecision,
	TimePuzzles,
	Traveler,
	Negotiation,
	LCPOExact,
	LCPOMax,
	ThinkPrune,
	DAPOOverlong,
	CosineScaled,
	Elastic,
	Anytime,
	Kimi,
	ShorterBetter,
	ALP,
	TimeQA,
	TempReason,
	TRAM,
	TestOfTime,
}

// Lookup returns the reward registered for a data source.
func Lookup(dataSource string) (*Reward, bool) {
	for _, r := range All {
		if r.DataSource == dataSource {
			return r, true
		}
	}
	return nil, false
}

// TimeSource reads the elapsed time of a rollout from a timer token. The
// service passes its timer store; offline scoring passes one built from the
// same secret.
type TimeSource interface {
	// Elapsed returns the measured seconds of the timer and the time limit
	// it was created with (0 when none).
	Elapsed(ctx context.Context, token string) (elapsedS, limitS float64, err error)
}

// Errors a caller may want to tell apart (the service maps them to codes).
var (
	// ErrUnknownSource means the item's data_source has no reward.
	ErrUnknownSource = errors.New("unknown data_source")
	// ErrInvalidItem means a field of the item is missing or malformed.
	ErrInvalidItem = errors.New("invalid item")
)

// FieldError names the item field that made scoring fail.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap lets errors.Is(err, ErrInvalidItem) match every field error.
func (e *FieldError) Unwrap() []error { return []error{e.Err, ErrInvalidItem} }

func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// objectGroundTruth returns the JSON object of a ground truth given as an
// object or as a JSON string holding one (some trainers stringify ground
// truths); want, what the reward expects, ends its errors.
func objectGroundTruth(raw json.RawMessage, want string) ([]byte, error) {
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return nil, fieldErrorf("ground_truth", "missing: %s", want)
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fieldErrorf("ground_truth", "not a valid JSON string: %w", err)
		}
		b = trimSpace([]byte(s))
		if len(b) == 0 || b[0] != '{' {
			return nil, fieldErrorf("ground_truth", "%s is not a JSON object: %s", quoteForError(s), want)
		}
	}
	if b[0] != '{' {
		return nil, fieldErrorf("ground_truth", "%s is not an object: %s", clipForError(string(b)), want)
	}
	return b, nil
}

// decodeError is the FieldError of b, the item's value at field, that did
// not decode: it names the part of the value at fault by its path and says
// what was wanted there in JSON's words. want, when given, says what the
// value itself should be, for a value of the wrong kind.
func decodeError(field string, b []byte, err error, want ...string) error {
	path, reason := jsonscan.ExplainField(field, b, err)
	if path == field && len(want) > 0 {
		reason = jsonscan.Wanting(want[0], reason)
	}
	return &FieldError{Field: path, Err: reason}
}

// Scorer scores items with one configuration. It is safe for concurrent use.
type Scorer struct {
	cfg    Config
	timers TimeSource
	timely timelyParams
	tictoc *toolCallDetector
}

// NewScorer validates cfg and returns a Scorer. timers may be nil, in which
// case an item that names a timer fails with an error.
func NewScorer(cfg Config, timers TimeSource) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Scorer{cfg: cfg, timers: timers}
	s.timely = newTimelyParams(cfg.Timely)
	det, err := newToolCallDetector(cfg.TicToc.ToolCallPatterns)
	if err != nil {
		return nil, &ConfigError{Key: "tictoc.tool_call_patterns", Err: err}
	}
	s.tictoc = det
	return s, nil
}

// Config returns the configuration the scorer was built with.
func (s *Scorer) Config() Config { return s.cfg }

// Score scores one item. It never panics and never returns a non-finite
// score: a failing item gets the fallback score, zero details and Err.
func (s *Scorer) Score(ctx context.Context, it *Item) Result {
	r, ok := Lookup(it.DataSource)
	if !ok {
		return Result{Score: s.cfg.FallbackScore, Err: fmt.Errorf("data_source: %w %q", ErrUnknownSource, it.DataSource)}
	}
	return s.ScoreWith(ctx, r, it)
}

// ScoreWith scores an item with a given reward, whatever its data_source.
func (s *Scorer) ScoreWith(ctx context.Context, r *Reward, it *Item) (res Result) {
	details := make([]float64, len(r.Keys))
	defer func() {
		if p := recover(); p != nil {
			clear(details)
			res = Result{Score: s.cfg.FallbackScore, Details: details, Err: fmt.Errorf("rewards: %s: internal error: %v", r.DataSource, p)}
		}
	}()
	if err := ctx.Err(); err != nil {
		return Result{Score: s.cfg.FallbackScore, Details: details, Err: err}
	}
	it = s.withoutStops(it)
	score, err := r.scoreItem(ctx, s, it, details)
	if err == nil && !finite(score) {
		err = fmt.Errorf("rewards: %s: score is not finite", r.DataSource)
	}
	for _, d := range details {
		if err == nil && !finite(d) {
			err = fmt.Errorf("rewards: %s: a detail is not finite", r.DataSource)
		}
	}
	if err != nil {
		clear(details)
		return Result{Score: s.cfg.FallbackScore, Details: details, Err: err}
	}
	return Result{Score: score, Details: details}
}

// withoutStops is it, or a copy of it whose solution_str lost the stop
// strings it ends in (trimStops).
func (s *Scorer) withoutStops(it *Item) *Item {
	cut := trimStops(it.SolutionStr, s.cfg.StopStrings)
	if len(cut) == len(it.SolutionStr) {
		return it
	}
	trimmed := *it
	trimmed.SolutionStr = cut
	return &trimmed
}

// trimStops removes from the end of s every trailing run of the stop
// strings and the white space around them; s comes back unchanged when it
// does not end in a stop string.
func trimStops(s string, stops []string) string {
	out := s
	for {
		t := strings.TrimRightFunc(out, unicode.IsSpace)
		cut := false
		for _, st := range stops {
			if st != "" && strings.HasSuffix(t, st) {
				out, cut = t[:len(t)-len(st)], true
				break
			}
		}
		if !cut {
			if len(out) == len(s) {
				return s
			}
			return strings.TrimRightFunc(out, unicode.IsSpace)
		}
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
