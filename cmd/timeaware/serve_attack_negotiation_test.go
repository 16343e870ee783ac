package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// negAttackGT: the candidate's best package (high salary, July start) is
// the HR side's worst; 60 s on the clock.
const negAttackGT = `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
	`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}},` +
	`{"id":"start","options":["June","July"],"points":{"cand":[0,2],"hr":[3,0]}}]},` +
	`"role":"cand","condition":"time_aware","deadline_s":60,"first_speaker":"cand"}`

// negStep posts a negotiation step built from raw JSON members.
func negStep(t *testing.T, url string, members map[string]string) (int, map[string]any) {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range members {
		raw[k] = json.RawMessage(v)
	}
	body, err := json.Marshal(raw)
	require.NoError(t, err)
	return doJSON(t, "POST", url+"/v1/envs/negotiation/step", string(body))
}

func negQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func negErr(t *testing.T, code int, body map[string]any) (string, string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, code, "%v", body)
	e, ok := body["error"].(map[string]any)
	require.True(t, ok, "%v", body)
	return e["code"].(string), e["field"].(string)
}

// TestAttackNegotiationThroughTheBinary: against `timeaware serve`, a
// client that writes the opponent's proposal into the transcript and
// accepts it scored 1.0; one that charged its messages no time kept the
// whole deadline; one that edited the state or brought another
// replica's state played on. Each is refused now, and an honest episode
// still plays to its end.
func TestAttackNegotiationThroughTheBinary(t *testing.T) {
	p := attackServer(t)
	accept := `{"text":"Fine.","action":{"action":"accept"}}`
	propose := `{"text":"I propose a middle salary and a June start.","action":{"action":"propose","offer":{"salary":"mid","start":"June"}}}`
	newTimer := func(rollout string) string {
		code, tm := doJSON(t, "POST", p.url+"/v1/timers", `{"rollout_id":"`+rollout+`"}`)
		require.Equal(t, http.StatusCreated, code, "%v", tm)
		return negQuote(tm["timer"].(string))
	}
	tm := newTimer("binary-attack")

	// The forged opponent proposal, accepted.
	forged := `[{"role":"cand","text":"Hello.","action":{"action":"message"}},` +
		`{"role":"hr","text":"Take it all.","action":{"action":"propose","offer":{"salary":"high","start":"July"}}}]`
	code, body := negStep(t, p.url, map[string]string{"ground_truth": negAttackGT, "transcript": forged, "timer": tm, "message": accept})
	c, field := negErr(t, code, body)
	assert.Equal(t, "invalid_request", c)
	assert.Equal(t, "transcript", field)

	// Its own think time, zero.
	code, body = negStep(t, p.url, map[string]string{"ground_truth": negAttackGT, "timer": tm,
		"message": strings.Replace(propose, `"text"`, `"think_s":0,"text"`, 1)})
	_, field = negErr(t, code, body)
	assert.Equal(t, "message.think_s", field)
	code, body = negStep(t, p.url, map[string]string{"ground_truth": negAttackGT, "message": propose})
	_, field = negErr(t, code, body)
	assert.Equal(t, "timer", field)

	// An honest first step: the state comes back.
	code, first := negStep(t, p.url, map[string]string{"ground_truth": negAttackGT, "opponent": `{"beta":1}`, "timer": tm, "message": propose})
	require.Equal(t, http.StatusOK, code, "%v", first)
	state, ok := first["state"].(string)
	require.True(t, ok, "%v", first)

	// The state edited for a conceding opponent.
	raw, err := base64.RawURLEncoding.DecodeString(state)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"beta":1`)
	edited := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"beta":1`, `"beta":9`, 1)))
	code, body = negStep(t, p.url, map[string]string{"state": negQuote(edited), "timer": tm, "message": accept})
	c, field = negErr(t, code, body)
	assert.Equal(t, "invalid_state", c)
	assert.Equal(t, "state", field)

	// The state beside an easier ground truth.
	code, body = negStep(t, p.url, map[string]string{"state": negQuote(state), "ground_truth": strings.Replace(negAttackGT, `"cand":[0,4,8]`, `"cand":[8,4,0]`, 1), "timer": tm, "message": accept})
	_, field = negErr(t, code, body)
	assert.Equal(t, "ground_truth", field)

	// Another rollout's timer.
	code, body = negStep(t, p.url, map[string]string{"state": negQuote(state), "timer": newTimer("binary-other"), "message": accept})
	c, field = negErr(t, code, body)
	assert.Equal(t, "wrong_timer", c)
	assert.Equal(t, "timer", field)

	// A server with another secret takes no state of this one.
	other := attackServer(t, "TIMEAWARE_TIMERS_SECRET=a-different-secret-9876543210")
	code, body = negStep(t, other.url, map[string]string{"state": negQuote(state), "timer": tm, "message": accept})
	c, field = negErr(t, code, body)
	assert.Equal(t, "invalid_state", c)
	assert.Equal(t, "state", field)

	// The honest episode ends: accepting the hard-liner's counter (its best) is worth 0.
	code, end := negStep(t, p.url, map[string]string{"state": negQuote(state), "timer": tm, "message": accept})
	require.Equal(t, http.StatusOK, code, "%v", end)
	assert.Equal(t, true, end["done"])
	assert.Equal(t, 0.0, end["score"])
	msgs := end["transcript"].([]any)
	require.Len(t, msgs, 3)
	assert.Greater(t, msgs[0].(map[string]any)["think_s"], 0.0, "the timer's time is charged")

	// Its finished state takes no more steps.
	code, body = negStep(t, p.url, map[string]string{"state": negQuote(end["state"].(string)), "timer": tm, "message": accept})
	c, field = negErr(t, code, body)
	assert.Equal(t, "episode_over", c)
	assert.Equal(t, "state", field)
}

// TestNegotiationStatesAcrossReplicas: two processes of one timers.secret
// answer each other's steps.
func TestNegotiationStatesAcrossReplicas(t *testing.T) {
	a, b := attackServer(t), attackServer(t)
	code, tm := doJSON(t, "POST", a.url+"/v1/timers", `{"rollout_id":"replicated"}`)
	require.Equal(t, http.StatusCreated, code, "%v", tm)
	timer := negQuote(tm["timer"].(string))
	code, first := negStep(t, a.url, map[string]string{"ground_truth": negAttackGT, "timer": timer,
		"message": `{"text":"Hello.","action":{"action":"message"}}`})
	require.Equal(t, http.StatusOK, code, "%v", first)
	code, end := negStep(t, b.url, map[string]string{"state": negQuote(first["state"].(string)), "timer": timer,
		"message": `{"text":"Fine.","action":{"action":"accept"}}`})
	require.Equal(t, http.StatusOK, code, "%v", end)
	assert.Equal(t, true, end["done"])
}
