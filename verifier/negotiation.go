package verifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/timeaware/timeaware/internal/seal"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// negotiationStepRequest is one step of a negotiation episode. The service
// keeps no episode, yet no client can rewrite one: the first step takes the
// row (its ground truth and turn prefix), the opponent and the rollout's
// timer, and every answer carries the episode's state, sealed, which the
// next step sends back instead of the row with the agent's new message.
// The row's fields are raw so that a step sees whether a client sent one,
// whatever its value (null counts as not sent).
type negotiationStepRequest struct {
	// State is the state the previous step returned; absent on the first.
	State       *string         `json:"state"`
	GroundTruth json.RawMessage `json:"ground_truth"`
	TurnPrefix  json.RawMessage `json:"turn_prefix"`
	Opponent    json.RawMessage `json:"opponent"`
	// Transcript is refused: the messages so far are the state's.
	Transcript json.RawMessage `json:"transcript"`
	// Message is the agent's new message. Its think time is the timer's
	// elapsed time less what the agent's earlier messages were charged,
	// never a think_s of the client's.
	Message negotiationMessage `json:"message"`
	// Timer is the rollout's timer (its newest token, or its rollout id on
	// the replica that knows it); required on every step.
	Timer string `json:"timer"`
}

// negotiationMessage is the agent's message as a step receives it.
type negotiationMessage struct {
	Role   string          `json:"role"`
	Text   string          `json:"text"`
	Action json.RawMessage `json:"action"`
	ThinkS json.RawMessage `json:"think_s"`
}

// negotiationOpponent configures the other side of an episode.
type negotiationOpponent struct {
	// Kind is "scripted" (the default) or "model": the server's configured
	// model opponent.
	Kind string  `json:"kind"`
	Beta float64 `json:"beta"`
}

// episodeState is what a negotiation state carries: the row, the opponent,
// the messages after the row's opening (each agent message with the think
// time it was charged, so the clock so far) and the rollout whose timer
// the episode runs on.
type episodeState struct {
	GroundTruth json.RawMessage           `json:"ground_truth"`
	TurnPrefix  string                    `json:"turn_prefix"`
	Opponent    negotiationOpponent       `json:"opponent"`
	Transcript  []rewards.NegotiationTurn `json:"transcript"`
	RolloutID   string                    `json:"rollout_id"`
	// TimerStart is when the episode's timer was created (Unix ns): with
	// the rollout id, it names that timer, and no other created under the
	// same id. 0 in a state sealed before it was kept: the step binds it.
	TimerStart int64 `json:"timer_start,omitempty"`
	Done       bool  `json:"done"`
}

type negotiationStepResponse struct {
	Reply   *rewards.NegotiationTurn `json:"reply"`
	Shown   string                   `json:"shown"`
	Done    bool                     `json:"done"`
	Score   *float64                 `json:"score"`
	Details map[string]float64       `json:"details,omitempty"`
	// Transcript is the messages after the row's opening, for display.
	Transcript []rewards.NegotiationTurn `json:"transcript"`
	// State is the episode's sealed state, for the next step.
	State string `json:"state"`
}

// maxEpisodeState bounds a negotiation state's payload (3 MiB; its token
// is 4 MiB of text). A row of the built-in scenario with a dozen messages
// takes a few KiB.
const maxEpisodeState = 3 << 20

// maxThinkS caps the think time one message is charged: the longest
// deadline a ground truth may set, so a longer time changes no outcome.
const maxThinkS = 1e6

// episodeSealer returns the sealer of this server's negotiation states.
func (s *Server) episodeSealer() *seal.Sealer { return s.episodes }

// episodeSealerFor returns the sealer of negotiation states keyed by
// secret; without one, the sealer every Server of the process shares,
// keyed by a random secret drawn when it is first needed, so a state opens
// on any Server of the process and in no other process.
func episodeSealerFor(secret []byte) (*seal.Sealer, error) {
	if len(secret) == 0 {
		return processEpisodeSealer(), nil
	}
	return newEpisodeSealer(secret)
}

var processEpisodeSealer = sync.OnceValue(func() *seal.Sealer {
	sl, err := newEpisodeSealer(nil)
	if err != nil {
		panic(err) // a random secret is long enough
	}
	return sl
})

