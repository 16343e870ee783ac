package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
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

// Close writes the last row group and the footer. Both are held in memory
// while Arrow writes them (the last row group is bounded by RowGroupRows),
// so that the footer can be put in a stable order before any of it goes
// out (stableFooter): the same rows give the same bytes.
func (p *parquetWriter) Close() error {
	p.sink.hold = true
	err := p.fw.Close()
	tail := p.sink.held
	p.sink.hold, p.sink.held = false, nil
	if err != nil {
		return err
	}
	if p.sink.err != nil {
		return p.sink.err
	}
	_, _ = p.sink.Write(stableFooter(tail))
	return p.sink.err
}

// dictionaryPage is the Parquet format's PageType of a dictionary page.
const dictionaryPage = 2

// stableFooter puts the page-encoding statistics of every column chunk in
// the footer at the end of a Parquet file's tail in one order (dictionary
// pages first, then by encoding). Arrow writes them from a Go map, so a
// chunk whose dictionary fell back to plain encoding (large outputs) would
// otherwise list them in a different order from run to run, and the same
// rows would make different files, with different manifest hashes. The
// footer keeps its length; a tail it cannot read back exactly is left as
// it is.
func stableFooter(tail []byte) []byte {
	n := len(tail)
	if n < 8 || string(tail[n-4:]) != "PAR1" {
		return tail
	}
	size := int(binary.LittleEndian.Uint32(tail[n-8 : n-4]))
	if size > n-8 {
		return tail
	}
	footer := tail[n-8-size : n-8]
	fmd, err := metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return tail
	}
	moved := false
	for _, rg := range fmd.RowGroups {
		for _, col := range rg.Columns {
			if col.MetaData == nil {
				continue
			}
			st := col.MetaData.EncodingStats
			less := func(i, j int) bool {
				if st[i].PageType != st[j].PageType {
					return st[i].PageType == dictionaryPage
				}
				return st[i].Encoding < st[j].Encoding
			}
			if !sort.SliceIsSorted(st, less) {
				sort.SliceStable(st, less)
				moved = true
			}
		}
	}
	if !moved {
		return tail
	}
	out, err := fmd.Serialize(context.Background())
	if err != nil || len(out) != size {
		return tail
	}
	copy(footer, out)
	return tail
}

// errWriter keeps the first error of the writer it wraps and fails every
// later write with it. Arrow's Parquet writer drops the write errors of the
// row groups it closes itself and of the footer, so the file would look
// complete; the parquetWriter reports them from here instead.
type errWriter struct {
	w   io.Writer
	err error
	// hold keeps what is written in held instead of passing it on: the
	// tail of the file while the footer is written (parquetWriter.Close).
	hold bool
	held []byte
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.hold {
		e.held = append(e.held, p...)
		return len(p), nil
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}

// parquetReader streams a Parquet file BatchRows rows at a time, one row
// group after another: only the selected columns' chunks of the current row
// group are in memory.
type parquetReader struct {
	pf     *file.Reader
	fr     *pqarrow.FileReader
	leaves []int // the leaf columns under the selected fields
	schema *arrow.Schema
	names  []string // the selected fields
	name   string

	rg    int                  // the next row group
	rr    pqarrow.RecordReader // reads the current row group
	order []int                // the column of rr's records for each output column
	err   error
}

func newParquetReader(f File, opt ReadOptions) (_ RecordReader, err error) {
	opt = opt.withDefaults(f, "parquet")
	defer catchPanic(opt.Name, &err)
	wrap := func(err error) error { return fmt.Errorf("dataset: %s: %w", opt.Name, err) }
	mem, err := limitAllocations(opt.Allocator, f)
	if err != nil {
		return nil, wrap(err)
	}

	// The Parquet reader's Close would close f: it is never called, and
	// noClose makes sure nothing else closes f either.
	pf, err := file.NewParquetReader(noClose{f}, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, wrap(err)
	}
	if err := checkStoredSchema(pf); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w: stored Arrow schema: %w", opt.Name, ErrCorrupt, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opt.BatchRows)}, mem)
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
	r := &parquetReader{pf: pf, fr: fr, name: opt.Name}
	// The record reader selects leaf columns; a nested field is read whole
	// by selecting all the leaves under it.
	fields := make([]arrow.Field, len(idx))
	for k, i := range idx {
		r.leaves = parquetLeaves(&fr.Manifest.Fields[i], r.leaves)
		fields[k] = *fr.Manifest.Fields[i].Field
		r.names = append(r.names, names[i])
	}
	if len(r.leaves) == 0 {
		return nil, wrap(errors.New("no columns to read"))
	}
	var meta arrow.Metadata
	if fr.Manifest.SchemaMeta != nil {
		meta = *fr.Manifest.SchemaMeta
	}
	if r.schema, err = opt.projectSchema(fields, meta); err != nil {
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
			r.release()
		}
	}()
	defer catchPanic(r.name, &err)
	for {
		if r.rr == nil {
			if r.rg >= r.pf.NumRowGroups() {
				return nil, io.EOF
			}
			if err := r.openRowGroup(); err != nil {
				return nil, err
			}
		}
		if r.rr.Next() {
			in := r.rr.Record()
			if in.NumRows() == 0 {
				continue
			}
			if err := validateColumns(in, r.order); err != nil {
				return nil, fmt.Errorf("dataset: %s: %w: row group %d: %w", r.name, ErrCorrupt, r.rg-1, err)
			}
			cols := make([]arrow.Array, len(r.order))
			for k, j := range r.order {
				cols[k] = in.Column(j)
			}
			return array.NewRecord(r.schema, cols, in.NumRows()), nil
		}
		if err := r.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("dataset: %s: row group %d: %w", r.name, r.rg-1, err)
		}
		r.rr.Release()
		r.rr = nil
	}
}

