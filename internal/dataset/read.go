package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// File is what readers need: Parquet and Arrow IPC files are read by offset.
// *os.File and *bytes.Reader satisfy it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// ReadOptions tunes the readers. Only JSONL needs any: it requires Schema.
type ReadOptions struct {
	// Schema is the expected schema. JSONL has none of its own and requires
	// it. For Parquet and Arrow IPC, when set, the file's fields that are
	// read must have the same types and nullability (metadata and the names
	// of list elements are ignored), and the records come back with
	// Schema's fields.
	Schema *arrow.Schema
	// Columns selects fields by name, in this order; none means all of
	// Schema's fields, or all of the file's when Schema is nil. A column
	// that is missing is an error (ErrColumnNotFound) naming it and the
	// file. Only the selected columns are decoded, except in JSONL, where
	// every field is checked but only the selected ones are built.
	Columns []string
	// BatchRows is the target number of rows per batch (default 8192).
	// Batches never exceed it: JSONL fills them, Parquet fills them within
	// each row group (it reads one row group at a time), and Arrow IPC
	// splits the file's own batches to fit.
	BatchRows int
	// Allocator allocates the records (default memory.DefaultAllocator).
	Allocator memory.Allocator
	// Name names the file in errors. Open sets it; otherwise it defaults to
	// f.Name() when f has that method (as *os.File does), else the format.
	Name string
}

// RecordReader reads a dataset as record batches.
type RecordReader interface {
	// Schema is the schema of the records: the selected columns, in order.
	Schema() *arrow.Schema
	// Next returns the next batch, which the caller releases, or io.EOF
	// after the last one. Errors are final: later calls return them again.
	Next() (arrow.Record, error)
	// Close releases the reader's memory; it never closes the file.
	Close() error
}

var (
	// ErrColumnNotFound is wrapped by the errors for selected columns that
	// are not in the file or not in ReadOptions.Schema.
	ErrColumnNotFound = errors.New("column not found")
	// ErrSchemaMismatch is wrapped by the errors for files whose types
	// differ from ReadOptions.Schema, and for JSONL values that do not fit
	// it.
	ErrSchemaMismatch = errors.New("schema mismatch")
	// ErrCorrupt is wrapped by the errors for data that cannot be decoded:
	// damaged Parquet or Arrow files, JSONL lines that are not JSON objects.
	ErrCorrupt = errors.New("corrupt data")
	// ErrNoRecords is the one answer of every command to an input that
	// holds no records (an empty file, a JSON array with no element): it
	// is refused, naming the file, and nothing is written.
	ErrNoRecords = errors.New("no records")
)

const defaultBatchRows = 8192

// Open reads the dataset in f, named name. When format is nil, ForPath(name)
// picks it from the extension. Every error names the file.
func Open(f File, name string, format *Format, opt ReadOptions) (RecordReader, error) {
	if format == nil {
		var ok bool
		if format, ok = ForPath(name); !ok {
			return nil, fmt.Errorf("dataset: %s: %w for extension %q (want %s)", name, ErrUnknownFormat, filepath.Ext(name), extensionNames())
		}
	}
	if opt.Name == "" {
		opt.Name = name
	}
	if format.NewReader == nil {
		return nil, fmt.Errorf("dataset: %s: format %s cannot be read", opt.Name, format.Name)
	}
	return format.NewReader(f, opt)
}

func extensionNames() string {
	var exts []string
	for _, f := range All {
		exts = append(exts, f.Extensions...)
	}
	return strings.Join(exts, ", ")
}

func (o ReadOptions) withDefaults(f File, format string) ReadOptions {
	if o.BatchRows <= 0 {
		o.BatchRows = defaultBatchRows
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Name == "" {
		if n, ok := f.(interface{ Name() string }); ok {
			o.Name = n.Name()
		} else {
			o.Name = format
		}
	}
	return o
}

// columnNames lists the columns to read from a file whose fields are named
// fileNames.
func (o ReadOptions) columnNames(fileNames []string) ([]string, error) {
	names := o.Columns
	if len(names) == 0 {
		if o.Schema == nil {
			return fileNames, nil
		}
		names = make([]string, o.Schema.NumFields())
		for i, f := range o.Schema.Fields() {
			names[i] = f.Name
		}
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("dataset: %s: column %q selected twice", o.Name, n)
		}
		seen[n] = true
	}
	return names, nil
}

// selectColumns returns, for each column to read, the index of the file field
// of that name.
func (o ReadOptions) selectColumns(fileNames []string) ([]int, error) {
	names, err := o.columnNames(fileNames)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(fileNames))
	for i, n := range fileNames {
		if _, dup := byName[n]; dup {
			byName[n] = -1
		} else {
			byName[n] = i
		}
	}
	idx := make([]int, len(names))
	for k, n := range names {
		i, ok := byName[n]
		switch {
		case !ok:
			return nil, &columnError{file: o.Name, column: n, problem: "not found"}
		case i < 0:
			return nil, fmt.Errorf("dataset: %s: column %q appears more than once in the file", o.Name, n)
		}
		idx[k] = i
	}
	return idx, nil
}

