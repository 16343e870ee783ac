package rewards

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Config parameterises every reward. DefaultConfig holds the values of the
// source papers; the command layer fills it from flags and YAML.
type Config struct {
	// FallbackScore is the score of an item that cannot be scored.
	FallbackScore float64
	// StopStrings are end-of-sequence and padding texts that trainers leave
	// at the end of a decoded response (OpenRLHF decodes with special tokens
	// kept). Any run of them at the end of solution_str, with the white space
	// between them, is removed before a reward reads the response.
	StopStrings []string
	Timely      TimelyConfig
	TicToc      TicTocConfig
	TimePuzzles TimePuzzlesConfig
	Length      LengthConfig
}

// Utilization variants of the Timely-RL reward (U(t) in eq. 10–12).
const (
	UtilSin    = "sin"
	UtilLinear = "linear"
	UtilStep   = "step"
)

// TimelyConfig holds the Timely-RL reward's parameters:
//
//	R = 0                       if t > T_max (or the format check fails)
//	R = r_f                     if on time and r = 0
//	R = r_f + r + λ·U(t)        if on time and r > 0
type TimelyConfig struct {
	// Utilization selects U(t): sin (default), linear or step.
	Utilization string
	// StepTable holds U for equal-width bins of t/T_max over [0, 1] (eq. 12
	// has four: [0,.25), [.25,.5), [.5,.75), [.75,1]). The paper prints the
	// last entry as 0.1, almost surely a typo for 1.0; the default is 1.0.
	StepTable []float64
	// FormatReward is r_f, paid for a well-formed answer on time.
	FormatReward float64
	// Lambda weighs the utilisation term.
	Lambda float64
	// CorrectReward is r for a correct general-reasoning answer.
	CorrectReward float64
	// MLWeight scales ML accuracy into r (r = MLWeight·accuracy).
	MLWeight float64
	// GameExponent is the power in r = (s/s_max)^GameExponent.
	GameExponent float64
	// AnswerTag, when set, requires the general answer inside <tag>…</tag>.
	AnswerTag string
	// DurationTag, when set, requires a self-reported duration inside
	// <tag>…</tag> (for example "total duration: 12.5 seconds").
	DurationTag string
	// HonestyTolerance, when > 0, fails the format check of a response whose
	// self-reported duration differs from the measured one by more than this
	// fraction of the measured time (and more than one second).
	HonestyTolerance float64
}

// TicTocConfig holds the TicToc decision reward's parameters.
type TicTocConfig struct {
	// MarginWeighted scales an agreeing decision's reward by margin/1.5.
	MarginWeighted bool
	// ToolCallPatterns are extra regular expressions; a response matching any
	// of them counts as a tool call.
	ToolCallPatterns []string
}

// Time Puzzles metrics usable as the score.
const (
	MetricEM      = "em"
	MetricF1      = "f1"
	MetricJaccard = "jaccard"
)

// TimePuzzlesConfig holds the Time Puzzles scorer's parameters.
type TimePuzzlesConfig struct {
	// Metric is the detail used as the score: em (default), f1 or jaccard.
	Metric string
}

// Priors of the anytime reward over its budgets (AnytimeReasoner, §3.1).
const (
	AnytimeUniform = "uniform"
	AnytimeLinear  = "linear"
	AnytimeBase    = "base"
)

