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
)

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
	// MaxRollouts bounds the rollout-id index (oldest entries beyond it are
	// forgotten; their tokens keep working).
	MaxRollouts int
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
	// real wall time and are removed from the scaled generation time;
	// simulated spans add latency that did not pass on the wall clock.
	Seconds   float64
	Simulated bool
	// Action "start" opens a measured span at the current time; "end"
	// closes it. Used instead of Seconds.
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
	Text        string    `json:"text"`
	ToolS       float64   `json:"tool_s"`
	SpeedFactor float64   `json:"speed_factor"`
	Jitter      float64   `json:"jitter"`
	TimeLimitS  float64   `json:"time_limit_s"`
	Stopped     bool      `json:"stopped"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Timer is the newest token of this timer.
	Timer string `json:"timer"`
}

// state is what a token carries. Times are Unix nanoseconds, any of which
// may be 0 (the Unix epoch) or before it: whether a span is open and whether
// the timer is stopped are flags of their own, not a zero time.
type state struct {
	start, expires int64
	measured       int64 // closed measured tool spans
	simulated      int64 // simulated tool latency
	open           int64 // start of the open measured span, when spanOpen (else 0)
	stopped        int64 // stop time, when halted (else 0)
	spanOpen       bool  // a measured span is open
	halted         bool  // the timer is stopped
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

// Token payloads: a version byte, ten 8-byte fields, then (version 2 only)
// a flags byte, then the rollout id. Version 1, the only one before Unix
// time 0 was a legal span start or stop time, reads a zero open or stopped
// time as "no span" and "running"; every state in which that reading is
// right is still written as version 1, byte for byte as before, so older
// replicas read those tokens and tokens they issued read the same here.
// Version 2 is written only for a span opened or a timer stopped at
// exactly Unix time 0, and says so in its flags.
const (
	tokenV1      = 1
	tokenV2      = 2
	fixedLen     = 1 + 10*8
	fixedLenV2   = fixedLen + 1
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
	secret := append([]byte(nil), opts.Secret...)
	s := &Store{opts: opts}
	s.macs.New = func() any { return hmac.New(sha256.New, secret) }
	s.index.init(opts.MaxRollouts)
	return s, nil
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
	tok := s.encode(st)
	if !s.index.claim(st.rollout, tok, st.expires, now) {
		return Reading{}, fmt.Errorf("%w: rollout_id %q: stop it with its token first, or use another id", ErrConflict, st.rollout)
	}
	return s.reading(st, tok, now), nil
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
	st, now, err := s.load(id)
	if err != nil {
		return 0, 0, err
	}
	return st.elapsed(now), st.limit, nil
}

// AddSpan records tool time and returns the reading with the new token.
// tok must be a token (ErrTokenRequired for a rollout id).
func (s *Store) AddSpan(tok string, sp Span) (Reading, error) {
	st, now, err := s.loadForChange(tok)
	if err != nil {
		return Reading{}, err
	}
	if st.halted {
		return Reading{}, specErrorf("timer", "the timer is stopped")
	}
	switch sp.Action {
	case "":
		if !(sp.Seconds >= 0 && sp.Seconds <= MaxToolSeconds) {
			return Reading{}, specErrorf("seconds", "%v is not in [0, %g]", sp.Seconds, MaxToolSeconds)
		}
		d := int64(sp.Seconds * 1e9)
		if d > maxToolNS-st.measured-st.simulated {
			return Reading{}, specErrorf("seconds", "the timer's tool time would pass %g s", MaxToolSeconds)
		}
		if sp.Simulated {
			st.simulated += d
		} else {
			st.measured += d
		}
	case "start":
		if st.spanOpen {
			return Reading{}, specErrorf("action", "a span is already open")
		}
		st.open, st.spanOpen = now, true
	case "end":
		if !st.spanOpen {
			return Reading{}, specErrorf("action", "no span is open")
		}
		st.measured = st.addTool(now - st.open)
		st.open, st.spanOpen = 0, false
	default:
		return Reading{}, specErrorf("action", "%q is not start or end", sp.Action)
	}
	return s.issue(st, now), nil
}

// Stop freezes the timer at the current reading and returns the reading
// with the frozen token. Stopping a stopped timer returns it unchanged.
// Earlier tokens stay readable until they expire: timers cannot be revoked
// without shared state.
//
// tok must be a token (ErrTokenRequired for a rollout id).
func (s *Store) Stop(tok string) (Reading, error) {
	st, now, err := s.loadForChange(tok)
	if err != nil {
		return Reading{}, err
	}
	if !st.halted {
		if st.spanOpen {
			st.measured = st.addTool(now - st.open)
			st.open, st.spanOpen = 0, false
		}
		st.stopped, st.halted = max(now, st.start), true
		return s.issue(st, now), nil
	}
	return s.reading(st, s.encode(st), now), nil
}

func (s *Store) issue(st state, now int64) Reading {
	tok := s.encode(st)
	s.index.put(st.rollout, tok, st.expires, st.halted, now)
	return s.reading(st, tok, now)
}

// loadForChange loads a timer named by its token for an operation that
// changes it.
func (s *Store) loadForChange(tok string) (state, int64, error) {
	if !strings.Contains(tok, ".") {
		if _, ok := s.index.get(tok); ok {
			return state{}, 0, ErrTokenRequired
		}
	}
	return s.load(tok)
}

func (s *Store) load(id string) (state, int64, error) {
	st, _, now, err := s.loadToken(id)
	return st, now, err
}

// loadToken resolves id (a token or a known rollout id) to the timer's
// state and token, checking signature and expiry.
func (s *Store) loadToken(id string) (state, string, int64, error) {
	now := s.opts.Now().UnixNano()
	if tok, ok := s.index.get(id); ok {
		id = tok
	} else if !strings.Contains(id, ".") {
		return state{}, "", 0, ErrNotFound
	}
	st, err := s.decode(id)
	if err != nil {
		return state{}, "", 0, err
	}
	if now > st.expires {
		return state{}, "", 0, ErrExpired
	}
	return st, id, now, nil
}

// addTool returns the measured tool time with d more of it, saturating so
// that measured and simulated time together stay within maxToolNS.
func (st *state) addTool(d int64) int64 {
	room := maxToolNS - st.measured - st.simulated
	return st.measured + min(max(0, d), room)
}

// valid reports whether a state's fields are within the bounds every
// operation keeps. A token signed by this code always is; one that is not
// (written before the bounds existed, or by a bug) is refused rather than
// read as a wrapped-around time.
func (st *state) valid() bool {
	return st.measured >= 0 && st.simulated >= 0 && st.measured <= maxToolNS-st.simulated &&
		st.expires > st.start && (!st.spanOpen || st.open >= st.start) &&
		(!st.halted || st.stopped >= st.start) &&
		st.alpha > 0 && st.alpha <= 1e6 && st.jitter >= 0 && st.jitter <= 1 &&
		st.limit >= 0 && !math.IsInf(st.limit, 1) && len(st.rollout) <= maxRolloutID
}

// elapsed is α·generation + measured + simulated tool time at now. An open
// span counts as if it ended at now, within the tool-time bound as its end
// would keep it.
func (st *state) elapsed(now int64) float64 {
	end := now
	if st.halted {
		end = st.stopped
	}
	measured := st.measured
	if st.spanOpen {
		measured = st.addTool(end - st.open)
	}
	gen := max(0, end-st.start-measured)
	return st.alpha*float64(gen)/1e9 + float64(measured+st.simulated)/1e9
}

func (s *Store) reading(st state, tok string, now int64) Reading {
	el := st.elapsed(now)
	rep := el
	if st.jitter > 0 {
		rep = max(0, el*(1+st.jitter*normal(st.seed^uint64(now))))
	}
	tool := st.measured + st.simulated
	if st.spanOpen && !st.halted {
		tool = st.addTool(now-st.open) + st.simulated
	}
	return Reading{
		RolloutID: st.rollout, ElapsedS: el, ReportedS: rep, Text: FormatSeconds(rep),
		ToolS: float64(tool) / 1e9, SpeedFactor: st.alpha, Jitter: st.jitter, TimeLimitS: st.limit,
		Stopped: st.halted, ExpiresAt: time.Unix(0, st.expires).UTC(), Timer: tok,
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
	buf := make([]byte, fixedLen, fixedLenV2+len(st.rollout)+macLen)
	buf[0] = tokenV1
	le := binary.LittleEndian
	for i, v := range [...]uint64{
		uint64(st.start), uint64(st.expires), uint64(st.measured), uint64(st.simulated),
		uint64(st.open), uint64(st.stopped), st.seed,
		math.Float64bits(st.alpha), math.Float64bits(st.jitter), math.Float64bits(st.limit),
	} {
		le.PutUint64(buf[1+8*i:], v)
	}
	if st.spanOpen != (st.open != 0) || st.halted != (st.stopped != 0) {
		buf[0] = tokenV2
		var flags byte
		if st.spanOpen {
			flags |= flagSpanOpen
		}
		if st.halted {
			flags |= flagHalted
		}
		buf = append(buf, flags)
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
	var pbuf [fixedLenV2 + maxRolloutID + 8]byte
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
	case tokenV2:
		// A flag that is off leaves its time 0, and no other bit is set, so
		// a state has one spelling in version 2 as well.
		if len(payload) < fixedLenV2 {
			return state{}, ErrInvalid
		}
		flags := payload[fixedLen]
		st.spanOpen, st.halted = flags&flagSpanOpen != 0, flags&flagHalted != 0
		if flags&^(flagSpanOpen|flagHalted) != 0 || !st.spanOpen && st.open != 0 || !st.halted && st.stopped != 0 {
			return state{}, ErrInvalid
		}
		st.rollout = string(payload[fixedLenV2:])
	default:
		return state{}, ErrInvalid
	}
	if !st.valid() {
		return state{}, ErrInvalid
	}
	return st, nil
}

// rolloutIndex maps rollout ids to their newest token, in shards to keep
// lock contention low. When a shard is full, expired entries are dropped,
// then arbitrary ones.
type rolloutIndex struct {
	shards [64]indexShard
	per    int
}

type indexShard struct {
	mu sync.RWMutex
	m  map[string]indexEntry
}

type indexEntry struct {
	token   string
	expires int64
	stopped bool
}

func (x *rolloutIndex) init(limit int) {
	x.per = max(1, limit/len(x.shards))
	for i := range x.shards {
		x.shards[i].m = map[string]indexEntry{}
	}
}

func (x *rolloutIndex) shard(id string) *indexShard {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return &x.shards[h%uint32(len(x.shards))]
}

func (x *rolloutIndex) get(id string) (string, bool) {
	if len(id) > maxRolloutID {
		return "", false
	}
	sh := x.shard(id)
	sh.mu.RLock()
	e, ok := sh.m[id]
	sh.mu.RUnlock()
	return e.token, ok
}

// put records tok as the newest token of rollout id.
func (x *rolloutIndex) put(id, tok string, expires int64, stopped bool, now int64) {
	sh := x.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	x.store(sh, id, indexEntry{token: tok, expires: expires, stopped: stopped}, now)
}

// claim binds rollout id to a new timer's token, unless a running timer
// that has not expired holds it; it reports whether it did.
func (x *rolloutIndex) claim(id, tok string, expires, now int64) bool {
	sh := x.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.m[id]; ok && !e.stopped && e.expires >= now {
		return false
	}
	x.store(sh, id, indexEntry{token: tok, expires: expires}, now)
	return true
}

// store sets an entry of sh, whose lock the caller holds, making room when
// the shard is full.
func (x *rolloutIndex) store(sh *indexShard, id string, e indexEntry, now int64) {
	if _, ok := sh.m[id]; !ok && len(sh.m) >= x.per {
		for k, e := range sh.m {
			if e.expires < now {
				delete(sh.m, k)
			}
		}
		for k := range sh.m {
			if len(sh.m) < x.per {
				break
			}
			delete(sh.m, k)
		}
	}
	sh.m[id] = e
}
