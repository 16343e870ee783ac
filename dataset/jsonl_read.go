package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// jsonlReader decodes JSONL against ReadOptions.Schema, BatchRows lines at a
// time. Every line holds one JSON object (blank lines are skipped, a UTF-8
// byte order mark at the start is ignored); keys that are not fields are
// ignored. Decoding is strict, so that a file that does not fit the schema
// fails, naming the line and the value:
//
//   - a missing key reads as null, which only nullable fields accept;
//     floating-point fields read null as NaN, which is how the writer
//     encodes NaN and infinities;
//   - numbers must fit their type exactly (no 1.0 for an integer), strings
//     and booleans are not converted from other kinds, and integers keep
//     all 64 bits.
//
// Every field of Schema is checked on every line, selected or not. Strings
// decode as encoding/json decodes them (invalid UTF-8 and lone surrogates
// become U+FFFD).
type jsonlReader struct {
	br     *bufio.Reader
	long   []byte // a line longer than br's buffer
	line   int
	scan   jsonScanner
	fields []arrow.Field        // Schema's fields
	top    []array.Builder      // the builder of each of fields, nil if not selected
	rb     *array.RecordBuilder // builds the selected columns
	schema *arrow.Schema
	batch  int
	name   string
	err    error
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

func newJSONLReader(f File, opt ReadOptions) (RecordReader, error) {
	opt = opt.withDefaults(f, "jsonl")
	if opt.Schema == nil {
		return nil, fmt.Errorf("dataset: %s: JSONL has no schema of its own: ReadOptions.Schema is required", opt.Name)
	}
	for _, fld := range opt.Schema.Fields() {
		if err := checkJSONType(fld.Type); err != nil {
			return nil, fmt.Errorf("dataset: %s: field %s: %w", opt.Name, fld.Name, err)
		}
	}
	names, err := opt.columnNames(nil)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(names))
	for k, n := range names {
		if fields[k], err = opt.expectedField(n); err != nil {
			return nil, err
		}
	}
	schema := opt.Schema
	if len(opt.Columns) > 0 {
		schema = arrow.NewSchema(fields, opt.schemaMetadata())
	}
	r := &jsonlReader{
		br:     bufio.NewReaderSize(f, 64<<10),
		fields: opt.Schema.Fields(),
		top:    make([]array.Builder, opt.Schema.NumFields()),
		rb:     array.NewRecordBuilder(opt.Allocator, schema),
		schema: schema,
		batch:  opt.BatchRows,
		name:   opt.Name,
	}
	for k, n := range names {
		r.top[opt.Schema.FieldIndices(n)[0]] = r.rb.Field(k)
	}
	if b, _ := r.br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		r.br.Discard(len(utf8BOM))
	}
	return r, nil
}

func (r *jsonlReader) Schema() *arrow.Schema { return r.schema }

func (r *jsonlReader) Next() (arrow.Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rows := 0
	for rows < r.batch {
		line, err := r.readLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			r.err = fmt.Errorf("dataset: %s: line %d: %w", r.name, r.line+1, err)
			return nil, r.err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := r.decodeLine(line); err != nil {
			// The builders may hold part of the line: the error is final.
			kind := ErrSchemaMismatch
			if errors.As(err, new(badJSON)) {
				kind = ErrCorrupt
			}
			r.err = fmt.Errorf("dataset: %s: line %d: %w: %w", r.name, r.line, kind, err)
			return nil, r.err
		}
		rows++
	}
	if rows == 0 {
		r.err = io.EOF
		return nil, io.EOF
	}
	return r.rb.NewRecord(), nil
}

func (r *jsonlReader) Close() error {
	if r.rb != nil {
		r.rb.Release()
		r.rb = nil
	}
	r.top = nil
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}

// readLine returns the next line, valid until the next call.
func (r *jsonlReader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = r.br.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	if len(b) > 0 && (err == nil || err == io.EOF) {
		r.line++
		err = nil // io.EOF: a last line without a newline
	}
	return b, err
}

func (r *jsonlReader) decodeLine(line []byte) error {
	s := &r.scan
	s.reset(line)
	if s.peek() != '{' {
		desc, err := s.describe()
		if err != nil {
			return err
		}
		return badJSON{fmt.Errorf("want a JSON object, got %s", desc)}
	}
	s.pos++
	if err := s.decodeObject(r.fields, nil, r.top, false); err != nil {
		return err
	}
	if s.peek() != end {
		return s.syntaxError("after the object")
	}
	return nil
}

// badJSON marks errors of JSON syntax, as opposed to values that do not fit
// the schema.
type badJSON struct{ err error }

