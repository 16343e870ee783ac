package rewards

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/tokenizer"
)

// lengthCase is one item of a length reward with its expected score,
// worked by hand from the paper's equation with the default parameters
// (α = 0.0003, δ = 0.5, L = 4000, t = s = 1024).
type lengthCase struct {
	name   string
	sol    string
	gt     string
	ei     ExtraInfo
	score  float64
	within float64
	over   float64
}

const (
	right = "<think>I add them.</think>The sum is <answer>42</answer>"
	wrong = "<think>I add them.</think>The sum is <answer>41</answer>"
	// cut is a response stopped inside its thinking: no answer.
	cut = "<think>I add them and then I"
)

func tokens(n float64) *float64 { return f64(n) }

var (
	inf = math.Inf(1)
	nan = math.NaN()
)

func TestLCPOExactByHand(t *testing.T) {
	cases := []lengthCase{
		// 1 − 0.0003·|1000 − 1000| = 1
		{name: "right at the budget", sol: right, ei: ExtraInfo{ResponseTokens: tokens(1000), TokenBudget: tokens(1000)}, score: 1, within: 1},
		// 1 − 0.0003·|1000 − 1001| = 0.9997
		{name: "right one token over", sol: right, ei: ExtraInfo{ResponseTokens: tokens(1001), TokenBudget: tokens(1000)}, score: 0.9997, over: 1},
		// 1 − 0.0003·|1000 − 600| = 0.88: under the target costs as much as over it
		{name: "right 400 under", sol: right, ei: ExtraInfo{ResponseTokens: tokens(600), TokenBudget: tokens(1000)}, score: 0.88, within: 1},
		// 0 − 0.0003·|1000 − 0| = −0.3
		{name: "zero length", sol: "", ei: ExtraInfo{ResponseTokens: tokens(0), TokenBudget: tokens(1000)}, score: -0.3, within: 1},
		// 0 − 0.0003·|100 − 2100| = −0.6
		{name: "wrong and 2000 over", sol: wrong, ei: ExtraInfo{ResponseTokens: tokens(2100), TokenBudget: tokens(100)}, score: -0.6, over: 2000},
		// missing answer: 0 − 0.0003·|512 − 512| = 0
		{name: "missing answer at the budget", sol: cut, ei: ExtraInfo{ResponseTokens: tokens(512), TokenBudget: tokens(512)}, score: 0, within: 1},
		// the largest count and budget accepted, 2^40
		{name: "the largest count", sol: right, ei: ExtraInfo{ResponseTokens: tokens(1 << 40), TokenBudget: tokens(1 << 40)}, score: 1, within: 1},
	}
	runLengthCases(t, LCPOExact, nil, cases)
}

func TestLCPOMaxByHand(t *testing.T) {
	cases := []lengthCase{
		// 1·clip(0.0003·0 + 0.5) = 0.5
		{name: "right at the budget", sol: right, ei: ExtraInfo{ResponseTokens: tokens(1000), TokenBudget: tokens(1000)}, score: 0.5, within: 1},
		// 1·clip(0.0003·(−1) + 0.5) = 0.4997
		{name: "right one token over", sol: right, ei: ExtraInfo{ResponseTokens: tokens(1001), TokenBudget: tokens(1000)}, score: 0.4997, over: 1},
		// 1·clip(0.0003·1000 + 0.5) = 0.8
		{name: "right 1000 under", sol: right, ei: ExtraInfo{ResponseTokens: tokens(3000), TokenBudget: tokens(4000)}, score: 0.8, within: 1},
		// 1·clip(0.0003·4000 + 0.5) = clip(1.7) = 1
		{name: "right at almost zero length", sol: right, ei: ExtraInfo{ResponseTokens: tokens(2), TokenBudget: tokens(4002)}, score: 1, within: 1},
		// 1·clip(0.0003·(−2000) + 0.5) = clip(−0.1) = 0
		{name: "right far over", sol: right, ei: ExtraInfo{ResponseTokens: tokens(3000), TokenBudget: tokens(1000)}, score: 0, over: 2000},
		// 0·clip(…) = 0
		{name: "wrong under", sol: wrong, ei: ExtraInfo{ResponseTokens: tokens(10), TokenBudget: tokens(1000)}, score: 0, within: 1},
		{name: "zero length", sol: "", ei: ExtraInfo{ResponseTokens: tokens(0), TokenBudget: tokens(1000)}, score: 0, within: 1},
		{name: "missing answer", sol: cut, ei: ExtraInfo{ResponseTokens: tokens(4096), TokenBudget: tokens(4096)}, score: 0, within: 1},
	}
	runLengthCases(t, LCPOMax, nil, cases)
	// α = 0.001, δ = 0.2: 1·clip(0.001·300 + 0.2) = 0.5
	runLengthCases(t, LCPOMax, func(c *Config) { c.Length.LCPOMaxAlpha, c.Length.LCPODelta = 0.001, 0.2 }, []lengthCase{
		{name: "configured alpha and delta", sol: right, ei: ExtraInfo{ResponseTokens: tokens(700), TokenBudget: tokens(1000)}, score: 0.5, within: 1},
	})
}

