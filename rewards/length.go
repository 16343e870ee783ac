package rewards

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// The length-control family scores a response by its correctness and by
// its length in tokens against a token budget. The trainer counts the
// tokens from the ids it generated and passes them in extra_info
// (response_tokens, think_tokens, answer_tokens): the reward must measure
// what the policy generated, and decoded text re-encoded need not give
// back those ids. A count is the trainer's word, so it is checked against
// the text: always against a bound of bytes per token, and, when the
// service is given the model's tokenizer (LengthConfig.Tokenizer),
// against its own count, within a slack for that re-encoding.
//
// Correctness c ∈ [0, 1] comes from one of the existing answer checkers,
// chosen by extra_info.answer_check (see AnswerChecks), applied to the
// answer part of the response: the text after the closing think tag, or
// the whole response when it has no think tags. A response whose thinking
// never closes has no answer (c = 0): that is how a response cut at its
// length limit looks, and it must earn the reward of a missing answer.
// Under a chat template that opens the thinking in the prompt
// (LengthConfig.ThinkInPrompt), a response without the closing tag is such
// a response, so that a guess written early in a thinking that was then
// cut earns nothing.

// lengthKeys are the details of lcpo_exact, lcpo_max, thinkprune and
// elastic:
//
//	correct           c, the answer check's score in [0, 1]
//	response_tokens   n_y, the response's tokens
//	think_tokens      tokens before the closing think tag (0 when not given)
//	answer_tokens     tokens after it (0 when not given)
//	token_budget      the budget: n_gold or L; elastic: t + s
//	within_budget     1 if n_y ≤ the budget; elastic: both parts within theirs
//	overshoot_tokens  max(0, n_y − budget); elastic: the parts' overshoots summed
var lengthKeys = []string{"correct", "response_tokens", "think_tokens", "answer_tokens", "token_budget", "within_budget", "overshoot_tokens"}

const (
	lCorrect = iota
	lResponse
	lThink
	lAnswer
	lBudget
	lWithin
	lOvershoot
)

// LCPOExact is L1's LCPO-Exact reward ("L1: Controlling How Long A
// Reasoning Model Thinks With Reinforcement Learning", Eq. 1):
//
//	r = c − α·|n_gold − n_y|
//
// with n_gold = extra_info.token_budget, n_y = extra_info.response_tokens
// and α = LengthConfig.LCPOAlpha, 0.0003: the value the paper reports and
// the one the authors' current training script for LCPO-Exact sets
// (scripts/train/run_l1_exact.sh, reward_config.alpha=0.0003); their first
// release divided by 3000 instead (deepscaler/rewards/math_reward.py,
// get_delta_score_exact), α = 1/3000, which the key reproduces. The length
// term applies whatever the answer, so a wrong answer of the asked length
// scores above a wrong answer far from it.
var LCPOExact = &Reward{
	DataSource:  "length/lcpo_exact",
	Summary:     "L1 LCPO-Exact: correctness minus α·|n_gold − n_y|, for a response asked to think for n_gold tokens",
	GroundTruth: lengthGroundTruth,
	Keys:        lengthKeys,
	score:       scoreLCPO(LCPOExactReward),
}

// LCPOMax is L1's LCPO-Max reward (Eq. 2 of the same paper):
//
//	r = c · clip(α·(n_gold − n_y) + δ, 0, 1)
//
// with α = LengthConfig.LCPOMaxAlpha and δ = LengthConfig.LCPODelta (0.5):
// a correct answer under its budget scores between δ and 1, one a little
// over still scores above a wrong answer, and a wrong answer scores 0 at
// any length. α defaults to 0.0003, the α the paper's Eq. 2 shares with
// Eq. 1. The authors' first release computes this term as
// (clip(−(n_y − n_gold)/500, −1, 1) + 1)/2 (get_delta_score_max), which is
// clip(0.5 + (n_gold − n_y)/1000, 0, 1): α = 0.001 with δ = 0.5, the
// setting that reproduces it; their current LCPO-Max script sets no length
// term at all.
var LCPOMax = &Reward{
	DataSource:  "length/lcpo_max",
	Summary:     "L1 LCPO-Max: correctness times clip(α·(n_gold − n_y) + δ, 0, 1), for a response asked to think for at most n_gold tokens",
	GroundTruth: lengthGroundTruth,
	Keys:        lengthKeys,
	score:       scoreLCPO(LCPOMaxReward),
}

