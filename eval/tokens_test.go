package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
)

// lengthRow is a row of a length reward asking "question i", whose plain
// answer check wants <answer>42</answer>; extra is merged into its
// extra_info.
func lengthRow(source string, i int, extra map[string]any) map[string]any {
	ei := map[string]any{"request_id": fmt.Sprintf("q%d", i)}
	for k, v := range extra {
		ei[k] = v
	}
	return map[string]any{
		"data_source":  source,
		"prompt":       []any{map[string]any{"role": "user", "content": fmt.Sprintf("question %d: what is 6 x 7?", i)}},
		"reward_model": map[string]any{"style": "rule", "ground_truth": "42"},
		"extra_info":   ei,
	}
}

// scripted is one scripted reply of a length test: its length in tokens
// and whether its answer is right.
type scripted struct {
	budget any // the row's extra_info.token_budget; nil: none
	tokens int
	right  bool
}

// TestTokenBudgetMetricsOfAScriptedModel: a model whose replies have
// known lengths (usage.completion_tokens) on thinkprune rows with known
// budgets. Worked by hand, overshoot = max(0, n − budget):
//
//	budget 100: n 80, 100, 101, 150 → within 1, 1, 0, 0 (½), overshoot
//	            0, 0, 1, 50 (mean 12.75; sorted, p90 at position
//	            0.9 × 3 = 2.7: 1 + 0.7 × 49 = 35.3); right 1, 1, 0, 1 (¾)
//	budget 200: n 50, 250, 300 → within 1, 0, 0 (⅓), overshoot 0, 50, 100
//	            (mean 50; p90 at 1.8: 50 + 0.8 × 50 = 90); right 0, 1, 1
//	no budget:  the configured limit, 4000: n 10 → within, overshoot 0
//
// All eight: within 4/8; overshoot 0 0 0 0 1 50 50 100 sorted, mean
// 201/8 = 25.125, p90 at 0.9 × 7 = 6.3: 50 + 0.3 × 50 = 65.
func TestTokenBudgetMetricsOfAScriptedModel(t *testing.T) {
	plan := []scripted{
		{100, 80, true}, {100, 100, true}, {100, 101, false}, {100, 150, true},
		{200, 50, false}, {200, 250, true}, {200, 300, true},
		{nil, 10, true},
	}
	var rows []any
	for i, p := range plan {
		extra := map[string]any{}
		if p.budget != nil {
			extra["token_budget"] = p.budget
		}
		rows = append(rows, lengthRow(rewards.ThinkPrune.DataSource, i, extra))
	}
	srv := newScript(t, func(req wireReq) answer {
		var i int
		fmt.Sscanf(lastUser(req), "question %d", &i)
		text := "<answer>41</answer>"
		if plan[i].right {
			text = "Six sevens.\n<answer>42</answer>"
		}
		n := plan[i].tokens
		return answer{text: text, tokens: &n}
	})
	parsed, err := ReadRows(writeRows(t, rows...))
	require.NoError(t, err)
	require.NoError(t, CheckRows(parsed, rewards.DefaultConfig()))
	cache := t.TempDir()
	res, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, cache), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	for i, r := range res {
		require.Empty(t, r.Error, "row %d", i)
		assert.Equal(t, float64(plan[i].tokens), r.Details["response_tokens"], "row %d", i)
	}
	assert.Equal(t, map[string]string{"token_budget": "4000"}, res[7].Labels, "labelled by the limit the reward applied")

	rep := Summarize(res, ReportOptions{Seed: 7})
	sr := rep.DataSources[rewards.ThinkPrune.DataSource]
	require.NotNil(t, sr)
	assert.Equal(t, 8, sr.N)
	assert.InDelta(t, 0.5, sr.Metrics["within_budget"].Mean, 1e-12)
	assert.InDelta(t, 25.125, sr.Metrics["overshoot_tokens"].Mean, 1e-12)
	assert.InDelta(t, 65, sr.Metrics["overshoot_p90"].Mean, 1e-12)
	assert.InDelta(t, 6.0/8, sr.Metrics["correct"].Mean, 1e-12)

	for _, tc := range []struct {
		group                  string
		n                      int
		within, mean, p90, acc float64
	}{
		{"token_budget=100", 4, 0.5, 12.75, 35.3, 0.75},
		{"token_budget=200", 3, 1.0 / 3, 50, 90, 2.0 / 3},
		{"token_budget=4000", 1, 1, 0, 0, 1},
	} {
		g := sr.Groups[tc.group]
		require.NotNil(t, g, tc.group)
		assert.Equal(t, tc.n, g.N, tc.group)
		assert.InDelta(t, tc.within, g.Metrics["within_budget"].Mean, 1e-12, tc.group)
		assert.InDelta(t, tc.mean, g.Metrics["overshoot_tokens"].Mean, 1e-12, tc.group)
		assert.InDelta(t, tc.p90, g.Metrics["overshoot_p90"].Mean, 1e-12, tc.group)
		assert.InDelta(t, tc.acc, g.Metrics["correct"].Mean, 1e-12, tc.group)
		for _, m := range []string{"correct", "within_budget", "overshoot_tokens", "overshoot_p90"} {
			iv := g.Metrics[m]
			assert.LessOrEqual(t, iv.CI95[0], iv.Mean, "%s %s", tc.group, m)
			assert.GreaterOrEqual(t, iv.CI95[1], iv.Mean, "%s %s", tc.group, m)
		}
	}
	require.Len(t, sr.Curve, 3)
	assert.Equal(t, []float64{100, 200, 4000}, []float64{sr.Curve[0].Budget, sr.Curve[1].Budget, sr.Curve[2].Budget})
	assert.Equal(t, sr.Groups["token_budget=100"].Metrics["correct"], sr.Curve[0].Accuracy)
	assert.Equal(t, sr.Groups["token_budget=200"].Metrics["within_budget"], sr.Curve[1].WithinBudget)
	text := rep.Text()
	assert.Contains(t, text, "  accuracy against token budget\n")
	assert.Regexp(t, `\n\s+100\s+4\s+0\.7500\s+\[\d\.\d{4}, \d\.\d{4}\]\s+0\.5000\n`, text)
	assert.Less(t, strings.Index(text, "token_budget=200 ("), strings.Index(text, "token_budget=4000 ("), "budgets in numeric order")

	// From the cache: the same counts, nothing asked again.
	hits := srv.hits.Load()
	again, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, cache), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	assert.Equal(t, hits, srv.hits.Load())
	for i := range res {
		assert.True(t, again[i].Cached)
		assert.Equal(t, res[i].Details, again[i].Details, "row %d", i)
	}
	// Compared with itself, the p90 pairs row by row: no difference.
	cmp, err := Compare(res, again, ReportOptions{Seed: 3})
	require.NoError(t, err)
	d := cmp.DataSources[rewards.ThinkPrune.DataSource].Metrics["overshoot_p90"]
	assert.InDelta(t, 65, d.A, 1e-9)
	assert.Equal(t, d.A, d.B)
	assert.Equal(t, Difference{A: d.A, B: d.B}, d, "no difference, a point interval")
}

