package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// groupBatch is a /v1/score/batch body of one group of four completions of
// one prompt (ground truth 42), right or wrong, of 100, 200, 300 and 500
// tokens, scored by source; mod edits the items' JSON before they are
// joined.
func groupBatch(source string, mod func(i int, item string) string) string {
	answers := []string{"42", "41", "42", "41"}
	lengths := []int{100, 200, 300, 500}
	items := make([]string, len(answers))
	for i := range answers {
		items[i] = fmt.Sprintf(`{"data_source":%q,"solution_str":"<think>Add.</think><answer>%s</answer>","ground_truth":"42",`+
			`"extra_info":{"response_tokens":%d},"group":"prompt-7/step-3","group_size":4}`, source, answers[i], lengths[i])
		if mod != nil {
			items[i] = mod(i, items[i])
		}
	}
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

func groupScores(t *testing.T, url, body string) []float64 {
	t.Helper()
	code, out := postJSON(t, url+"/v1/score/batch", body)
	require.Equal(t, http.StatusOK, code, "%v", out)
	results := out["results"].([]any)
	scores := make([]float64, len(results))
	for i, r := range results {
		m := r.(map[string]any)
		require.NotContains(t, m, "error")
		scores[i] = m["score"].(float64)
	}
	return scores
}

// TestServeGroupRewards: the real service scores a whole group with the
// group-wise rewards, each of their keys read on its own (worked by hand:
// Kimi's λ = 0.5, 0.25, 0, −0.5 over lengths 100 to 500; ShorterBetter's
// SOL 100), reports the group's solve rate in /metrics, and refuses with
// a 400 naming the field what is not one whole group of one prompt.
func TestServeGroupRewards(t *testing.T) {
	for _, tc := range []struct {
		env    string
		source string
		want   []float64
	}{
		{"", "length/kimi", []float64{1.5, 0, 1, -0.5}},
		{"TIMEAWARE_REWARDS_LENGTH_KIMI_WEIGHT=2", "length/kimi", []float64{2, 0, 1, -1}},
		{"", "length/shorterbetter", []float64{2, -0.1, 1.8, -0.4}},
		{"TIMEAWARE_REWARDS_LENGTH_SHORTERBETTER_ALPHA=3", "length/shorterbetter", []float64{3, -0.1, 2.8, -0.4}},
		{"TIMEAWARE_REWARDS_LENGTH_SHORTERBETTER_BETA=0.002", "length/shorterbetter", []float64{2, -0.2, 1.6, -0.8}},
		// solve rate 0.5 of 4: 0.5·β/N per token, 1e-7·0.5·n by default
		{"", "length/alp", []float64{1 - 5e-6, -1e-5, 1 - 1.5e-5, -2.5e-5}},
		{"TIMEAWARE_REWARDS_LENGTH_ALP_BETA=0.001", "length/alp", []float64{0.95, -0.1, 0.85, -0.25}},
		{"TIMEAWARE_REWARDS_LENGTH_ALP_NORM=0.0001", "length/alp", []float64{0.95, -0.1, 0.85, -0.25}},
	} {
		t.Run(tc.source+" "+tc.env, func(t *testing.T) {
			var env []string
			if tc.env != "" {
				env = append(env, tc.env)
			}
			srv := startServer(t, append(env, "TIMEAWARE_SERVE_ALLOW_NO_TOKEN=true")...)
			got := groupScores(t, srv.url, groupBatch(tc.source, nil))
			require.Len(t, got, 4)
			for i := range got {
				assert.InDelta(t, tc.want[i], got[i], 1e-12, "member %d", i)
			}
			if tc.env == "" {
				series := fmt.Sprintf(`timeaware_group_solve_rate_bucket{data_source=%q,le="0.5"}`, tc.source)
				assert.Equal(t, 1.0, srv.metric(http.DefaultClient, series), "one group of solve rate 0.5")
			}
		})
	}

	srv := startServer(t, "TIMEAWARE_SERVE_ALLOW_NO_TOKEN=true")
	for _, tc := range []struct {
		name  string
		body  string
		field string
	}{
		{"mixed prompts", groupBatch("length/kimi", func(i int, it string) string {
			if i == 2 {
				return strings.Replace(it, `"ground_truth":"42"`, `"ground_truth":"43"`, 1)
			}
			return it
		}), "ground_truth"},
		{"a member missing", strings.Replace(groupBatch("length/kimi", nil), `"group_size":4`, `"group_size":5`, 4), "group_size"},
		{"a member twice", strings.Replace(groupBatch("length/kimi", nil), `"group_size":4`, `"group_size":3`, 4), "group_size"},
		{"no group key", strings.Replace(groupBatch("length/shorterbetter", nil), `"group":"prompt-7/step-3",`, ``, 1), "items[0].group"},
		{"no members counted", strings.Replace(groupBatch("length/kimi", nil), `"group_size":4`, `"group_size":0`, 4), "group_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := postJSON(t, srv.url+"/v1/score/batch", tc.body)
			assert.Equal(t, http.StatusBadRequest, code, "%v", out)
			e := out["error"].(map[string]any)
			assert.Equal(t, "invalid_group", e["code"])
			assert.Equal(t, tc.field, e["field"])
			assert.NotContains(t, out, "results", "never a reward")
		})
	}
}
