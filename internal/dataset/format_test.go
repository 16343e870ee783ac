package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test schema has the shapes the project writes: a list of chat
// messages (structs with nullable fields and a nested list of tool-call
// structs), and the scalar column types of a pairs dataset.
var (
	testFunctionType = arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "arguments", Type: arrow.BinaryTypes.String},
	)
	testToolCallType = arrow.StructOf(
		arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "function", Type: testFunctionType},
	)
	testMessageType = arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "tool_calls", Type: arrow.ListOf(testToolCallType), Nullable: true},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	testSchema = arrow.NewSchema([]arrow.Field{
		{Name: "messages", Type: arrow.ListOf(testMessageType)},
		{Name: "prompt", Type: arrow.BinaryTypes.String},
		{Name: "margin", Type: arrow.PrimitiveTypes.Float64},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "elapse", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
)

type testFunction struct{ Name, Arguments string }

type testToolCall struct {
	ID, Type string
	Function testFunction
}

type testMessage struct {
	Role      string
	Content   *string
	ToolCalls []testToolCall // nil is null, empty is []
	Name      *string
}

type testRow struct {
	Messages []*testMessage // a nil element is a null message
	Prompt   string
	Margin   float64
	Score    *float64
	Elapse   int64
	Label    *string
	OK       bool
}

func ptr[T any](v T) *T { return &v }

// testBatches are two record batches with nulls, empty lists, unicode, and
// strings that need escaping in JSON.
var testBatches = [][]testRow{
	{
		{
			Messages: []*testMessage{
				{Role: "system", Content: ptr("You are \"helpful\".\nBe brief.")},
				{Role: "user", Content: ptr("Quelle heure est-il? 今何時? 🕰️"), Name: ptr("renée")},
				{Role: "assistant", ToolCalls: []testToolCall{
					{ID: "call_1", Type: "function", Function: testFunction{Name: "now", Arguments: `{"tz":"Europe/Paris"}`}},
					{ID: "call_2", Type: "function", Function: testFunction{Name: "sleep", Arguments: `{}`}},
				}},
				{Role: "tool", Content: ptr("12:00"), Name: ptr("now")},
			},
			Prompt: "tab\there, cr\r, nul\x00, bell\x07, unit sep\x1f, del\x7f, back\\slash",
			Margin: 1.0,
			Score:  ptr(0.5),
			Elapse: 3600,
			Label:  ptr("chosen"),
			OK:     true,
		},
		{
			Messages: []*testMessage{},
			Prompt:   "",
			Margin:   -2.25,
			Elapse:   -1,
			OK:       false,
		},
		{
			Messages: []*testMessage{
				nil,
				{Role: "assistant", Content: ptr(""), ToolCalls: []testToolCall{}},
			},
			Prompt: "<html> & 'quotes' \u2028\u2029",
			Margin: 1e21,
			Score:  ptr(0.0),
			Elapse: math.MaxInt64,
			Label:  ptr(""),
			OK:     true,
		},
	},
	{
		{
			Messages: []*testMessage{{Role: "user", Content: ptr("second batch")}},
			Prompt:   "Ünïcödé ✓",
			Margin:   123456789.125,
			Score:    ptr(-1e-7),
			Elapse:   math.MinInt64,
			Label:    ptr("rejected"),
			OK:       true,
		},
		{
			Messages: []*testMessage{{Role: "assistant", Name: ptr("bot")}},
			Prompt:   "last",
			Margin:   0,
			Elapse:   0,
			OK:       false,
		},
	},
}

func allTestRows() []testRow {
	var rows []testRow
	for _, b := range testBatches {
		rows = append(rows, b...)
	}
	return rows
}

// buildRecord builds a record of testSchema from rows.
func buildRecord(t testing.TB, mem memory.Allocator, rows []testRow) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	msgs := b.Field(0).(*array.ListBuilder)
	msg := msgs.ValueBuilder().(*array.StructBuilder)
	role := msg.FieldBuilder(0).(*array.StringBuilder)
	content := msg.FieldBuilder(1).(*array.StringBuilder)
	tcs := msg.FieldBuilder(2).(*array.ListBuilder)
	tc := tcs.ValueBuilder().(*array.StructBuilder)
	tcID := tc.FieldBuilder(0).(*array.StringBuilder)
	tcType := tc.FieldBuilder(1).(*array.StringBuilder)
	fn := tc.FieldBuilder(2).(*array.StructBuilder)
	fnName := fn.FieldBuilder(0).(*array.StringBuilder)
	fnArgs := fn.FieldBuilder(1).(*array.StringBuilder)
	name := msg.FieldBuilder(3).(*array.StringBuilder)

	appendOpt := func(sb *array.StringBuilder, s *string) {
		if s == nil {
			sb.AppendNull()
		} else {
			sb.Append(*s)
		}
	}
	for _, r := range rows {
		msgs.Append(true)
		for _, m := range r.Messages {
			if m == nil {
				msg.AppendNull()
				continue
			}
			msg.Append(true)
			role.Append(m.Role)
			appendOpt(content, m.Content)
			if m.ToolCalls == nil {
				tcs.AppendNull()
			} else {
				tcs.Append(true)
				for _, c := range m.ToolCalls {
					tc.Append(true)
					tcID.Append(c.ID)
					tcType.Append(c.Type)
					fn.Append(true)
					fnName.Append(c.Function.Name)
					fnArgs.Append(c.Function.Arguments)
				}
			}
			appendOpt(name, m.Name)
		}
		b.Field(1).(*array.StringBuilder).Append(r.Prompt)
		b.Field(2).(*array.Float64Builder).Append(r.Margin)
		if r.Score == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(*r.Score)
		}
		b.Field(4).(*array.Int64Builder).Append(r.Elapse)
		appendOpt(b.Field(5).(*array.StringBuilder), r.Label)
		b.Field(6).(*array.BooleanBuilder).Append(r.OK)
	}
	return b.NewRecord()
}

