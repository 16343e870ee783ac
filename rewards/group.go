package rewards

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The group-wise rewards score the completions of one prompt together, as
// GRPO forms its groups: a member's reward depends on the others' lengths
// and correctness (the group's shortest and longest response, its
// shortest correct one, its solve rate). Every member names its group
// (Item.Group) and the group's size (Item.GroupSize), and a group is
// scored whole, in one request: a group split across requests, missing a
// member, holding one too many or mixing prompts is refused, never scored
// as the smaller group it would look like.

// ErrInvalidGroup is wrapped by the errors of groups that cannot be scored
// whole: a member missing, one too many, a missing key or size, members
// of different prompts.
var ErrInvalidGroup = errors.New("invalid group")

// GroupError names the group, and the field, that made a request's groups
// unscorable.
type GroupError struct {
	Group string
	Field string
	Err   error
}

func (e *GroupError) Error() string {
	if e.Group == "" {
		return e.Field + ": " + e.Err.Error()
	}
	return fmt.Sprintf("group %q: %s: %v", e.Group, e.Field, e.Err)
}

// Unwrap lets errors.Is match ErrInvalidGroup and ErrInvalidItem.
func (e *GroupError) Unwrap() []error { return []error{e.Err, ErrInvalidGroup, ErrInvalidItem} }

// Group is one group of a batch: the indices of its members among the
// items, in order, and the reward that scores them.
type Group struct {
	Reward  *Reward
	Key     string
	Members []int
}

// GroupItems finds the groups of the items whose data source is scored
// group-wise, in the order their first members come, and checks each is
// whole: every member carries the key and the size, the group has exactly
// that many members, and they share the prompt's ground truth, budgets and
// answer check. skip marks items left out (those that could not be
// decoded), nil for none; a group with a skipped member is not whole.
func GroupItems(items []Item, skip func(i int) bool) ([]Group, error) {
	var groups []Group
	index := map[[2]string]int{}
	for i := range items {
		it := &items[i]
		r, ok := Lookup(it.DataSource)
		if !ok || !r.Grouped() || skip != nil && skip(i) {
			continue
		}
		if it.Group == "" {
			return nil, &GroupError{Field: fmt.Sprintf("items[%d].group", i),
				Err: fmt.Errorf("missing: %s scores the completions of one prompt together; give each its group key and group_size", r.DataSource)}
		}
		k := [2]string{r.DataSource, it.Group}
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, Group{Reward: r, Key: it.Group})
		}
		groups[g].Members = append(groups[g].Members, i)
	}
	for _, g := range groups {
		if err := checkGroup(items, g); err != nil {
			return nil, err
		}
	}
	return groups, nil
}

// checkGroup checks that a group is whole and of one prompt.
func checkGroup(items []Item, g Group) error {
	first := &items[g.Members[0]]
	bad := func(field, format string, args ...any) error {
		return &GroupError{Group: g.Key, Field: field, Err: fmt.Errorf(format, args...)}
	}
	size := first.GroupSize
	if size < 1 {
		return bad("group_size", "%d: a group has at least one member", size)
	}
	for _, i := range g.Members[1:] {
		if err := sameGroup(first, &items[i], i, size, bad); err != nil {
			return err
		}
	}
	n := len(g.Members)
	if n < size {
		return bad("group_size", "%d of its %d members are given: a group is scored whole, its members together", n, size)
	}
	if n > size {
		return bad("group_size", "%d members for a group of %d: a member is given twice, or the key names two groups", n, size)
	}
	return nil
}

// sameGroup checks that item i says what the group's first member says:
// its size, ground truth, budget and answer check.
func sameGroup(first, it *Item, i, size int, bad func(field, format string, args ...any) error) error {
	if it.GroupSize != size {
		return bad("group_size", "member %d says %d, the first %d", i, it.GroupSize, size)
	}
	if !bytes.Equal(bytes.TrimSpace(it.GroundTruth), bytes.TrimSpace(first.GroundTruth)) {
		return bad("ground_truth", "member %d has another ground truth than the first: a group is the completions of one prompt", i)
	}
	if !sameNumber(it.ExtraInfo.TokenBudget, first.ExtraInfo.TokenBudget) {
		return bad("extra_info.token_budget", "member %d has another budget than the first: a group is the completions of one prompt", i)
	}
	if it.ExtraInfo.AnswerCheck != first.ExtraInfo.AnswerCheck {
		return bad("extra_info.answer_check", "member %d has another answer check than the first", i)
	}
	return nil
}