// ThinkPrune is the ThinkPrune reward ("ThinkPrune: Pruning Long
// Chain-of-Thought of LLMs via Reinforcement Learning": RL with a token
// limit beyond which unfinished thoughts and answers are discarded, with
// zero reward): a response longer than the token limit L earns nothing,
// one within it earns its correctness:
//
//	r = c if n_y ≤ L, else 0
//
// L is extra_info.token_budget, else LengthConfig.ThinkPruneLimit (4000,
// the paper's first round; it tightens the limit over rounds, which a user
// does by changing the key or the rows between runs). The trainer normally
// cuts generation at L, so a response at the limit is scored on the
// answer it finished before the cut; one whose thinking never closed has
// no answer and earns 0.
var ThinkPrune = &Reward{
	DataSource:  "length/thinkprune",
	Summary:     "ThinkPrune: correctness when the response is within its token limit L, 0 past it",
	GroundTruth: lengthGroundTruth,
	Keys:        lengthKeys,
	score:       scoreThinkPrune,
}

// Elastic is the reward of Elastic Reasoning ("Scalable Chain of Thoughts
// via Elastic Reasoning", its budget-constrained rollout in GRPO, whose
// objective is the expected task reward of such rollouts): the response
// is split at the closing think
// tag into a thinking part of budget t and an answer part of budget s,
// and scores the correctness of the answer part. The paper trains on
// budget-constrained rollouts (the thinking cut at t tokens and closed,
// the answer cut at s) and rewards correctness alone; a rollout that
// overruns either budget was not constrained, so it scores 0 rather than
// teaching the model that an overrun pays:
//
//	r = c(answer) if think_tokens ≤ t and answer_tokens ≤ s, else 0
//
// t and s are extra_info.think_budget and answer_budget, else
// LengthConfig.ElasticThinkBudget and ElasticAnswerBudget (1024 each, the
// released training configuration's t* = s* = 1K). The item must carry
// both think_tokens and answer_tokens, and the thinking must close.
var Elastic = &Reward{
	DataSource:  "length/elastic",
	Summary:     "Elastic Reasoning: correctness of the answer part when the thinking is within t tokens and the answer within s",
	GroundTruth: lengthGroundTruth,
	Keys:        lengthKeys,
	score:       scoreElastic,
}

// AnytimeMaxBudgets bounds the budgets of one anytime item; the paper
// evaluates at most eight.
const AnytimeMaxBudgets = 8

// anytimeKeys are the details of the anytime reward:
//
//	correct        c_m, the correctness of the answer at the largest budget
//	budgets        m, the number of budgets
//	think_tokens   |z|, the thinking's tokens (0 when not given)
//	r_1 … r_8      c_j, the correctness of the answer at the j-th budget
//	               (0 past m), from which a trainer forms the dense
//	               reward-to-go Σ_{j ≥ k} P_j·c_j of the paper's Eq. 6
var anytimeKeys = []string{"correct", "budgets", "think_tokens", "r_1", "r_2", "r_3", "r_4", "r_5", "r_6", "r_7", "r_8"}

// Anytime is AnytimeReasoner's anytime reward ("Optimizing Anytime
// Reasoning via Budget Relative Policy Optimization", Eq. 3): the thinking
// z of one rollout is cut at budgets b_1 < … < b_m, an answer is drawn
// after each cut, and the reward is the expected correctness over a prior
// P on the budgets:
//
//	r = Σ_j P_j · c_j
//
// extra_info.anytime lists the answers as [{"budget": b_j, "summary":
// text}, …]. The prior is LengthConfig.AnytimePrior: uniform (the default,
// the paper's main setting), linear (P_j ∝ b_j) or base (P_m = 1, the
// standard objective scored at the largest budget).
var Anytime = &Reward{
	DataSource:  "length/anytime",
	Summary:     "AnytimeReasoner: expected correctness of the answers drawn after cutting one thinking at each budget, over a prior on the budgets",
	GroundTruth: lengthGroundTruth,
	Keys:        anytimeKeys,
	score:       scoreAnytime,
}

