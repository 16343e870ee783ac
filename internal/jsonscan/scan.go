// Package jsonscan is the project's one JSON tokenizer: a strict (RFC 8259)
// scanner over a byte slice that reads strings, numbers and literals in
// place and skips values without building them. The decoders that need more
// speed than encoding/json's reflection (JSONL datasets, the leakage gate's
// column paths) drive it with their own logic for what a value means.
//
// It is also the one place that words the errors of the JSON decoders
// (encoding/json, goccy/go-json) and of YAML's for the person who wrote the
// text: the path of the value at fault, what was wanted and what was found
// in JSON's terms, the byte where a text stops being JSON; never a Go type
// name (Explain, ExplainRecords, ExplainYAML).
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// End is what Peek returns at the end of the input.
const End = -1

// MaxDepth bounds the nesting that SkipValue accepts, as encoding/json's
// does.
const MaxDepth = 10000

// ErrEndOfInput is wrapped by the errors for input that stops inside a
// value.
var ErrEndOfInput = errors.New("unexpected end of input")

// ErrEndOfLine is ErrEndOfInput (errors.Is says so) as a scanner reset by
// ResetLine words it: a JSONL line that stops inside a value.
var ErrEndOfLine error = endOfLine{}

type endOfLine struct{}

func (endOfLine) Error() string        { return "unexpected end of line" }
func (endOfLine) Is(target error) bool { return target == ErrEndOfInput }

// SyntaxError marks errors of JSON syntax, as opposed to values a caller
// does not accept.
type SyntaxError struct{ Err error }

func (e SyntaxError) Error() string { return e.Err.Error() }
func (e SyntaxError) Unwrap() error { return e.Err }

// ErrTooDeep, ErrTooLong and ErrTooManyMembers are wrapped by the errors of
// input past the scanner's limits (Scanner.MaxDepth, Scanner.MaxString,
// Scanner.MaxMembers).
var (
	ErrTooDeep        = errors.New("exceeded max depth")
	ErrTooLong        = errors.New("string too long")
	ErrTooManyMembers = errors.New("too many members in one object")
)

// ErrInvalidUTF8 and ErrLoneSurrogate are the errors of strings that a
// strict scanner refuses (Scanner.StrictUTF8, Scanner.StrictSurrogates)
// instead of replacing with U+FFFD as encoding/json does.
var (
	ErrInvalidUTF8   = errors.New("invalid UTF-8 in string")
	ErrLoneSurrogate = errors.New("lone surrogate in string")
)

// Scanner reads one JSON text held in memory. The zero value is ready after
// Reset.
type Scanner struct {
	// MaxDepth bounds the nesting SkipValue accepts (0: the package's
	// MaxDepth); MaxString bounds a string's decoded bytes (0: no bound).
	MaxDepth, MaxString int
	// StrictUTF8 and StrictSurrogates make invalid UTF-8 and lone
	// surrogate escapes errors instead of U+FFFD: for fast decoders that
	// leave such input to a general one.
	StrictUTF8, StrictSurrogates bool
	// RefuseDuplicates makes an object that holds two members of one name
	// (ignoring case, see DuplicateKeyError) an error, in SkipValue and in
	// the objects a caller reads with BeginObject, ReadKey and EndObject:
	// for decoders whose choice of one of the values would be an accident.
	// The check keeps up to 22 bytes a name of the objects being read;
	// MaxMembers bounds the members of any one of them (0: no bound), past
	// which the check returns ErrTooManyMembers.
	RefuseDuplicates bool
	MaxMembers       int

	b   []byte
	pos int
	str []byte // unescaped strings
	end error  // ErrEndOfInput or ErrEndOfLine
	// aliased: the last string read is a slice of the input.
	aliased bool

	// The duplicate check: the names of the objects being read, innermost
	// last, the tables of those too large to compare name by name, and
	// buffers for names read again and folded.
	keys        []keyRef
	tables      []keyTable
	again       []byte
	fold, fold2 []byte
}

// Reset starts reading b from its first byte.
func (s *Scanner) Reset(b []byte) {
	s.b, s.pos, s.end = b, 0, ErrEndOfInput
	s.EndObject(0)
}

// ResetLine is Reset for one line of JSONL: input that stops inside a value
// is reported as ErrEndOfLine.
func (s *Scanner) ResetLine(b []byte) {
	s.b, s.pos, s.end = b, 0, ErrEndOfLine
	s.EndObject(0)
}

