package negotiation

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
)

// envGT is a two-issue negotiation worked out by hand: the agent is the
// candidate (BATNA 3; salary low/mid/high 0/4/8, start June/July 0/2: best
// 10, worst 0), the opponent the HR manager (BATNA 4; salary 8/4/0, start
// 3/0: best 11).
func envGT(t *testing.T, condition string, deadline float64) json.RawMessage {
	t.Helper()
	gt := rewards.NegotiationGroundTruth{
		Scenario: rewards.NegotiationScenario{
			ID:    "hand",
			Roles: []rewards.NegotiationRole{{ID: "cand", BATNA: 3}, {ID: "hr", BATNA: 4}},
			Issues: []rewards.NegotiationIssue{
				{ID: "salary", Options: []string{"low", "mid", "high"}, Points: map[string][]float64{"cand": {0, 4, 8}, "hr": {8, 4, 0}}},
				{ID: "start", Options: []string{"June", "July"}, Points: map[string][]float64{"cand": {0, 2}, "hr": {3, 0}}},
			},
		},
		Role: "cand", Condition: condition, DeadlineS: deadline, FirstSpeaker: "cand",
	}
	b, err := json.Marshal(gt)
	require.NoError(t, err)
	return b
}

// The agent's scripted message: 9 words (3.6 s at 150 wpm) after 2 s of
// thinking, proposing a mid salary and a June start (4 points for it, 7 for
// the HR manager).
var agentProposal = rewards.NegotiationTurn{
	Text:   "I propose a middle salary and a June start.",
	Action: json.RawMessage(`{"action":"propose","offer":{"salary":"mid","start":"June"}}`),
	ThinkS: 2,
}

func newScorer(t *testing.T) *rewards.Scorer {
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	return s
}

// TestEpisodeReachesTheDealComputedByHand: 5.6 s of a 60 s deadline are
// used, u = 0.0933; a conceding opponent (Beta 10) aims at 4 + 7·(1 −
// u^0.1) = 5.48 and accepts the offer worth 7 to it. The deal gives the
// candidate 4 of its 0–10 range: score 0.4. The reply "Agreed, we have a
// deal." (5 words, 2 s) closes it at 7.6 s, turn 2.
func TestEpisodeReachesTheDealComputedByHand(t *testing.T) {
	ep, err := NewEpisode(envGT(t, rewards.NegotiationControl, 60), "", Concession{Beta: 10}, newScorer(t))
	require.NoError(t, err)
	st, err := ep.Step(context.Background(), agentProposal)
	require.NoError(t, err)
	require.True(t, st.Done)
	require.NotNil(t, st.Reply)
	assert.Equal(t, "hr", st.Reply.Role)
	assert.JSONEq(t, `{"action":"accept"}`, string(st.Reply.Action))
	assert.True(t, st.Outcome.Deal)
	assert.Equal(t, []int{1, 0}, st.Outcome.Agreement)
	assert.InDelta(t, 0.4, st.Score, 1e-12)
	assert.Equal(t, 4.0, st.Details["points_self"])
	assert.Equal(t, 7.0, st.Details["points_other"])
	assert.InDelta(t, 7.6, st.Details["closed_at_s"], 1e-9)
	assert.Equal(t, 2.0, st.Details["closed_at_turn"])
	_, err = ep.Step(context.Background(), agentProposal)
	assert.ErrorContains(t, err, "the episode is over")
}

// TestTheSameMessageUnderAShorterDeadlineEndsWithBATNA: 5.6 s do not fit in
// 5: the message is never delivered, the clock runs out, the candidate
// gets its BATNA of 3: score 0.3.
func TestTheSameMessageUnderAShorterDeadlineEndsWithBATNA(t *testing.T) {
	ep, err := NewEpisode(envGT(t, rewards.NegotiationControl, 5), "", Concession{Beta: 10}, newScorer(t))
	require.NoError(t, err)
	st, err := ep.Step(context.Background(), agentProposal)
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Nil(t, st.Reply, "the opponent never speaks")
	assert.True(t, st.Outcome.OutOfBudget)
	assert.False(t, st.Outcome.Deal)
	assert.InDelta(t, 0.3, st.Score, 1e-12)
	assert.Equal(t, 3.0, st.Details["points_self"])
}

