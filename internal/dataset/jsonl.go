package dataset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
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
			b = AppendJSONString(b, f.Name)
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
		return AppendJSONString(b, a.Value(i))
	case *array.LargeString:
		return AppendJSONString(b, a.Value(i))
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
			b = AppendJSONString(b, f.Name)
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

// AppendJSONString appends s to b as a JSON string and returns the
// extended slice. Quotes and backslashes are escaped, as are control
// characters (\n, \r and \t by name, the rest as \u00XX); U+2028 and
// U+2029 are escaped for JavaScript readers; each invalid UTF-8 byte becomes
// \ufffd, as encoding/json does; HTML characters are left alone.
func AppendJSONString(b []byte, s string) []byte {
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
