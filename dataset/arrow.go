package dataset

import (
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// ArrowIPC writes the Arrow IPC file format (random access, with a footer),
// readable by pyarrow.ipc.open_file and datasets' "arrow" builder. Buffers
// are zstd-compressed; Arrow IPC supports only zstd and lz4.
var ArrowIPC = &Format{
	Name:       "arrow",
	Extensions: []string{".arrow", ".feather", ".ipc"},
	NewWriter:  newArrowWriter,
}

func newArrowWriter(w io.Writer, schema *arrow.Schema, _ Options) (RecordWriter, error) {
	return ipc.NewFileWriter(&countingWriter{w: w}, ipc.WithSchema(schema), ipc.WithZstd())
}