func TestThinkPruneByHand(t *testing.T) {
	cases := []lengthCase{
		{name: "right at the limit", sol: right, ei: ExtraInfo{ResponseTokens: tokens(2000), TokenBudget: tokens(2000)}, score: 1, within: 1},
		{name: "right one token over", sol: right, ei: ExtraInfo{ResponseTokens: tokens(2001), TokenBudget: tokens(2000)}, score: 0, over: 1},
		{name: "wrong within", sol: wrong, ei: ExtraInfo{ResponseTokens: tokens(100), TokenBudget: tokens(2000)}, score: 0, within: 1},
		{name: "zero length", sol: "", ei: ExtraInfo{ResponseTokens: tokens(0), TokenBudget: tokens(2000)}, score: 0, within: 1},
		{name: "cut at the limit: no answer", sol: cut, ei: ExtraInfo{ResponseTokens: tokens(2000), TokenBudget: tokens(2000)}, score: 0, within: 1},
		// no token_budget: the configured limit, 4000
		{name: "default limit, at it", sol: right, ei: ExtraInfo{ResponseTokens: tokens(4000)}, score: 1, within: 1},
		{name: "default limit, one over", sol: right, ei: ExtraInfo{ResponseTokens: tokens(4001)}, score: 0, over: 1},
	}
	runLengthCases(t, ThinkPrune, nil, cases)
	runLengthCases(t, ThinkPrune, func(c *Config) { c.Length.ThinkPruneLimit = 3000 }, []lengthCase{
		{name: "a tighter round's limit", sol: right, ei: ExtraInfo{ResponseTokens: tokens(3001)}, score: 0, over: 1},
	})
}

func TestElasticByHand(t *testing.T) {
	split := func(think, answer float64) ExtraInfo {
		return ExtraInfo{ResponseTokens: tokens(think + answer + 1), ThinkTokens: tokens(think), AnswerTokens: tokens(answer)}
	}
	withBudgets := func(ei ExtraInfo, t, s float64) ExtraInfo {
		ei.ThinkBudget, ei.AnswerBudget = tokens(t), tokens(s)
		return ei
	}
	cases := []lengthCase{
		{name: "both parts at their budgets", sol: right, ei: split(1024, 1024), score: 1, within: 1},
		{name: "thinking one token over", sol: right, ei: split(1025, 10), score: 0, over: 1},
		{name: "answer one token over", sol: right, ei: split(10, 1025), score: 0, over: 1},
		{name: "both over", sol: right, ei: split(1030, 1040), score: 0, over: 6 + 16},
		{name: "wrong answer within", sol: wrong, ei: split(10, 10), score: 0, within: 1},
		// the right number inside the thinking does not count: the answer part is read
		{name: "answer only in the thinking", sol: "<think><answer>42</answer></think>So it is 41.", ei: split(10, 5), score: 0, within: 1},
		{name: "zero-length parts", sol: "<think></think>", ei: split(0, 0), score: 0, within: 1},
		{name: "row budgets", sol: right, ei: withBudgets(split(200, 50), 200, 50), score: 1, within: 1},
		{name: "row budgets, answer over", sol: right, ei: withBudgets(split(200, 51), 200, 50), score: 0, over: 1},
		// a response with no think tags is all answer
		{name: "no thinking", sol: "The sum is <answer>42</answer>", ei: ExtraInfo{ResponseTokens: tokens(8), ThinkTokens: tokens(0), AnswerTokens: tokens(8)}, score: 1, within: 1},
	}
	for i := range cases {
		cases[i].gt = `"42"`
	}
	runLengthCases(t, Elastic, nil, cases)
}

// TestElasticDetails: the budget reported is t + s and the parts' counts
// are those given.
func TestElasticDetails(t *testing.T) {
	s := newTestScorer(t, nil)
	it := Item{DataSource: Elastic.DataSource, SolutionStr: right, GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(400), ThinkTokens: tokens(300), AnswerTokens: tokens(97), ThinkBudget: tokens(256), AnswerBudget: tokens(128)}}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, []float64{1, 400, 300, 97, 384, 0, 44}, res.Details)
	assert.Equal(t, 0.0, res.Score)
}

func runLengthCases(t *testing.T, r *Reward, cfg func(*Config), cases []lengthCase) {
	t.Helper()
	s := newTestScorer(t, cfg)
	for _, tc := range cases {
		t.Run(r.DataSource+"/"+tc.name, func(t *testing.T) {
			gt := tc.gt
			if gt == "" {
				gt = `"42"`
			}
			it := Item{DataSource: r.DataSource, SolutionStr: tc.sol, GroundTruth: json.RawMessage(gt), ExtraInfo: tc.ei}
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			d := detailMap(r, res)
			assert.Equal(t, tc.within, d["within_budget"], "within_budget")
			assert.Equal(t, tc.over, d["overshoot_tokens"], "overshoot_tokens")
			assert.Equal(t, *tc.ei.ResponseTokens, d["response_tokens"])
		})
	}
}

func detailMap(r *Reward, res Result) map[string]float64 {
	m := map[string]float64{}
	for i, k := range r.Keys {
		m[k] = res.Details[i]
	}
	return m
}

