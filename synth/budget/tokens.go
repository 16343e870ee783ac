package budget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// Unit is what a budget is measured in.
type Unit string

// The budget units: seconds on a rollout timer (the Timely rewards, [Write])
// or tokens of the response (the length rewards, [WriteTokens]).
const (
	UnitSeconds Unit = "seconds"
	UnitTokens  Unit = "tokens"
)

// ParseUnit returns the unit with the given name.
func ParseUnit(s string) (Unit, error) {
	if s == string(UnitSeconds) || s == string(UnitTokens) {
		return Unit(s), nil
	}
	return "", fmt.Errorf("unit %q is not seconds or tokens", s)
}

// TokenReward is the data source of a row with a token budget: the length
// reward of package rewards that scores it.
type TokenReward string

// The length rewards a token-budgeted row can name. Each reads
// extra_info.token_budget (elastic: think_budget and answer_budget) and the
// token counts the trainer adds at scoring time.
const (
	// RewardLCPOExact is L1's LCPO-Exact: correctness less a penalty on the
	// distance between the response's length and the budget.
	RewardLCPOExact TokenReward = "length/lcpo_exact"
	// RewardLCPOMax is L1's LCPO-Max: correctness scaled down as the
	// response's length passes the budget.
	RewardLCPOMax TokenReward = "length/lcpo_max"
	// RewardThinkPrune is ThinkPrune's: correctness when the response fits
	// the budget, else nothing.
	RewardThinkPrune TokenReward = "length/thinkprune"
	// RewardElastic is Elastic Reasoning's: correctness of the answer when
	// the thinking and the answer each fit their own budget.
	RewardElastic TokenReward = "length/elastic"
)

// TokenRewards lists the rewards a token-budgeted row can name, in the
// order they are documented.
var TokenRewards = []TokenReward{RewardLCPOExact, RewardLCPOMax, RewardThinkPrune, RewardElastic}

// rewardAnytime is the length reward that scores the summaries a rollout
// makes at several budgets; no prompt set can carry them.
const rewardAnytime = "length/anytime"

// ParseTokenReward returns the token reward with the given name. The
// anytime reward is refused with the reason: it scores summaries that the
// rollout writes at each of its budgets (extra_info.anytime), which a row
// made before the rollout cannot hold.
func ParseTokenReward(s string) (TokenReward, error) {
	for _, r := range TokenRewards {
		if string(r) == s {
			return r, nil
		}
	}
	if s == rewardAnytime {
		return "", fmt.Errorf("%s scores the summaries a rollout writes at each of its budgets (extra_info.anytime), which a prompt row cannot hold; choose %s", s, tokenRewardNames())
	}
	if against, ok := unstatedBudgets[s]; ok {
		return "", fmt.Errorf("%s measures a response against %s, which a prompt does not state: it scores any row with the trainer's token counts; choose %s to write budgeted prompts", s, against, tokenRewardNames())
	}
	return "", fmt.Errorf("reward %q is not one of %s", s, tokenRewardNames())
}

// unstatedBudgets are the length rewards whose measure no prompt states,
// with what they measure a response against.
var unstatedBudgets = map[string]string{
	rewards.DAPOOverlong.DataSource:  "the generation cap",
	rewards.CosineScaled.DataSource:  "the generation cap",
	rewards.Kimi.DataSource:          "the other completions of its group",
	rewards.ShorterBetter.DataSource: "the other completions of its group",
	rewards.ALP.DataSource:           "the solve rate of its group",
}

