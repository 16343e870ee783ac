package rewards

// Tests that pin down behaviour users rely on in nar.go, lines.go,
// decisions.go, result_json.go, negotiation.go, traveler.go, tictoc.go and
// toolcall.go, found missing by mutation testing (gremlins). Expected values
// are worked out by hand in the comments.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/internal/shard"
)

// --- nar.go -------------------------------------------------------------

// A class with no samples has no rate: its rates are null in the JSON
// report, never 0, whichever class is the empty one.
func TestBStatsEmptyPreferTool(t *testing.T) {
	b, err := json.Marshal(Confusion{TN: 1, FP: 3}.Stats())
	require.NoError(t, err)
	// Only prefer-direct: TNR 1/4, attempt rate 3/4 overall and on prefer-direct.
	assert.JSONEq(t, `{"samples":4,"prefer_tool":0,"prefer_direct":4,"tp":0,"fn":0,"tn":1,"fp":3,
		"both_classes":false,"nar":0.25,"tpr":null,"tnr":0.25,"attempt_rate":0.75,
		"attempt_rate_tool":null,"attempt_rate_direct":0.75}`, string(b))
	b, err = json.Marshal(Confusion{}.Stats())
	require.NoError(t, err)
	assert.JSONEq(t, `{"samples":0,"prefer_tool":0,"prefer_direct":0,"tp":0,"fn":0,"tn":0,"fp":0,
		"both_classes":false,"nar":0,"tpr":null,"tnr":null,"attempt_rate":0,
		"attempt_rate_tool":null,"attempt_rate_direct":null}`, string(b))
}

// Group labels order: numbers numerically and before text, text lexically,
// the missing group last, whichever way round two labels are compared.
func TestBCompareLabels(t *testing.T) {
	num := func(v string) narLabel { return narLabel{value: v} }
	missing := narLabel{missing: true}
	for _, tc := range []struct {
		a, b narLabel
		want int
	}{
		{num("2"), num("10"), -1},    // numerically, though "10" < "2" as text
		{num("2"), num("2.0"), -1},   // equal numbers: by text, "2" < "2.0"
		{num("-1"), num("0.5"), -1},  // signs count
		{num("10"), num("abc"), -1},  // a number before text
		{num("abc"), num("abd"), -1}, // text lexically
		{num("abc"), missing, -1},    // the missing group last
		{num("7"), missing, -1},
		{num(""), missing, -1}, // an empty label is a label, not a missing one
		{missing, missing, 0},
		{num("x"), num("x"), 0},
	} {
		assert.Equal(t, tc.want, narCompareLabels(tc.a, tc.b), "%+v vs %+v", tc.a, tc.b)
		assert.Equal(t, -tc.want, narCompareLabels(tc.b, tc.a), "%+v vs %+v", tc.b, tc.a)
	}
}

// The report's groups follow that order whatever order the samples came in.
func TestBDecisionReportOrder(t *testing.T) {
	for _, order := range [][]string{{"", "b", "10", "a", "9"}, {"9", "a", "10", "b", ""}, {"a", "", "9", "b", "10"}} {
		e := NewDecisionEvaluator([]string{"k"})
		for _, v := range order {
			labels := map[string]string{"k": v}
			if v == "" {
				labels = nil
			}
			e.Add(true, true, labels)
		}
		var got []string
		for _, g := range e.Report().Groups {
			v := g.Value
			if g.Missing {
				v = "<missing>"
			}
			got = append(got, v)
		}
		assert.Equal(t, []string{"9", "10", "a", "b", "<missing>"}, got, "added in order %q", order)
	}
}

// --- result_json.go -----------------------------------------------------

