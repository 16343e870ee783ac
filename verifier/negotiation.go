package verifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// negotiationStepRequest is one step of a negotiation episode. The service
// keeps no episode: every step carries the row (its ground truth and turn
// prefix) and the messages so far, and the scripted opponent's answer
// follows from them.
type negotiationStepRequest struct {
	GroundTruth json.RawMessage `json:"ground_truth"`
	TurnPrefix  string          `json:"turn_prefix"`
	// Transcript holds the messages after the row's opening, both roles.
	Transcript []rewards.NegotiationTurn `json:"transcript"`
	// Message is the agent's new message; its think_s is charged on the
	// clock, or, when Timer is set, the timer's elapsed time less what the
	// agent's earlier messages were charged.
	Message rewards.NegotiationTurn `json:"message"`
	Timer   string                  `json:"timer"`
	// Opponent configures the scripted opponent.
	Opponent struct {
		// Kind is "scripted" (the default) or "model": the server's
		// configured model opponent.
		Kind string  `json:"kind"`
		Beta float64 `json:"beta"`
	} `json:"opponent"`
}

type negotiationStepResponse struct {
	Reply   *rewards.NegotiationTurn `json:"reply"`
	Shown   string                   `json:"shown"`
	Done    bool                     `json:"done"`
	Score   *float64                 `json:"score"`
	Details map[string]float64       `json:"details,omitempty"`
	// Transcript is the messages after the row's opening, to send back
	// with the next step.
	Transcript []rewards.NegotiationTurn `json:"transcript"`
}

// negotiationStep answers POST /v1/envs/negotiation/step.
func (s *Server) negotiationStep(r *http.Request, body []byte) (any, error) {
	var req negotiationStepRequest
	if err := s.decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if !(req.Opponent.Beta >= 0 && req.Opponent.Beta <= 100) {
		return nil, badRequest("invalid_request", "opponent.beta", "opponent.beta: want a number from 0 (the default, 1) to 100")
	}
	var opp negotiation.Opponent = negotiation.Concession{Beta: req.Opponent.Beta}
	switch req.Opponent.Kind {
	case "", "scripted":
	case "model":
		if s.opts.NegotiationOpponent == nil {
			return nil, badRequest("invalid_request", "opponent.kind", "opponent.kind: this server has no model opponent (serve.negotiation_opponent_url)")
		}
		opp = s.opts.NegotiationOpponent
	default:
		return nil, badRequest("invalid_request", "opponent.kind", fmt.Sprintf("opponent.kind: %q is not scripted or model", req.Opponent.Kind))
	}
	ep, err := negotiation.NewEpisode(req.GroundTruth, req.TurnPrefix, opp, s.opts.Scorer)
	if err != nil {
		var fe *rewards.FieldError
		if errors.As(err, &fe) {
			return nil, badRequest("invalid_request", fe.Field, err.Error())
		}
		return nil, badRequest("invalid_request", "ground_truth", err.Error())
	}
	if err := ep.Resume(req.Transcript); err != nil {
		return nil, badRequest("invalid_request", "transcript", err.Error())
	}
	msg := req.Message
	if req.Timer != "" {
		el, _, err := s.opts.Timers.Elapsed(r.Context(), req.Timer)
		s.metrics.timerOp("negotiation_step", err)
		if err != nil {
			return nil, err
		}
		msg.ThinkS = max(0, el-ep.AgentThinkS())
	}
	if !(msg.ThinkS >= 0 && msg.ThinkS <= 1e6) {
		return nil, badRequest("invalid_request", "message.think_s", "message.think_s: want seconds from 0 to 1e6")
	}
	// An unreadable action is the agent's mistake, which the rules count
	// as an invalid action; it is no bad request.
	st, err := ep.Step(r.Context(), msg)
	if err != nil {
		return nil, badRequest("invalid_request", "message", err.Error())
	}
	resp := negotiationStepResponse{Reply: st.Reply, Shown: st.Shown, Done: st.Done, Transcript: ep.Exchanged()}
	if st.Done {
		score := st.Score
		resp.Score, resp.Details = &score, st.Details
	}
	return resp, nil
}