func tokenRewardNames() string {
	names := make([]string, len(TokenRewards))
	for i, r := range TokenRewards {
		names[i] = string(r)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Key is the reward's name without "length/": the key of its budget
// sentence under synth.budget.token_prompts.
func (r TokenReward) Key() string { return strings.TrimPrefix(string(r), "length/") }

// Placeholders of TokenPrompts.Sentence: the row's token budget, and for
// the elastic reward its thinking and answer budgets instead.
const (
	BudgetPlaceholder       = "{budget}"
	ThinkBudgetPlaceholder  = "{think_budget}"
	AnswerBudgetPlaceholder = "{answer_budget}"
)

// TokenPrompts are the texts of a token-budgeted prompt: the project's own
// wording, which the command layer replaces from config.
type TokenPrompts struct {
	// System is the system message of every row. It says how to give the
	// answer, which must be how the reward reads it.
	System string
	// Sentence ends the user message and states the budget. Every
	// BudgetPlaceholder in it becomes the row's token budget; for the
	// elastic reward every ThinkBudgetPlaceholder and
	// AnswerBudgetPlaceholder become the two budgets instead.
	Sentence string
}

// DefaultAnswerTag is the tag the length rewards read the answer from by
// default (rewards.length.answer_tag).
const DefaultAnswerTag = "answer"

// DefaultTokenPrompts returns the built-in texts for a reward. The system
// message asks for the answer where the length rewards' plain check reads
// it (rewards.length.answer_tag): inside <tag></tag>, or, for tag "", in
// \boxed{}. The sentence states the budget as the reward's paper
// states its target: a length to reason for (LCPO-Exact), a most to reason
// for (LCPO-Max), a limit on the whole reply (ThinkPrune), or a limit on the
// thinking and one on the answer after it (Elastic Reasoning).
func DefaultTokenPrompts(r TokenReward, tag string) TokenPrompts {
	p := TokenPrompts{System: `Work the problem through, then give your final answer as \boxed{}, for example \boxed{42}.`}
	if tag != "" {
		p.System = "Work the problem through, then give your final answer inside <" + tag + "></" + tag + ">, for example <" +
			tag + ">42</" + tag + ">."
	}
	switch r {
	case RewardLCPOExact:
		p.Sentence = "Spend {budget} tokens on your reasoning, as close to that count as you can, before you answer."
	case RewardThinkPrune:
		p.Sentence = "Keep your whole reply within {budget} tokens; a reply that runs longer earns nothing."
	case RewardElastic:
		p.Sentence = "Spend at most {think_budget} tokens on your thinking and at most {answer_budget} tokens on the answer that follows it."
	default:
		p.Sentence = "Spend at most {budget} tokens on your reasoning before you answer."
	}
	return p
}

// MaxTokenBudget bounds every token budget: ten million tokens is beyond any
// context window, so a larger value is a mistake.
const MaxTokenBudget = 10_000_000

// TokenOptions configures the token-budgeted rows built from a task file.
// DefaultTokenOptions gives the documented defaults; Validate names the
// first bad field by its config key under synth.budget.
type TokenOptions struct {
	// Reward is the rows' data source.
	Reward TokenReward
	// Family must be FamilyGeneral: the length rewards score an answer
	// against the task's reference answer, which game and ML tasks do not
	// have (their rewards read the environment's score).
	Family Family
	// Seed, with each task's id, seeds the task's budget draw, so a task
	// gets the same rows whatever its position in the input or its shard.
	Seed uint64
	// BudgetRange is the range a row's token budget is drawn from:
	// uniformly from the whole numbers min to max, both included. Budgets,
	// when it is not empty, is used instead: the budget is drawn from the
	// set, uniformly.
	BudgetRange [2]int
	Budgets     []int
	// EveryBudget gives each task one row per budget of Budgets instead of
	// one row with a drawn budget; it needs a set.
	EveryBudget bool
	// ThinkBudget and AnswerBudget are the elastic reward's t and s: every
	// elastic row has these two budgets (and token_budget t + s), and
	// Budgets, BudgetRange and EveryBudget are not used.
	ThinkBudget, AnswerBudget int
	// Split is extra_info.split for tasks that do not name one.
	Split   string
	Prompts TokenPrompts
	// Select, when set, keeps only the tasks whose id it accepts (a shard).
	Select func(id string) bool
}

// DefaultTokenOptions returns the defaults for a reward: general tasks,
// budgets drawn from 100 to 4000 tokens (the L1 paper's range of n_gold),
// elastic budgets of 1024 tokens each, split "train", the built-in
// prompts.
func DefaultTokenOptions(r TokenReward) TokenOptions {
	return TokenOptions{
		Reward:       r,
		Family:       FamilyGeneral,
		BudgetRange:  [2]int{100, 4000},
		ThinkBudget:  1024,
		AnswerBudget: 1024,
		Split:        "train",
		Prompts:      DefaultTokenPrompts(r, DefaultAnswerTag),
	}
}

// Validate reports the first invalid option as an *synth.OptionError
// whose key is the option's config key under synth.budget.
func (o *TokenOptions) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &synth.OptionError{Family: "budget", Key: key, Err: fmt.Errorf(format, args...)}
	}
	if _, err := ParseTokenReward(string(o.Reward)); err != nil {
		return bad("token_reward", "%v", err)
	}
	if o.Family != FamilyGeneral {
		return bad("family", "token budgets need tasks with a reference answer (general); %s tasks are scored by their environment, which has no length reward", o.Family)
	}
	inRange := func(n int) bool { return n >= 1 && n <= MaxTokenBudget }
	if o.Reward == RewardElastic {
		if !inRange(o.ThinkBudget) {
			return bad("elastic_think_budget", "%d is not a whole number of tokens from 1 to %d", o.ThinkBudget, MaxTokenBudget)
		}
		if !inRange(o.AnswerBudget) {
			return bad("elastic_answer_budget", "%d is not a whole number of tokens from 1 to %d", o.AnswerBudget, MaxTokenBudget)
		}
	} else if len(o.Budgets) > 0 {
		for i, n := range o.Budgets {
			if !inRange(n) {
				return bad("token_budgets", "entry %d (%d) is not a whole number of tokens from 1 to %d", i+1, n, MaxTokenBudget)
			}
		}
	} else {
		lo, hi := o.BudgetRange[0], o.BudgetRange[1]
		if lo == 0 && hi == 0 {
			return bad("token_budget_range", "no range, and no token_budgets either: give one of them")
		}
		if !inRange(lo) || !inRange(hi) || lo > hi {
			return bad("token_budget_range", "[%d, %d] is not a range of tokens with 1 <= min <= max <= %d", lo, hi, MaxTokenBudget)
		}
		if o.EveryBudget {
			return bad("every_token_budget", "needs a set of budgets (token_budgets), not a range (token_budget_range)")
		}
	}
	if strings.TrimSpace(o.Split) == "" {
		return bad("split", "empty")
	}
	if strings.TrimSpace(o.Prompts.System) == "" {
		return bad("token_system_prompt", "empty: every row has a system message")
	}
	return o.validateSentence(bad)
}

