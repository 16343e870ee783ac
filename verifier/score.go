package verifier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
)

// parallelBatch is the batch size from which one request's items are
// scored on several cores.
const parallelBatch = 512

// decodeError turns the error of decoding data, which lies at prefix in
// the request, into a 400 that names the problem in JSON's words
// (jsonscan.Explain) and, for a value of the wrong kind, the field.
func decodeError(prefix string, data []byte, err error) error {
	e := jsonscan.Explain(prefix, data, err)
	var de *jsonscan.DecodeError
	if errors.As(e, &de) && de.Want != "" {
		return badRequest("invalid_json", de.Path, e.Error())
	}
	if errors.As(e, &de) && de.Offset > 0 {
		return badRequest("malformed_json", prefix, fmt.Sprintf("malformed JSON at byte %d: %s", de.Offset, de.Reason))
	}
	field := prefix
	if _, name, ok := strings.Cut(err.Error(), `unknown field "`); ok {
		name, _, _ = strings.Cut(name, `"`)
		field = strings.TrimPrefix(prefix+"."+name, ".")
	}
	return badRequest("malformed_json", field, "malformed JSON: "+e.Error())
}

func (s *Server) listRewards(*http.Request, []byte) (any, error) {
	type entry struct {
		DataSource  string   `json:"data_source"`
		Summary     string   `json:"summary"`
		GroundTruth string   `json:"ground_truth"`
		Keys        []string `json:"keys"`
		Grouped     bool     `json:"grouped"`
	}
	out := make([]entry, 0, len(rewards.All))
	for _, r := range rewards.All {
		out = append(out, entry{r.DataSource, r.Summary, r.GroundTruth, r.Keys, r.Grouped()})
	}
	return map[string]any{"rewards": out, "fallback_score": s.opts.Scorer.Config().FallbackScore}, nil
}

// scoreOne scores a single item. Unlike a batch, an item that cannot be
// scored is a 400 naming the field: there is no other row to keep.
func (s *Server) scoreOne(r *http.Request, body []byte) (any, error) {
	if err := checkJSON(body, s.lim); err != nil {
		return nil, err
	}
	var it rewards.Item
	if err := json.Unmarshal(body, &it); err != nil {
		return nil, decodeError("", body, err)
	}
	if it.DataSource == "" {
		return nil, badRequest("invalid_item", "data_source", "data_source: missing; see GET /v1/rewards")
	}
	rw, ok := rewards.Lookup(it.DataSource)
	if !ok {
		return nil, fmt.Errorf("data_source: %w %q", rewards.ErrUnknownSource, it.DataSource)
	}
	res := s.opts.Scorer.ScoreWith(r.Context(), rw, &it)
	s.metrics.scored(rw.DataSource, 1, b2i(res.Err != nil))
	if res.Err != nil {
		return nil, res.Err
	}
	return &singleResult{keys: rw.Keys, res: res}, nil
}

type batchRequest struct {
	Items []rewards.Item `json:"items"`
}

type rawBatchRequest struct {
	Items []json.RawMessage `json:"items"`
}

// scoreBatch scores items in order. A malformed body is a 400; an item that
// cannot be decoded or scored gets the fallback score, zero details and an
// error, and the others score.
func (s *Server) scoreBatch(r *http.Request, body []byte) (any, error) {
	items, itemErrs, err := s.decodeBatch(body)
	if err != nil {
		return nil, err
	}
	groups, err := rewards.GroupItems(items, func(i int) bool { return itemErrs != nil && itemErrs[i] != nil })
	if err != nil {
		return nil, err
	}
	s.metrics.clientReport(r.Header.Get(clientFallbacksHeader))
	s.metrics.batchItems.Observe(float64(len(items)))
	return s.scoreItems(r.Context(), items, itemErrs, groups), nil
}

