package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readSchema is testSchema (the shapes of a pairs dataset) with an id first.
var readSchema = arrow.NewSchema(append([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, testSchema.Fields()...), nil)

// readBatches are the test rows in three record batches.
var readBatches = [][]testRow{testBatches[0][:2], testBatches[0][2:], testBatches[1]}

// schemaWith returns readSchema with the named field replaced.
func schemaWith(name string, f arrow.Field) *arrow.Schema {
	fields := readSchema.Fields()
	for i := range fields {
		if fields[i].Name == name {
			fields[i] = f
		}
	}
	return arrow.NewSchema(fields, nil)
}

// buildIDRecord builds a record of readSchema whose ids count from first.
func buildIDRecord(t testing.TB, mem memory.Allocator, rows []testRow, first int) arrow.Record {
	t.Helper()
	rec := buildRecord(t, mem, rows)
	defer rec.Release()
	ib := array.NewStringBuilder(mem)
	defer ib.Release()
	for i := range rows {
		ib.Append(fmt.Sprintf("row-%d", first+i))
	}
	ids := ib.NewArray()
	defer ids.Release()
	return array.NewRecord(readSchema, append([]arrow.Array{ids}, rec.Columns()...), int64(len(rows)))
}

// writeIDs writes batches of readSchema with f and returns the file and the
// rows as decoded values.
func writeIDs(t testing.TB, f *Format, opt Options, batches [][]testRow) ([]byte, []map[string]any) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf, readSchema, opt)
	require.NoError(t, err)
	var want []map[string]any
	for _, rows := range batches {
		rec := buildIDRecord(t, mem, rows, len(want))
		for _, v := range rowValues(rows) {
			v["id"] = fmt.Sprintf("row-%d", len(want))
			want = append(want, v)
		}
		err := w.Write(rec)
		rec.Release()
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	mem.AssertSize(t, 0)
	return buf.Bytes(), want
}

// project keeps the named values of rows.
func project(rows []map[string]any, cols ...string) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = make(map[string]any, len(cols))
		for _, c := range cols {
			out[i][c] = r[c]
		}
	}
	return out
}

type readResult struct {
	schema  *arrow.Schema
	rows    []map[string]any
	batches []int64
}

// readAll reads a whole dataset; the error is the reader's or Next's. When
// opt has no allocator, it uses a checked one and asserts that the reader
// leaks nothing, errors included.
func readAll(t *testing.T, open func(ReadOptions) (RecordReader, error), opt ReadOptions) (readResult, error) {
	t.Helper()
	var mem *memory.CheckedAllocator
	if opt.Allocator == nil {
		mem = memory.NewCheckedAllocator(memory.NewGoAllocator())
		opt.Allocator = mem
		defer mem.AssertSize(t, 0)
	}
	var res readResult
	r, err := open(opt)
	if err != nil {
		return res, err
	}
	defer func() { assert.NoError(t, r.Close()) }()
	res.schema = r.Schema()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			_, again := r.Next()
			assert.Equal(t, err, again, "errors are final")
			return res, err
		}
		assert.True(t, rec.Schema().Equal(res.schema), "record schema %s, reader schema %s", rec.Schema(), res.schema)
		assert.Positive(t, rec.NumRows())
		res.rows = append(res.rows, recordValues(rec)...)
		res.batches = append(res.batches, rec.NumRows())
		rec.Release()
	}
}

func readBytes(f *Format, data []byte) func(ReadOptions) (RecordReader, error) {
	return func(opt ReadOptions) (RecordReader, error) { return f.NewReader(bytes.NewReader(data), opt) }
}

func openBytes(name string, data []byte) func(ReadOptions) (RecordReader, error) {
	return func(opt ReadOptions) (RecordReader, error) { return Open(bytes.NewReader(data), name, nil, opt) }
}

func TestAllFormatsReadable(t *testing.T) {
	for _, f := range All {
		assert.NotNil(t, f.NewReader, "format %s has no reader", f.Name)
	}
}

func TestReadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  ReadOptions
	}{
		{"schema", ReadOptions{Schema: readSchema}},
		{"schema, 2 rows a batch", ReadOptions{Schema: readSchema, BatchRows: 2}},
		{"schema, 1 row a batch", ReadOptions{Schema: readSchema, BatchRows: 1}},
		{"file schema", ReadOptions{}},
		{"file schema, 2 rows a batch", ReadOptions{BatchRows: 2}},
	} {
		for _, f := range All {
			t.Run(tc.name+"/"+f.Name, func(t *testing.T) {
				if tc.opt.Schema == nil && f == JSONL {
					t.Skip("JSONL requires a schema")
				}
				data, want := writeIDs(t, f, Options{}, readBatches)
				res, err := readAll(t, readBytes(f, data), tc.opt)
				require.NoError(t, err)
				if tc.opt.Schema != nil {
					assert.True(t, res.schema.Equal(tc.opt.Schema), "schema %s", res.schema)
				}
				assertSameTypes(t, readSchema, res.schema)
				require.Len(t, res.rows, len(want))
				for i := range want {
					assert.Equal(t, want[i], res.rows[i], "row %d", i)
				}
				batch := int64(tc.opt.BatchRows)
				if batch == 0 {
					batch = defaultBatchRows
				}
				for _, n := range res.batches {
					assert.LessOrEqual(t, n, batch)
				}
				if batch == 1 {
					assert.Len(t, res.batches, len(want))
				}
			})
		}
	}
}

func TestReadColumns(t *testing.T) {
	for _, cols := range [][]string{
		{"id", "prompt"},
		{"prompt", "id"},
		{"messages", "score"},
		{"label", "messages", "ok"},
		{"elapse"},
	} {
		for _, schema := range []*arrow.Schema{readSchema, nil} {
			for _, f := range All {
				name := fmt.Sprintf("%s/schema=%t/%s", strings.Join(cols, ","), schema != nil, f.Name)
				t.Run(name, func(t *testing.T) {
					if schema == nil && f == JSONL {
						t.Skip("JSONL requires a schema")
					}
					data, want := writeIDs(t, f, Options{}, readBatches)
					res, err := readAll(t, readBytes(f, data), ReadOptions{Schema: schema, Columns: cols, BatchRows: 2})
					require.NoError(t, err)
					var names []string
					for _, fld := range res.schema.Fields() {
						names = append(names, fld.Name)
						i := readSchema.FieldIndices(fld.Name)
						require.Len(t, i, 1)
						wf := readSchema.Field(i[0])
						assert.True(t, arrow.TypeEqual(wf.Type, fld.Type), "column %s is %s", fld.Name, fld.Type)
						assert.Equal(t, wf.Nullable, fld.Nullable)
					}
					assert.Equal(t, cols, names)
					assert.Equal(t, project(want, cols...), res.rows)
				})
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opt      ReadOptions
		is       error
		contains []string
		jsonlOK  bool
	}{
		{
			name:     "missing column",
			opt:      ReadOptions{Schema: readSchema, Columns: []string{"id", "nope"}},
			is:       ErrColumnNotFound,
			contains: []string{`"nope"`},
		},
		{
			name:     "missing column without schema",
			opt:      ReadOptions{Columns: []string{"nope"}},
			is:       ErrColumnNotFound,
			contains: []string{`"nope"`},
		},
		{
			name: "column not in the expected schema",
			opt: ReadOptions{
				Schema:  arrow.NewSchema(readSchema.Fields()[:3], nil),
				Columns: []string{"id", "score"},
			},
			is:       ErrColumnNotFound,
			contains: []string{`"score"`},
		},
		{
			name:     "expected column missing",
			opt:      ReadOptions{Schema: arrow.NewSchema(append(readSchema.Fields(), arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true}), nil)},
			is:       ErrColumnNotFound,
			contains: []string{`"extra"`},
			jsonlOK:  true,
		},
		{
			name:     "column selected twice",
			opt:      ReadOptions{Schema: readSchema, Columns: []string{"id", "prompt", "id"}},
			contains: []string{`"id"`, "twice"},
		},
		{
			name:     "wrong type",
			opt:      ReadOptions{Schema: schemaWith("prompt", arrow.Field{Name: "prompt", Type: arrow.PrimitiveTypes.Int64})},
			is:       ErrSchemaMismatch,
			contains: []string{"prompt"},
		},
		{
			name:     "wrong type of a selected column",
			opt:      ReadOptions{Schema: schemaWith("margin", arrow.Field{Name: "margin", Type: arrow.BinaryTypes.String}), Columns: []string{"id", "margin"}},
			is:       ErrSchemaMismatch,
			contains: []string{"margin"},
		},
		{
			name:     "nullable column expected not nullable",
			opt:      ReadOptions{Schema: schemaWith("label", arrow.Field{Name: "label", Type: arrow.BinaryTypes.String})},
			is:       ErrSchemaMismatch,
			contains: []string{"label"},
		},
		{
			name: "nested type",
			opt: ReadOptions{Schema: schemaWith("messages", arrow.Field{Name: "messages", Type: arrow.ListOf(arrow.StructOf(
				arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
				arrow.Field{Name: "content", Type: arrow.BinaryTypes.String}, // not nullable
				arrow.Field{Name: "tool_calls", Type: arrow.ListOf(testToolCallType), Nullable: true},
				arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			))})},
			is:       ErrSchemaMismatch,
			contains: []string{"messages"},
		},
	} {
		for _, f := range All {
			t.Run(tc.name+"/"+f.Name, func(t *testing.T) {
				if tc.opt.Schema == nil && f == JSONL {
					t.Skip("JSONL requires a schema")
				}
				if tc.jsonlOK && f == JSONL {
					t.Skip("JSONL reads a missing nullable field as null")
				}
				data, _ := writeIDs(t, f, Options{}, readBatches)
				name := filepath.Join("data", "train"+f.Extensions[0])
				_, err := readAll(t, openBytes(name, data), tc.opt)
				require.Error(t, err)
				t.Log(err)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is)
				}
				assert.True(t, strings.HasPrefix(err.Error(), "dataset: "+name+": "), "error %q does not name the file", err)
				for _, s := range tc.contains {
					assert.Contains(t, err.Error(), s)
				}
			})
		}
	}
}