func TestBAppendJSON(t *testing.T) {
	keys := []string{"a", "b", "c"}
	tests := []struct {
		name string
		res  Result
		keys []string
		err  error
		want string
	}{
		{"integers", Result{Score: 1, Details: []float64{0, 2, -3}}, keys, nil, `{"score":1,"a":0,"b":2,"c":-3}`},
		{"fractions", Result{Score: 0.25, Details: []float64{1.5, -0.125, 1e-7}}, keys, nil, `{"score":0.25,"a":1.5,"b":-0.125,"c":1e-07}`},
		{"missing details are 0", Result{Score: 0.5, Details: []float64{7}}, keys, nil, `{"score":0.5,"a":7,"b":0,"c":0}`},
		{"no keys", Result{Score: 0.5, Details: []float64{7}}, nil, nil, `{"score":0.5}`},
		{"not finite is 0", Result{Score: math.NaN(), Details: []float64{math.Inf(1), math.Inf(-1)}}, keys[:2], nil, `{"score":0,"a":0,"b":0}`},
		// Whole numbers strictly inside ±1e15 are written as integers; from
		// 1e15 on in 'g' form.
		{"large", Result{Score: 999999999999999, Details: []float64{1e15, -999999999999999, -1e15}}, []string{"a", "b", "c"}, nil,
			`{"score":999999999999999,"a":1e+15,"b":-999999999999999,"c":-1e+15}`},
		{"error", Result{Score: -1, Details: []float64{0}}, keys[:1], errors.New(`ground_truth: "x" is bad`),
			`{"score":-1,"a":0,"error":"ground_truth: \"x\" is bad"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix:")
			got := tc.res.AppendJSON(prefix, tc.keys, tc.err)
			assert.Equal(t, "prefix:"+tc.want, string(got))
			assert.True(t, json.Valid(got[len(prefix):]))
		})
	}
}

func TestBAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", `"plain text"`},
		{`say "hi" \ bye`, `"say \"hi\" \\ bye"`},
		// control characters below 0x20 as \u00XX, lower-case hex; space and
		// DEL (0x7f) as they are
		{"a\x00b\nc\x1fd e\x7f", `"a\u0000b\u000ac\u001fd e` + "\x7f" + `"`},
		{"tab\there\r", `"tab\u0009here\u000d"`},
		// valid UTF-8 kept as is, U+FFFD included
		{"Zürich – 東京 \uFFFD", `"Zürich – 東京 ` + "\uFFFD" + `"`},
		// invalid bytes replaced, one \ufffd each
		{"a\x80b\xffc", `"a\ufffdb\ufffdc"`},
		{"\xe6\x9d", `"\ufffd\ufffd"`}, // a cut 3-byte rune
		{"", `""`},
	}
	for _, tc := range tests {
		got := appendJSONString([]byte("x"), tc.in)
		assert.Equal(t, "x"+tc.want, string(got), "%q", tc.in)
		var back string
		require.NoError(t, json.Unmarshal(got[1:], &back), "%q", tc.in)
		if utf8.ValidString(tc.in) {
			assert.Equal(t, tc.in, back)
		}
	}
}

// --- lines.go -----------------------------------------------------------

const (
	bToolCall = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"
	bDirect   = "It is 3 pm."
)

// bItem is a tictoc/decision JSONL item.
func bItem(t *testing.T, response, gt string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"data_source": "tictoc/decision", "solution_str": response, "ground_truth": json.RawMessage(gt)})
	require.NoError(t, err)
	return string(b)
}

func TestBScoreLines(t *testing.T) {
	s := newTestScorer(t, func(c *Config) { c.FallbackScore = -0.25 })
	in := strings.Join([]string{
		bItem(t, bToolCall, `"tool"`),   // 1: agrees, 1
		bItem(t, bToolCall, `"direct"`), // 2: disagrees, 0
		`{"data_source": `,              // 3: not an item
		`{"data_source": "traveler", "solution_str": "x", "ground_truth": "tool"}`, // 4: another data source
		bItem(t, bDirect, `"maybe"`),                // 5: the reward's error
		`{"solution_str": "x", "ground_truth": 42}`, // 6: no data source: scored, the reward's error
		bItem(t, bDirect, `"direct"`),               // 7: agrees, 1
	}, "\n") + "\n"
	var out bytes.Buffer
	sum, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(in), "in.jsonl", &out, LinesOptions{})
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, got, 7)
	assert.Equal(t, `{"score":1,"called_tool":1,"preferred_tool":1,"agree":1,"margin":0}`, got[0])
	assert.Equal(t, `{"score":0,"called_tool":1,"preferred_tool":0,"agree":0,"margin":0}`, got[1])
	assert.True(t, strings.HasPrefix(got[2], `{"score":-0.25,"called_tool":0,"preferred_tool":0,"agree":0,"margin":0,"error":"not a valid item: `), got[2])
	assert.Equal(t, `{"score":-0.25,"called_tool":0,"preferred_tool":0,"agree":0,"margin":0,"error":"data_source: \"traveler\" differs from the data source being scored, tictoc/decision"}`, got[3])
	assert.Contains(t, got[4], `"score":-0.25`)
	assert.Contains(t, got[4], `"error":"ground_truth: string \"maybe\" is neither tool, direct nor a JSON object"`)
	assert.Contains(t, got[5], `"score":-0.25`)
	assert.Contains(t, got[5], `"error":"ground_truth: 42 is not an object`)
	assert.Equal(t, `{"score":1,"called_tool":0,"preferred_tool":0,"agree":1,"margin":0}`, got[6])

	// 7 items, 4 failed; the sum counts the fallbacks: 1 + 0 + 1 + 4·(−0.25) = 1.
	assert.Equal(t, 7, sum.Items)
	assert.Equal(t, 4, sum.Failed)
	assert.Equal(t, 0, sum.Skipped)
	assert.Equal(t, 7, sum.Lines)
	assert.InDelta(t, 1.0, sum.Sum, 1e-12)
	assert.InDelta(t, 1.0/7, sum.Mean(), 1e-12)
	// The first three errors only, each naming its line.
	require.Len(t, sum.FirstErrors, 3)
	assert.True(t, strings.HasPrefix(sum.FirstErrors[0], "line 3: not a valid item: "), sum.FirstErrors[0])
	assert.True(t, strings.HasPrefix(sum.FirstErrors[1], `line 4: data_source: "traveler" differs`), sum.FirstErrors[1])
	assert.True(t, strings.HasPrefix(sum.FirstErrors[2], `line 5: ground_truth: string "maybe"`), sum.FirstErrors[2])

	assert.Equal(t, 0.0, (&LinesSummary{}).Mean(), "no items")
	assert.Equal(t, 0.5, (&LinesSummary{Items: 4, Sum: 2}).Mean())
}

// Sharding: line n (1-based) of an input that follows Before lines is
// dataset line Before + n − 1 (0-based), scored by shard (Before + n − 1) mod
// the shard count; errors and Lines keep the input's own numbering.
func TestBScoreLinesShards(t *testing.T) {
	s := newTestScorer(t, nil)
	var lines []string
	for i := range 7 {
		if i == 5 {
			lines = append(lines, `not json`) // input line 6
			continue
		}
		lines = append(lines, bItem(t, bToolCall, `"tool"`))
	}
	in := strings.Join(lines, "\n") + "\n"
	run := func(opt LinesOptions) (*LinesSummary, []string) {
		var out bytes.Buffer
		sum, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(in), "in", &out, opt)
		require.NoError(t, err)
		res := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			res = nil
		}
		return sum, res
	}
	// Before 2, 3 shards, shard 1: (2 + n − 1) mod 3 = 1 for n = 3 and 6.
	sum, out := run(LinesOptions{Shard: shard.Shard{Index: 1, Count: 3}, Before: 2})
	assert.Equal(t, LinesSummary{Items: 2, Failed: 1, Skipped: 5, Lines: 7, Sum: 1, FirstErrors: sum.FirstErrors}, *sum)
	require.Len(t, sum.FirstErrors, 1)
	assert.True(t, strings.HasPrefix(sum.FirstErrors[0], "line 6: "), sum.FirstErrors[0])
	assert.Len(t, out, 2)
	// Without Before, shard 1 of 3 takes n − 1 ≡ 1: n = 2 and 5.
	sum, _ = run(LinesOptions{Shard: shard.Shard{Index: 1, Count: 3}})
	assert.Equal(t, 2, sum.Items)
	assert.Equal(t, 0, sum.Failed)
	assert.Equal(t, 5, sum.Skipped)
	// Shard 0 of 2 after 1 line: (1 + n − 1) mod 2 = 0 for n = 2, 4, 6.
	sum, _ = run(LinesOptions{Shard: shard.Shard{Index: 0, Count: 2}, Before: 1})
	assert.Equal(t, 3, sum.Items)
	assert.Equal(t, 1, sum.Failed, "line 6")
	assert.Equal(t, 4, sum.Skipped)
	// One shard (or none) scores every line, whatever the index says.
	for _, opt := range []LinesOptions{{Shard: shard.Shard{Count: 1, Index: 1}}, {Shard: shard.Shard{Count: 0, Index: 3}}, {Shard: shard.Shard{Count: 1}, Before: 5}} {
		sum, out = run(opt)
		assert.Equal(t, 7, sum.Items, "%+v", opt)
		assert.Equal(t, 0, sum.Skipped, "%+v", opt)
		assert.Len(t, out, 7, "%+v", opt)
	}
	// Every line is scored by exactly one of the shards.
	total := 0
	for i := range 4 {
		sum, _ := run(LinesOptions{Shard: shard.Shard{Index: i, Count: 4}, Before: 3})
		total += sum.Items
		assert.Equal(t, 7, sum.Items+sum.Skipped)
	}
	assert.Equal(t, 7, total)
}

type bFailWriter struct{ n int }

func (w *bFailWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestBScoreLinesErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	item := bItem(t, bToolCall, `"tool"`)
	t.Run("blank line", func(t *testing.T) {
		var out bytes.Buffer
		sum, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(item+"\n  \n"+item+"\n"), "in.jsonl", &out, LinesOptions{})
		require.EqualError(t, err, "in.jsonl: line 2: empty line; every line must be one JSON item")
		assert.Equal(t, 1, sum.Items)
		assert.Equal(t, 2, sum.Lines)
	})
	t.Run("read error", func(t *testing.T) {
		r := io.MultiReader(strings.NewReader(item+"\n"), iotest.ErrReader(errors.New("connection reset")))
		var out bytes.Buffer
		sum, err := s.ScoreLines(context.Background(), TicTocDecision, r, "in.jsonl", &out, LinesOptions{})
		require.EqualError(t, err, "in.jsonl: line 2: connection reset")
		assert.Equal(t, 1, sum.Items)
		assert.InDelta(t, 1.0, sum.Sum, 0)
	})
	t.Run("last line without newline", func(t *testing.T) {
		var out bytes.Buffer
		sum, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(item+"\n"+item), "in", &out, LinesOptions{})
		require.NoError(t, err)
		assert.Equal(t, 2, sum.Items)
		assert.Equal(t, 2, strings.Count(out.String(), "\n"))
	})
	t.Run("write error at the end", func(t *testing.T) {
		w := &bFailWriter{}
		_, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(item+"\n"), "in", w, LinesOptions{})
		require.EqualError(t, err, "writing results: disk full")
		assert.Equal(t, 1, w.n)
	})
	t.Run("write error on the way", func(t *testing.T) {
		// 2,000 results of 69 bytes overflow the 64 KiB buffer: the write
		// fails before the input ends, and scoring stops there.
		w := &bFailWriter{}
		in := strings.Repeat(item+"\n", 2000)
		sum, err := s.ScoreLines(context.Background(), TicTocDecision, strings.NewReader(in), "in", w, LinesOptions{})
		require.EqualError(t, err, "writing results: disk full")
		assert.Less(t, sum.Items, 2000)
		assert.Greater(t, sum.Items, 900)
		assert.Equal(t, 1, w.n)
	})
}

// --- decisions.go -------------------------------------------------------

func TestBReadDecisions(t *testing.T) {
	s := newTestScorer(t, nil)
	in := strings.Join([]string{
		`{"data_source": "tictoc/decision", "solution_str": "` + strings.ReplaceAll(bToolCall, `"`, `\"`) + `", "ground_truth": "tool", "extra_info": {"elapse": 2, "sensitivity": "high"}}`,
		`{"solution_str": "It is 3 pm.", "ground_truth": {"preferred": "tool"}, "extra_info": {"elapse": 2.0, "sensitivity": null}}`,
		`{"data_source": null, "solution_str": "It is 3 pm.", "ground_truth": "direct", "extra_info": {"elapse": 0.25, "sensitivity": "low"}}`,
		`{"data_source": "", "solution_str": "` + strings.ReplaceAll(bToolCall, `"`, `\"`) + `", "ground_truth": "direct", "extra_info": {"elapse": true}}`,
		`{"solution_str": "It is 3 pm.", "ground_truth": "direct", "extra_info": null}`,
		`{"solution_str": "It is 3 pm.", "ground_truth": "direct"}`,
	}, "\n")
	ev := NewDecisionEvaluator([]string{"elapse", "sensitivity"})
	require.NoError(t, ReadDecisions(strings.NewReader(in), "d.jsonl", s, []string{"elapse", "sensitivity"}, ev))
	// prefer tool: called, not called → TP 1, FN 1; prefer direct: not called
	// (lines 3, 5, 6), called (line 4) → TN 3, FP 1.
	assert.Equal(t, Confusion{TP: 1, FN: 1, TN: 3, FP: 1}, ev.Overall())
	type g struct {
		field, value string
		missing      bool
		c            Confusion
	}
	var got []g
	for _, gr := range ev.Report().Groups {
		got = append(got, g{gr.Field, gr.Value, gr.Missing, Confusion{TP: gr.TP, FN: gr.FN, TN: gr.TN, FP: gr.FP}})
	}
	assert.Equal(t, []g{
		{"elapse", "0.25", false, Confusion{TN: 1}},
		{"elapse", "2", false, Confusion{TP: 1, FN: 1}}, // 2 and 2.0 are one group
		{"elapse", "true", false, Confusion{FP: 1}},
		{"elapse", "", true, Confusion{TN: 2}},
		{"sensitivity", "high", false, Confusion{TP: 1}},
		{"sensitivity", "low", false, Confusion{TN: 1}},
		{"sensitivity", "", true, Confusion{FN: 1, TN: 2, FP: 1}}, // null and absent
	}, got)
}

func TestBReadDecisionsErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	good := `{"solution_str": "It is 3 pm.", "ground_truth": "direct", "extra_info": {"k": "v"}}`
	tests := []struct{ name, line, want string }{
		{"not an object", `[1, 2]`, "d.jsonl: line 2: want an object, got a list"},
		{"not JSON", `{"solution_str": `, "d.jsonl: line 2: invalid JSON at byte 18: the text ends inside a value"},
		{"data source not a string", `{"data_source": 5, "solution_str": "x", "ground_truth": "tool"}`, "d.jsonl: line 2: data_source: 5 is not a string"},
		{"other data source", `{"data_source": "traveler", "solution_str": "x", "ground_truth": "tool"}`, `d.jsonl: line 2: data_source: "traveler" is not tictoc/decision`},
		{"no solution", `{"ground_truth": "tool"}`, "d.jsonl: line 2: solution_str: missing: the decision is read from the response"},
		{"null solution", `{"solution_str": null, "ground_truth": "tool"}`, "d.jsonl: line 2: solution_str: missing"},
		{"solution not a string", `{"solution_str": ["x"], "ground_truth": "tool"}`, "d.jsonl: line 2: solution_str: not a string"},
		{"extra_info not an object", `{"solution_str": "x", "ground_truth": "tool", "extra_info": [1]}`, "d.jsonl: line 2: extra_info: not a JSON object"},
		{"object label", `{"solution_str": "x", "ground_truth": "tool", "extra_info": {"k": {"a": 1}}}`, "d.jsonl: line 2: extra_info.k: an object or array cannot label a group"},
		{"array label", `{"solution_str": "x", "ground_truth": "tool", "extra_info": {"k": [1]}}`, "d.jsonl: line 2: extra_info.k: an object or array cannot label a group"},
		{"number out of range", `{"solution_str": "x", "ground_truth": "tool", "extra_info": {"k": 1e400}}`, "d.jsonl: line 2: extra_info.k: 1e400 is not a number"},
		{"bad ground truth", `{"solution_str": "x", "ground_truth": "maybe"}`, `d.jsonl: line 2: ground_truth: string "maybe" is neither`},
		{"blank line", `   `, "d.jsonl: line 2: empty line; every line must be one JSON item"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := NewDecisionEvaluator([]string{"k"})
			err := ReadDecisions(strings.NewReader(good+"\n"+tc.line+"\n"+good+"\n"), "d.jsonl", s, []string{"k"}, ev)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%v", err)
			assert.Equal(t, Confusion{TN: 1}, ev.Overall(), "the lines before the error are counted, none after")
		})
	}
	t.Run("read error", func(t *testing.T) {
		ev := NewDecisionEvaluator(nil)
		r := io.MultiReader(strings.NewReader(good+"\n"+good+"\n"), iotest.ErrReader(errors.New("connection reset")))
		err := ReadDecisions(r, "d.jsonl", s, nil, ev)
		require.EqualError(t, err, "d.jsonl: line 3: connection reset")
		assert.Equal(t, Confusion{TN: 2}, ev.Overall())
	})
	t.Run("empty input", func(t *testing.T) {
		ev := NewDecisionEvaluator(nil)
		require.NoError(t, ReadDecisions(strings.NewReader(""), "d.jsonl", s, nil, ev))
		assert.Equal(t, 0, ev.Overall().Samples())
	})
}

// Group labels: strings as they are, booleans as written, numbers in their
// shortest form.
func TestBGroupValue(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`"high"`, "high"},
		{` "2" `, "2"},
		{`true`, "true"},
		{`false`, "false"},
		{`2`, "2"},
		{`2.0`, "2"},
		{`2.25`, "2.25"},
		{`-0.125`, "-0.125"},
		{`1e3`, "1000"},
		{`123456789.5`, "1.234567895e+08"},
		{`1e21`, "1e+21"},
	} {
		got, err := groupValue(json.RawMessage(tc.raw))
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
}

// --- negotiation.go -----------------------------------------------------

// bScenario: roles a (BATNA 2) and b (BATNA 3), issue x (lo, mid, hi) and
// issue y (no, yes).
//
//	a: x 1, 3, 5; y 0, 2   → worst 1 + 0 = 1, best 5 + 2 = 7
//	b: x 6, 4, 2; y 2, 0   → worst 2 + 0 = 2, best 6 + 2 = 8
func bScenario() NegotiationScenario {
	return NegotiationScenario{
		ID:    "s",
		Roles: []NegotiationRole{{ID: "a", BATNA: 2}, {ID: "b", BATNA: 3}},
		Issues: []NegotiationIssue{
			{ID: "x", Options: []string{"lo", "mid", "hi"}, Points: map[string][]float64{"a": {1, 3, 5}, "b": {6, 4, 2}}},
			{ID: "y", Options: []string{"no", "yes"}, Points: map[string][]float64{"a": {0, 2}, "b": {2, 0}}},
		},
	}
}

func bNegGT(mod func(*NegotiationGroundTruth)) *NegotiationGroundTruth {
	g := &NegotiationGroundTruth{Scenario: bScenario(), Role: "a", Condition: NegotiationControl, DeadlineS: 100, FirstSpeaker: "a"}
	if mod != nil {
		mod(g)
	}
	return g
}

func TestBNegotiationPointRange(t *testing.T) {
	s := bScenario()
	assert.Equal(t, 1.0, s.MinPoints("a"))
	assert.Equal(t, 7.0, s.MaxPoints("a"))
	assert.Equal(t, 2.0, s.MinPoints("b"))
	assert.Equal(t, 8.0, s.MaxPoints("b"))
	assert.Equal(t, 5.0, s.Points("a", []int{1, 1}))
	assert.Equal(t, 4.0, s.Points("b", []int{1, 1}))
	assert.Equal(t, 0, s.Role("a"))
	assert.Equal(t, 1, s.Role("b"))
	assert.Equal(t, -1, s.Role("c"))
	assert.Equal(t, "b", s.Other("a"))
	assert.Equal(t, "a", s.Other("b"))
	// Negative points: the best of −3 and −1 is −1, the worst −3.
	neg := NegotiationScenario{Issues: []NegotiationIssue{{Points: map[string][]float64{"a": {-3, -1}}}}}
	assert.Equal(t, -1.0, neg.MaxPoints("a"))
	assert.Equal(t, -3.0, neg.MinPoints("a"))
}

// The score is (points − worst)/(best − worst), clamped to [0, 1]; here the
// worst agreement is not worth 0, unlike New Recruit's.
func TestBNegotiationScoreNormalised(t *testing.T) {
	s := newTestScorer(t, nil)
	deal := `[{"role": "b", "text": "mid and yes", "action": {"action": "propose", "offer": {"x": "mid", "y": "yes"}}},
		{"role": "a", "text": "ok", "action": {"action": "accept"}}]`
	noDeal := `[{"role": "a", "text": "hello"}]`
	tests := []struct {
		name, role, sol string
		batnaA          float64
		score           float64
		self, other     float64
	}{
		// a gets 3 + 2 = 5: (5 − 1)/(7 − 1) = 4/6; b gets 4 + 0 = 4.
		{"deal for a", "a", deal, 2, 4.0 / 6, 5, 4},
		// b: (4 − 2)/(8 − 2) = 2/6.
		{"deal for b", "b", deal, 2, 2.0 / 6, 4, 5},
		// a's BATNA 2: (2 − 1)/6.
		{"no deal for a", "a", noDeal, 2, 1.0 / 6, 2, 3},
		// b's BATNA 3: (3 − 2)/6.
		{"no deal for b", "b", noDeal, 2, 1.0 / 6, 3, 2},
		// A BATNA below the worst agreement scores 0, above the best 1.
		{"BATNA below the range", "a", noDeal, 0, 0, 0, 3},
		{"BATNA above the range", "a", noDeal, 9, 1, 9, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := bNegGT(func(g *NegotiationGroundTruth) { g.Role = tc.role; g.Scenario.Roles[0].BATNA = tc.batnaA })
			gt, err := json.Marshal(g)
			require.NoError(t, err)
			res := s.Score(context.Background(), &Item{DataSource: "negotiation", SolutionStr: tc.sol, GroundTruth: gt})
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.self, res.Details[8], "points_self")
			assert.Equal(t, tc.other, res.Details[9], "points_other")
		})
	}
}

