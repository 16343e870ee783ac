package conversation

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// This file holds a hand-written decoder for the record layout, on the
// project's JSON scanner (internal/jsonscan). Decoding is the hot path of
// every data command, and the reflective decoders spend most of their time
// allocating; this one makes one pass over the bytes.
//
// It is deliberately strict: anything it does not handle exactly as
// encoding/json would (a key differing only in case, a repeated key, invalid
// UTF-8, a type mismatch, any syntax error) makes it give up with errSlowPath,
// and ParseTrajectory then decodes the record with the reflective decoder,
// which also produces the precise error message. FuzzDecodeRecord checks that
// whenever this decoder succeeds, the reflective decoder agrees.

var errSlowPath = errors.New("record needs the general decoder")

// lexer reads the record layout's values with the shared JSON scanner.
type lexer struct {
	jsonscan.Scanner
}

// lexers holds lexers between uses: a record decodes a dozen values (the
// record, its times, its tools), and a fresh scanner for each, with its
// buffers, cost more than the decoding of the short ones.
var lexers = sync.Pool{New: func() any {
	l := &lexer{}
	l.MaxDepth = 64
	l.StrictUTF8 = true // the general decoder replaces invalid UTF-8
	return l
}}

// newLexer returns a lexer reading b; release hands it back.
func newLexer(b []byte) *lexer {
	l := lexers.Get().(*lexer)
	l.Reset(b)
	return l
}

// release returns l to the pool. What l decoded stays valid: an escaped
// string is copied out of the scanner's buffer, and every other value is a
// slice of the input.
func (l *lexer) release() {
	l.Reset(nil)
	lexers.Put(l)
}

// aliasString returns the bytes as a string without copying them. The
// record's bytes are never modified after they are read (RawRecord.Data is
// owned by the parsed record), so the string stays valid and immutable.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// str reads a JSON string. The common case, no escapes and valid UTF-8, is
// a slice of the record's bytes and costs no allocation; an escaped string
// costs one. A string with invalid UTF-8 goes to the general decoder.
func (l *lexer) str() (string, error) {
	if l.Peek() != '"' {
		return "", errSlowPath
	}
	b, err := l.ReadString()
	if err != nil {
		return "", errSlowPath
	}
	if l.Aliased() {
		return aliasString(b), nil
	}
	return string(b), nil
}

// null consumes a null, reporting whether there was one.
func (l *lexer) null() bool {
	return l.Peek() == 'n' && l.Literal("null") == nil
}

// consume consumes c after white space, reporting whether it was there.
func (l *lexer) consume(c byte) bool {
	if l.Peek() == int(c) {
		l.Skip(1)
		return true
	}
	return false
}

// skip passes over one JSON value, validating it, and returns its bytes.
func (l *lexer) skip(depth int) ([]byte, error) {
	if l.Peek() == jsonscan.End {
		return nil, errSlowPath
	}
	start := l.Pos()
	if err := l.SkipValue(depth); err != nil {
		return nil, errSlowPath
	}
	return l.Bytes(start, l.Pos()), nil
}

// object walks the members of an object, calling member for each known
// key. A key seen twice, or one that matches a known key only when case is
// ignored, sends the record to the general decoder; unknown keys are
// skipped.
func (l *lexer) object(known jsonscan.Keys, member func(key string) error) error {
	if l.null() {
		return nil
	}
	if !l.consume('{') {
		return errSlowPath
	}
	if l.consume('}') {
		return nil
	}
	var seen uint32
	for {
		if l.Peek() != '"' {
			return errSlowPath
		}
		key, err := l.ReadString()
		if err != nil {
			return errSlowPath
		}
		idx, folded := known.Index(key)
		if folded || !l.consume(':') {
			return errSlowPath
		}
		if idx >= 0 {
			if seen&(1<<idx) != 0 {
				return errSlowPath
			}
			seen |= 1 << idx
			if err := member(known[idx]); err != nil {
				return err
			}
		} else if _, err := l.skip(1); err != nil {
			return err
		}
		more, err := l.More('}', "")
		if err != nil {
			return errSlowPath
		}
		if !more {
			return nil
		}
	}
}

// array walks the elements of an array. It reports whether the value was
// null, which encoding/json decodes to a nil slice rather than an empty one.
func (l *lexer) array(elem func() error) (null bool, err error) {
	if l.null() {
		return true, nil
	}
	if !l.consume('[') {
		return false, errSlowPath
	}
	if l.consume(']') {
		return false, nil
	}
	for {
		if err := elem(); err != nil {
			return false, err
		}
		more, err := l.More(']', "")
		if err != nil {
			return false, errSlowPath
		}
		if !more {
			return false, nil
		}
	}
}

// strField reads a string member; null leaves it empty, as encoding/json does.
func (l *lexer) strField(dst *string) error {
	if l.null() {
		return nil
	}
	s, err := l.str()
	*dst = s
	return err
}

