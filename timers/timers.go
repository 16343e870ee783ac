// Package timers implements the per-rollout timers of Timely-RL (the Timely Machine paper,
// App. A.2.1): a timer reports how long one rollout has taken, with the
// model's generation time scaled by a speed factor α (to simulate faster or
// slower hardware), tool time unscaled, and optional jitter on the value the
// model is shown.
//
// A timer's whole state travels in a token signed with HMAC-SHA256. Any
// process holding the secret can read a token, so timers survive restarts
// and work behind a load balancer across replicas without shared storage;
// replicas need roughly synchronised clocks (NTP), since a reading compares
// the creating replica's start time with the reading replica's clock.
// Tokens are immutable: an operation that changes a timer (a tool span, a
// stop) returns a new token, and the caller keeps the newest.
//
// A token is a capability, not the whole truth: each carries a change
// count, and a Store remembers the newest state of every timer it has
// issued or been shown. Presented with an older token of such a timer, it
// reads and changes the newest state instead, so replaying an old token
// neither drops the spans added since nor revives a stopped timer, and two
// changes made with the same token both count (changes to one timer are
// serialised). What a Store cannot know is what another process issued and
// never showed it: a replica that has not seen a timer's newest token, or a
// process restarted since, takes the token it is shown at its word, once
// (from then on it knows it). Route a rollout's calls to one replica
// (sticky sessions by rollout id) to close that gap too.
//
// A Store holds each timer it issued or was shown until the timer expires,
// within a bound on their count and their memory (Options.MaxRollouts,
// MaxIndexBytes); while it is full it refuses new timers (ErrFull) rather
// than forget a running one, whose older tokens it would then read at their
// word again.
//
// A Store also remembers the newest token of each rollout it has seen, so a
// client on the same replica may read a timer by its rollout id alone.
// Changing a timer (a span, a stop) needs its token, and a rollout id stays
// bound to its timer while that timer runs, so a client that knows only
// another rollout's id can neither stop that timer nor re-bind the id to a
// timer of its own.
package timers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Errors returned by Store methods; the service maps them to HTTP statuses.
var (
	// ErrInvalid means a token is malformed or its signature does not match
	// (a forged token, or one signed with another secret).
	ErrInvalid = errors.New("invalid timer token")
	// ErrExpired means the timer's TTL has passed.
	ErrExpired = errors.New("timer expired")
	// ErrNotFound means a rollout id names no timer known to this process.
	ErrNotFound = errors.New("no timer for this rollout id on this replica")
	// ErrBadSpec means a create or span request has an invalid field.
	ErrBadSpec = errors.New("invalid timer request")
	// ErrTokenRequired means an operation that changes a timer named it by
	// rollout id: only the holder of a timer's token may add spans to it or
	// stop it.
	ErrTokenRequired = errors.New("changing a timer needs its token, not its rollout id")
	// ErrConflict means a create named a rollout id that a running timer on
	// this replica already has.
	ErrConflict = errors.New("a running timer already has this rollout id")
	// ErrFull means the Store holds as many timers as its index allows
	// (Options.MaxRollouts and MaxIndexBytes), none of them expired: a new
	// timer, or a change to one it was never shown, waits until one
	// expires (see FullError).
	ErrFull = errors.New("the timer index is full")
)

// FullError is an ErrFull saying when the first timer held expires.
type FullError struct {
	// RetryAfter is the time until the first timer held expires, rounded
	// up to the second (at least one): no room is made before then.
	RetryAfter time.Duration
}

func (e *FullError) Error() string {
	return fmt.Sprintf("%v: no timer expires for %v; raise timers.max_rollouts or timers.index_bytes, or give timers shorter ttls", ErrFull, e.RetryAfter)
}

// Unwrap makes a FullError match ErrFull.
func (e *FullError) Unwrap() error { return ErrFull }

// SpecError is an ErrBadSpec naming the request field at fault.
type SpecError struct {
	Field string
	msg   string
}

func (e *SpecError) Error() string { return ErrBadSpec.Error() + ": " + e.Field + ": " + e.msg }

// Unwrap makes a SpecError match ErrBadSpec.
func (e *SpecError) Unwrap() error { return ErrBadSpec }

func specErrorf(field, format string, args ...any) error {
	return &SpecError{Field: field, msg: fmt.Sprintf(format, args...)}
}

