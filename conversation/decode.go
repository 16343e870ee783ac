package conversation

import (
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file holds a hand-written decoder for the record layout. Decoding is
// the hot path of every data command, and the reflective decoders spend most
// of their time allocating; this one makes one pass over the bytes.
//
// It is deliberately strict: anything it does not handle exactly as
// encoding/json would (a key differing only in case, a repeated key, invalid
// UTF-8, a type mismatch, any syntax error) makes it give up with errSlowPath,
// and ParseTrajectory then decodes the record with the reflective decoder,
// which also produces the precise error message. FuzzDecodeRecord checks that
// whenever this decoder succeeds, the reflective decoder agrees.

var errSlowPath = errors.New("record needs the general decoder")

type lexer struct {
	b []byte
	i int
}

func (l *lexer) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *lexer) peek() byte {
	l.ws()
	if l.i < len(l.b) {
		return l.b[l.i]
	}
	return 0
}

func (l *lexer) consume(c byte) bool {
	if l.peek() == c {
		l.i++
		return true
	}
	return false
}

func (l *lexer) literal(s string) bool {
	l.ws()
	if len(l.b)-l.i >= len(s) && string(l.b[l.i:l.i+len(s)]) == s {
		l.i += len(s)
		return true
	}
	return false
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
// one scan and one allocation.
func (l *lexer) str() (string, error) {
	if l.peek() != '"' {
		return "", errSlowPath
	}
	l.i++
	start := l.i
	ascii := true
	for l.i < len(l.b) {
		c := l.b[l.i]
		switch {
		case c == '"':
			s := l.b[start:l.i]
			l.i++
			if !ascii && !utf8.Valid(s) {
				return "", errSlowPath
			}
			return aliasString(s), nil
		case c == '\\':
			return l.escapedStr(start)
		case c < 0x20:
			return "", errSlowPath
		case c >= utf8.RuneSelf:
			ascii = false
		}
		l.i++
	}
	return "", errSlowPath
}

func (l *lexer) escapedStr(start int) (string, error) {
	out := make([]byte, 0, l.i-start+64)
	out = append(out, l.b[start:l.i]...)
	for l.i < len(l.b) {
		// Copy the run up to the next quote, backslash or control byte whole.
		j := l.i
		for j < len(l.b) {
			if c := l.b[j]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			j++
		}
		out = append(out, l.b[l.i:j]...)
		l.i = j
		if l.i >= len(l.b) {
			break
		}
		c := l.b[l.i]
		switch {
		case c == '"':
			l.i++
			if !utf8.Valid(out) {
				return "", errSlowPath
			}
			return aliasString(out), nil
		case c < 0x20:
			return "", errSlowPath
		}
		if l.i+1 >= len(l.b) {
			return "", errSlowPath
		}
		e := l.b[l.i+1]
		l.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := l.hex4()
			if !ok {
				return "", errSlowPath
			}
			if utf16.IsSurrogate(r) {
				// A valid pair decodes to one rune; anything else becomes
				// U+FFFD, as encoding/json does.
				r2 := rune(-1)
				if l.i+1 < len(l.b) && l.b[l.i] == '\\' && l.b[l.i+1] == 'u' {
					save := l.i
					l.i += 2
					var ok2 bool
					if r2, ok2 = l.hex4(); !ok2 {
						return "", errSlowPath
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						continue
					}
					l.i = save
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", errSlowPath
		}
	}
	return "", errSlowPath
}

func (l *lexer) hex4() (rune, bool) {
	if l.i+4 > len(l.b) {
		return 0, false
	}
	var r rune
	for _, c := range l.b[l.i : l.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	l.i += 4
	return r, true
}

// skip passes over one JSON value, validating it, and returns its bytes.
func (l *lexer) skip(depth int) ([]byte, error) {
	if depth > 64 {
		return nil, errSlowPath
	}
	c := l.peek()
	start := l.i
	switch {
	case c == '"':
		if _, err := l.str(); err != nil {
			return nil, err
		}
	case c == '{':
		l.i++
		if !l.consume('}') {
			for {
				if _, err := l.str(); err != nil {
					return nil, err
				}
				if !l.consume(':') {
					return nil, errSlowPath
				}
				if _, err := l.skip(depth + 1); err != nil {
					return nil, err
				}
				if l.consume(',') {
					continue
				}
				if l.consume('}') {
					break
				}
				return nil, errSlowPath
			}
		}
	case c == '[':
		l.i++
		if !l.consume(']') {
			for {
				if _, err := l.skip(depth + 1); err != nil {
					return nil, err
				}
				if l.consume(',') {
					continue
				}
				if l.consume(']') {
					break
				}
				return nil, errSlowPath
			}
		}
	case c == 't':
		if !l.literal("true") {
			return nil, errSlowPath
		}
	case c == 'f':
		if !l.literal("false") {
			return nil, errSlowPath
		}
	case c == 'n':
		if !l.literal("null") {
			return nil, errSlowPath
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if !l.number() {
			return nil, errSlowPath
		}
	default:
		return nil, errSlowPath
	}
	return l.b[start:l.i], nil
}

// number validates a JSON number per RFC 8259.
func (l *lexer) number() bool {
	b, i := l.b, l.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	l.i = i
	return true
}

// object walks the members of an object, calling member for each key. A key
// seen twice, or one that matches a known key only when case is ignored,
// sends the record to the general decoder.
func (l *lexer) object(known []string, member func(key string) error) error {
	if l.literal("null") {
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
		key, err := l.str()
		if err != nil {
			return err
		}
		if !l.consume(':') {
			return errSlowPath
		}
		idx := -1
		for k, name := range known {
			if key == name {
				idx = k
				break
			}
			if len(key) == len(name) && equalFoldASCII(key, name) {
				return errSlowPath
			}
		}
		if idx < 0 && !isASCII(key) {
			// encoding/json folds case by Unicode rules, so "ſ" matches "s".
			for _, name := range known {
				if strings.EqualFold(key, name) {
					return errSlowPath
				}
			}
		}
		if idx >= 0 {
			if seen&(1<<idx) != 0 {
				return errSlowPath
			}
			seen |= 1 << idx
			if err := member(key); err != nil {
				return err
			}
		} else if _, err := l.skip(1); err != nil {
			return err
		}
		if l.consume(',') {
			continue
		}
		if l.consume('}') {
			return nil
		}
		return errSlowPath
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
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
	return true
}

// array walks the elements of an array. It reports whether the value was
// null, which encoding/json decodes to a nil slice rather than an empty one.
func (l *lexer) array(elem func() error) (null bool, err error) {
	if l.literal("null") {
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
		if l.consume(',') {
			continue
		}
		if l.consume(']') {
			return false, nil
		}
		return false, errSlowPath
	}
}

// strField reads a string member; null leaves it empty, as encoding/json does.
func (l *lexer) strField(dst *string) error {
	if l.literal("null") {
		return nil
	}
	s, err := l.str()
	*dst = s
	return err
}

var (
	recordKeys   = []string{"id", "history", "function", "tools", "scenario", "sensitivity", "pref_score", "preference", "direct_answer", "tool_call"}
	messageKeys  = []string{"role", "content", "tool_calls", "tool_call_id", "name", "time"}
	toolCallKeys = []string{"id", "type", "function"}
	functionKeys = []string{"name", "arguments"}
)

// decodeRecord fills w from data, or returns errSlowPath.
func decodeRecord(data []byte, w *wireRecord) error {
	l := &lexer{b: data}
	if l.peek() != '{' {
		return errSlowPath
	}
	err := l.object(recordKeys, func(key string) error {
		var err error
		switch key {
		case "id":
			w.ID, err = l.skip(1)
		case "history":
			h := make([]wireMessage, 0, 16)
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
		}
		return err
	})
	if err != nil {
		return err
	}
	if l.peek() != 0 || l.i != len(l.b) {
		return errSlowPath
	}
	return nil
}

func (l *lexer) message(m *wireMessage) error {
	if l.peek() == 'n' {
		return errSlowPath // a null message: let the general decoder decide
	}
	return l.object(messageKeys, func(key string) error {
		switch key {
		case "role":
			return l.strField(&m.Role)
		case "content":
			if l.literal("null") {
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
	if l.peek() == 'n' {
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
				if l.peek() == '"' {
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
	l := &lexer{b: raw}
	s, err := l.str()
	if err != nil || l.peek() != 0 || l.i != len(l.b) {
		return "", false
	}
	return s, true
}

var (
	toolKeys         = []string{"type", "function"}
	toolFunctionKeys = []string{"name", "description", "parameters"}
)

// decodeTools decodes a list of tool schemas, or returns errSlowPath.
func decodeTools(raw []byte) ([]Tool, error) {
	l := &lexer{b: raw}
	tools := make([]Tool, 0, 4)
	null, err := l.array(func() error {
		if l.peek() != '{' {
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
	if err != nil || l.peek() != 0 || l.i != len(l.b) {
		return nil, errSlowPath
	}
	if null {
		return nil, nil
	}
	return tools, nil
}

// compactJSON appends src without the whitespace between tokens. src must
// be valid JSON (the fast decoder has just read it).
func compactJSON(dst, src []byte) []byte {
	inStr, esc := false, false
	start := 0
	for i, c := range src {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}
