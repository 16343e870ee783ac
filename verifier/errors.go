package verifier

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// apiError is an error with the status and JSON body a client sees:
//
//	{"error": {"code": "invalid_item", "message": "...", "field": "extra_info.score"}}
//
// Field names the offending request field when there is one.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// RetryAfter, in seconds, is sent for statuses a client should retry.
	RetryAfter int `json:"-"`
}

func (e *apiError) Error() string { return e.Message }

var (
	errUnauthorized = &apiError{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "missing or wrong bearer token"}
	errOverloaded   = &apiError{Status: http.StatusTooManyRequests, Code: "overloaded", Message: "too many requests in flight; retry shortly", RetryAfter: 1}
)

func badRequest(code, field, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: code, Field: field, Message: msg}
}

// toAPIError is the one place where errors become HTTP statuses.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return bodyTooLarge(mbe.Limit)
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "timeout", Message: "the request took longer than the server's request timeout; retry, or send smaller batches", RetryAfter: 1}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: 499, Code: "canceled", Message: "the client went away"}
	}
	// A timer named by an item (extra_info.timer) fails as the timer
	// routes do, with the item's field named.
	field := "timer"
	var fe *rewards.FieldError
	if errors.As(err, &fe) {
		field = fe.Field
	}
	if te := timerError(err, field); te != nil {
		return te
	}
	var ge *rewards.GroupError
	switch {
	case errors.As(err, &ge):
		return badRequest("invalid_group", ge.Field, err.Error())
	case fe != nil:
		return badRequest("invalid_item", fe.Field, err.Error())
	case errors.Is(err, rewards.ErrUnknownSource):
		return badRequest("unknown_data_source", "data_source", err.Error()+"; see GET /v1/rewards")
	case errors.Is(err, rewards.ErrInvalidItem):
		return badRequest("invalid_item", "", err.Error())
	}
	return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: err.Error()}
}

// timerError maps the timer store's errors, or returns nil; field names the
// request field that held the timer.
func timerError(err error, field string) *apiError {
	var se *timers.SpecError
	var fe *timers.FullError
	switch {
	case errors.As(err, &se):
		return badRequest("invalid_timer_request", se.Field, err.Error())
	case errors.Is(err, timers.ErrBadSpec):
		return badRequest("invalid_timer_request", "", err.Error())
	case errors.Is(err, timers.ErrInvalid):
		return badRequest("invalid_timer", field, field+": the timer token is malformed or was signed with another secret")
	case errors.Is(err, timers.ErrExpired):
		return &apiError{Status: http.StatusGone, Code: "timer_expired", Field: field, Message: field + ": the timer's ttl has passed"}
	case errors.Is(err, timers.ErrTokenRequired):
		return &apiError{Status: http.StatusForbidden, Code: "timer_token_required", Field: field,
			Message: "changing a timer (a span, a stop) needs its token; a rollout id only reads it"}
	case errors.Is(err, timers.ErrConflict):
		return &apiError{Status: http.StatusConflict, Code: "rollout_id_in_use", Field: "rollout_id", Message: err.Error()}
	case errors.As(err, &fe):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "timer_index_full", Message: err.Error(),
			RetryAfter: int(min(math.Ceil(fe.RetryAfter.Seconds()), 3600))}
	case errors.Is(err, timers.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: "timer_not_found", Field: field, Message: field + ": " + err.Error() + "; pass the timer token to read it on any replica"}
	}
	return nil
}

func writeError(w http.ResponseWriter, err error) int {
	ae := toAPIError(err)
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	body, _ := json.Marshal(struct {
		Error *apiError `json:"error"`
	}{ae})
	status := ae.Status
	if status == 499 { // nobody is listening; record it, write nothing useful
		status = http.StatusBadRequest
	}
	if closesConnection(status) {
		w.Header().Set("Connection", "close")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
	return ae.Status
}

// closesConnection reports whether an answer with status ends its
// connection: a refusal whose client is unauthorized, sends more than the
// server takes, or should come back later (perhaps to another replica)
// gives its connection up, for a client that does something to take.
func closesConnection(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusRequestEntityTooLarge ||
		status == http.StatusServiceUnavailable
}

// jsonAppender is implemented by responses that encode themselves (the
// batch results), skipping reflection on the hot path.
type jsonAppender interface {
	AppendJSON(b []byte) []byte
}

// outPool recycles response buffers of self-encoding responses.
var outPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	var body []byte
	if a, ok := v.(jsonAppender); ok {
		bp := outPool.Get().(*[]byte)
		body = a.AppendJSON((*bp)[:0])
		defer func() {
			if cap(body) <= 4<<20 {
				*bp = body[:0]
				outPool.Put(bp)
			}
		}()
	} else {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return writeError(w, err)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
	return status
}