// decodeBatch decodes {"items": [...]}. The common case (every item well
// formed) takes one pass; otherwise each item is decoded on its own so that
// one bad item does not sink the batch.
func (s *Server) decodeBatch(body []byte) ([]rewards.Item, []error, error) {
	items, ok, err := decodeBatchFast(body, s.lim)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		return items, nil, nil
	}
	// The general decoders have no limits of their own: check them first.
	if err := checkJSON(body, s.lim, "items"); err != nil {
		return nil, nil, err
	}
	var req batchRequest
	err = json.Unmarshal(body, &req)
	if err == nil {
		if req.Items == nil {
			return nil, nil, badRequest("invalid_request", "items", "items: missing; send {\"items\": [...]}")
		}
		return req.Items, nil, nil
	}
	var raw rawBatchRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, nil, decodeError("", body, err)
	}
	if raw.Items == nil {
		return nil, nil, badRequest("invalid_request", "items", "items: missing; send {\"items\": [...]}")
	}
	items = make([]rewards.Item, len(raw.Items))
	errs := make([]error, len(raw.Items))
	for i, b := range raw.Items {
		if err := json.Unmarshal(b, &items[i]); err != nil {
			errs[i] = decodeError("", b, err)
			// Keep the data source, when it decodes, so the result still
			// carries that reward's keys.
			var head struct {
				DataSource string `json:"data_source"`
			}
			_ = json.Unmarshal(b, &head)
			items[i] = rewards.Item{DataSource: head.DataSource}
		}
	}
	return items, errs, nil
}

func tooManyItems(field string, limit int) error {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "too_many_items", Field: field,
		Message: fmt.Sprintf("%s: more than %d entries, the limit per request; split the batch", field, limit)}
}

func (s *Server) scoreItems(ctx context.Context, items []rewards.Item, itemErrs []error, groups []rewards.Group) *batchResults {
	out := &batchResults{results: make([]itemResult, len(items))}
	score := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			res := &out.results[i]
			res.rw, _ = rewards.Lookup(items[i].DataSource)
			switch {
			case res.rw != nil && res.rw.Grouped() && (itemErrs == nil || itemErrs[i] == nil):
				// scored with its group below
			case itemErrs != nil && itemErrs[i] != nil:
				res.err = itemErrs[i]
				res.res = rewards.Result{Score: s.opts.Scorer.Config().FallbackScore}
			case res.rw == nil:
				res.res = s.opts.Scorer.Score(ctx, &items[i])
				res.err = res.res.Err
			default:
				res.res = s.opts.Scorer.ScoreWith(ctx, res.rw, &items[i])
				res.err = res.res.Err
			}
		}
	}
	n := len(items)
	if workers := runtime.GOMAXPROCS(0); n >= parallelBatch && workers > 1 {
		var wg sync.WaitGroup
		chunk := (n + workers - 1) / workers
		for lo := 0; lo < n; lo += chunk {
			wg.Add(1)
			go func(lo, hi int) { defer wg.Done(); score(lo, hi) }(lo, min(lo+chunk, n))
		}
		wg.Wait()
	} else {
		score(0, n)
	}
	for _, g := range groups {
		members := make([]*rewards.Item, len(g.Members))
		for k, i := range g.Members {
			members[k] = &items[i]
		}
		for k, res := range s.opts.Scorer.ScoreGroup(ctx, g.Reward, members) {
			out.results[g.Members[k]].res, out.results[g.Members[k]].err = res, res.Err
		}
		s.metrics.group(g.Reward, out.results[g.Members[0]].res)
	}
	s.countBatch(out)
	return out
}

// countBatch adds the batch's outcomes to the per-data-source counters;
// items of no registered data source count as "unknown".
func (s *Server) countBatch(out *batchResults) {
	counts := map[*rewards.Reward]*[2]int{} // items, failed
	for i := range out.results {
		r := &out.results[i]
		c := counts[r.rw]
		if c == nil {
			c = new([2]int)
			counts[r.rw] = c
		}
		c[0]++
		if r.err != nil {
			c[1]++
			out.failed++
		}
	}
	for rw, c := range counts {
		ds := "unknown"
		if rw != nil {
			ds = rw.DataSource
		}
		s.metrics.scored(ds, c[0], c[1])
	}
}

// itemResult is one item's outcome; rw is its reward, nil when the data
// source is unknown (the result then carries only score and error).
type itemResult struct {
	rw  *rewards.Reward
	res rewards.Result
	err error
}

func (r *itemResult) keys() []string {
	if r.rw == nil {
		return nil
	}
	return r.rw.Keys
}

type batchResults struct {
	results []itemResult
	failed  int
}

// AppendJSON writes {"results":[...],"failed":n}.
func (b *batchResults) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"results":[`...)
	for i := range b.results {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = b.results[i].res.AppendJSON(buf, b.results[i].keys(), b.results[i].err)
	}
	buf = append(buf, `],"failed":`...)
	buf = strconv.AppendInt(buf, int64(b.failed), 10)
	return append(buf, '}')
}

type singleResult struct {
	keys []string
	res  rewards.Result
}

func (r *singleResult) AppendJSON(buf []byte) []byte {
	return r.res.AppendJSON(buf, r.keys, nil)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
