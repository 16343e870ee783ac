package timers

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
)

// rolloutIndex remembers, in shards to keep lock contention low, the
// newest state of each timer the Store issued or was shown, and which
// timer each rollout id names. It is bounded by its timers' count
// (Options.MaxRollouts) and by the bytes they take (Options.MaxIndexBytes:
// timerBytes each), across all shards. It forgets a timer only once the
// timer has expired, when its tokens are refused anyway: a full index
// refuses new timers (ErrFull) rather than forget a running one, whose
// older tokens would then be read at their word again.
//
// A state is kept without its token, which encode rebuilds byte for byte
// from it (a token has one spelling): for ids of 36 bytes that is about a
// third of what the token takes.
type rolloutIndex struct {
	shards   [64]indexShard
	seed     maphash.Seed // shard choice, unknown to clients
	maxCount int64
	maxBytes atomic.Int64
	count    atomic.Int64 // timers held, and reserved for timers being added
	bytes    atomic.Int64 // their timerBytes
}

type indexShard struct {
	mu     sync.RWMutex
	ids    map[string]timerKey // rollout id → the timer it names
	timers map[timerKey]entry  // timer → its newest state known here
	// soonest is at or before the expiry of every timer in the shard (a
	// timer removed since may have set it), so a shard whose soonest is
	// after now holds no expired timer: it is read without the lock.
	soonest atomic.Int64
}

// timerKey identifies a timer across its tokens: what no change alters.
type timerKey struct {
	start   int64
	seed    uint64
	rollout string
}

func (st *state) key() timerKey { return timerKey{st.start, st.seed, st.rollout} }

// entry is a timer's newest state known here, less what its key holds.
type entry struct {
	expires, measured, simulated, open, stopped int64
	alpha, jitter, limit                        float64
	seq                                         uint32
	spanOpen, halted                            bool
}

func entryOf(st state) entry {
	return entry{st.expires, st.measured, st.simulated, st.open, st.stopped, st.alpha, st.jitter, st.limit, st.seq, st.spanOpen, st.halted}
}

// state rebuilds the whole state of timer k.
func (e entry) state(k timerKey) state {
	return state{start: k.start, seed: k.seed, rollout: k.rollout, expires: e.expires, measured: e.measured,
		simulated: e.simulated, open: e.open, stopped: e.stopped, alpha: e.alpha, jitter: e.jitter, limit: e.limit,
		seq: e.seq, spanOpen: e.spanOpen, halted: e.halted}
}

// timerOverhead is what one timer takes in the index besides its rollout
// id's bytes: its entries in both maps (a key of 32 bytes and a state of
// 72; an id's string header and the key it names), 152 bytes, at the
// lowest load the maps' tables reach before they grow (7/16), and their
// control bytes. TestIndexBytesBoundMemory measures it.
const timerOverhead = 384

// timerBytes is what a timer with a rollout id of n bytes takes: the id
// is held in an allocation of its own, rounded up to 16 bytes.
func timerBytes(n int) int64 { return timerOverhead + int64(n+15)&^15 }

func (x *rolloutIndex) init(maxCount int, maxBytes int64) {
	x.seed = maphash.MakeSeed()
	x.maxCount = int64(maxCount)
	x.maxBytes.Store(maxBytes)
	for i := range x.shards {
		x.shards[i].ids = map[string]timerKey{}
		x.shards[i].timers = map[timerKey]entry{}
		x.shards[i].soonest.Store(math.MaxInt64)
	}
}

func (x *rolloutIndex) shard(id string) *indexShard {
	return &x.shards[maphash.String(x.seed, id)%uint64(len(x.shards))]
}

// reserve takes room for one more timer with a rollout id of n bytes,
// dropping expired timers when the index is full; it reports whether the
// timer fits. No shard lock may be held: dropping takes them.
func (x *rolloutIndex) reserve(n int, now int64) bool {
	if x.take(n) {
		return true
	}
	x.dropExpired(now)
	return x.take(n)
}

func (x *rolloutIndex) take(n int) bool {
	b := timerBytes(n)
	if x.count.Add(1) > x.maxCount {
		x.count.Add(-1)
		return false
	}
	if x.bytes.Add(b) > x.maxBytes.Load() {
		x.bytes.Add(-b)
		x.count.Add(-1)
		return false
	}
	return true
}

