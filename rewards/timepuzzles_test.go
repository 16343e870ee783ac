package rewards

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tpAnswerCases = []struct {
	name     string
	response string
	dates    []string // nil with ok false: unparsable
	ok       bool
}{
	{"one date", "Reasoning...\nMY ANSWER: 2024-02-29", []string{"2024-02-29"}, true},
	{"several, sorted and deduplicated", "MY ANSWER: 2021-03-05, 2020-01-01,2021-03-05", []string{"2020-01-01", "2021-03-05"}, true},
	{"none", "No date fits.\nMY ANSWER: None", []string{}, true},
	{"none with full stop and case", "my answer: none.", []string{}, true},
	{"last line wins", "MY ANSWER: 2020-01-01\nWait, I miscounted.\nMY ANSWER: 2020-01-08", []string{"2020-01-08"}, true},
	{"marker case-insensitive", "My Answer: 1999-12-31", []string{"1999-12-31"}, true},
	{"markdown and full stop", "**MY ANSWER:** **2023-06-01, 2023-06-08.**", []string{"2023-06-01", "2023-06-08"}, true},
	{"brackets and quotes", `MY ANSWER: ["2023-06-01", "2023-06-08"]`, []string{"2023-06-01", "2023-06-08"}, true},
	{"semicolons and spaces", "MY ANSWER: 2023-06-01; 2023-06-08 2023-06-15", []string{"2023-06-01", "2023-06-08", "2023-06-15"}, true},
	{"trailing comma", "MY ANSWER: 2023-06-01,", []string{"2023-06-01"}, true},
	{"answer on the next line", "MY ANSWER:\n2023-06-01\nthat is all", []string{"2023-06-01"}, true},
	{"text after the line ignored", "MY ANSWER: 2023-06-01\nI hope this helps.", []string{"2023-06-01"}, true},
	{"crlf", "MY ANSWER: 2023-06-01\r\n", []string{"2023-06-01"}, true},
	{"leap day 2000", "MY ANSWER: 2000-02-29", []string{"2000-02-29"}, true},

	{"no marker", "The answer is 2024-02-29.", nil, false},
	{"marker without colon", "MY ANSWER 2024-02-29", nil, false},
	{"empty after marker", "MY ANSWER:   ", nil, false},
	{"not a calendar date", "MY ANSWER: 2023-02-29", nil, false},
	{"1900 not a leap year", "MY ANSWER: 1900-02-29", nil, false},
	{"month 13", "MY ANSWER: 2023-13-01", nil, false},
	{"one bad among good", "MY ANSWER: 2023-06-01, 2023-06-31", nil, false},
	{"other format", "MY ANSWER: June 1, 2023", nil, false},
	{"short fields", "MY ANSWER: 2023-6-1", nil, false},
	{"words after the date", "MY ANSWER: 2023-06-01 (a Thursday)", nil, false},
	{"none among dates", "MY ANSWER: 2023-06-01, None", nil, false},
	{"none of the above", "MY ANSWER: None of them", nil, false},
	{"last marker unparsable", "MY ANSWER: 2023-06-01\nMY ANSWER: unsure", nil, false},
}

func TestTimePuzzlesParseDateAnswer(t *testing.T) {
	for _, tc := range tpAnswerCases {
		t.Run(tc.name, func(t *testing.T) {
			dates, ok := ParseDateAnswer(tc.response)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.dates, dates)
			} else {
				assert.Empty(t, dates)
			}
		})
	}
}

func TestTimePuzzlesSetMetrics(t *testing.T) {
	const a, b, c = "2024-01-01", "2024-01-02", "2024-01-03"
	for _, tc := range []struct {
		name        string
		gold, pred  []string
		em, f1, jac float64
	}{
		{"equal", []string{a, b}, []string{b, a}, 1, 1, 1},
		// P = 1/1, R = 1/2, F1 = 2·1·½/(1 + ½) = 2/3; J = 1/2.
		{"subset", []string{a, b}, []string{a}, 0, 2.0 / 3, 0.5},
		// P = 1/3, R = 1, F1 = 2·⅓·1/(⅓ + 1) = 1/2; J = 1/3.
		{"superset", []string{a}, []string{a, b, c}, 0, 0.5, 1.0 / 3},
		// P = R = 1/2, F1 = 1/2; J = |{b}|/|{a,b,c}| = 1/3.
		{"overlap", []string{a, b}, []string{b, c}, 0, 0.5, 1.0 / 3},
		{"disjoint", []string{a}, []string{b}, 0, 0, 0},
		{"both empty", nil, []string{}, 1, 1, 1},
		{"gold empty", []string{}, []string{a}, 0, 0, 0},
		{"prediction empty", []string{a}, nil, 0, 0, 0},
		{"duplicates ignored", []string{a, b}, []string{a, a, b}, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			em, f1, jac := SetMetrics(tc.gold, tc.pred)
			assert.Equal(t, tc.em, em, "em")
			assert.InDelta(t, tc.f1, f1, 1e-12, "f1")
			assert.InDelta(t, tc.jac, jac, 1e-12, "jaccard")
		})
	}
}

