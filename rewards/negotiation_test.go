package rewards

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newRecruit is the New Recruit scenario of the Real-Time Deadlines paper, App. A.1, written out
// from the paper's tables (best total: 16,325 for the HR manager, 19,200 for
// the candidate; BATNA 4,500 each).
func newRecruit() NegotiationScenario {
	return NegotiationScenario{
		ID: "new_recruit",
		Roles: []NegotiationRole{
			{ID: "hr_manager", BATNA: 4500},
			{ID: "candidate", BATNA: 4500},
		},
		Issues: []NegotiationIssue{
			{ID: "salary", Options: []string{"$30,000", "$33,000", "$39,000", "$41,000", "$44,000"},
				Points: map[string][]float64{"hr_manager": {4800, 3600, 2400, 1200, 0}, "candidate": {0, 1200, 2400, 3600, 4800}}},
			{ID: "start_date", Options: []string{"Aug 1", "Aug 15", "Sep 1", "Sep 15", "Oct 1"},
				Points: map[string][]float64{"hr_manager": {4000, 3000, 2000, 1000, 0}, "candidate": {0, 300, 600, 900, 1200}}},
			{ID: "location", Options: []string{"Los Angeles", "Phoenix", "Albuquerque", "San Antonio", "El Paso"},
				Points: map[string][]float64{"hr_manager": {2800, 2100, 1400, 700, 0}, "candidate": {0, 700, 1400, 2100, 2800}}},
			{ID: "vacation", Options: []string{"0 days", "2 days", "5 days", "7 days", "10 days"},
				Points: map[string][]float64{"hr_manager": {1200, 900, 600, 300, 0}, "candidate": {0, 1000, 2000, 3000, 4000}}},
			{ID: "budget", Options: []string{"$0", "$500", "$1,000", "$1,500", "$2,000", "$2,500"},
				Points: map[string][]float64{"hr_manager": {0, 300, 600, 1200, 1500, 1800}, "candidate": {0, 500, 1500, 2000, 2500, 3000}}},
			{ID: "review", Options: []string{"1 month", "2 months", "3 months", "6 months", "1 year"},
				Points: map[string][]float64{"hr_manager": {0, 300, 600, 1200, 1500}, "candidate": {2500, 2000, 1500, 500, 0}}},
			{ID: "insurance", Options: []string{"day hired", "1 month", "2 months", "3 months"},
				Points: map[string][]float64{"hr_manager": {0, 75, 150, 225}, "candidate": {900, 600, 300, 0}}},
		},
	}
}

func negGT(t testing.TB, mod func(*NegotiationGroundTruth)) json.RawMessage {
	t.Helper()
	g := NegotiationGroundTruth{Scenario: newRecruit(), Role: "candidate", Condition: NegotiationControl,
		DeadlineS: 300, WPM: 150, FirstSpeaker: "hr_manager"}
	if mod != nil {
		mod(&g)
	}
	b, err := json.Marshal(&g)
	require.NoError(t, err)
	return b
}

// The scripted deal, at 150 wpm (0.4 s a word):
//
//	1 hr_manager  7 words  2.8 s  propose $33,000, Aug 1, Phoenix, 2 days, $2,500, 1 year, 3 months
//	2 candidate  15 words  6.0 s  propose $39,000, Aug 1, Phoenix, 10 days, $2,500, 2 months, day hired
//	3 hr_manager  5 words  2.0 s  accept                                       (ends at 10.8 s)
//
// The agreement is worth, issue by issue (salary, start, location, vacation,
// budget, review, insurance),
//
//	HR manager: 2400 + 4000 + 2100 +    0 + 1800 +  300 +   0 = 10600 of 16325
//	candidate:  2400 +    0 +  700 + 4000 + 3000 + 2000 + 900 = 13000 of 19200
//
// so the candidate scores 13000/19200 = 0.6770833 and the HR manager
// 10600/16325 = 0.6493109. With no deal each gets its BATNA of 4500:
// 4500/19200 = 0.234375 and 4500/16325 = 0.2756508.
var scriptedDeal = []string{
	`{"role": "hr_manager", "text": "Welcome aboard. I propose the following package.", "action": {"action": "propose", "offer": {"salary": "$33,000", "start_date": "Aug 1", "location": "Phoenix", "vacation": "2 days", "budget": "$2,500", "review": "1 year", "insurance": "3 months"}}}`,
	`{"role": "candidate", "text": "Thanks. Vacation and an early review matter most to me, so here is my counter.", "action": {"action": "propose", "offer": {"salary": 39000, "start_date": "aug 1", "location": "PHOENIX", "vacation": "10 days", "budget": "$2,500", "review": "2 months", "insurance": "Day hired"}}}`,
	`{"role": "hr_manager", "text": "Agreed, welcome to the team.", "action": {"action": "accept"}}`,
}

