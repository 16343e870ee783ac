package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// Parquet writes zstd-compressed Parquet with the Arrow schema stored in the
// file metadata, so pyarrow and Hugging Face datasets read back the exact
// types (nested lists of message structs included).
var Parquet = &Format{
	Name:       "parquet",
	Extensions: []string{".parquet", ".pq"},
	NewWriter:  newParquetWriter,
	NewReader:  newParquetReader,
}

type parquetWriter struct {
	fw   *pqarrow.FileWriter
	sink *errWriter
}

func newParquetWriter(w io.Writer, schema *arrow.Schema, opt Options) (_ RecordWriter, err error) {
	opt = opt.withDefaults()
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(opt.ZstdLevel),
		parquet.WithMaxRowGroupLength(opt.RowGroupRows),
		parquet.WithDictionaryDefault(true),
		parquet.WithCreatedBy("timeaware"),
	)
	sink := &errWriter{w: w}
	// The Parquet writer panics when it cannot write its magic number.
	defer func() {
		if sink.err != nil {
			if r := recover(); r != nil {
				err = sink.err
			}
		}
	}()
	fw, err := pqarrow.NewFileWriter(schema, nopCloser{sink}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{fw: fw, sink: sink}, nil
}

func (p *parquetWriter) Write(rec arrow.Record) error {
	if err := p.fw.WriteBuffered(rec); err != nil {
		return err
	}
	return p.sink.err
}

func (p *parquetWriter) Close() error {
	if err := p.fw.Close(); err != nil {
		return err
	}
	return p.sink.err
}

// errWriter keeps the first error of the writer it wraps and fails every
// later write with it. Arrow's Parquet writer drops the write errors of the
// row groups it closes itself and of the footer, so the file would look
// complete; the parquetWriter reports them from here instead.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}

// parquetReader streams a Parquet file BatchRows rows at a time, reading the
// selected columns' chunks one row group after another.
type parquetReader struct {
	rr     pqarrow.RecordReader
	schema *arrow.Schema
	order  []int // the column of rr's records for each output column
	name   string
	err    error
}

func newParquetReader(f File, opt ReadOptions) (_ RecordReader, err error) {
	opt = opt.withDefaults(f, "parquet")
	defer catchPanic(opt.Name, &err)
	wrap := func(err error) error { return fmt.Errorf("dataset: %s: %w", opt.Name, err) }

	// The Parquet reader's Close would close f: it is never called, and
	// noClose makes sure nothing else closes f either.
	pf, err := file.NewParquetReader(noClose{f}, file.WithReadProps(parquet.NewReaderProperties(opt.Allocator)))
	if err != nil {
		return nil, wrap(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opt.BatchRows)}, opt.Allocator)
	if err != nil {
		return nil, wrap(err)
	}
	names := make([]string, len(fr.Manifest.Fields))
	for i, fld := range fr.Manifest.Fields {
		names[i] = fld.Field.Name
	}
	idx, err := opt.selectColumns(names)
	if err != nil {
		return nil, err
	}
	// The record reader selects leaf columns; a nested field is read whole
	// by selecting all the leaves under it.
	var leaves []int
	for _, i := range idx {
		leaves = parquetLeaves(&fr.Manifest.Fields[i], leaves)
	}
	if len(leaves) == 0 {
		return nil, wrap(errors.New("no columns to read"))
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, wrap(err)
	}
	r := &parquetReader{rr: rr, name: opt.Name}
	defer func() {
		if err != nil {
			rr.Release()
		}
	}()

	// Check the types of the arrays the reader builds, not only the schema
	// stored in the file.
	got := rr.Schema()
	fields := make([]arrow.Field, len(idx))
	r.order = make([]int, len(idx))
	for k, i := range idx {
		j := got.FieldIndices(names[i])
		if len(j) != 1 {
			return nil, wrap(fmt.Errorf("column %q missing from the record reader", names[i]))
		}
		r.order[k] = j[0]
		fields[k] = got.Field(j[0])
	}
	if r.schema, err = opt.projectSchema(fields, got.Metadata()); err != nil {
		return nil, err
	}
	return r, nil
}

// parquetLeaves appends the leaf column indices under f.
func parquetLeaves(f *pqarrow.SchemaField, leaves []int) []int {
	if len(f.Children) == 0 {
		if f.IsLeaf() {
			leaves = append(leaves, f.ColIndex)
		}
		return leaves
	}
	for i := range f.Children {
		leaves = parquetLeaves(&f.Children[i], leaves)
	}
	return leaves
}

func (r *parquetReader) Schema() *arrow.Schema { return r.schema }

func (r *parquetReader) Next() (_ arrow.Record, err error) {
	if r.err != nil {
		return nil, r.err
	}
	defer func() {
		if err != nil {
			r.err = err
		}
	}()
	defer catchPanic(r.name, &err)
	for r.rr.Next() {
		in := r.rr.Record()
		if in.NumRows() == 0 {
			continue
		}
		cols := make([]arrow.Array, len(r.order))
		for k, j := range r.order {
			cols[k] = in.Column(j)
		}
		return array.NewRecord(r.schema, cols, in.NumRows()), nil
	}
	if err := r.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("dataset: %s: %w", r.name, err)
	}
	return nil, io.EOF
}

func (r *parquetReader) Close() error {
	if r.rr != nil {
		r.rr.Release()
		r.rr = nil
	}
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}
