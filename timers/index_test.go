package timers

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newIndexedStore(t *testing.T, clk *fakeClock, maxRollouts int) *Store {
	t.Helper()
	s, err := New(Options{Secret: secret, Now: clk.Now, MaxRollouts: maxRollouts})
	require.NoError(t, err)
	return s
}

// sameShard returns n rollout ids that the store's index keeps together, so
// that a test can fill one part of the index.
func sameShard(t *testing.T, s *Store, n int) []string {
	t.Helper()
	groups := map[*indexShard][]string{}
	for i := 0; ; i++ {
		id := fmt.Sprintf("rollout-%d", i)
		sh := s.index.shard(id)
		groups[sh] = append(groups[sh], id)
		if len(groups[sh]) == n {
			return groups[sh]
		}
	}
}

// known reports whether the store still knows a rollout id (the timer may
// have expired: the id is known as long as reading it is not ErrNotFound).
func known(t *testing.T, s *Store, id string) bool {
	t.Helper()
	_, err := s.Read(id)
	if err == nil || !assert.ErrorIs(t, err, ErrNotFound) {
		return true
	}
	return false
}

// TestAFullIndexRefusesNewTimers: with room for four timers, a fifth is
// refused with the time until the first expires, and the four stay whole.
func TestAFullIndexRefusesNewTimers(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 4)
	var tokens []string
	for i := range 4 {
		r, err := s.Create(Spec{RolloutID: fmt.Sprintf("r%d", i), TTL: time.Duration(10+i) * time.Minute})
		require.NoError(t, err)
		tokens = append(tokens, r.Timer)
	}
	clk.Advance(time.Minute)
	_, err := s.Create(Spec{RolloutID: "r4"})
	require.ErrorIs(t, err, ErrFull)
	var fe *FullError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 9*time.Minute, fe.RetryAfter, "the first timer expires 9 minutes on")
	assert.Contains(t, err.Error(), "timers.max_rollouts")
	for i := range 4 {
		assert.True(t, known(t, s, fmt.Sprintf("r%d", i)))
	}
	assert.False(t, known(t, s, "r4"))

	// A timer held changes while the index is full.
	_, err = s.AddSpan(tokens[0], Span{Seconds: 1, Simulated: true})
	require.NoError(t, err)
	_, err = s.Stop(tokens[1])
	require.NoError(t, err)

	// At its expiry instant a timer is running; past it, its room is free.
	clk.Advance(9 * time.Minute)
	_, err = s.Create(Spec{RolloutID: "r4"})
	require.ErrorIs(t, err, ErrFull)
	clk.Advance(time.Nanosecond)
	_, err = s.Create(Spec{RolloutID: "r4"})
	require.NoError(t, err)
	assert.False(t, known(t, s, "r0"), "the expired timer made room")
	for i := 1; i < 5; i++ {
		assert.True(t, known(t, s, fmt.Sprintf("r%d", i)))
	}
	_, err = s.Create(Spec{RolloutID: "r5"})
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, time.Minute, fe.RetryAfter, "r1 expires in a minute less a nanosecond, rounded up to the second")
	clk.Advance(time.Minute - 400*time.Millisecond)
	_, err = s.Create(Spec{RolloutID: "r5"})
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, time.Second, fe.RetryAfter, "a second at least")
}

// TestAFullIndexForgetsNoRunningTimer: however many timers are created
// past the index's room, in whichever shard, a timer held keeps its newest
// state: an older token reads it, with every span, and a stopped timer
// stays stopped.
func TestAFullIndexForgetsNoRunningTimer(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 64)
	ids := sameShard(t, s, 400)
	first, err := s.Create(Spec{RolloutID: ids[0]})
	require.NoError(t, err)
	clk.Advance(40 * time.Second)
	spanned, err := s.AddSpan(first.Timer, Span{Seconds: 20, Simulated: true})
	require.NoError(t, err)
	other, err := s.Create(Spec{RolloutID: ids[1]})
	require.NoError(t, err)
	stopped, err := s.Stop(other.Timer)
	require.NoError(t, err)
	refused := 0
	for _, id := range ids[2:] {
		if _, err := s.Create(Spec{RolloutID: id}); err != nil {
			require.ErrorIs(t, err, ErrFull)
			refused++
		}
	}
	assert.Equal(t, 400-64, refused, "the index holds 64 timers")
	got, err := s.Read(first.Timer)
	require.NoError(t, err)
	assert.Equal(t, spanned.Timer, got.Timer, "the older token reads the newest state")
	assert.InDelta(t, 60.0, got.ElapsedS, 1e-9)
	clk.Advance(time.Second)
	got, err = s.Read(other.Timer)
	require.NoError(t, err)
	assert.True(t, got.Stopped, "a stopped timer stays stopped")
	assert.Equal(t, stopped.ElapsedS, got.ElapsedS)
	_, err = s.AddSpan(other.Timer, Span{Seconds: 1})
	assert.ErrorIs(t, err, ErrBadSpec, "an older token cannot restart it")
}