func TestAnytimeByHand(t *testing.T) {
	four := `[{"budget": 2000, "summary": "<answer>41</answer>"}, {"budget": 4000, "summary": "<answer>42</answer>"},
	          {"budget": 6000, "summary": "no answer"}, {"budget": 8000, "summary": "<answer>42</answer>"}]`
	cases := []struct {
		name, prior, anytime string
		score                float64
		details              []float64
	}{
		// (0 + 1 + 0 + 1)/4
		{"uniform", AnytimeUniform, four, 0.5, []float64{1, 4, 0, 0, 1, 0, 1, 0, 0, 0, 0}},
		// (4000 + 8000)/(2000 + 4000 + 6000 + 8000) = 0.6
		{"linear", AnytimeLinear, four, 0.6, []float64{1, 4, 0, 0, 1, 0, 1, 0, 0, 0, 0}},
		// the largest budget only
		{"base", AnytimeBase, four, 1, []float64{1, 4, 0, 0, 1, 0, 1, 0, 0, 0, 0}},
		{"one budget, wrong", AnytimeUniform, `[{"budget": 1, "summary": "<answer>0</answer>"}]`, 0, []float64{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"empty answers", AnytimeLinear, `[{"budget": 1, "summary": ""}, {"budget": 3, "summary": "<answer>42</answer>"}]`, 0.75,
			[]float64{1, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0}},
		{"eight budgets, right from the sixth", AnytimeUniform, `[{"budget": 1, "summary": ""}, {"budget": 2, "summary": ""}, {"budget": 3, "summary": ""},
			{"budget": 4, "summary": ""}, {"budget": 5, "summary": ""}, {"budget": 6, "summary": "<answer>42</answer>"},
			{"budget": 7, "summary": "<answer>42</answer>"}, {"budget": 8, "summary": "<answer>42</answer>"}]`, 3.0 / 8,
			[]float64{1, 8, 0, 0, 0, 0, 0, 0, 1, 1, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestScorer(t, func(c *Config) { c.Length.AnytimePrior = tc.prior })
			it := Item{DataSource: Anytime.DataSource, SolutionStr: "<think>long thinking", GroundTruth: json.RawMessage(`"42"`),
				ExtraInfo: ExtraInfo{Anytime: json.RawMessage(tc.anytime)}}
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.details, res.Details)
		})
	}
	s := newTestScorer(t, nil)
	it := Item{DataSource: Anytime.DataSource, SolutionStr: "<think>x</think>", GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ThinkTokens: tokens(7), ResponseTokens: tokens(9), Anytime: json.RawMessage(`[{"budget": 5, "summary": "<answer>42</answer>"}]`)}}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 7.0, detailMap(Anytime, res)["think_tokens"])

	// the thinking of a template that opens <think> in the prompt, cut
	// before it closed, has no tags at all
	it.SolutionStr, it.ExtraInfo.ThinkTokens, it.ExtraInfo.ResponseTokens = "Twelve apples, a third eaten", tokens(6200), nil
	res = s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 6200.0, detailMap(Anytime, res)["think_tokens"])
}

// TestLengthAnswerChecks: correctness comes from the checker
// extra_info.answer_check names, on the answer part.
func TestLengthAnswerChecks(t *testing.T) {
	cases := []struct {
		name, check, sol, gt string
		correct              float64
	}{
		{"plain", "", "<answer>21</answer>", `"21"`, 1},
		{"plain, number ground truth", "", "<answer>21.0</answer>", `21`, 1},
		{"plain, wrong", "", "<answer>22</answer>", `"21"`, 0},
		{"plain needs the tag", "", "Answer: 21", `"21"`, 0},
		{"timely/general", "timely/general", "<answer>21</answer>", `"21"`, 1},
		{"timepuzzles", "timepuzzles", "MY ANSWER: 2023-08-15", `"2023-08-15"`, 1},
		{"timepuzzles, wrong date", "timepuzzles", "MY ANSWER: 2023-08-16", `"2023-08-15"`, 0},
		{"traveler", "traveler", "ANSWER: 2", `{"category": "explicit", "template": "how_often", "answer": 2}`, 1},
		{"traveler, wrong", "traveler", "ANSWER: 3", `{"category": "explicit", "template": "how_often", "answer": 2}`, 0},
		// the date inside the thinking is not the answer
		{"timepuzzles reads the answer part", "timepuzzles", "<think>MY ANSWER: 2023-08-15</think>MY ANSWER: 2023-08-16", `"2023-08-15"`, 0},
	}
	s := newTestScorer(t, func(c *Config) { c.Length.AnswerTag = "answer" })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := Item{DataSource: LCPOMax.DataSource, SolutionStr: tc.sol, GroundTruth: json.RawMessage(tc.gt),
				ExtraInfo: ExtraInfo{ResponseTokens: tokens(100), TokenBudget: tokens(100), AnswerCheck: tc.check}}
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.correct, detailMap(LCPOMax, res)["correct"])
			// c·clip(0 + 0.5)
			assert.InDelta(t, tc.correct*0.5, res.Score, 1e-12)
		})
	}
	// a response that starts at the closing tag (the template opened the
	// thinking in the prompt) has an empty thinking and the rest is the
	// answer, whose "Answer:" line then starts a line
	unboxed := newTestScorer(t, func(c *Config) { c.Length.AnswerTag = "" })
	it0 := Item{DataSource: LCPOMax.DataSource, SolutionStr: "</think>Answer: 21", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(10), TokenBudget: tokens(10)}}
	res0 := unboxed.Score(context.Background(), &it0)
	require.NoError(t, res0.Err)
	assert.Equal(t, 1.0, detailMap(LCPOMax, res0)["correct"])

	// a configured tag for the plain check; "" accepts \boxed{}
	boxed := newTestScorer(t, func(c *Config) { c.Length.AnswerTag = "" })
	it := Item{DataSource: LCPOExact.DataSource, SolutionStr: `so \boxed{21}`, GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(10), TokenBudget: tokens(10)}}
	res := boxed.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score)
}