// projectSchema checks the fields read from a file against o.Schema and
// returns the schema of the records: o.Schema's fields when it is set, so
// that every format gives the same schema, else the file's.
func (o ReadOptions) projectSchema(got []arrow.Field, meta arrow.Metadata) (*arrow.Schema, error) {
	if o.Schema == nil {
		return arrow.NewSchema(got, &meta), nil
	}
	fields := make([]arrow.Field, len(got))
	for i, g := range got {
		want, err := o.expectedField(g.Name)
		if err != nil {
			return nil, err
		}
		if diff := fieldDiff(g, want, g.Name); diff != "" {
			return nil, fmt.Errorf("dataset: %s: %w: %s", o.Name, ErrSchemaMismatch, diff)
		}
		fields[i] = want
	}
	if len(o.Columns) == 0 && len(fields) == o.Schema.NumFields() {
		return o.Schema, nil
	}
	return arrow.NewSchema(fields, o.schemaMetadata()), nil
}

// expectedField returns the field of o.Schema named name.
func (o ReadOptions) expectedField(name string) (arrow.Field, error) {
	i := o.Schema.FieldIndices(name)
	if len(i) == 0 {
		return arrow.Field{}, &columnError{file: o.Name, column: name, problem: "is not in the expected schema"}
	}
	return o.Schema.Field(i[0]), nil
}

func (o ReadOptions) schemaMetadata() *arrow.Metadata {
	md := o.Schema.Metadata()
	return &md
}

// columnError is a selected column that cannot be read.
type columnError struct {
	file, column, problem string
}

func (e *columnError) Error() string {
	return fmt.Sprintf("dataset: %s: column %q %s", e.file, e.column, e.problem)
}

func (e *columnError) Unwrap() error { return ErrColumnNotFound }

// fieldDiff describes the first difference in type or nullability between
// got and want, at path (messages[].content), or returns "".
func fieldDiff(got, want arrow.Field, path string) string {
	nullable := func(n bool) string {
		if n {
			return "nullable"
		}
		return "not nullable"
	}
	if got.Nullable != want.Nullable {
		return fmt.Sprintf("%s is %s, want %s", path, nullable(got.Nullable), nullable(want.Nullable))
	}
	if arrow.TypeEqual(got.Type, want.Type) {
		return ""
	}
	if got.Type.ID() == want.Type.ID() {
		switch gt := got.Type.(type) {
		case arrow.ListLikeType:
			if d := fieldDiff(gt.ElemField(), want.Type.(arrow.ListLikeType).ElemField(), path+"[]"); d != "" {
				return d
			}
		case *arrow.StructType:
			wt := want.Type.(*arrow.StructType)
			if gt.NumFields() == wt.NumFields() {
				for i, gf := range gt.Fields() {
					wf := wt.Field(i)
					if gf.Name != wf.Name {
						break
					}
					if d := fieldDiff(gf, wf, path+"."+gf.Name); d != "" {
						return d
					}
				}
			}
		}
	}
	return fmt.Sprintf("%s is %s, want %s", path, got.Type, want.Type)
}

// catchPanic turns a panic of Arrow's decoders into an error: they panic on
// some malformed input, and a damaged file must not bring the process down.
func catchPanic(name string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("dataset: %s: %w: %v", name, ErrCorrupt, r)
	}
}

// noClose hides the Close method of a file from readers that would close it
// (the Parquet reader does).
type noClose struct{ File }

// errClosed is returned by Next after Close.
var errClosed = errors.New("dataset: reader is closed")

// validateColumns checks the arrays of the selected columns of rec (cols are
// their indices) with validateArray.
func validateColumns(rec arrow.Record, cols []int) error {
	for _, c := range cols {
		a := rec.Column(c)
		if int64(a.Len()) < rec.NumRows() {
			return fmt.Errorf("column %q has %d rows, want %d", rec.ColumnName(c), a.Len(), rec.NumRows())
		}
		if err := validateArray(a.Data()); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
	}
	return nil
}

