package timers

import (
	"context"
	"encoding/base64"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock shared by stores in one test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var secret = []byte("a shared secret of enough bytes")

func newStore(t *testing.T, clk *fakeClock, key []byte) *Store {
	t.Helper()
	s, err := New(Options{Secret: key, Now: clk.Now, DefaultTTL: time.Hour, MaxTTL: 2 * time.Hour})
	require.NoError(t, err)
	return s
}

func TestElapsedScalesGenerationNotTools(t *testing.T) {
	tests := []struct {
		name  string
		alpha float64
		steps func(t *testing.T, s *Store, clk *fakeClock, tok string) string
		want  float64
	}{
		{"generation only, alpha 1", 1, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			clk.Advance(3 * time.Second)
			return tok
		}, 3},
		{"generation only, alpha 2.5", 2.5, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			clk.Advance(4 * time.Second)
			return tok
		}, 10},
		{"reported measured span is not scaled", 2, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 10 s of wall time, 4 of them in a tool: 2·6 + 4.
			clk.Advance(10 * time.Second)
			r, err := s.AddSpan(tok, Span{Seconds: 4})
			require.NoError(t, err)
			return r.Timer
		}, 16},
		{"simulated span adds latency", 0.5, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 6 s of wall time scaled by 0.5, plus 50 s of simulated tool latency.
			clk.Advance(6 * time.Second)
			r, err := s.AddSpan(tok, Span{Seconds: 50, Simulated: true})
			require.NoError(t, err)
			return r.Timer
		}, 53},
		{"measured start and end", 3, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 1 s generating, 5 s in a tool, 2 s generating: 3·3 + 5.
			clk.Advance(time.Second)
			r, err := s.AddSpan(tok, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(5 * time.Second)
			r, err = s.AddSpan(r.Timer, Span{Action: "end"})
			require.NoError(t, err)
			clk.Advance(2 * time.Second)
			return r.Timer
		}, 14},
		{"open span counts at the larger rate", 10, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 1 s generating, then a span open for 7 s: 10·1 + 10·7.
			clk.Advance(time.Second)
			r, err := s.AddSpan(tok, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(7 * time.Second)
			return r.Timer
		}, 80},
		{"stated span capped at the wall clock", 2, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 3 s of wall time; a span stated as 100 s claims the 3 s.
			clk.Advance(3 * time.Second)
			r, err := s.AddSpan(tok, Span{Seconds: 100})
			require.NoError(t, err)
			assert.InDelta(t, 3.0, r.ToolS, 1e-9)
			return r.Timer
		}, 3},
		{"stated spans share the wall clock", 4, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			// 10 s of wall time: spans of 6 s and 6 s claim 6 and 4; then
			// 2 s more, of which a span opened for 1 s leaves 1 to claim.
			clk.Advance(10 * time.Second)
			r, err := s.AddSpan(tok, Span{Seconds: 6})
			require.NoError(t, err)
			r, err = s.AddSpan(r.Timer, Span{Seconds: 6})
			require.NoError(t, err)
			assert.InDelta(t, 10.0, r.ToolS, 1e-9)
			clk.Advance(time.Second)
			r, err = s.AddSpan(r.Timer, Span{Action: "start"})
			require.NoError(t, err)
			clk.Advance(time.Second)
			r, err = s.AddSpan(r.Timer, Span{Seconds: 5})
			require.NoError(t, err)
			assert.InDelta(t, 11.0, r.ToolS, 1e-9)
			r, err = s.AddSpan(r.Timer, Span{Action: "end"})
			require.NoError(t, err)
			return r.Timer
		}, 12},
		{"stop freezes the reading", 2, func(t *testing.T, s *Store, clk *fakeClock, tok string) string {
			clk.Advance(2 * time.Second)
			r, err := s.Stop(tok)
			require.NoError(t, err)
			clk.Advance(time.Minute)
			return r.Timer
		}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{RolloutID: "r1", SpeedFactor: tc.alpha})
			require.NoError(t, err)
			tok := tc.steps(t, s, clk, r.Timer)
			got, err := s.Read(tok)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got.ElapsedS, 1e-9)
			assert.Equal(t, got.ElapsedS, got.ReportedS, "no jitter configured")
			el, _, err := s.Elapsed(context.Background(), tok)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, el, 1e-9)
		})
	}
}