func TestBNegotiationScenarioValidate(t *testing.T) {
	manyIssues := func(n int) []NegotiationIssue {
		var out []NegotiationIssue
		for i := range n {
			out = append(out, NegotiationIssue{ID: "i" + strings.Repeat("x", i), Options: []string{"p", "q"},
				Points: map[string][]float64{"a": {0, 1}, "b": {1, 0}}})
		}
		return out
	}
	options := func(n int) ([]string, []float64) {
		var o []string
		var p []float64
		for i := range n {
			o = append(o, "o"+strings.Repeat("z", i))
			p = append(p, float64(i))
		}
		return o, p
	}
	tests := []struct {
		name  string
		mod   func(*NegotiationScenario)
		field string // "" for valid
		msg   string
	}{
		{"valid", func(*NegotiationScenario) {}, "", ""},
		{"id of 64", func(s *NegotiationScenario) { s.ID = strings.Repeat("i", 64) }, "", ""},
		{"id of 65", func(s *NegotiationScenario) { s.ID = strings.Repeat("i", 65) }, "id", "is not an id"},
		{"empty id", func(s *NegotiationScenario) { s.ID = "" }, "id", "is not an id"},
		{"one role", func(s *NegotiationScenario) { s.Roles = s.Roles[:1] }, "roles", "has 1 roles, want exactly 2"},
		{"three roles", func(s *NegotiationScenario) { s.Roles = append(s.Roles, NegotiationRole{ID: "c"}) }, "roles", "has 3 roles"},
		{"bad role id", func(s *NegotiationScenario) { s.Roles[1].ID = "b b" }, "roles[1].id", `"b b" is not an id`},
		{"BATNA at the limit", func(s *NegotiationScenario) { s.Roles[0].BATNA, s.Roles[1].BATNA = 1e9, -1e9 }, "", ""},
		{"BATNA past the limit", func(s *NegotiationScenario) { s.Roles[1].BATNA = -1.000001e9 }, "roles[1].batna", "is not a number of points within ±1e+09"},
		{"BATNA NaN", func(s *NegotiationScenario) { s.Roles[0].BATNA = math.NaN() }, "roles[0].batna", "NaN is not a number of points"},
		{"BATNA infinite", func(s *NegotiationScenario) { s.Roles[0].BATNA = math.Inf(1) }, "roles[0].batna", "+Inf is not"},
		{"one role twice", func(s *NegotiationScenario) {
			s.Roles[1].ID = "a"
			for i := range s.Issues {
				s.Issues[i].Points = map[string][]float64{"a": s.Issues[i].Points["a"], "c": s.Issues[i].Points["b"]}
			}
		}, "roles[1].id", `"a" names both roles`},
		{"no issues", func(s *NegotiationScenario) { s.Issues = nil }, "issues", "has 0 issues, want 1 to 64"},
		{"64 issues", func(s *NegotiationScenario) { s.Issues = manyIssues(64) }, "", ""},
		{"65 issues", func(s *NegotiationScenario) { s.Issues = manyIssues(65) }, "issues", "has 65 issues, want 1 to 64"},
		{"bad issue id", func(s *NegotiationScenario) { s.Issues[1].ID = "y/z" }, "issues[1].id", `"y/z" is not an id`},
		{"issue twice", func(s *NegotiationScenario) { s.Issues[1].ID = "x" }, "issues[1].id", `"x" names two issues`},
		{"one option", func(s *NegotiationScenario) {
			s.Issues[1].Options, s.Issues[1].Points = []string{"yes"}, map[string][]float64{"a": {2}, "b": {0}}
		}, "issues[1].options", "has 1 options, want 2 to 64"},
		{"64 options", func(s *NegotiationScenario) {
			o, p := options(64)
			s.Issues[1].Options, s.Issues[1].Points = o, map[string][]float64{"a": p, "b": p}
		}, "", ""},
		{"65 options", func(s *NegotiationScenario) {
			o, p := options(65)
			s.Issues[1].Options, s.Issues[1].Points = o, map[string][]float64{"a": p, "b": p}
		}, "issues[1].options", "has 65 options, want 2 to 64"},
		{"option without letters", func(s *NegotiationScenario) { s.Issues[0].Options[2] = "$ -" }, "issues[0].options[2]", `"$ -" has no letter or digit`},
		{"points for one role", func(s *NegotiationScenario) { delete(s.Issues[1].Points, "b") }, "issues[1].points", "has 1 roles, want one list for each of a and b"},
		{"points for three roles", func(s *NegotiationScenario) { s.Issues[1].Points["c"] = []float64{0, 0} }, "issues[1].points", "has 3 roles"},
		{"points for another role", func(s *NegotiationScenario) {
			s.Issues[1].Points["c"] = s.Issues[1].Points["b"]
			delete(s.Issues[1].Points, "b")
		}, "issues[1].points", `no list for role "b"`},
		{"points too few", func(s *NegotiationScenario) { s.Issues[0].Points["b"] = []float64{1, 2} }, "issues[0].points.b", "has 2 points for 3 options"},
		{"points at the limit", func(s *NegotiationScenario) { s.Issues[0].Points["b"] = []float64{1e9, -1e9, 0} }, "", ""},
		{"points past the limit", func(s *NegotiationScenario) { s.Issues[0].Points["b"] = []float64{0, 1.000001e9, 0} }, "issues[0].points.b[1]", "is not a number of points"},
		{"points NaN", func(s *NegotiationScenario) { s.Issues[1].Points["a"] = []float64{0, math.NaN()} }, "issues[1].points.a[1]", "NaN"},
		{"flat payoffs", func(s *NegotiationScenario) {
			s.Issues[0].Points["b"] = []float64{1, 1, 1}
			s.Issues[1].Points["b"] = []float64{3, 3}
		}, "roles[1]", "every agreement is worth the same to b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := bScenario()
			tc.mod(&s)
			err := s.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// Ids are 1 to 64 ASCII letters, digits, '_', '-' or '.'.
func TestBNegotiationIDs(t *testing.T) {
	for _, id := range []string{"a", "z", "A", "Z", "0", "9", "_", "-", ".", "New_Recruit-2.0", strings.Repeat("x", 64)} {
		assert.True(t, negValidID(id), id)
	}
	// The neighbours of each allowed range: ` { @ [ / : and others.
	for _, id := range []string{"", "`", "{", "@", "[", "/", ":", " ", "a b", "é", "a+b", "a,b", strings.Repeat("x", 65)} {
		assert.False(t, negValidID(id), id)
	}
}

func TestBNegotiationGroundTruthValidate(t *testing.T) {
	tests := []struct {
		name  string
		mod   func(*NegotiationGroundTruth)
		field string
	}{
		{"valid", nil, ""},
		{"scored role first, other opens", func(g *NegotiationGroundTruth) { g.Role, g.FirstSpeaker = "a", "b" }, ""},
		{"scored role second", func(g *NegotiationGroundTruth) { g.Role, g.FirstSpeaker = "b", "a" }, ""},
		{"unknown role", func(g *NegotiationGroundTruth) { g.Role = "c" }, "ground_truth.role"},
		{"unknown first speaker", func(g *NegotiationGroundTruth) { g.FirstSpeaker = "c" }, "ground_truth.first_speaker"},
		{"scenario error", func(g *NegotiationGroundTruth) { g.Scenario.Issues[1].ID = "x" }, "ground_truth.scenario.issues[1].id"},
		{"wpm 1", func(g *NegotiationGroundTruth) { g.WPM = 1 }, ""},
		{"wpm 10000", func(g *NegotiationGroundTruth) { g.WPM = 1e4 }, ""},
		{"wpm below 1", func(g *NegotiationGroundTruth) { g.WPM = 0.99 }, "ground_truth.wpm"},
		{"wpm above 10000", func(g *NegotiationGroundTruth) { g.WPM = 10000.5 }, "ground_truth.wpm"},
		{"timer speed factor 0.01", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = 0.01 }, ""},
		{"timer speed factor 100", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = 100 }, ""},
		{"timer speed factor below 0.01", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = 0.0099 }, "ground_truth.timer_speed_factor"},
		{"timer speed factor above 100", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = 100.5 }, "ground_truth.timer_speed_factor"},
		{"negative timer speed factor", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = -1 }, "ground_truth.timer_speed_factor"},
		{"NaN timer speed factor", func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = math.NaN() }, "ground_truth.timer_speed_factor"},
		{"deadline 1e6", func(g *NegotiationGroundTruth) { g.DeadlineS = 1e6 }, ""},
		{"tiny deadline", func(g *NegotiationGroundTruth) { g.DeadlineS = 1e-9 }, ""},
		{"deadline past 1e6", func(g *NegotiationGroundTruth) { g.DeadlineS = 1e6 + 0.5 }, "ground_truth.deadline_s"},
		{"negative deadline", func(g *NegotiationGroundTruth) { g.DeadlineS = -1 }, "ground_truth.deadline_s"},
		{"NaN deadline", func(g *NegotiationGroundTruth) { g.DeadlineS = math.NaN() }, "ground_truth.deadline_s"},
		{"urgency", func(g *NegotiationGroundTruth) { g.Condition = NegotiationUrgency }, ""},
		{"time aware without deadline", func(g *NegotiationGroundTruth) { g.Condition, g.DeadlineS = NegotiationTimeAware, 0 }, "ground_truth.deadline_s"},
		{"turn limit 1", func(g *NegotiationGroundTruth) { g.Condition, g.TurnLimit = NegotiationTurnLimit, 1 }, ""},
		{"turn limit 10000", func(g *NegotiationGroundTruth) { g.Condition, g.TurnLimit = NegotiationTurnLimit, 10000 }, ""},
		{"turn limit 10001", func(g *NegotiationGroundTruth) { g.Condition, g.TurnLimit = NegotiationTurnLimit, 10001 }, "ground_truth.turn_limit"},
		{"turn limit negative", func(g *NegotiationGroundTruth) { g.Condition, g.TurnLimit = NegotiationTurnLimit, -1 }, "ground_truth.turn_limit"},
		{"opening by the other role", func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "b", Text: "hi"} }, ""},
		{"opening by the scored role", func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "a", Text: "hi"} }, "ground_truth.opening.role"},
		{"opening by a stranger", func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "c", Text: "hi"} }, "ground_truth.opening.role"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := bNegGT(tc.mod).Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}

