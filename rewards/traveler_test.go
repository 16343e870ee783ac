package rewards

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scoreTravelerItem(t *testing.T, gt, response string) Result {
	t.Helper()
	s := newTestScorer(t, nil)
	return s.Score(context.Background(), &Item{DataSource: "traveler", SolutionStr: response, GroundTruth: json.RawMessage(gt)})
}

// TestTravelerWorkedExample is the TRAVELER paper's example "Did Tom eat risotto in the
// kitchen a long time ago?": two matching events with p = 0 and p = 0.75, so
// P = 1 − (1 − 0)(1 − 0.75) = 0.75 for "yes" and 0.25 for "no".
func TestTravelerWorkedExample(t *testing.T) {
	gt := `{"category":"vague","template":"did","probabilities":[0,0.75]}`
	yes := scoreTravelerItem(t, gt, "Event 2 is a week old.\nANSWER: yes")
	require.NoError(t, yes.Err)
	assert.InDelta(t, 0.75, yes.Score, 1e-12)
	assert.Equal(t, []float64{1, 1, 0.75, 1}, yes.Details)

	no := scoreTravelerItem(t, gt, "ANSWER: No.")
	require.NoError(t, no.Err)
	assert.InDelta(t, 0.25, no.Score, 1e-12)
	assert.Equal(t, 0.0, no.Details[1], "no is not the optimal answer")
}

