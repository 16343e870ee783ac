// Package seal makes tamper-evident tokens, so that a stateless service can
// hand a client its state and, when the client sends it back, know that the
// service wrote it and nobody changed it.
//
// A token is one unpadded base64url string (RFC 4648 §5) of a version byte,
// the payload and an HMAC-SHA256 tag over the version byte and the payload.
// The tag's key is derived from the secret and a purpose, so tokens of one
// purpose never open as tokens of another, nor as anything else signed with
// the same secret (the timers' tokens, say). Sealing signs, it does not
// encrypt: whoever holds a token can read its payload.
//
// Open takes untrusted input: it refuses a token longer than the longest one
// the Sealer writes before decoding anything, reads base64 strictly (no
// padding, no line breaks, no other alphabet, so a payload has exactly one
// token), and compares tags in constant time. Every refusal is ErrInvalid.
package seal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrInvalid is the error of a token that does not open: forged, edited,
// truncated or extended, sealed under another secret or purpose, or not a
// token at all. Open's errors wrap it.
var ErrInvalid = errors.New("seal: invalid token")

// ErrTooLarge is the error of a payload longer than the Sealer's maximum.
var ErrTooLarge = errors.New("seal: payload too large")

// MinSecretLen is the shortest secret New accepts.
const MinSecretLen = 16

// MaxPayloadLimit is the largest payload limit New accepts (1 GiB).
const MaxPayloadLimit = 1 << 30

// version is the first byte of every token this package writes.
const version = 1

// tagLen is the length of the tag: a whole HMAC-SHA256.
const tagLen = sha256.Size

// keyLabel begins the message that derives a purpose's key from the
// secret; the NUL keeps the label and the purpose apart.
const keyLabel = "timeaware seal v1\x00"

var b64 = base64.RawURLEncoding.Strict()

// Sealer seals and opens the tokens of one purpose under one secret. It is
// safe for concurrent use.
type Sealer struct {
	key        [sha256.Size]byte
	maxPayload int
	maxToken   int
}

// New returns a Sealer for tokens of purpose (a fixed name, e.g.
// "negotiation state") keyed by secret (at least MinSecretLen bytes; it is
// not retained) whose payloads are at most maxPayload bytes.
func New(secret []byte, purpose string, maxPayload int) (*Sealer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("seal: the secret must be at least %d bytes, not %d", MinSecretLen, len(secret))
	}
	if purpose == "" {
		return nil, errors.New("seal: a sealer needs a purpose")
	}
	if maxPayload < 0 || maxPayload > MaxPayloadLimit {
		return nil, fmt.Errorf("seal: a payload limit of %d bytes is not from 0 to %d", maxPayload, MaxPayloadLimit)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyLabel))
	m.Write([]byte(purpose))
	s := &Sealer{maxPayload: maxPayload, maxToken: b64.EncodedLen(1 + maxPayload + tagLen)}
	m.Sum(s.key[:0])
	return s, nil
}

// RandomSecret returns a fresh 32-byte secret, for a process whose tokens
// no other process need open.
func RandomSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// MaxTokenLen is the length of the token of the longest payload the Sealer
// takes: Open refuses anything longer unread.
func (s *Sealer) MaxTokenLen() int { return s.maxToken }

// Seal returns payload's token, or ErrTooLarge when payload is longer than
// the Sealer's maximum.
func (s *Sealer) Seal(payload []byte) (string, error) {
	if len(payload) > s.maxPayload {
		return "", fmt.Errorf("%w: %d bytes, the most is %d", ErrTooLarge, len(payload), s.maxPayload)
	}
	buf := make([]byte, 1, 1+len(payload)+tagLen)
	buf[0] = version
	buf = append(buf, payload...)
	tag := s.tag(buf)
	return b64.EncodeToString(append(buf, tag[:]...)), nil
}

// Open returns the payload of a token this Sealer (or one with the same
// secret and purpose) sealed. Anything else is an error wrapping
// ErrInvalid; input longer than MaxTokenLen is refused before it is
// decoded.
func (s *Sealer) Open(token string) ([]byte, error) {
	if len(token) > s.maxToken {
		return nil, fmt.Errorf("%w: %d characters, the most is %d", ErrInvalid, len(token), s.maxToken)
	}
	if len(token) < b64.EncodedLen(1+tagLen) {
		return nil, fmt.Errorf("%w: too short", ErrInvalid)
	}
	buf := make([]byte, b64.DecodedLen(len(token)))
	n, err := b64.Decode(buf, []byte(token))
	// The decoder skips CR and LF even when strict: a token longer than
	// its bytes' encoding had some.
	if err != nil || b64.EncodedLen(n) != len(token) {
		return nil, fmt.Errorf("%w: not unpadded base64url", ErrInvalid)
	}
	buf = buf[:n]
	body, got := buf[:n-tagLen], buf[n-tagLen:]
	want := s.tag(body)
	if !hmac.Equal(got, want[:]) {
		return nil, fmt.Errorf("%w: the tag does not match", ErrInvalid)
	}
	if body[0] != version {
		return nil, fmt.Errorf("%w: version %d", ErrInvalid, body[0])
	}
	return body[1:], nil
}

// tag is the tag of msg.
func (s *Sealer) tag(msg []byte) [tagLen]byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(msg)
	var t [tagLen]byte
	m.Sum(t[:0])
	return t
}