func (s *Scanner) endErr() error {
	if s.end == nil {
		return ErrEndOfInput
	}
	return s.end
}

// Pos is the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Bytes returns the input from offset start to end, as Pos gave them: the
// raw text of a value read in between.
func (s *Scanner) Bytes(start, end int) []byte { return s.b[start:end] }

// Skip consumes n bytes; callers use it after Peek has shown them.
func (s *Scanner) Skip(n int) { s.pos += n }

// Peek skips white space and returns the next byte, or End.
func (s *Scanner) Peek() int {
	for s.pos < len(s.b) {
		switch c := s.b[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return int(c)
		}
	}
	return End
}

// SyntaxError reports the byte at the current position, found where context
// says ("after object key").
func (s *Scanner) SyntaxError(context string) error {
	if s.pos >= len(s.b) {
		return SyntaxError{s.endErr()}
	}
	r, _ := utf8.DecodeRune(s.b[s.pos:])
	if s.b[s.pos] < utf8.RuneSelf {
		r = rune(s.b[s.pos])
	}
	return SyntaxError{fmt.Errorf("invalid character %s %s at byte %d", strconv.QuoteRune(r), context, s.pos+1)}
}

// Expect consumes c after white space, or reports a syntax error.
func (s *Scanner) Expect(c byte, context string) error {
	if s.Peek() != int(c) {
		return s.SyntaxError(context)
	}
	s.pos++
	return nil
}

// Literal consumes word (true, false or null) at the current position.
func (s *Scanner) Literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.b) || s.b[s.pos] != word[i] {
			return s.SyntaxError("in literal " + word)
		}
		s.pos++
	}
	return nil
}

// ReadString reads the string at the current position (a '"'), unescaped
// as encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD,
// unless the scanner is strict). When the string has no escapes and is
// valid UTF-8 the result is a slice of the input (Aliased reports it);
// otherwise it is the scanner's buffer, valid until the next string is
// read.
func (s *Scanner) ReadString() ([]byte, error) {
	s.pos++
	start := s.pos
	s.aliased = false
	for {
		s.pos += plainRun(s.b[s.pos:])
		if s.pos >= len(s.b) {
			return nil, SyntaxError{s.endErr()}
		}
		c := s.b[s.pos]
		if c == '"' {
			if s.MaxString > 0 && s.pos-start > s.MaxString {
				return nil, ErrTooLong
			}
			s.pos++
			s.aliased = true
			return s.b[start : s.pos-1], nil
		}
		if c < utf8.RuneSelf {
			break // a backslash or a control byte
		}
		r, size := utf8.DecodeRune(s.b[s.pos:])
		if r == utf8.RuneError && size == 1 {
			if s.StrictUTF8 {
				return nil, ErrInvalidUTF8
			}
			break
		}
		s.pos += size
	}
	var err error
	s.str, err = s.appendRest(append(s.str[:0], s.b[start:s.pos]...), len(s.str[:0]))
	return s.str, err
}

// AppendString reads the string at the current position (a '"') as
// ReadString does, appending its decoded bytes to dst: a decoder that
// keeps its strings in an arena copies each byte once.
func (s *Scanner) AppendString(dst []byte) ([]byte, error) {
	s.pos++
	s.aliased = false
	return s.appendRest(dst, len(dst))
}