// TestLengthBadInput: every malformed count, budget, split or list is an
// item error naming the field, never a score.
func TestLengthBadInput(t *testing.T) {
	ok := ExtraInfo{ResponseTokens: tokens(100), ThinkTokens: tokens(60), AnswerTokens: tokens(30), TokenBudget: tokens(200)}
	with := func(f func(*ExtraInfo)) ExtraInfo { ei := ok; f(&ei); return ei }
	cases := []struct {
		name   string
		reward *Reward
		sol    string
		gt     string
		ei     ExtraInfo
		field  string
		msg    string
	}{
		{"negative count", LCPOMax, right, "", with(func(e *ExtraInfo) { e.ResponseTokens = tokens(-1) }), "extra_info.response_tokens", "negative"},
		{"fractional count", LCPOExact, right, "", with(func(e *ExtraInfo) { e.ResponseTokens = tokens(12.5) }), "extra_info.response_tokens", "whole number"},
		{"fractional thinking", Elastic, right, "", with(func(e *ExtraInfo) { e.ThinkTokens = tokens(0.25) }), "extra_info.think_tokens", "whole number"},
		{"infinite count", ThinkPrune, right, "", with(func(e *ExtraInfo) { e.ResponseTokens = tokens(inf) }), "extra_info.response_tokens", "finite"},
		{"huge count", ThinkPrune, right, "", with(func(e *ExtraInfo) { e.ResponseTokens = tokens(1 << 41) }), "extra_info.response_tokens", "largest"},
		{"missing count", LCPOMax, right, "", with(func(e *ExtraInfo) { e.ResponseTokens = nil }), "extra_info.response_tokens", "missing"},
		{"missing budget", LCPOExact, right, "", with(func(e *ExtraInfo) { e.TokenBudget = nil }), "extra_info.token_budget", "missing"},
		{"zero budget", LCPOMax, right, "", with(func(e *ExtraInfo) { e.TokenBudget = tokens(0) }), "extra_info.token_budget", "at least 1"},
		{"zero limit", ThinkPrune, right, "", with(func(e *ExtraInfo) { e.TokenBudget = tokens(0) }), "extra_info.token_budget", "at least 1"},
		{"zero think budget", Elastic, right, "", with(func(e *ExtraInfo) { e.ThinkBudget = tokens(0) }), "extra_info.think_budget", "at least 1"},
		{"fractional answer budget", Elastic, right, "", with(func(e *ExtraInfo) { e.AnswerBudget = tokens(9.5) }), "extra_info.answer_budget", "whole number"},
		{"more thinking than response", LCPOMax, right, "", with(func(e *ExtraInfo) { e.ThinkTokens = tokens(101); e.AnswerTokens = nil }), "extra_info.think_tokens", "more than response_tokens"},
		{"more answer than response", LCPOMax, right, "", with(func(e *ExtraInfo) { e.AnswerTokens = tokens(101); e.ThinkTokens = nil }), "extra_info.answer_tokens", "more than response_tokens"},
		{"parts past the response", LCPOMax, right, "", with(func(e *ExtraInfo) { e.AnswerTokens = tokens(41) }), "extra_info.answer_tokens", "think_tokens + answer_tokens (101) is more than response_tokens (100)"},
		{"thinking count without tags", LCPOMax, "just <answer>42</answer>", "", with(func(e *ExtraInfo) {}), "extra_info.think_tokens", "no <think>"},
		{"no thinking tokens for thinking text", LCPOMax, right, "", with(func(e *ExtraInfo) { e.ThinkTokens = tokens(0) }), "extra_info.think_tokens", "has text"},
		{"no answer tokens for answer text", LCPOMax, right, "", with(func(e *ExtraInfo) { e.AnswerTokens = tokens(0) }), "extra_info.answer_tokens", "has text"},
		{"no tokens for a response with text", LCPOMax, right, "", ExtraInfo{ResponseTokens: tokens(0), TokenBudget: tokens(5)}, "extra_info.response_tokens", "has text"},
		{"answer tokens for unclosed thinking", LCPOMax, cut, "", with(func(e *ExtraInfo) {}), "extra_info.answer_tokens", "never closes"},
		{"elastic: unclosed thinking", Elastic, cut, "", with(func(e *ExtraInfo) { e.AnswerTokens = nil; e.AnswerTokens = tokens(0) }), "solution_str", "never closes"},
		{"elastic: no thinking count", Elastic, right, "", with(func(e *ExtraInfo) { e.ThinkTokens = nil }), "extra_info.think_tokens", "missing"},
		{"elastic: no answer count", Elastic, right, "", with(func(e *ExtraInfo) { e.AnswerTokens = nil }), "extra_info.answer_tokens", "missing"},
		{"unknown answer check", LCPOMax, right, "", with(func(e *ExtraInfo) { e.AnswerCheck = "negotiation" }), "extra_info.answer_check", "not an answer checker"},
		{"missing ground truth", LCPOMax, right, "null", ok, "ground_truth", "missing"},
		{"bad traveler ground truth", LCPOMax, right, `{"category": "nope"}`, with(func(e *ExtraInfo) { e.AnswerCheck = "traveler" }), "ground_truth.template", ""},
		{"anytime: missing list", Anytime, right, "", ok, "extra_info.anytime", "missing"},
		{"anytime: not a list", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`{"budget": 1}`)}, "extra_info.anytime", "want a list"},
		{"anytime: empty", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[]`)}, "extra_info.anytime", "0 entries"},
		{"anytime: nine budgets", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget":1,"summary":""},{"budget":2,"summary":""},{"budget":3,"summary":""},{"budget":4,"summary":""},{"budget":5,"summary":""},{"budget":6,"summary":""},{"budget":7,"summary":""},{"budget":8,"summary":""},{"budget":9,"summary":""}]`)}, "extra_info.anytime", "9 entries"},
		{"anytime: budgets not increasing", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget": 4, "summary": ""}, {"budget": 4, "summary": ""}]`)}, "extra_info.anytime[1].budget", "not above"},
		{"anytime: zero budget", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget": 0, "summary": ""}]`)}, "extra_info.anytime[0].budget", "at least 1"},
		{"anytime: fractional budget", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget": 1.5, "summary": ""}]`)}, "extra_info.anytime[0].budget", "whole number"},
		{"anytime: missing budget", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"summary": ""}]`)}, "extra_info.anytime[0].budget", "missing"},
		{"anytime: missing summary", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget": 3}]`)}, "extra_info.anytime[0].summary", "missing"},
		{"anytime: misspelt member", Anytime, right, "", ExtraInfo{Anytime: json.RawMessage(`[{"budget": 3, "sumary": "x"}]`)}, "extra_info.anytime[0]", "sumary"},
		{"anytime: bad count", Anytime, right, "", ExtraInfo{ThinkTokens: tokens(-2), Anytime: json.RawMessage(`[{"budget": 3, "summary": ""}]`)}, "extra_info.think_tokens", "negative"},
		{"100,000 bytes as one token", LCPOMax, strings.Repeat("x", 100_000) + "<answer>42</answer>", "", ExtraInfo{ResponseTokens: tokens(1), TokenBudget: tokens(5)}, "extra_info.response_tokens", "1 tokens cannot hold solution_str's 100019 bytes"},
		{"thinking past 32 bytes a token", ThinkPrune, long, "", ExtraInfo{ResponseTokens: tokens(200), ThinkTokens: tokens(99), AnswerTokens: tokens(10)}, "extra_info.think_tokens", "99 tokens cannot hold the thinking's 3200 bytes"},
		{"answer past 32 bytes a token", Elastic, "<think>x</think>" + strings.Repeat("b", 65) + "<answer>42</answer>", "", ExtraInfo{ResponseTokens: tokens(50), ThinkTokens: tokens(1), AnswerTokens: tokens(2)}, "extra_info.answer_tokens", "2 tokens cannot hold the answer part's 84 bytes"},
	}
	s := newTestScorer(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gt := tc.gt
			if gt == "" {
				gt = `"42"`
			}
			it := Item{DataSource: tc.reward.DataSource, SolutionStr: tc.sol, GroundTruth: json.RawMessage(gt), ExtraInfo: tc.ei}
			res := s.Score(context.Background(), &it)
			require.Error(t, res.Err)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			var fe *FieldError
			require.True(t, errors.As(res.Err, &fe), "%v", res.Err)
			assert.Equal(t, tc.field, fe.Field, "%v", res.Err)
			assert.Contains(t, res.Err.Error(), tc.msg)
			assert.Zero(t, res.Score)
		})
	}
}

