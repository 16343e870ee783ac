package negotiation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/rewards"
)

// ModelOpponent lets a model behind an OpenAI-compatible endpoint play the
// other role. It is prompted as a row prompts the agent: the other role's
// brief, its private payoff table, the reply format and the rules of the
// row's condition (Prompts, default DefaultPrompts); the agent's messages
// come as user turns, {"text", "action"}, its own as assistant turns. Its
// reply is read as a message of the same form (text alone when it is not);
// its generation time is charged on the clock as its think_s.
type ModelOpponent struct {
	Client      *chat.Client
	Prompts     *Prompts
	Temperature float64
	MaxTokens   int
}

// Reply implements Opponent.
func (m ModelOpponent) Reply(ctx context.Context, gt *rewards.NegotiationGroundTruth, transcript []rewards.NegotiationTurn, _ float64) (rewards.NegotiationTurn, error) {
	if m.Client == nil {
		return rewards.NegotiationTurn{}, fmt.Errorf("model opponent: no client")
	}
	p := m.Prompts
	if p == nil {
		d := DefaultPrompts()
		p = &d
	}
	s := &gt.Scenario
	me := s.Other(gt.Role)
	ri := s.Role(me)
	wpm := gt.WPM
	if wpm == 0 {
		wpm = rewards.DefaultNegotiationWPM
	}
	system := p.system(s, ri, table(s, ri), gt.Condition, gt.DeadlineS, gt.TurnLimit, wpm)
	msgs := []conversation.Message{{Role: "system", Content: &system}}
	if len(transcript) == 0 || transcript[0].Role == me {
		start := p.Start
		msgs = append(msgs, conversation.Message{Role: "user", Content: &start})
	}
	for _, t := range transcript {
		body, err := json.Marshal(struct {
			Text   string          `json:"text"`
			Action json.RawMessage `json:"action,omitempty"`
		}{t.Text, t.Action})
		if err != nil {
			return rewards.NegotiationTurn{}, err
		}
		text := string(body)
		role := "user"
		if t.Role == me {
			role = "assistant"
		}
		msgs = append(msgs, conversation.Message{Role: role, Content: &text})
	}
	reply, err := m.Client.Complete(ctx, chat.Request{Messages: msgs, Temperature: m.Temperature, MaxTokens: m.MaxTokens})
	if err != nil {
		return rewards.NegotiationTurn{}, fmt.Errorf("model opponent: %w", err)
	}
	turn := rewards.NegotiationTurn{Role: me, Text: reply.Content, ThinkS: reply.Latency.Seconds()}
	if parsed, err := rewards.ParseNegotiationTranscript(reply.Content); err == nil && len(parsed) == 1 {
		turn.Text, turn.Action = parsed[0].Text, parsed[0].Action
	}
	return turn, nil
}