// LengthConfig holds the parameters of the length-control rewards
// (length/lcpo_exact, lcpo_max, thinkprune, elastic, anytime).
type LengthConfig struct {
	// AnswerTag is the tag the plain answer check (answer_check "") reads
	// the answer from; "" accepts \boxed{} or an "Answer:" line.
	AnswerTag string
	// ThinkOpen and ThinkClose delimit the thinking part of a response.
	ThinkOpen, ThinkClose string
	// ThinkInPrompt says the chat template opens the thinking in the
	// prompt (DeepSeek-R1 and its distillations), so a response holds only
	// the closing tag: one without it was cut while thinking and is all
	// thinking, with no answer, rather than all answer.
	ThinkInPrompt bool
	// LCPOAlpha is α of LCPO-Exact, the reward lost per token of distance
	// from the budget, and LCPOMaxAlpha that of LCPO-Max, the slope of its
	// clipped term (see LCPOExact and LCPOMax for what each source uses).
	LCPOAlpha, LCPOMaxAlpha float64
	// LCPODelta is δ of LCPO-Max, the reward a correct answer keeps at
	// exactly its budget.
	LCPODelta float64
	// ThinkPruneLimit is ThinkPrune's token limit L for items without
	// extra_info.token_budget.
	ThinkPruneLimit int
	// DAPOMaxTokens and DAPOBufferTokens are L_max and L_cache of DAPO's
	// soft overlong punishment, for items without extra_info.token_budget:
	// no penalty up to L_max − L_cache tokens, then −1/L_cache a token more,
	// to −1 at L_max and past it.
	DAPOMaxTokens, DAPOBufferTokens int
	// CosineMaxTokens is L_max of the cosine-scaled reward, for items
	// without extra_info.token_budget: the length at which its cosine
	// reaches its long end, and past which lengths count as L_max.
	CosineMaxTokens int
	// CosineCorrectShort and CosineCorrectLong are the cosine reward of a
	// right answer at length 0 and at L_max (r_0^c and r_L^c); CosineWrongShort
	// and CosineWrongLong those of a wrong answer (r_0^w and r_L^w).
	CosineCorrectShort, CosineCorrectLong, CosineWrongShort, CosineWrongLong float64
	// KimiWeight is w of Kimi k1.5's length reward, the weight of the
	// length term added to the correctness.
	KimiWeight float64
	// ShorterBetterAlpha and ShorterBetterBeta are ShorterBetter's α, the
	// reward of a right answer, and β, the reward lost per token away from
	// the group's sample optimal length.
	ShorterBetterAlpha, ShorterBetterBeta float64
	// ALPBeta and ALPNorm are ALP's β, the global coefficient, and N, the
	// normalisation constant: a member pays β/N per token, times the
	// group's solve rate (at least 1/K).
	ALPBeta, ALPNorm float64
	// ElasticThinkBudget and ElasticAnswerBudget are Elastic Reasoning's t
	// and s for items without extra_info.think_budget or answer_budget.
	ElasticThinkBudget, ElasticAnswerBudget int
	// AnytimePrior is the prior over budgets: uniform, linear or base.
	AnytimePrior string
	// MaxBytesPerToken bounds the bytes one token may stand for: a count
	// of response, thinking or answer tokens that would make its text
	// longer than that many bytes a token is refused, since a count is
	// the trainer's word and a lower one earns a length reward more.
	MaxBytesPerToken int
	// Tokenizer, when set, counts the tokens of the response and of its
	// parts itself (the model's tokenizer.json, see package tokenizer):
	// a trainer's count that differs from its own by more than CountSlack
	// tokens plus CountSlackFraction of its count is refused. Nil leaves
	// only the MaxBytesPerToken bound.
	Tokenizer TokenCounter
	// CountSlack and CountSlackFraction are the difference a count may
	// have from the Tokenizer's: the ids a model generated need not be
	// the ones its tokenizer makes of the decoded text again (an
	// end-of-sequence token the text leaves out, a word spelled in other
	// pieces).
	CountSlack         int
	CountSlackFraction float64
}

// TokenCounter counts the tokens a model's tokenizer makes of a text;
// *tokenizer.Tokenizer is one.
type TokenCounter interface {
	Count(text string) (int, error)
}

// DefaultStopStrings are the end-of-turn, end-of-text and padding tokens of
// the Qwen, Llama, Mistral, GPT, Gemma and DeepSeek chat families.
var DefaultStopStrings = []string{
	"<|im_end|>", "<|endoftext|>", // Qwen, GPT-2 family
	"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|finetune_right_pad_id|>", // Llama 3
	"</s>",                  // Llama 2, Mistral
	"<|return|>", "<|end|>", // GPT (harmony)
	"<end_of_turn>", "<eos>", "<pad>", // Gemma
	"<｜end▁of▁sentence｜>", // DeepSeek
}

