package verifier

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRLHFTimeLimitIsTheOneApplied: OpenRLHF's single-turn path
// measures no time, so a Timely row whose label carries time_limit_s but no
// elapsed_s (nor a timer) is scored with no limit, r_f + r at most, and its
// extra_logs say so: time_limit_s is the limit the reward applied, 0, not
// the label's, with elapsed_s, time_ratio and utilization 0 and on_time 1.
// A row with a measured time reports its label's limit, or its timer's.
func TestOpenRLHFTimeLimitIsTheOneApplied(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"o-1","speed_factor":1,"jitter":0,"time_limit_s":40}`)
	require.Equal(t, 201, code, "%v", created)
	f.clock.Advance(10 * time.Second)

	// r_f + r + λ·sin(π/2·t/T) with the defaults r_f 0.1, r 0.5, λ 0.4.
	timely := func(t, limit float64) float64 { return 0.1 + 0.5 + 0.4*math.Sin(math.Pi/2*t/limit) }
	rows := []struct {
		name, label string
		reward      float64
		logs        map[string]float64
	}{
		{"limit without a time: none applied", `{"data_source": "timely/general", "ground_truth": "21", "extra_info": {"time_limit_s": 6.9}}`,
			0.6, map[string]float64{"time_limit_s": 0, "elapsed_s": 0, "time_ratio": 0, "utilization": 0, "on_time": 1}},
		{"the budget row's timer settings are no timer", `{"ground_truth": "21", "extra_info": {"time_limit_s": 6.9, "timer": {"speed_factor": 1, "jitter": 0.05}}}`,
			0.6, map[string]float64{"time_limit_s": 0, "elapsed_s": 0, "on_time": 1}},
		{"limit and elapsed_s", `{"ground_truth": "21", "extra_info": {"time_limit_s": 20, "elapsed_s": 5}}`,
			timely(5, 20), map[string]float64{"time_limit_s": 20, "elapsed_s": 5, "time_ratio": 0.25, "on_time": 1}},
		{"elapsed_s past the limit", `{"ground_truth": "21", "extra_info": {"time_limit_s": 4, "elapsed_s": 5}}`,
			0, map[string]float64{"time_limit_s": 4, "elapsed_s": 5, "on_time": 0}},
		{"elapsed_s without a limit", `{"ground_truth": "21", "extra_info": {"elapsed_s": 5}}`,
			0.6, map[string]float64{"time_limit_s": 0, "elapsed_s": 5, "on_time": 1}},
		{"the timer's limit", fmt.Sprintf(`{"ground_truth": "21", "extra_info": {"timer": %q}}`, created["timer"]),
			timely(10, 40), map[string]float64{"time_limit_s": 40, "elapsed_s": 10, "time_ratio": 0.25}},
	}
	labels := make([]string, len(rows))
	queries := make([]string, len(rows))
	for i, r := range rows {
		labels[i] = strconv.Quote(r.label) // a text column, as --openrlhf-label writes it
		queries[i] = strconv.Quote("What is 3 * 7?<answer>21</answer><|im_end|>")
	}
	body := `{"query": [` + strings.Join(queries, ",") + `], "prompts": [` +
		strings.TrimSuffix(strings.Repeat(`"What is 3 * 7?",`, len(rows)), ",") + `], "labels": [` + strings.Join(labels, ",") + `]}`
	code, out := f.do(t, "POST", "/v1/openrlhf", body)
	require.Equal(t, 200, code, "%v", out)
	logs := out["extra_logs"].(map[string]any)
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			assert.InDelta(t, r.reward, out["rewards"].([]any)[i], 1e-12)
			assert.Equal(t, 0.0, logs["failed"].([]any)[i])
			for k, v := range r.logs {
				require.Contains(t, logs, k)
				assert.InDelta(t, v, logs[k].([]any)[i], 1e-12, k)
			}
		})
	}
}