func TestTokensAreReadByAnyStoreWithTheSecret(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a := newStore(t, clk, secret)
	r, err := a.Create(Spec{RolloutID: "rollout-7", SpeedFactor: 2, TimeLimitS: 30})
	require.NoError(t, err)
	clk.Advance(1500 * time.Millisecond)

	b := newStore(t, clk, secret) // another replica, or a restart
	got, err := b.Read(r.Timer)
	require.NoError(t, err)
	assert.Equal(t, "rollout-7", got.RolloutID)
	assert.InDelta(t, 3.0, got.ElapsedS, 1e-9)
	assert.Equal(t, "3.00 seconds.", got.Text)
	assert.Equal(t, 30.0, got.TimeLimitS)

	got, err = b.Read("rollout-7")
	require.NoError(t, err, "a rollout id is known where its timer's token was shown")
	assert.InDelta(t, 3.0, got.ElapsedS, 1e-9)
	_, err = newStore(t, clk, secret).Read("rollout-7")
	assert.ErrorIs(t, err, ErrNotFound, "and only there")
	got, err = a.Read("rollout-7")
	require.NoError(t, err)
	assert.InDelta(t, 3.0, got.ElapsedS, 1e-9)

	other := newStore(t, clk, []byte("some other secret, also long"))
	_, err = other.Read(r.Timer)
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestRolloutIDFollowsNewestToken(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	_, err := s.Create(Spec{RolloutID: "r"})
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	first, err := s.Read("r")
	require.NoError(t, err)
	_, err = s.AddSpan(first.Timer, Span{Seconds: 30, Simulated: true})
	require.NoError(t, err)
	got, err := s.Read("r")
	require.NoError(t, err)
	assert.InDelta(t, 32.0, got.ElapsedS, 1e-9)
	assert.InDelta(t, 30.0, got.ToolS, 1e-9)
}

func TestRolloutIDCannotChangeOrRebindATimer(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	own, err := s.Create(Spec{RolloutID: "victim", TTL: time.Minute})
	require.NoError(t, err)
	clk.Advance(3 * time.Second)

	_, err = s.AddSpan("victim", Span{Seconds: 100, Simulated: true})
	require.ErrorIs(t, err, ErrTokenRequired)
	_, err = s.Stop("victim")
	require.ErrorIs(t, err, ErrTokenRequired)
	_, err = s.Create(Spec{RolloutID: "victim"})
	require.ErrorIs(t, err, ErrConflict)
	assert.ErrorContains(t, err, `"victim"`)

	got, err := s.Read("victim")
	require.NoError(t, err, "reading by rollout id stays open")
	assert.Equal(t, own.Timer, got.Timer, "the id still names the first timer")
	assert.InDelta(t, 3.0, got.ElapsedS, 1e-9)
	assert.False(t, got.Stopped)

	// An unknown rollout id is still not found, not a token error.
	_, err = s.Stop("nobody")
	require.ErrorIs(t, err, ErrNotFound)

	// Once its owner stops it, or it expires, the id may start a new timer.
	_, err = s.Stop(own.Timer)
	require.NoError(t, err)
	again, err := s.Create(Spec{RolloutID: "victim", TTL: time.Minute})
	require.NoError(t, err)
	clk.Advance(2 * time.Minute)
	_, err = s.Create(Spec{RolloutID: "victim"})
	require.NoError(t, err, "the timer of %s expired", again.RolloutID)
}

func TestToolTimeIsBoundedAndNeverWraps(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{TimeLimitS: 10})
	require.NoError(t, err)
	tok := r.Timer
	var refused int
	for range 10 {
		rd, err := s.AddSpan(tok, Span{Seconds: 1e9, Simulated: true})
		if err != nil {
			require.ErrorIs(t, err, ErrBadSpec)
			assert.ErrorContains(t, err, "seconds")
			refused++
			continue
		}
		tok = rd.Timer
	}
	assert.Equal(t, 9, refused, "the first span reaches the bound; the rest would pass it")
	rd, err := s.Read(tok)
	require.NoError(t, err)
	assert.InDelta(t, MaxToolSeconds, rd.ElapsedS, 1)
	el, limit, err := s.Elapsed(context.Background(), tok)
	require.NoError(t, err)
	assert.Greater(t, el, limit, "a timer full of tool time is late, never on time")

	// An open span closed past the bound saturates instead of wrapping.
	open, err := s.AddSpan(tok, Span{Action: "start"})
	require.NoError(t, err)
	clk.Advance(time.Minute)
	closed, err := s.AddSpan(open.Timer, Span{Action: "end"})
	require.NoError(t, err)
	assert.InDelta(t, MaxToolSeconds, closed.ToolS, 1)
	assert.GreaterOrEqual(t, closed.ElapsedS, rd.ElapsedS)
	_, err = s.AddSpan(closed.Timer, Span{Seconds: 1, Simulated: true})
	require.ErrorIs(t, err, ErrBadSpec)
}

