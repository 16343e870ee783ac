package dataset

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// ArrowIPC writes the Arrow IPC file format (random access, with a footer),
// readable by pyarrow.ipc.open_file and datasets' "arrow" builder. Buffers
// are zstd-compressed; Arrow IPC supports only zstd and lz4.
var ArrowIPC = &Format{
	Name:       "arrow",
	Extensions: []string{".arrow", ".feather", ".ipc"},
	NewWriter:  newArrowWriter,
	NewReader:  newArrowReader,
}

func newArrowWriter(w io.Writer, schema *arrow.Schema, _ Options) (RecordWriter, error) {
	return ipc.NewFileWriter(&countingWriter{w: w}, ipc.WithSchema(schema), ipc.WithZstd())
}

// arrowReader reads an Arrow IPC file one record batch at a time, splitting
// batches larger than BatchRows.
type arrowReader struct {
	fr     *ipc.FileReader
	schema *arrow.Schema
	idx    []int // the file's column for each output column
	batch  int64
	name   string

	next int          // the next record batch of the file
	cur  arrow.Record // the projected batch being split
	off  int64        // the rows of cur already returned
	err  error
}

func newArrowReader(f File, opt ReadOptions) (_ RecordReader, err error) {
	opt = opt.withDefaults(f, "arrow")
	defer catchPanic(opt.Name, &err)
	mem, err := limitAllocations(opt.Allocator, f)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", opt.Name, err)
	}
	fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", opt.Name, err)
	}
	defer func() {
		if err != nil {
			fr.Close()
		}
	}()
	fs := fr.Schema()
	names := make([]string, fs.NumFields())
	for i, fld := range fs.Fields() {
		names[i] = fld.Name
	}
	idx, err := opt.selectColumns(names)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(idx))
	for k, i := range idx {
		fields[k] = fs.Field(i)
	}
	schema, err := opt.projectSchema(fields, fs.Metadata())
	if err != nil {
		return nil, err
	}
	return &arrowReader{fr: fr, schema: schema, idx: idx, batch: int64(opt.BatchRows), name: opt.Name}, nil
}

func (r *arrowReader) Schema() *arrow.Schema { return r.schema }

func (r *arrowReader) Next() (_ arrow.Record, err error) {
	if r.err != nil {
		return nil, r.err
	}
	defer func() {
		if err != nil {
			r.err = err
		}
	}()
	defer catchPanic(r.name, &err)
	for r.cur == nil {
		if r.next >= r.fr.NumRecords() {
			return nil, io.EOF
		}
		rec, err := r.fr.RecordAt(r.next)
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: record batch %d: %w", r.name, r.next, err)
		}
		r.next++
		if rec.NumCols() != int64(r.fr.Schema().NumFields()) {
			rec.Release()
			return nil, fmt.Errorf("dataset: %s: %w: record batch %d has %d columns, want %d", r.name, ErrCorrupt, r.next-1, rec.NumCols(), r.fr.Schema().NumFields())
		}
		if err := validateColumns(rec, r.idx); err != nil {
			rec.Release()
			return nil, fmt.Errorf("dataset: %s: %w: record batch %d: %w", r.name, ErrCorrupt, r.next-1, err)
		}
		if rec.NumRows() > 0 {
			cols := make([]arrow.Array, len(r.idx))
			for k, i := range r.idx {
				cols[k] = rec.Column(i)
			}
			r.cur, r.off = array.NewRecord(r.schema, cols, rec.NumRows()), 0
		}
		rec.Release()
	}
	rows := r.cur.NumRows()
	if r.off == 0 && rows <= r.batch {
		out := r.cur
		r.cur = nil
		return out, nil
	}
	end := min(r.off+r.batch, rows)
	out := r.cur.NewSlice(r.off, end)
	r.off = end
	if end == rows {
		r.cur.Release()
		r.cur = nil
	}
	return out, nil
}

func (r *arrowReader) Close() error {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.fr != nil {
		r.fr.Close()
		r.fr = nil
	}
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}
