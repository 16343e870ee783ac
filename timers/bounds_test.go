package timers

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file pin the boundaries of the timer's rules (the exact
// instant a timer expires, the largest accepted values) and the arithmetic
// of the jitter, which the behavioural tests elsewhere only check loosely.

var t0 = time.Unix(1_800_000_000, 0)

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
		// For accepted options: the TTL of a timer created with TTL 0, and
		// the largest TTL a spec may ask for.
		defaultTTL, maxTTL time.Duration
	}{
		{name: "secret of 15 bytes", opts: Options{Secret: []byte("123456789012345")}, wantErr: "at least 16 bytes"},
		{name: "secret of 16 bytes", opts: Options{Secret: []byte("1234567890123456")}, defaultTTL: time.Hour, maxTTL: 24 * time.Hour},
		{name: "defaults", opts: Options{Secret: secret}, defaultTTL: time.Hour, maxTTL: 24 * time.Hour},
		{name: "negative ttls mean the defaults", opts: Options{Secret: secret, DefaultTTL: -1, MaxTTL: -1}, defaultTTL: time.Hour, maxTTL: 24 * time.Hour},
		{name: "default ttl equal to max ttl", opts: Options{Secret: secret, DefaultTTL: time.Minute, MaxTTL: time.Minute}, defaultTTL: time.Minute, maxTTL: time.Minute},
		{name: "default ttl above max ttl", opts: Options{Secret: secret, DefaultTTL: time.Minute + 1, MaxTTL: time.Minute}, wantErr: "default ttl 1m0.000000001s exceeds max ttl 1m0s"},
		{name: "default ttl above the default max ttl", opts: Options{Secret: secret, DefaultTTL: 25 * time.Hour}, wantErr: "exceeds max ttl 24h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			tc.opts.Now = clk.Now
			s, err := New(tc.opts)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				var oe *OptionError
				require.ErrorAs(t, err, &oe, "a caller can tell which option is wrong")
				assert.Equal(t, map[bool]string{true: "Secret", false: "DefaultTTL"}[strings.Contains(tc.name, "secret")], oe.Field)
				assert.Equal(t, "timers: "+oe.Err.Error(), err.Error())
				assert.Nil(t, s)
				return
			}
			require.NoError(t, err)
			r, err := s.Create(Spec{})
			require.NoError(t, err)
			assert.Equal(t, t0.Add(tc.defaultTTL).UTC(), r.ExpiresAt)
			r, err = s.Create(Spec{TTL: tc.maxTTL})
			require.NoError(t, err, "a ttl equal to the maximum")
			assert.Equal(t, t0.Add(tc.maxTTL).UTC(), r.ExpiresAt)
			_, err = s.Create(Spec{TTL: tc.maxTTL + 1})
			require.ErrorIs(t, err, ErrBadSpec)
			assert.ErrorContains(t, err, "ttl_s")
		})
	}
}

