package seal

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testSecret  = []byte("seal test secret, thirty-two b..")
	otherSecret = []byte("another secret of thirty-two b..")
)

func newSealer(t testing.TB, secret []byte, purpose string, maxPayload int) *Sealer {
	t.Helper()
	s, err := New(secret, purpose, maxPayload)
	require.NoError(t, err)
	return s
}

// handToken writes a token as the package documents the format, with the
// standard library alone: base64url(version ‖ payload ‖ HMAC(k, version ‖
// payload)), k = HMAC(secret, "timeaware seal v1" NUL purpose).
func handToken(secret []byte, purpose string, ver byte, payload []byte) string {
	kd := hmac.New(sha256.New, secret)
	kd.Write([]byte("timeaware seal v1\x00" + purpose))
	key := kd.Sum(nil)
	body := append([]byte{ver}, payload...)
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(m.Sum(body))
}

// TestTokenFormat pins the format, so that replicas of other builds open
// each other's tokens.
func TestTokenFormat(t *testing.T) {
	s := newSealer(t, testSecret, "negotiation state", 1<<10)
	for _, payload := range []string{"", "x", `{"a":1}`, "\x00\xff\x10 binary"} {
		tok, err := s.Seal([]byte(payload))
		require.NoError(t, err)
		assert.Equal(t, handToken(testSecret, "negotiation state", 1, []byte(payload)), tok, "%q", payload)
	}
}

func TestSealThenOpen(t *testing.T) {
	s := newSealer(t, testSecret, "p", 64)
	for _, payload := range [][]byte{{}, []byte("x"), bytes.Repeat([]byte{0xfe}, 63), bytes.Repeat([]byte("y"), 64)} {
		tok, err := s.Seal(payload)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(tok), s.MaxTokenLen())
		got, err := s.Open(tok)
		require.NoError(t, err, "%q", payload)
		assert.Equal(t, payload, got)
		// Another Sealer of the same secret and purpose opens it: a replica.
		got, err = newSealer(t, testSecret, "p", 64).Open(tok)
		require.NoError(t, err)
		assert.Equal(t, payload, got)
	}
	assert.Equal(t, len(handToken(testSecret, "p", 1, make([]byte, 64))), s.MaxTokenLen())
}

func TestSealRefusesLargePayloads(t *testing.T) {
	s := newSealer(t, testSecret, "p", 8)
	_, err := s.Seal(make([]byte, 9))
	require.ErrorIs(t, err, ErrTooLarge)
	assert.EqualError(t, err, "seal: payload too large: 9 bytes, the most is 8")
}

func TestOpenRefuses(t *testing.T) {
	s := newSealer(t, testSecret, "p", 64)
	payload := []byte(`{"points":10}`)
	tok, err := s.Seal(payload)
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	withRaw := func(edit func(b []byte) []byte) string {
		return base64.RawURLEncoding.EncodeToString(edit(append([]byte(nil), raw...)))
	}

	cases := []struct {
		name, token, why string
	}{
		{"empty", "", "too short"},
		{"a tag alone", base64.RawURLEncoding.EncodeToString(raw[1+len(payload):]), "too short"},
		{"other secret", handToken(otherSecret, "p", 1, payload), "the tag does not match"},
		{"other purpose", handToken(testSecret, "q", 1, payload), "the tag does not match"},
		{"other version, its tag right", handToken(testSecret, "p", 2, payload), "version 2"},
		{"edited payload", withRaw(func(b []byte) []byte { b[3] ^= 1; return b }), "the tag does not match"},
		{"edited tag", withRaw(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), "the tag does not match"},
		{"payload cut, tag kept", withRaw(func(b []byte) []byte { return append(b[:5], b[len(b)-tagLen:]...) }), "the tag does not match"},
		{"a byte appended", withRaw(func(b []byte) []byte { return append(b, 0) }), "the tag does not match"},
		{"padded", tok + "=", "not unpadded base64url"},
		{"padded twice", tok + "==", "not unpadded base64url"},
		{"a line break inside", tok[:10] + "\n" + tok[10:], "not unpadded base64url"},
		{"a CR at the end", tok + "\r", "not unpadded base64url"},
		{"a space inside", tok[:10] + " " + tok[10:], "not unpadded base64url"},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(tokenWithURLChars(t, s)), "not unpadded base64url"},
		{"not base64", strings.Repeat("!", len(tok)), "not unpadded base64url"},
		{"too long, unread", strings.Repeat("!", s.MaxTokenLen()+1), fmt.Sprintf("%d characters, the most is %d", s.MaxTokenLen()+1, s.MaxTokenLen())},
	}
	for i := 1; i < len(tok); i++ {
		cases = append(cases, struct{ name, token, why string }{"truncated", tok[:i], ""})
	}
	for _, tc := range cases {
		got, err := s.Open(tc.token)
		require.ErrorIs(t, err, ErrInvalid, "%s: %q", tc.name, tc.token)
		assert.Nil(t, got, tc.name)
		if tc.why != "" {
			assert.EqualError(t, err, "seal: invalid token: "+tc.why, tc.name)
		}
	}
}