// TestReadingNeverGoesBack drives random spans, stops and clock steps at
// speed factors up to 1 (where a tool span only ever adds time) and checks
// that no reading is below the one before or below zero.
func TestReadingNeverGoesBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alpha := range []float64{0.25, 0.5, 1} {
		clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		s := newStore(t, clk, secret)
		r, err := s.Create(Spec{SpeedFactor: alpha})
		require.NoError(t, err)
		tok, last := r.Timer, 0.0
		for step := range 2000 {
			var rd Reading
			var err error
			switch rng.IntN(6) {
			case 0:
				clk.Advance(time.Duration(rng.Int64N(int64(2 * time.Second))))
				rd, err = s.Read(tok)
			case 1:
				secs := []float64{0, 1e-9, 0.5, 3600, 1e9, 5e8}[rng.IntN(6)]
				rd, err = s.AddSpan(tok, Span{Seconds: secs, Simulated: rng.IntN(2) == 0})
			case 2:
				rd, err = s.AddSpan(tok, Span{Action: "start"})
			case 3:
				rd, err = s.AddSpan(tok, Span{Action: "end"})
			case 4:
				clk.Advance(time.Duration(rng.Int64N(int64(time.Second))))
				rd, err = s.Read(tok)
			default:
				rd, err = s.Read(tok)
			}
			if err != nil {
				require.ErrorIs(t, err, ErrBadSpec, "step %d", step)
				continue
			}
			tok = rd.Timer
			// Readings are float64 seconds: allow the rounding of one ulp or so.
			require.GreaterOrEqual(t, rd.ElapsedS, last*(1-1e-12), "alpha %v step %d", alpha, step)
			require.GreaterOrEqual(t, rd.ElapsedS, 0.0)
			require.LessOrEqual(t, rd.ToolS, MaxToolSeconds+120, "alpha %v step %d", alpha, step)
			last = rd.ElapsedS
		}
	}
}

func TestOutOfBoundsTokensAreInvalid(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	now := clk.Now().UnixNano()
	good := state{start: now, expires: now + int64(time.Hour), alpha: 1, rollout: "r"}
	tests := []struct {
		name string
		edit func(st *state)
	}{
		{"wrapped measured", func(st *state) { st.measured = -6_400_000_000_000_000_000 }},
		{"negative simulated", func(st *state) { st.simulated = -1 }},
		{"sum past the bound", func(st *state) { st.measured, st.simulated = maxToolNS, 1 }},
		{"open before start", func(st *state) { st.open, st.spanOpen = st.start-1, true }},
		{"stopped before start", func(st *state) { st.stopped, st.halted = st.start-1, true }},
		{"expires before start", func(st *state) { st.expires = st.start - 1 }},
		{"expires at start", func(st *state) { st.expires = st.start }},
		{"speed factor past 1e6", func(st *state) { st.alpha = math.Nextafter(1e6, 2e6) }},
		{"negative jitter", func(st *state) { st.jitter = -0.5 }},
		{"infinite limit", func(st *state) { st.limit = math.Inf(1) }},
		{"rollout id past 256 bytes", func(st *state) { st.rollout = strings.Repeat("r", 257) }},
		{"zero speed factor", func(st *state) { st.alpha = 0 }},
		{"jitter above 1", func(st *state) { st.jitter = 2 }},
		{"negative limit", func(st *state) { st.limit = -1 }},
	}
	_, err := s.Read(s.encode(good))
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := good
			tc.edit(&st)
			_, err := s.Read(s.encode(st))
			assert.ErrorIs(t, err, ErrInvalid)
		})
	}
}