// TestAFullIndexTakesTokensAtTheirWordWithoutChangingThem: a store with no
// room reads a token it was never shown as it is, and refuses to change its
// timer, which it could not hold: an older token would undo the change.
func TestAFullIndexTakesTokensAtTheirWordWithoutChangingThem(t *testing.T) {
	clk := &fakeClock{t: t0}
	issuer := newIndexedStore(t, clk, 8)
	r, err := issuer.Create(Spec{RolloutID: "elsewhere"})
	require.NoError(t, err)
	clk.Advance(time.Second)

	full := newIndexedStore(t, clk, 1)
	_, err = full.Create(Spec{RolloutID: "here"})
	require.NoError(t, err)
	got, err := full.Read(r.Timer)
	require.NoError(t, err)
	assert.InDelta(t, 1.0, got.ElapsedS, 1e-9)
	assert.False(t, known(t, full, "elsewhere"), "not held")
	_, err = full.AddSpan(r.Timer, Span{Seconds: 1})
	assert.ErrorIs(t, err, ErrFull)
	_, err = full.Stop(r.Timer)
	assert.ErrorIs(t, err, ErrFull)

	// A change refused on a timer the store does not hold leaves its room
	// free; a change made holds the timer, and takes the room.
	one := newIndexedStore(t, clk, 1)
	atMost := func(st state) string { st.seq = math.MaxUint32; return issuer.encode(st) }
	st, err := issuer.decode(r.Timer)
	require.NoError(t, err)
	_, err = one.AddSpan(atMost(st), Span{Seconds: 1, Simulated: true})
	require.ErrorContains(t, err, "changed 4294967295 times")
	stopped, err := issuer.Stop(r.Timer)
	require.NoError(t, err)
	_, err = one.AddSpan(stopped.Timer, Span{Seconds: 1})
	require.ErrorContains(t, err, "the timer is stopped")
	assert.EqualValues(t, 0, one.index.count.Load(), "refused changes hold nothing")
	other, err := issuer.Create(Spec{RolloutID: "other"})
	require.NoError(t, err)
	_, err = one.AddSpan(other.Timer, Span{Seconds: 1, Simulated: true})
	require.NoError(t, err)
	assert.True(t, known(t, one, "other"), "the changed timer is held")
	_, err = one.Create(Spec{RolloutID: "new"})
	assert.ErrorIs(t, err, ErrFull, "and takes the room")

	// With room, the token is held from the first time it is shown.
	roomy := newIndexedStore(t, clk, 2)
	_, err = roomy.Read(r.Timer)
	require.NoError(t, err)
	assert.True(t, known(t, roomy, "elsewhere"))
	_, err = roomy.AddSpan(r.Timer, Span{Seconds: 1})
	require.NoError(t, err)
}

// TestIndexHoldsTimersByBytes: the byte bound holds fewer timers with long
// rollout ids than with short ones, timerBytes each, across shards.
func TestIndexHoldsTimersByBytes(t *testing.T) {
	for _, n := range []int{4, 36, 256} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			clk := &fakeClock{t: t0}
			each := 384 + (n+15)/16*16 // by hand: the overhead and the id's allocation
			budget := 150 * each       // exactly: the 150th fits, the 151st does not
			s, err := New(Options{Secret: secret, Now: clk.Now, MaxIndexBytes: int64(budget)})
			require.NoError(t, err)
			held := 0
			for i := 0; ; i++ {
				id := fmt.Sprintf("%0*d", n, i)
				if _, err := s.Create(Spec{RolloutID: id}); err != nil {
					require.ErrorIs(t, err, ErrFull)
					break
				}
				held++
			}
			assert.Equal(t, 150, held)
			assert.EqualValues(t, held*each, s.index.bytes.Load())
			assert.EqualValues(t, held, s.index.count.Load())
		})
	}
}