// validateSentence checks that the budget sentence states the reward's
// budgets, and no placeholder that the reward leaves unfilled.
func (o *TokenOptions) validateSentence(bad func(key, format string, args ...any) error) error {
	key := "token_prompts." + o.Reward.Key()
	s := o.Prompts.Sentence
	want, unused := []string{BudgetPlaceholder}, []string{ThinkBudgetPlaceholder, AnswerBudgetPlaceholder}
	if o.Reward == RewardElastic {
		want, unused = unused, want
	}
	for _, p := range want {
		if !strings.Contains(s, p) {
			return bad(key, "%q does not contain %s", s, p)
		}
	}
	for _, p := range unused {
		if strings.Contains(s, p) {
			return bad(key, "%q contains %s, which %s rows do not fill (they fill %s)", s, p, o.Reward, strings.Join(want, " and "))
		}
	}
	return nil
}

// TokenRow is one prompt with a token budget: what TokenRecordBuilder
// writes as a VeRL row.
type TokenRow struct {
	DataSource string
	System     string
	// User is the question followed by the budget sentence.
	User        string
	Ability     string
	GroundTruth string
	Split       string
	// Index is the task's position in the input (Task.Record).
	Index  int64
	TaskID string
	// Variant numbers the rows of one task from 0.
	Variant int
	// TokenBudget is extra_info.token_budget: n_gold of the LCPO rewards,
	// the limit L of ThinkPrune, ThinkBudget + AnswerBudget for elastic.
	TokenBudget int
	// ThinkBudget and AnswerBudget are the elastic reward's t and s; 0 in
	// the rows of the other rewards.
	ThinkBudget, AnswerBudget int
}

// RequestID is the row's id, "<task id>#<variant>", as in the rows with a
// time budget.
func (r *TokenRow) RequestID() string { return r.TaskID + "#" + strconv.Itoa(r.Variant) }

// TokenGenerator turns tasks into token-budgeted rows. It is safe for
// concurrent use.
type TokenGenerator struct {
	opt TokenOptions
}

// NewTokenGenerator validates the options and returns a TokenGenerator.
func NewTokenGenerator(opt TokenOptions) (*TokenGenerator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt.Budgets = append([]int(nil), opt.Budgets...)
	return &TokenGenerator{opt: opt}, nil
}

// tokenRand is the random stream of one task's token budget: PCG seeded
// from SHA-256 of a domain tag of its own (so that its draws are not those
// of the task's time budget), the seed and the id.
func tokenRand(seed uint64, id string) *rand.Rand {
	return domainRand("timeaware/synth/budget/tokens\x00", seed, id)
}