// value is the row as encoding/json decodes it into an interface{}: numbers
// are float64, lists []any, structs map[string]any and nulls nil.
func (r testRow) value() map[string]any {
	opt := func(s *string) any {
		if s == nil {
			return nil
		}
		return *s
	}
	msgs := make([]any, 0, len(r.Messages))
	for _, m := range r.Messages {
		if m == nil {
			msgs = append(msgs, nil)
			continue
		}
		var calls any
		if m.ToolCalls != nil {
			cs := make([]any, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				cs = append(cs, map[string]any{
					"id":   c.ID,
					"type": c.Type,
					"function": map[string]any{
						"name":      c.Function.Name,
						"arguments": c.Function.Arguments,
					},
				})
			}
			calls = cs
		}
		msgs = append(msgs, map[string]any{
			"role":       m.Role,
			"content":    opt(m.Content),
			"tool_calls": calls,
			"name":       opt(m.Name),
		})
	}
	var score any
	if r.Score != nil {
		score = *r.Score
	}
	return map[string]any{
		"messages": msgs,
		"prompt":   r.Prompt,
		"margin":   r.Margin,
		"score":    score,
		"elapse":   float64(r.Elapse),
		"label":    opt(r.Label),
		"ok":       r.OK,
	}
}

func rowValues(rows []testRow) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = r.value()
	}
	return out
}