// TestCreateBounds: every field's largest and smallest accepted value is
// accepted, and the token it gives reads back with the same values, by
// token and by rollout id; the first value past each bound is refused,
// naming the field.
func TestCreateBounds(t *testing.T) {
	id256 := strings.Repeat("x", 256)
	tests := []struct {
		name      string
		spec      Spec
		wantField string // "" when accepted
		wantAlpha float64
	}{
		{name: "rollout id of 256 bytes", spec: Spec{RolloutID: id256}, wantAlpha: 1},
		{name: "rollout id of 257 bytes", spec: Spec{RolloutID: id256 + "x"}, wantField: "rollout_id"},
		{name: "speed factor 0 means 1", spec: Spec{SpeedFactor: 0}, wantAlpha: 1},
		{name: "speed factor 1e6", spec: Spec{SpeedFactor: 1e6}, wantAlpha: 1e6},
		{name: "smallest positive speed factor", spec: Spec{SpeedFactor: math.SmallestNonzeroFloat64}, wantAlpha: math.SmallestNonzeroFloat64},
		{name: "speed factor past 1e6", spec: Spec{SpeedFactor: math.Nextafter(1e6, 2e6)}, wantField: "speed_factor"},
		{name: "negative speed factor", spec: Spec{SpeedFactor: -0.5}, wantField: "speed_factor"},
		{name: "NaN speed factor", spec: Spec{SpeedFactor: math.NaN()}, wantField: "speed_factor"},
		{name: "jitter 1", spec: Spec{Jitter: 1, Seed: 1}, wantAlpha: 1},
		{name: "jitter past 1", spec: Spec{Jitter: math.Nextafter(1, 2)}, wantField: "jitter"},
		{name: "negative jitter", spec: Spec{Jitter: -1e-9}, wantField: "jitter"},
		{name: "NaN jitter", spec: Spec{Jitter: math.NaN()}, wantField: "jitter"},
		{name: "time limit 0", spec: Spec{TimeLimitS: 0}, wantAlpha: 1},
		{name: "largest time limit", spec: Spec{TimeLimitS: math.MaxFloat64}, wantAlpha: 1},
		{name: "infinite time limit", spec: Spec{TimeLimitS: math.Inf(1)}, wantField: "time_limit_s"},
		{name: "negative time limit", spec: Spec{TimeLimitS: -1e-9}, wantField: "time_limit_s"},
		{name: "NaN time limit", spec: Spec{TimeLimitS: math.NaN()}, wantField: "time_limit_s"},
		{name: "ttl of 1 ns", spec: Spec{TTL: 1}, wantAlpha: 1},
		{name: "negative ttl", spec: Spec{TTL: -1}, wantField: "ttl_s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s := newStore(t, clk, secret)
			r, err := s.Create(tc.spec)
			if tc.wantField != "" {
				require.ErrorIs(t, err, ErrBadSpec)
				var se *SpecError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.wantField, se.Field)
				return
			}
			require.NoError(t, err)
			for _, id := range []string{r.Timer, r.RolloutID} {
				got, err := s.Read(id)
				require.NoError(t, err, "read by %.20q", id)
				assert.Equal(t, tc.wantAlpha, got.SpeedFactor)
				assert.Equal(t, tc.spec.Jitter, got.Jitter)
				assert.Equal(t, tc.spec.TimeLimitS, got.TimeLimitS)
				assert.Equal(t, r.Timer, got.Timer)
				if tc.spec.RolloutID != "" {
					assert.Equal(t, tc.spec.RolloutID, got.RolloutID)
				}
			}
		})
	}
}

// TestTimerLivesUntilItsExpiryInstant: a timer is readable, and holds its
// rollout id, up to and including the nanosecond it expires at.
func TestTimerLivesUntilItsExpiryInstant(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{RolloutID: "r", TTL: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Minute).UTC(), r.ExpiresAt)

	clk.Advance(time.Minute)
	for _, id := range []string{r.Timer, "r"} {
		got, err := s.Read(id)
		require.NoError(t, err, "read %q at the expiry instant", id)
		assert.InDelta(t, 60.0, got.ElapsedS, 1e-9)
	}
	el, _, err := s.Elapsed(context.Background(), r.Timer)
	require.NoError(t, err)
	assert.InDelta(t, 60.0, el, 1e-9)
	_, err = s.Create(Spec{RolloutID: "r"})
	require.ErrorIs(t, err, ErrConflict, "the timer still holds its id at the expiry instant")

	clk.Advance(time.Nanosecond)
	for _, id := range []string{r.Timer, "r"} {
		_, err := s.Read(id)
		require.ErrorIs(t, err, ErrExpired, "read %q a nanosecond later", id)
	}
	_, err = s.Create(Spec{RolloutID: "r"})
	require.NoError(t, err, "an expired timer frees its id")
}