func TestTravelerScores(t *testing.T) {
	tests := []struct {
		name, gt, response string
		score, optimal     float64
		best               float64
	}{
		{"explicit who right", `{"category":"explicit","template":"who","answer":["Mary","Tom"]}`, "ANSWER: Tom and Mary", 1, 1, 1},
		{"explicit who case and article", `{"category":"explicit","template":"who","answer":["Robot"]}`, "**ANSWER:** the robot.", 1, 1, 1},
		{"explicit who missing one", `{"category":"explicit","template":"who","answer":["Mary","Tom"]}`, "ANSWER: Mary", 0, 0, 1},
		{"explicit who nobody", `{"category":"explicit","template":"who","answer":[]}`, "ANSWER: nobody", 1, 1, 1},
		{"explicit who named when nobody", `{"category":"explicit","template":"who","answer":[]}`, "ANSWER: Mary", 0, 0, 1},
		{"explicit did yes", `{"category":"explicit","template":"did","answer":"yes"}`, "ANSWER: Yes, she did.", 1, 1, 1},
		{"explicit did wrong", `{"category":"explicit","template":"did","answer":"no"}`, "ANSWER: yes", 0, 0, 1},
		{"explicit how often", `{"category":"explicit","template":"how_often","answer":3}`, "ANSWER: 3 times", 1, 1, 1},
		{"explicit how often wrong", `{"category":"explicit","template":"how_often","answer":3}`, "ANSWER: 2", 0, 0, 1},
		{"implicit how often zero", `{"category":"implicit","template":"how_often","answer":0}`, "ANSWER: never", 1, 1, 1},
		{"implicit did no", `{"category":"implicit","template":"did","answer":"no"}`, "answer: no", 1, 1, 1},
		{"implicit who", `{"category":"implicit","template":"who","answer":["Tom"]}`, "ANSWER: Tom", 1, 1, 1},
		{"implicit when last", `{"category":"implicit","template":"when_last","answer":"2023-09-28"}`, "ANSWER: 2023-09-28", 1, 1, 1},
		{"implicit when last wrong day", `{"category":"implicit","template":"when_last","answer":"2023-09-28"}`, "ANSWER: 2023-09-27", 0, 0, 1},
		{"implicit when last never", `{"category":"implicit","template":"when_last","answer":"never"}`, "ANSWER: Never.", 1, 1, 1},
		{"ground truth as a JSON string", `"{\"category\":\"implicit\",\"template\":\"did\",\"answer\":\"yes\"}"`, "ANSWER: yes", 1, 1, 1},
		{"last answer line wins", `{"category":"explicit","template":"did","answer":"no"}`, "ANSWER: yes\nOn reflection:\nANSWER: no", 1, 1, 1},
		{"unreadable answer", `{"category":"explicit","template":"how_often","answer":3}`, "ANSWER: several", 0, 0, 1},
		{"no answer line", `{"category":"explicit","template":"did","answer":"yes"}`, "yes", 0, 0, 1},
		// vague did: P = 1 − 0.5·0.8 = 0.6
		{"vague did yes", `{"category":"vague","template":"did","probabilities":[0.5,0.2]}`, "ANSWER: yes", 0.6, 1, 0.6},
		{"vague did no", `{"category":"vague","template":"did","probabilities":[0.5,0.2]}`, "ANSWER: no", 0.4, 0, 0.6},
		{"vague did without events", `{"category":"vague","template":"did","probabilities":[]}`, "ANSWER: no", 1, 1, 1},
		{"vague did crisp probabilities", `{"category":"vague","template":"did","probabilities":[1,0]}`, "ANSWER: no", 0, 0, 1},
		// vague how often: P(N=0)=0.4, P(N=1)=0.5·0.8+0.5·0.2=0.5, P(N=2)=0.1
		{"vague how often 1", `{"category":"vague","template":"how_often","probabilities":[0.5,0.2]}`, "ANSWER: 1", 0.5, 1, 0.5},
		{"vague how often 0", `{"category":"vague","template":"how_often","probabilities":[0.5,0.2]}`, "ANSWER: 0", 0.4, 0, 0.5},
		{"vague how often 2", `{"category":"vague","template":"how_often","probabilities":[0.5,0.2]}`, "ANSWER: twice", 0.1, 0, 0.5},
		{"vague how often beyond the events", `{"category":"vague","template":"how_often","probabilities":[0.5,0.2]}`, "ANSWER: 3", 0, 0, 0.5},
		// vague who: P_Mary = 0.75, P_Tom = 1 − 0.5·0.5 = 0.75, P_Robot = 0
		{"vague who both", `{"category":"vague","template":"who","probabilities":{"Mary":[0.75],"Tom":[0.5,0.5],"Robot":[]}}`, "ANSWER: Mary, Tom", 0.5625, 1, 0.5625},
		{"vague who one", `{"category":"vague","template":"who","probabilities":{"Mary":[0.75],"Tom":[0.5,0.5],"Robot":[]}}`, "ANSWER: Mary", 0.1875, 0, 0.5625},
		{"vague who nobody", `{"category":"vague","template":"who","probabilities":{"Mary":[0.75],"Tom":[0.5,0.5],"Robot":[]}}`, "ANSWER: nobody", 0.0625, 0, 0.5625},
		{"vague who with robot", `{"category":"vague","template":"who","probabilities":{"Mary":[0.75],"Tom":[0.5,0.5],"Robot":[]}}`, "ANSWER: Mary, Tom, Robot", 0, 0, 0.5625},
		{"vague who stranger", `{"category":"vague","template":"who","probabilities":{"Mary":[0.75],"Tom":[0.5,0.5],"Robot":[]}}`, "ANSWER: Mary, Tom, Peter", 0, 0, 0.5625},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := scoreTravelerItem(t, tc.gt, tc.response)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.Equal(t, tc.optimal, res.Details[1], "optimal")
			assert.InDelta(t, tc.best, res.Details[2], 1e-12, "best_score")
			vague := strings.Contains(tc.gt, "vague")
			assert.Equal(t, b2f(vague), res.Details[3], "vague")
			parsed := tc.name != "unreadable answer" && tc.name != "no answer line"
			assert.Equal(t, b2f(parsed), res.Details[0], "parsed")
		})
	}
}

