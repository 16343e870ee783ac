package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotutil"

	"github.com/timeaware/timeaware/chat"
)

// TestQuantileMetricPoolsTheResults: the p90 of a detail key is taken over
// every result's value, not over row means; a resample draws rows and
// takes all of a row's results. Ten values 0 × 8, 10, 50 sorted: position
// 0.9 × 9 = 8.1, so p90 = 10 + 0.1 × (50 − 10) = 14.
func TestQuantileMetricPoolsTheResults(t *testing.T) {
	q := quantile("overshoot_p90", "overshoot_tokens", 0.9)
	var res []*Result
	for i, v := range []float64{0, 50, 0, 0, 10, 0, 0, 0, 0, 0} {
		// Two samples a row: rows 0–4.
		res = append(res, &Result{Row: i / 2, Sample: i % 2, Details: map[string]float64{"overshoot_tokens": v}})
	}
	rows, _ := sumRows(res, []metric{q}, &SourceReport{}, byRow)
	require.Len(t, rows, 5)
	assert.Equal(t, []float64{0, 50}, rows[0][0], "a row holds its results' values")
	v, ok := q.value(q.over(rows, nil, 0))
	require.True(t, ok)
	assert.InDelta(t, 14, v, 1e-12)

	// A resample of rows 0 and 2 twice pools {0, 50, 10, 0, 10, 0}:
	// sorted 0 0 0 10 10 50, position 4.5: 10 + 0.5 × 40 = 30.
	v, ok = q.value(q.over(rows, []int{0, 2, 2}, 0))
	require.True(t, ok)
	assert.InDelta(t, 30, v, 1e-12)
	_, ok = q.value(nil)
	assert.False(t, ok, "no results, no quantile")

	// Every resample's p90 lies between the smallest and the largest
	// value a resample can pool, and rows whose values are all equal give
	// a point interval.
	rng := rand.New(rand.NewPCG(1, 1))
	lo, hi := bootstrap(len(rows), 2000, rng, func(idx []int) (float64, bool) { return q.value(q.over(rows, idx, 0)) })
	assert.GreaterOrEqual(t, lo, 0.0)
	assert.LessOrEqual(t, hi, 50.0)
	assert.Less(t, lo, hi)
}

// TestGroupOrderIsNumeric: budgets are listed in numeric order, numbers
// before other values.
func TestGroupOrderIsNumeric(t *testing.T) {
	m := map[string]int{"token_budget=1000": 0, "token_budget=500": 0, "token_budget=(missing)": 0, "token_budget=4000": 0, "elapse=2": 0, "elapse=10": 0}
	assert.Equal(t, []string{"elapse=2", "elapse=10", "token_budget=500", "token_budget=1000", "token_budget=4000", "token_budget=(missing)"}, groupOrder(m))
}

// TestCurveReadsTheBudgetGroups: one point per numeric budget with scored
// results, in increasing order.
func TestCurveReadsTheBudgetGroups(t *testing.T) {
	iv := func(m float64) Interval { return Interval{Mean: m, CI95: [2]float64{m - 0.1, m + 0.1}} }
	sr := &SourceReport{Groups: map[string]*SourceReport{
		"token_budget=2000":      {N: 3, Metrics: map[string]Interval{"correct": iv(0.5), "within_budget": iv(0.9)}},
		"token_budget=500":       {N: 4, Metrics: map[string]Interval{"correct": iv(0.25), "within_budget": iv(0.5)}},
		"token_budget=1000":      {N: 0, Failed: 2, Metrics: map[string]Interval{}},
		"token_budget=(missing)": {N: 1, Metrics: map[string]Interval{"correct": iv(1)}},
		"token_budget=-5":        {N: 1, Metrics: map[string]Interval{"correct": iv(1)}},
		"token_budget=0":         {N: 1, Metrics: map[string]Interval{"correct": iv(1)}},
		"token_budget=+Inf":      {N: 1, Metrics: map[string]Interval{"correct": iv(1)}},
		"category=x":             {N: 1, Metrics: map[string]Interval{"correct": iv(1)}},
	}}
	assert.Equal(t, []CurvePoint{
		{Budget: 500, N: 4, Accuracy: iv(0.25), WithinBudget: iv(0.5)},
		{Budget: 2000, N: 3, Accuracy: iv(0.5), WithinBudget: iv(0.9)},
	}, curve(sr, "token_budget"))
	assert.Nil(t, curve(sr, ""))
}