// long thinks for 3,200 bytes; the whole is 3,245.
var long = "<think>" + strings.Repeat("a", 3200) + "</think>The sum is <answer>42</answer>"

// TestTokenCountsAtTheBound: a count is taken down to one token per
// max_bytes_per_token bytes of its text, and refused one token below.
func TestTokenCountsAtTheBound(t *testing.T) {
	one := DefaultConfig()
	one.Length.MaxBytesPerToken = 1
	require.NoError(t, one.Validate(), "one byte a token is a bound")
	score := func(s *Scorer, response, think float64) error {
		it := Item{DataSource: ThinkPrune.DataSource, SolutionStr: long, GroundTruth: json.RawMessage(`"42"`),
			ExtraInfo: ExtraInfo{ResponseTokens: tokens(response), ThinkTokens: tokens(think), AnswerTokens: tokens(1)}}
		return s.Score(context.Background(), &it).Err
	}
	s := newTestScorer(t, nil)
	require.NoError(t, score(s, 102, 100), "3,245 bytes in 102 tokens, 3,200 in 100: 32 a token at most")
	assert.ErrorContains(t, score(s, 101, 100), "extra_info.response_tokens: 101 tokens cannot hold solution_str's 3245 bytes")
	assert.ErrorContains(t, score(s, 102, 99), "extra_info.think_tokens: 99 tokens")
	wide := newTestScorer(t, func(c *Config) { c.Length.MaxBytesPerToken = 64 })
	require.NoError(t, score(wide, 51, 50))
	assert.ErrorContains(t, score(wide, 51, 49), "no token stands for more than 64")
}