func TestTravelerGroundTruthErrors(t *testing.T) {
	tests := []struct{ gt, want string }{
		{``, "ground_truth: missing"},
		{`"yes"`, `ground_truth: "yes" is not a JSON object: want a TRAVELER object`},
		{`[1]`, "ground_truth: [1] is not an object: want a TRAVELER object"},
		{`{"category":"explicit","template":"whence","answer":"yes"}`, "ground_truth.template: \"whence\""},
		{`{"category":"fuzzy","template":"did","answer":"yes"}`, "ground_truth.category: \"fuzzy\""},
		{`{"category":"explicit","template":"did"}`, "ground_truth.answer: missing"},
		{`{"category":"explicit","template":"did","answer":"maybe"}`, "ground_truth.answer: \"maybe\": want \"yes\" or \"no\""},
		{`{"category":"explicit","template":"how_often","answer":2.5}`, "ground_truth.answer: 2.5: want a whole number"},
		{`{"category":"explicit","template":"how_often","answer":-1}`, "ground_truth.answer: -1: want a whole number"},
		{`{"category":"implicit","template":"when_last","answer":"2023-02-30"}`, "want a YYYY-MM-DD date"},
		{`{"category":"explicit","template":"who","answer":"Mary"}`, "want a list of subject names"},
		{`{"category":"explicit","template":"who","answer":["Mary Ann"]}`, "is not a name"},
		{`{"category":"explicit","template":"did","answer":"yes","probabilities":[0.5]}`, "ground_truth.probabilities: only vague questions"},
		{`{"category":"vague","template":"did","answer":"yes","probabilities":[0.5]}`, "ground_truth.answer: vague questions have probabilities"},
		{`{"category":"vague","template":"did"}`, "ground_truth.probabilities: missing"},
		{`{"category":"vague","template":"did","probabilities":[1.5]}`, "item 1: 1.5 is not in [0, 1]"},
		{`{"category":"vague","template":"when_last","probabilities":[0.5]}`, "when_last has no vague form"},
		{`{"category":"vague","template":"who","probabilities":[0.5]}`, "want an object subject"},
		{`{"category":"vague","template":"who","probabilities":{}}`, "names no subject"},
		{`{"category":"vague","template":"who","probabilities":{"Tom":[0.1],"tom":[0.2]}}`, "twice"},
		{`{"category":"vague","template":"how_often","probabilities":[` + strings.Repeat("0.5,", TravelerMaxProbabilities) + `0.5]}`, "at most 4096"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			res := scoreTravelerItem(t, tc.gt, "ANSWER: yes")
			require.Error(t, res.Err)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			assert.Contains(t, res.Err.Error(), tc.want)
		})
	}
}

