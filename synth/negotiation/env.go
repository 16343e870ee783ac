package negotiation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/rewards"
)

// Opponent plays the role the agent negotiates with.
type Opponent interface {
	// Reply is the opponent's next message, given the episode's ground
	// truth, the transcript so far (the agent's latest message last) and
	// the share of the budget already used, from 0 to 1.
	Reply(ctx context.Context, gt *rewards.NegotiationGroundTruth, transcript []rewards.NegotiationTurn, used float64) (rewards.NegotiationTurn, error)
}

// Concession is the scripted opponent: a time-dependent concession
// strategy. Its aspiration falls from its best total toward its BATNA as
// the budget runs out,
//
//	target(u) = batna + (best − batna) · (1 − u^(1/Beta)),
//
// so Beta 1 concedes linearly, Beta above 1 early (a conceder) and Beta
// below 1 late (a hard-liner). It accepts the agent's standing complete
// proposal when that is worth at least its target (or at least its BATNA
// with less than a tenth of the budget left), and otherwise proposes the
// package it reaches by conceding, from its best option on every issue,
// one issue at a time the change that costs it least (the one that helps
// the agent most on a tie) while its total stays at or above the target.
type Concession struct {
	// Beta shapes the concession curve; 0 means 1.
	Beta float64
}

// Reply implements Opponent.
func (c Concession) Reply(_ context.Context, gt *rewards.NegotiationGroundTruth, transcript []rewards.NegotiationTurn, used float64) (rewards.NegotiationTurn, error) {
	s := &gt.Scenario
	me := s.Other(gt.Role)
	beta := c.Beta
	if beta <= 0 {
		beta = 1
	}
	batna := s.Roles[s.Role(me)].BATNA
	best := s.MaxPoints(me)
	u := min(max(used, 0), 1)
	target := batna + (best-batna)*(1-math.Pow(u, 1/beta))
	if offer, ok := standingOffer(gt, transcript, me); ok {
		worth := s.Points(me, offer)
		if worth >= target || (u >= 0.9 && worth >= batna) {
			return rewards.NegotiationTurn{Role: me, Text: "Agreed, we have a deal.", Action: json.RawMessage(`{"action":"accept"}`)}, nil
		}
	}
	pkg := concede(s, me, gt.Role, target)
	act := map[string]any{"action": rewards.NegotiationPropose}
	offer := map[string]string{}
	for i, o := range pkg {
		offer[s.Issues[i].ID] = s.Issues[i].Options[o]
	}
	act["offer"] = offer
	b, err := json.Marshal(act)
	if err != nil {
		return rewards.NegotiationTurn{}, err
	}
	return rewards.NegotiationTurn{Role: me, Text: "Here is what I can offer.", Action: b}, nil
}

// standingOffer is the agent's proposal still standing for me: its latest
// complete proposal, unless a later message answered it.
func standingOffer(gt *rewards.NegotiationGroundTruth, transcript []rewards.NegotiationTurn, me string) ([]int, bool) {
	for i := len(transcript) - 1; i >= 0; i-- {
		m := transcript[i]
		act, err := rewards.ParseNegotiationAction(m.Action)
		if err != nil {
			continue
		}
		if m.Role == me {
			if act.Kind == rewards.NegotiationPropose || act.Kind == rewards.NegotiationReject {
				return nil, false // answered: a counter-proposal or a rejection
			}
			continue
		}
		switch act.Kind {
		case rewards.NegotiationPropose:
			return resolve(&gt.Scenario, act.Offer)
		case rewards.NegotiationReject:
			return nil, false
		}
	}
	return nil, false
}

// resolve maps a complete offer onto option indices.
func resolve(s *rewards.NegotiationScenario, offer map[string]json.RawMessage) ([]int, bool) {
	pkg := make([]int, len(s.Issues))
	for i, is := range s.Issues {
		v, ok := offer[is.ID]
		if !ok {
			return nil, false
		}
		o, ok := s.OptionIndex(i, v)
		if !ok {
			return nil, false
		}
		pkg[i] = o
	}
	return pkg, true
}

