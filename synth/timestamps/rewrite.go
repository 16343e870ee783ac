package timestamps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/timeaware/timeaware/conversation"
)

// ErrDuplicateKey is wrapped by RewriteTimes's error for a record or message
// that spells a key it rewrites (history, time) more than once, counting
// spellings that differ only in case: JSON decoders disagree on which one
// wins, so no rewrite of it would be safe.
var ErrDuplicateKey = errors.New("key given more than once")

// maxDepth bounds the nesting RewriteTimes follows.
const maxDepth = 1000

// RewriteTimes appends to dst the record raw, a TicToc record in JSON, with
// the time of every history message set from t: each message before the
// final one gets t.History[i].Time, the final one the list t.FinalTimes,
// all as conversation.FormatTime writes them. A message without a time gets
// one as its last member. Everything else in the record is kept byte for
// byte, except that whitespace between tokens is dropped, so the result is
// one line (ready for JSONL).
//
// raw must be the record t was parsed from: its history must have as many
// messages as t's. Errors are *FieldError naming the field.
func RewriteTimes(dst, raw []byte, t *conversation.Trajectory) ([]byte, error) {
	fail := func(field string, err error) ([]byte, error) {
		return dst, &FieldError{ID: t.ID, Field: field, Err: err}
	}
	last := len(t.History) - 1
	if last < 0 {
		return fail("history", errors.New("empty"))
	}
	for i := 0; i < last; i++ {
		if t.History[i].Time.IsZero() {
			return fail(fmt.Sprintf("history[%d].time", i), errors.New("missing: stamp the trajectory first"))
		}
	}
	if len(t.FinalTimes) != conversation.NumElapse {
		return fail(fmt.Sprintf("history[%d].time", last), fmt.Errorf("has %d times, want %d: stamp the trajectory first", len(t.FinalTimes), conversation.NumElapse))
	}

	sc := &scanner{b: raw}
	begin := sc.ws(0)
	if begin >= len(raw) || raw[begin] != '{' {
		return fail("", errors.New("not a JSON object"))
	}
	type edit struct {
		from, to int
		text     []byte
	}
	edits := make([]edit, 0, len(t.History))
	scratch := make([]byte, 0, 40*len(t.History)+96)
	histCount, i := 0, 0
	message := func(es int) (int, error) {
		if i > last {
			return 0, fmt.Errorf("has more than the %d messages parsed", len(t.History))
		}
		if raw[es] != '{' {
			return 0, fmt.Errorf("history[%d]: not an object", i)
		}
		timeCount, ts, te, lastEnd := 0, 0, 0, -1
		end, err := sc.object(es, 2, func(ks, ke, vs int) (int, error) {
			ve, err := sc.value(vs, 2)
			if err == nil && sc.keyIs(ks, ke, "time") {
				timeCount++
				ts, te = vs, ve
			}
			lastEnd = ve
			return ve, err
		})
		if err != nil {
			return 0, err
		}
		if timeCount > 1 {
			return 0, &FieldError{ID: t.ID, Field: fmt.Sprintf("history[%d].time", i), Err: ErrDuplicateKey}
		}
		from := len(scratch)
		switch {
		case timeCount == 1:
		case lastEnd >= 0:
			scratch = append(scratch, `,"time":`...)
			ts, te = lastEnd, lastEnd
		default:
			scratch = append(scratch, `"time":`...)
			ts, te = es+1, es+1
		}
		if i < last {
			scratch = appendQuotedTime(scratch, t.History[i].Time)
		} else {
			scratch = append(scratch, '[')
			for k, ft := range t.FinalTimes {
				if k > 0 {
					scratch = append(scratch, ',')
				}
				scratch = appendQuotedTime(scratch, ft)
			}
			scratch = append(scratch, ']')
		}
		edits = append(edits, edit{from: ts, to: te, text: scratch[from:len(scratch):len(scratch)]})
		i++
		return end, nil
	}
	end, err := sc.object(begin, 0, func(ks, ke, vs int) (int, error) {
		if !sc.keyIs(ks, ke, "history") {
			return sc.value(vs, 0)
		}
		if histCount++; histCount > 1 {
			return 0, &FieldError{ID: t.ID, Field: "history", Err: ErrDuplicateKey}
		}
		if vs >= len(raw) || raw[vs] != '[' {
			return 0, &FieldError{ID: t.ID, Field: "history", Err: errors.New("not a list")}
		}
		ve, err := sc.array(vs, 1, message)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				err = &FieldError{ID: t.ID, Field: "history", Err: err}
			}
		}
		return ve, err
	})
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return dst, fe
		}
		return fail("", err)
	}
	if sc.ws(end) != len(raw) {
		return fail("", errors.New("data after the record"))
	}
	if histCount == 0 {
		return fail("history", errors.New("missing"))
	}
	if i != len(t.History) {
		return fail("history", fmt.Errorf("has %d messages, but %d were parsed", i, len(t.History)))
	}
	pos := begin
	for _, e := range edits {
		dst = compactAppend(dst, raw[pos:e.from])
		dst = append(dst, e.text...)
		pos = e.to
	}
	return compactAppend(dst, raw[pos:end]), nil
}

func appendQuotedTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = conversation.AppendTime(b, t)
	return append(b, '"')
}

// compactAppend appends src without the whitespace between tokens; src
// must start outside a string. Strings are skipped whole with IndexByte, so
// the cost is in the structure, not in the text.
func compactAppend(dst, src []byte) []byte {
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

// scanner finds the structure of a JSON text: where values, keys and
// members begin and end. It checks only what it needs to find boundaries
// (the record has been decoded once already), but on any input it either
// returns positions inside the text or an error.
type scanner struct {
	b []byte
}

var errTruncated = errors.New("unexpected end of JSON")

func (s *scanner) ws(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end (one past the closing quote) of the string at i.
func (s *scanner) str(i int) (int, error) {
	if i >= len(s.b) || s.b[i] != '"' {
		return 0, fmt.Errorf("want a string at byte %d", i)
	}
	end := stringEnd(s.b, i)
	if end < 0 {
		return 0, errTruncated
	}
	return end, nil
}

// keyIs reports whether the key string at [ks, ke) matches name, an ASCII
// name, the way Go's JSON decoders match field names: exactly, or ignoring
// case (Unicode folding, so "ſ" matches "s"), after unescaping.
func (s *scanner) keyIs(ks, ke int, name string) bool {
	raw := s.b[ks+1 : ke-1]
	if len(raw) == len(name) {
		if string(raw) == name {
			return true
		}
		if equalFoldASCII(raw, name) {
			return true
		}
	}
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	var key string
	if json.Unmarshal(s.b[ks:ke], &key) != nil {
		return false
	}
	return strings.EqualFold(key, name)
}

func equalFoldASCII(b []byte, name string) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// value returns the end of the value at i (after leading whitespace).
func (s *scanner) value(i, depth int) (int, error) {
	i = s.ws(i)
	if i >= len(s.b) {
		return 0, errTruncated
	}
	switch c := s.b[i]; c {
	case '"':
		return s.str(i)
	case '{':
		return s.object(i, depth+1, nil)
	case '[':
		return s.array(i, depth+1, nil)
	default:
		j := i
		for j < len(s.b) {
			c := s.b[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '{' || c == '[' || c == ':' {
				break
			}
			j++
		}
		if j == i {
			return 0, fmt.Errorf("unexpected %q at byte %d", c, i)
		}
		return j, nil
	}
}

// object walks the object at i and returns its end. For each member it calls
// member (when not nil) with the bounds of the key string and the start of
// the value, and member returns the value's end; nil skips values.
func (s *scanner) object(i, depth int, member func(ks, ke, vs int) (int, error)) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("nested too deeply")
	}
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, nil
	}
	for {
		ks := s.ws(i)
		ke, err := s.str(ks)
		if err != nil {
			return 0, err
		}
		i = s.ws(ke)
		if i >= len(s.b) || s.b[i] != ':' {
			return 0, fmt.Errorf("want ':' at byte %d", i)
		}
		vs := s.ws(i + 1)
		var ve int
		if member != nil {
			ve, err = member(ks, ke, vs)
		} else {
			ve, err = s.value(vs, depth)
		}
		if err != nil {
			return 0, err
		}
		i = s.ws(ve)
		if i >= len(s.b) {
			return 0, errTruncated
		}
		switch s.b[i] {
		case ',':
			i++
		case '}':
			return i + 1, nil
		default:
			return 0, fmt.Errorf("want ',' or '}' at byte %d", i)
		}
	}
}

// array walks the array at i and returns its end. For each element it calls
// elem (when not nil) with the element's start, and elem returns its end;
// nil skips elements.
func (s *scanner) array(i, depth int, elem func(es int) (int, error)) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("nested too deeply")
	}
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == ']' {
		return i + 1, nil
	}
	for {
		es := s.ws(i)
		var ee int
		var err error
		if elem != nil && es < len(s.b) {
			ee, err = elem(es)
		} else {
			ee, err = s.value(es, depth)
		}
		if err != nil {
			return 0, err
		}
		i = s.ws(ee)
		if i >= len(s.b) {
			return 0, errTruncated
		}
		switch s.b[i] {
		case ',':
			i++
		case ']':
			return i + 1, nil
		default:
			return 0, fmt.Errorf("want ',' or ']' at byte %d", i)
		}
	}
}
