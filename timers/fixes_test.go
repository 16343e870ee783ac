package timers

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLongTTLDoesNotWrap: a TTL that would take the expiry past the last
// instant a token can hold (2262-04-11, the largest int64 of Unix
// nanoseconds) expires at that instant instead of wrapping to 1677, which
// made the new timer's token unreadable.
func TestLongTTLDoesNotWrap(t *testing.T) {
	clk := &fakeClock{t: t0}
	forever := time.Duration(math.MaxInt64)
	s, err := New(Options{Secret: secret, Now: clk.Now, DefaultTTL: forever, MaxTTL: forever})
	require.NoError(t, err)
	last := time.Unix(0, math.MaxInt64).UTC()
	for _, ttl := range []time.Duration{0, forever, forever - time.Duration(t0.UnixNano()) + 1} {
		r, err := s.Create(Spec{TTL: ttl})
		require.NoError(t, err)
		assert.Equal(t, last, r.ExpiresAt, "ttl %v", ttl)
		clk.Advance(time.Hour)
		got, err := s.Read(r.Timer)
		require.NoError(t, err, "ttl %v", ttl)
		assert.InDelta(t, 3600.0, got.ElapsedS, 1e-9)
		assert.Equal(t, last, got.ExpiresAt)
	}

	// The largest TTL that fits keeps its exact expiry.
	fits := forever - time.Duration(clk.Now().UnixNano())
	r, err := s.Create(Spec{TTL: fits})
	require.NoError(t, err)
	assert.Equal(t, last, r.ExpiresAt)
	r, err = s.Create(Spec{TTL: fits - 1})
	require.NoError(t, err)
	assert.Equal(t, time.Unix(0, math.MaxInt64-1).UTC(), r.ExpiresAt)
}

// TestOpenSpanAtTheToolBound: once a timer holds the most tool time it may
// (MaxToolSeconds), an open span adds no more; the reading while it is open
// is the one its end, or a stop, freezes, so neither makes the reading go
// back, and the tool time shown never passes the bound.
func TestOpenSpanAtTheToolBound(t *testing.T) {
	for _, end := range []string{"end", "stop"} {
		t.Run(end, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{SpeedFactor: 0.5})
			require.NoError(t, err)
			r, err = s.AddSpan(r.Timer, Span{Seconds: MaxToolSeconds - 4, Simulated: true})
			require.NoError(t, err)
			r, err = s.AddSpan(r.Timer, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(10 * time.Second)
			open, err := s.Read(r.Timer)
			require.NoError(t, err)
			// 4 s of the span fit under the bound, at the tool rate 1; the
			// other 6 s of the wall clock are generation, at α = 0.5.
			assert.Equal(t, float64(MaxToolSeconds-4), open.ToolS, "an open span is no tool time yet")
			assert.Equal(t, MaxToolSeconds+3, open.ElapsedS)

			var closed Reading
			if end == "end" {
				closed, err = s.AddSpan(r.Timer, Span{Action: "end"})
				require.NoError(t, err)
				assert.Equal(t, float64(MaxToolSeconds), closed.ToolS)
			} else {
				closed, err = s.Stop(r.Timer)
				require.NoError(t, err)
				assert.Equal(t, open.ToolS, closed.ToolS)
			}
			assert.Equal(t, open.ElapsedS, closed.ElapsedS)
		})
	}
}