const lengthGroundTruth = `the ground truth of the answer checker extra_info.answer_check names ` +
	`(string: the reference answer for "" and timely/general; a Time Puzzles or TRAVELER ground truth for those)`

// AnswerCheck is one checker a length reward may take its correctness
// from: it scores the answer text against ground_truth in [0, 1].
type AnswerCheck struct {
	// Name is the value of extra_info.answer_check that selects it.
	Name string
	// Summary says what it checks.
	Summary string
	check   func(ctx context.Context, s *Scorer, answer string, groundTruth json.RawMessage) (float64, error)
}

// AnswerChecks lists the answer checkers of the length rewards:
//
//	""               the answer in <answer_tag>…</answer_tag> (LengthConfig.AnswerTag) equals ground_truth
//	timely/general   the same check with the Timely-RL answer tag (TimelyConfig.AnswerTag)
//	timepuzzles      the Time Puzzles score (TimePuzzlesConfig.Metric)
//	traveler         the TRAVELER score (crisp or soft accuracy)
var AnswerChecks = []AnswerCheck{
	{Name: "", Summary: "the tagged answer equals ground_truth", check: checkPlain},
	{Name: TimelyGeneral.DataSource, Summary: "the Timely-RL answer check", check: checkTimely},
	{Name: TimePuzzles.DataSource, Summary: "the Time Puzzles score", check: checkWith(TimePuzzles)},
	{Name: Traveler.DataSource, Summary: "the TRAVELER score", check: checkWith(Traveler)},
}

func checkPlain(_ context.Context, s *Scorer, answer string, gt json.RawMessage) (float64, error) {
	return tagAnswerCheck(answer, s.cfg.Length.AnswerTag, gt)
}

func checkTimely(_ context.Context, s *Scorer, answer string, gt json.RawMessage) (float64, error) {
	return tagAnswerCheck(answer, s.cfg.Timely.AnswerTag, gt)
}

func tagAnswerCheck(answer, tag string, gt json.RawMessage) (float64, error) {
	ref, err := groundTruthText(gt)
	if err != nil {
		return 0, err
	}
	ans, ok := ExtractAnswer(answer, tag)
	return b2f(ok && EqualAnswers(ans, ref)), nil
}

// checkWith takes correctness from another reward's score, which is in
// [0, 1] for the task scorers listed in AnswerChecks.
func checkWith(r *Reward) func(context.Context, *Scorer, string, json.RawMessage) (float64, error) {
	return func(ctx context.Context, s *Scorer, answer string, gt json.RawMessage) (float64, error) {
		sub := Item{DataSource: r.DataSource, SolutionStr: answer, GroundTruth: gt}
		return r.score(ctx, s, &sub, make([]float64, len(r.Keys)))
	}
}

func lookupCheck(name string) (*AnswerCheck, error) {
	for i := range AnswerChecks {
		if AnswerChecks[i].Name == name {
			return &AnswerChecks[i], nil
		}
	}
	names := make([]string, 0, len(AnswerChecks))
	for _, c := range AnswerChecks {
		names = append(names, strconv.Quote(c.Name))
	}
	return nil, fieldErrorf("extra_info.answer_check", "%q is not an answer checker (want one of %s)", name, strings.Join(names, ", "))
}

// maxTokenCount bounds a token count or budget: far past any context
// window, and exact in a float64.
const maxTokenCount = 1 << 40

