package splits

import (
	"unicode"
	"unicode/utf8"
)

// Normalize returns the form of a conversation text that the leakage gate
// compares: lower-cased (Unicode), without the time stamps the toolkit puts
// in front of messages ("[2025-12-04T10:22:44Z] " and
// "[2025-12-04T10:22:44Z; 2 minutes passed] ": any RFC 3339 time in square
// brackets, optionally followed by "; ... passed"), with every run of
// white space collapsed to one space and no leading or trailing space.
//
// Two texts that differ only in case, spacing or time stamps normalise to
// the same string.
func Normalize(text string) string {
	return string(appendNormalized(nil, text))
}

// Byte classes of appendNormalized's ASCII fast path.
const (
	nbCopy  = iota // kept as is
	nbUpper        // A-Z: lower-cased
	nbSpace        // ASCII white space
	nbOpen         // '[': may start a time stamp
	nbMulti        // first byte of a multi-byte (or invalid) UTF-8 sequence
)

var normClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = nbMulti
		case 'A' <= c && c <= 'Z':
			t[c] = nbUpper
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			t[c] = nbSpace
		case c == '[':
			t[c] = nbOpen
		}
	}
	return t
}()

// appendNormalized appends Normalize(text) to dst without the intermediate
// strings, so that the gate's workers can reuse one buffer.
func appendNormalized(dst []byte, text string) []byte {
	start := len(dst)
	space := false // a space is owed before the next non-space character
	for i := 0; i < len(text); {
		c := text[i]
		switch normClass[c] {
		case nbCopy:
			// Copy the whole run of bytes that need no change.
			j := i + 1
			for j < len(text) && normClass[text[j]] == nbCopy {
				j++
			}
			if space {
				dst = append(dst, ' ')
				space = false
			}
			dst = append(dst, text[i:j]...)
			i = j
			continue
		case nbSpace:
			space = len(dst) > start
			i++
			continue
		case nbOpen:
			if n := stampLen(text[i:]); n > 0 {
				i += n
				continue
			}
		case nbUpper:
			c += 'a' - 'A'
		case nbMulti:
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			if unicode.IsSpace(r) {
				space = len(dst) > start
				continue
			}
			if space {
				dst = append(dst, ' ')
				space = false
			}
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
			continue
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = append(dst, c)
		i++
	}
	return dst
}

// maxStampNote bounds the "; ... passed" part of a time stamp, so that a
// stray '[' cannot make the scanner read far ahead.
const maxStampNote = 200

// stampLen returns the length of the time stamp at the start of s, or 0
// when s does not start with one. A stamp is "[" RFC 3339 date-time, then
// either "]" or ";" text ending in "passed" and "]".
func stampLen(s string) int {
	// [2025-12-04T10:22:44Z]: at least 22 bytes.
	if len(s) < 22 || s[0] != '[' {
		return 0
	}
	i := 1
	digits := func(n int) bool {
		if i+n > len(s) {
			return false
		}
		for j := i; j < i+n; j++ {
			if s[j] < '0' || s[j] > '9' {
				return false
			}
		}
		i += n
		return true
	}
	lit := func(chars string) bool {
		if i < len(s) {
			for k := 0; k < len(chars); k++ {
				if s[i] == chars[k] {
					i++
					return true
				}
			}
		}
		return false
	}
	if !digits(4) || !lit("-") || !digits(2) || !lit("-") || !digits(2) ||
		!lit("Tt ") || !digits(2) || !lit(":") || !digits(2) || !lit(":") || !digits(2) {
		return 0
	}
	if lit(".") { // a fraction: one digit or more
		if !digits(1) {
			return 0
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	switch {
	case lit("Zz"):
	case lit("+-"):
		if !digits(2) || !lit(":") || !digits(2) {
			return 0
		}
	default:
		return 0
	}
	if lit("]") {
		return i
	}
	if !lit(";") {
		return 0
	}
	end := i
	for end < len(s) && s[end] != ']' && s[end] != '\n' {
		if end-i > maxStampNote {
			return 0
		}
		end++
	}
	if end >= len(s) || s[end] != ']' || !endsWithPassed(s[i:end]) {
		return 0
	}
	return end + 1
}

// endsWithPassed reports whether note, without trailing spaces, ends in the
// word "passed" (any case).
func endsWithPassed(note string) bool {
	for len(note) > 0 && (note[len(note)-1] == ' ' || note[len(note)-1] == '\t') {
		note = note[:len(note)-1]
	}
	const word = "passed"
	if len(note) < len(word) {
		return false
	}
	for k := 0; k < len(word); k++ {
		c := note[len(note)-len(word)+k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[k] {
			return false
		}
	}
	return true
}
