package output

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
)

// BatchRows is the number of rows a Sink writes at a time: a record batch,
// and a Parquet row group's worth of rows in one write.
const BatchRows = 8192

// Builder is a record builder a Sink drains (prefpairs.RecordBuilder, the
// synth task families' builders).
type Builder interface {
	Len() int
	NewRecord() arrow.Record
}

// SinkOptions tune a Sink.
type SinkOptions struct {
	// Dataset tunes the format's writer.
	Dataset dataset.Options
	// Transform, when set, turns every batch before it is written (and
	// Schema, its schema): synth's label column, for one.
	Transform func(arrow.Record) (arrow.Record, error)
	Schema    func(*arrow.Schema) *arrow.Schema
}

// Sink is a dataset file being written: a File, and the format's writer
// behind a background queue.
type Sink struct {
	file      *File
	w         *dataset.AsyncWriter
	rows      int
	transform func(arrow.Record) (arrow.Record, error)
}

// NewSink starts a dataset of schema at path in format.
func NewSink(path string, format *dataset.Format, schema *arrow.Schema, opt SinkOptions) (*Sink, error) {
	if opt.Schema != nil {
		schema = opt.Schema(schema)
	}
	f, err := Create(path)
	if err != nil {
		return nil, err
	}
	fw, err := format.NewWriter(f, schema, opt.Dataset)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &Sink{file: f, w: dataset.NewAsyncWriter(fw, 2), transform: opt.Transform}, nil
}

// Write queues rec and releases it.
func (s *Sink) Write(rec arrow.Record) error {
	defer rec.Release()
	if s.transform != nil {
		out, err := s.transform(rec)
		if err != nil {
			return fmt.Errorf("writing %s: %w", s.file.path, err)
		}
		defer out.Release()
		rec = out
	}
	s.rows += int(rec.NumRows())
	if err := s.w.Write(rec); err != nil {
		return fmt.Errorf("writing %s: %w", s.file.path, err)
	}
	return nil
}

// FlushFull writes b's rows once they fill a batch.
func (s *Sink) FlushFull(b Builder) error {
	if b.Len() >= BatchRows {
		return s.Write(b.NewRecord())
	}
	return nil
}

// Drain writes b's remaining rows and the format's footer; the file stays
// temporary until it is committed.
func (s *Sink) Drain(b Builder) error {
	if b != nil && b.Len() > 0 {
		if err := s.Write(b.NewRecord()); err != nil {
			return err
		}
	}
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", s.file.path, err)
	}
	return nil
}

// Abort discards the file; after a commit it leaves it alone.
func (s *Sink) Abort() {
	s.w.Abort()
	s.file.Abort()
}

// File is the sink's file, for Commit.
func (s *Sink) File() *File { return s.file }

// Rows counts the rows written.
func (s *Sink) Rows() int { return s.rows }

// Entry is the sink's file for a manifest.
func (s *Sink) Entry(role, format string) Entry {
	rows := s.rows
	return s.file.Entry(role, format, &rows)
}