func TestLengthConfigValidate(t *testing.T) {
	cases := []struct {
		key string
		set func(*LengthConfig)
	}{
		{"length.answer_tag", func(c *LengthConfig) { c.AnswerTag = "a b" }},
		{"length.think_open", func(c *LengthConfig) { c.ThinkOpen = " " }},
		{"length.think_close", func(c *LengthConfig) { c.ThinkClose = "" }},
		{"length.think_close", func(c *LengthConfig) { c.ThinkClose = c.ThinkOpen }},
		{"length.max_bytes_per_token", func(c *LengthConfig) { c.MaxBytesPerToken = 0 }},
		{"length.count_slack", func(c *LengthConfig) { c.CountSlack = -1 }},
		{"length.count_slack_fraction", func(c *LengthConfig) { c.CountSlackFraction = -0.01 }},
		{"length.count_slack_fraction", func(c *LengthConfig) { c.CountSlackFraction = 1 }},
		{"length.count_slack_fraction", func(c *LengthConfig) { c.CountSlackFraction = nan }},
		{"length.lcpo_alpha", func(c *LengthConfig) { c.LCPOAlpha = -0.1 }},
		{"length.lcpo_alpha", func(c *LengthConfig) { c.LCPOAlpha = nan }},
		{"length.lcpo_delta", func(c *LengthConfig) { c.LCPODelta = inf }},
		{"length.thinkprune_limit", func(c *LengthConfig) { c.ThinkPruneLimit = 0 }},
		{"length.elastic_think_budget", func(c *LengthConfig) { c.ElasticThinkBudget = -1 }},
		{"length.elastic_answer_budget", func(c *LengthConfig) { c.ElasticAnswerBudget = 0 }},
		{"length.anytime_prior", func(c *LengthConfig) { c.AnytimePrior = "exponential" }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.set(&c.Length)
		var ce *ConfigError
		err := c.Validate()
		require.True(t, errors.As(err, &ce), "%s: %v", tc.key, err)
		assert.Equal(t, tc.key, ce.Key)
	}
	c := DefaultConfig()
	c.Length.LCPOAlpha, c.Length.ThinkPruneLimit, c.Length.ElasticThinkBudget, c.Length.ElasticAnswerBudget = 0, 1, 1, 1
	require.NoError(t, c.Validate(), "α = 0 and budgets of one token are valid")
}

// TestLengthCustomTags: configured think tags split the response.
func TestLengthCustomTags(t *testing.T) {
	s := newTestScorer(t, func(c *Config) { c.Length.ThinkOpen, c.Length.ThinkClose = "<reasoning>", "</reasoning>" })
	it := Item{DataSource: Elastic.DataSource, SolutionStr: "<reasoning><answer>41</answer></reasoning><answer>42</answer>", GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(20), ThinkTokens: tokens(8), AnswerTokens: tokens(8)}}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score)
	it.SolutionStr = "<think>x</think><answer>42</answer>"
	res = s.Score(context.Background(), &it)
	require.Error(t, res.Err, "<think> is plain text under other tags, so the thinking count has no thinking to describe")
}