// arrowValue converts a[i] to the value encoding/json decodes from its JSON
// encoding, so that Arrow data and JSONL lines compare directly.
func arrowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	num := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	switch a := a.(type) {
	case *array.String:
		return string([]rune(a.Value(i))) // invalid UTF-8 is U+FFFD per byte
	case *array.LargeString:
		return string([]rune(a.Value(i)))
	case *array.Boolean:
		return a.Value(i)
	case *array.Float64:
		return num(a.Value(i))
	case *array.Float32:
		// The JSON text is the shortest float32 representation.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32), 64)
		return num(v)
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Int16:
		return float64(a.Value(i))
	case *array.Int8:
		return float64(a.Value(i))
	case *array.Uint64:
		return float64(a.Value(i))
	case *array.Uint32:
		return float64(a.Value(i))
	case *array.Uint16:
		return float64(a.Value(i))
	case *array.Uint8:
		return float64(a.Value(i))
	case *array.Null:
		return nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for k := start; k < end; k++ {
			out = append(out, arrowValue(a.ListValues(), int(k)))
		}
		return out
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		out := make(map[string]any, st.NumFields())
		for k, f := range st.Fields() {
			out[f.Name] = arrowValue(a.Field(k), i)
		}
		return out
	}
	panic(fmt.Sprintf("arrowValue: unsupported type %s", a.DataType()))
}

func recordValues(rec arrow.Record) []map[string]any {
	out := make([]map[string]any, rec.NumRows())
	for row := range out {
		m := make(map[string]any, rec.NumCols())
		for c, f := range rec.Schema().Fields() {
			m[f.Name] = arrowValue(rec.Column(c), row)
		}
		out[row] = m
	}
	return out
}

// writeAll writes batches with f to a buffer and closes the writer; the
// records are released before it returns.
func writeAll(t *testing.T, f *Format, mem memory.Allocator, opt Options, batches [][]testRow) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf, testSchema, opt)
	require.NoError(t, err)
	for _, rows := range batches {
		rec := buildRecord(t, mem, rows)
		err := w.Write(rec)
		rec.Release()
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readBack reads a dataset written by a format back as rows of decoded
// values, checking what each format promises about its schema. Every format
// in All must have one.
var readBack = map[string]func(t *testing.T, data []byte, mem memory.Allocator) []map[string]any{
	"parquet": readParquet,
	"arrow":   readArrowIPC,
	"jsonl":   readJSONL,
}

func readParquet(t *testing.T, data []byte, mem memory.Allocator) []map[string]any {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(parquet.NewReaderProperties(mem)))
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 10}, mem)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()

	// WithStoreSchema keeps the exact Arrow types, nullability included.
	// (The reader adds PARQUET:field_id metadata and names list elements
	// after the Parquet groups, which the comparison ignores.)
	assertSameTypes(t, testSchema, tbl.Schema())
	assert.Equal(t, pf.NumRows(), tbl.NumRows())

	var rows []map[string]any
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	for tr.Next() {
		rows = append(rows, recordValues(tr.Record())...)
	}
	require.NoError(t, tr.Err())
	return rows
}

// assertSameTypes checks that got has want's field names, types and
// nullability at every level, ignoring metadata and list element names.
func assertSameTypes(t *testing.T, want, got *arrow.Schema) {
	t.Helper()
	require.Equal(t, want.NumFields(), got.NumFields(), "schema read back:\n%s\nwant:\n%s", got, want)
	for i, wf := range want.Fields() {
		gf := got.Field(i)
		assert.Equal(t, wf.Name, gf.Name)
		assert.Equal(t, wf.Nullable, gf.Nullable, "field %s nullability", wf.Name)
		assert.True(t, arrow.TypeEqual(wf.Type, gf.Type), "field %s has type %s, want %s", wf.Name, gf.Type, wf.Type)
	}
}

func readArrowIPC(t *testing.T, data []byte, mem memory.Allocator) []map[string]any {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Close()
	assert.True(t, r.Schema().Equal(testSchema), "schema read back:\n%s\nwant:\n%s", r.Schema(), testSchema)

	var rows []map[string]any
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordAt(i)
		require.NoError(t, err)
		assert.True(t, rec.Schema().Equal(testSchema))
		rows = append(rows, recordValues(rec)...)
		rec.Release()
	}
	return rows
}