// tokenField reads an optional token count or budget of extra_info. A
// given value must be a whole number from min (0 for counts, 1 for
// budgets) to maxTokenCount.
func tokenField(name string, v *float64, min float64) (n float64, given bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	x := *v
	if !finite(x) {
		return 0, false, fieldErrorf("extra_info."+name, "not a finite number")
	}
	if x != math.Trunc(x) {
		return 0, false, fieldErrorf("extra_info."+name, "%v is not a whole number of tokens", x)
	}
	if x < min && min > 0 {
		return 0, false, fieldErrorf("extra_info."+name, "%v: a budget must be at least 1 token", x)
	}
	if x < min {
		return 0, false, fieldErrorf("extra_info."+name, "%v is negative", x)
	}
	if x > maxTokenCount {
		return 0, false, fieldErrorf("extra_info."+name, "%v is past the largest count accepted (%d)", x, int64(maxTokenCount))
	}
	return x + 0, true, nil // + 0 turns −0 into 0
}

// requireToken is tokenField for a field the reward cannot do without.
func requireToken(name, why string, v *float64, min float64) (float64, error) {
	n, given, err := tokenField(name, v, min)
	if err == nil && !given {
		err = fieldErrorf("extra_info."+name, "missing: %s", why)
	}
	return n, err
}

// lengthItem is what the length rewards read from an item: the counts,
// checked against each other and against the text, and the response
// split at its think tags.
type lengthItem struct {
	response, think, answer float64
	hasThink, hasAnswer     bool
	thinkText, answerText   string
	tagged, closed          bool
	check                   *AnswerCheck
}

// splitThink splits a response at the first closing think tag: the
// thinking is everything before it (the opening tag removed), the answer
// everything after it. Without a closing tag, a response that opens a
// think block, or any response when the chat template opens the block in
// the prompt (inPrompt), is all thinking that never closed (closed false):
// it was cut off while thinking and has no answer. A response with neither
// tag, under a template that leaves the tags to the model, is all answer.
func splitThink(s, open, close string, inPrompt bool) (think, answer string, tagged, closed bool) {
	if i := strings.Index(s, close); i >= 0 {
		return withoutFirst(s[:i], open), s[i+len(close):], true, true
	}
	if inPrompt || strings.Contains(s, open) {
		return withoutFirst(s, open), "", true, false
	}
	return "", s, false, false
}

// withoutFirst is s without the first occurrence of tag.
func withoutFirst(s, tag string) string {
	if j := strings.Index(s, tag); j >= 0 {
		return s[:j] + s[j+len(tag):]
	}
	return s
}

// readLength reads the counts and the split, and refuses counts that
// cannot describe the text: more thinking or answer tokens than response
// tokens, a thinking count for a response without think tags, an answer
// count for thinking that never closed, or no tokens for a part that has
// text.
func (s *Scorer) readLength(it *Item) (*lengthItem, error) {
	ei := &it.ExtraInfo
	li := &lengthItem{}
	var err error
	if li.check, err = lookupCheck(ei.AnswerCheck); err != nil {
		return nil, err
	}
	if li.response, err = requireToken("response_tokens", "the response's length in tokens, which the trainer counts from the ids it generated", ei.ResponseTokens, 0); err != nil {
		return nil, err
	}
	if li.think, li.hasThink, err = tokenField("think_tokens", ei.ThinkTokens, 0); err != nil {
		return nil, err
	}
	if li.answer, li.hasAnswer, err = tokenField("answer_tokens", ei.AnswerTokens, 0); err != nil {
		return nil, err
	}
	c := &s.cfg.Length
	li.thinkText, li.answerText, li.tagged, li.closed = splitThink(it.SolutionStr, c.ThinkOpen, c.ThinkClose, c.ThinkInPrompt)
	if li.response == 0 && strings.TrimSpace(it.SolutionStr) != "" {
		return nil, fieldErrorf("extra_info.response_tokens", "0, but solution_str has text")
	}
	if li.think > li.response {
		return nil, fieldErrorf("extra_info.think_tokens", "%v is more than response_tokens (%v)", li.think, li.response)
	}
	if li.answer > li.response {
		return nil, fieldErrorf("extra_info.answer_tokens", "%v is more than response_tokens (%v)", li.answer, li.response)
	}
	if li.think+li.answer > li.response {
		return nil, fieldErrorf("extra_info.answer_tokens", "think_tokens + answer_tokens (%v) is more than response_tokens (%v)", li.think+li.answer, li.response)
	}
	if err := li.agree(c); err != nil {
		return nil, err
	}
	if err := c.holds("response_tokens", li.response, "solution_str", it.SolutionStr); err != nil {
		return nil, err
	}
	if li.hasThink {
		if err := c.holds("think_tokens", li.think, "the thinking", li.thinkText); err != nil {
			return nil, err
		}
	}
	if li.hasAnswer {
		if err := c.holds("answer_tokens", li.answer, "the answer part", li.answerText); err != nil {
			return nil, err
		}
	}
	if c.Tokenizer != nil {
		if err := c.counts("response_tokens", li.response, "solution_str", it.SolutionStr); err != nil {
			return nil, err
		}
		if li.hasThink {
			if err := c.counts("think_tokens", li.think, "the thinking", li.thinkText); err != nil {
				return nil, err
			}
		}
		if li.hasAnswer {
			if err := c.counts("answer_tokens", li.answer, "the answer part", li.answerText); err != nil {
				return nil, err
			}
		}
	}
	return li, nil
}