func TestBNegotiationSpeedFactor(t *testing.T) {
	assert.Equal(t, 1.0, bNegGT(nil).SpeedFactor(), "0 is the real clock")
	assert.Equal(t, 0.5, bNegGT(func(g *NegotiationGroundTruth) { g.TimerSpeedFactor = 0.5 }).SpeedFactor())
}

func TestBParseNegotiationGroundTruth(t *testing.T) {
	obj, err := json.Marshal(bNegGT(nil))
	require.NoError(t, err)
	str, err := json.Marshal(" " + string(obj) + " ")
	require.NoError(t, err)
	for _, raw := range [][]byte{obj, str, append(append([]byte(" \n"), obj...), '\n')} {
		g, err := ParseNegotiationGroundTruth(raw)
		require.NoError(t, err, "%s", raw)
		assert.Equal(t, bNegGT(nil), g)
	}
	for _, tc := range []struct{ raw, msg string }{
		{``, "ground_truth: missing"},
		{` null `, "ground_truth: missing"},
		{`""`, `ground_truth: "" is not a JSON object: want the negotiation object`},
		{`"null"`, `ground_truth: "null" is not a JSON object: want the negotiation object`},
		{`"[1]"`, `ground_truth: "[1]" is not a JSON object: want the negotiation object`},
		{`"{\"role`, "ground_truth: not a valid JSON string"},
		{`42`, "ground_truth: 42 is not an object: want the negotiation object"},
		{string(obj) + ` {}`, "ground_truth: text after the object"},
		{string(obj) + ` x`, "ground_truth: text after the object"},
		{`{"role": 5}`, "ground_truth.role: want a string, got 5"},
	} {
		_, err := ParseNegotiationGroundTruth(json.RawMessage(tc.raw))
		require.Error(t, err, tc.raw)
		assert.ErrorIs(t, err, ErrInvalidItem)
		assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "%s: %v", tc.raw, err)
	}
}

func TestBParseNegotiationTranscript(t *testing.T) {
	t.Run("forms", func(t *testing.T) {
		for _, tc := range []struct {
			name, in string
			want     []NegotiationTurn
		}{
			{"JSON lines with blank lines", "\n\n{\"role\": \"a\", \"text\": \"one\"}\n  \n{\"text\": \"two\", \"role\": null}\n\n",
				[]NegotiationTurn{{Role: "a", Text: "one"}, {Text: "two"}}},
			{"lines that each start an object", "{\"role\": \"a\", \"text\": \"x\"}\n{\"role\": \"b\", \"text\": \"y\", \"think_s\": 0}",
				[]NegotiationTurn{{Role: "a", Text: "x"}, {Role: "b", Text: "y"}}},
			{"one object over lines", "{\n\"role\": \"b\",\n\"text\": \"hi there\",\n\"think_s\": 1e6\n}",
				[]NegotiationTurn{{Role: "b", Text: "hi there", ThinkS: 1e6}}},
			{"array", `[{"role": "a", "text": "x", "action": {"action": "batna"}, "extra": 1}]`,
				[]NegotiationTurn{{Role: "a", Text: "x", Action: json.RawMessage(`{"action": "batna"}`)}}},
		} {
			got, err := ParseNegotiationTranscript(tc.in)
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.want, got, tc.name)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct{ in, msg string }{
			{" \n\t", "empty transcript"},
			{"[]", "empty transcript"},
			{"[1, 2", "not a JSON array of messages"},
			{"{\"text\": \"a\"}\n\n{\"text\": \"b\"}\nnot json", "line 4 is not JSON"},
			{`[{"text": "a"}, 5]`, "message 2: want an object, got 5"},
			{`[{"text": "a"}, {"role": "b"}]`, "message 2: text must be a string"},
			{`[{"text": "a"}, {"text": "b", "think_s": 1000000.5}]`, "message 2: think_s 1.0000005e+06 is not a number of seconds from 0 to 1e+06"},
			{`[{"text": "a"}, {"text": "b", "think_s": -0.5}]`, "message 2: think_s -0.5 is not"},
			{`[{"text": "a", "role": 3}]`, "message 1: role: want a string, got 3"},
		} {
			_, err := ParseNegotiationTranscript(tc.in)
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.msg, tc.in)
		}
	})
	t.Run("message limit", func(t *testing.T) {
		msgs := strings.Repeat(`{"text":""},`, 10000)
		got, err := ParseNegotiationTranscript("[" + strings.TrimSuffix(msgs, ",") + "]")
		require.NoError(t, err)
		assert.Len(t, got, 10000)
		_, err = ParseNegotiationTranscript("[" + msgs + `{"text":""}]`)
		assert.EqualError(t, err, "10001 messages, more than 10000")
	})
}

func TestBParseNegotiationActionForms(t *testing.T) {
	for _, tc := range []struct{ raw, kind, msg string }{
		{` "{\"action\": \" PROPOSE \", \"offer\": {\"x\": \"lo\"}}" `, NegotiationPropose, ""},
		{`"  {\"action\": \"reject\"}  "`, NegotiationReject, ""},
		{`"   "`, "", `the string "   " does not hold a JSON object`},
		{`""`, "", `the string "" does not hold a JSON object`},
		{`"[{\"action\": \"accept\"}]"`, "", "does not hold a JSON object"},
		{`"{\"action\": "`, "", "not an action object"},
		{`"{\"action`, "", "not a valid JSON string"},
		{`{"action": null}`, "", `no "action" field`},
		{`{"action": "propose", "offer": null}`, "", `propose without an "offer" object`},
	} {
		a, err := ParseNegotiationAction(json.RawMessage(tc.raw))
		if tc.msg != "" {
			require.Error(t, err, tc.raw)
			assert.Contains(t, err.Error(), tc.msg, tc.raw)
			continue
		}
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.kind, a.Kind, tc.raw)
	}
}