func readJSONL(t *testing.T, data []byte, _ memory.Allocator) []map[string]any {
	t.Helper()
	require.True(t, len(data) == 0 || data[len(data)-1] == '\n', "JSONL must end with a newline")
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		require.True(t, json.Valid(line), "invalid JSON line %q", line)
		var row map[string]any
		require.NoError(t, json.Unmarshal(line, &row))
		// Object keys follow the schema's field order.
		dec := json.NewDecoder(bytes.NewReader(line))
		_, err := dec.Token() // {
		require.NoError(t, err)
		for _, f := range testSchema.Fields() {
			key, err := dec.Token()
			require.NoError(t, err)
			assert.Equal(t, f.Name, key)
			var skip json.RawMessage
			require.NoError(t, dec.Decode(&skip))
		}
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}

// TestFormatsRoundTrip runs the shared checks on every format in All.
func TestFormatsRoundTrip(t *testing.T) {
	want := rowValues(allTestRows())
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			read, ok := readBack[f.Name]
			require.True(t, ok, "no reader for format %q in readBack", f.Name)

			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			readMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data := writeAll(t, f, mem, Options{}, testBatches)
			mem.AssertSize(t, 0)
			require.NotEmpty(t, data)

			got := read(t, data, readMem)
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, want[i], got[i], "row %d", i)
			}
			readMem.AssertSize(t, 0)
		})
	}
}

// TestFormatsArrowValuesMatchRows checks the test helpers against each other:
// the Arrow record holds exactly the rows it was built from.
func TestFormatsArrowValuesMatchRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := allTestRows()
	rec := buildRecord(t, mem, rows)
	defer rec.Release()
	assert.Equal(t, rowValues(rows), recordValues(rec))
}

func TestFormatsEmpty(t *testing.T) {
	// A dataset with no records is still a valid, readable file.
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data := writeAll(t, f, mem, Options{}, nil)
			got := readBack[f.Name](t, data, mem)
			assert.Empty(t, got)
			mem.AssertSize(t, 0)
		})
	}
}

func TestFormatsSlicedRecord(t *testing.T) {
	// Writers see offsets: a sliced record writes only its own rows.
	rows := allTestRows()
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rec := buildRecord(t, mem, rows)
			sl := rec.NewSlice(1, 4)
			rec.Release()

			var buf bytes.Buffer
			w, err := f.NewWriter(&buf, testSchema, Options{})
			require.NoError(t, err)
			require.NoError(t, w.Write(sl))
			sl.Release()
			require.NoError(t, w.Close())
			mem.AssertSize(t, 0)

			got := readBack[f.Name](t, buf.Bytes(), mem)
			assert.Equal(t, rowValues(rows[1:4]), got)
			mem.AssertSize(t, 0)
		})
	}
}

// closeRecorder is a plain io.Writer (not an io.Seeker) that records whether
// anything closed it.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error {
	c.closed = true
	return nil
}

func TestFormatsDoNotCloseOutput(t *testing.T) {
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			out := &closeRecorder{}
			w, err := f.NewWriter(out, testSchema, Options{})
			require.NoError(t, err)
			rec := buildRecord(t, mem, testBatches[0])
			require.NoError(t, w.Write(rec))
			rec.Release()
			require.NoError(t, w.Close())
			assert.False(t, out.closed, "%s writer closed the caller's writer", f.Name)
			assert.NotZero(t, out.Len())
			mem.AssertSize(t, 0)

			got := readBack[f.Name](t, out.Bytes(), mem)
			assert.Equal(t, rowValues(testBatches[0]), got)
		})
	}
}

func TestFormatsRejectOtherSchema(t *testing.T) {
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := array.NewRecordBuilder(mem, other)
			defer b.Release()
			b.Field(0).(*array.Int64Builder).Append(1)
			rec := b.NewRecord()
			defer rec.Release()

			var buf bytes.Buffer
			w, err := f.NewWriter(&buf, testSchema, Options{})
			require.NoError(t, err)
			assert.Error(t, w.Write(rec))
		})
	}
}