// newEpisodeSealer returns a sealer of negotiation states keyed by secret;
// an empty secret means a random one.
func newEpisodeSealer(secret []byte) (*seal.Sealer, error) {
	if len(secret) == 0 {
		secret = seal.RandomSecret()
	}
	sl, err := seal.New(secret, "negotiation episode state", maxEpisodeState)
	if err != nil {
		return nil, fmt.Errorf("verifier: episode secret: %w", err)
	}
	return sl, nil
}

// sent reports whether a raw member was in the body with a value.
func sent(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// negotiationStep answers POST /v1/envs/negotiation/step.
func (s *Server) negotiationStep(r *http.Request, body []byte) (any, error) {
	var req negotiationStepRequest
	if err := s.decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if sent(req.Message.ThinkS) {
		return nil, badRequest("invalid_request", "message.think_s", "message.think_s: the agent's think time comes from its timer (the timer's elapsed time less what its earlier messages were charged); send no think_s")
	}
	if sent(req.Transcript) {
		return nil, badRequest("invalid_request", "transcript", "transcript: a step takes no transcript; the messages so far travel in the state the previous step returned")
	}
	var st episodeState
	if req.State != nil {
		for _, m := range []struct {
			name string
			raw  json.RawMessage
		}{{"ground_truth", req.GroundTruth}, {"turn_prefix", req.TurnPrefix}, {"opponent", req.Opponent}} {
			if sent(m.raw) {
				return nil, badRequest("invalid_request", m.name, m.name+": a step with a state takes the episode's "+m.name+" from the state; send state, message and timer only")
			}
		}
	}
	if req.Timer == "" {
		return nil, badRequest("invalid_request", "timer", "timer: every step needs the rollout's timer (POST /v1/timers), which measures the agent's think time")
	}
	if req.State != nil {
		var err error
		if st, err = s.openEpisodeState(*req.State); err != nil {
			return nil, err
		}
	} else {
		if err := s.decodeFirstStep(&req, &st); err != nil {
			return nil, err
		}
	}
	reading, err := s.opts.Timers.Read(req.Timer)
	s.metrics.timerOp("negotiation_step", err)
	if err != nil {
		return nil, err
	}
	if reading.Stopped {
		return nil, badRequest("timer_stopped", "timer", "timer: the timer is stopped, and a stopped timer charges no think time; an episode runs on its rollout's running timer")
	}
	started := reading.StartedAt.UnixNano()
	if req.State == nil {
		st.RolloutID = reading.RolloutID
	} else if reading.RolloutID != st.RolloutID {
		return nil, badRequest("wrong_timer", "timer", fmt.Sprintf("timer: the timer is rollout %s's, but the state's episode runs on rollout %s's timer", quote(reading.RolloutID), quote(st.RolloutID)))
	} else if st.TimerStart != 0 && st.TimerStart != started {
		return nil, badRequest("wrong_timer", "timer", fmt.Sprintf("timer: rollout %s's timer was created anew at %s; the state's episode runs on the one created at %s, whose time a new timer would not carry",
			quote(st.RolloutID), reading.StartedAt.Format(time.RFC3339Nano), time.Unix(0, st.TimerStart).UTC().Format(time.RFC3339Nano)))
	}
	st.TimerStart = started

	ep, err := s.resumeEpisode(&st, req.State != nil)
	if err != nil {
		return nil, err
	}
	// The row sets the clock the agent's thinking runs on: a timer of
	// another speed factor would charge it at another rate (at 1e-6, two
	// seconds of thought cost two microseconds of the deadline).
	if want := ep.GroundTruth().SpeedFactor(); reading.SpeedFactor != want {
		return nil, badRequest("wrong_timer", "timer", fmt.Sprintf("timer: the timer's speed_factor is %v, but the row's episode charges think time at %v (ground_truth.timer_speed_factor; create the timer with that speed_factor)",
			reading.SpeedFactor, want))
	}
	msg := rewards.NegotiationTurn{Role: req.Message.Role, Text: req.Message.Text, Action: req.Message.Action}
	msg.ThinkS = min(max(0, reading.ElapsedS-ep.AgentThinkS()), maxThinkS)
	// An unreadable action is the agent's mistake, which the rules count
	// as an invalid action; it is no bad request.
	step, err := ep.Step(r.Context(), msg)
	if err != nil {
		return nil, badRequest("invalid_request", "message", err.Error())
	}
	st.Transcript, st.Done = ep.Exchanged(), step.Done
	resp := negotiationStepResponse{Reply: step.Reply, Shown: step.Shown, Done: step.Done, Transcript: st.Transcript}
	if resp.State, err = s.sealEpisodeState(&st); err != nil {
		return nil, err
	}
	if step.Done {
		score := step.Score
		resp.Score, resp.Details = &score, step.Details
	}
	return resp, nil
}

// decodeFirstStep reads the row and the opponent of an episode's first
// step into st.
func (s *Server) decodeFirstStep(req *negotiationStepRequest, st *episodeState) error {
	if !sent(req.GroundTruth) {
		return badRequest("invalid_request", "ground_truth", "ground_truth: the first step of an episode takes the row's ground truth (later steps, the state)")
	}
	st.GroundTruth = req.GroundTruth
	if sent(req.TurnPrefix) {
		if err := json.Unmarshal(req.TurnPrefix, &st.TurnPrefix); err != nil {
			return badRequest("invalid_json", "turn_prefix", "turn_prefix: want a string")
		}
	}
	if sent(req.Opponent) {
		if err := s.decodeStrict(req.Opponent, &st.Opponent); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.Field != "" {
				ae.Field = "opponent." + ae.Field
			} else if ae != nil {
				ae.Field = "opponent"
			}
			return err
		}
	}
	o := &st.Opponent
	if !(o.Beta >= 0 && o.Beta <= 100) {
		return badRequest("invalid_request", "opponent.beta", "opponent.beta: want a number from 0 (the default, 1) to 100")
	}
	if o.Kind == "" {
		o.Kind = "scripted"
	}
	if o.Kind != "scripted" && o.Kind != "model" {
		return badRequest("invalid_request", "opponent.kind", fmt.Sprintf("opponent.kind: %q is not scripted or model", o.Kind))
	}
	return nil
}