// A long-winded candidate: 150 words (60 s at 150 wpm) before its counter.
var scriptedLongWinded = []string{
	scriptedDeal[0],
	`{"role": "candidate", "text": "` + strings.Repeat("well ", 150) + `", "action": {"action": "propose", "offer": {"salary": "$39,000", "start_date": "Aug 1", "location": "Phoenix", "vacation": "10 days", "budget": "$2,500", "review": "2 months", "insurance": "day hired"}}}`,
	scriptedDeal[2],
}

func lines(msgs ...string) string { return strings.Join(msgs, "\n") }

func TestNegotiationScoring(t *testing.T) {
	const (
		candDeal = 13000.0 / 19200
		hrDeal   = 10600.0 / 16325
		candNo   = 4500.0 / 19200
		hrNo     = 4500.0 / 16325
	)
	type want struct {
		score                                    float64
		deal, batnaTaken, outOfBudget            float64
		closedAtS, closedAtTurn, turns, elapsedS float64
		self, other, invalid                     float64
	}
	accept := `{"role": "hr_manager", "text": "Agreed, welcome to the team.", "action": {"action": "accept"}}`
	tests := []struct {
		name string
		gt   func(*NegotiationGroundTruth)
		sol  string
		want want
	}{
		{name: "deal closes before the deadline",
			sol:  lines(scriptedDeal...),
			want: want{score: candDeal, deal: 1, closedAtS: 10.8, closedAtTurn: 3, turns: 3, elapsedS: 10.8, self: 13000, other: 10600}},
		{name: "the HR manager's view of the same deal",
			gt:   func(g *NegotiationGroundTruth) { g.Role = "hr_manager" },
			sol:  lines(scriptedDeal...),
			want: want{score: hrDeal, deal: 1, closedAtS: 10.8, closedAtTurn: 3, turns: 3, elapsedS: 10.8, self: 10600, other: 13000}},
		{name: "the same transcript runs out of time at 10 s: the accept would end at 10.8 s",
			gt:   func(g *NegotiationGroundTruth) { g.DeadlineS = 10 },
			sol:  lines(scriptedDeal...),
			want: want{score: candNo, outOfBudget: 1, turns: 2, elapsedS: 10, self: 4500, other: 4500}},
		{name: "a long-winded counter (ends at 2.8 + 60 = 62.8 s) leaves no time to accept by 63 s",
			gt:   func(g *NegotiationGroundTruth) { g.DeadlineS = 63; g.Condition = NegotiationTimeAware },
			sol:  lines(scriptedLongWinded...),
			want: want{score: candNo, outOfBudget: 1, turns: 2, elapsedS: 63, self: 4500, other: 4500}},
		{name: "by 61 s the long-winded counter is not even delivered",
			gt:   func(g *NegotiationGroundTruth) { g.DeadlineS = 61 },
			sol:  lines(scriptedLongWinded...),
			want: want{score: candNo, outOfBudget: 1, turns: 1, elapsedS: 61, self: 4500, other: 4500}},
		{name: "the long-winded counter still closes by 65 s (2.8 + 60 + 2 = 64.8)",
			gt:   func(g *NegotiationGroundTruth) { g.DeadlineS = 65; g.Condition = NegotiationUrgency },
			sol:  lines(scriptedLongWinded...),
			want: want{score: candDeal, deal: 1, closedAtS: 64.8, closedAtTurn: 3, turns: 3, elapsedS: 64.8, self: 13000, other: 10600}},
		{name: "a reply in the prompted {text, action} form is the scored role's turn",
			gt:   func(g *NegotiationGroundTruth) { g.FirstSpeaker = "candidate" },
			sol:  `{"text": "I will take my outside option.", "action": {"action": "batna"}}`,
			want: want{score: candNo, batnaTaken: 1, closedAtS: 2.4, closedAtTurn: 1, turns: 1, elapsedS: 2.4, self: 4500, other: 4500}},
		{name: "the same reply written over several lines",
			gt:   func(g *NegotiationGroundTruth) { g.FirstSpeaker = "candidate" },
			sol:  "{\n  \"text\": \"I will take my outside option.\",\n  \"action\": {\"action\": \"batna\"}\n}",
			want: want{score: candNo, batnaTaken: 1, closedAtS: 2.4, closedAtTurn: 1, turns: 1, elapsedS: 2.4, self: 4500, other: 4500}},
		{name: "turns without a role in a transcript are the scored role's",
			sol:  lines(scriptedDeal[0], `{"text": "Thanks. Vacation and an early review matter most to me, so here is my counter.", "action": {"action": "propose", "offer": {"salary": 39000, "start_date": "aug 1", "location": "PHOENIX", "vacation": "10 days", "budget": "$2,500", "review": "2 months", "insurance": "Day hired"}}}`, scriptedDeal[2]),
			want: want{score: candDeal, deal: 1, closedAtS: 10.8, closedAtTurn: 3, turns: 3, elapsedS: 10.8, self: 13000, other: 10600}},
		{name: "at 60 wpm a word is a second: a deal ending exactly at the deadline closes",
			gt:   func(g *NegotiationGroundTruth) { g.WPM = 60; g.DeadlineS = 27 },
			sol:  lines(scriptedDeal...),
			want: want{score: candDeal, deal: 1, closedAtS: 27, closedAtTurn: 3, turns: 3, elapsedS: 27, self: 13000, other: 10600}},
		{name: "at 60 wpm one second short",
			gt:   func(g *NegotiationGroundTruth) { g.WPM = 60; g.DeadlineS = 26 },
			sol:  lines(scriptedDeal...),
			want: want{score: candNo, outOfBudget: 1, turns: 2, elapsedS: 26, self: 4500, other: 4500}},
		{name: "turn limit 3 admits the accept at message 3, whatever the words",
			gt:   func(g *NegotiationGroundTruth) { g.Condition = NegotiationTurnLimit; g.DeadlineS = 0; g.TurnLimit = 3 },
			sol:  lines(scriptedLongWinded...),
			want: want{score: candDeal, deal: 1, closedAtS: 64.8, closedAtTurn: 3, turns: 3, elapsedS: 64.8, self: 13000, other: 10600}},
		{name: "turn limit 2 ends before the accept",
			gt:   func(g *NegotiationGroundTruth) { g.Condition = NegotiationTurnLimit; g.DeadlineS = 0; g.TurnLimit = 2 },
			sol:  lines(scriptedDeal...),
			want: want{score: candNo, outOfBudget: 1, turns: 2, elapsedS: 8.8, self: 4500, other: 4500}},
		{name: "walking away gives both sides their BATNA",
			sol:  lines(scriptedDeal[0], `{"role": "candidate", "text": "No, thank you.", "action": {"action": "batna"}}`, accept),
			want: want{score: candNo, batnaTaken: 1, closedAtS: 4, closedAtTurn: 2, turns: 2, elapsedS: 4, self: 4500, other: 4500}},
		{name: "a transcript that stops without a deal gets the BATNA",
			sol:  lines(scriptedDeal[:2]...),
			want: want{score: candNo, turns: 2, elapsedS: 8.8, self: 4500, other: 4500}},
		{name: "a JSON array, and an action given as a JSON string",
			sol:  "[" + scriptedDeal[0] + "," + scriptedDeal[1] + `,{"role": "hr_manager", "text": "Agreed, welcome to the team.", "action": "{\"action\": \"accept\"}"}]`,
			want: want{score: candDeal, deal: 1, closedAtS: 10.8, closedAtTurn: 3, turns: 3, elapsedS: 10.8, self: 13000, other: 10600}},
		{name: "accepting one's own proposal does nothing",
			sol:  lines(scriptedDeal[0], scriptedDeal[1], `{"role": "candidate", "text": "Deal.", "action": {"action": "accept"}}`),
			want: want{score: candNo, turns: 3, elapsedS: 9.2, self: 4500, other: 4500, invalid: 1}},
		{name: "an incomplete proposal cannot be accepted",
			sol: lines(`{"role": "hr_manager", "text": "Salary first.", "action": {"action": "propose", "offer": {"salary": "$39,000", "vacation": null}}}`,
				`{"role": "candidate", "text": "Fine.", "action": {"action": "accept"}}`),
			want: want{score: candNo, turns: 2, elapsedS: 1.2, self: 4500, other: 4500, invalid: 1}},
		{name: "an unknown option or issue is ignored and the earlier proposal stands",
			sol: lines(scriptedDeal[0],
				`{"role": "hr_manager", "text": "Or Paris.", "action": {"action": "propose", "offer": {"location": "Paris"}}}`,
				`{"role": "hr_manager", "text": "Or a car.", "action": {"action": "propose", "offer": {"car": "yes"}}}`,
				`{"role": "hr_manager", "text": "Hmm.", "action": {"action": "dance"}}`,
				`{"role": "hr_manager", "text": "Hmm.", "action": "not json"}`,
				`{"role": "candidate", "text": "I accept.", "action": {"action": "accept"}}`),
			// 7+2+3+1+1+2 = 16 words, 6.4 s. The first proposal stands: HR
			// 3600+4000+2100+900+1800+1500+225 = 14125; candidate
			// 1200+0+700+1000+3000+0+0 = 5900.
			want: want{score: 5900.0 / 19200, deal: 1, closedAtS: 6.4, closedAtTurn: 6, turns: 6, elapsedS: 6.4, self: 5900, other: 14125, invalid: 4}},
		{name: "a reject withdraws the proposal",
			sol: lines(scriptedDeal[0], `{"role": "candidate", "text": "No.", "action": {"action": "reject"}}`,
				`{"role": "candidate", "text": "Wait, yes.", "action": {"action": "accept"}}`),
			want: want{score: candNo, turns: 3, elapsedS: 4, self: 4500, other: 4500, invalid: 1}},
		{name: "the scripted opening is prepended when the transcript starts with the reply",
			gt: func(g *NegotiationGroundTruth) {
				var op NegotiationTurn
				require.NoError(t, json.Unmarshal([]byte(scriptedDeal[0]), &op))
				g.Opening = &op
				g.Role = "candidate"
			},
			sol:  lines(scriptedDeal[1:]...),
			want: want{score: candDeal, deal: 1, closedAtS: 10.8, closedAtTurn: 3, turns: 3, elapsedS: 10.8, self: 13000, other: 10600}},
	}
	s := newTestScorer(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := Item{DataSource: "negotiation", SolutionStr: tc.sol, GroundTruth: negGT(t, tc.gt)}
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			w := tc.want
			assert.InDelta(t, w.score, res.Score, 1e-9)
			got := map[string]float64{}
			for i, k := range Negotiation.Keys {
				got[k] = res.Details[i]
			}
			exp := map[string]float64{
				"deal": w.deal, "batna_used": 1 - w.deal, "batna_taken": w.batnaTaken, "out_of_budget": w.outOfBudget,
				"closed_at_s": w.closedAtS, "closed_at_turn": w.closedAtTurn, "turns": w.turns, "elapsed_s": w.elapsedS,
				"points_self": w.self, "points_other": w.other, "invalid_actions": w.invalid, "parsed": 1,
			}
			for k, v := range exp {
				assert.InDelta(t, v, got[k], 1e-9, k)
			}
		})
	}
}

