package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// TestAttackHugeObjectsCostLittle: the duplicate check keeps the names of
// the objects it reads. A 30 MB body that is one object of millions of
// members is refused at the member bound (65536) in a moment, and one of
// many objects at the bound is checked in a few seconds at most, both
// within the memory bound.
func TestAttackHugeObjectsCostLittle(t *testing.T) {
	p := attackServer(t)
	members := func(b []byte, n int) []byte {
		b = append(b, '{')
		for i := range n {
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(i), 36)
			b = append(b, `":0,`...)
		}
		b[len(b)-1] = '}'
		return b
	}
	const size = 30 << 20
	one := append([]byte(`{"data_source":"timely/general","other":`), members(nil, 3_200_000)...)
	one = append(one, '}')
	many := []byte(`{"items":[],"other":[`)
	for len(many) < size-(1<<20) {
		many = append(members(many, 1<<16), ',')
	}
	many = append(many[:len(many)-1], "]}"...)
	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		within     time.Duration
	}{
		{"one object of millions of members", "/v1/score", one, http.StatusRequestEntityTooLarge, time.Second},
		{"objects of 65536 members each", "/v1/score/batch", many, http.StatusOK, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Less(t, len(tc.body), 32<<20, "within the body limit")
			start := time.Now()
			resp, err := http.Post(p.url+tc.path, "application/json", bytes.NewReader(tc.body))
			require.NoError(t, err)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			t.Logf("%d-byte body answered %d in %v: %.200s", len(tc.body), resp.StatusCode, took, bytes.TrimSpace(raw))
			assert.Equal(t, tc.status, resp.StatusCode)
			if tc.status != http.StatusOK {
				assert.Contains(t, string(raw), `"too_many_members"`)
			}
			assert.Less(t, took, tc.within)
			assert.Less(t, p.rss(t), int64(attackMemoryBound))
		})
	}
}