// DefaultConfig returns the papers' parameters: general reasoning with
// r = 0.5, r_f = 0.1, λ = 0.4 and the sine utilisation; games with
// r = (s/s_max)^(1/3); ML with r = 0.5·accuracy.
func DefaultConfig() Config {
	return Config{
		FallbackScore: 0,
		StopStrings:   slices.Clone(DefaultStopStrings),
		Timely: TimelyConfig{
			Utilization:   UtilSin,
			StepTable:     []float64{0.25, 0.5, 0.75, 1.0},
			FormatReward:  0.1,
			Lambda:        0.4,
			CorrectReward: 0.5,
			MLWeight:      0.5,
			GameExponent:  1.0 / 3,
			AnswerTag:     "answer",
		},
		TimePuzzles: TimePuzzlesConfig{Metric: MetricEM},
		Length: LengthConfig{
			AnswerTag:           "answer",
			ThinkOpen:           "<think>",
			ThinkClose:          "</think>",
			LCPOAlpha:           0.0003,
			LCPOMaxAlpha:        0.0003,
			LCPODelta:           0.5,
			ThinkPruneLimit:     4000,
			DAPOMaxTokens:       20480,
			DAPOBufferTokens:    4096,
			CosineMaxTokens:     4096,
			CosineCorrectShort:  1.0,
			CosineCorrectLong:   0.5,
			CosineWrongShort:    -1.0,
			CosineWrongLong:     -0.5,
			KimiWeight:          1,
			ShorterBetterAlpha:  2,
			ShorterBetterBeta:   0.001,
			ALPBeta:             1e-7,
			ALPNorm:             1,
			ElasticThinkBudget:  1024,
			ElasticAnswerBudget: 1024,
			AnytimePrior:        AnytimeUniform,
			MaxBytesPerToken:    32,
			CountSlack:          8,
			CountSlackFraction:  0.02,
		},
	}
}

// ConfigError is the error of an invalid Config field: Key names it as in
// the config file under rewards (timely.lambda), so that a caller can say
// where the user set it.
type ConfigError struct {
	Key string
	Err error
}

func (e *ConfigError) Error() string { return "rewards: " + e.Key + ": " + e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }

// Validate reports the first invalid field, named as in the config file, as
// a *ConfigError.
func (c Config) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return &ConfigError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	for key, v := range map[string]float64{
		"fallback_score":              c.FallbackScore,
		"timely.format_reward":        c.Timely.FormatReward,
		"timely.lambda":               c.Timely.Lambda,
		"timely.correct_reward":       c.Timely.CorrectReward,
		"timely.ml_weight":            c.Timely.MLWeight,
		"timely.game_exponent":        c.Timely.GameExponent,
		"timely.honesty_tolerance":    c.Timely.HonestyTolerance,
		"length.lcpo_alpha":           c.Length.LCPOAlpha,
		"length.lcpo_max_alpha":       c.Length.LCPOMaxAlpha,
		"length.lcpo_delta":           c.Length.LCPODelta,
		"length.cosine_correct_short": c.Length.CosineCorrectShort,
		"length.cosine_correct_long":  c.Length.CosineCorrectLong,
		"length.cosine_wrong_short":   c.Length.CosineWrongShort,
		"length.cosine_wrong_long":    c.Length.CosineWrongLong,
		"length.kimi_weight":          c.Length.KimiWeight,
		"length.shorterbetter_alpha":  c.Length.ShorterBetterAlpha,
		"length.shorterbetter_beta":   c.Length.ShorterBetterBeta,
		"length.alp_beta":             c.Length.ALPBeta,
		"length.alp_norm":             c.Length.ALPNorm,
	} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad(key, "not a finite number")
		}
	}
	for i, st := range c.StopStrings {
		if strings.TrimSpace(st) == "" {
			return bad("stop_strings", "entry %d is empty", i+1)
		}
	}
	switch c.Timely.Utilization {
	case UtilSin, UtilLinear:
	case UtilStep:
		if len(c.Timely.StepTable) == 0 {
			return bad("timely.step_table", "empty, but utilization is step")
		}
	default:
		return bad("timely.utilization", "%q is not sin, linear or step", c.Timely.Utilization)
	}
	for i, v := range c.Timely.StepTable {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("timely.step_table", "entry %d is not a finite number", i+1)
		}
	}
	if c.Timely.GameExponent <= 0 {
		return bad("timely.game_exponent", "%v must be positive", c.Timely.GameExponent)
	}
	if c.Timely.HonestyTolerance < 0 {
		return bad("timely.honesty_tolerance", "%v must not be negative", c.Timely.HonestyTolerance)
	}
	if c.Timely.HonestyTolerance > 0 && c.Timely.DurationTag == "" {
		return bad("timely.honesty_tolerance", "needs timely.duration_tag to read the reported duration")
	}
	for key, tag := range map[string]string{"timely.answer_tag": c.Timely.AnswerTag, "timely.duration_tag": c.Timely.DurationTag} {
		if !validTag(tag) {
			return bad(key, "%q is not a tag name (letters, digits, _ and -)", tag)
		}
	}
	switch c.TimePuzzles.Metric {
	case MetricEM, MetricF1, MetricJaccard:
	default:
		return bad("timepuzzles.metric", "%q is not em, f1 or jaccard", c.TimePuzzles.Metric)
	}
	return c.Length.validate()
}

