package dataset

import (
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// Parquet writes zstd-compressed Parquet with the Arrow schema stored in the
// file metadata, so pyarrow and Hugging Face datasets read back the exact
// types (nested lists of message structs included).
var Parquet = &Format{
	Name:       "parquet",
	Extensions: []string{".parquet", ".pq"},
	NewWriter:  newParquetWriter,
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