// resumeEpisode builds the episode st describes. Errors name the field of
// the first step, or the state when it comes from one (a state this code
// wrote, under rules another build may not share).
func (s *Server) resumeEpisode(st *episodeState, fromState bool) (*negotiation.Episode, error) {
	var opp negotiation.Opponent = negotiation.Concession{Beta: st.Opponent.Beta}
	if st.Opponent.Kind == "model" {
		if s.opts.NegotiationOpponent == nil {
			return nil, badRequest("invalid_request", "opponent.kind", "opponent.kind: this server has no model opponent (serve.negotiation_opponent_url)")
		}
		opp = s.opts.NegotiationOpponent
	}
	ep, err := negotiation.NewEpisode(st.GroundTruth, st.TurnPrefix, opp, s.opts.Scorer)
	if err == nil && fromState {
		err = ep.Resume(st.Transcript)
	}
	if err == nil {
		return ep, nil
	}
	if fromState {
		return nil, badRequest("invalid_state", "state", "state: "+err.Error())
	}
	var fe *rewards.FieldError
	if errors.As(err, &fe) {
		return nil, badRequest("invalid_request", fe.Field, err.Error())
	}
	return nil, badRequest("invalid_request", "ground_truth", err.Error())
}

// openEpisodeState checks and reads a state a step sent.
func (s *Server) openEpisodeState(token string) (episodeState, error) {
	var st episodeState
	payload, err := s.episodeSealer().Open(token)
	if err != nil {
		return st, badRequest("invalid_state", "state", "state: not a state this service wrote, or edited, truncated or signed with another secret; send the state the previous step returned, unchanged")
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		return st, badRequest("invalid_state", "state", "state: "+err.Error())
	}
	if st.Done {
		return st, badRequest("episode_over", "state", "state: the episode is over; start a new one from the row")
	}
	return st, nil
}

// sealEpisodeState returns st's token.
func (s *Server) sealEpisodeState(st *episodeState) (string, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("negotiation state: %w", err)
	}
	tok, err := s.episodeSealer().Seal(payload)
	if errors.Is(err, seal.ErrTooLarge) {
		return "", badRequest("invalid_request", "message", fmt.Sprintf("message: the episode's state would pass %d bytes; send shorter messages", maxEpisodeState))
	}
	return tok, err
}

// quote renders a client's string for an error message.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
