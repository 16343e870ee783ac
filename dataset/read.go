package dataset

import (
	"errors"
	"fmt"
	"io"
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
	// Columns selects fields by name, in this order; nil means all of
	// Schema's fields, or all of the file's when Schema is nil. A column
	// that is missing is an error (ErrColumnNotFound) naming it and the
	// file.
	Columns []string
	// BatchRows is the target number of rows per batch (default 8192).
	// Batches never exceed it; Parquet and JSONL fill them, Arrow IPC
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
			return nil, fmt.Errorf("dataset: %s: %w: %q", o.Name, ErrColumnNotFound, n)
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
		if want.Nullable != g.Nullable || !arrow.TypeEqual(want.Type, g.Type) {
			return nil, fmt.Errorf("dataset: %s: %w: column %q is %s, want %s", o.Name, ErrSchemaMismatch, g.Name, describeField(g), describeField(want))
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
		return arrow.Field{}, fmt.Errorf("dataset: %s: %w: %q is not in the expected schema", o.Name, ErrColumnNotFound, name)
	}
	return o.Schema.Field(i[0]), nil
}

func (o ReadOptions) schemaMetadata() *arrow.Metadata {
	md := o.Schema.Metadata()
	return &md
}

func describeField(f arrow.Field) string {
	if f.Nullable {
		return f.Type.String() + " (nullable)"
	}
	return f.Type.String()
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
