package rewards

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// member is a group member of n tokens, right or wrong, in group "g" of
// size k.
func member(r *Reward, ok bool, n float64, k int) *Item {
	sol := wrong
	if ok {
		sol = right
	}
	return &Item{DataSource: r.DataSource, SolutionStr: sol, GroundTruth: json.RawMessage(`"42"`),
		ExtraInfo: ExtraInfo{ResponseTokens: tokens(n)}, Group: "g", GroupSize: k}
}

type groupCase struct {
	name    string
	right   []bool
	n       []float64
	scores  []float64
	details map[string][]float64 // a detail of every member
}

func runGroupCases(t *testing.T, r *Reward, mod func(*Config), cases []groupCase) {
	t.Helper()
	s := newTestScorer(t, mod)
	for _, tc := range cases {
		t.Run(r.DataSource+"/"+tc.name, func(t *testing.T) {
			members := make([]*Item, len(tc.n))
			for i := range tc.n {
				members[i] = member(r, tc.right[i], tc.n[i], len(tc.n))
			}
			res := s.ScoreGroup(context.Background(), r, members)
			require.Len(t, res, len(tc.n))
			for i := range res {
				require.NoError(t, res[i].Err)
				assert.InDelta(t, tc.scores[i], res[i].Score, 1e-12, "member %d", i)
				d := detailMap(r, res[i])
				for k, want := range tc.details {
					assert.InDelta(t, want[i], d[k], 1e-12, "member %d: %s", i, k)
				}
			}
		})
	}
}

// TestKimiByHand: Kimi k1.5's λ = 0.5 − (n − min)/(max − min), added to a
// right answer and, when negative, to a wrong one, worked by hand.
func TestKimiByHand(t *testing.T) {
	runGroupCases(t, Kimi, nil, []groupCase{
		// min 100, max 500: λ = 0.5, 0.25, 0, −0.5; the wrong 200 keeps
		// min(0, 0.25) = 0
		{name: "mixed", right: []bool{true, false, true, false}, n: []float64{100, 200, 300, 500}, scores: []float64{1.5, 0, 1, -0.5},
			details: map[string][]float64{"length_term": {0.5, 0, 0, -0.5}, "solve_rate": {0.5, 0.5, 0.5, 0.5}, "group_min_tokens": {100, 100, 100, 100},
				"group_max_tokens": {500, 500, 500, 500}, "shortest_correct_tokens": {100, 100, 100, 100}, "group_size": {4, 4, 4, 4}}},
		// a group of one: max = min, no length term
		{name: "a group of one", right: []bool{true}, n: []float64{300}, scores: []float64{1}},
		{name: "all of one length", right: []bool{true, false}, n: []float64{200, 200}, scores: []float64{1, 0}},
		// λ = 0.5, −0.5: the short wrong answer gains nothing
		{name: "all wrong", right: []bool{false, false}, n: []float64{100, 300}, scores: []float64{0, -0.5},
			details: map[string][]float64{"solve_rate": {0, 0}, "shortest_correct_tokens": {0, 0}}},
		{name: "all right", right: []bool{true, true, true}, n: []float64{100, 200, 300}, scores: []float64{1.5, 1, 0.5}},
	})
}

// TestShorterBetterByHand: α·c − β·|n − SOL| with α = 2, β = 0.001, SOL
// the shortest right response, or the mean length when none is right.
func TestShorterBetterByHand(t *testing.T) {
	runGroupCases(t, ShorterBetter, nil, []groupCase{
		// SOL 100: 2 − 0, 0 − 0.1, 2 − 0.2, 0 − 0.4
		{name: "mixed", right: []bool{true, false, true, false}, n: []float64{100, 200, 300, 500}, scores: []float64{2, -0.1, 1.8, -0.4},
			details: map[string][]float64{"length_term": {0, -0.1, -0.2, -0.4}, "shortest_correct_tokens": {100, 100, 100, 100}}},
		// none right: SOL is the mean, 200, and the short one pays too
		{name: "all wrong", right: []bool{false, false}, n: []float64{100, 300}, scores: []float64{-0.1, -0.1}},
		{name: "a group of one, right", right: []bool{true}, n: []float64{400}, scores: []float64{2}},
		{name: "a group of one, wrong", right: []bool{false}, n: []float64{400}, scores: []float64{0}},
		{name: "all of one length", right: []bool{true, false}, n: []float64{250, 250}, scores: []float64{2, 0}},
		// 2,500 tokens past SOL: 2 − 2.5, below a wrong answer at SOL
		{name: "right but far past SOL", right: []bool{true, false, true}, n: []float64{100, 100, 2600}, scores: []float64{2, 0, -0.5}},
	})
}