// plainWriter hides every method of the buffer but Write.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

func TestArrowIPCNonSeekableOutput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var buf bytes.Buffer
	w, err := ArrowIPC.NewWriter(plainWriter{&buf}, testSchema, Options{})
	require.NoError(t, err)
	for _, rows := range testBatches {
		rec := buildRecord(t, mem, rows)
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	mem.AssertSize(t, 0)

	// The file format starts and ends with the magic.
	data := buf.Bytes()
	require.True(t, bytes.HasPrefix(data, []byte("ARROW1")))
	require.True(t, bytes.HasSuffix(data, []byte("ARROW1")))
	assert.Equal(t, rowValues(allTestRows()), readArrowIPC(t, data, mem))
	mem.AssertSize(t, 0)
}

func TestArrowIPCCompressed(t *testing.T) {
	// Highly repetitive data shrinks a lot when the buffers are compressed.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := make([]testRow, 2000)
	for i := range rows {
		rows[i] = testRow{Prompt: strings.Repeat("same text ", 20), Messages: []*testMessage{}}
	}
	rec := buildRecord(t, mem, rows)
	defer rec.Release()

	write := func(w io.Writer) RecordWriter {
		fw, err := ArrowIPC.NewWriter(w, testSchema, Options{})
		require.NoError(t, err)
		return fw
	}
	var compressed, plain bytes.Buffer
	cw := write(&compressed)
	require.NoError(t, cw.Write(rec))
	require.NoError(t, cw.Close())
	pw, err := ipc.NewFileWriter(&countingWriter{w: &plain}, ipc.WithSchema(testSchema))
	require.NoError(t, err)
	require.NoError(t, pw.Write(rec))
	require.NoError(t, pw.Close())

	assert.Less(t, compressed.Len()*4, plain.Len(), "compressed %d bytes, uncompressed %d", compressed.Len(), plain.Len())
	got := readArrowIPC(t, compressed.Bytes(), mem)
	assert.Len(t, got, len(rows))
}

func TestCountingWriter(t *testing.T) {
	var buf bytes.Buffer
	c := &countingWriter{w: &buf}
	pos, err := c.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Zero(t, pos)
	_, err = c.Write([]byte("hello"))
	require.NoError(t, err)
	pos, err = c.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, 5, pos)

	for _, tc := range []struct {
		name   string
		offset int64
		whence int
	}{
		{"start", 0, io.SeekStart},
		{"end", 0, io.SeekEnd},
		{"relative", 1, io.SeekCurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Seek(tc.offset, tc.whence)
			assert.Error(t, err)
		})
	}

	// A short write counts only what was written.
	fw := &failingWriter{n: 3}
	c = &countingWriter{w: fw}
	n, err := c.Write([]byte("hello"))
	assert.Equal(t, 3, n)
	assert.Error(t, err)
	assert.EqualValues(t, 3, c.n)
}

// failingWriter fails every write that goes beyond its first n bytes.
type failingWriter struct{ n, written int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.written+len(p) > f.n {
		k := max(f.n-f.written, 0)
		f.written += k
		return k, errors.New("disk full")
	}
	f.written += len(p)
	return len(p), nil
}