func (c LengthConfig) validate() error {
	bad := func(key string, format string, args ...any) error {
		return &ConfigError{Key: "length." + key, Err: fmt.Errorf(format, args...)}
	}
	if !validTag(c.AnswerTag) {
		return bad("answer_tag", "%q is not a tag name (letters, digits, _ and -)", c.AnswerTag)
	}
	if strings.TrimSpace(c.ThinkOpen) == "" {
		return bad("think_open", "empty: the thinking needs an opening tag")
	}
	if strings.TrimSpace(c.ThinkClose) == "" {
		return bad("think_close", "empty: the thinking needs a closing tag")
	}
	if c.ThinkOpen == c.ThinkClose {
		return bad("think_close", "%q is the opening tag too", c.ThinkClose)
	}
	if c.LCPOAlpha < 0 {
		return bad("lcpo_alpha", "%v must not be negative", c.LCPOAlpha)
	}
	for key, v := range map[string]float64{"kimi_weight": c.KimiWeight, "shorterbetter_alpha": c.ShorterBetterAlpha, "shorterbetter_beta": c.ShorterBetterBeta, "alp_beta": c.ALPBeta} {
		if v < 0 {
			return bad(key, "%v must not be negative", v)
		}
	}
	if !(c.ALPNorm > 0) {
		return bad("alp_norm", "%v: want a positive number (N divides the penalty)", c.ALPNorm)
	}
	if c.LCPOMaxAlpha < 0 {
		return bad("lcpo_max_alpha", "%v must not be negative", c.LCPOMaxAlpha)
	}
	if c.MaxBytesPerToken < 1 {
		return bad("max_bytes_per_token", "%d: want at least 1", c.MaxBytesPerToken)
	}
	if c.CountSlack < 0 {
		return bad("count_slack", "%d must not be negative", c.CountSlack)
	}
	if !finite(c.CountSlackFraction) || c.CountSlackFraction < 0 || c.CountSlackFraction >= 1 {
		return bad("count_slack_fraction", "%v: want at least 0 and below 1", c.CountSlackFraction)
	}
	for key, v := range map[string]int{
		"thinkprune_limit":      c.ThinkPruneLimit,
		"elastic_think_budget":  c.ElasticThinkBudget,
		"elastic_answer_budget": c.ElasticAnswerBudget,
		"dapo_max_tokens":       c.DAPOMaxTokens,
		"cosine_max_tokens":     c.CosineMaxTokens,
	} {
		if v < 1 {
			return bad(key, "%d: a budget must be at least 1 token", v)
		}
	}
	if c.DAPOBufferTokens < 0 || c.DAPOBufferTokens > c.DAPOMaxTokens {
		return bad("dapo_buffer_tokens", "%d: want from 0 to dapo_max_tokens (%d)", c.DAPOBufferTokens, c.DAPOMaxTokens)
	}
	switch c.AnytimePrior {
	case AnytimeUniform, AnytimeLinear, AnytimeBase:
	default:
		return bad("anytime_prior", "%q is not uniform, linear or base", c.AnytimePrior)
	}
	return nil
}

func validTag(tag string) bool {
	for _, c := range tag {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var errNoTimeSource = errors.New("the item names a timer, but no timer store is configured (offline, set timers.secret to the secret of the service that issued it)")
