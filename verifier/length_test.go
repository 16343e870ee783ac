package verifier

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLengthRewardsOverHTTP: the token-budget rewards score through both
// score routes, and every malformed count or budget is a 400 (single) or an
// item error (batch) naming the field, never a score.
func TestLengthRewardsOverHTTP(t *testing.T) {
	f := newFixture(t, nil)
	item := func(ds, ei string) string {
		return `{"data_source":"` + ds + `","solution_str":"<think>add</think><answer>42</answer>","ground_truth":"42","extra_info":{` + ei + `}}`
	}
	// 1·clip(0.0003·(1000 − 800) + 0.5, 0, 1) = 0.56
	code, body := f.do(t, "POST", "/v1/score", item("length/lcpo_max", `"response_tokens":800,"token_budget":1000`))
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.InDelta(t, 0.56, body["score"], 1e-12)
	assert.Equal(t, 1.0, body["within_budget"])
	assert.Equal(t, 800.0, body["response_tokens"])

	bad := []struct{ name, ds, ei, field, msg string }{
		{"a count as text", "length/lcpo_max", `"response_tokens":"800","token_budget":1000`, "extra_info.response_tokens", `want a number, got "800"`},
		{"a fractional count", "length/lcpo_exact", `"response_tokens":800.5,"token_budget":1000`, "extra_info.response_tokens", "whole number"},
		{"a negative count", "length/thinkprune", `"response_tokens":-1`, "extra_info.response_tokens", "negative"},
		{"a zero budget", "length/lcpo_max", `"response_tokens":8,"token_budget":0`, "extra_info.token_budget", "at least 1"},
		{"no count", "length/lcpo_exact", `"token_budget":10`, "extra_info.response_tokens", "missing"},
		{"more thinking than response", "length/elastic", `"response_tokens":8,"think_tokens":9,"answer_tokens":0`, "extra_info.think_tokens", "more than response_tokens"},
		{"anytime budgets out of order", "length/anytime", `"anytime":[{"budget":5,"summary":"a"},{"budget":2,"summary":"b"}]`, "extra_info.anytime[1].budget", "not above"},
	}
	var batch []string
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.do(t, "POST", "/v1/score", item(tc.ds, tc.ei))
			require.Equal(t, http.StatusBadRequest, code, "%v", body)
			e := errorOf(t, body)
			assert.Equal(t, tc.field, e["field"])
			assert.Contains(t, e["message"], tc.msg)
			assert.NotContains(t, body, "score")
		})
		batch = append(batch, item(tc.ds, tc.ei))
	}
	code, body = f.do(t, "POST", "/v1/score/batch", `{"items":[`+strings.Join(batch, ",")+`]}`)
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, float64(len(bad)), body["failed"])
	for i, r := range body["results"].([]any) {
		m := r.(map[string]any)
		assert.Contains(t, m["error"], bad[i].field, "item %d", i)
		assert.Equal(t, 0.0, m["score"], "item %d gets the fallback", i)
	}
}