func (e badJSON) Error() string { return e.err.Error() }
func (e badJSON) Unwrap() error { return e.err }

var errEndOfLine = errors.New("unexpected end of line")

// jsonScanner decodes the JSON of one line (RFC 8259, strictly) into Arrow
// builders. It replaces encoding/json's Decoder.Token, which is several
// times slower.
type jsonScanner struct {
	b   []byte
	pos int
	str []byte // unescaped strings
}

// end is what peek returns at the end of the line.
const end = -1

// maxDepth bounds the nesting of skipped values, as encoding/json's does.
const maxDepth = 10000

func (s *jsonScanner) reset(b []byte) { s.b, s.pos = b, 0 }

// peek skips white space and returns the next byte, or end.
func (s *jsonScanner) peek() int {
	for s.pos < len(s.b) {
		switch c := s.b[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return int(c)
		}
	}
	return end
}

// syntaxError reports the byte at s.pos, found where context says.
func (s *jsonScanner) syntaxError(context string) error {
	if s.pos >= len(s.b) {
		return badJSON{errEndOfLine}
	}
	r, _ := utf8.DecodeRune(s.b[s.pos:])
	if s.b[s.pos] < utf8.RuneSelf {
		r = rune(s.b[s.pos])
	}
	return badJSON{fmt.Errorf("invalid character %s %s at byte %d", strconv.QuoteRune(r), context, s.pos+1)}
}

func (s *jsonScanner) expect(c byte, context string) error {
	if s.peek() != int(c) {
		return s.syntaxError(context)
	}
	s.pos++
	return nil
}

func (s *jsonScanner) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.b) || s.b[s.pos] != word[i] {
			return s.syntaxError("in literal " + word)
		}
		s.pos++
	}
	return nil
}

// readString reads the string at s.pos (a '"'). The result is valid until
// the next string is read.
func (s *jsonScanner) readString() ([]byte, error) {
	s.pos++
	start := s.pos
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		if c == '"' {
			s.pos++
			return s.b[start : s.pos-1], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		s.pos++
	}
	s.str = append(s.str[:0], s.b[start:s.pos]...)
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.str, nil
		case c == '\\':
			if s.pos+1 >= len(s.b) {
				return nil, badJSON{errEndOfLine}
			}
			s.pos++
			switch e := s.b[s.pos]; e {
			case '"', '\\', '/':
				s.str = append(s.str, e)
			case 'b':
				s.str = append(s.str, '\b')
			case 'f':
				s.str = append(s.str, '\f')
			case 'n':
				s.str = append(s.str, '\n')
			case 'r':
				s.str = append(s.str, '\r')
			case 't':
				s.str = append(s.str, '\t')
			case 'u':
				r, bad := hex4(s.b, s.pos+1)
				if bad >= 0 {
					s.pos = bad
					if bad >= len(s.b) {
						return nil, badJSON{errEndOfLine}
					}
					return nil, s.syntaxError("in \\u hexadecimal character escape")
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
					} else {
						r = utf8.RuneError
					}
				}
				s.str = utf8.AppendRune(s.str, r)
			default:
				return nil, s.syntaxError("in string escape code")
			}
			s.pos++
		case c < 0x20:
			return nil, s.syntaxError("in string literal")
		case c < utf8.RuneSelf:
			s.str = append(s.str, c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.b[s.pos:])
			if r == utf8.RuneError && size == 1 {
				s.str = utf8.AppendRune(s.str, utf8.RuneError)
			} else {
				s.str = append(s.str, s.b[s.pos:s.pos+size]...)
			}
			s.pos += size
		}
	}
	return nil, badJSON{errEndOfLine}
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

func isNumberStart(c int) bool { return c == '-' || '0' <= c && c <= '9' }

// readNumber reads the number at s.pos.
func (s *jsonScanner) readNumber() ([]byte, error) {
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
		return nil, badJSON{errEndOfLine}
	case s.b[s.pos] == '0':
		s.pos++
	case '1' <= s.b[s.pos] && s.b[s.pos] <= '9':
		digits()
	default:
		return nil, s.syntaxError("in numeric literal")
	}
	if s.pos < len(s.b) && s.b[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return nil, s.syntaxError("after decimal point in numeric literal")
		}
	}
	if s.pos < len(s.b) && (s.b[s.pos] == 'e' || s.b[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.b) && (s.b[s.pos] == '+' || s.b[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return nil, s.syntaxError("in exponent of numeric literal")
		}
	}
	return s.b[start:s.pos], nil
}

