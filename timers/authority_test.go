package timers

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOlderTokensReadAndChangeTheNewestState: a token replayed after later
// ones were issued reads the newest state, and a change made with it
// applies to the newest state, so no span is dropped and the timer does not
// fork.
func TestOlderTokensReadAndChangeTheNewestState(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	created, err := s.Create(Spec{SpeedFactor: 3})
	require.NoError(t, err)
	clk.Advance(10 * time.Second)
	first, err := s.AddSpan(created.Timer, Span{Seconds: 4})
	require.NoError(t, err)
	second, err := s.AddSpan(first.Timer, Span{Seconds: 20, Simulated: true})
	require.NoError(t, err)
	// By hand: 10 s of wall time, 4 in a tool, 20 s simulated: 3·6 + 4 + 20.
	for _, tok := range []string{created.Timer, first.Timer, second.Timer} {
		got, err := s.Read(tok)
		require.NoError(t, err)
		assert.InDelta(t, 42.0, got.ElapsedS, 1e-9)
		assert.Equal(t, second.Timer, got.Timer, "the reading hands back the newest token")
		el, _, err := s.Elapsed(context.Background(), tok)
		require.NoError(t, err)
		assert.InDelta(t, 42.0, el, 1e-9, "a reward reads the newest state")
	}
	// A change through the oldest token lands on the newest state.
	third, err := s.AddSpan(created.Timer, Span{Seconds: 1, Simulated: true})
	require.NoError(t, err)
	assert.InDelta(t, 25.0, third.ToolS, 1e-9, "4 measured, 20 and 1 simulated")
	got, err := s.Read(second.Timer)
	require.NoError(t, err)
	assert.Equal(t, third.Timer, got.Timer)
}

// TestAStoppedTimerStaysStopped: the tokens issued before the stop read the
// stopped timer, take no span and cannot restart it.
func TestAStoppedTimerStaysStopped(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	created, err := s.Create(Spec{RolloutID: "r", SpeedFactor: 2})
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	open, err := s.AddSpan(created.Timer, Span{Action: "start"})
	require.NoError(t, err)
	clk.Advance(time.Second)
	stopped, err := s.Stop(open.Timer)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	for _, tok := range []string{created.Timer, open.Timer, stopped.Timer, "r"} {
		got, err := s.Read(tok)
		require.NoError(t, err)
		assert.True(t, got.Stopped, tok)
		assert.InDelta(t, 6.0, got.ElapsedS, 1e-9, "frozen at the stop: 2·2 + 2·1")
	}
	for _, tok := range []string{created.Timer, open.Timer} {
		for _, sp := range []Span{{Seconds: 1}, {Seconds: 1, Simulated: true}, {Action: "start"}, {Action: "end"}} {
			_, err := s.AddSpan(tok, sp)
			require.ErrorIs(t, err, ErrBadSpec, "%+v", sp)
			assert.ErrorContains(t, err, "the timer is stopped")
		}
		again, err := s.Stop(tok)
		require.NoError(t, err)
		assert.Equal(t, stopped.Timer, again.Timer, "stopping again changes nothing")
	}
}

// TestChangesWithOneTokenAllCount: concurrent changes made with the same
// token are serialised on the newest state; none is lost.
func TestChangesWithOneTokenAllCount(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{})
	require.NoError(t, err)
	const n = 64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.AddSpan(r.Timer, Span{Seconds: 1, Simulated: true})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	got, err := s.Read(r.Timer)
	require.NoError(t, err)
	assert.InDelta(t, float64(n), got.ToolS, 1e-9)
}