// OptionError is the error of an invalid Options field, named by the
// field (Secret, DefaultTTL), so that a caller can say where the user set
// it.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string { return "timers: " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// Options configures a Store.
type Options struct {
	// Secret keys the token signatures; replicas that share it read each
	// other's timers. At least 16 bytes.
	Secret []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DefaultTTL applies when a spec has none; MaxTTL caps any TTL.
	DefaultTTL, MaxTTL time.Duration
	// MaxRollouts bounds the timers the Store holds (default 1,048,576), and
	// MaxIndexBytes the memory they take (default 256 MiB; a timer takes
	// 384 bytes and its rollout id's). A timer is held from its creation, or
	// from when the Store is first shown one of its tokens, until it
	// expires; while the Store is full, new timers are refused (ErrFull).
	MaxRollouts   int
	MaxIndexBytes int64
	// MeasuredSpansOnly refuses measured tool spans stated by the client
	// (Span.Seconds without Simulated): tool time then comes only from
	// spans the Store measures between a start and an end. A stated span
	// is capped at the wall time, but with α > 1 it still turns α·s of
	// generation time into s of tool time: set this where the clients are
	// not trusted with the time they spend in tools.
	MeasuredSpansOnly bool
}

// Spec describes a timer to create.
type Spec struct {
	// RolloutID names the rollout; empty means a random id is generated.
	RolloutID string
	// SpeedFactor α scales generation time; 0 means 1.
	SpeedFactor float64
	// Jitter is the relative standard deviation of the noise on the value
	// shown to the model (0 to 1).
	Jitter float64
	// TTL is how long the timer lives; 0 means the store's default.
	TTL time.Duration
	// TimeLimitS is the rollout's budget, carried for rewards; 0 means none.
	TimeLimitS float64
	// Seed seeds the jitter; 0 means a random seed. Given a seed and a
	// clock, the readings are reproducible: an evaluation replayed from its
	// cache shows the model the same times.
	Seed uint64
}

// Span reports time spent in tools.
type Span struct {
	// Seconds is a closed span's length. Measured spans (the default) took
	// real wall time and are removed from the scaled generation time, so a
	// measured span is capped at the wall time since the timer started that
	// no other span has claimed: a client cannot state more tool time than
	// passed. Simulated spans add latency that did not pass on the wall
	// clock (they only ever lengthen the elapsed time).
	Seconds   float64
	Simulated bool
	// Action "start" opens a measured span at the current time; "end"
	// closes it, and the service's own clock measures it. Used instead of
	// Seconds. A span that is open counts as whichever of generation and
	// tool time makes the reading longer, and one still open when the
	// timer stops never becomes tool time: leaving a span open cannot
	// shorten a rollout.
	Action string
}