func TestNegotiationUnreadableTranscript(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, sol := range []string{"", "I accept your offer.", `{"role": "ceo", "text": "hi"}`, `[{"role": "candidate"}]`, `[]`, `{"role": "candidate", "text": 5}`} {
		t.Run(sol, func(t *testing.T) {
			res := s.Score(context.Background(), &Item{DataSource: "negotiation", SolutionStr: sol, GroundTruth: negGT(t, nil)})
			require.NoError(t, res.Err)
			assert.Zero(t, res.Score)
			for i, d := range res.Details {
				assert.Zero(t, d, Negotiation.Keys[i])
			}
		})
	}
}

func TestNegotiationGroundTruthErrors(t *testing.T) {
	tests := []struct {
		name string
		gt   json.RawMessage
		err  string
	}{
		{"missing", nil, "ground_truth: missing"},
		{"not an object", json.RawMessage(`[1]`), "ground_truth: [1] is not an object: want the negotiation object"},
		{"unknown field", json.RawMessage(`{"scenari": {}}`), `ground_truth: unknown field "scenari"`},
		{"role", negGT(t, func(g *NegotiationGroundTruth) { g.Role = "ceo" }), `ground_truth.role: "ceo" is not a role`},
		{"first speaker", negGT(t, func(g *NegotiationGroundTruth) { g.FirstSpeaker = "" }), "ground_truth.first_speaker"},
		{"condition", negGT(t, func(g *NegotiationGroundTruth) { g.Condition = "panic" }), `ground_truth.condition: "panic" is not one of control`},
		{"deadline", negGT(t, func(g *NegotiationGroundTruth) { g.DeadlineS = 0 }), "ground_truth.deadline_s: 0 is not a deadline"},
		{"turn limit", negGT(t, func(g *NegotiationGroundTruth) { g.Condition = NegotiationTurnLimit }), "ground_truth.turn_limit: 0 is not a number of messages"},
		{"wpm", negGT(t, func(g *NegotiationGroundTruth) { g.WPM = -150 }), "ground_truth.wpm"},
		{"tiny wpm", negGT(t, func(g *NegotiationGroundTruth) { g.WPM = 1e-300 }), "ground_truth.wpm: 1e-300 is not 0"},
		{"points length", negGT(t, func(g *NegotiationGroundTruth) { g.Scenario.Issues[2].Points["candidate"] = []float64{1, 2} }),
			"ground_truth.scenario.issues[2].points.candidate: has 2 points for 5 options"},
		{"points role", negGT(t, func(g *NegotiationGroundTruth) { delete(g.Scenario.Issues[0].Points, "candidate") }),
			"ground_truth.scenario.issues[0].points: has 1 roles"},
		{"clashing options", negGT(t, func(g *NegotiationGroundTruth) { g.Scenario.Issues[1].Options[1] = "AUG-1" }),
			`ground_truth.scenario.issues[1].options[1]: "AUG-1" reads the same as option 0 "Aug 1"`},
		{"one role", negGT(t, func(g *NegotiationGroundTruth) { g.Scenario.Roles = g.Scenario.Roles[:1] }), "ground_truth.scenario.roles: has 1 roles, want exactly 2"},
		{"opening by the scored role", negGT(t, func(g *NegotiationGroundTruth) { g.Opening = &NegotiationTurn{Role: "candidate"} }), "ground_truth.opening.role"},
	}
	s := newTestScorer(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := s.Score(context.Background(), &Item{DataSource: "negotiation", SolutionStr: lines(scriptedDeal...), GroundTruth: tc.gt})
			require.Error(t, res.Err)
			assert.Contains(t, res.Err.Error(), tc.err)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
		})
	}
}