// TestAHardLinerCountersWithItsBestAndShowsTheClock: with Beta 1 the
// target is 4 + 7·(1 − 0.0933) = 10.35: no concession fits above it, so
// the opponent proposes its best (low salary, June start); under
// time_aware the agent reads the seconds left, 60 − 5.6 − 2.4 = 52.
func TestAHardLinerCountersWithItsBestAndShowsTheClock(t *testing.T) {
	ep, err := NewEpisode(envGT(t, rewards.NegotiationTimeAware, 60), "[{seconds} seconds left]", Concession{Beta: 1}, newScorer(t))
	require.NoError(t, err)
	st, err := ep.Step(context.Background(), agentProposal)
	require.NoError(t, err)
	assert.False(t, st.Done)
	assert.JSONEq(t, `{"action":"propose","offer":{"salary":"low","start":"June"}}`, string(st.Reply.Action))
	assert.Equal(t, "[52 seconds left]\n"+`{"text":"Here is what I can offer.","action":{"action":"propose","offer":{"salary":"low","start":"June"}}}`, st.Shown)
	assert.Len(t, ep.Transcript(), 2)

	// Accepting that counter-offer ends it: 0 points for the candidate.
	st, err = ep.Step(context.Background(), rewards.NegotiationTurn{Text: "Fine.", Action: json.RawMessage(`{"action":"accept"}`)})
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Nil(t, st.Reply)
	assert.True(t, st.Outcome.Deal)
	assert.Equal(t, 0.0, st.Score)
}

func TestConcessionFollowsItsCurve(t *testing.T) {
	var gt rewards.NegotiationGroundTruth
	require.NoError(t, json.Unmarshal(envGT(t, rewards.NegotiationControl, 60), &gt))
	for _, tc := range []struct {
		used float64
		want string
	}{
		{0, `{"salary":"low","start":"June"}`},   // target 11: its best
		{0.6, `{"salary":"low","start":"July"}`}, // target 6.8: gives up the start (3), keeps 8
		{1, `{"salary":"mid","start":"July"}`},   // target 4: gives up 3, then 4 (total 4)
	} {
		reply, err := Concession{}.Reply(context.Background(), &gt, nil, tc.used)
		require.NoError(t, err)
		var act struct {
			Offer json.RawMessage `json:"offer"`
		}
		require.NoError(t, json.Unmarshal(reply.Action, &act))
		assert.JSONEq(t, tc.want, string(act.Offer), "used %v", tc.used)
	}
	_, err := NewEpisode(json.RawMessage(`{"scenario":{}}`), "", Concession{}, newScorer(t))
	assert.ErrorContains(t, err, "ground_truth")
}

// TestModelOpponent: a model plays the HR manager, prompted with its own
// payoff table; its reply is its turn, charged its generation time, and an
// acceptance closes the deal.
func TestModelOpponent(t *testing.T) {
	var system, last string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		system, last = req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content
		time.Sleep(30 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"{\"text\": \"Deal.\", \"action\": {\"action\": \"accept\"}}"}}]}`)
	}))
	defer srv.Close()
	c, err := chat.New(chat.Options{URL: srv.URL, Model: "opponent"})
	require.NoError(t, err)
	ep, err := NewEpisode(envGT(t, rewards.NegotiationControl, 60), "", ModelOpponent{Client: c}, newScorer(t))
	require.NoError(t, err)
	st, err := ep.Step(context.Background(), agentProposal)
	require.NoError(t, err)
	assert.Contains(t, system, "You are the hr", "the opponent is briefed as its own role")
	assert.Contains(t, system, `"low" = 8, "mid" = 4, "high" = 0`, "with its own payoff table")
	assert.Contains(t, last, `"offer":{"salary":"mid","start":"June"}`, "the agent's message is its user turn")
	require.True(t, st.Done)
	assert.True(t, st.Outcome.Deal)
	assert.InDelta(t, 0.4, st.Score, 1e-12)
	assert.GreaterOrEqual(t, st.Reply.ThinkS, 0.03, "its generation time is on the clock")
}