// TestOpenSpan: while a measured span is open its time counts, unscaled, in
// both the elapsed and the tool time, with the simulated latency; stopping
// the timer closes the span.
func TestOpenSpan(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{RolloutID: "r", SpeedFactor: 2})
	require.NoError(t, err)
	r, err = s.AddSpan(r.Timer, Span{Seconds: 3, Simulated: true})
	require.NoError(t, err)
	clk.Advance(time.Second)
	r, err = s.AddSpan(r.Timer, Span{Action: "start"})
	require.NoError(t, err)
	assert.InDelta(t, 3.0, r.ToolS, 1e-9, "a span opened now has no length yet")
	assert.InDelta(t, 2*1+3.0, r.ElapsedS, 1e-9)

	clk.Advance(5 * time.Second)
	got, err := s.Read(r.Timer)
	require.NoError(t, err)
	assert.InDelta(t, 3.0, got.ToolS, 1e-9, "an open span is no tool time yet")
	assert.InDelta(t, 2*1+3+2*5.0, got.ElapsedS, 1e-9, "an open span counts at α = 2, the larger rate")
	_, err = s.AddSpan(r.Timer, Span{Action: "start"})
	require.ErrorIs(t, err, ErrBadSpec)
	assert.ErrorContains(t, err, "already open")

	stopped, err := s.Stop(r.Timer)
	require.NoError(t, err)
	assert.True(t, stopped.Stopped)
	assert.InDelta(t, 3.0, stopped.ToolS, 1e-9)
	assert.InDelta(t, 15.0, stopped.ElapsedS, 1e-9)

	clk.Advance(time.Hour - 7*time.Second)
	for _, id := range []string{stopped.Timer, "r", r.Timer} {
		got, err := s.Read(id)
		require.NoError(t, err)
		assert.True(t, got.Stopped)
		assert.InDelta(t, 3.0, got.ToolS, 1e-9, "a span left open at the stop never became tool time")
		assert.InDelta(t, 15.0, got.ElapsedS, 1e-9)
	}
	again, err := s.Stop(stopped.Timer)
	require.NoError(t, err)
	assert.Equal(t, stopped.Timer, again.Timer, "stopping a stopped timer changes nothing")
	for _, sp := range []Span{{Seconds: 1}, {Action: "end"}} {
		_, err = s.AddSpan(stopped.Timer, sp)
		require.ErrorIs(t, err, ErrBadSpec)
		assert.ErrorContains(t, err, "stopped")
	}
}

// TestOpenSpanNeverShortensTheReading: whatever α, a span opened and never
// ended (read while open, or left open at the stop) gives a reading no
// shorter than the same time spent generating, and no shorter than the
// same time spent in tools.
func TestOpenSpanNeverShortensTheReading(t *testing.T) {
	for _, alpha := range []float64{0.25, 1, 3} {
		t.Run(fmt.Sprint(alpha), func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{SpeedFactor: alpha})
			require.NoError(t, err)
			clk.Advance(2 * time.Second)
			r, err = s.AddSpan(r.Timer, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(10 * time.Second)
			// By hand: 2 s of generation, then 10 s that either rate could
			// price; the larger one counts.
			want := alpha*2 + 10*max(alpha, 1)
			got, err := s.Read(r.Timer)
			require.NoError(t, err)
			assert.InDelta(t, want, got.ElapsedS, 1e-9, "read while open")
			stopped, err := s.Stop(r.Timer)
			require.NoError(t, err)
			assert.InDelta(t, want, stopped.ElapsedS, 1e-9, "left open at the stop")
			assert.Zero(t, stopped.ToolS)
		})
	}
}

// TestStopAtCreation: a timer stopped at the instant it was created reads
// zero, frozen.
func TestStopAtCreation(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{})
	require.NoError(t, err)
	stopped, err := s.Stop(r.Timer)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	got, err := s.Read(stopped.Timer)
	require.NoError(t, err)
	assert.True(t, got.Stopped)
	assert.Zero(t, got.ElapsedS)
}

func TestSpanOfZeroSeconds(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{})
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	for _, simulated := range []bool{false, true} {
		got, err := s.AddSpan(r.Timer, Span{Seconds: 0, Simulated: simulated})
		require.NoError(t, err)
		assert.Zero(t, got.ToolS)
		assert.InDelta(t, 2.0, got.ElapsedS, 1e-9)
	}
}