// A ground truth stored as a JSON string (a VeRL row's reward_model
// ground_truth) scores the same as the object.
func TestNegotiationGroundTruthAsString(t *testing.T) {
	s := newTestScorer(t, nil)
	obj := negGT(t, nil)
	str, err := json.Marshal(string(obj))
	require.NoError(t, err)
	a := s.Score(context.Background(), &Item{DataSource: "negotiation", SolutionStr: lines(scriptedDeal...), GroundTruth: obj})
	b := s.Score(context.Background(), &Item{DataSource: "negotiation", SolutionStr: lines(scriptedDeal...), GroundTruth: str})
	require.NoError(t, a.Err)
	require.NoError(t, b.Err)
	assert.Equal(t, a, b)
	assert.InDelta(t, 13000.0/19200, b.Score, 1e-12)
}

func TestParseNegotiationAction(t *testing.T) {
	tests := []struct {
		raw, kind, err string
	}{
		{``, NegotiationMessage, ""},
		{`null`, NegotiationMessage, ""},
		{`{"action": "message"}`, NegotiationMessage, ""},
		{`{"action": " Accept "}`, NegotiationAccept, ""},
		{`{"action": "reject", "why": "low"}`, NegotiationReject, ""},
		{`{"action": "batna"}`, NegotiationBATNA, ""},
		{`{"action": "propose", "offer": {"salary": "$30,000"}}`, NegotiationPropose, ""},
		{`"{\"action\": \"batna\"}"`, NegotiationBATNA, ""},
		{`{"action": "propose"}`, "", `propose without an "offer"`},
		{`{"action": "propose", "offer": {}}`, "", `propose without an "offer"`},
		{`{"offer": {"salary": 1}}`, "", `no "action" field`},
		{`{"action": "walk"}`, "", `action "walk" is not`},
		{`"accept"`, "", "does not hold a JSON object"},
		{`[1]`, "", "not an action object"},
		{`{"action": 3}`, "", "not an action object"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := ParseNegotiationAction(json.RawMessage(tc.raw))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.kind, a.Kind)
		})
	}
}

