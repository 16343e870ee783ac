package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"go.yaml.in/yaml/v3"
)

// DecodeError is a JSON decoder's error as the person who wrote the JSON
// reads it: the JSON path of the value and what is wrong with it in JSON's
// terms ("messages[2].content: want a string, got 7"), or the byte where
// the text stops being JSON; never the names of the Go types the text was
// decoded into. Explain makes them.
type DecodeError struct {
	// Path says where the problem is: the JSON path of the value, such as
	// messages[2].content, or the record of a file of records
	// (ExplainRecords); "" for the whole text, or when it is not known.
	Path string
	// Offset is the 1-based byte of the text at which it stops being
	// JSON; 0 for a value of the wrong kind, or when it is not known.
	Offset int64
	// Want and Got say, for a value of the wrong kind, what was wanted
	// there and what was found, in JSON's terms: "a string", "7". A caller
	// may say more of what it wants ("a list of subject names").
	Want, Got string
	// Reason says what else is wrong: the syntax error.
	Reason string
	// Err is the decoder's own error.
	Err error
}

func (e *DecodeError) Error() string {
	msg := e.Reason
	if e.Want != "" {
		msg = "want " + e.Want + ", got " + e.Got
	}
	if e.Offset > 0 {
		msg = fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, msg)
	}
	if e.Path != "" {
		msg = e.Path + ": " + msg
	}
	return msg
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Explain words err, an error of encoding/json or goccy/go-json decoding
// data, for the person who wrote data: a value of the wrong kind is named
// by its JSON path from the value data holds, which lies at prefix ("" for
// a whole record, "extra_info" for a member of one), with the kind wanted
// and the value found; a syntax error by the byte of data where it was
// found. data may be nil (a stream), when the path is the decoder's, without
// the positions in lists encoding/json leaves out. Other errors, and nil,
// are returned as they are; an error Explain made is placed at prefix.
func Explain(prefix string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	if de, ok := err.(*DecodeError); ok { // explained already: place it at prefix
		if prefix == "" {
			return err
		}
		c := *de
		c.Path = joinPath(prefix, c.Path)
		return &c
	}
	var already *DecodeError
	if errors.As(err, &already) {
		return err
	}
	var (
		ste *json.UnmarshalTypeError
		gte *gojson.UnmarshalTypeError
		sse *json.SyntaxError
		gse *gojson.SyntaxError
	)
	switch {
	case errors.As(err, &ste):
		return typeError(prefix, data, err, ste.Value, ste.Type, ste.Offset, ste.Field)
	case errors.As(err, &gte):
		return typeError(prefix, data, err, gte.Value, gte.Type, gte.Offset, gte.Field)
	case errors.As(err, &sse):
		return &DecodeError{Path: prefix, Offset: sse.Offset, Reason: syntaxReason(sse.Error(), data, sse.Offset), Err: err}
	case errors.As(err, &gse):
		return &DecodeError{Path: prefix, Offset: gse.Offset, Reason: syntaxReason(gse.Error(), data, gse.Offset), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &DecodeError{Path: prefix, Reason: endOfText, Err: err}
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: "); ok {
		return &DecodeError{Path: prefix, Reason: rest, Err: err}
	}
	return err
}

// ExplainField is Explain for a caller whose own errors name the field:
// it returns the path of the value at fault (prefix when there is none)
// and, apart, what is wrong with it.
func ExplainField(prefix string, data []byte, err error) (string, error) {
	e := Explain(prefix, data, err)
	var de *DecodeError
	if errors.As(e, &de) && de.Path != "" {
		c := *de
		c.Path = ""
		return de.Path, &c
	}
	return prefix, e
}

// Wanting says in a caller's words what a value should be ("a list of
// tool schemas") in err, when err is Explain's for that value being of the
// wrong kind; other errors are returned as they are.
func Wanting(want string, err error) error {
	if de, ok := err.(*DecodeError); ok && de.Path == "" && de.Want != "" {
		c := *de
		c.Want = want
		return &c
	}
	return err
}

// ExplainRecords is Explain for data that is a file holding a JSON array
// of records: the error names the record (1-based), and for a syntax error
// the byte of the file where it is, as in "record 7 at byte 1234: the file
// ends inside the record".
func ExplainRecords(data []byte, err error) error {
	e := Explain("", data, err)
	var de *DecodeError
	if !errors.As(e, &de) {
		return e
	}
	if de.Offset == 0 { // a value of the wrong kind, or no position
		rest, ok := strings.CutPrefix(de.Path, "[")
		end := strings.IndexByte(rest, ']')
		if !ok || end < 0 {
			return e
		}
		n, nerr := strconv.Atoi(rest[:end])
		if nerr != nil {
			return e
		}
		where := fmt.Sprintf("record %d", n+1)
		if inside := strings.TrimPrefix(rest[end+1:], "."); inside != "" {
			where += ": " + inside
		}
		return &DecodeError{Path: where, Want: de.Want, Got: de.Got, Reason: de.Reason, Err: de.Err}
	}
	off := int(de.Offset) - 1 // the byte where the decoder stopped
	if de.Reason == endOfText {
		off = len(data) // past the last byte
	}
	n, start, in := recordAt(data, off)
	switch {
	case in && de.Reason == endOfText:
		return &DecodeError{Path: fmt.Sprintf("record %d at byte %d", n+1, start+1), Reason: "the file ends inside the record", Err: de.Err}
	case in:
		return &DecodeError{Path: fmt.Sprintf("record %d at byte %d", n+1, de.Offset), Reason: de.Reason, Err: de.Err}
	case de.Reason == endOfText && n > 0:
		return &DecodeError{Path: fmt.Sprintf("after record %d", n), Reason: "the file ends before the array is closed", Err: de.Err}
	}
	return e
}

// recordAt finds the element of the JSON array in data that holds the
// byte at off (0-based): its index and where it starts. Outside the
// elements, n counts those that came before off.
func recordAt(data []byte, off int) (n, start int, in bool) {
	var s Scanner
	s.Reset(data)
	if s.Expect('[', "") != nil {
		return 0, 0, false
	}
	for ; ; n++ {
		if c := s.Peek(); c == ']' || c == End || off < s.pos {
			return n, 0, false
		}
		start = s.pos
		if err := s.SkipValue(1); err != nil || off < s.pos {
			return n, start, true
		}
		if more, err := s.More(']', ""); err != nil || !more {
			return n + 1, 0, false
		}
	}
}

const endOfText = "the text ends inside a value"

// syntaxReason is a decoder's syntax error, its end of input said as the
// end of the text, and a byte that is not UTF-8 (which the decoder names
// as the character of its value, 0xff as 'ÿ') as that byte.
func syntaxReason(msg string, data []byte, offset int64) string {
	msg = strings.TrimPrefix(msg, "json: ")
	if msg == "unexpected end of JSON input" {
		return endOfText
	}
	if i := int(offset) - 1; i >= 0 && i < len(data) && data[i] >= utf8.RuneSelf && strings.HasPrefix(msg, "invalid character") {
		if r, size := utf8.DecodeRune(data[i:]); r == utf8.RuneError && size <= 1 {
			return fmt.Sprintf("byte 0x%02x is not UTF-8 text", data[i])
		}
	}
	return msg
}

func typeError(prefix string, data []byte, err error, value string, typ reflect.Type, offset int64, field string) error {
	path, got := "", ""
	if data != nil && offset > 0 {
		if p, start, ok := PathAt(data, int(offset)-1); ok && sameKind(data[start], value) {
			path, got = p, describeAt(data, start)
		}
	}
	if got == "" {
		path, got = decoderPath(field), describeKind(value)
	}
	return &DecodeError{Path: joinPath(prefix, path), Want: Want(typ, value), Got: got, Err: err}
}

// sameKind says the value starting with c is of the kind a decoder named.
func sameKind(c byte, value string) bool {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "object":
		return c == '{'
	case "array":
		return c == '['
	case "string":
		return c == '"'
	case "bool":
		return c == 't' || c == 'f'
	case "number":
		return IsNumberStart(int(c))
	}
	return false
}

