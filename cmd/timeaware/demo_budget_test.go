package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/synth/budget"
)

func TestDemoBudget(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, demoBudget(context.Background(), &out, dir))
	path := filepath.Join(dir, "budget.parquet")
	for _, want := range []string{
		"a time-budgeted prompt set for VeRL from 6 built-in tasks (synth budget, seed 19)",
		"6 rows written to " + path + ": 5 with a time limit (multipliers 0.75 1, 1 2, 2 1, 3 1), 1 without; data source timely/general",
		"row demo-train-trip: budget 0.75 × baseline 9.20 s (task)",
		`Your time budget for this task is 6.90 seconds.`,
		`reward_model.ground_truth "155", extra_info.time_limit_s 6.90`,
		"create_kwargs {speed_factor: 0.5, jitter: 0.05, time_limit_s: 6.9, ttl_s: 3600}",
		"row demo-pens: no time limit",
		"There is no time limit for this task.",
		"extra_info.time_limit_s null (no limit)",
	} {
		assert.Contains(t, out.String(), want)
	}
	assert.Equal(t, []string{"budget.parquet"}, dirNames(t, dir))

	rows := readDataset(t, path, budget.Schema)
	require.Len(t, rows, 6)
	for _, row := range rows {
		ei := row["extra_info"].(map[string]any)
		user := get(row["prompt"].([]any)[1], "content").(string)
		if lim, ok := ei["time_limit_s"].(float64); ok {
			m := budgetSentence.FindStringSubmatch(user)
			require.NotNil(t, m, user)
			assert.Equal(t, strconv.FormatFloat(lim, 'f', 2, 64), m[1])
		}
	}

	other := t.TempDir()
	var again bytes.Buffer
	require.NoError(t, demoBudget(context.Background(), &again, other))
	assert.Equal(t, sha256File(t, path), sha256File(t, filepath.Join(other, "budget.parquet")), "the demo's prompt set is the same on every run")
}