// TestWritePlotIsAPNG: the plot decodes as a PNG of the size drawn, with
// more than a blank page's bytes; a report without a curve is an error.
func TestWritePlotIsAPNG(t *testing.T) {
	iv := func(m, lo, hi float64) Interval { return Interval{Mean: m, CI95: [2]float64{lo, hi}} }
	rep := &Report{DataSources: map[string]*SourceReport{
		"a": {Curve: []CurvePoint{{Budget: 512, N: 4, Accuracy: iv(0.25, 0, 0.5)}, {Budget: 1024, N: 4, Accuracy: iv(0.75, 0.5, 1)}}},
		"b": {Curve: []CurvePoint{{Budget: 256, N: 2, Accuracy: iv(0.5, 0.5, 0.5)}}},
		"c": {},
	}}
	var buf bytes.Buffer
	require.NoError(t, rep.WritePlot(&buf))
	assert.Greater(t, buf.Len(), 5000)
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	b := img.Bounds()
	assert.Equal(t, int(plotWidth.Dots(96)+0.5), b.Dx())
	assert.Equal(t, int(plotHeight.Dots(96)+0.5), b.Dy())
	// Both lines are drawn, each in its own colour.
	seen := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			seen[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	for i := range 2 {
		assert.True(t, seen[color.RGBAModel.Convert(plotutil.Color(i)).(color.RGBA)], "line %d", i)
	}
	assert.False(t, seen[color.RGBAModel.Convert(plotutil.Color(2)).(color.RGBA)], "no third line")

	err = (&Report{DataSources: map[string]*SourceReport{"c": {}}}).WritePlot(&buf)
	assert.ErrorIs(t, err, errNoCurve)

	// The layout: budgets from 0 to 5% past the largest (1024), accuracy
	// from 0 to 1 plus a legend line for each of the two sources and one more.
	p, err := rep.curvePlot()
	require.NoError(t, err)
	assert.Equal(t, [2]float64{0, 1024 * 1.05}, [2]float64{p.X.Min, p.X.Max})
	assert.InDelta(t, 1+0.07*3, p.Y.Max, 1e-12)
	assert.Zero(t, p.Y.Min)
	var ticks []string
	for _, tk := range p.Y.Tick.Marker.Ticks(0, 1) {
		ticks = append(ticks, fmt.Sprintf("%g:%s", tk.Value, tk.Label))
	}
	assert.Equal(t, []string{"0:0.0", "0.1:", "0.2:0.2", "0.3:", "0.4:0.4", "0.5:", "0.6:0.6", "0.7:", "0.8:0.8", "0.9:", "1:1.0"}, ticks)
}

// TestCurvePoints: each point is (budget, accuracy) with error bars
// reaching down to the interval's low end and up to its high end.
func TestCurvePoints(t *testing.T) {
	xys, errs := curvePoints([]CurvePoint{
		{Budget: 512, Accuracy: Interval{Mean: 0.25, CI95: [2]float64{0.125, 0.5}}},
		{Budget: 1024, Accuracy: Interval{Mean: 0.75, CI95: [2]float64{0.75, 1}}},
	})
	require.Len(t, xys, 2)
	assert.Equal(t, [2]float64{512, 0.25}, [2]float64{xys[0].X, xys[0].Y})
	assert.Equal(t, [2]float64{1024, 0.75}, [2]float64{xys[1].X, xys[1].Y})
	assert.Equal(t, [2]float64{0.125, 0.25}, [2]float64{errs[0].Low, errs[0].High})
	assert.Equal(t, [2]float64{0, 0.25}, [2]float64{errs[1].Low, errs[1].High})
}

func ip(n int) *int { return &n }

// TestTokenCounts: the reward's text and counts come from the server's
// usage and reasoning, never from counting; what is missing is named.
func TestTokenCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  chat.Reply
		need   int
		text   string
		fields string
		err    string
	}{
		{"counted, no reasoning", chat.Reply{Content: "<answer>4</answer>", CompletionTokens: ip(7)}, tokensCounted,
			"<answer>4</answer>", `{"response_tokens":7,"think_tokens":null,"answer_tokens":null}`, ""},
		{"reasoning with its count", chat.Reply{Content: "<answer>4</answer>", Reasoning: "two and two", CompletionTokens: ip(12), ReasoningTokens: ip(9)}, tokensSplit,
			"<t>two and two</t><answer>4</answer>", `{"response_tokens":12,"think_tokens":9,"answer_tokens":3}`, ""},
		{"reasoning without its count", chat.Reply{Content: "x", Reasoning: "r", CompletionTokens: ip(5)}, tokensCounted,
			"<t>r</t>x", `{"response_tokens":5,"think_tokens":null,"answer_tokens":null}`, ""},
		{"a count without reasoning text is not a split", chat.Reply{Content: "x", CompletionTokens: ip(5), ReasoningTokens: ip(0)}, tokensCounted,
			"x", `{"response_tokens":5,"think_tokens":null,"answer_tokens":null}`, ""},
		{"all reasoning", chat.Reply{Reasoning: "r", CompletionTokens: ip(5), ReasoningTokens: ip(5)}, tokensSplit,
			"<t>r</t>", `{"response_tokens":5,"think_tokens":5,"answer_tokens":0}`, ""},
		{"no usage", chat.Reply{Content: "x"}, tokensCounted, "", "", "the reply has no usage.completion_tokens"},
		{"a cached reply without usage", chat.Reply{Content: "x", Cached: true}, tokensCounted, "", "", "the cache entry predates token counts (or the server reported none); rerun with --no-cache"},
		{"reasoning over the total", chat.Reply{Content: "x", Reasoning: "r", CompletionTokens: ip(5), ReasoningTokens: ip(6)}, tokensCounted,
			"", "", "usage.completion_tokens_details.reasoning_tokens 6 exceeds its usage.completion_tokens 5"},
		{"split needed, no reasoning", chat.Reply{Content: "x", CompletionTokens: ip(5)}, tokensSplit,
			"", "", "has no reasoning apart from its content (reasoning_content or reasoning"},
		{"split needed, no reasoning count", chat.Reply{Content: "x", Reasoning: "r", CompletionTokens: ip(5)}, tokensSplit,
			"", "", "has no usage.completion_tokens_details.reasoning_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, fields, err := tokenCounts(tc.reply, tc.reply.Content, tc.need, "<t>", "</t>")
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.text, text)
			raw, err := json.Marshal(fields)
			require.NoError(t, err)
			assert.JSONEq(t, tc.fields, string(raw))
		})
	}
}

// TestCurveText: the curve's table, as the text report shows it.
func TestCurveText(t *testing.T) {
	rep := &Report{DataSources: map[string]*SourceReport{"length/thinkprune": {
		N: 7, Rows: 7,
		Curve: []CurvePoint{
			{Budget: 100, N: 4, Accuracy: Interval{Mean: 0.75, CI95: [2]float64{0.25, 1}}, WithinBudget: Interval{Mean: 0.5}},
			{Budget: 2048, N: 3, Accuracy: Interval{Mean: 2.0 / 3, CI95: [2]float64{0, 1}}, WithinBudget: Interval{Mean: 1.0 / 3}},
		},
	}}}
	assert.Equal(t, "length/thinkprune: 7 results of 7 rows\n"+
		"  accuracy against token budget\n"+
		"      budget      n  accuracy  95% interval          within\n"+
		"         100      4    0.7500  [0.2500, 1.0000]      0.5000\n"+
		"        2048      3    0.6667  [0.0000, 1.0000]      0.3333\n", rep.Text())
}