// TestALPByHand: c − (β/N)·max(p, 1/K)·n with β = 0.001 and N = 2 (so
// 0.0005 per token at full weight), p the group's solve rate, K its size.
func TestALPByHand(t *testing.T) {
	runGroupCases(t, ALP, func(c *Config) { c.Length.ALPBeta, c.Length.ALPNorm = 0.001, 2 }, []groupCase{
		// p = 0.5: 0.00025 per token, right and wrong alike
		{name: "mixed", right: []bool{true, false, true, false}, n: []float64{100, 200, 300, 500}, scores: []float64{0.975, -0.05, 0.925, -0.125},
			details: map[string][]float64{"length_term": {-0.025, -0.05, -0.075, -0.125}, "solve_rate": {0.5, 0.5, 0.5, 0.5}}},
		// all right: the full 0.0005 per token
		{name: "all right", right: []bool{true, true}, n: []float64{100, 400}, scores: []float64{0.95, 0.8}},
		// all wrong: p = 0, the floor 1/K = 1/4 of it
		{name: "all wrong", right: []bool{false, false, false, false}, n: []float64{400, 400, 800, 200}, scores: []float64{-0.05, -0.05, -0.1, -0.025}},
		// a group of one pays the full weight whatever its correctness
		{name: "a group of one, right", right: []bool{true}, n: []float64{1000}, scores: []float64{0.5}},
		{name: "a group of one, wrong", right: []bool{false}, n: []float64{1000}, scores: []float64{-0.5}},
		// one of four right: p = 1/4 equals the floor
		{name: "one of four", right: []bool{false, true, false, false}, n: []float64{200, 200, 200, 200}, scores: []float64{-0.025, 0.975, -0.025, -0.025}},
		// three of four: p = 0.75
		{name: "three of four, one length", right: []bool{true, true, true, false}, n: []float64{400, 400, 400, 400}, scores: []float64{0.85, 0.85, 0.85, -0.15}},
	})
}

// TestGroupItemsRefusesWhatIsNotAWholeGroup: a group key missing, a size
// below one, members that disagree on the size, the prompt, the budget or
// the answer check, a member missing or one too many are refused, naming
// the group and the field; items of other rewards pass untouched.
func TestGroupItemsRefusesWhatIsNotAWholeGroup(t *testing.T) {
	two := func(mod func(a, b *Item)) []Item {
		a, b := *member(Kimi, true, 100, 2), *member(Kimi, false, 200, 2)
		if mod != nil {
			mod(&a, &b)
		}
		return []Item{{DataSource: ThinkPrune.DataSource}, a, b}
	}
	groups, err := GroupItems(two(nil), nil)
	require.NoError(t, err)
	assert.Equal(t, []Group{{Reward: Kimi, Key: "g", Members: []int{1, 2}}}, groups)
	for _, tc := range []struct {
		name  string
		items []Item
		field string
		msg   string
	}{
		{"no key", two(func(a, _ *Item) { a.Group = "" }), "items[1].group", "items[1].group: missing: length/kimi scores the completions of one prompt together; give each its group key and group_size"},
		{"no size", two(func(a, b *Item) { a.GroupSize, b.GroupSize = 0, 0 }), "group_size", `group "g": group_size: 0: a group has at least one member`},
		{"sizes differ", two(func(_, b *Item) { b.GroupSize = 3 }), "group_size", `group "g": group_size: member 2 says 3, the first 2`},
		{"mixed prompts", two(func(_, b *Item) { b.GroundTruth = json.RawMessage(`"43"`) }), "ground_truth", `group "g": ground_truth: member 2 has another ground truth than the first: a group is the completions of one prompt`},
		{"mixed budgets", two(func(_, b *Item) { b.ExtraInfo.TokenBudget = tokens(9) }), "extra_info.token_budget", `group "g": extra_info.token_budget: member 2 has another budget than the first: a group is the completions of one prompt`},
		{"mixed checks", two(func(_, b *Item) { b.ExtraInfo.AnswerCheck = "timepuzzles" }), "extra_info.answer_check", `group "g": extra_info.answer_check: member 2 has another answer check than the first`},
		{"a member missing", two(func(a, b *Item) { a.GroupSize, b.GroupSize = 3, 3 }), "group_size", `group "g": group_size: 2 of its 3 members are given: a group is scored whole, its members together`},
		{"a member twice", append(two(nil), *member(Kimi, true, 100, 2)), "group_size", `group "g": group_size: 3 members for a group of 2: a member is given twice, or the key names two groups`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GroupItems(tc.items, nil)
			var ge *GroupError
			require.ErrorAs(t, err, &ge)
			assert.Equal(t, tc.field, ge.Field)
			assert.ErrorIs(t, err, ErrInvalidGroup)
			assert.ErrorIs(t, err, ErrInvalidItem)
			assert.EqualError(t, err, tc.msg)
		})
	}
	// A member the caller could not decode leaves its group short.
	_, err = GroupItems(two(nil), func(i int) bool { return i == 2 })
	assert.ErrorContains(t, err, "1 of its 2 members are given")
}