func TestTimePuzzlesScore(t *testing.T) {
	require.Equal(t, []string{"em", "f1", "jaccard", "parsed", "n_pred", "n_gold"}, TimePuzzles.Keys)
	for _, tc := range []struct {
		name, gt, response string
		details            []float64 // em, f1, jaccard, parsed, n_pred, n_gold
	}{
		{"exact", `"2024-03-01, 2024-03-08"`, "MY ANSWER: 2024-03-08, 2024-03-01", []float64{1, 1, 1, 1, 2, 2}},
		{"partial", `"2024-03-01, 2024-03-08"`, "MY ANSWER: 2024-03-01", []float64{0, 2.0 / 3, 0.5, 1, 1, 2}},
		{"json array gold", `["2024-03-01", "2024-03-08", "2024-03-01"]`, "MY ANSWER: 2024-03-01, 2024-03-08", []float64{1, 1, 1, 1, 2, 2}},
		{"stringified array gold", `"[\"2024-03-01\"]"`, "MY ANSWER: 2024-03-01", []float64{1, 1, 1, 1, 1, 1}},
		{"none and none", `"None"`, "MY ANSWER: None", []float64{1, 1, 1, 1, 0, 0}},
		{"empty gold string", `""`, "MY ANSWER: None", []float64{1, 1, 1, 1, 0, 0}},
		{"empty gold array", `[]`, "MY ANSWER: 2024-03-01", []float64{0, 0, 0, 1, 1, 0}},
		{"none against dates", `"2024-03-01"`, "MY ANSWER: None", []float64{0, 0, 0, 1, 0, 1}},
		{"unparsed", `"2024-03-01"`, "It is March 1st.", []float64{0, 0, 0, 0, 0, 1}},
		{"unparsed against none", `"None"`, "I cannot tell.", []float64{0, 0, 0, 0, 0, 0}},
	} {
		for i, metric := range []string{MetricEM, MetricF1, MetricJaccard} {
			t.Run(tc.name+"/"+metric, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.TimePuzzles.Metric = metric
				s, err := NewScorer(cfg, nil)
				require.NoError(t, err)
				res := s.Score(context.Background(), &Item{DataSource: "timepuzzles", SolutionStr: tc.response, GroundTruth: json.RawMessage(tc.gt)})
				require.NoError(t, res.Err)
				assert.InDeltaSlice(t, tc.details, res.Details, 1e-12)
				assert.InDelta(t, tc.details[i], res.Score, 1e-12)
			})
		}
	}
}

func TestTimePuzzlesGroundTruthErrors(t *testing.T) {
	for _, tc := range []struct{ name, gt, msg string }{
		{"missing", ``, "ground_truth: missing"},
		{"null", `null`, "ground_truth: missing"},
		{"invalid date", `"2023-02-29"`, `ground_truth: "2023-02-29" is not a YYYY-MM-DD calendar date`},
		{"other format", `"2023-02-01, March 3"`, `ground_truth: "March 3" is not a YYYY-MM-DD calendar date`},
		{"trailing comma", `"2023-02-01,"`, `ground_truth: item 2 of "2023-02-01," is empty`},
		{"array item not string", `["2023-02-01", 5]`, "ground_truth: item 2: 5 is not a string"},
		{"array item invalid", `["2023-02-30"]`, `ground_truth: item 1: "2023-02-30" is not a YYYY-MM-DD calendar date`},
		{"number", `20230201`, "ground_truth: 20230201: want"},
		{"object", `{"dates": []}`, "ground_truth: {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScorer(DefaultConfig(), nil)
			require.NoError(t, err)
			res := s.Score(context.Background(), &Item{DataSource: "timepuzzles", SolutionStr: "MY ANSWER: None", GroundTruth: json.RawMessage(tc.gt)})
			require.Error(t, res.Err)
			assert.ErrorContains(t, res.Err, tc.msg)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			assert.Equal(t, make([]float64, 6), res.Details)
		})
	}
}

func TestTimePuzzlesValidDate(t *testing.T) {
	for s, want := range map[string]bool{
		"2024-02-29": true, "2023-02-28": true, "2000-02-29": true, "0001-01-01": true, "2024-12-31": true,
		"2100-02-29": false, "2024-04-31": false, "2024-00-10": false, "2024-01-00": false, "2024-01-32": false,
		"2024/01/01": false, "+024-01-01": false, "2024-01-1a": false, "": false, "2024-01-011": false,
	} {
		assert.Equal(t, want, tpValidDate(s), s)
	}
}

func FuzzParseDateAnswer(f *testing.F) {
	for _, tc := range tpAnswerCases {
		f.Add(tc.response, "2024-02-29, 2023-06-01")
	}
	f.Add("MY ANSWER: None", "")
	f.Fuzz(func(t *testing.T, response, goldText string) {
		dates, ok := ParseDateAnswer(response)
		if !ok {
			if len(dates) != 0 {
				t.Fatalf("unparsed answer returned %v", dates)
			}
			return
		}
		if !slices.IsSorted(dates) || len(slices.Compact(slices.Clone(dates))) != len(dates) {
			t.Fatalf("dates %v not sorted and unique", dates)
		}
		for _, d := range dates {
			if !tpValidDate(d) {
				t.Fatalf("invalid date %q", d)
			}
		}
		again, ok := ParseDateAnswer("MY ANSWER: " + tpRenderDates(dates))
		if !ok || !slices.Equal(again, dates) {
			t.Fatalf("round trip of %v gave %v, %v", dates, again, ok)
		}
		if em, f1, jac := SetMetrics(dates, dates); em != 1 || f1 != 1 || jac != 1 {
			t.Fatalf("self metrics %v %v %v", em, f1, jac)
		}
		gold := strings.Split(goldText, ",")
		em, f1, jac := SetMetrics(gold, dates)
		for _, m := range []float64{em, f1, jac} {
			if !(m >= 0 && m <= 1) {
				t.Fatalf("metric %v out of [0, 1]", m)
			}
		}
		if jac > f1+1e-12 || em > jac || em == 1 && (f1 != 1 || jac != 1) {
			t.Fatalf("em %v, f1 %v, jaccard %v out of order", em, f1, jac)
		}
	})
}

func tpRenderDates(dates []string) string {
	if len(dates) == 0 {
		return "None"
	}
	return strings.Join(dates, ", ")
}