// skipValue reads and checks the value at s.pos.
func (s *jsonScanner) skipValue(depth int) error {
	if depth > maxDepth {
		return badJSON{errors.New("exceeded max depth")}
	}
	switch c := s.peek(); {
	case c == '{':
		s.pos++
		if s.peek() == '}' {
			s.pos++
			return nil
		}
		for {
			if s.peek() != '"' {
				return s.syntaxError("looking for beginning of object key string")
			}
			if _, err := s.readString(); err != nil {
				return err
			}
			if err := s.expect(':', "after object key"); err != nil {
				return err
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case '}':
				s.pos++
				return nil
			default:
				return s.syntaxError("after object key:value pair")
			}
		}
	case c == '[':
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return nil
			default:
				return s.syntaxError("after array element")
			}
		}
	case c == '"':
		_, err := s.readString()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case isNumberStart(c):
		_, err := s.readNumber()
		return err
	}
	return s.syntaxError("looking for beginning of value")
}

// describe reads the value at s.pos and describes it for an error.
func (s *jsonScanner) describe() (string, error) {
	switch c := s.peek(); {
	case c == '{':
		return "object", nil
	case c == '[':
		return "array", nil
	case c == '"':
		v, err := s.readString()
		if err != nil {
			return "", err
		}
		return "string " + strconv.Quote(shorten(string(v))), nil
	case c == 't':
		return "boolean true", s.literal("true")
	case c == 'f':
		return "boolean false", s.literal("false")
	case c == 'n':
		return "null", s.literal("null")
	case isNumberStart(c):
		v, err := s.readNumber()
		if err != nil {
			return "", err
		}
		return "number " + shorten(string(v)), nil
	}
	return "", s.syntaxError("looking for beginning of value")
}