func TestFormatsWriteError(t *testing.T) {
	// An error from the caller's writer is returned by NewWriter, Write or
	// Close, wherever in the file it happens, and never panics.
	for _, f := range All {
		var full bytes.Buffer
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		w, err := f.NewWriter(&full, testSchema, Options{RowGroupRows: 2})
		require.NoError(t, err)
		for _, rows := range testBatches {
			rec := buildRecord(t, mem, rows)
			require.NoError(t, w.Write(rec))
			rec.Release()
		}
		require.NoError(t, w.Close())
		size := full.Len()
		for _, failAt := range []int{0, 1, 4, 8, 100, size / 3, size / 2, size - 10, size - 1} {
			t.Run(fmt.Sprintf("%s/at=%d", f.Name, failAt), func(t *testing.T) {
				out := &failingWriter{n: failAt}
				var err error
				require.NotPanics(t, func() { err = writeTo(t, f, out, mem, Options{RowGroupRows: 2}) })
				assert.Error(t, err, "write error lost")
				mem.AssertSize(t, 0)
			})
		}
	}
}

// writeTo writes testBatches to out and returns the first error.
func writeTo(t *testing.T, f *Format, out io.Writer, mem memory.Allocator, opt Options) error {
	w, err := f.NewWriter(out, testSchema, opt)
	if err != nil {
		return err
	}
	var werr error
	for _, rows := range testBatches {
		rec := buildRecord(t, mem, rows)
		if werr == nil {
			werr = w.Write(rec)
		}
		rec.Release()
	}
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

func openParquet(t *testing.T, data []byte) *file.Reader {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	t.Cleanup(func() { pf.Close() })
	return pf
}

func TestParquetZstd(t *testing.T) {
	for _, level := range []int{0, 1, 3, 9, 19} {
		t.Run(fmt.Sprintf("level=%d", level), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data := writeAll(t, Parquet, mem, Options{ZstdLevel: level}, testBatches)
			mem.AssertSize(t, 0)
			pf := openParquet(t, data)
			md := pf.MetaData()
			require.Positive(t, pf.NumRowGroups())
			for rg := 0; rg < pf.NumRowGroups(); rg++ {
				rgm := md.RowGroup(rg)
				require.Positive(t, rgm.NumColumns())
				for c := 0; c < rgm.NumColumns(); c++ {
					cc, err := rgm.ColumnChunk(c)
					require.NoError(t, err)
					assert.Equal(t, compress.Codecs.Zstd, cc.Compression(), "row group %d column %s", rg, cc.PathInSchema())
				}
			}
			assert.Contains(t, md.GetCreatedBy(), "timeaware")
			assert.NotNil(t, md.KeyValueMetadata().FindValue("ARROW:schema"), "Arrow schema not stored")
			assert.Equal(t, rowValues(allTestRows()), readParquet(t, data, mem))
			mem.AssertSize(t, 0)
		})
	}
}