// BenchmarkLength scores one item of each length reward: a 2 KB response
// with its counts, as the trainer adapters send it.
func BenchmarkLength(b *testing.B) {
	sol := "<think>" + strings.Repeat("Let me reason about the problem step by step. ", 40) + "</think>So <answer>\\boxed{\\frac{3}{4}}</answer>"
	counts := ExtraInfo{ResponseTokens: tokens(520), ThinkTokens: tokens(480), AnswerTokens: tokens(30), TokenBudget: tokens(512)}
	withList := counts
	withList.Anytime = json.RawMessage(`[{"budget": 128, "summary": "<answer>1/2</answer>"}, {"budget": 256, "summary": "<answer>0.75</answer>"},
		{"budget": 384, "summary": "<answer>3/4</answer>"}, {"budget": 512, "summary": "<answer>\\frac{3}{4}</answer>"}]`)
	s := newTestScorer(b, nil)
	ctx := context.Background()
	for _, r := range []*Reward{TimelyGeneral, LCPOExact, LCPOMax, ThinkPrune, Elastic, Anytime} {
		it := Item{DataSource: r.DataSource, SolutionStr: sol, GroundTruth: json.RawMessage(`"0.75"`), ExtraInfo: withList}
		b.Run(r.DataSource, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := s.Score(ctx, &it); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

// TestLengthThinkInPrompt: under a chat template that opens the thinking
// in the prompt, a response without the closing tag was cut while
// thinking: a guess written early in it earns nothing, and counts that
// call it an answer are refused.
func TestLengthThinkInPrompt(t *testing.T) {
	guess := "Maybe <answer>42</answer>. Let me check that again, and then once more, and"
	s := newTestScorer(t, func(c *Config) { c.Length.ThinkInPrompt = true })
	plain := newTestScorer(t, nil)
	it := Item{DataSource: ThinkPrune.DataSource, SolutionStr: guess, GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(4000), TokenBudget: tokens(4000)}}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 0.0, res.Score, "the cut thinking has no answer")
	res = plain.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score, "without the key an untagged response is all answer")

	it.ExtraInfo.ThinkTokens, it.ExtraInfo.AnswerTokens = tokens(4000), tokens(0)
	res = s.Score(context.Background(), &it)
	require.NoError(t, res.Err, "the counts of a cut thinking")
	assert.Equal(t, 0.0, res.Score)
	it.ExtraInfo.ThinkTokens, it.ExtraInfo.AnswerTokens = tokens(0), tokens(1000)
	res = s.Score(context.Background(), &it)
	var fe *FieldError
	require.True(t, errors.As(res.Err, &fe), "%v", res.Err)
	assert.Equal(t, "extra_info.think_tokens", fe.Field)
	assert.Contains(t, res.Err.Error(), "has text")
	it.ExtraInfo.ThinkTokens = tokens(3000)
	res = s.Score(context.Background(), &it)
	require.True(t, errors.As(res.Err, &fe), "%v", res.Err)
	assert.Equal(t, "extra_info.answer_tokens", fe.Field)
	assert.Contains(t, res.Err.Error(), "never closes (it has no </think>)")

	// the closing tag still splits the response
	it = Item{DataSource: Elastic.DataSource, SolutionStr: "I add them.</think><answer>42</answer>", GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(20), ThinkTokens: tokens(5), AnswerTokens: tokens(10)}}
	res = s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score)
	it.SolutionStr = "I add them and <answer>42</answer>"
	res = s.Score(context.Background(), &it)
	require.True(t, errors.As(res.Err, &fe), "%v", res.Err)
	assert.Equal(t, "extra_info.answer_tokens", fe.Field, "elastic: counts for an answer the response does not have")
}

// TestLengthTextBeforeTheOpeningTag: text before <think> is thinking, as
// the adapters count it.
func TestLengthTextBeforeTheOpeningTag(t *testing.T) {
	s := newTestScorer(t, nil)
	it := Item{DataSource: Elastic.DataSource, SolutionStr: "A long preamble <think></think><answer>42</answer>", GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(20), ThinkTokens: tokens(0), AnswerTokens: tokens(5)}}
	res := s.Score(context.Background(), &it)
	var fe *FieldError
	require.True(t, errors.As(res.Err, &fe), "%v", res.Err)
	assert.Equal(t, "extra_info.think_tokens", fe.Field)
	it.ExtraInfo.ThinkTokens = tokens(4)
	res = s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score)
}

// TestLengthNegativeZero: a count of −0 is 0 in the details.
func TestLengthNegativeZero(t *testing.T) {
	s := newTestScorer(t, nil)
	it := Item{DataSource: LCPOMax.DataSource, SolutionStr: "", GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(math.Copysign(0, -1)), TokenBudget: tokens(10)}}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.False(t, math.Signbit(detailMap(LCPOMax, res)["response_tokens"]))
}

// wordCounter counts a text's tokens as its runs of non-space characters,
// an oracle with nothing of package tokenizer in it; fail makes it fail.
type wordCounter struct{ fail error }

func (w wordCounter) Count(text string) (int, error) {
	if w.fail != nil {
		return 0, w.fail
	}
	return len(strings.Fields(text)), nil
}

