package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/timeaware/timeaware/internal/jsonscan"
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
	lines  *jsonscan.LineReader
	line   int
	scan   jsonscan.Scanner
	fields []arrow.Field        // Schema's fields
	top    []array.Builder      // the builder of each of fields, nil if not selected
	rb     *array.RecordBuilder // builds the selected columns
	schema *arrow.Schema
	batch  int
	name   string
	err    error
}

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
		lines:  jsonscan.NewLineReader(f),
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
	return r, nil
}

func (r *jsonlReader) Schema() *arrow.Schema { return r.schema }

func (r *jsonlReader) Next() (arrow.Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rows := 0
	for rows < r.batch {
		line, n, err := r.lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			r.err = fmt.Errorf("dataset: %s: line %d: %w", r.name, n, err)
			return nil, r.err
		}
		r.line = n
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := r.decodeLine(line); err != nil {
			// The builders may hold part of the line: the error is final.
			kind := ErrSchemaMismatch
			if errors.As(err, new(jsonscan.SyntaxError)) {
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

func (r *jsonlReader) decodeLine(line []byte) error {
	s := &r.scan
	s.ResetLine(line)
	if s.Peek() != '{' {
		desc, err := s.Describe()
		if err != nil {
			return err
		}
		return jsonscan.SyntaxError{Err: fmt.Errorf("want a JSON object, got %s", desc)}
	}
	s.Skip(1)
	if err := decodeObject(s, r.fields, nil, r.top, false); err != nil {
		return err
	}
	if s.Peek() != jsonscan.End {
		return s.SyntaxError("after the object")
	}
	return nil
}

// decodeObject decodes the members of an object whose '{' has been read, for
// the given fields, into the struct builder sb or the builders top (one per
// field, at the top level). With neither, it only checks the object.
func decodeObject(s *jsonscan.Scanner, fields []arrow.Field, sb *array.StructBuilder, top []array.Builder, nested bool) error {
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
	if s.Peek() == '}' {
		s.Skip(1)
	} else {
	members:
		for {
			if s.Peek() != '"' {
				return s.SyntaxError("looking for beginning of object key string")
			}
			name, err := s.ReadString()
			if err != nil {
				return err
			}
			i := fieldIndex(fields, name)
			var unknown string
			if i < 0 {
				unknown = string(name) // name is overwritten by the next string
			}
			if err := s.Expect(':', "after object key"); err != nil {
				return err
			}
			switch {
			case i < 0:
				if err := s.SkipValue(1); err != nil {
					return atPath(err, key(unknown))
				}
			case seen[i]:
				return atPath(jsonscan.SyntaxError{Err: errors.New("duplicate key")}, key(fields[i].Name))
			default:
				seen[i] = true
				if err := decodeValue(s, builder(i), fields[i]); err != nil {
					return atPath(err, key(fields[i].Name))
				}
			}
			switch s.Peek() {
			case ',':
				s.Skip(1)
			case '}':
				s.Skip(1)
				break members
			default:
				return s.SyntaxError("after object key:value pair")
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
func decodeValue(s *jsonscan.Scanner, b array.Builder, f arrow.Field) error {
	c := s.Peek()
	if c == 'n' {
		if err := s.Literal("null"); err != nil {
			return err
		}
		return appendNull(b, f)
	}
	switch t := f.Type.(type) {
	case *arrow.StringType, *arrow.LargeStringType:
		if c != '"' {
			return s.TypeError("string")
		}
		v, err := s.ReadString()
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
			return s.TypeError("boolean")
		}
		v := c == 't'
		word := "false"
		if v {
			word = "true"
		}
		if err := s.Literal(word); err != nil {
			return err
		}
		if b != nil {
			b.(*array.BooleanBuilder).Append(v)
		}
	case *arrow.Float64Type, *arrow.Float32Type:
		if !jsonscan.IsNumberStart(c) {
			return s.TypeError("number")
		}
		n, err := s.ReadNumber()
		if err != nil {
			return err
		}
		bits := 64
		if t.ID() == arrow.FLOAT32 {
			bits = 32
		}
		v, err := strconv.ParseFloat(string(n), bits)
		if err != nil {
			return fmt.Errorf("number %s is out of range for %s", jsonscan.Shorten(string(n)), t)
		}
		switch b := b.(type) {
		case *array.Float64Builder:
			b.Append(v)
		case *array.Float32Builder:
			b.Append(float32(v))
		}
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		if !jsonscan.IsNumberStart(c) {
			return s.TypeError(t.String())
		}
		n, err := s.ReadNumber()
		if err != nil {
			return err
		}
		v, err := strconv.ParseInt(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, jsonscan.Shorten(string(n)))
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
		if !jsonscan.IsNumberStart(c) {
			return s.TypeError(t.String())
		}
		n, err := s.ReadNumber()
		if err != nil {
			return err
		}
		v, err := strconv.ParseUint(string(n), 10, t.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return fmt.Errorf("want %s, got number %s", t, jsonscan.Shorten(string(n)))
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
		return s.TypeError("null")
	case *arrow.ListType, *arrow.LargeListType:
		if c != '[' {
			return s.TypeError("array")
		}
		s.Skip(1)
		var vb array.Builder
		if b != nil {
			lb := b.(array.ListLikeBuilder)
			lb.Append(true)
			vb = lb.ValueBuilder()
		}
		if s.Peek() == ']' {
			s.Skip(1)
			return nil
		}
		elem := t.(arrow.ListLikeType).ElemField()
		for i := 0; ; i++ {
			if err := decodeValue(s, vb, elem); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
			switch s.Peek() {
			case ',':
				s.Skip(1)
			case ']':
				s.Skip(1)
				return nil
			default:
				return s.SyntaxError("after array element")
			}
		}
	case *arrow.StructType:
		if c != '{' {
			return s.TypeError("object")
		}
		s.Skip(1)
		var sb *array.StructBuilder
		if b != nil {
			sb = b.(*array.StructBuilder)
			sb.Append(true)
		}
		return decodeObject(s, t.Fields(), sb, nil, true)
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