// TestTokenRoundTrip: every state the bounds allow encodes and decodes to
// itself, including a payload of the fixed part alone (no rollout id) and
// one with the longest rollout id.
func TestTokenRoundTrip(t *testing.T) {
	start := t0.UnixNano()
	tests := []struct {
		name string
		st   state
	}{
		{"no rollout id", state{start: start, expires: start + 1, alpha: 1}},
		{"longest rollout id", state{start: start, expires: start + 1, alpha: 1, rollout: strings.Repeat("r", maxRolloutID)}},
		{"every field set", state{
			start: start, expires: start + int64(time.Hour), measured: 3, simulated: maxToolNS - 3,
			open: start + 5, stopped: start + 7, spanOpen: true, halted: true, seed: math.MaxUint64,
			alpha: 1e6, jitter: 1, limit: math.MaxFloat64, rollout: "rollout-1",
		}},
	}
	s := newStore(t, &fakeClock{t: t0}, secret)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.decode(s.encode(tc.st))
			require.NoError(t, err)
			assert.Equal(t, tc.st, got)
		})
	}
}

// TestNormal checks the jitter's deviates against values computed by an
// independent implementation (Python: SplitMix64, checked against the
// reference outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 for state 0,
// then u1 = (a>>11 + 0.5)/2^53, u2 = (b>>11)/2^53 and the Box–Muller
// cosine deviate), and their first two moments over many inputs.
func TestNormal(t *testing.T) {
	tests := []struct {
		x    uint64
		want float64
	}{
		{0, -0.452757740217458},
		{1, -0.028249746095854695},
		{42, 0.4147197504315305},
		{0xdeadbeef, 1.0628406465052824},
		{math.MaxUint64, 0.4038981710442082},
		// splitmix(−γ) = 0, as the mixer maps 0 to itself: the smallest u1,
		// 2^-54, still gives a finite deviate, sqrt(108·ln 2)·cos(2π·u2).
		{0x61c8864680b583eb, 6.4289894749003365},
		// splitmix gives 2048 (a>>11 = 1): u1 = 1.5·2^-53.
		{0x207400b0b9f87a70, 6.574841869858674},
		// splitmix gives 2^64−1: u1 rounds to 1, so the deviate is 0.
		{0x31628af67b2131ab, 0},
	}
	for _, tc := range tests {
		assert.InDelta(t, tc.want, normal(tc.x), 1e-13, "normal(%#x)", tc.x)
	}
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), splitmix(0))
	assert.Equal(t, uint64(0x6e789e6aa1b965f4), splitmix(0x9e3779b97f4a7c15))

	const n = 20000
	var sum, sq float64
	for i := range uint64(n) {
		z := normal(i * 0x2545f4914f6cdd1d)
		require.False(t, math.IsNaN(z) || math.IsInf(z, 0), "normal(%d)", i)
		sum += z
		sq += z * z
	}
	mean := sum / n
	assert.InDelta(t, 0, mean, 0.03)
	assert.InDelta(t, 1, sq/n-mean*mean, 0.04)
}

// TestJitteredReading: the value shown is elapsed·(1 + jitter·z), with z the
// deviate of seed XOR the reading's Unix nanoseconds, and never below zero.
// The expected values were computed independently (see TestNormal) for
// 3 s elapsed at t0 + 3 s.
func TestJitteredReading(t *testing.T) {
	tests := []struct {
		name   string
		seed   uint64
		jitter float64
		want   float64
		text   string
	}{
		{"positive deviate", 6, 0.2, 3.812825173128765, "3.81 seconds."},    // z = 1.3547086218812745
		{"negative deviate", 2, 0.2, 1.8102726646025302, "1.81 seconds."},   // z = -1.9828788923291165
		{"full jitter", 12, 1, 7.234362081579889, "7.23 seconds."},          // z = 1.411454027193296
		{"clipped at zero", 2, 1, 0, "0.00 seconds."},                       // 3·(1 − 1.98) < 0
		{"deviate near zero", 13, 0.5, 3.0287063797319123, "3.03 seconds."}, // z = 0.01913758648794129
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{Jitter: tc.jitter, Seed: tc.seed})
			require.NoError(t, err)
			clk.Advance(3 * time.Second)
			got, err := s.Read(r.Timer)
			require.NoError(t, err)
			assert.InDelta(t, 3.0, got.ElapsedS, 1e-12)
			assert.InDelta(t, tc.want, got.ReportedS, 1e-12)
			assert.Equal(t, tc.text, got.Text)
		})
	}
}
