package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackDuplicateTimerIsRefusedByBothScoreRoutes: an item that carries
// two timers, a late one and timer settings that name none, used to score
// 0.6 on one route and 0 on the other, as each decoder kept another of the
// two. Both routes now refuse it, naming the member and both bytes.
func TestAttackDuplicateTimerIsRefusedByBothScoreRoutes(t *testing.T) {
	p := attackServer(t)
	code, created := doJSON(t, "POST", p.url+"/v1/timers", `{"time_limit_s":0.001}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)
	time.Sleep(20 * time.Millisecond) // the timer is past its limit

	item := func(extraInfo string) string {
		return `{"data_source":"timely/general","solution_str":"<answer>21</answer>","ground_truth":"21","extra_info":{` + extraInfo + `}}`
	}
	// What is at stake: each timer alone scores differently.
	for extraInfo, want := range map[string]float64{
		`"timer":"` + tok + `"`:            0,   // late: nothing
		`"timer":{"speed_factor":1}`:       0.6, // no timer: r_f + r
		`"timer":{"speed_factor":1,"x":1}`: 0.6,
	} {
		code, res := doJSON(t, "POST", p.url+"/v1/score", item(extraInfo))
		require.Equal(t, http.StatusOK, code, "%v", res)
		assert.InDelta(t, want, res["score"], 1e-12, extraInfo)
	}

	for _, second := range []string{`"timer"`, `"Timer"`, `"tim\u0065r"`} {
		t.Run(second, func(t *testing.T) {
			body := item(`"timer":"` + tok + `",` + second + `:{"speed_factor":1}`)
			first, dup := strings.Index(body, `"timer"`)+1, strings.LastIndex(body, second)+1
			key := strings.Trim(strings.Replace(second, `\u0065`, "e", 1), `"`)
			detail := fmt.Sprintf("duplicate key %q at byte %%d (first at byte %%d)", key)
			if key != "timer" {
				detail = fmt.Sprintf("duplicate key %q at byte %%d (the same as \"timer\" at byte %%d, ignoring case)", key)
			}

			code, one := doJSON(t, "POST", p.url+"/v1/score", body)
			require.Equal(t, http.StatusBadRequest, code, "%v", one)
			assert.Equal(t, map[string]any{"code": "duplicate_key", "field": "extra_info." + key,
				"message": "extra_info." + key + ": " + fmt.Sprintf(detail, dup, first) + "; send each key once"}, one["error"])

			shift := len(`{"items":[`)
			code, batch := doJSON(t, "POST", p.url+"/v1/score/batch", `{"items":[`+body+`]}`)
			require.Equal(t, http.StatusBadRequest, code, "%v", batch)
			assert.Equal(t, map[string]any{"code": "duplicate_key", "field": "items[0].extra_info." + key,
				"message": "items[0].extra_info." + key + ": " + fmt.Sprintf(detail, dup+shift, first+shift) + "; send each key once"}, batch["error"])
		})
	}
}