// TestTokenCountsAgainstTheTokenizer: with a tokenizer configured, each
// count must lie within count_slack + count_slack_fraction of the
// tokenizer's count of its own text, on either side; the other parts are
// checked too, and a tokenizer that cannot count is an error naming the
// field.
func TestTokenCountsAgainstTheTokenizer(t *testing.T) {
	// 400 words of thinking and 3 of answer; the tags are words of their
	// own, so the response counts 405.
	text := "<think> " + strings.Repeat("w ", 400) + "</think> The sum <answer>42</answer>"
	score := func(s *Scorer, response, think, answer float64) error {
		it := Item{DataSource: LCPOExact.DataSource, SolutionStr: text, GroundTruth: json.RawMessage(`"42"`),
			ExtraInfo: ExtraInfo{ResponseTokens: tokens(response), ThinkTokens: tokens(think), AnswerTokens: tokens(answer), TokenBudget: tokens(500)}}
		return s.Score(context.Background(), &it).Err
	}
	s := newTestScorer(t, func(c *Config) {
		c.Length.Tokenizer = wordCounter{}
		c.Length.CountSlack = 2
		c.Length.CountSlackFraction = 0.01
	})
	// response: 405 words, slack 2 + 4.05; thinking: 400, slack 6; answer: 3, slack 2.03
	cases := []struct {
		name                    string
		response, think, answer float64
		wantErr                 string
	}{
		{"exact", 405, 400, 3, ""},
		{"response at the slack below", 399, 394, 3, ""},
		{"response past the slack below", 398, 390, 3, "extra_info.response_tokens: 398, but rewards.length.tokenizer makes 405 tokens of solution_str"},
		{"response at the slack above", 411, 400, 3, ""},
		{"response past the slack above", 412, 400, 3, "extra_info.response_tokens: 412"},
		{"thinking past the slack below", 405, 393, 3, "extra_info.think_tokens: 393, but rewards.length.tokenizer makes 400 tokens of the thinking"},
		{"thinking at the slack above", 410, 406, 3, ""},
		{"answer past the slack above", 411, 400, 6, "extra_info.answer_tokens: 6, but rewards.length.tokenizer makes 3 tokens of the answer part"},
		{"answer at the slack below", 405, 400, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := score(s, tc.response, tc.think, tc.answer)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			assert.ErrorContains(t, err, "more than 2 + 1% off (rewards.length.count_slack, count_slack_fraction)")
		})
	}
	without := newTestScorer(t, nil)
	require.NoError(t, score(without, 300, 290, 3), "without a tokenizer only the bytes-per-token bound holds")
	broken := newTestScorer(t, func(c *Config) { c.Length.Tokenizer = wordCounter{fail: errors.New("pattern timed out")} })
	assert.ErrorContains(t, score(broken, 405, 400, 3), "extra_info.response_tokens: rewards.length.tokenizer cannot count solution_str: pattern timed out")
}

// TestTokenCountsWithARealTokenizer: the counts a Hugging Face tokenizer
// made of a text (package tokenizer's testdata, counted by tokenizers
// itself) are accepted, and a count of a tenth of them is refused.
func TestTokenCountsWithARealTokenizer(t *testing.T) {
	tok, err := tokenizer.Load(filepath.Join("..", "tokenizer", "testdata", "qwen2.json"))
	require.NoError(t, err)
	f, err := os.Open(filepath.Join("..", "tokenizer", "testdata", "texts.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	s := newTestScorer(t, func(c *Config) { c.Length.Tokenizer = tok; c.Length.CountSlack = 0; c.Length.CountSlackFraction = 0 })
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		var row struct {
			Text   string         `json:"text"`
			Counts map[string]int `json:"counts"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		n := row.Counts["qwen2"]
		if n < 20 || strings.Contains(row.Text, "</think>") || slices.ContainsFunc(DefaultStopStrings, func(stop string) bool { return strings.Contains(row.Text, stop) }) {
			continue // the scorer removes the stop strings at a response's end
		}
		seen++
		it := Item{DataSource: ThinkPrune.DataSource, SolutionStr: row.Text, GroundTruth: json.RawMessage(`"42"`),
			ExtraInfo: ExtraInfo{ResponseTokens: tokens(float64(n))}}
		require.NoError(t, s.Score(context.Background(), &it).Err, "%q in %d tokens", row.Text, n)
		it.ExtraInfo.ResponseTokens = tokens(float64(n / 10))
		require.ErrorContains(t, s.Score(context.Background(), &it).Err, "extra_info.response_tokens", "%q in %d tokens", row.Text, n/10)
	}
	require.NoError(t, sc.Err())
	require.Greater(t, seen, 100)
}

// TestThinkSplitsAtTheFirstClosingTag: a response with more than one
// closing think tag splits at the first, as vLLM's reasoning parsers and
// the Python adapter's token counts do: the thinking is what comes before
// it, and everything after it, later tags included, is the answer, whose
// last tagged answer the check reads.
func TestThinkSplitsAtTheFirstClosingTag(t *testing.T) {
	for _, tc := range []struct {
		name, in, think, answer string
		inPrompt                bool
	}{
		{"two closings", "<think>a</think>b</think>c", "a", "b</think>c", false},
		{"a closing inside the answer", "<think>a</think><answer>4</answer></think>", "a", "<answer>4</answer></think>", false},
		{"closings only, the opening in the prompt", "a</think>b</think>", "a", "b</think>", true},
		{"a second opening after the first closing", "<think>a</think><think>b</think>c", "a", "<think>b</think>c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			think, answer, tagged, closed := splitThink(tc.in, "<think>", "</think>", tc.inPrompt)
			assert.Equal(t, tc.think, think)
			assert.Equal(t, tc.answer, answer)
			assert.True(t, tagged)
			assert.True(t, closed)
		})
	}
	// Scored: the answer after the first closing tag is read, its last
	// tagged answer deciding, whatever a second thinking holds.
	runLengthCases(t, ThinkPrune, nil, []lengthCase{
		{name: "two closings, the last answer right", sol: "<think>a</think><answer>41</answer> no, </think><answer>42</answer>",
			ei: ExtraInfo{ResponseTokens: tokens(20)}, score: 1, within: 1},
		{name: "two closings, the last answer wrong", sol: "<think>a</think><answer>42</answer> no, </think><answer>41</answer>",
			ei: ExtraInfo{ResponseTokens: tokens(20)}, score: 0, within: 1},
	})
}