func TestParquetRowGroups(t *testing.T) {
	rows := make([]testRow, 10)
	for i := range rows {
		rows[i] = testRow{Prompt: strconv.Itoa(i), Elapse: int64(i), Messages: []*testMessage{{Role: "user"}}}
	}
	for _, tc := range []struct {
		name    string
		opt     Options
		batches [][]testRow
		want    []int64
	}{
		{"one record", Options{RowGroupRows: 4}, [][]testRow{rows}, []int64{4, 4, 2}},
		{"records across groups", Options{RowGroupRows: 4}, [][]testRow{rows[:3], rows[3:5], rows[5:]}, []int64{4, 4, 2}},
		{"exact fit", Options{RowGroupRows: 5}, [][]testRow{rows[:5], rows[5:]}, []int64{5, 5}},
		{"one per group", Options{RowGroupRows: 1}, [][]testRow{rows[:2]}, []int64{1, 1}},
		{"default", Options{}, [][]testRow{rows[:3], rows[3:]}, []int64{10}},
		{"negative is default", Options{RowGroupRows: -1}, [][]testRow{rows}, []int64{10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data := writeAll(t, Parquet, mem, tc.opt, tc.batches)
			mem.AssertSize(t, 0)
			pf := openParquet(t, data)
			var got []int64
			for rg := 0; rg < pf.NumRowGroups(); rg++ {
				got = append(got, pf.MetaData().RowGroup(rg).NumRows())
			}
			assert.Equal(t, tc.want, got)

			var all []testRow
			for _, b := range tc.batches {
				all = append(all, b...)
			}
			assert.Equal(t, int64(len(all)), pf.NumRows())
			assert.Equal(t, rowValues(all), readParquet(t, data, mem))
			mem.AssertSize(t, 0)
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Options
		want Options
	}{
		{"zero", Options{}, Options{ZstdLevel: 1, RowGroupRows: 16384}},
		{"negative rows", Options{RowGroupRows: -5}, Options{ZstdLevel: 1, RowGroupRows: 16384}},
		{"set", Options{ZstdLevel: 7, RowGroupRows: 100}, Options{ZstdLevel: 7, RowGroupRows: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.in.withDefaults())
		})
	}
}

func TestParquetConcurrentWriters(t *testing.T) {
	// Writers share the cached zstd encoders; run with -race.
	levels := []int{1, 1, 3, 3, 0, 7}
	results := make([][]byte, len(levels))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var wg sync.WaitGroup
	for i, level := range levels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			w, err := Parquet.NewWriter(&buf, testSchema, Options{ZstdLevel: level, RowGroupRows: 2})
			if !assert.NoError(t, err) {
				return
			}
			for r := 0; r < 20; r++ {
				rec := buildRecord(t, mem, allTestRows())
				err := w.Write(rec)
				rec.Release()
				if !assert.NoError(t, err) {
					return
				}
			}
			if assert.NoError(t, w.Close()) {
				results[i] = buf.Bytes()
			}
		}()
	}
	wg.Wait()
	mem.AssertSize(t, 0)

	var want []map[string]any
	for r := 0; r < 20; r++ {
		want = append(want, rowValues(allTestRows())...)
	}
	for i, data := range results {
		require.NotNil(t, data, "writer %d failed", i)
		assert.Equal(t, want, readParquet(t, data, mem), "writer %d", i)
	}
	mem.AssertSize(t, 0)
}

func TestCachedZstd(t *testing.T) {
	// The package installs its codec at initialisation.
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	cz, ok := codec.(*cachedZstd)
	require.True(t, ok, "zstd codec is %T, want *cachedZstd", codec)

	src := bytes.Repeat([]byte("timeaware dataset page "), 500)
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9, 22} {
		t.Run(fmt.Sprintf("level=%d", level), func(t *testing.T) {
			assert.Same(t, cz.encoder(level), cz.encoder(level), "encoder not cached")
			// dst is reused as the output buffer, as Parquet's page writer does.
			dst := make([]byte, 0, cz.CompressBound(int64(len(src))))
			enc := cz.EncodeLevel(dst, src, level)
			require.NotEmpty(t, enc)
			assert.Less(t, len(enc), len(src))
			assert.Equal(t, src, cz.Decode(nil, enc))
			// The plain Encode still works and decodes the same.
			assert.Equal(t, src, cz.Decode(nil, cz.Encode(nil, src)))
		})
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		want *Format
	}{
		{"parquet", Parquet},
		{"arrow", ArrowIPC},
		{"jsonl", JSONL},
		{"", nil},
		{"csv", nil},
		{"json", nil},
		{".parquet", nil},
		{" parquet", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Lookup(tc.name)
			if tc.want != nil {
				require.NoError(t, err)
				assert.Same(t, tc.want, f)
				return
			}
			require.Error(t, err)
			assert.Nil(t, f)
			assert.ErrorIs(t, err, ErrUnknownFormat)
			assert.Contains(t, err.Error(), strconv.Quote(tc.name))
			assert.Contains(t, err.Error(), Names(), "the error lists the formats")
		})
	}
}

func TestForPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want *Format
	}{
		{"out.parquet", Parquet},
		{"out.pq", Parquet},
		{"dir/sub/out.PARQUET", Parquet},
		{"Out.Pq", Parquet},
		{"out.arrow", ArrowIPC},
		{"out.feather", ArrowIPC},
		{"out.IPC", ArrowIPC},
		{"/abs/path/out.jsonl", JSONL},
		{"out.ndjson", JSONL},
		{"OUT.JSONL", JSONL},
		{"pairs.v2.jsonl", JSONL},
		{"out.json", nil},
		{"out.csv", nil},
		{"out.jsonl.gz", nil},
		{"out.parquet.tmp", nil},
		{"parquet", nil},
		{"dir.parquet/out", nil},
		{"out.", nil},
		{"", nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			f, ok := ForPath(tc.path)
			assert.Equal(t, tc.want != nil, ok)
			assert.Same(t, tc.want, f)
		})
	}
}

func TestNames(t *testing.T) {
	assert.Equal(t, "parquet, arrow or jsonl", Names())

	saved := All
	t.Cleanup(func() { All = saved })
	for _, tc := range []struct {
		all  []*Format
		want string
	}{
		{[]*Format{Parquet}, "parquet"},
		{[]*Format{Parquet, JSONL}, "parquet or jsonl"},
		{[]*Format{Parquet, ArrowIPC, JSONL}, "parquet, arrow or jsonl"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			All = tc.all
			assert.Equal(t, tc.want, Names())
		})
	}
}

// TestAllFormats checks what every format must declare.
func TestAllFormats(t *testing.T) {
	require.NotEmpty(t, All)
	names := map[string]bool{}
	exts := map[string]string{}
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			require.NotEmpty(t, f.Name)
			assert.Equal(t, strings.ToLower(f.Name), f.Name)
			assert.False(t, names[f.Name], "duplicate format name")
			names[f.Name] = true
			require.NotNil(t, f.NewWriter)

			got, err := Lookup(f.Name)
			require.NoError(t, err)
			assert.Same(t, f, got)
			assert.Contains(t, Names(), f.Name)

			require.NotEmpty(t, f.Extensions)
			for _, e := range f.Extensions {
				assert.True(t, strings.HasPrefix(e, "."), "extension %q", e)
				assert.Equal(t, strings.ToLower(e), e, "extensions are lower case")
				prev, dup := exts[e]
				assert.False(t, dup, "extension %q also used by %s", e, prev)
				exts[e] = f.Name
				got, ok := ForPath("dataset" + e)
				assert.True(t, ok)
				assert.Same(t, f, got)
			}
		})
	}
}

// TestParquetSameRowsSameBytes: rows whose columns outgrow their
// dictionaries (a million bytes of distinct prompts a row group, so the
// writer falls back to plain pages) make the same file every time: the
// footer lists each chunk's page encodings in one order, though Arrow
// gathers them in a map. The file still reads back whole.
func TestParquetSameRowsSameBytes(t *testing.T) {
	rows := make([]testRow, 12000)
	for i := range rows {
		rows[i] = testRow{Prompt: fmt.Sprintf("%0400d", i), Elapse: int64(i % 7), Messages: []*testMessage{{Role: "user"}}}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opt := Options{RowGroupRows: 6000}
	first := writeAll(t, Parquet, mem, opt, [][]testRow{rows})
	pf := openParquet(t, first)
	fellBack := 0
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		for c := 0; c < pf.MetaData().RowGroup(rg).NumColumns(); c++ {
			cc, err := pf.MetaData().RowGroup(rg).ColumnChunk(c)
			require.NoError(t, err)
			if len(cc.EncodingStats()) > 2 {
				fellBack++
			}
		}
	}
	require.Positive(t, fellBack, "no chunk fell back to plain pages: the test would show nothing")
	for i := 0; i < 12; i++ {
		require.Equal(t, first, writeAll(t, Parquet, mem, opt, [][]testRow{rows}), "write %d", i+2)
	}
	assert.Equal(t, rowValues(rows), readParquet(t, first, mem))
	mem.AssertSize(t, 0)
}