// Rows appends the task's rows to dst: one with a budget drawn from the
// range or the set (with EveryBudget, one per budget of the set in its order;
// for the elastic reward, one with its two budgets). A task without a
// reference answer is a *LineError.
func (g *TokenGenerator) Rows(t *Task, dst []TokenRow) ([]TokenRow, error) {
	o := &g.opt
	if t.Answer == nil {
		return dst, &LineError{ID: t.ID, Field: "answer", Err: errors.New("missing: a token-budgeted row needs the reference answer")}
	}
	base := TokenRow{
		DataSource:  string(o.Reward),
		System:      o.Prompts.System,
		Ability:     string(o.Family),
		GroundTruth: *t.Answer,
		Split:       o.Split,
		Index:       int64(t.Record),
		TaskID:      t.ID,
	}
	if t.Ability != "" {
		base.Ability = t.Ability
	}
	if t.Split != "" {
		base.Split = t.Split
	}
	question := strings.TrimRight(t.Question, " \t\r\n")
	if o.Reward == RewardElastic {
		row := base
		row.ThinkBudget, row.AnswerBudget = o.ThinkBudget, o.AnswerBudget
		row.TokenBudget = o.ThinkBudget + o.AnswerBudget
		row.User = question + "\n\n" + strings.NewReplacer(ThinkBudgetPlaceholder, strconv.Itoa(o.ThinkBudget),
			AnswerBudgetPlaceholder, strconv.Itoa(o.AnswerBudget)).Replace(o.Prompts.Sentence)
		return append(dst, row), nil
	}
	emit := func(variant, n int) {
		row := base
		row.Variant, row.TokenBudget = variant, n
		row.User = question + "\n\n" + strings.ReplaceAll(o.Prompts.Sentence, BudgetPlaceholder, strconv.Itoa(n))
		dst = append(dst, row)
	}
	switch lo, hi := o.BudgetRange[0], o.BudgetRange[1]; {
	case len(o.Budgets) == 0:
		emit(0, lo+tokenRand(o.Seed, t.ID).IntN(hi-lo+1))
	case o.EveryBudget:
		for i, n := range o.Budgets {
			emit(i, n)
		}
	default:
		emit(0, o.Budgets[tokenRand(o.Seed, t.ID).IntN(len(o.Budgets))])
	}
	return dst, nil
}

// TokenSummary counts what a token-budgeted build read and wrote.
type TokenSummary struct {
	Family     Family `json:"family"`
	Unit       Unit   `json:"unit"`
	DataSource string `json:"data_source"`
	// Tasks is the number of tasks read; Skipped of those, the ones another
	// shard builds.
	Tasks   int `json:"tasks"`
	Skipped int `json:"skipped_other_shards"`
	Rows    int `json:"rows"`
	// ByBudget counts rows by token budget ("1024").
	ByBudget map[string]int `json:"by_token_budget"`
	// BudgetMin, BudgetMean and BudgetMax describe the token budgets (0
	// without rows).
	BudgetMin  int     `json:"token_budget_min"`
	BudgetMean float64 `json:"token_budget_mean"`
	BudgetMax  int     `json:"token_budget_max"`
	// ThinkBudget and AnswerBudget are the elastic reward's budgets; 0 for
	// the other rewards.
	ThinkBudget  int `json:"think_budget,omitempty"`
	AnswerBudget int `json:"answer_budget,omitempty"`
}

func (s *TokenSummary) add(r *TokenRow) {
	if s.Rows == 0 || r.TokenBudget < s.BudgetMin {
		s.BudgetMin = r.TokenBudget
	}
	s.BudgetMax = max(s.BudgetMax, r.TokenBudget)
	s.Rows++
	s.BudgetMean += (float64(r.TokenBudget) - s.BudgetMean) / float64(s.Rows)
	s.ByBudget[strconv.Itoa(r.TokenBudget)]++
}

// BuildTokens reads a JSONL task file from r (name is used in errors) and
// hands every token-budgeted row to emit, task by task in input order. It
// stops at the first bad line with a *LineError, at the first error from
// emit, or when ctx is done.
func BuildTokens(ctx context.Context, r io.Reader, name string, opt TokenOptions, emit func(*TokenRow) error) (*TokenSummary, error) {
	g, err := NewTokenGenerator(opt)
	if err != nil {
		return nil, err
	}
	sum := &TokenSummary{Family: opt.Family, Unit: UnitTokens, DataSource: string(opt.Reward), ByBudget: map[string]int{}}
	if opt.Reward == RewardElastic {
		sum.ThinkBudget, sum.AnswerBudget = opt.ThinkBudget, opt.AnswerBudget
	}
	err = eachRow(ctx, NewTaskReader(r, name, opt.Family), opt.Select, &sum.Tasks, &sum.Skipped, g.Rows,
		func(row *TokenRow) error { sum.add(row); return emit(row) })
	if err != nil {
		return nil, err
	}
	return sum, nil
}
