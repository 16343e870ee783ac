package rewards

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// squadCases are worked by hand from the two scripts' code (and checked
// once against them): TimeQA's compute_exact/compute_f1 and SQuAD v1.1's
// exact_match_score/f1_score, each the best over the golds. The interop
// test python/tests/interop/test_public_bench_oracle.py compares many more
// against the scripts themselves.
var squadCases = []struct {
	name         string
	pred         string
	golds        []string
	em           float64
	f1TimeQA     float64
	f1TempReason float64
}{
	{"exact", "George Peter", []string{"George Peter"}, 1, 1, 1},
	{"article and full stop dropped", "the George Peter.", []string{"George Peter"}, 1, 1, 1},
	{"partial", "Peter", []string{"George Peter"}, 0, 2.0 / 3, 2.0 / 3},
	{"punctuation only against empty gold", "-", []string{""}, 1, 1, 0},
	{"answer against empty gold", "George Peter", []string{""}, 0, 0, 0},
	{"article only against empty gold", "the", []string{""}, 1, 1, 0},
	{"two articles", "A", []string{"an"}, 1, 1, 0},
	{"multiple golds, one exact", "1995", []string{"March 1995", "1995"}, 1, 1, 1},
	{"multiple golds, best F1", "March 1994", []string{"March 1995", "1994"}, 0, 2.0 / 3, 2.0 / 3},
	{"unicode lower case", "Ålborg", []string{"ålborg"}, 1, 1, 1},
	{"dotted capital I lowers to i and a combining dot", "İstanbul", []string{"istanbul"}, 0, 0, 0},
	{"final sigma", "ΟΔΟΣ", []string{"οδος"}, 1, 1, 1},
	{"final sigma is not σ", "ΟΔΟΣ", []string{"οδοσ"}, 0, 0, 0},
	{"article before a combining mark", "the\u0301 end", []string{"end"}, 0, 2.0 / 3, 2.0 / 3},
	{"accented letter ends no word", "théa the", []string{"théa"}, 1, 1, 1},
	{"no accent folding", "théâtre", []string{"theatre"}, 0, 0, 0},
	{"no-break space splits", "Paris\u00a0France", []string{"paris france"}, 1, 1, 1},
	{"information separator splits", "Paris\x1cFrance", []string{"Paris France"}, 1, 1, 1},
	{"non-ASCII punctuation stays", "«»", []string{""}, 0, 0, 0},
	{"numbers are text", "2.0", []string{"2"}, 0, 0, 0},
	{"token counts", "the the cat cat", []string{"cat"}, 0, 2.0 / 3, 2.0 / 3},
	{"dots dropped", "U.S.", []string{"US"}, 1, 1, 1},
	{"underscore is punctuation", "a_b", []string{"ab"}, 1, 1, 1},
	{"articles inside", "An apple, the pear", []string{"apple pear"}, 1, 1, 1},
}

func TestSQuADScores(t *testing.T) {
	for _, tc := range squadCases {
		t.Run(tc.name, func(t *testing.T) {
			em, f1 := SQuADScores(tc.pred, tc.golds, true)
			assert.Equal(t, tc.em, em, "timeqa em")
			assert.InDelta(t, tc.f1TimeQA, f1, 1e-15, "timeqa f1")
			em, f1 = SQuADScores(tc.pred, tc.golds, false)
			assert.Equal(t, tc.em, em, "tempreason em")
			assert.InDelta(t, tc.f1TempReason, f1, 1e-15, "tempreason f1")
		})
	}
	em, f1 := SQuADScores("x", nil, true)
	assert.Zero(t, em+f1, "no gold answers")
}

func TestNormalizeSQuAD(t *testing.T) {
	for in, want := range map[string]string{
		"The Cat!":               "cat",
		"  a\tb\n c ":            "b c",
		"theory an anthem":       "theory anthem",
		"THE END":                "end",
		"the_end":                "theend",
		"l'the":                  "lthe",
		"x—the—y":                "x— —y",
		"x the—y":                "x —y",
		"Ϊ":                      "ϊ",
		"ΣΑΣ Σ":                  "σας σ",
		"2nd-the":                "2ndthe",
		"\u3000the\u2028a\u0085": "",
		"":                       "",
	} {
		assert.Equal(t, want, NormalizeSQuAD(in), "%q", in)
	}
}

