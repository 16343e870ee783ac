package main

import (
	"fmt"
	"os"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/synth"
)

// recordSink is a dataset file being written: an atomic file and the
// format's writer behind a background queue.
type recordSink struct {
	path   string
	role   string
	file   *atomicFile
	w      *dataset.AsyncWriter
	rows   int
	labels bool
}

// sinkLabels asks newRecordSink to add OpenRLHF's label column
// (synth.LabelColumn) to VeRL rows.
type sinkLabels bool

func newRecordSink(path string, format *dataset.Format, schema *arrow.Schema, role string, labels sinkLabels) (*recordSink, error) {
	if labels {
		schema = synth.LabelSchema(schema)
	}
	f, err := createAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	fw, err := format.NewWriter(f, schema, dataset.Options{})
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &recordSink{path: path, role: role, file: f, w: dataset.NewAsyncWriter(fw, 2), labels: bool(labels)}, nil
}

// write queues rec and releases it.
func (s *recordSink) write(rec arrow.Record) error {
	defer rec.Release()
	if s.labels {
		labelled, err := synth.WithLabels(rec)
		if err != nil {
			return fmt.Errorf("writing %s: %w", s.path, err)
		}
		defer labelled.Release()
		rec = labelled
	}
	s.rows += int(rec.NumRows())
	if err := s.w.Write(rec); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
}

// finish writes the format's footer; the file stays temporary until its
// Commit.
func (s *recordSink) finish() error {
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
}

// rowBuilder is a synth record builder the sink drains in batches.
type rowBuilder interface {
	Len() int
	NewRecord() arrow.Record
}

// flushFull writes rb's rows once they fill a batch.
func (s *recordSink) flushFull(rb rowBuilder) error {
	if rb.Len() >= outputBatchRows {
		return s.write(rb.NewRecord())
	}
	return nil
}

// drain writes rb's remaining rows and the format's footer.
func (s *recordSink) drain(rb rowBuilder) error {
	if rb.Len() > 0 {
		if err := s.write(rb.NewRecord()); err != nil {
			return err
		}
	}
	return s.finish()
}

// commit puts the file in place and writes the manifest m beside it,
// returning the manifest's path.
func (s *recordSink) commit(m *manifest) (string, error) {
	mp := manifestPath(s.path)
	return mp, commitOutputs(mp, m, s.file)
}

// abort discards the file; after a commit it leaves it alone.
func (s *recordSink) abort() {
	s.w.Abort()
	s.file.Abort()
}

func (s *recordSink) record(format string) manifestFile {
	rows := s.rows
	return manifestFile{Path: s.path, Role: s.role, Format: format, SHA256: s.file.SHA256(), Bytes: s.file.n, Rows: &rows}
}

// commitOutputs puts the files in place and writes the manifest m at mp.
// If a file or the manifest cannot be written, the files already put in
// place are removed again, so that outputs and manifest never disagree.
func commitOutputs(mp string, m *manifest, files ...*atomicFile) error {
	for i, f := range files {
		if err := f.Commit(); err != nil {
			for _, done := range files[:i] {
				os.Remove(done.path)
			}
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	if err := writeManifest(mp, m); err != nil {
		for _, f := range files {
			os.Remove(f.path)
		}
		return fmt.Errorf("writing %s: %w", mp, err)
	}
	return nil
}