// TestReplicasKnowWhatTheyWereShown: a replica that has seen a newer token
// reads an older one as the newer; one that has seen only the older, or a
// restarted process, reads it at its word (the gap the package comment
// describes); of two states with one change count, the one a replica knew
// first stays its newest.
func TestReplicasKnowWhatTheyWereShown(t *testing.T) {
	clk := &fakeClock{t: t0}
	a := newStore(t, clk, secret)
	created, err := a.Create(Spec{})
	require.NoError(t, err)
	clk.Advance(5 * time.Second)
	spanned, err := a.AddSpan(created.Timer, Span{Seconds: 30, Simulated: true})
	require.NoError(t, err)
	stopped, err := a.Stop(spanned.Timer)
	require.NoError(t, err)

	b := newStore(t, clk, secret)
	got, err := b.Read(stopped.Timer)
	require.NoError(t, err)
	require.True(t, got.Stopped)
	for _, tok := range []string{created.Timer, spanned.Timer} {
		got, err := b.Read(tok)
		require.NoError(t, err)
		assert.True(t, got.Stopped, "b was shown the stop")
		assert.InDelta(t, 35.0, got.ElapsedS, 1e-9)
		_, err = b.AddSpan(tok, Span{Seconds: 1, Simulated: true})
		assert.ErrorContains(t, err, "the timer is stopped")
	}

	fresh := newStore(t, clk, secret) // a restart, or a replica that saw nothing
	got, err = fresh.Read(spanned.Timer)
	require.NoError(t, err)
	assert.False(t, got.Stopped, "what a process was never shown, it cannot know")
	// Once shown the stop, it knows.
	_, err = fresh.Read(stopped.Timer)
	require.NoError(t, err)
	got, err = fresh.Read(spanned.Timer)
	require.NoError(t, err)
	assert.True(t, got.Stopped)

	// Two replicas change the timer from the same token: each keeps its
	// own change as the newest of that count.
	c, d := newStore(t, clk, secret), newStore(t, clk, secret)
	r, err := c.Create(Spec{})
	require.NoError(t, err)
	onC, err := c.AddSpan(r.Timer, Span{Seconds: 1, Simulated: true})
	require.NoError(t, err)
	onD, err := d.AddSpan(r.Timer, Span{Seconds: 2, Simulated: true})
	require.NoError(t, err)
	got, err = c.Read(onD.Timer)
	require.NoError(t, err)
	assert.Equal(t, onC.Timer, got.Timer)
	assert.InDelta(t, 1.0, got.ToolS, 1e-9)
	changed, err := c.AddSpan(onD.Timer, Span{Seconds: 4, Simulated: true})
	require.NoError(t, err)
	assert.InDelta(t, 5.0, changed.ToolS, 1e-9, "a change lands on the state c knows")
}

// TestMeasuredToolTimeAtItsBound: a timer whose measured spans fill the
// tool-time bound takes no more from an open span: its time is generation.
func TestMeasuredToolTimeAtItsBound(t *testing.T) {
	clk := &fakeClock{t: t0}
	s, err := New(Options{Secret: secret, Now: clk.Now, MaxTTL: 100 * 365 * 24 * time.Hour, DefaultTTL: 100 * 365 * 24 * time.Hour})
	require.NoError(t, err)
	r, err := s.Create(Spec{SpeedFactor: 0.5})
	require.NoError(t, err)
	clk.Advance(time.Duration(MaxToolSeconds-4) * time.Second)
	r, err = s.AddSpan(r.Timer, Span{Seconds: MaxToolSeconds - 4})
	require.NoError(t, err)
	require.Equal(t, float64(MaxToolSeconds-4), r.ToolS, "the wall clock ran that long")
	r, err = s.AddSpan(r.Timer, Span{Action: "start"})
	require.NoError(t, err)
	clk.Advance(10 * time.Second)
	got, err := s.Read(r.Timer)
	require.NoError(t, err)
	// By hand: 4 s of the span fit under the bound, at rate 1; 6 s are
	// generation, at α = 0.5.
	assert.Equal(t, MaxToolSeconds+3, got.ElapsedS)
	closed, err := s.AddSpan(r.Timer, Span{Action: "end"})
	require.NoError(t, err)
	assert.Equal(t, float64(MaxToolSeconds), closed.ToolS)
	assert.Equal(t, MaxToolSeconds+3, closed.ElapsedS)
}