// TestTokenCountsOfReasoningReplies: a reply whose reasoning the server
// split out is scored as the reasoning in think tags before the content,
// with the thinking and answer counted from usage; a reply without usage,
// or an elastic row without the split, is that row's error naming what is
// missing. Elastic, t = s = 16: thinking 20 tokens (4 over), answer 10.
func TestTokenCountsOfReasoningReplies(t *testing.T) {
	n := func(v int) *int { return &v }
	replies := map[int]answer{
		0: {text: "<answer>42</answer>", reasoning: "six sevens", tokens: n(30), reasoningTokens: n(20)},
		1: {text: "<answer>42</answer>", tokens: n(30)},
		2: {text: "<answer>42</answer>", reasoning: "six sevens", tokens: n(30)},
		3: {text: "<answer>42</answer>"},
		4: {text: "<answer>42</answer>", reasoning: "six sevens", tokens: n(12), reasoningTokens: n(9)},
	}
	budgets := map[string]any{"think_budget": 16, "answer_budget": 16}
	rows := []any{
		lengthRow(rewards.Elastic.DataSource, 0, budgets),
		lengthRow(rewards.Elastic.DataSource, 1, budgets),
		lengthRow(rewards.Elastic.DataSource, 2, budgets),
		lengthRow(rewards.LCPOExact.DataSource, 3, map[string]any{"token_budget": 16}),
		lengthRow(rewards.LCPOExact.DataSource, 4, map[string]any{"token_budget": 16}),
	}
	srv := newScript(t, func(req wireReq) answer {
		var i int
		fmt.Sscanf(lastUser(req), "question %d", &i)
		return replies[i]
	})
	parsed, err := ReadRows(writeRows(t, rows...))
	require.NoError(t, err)
	res, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)

	el := res[0]
	require.Empty(t, el.Error)
	assert.Equal(t, "<think>six sevens</think><answer>42</answer>", el.Reply)
	assert.Equal(t, map[string]float64{"correct": 1, "response_tokens": 30, "think_tokens": 20, "answer_tokens": 10,
		"token_budget": 32, "within_budget": 0, "overshoot_tokens": 4}, el.Details)
	assert.Equal(t, 0.0, el.Score, "over its thinking budget")
	assert.Equal(t, map[string]string{"token_budget": "32"}, el.Labels)

	assert.Contains(t, res[1].Error, "the thinking and the answer must be counted apart, and the reply has no reasoning apart from its content")
	assert.Contains(t, res[2].Error, "has no usage.completion_tokens_details.reasoning_tokens")
	assert.Contains(t, res[3].Error, "the reply has no usage.completion_tokens")
	assert.Equal(t, map[string]string{"token_budget": "16"}, res[3].Labels, "a result without a score keeps its row's extra_info.token_budget")

	// LCPO-Exact, n_gold 16, n_y 12, right: 1 − 0.0003 × 4.
	lc := res[4]
	require.Empty(t, lc.Error)
	assert.InDelta(t, 1-0.0003*4, lc.Score, 1e-12)
	assert.Equal(t, 9.0, lc.Details["think_tokens"])
	assert.Equal(t, 3.0, lc.Details["answer_tokens"])

	rep := Summarize(res, ReportOptions{Seed: 1})
	assert.Equal(t, 2, rep.DataSources[rewards.Elastic.DataSource].Failed)
	assert.Equal(t, 1, rep.DataSources[rewards.LCPOExact.DataSource].Failed)
}