// counts refuses a count of tokens that differs from the configured
// tokenizer's count of text by more than the slack, either way: a lower
// count earns a length reward more, and so does a higher one under
// LCPO-Exact.
func (c *LengthConfig) counts(key string, tokens float64, what, text string) error {
	n, err := c.Tokenizer.Count(text)
	if err != nil {
		return fieldErrorf("extra_info."+key, "rewards.length.tokenizer cannot count %s: %v", what, err)
	}
	slack := float64(c.CountSlack) + c.CountSlackFraction*float64(n)
	if math.Abs(tokens-float64(n)) > slack {
		return fieldErrorf("extra_info."+key, "%v, but rewards.length.tokenizer makes %d tokens of %s, more than %d + %v%% off (rewards.length.count_slack, count_slack_fraction); send the count of the ids the model generated, with the tokenizer the service was given",
			tokens, n, what, c.CountSlack, c.CountSlackFraction*100)
	}
	return nil
}

// holds refuses a count of tokens that would make text longer than
// MaxBytesPerToken bytes a token.
func (c *LengthConfig) holds(key string, tokens float64, what, text string) error {
	if float64(len(text)) > tokens*float64(c.MaxBytesPerToken) {
		return fieldErrorf("extra_info."+key, "%v tokens cannot hold %s's %d bytes: no token stands for more than %d (rewards.length.max_bytes_per_token); send the count of the ids the model generated",
			tokens, what, len(text), c.MaxBytesPerToken)
	}
	return nil
}

// agree checks the thinking and answer counts against the split text.
func (li *lengthItem) agree(c *LengthConfig) error {
	if li.hasThink {
		if !li.tagged && li.think > 0 {
			return fieldErrorf("extra_info.think_tokens", "%v, but solution_str has no %s or %s", li.think, c.ThinkOpen, c.ThinkClose)
		}
		if li.think == 0 && strings.TrimSpace(li.thinkText) != "" {
			return fieldErrorf("extra_info.think_tokens", "0, but the thinking before %s has text", c.ThinkClose)
		}
	}
	if li.hasAnswer {
		if li.tagged && !li.closed && li.answer > 0 {
			return fieldErrorf("extra_info.answer_tokens", "%v, but solution_str's thinking never closes (it has no %s), so it has no answer part", li.answer, c.ThinkClose)
		}
		if li.answer == 0 && strings.TrimSpace(li.answerText) != "" {
			return fieldErrorf("extra_info.answer_tokens", "0, but the answer part has text")
		}
	}
	return nil
}