func TestNegotiationOptionIndex(t *testing.T) {
	s := newRecruit()
	for _, tc := range []struct {
		issue int
		v     string
		want  int
		ok    bool
	}{
		{0, `"$44,000"`, 4, true},
		{0, `44000`, 4, true},
		{0, `"44 000"`, 4, true},
		{0, `44000.5`, 0, false},
		{0, `-44000`, 0, false}, // a number has the label's sign too
		{0, `-4.4e4`, 0, false},
		{0, `4.4e4`, 4, true},
		{1, `"SEP-15"`, 3, true},
		{6, `"Day Hired"`, 0, true},
		{6, `"$"`, 0, false},
		{6, `true`, 0, false},
		{3, `"10"`, 0, false},
	} {
		got, ok := s.OptionIndex(tc.issue, json.RawMessage(tc.v))
		assert.Equal(t, tc.ok, ok, tc.v)
		if ok {
			assert.Equal(t, tc.want, got, tc.v)
		}
	}
}

// FuzzNegotiationTranscript feeds arbitrary transcripts through the parser
// and the rules: no panic, and an outcome that keeps its invariants.
func FuzzNegotiationTranscript(f *testing.F) {
	f.Add(lines(scriptedDeal...), 300.0, 0)
	f.Add("["+strings.Join(scriptedLongWinded, ",")+"]", 63.0, 0)
	f.Add(`{"role": "candidate", "text": "x", "action": "{\"action\":\"propose\",\"offer\":{\"salary\":39000}}"}`, 0.0, 2)
	f.Add(`{"role":"hr_manager","text":"","action":{"action":"accept"}}`, 1.0, 1)
	f.Fuzz(func(t *testing.T, sol string, deadline float64, turns int) {
		g := NegotiationGroundTruth{Scenario: newRecruit(), Role: "candidate", Condition: NegotiationControl, DeadlineS: deadline, WPM: 150, FirstSpeaker: "candidate"}
		if turns > 0 {
			g.Condition, g.TurnLimit = NegotiationTurnLimit, turns
		}
		if g.Validate() != nil {
			return
		}
		msgs, err := ParseNegotiationTranscript(sol)
		if err != nil {
			return
		}
		out, err := g.Play(msgs)
		if err != nil {
			return
		}
		if out.Deal == out.BATNATaken && out.Deal {
			t.Fatal("deal and walk-away at once")
		}
		if out.Deal && (len(out.Agreement) != len(g.Scenario.Issues) || !negComplete(out.Agreement)) {
			t.Fatalf("deal on an incomplete agreement %v", out.Agreement)
		}
		if out.Turns > len(msgs) || out.Invalid > out.Turns || (turns > 0 && out.Turns > turns) {
			t.Fatalf("turns %d, invalid %d of %d messages", out.Turns, out.Invalid, len(msgs))
		}
		if turns == 0 && out.ElapsedS > deadline {
			t.Fatalf("elapsed %v past the deadline %v", out.ElapsedS, deadline)
		}
		if (out.Deal || out.BATNATaken) && (out.ClosedAtTurn != out.Turns || out.OutOfBudget) {
			t.Fatalf("closed at %d of %d turns, out of budget %v", out.ClosedAtTurn, out.Turns, out.OutOfBudget)
		}
	})
}