func item(ds, response, gt string) Item {
	return Item{DataSource: ds, SolutionStr: response, GroundTruth: json.RawMessage(gt)}
}

func TestTimeQAAndTempReasonRewards(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, tc := range squadCases {
		if strings.Trim(tc.pred, " \t\n\r\v\f*:.") == "" || strings.Contains(tc.pred, "\n") {
			continue
		}
		gt, _ := json.Marshal(map[string]any{"answers": tc.golds})
		for _, ds := range []string{"timeqa", "tempreason"} {
			t.Run(ds+"/"+tc.name, func(t *testing.T) {
				// the ground truth as the importer writes it: a JSON string
				gs, _ := json.Marshal(string(gt))
				it := item(ds, "Let me think.\nAnswer: "+tc.pred, string(gs))
				res := s.Score(context.Background(), &it)
				require.NoError(t, res.Err)
				f1 := tc.f1TimeQA
				if ds == "tempreason" {
					f1 = tc.f1TempReason
				}
				assert.InDelta(t, f1, res.Score, 1e-15)
				assert.Equal(t, []float64{tc.em, res.Score, 1}, res.Details)
			})
		}
	}
	for _, resp := range []string{"", "I do not know.", "Answer:", "Answer: *", "Answer: ."} {
		it := item("timeqa", resp, `{"answers": [""]}`)
		res := s.Score(context.Background(), &it)
		require.NoError(t, res.Err)
		assert.Zero(t, res.Score, "%q", resp)
		assert.Equal(t, []float64{0, 0, 0}, res.Details, "%q: no answer line", resp)
	}
	// "unanswerable" is TimeQA's empty answer; for TempReason it is a word.
	for _, tc := range []struct {
		ds, resp, gt string
		details      []float64
	}{
		{"timeqa", "The passage never says.\nAnswer: Unanswerable.", `{"answers": [""]}`, []float64{1, 1, 1}},
		{"timeqa", "Answer: unanswerable", `{"answers": ["George Peter"]}`, []float64{0, 0, 1}},
		{"timeqa", "Answer: the unanswerable one", `{"answers": [""]}`, []float64{0, 0, 1}},
		{"tempreason", "Answer: unanswerable", `{"answers": ["unanswerable"]}`, []float64{1, 1, 1}},
		{"tempreason", "Answer: unanswerable", `{"answers": [""]}`, []float64{0, 0, 1}},
	} {
		it := item(tc.ds, tc.resp, tc.gt)
		res := s.Score(context.Background(), &it)
		require.NoError(t, res.Err)
		assert.Equal(t, tc.details, res.Details, "%s %q against %s", tc.ds, tc.resp, tc.gt)
	}
	it := item("tempreason", "Answer: \\boxed{Oct, 1874}", `{"answers": ["Oct, 1874"]}`)
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, 1.0, res.Score, "the answer extraction is ExtractAnswer's")
}

func TestAnswersGroundTruthErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	for gt, want := range map[string]string{
		``:                        `ground_truth: missing: want {"answers": ["...", ...]}`,
		`["x"]`:                   `ground_truth: ["x"] is not an object: want {"answers": ["...", ...]}`,
		`"x"`:                     `ground_truth: "x" is not a JSON object: want {"answers": ["...", ...]}`,
		`{}`:                      `ground_truth.answers: missing: want a list of answer strings`,
		`{"answers": []}`:         `ground_truth.answers: empty: want at least one answer ("" for an unanswerable question)`,
		`{"answers": "x"}`:        `ground_truth.answers`,
		`{"answers": ["x", 3]}`:   `ground_truth.answers[1]`,
		`"{\"answers\": [null]}"`: `ground_truth.answers[0]`,
	} {
		for _, ds := range []string{"timeqa", "tempreason", "tram"} {
			if ds == "tram" && (gt == `{}` || strings.HasPrefix(gt, `"x"`) || strings.HasPrefix(gt, `[`) || gt == ``) {
				continue
			}
			it := item(ds, "Answer: x", gt)
			res := s.Score(context.Background(), &it)
			require.Error(t, res.Err, "%s %s", ds, gt)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			assert.Contains(t, res.Err.Error(), want, "%s %s", ds, gt)
		}
	}
}