// correctness scores the answer part with the item's answer checker; a
// thinking that never closed leaves no answer. The ground truth is checked
// either way, so a bad row is an error whatever the response.
func (s *Scorer) correctness(ctx context.Context, check *AnswerCheck, it *Item, answer string) (float64, error) {
	c, err := check.check(ctx, s, answer, it.GroundTruth)
	if err != nil {
		return 0, err
	}
	if !finite(c) || c < 0 || c > 1 {
		return 0, fmt.Errorf("rewards: answer check %q gave %v, not in [0, 1]", check.Name, c)
	}
	return c, nil
}

// scoreLength reads and checks an item, then fills the shared details for
// one budget and returns c and whether n_y is within the budget.
func (s *Scorer) scoreLength(ctx context.Context, it *Item, budget float64, d []float64) (c float64, within bool, err error) {
	li, err := s.readLength(it)
	if err != nil {
		return 0, false, err
	}
	if c, err = s.correctness(ctx, li.check, it, li.answerText); err != nil {
		return 0, false, err
	}
	over := max(0, li.response-budget)
	li.details(d, c, budget, over)
	return c, over == 0, nil
}

// details fills the shared details: c, the counts, the budget, and
// whether and by how many tokens the item ran over it.
func (li *lengthItem) details(d []float64, c, budget, over float64) {
	d[lCorrect], d[lResponse], d[lThink], d[lAnswer] = c, li.response, li.think, li.answer
	d[lBudget], d[lWithin], d[lOvershoot] = budget, b2f(over == 0), over
}

// budgetOr reads an optional budget of extra_info: def when the row has
// none.
func budgetOr(name string, v *float64, def int) (float64, error) {
	n, given, err := tokenField(name, v, 1)
	if err == nil && !given {
		n = float64(def)
	}
	return n, err
}

func lcpoBudget(it *Item) (float64, error) {
	return requireToken("token_budget", "n_gold, the length the prompt asked for", it.ExtraInfo.TokenBudget, 1)
}

// scoreLCPO is the score function of an LCPO reward: formula on the
// correctness, n_gold and n_y.
func scoreLCPO(formula func(cfg LengthConfig, c, nGold, n float64) float64) func(context.Context, *Scorer, *Item, []float64) (float64, error) {
	return func(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
		gold, err := lcpoBudget(it)
		if err != nil {
			return 0, err
		}
		c, _, err := s.scoreLength(ctx, it, gold, d)
		if err != nil {
			return 0, err
		}
		return formula(s.cfg.Length, c, gold, d[lResponse]), nil
	}
}

// LCPOExactReward is Eq. 1 of the L1 paper for correctness c, target
// n_gold and length n: c − α·|n_gold − n|.
func LCPOExactReward(cfg LengthConfig, c, nGold, n float64) float64 {
	return c - cfg.LCPOAlpha*math.Abs(nGold-n)
}

// LCPOMaxReward is Eq. 2 of the L1 paper for correctness c, maximum n_gold
// and length n: c·clip(α·(n_gold − n) + δ, 0, 1).
func LCPOMaxReward(cfg LengthConfig, c, nGold, n float64) float64 {
	return c * min(max(cfg.LCPOMaxAlpha*(nGold-n)+cfg.LCPODelta, 0), 1)
}

func scoreThinkPrune(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	limit, err := budgetOr("token_budget", it.ExtraInfo.TokenBudget, s.cfg.Length.ThinkPruneLimit)
	if err != nil {
		return 0, err
	}
	c, within, err := s.scoreLength(ctx, it, limit, d)
	if err != nil || !within {
		return 0, err
	}
	return c, nil
}