// TestIndexBytesBoundMemory: what the index counts per timer is at least
// what the Go heap grew by for it (runtime.MemStats, after a collection),
// measured every 10,000 timers up to 140,000, as the maps' tables fill and
// split, for rollout ids of 36 and 256 bytes, each decoded afresh as a
// request's would be.
func TestIndexBytesBoundMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 280,000 timers")
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, n := range []int{36, 256} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s, err := New(Options{Secret: secret, Now: clk.Now, MaxIndexBytes: 1 << 40, MaxRollouts: 1 << 30})
			require.NoError(t, err)
			before := heap()
			worst := 0.0
			for i := range 140_000 {
				_, err := s.Create(Spec{RolloutID: fmt.Sprintf("%0*d", n, i)})
				require.NoError(t, err)
				if (i+1)%10_000 == 0 {
					grew := float64(heap()) - float64(before)
					counted := float64(s.index.bytes.Load())
					require.LessOrEqual(t, grew, counted, "after %d timers", i+1)
					worst = max(worst, grew/float64(i+1))
				}
			}
			t.Logf("ids of %d bytes: the heap grew by at most %.0f bytes a timer; the index counts %d", n, worst, timerBytes(n))
			assert.Greater(t, worst, float64(timerBytes(n))/2, "the count is not far above the truth")
		})
	}
}

// TestIndexReplacesAnIDInPlace: a full part of the index updates an id it
// holds without dropping another.
func TestIndexReplacesAnIDInPlace(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 64) // one id per part
	id := sameShard(t, s, 1)[0]
	r, err := s.Create(Spec{RolloutID: id})
	require.NoError(t, err)
	clk.Advance(time.Second)
	r, err = s.AddSpan(r.Timer, Span{Seconds: 10, Simulated: true})
	require.NoError(t, err)
	got, err := s.Read(id)
	require.NoError(t, err)
	assert.Equal(t, r.Timer, got.Timer, "the id names the newest token")
	assert.InDelta(t, 11.0, got.ElapsedS, 1e-9)
}

// TestShownTokensDoNotRebindARolloutID: a store that knows a rollout id as
// one timer's keeps it so when shown a token of an earlier timer of that id.
func TestShownTokensDoNotRebindARolloutID(t *testing.T) {
	clk := &fakeClock{t: t0}
	a := newStore(t, clk, secret)
	first, err := a.Create(Spec{RolloutID: "r"})
	require.NoError(t, err)
	stopped, err := a.Stop(first.Timer)
	require.NoError(t, err)
	clk.Advance(time.Second)
	second, err := a.Create(Spec{RolloutID: "r"})
	require.NoError(t, err)

	b := newStore(t, clk, secret)
	_, err = b.Read(second.Timer)
	require.NoError(t, err)
	_, err = b.Read(stopped.Timer)
	require.NoError(t, err)
	got, err := b.Read("r")
	require.NoError(t, err)
	assert.Equal(t, second.Timer, got.Timer, "the id still names the timer b knew it as")
	assert.False(t, got.Stopped)
}

// TestIndexKeepsAnIDWhenItsEarlierTimerGoes: dropping an expired timer of a
// rollout id keeps the id, which names the id's newer timer.
func TestIndexKeepsAnIDWhenItsEarlierTimerGoes(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 2)
	first, err := s.Create(Spec{RolloutID: "a", TTL: time.Minute})
	require.NoError(t, err)
	_, err = s.Stop(first.Timer)
	require.NoError(t, err)
	clk.Advance(2 * time.Minute) // the first timer has expired
	second, err := s.Create(Spec{RolloutID: "a"})
	require.NoError(t, err)
	// The index is full (the expired timer and the second); a new id makes
	// room by dropping the expired one.
	_, err = s.Create(Spec{RolloutID: "b"})
	require.NoError(t, err)
	got, err := s.Read("a")
	require.NoError(t, err, "the id still names its running timer")
	assert.Equal(t, second.Timer, got.Timer)
	assert.True(t, known(t, s, "b"))
	assert.EqualValues(t, 2, s.index.count.Load())
}

