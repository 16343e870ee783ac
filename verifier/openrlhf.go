package verifier

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
)

// openRLHFRequest is OpenRLHF's remote reward request: the full texts
// (prompt followed by response), the prompts, and one label per query.
type openRLHFRequest struct {
	Query   []string          `json:"query"`
	Prompts []string          `json:"prompts"`
	Labels  []json.RawMessage `json:"labels"`
}

// openRLHFResponse is what OpenRLHF reads back: rewards for the advantage,
// scores for dynamic filtering, and per-item extra_logs it averages.
type openRLHFResponse struct {
	Rewards   []float64            `json:"rewards"`
	Scores    []float64            `json:"scores"`
	ExtraLogs map[string][]float64 `json:"extra_logs"`
}

// openRLHF scores an OpenRLHF batch. The response is the query with its
// prompt removed when the query starts with it. A label is either the
// ground truth (a JSON string, or any JSON value) scored by the reward named
// by the data_source query parameter or the configured default, or a whole
// item: a JSON object with a ground_truth member, or a string holding one
// (a text column), with optional data_source and extra_info, so that Timely
// rows reach the reward with their time limit and measured time. A label's
// text, like the body, may not name a member twice: that is a 400 for the
// request, as it is for a label that is an object.
func (s *Server) openRLHF(r *http.Request, body []byte) (any, error) {
	ds := r.URL.Query().Get("data_source")
	if ds == "" {
		ds = s.opts.OpenRLHFDataSource
	}
	rw, ok := rewards.Lookup(ds)
	if !ok {
		return nil, &apiError{Status: http.StatusBadRequest, Code: "unknown_data_source", Field: "data_source",
			Message: fmt.Sprintf("data_source: %q is not a registered reward; see GET /v1/rewards", ds)}
	}
	if err := checkJSON(body, s.lim, "query", "prompts", "labels"); err != nil {
		return nil, err
	}
	var req openRLHFRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, decodeError("", body, err)
	}
	n := len(req.Query)
	if req.Query == nil {
		return nil, badRequest("invalid_request", "query", "query: missing; send {\"query\": [...], \"prompts\": [...], \"labels\": [...]}")
	}
	if req.Prompts != nil && len(req.Prompts) != n {
		return nil, badRequest("invalid_request", "prompts", fmt.Sprintf("prompts: %d entries for %d queries", len(req.Prompts), n))
	}
	if req.Labels != nil && len(req.Labels) != n {
		return nil, badRequest("invalid_request", "labels", fmt.Sprintf("labels: %d entries for %d queries", len(req.Labels), n))
	}
	items := make([]rewards.Item, n)
	var itemErrs []error
	for i, q := range req.Query {
		it := &items[i]
		it.DataSource = rw.DataSource
		if req.Labels != nil {
			if err := labelItem(req.Labels[i], it); err != nil {
				var dup *jsonscan.DuplicateKeyError
				if errors.As(err, &dup) {
					return nil, duplicateKey(dup, fmt.Sprintf("labels[%d]", i), "in the label's text, ")
				}
				var many *tooManyInText
				if errors.As(err, &many) {
					return nil, tooManyMembers(fmt.Sprintf("labels[%d]", i), fmt.Sprintf("byte %d of the label's text", many.at))
				}
				if itemErrs == nil {
					itemErrs = make([]error, n)
				}
				itemErrs[i] = fmt.Errorf("labels[%d]: %w", i, err)
			}
		}
		it.SolutionStr = q
		if req.Prompts != nil {
			it.SolutionStr = strings.TrimPrefix(q, req.Prompts[i])
		}
	}
	s.metrics.batchItems.Observe(float64(n))
	groups, err := rewards.GroupItems(items, func(i int) bool { return itemErrs[i] != nil })
	if err != nil {
		return nil, err
	}
	out := s.scoreItems(r.Context(), items, itemErrs, groups)
	res := openRLHFResponse{Rewards: make([]float64, n), Scores: make([]float64, n), ExtraLogs: map[string][]float64{}}
	failed := make([]float64, n)
	for i, ir := range out.results {
		res.Rewards[i], res.Scores[i] = ir.res.Score, ir.res.Score
		for j, k := range ir.keys() {
			if res.ExtraLogs[k] == nil {
				res.ExtraLogs[k] = make([]float64, n)
			}
			if j < len(ir.res.Details) {
				res.ExtraLogs[k][i] = ir.res.Details[j]
			}
		}
		if ir.err != nil {
			failed[i] = 1
		}
	}
	for _, k := range rw.Keys {
		if res.ExtraLogs[k] == nil {
			res.ExtraLogs[k] = make([]float64, n)
		}
	}
	res.ExtraLogs["failed"] = failed
	return res, nil
}

// labelItem fills it from one OpenRLHF label. A label that is an object
// with a ground_truth member, or a JSON string whose text is such an
// object, is the item; any other label is the ground truth. it.DataSource
// holds the default on entry. Text that names a member twice is a
// *jsonscan.DuplicateKeyError, its offsets counted in the text, and text
// with an object of more than maxObjectMembers members a *tooManyInText;
// the body, and so a label that is an object, was checked before.
func labelItem(label json.RawMessage, it *rewards.Item) error {
	obj := bytes.TrimSpace(label)
	if len(obj) > 0 && obj[0] == '"' {
		var text string
		if json.Unmarshal(obj, &text) == nil {
			if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
				if err := refuseDuplicates([]byte(text)); err != nil {
					return err
				}
				obj = []byte(t)
			}
		}
	}
	var fields map[string]json.RawMessage
	if len(obj) == 0 || obj[0] != '{' || json.Unmarshal(obj, &fields) != nil || fields["ground_truth"] == nil {
		it.GroundTruth = label
		return nil
	}
	it.GroundTruth = fields["ground_truth"]
	if raw, ok := fields["data_source"]; ok {
		if err := json.Unmarshal(raw, &it.DataSource); err != nil || it.DataSource == "" {
			return &rewards.FieldError{Field: "data_source", Err: errors.New("want the name of a registered reward (a string); see GET /v1/rewards")}
		}
	}
	if raw, ok := fields["extra_info"]; ok {
		if err := json.Unmarshal(raw, &it.ExtraInfo); err != nil {
			return decodeError("extra_info", raw, err)
		}
	}
	return nil
}

// refuseDuplicates walks JSON text and returns the *jsonscan.DuplicateKeyError
// of its first member named twice, if any, or a *tooManyInText; text that
// is not JSON is no error here (the caller then takes it for what it is).
func refuseDuplicates(text []byte) error {
	s := jsonscan.Scanner{RefuseDuplicates: true, MaxMembers: maxObjectMembers}
	s.Reset(text)
	var dup *jsonscan.DuplicateKeyError
	switch err := s.SkipValue(0); {
	case errors.As(err, &dup):
		return dup
	case errors.Is(err, jsonscan.ErrTooManyMembers):
		return &tooManyInText{at: s.Pos()}
	}
	return nil
}

// tooManyInText is the error of JSON text with an object past the member
// bound, found at byte at of the text.
type tooManyInText struct{ at int }

func (e *tooManyInText) Error() string {
	return fmt.Sprintf("an object with too many members at byte %d", e.at)
}