// Play: what each action does, and what is invalid.
func TestBNegotiationPlay(t *testing.T) {
	propose := func(role, x, y string) NegotiationTurn {
		offer := map[string]any{"x": x, "y": y}
		if y == "" {
			offer["y"] = nil
		}
		b, _ := json.Marshal(map[string]any{"action": "propose", "offer": offer})
		return NegotiationTurn{Role: role, Text: "offer", Action: b}
	}
	act := func(role, kind string) NegotiationTurn {
		return NegotiationTurn{Role: role, Text: kind, Action: json.RawMessage(`{"action": "` + kind + `"}`)}
	}
	raw := func(role, action string) NegotiationTurn {
		return NegotiationTurn{Role: role, Text: "x", Action: json.RawMessage(action)}
	}
	tests := []struct {
		name string
		gt   func(*NegotiationGroundTruth)
		msgs []NegotiationTurn
		want NegotiationOutcome
	}{
		{"reject with nothing standing", nil,
			[]NegotiationTurn{act("b", "reject"), propose("b", "hi", "no"), act("a", "accept")},
			// 1 + 1 + 1 words at 150 wpm: 0.4 s each.
			NegotiationOutcome{Deal: true, Agreement: []int{2, 0}, ClosedAtS: 1.2, ClosedAtTurn: 3, Turns: 3, ElapsedS: 1.2, Invalid: 1}},
		{"rejecting one's own proposal", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), act("b", "reject"), act("a", "accept")},
			NegotiationOutcome{Deal: true, Agreement: []int{2, 0}, ClosedAtS: 1.2, ClosedAtTurn: 3, Turns: 3, ElapsedS: 1.2, Invalid: 1}},
		{"a reject withdraws the other's proposal", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), act("a", "reject"), act("a", "accept")},
			NegotiationOutcome{Turns: 3, ElapsedS: 1.2, Invalid: 1}},
		{"accept with nothing standing", nil,
			[]NegotiationTurn{act("a", "accept"), act("b", "accept")},
			NegotiationOutcome{Turns: 2, ElapsedS: 0.8, Invalid: 2}},
		{"a newer proposal replaces the older", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), propose("b", "lo", "yes"), act("a", "accept")},
			NegotiationOutcome{Deal: true, Agreement: []int{0, 1}, ClosedAtS: 1.2, ClosedAtTurn: 3, Turns: 3, ElapsedS: 1.2}},
		{"an open issue cannot be accepted", nil,
			[]NegotiationTurn{propose("b", "hi", ""), act("a", "accept")},
			NegotiationOutcome{Turns: 2, ElapsedS: 0.8, Invalid: 1}},
		{"an unknown issue makes the offer invalid even if its value names an option", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), raw("b", `{"action": "propose", "offer": {"x": "lo", "y": "yes", "z": "yes"}}`), act("a", "accept")},
			NegotiationOutcome{Deal: true, Agreement: []int{2, 0}, ClosedAtS: 1.2, ClosedAtTurn: 3, Turns: 3, ElapsedS: 1.2, Invalid: 1}},
		{"an unknown option makes the offer invalid", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), raw("b", `{"action": "propose", "offer": {"x": "max"}}`), act("a", "accept")},
			NegotiationOutcome{Deal: true, Agreement: []int{2, 0}, ClosedAtS: 1.2, ClosedAtTurn: 3, Turns: 3, ElapsedS: 1.2, Invalid: 1}},
		{"unreadable actions count as invalid", nil,
			[]NegotiationTurn{raw("a", `{"action": "shout"}`), raw("b", `[`), raw("a", `{"action": "message"}`)},
			NegotiationOutcome{Turns: 3, ElapsedS: 1.2, Invalid: 2}},
		{"a walk-away ends it; later messages are ignored", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), act("b", "batna"), act("a", "accept"), act("a", "accept")},
			NegotiationOutcome{BATNATaken: true, ClosedAtS: 0.8, ClosedAtTurn: 2, Turns: 2, ElapsedS: 0.8}},
		{"an accept ends it", nil,
			[]NegotiationTurn{propose("b", "hi", "no"), act("a", "accept"), act("b", "batna")},
			NegotiationOutcome{Deal: true, Agreement: []int{2, 0}, ClosedAtS: 0.8, ClosedAtTurn: 2, Turns: 2, ElapsedS: 0.8}},
		{"the opening is not repeated when the transcript starts with it",
			func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "b", Text: "hi there"} },
			[]NegotiationTurn{{Role: "b", Text: "hello"}, act("a", "batna")},
			NegotiationOutcome{BATNATaken: true, ClosedAtS: 0.8, ClosedAtTurn: 2, Turns: 2, ElapsedS: 0.8}},
		{"the opening comes first otherwise",
			func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "b", Text: "hi there"} },
			[]NegotiationTurn{act("a", "batna")},
			// 2 words, then 1: 0.8 + 0.4 s.
			NegotiationOutcome{BATNATaken: true, ClosedAtS: 1.2, ClosedAtTurn: 2, Turns: 2, ElapsedS: 1.2}},
		{"think time counts with the clock",
			func(g *NegotiationGroundTruth) { g.DeadlineS = 5 },
			[]NegotiationTurn{{Role: "a", Text: "x", ThinkS: 4.5}, act("b", "batna")},
			// 0.4 + 4.5 = 4.9 s; the walk-away would end at 5.3 s.
			NegotiationOutcome{OutOfBudget: true, Turns: 1, ElapsedS: 5}},
		{"the deadline cuts a message that would end after it",
			func(g *NegotiationGroundTruth) { g.DeadlineS = 0.5 },
			[]NegotiationTurn{act("a", "message"), act("b", "batna")},
			NegotiationOutcome{OutOfBudget: true, Turns: 1, ElapsedS: 0.5}},
		{"a turn limit counts messages",
			func(g *NegotiationGroundTruth) { g.Condition, g.DeadlineS, g.TurnLimit = NegotiationTurnLimit, 0, 1 },
			[]NegotiationTurn{{Role: "a", Text: strings.Repeat("w ", 1000), ThinkS: 100}, act("b", "batna")},
			// 1000 words: 400 s, and no think time under a turn limit.
			NegotiationOutcome{OutOfBudget: true, Turns: 1, ElapsedS: 400}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := bNegGT(tc.gt).Play(tc.msgs)
			require.NoError(t, err)
			assert.InDelta(t, tc.want.ClosedAtS, out.ClosedAtS, 1e-9)
			assert.InDelta(t, tc.want.ElapsedS, out.ElapsedS, 1e-9)
			out.ClosedAtS, out.ElapsedS = tc.want.ClosedAtS, tc.want.ElapsedS
			assert.Equal(t, tc.want, out)
		})
	}
	t.Run("a stranger's message", func(t *testing.T) {
		_, err := bNegGT(nil).Play([]NegotiationTurn{{Role: "a", Text: "x"}, {Role: "c", Text: "y"}})
		assert.EqualError(t, err, `message 2: role "c" is not a role of scenario s`)
	})
}

func TestBSpeechSeconds(t *testing.T) {
	// 3 words at 150 wpm: 3·60/150 = 1.2 s; at 60 wpm 3 s; no words 0.
	assert.InDelta(t, 1.2, SpeechSeconds(" one  two\tthree\n", 150), 1e-12)
	assert.InDelta(t, 3.0, SpeechSeconds("one two three", 60), 1e-12)
	assert.Equal(t, 0.0, SpeechSeconds("  ", 150))
	g := bNegGT(nil)
	assert.Equal(t, 150.0, g.wpm())
	g.WPM = 90
	assert.Equal(t, 90.0, g.wpm())
}

// --- traveler.go --------------------------------------------------------

