package conversation

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// JSONArguments returns a tool call's arguments as JSON text, the form
// chat-completions APIs take ("arguments": a string holding JSON).
//
// Empty text and JSON text are returned unchanged. Text written as a Python
// literal, as some trajectory logs hold it ({'location': 'Malibu'}: quotes of
// either kind, True, False, None, tuples), is rewritten as the equal JSON
// value. Anything else is an error: an OpenAI-compatible server refuses a
// conversation whose call arguments are not JSON, so a trajectory carrying
// them would fail when replayed to a model.
func JSONArguments(s string) (string, error) {
	// json.Valid only reads its input: it sees the string's bytes uncopied.
	if strings.TrimSpace(s) == "" || json.Valid(unsafe.Slice(unsafe.StringData(s), len(s))) {
		return s, nil
	}
	p := &pyLiteral{s: s}
	var b strings.Builder
	if err := p.value(&b, 0); err != nil {
		return "", fmt.Errorf("neither JSON nor a Python literal: %w", err)
	}
	if p.skipSpace(); p.i < len(p.s) {
		return "", fmt.Errorf("neither JSON nor a Python literal: unexpected %q at offset %d", p.s[p.i], p.i)
	}
	return b.String(), nil
}

// maxLiteralDepth bounds the nesting JSONArguments follows.
const maxLiteralDepth = 64

// pyLiteral reads the Python literals JSON can hold: dicts with string keys,
// lists, tuples, strings, numbers, True, False and None.
type pyLiteral struct {
	s string
	i int
}

func (p *pyLiteral) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyLiteral) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *pyLiteral) value(b *strings.Builder, depth int) error {
	if depth > maxLiteralDepth {
		return p.errorf("nested deeper than %d", maxLiteralDepth)
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return p.errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.sequence(b, depth, '}', true)
	case c == '[':
		return p.sequence(b, depth, ']', false)
	case c == '(':
		return p.sequence(b, depth, ')', false)
	case c == '\'' || c == '"':
		return p.str(b)
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number(b)
	}
	for _, w := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}} {
		if strings.HasPrefix(p.s[p.i:], w[0]) && !p.identAt(p.i+len(w[0])) {
			p.i += len(w[0])
			b.WriteString(w[1])
			return nil
		}
	}
	return p.errorf("unexpected %q", p.s[p.i])
}

func (p *pyLiteral) identAt(i int) bool {
	if i >= len(p.s) {
		return false
	}
	c := p.s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sequence reads a dict (keyed) or a list or tuple closed by end, allowing
// a trailing comma as Python does; JSON gets an object or an array.
func (p *pyLiteral) sequence(b *strings.Builder, depth int, end byte, keyed bool) error {
	p.i++
	open, close := byte('['), byte(']')
	if keyed {
		open, close = '{', '}'
	}
	b.WriteByte(open)
	for n := 0; ; n++ {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			b.WriteByte(close)
			return nil
		}
		if n > 0 {
			if p.i >= len(p.s) || p.s[p.i] != ',' {
				return p.errorf("want ',' or %q", end)
			}
			p.i++
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == end {
				continue
			}
			b.WriteByte(',')
		}
		if keyed {
			p.skipSpace()
			if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
				return p.errorf("a dict key must be a string")
			}
			if err := p.str(b); err != nil {
				return err
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return p.errorf("want ':' after a dict key")
			}
			p.i++
			b.WriteByte(':')
		}
		if err := p.value(b, depth+1); err != nil {
			return err
		}
	}
}

// str reads a quoted string with Python's escapes and writes it as a JSON string.
func (p *pyLiteral) str(b *strings.Builder) error {
	quote := p.s[p.i]
	p.i++
	var out strings.Builder
	for {
		if p.i >= len(p.s) {
			return p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			enc, err := marshalString(out.String())
			if err != nil {
				return err
			}
			b.WriteString(enc)
			return nil
		case c == '\n':
			return p.errorf("newline in a string")
		case c != '\\':
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && n == 1 {
				return p.errorf("invalid UTF-8")
			}
			out.WriteString(p.s[p.i : p.i+n])
			p.i += n
			continue
		}
		if p.i+1 >= len(p.s) {
			return p.errorf("unterminated string")
		}
		e := p.s[p.i+1]
		p.i += 2
		if simple := strings.IndexByte(`\'"nrtbf0`, e); simple >= 0 {
			out.WriteString([]string{`\`, `'`, `"`, "\n", "\r", "\t", "\b", "\f", "\x00"}[simple])
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if width == 0 || p.i+width > len(p.s) {
			return p.errorf("unsupported escape \\%c", e)
		}
		v, err := strconv.ParseUint(p.s[p.i:p.i+width], 16, 32)
		if err != nil || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			return p.errorf("bad escape \\%c%s", e, p.s[p.i:p.i+width])
		}
		out.WriteRune(rune(v))
		p.i += width
	}
}

func marshalString(s string) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// number reads a decimal number and writes it as JSON writes it.
func (p *pyLiteral) number(b *strings.Builder) error {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE_", p.s[p.i]) >= 0 {
		p.i++
	}
	text := strings.ReplaceAll(p.s[start:p.i], "_", "")
	if json.Valid([]byte(text)) && !strings.HasPrefix(text, "+") {
		b.WriteString(text)
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return p.errorf("not a number: %q", p.s[start:p.i])
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}
