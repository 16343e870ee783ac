package timers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var epoch = time.Unix(0, 0)

// TestSpanOpenedAtUnixEpoch: a measured span that starts at Unix time 0 is
// an open span like any other: it counts as tool time, a second start is
// refused and its end closes it.
func TestSpanOpenedAtUnixEpoch(t *testing.T) {
	for _, created := range []time.Duration{0, -2 * time.Second} {
		t.Run(created.String(), func(t *testing.T) {
			clk := &fakeClock{t: epoch.Add(created)}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{RolloutID: "r", SpeedFactor: 2})
			require.NoError(t, err)
			clk.Advance(-created) // now exactly Unix time 0
			open, err := s.AddSpan(r.Timer, Span{Action: "start"})
			require.NoError(t, err)
			assert.Equal(t, 0.0, open.ToolS)

			clk.Advance(3 * time.Second)
			got, err := s.Read(open.Timer)
			require.NoError(t, err)
			gen := (-created).Seconds()
			assert.InDelta(t, 0.0, got.ToolS, 1e-9, "an open span is no tool time yet")
			assert.InDelta(t, 2*gen+2*3, got.ElapsedS, 1e-9, "an open span counts at α = 2")

			_, err = s.AddSpan(open.Timer, Span{Action: "start"})
			assert.ErrorIs(t, err, ErrBadSpec)
			assert.ErrorContains(t, err, "a span is already open")

			clk.Advance(time.Second)
			closed, err := s.AddSpan(open.Timer, Span{Action: "end"})
			require.NoError(t, err)
			assert.InDelta(t, 4.0, closed.ToolS, 1e-9)
			clk.Advance(5 * time.Second)
			got, err = s.Read(closed.Timer)
			require.NoError(t, err)
			assert.InDelta(t, 4.0, got.ToolS, 1e-9, "the span stays closed")
			assert.InDelta(t, 2*(gen+5)+4, got.ElapsedS, 1e-9)

			// A span open at the stop stays out of the tool time.
			open, err = s.AddSpan(closed.Timer, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(2 * time.Second)
			stopped, err := s.Stop(open.Timer)
			require.NoError(t, err)
			assert.InDelta(t, 4.0, stopped.ToolS, 1e-9)
			assert.InDelta(t, 2*(gen+5)+4+2*2, stopped.ElapsedS, 1e-9)
		})
	}
}

// TestTimerStoppedAtUnixEpoch: a timer stopped at Unix time 0 is stopped:
// its reading no longer moves, it takes no span, stopping it again changes
// nothing, and its rollout id is free for a new timer.
func TestTimerStoppedAtUnixEpoch(t *testing.T) {
	clk := &fakeClock{t: epoch}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{RolloutID: "r", SpeedFactor: 2})
	require.NoError(t, err)
	open, err := s.AddSpan(r.Timer, Span{Action: "start"})
	require.NoError(t, err)
	stopped, err := s.Stop(open.Timer)
	require.NoError(t, err)
	assert.True(t, stopped.Stopped)
	assert.Equal(t, 0.0, stopped.ElapsedS)

	clk.Advance(10 * time.Second)
	for _, id := range []string{stopped.Timer, "r"} {
		got, err := s.Read(id)
		require.NoError(t, err)
		assert.True(t, got.Stopped, id)
		assert.Equal(t, 0.0, got.ElapsedS, id)
		assert.Equal(t, 0.0, got.ToolS, id)
	}
	_, err = s.AddSpan(stopped.Timer, Span{Seconds: 1})
	assert.ErrorContains(t, err, "the timer is stopped")
	again, err := s.Stop(stopped.Timer)
	require.NoError(t, err)
	assert.Equal(t, stopped.Timer, again.Timer)
	_, err = s.Create(Spec{RolloutID: "r"})
	assert.NoError(t, err, "a stopped timer's rollout id can be reused")
}

// The tokens below were issued before span and stop flags existed, by a
// store with goldenSecret at t0 for rollout "golden" (speed factor 2, limit
// 60 s, seed 9): created at t0, a span started at t0+3 s and ended at
// t0+7 s, stopped at t0+8 s.
var (
	goldenSecret  = []byte("0123456789abcdef0123456789abcdef")
	goldenCreated = "AQAAtJN24voYAKBsxLzl-hgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAkAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAE5AZ29sZGVu.K_pIlaaQpQs6nAYPfSaY4g"
	goldenOpen    = "AQAAtJN24voYAKBsxLzl-hgAAAAAAAAAAAAAAAAAAAAAAF6ERnfi-hgAAAAAAAAAAAkAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAE5AZ29sZGVu.cRT4Zq5G_Icdui6zH_n9Ew"
	goldenClosed  = "AQAAtJN24voYAKBsxLzl-hgAKGvuAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAkAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAE5AZ29sZGVu.csIkT8DxAgC9WzafCicnDQ"
	goldenStopped = "AQAAtJN24voYAKBsxLzl-hgAKGvuAAAAAAAAAAAAAAAAAAAAAAAAAAAAUIpweOL6GAkAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAE5AZ29sZGVu.TcubTz0wcYlyQ7FhMIx6OA"
)