// concede is the package me reaches from its best by the cheapest
// single-issue concessions that keep its total at or above target.
func concede(s *rewards.NegotiationScenario, me, other string, target float64) []int {
	pkg := make([]int, len(s.Issues))
	for i, is := range s.Issues {
		for j, p := range is.Points[me] {
			if p > is.Points[me][pkg[i]] {
				pkg[i] = j
			}
		}
	}
	total := s.Points(me, pkg)
	for {
		bi, bo := -1, -1
		var bestLoss, bestGain float64
		for i, is := range s.Issues {
			cur := is.Points[me][pkg[i]]
			// The next option down for me on this issue.
			next := -1
			for j, p := range is.Points[me] {
				if p < cur && (next < 0 || p > is.Points[me][next]) {
					next = j
				}
			}
			if next < 0 {
				continue
			}
			loss := cur - is.Points[me][next]
			gain := is.Points[other][next] - is.Points[other][pkg[i]]
			if total-loss < target || gain <= 0 {
				continue
			}
			if bi < 0 || loss < bestLoss || loss == bestLoss && gain > bestGain {
				bi, bo, bestLoss, bestGain = i, next, loss, gain
			}
		}
		if bi < 0 {
			return pkg
		}
		pkg[bi] = bo
		total -= bestLoss
	}
}

// Step is what the environment answers to one message of the agent.
type Step struct {
	// Reply is the opponent's message, nil when the agent's message ended
	// the episode.
	Reply *rewards.NegotiationTurn
	// Shown is the reply as the agent reads it: the condition's prefix
	// (the time left, or the urgency line) and {"text", "action"}.
	Shown string
	// Done says the episode is over: a deal, a walk-away, or the budget
	// spent. Outcome, Score and Details are then the negotiation reward's.
	Done    bool
	Outcome rewards.NegotiationOutcome
	Score   float64
	Details map[string]float64
}

// Episode is one negotiation of a row against an opponent, under the row's
// clock: every message costs its speech at the row's words per minute plus
// its think time (the agent's generation time, as its rollout timer
// measured it), or counts against the turn limit.
type Episode struct {
	gt         rewards.NegotiationGroundTruth
	opp        Opponent
	prefix     string
	scorer     *rewards.Scorer
	transcript []rewards.NegotiationTurn
	done       bool
}

// NewEpisode starts an episode of the row whose ground truth is gt (the
// row's reward_model.ground_truth), its turn prefix (Row.TurnPrefix) and
// the opponent. The other role's opening, when it speaks first, is already
// in the row's prompt and opens the transcript.
func NewEpisode(gt json.RawMessage, prefix string, opp Opponent, scorer *rewards.Scorer) (*Episode, error) {
	g, err := rewards.ParseNegotiationGroundTruth(gt)
	if err != nil {
		return nil, fmt.Errorf("negotiation: %w", err)
	}
	if opp == nil || scorer == nil {
		return nil, errors.New("negotiation: an episode needs an opponent and a scorer")
	}
	e := &Episode{gt: *g, opp: opp, prefix: prefix, scorer: scorer}
	if g.Opening != nil {
		e.transcript = append(e.transcript, *g.Opening)
	}
	return e, nil
}

// GroundTruth is the row's ground truth the episode plays.
func (e *Episode) GroundTruth() *rewards.NegotiationGroundTruth { return &e.gt }

// Resume continues the episode from the messages exchanged after the
// row's opening (both roles), as a stateless service receives them with
// every step. It is an error when they already ended the negotiation or
// name a role the scenario lacks.
func (e *Episode) Resume(msgs []rewards.NegotiationTurn) error {
	if len(e.transcript) > 1 || (len(e.transcript) == 1 && e.gt.Opening == nil) {
		return errors.New("negotiation: resume a fresh episode only")
	}
	e.transcript = append(e.transcript, msgs...)
	out, err := e.gt.Play(e.transcript)
	if err != nil {
		return fmt.Errorf("negotiation: %w", err)
	}
	if ended(out) {
		e.done = true
		return errors.New("negotiation: the transcript has already ended the episode")
	}
	return nil
}

// AgentThinkS is the think time the agent's messages so far were charged.
func (e *Episode) AgentThinkS() float64 {
	var t float64
	for _, m := range e.transcript {
		if m.Role == e.gt.Role {
			t += m.ThinkS
		}
	}
	return t
}