var (
	recordKeys   = jsonscan.Keys{"id", "history", "function", "tools", "scenario", "sensitivity", "pref_score", "preference", "direct_answer", "tool_call", "elapse"}
	messageKeys  = jsonscan.Keys{"role", "content", "tool_calls", "tool_call_id", "name", "time"}
	toolCallKeys = jsonscan.Keys{"id", "type", "function"}
	functionKeys = jsonscan.Keys{"name", "arguments"}
)

// decodeRecord fills w, zero but for the storage of its History, from
// data, or returns errSlowPath.
func decodeRecord(data []byte, w *wireRecord) error {
	l := newLexer(data)
	defer l.release()
	if l.Peek() != '{' {
		return errSlowPath
	}
	err := l.object(recordKeys, func(key string) error {
		var err error
		switch key {
		case "id":
			w.ID, err = l.skip(1)
		case "history":
			// The list w brings, if any, is storage to reuse (ParseTrajectory
			// keeps it from record to record).
			h := w.History[:0]
			if h == nil {
				h = make([]wireMessage, 0, 16)
			}
			w.History = nil
			var null bool
			null, err = l.array(func() error {
				h = append(h, wireMessage{})
				return l.message(&h[len(h)-1])
			})
			if !null {
				w.History = h
			}
		case "function":
			w.Function, err = l.skip(1)
		case "tools":
			w.Tools, err = l.skip(1)
		case "scenario":
			err = l.strField(&w.Scenario)
		case "sensitivity":
			err = l.strField(&w.Sensitivity)
		case "pref_score":
			w.PrefScore, err = l.skip(1)
		case "preference":
			w.Preference, err = l.skip(1)
		case "direct_answer":
			w.DirectAnswer, err = l.skip(1)
		case "tool_call":
			w.ToolCall, err = l.skip(1)
		case "elapse":
			w.Elapse, err = l.skip(1)
		}
		return err
	})
	if err != nil {
		return err
	}
	if l.Peek() != jsonscan.End {
		return errSlowPath
	}
	return nil
}

func (l *lexer) message(m *wireMessage) error {
	if l.Peek() == 'n' {
		return errSlowPath // a null message: let the general decoder decide
	}
	return l.object(messageKeys, func(key string) error {
		switch key {
		case "role":
			return l.strField(&m.Role)
		case "content":
			if l.null() {
				m.Content = nil
				return nil
			}
			s, err := l.str()
			m.Content = &s
			return err
		case "tool_calls":
			calls := make([]ToolCall, 0, 1)
			null, err := l.array(func() error {
				calls = append(calls, ToolCall{})
				return l.toolCall(&calls[len(calls)-1])
			})
			if !null {
				m.ToolCalls = calls
			}
			return err
		case "tool_call_id":
			return l.strField(&m.ToolCallID)
		case "name":
			return l.strField(&m.Name)
		case "time":
			var err error
			m.Time, err = l.skip(1)
			return err
		}
		return nil
	})
}

func (l *lexer) toolCall(tc *ToolCall) error {
	if l.Peek() == 'n' {
		return errSlowPath
	}
	return l.object(toolCallKeys, func(key string) error {
		switch key {
		case "id":
			return l.strField(&tc.ID)
		case "type":
			return l.strField(&tc.Type)
		case "function":
			return l.object(functionKeys, func(key string) error {
				if key == "name" {
					return l.strField(&tc.Function.Name)
				}
				if l.Peek() == '"' {
					s, err := l.str()
					tc.Function.Arguments = Arguments(s)
					return err
				}
				raw, err := l.skip(1)
				if err != nil {
					return err
				}
				return tc.Function.Arguments.UnmarshalJSON(raw)
			})
		}
		return nil
	})
}

// decodeString decodes raw as exactly one JSON string.
func decodeString(raw []byte) (string, bool) {
	l := newLexer(raw)
	defer l.release()
	s, err := l.str()
	if err != nil || l.Peek() != jsonscan.End {
		return "", false
	}
	return s, true
}

var (
	toolKeys         = jsonscan.Keys{"type", "function"}
	toolFunctionKeys = jsonscan.Keys{"name", "description", "parameters"}
)

// decodeTools decodes a list of tool schemas, or returns errSlowPath.
func decodeTools(raw []byte) ([]Tool, error) {
	l := newLexer(raw)
	defer l.release()
	tools := make([]Tool, 0, 4)
	null, err := l.array(func() error {
		if l.Peek() != '{' {
			return errSlowPath
		}
		tools = append(tools, Tool{})
		tl := &tools[len(tools)-1]
		return l.object(toolKeys, func(key string) error {
			if key == "type" {
				return l.strField(&tl.Type)
			}
			return l.object(toolFunctionKeys, func(key string) error {
				switch key {
				case "name":
					return l.strField(&tl.Function.Name)
				case "description":
					return l.strField(&tl.Function.Description)
				}
				raw, err := l.skip(1)
				tl.Function.Parameters = raw
				return err
			})
		})
	})
	if err != nil || l.Peek() != jsonscan.End {
		return nil, errSlowPath
	}
	if null {
		return nil, nil
	}
	return tools, nil
}
