package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
)

// publicRow is a row in the shape the public-benchmark importers write:
// the ground truth a JSON string, extra_info with benchmark, split,
// subset, id, category, licence, training_allowed and index.
func publicRow(ds, id, subset, category, question string, gt any) map[string]any {
	b, _ := json.Marshal(gt)
	return map[string]any{
		"data_source":  ds,
		"prompt":       []any{map[string]any{"role": "user", "content": question}},
		"reward_model": map[string]any{"style": "rule", "ground_truth": string(b)},
		"extra_info": map[string]any{"benchmark": ds, "split": "test", "subset": subset, "id": id, "category": category,
			"licence": "BSD-3-Clause", "training_allowed": true, "index": 0},
	}
}

// TestPublicBenchmarkRows: rows of the four public-benchmark data sources
// run once each and report the reward's metrics, with intervals, for the
// source and for each subset and category; TempReason's report says how
// its figures relate to the SQuAD script's.
func TestPublicBenchmarkRows(t *testing.T) {
	replies := map[string]string{}
	var rows []any
	add := func(ds, subset, category, reply string, gt any) {
		q := fmt.Sprintf("question %d", len(rows))
		replies[q] = reply
		rows = append(rows, publicRow(ds, fmt.Sprintf("%s-%d", ds, len(rows)), subset, category, q, gt))
	}
	for i := range 4 {
		// easy: right, hard: half right (F1 2/3 for the partial answer)
		add("timeqa", "easy", "P39", "Answer: George Peter", map[string]any{"answers": []string{"George Peter"}})
		reply := "Answer: George"
		if i%2 == 0 {
			reply = "Answer: the George Peter."
		}
		add("timeqa", "hard", "P39", reply, map[string]any{"answers": []string{"George Peter", ""}})
	}
	add("tempreason", "l1", "", "Answer: Oct, 1874", map[string]any{"answers": []string{"Oct, 1874"}})
	add("tempreason", "l1", "", "no answer line", map[string]any{"answers": []string{"Oct, 1874"}})
	opts := map[string]string{"A": "12 months back", "B": "in the dead of night", "C": "sooner or later"}
	add("tram", "ambiguity_resolution", "Interpretation", "Answer: (B)", map[string]any{"letter": "B", "options": opts})
	add("tram", "ambiguity_resolution", "Interpretation", "Answer: C", map[string]any{"letter": "B", "options": opts})
	add("tram", "arithmetic", "Hour Adjustment (24h)", "Answer: 22:17", map[string]any{"answers": []string{"22:17"}})
	add("test_of_time", "semantic", "timeline", `{"answer": "E59, E57"}`, map[string]any{"kind": "semantic", "label": map[string]any{"answer": "E59,E57"}})
	add("test_of_time", "arithmetic", "duration", `{"H": 2, "M": 13, "S": 30}`, map[string]any{"kind": "arithmetic", "label": map[string]any{"H": 2.0, "M": 13.0, "S": 31.0}})

	srv := newScript(t, func(req wireReq) answer { return answer{text: replies[lastUser(req)]} })
	parsed, err := ReadRows(writeRows(t, rows...))
	require.NoError(t, err)
	require.NoError(t, CheckRows(parsed, rewards.DefaultConfig()))
	assert.Equal(t, "timeqa-0", parsed[0].ID)
	assert.Equal(t, map[string]string{"subset": "easy", "category": "P39"}, parsed[0].Labels)
	res, err := Run(context.Background(), parsed, Options{Client: client(t, srv.URL, ""), Rewards: rewards.DefaultConfig(), Workers: 2})
	require.NoError(t, err)
	for _, r := range res {
		require.Empty(t, r.Error)
	}
	rep := Summarize(res, ReportOptions{Seed: 1, Resamples: 200})

	tq := rep.DataSources["timeqa"]
	require.NotNil(t, tq)
	assert.Equal(t, 8, tq.N)
	assert.InDelta(t, (4+2+2*2.0/3)/8, tq.Metrics["f1"].Mean, 1e-12)
	assert.InDelta(t, 6.0/8, tq.Metrics["exact_match"].Mean, 1e-12)
	assert.Equal(t, tq.Metrics["f1"].Mean, tq.Metrics["score"].Mean, "the score is the F1")
	ci := tq.Metrics["f1"].CI95
	assert.Less(t, ci[0], tq.Metrics["f1"].Mean)
	assert.LessOrEqual(t, tq.Metrics["f1"].Mean, ci[1])
	require.Contains(t, tq.Groups, "subset=hard")
	assert.InDelta(t, (2+2*2.0/3)/4, tq.Groups["subset=hard"].Metrics["f1"].Mean, 1e-12)
	assert.InDelta(t, 0.5, tq.Groups["subset=hard"].Metrics["exact_match"].Mean, 1e-12)
	assert.InDelta(t, 1, tq.Groups["subset=easy"].Metrics["f1"].Mean, 1e-12)
	assert.Contains(t, tq.Groups, "category=P39")

	tr := rep.DataSources["tempreason"]
	require.NotNil(t, tr)
	assert.InDelta(t, 0.5, tr.Metrics["f1"].Mean, 1e-12)
	assert.InDelta(t, 0.5, tr.Metrics["answered"].Mean, 1e-12)
	assert.Contains(t, fmt.Sprint(rep.Notes), "SQuAD v1.1 script")

	tram := rep.DataSources["tram"]
	require.NotNil(t, tram)
	assert.InDelta(t, 2.0/3, tram.Metrics["correct"].Mean, 1e-12)
	assert.InDelta(t, 0.5, tram.Groups["subset=ambiguity_resolution"].Metrics["correct"].Mean, 1e-12)
	assert.InDelta(t, 1, tram.Groups["subset=arithmetic"].Metrics["correct"].Mean, 1e-12)

	tot := rep.DataSources["test_of_time"]
	require.NotNil(t, tot)
	assert.InDelta(t, 0.5, tot.Metrics["correct"].Mean, 1e-12)
	assert.InDelta(t, 1, tot.Groups["category=timeline"].Metrics["correct"].Mean, 1e-12)
	assert.InDelta(t, 0, tot.Groups["subset=arithmetic"].Metrics["correct"].Mean, 1e-12)
	assert.InDelta(t, 1, tot.Metrics["parsed"].Mean, 1e-12)
}
