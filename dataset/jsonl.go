package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// JSONL writes one JSON object per row with the schema's field order. Null
// values are written as null, never dropped, and floating-point values always
// carry a fraction or exponent (1.0, not 1) so that readers that infer types
// (datasets' json builder, pandas) see the same types as in Parquet.
var JSONL = &Format{
	Name:       "jsonl",
	Extensions: []string{".jsonl", ".ndjson"},
	NewWriter:  newJSONLWriter,
	NewReader:  newJSONLReader,
}

type jsonlWriter struct {
	w      *bufio.Writer
	schema *arrow.Schema
	buf    []byte
}

func newJSONLWriter(w io.Writer, schema *arrow.Schema, _ Options) (RecordWriter, error) {
	for _, f := range schema.Fields() {
		if err := checkJSONType(f.Type); err != nil {
			return nil, fmt.Errorf("dataset: jsonl: field %s: %w", f.Name, err)
		}
	}
	return &jsonlWriter{w: bufio.NewWriterSize(w, 1<<20), schema: schema}, nil
}

func checkJSONType(t arrow.DataType) error {
	switch t := t.(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.BooleanType,
		*arrow.Float64Type, *arrow.Float32Type,
		*arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type,
		*arrow.Uint64Type, *arrow.Uint32Type, *arrow.Uint16Type, *arrow.Uint8Type, *arrow.NullType:
		return nil
	case *arrow.ListType:
		return checkJSONType(t.Elem())
	case *arrow.LargeListType:
		return checkJSONType(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := checkJSONType(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("type %s has no JSON encoding", t)
}

func (j *jsonlWriter) Write(rec arrow.Record) error {
	if !rec.Schema().Equal(j.schema) {
		return fmt.Errorf("dataset: jsonl: record schema differs from the dataset schema")
	}
	cols := rec.Columns()
	for row := 0; row < int(rec.NumRows()); row++ {
		b := append(j.buf[:0], '{')
		for c, f := range j.schema.Fields() {
			if c > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.Name)
			b = append(b, ':')
			b = appendValue(b, cols[c], row)
		}
		b = append(b, '}', '\n')
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlWriter) Close() error { return j.w.Flush() }

func appendValue(b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := a.(type) {
	case *array.String:
		return appendString(b, a.Value(i))
	case *array.LargeString:
		return appendString(b, a.Value(i))
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Float64:
		return appendFloat(b, a.Value(i), 64)
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)), 32)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(b, a.Value(i), 10)
	case *array.Uint32:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for k := start; k < end; k++ {
			if k > start {
				b = append(b, ',')
			}
			b = appendValue(b, vals, int(k))
		}
		return append(b, ']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		for k, f := range st.Fields() {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.Name)
			b = append(b, ':')
			b = appendValue(b, a.Field(k), i)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

func appendFloat(b []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, bits)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b
		}
	}
	return append(b, '.', '0')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are left alone.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

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
// Every field of Schema is checked on every line, selected or not.
type jsonlReader struct {
	br     *bufio.Reader
	long   []byte // a line longer than br's buffer
	line   int
	rd     bytes.Reader
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
	r.rd.Reset(line)
	dec := json.NewDecoder(&r.rd)
	dec.UseNumber()
	tok, err := jsonToken(dec)
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return badJSON{fmt.Errorf("want a JSON object, got %s", describeToken(tok))}
	}
	if err := decodeObject(dec, r.fields, nil, r.top, false); err != nil {
		return err
	}
	switch tok, err := dec.Token(); {
	case err == io.EOF:
		return nil
	case err != nil:
		return badJSON{err}
	default:
		return badJSON{fmt.Errorf("unexpected %s after the object", describeToken(tok))}
	}
}

// badJSON marks errors of JSON syntax, as opposed to values that do not fit
// the schema.
type badJSON struct{ err error }

func (e badJSON) Error() string { return e.err.Error() }
func (e badJSON) Unwrap() error { return e.err }

var errEndOfLine = errors.New("unexpected end of line")

func jsonToken(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return nil, badJSON{errEndOfLine}
	case err != nil:
		return nil, badJSON{err}
	}
	return tok, nil
}

