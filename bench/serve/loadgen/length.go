package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/tokenizer"
)

// The length rewards (length/lcpo_exact, lcpo_max, thinkprune, elastic,
// anytime, and the group-wise kimi and shorterbetter) are measured on the
// timely/general corpus re-labelled for each: the same response texts and
// ground truths (for a group-wise reward, see below), with the token counts
// a trainer would send in extra_info. The counts are derived from the text,
// deterministically: by default one token per bytesPerToken bytes,
// rounded, and at least one for a part with text, so that they agree with
// the text as the rewards check it; with -tokenizer, the tokenizer's own
// count of each part, for a server given the same tokenizer.json. The
// budgets are drawn from the corpus seed, on a stream of their own (the
// base corpus is unchanged), so that some responses run over them.
//
// A group-wise reward scores the completions of one prompt together, so
// its corpus is cut into groups of -group-size consecutive items (8 by
// default, GRPO's usual n), keyed "g<k>" for the k-th group: the members
// keep their responses' reasoning, and so their varied lengths, but answer
// one problem drawn for the group (on a stream of its own), right where the
// base item's answer is right and wrong where it is wrong, and share its
// ground truth and one token_budget. Every request then carries whole
// groups (batchBodies).

// bytesPerToken is the text's bytes per token of the derived counts.
const bytesPerToken = 4

// Think tags of the corpus (and the rewards' default rewards.length keys).
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// lengthStream is xored into the corpus seed for the budgets' stream.
const lengthStream = 0x5851f42d4c957f2d

// groupStream is xored into the corpus seed for the groups' problems.
const groupStream = 0x2545f4914f6cdd1d

// anytimeBudgets is the number of budgets of each length/anytime item.
const anytimeBudgets = 4

// lengthRewards lists the rewards -reward accepts besides timely/general.
var lengthRewards = []*rewards.Reward{rewards.LCPOExact, rewards.LCPOMax, rewards.ThinkPrune, rewards.Elastic, rewards.Anytime,
	rewards.Kimi, rewards.ShorterBetter, rewards.ALP}

// defaultGroupSize is -group-size's default: GRPO's usual n.
const defaultGroupSize = 8

type anytimeEntry struct {
	Budget  int    `json:"budget"`
	Summary string `json:"summary"`
}

type lengthExtraInfo struct {
	Index          int            `json:"index"`
	Split          string         `json:"split"`
	AnswerCheck    string         `json:"answer_check"`
	ResponseTokens int            `json:"response_tokens"`
	ThinkTokens    int            `json:"think_tokens"`
	AnswerTokens   int            `json:"answer_tokens"`
	TokenBudget    *int           `json:"token_budget,omitempty"`
	ThinkBudget    *int           `json:"think_budget,omitempty"`
	AnswerBudget   *int           `json:"answer_budget,omitempty"`
	Anytime        []anytimeEntry `json:"anytime,omitempty"`
}

type lengthItemJSON struct {
	DataSource  string          `json:"data_source"`
	SolutionStr string          `json:"solution_str"`
	GroundTruth json.RawMessage `json:"ground_truth"`
	ExtraInfo   lengthExtraInfo `json:"extra_info"`
	Group       string          `json:"group,omitempty"`
	GroupSize   int             `json:"group_size,omitempty"`
}

// tokenCounter counts the tokens of a part of a response.
type tokenCounter interface {
	Count(text string) (int, error)
}

// byteCounter is the default count: len/bytesPerToken, rounded, and at
// least 1 when the text is not all white space.
type byteCounter struct{}

func (byteCounter) Count(s string) (int, error) {
	n := (len(s) + bytesPerToken/2) / bytesPerToken
	if n == 0 && strings.TrimSpace(s) != "" {
		n = 1
	}
	return n, nil
}

// tokensOf is tc's count of s; byteCounter's never fails, and a tokenizer
// that fails is reported by relabel's check of the item.
func tokensOf(tc tokenCounter, s string) int {
	n, _ := tc.Count(s)
	return n
}

// splitCounts derives response_tokens, think_tokens and answer_tokens of a
// response. The thinking is the text between the opening think tag and
// the first closing one, the answer the text after it; a response without
// think tags has no thinking and is all answer. A response whose thinking
// never closes (the corpus has none) has no answer part.
func splitCounts(tc tokenCounter, s string) (response, think, answer int) {
	response = tokensOf(tc, s)
	i := strings.Index(s, thinkClose)
	if i < 0 {
		if j := strings.Index(s, thinkOpen); j >= 0 {
			return response, tokensOf(tc, s[j+len(thinkOpen):]), 0
		}
		return response, 0, response
	}
	th := s[:i]
	if j := strings.Index(th, thinkOpen); j >= 0 {
		th = th[j+len(thinkOpen):]
	}
	return response, tokensOf(tc, th), tokensOf(tc, s[i+len(thinkClose):])
}

