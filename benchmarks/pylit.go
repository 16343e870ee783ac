package benchmarks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLiteralDepth bounds the nesting of a literal.
const maxLiteralDepth = 64

// ParseLiteral reads a Python literal, as Python's repr writes it, and
// returns it as JSON text: dicts (string keys) become objects in their
// order, lists and tuples lists, strings ('…' or "…", with Python's
// escapes) strings, ints and floats numbers, True, False and None true,
// false and null. JSON text parses too. Nothing is evaluated: anything
// else (names, calls, sets, bytes, operators but a leading minus) is an
// error that says where it is.
func ParseLiteral(s string) (json.RawMessage, error) {
	p := &litParser{s: s}
	p.space()
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.errorf("unexpected %s after the value", p.near())
	}
	return json.RawMessage(p.out.Bytes()), nil
}

type litParser struct {
	s   string
	i   int
	out bytes.Buffer
}

func (p *litParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at character %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

// near shows the text at the parser's position.
func (p *litParser) near() string {
	if p.i >= len(p.s) {
		return "end of text"
	}
	rest := p.s[p.i:]
	if len(rest) > 12 {
		rest = rest[:12]
		for !utf8.ValidString(rest) && len(rest) > 0 {
			rest = rest[:len(rest)-1]
		}
		rest += "…"
	}
	return strconv.Quote(rest)
}

func (p *litParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *litParser) value(depth int) error {
	if depth > maxLiteralDepth {
		return p.errorf("nested more than %d deep", maxLiteralDepth)
	}
	if p.i >= len(p.s) {
		return p.errorf("want a value, the text ends")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[':
		return p.list(depth, ']')
	case c == '(':
		return p.list(depth, ')')
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for word, lit := range map[string]string{"True": "true", "False": "false", "None": "null",
		"true": "true", "false": "false", "null": "null"} {
		if strings.HasPrefix(p.s[p.i:], word) && !p.identAt(p.i+len(word)) {
			p.i += len(word)
			p.out.WriteString(lit)
			return nil
		}
	}
	return p.errorf("want a dict, list, string, number, True, False or None, got %s", p.near())
}

// identAt says an identifier goes on at i.
func (p *litParser) identAt(i int) bool {
	if i >= len(p.s) {
		return false
	}
	c := p.s[i]
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *litParser) dict(depth int) error {
	p.i++ // {
	p.out.WriteByte('{')
	seen := map[string]bool{}
	for n := 0; ; n++ {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			p.out.WriteByte('}')
			return nil
		}
		if n > 0 {
			p.out.WriteByte(',')
		}
		if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
			return p.errorf("want a string key or }, got %s", p.near())
		}
		start := p.out.Len()
		if err := p.str(); err != nil {
			return err
		}
		var key string
		_ = json.Unmarshal(p.out.Bytes()[start:], &key)
		if seen[key] {
			return p.errorf("the key %q twice", key)
		}
		seen[key] = true
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return p.errorf("want : after the key, got %s", p.near())
		}
		p.i++
		p.out.WriteByte(':')
		p.space()
		if err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			continue
		}
		return p.errorf("want , or } in a dict, got %s", p.near())
	}
}

func (p *litParser) list(depth int, end byte) error {
	p.i++
	p.out.WriteByte('[')
	for n := 0; ; n++ {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			p.out.WriteByte(']')
			return nil
		}
		if n > 0 {
			p.out.WriteByte(',')
		}
		if err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == end {
			continue
		}
		return p.errorf("want , or %c in a list, got %s", end, p.near())
	}
}

// str reads a quoted string and writes it as a JSON string.
func (p *litParser) str() error {
	quote := p.s[p.i]
	start := p.i
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			p.i = start
			return p.errorf("a string that is never closed")
		}
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			p.out.WriteString(jsonText(b.String()))
			return nil
		case c == '\n':
			return p.errorf("a line break inside a string")
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return err
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.errorf("a byte that is not UTF-8 in a string")
			}
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
}

// escape reads a backslash escape of Python's.
func (p *litParser) escape(b *strings.Builder) error {
	if p.i+1 >= len(p.s) {
		return p.errorf("a backslash at the end of the text")
	}
	c := p.s[p.i+1]
	simple := map[byte]string{'\\': "\\", '\'': "'", '"': "\"", 'n': "\n", 't': "\t", 'r': "\r",
		'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v", '0': "\x00", '\n': "", '/': "/"}
	if s, ok := simple[c]; ok && !(c == '0' && p.i+2 < len(p.s) && p.s[p.i+2] >= '0' && p.s[p.i+2] <= '7') {
		b.WriteString(s)
		p.i += 2
		return nil
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if digits == 0 {
		return p.errorf("an escape Python literals do not have: \\%c", c)
	}
	if p.i+2+digits > len(p.s) {
		return p.errorf("\\%c wants %d hex digits", c, digits)
	}
	n, err := strconv.ParseUint(p.s[p.i+2:p.i+2+digits], 16, 32)
	if err != nil || n > utf8.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
		return p.errorf("\\%c wants %d hex digits of a character", c, digits)
	}
	b.WriteRune(rune(n))
	p.i += 2 + digits
	return nil
}

// number reads an int or a float and writes it as a JSON number: as it
// is written when JSON writes it so ("2.0" stays 2.0), else as Go writes
// its value.
func (p *litParser) number() error {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	for p.i < len(p.s) && strings.IndexByte("0123456789._eE", p.s[p.i]) >= 0 {
		if (p.s[p.i] == 'e' || p.s[p.i] == 'E') && p.i+1 < len(p.s) && (p.s[p.i+1] == '-' || p.s[p.i+1] == '+') {
			p.i++
		}
		p.i++
	}
	text := p.s[start:p.i]
	if p.identAt(p.i) {
		p.i = start
		return p.errorf("not a number: %s", p.near())
	}
	if _, err := strconv.ParseFloat(text, 64); err == nil && json.Valid([]byte(text)) && text[0] != '+' {
		p.out.WriteString(text)
		return nil
	}
	clean := strings.ReplaceAll(text, "_", "")
	if strings.Contains(text, "__") || strings.HasPrefix(strings.TrimLeft(text, "+-"), "_") || strings.HasSuffix(text, "_") {
		p.i = start
		return p.errorf("not a number: %s", p.near())
	}
	if !strings.ContainsAny(clean, ".eE") {
		digits := strings.TrimLeft(clean, "+-")
		if len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
			p.i = start
			return p.errorf("not a number: %s (a leading zero)", p.near())
		}
		neg := strings.HasPrefix(clean, "-")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			p.i = start
			return p.errorf("not a number: %s", p.near())
		}
		if digits = strings.TrimLeft(digits, "0"); digits == "" {
			digits = "0"
		}
		if neg && digits != "0" {
			digits = "-" + digits
		}
		p.out.WriteString(digits)
		return nil
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.i = start
		return p.errorf("not a number: %s", p.near())
	}
	p.out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}