func sameNumber(a, b *float64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// ScoreGroup scores the members of one whole group (see GroupItems) with
// a group-wise reward, one Result each. A member that cannot be scored
// fails the whole group, each member's error naming it: the others'
// rewards depend on it.
func (s *Scorer) ScoreGroup(ctx context.Context, r *Reward, members []*Item) (out []Result) {
	out = make([]Result, len(members))
	details := make([][]float64, len(members))
	for i := range details {
		details[i] = make([]float64, len(r.Keys))
	}
	fail := func(err error) []Result {
		for i := range out {
			out[i] = Result{Score: s.cfg.FallbackScore, Details: make([]float64, len(r.Keys)), Err: err}
		}
		return out
	}
	defer func() {
		if p := recover(); p != nil {
			out = fail(fmt.Errorf("rewards: %s: internal error: %v", r.DataSource, p))
		}
	}()
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	trimmed := make([]*Item, len(members))
	for i, it := range members {
		trimmed[i] = s.withoutStops(it)
	}
	scores, err := r.group(ctx, s, trimmed, details)
	for i := 0; err == nil && i < len(scores); i++ {
		if !finite(scores[i]) || !allFinite(details[i]) {
			err = fmt.Errorf("rewards: %s: member %d: a score or detail is not finite", r.DataSource, i)
		}
	}
	if err != nil {
		return fail(err)
	}
	for i := range out {
		out[i] = Result{Score: scores[i], Details: details[i]}
	}
	return out
}

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if !finite(x) {
			return false
		}
	}
	return true
}

// groupKeys are the details of the group-wise length rewards: those of
// the other length rewards, and
//
//	group_size               K, the members of the group
//	solve_rate               the group's mean correctness
//	group_min_tokens         the shortest response of the group
//	group_max_tokens         the longest
//	shortest_correct_tokens  the shortest fully right response (0: none)
//	length_term              the member's length term of the reward
var groupKeys = append(append([]string(nil), lengthKeys...),
	"group_size", "solve_rate", "group_min_tokens", "group_max_tokens", "shortest_correct_tokens", "length_term")

// The indices of the group details among groupKeys.
var (
	gSize            = keyIndex(groupKeys, "group_size")
	gSolveRate       = keyIndex(groupKeys, "solve_rate")
	gMin             = keyIndex(groupKeys, "group_min_tokens")
	gMax             = keyIndex(groupKeys, "group_max_tokens")
	gShortestCorrect = keyIndex(groupKeys, "shortest_correct_tokens")
	gTerm            = keyIndex(groupKeys, "length_term")
)

// keyIndex is the index of key among keys; it panics, at start, on a key
// that is not there.
func keyIndex(keys []string, key string) int {
	if i := slices.Index(keys, key); i >= 0 {
		return i
	}
	panic("rewards: no detail key " + key)
}

// groupStats are what the group-wise rewards read of a group.
type groupStats struct {
	c, n                   []float64 // each member's correctness and tokens
	solveRate, minN, maxN  float64
	shortestCorrect, meanN float64
	anyCorrect             bool
}

// scoreMembers checks and scores each member's correctness and counts (as
// the other length rewards do, against the shared token budget when there
// is one) and gathers the group's statistics into every member's details.
func (s *Scorer) scoreMembers(ctx context.Context, members []*Item, d [][]float64) (*groupStats, error) {
	g := &groupStats{c: make([]float64, len(members)), n: make([]float64, len(members)), minN: math.Inf(1), maxN: math.Inf(-1),
		shortestCorrect: math.Inf(1)}
	for i, it := range members {
		budget, given, err := tokenField("token_budget", it.ExtraInfo.TokenBudget, 1)
		if err != nil {
			return nil, memberError(i, err)
		}
		if !given {
			budget = math.Inf(1)
		}
		c, _, err := s.scoreLength(ctx, it, budget, d[i])
		if err != nil {
			return nil, memberError(i, err)
		}
		if !given {
			d[i][lBudget], d[i][lOvershoot] = 0, 0
		}
		n := d[i][lResponse]
		g.c[i], g.n[i] = c, n
		g.solveRate += c
		g.meanN += n
		g.minN, g.maxN = min(g.minN, n), max(g.maxN, n)
		if c == 1 {
			g.shortestCorrect, g.anyCorrect = min(g.shortestCorrect, n), true
		}
	}
	k := float64(len(members))
	g.solveRate /= k
	g.meanN /= k
	for i := range d {
		d[i][gSize], d[i][gSolveRate], d[i][gMin], d[i][gMax] = k, g.solveRate, g.minN, g.maxN
		if g.anyCorrect {
			d[i][gShortestCorrect] = g.shortestCorrect
		}
	}
	return g, nil
}

// memberError names the member whose item made its group unscorable.
func memberError(i int, err error) error {
	return fmt.Errorf("member %d: %w", i, err)
}

