package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/prefpairs"
)

// pairsOutput is one dataset file being written: an atomic file, the
// format's writer behind a background queue, and the batch being built.
type pairsOutput struct {
	path string
	file *atomicFile
	w    *dataset.AsyncWriter
	rb   *prefpairs.RecordBuilder
	rows int
}

const outputBatchRows = 8192

func newPairsOutput(path string, format *dataset.Format, opt dataset.Options) (*pairsOutput, error) {
	f, err := createAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	fw, err := format.NewWriter(f, prefpairs.Schema, opt)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &pairsOutput{path: path, file: f, w: dataset.NewAsyncWriter(fw, 2), rb: prefpairs.NewRecordBuilder(nil)}, nil
}

func (o *pairsOutput) add(p *prefpairs.Pair) error {
	o.rb.Append(p)
	o.rows++
	if o.rb.Len() >= outputBatchRows {
		return o.flush()
	}
	return nil
}

func (o *pairsOutput) flush() error {
	if o.rb.Len() == 0 {
		return nil
	}
	rec := o.rb.NewRecord()
	defer rec.Release()
	if err := o.w.Write(rec); err != nil {
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// finish writes what is left and the format's footer; the file is still
// temporary until commit.
func (o *pairsOutput) finish() error {
	if err := o.flush(); err != nil {
		return err
	}
	if err := o.w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	o.rb.Release()
	o.rb = nil
	return nil
}

// abort discards the output; after a commit it leaves the file alone.
func (o *pairsOutput) abort() {
	o.w.Abort()
	o.file.Abort()
	if o.rb != nil {
		o.rb.Release()
		o.rb = nil
	}
}

func (o *pairsOutput) record(format string) manifestFile {
	rows := o.rows
	return manifestFile{Path: o.path, Role: "pairs", Format: format, SHA256: o.file.SHA256(), Bytes: o.file.n, Rows: &rows}
}

// splitPath puts -train or -test before the extension: pairs.parquet →
// pairs-train.parquet.
func splitPath(out, side string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-" + side + ext
}
