package timestamps

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth"
)

// Output says where Write puts the stamped records and what their
// manifest records.
type Output struct {
	// Path is the output file; its extension picks the format (FormatOf).
	// The manifest goes beside it.
	Path string
	// Manifest holds what the caller records: tool, version, command,
	// config, and the inputs other than the trajectory files (a catalog
	// file, say), which are listed after them. Outputs and Summary are
	// filled in.
	Manifest output.Manifest
	// Progress, when set, is called once per record written.
	Progress func()
	// Reading, when set, is called with the inputs once Write has opened
	// them and before it reads them, so that the caller can follow the
	// bytes read (output.Input.BytesRead).
	Reading func(inputs []*output.Input)
}

// WriteError is a failure to write or commit the output file, as opposed
// to one of reading or stamping the inputs: the caller names the output
// for it.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "timestamps: write: " + e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

// FormatOf is the format of an output file by its extension: "json" for a
// JSON array of records, "jsonl" for JSONL, one record a line.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json", ".jsonl":
		return ext[1:], nil
	}
	return "", fmt.Errorf("unknown extension %q: want a .json (JSON array) or .jsonl (JSONL) file name", filepath.Ext(path))
}

// Write stamps the records of the trajectory files, read in order,
// (Stream) and writes them to o.Path, a JSON array or JSONL by its
// extension, with their manifest: both or, after an error or a cancelled
// ctx, neither, the previous ones staying. The manifest lists the files
// with their SHA-256. A failure of the output file is a *WriteError; any
// other error is Stream's.
func Write(ctx context.Context, files []string, opt Options, o Output) (*synth.Written[*Summary], error) {
	format, err := FormatOf(o.Path)
	if err != nil {
		return nil, err
	}
	out, err := output.Create(o.Path)
	if err != nil {
		return nil, &WriteError{err}
	}
	defer out.Abort()
	inputs := make([]*output.Input, len(files))
	sources := make([]Input, len(files))
	for i, path := range files {
		inputs[i] = output.OpenInput(path)
		defer inputs[i].Close()
		sources[i] = Input{Name: path, Reader: inputs[i]}
	}
	if o.Reading != nil {
		o.Reading(inputs)
	}
	w := newRecordWriter(out, format == "jsonl")
	sum, err := Stream(ctx, sources, opt, func(rec []byte) error {
		if err := w.write(rec); err != nil {
			return &WriteError{err}
		}
		if o.Progress != nil {
			o.Progress()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := w.finish(); err != nil {
		return nil, &WriteError{err}
	}
	stamped := sum.Stamped
	m := o.Manifest
	m.Outputs = []output.Entry{out.Entry("trajectories", format, &stamped)}
	m.Inputs = nil
	for _, in := range inputs {
		m.Inputs = append(m.Inputs, in.Entry("trajectories"))
	}
	m.Inputs = append(m.Inputs, o.Manifest.Inputs...)
	m.Summary = sum
	mp := output.ManifestPath(o.Path)
	if err := output.Commit(ctx, mp, &m, out); err != nil {
		return nil, &WriteError{err}
	}
	return &synth.Written[*Summary]{Outputs: m.Outputs, Summary: sum, ManifestPath: mp}, nil
}

// recordWriter writes records as JSONL, one a line, or as a JSON array,
// one element a line.
type recordWriter struct {
	w     *bufio.Writer
	jsonl bool
	n     int
}

func newRecordWriter(out *output.File, jsonl bool) *recordWriter {
	return &recordWriter{w: bufio.NewWriterSize(out, 1<<20), jsonl: jsonl}
}

// write adds one record, compact JSON without a newline.
func (r *recordWriter) write(rec []byte) error {
	switch {
	case r.jsonl:
	case r.n == 0:
		r.w.WriteString("[\n")
	default:
		r.w.WriteString(",\n")
	}
	// A bufio.Writer keeps its first error and returns it from every later
	// write, so this check covers the separators too.
	if _, err := r.w.Write(rec); err != nil {
		return err
	}
	if r.jsonl {
		r.w.WriteByte('\n')
	}
	r.n++
	return nil
}

// finish ends the array, if it is one, and flushes.
func (r *recordWriter) finish() error {
	switch {
	case r.jsonl:
	case r.n == 0:
		r.w.WriteString("[]\n")
	default:
		r.w.WriteString("\n]\n")
	}
	return r.w.Flush()
}
