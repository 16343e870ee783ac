package verifier

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"time"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/timers"
)

// decodeStrict decodes a small request object, rejecting unknown fields so
// that a misspelt option is an error rather than a silent default.
// checkJSON refuses what the stream decoder would let pass: a member named
// twice, and anything after the object (a second object, stray text),
// which the decoder would leave unread.
func (s *Server) decodeStrict(body []byte, v any) error {
	if err := checkJSON(body, s.lim); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError("", body, err)
	}
	return nil
}

type createTimerRequest struct {
	RolloutID string `json:"rollout_id"`
	timers.Settings
}

func (s *Server) createTimer(r *http.Request, body []byte) (any, error) {
	var req createTimerRequest
	if err := s.decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if req.TTLS < 0 || req.TTLS > 1e7 || math.IsNaN(req.TTLS) {
		return nil, badRequest("invalid_timer_request", "ttl_s", fmt.Sprintf("ttl_s: %v is not in [0, 1e7]", req.TTLS))
	}
	rd, err := s.opts.Timers.Create(timers.Spec{
		RolloutID: req.RolloutID, SpeedFactor: req.SpeedFactor, Jitter: req.Jitter,
		TTL: time.Duration(req.TTLS * float64(time.Second)), TimeLimitS: req.TimeLimitS,
	})
	s.metrics.timerOp("create", err)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

func (s *Server) readTimer(r *http.Request, _ []byte) (any, error) {
	rd, err := s.opts.Timers.Read(r.PathValue("id"))
	s.metrics.timerOp("read", err)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

func (s *Server) stopTimer(r *http.Request, _ []byte) (any, error) {
	rd, err := s.opts.Timers.Stop(r.PathValue("id"))
	s.metrics.timerOp("stop", err)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

type spanRequest struct {
	Seconds   *float64 `json:"seconds"`
	Simulated bool     `json:"simulated"`
	Action    string   `json:"action"`
}

func (s *Server) addSpan(r *http.Request, body []byte) (any, error) {
	var req spanRequest
	if err := s.decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if (req.Seconds == nil) == (req.Action == "") {
		return nil, badRequest("invalid_timer_request", "seconds", "send either seconds (a span's length) or action (start or end)")
	}
	sp := timers.Span{Simulated: req.Simulated, Action: req.Action}
	if req.Seconds != nil {
		sp.Seconds = *req.Seconds
	}
	rd, err := s.opts.Timers.AddSpan(r.PathValue("id"), sp)
	s.metrics.timerOp("span", err)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

type getDurationRequest struct {
	RolloutID string `json:"rollout_id"`
	Timer     string `json:"timer"`
}

type getDurationResponse struct {
	Text      string  `json:"text"`
	ElapsedS  float64 `json:"elapsed_s"`
	ReportedS float64 `json:"reported_s"`
	RolloutID string  `json:"rollout_id"`
}

// getDuration is the get_duration tool: the text the model is shown for
// the rollout's timer, named by its token (any replica) or its rollout id
// (the replica that created it).
func (s *Server) getDuration(r *http.Request, body []byte) (any, error) {
	var req getDurationRequest
	if err := s.decodeStrict(body, &req); err != nil {
		return nil, err
	}
	id := req.Timer
	if id == "" {
		id = req.RolloutID
	}
	if id == "" {
		return nil, badRequest("invalid_timer_request", "timer", "send the timer token (timer) or the rollout id (rollout_id)")
	}
	rd, err := s.opts.Timers.Read(id)
	s.metrics.timerOp("get_duration", err)
	if err != nil {
		return nil, err
	}
	if req.Timer != "" && req.RolloutID != "" && req.RolloutID != rd.RolloutID {
		return nil, badRequest("invalid_timer_request", "rollout_id", fmt.Sprintf("rollout_id: %q does not match the timer's rollout %q", req.RolloutID, rd.RolloutID))
	}
	return getDurationResponse{Text: rd.Text, ElapsedS: rd.ElapsedS, ReportedS: rd.ReportedS, RolloutID: rd.RolloutID}, nil
}