// otherSpellings returns the spellings of one part of a token that
// non-strict unpadded base64url decodes to the same bytes: the last
// character with any of its unused low bits set, and CR or LF inserted at
// any position (which even a strict decoder skips).
func otherSpellings(t *testing.T, part string) []string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	// A final group of 2 characters carries 1 byte (4 unused bits), one of
	// 3 carries 2 bytes (2 unused bits); a full group has none.
	unused := map[int]uint{0: 0, 2: 4, 3: 2}[len(part)%4]
	last := strings.IndexByte(alphabet, part[len(part)-1])
	require.GreaterOrEqual(t, last, 0)
	require.Zero(t, last&(1<<unused-1), "the canonical spelling has its unused bits clear")
	var out []string
	for low := 1; low < 1<<unused; low++ {
		out = append(out, part[:len(part)-1]+string(alphabet[last|low]))
	}
	for i := 0; i <= len(part); i++ {
		out = append(out, part[:i]+"\r"+part[i:], part[:i]+"\n"+part[i:])
	}
	return out
}

// TestTokenHasOneSpelling: a timer is accepted under its canonical token
// only; every other spelling of either part that lenient base64 decoding
// would read as the same bytes is refused.
func TestTokenHasOneSpelling(t *testing.T) {
	tests := []struct {
		name, rollout string
		unusedBits    int // in the payload's last character (the MAC's has 4)
	}{
		{"payload ends in one byte", "r", 4},
		{"payload ends in two bytes", "ro", 2},
		{"payload ends on a full group", "rol", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			s := newStore(t, clk, secret)
			r, err := s.Create(Spec{RolloutID: tc.rollout})
			require.NoError(t, err)
			payload, mac, ok := strings.Cut(r.Timer, ".")
			require.True(t, ok)

			_, err = s.Read(r.Timer)
			require.NoError(t, err, "the canonical token")

			type part struct{ canon, other, name string }
			var variants []part
			payloads := otherSpellings(t, payload)
			require.Len(t, payloads, 1<<tc.unusedBits-1+2*(len(payload)+1))
			for _, p := range payloads {
				variants = append(variants, part{payload, p, "payload"})
			}
			macs := otherSpellings(t, mac)
			require.Len(t, macs, 15+2*(len(mac)+1))
			for _, m := range macs {
				variants = append(variants, part{mac, m, "mac"})
			}
			for _, v := range variants {
				// The variant is a real second spelling: lenient decoding
				// reads it as the canonical part's bytes.
				want, err := base64.RawURLEncoding.DecodeString(v.canon)
				require.NoError(t, err)
				got, err := base64.RawURLEncoding.DecodeString(v.other)
				require.NoError(t, err, "%s %q", v.name, v.other)
				require.Equal(t, want, got, "%s %q", v.name, v.other)

				tok := payload + "." + v.other
				if v.name == "payload" {
					tok = v.other + "." + mac
				}
				_, err = s.Read(tok)
				assert.ErrorIs(t, err, ErrInvalid, "%s spelled %q", v.name, v.other)
			}
			_, err = s.Read(r.Timer)
			assert.NoError(t, err, "the canonical token after the variants")
		})
	}
}