// TestChangeCountIsBounded: a timer changed as often as a token can count
// takes no further change, and is still read.
func TestChangeCountIsBounded(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{})
	require.NoError(t, err)
	st, err := s.decode(r.Timer)
	require.NoError(t, err)
	st.seq = math.MaxUint32 - 1
	tok := s.encode(st)
	last, err := s.AddSpan(tok, Span{Seconds: 1, Simulated: true})
	require.NoError(t, err, "the last change a token can count")
	_, err = s.AddSpan(last.Timer, Span{Seconds: 1, Simulated: true})
	require.ErrorIs(t, err, ErrBadSpec)
	assert.ErrorContains(t, err, "changed 4294967295 times")
	got, err := s.Read(last.Timer)
	require.NoError(t, err)
	assert.InDelta(t, 1.0, got.ToolS, 1e-9)
	_, err = s.Stop(last.Timer)
	require.ErrorIs(t, err, ErrBadSpec, "a stop is a change too")
}

// TestVersion3Tokens: a change count travels in version 3 tokens only; a
// count of 0 there, or a version 3 payload too short to hold one, is not a
// token this code wrote.
func TestVersion3Tokens(t *testing.T) {
	clk := &fakeClock{t: epoch.Add(5 * time.Second)}
	s := newStore(t, clk, secret)
	start, expires := int64(-int64(time.Second)), int64(time.Hour)
	count := func(p []byte, seq uint32) []byte {
		return append(p[:fixedLenV2:fixedLenV2], append([]byte{byte(seq), byte(seq >> 8), byte(seq >> 16), byte(seq >> 24)}, p[fixedLenV2:]...)...)
	}
	tests := []struct {
		name    string
		payload []byte
		want    *state
	}{
		{"count 1", count(goldenPayload(3, start, expires, 0, 0, 0, "r"), 1),
			&state{start: start, expires: expires, seq: 1, seed: 9, alpha: 1, rollout: "r"}},
		{"count 2^32-1, stopped", count(goldenPayload(3, start, expires, 0, 4, 2, ""), math.MaxUint32),
			&state{start: start, expires: expires, stopped: 4, halted: true, seq: math.MaxUint32, seed: 9, alpha: 1}},
		{"count 0", count(goldenPayload(3, start, expires, 0, 0, 0, "r"), 0), nil},
		{"no count", goldenPayload(3, start, expires, 0, 0, 0, ""), nil},
		{"an unknown flag", count(goldenPayload(3, start, expires, 0, 0, 8, "r"), 1), nil},
		{"an open time without its flag", count(goldenPayload(3, start, expires, 2, 0, 0, "r"), 1), nil},
		{"a span opened after the stop", count(goldenPayload(3, start, expires, 5, 4, 3, "r"), 1), nil},
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

// TestMeasuredSpansOnly: with MeasuredSpansOnly a stated measured span is
// refused (with α = 4 it would turn 12 s of generation into 3 s of tool
// time), while spans the store measures and simulated ones count as ever.
func TestMeasuredSpansOnly(t *testing.T) {
	for _, only := range []bool{false, true} {
		t.Run(fmt.Sprint(only), func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s, err := New(Options{Secret: secret, Now: clk.Now, MeasuredSpansOnly: only})
			require.NoError(t, err)
			r, err := s.Create(Spec{SpeedFactor: 4, TimeLimitS: 10})
			require.NoError(t, err)
			clk.Advance(3 * time.Second)
			stated, err := s.AddSpan(r.Timer, Span{Seconds: 3})
			if only {
				var se *SpecError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, "seconds", se.Field)
				assert.Contains(t, err.Error(), `"action": "start"`)
				got, err := s.Read(r.Timer)
				require.NoError(t, err)
				assert.InDelta(t, 12.0, got.ElapsedS, 1e-9, "all of it generation, at α = 4")
			} else {
				require.NoError(t, err)
				assert.InDelta(t, 3.0, stated.ElapsedS, 1e-9, "the stated span is taken, up to the wall time")
				r = stated
			}
			opened, err := s.AddSpan(r.Timer, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(2 * time.Second)
			ended, err := s.AddSpan(opened.Timer, Span{Action: "end"})
			require.NoError(t, err)
			sim, err := s.AddSpan(ended.Timer, Span{Seconds: 1, Simulated: true})
			require.NoError(t, err)
			assert.InDelta(t, ended.ElapsedS+1, sim.ElapsedS, 1e-9)
			assert.InDelta(t, map[bool]float64{false: 3 + 2 + 1, true: 2 + 1}[only], sim.ToolS, 1e-9)
		})
	}
}
