package rewards_test

import (
	"context"
	"encoding/json"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// TestTimelyReadsARunningTimerOnce: a running timer is read once per item,
// so the honesty check and the reward see the same time. The store's clock
// moves 10 s forward at every reading, so a second reading would see a time
// 10 s later than the first.
func TestTimelyReadsARunningTimerOnce(t *testing.T) {
	var ticks atomic.Int64
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	store, err := timers.New(timers.Options{
		Secret: []byte("0123456789abcdef0123456789abcdef"),
		Now:    func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * 10 * time.Second) },
	})
	require.NoError(t, err)
	cfg := rewards.DefaultConfig()
	cfg.Timely.DurationTag = "conclusion"
	cfg.Timely.HonestyTolerance = 0.1
	scorer, err := rewards.NewScorer(cfg, store)
	require.NoError(t, err)

	tests := []struct {
		name, dataSource, solution, groundTruth string
		extra                                   string // extra_info besides the timer
		taskReward                              float64
		formatOK                                bool
	}{
		// Created at tick 1, read at tick 2: 10 s, reported as 10 s.
		{name: "general, honest", dataSource: "timely/general", groundTruth: `"4"`,
			solution: "<conclusion>10 seconds</conclusion><answer>4</answer>", taskReward: 0.5, formatOK: true},
		// The report matches the second reading a double read would take.
		{name: "general, reporting the later time", dataSource: "timely/general", groundTruth: `"4"`,
			solution: "<conclusion>20 seconds</conclusion><answer>4</answer>", taskReward: 0.5, formatOK: false},
		{name: "game", dataSource: "timely/game", extra: `"score": 1, "max_score": 8, `, taskReward: 0.5, formatOK: true},
		{name: "ml", dataSource: "timely/ml", extra: `"accuracy": 0.75, `, taskReward: 0.375, formatOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ticks.Store(0)
			rd, err := store.Create(timers.Spec{TimeLimitS: 40, Seed: 7})
			require.NoError(t, err)
			var it rewards.Item
			require.NoError(t, json.Unmarshal([]byte(`{"data_source": "`+tc.dataSource+`", "solution_str": `+quote(tc.solution)+
				`, "ground_truth": `+orNull(tc.groundTruth)+`, "extra_info": {`+tc.extra+`"timer": "`+rd.Timer+`"}}`), &it))
			res := scorer.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.EqualValues(t, 2, ticks.Load(), "the clock was read at the creation and once by the reward")
			d := details(t, rewards.TimelyGeneral.Keys, res.Details)
			assert.Equal(t, 10.0, d["elapsed_s"])
			assert.Equal(t, 40.0, d["time_limit_s"])
			assert.Equal(t, 0.25, d["time_ratio"])
			if !tc.formatOK {
				assert.Equal(t, 0.0, d["format_ok"])
				assert.Equal(t, 0.0, res.Score)
				return
			}
			assert.Equal(t, 1.0, d["format_ok"])
			// eq. 9 at t = 10 s of 40: r_f + r + λ·sin(π/8).
			assert.InDelta(t, 0.1+tc.taskReward+0.4*math.Sin(math.Pi/8), res.Score, 1e-12)
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// details maps a result's detail values to their keys.
func details(t *testing.T, keys []string, values []float64) map[string]float64 {
	t.Helper()
	require.Len(t, values, len(keys))
	m := make(map[string]float64, len(keys))
	for i, k := range keys {
		m[k] = values[i]
	}
	return m
}