var tramOptions = `{"letter": "B", "options": {"A": "12 months back", "B": "in the dead of night", "C": "sooner or later"}}`

func TestTRAM(t *testing.T) {
	s := newTestScorer(t, nil)
	tests := []struct {
		name, response, gt string
		correct, answered  float64
	}{
		{"letter", "Answer: B", tramOptions, 1, 1},
		{"parenthesised", "Answer: (B)", tramOptions, 1, 1},
		{"full stop", "Answer: B.", tramOptions, 1, 1},
		{"letter and its text", "Answer: B) in the dead of night", tramOptions, 1, 1},
		{"letter and other words", "Answer: B) at night", tramOptions, 1, 1},
		{"parenthesised and text", "Answer: (B) in the dead of night", tramOptions, 1, 1},
		{"option", "Answer: Option B", tramOptions, 1, 1},
		{"option lower case", "Answer: option (b)", tramOptions, 1, 1},
		{"markdown", "**Answer:** **B**", tramOptions, 1, 1},
		{"the option's text", "Answer: In the Dead of Night.", tramOptions, 1, 1},
		{"another letter", "Answer: C", tramOptions, 0, 1},
		{"a letter that is no option", "Answer: E", tramOptions, 0, 1},
		{"letter contradicting its text", "Answer: B) sooner or later", tramOptions, 0, 0},
		{"two letters", "Answer: B or C", tramOptions, 0, 0},
		{"a list", "Answer: A, B", tramOptions, 0, 0},
		{"a word", "Answer: Bob", tramOptions, 0, 0},
		{"no answer line", "The answer is B", tramOptions, 0, 0},
		{"text shared by two options", "Answer: yes", `{"letter": "A", "options": {"A": "Yes", "B": "yes."}}`, 0, 0},
		{"letter against a text naming another option", "Answer: B", `{"letter": "A", "options": {"A": "B", "B": "x"}}`, 0, 0},
		{"as a JSON string", "Answer: B", mustJSONString(tramOptions), 1, 1},
		{"short answer", "Answer: 22:17", `{"answers": ["22:17"]}`, 1, 1},
		{"short answer normalised", "Answer: 2217.", `{"answers": ["22:17"]}`, 1, 1},
		{"short answer wrong", "Answer: 22:18", `{"answers": ["22:17"]}`, 0, 1},
		{"short answer, second gold", "Answer: the 3 hours", `{"answers": ["180 minutes", "3 hours"]}`, 1, 1},
		{"short answer missing", "22:17", `{"answers": ["22:17"]}`, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := item("tram", "Let me think.\n"+tc.response, tc.gt)
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.correct, res.Score)
			assert.Equal(t, []float64{tc.correct, tc.answered}, res.Details)
		})
	}
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestTRAMGroundTruthErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	for gt, want := range map[string]string{
		`{}`:                                       `ground_truth.letter: missing`,
		`{"letter": "b", "options": {"b": "x"}}`:   `ground_truth.letter: "b" is not one capital letter A to Z`,
		`{"letter": "B"}`:                          `ground_truth.options: missing`,
		`{"letter": "B", "options": {"A": "x"}}`:   `ground_truth.letter: B is not among the options`,
		`{"letter": "A", "options": {"AA": "x"}}`:  `ground_truth.options: key "AA" is not one capital letter A to Z`,
		`{"letter": "A", "options": ["x"]}`:        `ground_truth.options`,
		`{"letter": "A", "answers": ["x"]}`:        `ground_truth: has both answers and letter`,
		`{"letter": "A", "options": {"A": 1}}`:     `ground_truth.options.A`,
		`"{\"letter\": \"A\", \"options\": null}"`: `ground_truth.options: missing`,
		`{"letter": 1, "options": {"A": "x"}}`:     `ground_truth.letter: 1 is not one capital letter A to Z`,
	} {
		it := item("tram", "Answer: A", gt)
		res := s.Score(context.Background(), &it)
		require.Error(t, res.Err, gt)
		assert.ErrorIs(t, res.Err, ErrInvalidItem)
		assert.Contains(t, res.Err.Error(), want, gt)
	}
}