func TestBTravelerGroundTruthEdges(t *testing.T) {
	ok := []struct {
		name, gt, response string
		score              float64
	}{
		// The largest count a ground truth may hold, and 4096 probabilities
		// in all (one list, or shared among subjects).
		{"count at MaxInt32", `{"category":"explicit","template":"how_often","answer":2147483647}`, "ANSWER: 2147483647", 1},
		{"4096 probabilities", `{"category":"vague","template":"how_often","probabilities":[` + strings.TrimSuffix(strings.Repeat("0,", 4096), ",") + `]}`, "ANSWER: 0", 1},
		{"4096 probabilities over subjects", `{"category":"vague","template":"who","probabilities":{"Tom":[` + strings.TrimSuffix(strings.Repeat("0,", 2048), ",") +
			`],"Mary":[` + strings.TrimSuffix(strings.Repeat("1,", 2048), ",") + `]}}`, "ANSWER: Mary", 1},
		{"subject names compare without case and article", `{"category":"vague","template":"who","probabilities":{"The Robot":[0.5],"tom":[]}}`, "ANSWER: robot", 0.5},
		{"stringified with spaces", `" {\"category\":\"implicit\",\"template\":\"when_last\",\"answer\":\"never\"} "`, "ANSWER: never", 1},
		{"when last date", `{"category":"explicit","template":"when_last","answer":"2024-02-29"}`, "ANSWER: 2024-02-29", 1},
		{"when last date against never", `{"category":"explicit","template":"when_last","answer":"2024-02-29"}`, "ANSWER: never", 0},
		{"when last never against a date", `{"category":"explicit","template":"when_last","answer":"never"}`, "ANSWER: 2024-02-29", 0},
		{"did no against yes", `{"category":"implicit","template":"did","answer":"yes"}`, "ANSWER: no", 0},
		{"did no", `{"category":"implicit","template":"did","answer":"no"}`, "ANSWER: no", 1},
		{"who names sorted and deduplicated", `{"category":"explicit","template":"who","answer":["tom","Mary","the Tom"]}`, "ANSWER: Mary and Tom", 1},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			res := scoreTravelerItem(t, tc.gt, tc.response)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
		})
	}
	bad := []struct{ gt, want string }{
		{`null`, "ground_truth: missing"},
		{`"null"`, `ground_truth: "null" is not a JSON object: want a TRAVELER object`},
		{`"  "`, `ground_truth: "  " is not a JSON object: want a TRAVELER object`},
		{`"{\"category`, "ground_truth: not a valid JSON string"},
		{`{"category": 5}`, "ground_truth.category: want a string, got 5"},
		{`{"category":"explicit","template":"did","answer":null}`, "ground_truth.answer: missing"},
		{`{"category":"explicit","template":"did","answer":true}`, "ground_truth.answer: true: want \"yes\" or \"no\""},
		{`{"category":"explicit","template":"did","answer":"no "}`, "ground_truth.answer: \"no \": want \"yes\" or \"no\""},
		{`{"category":"explicit","template":"how_often","answer":2147483648}`, "ground_truth.answer: 2147483648: want a whole number"},
		{`{"category":"explicit","template":"how_often","answer":"3"}`, "ground_truth.answer: \"3\": want a whole number"},
		{`{"category":"explicit","template":"when_last","answer":5}`, "ground_truth.answer: 5: want a YYYY-MM-DD date"},
		{`{"category":"explicit","template":"who","answer":["Mary","and"]}`, `ground_truth.answer: item 2: "and" is not a name`},
		{`{"category":"vague","template":"did","probabilities":null}`, "ground_truth.probabilities: missing"},
		{`{"category":"vague","template":"did","probabilities":[0.5,-0.1]}`, "ground_truth.probabilities: item 2: -0.1 is not in [0, 1]"},
		{`{"category":"vague","template":"did","probabilities":{"Tom":[0.5]}}`, "ground_truth.probabilities: want a list of probabilities"},
		{`{"category":"vague","template":"who","probabilities":{"Tom":[0.5],"Mary Ann":[0.1]}}`, `ground_truth.probabilities: "Mary Ann" is not a name`},
		{`{"category":"vague","template":"who","probabilities":{"Tom":[2]}}`, "ground_truth.probabilities: Tom: item 1: 2 is not in [0, 1]"},
		{`{"category":"vague","template":"who","probabilities":{"Tom":0.5}}`, "ground_truth.probabilities.Tom: want a list of probabilities, got 0.5"},
		{`{"category":"vague","template":"who","probabilities":{"Tom":[` + strings.Repeat("0,", 2048) + `0],"Mary":[` + strings.TrimSuffix(strings.Repeat("0,", 2048), ",") + `]}}`,
			"ground_truth.probabilities: more than 4096 probabilities"},
	}
	for _, tc := range bad {
		t.Run(tc.want, func(t *testing.T) {
			res := scoreTravelerItem(t, tc.gt, "ANSWER: yes")
			require.Error(t, res.Err)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			assert.True(t, strings.HasPrefix(res.Err.Error(), tc.want), "%v", res.Err)
		})
	}
}

// "optimal" allows 1e-12 of floating-point noise, boundary included. With
// P_Mary = 0.7442825149537509 and P_Tom = 0.5000000000006718 (one event
// each), the best answer "Mary, Tom" scores 0.3721412574773754 and "Mary"
// 0.37214125747637544, which is exactly that minus 1e-12 in float64 (worked
// out with a plain reference computation of the same products).
func TestBTravelerOptimalTolerance(t *testing.T) {
	gt := `{"category":"vague","template":"who","probabilities":{"Mary":[0.7442825149537509],"Tom":[0.5000000000006718]}}`
	best := scoreTravelerItem(t, gt, "ANSWER: Mary, Tom")
	require.NoError(t, best.Err)
	assert.Equal(t, 0.3721412574773754, best.Score)
	assert.Equal(t, 1.0, best.Details[1])
	near := scoreTravelerItem(t, gt, "ANSWER: Mary")
	require.NoError(t, near.Err)
	assert.Equal(t, 0.37214125747637544, near.Score)
	require.Equal(t, near.Score, best.Score-1e-12, "the case this test is about")
	assert.Equal(t, 1.0, near.Details[1], "within 1e-12 of the best counts as optimal")
	far := scoreTravelerItem(t, gt, "ANSWER: Tom")
	require.NoError(t, far.Err)
	assert.Equal(t, 0.0, far.Details[1])
}