// openRowGroup starts reading the next row group.
//
// Arrow decodes the columns of nested fields on goroutines of its own, where
// its panics on damaged pages cannot be recovered and would end the process.
// So the pages of the row group's chunks are first read here, where they
// can: the pages that Arrow then decodes have sound headers and decompress
// (zstd checks their content), which leaves little to go wrong.
func (r *parquetReader) openRowGroup() error {
	rg := r.rg
	r.rg++
	rgr := r.pf.RowGroup(rg)
	for _, c := range r.leaves {
		pr, err := rgr.GetColumnPageReader(c)
		if err != nil {
			return fmt.Errorf("dataset: %s: row group %d: %w", r.name, rg, err)
		}
		for pr.Next() {
		}
		if err := pr.Err(); err != nil {
			return fmt.Errorf("dataset: %s: %w: row group %d: %w", r.name, ErrCorrupt, rg, err)
		}
	}
	rr, err := r.fr.GetRecordReader(context.Background(), r.leaves, []int{rg})
	if err != nil {
		return fmt.Errorf("dataset: %s: row group %d: %w", r.name, rg, err)
	}
	got := rr.Schema()
	r.order = r.order[:0]
	for _, n := range r.names {
		j := got.FieldIndices(n)
		if len(j) != 1 {
			rr.Release()
			return fmt.Errorf("dataset: %s: row group %d: column %q missing from the record reader", r.name, rg, n)
		}
		r.order = append(r.order, j[0])
	}
	r.rr = rr
	return nil
}

func (r *parquetReader) release() {
	if r.rr != nil {
		r.rr.Release()
		r.rr = nil
	}
}

func (r *parquetReader) Close() error {
	r.release()
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}

// checkStoredSchema decodes the Arrow schema that the file stores in its
// metadata, as pqarrow does, but allocating no more than its size: pqarrow
// decodes it with the default allocator, where a damaged size would have
// the process run out of memory.
func checkStoredSchema(pf *file.Reader) error {
	kv := pf.MetaData().KeyValueMetadata()
	if kv == nil {
		return nil
	}
	v := kv.FindValue("ARROW:schema")
	if v == nil {
		return nil
	}
	var decoded []byte
	var err error
	if len(*v)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(*v); err != nil {
			return nil // pqarrow reports it
		}
	}
	mem := &limitAllocator{Allocator: memory.NewGoAllocator(), max: len(decoded), size: int64(len(decoded))}
	r, err := ipc.NewReader(bytes.NewReader(decoded), ipc.WithAllocator(mem))
	if err != nil {
		return err
	}
	r.Release()
	return nil
}