// answerTail is the last paragraph of a corpus response: its final
// answer, in its tag when it has one ("<answer>3/4</answer>").
func answerTail(s string) string {
	return s[strings.LastIndex(s, "\n\n")+2:]
}

// lengthDraws are one item's budgets, drawn whatever the reward, so that
// every reward of a run sees the same budgets for the same item.
type lengthDraws struct {
	token, think, answer int
	anytime              [anytimeBudgets]int
	// summaryOf[j] is the corpus item whose answer is the summary at the
	// j-th anytime budget; the last is always the item itself.
	summaryOf [anytimeBudgets]int
}

// drawLength draws item i's budgets. Responses run 270 to 791 derived
// tokens: token_budget (256 to 768) and think_budget (256 to 768) leave
// about half of them over; answer_budget (32 to 1,024) leaves the short
// answers after a thinking within it and some of the responses without
// thinking (all answer) over it.
func drawLength(r *rand.Rand, i, n int) lengthDraws {
	d := lengthDraws{token: 64 * (4 + r.IntN(9)), think: 64 * (4 + r.IntN(9)), answer: 32 << r.IntN(6)}
	b := 0
	for j := range anytimeBudgets {
		b += 64 * (1 + r.IntN(4))
		d.anytime[j] = b
		d.summaryOf[j] = i
		if other := r.IntN(2*n) - n; j < anytimeBudgets-1 && other >= 0 {
			d.summaryOf[j] = other // half of the earlier answers come from another item
		}
	}
	return d
}

// lookupBenchReward returns the reward -reward names.
func lookupBenchReward(name string) (*rewards.Reward, error) {
	if name == rewards.TimelyGeneral.DataSource {
		return rewards.TimelyGeneral, nil
	}
	names := []string{rewards.TimelyGeneral.DataSource}
	for _, r := range lengthRewards {
		if r.DataSource == name {
			return r, nil
		}
		names = append(names, r.DataSource)
	}
	return nil, fmt.Errorf("-reward %q: want one of %s", name, strings.Join(names, ", "))
}

// withAnswer is a group member's response: s, the base item's, with its
// final answer replaced by final, in the answer tag; a response whose
// answer is meant not to parse (wantFmt false) is kept as it is, its
// answer wrong whatever the ground truth.
func withAnswer(s, final string, wantFmt bool) string {
	if !wantFmt {
		return s
	}
	return s[:strings.LastIndex(s, "\n\n")+2] + "<answer>" + final + "</answer>"
}

// groupBatch is the batch size -batch gives for a corpus of a group-wise
// reward: rounded down to whole groups, one group at least, and no more
// than the corpus, so that no request splits a group or holds one twice.
// Other rewards keep batch.
func groupBatch(batch int, cp *corpus) int {
	if cp.groupSize <= 1 {
		return batch
	}
	g := cp.groupSize
	return max(g, min(batch, len(cp.items))/g*g)
}

