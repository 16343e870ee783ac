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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		if !strings.ContainsAny(tc.in, "\x80\xff\x9d") {
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
// ShardCount; errors and Lines keep the input's own numbering.
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
	sum, out := run(LinesOptions{ShardIndex: 1, ShardCount: 3, Before: 2})
	assert.Equal(t, LinesSummary{Items: 2, Failed: 1, Skipped: 5, Lines: 7, Sum: 1, FirstErrors: sum.FirstErrors}, *sum)
	require.Len(t, sum.FirstErrors, 1)
	assert.True(t, strings.HasPrefix(sum.FirstErrors[0], "line 6: "), sum.FirstErrors[0])
	assert.Len(t, out, 2)
	// Without Before, shard 1 of 3 takes n − 1 ≡ 1: n = 2 and 5.
	sum, _ = run(LinesOptions{ShardIndex: 1, ShardCount: 3})
	assert.Equal(t, 2, sum.Items)
	assert.Equal(t, 0, sum.Failed)
	assert.Equal(t, 5, sum.Skipped)
	// Shard 0 of 2 after 1 line: (1 + n − 1) mod 2 = 0 for n = 2, 4, 6.
	sum, _ = run(LinesOptions{ShardIndex: 0, ShardCount: 2, Before: 1})
	assert.Equal(t, 3, sum.Items)
	assert.Equal(t, 1, sum.Failed, "line 6")
	assert.Equal(t, 4, sum.Skipped)
	// One shard (or none) scores every line, whatever the index says.
	for _, opt := range []LinesOptions{{ShardCount: 1, ShardIndex: 1}, {ShardCount: 0, ShardIndex: 3}, {ShardCount: 1, Before: 5}} {
		sum, out = run(opt)
		assert.Equal(t, 7, sum.Items, "%+v", opt)
		assert.Equal(t, 0, sum.Skipped, "%+v", opt)
		assert.Len(t, out, 7, "%+v", opt)
	}
	// Every line is scored by exactly one of the shards.
	total := 0
	for i := range 4 {
		sum, _ := run(LinesOptions{ShardIndex: i, ShardCount: 4, Before: 3})
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
		{"not an object", `[1, 2]`, "d.jsonl: line 2: not a JSON object: "},
		{"not JSON", `{"solution_str": `, "d.jsonl: line 2: not a JSON object: "},
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