// TestTokensIssuedBeforeFlags: tokens issued before the flags (and before
// change counts) read as they did; a new timer's token is still the same
// byte for byte, so earlier replicas read it, and a changed timer's token
// is version 3, which carries its change count.
func TestTokensIssuedBeforeFlags(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, goldenSecret)
	r, err := s.Create(Spec{RolloutID: "golden", SpeedFactor: 2, TimeLimitS: 60, Seed: 9})
	require.NoError(t, err)
	assert.Equal(t, goldenCreated, r.Timer)
	clk.Advance(3 * time.Second)
	r, err = s.AddSpan(r.Timer, Span{Action: "start"})
	require.NoError(t, err)
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(r.Timer, ".")[0])
	require.NoError(t, err)
	assert.Equal(t, byte(3), payload[0], "a changed timer's token is version 3")
	assert.Equal(t, []byte{1, 0, 0, 0}, payload[fixedLenV2:fixedLenV3], "one change")

	// At t0+18 s: the open span has run 15 s, at the larger rate, α = 2
	// (2·3 + 2·15); the closed one took 4 s of 18 (2·14 + 4); the stopped
	// timer stays at 2·4 + 4.
	clk.Advance(15 * time.Second)
	reader := newStore(t, clk, goldenSecret)
	for _, tc := range []struct {
		tok            string
		elapsed, tool  float64
		stopped, spans bool
	}{
		{goldenCreated, 36, 0, false, false},
		{goldenOpen, 36, 0, false, true},
		{goldenClosed, 32, 4, false, false},
		{goldenStopped, 12, 4, true, false},
	} {
		got, err := reader.Read(tc.tok)
		require.NoError(t, err)
		assert.InDelta(t, tc.elapsed, got.ElapsedS, 1e-9)
		assert.InDelta(t, tc.tool, got.ToolS, 1e-9)
		assert.Equal(t, tc.stopped, got.Stopped)
		_, err = reader.AddSpan(tc.tok, Span{Action: "end"})
		switch {
		case tc.stopped:
			assert.ErrorContains(t, err, "the timer is stopped")
		case tc.spans:
			assert.NoError(t, err)
		default:
			assert.ErrorContains(t, err, "no span is open")
		}
	}
}

// goldenPayload is a token payload written out field by field, as the
// format says: version, ten little-endian 8-byte fields (start, expires,
// measured, simulated, open, stopped, seed, and the bits of speed factor,
// jitter and limit), the flags byte when flags >= 0, then the rollout id.
func goldenPayload(version byte, start, expires, open, stopped int64, flags int, rollout string) []byte {
	b := []byte{version}
	for _, v := range []uint64{uint64(start), uint64(expires), 0, 0, uint64(open), uint64(stopped), 9,
		0x3ff0000000000000 /* 1.0 */, 0, 0} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	if flags >= 0 {
		b = append(b, byte(flags))
	}
	return append(b, rollout...)
}

// signedToken signs a payload as a token: base64url of the payload, '.',
// base64url of the first 16 bytes of its HMAC-SHA256.
func signedToken(key, payload []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(m.Sum(nil)[:16])
}

// TestTokenVersions: a state that a zero time would misread is written as
// version 2 with its flags; every other state as version 1. Version 2 is
// read strictly: known flags only, and a time whose flag is off is 0.
func TestTokenVersions(t *testing.T) {
	clk := &fakeClock{t: epoch.Add(5 * time.Second)}
	s := newStore(t, clk, secret)
	start, expires := int64(-int64(time.Second)), int64(time.Hour)
	tests := []struct {
		name    string
		payload []byte
		want    *state // nil: invalid
	}{
		{"v1, nothing open", goldenPayload(1, start, expires, 0, 0, -1, "r"),
			&state{start: start, expires: expires, seed: 9, alpha: 1, rollout: "r"}},
		{"v1, a zero open time is no span", goldenPayload(1, start, expires, 0, 0, -1, ""),
			&state{start: start, expires: expires, seed: 9, alpha: 1}},
		{"v1, span and stop", goldenPayload(1, start, expires, 2, 3, -1, "r"),
			&state{start: start, expires: expires, open: 2, stopped: 3, spanOpen: true, halted: true, seed: 9, alpha: 1, rollout: "r"}},
		{"v2, span opened at 0", goldenPayload(2, start, expires, 0, 0, 1, "r"),
			&state{start: start, expires: expires, spanOpen: true, seed: 9, alpha: 1, rollout: "r"}},
		{"v2, stopped at 0", goldenPayload(2, start, expires, 0, 0, 2, "r"),
			&state{start: start, expires: expires, halted: true, seed: 9, alpha: 1, rollout: "r"}},
		{"v2, both at 0, no rollout id", goldenPayload(2, start, expires, 0, 0, 3, ""),
			&state{start: start, expires: expires, spanOpen: true, halted: true, seed: 9, alpha: 1}},
		{"v2, span at 0, stopped later", goldenPayload(2, start, expires, 0, 4, 3, "r"),
			&state{start: start, expires: expires, stopped: 4, spanOpen: true, halted: true, seed: 9, alpha: 1, rollout: "r"}},
		{"v2, an unknown flag", goldenPayload(2, start, expires, 0, 0, 1|4, "r"), nil},
		{"v2, the top flag", goldenPayload(2, start, expires, 0, 0, 0x80, "r"), nil},
		{"v2, an open time without its flag", goldenPayload(2, start, expires, 2, 0, 0, "r"), nil},
		{"v2, a stop time without its flag", goldenPayload(2, start, expires, 0, 2, 1, "r"), nil},
		{"v2, span open before the start", goldenPayload(2, start, expires, start-1, 0, 1, "r"), nil},
		{"v2, stopped before the start", goldenPayload(2, start, expires, 0, start-1, 2, "r"), nil},
		{"v2 without its flags byte", goldenPayload(2, start, expires, 0, 0, -1, ""), nil},
		{"version 0", goldenPayload(0, start, expires, 0, 0, -1, "r"), nil},
		{"version 3", goldenPayload(3, start, expires, 0, 0, 1, "r"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := signedToken(secret, tc.payload)
			got, err := s.decode(tok)
			if tc.want == nil {
				assert.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, *tc.want, got)
			assert.Equal(t, tok, s.encode(got), "the state is written back as it was read")
		})
	}
}