// TestAnytimeRowsAreSkipped: the anytime reward needs answers drawn at
// several cuts of one thinking; eval skips its rows and says why.
func TestAnytimeRowsAreSkipped(t *testing.T) {
	srv := newScript(t, func(wireReq) answer { return answer{text: "x"} })
	rows, err := ReadRows(writeRows(t, lengthRow(rewards.Anytime.DataSource, 0, nil)))
	require.NoError(t, err)
	res, err := Run(context.Background(), rows, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig()})
	require.NoError(t, err)
	assert.Contains(t, res[0].Skipped, "length/anytime rows need the answers drawn")
	assert.Zero(t, srv.hits.Load())
}

// TestCheckRowsOfLengthRows: a length row is checked with an empty reply's
// counts, so a row missing what only the row can give (lcpo's
// token_budget) fails before anything is sent, and the others pass.
func TestCheckRowsOfLengthRows(t *testing.T) {
	ok := writeRows(t,
		lengthRow(rewards.LCPOMax.DataSource, 0, map[string]any{"token_budget": 64}),
		lengthRow(rewards.ThinkPrune.DataSource, 1, nil),
		lengthRow(rewards.Elastic.DataSource, 2, nil))
	rows, err := ReadRows(ok)
	require.NoError(t, err)
	require.NoError(t, CheckRows(rows, rewards.DefaultConfig()))

	bad := writeRows(t, lengthRow(rewards.LCPOExact.DataSource, 0, nil))
	rows, err = ReadRows(bad)
	require.NoError(t, err)
	assert.ErrorContains(t, CheckRows(rows, rewards.DefaultConfig()), "eval: "+bad+": row 1: extra_info.token_budget")
}

// TestBudgetLabelOfAFloatColumn: a row whose budget column is a float
// (1000.0, as pandas writes it) is labelled by the budget the reward
// reports, 1000, so its failed and scored results share one group.
func TestBudgetLabelOfAFloatColumn(t *testing.T) {
	for raw, want := range map[string]string{`1000.0`: "1000", `1000`: "1000", `1e3`: "1000", `"512"`: "512", `"many"`: "many"} {
		line := `{"data_source": "length/lcpo_max", "prompt": [{"role": "user", "content": "Q"}], "reward_model": {"ground_truth": "4"}, "extra_info": {"token_budget": ` + raw + `}}`
		r, err := decodeRow([]byte(line), "rows.jsonl", 1)
		require.NoError(t, err, raw)
		assert.Equal(t, want, r.Labels["token_budget"], raw)
	}
}
