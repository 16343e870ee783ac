package splits

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalizeCases are texts and their normal forms, worked out by hand.
var normalizeCases = []struct {
	name, in, want string
}{
	{"empty", "", ""},
	{"only space", " \t\n\r ", ""},
	{"lower case and trim", "  Hello World  ", "hello world"},
	{"whitespace runs", "a\t\tb\n\nc \r\n d", "a b c d"},
	{"stamp", "[2025-12-04T10:22:44Z] What is the tide?", "what is the tide?"},
	{"stamp with delta", "[2025-12-04T10:22:44Z; 2 minutes passed] And now?", "and now?"},
	{"stamp with long delta", "[2025-12-04T10:22:44Z; 1 day, 3 hours and 2 minutes passed] x", "x"},
	{"stamps on every message", "[2025-12-04T10:22:44Z] Hi\n[2025-12-04T10:24:44Z; 2 minutes passed] Again",
		"hi again"},
	{"fraction and offset", "[2025-12-04T10:22:44.123+01:00] A", "a"},
	{"negative offset and delta", "[2025-12-04T10:22:44-05:30; 90 seconds passed] B", "b"},
	{"lower-case t and z", "[2025-12-04t10:22:44z] C", "c"},
	{"stamp mid text", "before [2025-12-04T10:22:44Z] after", "before after"},
	{"not a stamp: no zone", "[2025-12-04T10:22:44] x", "[2025-12-04t10:22:44] x"},
	{"not a stamp: date only", "[2025-12-04] x", "[2025-12-04] x"},
	{"not a stamp: note without passed", "[2025-12-04T10:22:44Z; later] x", "[2025-12-04t10:22:44z; later] x"},
	{"not a stamp: unclosed", "[2025-12-04T10:22:44Z x", "[2025-12-04t10:22:44z x"},
	{"brackets kept", "see [1] and [note]", "see [1] and [note]"},
	{"unicode case", "ÉCOLE Straße ΣΟΦΙΑ İstanbul", "école straße σοφια istanbul"},
	{"unicode spaces", "a\u00a0\u2003b\u3000c", "a b c"},
	{"invalid utf-8", "A\xffB", "a\ufffdb"},
	{"leading and trailing unicode space", "\u00a0\u2003Abc\u3000", "abc"},
	{"space between date and time", "[2025-12-04 10:22:44Z] x", "x"},
	{"only a stamp of 22 bytes", "[2025-12-04T10:22:44Z]", ""},
	{"stamp ending the text", "x [2019-09-29T19:59:59Z]", "x"},
	{"every digit 0 and 9", "[2009-09-09T09:09:09.9090+09:09] y", "y"},
	{"long fraction", "[2025-12-04T10:22:44.0123456789Z] y", "y"},
	{"digits end at the end of the text", "a [2025-12-04T10:22:44.123", "a [2025-12-04t10:22:44.123"},
	{"offset cut short at the end", "a [2025-12-04T10:22:44+01:", "a [2025-12-04t10:22:44+01:"},
	{"offset without the bracket at the end", "a [2025-12-04T10:22:44+01:00", "a [2025-12-04t10:22:44+01:00"},
	{"not a stamp: a slash for a digit", "[2025-1/-04T10:22:44Z] x", "[2025-1/-04t10:22:44z] x"},
	{"not a stamp: a colon for a digit", "[2025-12-04T1::22:44Z] x", "[2025-12-04t1::22:44z] x"},
	{"not a stamp: digits after the seconds without a dot", "[2025-12-04T10:22:4401Z] x", "[2025-12-04t10:22:4401z] x"},
	{"not a stamp: a dot without a fraction", "[2025-12-04T10:22:44.Z] x", "[2025-12-04t10:22:44.z] x"},
	{"not a stamp: another separator", "[2025-12-04X10:22:44Z] x", "[2025-12-04x10:22:44z] x"},
	{"not a stamp: another zone letter", "[2025-12-04T10:22:44Y] x", "[2025-12-04t10:22:44y] x"},
	{"not a stamp: neither bracket nor note", "[2025-12-04T10:22:44Z, later] x", "[2025-12-04t10:22:44z, later] x"},
	{"a bracket ending the text", "a [", "a ["},
	{"note ending the text", "[2025-12-04T10:22:44Z; 2 minutes passed", "[2025-12-04t10:22:44z; 2 minutes passed"},
	{"note of only spaces", "[2025-12-04T10:22:44Z;   ] x", "[2025-12-04t10:22:44z; ] x"},
	{"note of only passed", "[2025-12-04T10:22:44Z;passed] x", "x"},
	{"note of a shorter word", "[2025-12-04T10:22:44Z;assed] x", "[2025-12-04t10:22:44z;assed] x"},
	{"passed in capitals, then a tab and spaces", "[2025-12-04T10:22:44Z; 3 Minutes PASSED \t ] x", "x"},
	{"passed in mixed case", "[2025-12-04T10:22:44Z; 1 hour pAssEd] x", "x"},
	{"passed then a dot", "[2025-12-04T10:22:44Z; 1 hour passed.] x", "[2025-12-04t10:22:44z; 1 hour passed.] x"},
	{"passes, not passed", "[2025-12-04T10:22:44Z; 1 hour passeS] x", "[2025-12-04t10:22:44z; 1 hour passes] x"},
	{"new line in the note", "[2025-12-04T10:22:44Z; 2\nminutes passed] x", "[2025-12-04t10:22:44z; 2 minutes passed] x"},
	{"note of 201 bytes", "[2025-12-04T10:22:44Z;" + strings.Repeat("n", 194) + " passed] x", "x"},
	{"note of 202 bytes", "[2025-12-04T10:22:44Z;" + strings.Repeat("n", 195) + " passed] x",
		"[2025-12-04t10:22:44z;" + strings.Repeat("n", 195) + " passed] x"},
	{"two stamps in a row", "[2025-12-04T10:22:44Z][2025-12-04T10:22:45Z; 1 second passed]A", "a"},
}