func TestBParseTravelerAnswerEdges(t *testing.T) {
	tests := []struct {
		template, response string
		want               TravelerAnswer
		ok                 bool
	}{
		// did: the first word must be yes or no, letters a–z only.
		{TravelerDid, "ANSWER: Noah did", TravelerAnswer{}, false},
		{TravelerDid, "ANSWER: Nozomi did", TravelerAnswer{}, false},
		{TravelerDid, "ANSWER: yesz", TravelerAnswer{}, false},
		{TravelerDid, "ANSWER: no", TravelerAnswer{}, true},
		{TravelerDid, "ANSWER: No-one did", TravelerAnswer{}, true},
		{TravelerDid, "ANSWER: yes!", TravelerAnswer{Yes: true}, true},
		{TravelerDid, "ANSWER: 1 yes", TravelerAnswer{}, false},
		// how often: the number words stand alone.
		{TravelerHowOften, "ANSWER: never times", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: once times", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: twice time", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: 0 times", TravelerAnswer{}, true},
		{TravelerHowOften, "ANSWER: 2 time", TravelerAnswer{Count: 2}, true},
		{TravelerHowOften, "ANSWER: 2 days", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: -0", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: \v", TravelerAnswer{}, false},
		// who: names are ASCII letters, digits, hyphens and apostrophes, at
		// most 64 bytes.
		{TravelerWho, "ANSWER: o'neil, jean-luc, r2d2, zed, azure9", TravelerAnswer{Names: []string{"azure9", "jean-luc", "o'neil", "r2d2", "zed"}}, true},
		{TravelerWho, "ANSWER: " + strings.Repeat("a", 64), TravelerAnswer{Names: []string{strings.Repeat("a", 64)}}, true},
		{TravelerWho, "ANSWER: " + strings.Repeat("a", 65), TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: tom/mary", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: tom:", TravelerAnswer{Names: []string{"tom:"}}, false},
		{TravelerWho, "ANSWER: t`m", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: {tom", TravelerAnswer{Names: []string{"tom"}}, true},
		{TravelerWho, "ANSWER: José", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: the the", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: Tom & the", TravelerAnswer{}, false},
		// the answer may sit on the line after the marker
		{TravelerWhenLast, "ANSWER:\n2023-09-28\nbecause", TravelerAnswer{Date: "2023-09-28"}, true},
		{TravelerWhenLast, "answer: NEVER", TravelerAnswer{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.template+"/"+tc.response, func(t *testing.T) {
			got, ok := ParseTravelerAnswer(tc.response, tc.template)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
	for _, tc := range []struct{ name, key string }{
		{"Tom", "tom"}, {" The Robot ", "robot"}, {"the  mary", "mary"}, {"and", ""}, {"the", ""}, {"The", ""}, {"", ""},
		{strings.Repeat("z", 64), strings.Repeat("z", 64)}, {strings.Repeat("z", 65), ""}, {"a0-'9z", "a0-'9z"}, {"a/b", ""}, {"a:b", ""}, {"a`b", ""}, {"a{b", ""},
	} {
		assert.Equal(t, tc.key, travelerNameKey(tc.name), "%q", tc.name)
	}
}

func TestBFormatTravelerAnswer(t *testing.T) {
	assert.Equal(t, "nobody", FormatTravelerAnswer(TravelerWho, TravelerAnswer{}))
	assert.Equal(t, "mary, tom", FormatTravelerAnswer(TravelerWho, TravelerAnswer{Names: []string{"mary", "tom"}}))
	assert.Equal(t, "yes", FormatTravelerAnswer(TravelerDid, TravelerAnswer{Yes: true}))
	assert.Equal(t, "no", FormatTravelerAnswer(TravelerDid, TravelerAnswer{}))
	assert.Equal(t, "0", FormatTravelerAnswer(TravelerHowOften, TravelerAnswer{}))
	assert.Equal(t, "12", FormatTravelerAnswer(TravelerHowOften, TravelerAnswer{Count: 12}))
	assert.Equal(t, "never", FormatTravelerAnswer(TravelerWhenLast, TravelerAnswer{}))
	assert.Equal(t, "2023-09-28", FormatTravelerAnswer(TravelerWhenLast, TravelerAnswer{Date: "2023-09-28"}))
}

// --- tictoc.go ----------------------------------------------------------

func TestBClipForError(t *testing.T) {
	x40 := strings.Repeat("x", 40)
	assert.Equal(t, x40, clipForError(x40), "40 bytes are kept")
	assert.Equal(t, x40+"…", clipForError(x40+"y"))
	// Byte 40 inside "é" (bytes 39–40): cut before it, at 39 bytes.
	assert.Equal(t, strings.Repeat("x", 39)+"…", clipForError(strings.Repeat("x", 39)+"éyyy"))
	// Byte 40 inside "東" (bytes 38–40): cut at 38.
	assert.Equal(t, strings.Repeat("x", 38)+"…", clipForError(strings.Repeat("x", 38)+"東yyy"))
	// Nothing but continuation bytes: nothing is kept.
	assert.Equal(t, "…", clipForError(strings.Repeat("\x80", 50)))
	assert.Equal(t, `"`+x40+`…"`, quoteForError(x40+"zz"))
}

func TestBTicTocGroundTruthNulls(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, tc := range []struct{ gt, msg string }{
		{`{"preferred": null, "margin": 1}`, "ground_truth.preferred: missing: want tool or direct"},
		{`"{\"preferred\": "`, "ground_truth: not a valid JSON object"},
		{`"\"tool`, "ground_truth: not a valid JSON string"},
		{`" "`, `ground_truth: string "" is neither tool, direct nor a JSON object`},
		{`{"preferred": "tool", "margin": NaN}`, "ground_truth: not a valid JSON object"},
	} {
		res := s.Score(context.Background(), &Item{DataSource: "tictoc/decision", SolutionStr: bDirect, GroundTruth: json.RawMessage(tc.gt)})
		require.Error(t, res.Err, tc.gt)
		assert.True(t, strings.HasPrefix(res.Err.Error(), tc.msg), "%s: %v", tc.gt, res.Err)
	}
	// A bare label with spaces around it.
	d, err := parseTicTocGroundTruth(json.RawMessage(`" tool "`))
	require.NoError(t, err)
	assert.Equal(t, ToolDecision{PreferTool: true}, d)
}

// --- toolcall.go --------------------------------------------------------

func TestBToolCallThinkAndTrailers(t *testing.T) {
	for _, tc := range []struct {
		response string
		style    string
	}{
		// A reasoning block closed at the very start: what follows is the reply.
		{`</think>{"name": "get_time", "parameters": {}}`, styleLlama},
		{"</think>Sure.", ""},
		{"</think></think>[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}]", styleMistral},
		// Llama calls whose arguments are a JSON string.
		{`{"name": "search", "arguments": "{\"q\": \"x\"}"}`, styleLlama},
		{`{"name": "search", "parameters": " {} "}`, styleLlama},
		{`{"name": "search", "parameters": [1]}`, ""},
		{`{"name": "search", "parameters": null, "arguments": {}}`, styleLlama},
		// Special tokens after a call: any <|...|>, and </s>.
		{`{"name": "f", "parameters": {}}<|>`, styleLlama},
		{`{"name": "f", "parameters": {}} <|eot_id|> </s> <|end|>`, styleLlama},
		{`{"name": "f", "parameters": {}}<|eot_id`, ""},
		{`{"name": "f", "parameters": {}}<|eot_id|> and more`, ""},
		{`{"name": "f", "parameters": {}}</s>x`, ""},
		// An OpenAI list keeps the style of its first call.
		{`[{"function": {"name": "f"}}, {"name": "g", "parameters": {}}]`, styleOpenAI},
		{`[{"name": "g", "parameters": {}}, {"function": {"name": "f"}}]`, styleLlama},
		{`{"function_call": {"name": " "}}`, ""},
		{`{"function_call": "f"}`, ""},
		{`{"tool_calls": {"function": {"name": "f"}}}`, ""},
		{`{"function": {"name": ""}, "name": "f", "parameters": {}}`, ""},
	} {
		style, called := tcBuiltinDetector.detect(tc.response)
		assert.Equal(t, tc.style, style, tc.response)
		assert.Equal(t, tc.style != "", called, tc.response)
	}
	assert.Nil(t, HermesCalls("</think>Sure."))
	assert.Equal(t, []HermesCall{{Name: "f", Arguments: json.RawMessage(`{}`)}},
		HermesCalls(`</think><tool_call>{"name": "f", "arguments": {}}</tool_call>`))
	// A body ends at the next opening tag or the closing one, whichever is
	// first; an empty body is no call.
	assert.Equal(t, []HermesCall{{Name: "g"}},
		HermesCalls(`<tool_call><tool_call>{"name": "g"}</tool_call><tool_call></tool_call>`))
	assert.Equal(t, []HermesCall{{Name: "f"}, {Name: "g"}},
		HermesCalls(`<tool_call>{"name": "f"}<tool_call>{"name": "g"}`))
}

func TestBToolCallPatternErrors(t *testing.T) {
	_, err := newToolCallDetector([]string{"a", "b", ""})
	assert.EqualError(t, err, "entry 3 is empty (it would match every response)")
	_, err = newToolCallDetector([]string{"a", "(b"})
	assert.ErrorContains(t, err, "entry 2: error parsing regexp")
	var nilDetector *toolCallDetector
	style, called := nilDetector.detect(`{"name": "f", "parameters": {}}`)
	assert.Equal(t, styleLlama, style)
	assert.True(t, called)
	_, called = nilDetector.detect("Action: f")
	assert.False(t, called)
}

// A number names an option only with the label's sign: a label is negative
// when a minus sign comes before its first digit.
func TestBNegotiationOptionSign(t *testing.T) {
	s := NegotiationScenario{ID: "s", Roles: []NegotiationRole{{ID: "a"}, {ID: "b"}}, Issues: []NegotiationIssue{{
		ID: "discount", Options: []string{"-5%", "0%", "10 %", "− 20 %", "day-30", "95%"},
		Points: map[string][]float64{"a": {0, 1, 2, 3, 4, 5}, "b": {5, 4, 3, 2, 1, 0}},
	}}}
	require.NoError(t, s.Validate())
	for _, tc := range []struct {
		v    string
		want int
		ok   bool
	}{
		{`-5`, 0, true},
		{`5`, 0, false},
		{`0`, 1, true},
		{`-0`, 1, true}, // −0 is 0
		{`10`, 2, true},
		{`-10`, 0, false},
		{`-20`, 3, true}, // U+2212 counts as a minus
		{`20`, 0, false},
		{`30`, 0, false},  // "day-30" reads "day30"
		{`"5%"`, 0, true}, // a label compares by letters and digits only
		{`"-10"`, 2, true},
		{`95`, 5, true}, // a number may start with any digit, 0 to 9
		{`9.5e1`, 5, true},
		{``, 0, false}, // no value
		{` `, 0, false},
		{`x`, 0, false},
	} {
		got, ok := s.OptionIndex(0, json.RawMessage(tc.v))
		assert.Equal(t, tc.ok, ok, tc.v)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.v)
		}
	}
	assert.False(t, negLabelNegative("$44,000"))
	assert.False(t, negLabelNegative("Aug 1 - Sep 1"))
	assert.True(t, negLabelNegative("-$5"))
	assert.True(t, negLabelNegative("−5"))
	assert.False(t, negLabelNegative("none"))
}