// relabel builds the corpus of a length reward from the timely/general
// corpus base (built with seed), every item scored by the in-process Go
// scorer, a group-wise reward's items in groups of groupSize, each group
// scored whole (Scorer.ScoreGroup) as the server scores it. It fails when
// the reward refuses an item, since the benchmark would then measure the
// error path, when an item's correctness (c, the timely/general answer
// check of the answer part; the answer at the largest budget for anytime)
// is not the base item's acc, and, for a group-wise reward, when groupSize
// does not divide the corpus.
func relabel(base *corpus, r *rewards.Reward, seed uint64, tc tokenCounter, groupSize int) (*corpus, error) {
	cfg := rewards.DefaultConfig()
	if tok, ok := tc.(*tokenizer.Tokenizer); ok {
		cfg.Length.Tokenizer = tok // as the server given -tokenizer's file checks the counts
	}
	scorer, err := rewards.NewScorer(cfg, nil)
	if err != nil {
		return nil, err
	}
	correctIdx, withinIdx := r.KeyIndex("correct"), r.KeyIndex("within_budget")
	n := len(base.items)
	grouped := r.Grouped()
	if grouped && (groupSize < 1 || n%groupSize != 0) {
		return nil, fmt.Errorf("%s: -group-size %d does not divide the corpus's %d items; a group is scored whole", r.DataSource, groupSize, n)
	}
	tails := make([]string, n)
	type baseItem struct {
		SolutionStr string          `json:"solution_str"`
		GroundTruth json.RawMessage `json:"ground_truth"`
		ExtraInfo   struct {
			Index int    `json:"index"`
			Split string `json:"split"`
		} `json:"extra_info"`
	}
	bases := make([]baseItem, n)
	for i, it := range base.items {
		if err := json.Unmarshal(it.line, &bases[i]); err != nil {
			return nil, fmt.Errorf("corpus item %d: %v", i, err)
		}
		tails[i] = answerTail(bases[i].SolutionStr)
	}
	rng := rand.New(rand.NewPCG(seed, seed^lengthStream))
	grng := rand.New(rand.NewPCG(seed, seed^groupStream))
	c := &corpus{items: make([]corpusItem, n), reward: r, formatFails: base.formatFails}
	if grouped {
		c.groupSize = groupSize
	}
	h := fnv.New64a()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ctx := context.Background()

	// record checks item i's result and adds it to the corpus's figures.
	record := func(i int, res rewards.Result) error {
		ci := &c.items[i]
		if res.Err != nil {
			return fmt.Errorf("corpus item %d: %s refuses it: %v", i, r.DataSource, res.Err)
		}
		if got := res.Details[correctIdx] == 1; got != ci.wantAcc {
			return fmt.Errorf("corpus item %d: %s says correct=%v, the timely/general item acc=%v", i, r.DataSource, got, ci.wantAcc)
		}
		ci.expected = res.Score
		if withinIdx >= 0 && res.Details[withinIdx] == 0 {
			c.overBudget++
		}
		c.scoreSum += res.Score
		if ci.wantAcc {
			c.correct++
		}
		return nil
	}

	var (
		p       problem         // the group's problem
		groupGT json.RawMessage // and its ground truth
		budget  int             // the group's token_budget
		members []rewards.Item  // the group's items so far
	)
	for i, b := range bases {
		d := drawLength(rng, i, n)
		text, gt, key, size := b.SolutionStr, b.GroundTruth, "", 0
		if grouped {
			if i%groupSize == 0 {
				p = genProblem(grng)
				if groupGT, err = json.Marshal(p.gt); err != nil {
					return nil, err
				}
				budget, members = d.token, members[:0]
			}
			forms := p.wrong
			if base.items[i].wantAcc {
				forms = p.right
			}
			text = withAnswer(text, forms[grng.IntN(len(forms))], base.items[i].wantFmt)
			gt, key, size = groupGT, "g"+itoa(i/groupSize), groupSize
		}
		resp, think, answer := splitCounts(tc, text)
		if think+answer > resp {
			return nil, fmt.Errorf("corpus item %d: think_tokens %d + answer_tokens %d exceed response_tokens %d", i, think, answer, resp)
		}
		ei := lengthExtraInfo{Index: b.ExtraInfo.Index, Split: b.ExtraInfo.Split, AnswerCheck: rewards.TimelyGeneral.DataSource,
			ResponseTokens: resp, ThinkTokens: think, AnswerTokens: answer}
		switch r {
		case rewards.LCPOExact, rewards.LCPOMax, rewards.ThinkPrune:
			ei.TokenBudget = &d.token
		case rewards.Elastic:
			ei.ThinkBudget, ei.AnswerBudget = &d.think, &d.answer
		case rewards.Anytime:
			for j := range anytimeBudgets {
				ei.Anytime = append(ei.Anytime, anytimeEntry{Budget: d.anytime[j], Summary: tails[d.summaryOf[j]]})
			}
		case rewards.Kimi, rewards.ShorterBetter, rewards.ALP:
			ei.TokenBudget = &budget
		default:
			return nil, fmt.Errorf("%s is not a length reward", r.DataSource)
		}
		buf.Reset()
		if err := enc.Encode(lengthItemJSON{DataSource: r.DataSource, SolutionStr: text, GroundTruth: gt, ExtraInfo: ei,
			Group: key, GroupSize: size}); err != nil {
			return nil, err
		}
		c.items[i] = corpusItem{line: bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n")), wantAcc: base.items[i].wantAcc, wantFmt: base.items[i].wantFmt}
		c.bytes += len(c.items[i].line) + 1
		h.Write(c.items[i].line)
		h.Write([]byte{'\n'})
		var it rewards.Item
		if err := json.Unmarshal(c.items[i].line, &it); err != nil {
			return nil, err
		}
		if !grouped {
			if err := record(i, scorer.ScoreWith(ctx, r, &it)); err != nil {
				return nil, err
			}
			continue
		}
		if members = append(members, it); len(members) < groupSize {
			continue
		}
		// The group is whole: check it as the server does, and score it.
		if _, err := rewards.GroupItems(members, nil); err != nil {
			return nil, fmt.Errorf("corpus items %d to %d: %v", i+1-groupSize, i, err)
		}
		ptrs := make([]*rewards.Item, groupSize)
		for j := range members {
			ptrs[j] = &members[j]
		}
		for j, res := range scorer.ScoreGroup(ctx, r, ptrs) {
			if err := record(i+1-groupSize+j, res); err != nil {
				return nil, err
			}
		}
	}
	c.hash = h.Sum64()
	return c, nil
}
