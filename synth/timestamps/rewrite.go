package timestamps

import (
	"errors"
	"fmt"
	"time"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/jsonscan"
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

	sc := &jsonscan.Scanner{MaxDepth: maxDepth}
	sc.Reset(raw)
	if sc.Peek() != '{' {
		return fail("", errors.New("not a JSON object"))
	}
	begin := sc.Pos()
	type edit struct {
		from, to int
		text     []byte
	}
	edits := make([]edit, 0, len(t.History))
	scratch := make([]byte, 0, 40*len(t.History)+96)
	histCount, i := 0, 0
	message := func() error {
		if i > last {
			return fmt.Errorf("has more than the %d messages parsed", len(t.History))
		}
		if sc.Peek() != '{' {
			return fmt.Errorf("history[%d]: not an object", i)
		}
		es := sc.Pos()
		timeCount, ts, te, lastEnd := 0, 0, 0, -1
		err := walkObject(sc, "time", func(isTime bool) error {
			sc.Peek()
			vs := sc.Pos()
			if err := sc.SkipValue(2); err != nil {
				return err
			}
			if isTime {
				timeCount++
				ts, te = vs, sc.Pos()
			}
			lastEnd = sc.Pos()
			return nil
		})
		if err != nil {
			return err
		}
		if timeCount > 1 {
			return &FieldError{ID: t.ID, Field: fmt.Sprintf("history[%d].time", i), Err: ErrDuplicateKey}
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
		return nil
	}
	err := walkObject(sc, "history", func(isHistory bool) error {
		if !isHistory {
			return sc.SkipValue(1)
		}
		if histCount++; histCount > 1 {
			return &FieldError{ID: t.ID, Field: "history", Err: ErrDuplicateKey}
		}
		if sc.Peek() != '[' {
			return &FieldError{ID: t.ID, Field: "history", Err: errors.New("not a list")}
		}
		err := walkArray(sc, message)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				err = &FieldError{ID: t.ID, Field: "history", Err: err}
			}
		}
		return err
	})
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return dst, fe
		}
		return fail("", err)
	}
	end := sc.Pos()
	if sc.Peek() != jsonscan.End {
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
		dst = jsonscan.AppendCompact(dst, raw[pos:e.from])
		dst = append(dst, e.text...)
		pos = e.to
	}
	return jsonscan.AppendCompact(dst, raw[pos:end]), nil
}

func appendQuotedTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = conversation.AppendTime(b, t)
	return append(b, '"')
}

// walkObject reads the object at the scanner (its '{' next), calling
// member with the scanner at each value, and whether the member's key is
// name the way Go's JSON decoders match field names: exactly, or ignoring
// case (Unicode folding, so "ſ" matches "s"), after unescaping. member
// must consume the value.
func walkObject(sc *jsonscan.Scanner, name string, member func(isName bool) error) error {
	sc.Skip(1)
	if sc.Peek() == '}' {
		sc.Skip(1)
		return nil
	}
	keys := jsonscan.Keys{name}
	for {
		if sc.Peek() != '"' {
			return fmt.Errorf("want a string at byte %d", sc.Pos())
		}
		key, err := sc.ReadString()
		if err != nil {
			return err
		}
		idx, folded := keys.Index(key)
		if err := sc.Expect(':', "after object key"); err != nil {
			return err
		}
		if err := member(idx == 0 || folded); err != nil {
			return err
		}
		if more, err := sc.More('}', "after object key:value pair"); !more {
			return err
		}
	}
}

// walkArray reads the array at the scanner (its '[' next), calling elem
// with the scanner at each element, which elem must consume.
func walkArray(sc *jsonscan.Scanner, elem func() error) error {
	sc.Skip(1)
	if sc.Peek() == ']' {
		sc.Skip(1)
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if more, err := sc.More(']', "after array element"); !more {
			return err
		}
	}
}