func TestParseTravelerAnswer(t *testing.T) {
	tests := []struct {
		template, response string
		want               TravelerAnswer
		ok                 bool
	}{
		{TravelerWho, "ANSWER: Mary, Tom", TravelerAnswer{Names: []string{"mary", "tom"}}, true},
		{TravelerWho, "ANSWER: Tom; Mary & the Robot", TravelerAnswer{Names: []string{"mary", "robot", "tom"}}, true},
		{TravelerWho, "ANSWER: Tom, and Mary", TravelerAnswer{Names: []string{"mary", "tom"}}, true},
		{TravelerWho, "ANSWER: [\"Tom\", \"Tom\"]", TravelerAnswer{Names: []string{"tom"}}, true},
		{TravelerWho, "ANSWER: No one.", TravelerAnswer{}, true},
		{TravelerWho, "ANSWER: Tom watched it", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: ,", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: Mary Tom", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: and", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: the", TravelerAnswer{}, false},
		{TravelerWho, "ANSWER: Mary and and Tom", TravelerAnswer{Names: []string{"mary", "tom"}}, true},
		{TravelerDid, "final answer: YES", TravelerAnswer{Yes: true}, true},
		{TravelerDid, "MY ANSWER: no, he did not", TravelerAnswer{}, true},
		{TravelerDid, "ANSWER:\n\n  yes\nmore", TravelerAnswer{Yes: true}, true},
		{TravelerDid, "ANSWER: yesterday", TravelerAnswer{}, false},
		{TravelerDid, "ANSWER: maybe", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: 12", TravelerAnswer{Count: 12}, true},
		{TravelerHowOften, "ANSWER: `1 time`", TravelerAnswer{Count: 1}, true},
		{TravelerHowOften, "ANSWER: once", TravelerAnswer{Count: 1}, true},
		{TravelerHowOften, "ANSWER: -2", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: +2", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: 2 or 3 times", TravelerAnswer{}, false},
		{TravelerHowOften, "ANSWER: 99999999999999999999999", TravelerAnswer{}, false},
		{TravelerWhenLast, "ANSWER: 2024-02-29", TravelerAnswer{Date: "2024-02-29"}, true},
		{TravelerWhenLast, "ANSWER: **never**", TravelerAnswer{}, true},
		{TravelerWhenLast, "ANSWER: 2023-02-29", TravelerAnswer{}, false},
		{TravelerWhenLast, "ANSWER: 29 Sept 2023", TravelerAnswer{}, false},
		{TravelerWhenLast, "ANSWER:", TravelerAnswer{}, false},
		{"whom", "ANSWER: Tom", TravelerAnswer{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.template+"/"+tc.response, func(t *testing.T) {
			got, ok := ParseTravelerAnswer(tc.response, tc.template)
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func TestTravelerCountDistribution(t *testing.T) {
	d := TravelerCountDistribution([]float64{0.5, 0.2, 1})
	// N = 1 + Bernoulli(0.5) + Bernoulli(0.2)
	assert.InDeltaSlice(t, []float64{0, 0.4, 0.5, 0.1}, d, 1e-12)
	assert.Equal(t, []float64{1}, TravelerCountDistribution(nil))
	assert.InDelta(t, 0.75, TravelerAtLeastOne([]float64{0, 0.75}), 1e-12)
	assert.Equal(t, 0.0, TravelerAtLeastOne(nil))
}

// FuzzParseTravelerAnswer: the parser never panics, what it returns is
// well-formed for the template, and the answer's canonical text parses back
// to the same answer.
func FuzzParseTravelerAnswer(f *testing.F) {
	for _, s := range []string{"ANSWER: Mary and Tom", "ANSWER: 3 times", "answer: yes", "ANSWER: 2023-09-29", "ANSWER: never", "MY ANSWER: nobody", "ANSWER:\n**No**", "ANSWER: the robot, tom"} {
		f.Add(s)
	}
	templates := []string{TravelerWho, TravelerDid, TravelerHowOften, TravelerWhenLast}
	f.Fuzz(func(t *testing.T, response string) {
		for _, tmpl := range templates {
			a, ok := ParseTravelerAnswer(response, tmpl)
			if !ok {
				continue
			}
			switch tmpl {
			case TravelerWho:
				for i, n := range a.Names {
					if travelerNameKey(n) != n || (i > 0 && a.Names[i-1] >= n) {
						t.Fatalf("names %q not canonical, sorted and unique", a.Names)
					}
				}
			case TravelerHowOften:
				if a.Count < 0 {
					t.Fatalf("count %d", a.Count)
				}
			case TravelerWhenLast:
				if a.Date != "" && !tpValidDate(a.Date) {
					t.Fatalf("date %q", a.Date)
				}
			}
			text := FormatTravelerAnswer(tmpl, a)
			back, ok := ParseTravelerAnswer("ANSWER: "+text, tmpl)
			if !ok {
				t.Fatalf("%s: %q does not parse back", tmpl, text)
			}
			if FormatTravelerAnswer(tmpl, back) != text {
				t.Fatalf("%s: %q parses back as %q", tmpl, text, FormatTravelerAnswer(tmpl, back))
			}
		}
	})
}