func scoreElastic(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	ei := &it.ExtraInfo
	t, err := budgetOr("think_budget", ei.ThinkBudget, s.cfg.Length.ElasticThinkBudget)
	if err != nil {
		return 0, err
	}
	sb, err := budgetOr("answer_budget", ei.AnswerBudget, s.cfg.Length.ElasticAnswerBudget)
	if err != nil {
		return 0, err
	}
	li, err := s.readLength(it)
	if err != nil {
		return 0, err
	}
	if !li.hasThink {
		return 0, fieldErrorf("extra_info.think_tokens", "missing: the thinking's length in tokens, which the elastic reward checks against its budget")
	}
	if !li.hasAnswer {
		return 0, fieldErrorf("extra_info.answer_tokens", "missing: the answer's length in tokens, which the elastic reward checks against its budget")
	}
	if li.tagged && !li.closed {
		return 0, fieldErrorf("solution_str", "its thinking never closes (it has no %s): a budget-constrained rollout closes the thinking when its budget runs out", s.cfg.Length.ThinkClose)
	}
	c, err := s.correctness(ctx, li.check, it, li.answerText)
	if err != nil {
		return 0, err
	}
	over := max(0, li.think-t) + max(0, li.answer-sb)
	li.details(d, c, t+sb, over)
	if over > 0 {
		return 0, nil
	}
	return c, nil
}

// AnytimeAnswer is one entry of extra_info.anytime: the answer drawn after
// the thinking was cut at Budget tokens.
type AnytimeAnswer struct {
	Budget  float64 `json:"budget"`
	Summary string  `json:"summary"`
}

// readAnytime decodes and checks extra_info.anytime: 1 to
// AnytimeMaxBudgets entries with whole, positive, strictly increasing
// budgets and a summary each; an unknown member is refused (a misspelt
// "summary" would otherwise score as a missing answer).
func readAnytime(raw json.RawMessage) ([]AnytimeAnswer, error) {
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return nil, fieldErrorf("extra_info.anytime", "missing: the answers drawn at each budget, [{\"budget\": b, \"summary\": text}, ...]")
	}
	entries, ok := anytimeFast(b)
	if !ok {
		if err := decodeStrict(b, &entries); err != nil {
			return nil, anytimeShapeError(b, err)
		}
	}
	if len(entries) == 0 || len(entries) > AnytimeMaxBudgets {
		return nil, fieldErrorf("extra_info.anytime", "%d entries; want 1 to %d budgets", len(entries), AnytimeMaxBudgets)
	}
	out := make([]AnytimeAnswer, len(entries))
	for i, e := range entries {
		field := func(member string) string { return fmt.Sprintf("extra_info.anytime[%d]%s", i, member) }
		if e.Summary == nil {
			return nil, fieldErrorf(field(".summary"), "missing: the answer drawn at this budget")
		}
		n, err := requireToken("budget", "the thinking budget this answer was drawn at", e.Budget, 1)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.Field = field(".budget")
			}
			return nil, err
		}
		if i > 0 && n <= out[i-1].Budget {
			return nil, fieldErrorf(field(".budget"), "%v is not above the previous budget (%v): list the budgets in increasing order, each once", n, out[i-1].Budget)
		}
		out[i] = AnytimeAnswer{Budget: n, Summary: *e.Summary}
	}
	return out, nil
}

// anytimeEntry is an entry of extra_info.anytime as sent.
type anytimeEntry struct {
	Budget  *float64 `json:"budget"`
	Summary *string  `json:"summary"`
}

// anytimeFast reads extra_info.anytime without reflection when it has the
// shape clients send: a list of objects whose members are "budget", a
// number, and "summary", a string of valid UTF-8, each named once and in
// that case. Anything else (another member or case, a member twice, a
// null, a number out of range, text after the list) is false, for
// decodeStrict to read and word as before: what this reads, decodeStrict
// reads the same (FuzzAnytimeFast).
func anytimeFast(b []byte) ([]anytimeEntry, bool) {
	var s jsonscan.Scanner
	s.StrictUTF8, s.StrictSurrogates = true, true
	s.Reset(b)
	if s.Peek() != '[' {
		return nil, false
	}
	s.Skip(1)
	out := make([]anytimeEntry, 0, AnytimeMaxBudgets)
	if s.Peek() == ']' {
		s.Skip(1)
		return out, s.Peek() == jsonscan.End
	}
	for {
		e, ok := anytimeEntryFast(&s)
		if !ok {
			return nil, false
		}
		out = append(out, e)
		more, err := s.More(']', "")
		if err != nil {
			return nil, false
		}
		if !more {
			return out, s.Peek() == jsonscan.End
		}
	}
}