// validateArray checks what reading the values of an array relies on: the
// sizes of its buffers, offsets that stay within their data, and the lengths
// of its children. Arrow's IPC reader builds arrays from a file's sizes and
// offsets without these checks, so a damaged file would otherwise give arrays
// that panic when their values are read. Types that datasets do not use are
// only checked for their length and validity bitmap.
func validateArray(d arrow.ArrayData) error {
	off, n := int64(d.Offset()), int64(d.Len())
	if off < 0 || n < 0 {
		return fmt.Errorf("%s array has offset %d and length %d", d.DataType(), off, n)
	}
	end := off + n
	bufs := d.Buffers()
	bufLen := func(i int) int64 {
		if i >= len(bufs) || bufs[i] == nil {
			return 0
		}
		return int64(bufs[i].Len())
	}
	if len(bufs) > 0 && bufs[0] != nil && bufLen(0)*8 < end {
		return fmt.Errorf("%s array of %d values has a validity bitmap of %d bytes", d.DataType(), end, bufLen(0))
	}
	children := d.Children()
	switch t := d.DataType().(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BooleanType:
		if bufLen(1)*8 < end {
			return fmt.Errorf("bool array of %d values has %d bytes", end, bufLen(1))
		}
	case *arrow.StringType, *arrow.BinaryType:
		return checkOffsets(d, bufs, end, 4, bufLen(2))
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return checkOffsets(d, bufs, end, 8, bufLen(2))
	case *arrow.ListType, *arrow.MapType, *arrow.LargeListType:
		if len(children) != 1 {
			return fmt.Errorf("%s array has %d children", t, len(children))
		}
		width := int64(4)
		if t.ID() == arrow.LARGE_LIST {
			width = 8
		}
		if err := checkOffsets(d, bufs, end, width, int64(children[0].Len())); err != nil {
			return err
		}
		return validateArray(children[0])
	case *arrow.FixedSizeListType:
		if len(children) != 1 {
			return fmt.Errorf("%s array has %d children", t, len(children))
		}
		if int64(children[0].Len()) < end*int64(t.Len()) {
			return fmt.Errorf("%s array of %d values has %d child values", t, end, children[0].Len())
		}
		return validateArray(children[0])
	case *arrow.StructType:
		if len(children) != t.NumFields() {
			return fmt.Errorf("%s array has %d children", t, len(children))
		}
		for i, c := range children {
			if int64(c.Len()) < end {
				return fmt.Errorf("field %s has %d values, want %d", t.Field(i).Name, c.Len(), end)
			}
			if err := validateArray(c); err != nil {
				return fmt.Errorf("field %s: %w", t.Field(i).Name, err)
			}
		}
	case *arrow.DictionaryType, arrow.ExtensionType:
		// Not used by datasets.
	case arrow.FixedWidthDataType:
		if bits := int64(t.BitWidth()); bufLen(1)*8 < end*bits {
			return fmt.Errorf("%s array of %d values has %d bytes", t, end, bufLen(1))
		}
	}
	return nil
}

// checkOffsets checks the offsets of values off to end of a variable-length
// array: they must not decrease and must stay within limit.
func checkOffsets(d arrow.ArrayData, bufs []*memory.Buffer, end, width, limit int64) error {
	if d.Len() == 0 {
		return nil
	}
	if len(bufs) < 2 || bufs[1] == nil || int64(bufs[1].Len()) < (end+1)*width {
		return fmt.Errorf("%s array of %d values has too few offsets", d.DataType(), end)
	}
	b := bufs[1].Bytes()
	at := func(i int64) int64 {
		if width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b[i*4:])))
		}
		return int64(binary.LittleEndian.Uint64(b[i*8:]))
	}
	prev := at(int64(d.Offset()))
	if prev < 0 {
		return fmt.Errorf("%s array has a negative offset", d.DataType())
	}
	for i := int64(d.Offset()) + 1; i <= end; i++ {
		o := at(i)
		if o < prev {
			return fmt.Errorf("%s array has decreasing offsets", d.DataType())
		}
		prev = o
	}
	if prev > limit {
		return fmt.Errorf("%s array has offsets up to %d in %d values", d.DataType(), prev, limit)
	}
	return nil
}

// limitAllocator refuses single allocations beyond max by panicking, which
// the readers turn into an ErrCorrupt error. Damaged sizes in Parquet and
// Arrow files can claim buffers of many gigabytes, and the Go runtime ends
// the process when it cannot map them.
type limitAllocator struct {
	memory.Allocator
	max  int
	size int64
}

// limitAllocations wraps mem for reading f: no single buffer may exceed 64
// times the size of the file, or 1 GiB if that is more.
func limitAllocations(mem memory.Allocator, f File) (memory.Allocator, error) {
	cur, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(cur, io.SeekStart); err != nil {
		return nil, err
	}
	limit := max(1<<30, 64*size)
	if limit > math.MaxInt || limit < 0 {
		return mem, nil
	}
	return &limitAllocator{Allocator: mem, max: int(limit), size: size}, nil
}

func (l *limitAllocator) check(size int) {
	if size > l.max {
		panic(fmt.Errorf("allocation of %d bytes while reading a file of %d bytes", size, l.size))
	}
}

func (l *limitAllocator) Allocate(size int) []byte {
	l.check(size)
	return l.Allocator.Allocate(size)
}

func (l *limitAllocator) Reallocate(size int, b []byte) []byte {
	l.check(size)
	return l.Allocator.Reallocate(size, b)
}