// decodeObject decodes the members of an object whose '{' has been read, for
// the given fields, into the struct builder sb or the builders top (one per
// field, at the top level). With neither, it only checks the object.
func decodeObject(dec *json.Decoder, fields []arrow.Field, sb *array.StructBuilder, top []array.Builder, nested bool) error {
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
	for dec.More() {
		tok, err := jsonToken(dec)
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return badJSON{fmt.Errorf("want an object key, got %s", describeToken(tok))}
		}
		i := fieldIndex(fields, name)
		if i < 0 {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					err = errEndOfLine
				}
				return atPath(badJSON{err}, key(name))
			}
			continue
		}
		if seen[i] {
			return atPath(badJSON{errors.New("duplicate key")}, key(name))
		}
		seen[i] = true
		if err := decodeValue(dec, builder(i), fields[i]); err != nil {
			return atPath(err, key(name))
		}
	}
	if tok, err := jsonToken(dec); err != nil {
		return err
	} else if tok != json.Delim('}') {
		return badJSON{fmt.Errorf("want the end of an object, got %s", describeToken(tok))}
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

func fieldIndex(fields []arrow.Field, name string) int {
	for i := range fields {
		if fields[i].Name == name {
			return i
		}
	}
	return -1
}

// decodeValue decodes one value of field f into b, or only checks it when b
// is nil.
func decodeValue(dec *json.Decoder, b array.Builder, f arrow.Field) error {
	tok, err := jsonToken(dec)
	if err != nil {
		return err
	}
	if tok == nil {
		return appendNull(b, f)
	}
	switch t := f.Type.(type) {
	case *arrow.StringType:
		s, ok := tok.(string)
		if !ok {
			return typeError(tok, "string")
		}
		if b != nil {
			b.(*array.StringBuilder).Append(s)
		}
	case *arrow.LargeStringType:
		s, ok := tok.(string)
		if !ok {
			return typeError(tok, "string")
		}
		if b != nil {
			b.(*array.LargeStringBuilder).Append(s)
		}
	case *arrow.BooleanType:
		v, ok := tok.(bool)
		if !ok {
			return typeError(tok, "boolean")
		}
		if b != nil {
			b.(*array.BooleanBuilder).Append(v)
		}
	case *arrow.Float64Type, *arrow.Float32Type:
		n, ok := tok.(json.Number)
		if !ok {
			return typeError(tok, "number")
		}
		bits := 64
		if _, ok := t.(*arrow.Float32Type); ok {
			bits = 32
		}
		v, err := strconv.ParseFloat(string(n), bits)
		if err != nil {
			return fmt.Errorf("number %s is out of range for %s", shorten(string(n)), t)
		}
		if b != nil {
			if bits == 32 {
				b.(*array.Float32Builder).Append(float32(v))
			} else {
				b.(*array.Float64Builder).Append(v)
			}
		}
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		n, ok := tok.(json.Number)
		if !ok {
			return typeError(tok, t.String())
		}
		v, err := strconv.ParseInt(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, shorten(string(n)))
		}
		if b != nil {
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
		}
	case *arrow.Uint64Type, *arrow.Uint32Type, *arrow.Uint16Type, *arrow.Uint8Type:
		n, ok := tok.(json.Number)
		if !ok {
			return typeError(tok, t.String())
		}
		v, err := strconv.ParseUint(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, shorten(string(n)))
		}
		if b != nil {
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
		}
	case *arrow.NullType:
		return typeError(tok, "null")
	case arrow.ListLikeType:
		if tok != json.Delim('[') {
			return typeError(tok, "array")
		}
		var vb array.Builder
		if b != nil {
			lb := b.(array.ListLikeBuilder)
			lb.Append(true)
			vb = lb.ValueBuilder()
		}
		elem := t.ElemField()
		for i := 0; dec.More(); i++ {
			if err := decodeValue(dec, vb, elem); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
		if tok, err := jsonToken(dec); err != nil {
			return err
		} else if tok != json.Delim(']') {
			return badJSON{fmt.Errorf("want the end of an array, got %s", describeToken(tok))}
		}
	case *arrow.StructType:
		if tok != json.Delim('{') {
			return typeError(tok, "object")
		}
		var sb *array.StructBuilder
		if b != nil {
			sb = b.(*array.StructBuilder)
			sb.Append(true)
		}
		return decodeObject(dec, t.Fields(), sb, nil, true)
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

func typeError(tok json.Token, want string) error {
	return fmt.Errorf("want %s, got %s", want, describeToken(tok))
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(t)
	case json.Number:
		return "number " + shorten(string(t))
	case string:
		return "string " + strconv.Quote(shorten(t))
	case json.Delim:
		switch t {
		case '{':
			return "object"
		case '[':
			return "array"
		}
		return "'" + t.String() + "'"
	}
	return fmt.Sprint(tok)
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