// Kimi is Kimi k1.5's length reward ("Kimi k1.5: Scaling Reinforcement
// Learning with LLMs", §2.3.3 "Length Penalty"), group-relative: with
// min_len and max_len the group's shortest and longest responses,
//
//	λ_i = 0.5 − (n_i − min_len)/(max_len − min_len), 0 for all when max_len = min_len
//	r_i = c_i + w·(c_i·λ_i + (1 − c_i)·min(0, λ_i))
//
// so a right answer earns from +0.5 (the shortest) to −0.5 (the longest)
// and a wrong one never gains from being short. The paper adds the length
// reward to the correctness reward "with a weighting parameter" it does not
// give; w = LengthConfig.KimiWeight defaults to 1, the weight a trainer
// gives a reward function it is not told otherwise. The paper switches
// the penalty on after a warm-up, which a user does by changing the rows'
// data source between runs. A group of one, or of one length, gets no
// length term.
var Kimi = &Reward{
	DataSource:  "length/kimi",
	Summary:     "Kimi k1.5: correctness plus a length term from +0.5 (the group's shortest) to −0.5 (its longest), never positive for a wrong answer",
	GroundTruth: lengthGroundTruth,
	Keys:        groupKeys,
	group:       scoreKimi,
}

func scoreKimi(ctx context.Context, s *Scorer, members []*Item, d [][]float64) ([]float64, error) {
	g, err := s.scoreMembers(ctx, members, d)
	if err != nil {
		return nil, err
	}
	w := s.cfg.Length.KimiWeight
	out := make([]float64, len(members))
	for i := range members {
		lambda := 0.0
		if g.maxN > g.minN {
			lambda = 0.5 - (g.n[i]-g.minN)/(g.maxN-g.minN)
		}
		term := g.c[i]*lambda + (1-g.c[i])*min(0, lambda)
		d[i][gTerm] = term
		out[i] = g.c[i] + w*term
	}
	return out, nil
}

// ShorterBetter is the ShorterBetter reward ("ShorterBetter: Guiding
// Reasoning Models to Find Optimal Inference Length for Efficient
// Reasoning"): the group's sample optimal length (SOL) is its shortest
// fully right response, or the group's mean length when none is right, and
//
//	r_i = α·c_i − β·|n_i − SOL|
//
// with α = LengthConfig.ShorterBetterAlpha (2) and β =
// LengthConfig.ShorterBetterBeta (0.001), the values of the authors'
// released reward (verl/workers/reward_manager/naive.py, sb_compute_score),
// which its README gives as the defaults. As there, a wrong answer shorter
// than SOL is penalised too, and the penalty has no floor.
var ShorterBetter = &Reward{
	DataSource:  "length/shorterbetter",
	Summary:     "ShorterBetter: α·correctness minus β·|n − SOL|, SOL the group's shortest right response (its mean length when none is right)",
	GroundTruth: lengthGroundTruth,
	Keys:        groupKeys,
	group:       scoreShorterBetter,
}

// ALP is the Adaptive Length Penalty ("Just Enough Thinking: Efficient
// Reasoning with Adaptive Length Penalties Reinforcement Learning", the
// reward of its §3): with p the group's solve rate (its mean correctness)
// and K its size,
//
//	r_i = c_i − (β/N)·max(p, 1/K)·n_i
//
// so a prompt the group mostly solves pays the most per token and a hard
// one the least, though never less than 1/K of it; right and wrong
// responses pay alike. β = LengthConfig.ALPBeta and N =
// LengthConfig.ALPNorm. The paper calls N a normalisation constant and β
// a global coefficient; no code of the authors' could be found, and the
// values of β and N could not be read from the paper here: secondary
// accounts give β = 1e-7, read as a coefficient per token, which the
// defaults take (β = 1e-7, N = 1). Under GRPO's normalisation within the
// group such a small term matters where correctness does not vary, as in
// a group that solved the prompt every time, which is where the paper
// means it to act. A group of one pays the full weight, max(p, 1) = 1.
var ALP = &Reward{
	DataSource:  "length/alp",
	Summary:     "ALP: correctness minus (β/N)·max(solve rate, 1/K)·length, the group's solve rate scaling the penalty per token",
	GroundTruth: lengthGroundTruth,
	Keys:        groupKeys,
	group:       scoreALP,
}

func scoreALP(ctx context.Context, s *Scorer, members []*Item, d [][]float64) ([]float64, error) {
	g, err := s.scoreMembers(ctx, members, d)
	if err != nil {
		return nil, err
	}
	weight := max(g.solveRate, 1/float64(len(members)))
	perToken := s.cfg.Length.ALPBeta / s.cfg.Length.ALPNorm * weight
	out := make([]float64, len(members))
	for i := range members {
		d[i][gTerm] = -perToken * g.n[i]
		out[i] = g.c[i] + d[i][gTerm]
	}
	return out, nil
}

func scoreShorterBetter(ctx context.Context, s *Scorer, members []*Item, d [][]float64) ([]float64, error) {
	g, err := s.scoreMembers(ctx, members, d)
	if err != nil {
		return nil, err
	}
	sol := g.meanN
	if g.anyCorrect {
		sol = g.shortestCorrect
	}
	alpha, beta := s.cfg.Length.ShorterBetterAlpha, s.cfg.Length.ShorterBetterBeta
	out := make([]float64, len(members))
	for i := range members {
		d[i][gTerm] = -beta * math.Abs(g.n[i]-sol)
		out[i] = alpha*g.c[i] + d[i][gTerm]
	}
	return out, nil
}