// appendRest decodes the rest of a string, from the current position to
// its closing quote, onto dst, whose bytes from mark on are the string's so
// far.
func (s *Scanner) appendRest(dst []byte, mark int) ([]byte, error) {
	for s.pos < len(s.b) {
		if s.MaxString > 0 && len(dst)-mark > s.MaxString {
			return dst, ErrTooLong
		}
		run := plainRun(s.b[s.pos:])
		dst = append(dst, s.b[s.pos:s.pos+run]...)
		s.pos += run
		if s.pos >= len(s.b) {
			break
		}
		c := s.b[s.pos]
		switch {
		case c == '"':
			if s.MaxString > 0 && len(dst)-mark > s.MaxString {
				return dst, ErrTooLong
			}
			s.pos++
			return dst, nil
		case c == '\\':
			if s.pos+1 >= len(s.b) {
				return dst, SyntaxError{s.endErr()}
			}
			s.pos++
			switch e := s.b[s.pos]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, bad := hex4(s.b, s.pos+1)
				if bad >= 0 {
					s.pos = bad
					if bad >= len(s.b) {
						return dst, SyntaxError{s.endErr()}
					}
					return dst, s.SyntaxError("in \\u hexadecimal character escape")
				}
				s.pos += 4
				if utf16.IsSurrogate(r) {
					// Only a valid pair makes a character; encoding/json
					// replaces anything else, and so does this.
					r2 := rune(-1)
					if s.pos+6 < len(s.b) && s.b[s.pos+1] == '\\' && s.b[s.pos+2] == 'u' {
						if v, bad := hex4(s.b, s.pos+3); bad < 0 {
							r2 = v
						}
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						s.pos += 6
					} else if s.StrictSurrogates {
						return dst, ErrLoneSurrogate
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, s.SyntaxError("in string escape code")
			}
			s.pos++
		case c < 0x20:
			return dst, s.SyntaxError("in string literal")
		default:
			r, size := utf8.DecodeRune(s.b[s.pos:])
			if r == utf8.RuneError && size == 1 {
				if s.StrictUTF8 {
					return dst, ErrInvalidUTF8
				}
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s.b[s.pos:s.pos+size]...)
			}
			s.pos += size
		}
	}
	return dst, SyntaxError{s.endErr()}
}

// Aliased reports whether the last string ReadString returned is a slice
// of the input, which lives as long as the input does.
func (s *Scanner) Aliased() bool { return s.aliased }