func TestNormalize(t *testing.T) {
	for _, tt := range normalizeCases {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

// TestReferenceNormalize checks the tests' own normalisation (refNormalize,
// behind gtJaccard) on the hand-worked cases.
func TestReferenceNormalize(t *testing.T) {
	for _, tt := range normalizeCases {
		assert.Equal(t, tt.want, refNormalize(tt.in), tt.name)
	}
}

// ntStamp returns a random time stamp: any digits, any of the three
// date-time separators, a fraction or not, any zone, and a note or not.
func ntStamp(rng *rand.Rand) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	s := "[" + digits(4) + "-" + digits(2) + "-" + digits(2) + string("Tt "[rng.IntN(3)]) +
		digits(2) + ":" + digits(2) + ":" + digits(2)
	if rng.IntN(3) == 0 {
		s += "." + digits(1+rng.IntN(9))
	}
	switch rng.IntN(4) {
	case 0:
		s += "Z"
	case 1:
		s += "z"
	default:
		s += string("+-"[rng.IntN(2)]) + digits(2) + ":" + digits(2)
	}
	notes := []string{
		"", "", " 2 minutes passed", "passed", " 1 DAY PASSED \t ", " later", "   ", " 2\nminutes passed",
		" passed.", strings.Repeat("n", 194) + " passed", strings.Repeat("n", 195) + " passed",
		strings.Repeat("x", 190+rng.IntN(20)) + " Passed",
	}
	if note := notes[rng.IntN(len(notes))]; note != "" {
		s += ";" + note
	}
	return s + "]"
}

// TestNormalizeMatchesReference compares Normalize with refNormalize, and
// Fingerprint with FNV-1a of the normal form, on random texts of words,
// white space, stamps and stamps cut short or with a byte changed.
func TestNormalizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	pieces := []func() string{
		func() string {
			return []string{"Word", "tide", "ÉCOLE", "Straße", "İx", "14:05", "a]b"}[rng.IntN(7)]
		},
		func() string {
			return []string{" ", "\t", "\n", "\r\n", "\v\f", "\u00a0", "\u2003", "\u0085"}[rng.IntN(8)]
		},
		func() string { return []string{"[", "]", "[1]", "\xff", "\xe2\x80"}[rng.IntN(5)] },
		func() string { return ntStamp(rng) },
		func() string { s := ntStamp(rng); return s[:rng.IntN(len(s))] },
		func() string {
			b := []byte(ntStamp(rng))
			b[rng.IntN(len(b))] = "/:09aZT ;]\n["[rng.IntN(12)]
			return string(b)
		},
	}
	for n := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))]())
		}
		text := b.String()
		want := refNormalize(text)
		require.Equal(t, want, Normalize(text), "text %d: %q", n, text)
		h := fnv.New64a()
		h.Write([]byte(want))
		require.Equal(t, h.Sum64(), Fingerprint(text), "text %d: %q", n, text)
	}
}

// TestHashWords checks the gate's one-pass hashing of a normalised text
// against FNV-1a of the whole and of each word.
func TestHashWords(t *testing.T) {
	fnv64 := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	}
	for _, norm := range []string{"", "one", "two words", "école straße σοφια", "a b c d e f g h"} {
		t.Run(fmt.Sprintf("%q", norm), func(t *testing.T) {
			var want []uint64
			for _, w := range strings.Fields(norm) {
				want = append(want, fnv64(w))
			}
			fp, words := hashWords([]byte(norm), []uint64{42})
			assert.Equal(t, fnv64(norm), fp)
			assert.Equal(t, append([]uint64{42}, want...), words, "appended to what was there")
		})
	}
}

func TestNormalizeSameText(t *testing.T) {
	a := "[2025-12-04T10:22:44Z] When is HIGH tide?\n[2025-12-04T10:22:50Z] It is at 14:05."
	b := "  [2026-01-01T00:00:00Z; 3 hours passed]   when is high TIDE?   [2026-01-01T00:01:00Z]\tit is at 14:05.  "
	assert.Equal(t, Normalize(a), Normalize(b))
	assert.Equal(t, Fingerprint(a), Fingerprint(b))
	assert.NotEqual(t, Fingerprint(a), Fingerprint(a+" more"))
}

func FuzzNormalize(f *testing.F) {
	f.Add("[2025-12-04T10:22:44Z; 2 minutes passed] Hello  World")
	f.Add("ÉCOLE\u00a0x [2025")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		assert.NotContains(t, n, "  ")
		assert.Equal(t, strings.TrimSpace(n), n)
		if !strings.Contains(s, "[") && utf8.ValidString(s) {
			assert.Equal(t, strings.Join(strings.Fields(strings.ToLower(s)), " "), n)
		}
	})
}