// Reading is a timer's state at one moment.
type Reading struct {
	RolloutID string `json:"rollout_id"`
	// ElapsedS is α·generation + tool time: what rewards use.
	ElapsedS float64 `json:"elapsed_s"`
	// ReportedS is ElapsedS with jitter: what the model is shown.
	ReportedS float64 `json:"reported_s"`
	// Text renders ReportedS for the model, e.g. "3.42 seconds.".
	Text        string  `json:"text"`
	ToolS       float64 `json:"tool_s"`
	SpeedFactor float64 `json:"speed_factor"`
	Jitter      float64 `json:"jitter"`
	TimeLimitS  float64 `json:"time_limit_s"`
	Stopped     bool    `json:"stopped"`
	// StartedAt is when the timer was created: with the rollout id, it
	// tells one timer from another created later under the same id.
	StartedAt time.Time `json:"started_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Timer is the newest token of this timer.
	Timer string `json:"timer"`
}

// state is what a token carries. Times are Unix nanoseconds, any of which
// may be 0 (the Unix epoch) or before it: whether a span is open and whether
// the timer is stopped are flags of their own, not a zero time.
type state struct {
	start, expires int64
	measured       int64  // closed measured tool spans
	simulated      int64  // simulated tool latency
	open           int64  // start of the open measured span, when spanOpen (else 0)
	stopped        int64  // stop time, when halted (else 0)
	spanOpen       bool   // a measured span is open
	halted         bool   // the timer is stopped
	seq            uint32 // changes since creation (spans, the stop)
	seed           uint64
	alpha, jitter  float64
	limit          float64
	rollout        string
}

// MaxToolSeconds bounds a timer's total tool time, measured and simulated
// spans together (about 31.7 years). Spans that would pass it are refused,
// so the nanosecond sums in a token can never overflow and a reading can
// never wrap below zero.
const MaxToolSeconds = 1e9

const maxToolNS = int64(MaxToolSeconds * 1e9)

// Token payloads: a version byte, ten 8-byte fields, then (versions 2 and
// 3) a flags byte, then (version 3) the change count, 4 bytes, then the
// rollout id. Version 1, the only one before Unix time 0 was a legal span
// start or stop time, reads a zero open or stopped time as "no span" and
// "running"; a timer that has not changed since its creation is still
// written as version 1 (or 2, below), byte for byte as before, so older
// replicas read those tokens and tokens they issued read the same here.
// Version 2 is written only for a span opened or a timer stopped at
// exactly Unix time 0, and says so in its flags. Version 3 is written for
// every timer that has changed: older replicas refuse it.
const (
	tokenV1      = 1
	tokenV2      = 2
	tokenV3      = 3
	fixedLen     = 1 + 10*8
	fixedLenV2   = fixedLen + 1
	fixedLenV3   = fixedLenV2 + 4
	flagSpanOpen = 1 << 0 // version 2: a span is open
	flagHalted   = 1 << 1 // version 2: the timer is stopped
	macLen       = 16     // HMAC-SHA256 truncated to 128 bits
	maxRolloutID = 256
)

// Store issues and reads timers. It is safe for concurrent use.
type Store struct {
	opts  Options
	macs  sync.Pool
	index rolloutIndex
}

// New returns a Store, checking the options; a bad one is an
// *OptionError.
func New(opts Options) (*Store, error) {
	if len(opts.Secret) < 16 {
		return nil, &OptionError{Field: "Secret", Err: errors.New("the secret must be at least 16 bytes")}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = time.Hour
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = 24 * time.Hour
	}
	if opts.DefaultTTL > opts.MaxTTL {
		return nil, &OptionError{Field: "DefaultTTL", Err: fmt.Errorf("default ttl %v exceeds max ttl %v", opts.DefaultTTL, opts.MaxTTL)}
	}
	if opts.MaxRollouts <= 0 {
		opts.MaxRollouts = 1 << 20
	}
	if opts.MaxIndexBytes <= 0 {
		opts.MaxIndexBytes = 256 << 20
	}
	secret := append([]byte(nil), opts.Secret...)
	s := &Store{opts: opts}
	s.macs.New = func() any { return hmac.New(sha256.New, secret) }
	s.index.init(opts.MaxRollouts, opts.MaxIndexBytes)
	return s, nil
}

// Held reports the timers the Store holds, the bytes its index counts for
// them, and the bound on those bytes (Options.MaxIndexBytes).
func (s *Store) Held() (timers, bytes, maxBytes int64) {
	return s.index.count.Load(), s.index.bytes.Load(), s.index.maxBytes.Load()
}

// SetMaxIndexBytes bounds the bytes of the Store's index anew, as
// Options.MaxIndexBytes does (n > 0), for a caller that learns its memory
// limit after it made the Store. Timers held past a lower bound stay until
// they expire; no new one is held until they fit.
func (s *Store) SetMaxIndexBytes(n int64) {
	if n > 0 {
		s.index.maxBytes.Store(n)
	}
}

// RandomSecret returns a fresh 32-byte secret, for a single process that
// need not share its timers.
func RandomSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// Create starts a timer now.
func (s *Store) Create(spec Spec) (Reading, error) {
	if spec.RolloutID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		spec.RolloutID = "r-" + hex.EncodeToString(b[:])
	}
	if len(spec.RolloutID) > maxRolloutID {
		return Reading{}, specErrorf("rollout_id", "longer than %d bytes", maxRolloutID)
	}
	if spec.SpeedFactor == 0 {
		spec.SpeedFactor = 1
	}
	switch {
	case !(spec.SpeedFactor > 0 && spec.SpeedFactor <= 1e6):
		return Reading{}, specErrorf("speed_factor", "%v is not in (0, 1e6]", spec.SpeedFactor)
	case !(spec.Jitter >= 0 && spec.Jitter <= 1):
		return Reading{}, specErrorf("jitter", "%v is not in [0, 1]", spec.Jitter)
	case !(spec.TimeLimitS >= 0 && spec.TimeLimitS < math.Inf(1)):
		return Reading{}, specErrorf("time_limit_s", "%v is not a non-negative number", spec.TimeLimitS)
	case spec.TTL < 0:
		return Reading{}, specErrorf("ttl_s", "must not be negative")
	}
	if spec.TTL == 0 {
		spec.TTL = s.opts.DefaultTTL
	}
	if spec.TTL > s.opts.MaxTTL {
		return Reading{}, specErrorf("ttl_s", "%v exceeds the maximum %v", spec.TTL.Seconds(), s.opts.MaxTTL.Seconds())
	}
	now := s.opts.Now().UnixNano()
	seed := spec.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	// A TTL past the last instant a token can hold (in 2262) expires then,
	// rather than wrapping around to a time before the start.
	expires := now + int64(spec.TTL)
	if expires < now {
		expires = math.MaxInt64
	}
	st := state{
		start: now, expires: expires,
		seed:  seed,
		alpha: spec.SpeedFactor, jitter: spec.Jitter, limit: spec.TimeLimitS,
		rollout: spec.RolloutID,
	}
	conflict := fmt.Errorf("%w: rollout_id %q: stop it with its token first, or use another id", ErrConflict, st.rollout)
	if !s.index.reserve(len(st.rollout), now) {
		if s.index.running(st.rollout, now) {
			return Reading{}, conflict
		}
		return Reading{}, s.full(now)
	}
	if !s.index.claim(st, now) {
		return Reading{}, conflict
	}
	return s.reading(st, s.encode(st), now), nil
}

// full is the ErrFull of a Store whose index has no room at now.
func (s *Store) full(now int64) error {
	wait := time.Duration(s.index.soonest() - now)
	return &FullError{RetryAfter: max(time.Second, (wait + time.Second - 1).Truncate(time.Second))}
}

// Read returns the timer's reading now. id is a token, or a rollout id
// whose timer this Store created or saw.
func (s *Store) Read(id string) (Reading, error) {
	st, tok, now, err := s.loadToken(id)
	if err != nil {
		return Reading{}, err
	}
	return s.reading(st, tok, now), nil
}

// Elapsed returns the measured seconds and the time limit of the timer a
// token (or known rollout id) names; it makes a Store a rewards.TimeSource.
func (s *Store) Elapsed(_ context.Context, id string) (elapsedS, limitS float64, err error) {
	st, _, now, err := s.loadToken(id)
	if err != nil {
		return 0, 0, err
	}
	return st.elapsed(now), st.limit, nil
}

// maxChanges bounds a timer's change count, which its tokens carry.
const maxChanges = math.MaxUint32

// AddSpan records tool time and returns the reading with the new token.
// tok must be a token (ErrTokenRequired for a rollout id); an older token
// of the timer changes its newest state.
func (s *Store) AddSpan(tok string, sp Span) (Reading, error) {
	if sp.Action == "" && !(sp.Seconds >= 0 && sp.Seconds <= MaxToolSeconds) {
		return Reading{}, specErrorf("seconds", "%v is not in [0, %g]", sp.Seconds, MaxToolSeconds)
	}
	if sp.Action != "" && sp.Action != "start" && sp.Action != "end" {
		return Reading{}, specErrorf("action", "%q is not start or end", sp.Action)
	}
	if sp.Action == "" && !sp.Simulated && s.opts.MeasuredSpansOnly {
		return Reading{}, specErrorf("seconds", "this service measures tool time itself (timers.measured_spans_only): send {\"action\": \"start\"} before the tool call and {\"action\": \"end\"} after it")
	}
	return s.change(tok, func(st *state, now int64) error {
		if st.halted {
			return specErrorf("timer", "the timer is stopped")
		}
		if sp.Action == "start" {
			if st.spanOpen {
				return specErrorf("action", "a span is already open")
			}
			st.open, st.spanOpen = now, true
			return nil
		}
		if sp.Action == "end" {
			if !st.spanOpen {
				return specErrorf("action", "no span is open")
			}
			st.measured = st.addTool(now - st.open)
			st.open, st.spanOpen = 0, false
			return nil
		}
		d := int64(sp.Seconds * 1e9)
		if d > maxToolNS-st.measured-st.simulated {
			return specErrorf("seconds", "the timer's tool time would pass %g s", MaxToolSeconds)
		}
		if sp.Simulated {
			st.simulated += d
		} else {
			// Measured time passed on the wall clock: no more of it than
			// the wall time no other span has claimed.
			st.measured += min(d, st.unclaimed(now))
		}
		return nil
	})
}

// Stop freezes the timer at the current reading and returns the reading
// with the frozen token. Stopping a stopped timer returns it unchanged. A
// span still open is not closed: its time never becomes tool time.
// Earlier tokens of the timer read the stopped state on this Store, and on
// any Store that has been shown a later token than theirs (see the package
// comment).
//
// tok must be a token (ErrTokenRequired for a rollout id).
func (s *Store) Stop(tok string) (Reading, error) {
	return s.change(tok, func(st *state, now int64) error {
		if st.halted {
			return errUnchanged
		}
		st.stopped, st.halted = max(now, st.start), true
		return nil
	})
}

// errUnchanged tells change that an operation left the timer as it was.
var errUnchanged = errors.New("unchanged")

// change applies op to the newest state of the timer tok names, under the
// lock of its part of the index, and issues the result. op returns
// errUnchanged to issue nothing.
func (s *Store) change(tok string, op func(st *state, now int64) error) (Reading, error) {
	if !strings.Contains(tok, ".") {
		if _, ok := s.index.get(tok); ok {
			return Reading{}, ErrTokenRequired
		}
	}
	st, tok, now, err := s.open(tok)
	if err != nil {
		return Reading{}, err
	}
	// Room, should the timer be new here: a change to a timer the index
	// cannot hold would leave its older tokens to be read at their word.
	reserved := s.index.reserve(len(st.rollout), now)
	sh := s.index.shard(st.rollout)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, held := sh.timers[st.key()]
	if held && reserved {
		s.index.unreserve(len(st.rollout))
		reserved = false
	}
	if !held && !reserved {
		return Reading{}, s.full(now)
	}
	if held && st.counted() && e.seq >= st.seq {
		if newest := e.state(st.key()); newest != st {
			st, tok = newest, s.encode(newest)
		}
	}
	if err := op(&st, now); err != nil {
		if reserved {
			s.index.unreserve(len(st.rollout))
		}
		if errors.Is(err, errUnchanged) {
			return s.reading(st, tok, now), nil
		}
		return Reading{}, err
	}
	if st.seq == maxChanges {
		if reserved {
			s.index.unreserve(len(st.rollout))
		}
		return Reading{}, specErrorf("timer", "the timer has changed %d times, the most a token can count", uint32(maxChanges))
	}
	st.seq++
	s.index.record(sh, st)
	return s.reading(st, s.encode(st), now), nil
}

// open resolves id (a token or a known rollout id) to a state and its
// token, checking signature and expiry.
func (s *Store) open(id string) (state, string, int64, error) {
	now := s.opts.Now().UnixNano()
	st, ok := s.index.get(id)
	if ok {
		id = s.encode(st)
	} else if !strings.Contains(id, ".") {
		return state{}, "", 0, ErrNotFound
	} else {
		var err error
		if st, err = s.decode(id); err != nil {
			return state{}, "", 0, err
		}
	}
	if now > st.expires {
		return state{}, "", 0, ErrExpired
	}
	return st, id, now, nil
}

// loadToken resolves id (a token or a known rollout id) to the newest state
// of its timer that this Store knows, and that state's token, checking
// signature and expiry. A token newer than any this Store knew of its timer
// is remembered.
func (s *Store) loadToken(id string) (state, string, int64, error) {
	st, id, now, err := s.open(id)
	if err != nil {
		return state{}, "", 0, err
	}
	if !st.counted() {
		return st, id, now, nil
	}
	newest, ok := s.index.newest(st)
	if !ok {
		s.index.learn(st, now)
		return st, id, now, nil
	}
	if newest != st {
		return newest, s.encode(newest), now, nil
	}
	return st, id, now, nil
}

// addTool returns the measured tool time with d more of it, saturating so
// that measured and simulated time together stay within maxToolNS.
func (st *state) addTool(d int64) int64 {
	room := maxToolNS - st.measured - st.simulated
	return st.measured + min(max(0, d), room)
}

// counted reports whether a state's change count orders it among its
// timer's states: a timer never changed, or one changed by this version.
// A token of an earlier version that records changes counts none, so it
// is read at its word (and its change here is counted from then on).
func (st *state) counted() bool {
	return st.seq > 0 || st.measured == 0 && st.simulated == 0 && !st.spanOpen && !st.halted
}

// unclaimed is the wall time from the start to now that neither the closed
// measured spans nor the open one account for.
func (st *state) unclaimed(now int64) int64 {
	free := now - st.start - st.measured
	if st.spanOpen {
		free -= now - st.open
	}
	return max(0, free)
}

// valid reports whether a state's fields are within the bounds every
// operation keeps. A token signed by this code always is; one that is not
// (written before the bounds existed, or by a bug) is refused rather than
// read as a wrapped-around time.
func (st *state) valid() bool {
	return st.measured >= 0 && st.simulated >= 0 && st.measured <= maxToolNS-st.simulated &&
		st.expires > st.start && (!st.spanOpen || st.open >= st.start) &&
		(!st.halted || st.stopped >= st.start) && (!st.spanOpen || !st.halted || st.open <= st.stopped) &&
		st.alpha > 0 && st.alpha <= 1e6 && st.jitter >= 0 && st.jitter <= 1 &&
		st.limit >= 0 && !math.IsInf(st.limit, 1) && len(st.rollout) <= maxRolloutID
}

// elapsed is α·generation + measured + simulated tool time at now. An open
// span (or one left open when the timer stopped) counts at the larger of
// the two rates, α for generation and 1 for tools, so that opening a span
// never shortens the reading: with α ≤ 1 the reading is the one ending
// the span now would freeze (within the tool-time bound, as its end would
// keep it), with α > 1 it is as if the span were generation, and ending it
// reprices it as tool time.
func (st *state) elapsed(now int64) float64 {
	end := now
	if st.halted {
		end = st.stopped
	}
	var fit int64 // what ending the open span now would add to the tool time
	if st.spanOpen {
		fit = st.addTool(end-st.open) - st.measured
	}
	gen := max(0, end-st.start-st.measured-fit)
	return st.alpha*float64(gen)/1e9 + float64(st.measured+st.simulated)/1e9 + max(st.alpha, 1)*float64(fit)/1e9
}

func (s *Store) reading(st state, tok string, now int64) Reading {
	el := st.elapsed(now)
	rep := el
	if st.jitter > 0 {
		rep = max(0, el*(1+st.jitter*normal(st.seed^uint64(now))))
	}
	return Reading{
		RolloutID: st.rollout, ElapsedS: el, ReportedS: rep, Text: FormatSeconds(rep),
		ToolS: float64(st.measured+st.simulated) / 1e9, SpeedFactor: st.alpha, Jitter: st.jitter, TimeLimitS: st.limit,
		Stopped: st.halted, StartedAt: time.Unix(0, st.start).UTC(), ExpiresAt: time.Unix(0, st.expires).UTC(), Timer: tok,
	}
}

// FormatSeconds renders a duration for the model: "3.42 seconds.".
func FormatSeconds(sec float64) string {
	b := make([]byte, 0, 24)
	b = strconv.AppendFloat(b, sec, 'f', 2, 64)
	return string(append(b, " seconds."...))
}

// normal returns a standard normal deviate derived from x (Box–Muller over
// two splitmix64 outputs), so a reading's jitter needs no shared state.
func normal(x uint64) float64 {
	a, b := splitmix(x), splitmix(x+0x9e3779b97f4a7c15)
	u1 := (float64(a>>11) + 0.5) / (1 << 53)
	u2 := float64(b>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// b64 encodes a token's two parts. Decoding is strict (a last character
// whose unused low bits are set is refused) and decode checks each part's
// length (the decoder skips CR and LF even when strict), so a signed timer
// has exactly one accepted spelling.
var b64 = base64.RawURLEncoding.Strict()

func (s *Store) encode(st state) string {
	buf := make([]byte, fixedLen, fixedLenV3+len(st.rollout)+macLen)
	buf[0] = tokenV1
	le := binary.LittleEndian
	for i, v := range [...]uint64{
		uint64(st.start), uint64(st.expires), uint64(st.measured), uint64(st.simulated),
		uint64(st.open), uint64(st.stopped), st.seed,
		math.Float64bits(st.alpha), math.Float64bits(st.jitter), math.Float64bits(st.limit),
	} {
		le.PutUint64(buf[1+8*i:], v)
	}
	if st.seq > 0 || st.spanOpen != (st.open != 0) || st.halted != (st.stopped != 0) {
		buf[0] = tokenV2
		var flags byte
		if st.spanOpen {
			flags |= flagSpanOpen
		}
		if st.halted {
			flags |= flagHalted
		}
		buf = append(buf, flags)
		if st.seq > 0 {
			buf[0] = tokenV3
			buf = le.AppendUint32(buf, st.seq)
		}
	}
	buf = append(buf, st.rollout...)
	mac := s.sign(buf)
	out := make([]byte, b64.EncodedLen(len(buf))+1+b64.EncodedLen(macLen))
	b64.Encode(out, buf)
	n := b64.EncodedLen(len(buf))
	out[n] = '.'
	b64.Encode(out[n+1:], mac[:macLen])
	return string(out)
}

func (s *Store) sign(payload []byte) [sha256.Size]byte {
	h := s.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(payload)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	s.macs.Put(h)
	return sum
}

func (s *Store) decode(tok string) (state, error) {
	dot := strings.IndexByte(tok, '.')
	if dot < 0 || len(tok) > 2*(fixedLen+maxRolloutID+macLen) {
		return state{}, ErrInvalid
	}
	var pbuf [fixedLenV3 + maxRolloutID + 8]byte
	var mbuf [macLen + 8]byte
	if b64.DecodedLen(dot) > len(pbuf) || b64.DecodedLen(len(tok)-dot-1) != macLen {
		return state{}, ErrInvalid
	}
	// A part longer than its bytes' encoding had CR or LF in it.
	n, err := b64.Decode(pbuf[:], []byte(tok[:dot]))
	if err != nil || b64.EncodedLen(n) != dot {
		return state{}, ErrInvalid
	}
	payload := pbuf[:n]
	m, err := b64.Decode(mbuf[:], []byte(tok[dot+1:]))
	if err != nil || m != macLen || b64.EncodedLen(m) != len(tok)-dot-1 {
		return state{}, ErrInvalid
	}
	mac := mbuf[:m]
	want := s.sign(payload)
	if !hmac.Equal(mac, want[:macLen]) {
		return state{}, ErrInvalid
	}
	if len(payload) < fixedLen {
		return state{}, ErrInvalid
	}
	le := binary.LittleEndian
	u := func(i int) uint64 { return le.Uint64(payload[1+8*i:]) }
	st := state{
		start: int64(u(0)), expires: int64(u(1)), measured: int64(u(2)), simulated: int64(u(3)),
		open: int64(u(4)), stopped: int64(u(5)), seed: u(6),
		alpha: math.Float64frombits(u(7)), jitter: math.Float64frombits(u(8)), limit: math.Float64frombits(u(9)),
	}
	switch payload[0] {
	case tokenV1:
		st.spanOpen, st.halted = st.open != 0, st.stopped != 0
		st.rollout = string(payload[fixedLen:])
	case tokenV2, tokenV3:
		// A flag that is off leaves its time 0, and no other bit is set, so
		// a state has one spelling in versions 2 and 3 as well; version 3
		// holds a change count above 0 (with none, the state is written
		// as version 1 or 2).
		rest := fixedLenV2
		if payload[0] == tokenV3 {
			rest = fixedLenV3
		}
		if len(payload) < rest {
			return state{}, ErrInvalid
		}
		flags := payload[fixedLen]
		st.spanOpen, st.halted = flags&flagSpanOpen != 0, flags&flagHalted != 0
		if flags&^(flagSpanOpen|flagHalted) != 0 || !st.spanOpen && st.open != 0 || !st.halted && st.stopped != 0 {
			return state{}, ErrInvalid
		}
		if payload[0] == tokenV3 {
			st.seq = le.Uint32(payload[fixedLenV2:])
			if st.seq == 0 {
				return state{}, ErrInvalid
			}
		}
		st.rollout = string(payload[rest:])
	default:
		return state{}, ErrInvalid
	}
	if !st.valid() {
		return state{}, ErrInvalid
	}
	return st, nil
}