// TestNegotiationThinkTime: under a clock, a message's think_s is charged
// with its speech; under a turn limit it is not.
func TestNegotiationThinkTime(t *testing.T) {
	gt := &NegotiationGroundTruth{
		Scenario: NegotiationScenario{ID: "s", Roles: []NegotiationRole{{ID: "a", BATNA: 1}, {ID: "b", BATNA: 1}},
			Issues: []NegotiationIssue{{ID: "x", Options: []string{"lo", "hi"}, Points: map[string][]float64{"a": {0, 4}, "b": {4, 0}}}}},
		Role: "a", Condition: NegotiationControl, DeadlineS: 10, FirstSpeaker: "a",
	}
	msgs, err := ParseNegotiationTranscript(`[{"role":"a","text":"one two three","think_s":2,"action":{"action":"propose","offer":{"x":"hi"}}},
		{"role":"b","text":"fine","think_s":7.5,"action":{"action":"accept"}}]`)
	require.NoError(t, err)
	assert.Equal(t, 2.0, msgs[0].ThinkS)
	// 3 words at 150 wpm = 1.2 s, + 2 s; then 0.4 s + 7.5 s: 11.1 s > 10.
	out, err := gt.Play(msgs)
	require.NoError(t, err)
	assert.True(t, out.OutOfBudget)
	assert.False(t, out.Deal)
	msgs[1].ThinkS = 6
	out, err = gt.Play(msgs)
	require.NoError(t, err)
	assert.True(t, out.Deal)
	assert.InDelta(t, 9.6, out.ElapsedS, 1e-9)
	gt.Condition, gt.TurnLimit, gt.DeadlineS = NegotiationTurnLimit, 2, 0
	msgs[1].ThinkS = 1e5
	out, err = gt.Play(msgs)
	require.NoError(t, err)
	assert.True(t, out.Deal, "a turn limit counts messages, not time")
	_, err = ParseNegotiationTranscript(`[{"role":"a","text":"x","think_s":-1}]`)
	assert.ErrorContains(t, err, "message 1: think_s -1 is not a number of seconds")
}