func TestErrors(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{RolloutID: "x", TTL: time.Minute})
	require.NoError(t, err)

	forged := []byte(r.Timer)
	forged[3] ^= 1
	tests := []struct {
		name string
		run  func() error
		want error
		msg  string
	}{
		{"forged token", func() error { _, err := s.Read(string(forged)); return err }, ErrInvalid, ""},
		{"garbage token", func() error { _, err := s.Read("not.a-token"); return err }, ErrInvalid, ""},
		{"unknown rollout", func() error { _, err := s.Read("nobody"); return err }, ErrNotFound, ""},
		{"speed factor", func() error { _, err := s.Create(Spec{SpeedFactor: -1}); return err }, ErrBadSpec, "speed_factor"},
		{"jitter", func() error { _, err := s.Create(Spec{Jitter: 2}); return err }, ErrBadSpec, "jitter"},
		{"ttl over max", func() error { _, err := s.Create(Spec{TTL: 3 * time.Hour}); return err }, ErrBadSpec, "ttl_s"},
		{"long rollout id", func() error { _, err := s.Create(Spec{RolloutID: strings.Repeat("a", 300)}); return err }, ErrBadSpec, "rollout_id"},
		{"negative span", func() error { _, err := s.AddSpan(r.Timer, Span{Seconds: -1}); return err }, ErrBadSpec, "seconds"},
		{"end without start", func() error { _, err := s.AddSpan(r.Timer, Span{Action: "end"}); return err }, ErrBadSpec, "no span is open"},
		{"bad action", func() error { _, err := s.AddSpan(r.Timer, Span{Action: "pause"}); return err }, ErrBadSpec, "action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}

	t.Run("expired", func(t *testing.T) {
		clk.Advance(2 * time.Minute)
		_, err := s.Read(r.Timer)
		assert.ErrorIs(t, err, ErrExpired)
	})
	t.Run("short secret", func(t *testing.T) {
		_, err := New(Options{Secret: []byte("short")})
		assert.ErrorContains(t, err, "at least 16 bytes")
	})
}

func TestJitterIsBoundedAndVaries(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newStore(t, clk, secret)
	r, err := s.Create(Spec{Jitter: 0.1})
	require.NoError(t, err)
	seen := map[string]bool{}
	var sum float64
	const n = 2000
	for i := 0; i < n; i++ {
		clk.Advance(time.Millisecond)
		got, err := s.Read(r.Timer)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, got.ReportedS, 0.0)
		sum += got.ReportedS/got.ElapsedS - 1
		seen[got.Text] = true
	}
	assert.Greater(t, len(seen), n/10, "jitter should vary the shown value")
	assert.InDelta(t, 0, sum/n, 0.02, "jitter should be centred")
}

func TestFormatSeconds(t *testing.T) {
	assert.Equal(t, "3.42 seconds.", FormatSeconds(3.4212))
	assert.Equal(t, "0.00 seconds.", FormatSeconds(0))
	assert.Equal(t, "120.50 seconds.", FormatSeconds(120.5))
}

func FuzzReadToken(f *testing.F) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, err := New(Options{Secret: secret, Now: clk.Now})
	if err != nil {
		f.Fatal(err)
	}
	r, _ := s.Create(Spec{RolloutID: "seed"})
	f.Add(r.Timer)
	f.Add("")
	f.Add(".")
	f.Add("AAAA.AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := s.Read(tok)
		if err == nil && tok != r.Timer && tok != "seed" {
			// Only tokens this store signed may read successfully.
			again, err := s.Read(got.Timer)
			if err != nil || again.RolloutID != got.RolloutID {
				t.Fatalf("accepted %q but cannot re-read its token", tok)
			}
			// and only in their one canonical spelling.
			if st, err := s.decode(tok); err != nil || s.encode(st) != tok {
				t.Fatalf("accepted %q, which is not the canonical token of its timer", tok)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	s, err := New(Options{Secret: secret})
	require.NoError(b, err)
	r, err := s.Create(Spec{RolloutID: "bench-rollout-0001", SpeedFactor: 2, Jitter: 0.05})
	require.NoError(b, err)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Read(r.Timer); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSeededJitterIsReproducible: two timers with one seed, read at the same
// clock readings, show the same times; another seed shows other times.
func TestSeededJitterIsReproducible(t *testing.T) {
	shown := func(seed uint64) []string {
		clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		s := newStore(t, clk, secret)
		r, err := s.Create(Spec{Jitter: 0.2, Seed: seed})
		require.NoError(t, err)
		var out []string
		for range 20 {
			clk.Advance(1500 * time.Millisecond)
			got, err := s.Read(r.Timer)
			require.NoError(t, err)
			out = append(out, got.Text)
		}
		return out
	}
	a := shown(42)
	assert.Equal(t, a, shown(42))
	assert.NotEqual(t, a, shown(43))
	assert.NotEqual(t, a, shown(0), "seed 0 draws a random seed")
}