func (s *jsonScanner) typeError(want string) error {
	got, err := s.describe()
	if err != nil {
		return err
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// decodeObject decodes the members of an object whose '{' has been read, for
// the given fields, into the struct builder sb or the builders top (one per
// field, at the top level). With neither, it only checks the object.
func (s *jsonScanner) decodeObject(fields []arrow.Field, sb *array.StructBuilder, top []array.Builder, nested bool) error {
	builder := func(i int) array.Builder {
		switch {
		case sb != nil:
			return sb.FieldBuilder(i)
		case top != nil:
			return top[i]
		}
		return nil
	}
	key := func(name string) string {
		if nested {
			return "." + name
		}
		return name
	}
	var seenBuf [32]bool
	var seen []bool
	if len(fields) <= len(seenBuf) {
		seen = seenBuf[:len(fields)]
	} else {
		seen = make([]bool, len(fields))
	}
	if s.peek() == '}' {
		s.pos++
	} else {
	members:
		for {
			if s.peek() != '"' {
				return s.syntaxError("looking for beginning of object key string")
			}
			name, err := s.readString()
			if err != nil {
				return err
			}
			i := fieldIndex(fields, name)
			var unknown string
			if i < 0 {
				unknown = string(name) // name is overwritten by the next string
			}
			if err := s.expect(':', "after object key"); err != nil {
				return err
			}
			switch {
			case i < 0:
				if err := s.skipValue(1); err != nil {
					return atPath(err, key(unknown))
				}
			case seen[i]:
				return atPath(badJSON{errors.New("duplicate key")}, key(fields[i].Name))
			default:
				seen[i] = true
				if err := s.decodeValue(builder(i), fields[i]); err != nil {
					return atPath(err, key(fields[i].Name))
				}
			}
			switch s.peek() {
			case ',':
				s.pos++
			case '}':
				s.pos++
				break members
			default:
				return s.syntaxError("after object key:value pair")
			}
		}
	}
	for i, f := range fields {
		if seen[i] {
			continue
		}
		if !f.Nullable {
			return atPath(errors.New("missing non-nullable field"), key(f.Name))
		}
		if b := builder(i); b != nil {
			b.AppendNull()
		}
	}
	return nil
}

func fieldIndex(fields []arrow.Field, name []byte) int {
	for i := range fields {
		if fields[i].Name == string(name) {
			return i
		}
	}
	return -1
}

// decodeValue decodes the value at s.pos for field f into b, or only checks
// it when b is nil.
func (s *jsonScanner) decodeValue(b array.Builder, f arrow.Field) error {
	c := s.peek()
	if c == 'n' {
		if err := s.literal("null"); err != nil {
			return err
		}
		return appendNull(b, f)
	}
	switch t := f.Type.(type) {
	case *arrow.StringType, *arrow.LargeStringType:
		if c != '"' {
			return s.typeError("string")
		}
		v, err := s.readString()
		if err != nil {
			return err
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.BinaryBuilder.Append(v)
		case *array.LargeStringBuilder:
			b.BinaryBuilder.Append(v)
		}
	case *arrow.BooleanType:
		if c != 't' && c != 'f' {
			return s.typeError("boolean")
		}
		v := c == 't'
		word := "false"
		if v {
			word = "true"
		}
		if err := s.literal(word); err != nil {
			return err
		}
		if b != nil {
			b.(*array.BooleanBuilder).Append(v)
		}
	case *arrow.Float64Type, *arrow.Float32Type:
		if !isNumberStart(c) {
			return s.typeError("number")
		}
		n, err := s.readNumber()
		if err != nil {
			return err
		}
		bits := 64
		if t.ID() == arrow.FLOAT32 {
			bits = 32
		}
		v, err := strconv.ParseFloat(string(n), bits)
		if err != nil {
			return fmt.Errorf("number %s is out of range for %s", shorten(string(n)), t)
		}
		switch b := b.(type) {
		case *array.Float64Builder:
			b.Append(v)
		case *array.Float32Builder:
			b.Append(float32(v))
		}
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		if !isNumberStart(c) {
			return s.typeError(t.String())
		}
		n, err := s.readNumber()
		if err != nil {
			return err
		}
		v, err := strconv.ParseInt(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, shorten(string(n)))
		}
		switch b := b.(type) {
		case *array.Int64Builder:
			b.Append(v)
		case *array.Int32Builder:
			b.Append(int32(v))
		case *array.Int16Builder:
			b.Append(int16(v))
		case *array.Int8Builder:
			b.Append(int8(v))
		}
	case *arrow.Uint64Type, *arrow.Uint32Type, *arrow.Uint16Type, *arrow.Uint8Type:
		if !isNumberStart(c) {
			return s.typeError(t.String())
		}
		n, err := s.readNumber()
		if err != nil {
			return err
		}
		v, err := strconv.ParseUint(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, shorten(string(n)))
		}
		switch b := b.(type) {
		case *array.Uint64Builder:
			b.Append(v)
		case *array.Uint32Builder:
			b.Append(uint32(v))
		case *array.Uint16Builder:
			b.Append(uint16(v))
		case *array.Uint8Builder:
			b.Append(uint8(v))
		}
	case *arrow.NullType:
		return s.typeError("null")
	case *arrow.ListType, *arrow.LargeListType:
		if c != '[' {
			return s.typeError("array")
		}
		s.pos++
		var vb array.Builder
		if b != nil {
			lb := b.(array.ListLikeBuilder)
			lb.Append(true)
			vb = lb.ValueBuilder()
		}
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		elem := t.(arrow.ListLikeType).ElemField()
		for i := 0; ; i++ {
			if err := s.decodeValue(vb, elem); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return nil
			default:
				return s.syntaxError("after array element")
			}
		}
	case *arrow.StructType:
		if c != '{' {
			return s.typeError("object")
		}
		s.pos++
		var sb *array.StructBuilder
		if b != nil {
			sb = b.(*array.StructBuilder)
			sb.Append(true)
		}
		return s.decodeObject(t.Fields(), sb, nil, true)
	default:
		return fmt.Errorf("type %s has no JSON decoding", t)
	}
	return nil
}

// appendNull appends a JSON null for field f. Floating-point fields that are
// not nullable take it as NaN: the writer encodes NaN and infinities as null.
func appendNull(b array.Builder, f arrow.Field) error {
	id := f.Type.ID()
	float := id == arrow.FLOAT64 || id == arrow.FLOAT32
	if !f.Nullable && !float && id != arrow.NULL {
		return errors.New("null in a non-nullable field")
	}
	switch {
	case b == nil:
	case f.Nullable || !float:
		b.AppendNull()
	case id == arrow.FLOAT32:
		b.(*array.Float32Builder).Append(float32(math.NaN()))
	default:
		b.(*array.Float64Builder).Append(math.NaN())
	}
	return nil
}

func shorten(s string) string {
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

// pathError locates an error inside a line: messages[2].content.
type pathError struct {
	path []string // innermost first
	err  error
}

func (e *pathError) Error() string {
	var sb strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		sb.WriteString(e.path[i])
	}
	sb.WriteString(": ")
	sb.WriteString(e.err.Error())
	return sb.String()
}

func (e *pathError) Unwrap() error { return e.err }

func atPath(err error, seg string) error {
	if pe, ok := err.(*pathError); ok {
		pe.path = append(pe.path, seg)
		return pe
	}
	return &pathError{path: []string{seg}, err: err}
}