// plainRun returns the length of b's prefix that needs no decoding: no
// quote, backslash, control byte or non-ASCII byte. It tests eight bytes at
// a time (the has-zero-byte trick on 64-bit words): model responses are
// long runs of plain text between escapes.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (ones * '"')
		bs := w ^ (ones * '\\')
		special := (q - ones) &^ q
		special |= (bs - ones) &^ bs
		special |= w - ones*0x20 // a byte below 0x20 borrows into its high bit
		special |= w
		if special &= highs; special != 0 {
			// The lowest flagged byte is a true special byte: borrows only
			// carry upwards, into bytes after it.
			return i + bits.TrailingZeros64(special)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// hex4 decodes the four hexadecimal digits at b[i:], or returns the index
// of the first byte that is not one.
func hex4(b []byte, i int) (r rune, bad int) {
	for k := i; k < i+4; k++ {
		if k >= len(b) {
			return 0, k
		}
		c := b[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, k
		}
		r = r*16 + rune(c)
	}
	return r, -1
}

// IsNumberStart reports whether c, as Peek returns it, starts a number.
func IsNumberStart(c int) bool { return c == '-' || '0' <= c && c <= '9' }

// ReadNumber reads the number at the current position and returns its
// text.
func (s *Scanner) ReadNumber() ([]byte, error) {
	start := s.pos
	digits := func() int {
		n := 0
		for s.pos < len(s.b) && '0' <= s.b[s.pos] && s.b[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.b[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos >= len(s.b):
		return nil, SyntaxError{s.endErr()}
	case s.b[s.pos] == '0':
		s.pos++
	case '1' <= s.b[s.pos] && s.b[s.pos] <= '9':
		digits()
	default:
		return nil, s.SyntaxError("in numeric literal")
	}
	if s.pos < len(s.b) && s.b[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return nil, s.SyntaxError("after decimal point in numeric literal")
		}
	}
	if s.pos < len(s.b) && (s.b[s.pos] == 'e' || s.b[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.b) && (s.b[s.pos] == '+' || s.b[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return nil, s.SyntaxError("in exponent of numeric literal")
		}
	}
	return s.b[start:s.pos], nil
}

// SkipValue reads and checks the value at the current position; depth is
// its nesting, for the depth limit. With RefuseDuplicates, an object in it
// that holds a name twice is a *DuplicateKeyError whose Field names it from
// this value.
func (s *Scanner) SkipValue(depth int) error {
	if limit := s.MaxDepth; depth > limit && limit > 0 || depth > MaxDepth {
		return SyntaxError{ErrTooDeep}
	}
	switch c := s.Peek(); {
	case c == '{':
		s.pos++
		if s.Peek() == '}' {
			s.pos++
			return nil
		}
		obj := s.BeginObject()
		for {
			if s.Peek() != '"' {
				return s.SyntaxError("looking for beginning of object key string")
			}
			start := s.pos
			key, err := s.ReadString()
			if err != nil {
				return err
			}
			if s.RefuseDuplicates {
				if err := s.addKey(obj, key, start); err != nil {
					return err
				}
			}
			if err := s.Expect(':', "after object key"); err != nil {
				return err
			}
			if err := s.SkipValue(depth + 1); err != nil {
				return s.InMember(err, start)
			}
			if more, err := s.More('}', "after object key:value pair"); !more {
				s.EndObject(obj)
				return err
			}
		}
	case c == '[':
		s.pos++
		if s.Peek() == ']' {
			s.pos++
			return nil
		}
		for i := 0; ; i++ {
			if err := s.SkipValue(depth + 1); err != nil {
				return s.InElement(err, i)
			}
			if more, err := s.More(']', "after array element"); !more {
				return err
			}
		}
	case c == '"':
		_, err := s.ReadString()
		return err
	case c == 't':
		return s.Literal("true")
	case c == 'f':
		return s.Literal("false")
	case c == 'n':
		return s.Literal("null")
	case IsNumberStart(c):
		_, err := s.ReadNumber()
		return err
	}
	return s.SyntaxError("looking for beginning of value")
}

// More consumes the separator after an object member or array element: it
// reports true after a ',' and false after closer (with a nil error), and
// false with a syntax error, found where context says, after anything else.
func (s *Scanner) More(closer byte, context string) (bool, error) {
	switch s.Peek() {
	case ',':
		s.pos++
		return true, nil
	case int(closer):
		s.pos++
		return false, nil
	}
	return false, s.SyntaxError(context)
}

// Describe reads the value at the current position and describes it for an
// error message: "object", "string \"abc\"", "number 12", …
func (s *Scanner) Describe() (string, error) {
	switch c := s.Peek(); {
	case c == '{':
		return "object", nil
	case c == '[':
		return "array", nil
	case c == '"':
		v, err := s.ReadString()
		if err != nil {
			return "", err
		}
		return "string " + strconv.Quote(Shorten(string(v))), nil
	case c == 't':
		return "boolean true", s.Literal("true")
	case c == 'f':
		return "boolean false", s.Literal("false")
	case c == 'n':
		return "null", s.Literal("null")
	case IsNumberStart(c):
		v, err := s.ReadNumber()
		if err != nil {
			return "", err
		}
		return "number " + Shorten(string(v)), nil
	}
	return "", s.SyntaxError("looking for beginning of value")
}

// TypeError reports the value at the current position as not what the
// caller wanted: "want string, got number 12".
func (s *Scanner) TypeError(want string) error {
	got, err := s.Describe()
	if err != nil {
		return err
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// Shorten cuts s to about 40 bytes, on a character boundary, for messages.
func Shorten(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Keys are the member names a decoder knows, matched as encoding/json
// matches struct fields: exactly, or else ignoring case by Unicode's simple
// folding.
type Keys []string

// Index returns the index of key in k (-1 when none matches exactly), and
// whether key matches a name only when case is ignored: a decoder that
// must agree with encoding/json then leaves the input to it.
func (k Keys) Index(key []byte) (idx int, folded bool) {
	for i, name := range k {
		if string(key) == name {
			return i, false
		}
	}
	for _, name := range k {
		if equalFold(key, name) {
			return -1, true
		}
	}
	return -1, false
}

// equalFold is strings.EqualFold without converting key, with a fast path
// for ASCII: while both hold ASCII bytes, they are compared a byte at a
// time (an ASCII letter folds to no other ASCII byte than its other case),
// and the rest goes to strings.EqualFold from the first byte that is not
// ASCII.
func equalFold(key []byte, name string) bool {
	n := min(len(key), len(name))
	for i := 0; i < n; i++ {
		x, y := key[i], name[i]
		if x|y >= utf8.RuneSelf {
			return strings.EqualFold(string(key[i:]), name[i:])
		}
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	// ASCII alike so far: one ends here, so both must.
	return len(key) == len(name)
}

// AppendCompact appends src, JSON text, without the white space between
// its tokens; src must start outside a string. Strings are skipped whole with IndexByte, so
// the cost is in the structure, not in the text.
func AppendCompact(dst, src []byte) []byte {
	from := 0
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i)
			if end < 0 {
				return append(dst, src[from:]...)
			}
			i = end
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[from:i]...)
			i++
			from = i
		default:
			i++
		}
	}
	return append(dst, src[from:]...)
}

// stringEnd returns the index just past the closing quote of the JSON
// string whose opening quote is at b[i], or -1 if it is not closed.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		escapes := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			escapes++
		}
		j++
		if escapes%2 == 0 {
			return j
		}
	}
}