// TestScoreGroupFailsWholeOnABadMember: a member that cannot be scored
// fails every member, naming it, since the others' rewards depend on it;
// a lone item of a larger group is refused.
func TestScoreGroupFailsWholeOnABadMember(t *testing.T) {
	s := newTestScorer(t, nil)
	bad := member(Kimi, true, 200, 2)
	bad.ExtraInfo.ResponseTokens = nil
	res := s.ScoreGroup(context.Background(), Kimi, []*Item{member(Kimi, true, 100, 2), bad})
	for _, r := range res {
		require.ErrorIs(t, r.Err, ErrInvalidItem)
		assert.ErrorContains(t, r.Err, "member 1: extra_info.response_tokens: missing")
		assert.Equal(t, 0.0, r.Score)
		assert.Len(t, r.Details, len(Kimi.Keys))
	}
	lone := s.Score(context.Background(), member(ShorterBetter, true, 100, 4))
	assert.EqualError(t, lone.Err, "group_size: 4: length/shorterbetter scores the completions of one prompt together; send the group's members together (one POST /v1/score/batch, or one file to timeaware score)")
}

// TestGroupItemsTakesWholeGroups: a group of one, members that agree on a
// budget given to both, and two groups of one key under two rewards pass.
func TestGroupItemsTakesWholeGroups(t *testing.T) {
	one := *member(Kimi, true, 100, 1)
	a, b := *member(ShorterBetter, true, 100, 2), *member(ShorterBetter, false, 200, 2)
	a.ExtraInfo.TokenBudget, b.ExtraInfo.TokenBudget = tokens(300), tokens(300)
	groups, err := GroupItems([]Item{one, a, b}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Group{{Reward: Kimi, Key: "g", Members: []int{0}}, {Reward: ShorterBetter, Key: "g", Members: []int{1, 2}}}, groups)
	// One member with a budget and one without are two prompts.
	b.ExtraInfo.TokenBudget = nil
	_, err = GroupItems([]Item{a, b}, nil)
	assert.ErrorContains(t, err, "extra_info.token_budget: member 1 has another budget than the first")
	a.ExtraInfo.TokenBudget, b.ExtraInfo.TokenBudget = nil, tokens(300)
	_, err = GroupItems([]Item{a, b}, nil)
	assert.ErrorContains(t, err, "extra_info.token_budget: member 1 has another budget than the first")
}

// TestScoreGroupTrimsStopsAndRefusesNonFinite: members ending in a chat
// template's end-of-turn token score as without it, and a reward that
// gives a score or a detail that is not finite fails the group.
func TestScoreGroupTrimsStopsAndRefusesNonFinite(t *testing.T) {
	s := newTestScorer(t, nil)
	// 2 tokens hold the 56 bytes of a response, not the 66 with the
	// end-of-turn token: only the trimmed text passes the count's check.
	plain := []*Item{member(Kimi, true, 2, 2), member(Kimi, false, 300, 2)}
	ended := []*Item{member(Kimi, true, 2, 2), member(Kimi, false, 300, 2)}
	for _, it := range ended {
		it.SolutionStr += "<|im_end|>"
	}
	want := s.ScoreGroup(context.Background(), Kimi, plain)
	got := s.ScoreGroup(context.Background(), Kimi, ended)
	require.NoError(t, got[0].Err)
	assert.Equal(t, want, got)
	assert.Equal(t, 1.5, got[0].Score, "right and the shortest, its answer read through the end-of-turn token")

	for _, tc := range []struct {
		name          string
		score, detail float64
		ok            bool
	}{
		{"finite", 1, 2, true},
		{"a score that is not a number", math.NaN(), 2, false},
		{"an infinite detail", 1, math.Inf(1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &Reward{DataSource: "fake/group", Keys: []string{"x"},
				group: func(_ context.Context, _ *Scorer, m []*Item, d [][]float64) ([]float64, error) {
					d[0][0] = tc.detail
					return []float64{tc.score}, nil
				}}
			res := s.ScoreGroup(context.Background(), fake, []*Item{member(Kimi, true, 100, 1)})
			if tc.ok {
				require.NoError(t, res[0].Err)
				assert.Equal(t, 1.0, res[0].Score)
				return
			}
			assert.EqualError(t, res[0].Err, "rewards: fake/group: member 0: a score or detail is not finite")
			assert.Equal(t, []float64{0}, res[0].Details)
		})
	}
}

// TestKeyIndex: a detail key's index, the first included, and a panic at
// start for a key a reward does not have.
func TestKeyIndex(t *testing.T) {
	assert.Equal(t, 0, keyIndex(groupKeys, "correct"))
	assert.Equal(t, len(groupKeys)-1, keyIndex(groupKeys, "length_term"))
	assert.PanicsWithValue(t, "rewards: no detail key nope", func() { keyIndex(groupKeys, "nope") })
	assert.Equal(t, 0, Kimi.KeyIndex("correct"))
	assert.Equal(t, -1, Kimi.KeyIndex("nope"))
}