// Exchanged returns the messages after the row's opening, both roles, in
// order: what Resume takes back.
func (e *Episode) Exchanged() []rewards.NegotiationTurn {
	if e.gt.Opening != nil && len(e.transcript) > 0 {
		return e.transcript[1:]
	}
	return e.transcript
}

// Transcript returns the messages so far, both roles, in order.
func (e *Episode) Transcript() []rewards.NegotiationTurn { return e.transcript }

// Step delivers the agent's message (its Role is set to the agent's) and
// returns the opponent's answer, or the end of the episode.
func (e *Episode) Step(ctx context.Context, agent rewards.NegotiationTurn) (*Step, error) {
	if e.done {
		return nil, errors.New("negotiation: the episode is over")
	}
	agent.Role = e.gt.Role
	e.transcript = append(e.transcript, agent)
	out, err := e.gt.Play(e.transcript)
	if err != nil {
		return nil, fmt.Errorf("negotiation: %w", err)
	}
	if ended(out) {
		return e.finish(ctx, nil)
	}
	reply, err := e.opp.Reply(ctx, &e.gt, e.transcript, e.used(out))
	if err != nil {
		return nil, fmt.Errorf("negotiation: opponent: %w", err)
	}
	reply.Role = e.gt.Scenario.Other(e.gt.Role)
	e.transcript = append(e.transcript, reply)
	if out, err = e.gt.Play(e.transcript); err != nil {
		return nil, fmt.Errorf("negotiation: %w", err)
	}
	if ended(out) {
		return e.finish(ctx, &reply)
	}
	shown, err := e.show(reply, out)
	if err != nil {
		return nil, err
	}
	return &Step{Reply: &reply, Shown: shown}, nil
}

func ended(o rewards.NegotiationOutcome) bool { return o.Deal || o.BATNATaken || o.OutOfBudget }

// used is the share of the budget the transcript has used.
func (e *Episode) used(o rewards.NegotiationOutcome) float64 {
	if e.gt.Condition == rewards.NegotiationTurnLimit {
		return float64(o.Turns) / float64(e.gt.TurnLimit)
	}
	return o.ElapsedS / e.gt.DeadlineS
}

// show renders the reply as the agent reads it.
func (e *Episode) show(reply rewards.NegotiationTurn, out rewards.NegotiationOutcome) (string, error) {
	body, err := json.Marshal(struct {
		Text   string          `json:"text"`
		Action json.RawMessage `json:"action,omitempty"`
	}{reply.Text, reply.Action})
	if err != nil {
		return "", fmt.Errorf("negotiation: %w", err)
	}
	if e.prefix == "" {
		return string(body), nil
	}
	left := strconv.FormatFloat(math.Floor(max(e.gt.DeadlineS-out.ElapsedS, 0)), 'f', 0, 64)
	return strings.Replace(e.prefix, PlaceholderSeconds, left, 1) + "\n" + string(body), nil
}

// finish scores the transcript with the negotiation reward.
func (e *Episode) finish(ctx context.Context, reply *rewards.NegotiationTurn) (*Step, error) {
	e.done = true
	transcript, err := json.Marshal(e.transcript)
	if err != nil {
		return nil, fmt.Errorf("negotiation: %w", err)
	}
	gt, err := json.Marshal(&e.gt)
	if err != nil {
		return nil, fmt.Errorf("negotiation: %w", err)
	}
	res := e.scorer.ScoreWith(ctx, rewards.Negotiation, &rewards.Item{DataSource: rewards.Negotiation.DataSource, SolutionStr: string(transcript), GroundTruth: gt})
	if res.Err != nil {
		return nil, fmt.Errorf("negotiation: score: %w", res.Err)
	}
	out, _ := e.gt.Play(e.transcript)
	st := &Step{Reply: reply, Done: true, Outcome: out, Score: res.Score, Details: map[string]float64{}}
	for i, k := range rewards.Negotiation.Keys {
		st.Details[k] = res.Details[i]
	}
	if reply != nil {
		st.Shown, err = e.show(*reply, out)
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}
