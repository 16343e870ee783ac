package verifier

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/seal"
)

// The attacks below are a client of the negotiation environment trying to
// score more than its negotiation earned: by writing the opponent's side of
// the transcript, by editing the row or the opponent mid-episode, by
// charging its messages no time, or by replaying or forging the episode's
// state.

// attackGT is a two-issue scenario in which the candidate's best package
// (high salary, July start) is the HR side's worst; 60 s on the clock.
const attackGT = `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
	`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}},` +
	`{"id":"start","options":["June","July"],"points":{"cand":[0,2],"hr":[3,0]}}]},` +
	`"role":"cand","condition":"time_aware","deadline_s":60,"first_speaker":"cand"}`

// attackPropose is 9 words (3.6 s of speech at 150 wpm).
const attackPropose = `{"text":"I propose a middle salary and a June start.","action":{"action":"propose","offer":{"salary":"mid","start":"June"}}}`

const attackAccept = `{"text":"Fine.","action":{"action":"accept"}}`

// stepJSON posts a step whose members are given as raw JSON text.
func stepJSON(t *testing.T, f *fixture, members map[string]string) (int, map[string]any) {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range members {
		raw[k] = json.RawMessage(v)
	}
	body, err := json.Marshal(raw)
	require.NoError(t, err)
	return f.do(t, "POST", "/v1/envs/negotiation/step", string(body))
}

// newTimer starts a timer for rollout and returns its token.
func newTimer(t *testing.T, f *fixture, rollout string) string {
	t.Helper()
	code, tm := f.do(t, "POST", "/v1/timers", `{"rollout_id":"`+rollout+`"}`)
	require.Equal(t, http.StatusCreated, code, "%v", tm)
	return tm["timer"].(string)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// openingStep plays the first step of an episode of attackGT: the agent
// proposes after 2 s of thinking on its timer; the opponent has beta.
func openingStep(t *testing.T, f *fixture, timer, beta string) map[string]any {
	t.Helper()
	f.clock.Advance(2 * time.Second)
	code, body := stepJSON(t, f, map[string]string{
		"ground_truth": attackGT, "turn_prefix": `"[{seconds} seconds left]"`,
		"opponent": `{"beta":` + beta + `}`, "timer": quoteJSON(timer), "message": attackPropose,
	})
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, false, body["done"], "%v", body)
	require.IsType(t, "", body["state"], "the step returns the episode's state")
	return body
}

func assertRefused(t *testing.T, code int, body map[string]any, wantCode, field string, msgParts ...string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, code, "%v", body)
	e := errorOf(t, body)
	assert.Equal(t, wantCode, e["code"], "%v", e)
	assert.Equal(t, field, e["field"], "%v", e)
	for _, p := range msgParts {
		assert.Contains(t, e["message"], p)
	}
}

// editState rewrites a state's payload as an attacker can (it is signed,
// not encrypted) and re-encodes it with its old tag.
func editState(t *testing.T, state, old, repl string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(state)
	require.NoError(t, err)
	require.Contains(t, string(raw), old, "the payload holds %s", old)
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), old, repl, 1)))
}

// TestNegotiationAttackForgedOpponentProposal: a client that writes the
// opponent's side of the transcript (the agent's best package, proposed by
// the HR side) and accepts it scored 1.0 without negotiating. The route
// takes no transcript: the messages so far come from the signed state.
func TestNegotiationAttackForgedOpponentProposal(t *testing.T) {
	f := newFixture(t, nil)
	forged := `[{"role":"cand","text":"Hello.","action":{"action":"message"}},` +
		`{"role":"hr","text":"Take it all.","action":{"action":"propose","offer":{"salary":"high","start":"July"}}}]`
	code, body := stepJSON(t, f, map[string]string{
		"ground_truth": attackGT, "transcript": forged, "timer": quoteJSON(newTimer(t, f, "forger")), "message": attackAccept,
	})
	assertRefused(t, code, body, "invalid_request", "transcript", "state")

	// Nor beside a valid state.
	tm := newTimer(t, f, "forger-2")
	st := openingStep(t, f, tm, "1")
	code, body = stepJSON(t, f, map[string]string{
		"state": quoteJSON(st["state"].(string)), "transcript": forged, "timer": quoteJSON(tm), "message": attackAccept,
	})
	assertRefused(t, code, body, "invalid_request", "transcript")

	// Accepting what the opponent really offered (its best) is worth
	// nothing to the candidate.
	tm = newTimer(t, f, "honest")
	st = openingStep(t, f, tm, "1")
	code, body = stepJSON(t, f, map[string]string{"state": quoteJSON(st["state"].(string)), "timer": quoteJSON(tm), "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, true, body["done"])
	assert.Equal(t, 0.0, body["score"])
}

// TestNegotiationAttackMixedFields: a later step that sends the row, the
// opponent or a transcript beside its state is refused naming the field,
// so the state cannot be paired with an easier ground truth or a conceding
// opponent.
func TestNegotiationAttackMixedFields(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "mixer")
	state := quoteJSON(openingStep(t, f, tm, "1")["state"].(string))
	easier := strings.Replace(attackGT, `"cand":[0,4,8]`, `"cand":[8,4,0]`, 1)
	for field, value := range map[string]string{
		"ground_truth": easier,
		"opponent":     `{"beta":100}`,
		"turn_prefix":  `""`,
		"transcript":   `[]`,
	} {
		code, body := stepJSON(t, f, map[string]string{"state": state, field: value, "timer": quoteJSON(tm), "message": attackAccept})
		assertRefused(t, code, body, "invalid_request", field, "state")
	}
	// null is no value: the step goes on.
	code, body := stepJSON(t, f, map[string]string{"state": state, "opponent": "null", "timer": quoteJSON(tm), "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, 0.0, body["score"], "the hard-liner's best is worth nothing to the candidate")
}

// TestNegotiationAttackEditedState: a state whose payload was edited (the
// opponent's beta, the agent's payoffs, the bound rollout) under its old
// tag is invalid_state.
func TestNegotiationAttackEditedState(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "editor")
	state := openingStep(t, f, tm, "2")["state"].(string)
	for _, edit := range []struct{ old, repl string }{
		{`"beta":2`, `"beta":9`},
		{`"cand":[0,4,8]`, `"cand":[8,4,0]`},
		{`"salary":"low"`, `"salary":"hig"`},
		{`"rollout_id":"editor"`, `"rollout_id":"editer"`},
	} {
		code, body := stepJSON(t, f, map[string]string{"state": quoteJSON(editState(t, state, edit.old, edit.repl)), "timer": quoteJSON(tm), "message": attackAccept})
		assertRefused(t, code, body, "invalid_state", "state")
	}
	code, body := stepJSON(t, f, map[string]string{"state": quoteJSON(state), "timer": quoteJSON(tm), "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "the unedited state still plays: %v", body)
}

// TestNegotiationAttackThinkTime: the agent's think time is its timer's,
// never the client's: think_s is refused (0 included), a step without a
// timer is refused, and a stopped timer, which would charge nothing, too.
func TestNegotiationAttackThinkTime(t *testing.T) {
	f := newFixture(t, nil)
	zero := `{"text":"I propose a middle salary and a June start.","think_s":0,"action":{"action":"propose","offer":{"salary":"mid","start":"June"}}}`
	code, body := stepJSON(t, f, map[string]string{"ground_truth": attackGT, "timer": quoteJSON(newTimer(t, f, "zero")), "message": zero})
	assertRefused(t, code, body, "invalid_request", "message.think_s", "timer")
	code, body = stepJSON(t, f, map[string]string{"ground_truth": attackGT, "message": attackPropose})
	assertRefused(t, code, body, "invalid_request", "timer")

	tm := newTimer(t, f, "thinker")
	state := quoteJSON(openingStep(t, f, tm, "1")["state"].(string))
	code, body = stepJSON(t, f, map[string]string{"state": state, "timer": quoteJSON(tm), "message": strings.Replace(attackAccept, `"Fine."`, `"Fine.","think_s":0`, 1)})
	assertRefused(t, code, body, "invalid_request", "message.think_s")
	code, body = stepJSON(t, f, map[string]string{"state": state, "message": attackAccept})
	assertRefused(t, code, body, "invalid_request", "timer")

	code, stopped := f.do(t, "DELETE", "/v1/timers/"+tm, "")
	require.Equal(t, http.StatusOK, code, "%v", stopped)
	f.clock.Advance(30 * time.Second)
	code, body = stepJSON(t, f, map[string]string{"state": state, "timer": quoteJSON(stopped["timer"].(string)), "message": attackAccept})
	assertRefused(t, code, body, "timer_stopped", "timer")
}

// TestNegotiationThinkTimeIsChargedFromTheTimer: each message is charged
// the timer's elapsed time less what the agent's earlier messages were
// charged.
func TestNegotiationThinkTimeIsChargedFromTheTimer(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "clocked")
	first := openingStep(t, f, tm, "1") // 2 s
	assert.Equal(t, "[52 seconds left]\n"+`{"text":"Here is what I can offer.","action":{"action":"propose","offer":{"salary":"low","start":"June"}}}`, first["shown"])
	f.clock.Advance(7 * time.Second)
	code, body := stepJSON(t, f, map[string]string{"state": quoteJSON(first["state"].(string)), "timer": quoteJSON(tm),
		"message": `{"text":"Let me think about it.","action":{"action":"message"}}`})
	require.Equal(t, http.StatusOK, code, "%v", body)
	msgs := body["transcript"].([]any)
	require.Len(t, msgs, 4)
	assert.InDelta(t, 2, msgs[0].(map[string]any)["think_s"], 1e-9)
	assert.InDelta(t, 7, msgs[2].(map[string]any)["think_s"], 1e-9)
	// 60 − (3.6 + 2) − 2.4 − (2 + 7) − 2.4 = 40.6: the agent's second message
	// (5 words, 2 s) and the opponent's counter (6 words) took the rest.
	assert.True(t, strings.HasPrefix(body["shown"].(string), "[40 seconds left]\n"), "%v", body["shown"])
}

// TestNegotiationAttackOtherRolloutsTimer: a step timed by another
// rollout's timer (one that has run a shorter time, say) is refused, naming
// both rollouts.
func TestNegotiationAttackOtherRolloutsTimer(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "slow-rollout")
	state := quoteJSON(openingStep(t, f, tm, "1")["state"].(string))
	fresh := newTimer(t, f, "fresh-rollout")
	code, body := stepJSON(t, f, map[string]string{"state": state, "timer": quoteJSON(fresh), "message": attackAccept})
	assertRefused(t, code, body, "wrong_timer", "timer", `"fresh-rollout"`, `"slow-rollout"`)
	// Its rollout id, read on this replica, names the same timer.
	code, body = stepJSON(t, f, map[string]string{"state": state, "timer": `"slow-rollout"`, "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "%v", body)
}

// TestNegotiationAttackTimerOfAnotherClock: the row sets the rate think
// time is charged at; a timer of another speed factor (at 1e-6, two
// seconds of thought would cost two microseconds of the deadline) is
// refused, and a row that asks for another rate gets it.
func TestNegotiationAttackTimerOfAnotherClock(t *testing.T) {
	f := newFixture(t, nil)
	timer := func(spec string) string {
		code, tm := f.do(t, "POST", "/v1/timers", spec)
		require.Equal(t, http.StatusCreated, code, "%v", tm)
		return tm["timer"].(string)
	}
	for _, alpha := range []string{"0.000001", "2"} {
		code, body := stepJSON(t, f, map[string]string{"ground_truth": attackGT, "timer": quoteJSON(timer(`{"speed_factor":` + alpha + `}`)), "message": attackPropose})
		assertRefused(t, code, body, "wrong_timer", "timer", "speed_factor", "timer_speed_factor")
	}

	halved := strings.Replace(attackGT, `"first_speaker"`, `"timer_speed_factor":0.5,"first_speaker"`, 1)
	code, body := stepJSON(t, f, map[string]string{"ground_truth": halved, "timer": quoteJSON(timer(`{}`)), "message": attackPropose})
	assertRefused(t, code, body, "wrong_timer", "timer", "is 1,", "at 0.5")
	tm := timer(`{"speed_factor":0.5}`)
	f.clock.Advance(4 * time.Second)
	code, body = stepJSON(t, f, map[string]string{"ground_truth": halved, "timer": quoteJSON(tm), "message": attackPropose})
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.InDelta(t, 2, body["transcript"].([]any)[0].(map[string]any)["think_s"], 1e-9, "4 s at α = 0.5")

	bad := strings.Replace(attackGT, `"first_speaker"`, `"timer_speed_factor":1e-6,"first_speaker"`, 1)
	code, body = stepJSON(t, f, map[string]string{"ground_truth": bad, "timer": quoteJSON(timer(`{"speed_factor":0.000001}`)), "message": attackPropose})
	assertRefused(t, code, body, "invalid_request", "ground_truth.timer_speed_factor")
}

// TestNegotiationAttackRecreatedTimer: stopping the episode's timer and
// creating a new one under the same rollout id (whose clock starts at 0)
// does not restart the agent's clock: the state names the timer it runs
// on.
func TestNegotiationAttackRecreatedTimer(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "again")
	state := quoteJSON(openingStep(t, f, tm, "1")["state"].(string))
	f.clock.Advance(20 * time.Second)
	code, stopped := f.do(t, "DELETE", "/v1/timers/"+tm, "")
	require.Equal(t, http.StatusOK, code, "%v", stopped)
	f.clock.Advance(time.Millisecond)
	fresh := newTimer(t, f, "again")
	for _, timer := range []string{quoteJSON(fresh), `"again"`} {
		code, body := stepJSON(t, f, map[string]string{"state": state, "timer": timer, "message": attackAccept})
		assertRefused(t, code, body, "wrong_timer", "timer", "created anew")
	}
}

// TestNegotiationAttackReplayAfterTheEnd: the state of a finished episode
// is refused for further steps.
func TestNegotiationAttackReplayAfterTheEnd(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "replayer")
	first := openingStep(t, f, tm, "1")
	code, end := stepJSON(t, f, map[string]string{"state": quoteJSON(first["state"].(string)), "timer": quoteJSON(tm), "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "%v", end)
	require.Equal(t, true, end["done"])
	final, ok := end["state"].(string)
	require.True(t, ok, "the last step returns the finished state: %v", end)
	for _, msg := range []string{attackAccept, attackPropose} {
		code, body := stepJSON(t, f, map[string]string{"state": quoteJSON(final), "timer": quoteJSON(tm), "message": msg})
		assertRefused(t, code, body, "episode_over", "state")
	}
}

// TestNegotiationAttackForeignAndTruncatedStates: a state signed with
// another secret, a truncated one, one longer than any the service writes,
// and text that is no state are all invalid_state.
func TestNegotiationAttackForeignAndTruncatedStates(t *testing.T) {
	f := newFixture(t, nil)
	tm := newTimer(t, f, "forger")
	state := openingStep(t, f, tm, "1")["state"].(string)
	payload, err := f.srv.episodeSealer().Open(state)
	require.NoError(t, err)
	other, err := newEpisodeSealer([]byte("another service's secret, 32 b.."))
	require.NoError(t, err)
	foreign, err := other.Seal(payload)
	require.NoError(t, err)

	bad := []string{foreign, "", "not a state", state[:len(state)-1], state[:len(state)/2], state[:10], state + "A",
		strings.Repeat("A", f.srv.episodeSealer().MaxTokenLen()+1)}
	for _, s := range bad {
		code, body := stepJSON(t, f, map[string]string{"state": quoteJSON(s), "timer": quoteJSON(tm), "message": attackAccept})
		assertRefused(t, code, body, "invalid_state", "state")
	}
}

// TestNegotiationReplicasShareStates: two servers of one secret answer each
// other's steps; the episode goes on where it was.
func TestNegotiationReplicasShareStates(t *testing.T) {
	a, b := newFixture(t, nil), newFixture(t, nil)
	tm := newTimer(t, a, "roaming")
	first := openingStep(t, a, tm, "1") // 2 s into the rollout
	b.clock.Advance(5 * time.Second)
	code, body := stepJSON(t, b, map[string]string{"state": quoteJSON(first["state"].(string)), "timer": quoteJSON(tm), "message": attackAccept})
	require.Equal(t, http.StatusOK, code, "%v", body)
	assert.Equal(t, true, body["done"])
	msgs := body["transcript"].([]any)
	require.Len(t, msgs, 3)
	assert.InDelta(t, 3, msgs[2].(map[string]any)["think_s"], 1e-9, "5 s on B's clock, 2 of them charged on A")
}

func TestNewEpisodeSealer(t *testing.T) {
	secret := []byte("replicas share this secret, 32 b")
	a, err := newEpisodeSealer(secret)
	require.NoError(t, err)
	b, err := newEpisodeSealer(secret)
	require.NoError(t, err)
	tok, err := a.Seal([]byte(`{}`))
	require.NoError(t, err)
	_, err = b.Open(tok)
	assert.NoError(t, err, "one secret, one key")

	r1, err := newEpisodeSealer(nil)
	require.NoError(t, err)
	r2, err := newEpisodeSealer([]byte{})
	require.NoError(t, err)
	for _, r := range []*seal.Sealer{r1, r2} {
		_, err = r.Open(tok)
		assert.ErrorIs(t, err, seal.ErrInvalid, "no secret: a random one")
	}
	_, err = newEpisodeSealer([]byte("short"))
	assert.EqualError(t, err, "verifier: episode secret: seal: the secret must be at least 16 bytes, not 5")
}

// TestNegotiationEpisodeSecretOption: servers given one EpisodeSecret
// answer each other's steps; a server of another secret, or of none,
// refuses their states; a short secret is refused by New.
func TestNegotiationEpisodeSecretOption(t *testing.T) {
	withSecret := func(secret string) func(*Options) {
		return func(o *Options) { o.EpisodeSecret = []byte(secret) }
	}
	a := newFixture(t, withSecret("replicas share this secret, 32 b"))
	b := newFixture(t, withSecret("replicas share this secret, 32 b"))
	tm := newTimer(t, a, "shared")
	state := quoteJSON(openingStep(t, a, tm, "1")["state"].(string))
	code, body := stepJSON(t, b, map[string]string{"state": state, "timer": quoteJSON(tm), "message": attackPropose})
	require.Equal(t, http.StatusOK, code, "%v", body)
	for _, other := range []*fixture{newFixture(t, withSecret("another secret, thirty-two bytes.")), newFixture(t, nil)} {
		code, body = stepJSON(t, other, map[string]string{"state": state, "timer": quoteJSON(tm), "message": attackPropose})
		assertRefused(t, code, body, "invalid_state", "state")
	}
	_, err := New(Options{Scorer: a.srv.opts.Scorer, Timers: a.store, EpisodeSecret: []byte("short")})
	assert.EqualError(t, err, "verifier: episode secret: seal: the secret must be at least 16 bytes, not 5")
}