// unreserve gives back the room of one timer with a rollout id of n bytes.
func (x *rolloutIndex) unreserve(n int) {
	x.bytes.Add(-timerBytes(n))
	x.count.Add(-1)
}

// dropExpired removes the timers that expired before now from every shard
// that may hold one.
func (x *rolloutIndex) dropExpired(now int64) {
	for i := range x.shards {
		sh := &x.shards[i]
		if sh.soonest.Load() >= now {
			continue
		}
		sh.mu.Lock()
		soonest := int64(math.MaxInt64)
		for k, e := range sh.timers {
			if e.expires < now {
				x.forget(sh, k)
			} else {
				soonest = min(soonest, e.expires)
			}
		}
		sh.soonest.Store(soonest)
		sh.mu.Unlock()
	}
}

// get returns the newest state of the timer rollout id names.
func (x *rolloutIndex) get(id string) (state, bool) {
	if len(id) > maxRolloutID {
		return state{}, false
	}
	sh := x.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	k, ok := sh.ids[id]
	if !ok {
		return state{}, false
	}
	e, ok := sh.timers[k]
	return e.state(k), ok
}

// newest returns the newest state known of st's timer, when one is known
// that is not older than st; ok is false when st is newer than anything
// known, or its timer is unknown. Of two states with one change count
// (another process changed the timer from the same token as this one
// did), the one known here stays the newest.
func (x *rolloutIndex) newest(st state) (state, bool) {
	k := st.key()
	sh := x.shard(k.rollout)
	sh.mu.RLock()
	e, ok := sh.timers[k]
	sh.mu.RUnlock()
	if !ok || e.seq < st.seq {
		return state{}, false
	}
	return e.state(k), true
}

// learn remembers a state shown to the Store, unless a state as new is
// known by then, or the index has no room for it.
func (x *rolloutIndex) learn(st state, now int64) {
	if !x.reserve(len(st.rollout), now) {
		return
	}
	sh := x.shard(st.rollout)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.timers[st.key()]; ok {
		x.unreserve(len(st.rollout))
		if e.seq >= st.seq {
			return
		}
	}
	x.record(sh, st)
}

// record stores st as its timer's newest state, and as the timer of its
// rollout id when the id names it or nothing; sh's lock is held, and room
// for a timer it did not hold is reserved. It reports whether the timer is
// new to the index (if not, the caller gives its reservation back).
func (x *rolloutIndex) record(sh *indexShard, st state) bool {
	k := st.key()
	_, held := sh.timers[k]
	cur, bound := sh.ids[st.rollout]
	sh.timers[k] = entryOf(st)
	if !bound || cur == k {
		sh.ids[st.rollout] = k
	}
	sh.soonest.Store(min(sh.soonest.Load(), st.expires))
	return !held
}

// running reports whether rollout id names a running timer that has not
// expired.
func (x *rolloutIndex) running(id string, now int64) bool {
	sh := x.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.runs(id, now)
}

// runs is running with sh's lock held.
func (sh *indexShard) runs(id string, now int64) bool {
	if k, ok := sh.ids[id]; ok {
		if e, ok := sh.timers[k]; ok && !e.halted && e.expires >= now {
			return true
		}
	}
	return false
}

// claim binds rollout id to a new timer, unless a running timer that has
// not expired holds it; it reports whether it did. Room for the timer is
// reserved, and given back when the id is held.
func (x *rolloutIndex) claim(st state, now int64) bool {
	sh := x.shard(st.rollout)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.runs(st.rollout, now) {
		x.unreserve(len(st.rollout))
		return false
	}
	delete(sh.ids, st.rollout) // the id moves to the new timer
	if !x.record(sh, st) {
		x.unreserve(len(st.rollout))
	}
	return true
}

// soonest is when the first timer the index holds expires (or a time
// before it).
func (x *rolloutIndex) soonest() int64 {
	t := int64(math.MaxInt64)
	for i := range x.shards {
		t = min(t, x.shards[i].soonest.Load())
	}
	return t
}

// forget drops timer k, and its rollout id when the id names it, and gives
// its room back; sh's lock is held.
func (x *rolloutIndex) forget(sh *indexShard, k timerKey) {
	delete(sh.timers, k)
	if cur, ok := sh.ids[k.rollout]; ok && cur == k {
		delete(sh.ids, k.rollout)
	}
	x.unreserve(len(k.rollout))
}
