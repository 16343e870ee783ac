package pace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first reservation goes through at once and the others at the rate,
// in order; a reservation that cannot be paid for before its deadline is
// refused without waiting; a stop ends a wait.
func TestPacer(t *testing.T) {
	// At 1 byte/s, waiting for the first 20,000 bytes would take five and a
	// half hours: returning at all says it waited for nothing, however busy
	// the machine.
	first := make(chan bool)
	go func() { first <- New(1).Wait(nil, 20_000, time.Time{}) }()
	select {
	case ok := <-first:
		require.True(t, ok)
	case <-time.After(time.Minute):
		t.Fatal("the first reservation waited")
	}

	p := New(1e6)
	t0 := time.Now()
	for range 5 {
		require.True(t, p.Wait(nil, 20_000, time.Time{}))
	}
	// 4 × 20,000 bytes paid for at 1 MB/s before the fifth is sent.
	assert.GreaterOrEqual(t, time.Since(t0), 80*time.Millisecond)
	assert.GreaterOrEqual(t, p.next.Sub(t0), 100*time.Millisecond, "the fifth is paid for after the four")

	// A deadline before the reservation would be paid for: refused at once,
	// and nothing reserved.
	q := New(1)
	require.True(t, q.Wait(nil, 3600, time.Time{})) // an hour reserved
	next := q.next
	start := time.Now()
	assert.False(t, q.Wait(nil, 1, start.Add(time.Minute)))
	assert.Less(t, time.Since(start), 30*time.Second, "refused without waiting for it")
	assert.Equal(t, next, q.next, "a refused reservation takes nothing")

	// A stop ends the wait.
	stop := make(chan struct{})
	go func() { time.Sleep(20 * time.Millisecond); close(stop) }()
	t1 := time.Now()
	assert.False(t, q.Wait(stop, 1, time.Time{}))
	assert.Less(t, time.Since(t1), 30*time.Second)
	assert.False(t, New(1e6).Wait(stop, 1, time.Time{}), "stopped before it starts")
}

// Rates far above and below a byte a nanosecond keep their time per byte:
// a reservation behind one already made (an hour ahead, so the clock plays
// no part) is paid for exactly n / rate after it.
func TestPacerRates(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		n    int
		want time.Duration
	}{
		{64 << 20, 64 << 20, time.Second},
		{1 << 40, 1 << 40, time.Second},
		{1, 2, 2 * time.Second},
		{0, 1, time.Second}, // at least a byte a second
	} {
		p := New(tc.rate)
		ahead := time.Now().Add(time.Hour)
		p.next = ahead
		stop := make(chan struct{})
		close(stop)
		assert.False(t, p.Wait(stop, tc.n, time.Time{}), "stopped")
		assert.Equal(t, tc.want, p.next.Sub(ahead), "rate %v", tc.rate)
	}
}