// anytimeEntryFast reads one entry of extra_info.anytime for anytimeFast.
func anytimeEntryFast(s *jsonscan.Scanner) (anytimeEntry, bool) {
	var e anytimeEntry
	if s.Peek() != '{' {
		return e, false
	}
	s.Skip(1)
	if s.Peek() == '}' {
		s.Skip(1)
		return e, true
	}
	for {
		if s.Peek() != '"' {
			return e, false
		}
		key, err := s.ReadString()
		if err != nil || s.Peek() != ':' {
			return e, false
		}
		s.Skip(1)
		if !anytimeMemberFast(s, string(key), &e) {
			return e, false
		}
		more, err := s.More('}', "")
		if err != nil {
			return e, false
		}
		if !more {
			return e, true
		}
	}
}

// anytimeMemberFast reads the value of an entry's member key into e: a
// number for a budget not yet given, a string for a summary not yet given;
// false for anything else.
func anytimeMemberFast(s *jsonscan.Scanner, key string, e *anytimeEntry) bool {
	if key == "budget" && e.Budget == nil && jsonscan.IsNumberStart(s.Peek()) {
		num, err := s.ReadNumber()
		if err != nil {
			return false
		}
		f, err := strconv.ParseFloat(string(num), 64)
		e.Budget = &f
		return err == nil
	}
	if key == "summary" && e.Summary == nil && s.Peek() == '"' {
		str, err := s.ReadString()
		v := string(str)
		e.Summary = &v
		return err == nil
	}
	return false
}

// decodeStrict decodes b into v, refusing members v does not have.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// anytimeShapeError words why extra_info.anytime did not decode, naming
// the entry at fault: a value of the wrong kind by its path, an unknown
// member (which the decoder does not place) by decoding the entries one by
// one.
func anytimeShapeError(b []byte, err error) error {
	var entries []json.RawMessage
	if json.Unmarshal(b, &entries) == nil {
		for i, e := range entries {
			var one anytimeEntry
			if err := decodeStrict(e, &one); err != nil {
				return decodeError(fmt.Sprintf("extra_info.anytime[%d]", i), e, err, `{"budget": tokens, "summary": text}`)
			}
		}
	}
	return decodeError("extra_info.anytime", b, err, `a list of {"budget", "summary"} objects`)
}

// AnytimeWeights returns the prior P over budgets b (increasing) for a
// prior name: uniform (1/m each), linear (P_j ∝ b_j) or base (P_m = 1).
func AnytimeWeights(prior string, b []float64) []float64 {
	w := make([]float64, len(b))
	switch prior {
	case AnytimeLinear:
		var sum float64
		for _, x := range b {
			sum += x
		}
		for j, x := range b {
			w[j] = x / sum
		}
	case AnytimeBase:
		w[len(w)-1] = 1
	default:
		for j := range w {
			w[j] = 1 / float64(len(b))
		}
	}
	return w
}

func scoreAnytime(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	check, err := lookupCheck(it.ExtraInfo.AnswerCheck)
	if err != nil {
		return 0, err
	}
	// solution_str is the thinking z, which the chat template may have
	// opened in the prompt and the cut left open: its count is |z| and is
	// not checked against tags.
	// The count is reported, not scored: the budgets are the answers'.
	think, _, err := tokenField("think_tokens", it.ExtraInfo.ThinkTokens, 0)
	if err != nil {
		return 0, err
	}
	answers, err := readAnytime(it.ExtraInfo.Anytime)
	if err != nil {
		return 0, err
	}
	budgets := make([]float64, len(answers))
	for j, a := range answers {
		budgets[j] = a.Budget
	}
	w := AnytimeWeights(s.cfg.Length.AnytimePrior, budgets)
	var r float64
	for j, a := range answers {
		c, err := s.correctness(ctx, check, it, a.Summary)
		if err != nil {
			return 0, err
		}
		d[3+j] = c
		r += w[j] * c
	}
	d[0], d[1], d[2] = d[2+len(answers)], float64(len(answers)), think
	return r, nil
}