// countingFile counts the bytes read from it.
type countingFile struct {
	*bytes.Reader
	n atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.Reader.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func TestReadParquetStreams(t *testing.T) {
	const nrows, groupRows, batchRows = 2000, 200, 64
	rows := make([]testRow, nrows)
	for i := range rows {
		rows[i] = testRow{
			Messages: []*testMessage{{Role: "user", Content: ptr(fmt.Sprintf("message %d %x", i, i*2654435761))}},
			Prompt:   fmt.Sprintf("prompt %d %x %x", i, i*40503, i*i*2246822519),
			Margin:   float64(i) / 7,
			Elapse:   int64(i) * 1e9,
		}
	}
	data, want := writeIDs(t, Parquet, Options{RowGroupRows: groupRows}, [][]testRow{rows[:500], rows[500:]})
	pf := openParquet(t, data)
	require.Equal(t, nrows/groupRows, pf.NumRowGroups())
	// The footer, and the first row group twice (the reader checks its pages
	// before Arrow decodes them), with some slack for the reads of headers.
	footer := int64(binary.LittleEndian.Uint32(data[len(data)-8:])) + 8
	firstBatch := footer + 2*pf.MetaData().RowGroup(0).TotalCompressedSize() + 4<<10
	require.Less(t, firstBatch, int64(len(data)/2))

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	file := &countingFile{Reader: bytes.NewReader(data)}
	r, err := Parquet.NewReader(file, ReadOptions{Schema: readSchema, BatchRows: batchRows, Allocator: mem})
	require.NoError(t, err)
	var got []map[string]any
	var batches int
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if batches == 0 {
			// One row group has been read, not the file.
			assert.LessOrEqual(t, file.n.Load(), firstBatch, "read %d of %d bytes for the first batch", file.n.Load(), len(data))
		}
		batches++
		assert.LessOrEqual(t, rec.NumRows(), int64(batchRows))
		got = append(got, recordValues(rec)...)
		rec.Release()
	}
	require.NoError(t, r.Close())
	mem.AssertSize(t, 0)
	// Batches do not span row groups.
	assert.Equal(t, nrows/groupRows*((groupRows+batchRows-1)/batchRows), batches)
	require.Len(t, got, nrows)
	assert.Equal(t, want, got)
}

func TestReadArrowSplitsBatches(t *testing.T) {
	rows := make([]testRow, 10)
	for i := range rows {
		rows[i] = testRow{Prompt: fmt.Sprint(i), Messages: []*testMessage{}}
	}
	data, want := writeIDs(t, ArrowIPC, Options{}, [][]testRow{rows[:7], rows[7:]})
	for _, tc := range []struct {
		batch int
		want  []int64
	}{
		{3, []int64{3, 3, 1, 3}},
		{7, []int64{7, 3}},
		{100, []int64{7, 3}},
		{1, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(fmt.Sprint(tc.batch), func(t *testing.T) {
			res, err := readAll(t, readBytes(ArrowIPC, data), ReadOptions{BatchRows: tc.batch, Columns: []string{"prompt", "id"}})
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.batches)
			assert.Equal(t, project(want, "prompt", "id"), res.rows)
		})
	}
}

