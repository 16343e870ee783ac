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
	fw *pqarrow.FileWriter
}

func newParquetWriter(w io.Writer, schema *arrow.Schema, opt Options) (RecordWriter, error) {
	useCachedZstd()
	opt = opt.withDefaults()
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(opt.ZstdLevel),
		parquet.WithMaxRowGroupLength(opt.RowGroupRows),
		parquet.WithDictionaryDefault(true),
		parquet.WithCreatedBy("timeaware"),
	)
	fw, err := pqarrow.NewFileWriter(schema, nopCloser{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{fw: fw}, nil
}

func (p *parquetWriter) Write(rec arrow.Record) error { return p.fw.WriteBuffered(rec) }
func (p *parquetWriter) Close() error                 { return p.fw.Close() }
