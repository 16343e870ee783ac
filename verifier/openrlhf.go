package verifier

import (
	"fmt"
	"net/http"
	"strings"

	json "github.com/goccy/go-json"

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

// openRLHF scores an OpenRLHF batch with one reward, named by the
// data_source query parameter or the configured default. The response is
// the query with its prompt removed when the query starts with it; a
// label is the ground truth (a JSON string, or any JSON value).
func (s *Server) openRLHF(r *http.Request) (any, error) {
	ds := r.URL.Query().Get("data_source")
	if ds == "" {
		ds = s.opts.OpenRLHFDataSource
	}
	rw, ok := rewards.Lookup(ds)
	if !ok {
		return nil, &apiError{Status: http.StatusBadRequest, Code: "unknown_data_source", Field: "data_source",
			Message: fmt.Sprintf("data_source: %q is not a registered reward; see GET /v1/rewards", ds)}
	}
	body, release, err := readBody(r)
	if err != nil {
		return nil, err
	}
	defer release()
	var req openRLHFRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, decodeError("", err)
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
	if n > s.opts.MaxBatchItems {
		return nil, tooManyItems(n, s.opts.MaxBatchItems)
	}
	items := make([]rewards.Item, n)
	for i, q := range req.Query {
		resp := q
		if req.Prompts != nil {
			resp = strings.TrimPrefix(q, req.Prompts[i])
		}
		items[i] = rewards.Item{DataSource: rw.DataSource, SolutionStr: resp}
		if req.Labels != nil {
			items[i].GroundTruth = req.Labels[i]
		}
	}
	s.metrics.batchItems.Observe(float64(n))
	out := s.scoreItems(r.Context(), items, nil)
	res := openRLHFResponse{Rewards: make([]float64, n), Scores: make([]float64, n), ExtraLogs: map[string][]float64{}}
	for _, k := range rw.Keys {
		res.ExtraLogs[k] = make([]float64, n)
	}
	failed := make([]float64, n)
	for i, ir := range out.results {
		res.Rewards[i], res.Scores[i] = ir.res.Score, ir.res.Score
		for j, k := range rw.Keys {
			if j < len(ir.res.Details) {
				res.ExtraLogs[k][i] = ir.res.Details[j]
			}
		}
		if ir.err != nil {
			failed[i] = 1
		}
	}
	res.ExtraLogs["failed"] = failed
	return res, nil
}