// tokenWithURLChars returns a token of s whose text holds '-' or '_', the
// characters where base64url and standard base64 differ.
func tokenWithURLChars(t *testing.T, s *Sealer) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		tok, err := s.Seal([]byte{byte(i), byte(i >> 8)})
		require.NoError(t, err)
		if strings.ContainsAny(tok, "-_") {
			return tok
		}
	}
	t.Fatal("no token holds - or _")
	return ""
}

func TestEveryBitOfATokenCounts(t *testing.T) {
	s := newSealer(t, testSecret, "p", 64)
	tok, err := s.Seal([]byte("a state worth protecting"))
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	for i := range raw {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), raw...)
			b[i] ^= 1 << bit
			_, err := s.Open(base64.RawURLEncoding.EncodeToString(b))
			require.ErrorIs(t, err, ErrInvalid, "byte %d bit %d", i, bit)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secret  []byte
		purpose string
		max     int
		want    string
	}{
		{"short secret", testSecret[:15], "p", 1, "seal: the secret must be at least 16 bytes, not 15"},
		{"no secret", nil, "p", 1, "seal: the secret must be at least 16 bytes, not 0"},
		{"no purpose", testSecret, "", 1, "seal: a sealer needs a purpose"},
		{"negative limit", testSecret, "p", -1, "seal: a payload limit of -1 bytes is not from 0 to 1073741824"},
		{"limit too large", testSecret, "p", MaxPayloadLimit + 1, "seal: a payload limit of 1073741825 bytes is not from 0 to 1073741824"},
	} {
		_, err := New(tc.secret, tc.purpose, tc.max)
		assert.EqualError(t, err, tc.want, tc.name)
	}
	_, err := New(testSecret[:16], "p", MaxPayloadLimit)
	assert.NoError(t, err, "the bounds themselves are allowed")
}

func TestNewKeepsNoReferenceToTheSecret(t *testing.T) {
	secret := append([]byte(nil), testSecret...)
	s := newSealer(t, secret, "p", 16)
	tok, err := s.Seal([]byte("x"))
	require.NoError(t, err)
	for i := range secret {
		secret[i] = 0
	}
	_, err = s.Open(tok)
	require.NoError(t, err)
	tok2, err := s.Seal([]byte("x"))
	require.NoError(t, err)
	assert.Equal(t, tok, tok2)
}

func TestRandomSecret(t *testing.T) {
	a, b := RandomSecret(), RandomSecret()
	assert.Len(t, a, 32)
	assert.NotEqual(t, a, b)
	s := newSealer(t, a, "p", 16)
	tok, err := s.Seal([]byte("x"))
	require.NoError(t, err)
	_, err = newSealer(t, b, "p", 16).Open(tok)
	assert.True(t, errors.Is(err, ErrInvalid), "two random secrets do not open each other's tokens")
}

func TestConcurrentUse(t *testing.T) {
	s := newSealer(t, testSecret, "p", 64)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := []byte{byte(g), byte(i)}
				tok, err := s.Seal(p)
				if !assert.NoError(t, err) {
					return
				}
				got, err := s.Open(tok)
				if !assert.NoError(t, err) || !assert.Equal(t, p, got) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// FuzzOpen feeds Open untrusted text: it never panics, never returns more
// than the limit, and a token it opens is the one spelling of its payload.
func FuzzOpen(f *testing.F) {
	s := newSealer(f, testSecret, "p", 256)
	for _, p := range []string{"", "x", `{"transcript":[]}`, strings.Repeat("z", 256)} {
		tok, err := s.Seal([]byte(p))
		require.NoError(f, err)
		f.Add(tok)
		f.Add(tok[:len(tok)-1])
		f.Add(tok + "A")
		f.Add(tok[:20] + "\r\n" + tok[20:])
	}
	f.Add("")
	f.Add("====")
	f.Add(handToken(otherSecret, "p", 1, []byte("x")))
	f.Fuzz(func(t *testing.T, token string) {
		payload, err := s.Open(token)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			require.Nil(t, payload)
			return
		}
		require.LessOrEqual(t, len(payload), 256)
		again, err := s.Seal(payload)
		require.NoError(t, err)
		require.Equal(t, token, again, "an opened token is the one spelling of its payload")
	})
}

// FuzzSealOpen: any payload within the limit comes back as sealed, and a
// token with any one byte changed does not open.
func FuzzSealOpen(f *testing.F) {
	s := newSealer(f, testSecret, "p", 512)
	f.Add([]byte("x"), uint16(0), byte(1))
	f.Add([]byte{}, uint16(40), byte('A'))
	f.Add([]byte(`{"ground_truth":{},"transcript":[]}`), uint16(7), byte(0x20))
	f.Fuzz(func(t *testing.T, payload []byte, at uint16, to byte) {
		if len(payload) > 512 {
			payload = payload[:512]
		}
		tok, err := s.Seal(payload)
		require.NoError(t, err)
		got, err := s.Open(tok)
		require.NoError(t, err)
		require.Equal(t, payload, got)
		i := int(at) % len(tok)
		if tok[i] == to {
			return
		}
		edited := tok[:i] + string(rune(to)) + tok[i+1:]
		if to >= 0x80 {
			edited = tok[:i] + string([]byte{to}) + tok[i+1:]
		}
		_, err = s.Open(edited)
		require.ErrorIs(t, err, ErrInvalid, "%q", edited)
	})
}
