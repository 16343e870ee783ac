package dataset

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ArrowIPC writes the Arrow IPC file format (random access, with a footer),
// readable by pyarrow.ipc.open_file and datasets' "arrow" builder. Buffers
// are zstd-compressed; Arrow IPC supports only zstd and lz4. It reads both
// the file and the stream format.
var ArrowIPC = &Format{
	Name:       "arrow",
	Extensions: []string{".arrow", ".feather", ".ipc"},
	NewWriter:  newArrowWriter,
	NewReader:  newArrowReader,
}

func newArrowWriter(w io.Writer, schema *arrow.Schema, _ Options) (RecordWriter, error) {
	return ipc.NewFileWriter(&countingWriter{w: w}, ipc.WithSchema(schema), ipc.WithZstd())
}

// arrowReader reads Arrow IPC one record batch at a time, splitting
// batches larger than BatchRows. It reads the file format (with a footer,
// as this package and pyarrow.ipc.new_file write it) and the stream format
// (as Hugging Face datasets' save_to_disk writes its .arrow shards).
type arrowReader struct {
	src    ipcBatches
	schema *arrow.Schema
	idx    []int // the file's column for each output column
	batch  int64
	name   string

	next int          // the number of the next record batch
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
	src, err := openIPC(f, mem)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", opt.Name, err)
	}
	defer func() {
		if err != nil {
			src.close()
		}
	}()
	fs := src.schema()
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
	return &arrowReader{src: src, schema: schema, idx: idx, batch: int64(opt.BatchRows), name: opt.Name}, nil
}

// ipcBatches are the record batches of an IPC file or stream, in order.
type ipcBatches interface {
	schema() *arrow.Schema
	// next returns the next batch, which the caller releases, or nil at
	// the end.
	next() (arrow.Record, error)
	close()
}

// openIPC reads the file format when f starts with its magic, else the
// stream format.
func openIPC(f File, mem memory.Allocator) (ipcBatches, error) {
	var magic [6]byte
	n, err := f.ReadAt(magic[:], 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if string(magic[:n]) == "ARROW1" {
		fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			return nil, err
		}
		return &ipcFile{fr: fr}, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	sr, err := ipc.NewReader(f, ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("neither an Arrow IPC file nor a stream: %w", err)
	}
	return &ipcStream{sr: sr}, nil
}

type ipcFile struct {
	fr *ipc.FileReader
	i  int
}

func (b *ipcFile) schema() *arrow.Schema { return b.fr.Schema() }
func (b *ipcFile) close()                { b.fr.Close() }

func (b *ipcFile) next() (arrow.Record, error) {
	if b.i >= b.fr.NumRecords() {
		return nil, nil
	}
	b.i++
	return b.fr.RecordAt(b.i - 1)
}

type ipcStream struct{ sr *ipc.Reader }

func (b *ipcStream) schema() *arrow.Schema { return b.sr.Schema() }
func (b *ipcStream) close()                { b.sr.Release() }

func (b *ipcStream) next() (arrow.Record, error) {
	if !b.sr.Next() {
		return nil, b.sr.Err()
	}
	rec := b.sr.Record()
	rec.Retain()
	return rec, nil
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
		rec, err := r.src.next()
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: record batch %d: %w", r.name, r.next, err)
		}
		if rec == nil {
			return nil, io.EOF
		}
		r.next++
		if want := r.src.schema().NumFields(); rec.NumCols() != int64(want) {
			rec.Release()
			return nil, fmt.Errorf("dataset: %s: %w: record batch %d has %d columns, want %d", r.name, ErrCorrupt, r.next-1, rec.NumCols(), want)
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
	if r.src != nil {
		r.src.close()
		r.src = nil
	}
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}
