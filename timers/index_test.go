package timers

import (
	"fmt"
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

// TestIndexForgetsBeyondItsCapacity: with MaxRollouts 64 the index keeps one
// rollout id per part; a second id of the same part replaces the first,
// whose token keeps working.
func TestIndexForgetsBeyondItsCapacity(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 64)
	ids := sameShard(t, s, 2)
	first, err := s.Create(Spec{RolloutID: ids[0]})
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: ids[1]})
	require.NoError(t, err)
	assert.False(t, known(t, s, ids[0]), "the older id is forgotten")
	assert.True(t, known(t, s, ids[1]))
	got, err := s.Read(first.Timer)
	require.NoError(t, err, "a forgotten id's token still reads")
	assert.Equal(t, ids[0], got.RolloutID)

	// Over the whole index: 200 timers, at most 64 ids remembered.
	s = newIndexedStore(t, clk, 64)
	var remembered int
	var tokens []string
	for i := range 200 {
		r, err := s.Create(Spec{RolloutID: fmt.Sprintf("many-%d", i)})
		require.NoError(t, err)
		tokens = append(tokens, r.Timer)
	}
	for i := range 200 {
		if known(t, s, fmt.Sprintf("many-%d", i)) {
			remembered++
		}
		_, err := s.Read(tokens[i])
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, remembered, 64)
	assert.Positive(t, remembered)
}

// TestIndexBelowCapacityForgetsNothing: an index filled to a tenth of its
// capacity remembers every id, whether the capacity is given or the default.
func TestIndexBelowCapacityForgetsNothing(t *testing.T) {
	for _, tc := range []struct {
		maxRollouts, timers int
	}{
		{1024, 100},
		{0, 200}, // the default, 1<<20
	} {
		t.Run(fmt.Sprint(tc.maxRollouts), func(t *testing.T) {
			clk := &fakeClock{t: t0}
			s := newIndexedStore(t, clk, tc.maxRollouts)
			for i := range tc.timers {
				_, err := s.Create(Spec{RolloutID: fmt.Sprintf("r%d", i)})
				require.NoError(t, err)
			}
			for i := range tc.timers {
				got, err := s.Read(fmt.Sprintf("r%d", i))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("r%d", i), got.RolloutID)
			}
		})
	}
}

// TestIndexDropsExpiredIDsFirst: when a full part of the index takes a new
// id, ids of expired timers go before those of running ones.
func TestIndexDropsExpiredIDsFirst(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 128) // two ids per part
	ids := sameShard(t, s, 3)
	_, err := s.Create(Spec{RolloutID: ids[0], TTL: time.Minute})
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: ids[1], TTL: time.Hour})
	require.NoError(t, err)
	clk.Advance(time.Minute + time.Nanosecond)
	_, err = s.Read(ids[0])
	require.ErrorIs(t, err, ErrExpired, "the expired timer's id is still known before the part fills")

	_, err = s.Create(Spec{RolloutID: ids[2]})
	require.NoError(t, err)
	assert.False(t, known(t, s, ids[0]), "the expired id made room")
	assert.True(t, known(t, s, ids[1]), "the running timer's id is kept")
	assert.True(t, known(t, s, ids[2]))
}

// TestIndexKeepsTimersAtTheirExpiryInstant: a timer at its expiry instant is
// not expired, so a full part of the index treats it as running: only one
// id makes room for the new one.
func TestIndexKeepsTimersAtTheirExpiryInstant(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 128) // two ids per part
	ids := sameShard(t, s, 3)
	for _, id := range ids[:2] {
		_, err := s.Create(Spec{RolloutID: id, TTL: time.Minute})
		require.NoError(t, err)
	}
	clk.Advance(time.Minute)
	_, err := s.Create(Spec{RolloutID: ids[2]})
	require.NoError(t, err)
	var kept int
	for _, id := range ids[:2] {
		if known(t, s, id) {
			kept++
		}
	}
	assert.Equal(t, 1, kept)
	assert.True(t, known(t, s, ids[2]))
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

// TestIndexPartsStayWithinTheirShare: a part of the index holds no more
// timers and rollout ids than its share of MaxRollouts, whether they come
// from creations or from tokens shown to the store.
func TestIndexPartsStayWithinTheirShare(t *testing.T) {
	clk := &fakeClock{t: t0}
	issuer := newIndexedStore(t, clk, 128) // two per part
	ids := sameShard(t, issuer, 5)
	var tokens []string
	for _, id := range ids {
		r, err := issuer.Create(Spec{RolloutID: id})
		require.NoError(t, err)
		tokens = append(tokens, r.Timer)
		sh := issuer.index.shard(id)
		assert.LessOrEqual(t, len(sh.timers), 2)
		assert.LessOrEqual(t, len(sh.ids), 2)
	}
	reader := newIndexedStore(t, clk, 128)
	for i, tok := range tokens {
		_, err := reader.Read(tok)
		require.NoError(t, err)
		sh := reader.index.shard(ids[i])
		assert.LessOrEqual(t, len(sh.timers), 2, "after %d tokens shown", i+1)
		assert.LessOrEqual(t, len(sh.ids), 2, "after %d tokens shown", i+1)
	}
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

// TestIndexKeepsAnIDWhenItsEarlierTimerGoes: making room drops an expired
// timer of a rollout id, not the id, which names the id's newer timer.
func TestIndexKeepsAnIDWhenItsEarlierTimerGoes(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 128) // two timers per part
	ids := sameShard(t, s, 2)
	first, err := s.Create(Spec{RolloutID: ids[0], TTL: time.Minute})
	require.NoError(t, err)
	_, err = s.Stop(first.Timer)
	require.NoError(t, err)
	clk.Advance(2 * time.Minute) // the first timer has expired
	second, err := s.Create(Spec{RolloutID: ids[0]})
	require.NoError(t, err)
	// The part is full (the expired timer and the second); a new id makes
	// room by dropping the expired one.
	_, err = s.Create(Spec{RolloutID: ids[1]})
	require.NoError(t, err)
	got, err := s.Read(ids[0])
	require.NoError(t, err, "the id still names its running timer")
	assert.Equal(t, second.Timer, got.Timer)
	assert.True(t, known(t, s, ids[1]))
}

// TestIndexMakesRoomForTimersSharingAnID: timers that share a rollout id
// fill a part as any others do.
func TestIndexMakesRoomForTimersSharingAnID(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := newIndexedStore(t, clk, 128) // two timers per part
	ids := sameShard(t, s, 2)
	first, err := s.Create(Spec{RolloutID: ids[0]})
	require.NoError(t, err)
	_, err = s.Stop(first.Timer)
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: ids[0]}) // two timers, one id
	require.NoError(t, err)
	_, err = s.Create(Spec{RolloutID: ids[1]})
	require.NoError(t, err)
	sh := s.index.shard(ids[0])
	assert.LessOrEqual(t, len(sh.timers), 2)
	assert.LessOrEqual(t, len(sh.ids), len(sh.timers))
	assert.True(t, known(t, s, ids[1]))
}