func TestTestOfTime(t *testing.T) {
	s := newTestScorer(t, nil)
	sem := func(label string) string { return `{"kind": "semantic", "label": {"answer": ` + label + `}}` }
	ari := func(label string) string { return `{"kind": "arithmetic", "label": ` + label + `}` }
	tests := []struct {
		name, response, gt string
		correct, parsed    float64
	}{
		{"semantic", `{"explanation": "E76 came first.", "answer": "E76"}`, sem(`"E76"`), 1, 1},
		{"fenced", "Reasoning...\n```json\n{\"explanation\": \"x\", \"answer\": \"E76\"}\n```", sem(`"E76"`), 1, 1},
		{"semantic is case-sensitive", `{"answer": "e76"}`, sem(`"E76"`), 0, 1},
		{"semantic spaces", `{"answer": " E 76 "}`, sem(`"E76"`), 1, 1},
		{"single quotes are not JSON", `{'answer': 'E76'}`, sem(`"E76"`), 0, 0},
		{"no JSON", `Answer: E76`, sem(`"E76"`), 0, 0},
		{"timeline with spaces", `{"answer": "E59, E57, E43"}`, sem(`"E59,E57,E43"`), 1, 1},
		{"timeline as a list", `{"answer": ["E59", "E57", "E43"]}`, sem(`"E59,E57,E43"`), 1, 1},
		{"timeline out of order", `{"answer": "E57,E59,E43"}`, sem(`"E59,E57,E43"`), 0, 1},
		{"year as a number", `{"answer": 1985}`, sem(`"1985"`), 1, 1},
		{"count 2.0 is 2", `{"answer": 2.0}`, sem(`"2"`), 1, 1},
		{"the last object", `{"answer": "E1"} no, wait: {"answer": "E76"}`, sem(`"E76"`), 1, 1},
		{"not an earlier one", `{"answer": "E76"} no, wait: {"answer": "E1"}`, sem(`"E76"`), 0, 1},
		{"the outermost object", `{"explanation": {"step": "E1"}, "answer": "E76"}`, sem(`"E76"`), 1, 1},
		{"after LaTeX braces", `\frac{1}{2} then {"answer": "E76"} and \boxed{x}`, sem(`"E76"`), 1, 1},
		{"without the answer key", `{"explanation": "E76"}`, sem(`"E76"`), 0, 1},
		{"era case-folded", `{"explanation": "360-8", "answer": "352 bc"}`, ari(`{"answer": "352 BC"}`), 1, 1},
		{"inner space kept", `{"answer": "352BC"}`, ari(`{"answer": "352 BC"}`), 0, 1},
		{"numbers by value", `{"H": 2, "M": 13, "S": 30}`, ari(`{"H": 2.0, "M": 13.0, "S": 30.0}`), 1, 1},
		{"a number in a string", `{"H": "2", "M": 13, "S": 30.0}`, ari(`{"H": 2.0, "M": 13.0, "S": 30.0}`), 1, 1},
		{"a key missing", `{"H": 2, "M": 13}`, ari(`{"H": 2.0, "M": 13.0, "S": 30.0}`), 0, 1},
		{"a value wrong", `{"H": 2, "M": 13, "S": 31}`, ari(`{"H": 2.0, "M": 13.0, "S": 30.0}`), 0, 1},
		{"multiset", `{"unordered_list": ["b", "A", "b"]}`, ari(`{"unordered_list": ["a", "b", "b"]}`), 1, 1},
		{"multiset counts", `{"unordered_list": ["a", "a", "b"]}`, ari(`{"unordered_list": ["a", "b", "b"]}`), 0, 1},
		{"multiset size", `{"unordered_list": ["a", "b"]}`, ari(`{"unordered_list": ["a", "b", "b"]}`), 0, 1},
		{"ordered", `{"ordered_list": ["x", "y"]}`, ari(`{"ordered_list": ["x", "y"]}`), 1, 1},
		{"ordered out of order", `{"ordered_list": ["y", "x"]}`, ari(`{"ordered_list": ["x", "y"]}`), 0, 1},
		{"string number against number", `{"answer": "5.0"}`, ari(`{"answer": 5}`), 1, 1},
		{"day and time", `{"day": "monday", "time": "10:00"}`, ari(`{"day": "Monday", "time": "10:00"}`), 1, 1},
		{"list against a string", `{"unordered_list": "a, b"}`, ari(`{"unordered_list": ["a", "b"]}`), 0, 1},
		{"as a JSON string", `{"answer": "E76"}`, mustJSONString(sem(`"E76"`)), 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := item("test_of_time", tc.response, tc.gt)
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.Equal(t, tc.correct, res.Score)
			assert.Equal(t, []float64{tc.correct, tc.parsed}, res.Details)
		})
	}
}

func TestTestOfTimeGroundTruthErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	for gt, want := range map[string]string{
		`{"label": {"answer": "x"}}`:                              `ground_truth.kind: missing`,
		`{"kind": "other", "label": {"answer": "x"}}`:             `ground_truth.kind: "other": want semantic or arithmetic`,
		`{"kind": "semantic"}`:                                    `ground_truth.label: missing or not an object`,
		`{"kind": "semantic", "label": {}}`:                       `ground_truth.label: empty`,
		`{"kind": "semantic", "label": {"answer": 3}}`:            `ground_truth.label.answer: missing or not a string`,
		`{"kind": "arithmetic", "label": "{'answer': '352 BC'}"}`: `ground_truth.label: missing or not an object`,
	} {
		it := item("test_of_time", `{"answer": "x"}`, gt)
		res := s.Score(context.Background(), &it)
		require.Error(t, res.Err, gt)
		assert.Contains(t, res.Err.Error(), want, gt)
	}
}

func TestLastJSONObjectLinear(t *testing.T) {
	for _, resp := range []string{
		strings.Repeat("{", 200000) + `{"answer": 1}`,
		strings.Repeat(`{"a": `, 100000),
		strings.Repeat(`{"x" {`, 50000) + strings.Repeat("}", 100000),
	} {
		_, _ = LastJSONObject(resp) // must return promptly (the test's timeout)
	}
	m, ok := LastJSONObject(`{"a": 1, "a": 2}`)
	require.True(t, ok)
	assert.Equal(t, json.RawMessage(`2`), m["a"], "a repeated key keeps its last value")
}

func FuzzLastJSONObject(f *testing.F) {
	for _, s := range []string{`{"answer": "E76"}`, "```json\n{\"a\": [1, {\"b\": 2}]}\n```", `{'a': 1}`, `{"a": "}"} {`, `\frac{1}{2}`, `{"a":1}{"b":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := LastJSONObject(s)
		if !ok {
			assert.Nil(t, m)
			return
		}
		// What was read is an object that a JSON decoder reads back, and
		// it comes from the response: reading it alone gives it again.
		b, err := json.Marshal(m)
		require.NoError(t, err)
		again, ok := LastJSONObject(string(b))
		require.True(t, ok)
		assert.Equal(t, len(m), len(again))
	})
}

func FuzzReadOptionLetter(f *testing.F) {
	for _, s := range []string{"B", "(b)", "B) text", "Option C", "in the dead of night", "B or C", "", "(", "option"} {
		f.Add(s, "12 months back", "in the dead of night")
	}
	f.Fuzz(func(t *testing.T, ans, a, b string) {
		opts := map[string]string{"A": a, "B": b}
		l, ok := ReadOptionLetter(ans, opts)
		if !ok {
			assert.Empty(t, l)
			return
		}
		require.Len(t, l, 1)
		assert.True(t, l[0] >= 'A' && l[0] <= 'Z', l)
		// The bare letter reads as itself unless an option's text is that
		// letter too.
		if NormalizeSQuAD(a) != strings.ToLower(l) && NormalizeSQuAD(b) != strings.ToLower(l) {
			got, ok := ReadOptionLetter(l, opts)
			assert.True(t, ok)
			assert.Equal(t, l, got)
		}
	})
}

func FuzzNormalizeSQuAD(f *testing.F) {
	for _, s := range []string{"The Cat!", "ΟΔΟΣ", "İ", "the\u0301", "a\x1cb", "théa the"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		n := NormalizeSQuAD(s)
		assert.Equal(t, n, NormalizeSQuAD(n), "idempotent")
		assert.False(t, strings.ContainsFunc(n, isASCIIPunct))
		assert.NotContains(t, n, "  ")
		for _, w := range strings.Split(n, " ") {
			assert.NotContains(t, []string{"a", "an", "the"}, w)
		}
	})
}