func TestReadJSONLRequiresSchema(t *testing.T) {
	data, _ := writeIDs(t, JSONL, Options{}, readBatches)
	_, err := readAll(t, openBytes("train.jsonl", data), ReadOptions{Columns: []string{"id"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dataset: train.jsonl: ")
	assert.Contains(t, err.Error(), "Schema")

	_, err = JSONL.NewReader(bytes.NewReader(data), ReadOptions{Schema: arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.FixedWidthTypes.Date32}}, nil)})
	assert.ErrorContains(t, err, "no JSON encoding")
}

// jsonlSchema exercises the JSONL decoder's rules.
var jsonlSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64},
	{Name: "opt", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "meta", Type: arrow.StructOf(
		arrow.Field{Name: "k", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		arrow.Field{Name: "u", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	), Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

func TestReadJSONLLines(t *testing.T) {
	row := func(id string, n, x float64, opt, tags, meta, ok any) map[string]any {
		return map[string]any{"id": id, "n": n, "x": x, "opt": opt, "tags": tags, "meta": meta, "ok": ok}
	}
	for _, tc := range []struct {
		name string
		in   string
		want []map[string]any // with numbers as float64, as recordValues gives them
		err  string           // the error's text after the file name
		is   error
	}{
		{
			name: "full",
			in:   `{"id":"a","n":-3,"x":1.0,"opt":"o","tags":["t","u"],"meta":{"k":"kk","v":0.5,"u":255},"ok":true}` + "\n",
			want: []map[string]any{row("a", -3, 1, "o", []any{"t", "u"}, map[string]any{"k": "kk", "v": 0.5, "u": 255.0}, true)},
		},
		{
			name: "nulls and missing nullable keys",
			in:   `{"id":"a","n":0,"x":2,"opt":null,"meta":{"k":"","v":null}}` + "\n" + `{"n":1,"x":-1e-7,"id":"b","tags":[],"meta":null,"ok":null}` + "\n",
			want: []map[string]any{
				row("a", 0, 2, nil, nil, map[string]any{"k": "", "v": nil, "u": nil}, nil),
				row("b", 1, -1e-7, nil, []any{}, nil, nil),
			},
		},
		{
			name: "unknown keys are ignored",
			in:   `{"extra":{"a":[1,{"b":null}]},"id":"a","n":1,"x":1,"meta":{"k":"k","more":[true]},"more":"x"}` + "\n",
			want: []map[string]any{row("a", 1, 1, nil, nil, map[string]any{"k": "k", "v": nil, "u": nil}, nil)},
		},
		{
			name: "blank lines, CRLF, BOM, no final newline",
			in:   "\xef\xbb\xbf" + `{"id":"a","n":1,"x":1}` + "\r\n\n  \t\r\n" + `{"id":"b","n":2,"x":2}`,
			want: []map[string]any{row("a", 1, 1, nil, nil, nil, nil), row("b", 2, 2, nil, nil, nil, nil)},
		},
		{
			name: "empty file",
			in:   "",
		},
		{
			name: "escapes and unicode",
			in:   `{"id":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 ✓","n":1,"x":1}` + "\n",
			want: []map[string]any{row("\"\\/\b\f\n\r\té😀 ✓", 1, 1, nil, nil, nil, nil)},
		},
		{name: "fraction for an integer", in: `{"id":"a","n":1.0,"x":1}`, err: "line 1: schema mismatch: n: want int64, got number 1.0", is: ErrSchemaMismatch},
		{name: "exponent for an integer", in: `{"id":"a","n":1e3,"x":1}`, err: "line 1: schema mismatch: n: want int64, got number 1e3"},
		{name: "integer overflow", in: `{"id":"a","n":9223372036854775808,"x":1}`, err: "n: want int64, got number 9223372036854775808"},
		{name: "uint8 overflow", in: `{"id":"a","n":1,"x":1,"meta":{"k":"","u":256}}`, err: "meta.u: want uint8, got number 256"},
		{name: "negative uint", in: `{"id":"a","n":1,"x":1,"meta":{"k":"","u":-1}}`, err: "meta.u: want uint8, got number -1"},
		{name: "float overflow", in: `{"id":"a","n":1,"x":1e400}`, err: "x: number 1e400 is out of range for float64"},
		{name: "float32 overflow", in: `{"id":"a","n":1,"x":1,"meta":{"k":"","v":1e39}}`, err: "meta.v: number 1e39 is out of range for float32"},
		{name: "string for a number", in: `{"id":"a","n":"1","x":1}`, err: `n: want int64, got string "1"`},
		{name: "number for a string", in: `{"id":1,"n":1,"x":1}`, err: "id: want string, got number 1"},
		{name: "string for a boolean", in: `{"id":"a","n":1,"x":1,"ok":"true"}`, err: `ok: want boolean, got string "true"`},
		{name: "object for a list", in: `{"id":"a","n":1,"x":1,"tags":{}}`, err: "tags: want array, got object"},
		{name: "list element", in: `{"id":"a","n":1,"x":1,"tags":["a",2]}`, err: "tags[1]: want string, got number 2"},
		{name: "list for a struct", in: `{"id":"a","n":1,"x":1,"meta":[]}`, err: "meta: want object, got array"},
		{name: "null in a non-nullable field", in: `{"id":null,"n":1,"x":1}`, err: "id: null in a non-nullable field"},
		{name: "null in a non-nullable struct field", in: `{"id":"a","n":1,"x":1,"meta":{"k":null}}`, err: "meta.k: null in a non-nullable field"},
		{name: "missing non-nullable field", in: `{"id":"a","x":1}`, err: "n: missing non-nullable field"},
		{name: "missing non-nullable struct field", in: `{"id":"a","n":1,"x":1,"meta":{"v":1}}`, err: "meta.k: missing non-nullable field"},
		{name: "duplicate key", in: `{"id":"a","n":1,"x":1,"n":2}`, err: "line 1: corrupt data: n: duplicate key", is: ErrCorrupt},
		{name: "not an object", in: `["a",1,1]`, err: "line 1: corrupt data: want a JSON object, got array", is: ErrCorrupt},
		{name: "truncated line", in: `{"id":"a","n":1,"x":1` + "\n", err: "line 1: corrupt data: unexpected end of line", is: ErrCorrupt},
		{name: "truncated unknown value", in: `{"id":"a","n":1,"x":1,"zz":[1,` + "\n", err: "line 1: corrupt data: zz: unexpected end of line", is: ErrCorrupt},
		{name: "two objects on a line", in: `{"id":"a","n":1,"x":1} {"id":"b","n":1,"x":1}`, err: "line 1: corrupt data: invalid character '{' after the object at byte 24", is: ErrCorrupt},
		{name: "trailing garbage", in: `{"id":"a","n":1,"x":1} x`, err: "line 1: corrupt data: invalid character 'x' after the object at byte 24", is: ErrCorrupt},
		{name: "syntax error", in: `{"id":"a" "n":1}`, err: "line 1: corrupt data: invalid character", is: ErrCorrupt},
		{name: "pretty-printed object", in: "{\n\"id\":\"a\",\"n\":1,\"x\":1}\n", err: "line 1: corrupt data: unexpected end of line", is: ErrCorrupt},
		{
			name: "line number",
			in:   `{"id":"a","n":1,"x":1}` + "\n\n" + `{"id":"b","n":2,"x":2}` + "\n" + `{"id":"c","n":3,"x":"3"}` + "\n",
			err:  `line 4: schema mismatch: x: want number, got string "3"`,
		},
		{
			name: "long value shortened",
			in:   `{"id":"a","n":1,"x":"` + strings.Repeat("é", 100) + `"}`,
			err:  `x: want number, got string "` + strings.Repeat("é", 20) + `…"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := readAll(t, openBytes("t.jsonl", []byte(tc.in)), ReadOptions{Schema: jsonlSchema, BatchRows: 1})
			if tc.err != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "dataset: t.jsonl: line "), "error %q", err)
				assert.Contains(t, err.Error(), tc.err)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.rows)
		})
	}
}

func TestReadJSONLExactNumbers(t *testing.T) {
	in := `{"id":"a","n":9223372036854775807,"x":0.1}` + "\n" +
		`{"id":"b","n":-9223372036854775808,"x":1e308}` + "\n" +
		`{"id":"c","n":9007199254740993,"x":null}` + "\n"
	r, err := JSONL.NewReader(strings.NewReader(in), ReadOptions{Schema: jsonlSchema})
	require.NoError(t, err)
	defer r.Close()
	rec, err := r.Next()
	require.NoError(t, err)
	defer rec.Release()
	assert.Equal(t, []int64{math.MaxInt64, math.MinInt64, 9007199254740993}, rec.Column(1).(*array.Int64).Int64Values())
	x := rec.Column(2).(*array.Float64)
	assert.Equal(t, 0.1, x.Value(0))
	assert.Equal(t, 1e308, x.Value(1))
	// The writer writes NaN as null; a non-nullable float reads it back.
	assert.True(t, x.IsValid(2))
	assert.True(t, math.IsNaN(x.Value(2)))
	_, err = r.Next()
	assert.Equal(t, io.EOF, err)
}

// TestReadJSONLNaN reads back what the writer makes of NaN and infinities.
func TestReadJSONLNaN(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{math.NaN(), math.Inf(1), 1}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{math.NaN(), 2, 0}, []bool{true, true, false})
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := JSONL.NewWriter(&buf, schema, Options{})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	r, err := JSONL.NewReader(bytes.NewReader(buf.Bytes()), ReadOptions{Schema: schema})
	require.NoError(t, err)
	defer r.Close()
	got, err := r.Next()
	require.NoError(t, err)
	defer got.Release()
	x, y := got.Column(0).(*array.Float64), got.Column(1).(*array.Float64)
	assert.Equal(t, 0, x.NullN())
	assert.True(t, math.IsNaN(x.Value(0)))
	assert.True(t, math.IsNaN(x.Value(1)), "infinity reads back as NaN")
	assert.Equal(t, 1.0, x.Value(2))
	assert.True(t, y.IsNull(0), "NaN in a nullable column reads back as null")
	assert.Equal(t, 2.0, y.Value(1))
	assert.True(t, y.IsNull(2))
}

func TestOpen(t *testing.T) {
	for _, f := range All {
		data, want := writeIDs(t, f, Options{}, readBatches)
		for _, ext := range f.Extensions {
			for _, name := range []string{"train" + ext, filepath.Join("dir", "TRAIN"+strings.ToUpper(ext))} {
				t.Run(f.Name+"/"+name, func(t *testing.T) {
					res, err := readAll(t, openBytes(name, data), ReadOptions{Schema: readSchema, Columns: []string{"id", "prompt"}})
					require.NoError(t, err)
					assert.Equal(t, project(want, "id", "prompt"), res.rows)
				})
			}
		}
		t.Run(f.Name+"/format given", func(t *testing.T) {
			res, err := readAll(t, func(opt ReadOptions) (RecordReader, error) {
				return Open(bytes.NewReader(data), "train.bin", f, opt)
			}, ReadOptions{Schema: readSchema})
			require.NoError(t, err)
			assert.Equal(t, want, res.rows)
		})
	}
	for _, name := range []string{"train.csv", "train", "dir.parquet/train.json"} {
		t.Run("unknown/"+name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(nil), name, nil, ReadOptions{Schema: readSchema})
			require.ErrorIs(t, err, ErrUnknownFormat)
			assert.True(t, strings.HasPrefix(err.Error(), "dataset: "+name+": "), "error %q", err)
			assert.Contains(t, err.Error(), ".parquet")
		})
	}
	t.Run("no reader", func(t *testing.T) {
		_, err := Open(bytes.NewReader(nil), "x.y", &Format{Name: "y"}, ReadOptions{})
		assert.EqualError(t, err, "dataset: x.y: format y cannot be read")
	})
}

// TestReadOSFile checks that errors name an *os.File by its path and that
// the readers leave the file open.
func TestReadOSFile(t *testing.T) {
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			data, want := writeIDs(t, f, Options{}, readBatches)
			path := filepath.Join(t.TempDir(), "train"+f.Extensions[0])
			require.NoError(t, os.WriteFile(path, data, 0o644))
			file, err := os.Open(path)
			require.NoError(t, err)
			defer file.Close()

			_, err = f.NewReader(file, ReadOptions{Schema: readSchema, Columns: []string{"nope"}})
			require.ErrorIs(t, err, ErrColumnNotFound)
			assert.True(t, strings.HasPrefix(err.Error(), "dataset: "+path+": "), "error %q", err)

			_, err = file.Seek(0, io.SeekStart)
			require.NoError(t, err)
			res, err := readAll(t, func(opt ReadOptions) (RecordReader, error) { return f.NewReader(file, opt) }, ReadOptions{Schema: readSchema})
			require.NoError(t, err)
			assert.Equal(t, want, res.rows)
			_, err = file.Stat()
			assert.NoError(t, err, "the reader closed the file")
		})
	}
}

func TestReadCloseEarly(t *testing.T) {
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			data, _ := writeIDs(t, f, Options{}, readBatches)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			r, err := f.NewReader(bytes.NewReader(data), ReadOptions{Schema: readSchema, BatchRows: 1, Allocator: mem})
			require.NoError(t, err)
			rec, err := r.Next()
			require.NoError(t, err)
			require.NoError(t, r.Close())
			rec.Release()
			require.NoError(t, r.Close(), "second Close")
			_, err = r.Next()
			assert.Error(t, err, "Next after Close")
			mem.AssertSize(t, 0)
		})
	}
}

// TestReadCorrupt reads damaged files: they must fail or read, never panic.
func TestReadCorrupt(t *testing.T) {
	for _, f := range All {
		data, _ := writeIDs(t, f, Options{RowGroupRows: 2}, readBatches)
		type variant struct {
			name    string
			data    []byte
			wantErr bool
		}
		var variants []variant
		for _, n := range []int{0, 1, 4, 12, len(data) / 3, len(data) / 2, len(data) - 20, len(data) - 2, len(data) - 1} {
			// A JSONL file cut at a line end is complete, or is when the
			// final newline alone is missing.
			wantErr := f != JSONL || n > 0 && n < len(data)-1 && data[n-1] != '\n'
			variants = append(variants, variant{fmt.Sprintf("truncated to %d", n), data[:n], wantErr})
		}
		for i := 0; i < len(data); i += max(1, len(data)/40) {
			for _, x := range []byte{0xff, 0x01, 0x80} {
				d := bytes.Clone(data)
				d[i] ^= x
				variants = append(variants, variant{fmt.Sprintf("byte %d ^ %#x", i, x), d, false})
			}
		}
		variants = append(variants,
			variant{"garbage", []byte("not a dataset\n"), true},
			variant{"zeros", make([]byte, 1000), true},
		)
		for _, v := range variants {
			t.Run(f.Name+"/"+v.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() {
					// Decoders that panic on damaged data and are stopped
					// midway may leak: no leak check.
					_, err = readAll(t, readBytes(f, v.data), ReadOptions{Schema: readSchema, BatchRows: 2, Allocator: memory.NewGoAllocator()})
				})
				if v.wantErr {
					require.Error(t, err)
				}
				if err != nil {
					assert.True(t, strings.HasPrefix(err.Error(), "dataset: "+f.Name+": "), "error %q", err)
				}
			})
		}
	}
}

func TestReadNoLeaksOnErrors(t *testing.T) {
	// readAll asserts that nothing leaks; these fail after some batches.
	data, _ := writeIDs(t, JSONL, Options{}, readBatches)
	bad := append(bytes.Clone(data), []byte(`{"id":"x","messages":"oops"}`+"\n")...)
	_, err := readAll(t, readBytes(JSONL, bad), ReadOptions{Schema: readSchema, BatchRows: 2})
	assert.ErrorIs(t, err, ErrSchemaMismatch)
	assert.ErrorContains(t, err, "line 6: schema mismatch: messages: want array")

	for _, f := range []*Format{Parquet, ArrowIPC} {
		data, _ := writeIDs(t, f, Options{}, readBatches)
		_, err := readAll(t, readBytes(f, data), ReadOptions{Schema: schemaWith("ok", arrow.Field{Name: "ok", Type: arrow.PrimitiveTypes.Int8})})
		assert.ErrorIs(t, err, ErrSchemaMismatch)
	}
}

// errFile fails every read after the first n bytes.
type errFile struct {
	*bytes.Reader
	n int64
}

var errDisk = errors.New("disk on fire")

func (e *errFile) Read(p []byte) (int, error) {
	pos, _ := e.Reader.Seek(0, io.SeekCurrent)
	if pos >= e.n {
		return 0, errDisk
	}
	if int64(len(p)) > e.n-pos {
		p = p[:e.n-pos]
	}
	return e.Reader.Read(p)
}

func (e *errFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > e.n {
		return 0, errDisk
	}
	return e.Reader.ReadAt(p, off)
}

func TestReadIOError(t *testing.T) {
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			data, _ := writeIDs(t, f, Options{}, readBatches)
			_, err := readAll(t, func(opt ReadOptions) (RecordReader, error) {
				return f.NewReader(&errFile{Reader: bytes.NewReader(data), n: int64(len(data) / 2)}, opt)
			}, ReadOptions{Schema: readSchema, BatchRows: 1, Allocator: memory.NewGoAllocator()})
			require.Error(t, err)
			t.Log(err)
			assert.True(t, strings.HasPrefix(err.Error(), "dataset: "+f.Name+": "), "error %q", err)
		})
	}
}

func FuzzReadJSONL(f *testing.F) {
	data, _ := writeIDs(f, JSONL, Options{}, readBatches)
	f.Add(data)
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"id":"a","messages":[null,{"role":"r","tool_calls":[{"id":"i","type":"t","function":{"name":"n","arguments":"a"}}]}],"prompt":"p","margin":null,"elapse":1,"ok":true}`))
	f.Add([]byte(`{"id":"a","messages":[{"content":"missing role"}],"prompt":"p","margin":1,"elapse":1,"ok":true}`))
	f.Add([]byte(`{"messages":[{"role":"r","tool_calls":[{"function":{}}]}]}`))
	f.Add([]byte("{\"id\":\"a\",\"prompt\":\"\xff\",\"x\":[1,{\"y\":[]}]}\n\n{}\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, err := JSONL.NewReader(bytes.NewReader(data), ReadOptions{Schema: readSchema, BatchRows: 2, Allocator: mem})
		require.NoError(t, err)
		defer r.Close()
		for {
			rec, err := r.Next()
			if err != nil {
				if err != io.EOF {
					require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrSchemaMismatch), "error %v", err)
				}
				return
			}
			require.LessOrEqual(t, rec.NumRows(), int64(2))
			for _, col := range rec.Columns() {
				require.Equal(t, int(rec.NumRows()), col.Len())
			}
			_ = recordValues(rec) // every value can be reached
			rec.Release()
		}
	})
}

// TestReadParquetWithoutStoredSchema reads Parquet written without the Arrow
// schema in its metadata, as other writers may: the types come from the
// Parquet schema alone.
func TestReadParquetWithoutStoredSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(readSchema, &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	var want []map[string]any
	for _, rows := range readBatches {
		rec := buildIDRecord(t, mem, rows, len(want))
		for _, v := range rowValues(rows) {
			v["id"] = fmt.Sprintf("row-%d", len(want))
			want = append(want, v)
		}
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	mem.AssertSize(t, 0)
	require.Nil(t, openParquet(t, buf.Bytes()).MetaData().KeyValueMetadata().FindValue("ARROW:schema"))

	res, err := readAll(t, readBytes(Parquet, buf.Bytes()), ReadOptions{Schema: readSchema, BatchRows: 3})
	require.NoError(t, err)
	assert.Equal(t, want, res.rows)
	res, err = readAll(t, readBytes(Parquet, buf.Bytes()), ReadOptions{Columns: []string{"prompt", "id"}})
	require.NoError(t, err)
	assert.Equal(t, project(want, "prompt", "id"), res.rows)
}

// TestReadArrowStream reads the IPC stream format, as Hugging Face datasets'
// save_to_disk writes its .arrow shards, through the same reader as files.
func TestReadArrowStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(readSchema), ipc.WithAllocator(mem))
	var want []map[string]any
	for _, rows := range readBatches {
		rec := buildIDRecord(t, mem, rows, len(want))
		for _, v := range rowValues(rows) {
			v["id"] = fmt.Sprintf("row-%d", len(want))
			want = append(want, v)
		}
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	mem.AssertSize(t, 0)
	data := buf.Bytes()

	res, err := readAll(t, openBytes("data-00000-of-00001.arrow", data), ReadOptions{BatchRows: 2})
	require.NoError(t, err)
	assert.Equal(t, want, res.rows)
	res, err = readAll(t, openBytes("x.arrow", data), ReadOptions{Schema: readSchema, Columns: []string{"id", "prompt"}})
	require.NoError(t, err)
	assert.Equal(t, project(want, "id", "prompt"), res.rows)

	// A stream cut inside a message is an error naming the file.
	_, err = readAll(t, openBytes("cut.arrow", data[:len(data)/2]), ReadOptions{Allocator: memory.NewGoAllocator()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dataset: cut.arrow: ")
}