// TestTimersSharingAnIDEachTakeRoom: a stopped timer and the next one of
// its rollout id are two timers; a third is refused.
func TestTimersSharingAnIDEachTakeRoom(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 2)
	first, err := s.Create(Spec{RolloutID: "a"})
	require.NoError(t, err)
	_, err = s.Stop(first.Timer)
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: "a"})
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: "b"})
	assert.ErrorIs(t, err, ErrFull)
	_, err = s.Create(Spec{RolloutID: "a"})
	assert.ErrorIs(t, err, ErrConflict, "the running timer holds its id, full or not")
	assert.EqualValues(t, 2, s.index.count.Load(), "a refused create gives its room back")
	assert.EqualValues(t, 2*(384+16), s.index.bytes.Load())

	// With room, a create refused for its id gives its reservation back.
	roomy := newIndexedStore(t, clk, 4)
	_, err = roomy.Create(Spec{RolloutID: "a"})
	require.NoError(t, err)
	_, err = roomy.Create(Spec{RolloutID: "a"})
	require.ErrorIs(t, err, ErrConflict)
	assert.EqualValues(t, 1, roomy.index.count.Load())
	assert.EqualValues(t, 384+16, roomy.index.bytes.Load())
}

// TestExpiredTimersAreDroppedNotThoseAtTheirInstant: making room drops the
// timers past their expiry, not one at its expiry instant, in a shard that
// holds both.
func TestExpiredTimersAreDroppedNotThoseAtTheirInstant(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 2)
	ids := sameShard(t, s, 3)
	_, err := s.Create(Spec{RolloutID: ids[0], TTL: time.Minute})
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: ids[1], TTL: 2 * time.Minute})
	require.NoError(t, err)
	clk.Advance(2 * time.Minute) // ids[0] expired a minute ago; ids[1] expires now
	_, err = s.Create(Spec{RolloutID: ids[2]})
	require.NoError(t, err)
	assert.False(t, known(t, s, ids[0]))
	_, err = s.Read(ids[1])
	require.NoError(t, err, "at its expiry instant the timer is held, and reads")
	assert.EqualValues(t, 2, s.index.count.Load())
	assert.EqualValues(t, 2*(384+(len(ids[0])+15)/16*16), s.index.bytes.Load(), "the dropped timer's bytes are given back")
}

// TestLearnKeepsTheStateKnownOfTheSameCount: shown a state of the count it
// holds (another process changed the timer from the same token), the index
// keeps its own.
func TestLearnKeepsTheStateKnownOfTheSameCount(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 4)
	r, err := s.Create(Spec{RolloutID: "r"})
	require.NoError(t, err)
	mine, err := s.AddSpan(r.Timer, Span{Seconds: 1, Simulated: true})
	require.NoError(t, err)
	st, err := s.decode(r.Timer)
	require.NoError(t, err)
	st.seq, st.simulated = 1, 5e9 // the other process's change, of the same count
	s.index.learn(st, clk.Now().UnixNano())
	got, err := s.Read("r")
	require.NoError(t, err)
	assert.Equal(t, mine.Timer, got.Timer)
	assert.EqualValues(t, 1, s.index.count.Load())
}

// TestShardsAreChosenPerStore: two stores place one id in different shards
// for some ids, so that a client cannot aim at one shard's lock.
func TestShardsAreChosenPerStore(t *testing.T) {
	clk := &fakeClock{t: t0}
	a, b := newIndexedStore(t, clk, 0), newIndexedStore(t, clk, 0)
	index := func(s *Store, id string) int {
		for i := range s.index.shards {
			if &s.index.shards[i] == s.index.shard(id) {
				return i
			}
		}
		return -1
	}
	differ := 0
	for i := range 64 {
		id := fmt.Sprint(i)
		if index(a, id) != index(b, id) {
			differ++
		}
	}
	assert.Positive(t, differ)
}
