// Package dataset writes tables of training data in the file formats that
// Python trainers load directly: Parquet (zstd), the Arrow IPC file format,
// and JSONL. Every format takes the same Arrow schema and records, so a
// dataset has one schema whatever its format. Readers stream the datasets
// back as record batches (see Open).
//
// Adding a format is one file that defines a *Format plus one line in All.
package dataset

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// Format is a file format for datasets.
type Format struct {
	// Name is the value users give to --format.
	Name string
	// Extensions are the file name endings (with the dot) that select this
	// format when no format is named; the first is the canonical one.
	Extensions []string
	// NewWriter starts a dataset in this format on w. The writer never closes
	// w: the caller owns it (and, for files, its atomic commit).
	NewWriter func(w io.Writer, schema *arrow.Schema, opt Options) (RecordWriter, error)
	// NewReader reads a dataset of this format as Arrow record batches. The
	// reader never closes f: the caller owns it.
	NewReader func(f File, opt ReadOptions) (RecordReader, error)
}

// All lists the supported formats, in the order they are documented.
var All = []*Format{Parquet, ArrowIPC, JSONL}

// RecordWriter appends record batches to a dataset. Close writes any footer;
// a dataset is complete only after Close returns nil.
type RecordWriter interface {
	Write(rec arrow.Record) error
	Close() error
}

// Options tunes the writers; the zero value gives the defaults.
type Options struct {
	// ZstdLevel is the zstd level for Parquet pages (default 1: fast, and
	// the level Arrow's C++ writer uses by default).
	ZstdLevel int
	// RowGroupRows caps the rows in one Parquet row group (default 16,384).
	RowGroupRows int64
}

func (o Options) withDefaults() Options {
	if o.ZstdLevel == 0 {
		o.ZstdLevel = 1
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = 16 << 10
	}
	return o
}

// ErrUnknownFormat is returned by Lookup for a name that is not in All.
var ErrUnknownFormat = errors.New("unknown format")

// Lookup returns the format with the given name.
func Lookup(name string) (*Format, error) {
	for _, f := range All {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w %q (want %s)", ErrUnknownFormat, name, Names())
}

// Names lists the format names as "a, b or c".
func Names() string {
	names := make([]string, len(All))
	for i, f := range All {
		names[i] = f.Name
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ForPath picks the format from a file name's extension.
func ForPath(path string) (*Format, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range All {
		for _, e := range f.Extensions {
			if e == ext {
				return f, true
			}
		}
	}
	return nil, false
}

// countingWriter gives a plain io.Writer the position queries that Arrow's
// IPC file writer makes through io.Seeker, without requiring a real file.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Seek(offset int64, whence int) (int64, error) {
	if offset == 0 && whence == io.SeekCurrent {
		return c.n, nil
	}
	return 0, errors.New("dataset: output is not seekable")
}

// nopCloser keeps writers that close what they wrap (pqarrow does) from
// closing the caller's file.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