// describeAt describes the value at data[start:] for a message: a scalar
// as it is written (a string shortened), "an object", "a list".
func describeAt(data []byte, start int) string {
	var s Scanner
	s.Reset(data[start:])
	switch c := s.Peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == '"':
		v, err := s.ReadString()
		if err != nil {
			return "a string"
		}
		return strconv.Quote(Shorten(string(v)))
	case IsNumberStart(c):
		v, err := s.ReadNumber()
		if err != nil {
			return "a number"
		}
		return Shorten(string(v))
	case c == 't':
		return "true"
	case c == 'f':
		return "false"
	}
	return "null"
}

// describeKind describes a value by the decoder's word for it: "number",
// "number 1.5", "array".
func describeKind(value string) string {
	kind, literal, _ := strings.Cut(value, " ")
	if literal != "" {
		return Shorten(literal)
	}
	switch kind {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "number":
		return "a number"
	}
	return "null"
}

// Want says in JSON's terms what a Go type decodes from: "a string", "a
// list", "an object", "a whole number", "a number", "true or false". value
// is what the decoder found ("number 1e99"), which tells a whole number out
// of range from one with a fraction.
func Want(t reflect.Type, value string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	_, literal, _ := strings.Cut(value, " ")
	integral := literal != "" && !strings.ContainsAny(literal, ".eE")
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if integral {
			bits := t.Bits()
			return fmt.Sprintf("a whole number from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
		}
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if integral || strings.HasPrefix(literal, "-") {
			return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
		}
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		if literal != "" && t.Kind() == reflect.Float32 {
			return "a number from -3.4e38 to 3.4e38"
		} else if literal != "" {
			return "a number from -1.8e308 to 1.8e308"
		}
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a string" // base64
		}
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

// decoderPath writes a decoder's field path (history.0.role) as JSON
// paths are written here (history[0].role).
func decoderPath(p string) string {
	if p == "" {
		return ""
	}
	var b strings.Builder
	for i, part := range strings.Split(p, ".") {
		if i > 0 && part != "" && strings.Trim(part, "0123456789") == "" {
			b.WriteString("[" + part + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// joinPath appends path to prefix: a member (.name) or an element ([i]).
func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case path[0] == '[':
		return prefix + path
	}
	return prefix + "." + path
}

// Member is the path of member key of the value at path: path.key, or
// path["key"] for a key that is not a plain name.
func Member(path, key string) string {
	ident := key != ""
	for i, r := range key {
		if !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			ident = false
			break
		}
	}
	if !ident {
		return path + "[" + strconv.Quote(key) + "]"
	}
	return joinPath(path, key)
}

// PathAt returns the JSON path of the innermost value of data that holds
// the byte at off (0-based): "" for the whole text, "history[2].time" for
// a member's value. start is where that value begins. It is not ok when
// data holds no value at off.
func PathAt(data []byte, off int) (path string, start int, ok bool) {
	var s Scanner
	s.Reset(data)
	return s.pathAt(off, "")
}

func (s *Scanner) pathAt(off int, path string) (string, int, bool) {
	c := s.Peek()
	start := s.pos
	if c == End || off < start {
		return "", 0, false
	}
	if c != '{' && c != '[' {
		return path, start, true
	}
	s.pos++
	for i := 0; ; i++ {
		if s.Peek() == int(c)+2 { // '}' or ']'
			return path, start, true
		}
		elem := fmt.Sprintf("%s[%d]", path, i)
		if c == '{' {
			if s.Peek() != '"' {
				return path, start, true
			}
			key, err := s.ReadString()
			if err != nil || s.Expect(':', "") != nil {
				return path, start, true
			}
			elem = Member(path, string(key))
		}
		if s.Peek() == End || off < s.pos {
			return path, start, true
		}
		vs := s.pos
		if err := s.SkipValue(1); err != nil || off < s.pos {
			s.pos = vs
			if p, st, ok := s.pathAt(off, elem); ok {
				return p, st, true
			}
			return path, start, true
		}
		if more, err := s.More(byte(c)+2, ""); err != nil || !more {
			return path, start, true
		}
	}
}

// ExplainYAML words the errors of go.yaml.in/yaml/v3 decoding a document
// as Explain does JSON's, on one line: "line 9: want a list, got a
// mapping", never the Go type the document was decoded into. A syntax
// error loses its "yaml: "; other errors are returned as they are.
func ExplainYAML(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			msgs[i] = e
			if m := yamlTypeError.FindStringSubmatch(e); m != nil {
				msgs[i] = m[1] + "want " + yamlWant(m[4]) + ", got " + yamlGot(m[2], m[3])
			} else if m := yamlUnknownField.FindStringSubmatch(e); m != nil {
				msgs[i] = m[1] + "unknown field " + strconv.Quote(m[2])
			}
		}
		return &DecodeError{Reason: strings.Join(msgs, "; "), Err: err}
	}
	if rest, ok := strings.CutPrefix(err.Error(), "yaml: "); ok {
		return &DecodeError{Reason: rest, Err: err}
	}
	return err
}

// yamlTypeError is the decoder's message of a value of the wrong kind:
// "line 9: cannot unmarshal !!map into []string".
var yamlTypeError = regexp.MustCompile("^(line \\d+: )?cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// yamlUnknownField is the decoder's message of a member a strict decoder
// does not know: "line 3: field sensitivty not found in type scenario.Scenario".
var yamlUnknownField = regexp.MustCompile(`^(line \d+: )?field (\S+) not found in type .+$`)

// yamlWant says in YAML's terms what the Go type the decoder names decodes
// from.
func yamlWant(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case goType == "time.Duration":
		return "a duration such as 30s"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "a mapping"
}

// yamlGot describes a value by its tag: "a mapping", "a list", or the
// value as it is written.
func yamlGot(tag, value string) string {
	switch {
	case tag == "map":
		return "a mapping"
	case tag == "seq":
		return "a list"
	case tag == "str":
		return strconv.Quote(value)
	case value != "":
		return value
	}
	return tag
}
