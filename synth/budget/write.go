package budget

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// FileError is the error of reading or writing one of a pipeline's files,
// named by its role in the manifest ("tasks", "rl_rows",
// "teacher_requests", "sft_rows", "traces"), so that the caller can name
// whatever named the file. Errors in an input's data are not FileErrors:
// they name the file themselves (a *LineError).
type FileError struct {
	Role string
	Path string
	Err  error
}

func (e *FileError) Error() string { return "budget: " + e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// Manifest roles of the files Write, WriteSFT and Distill read and write.
const (
	RoleTasks           = "tasks"
	RoleRows            = "rl_rows"
	RoleTeacherRequests = "teacher_requests"
	RoleSFTRows         = "sft_rows"
	RoleTraces          = "traces"
)

// Files are the files Write reads and writes besides the rows: the task
// file and, when TeacherPath is set, the teacher requests.
type Files struct {
	// Tasks is the JSONL task file; it is hashed as it is read, for the
	// manifest.
	Tasks *output.Input
	// TeacherPath, when set, is where the teacher requests go (JSONL, one
	// per row of the train side), written with Teacher.
	TeacherPath string
	Teacher     TeacherOptions
}

// Written is what Write put in place.
type Written struct {
	// Written holds the rows' files (Outputs), the build's summary, the
	// split and the manifest's path.
	synth.Written[*Summary]
	// Teacher is the teacher requests' entry; nil without them.
	Teacher *output.Entry
}

// Write builds the rows of the tasks in f.Tasks (Build) and writes them to
// o's files and, with f.TeacherPath, a teacher request per row to that
// file, then commits all of them with their manifest: all or, after an
// error or a cancelled ctx, none, the previous ones staying. The manifest's
// outputs are the rows' files then the teacher requests, its input the
// task file, its summary the build's with the split's record under
// "split".
//
// With o.TestFraction above zero the tasks are split exactly: the
// round(fraction·n) tasks of the whole file (every shard reads them all,
// so shards agree) whose hash with opt.Seed is lowest go, with all their
// rows, to the test side, and only the train side's rows get teacher
// requests (distilling on test tasks would leak them).
//
// Bad options are a *synth.OptionError, checked before any file is read or
// created; the failure of a file is a *FileError; a bad task line is a
// *LineError.
func Write(ctx context.Context, opt Options, f Files, o synth.Output) (*Written, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	var enc *TeacherEncoder
	if f.TeacherPath != "" {
		var err error
		if enc, err = NewTeacherEncoder(f.Teacher); err != nil {
			return nil, err
		}
	}
	var split output.Splitter // nil, not a nil *UnitSplit, for one file
	if o.TestFraction > 0 {
		s, err := taskSplit(f.Tasks.Path(), opt.Family, opt.Seed, o.TestFraction)
		if err != nil {
			return nil, err
		}
		split = s
	}
	sinks, err := output.NewSplitSinks(output.SplitSinksOptions[*Row]{Out: o.Path, Format: o.Format, Schema: Schema,
		Sink: o.SinkOptions(), Role: RoleRows, Split: split,
		Unit:       output.Unit[*Row]{Name: "task", Of: func(r *Row) string { return r.TaskID }, SetSplit: func(r *Row, s string) { r.Split = s }},
		NewBuilder: func() output.RowBuilder[*Row] { return NewRecordBuilder(nil) }})
	if err != nil {
		return nil, &FileError{Role: RoleRows, Path: o.Path, Err: err}
	}
	defer sinks.Abort()
	defer sinks.Release()
	var teacher *requestFile
	if enc != nil {
		if teacher, err = createRequests(f.TeacherPath, enc); err != nil {
			return nil, err
		}
		defer teacher.file.Abort()
	}
	sum, err := Build(ctx, f.Tasks, f.Tasks.Path(), opt, func(row *Row) error {
		if o.Progress != nil {
			o.Progress()
		}
		if err := sinks.Add(row); err != nil {
			return err
		}
		if teacher == nil || split != nil && row.Split == output.Test {
			return nil
		}
		return teacher.add(row)
	})
	if err != nil {
		return nil, err
	}
	if err := sinks.Finish(); err != nil {
		return nil, &FileError{Role: RoleRows, Path: o.Path, Err: err}
	}
	w := &Written{Written: synth.Written[*Summary]{Outputs: sinks.Entries(o.Format.Name), Summary: sum,
		Split: sinks.Summary(), ManifestPath: output.ManifestPath(o.Path)}}
	m := o.Manifest
	m.Outputs, m.Inputs = slices.Clone(w.Outputs), []output.Entry{f.Tasks.Entry(RoleTasks)}
	files := sinks.Files()
	if teacher != nil {
		if w.Teacher, err = teacher.finish(); err != nil {
			return nil, err
		}
		m.Outputs, files = append(m.Outputs, *w.Teacher), append(files, teacher.file)
	}
	m.Summary = struct {
		*Summary
		Split *output.SplitSummary `json:"split,omitempty"`
	}{sum, w.Split}
	if err := output.Commit(ctx, w.ManifestPath, &m, files...); err != nil {
		return nil, &FileError{Role: RoleRows, Path: o.Path, Err: err}
	}
	return w, nil
}

// WriteTokens builds the token-budgeted rows of the tasks in tasks
// (BuildTokens) and writes them to o's files, then commits them with their
// manifest: all or, after an error or a cancelled ctx, none, the previous
// ones staying. The manifest's input is the task file, its summary the
// build's with the split's record under "split". With o.TestFraction above
// zero the tasks are split exactly as by Write, with all their rows.
//
// Bad options are a *synth.OptionError, checked before any file is read or
// created; the failure of a file is a *FileError; a bad task line is a
// *LineError.
func WriteTokens(ctx context.Context, opt TokenOptions, tasks *output.Input, o synth.Output) (*synth.Written[*TokenSummary], error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	var split output.Splitter // nil, not a nil *UnitSplit, for one file
	if o.TestFraction > 0 {
		s, err := taskSplit(tasks.Path(), opt.Family, opt.Seed, o.TestFraction)
		if err != nil {
			return nil, err
		}
		split = s
	}
	// The input's entry is known once it is read; synth.Write puts the
	// manifest together after the build, from this slice.
	o.Manifest.Inputs = make([]output.Entry, 1)
	inputs := o.Manifest.Inputs
	rows := synth.RowsOf[*TokenRow]{Schema: TokenSchemaOf(opt.Reward), Role: RoleRows,
		Unit:       output.Unit[*TokenRow]{Name: "task", Of: func(r *TokenRow) string { return r.TaskID }, SetSplit: func(r *TokenRow, s string) { r.Split = s }},
		NewBuilder: func() output.RowBuilder[*TokenRow] { return NewTokenRecordBuilder(nil, opt.Reward) }}
	var buildErr error
	w, err := synth.Write(ctx, o, rows, split, func(emit func(*TokenRow) error) (*TokenSummary, error) {
		sum, err := BuildTokens(ctx, tasks, tasks.Path(), opt, emit)
		inputs[0], buildErr = tasks.Entry(RoleTasks), err
		return sum, err
	})
	if err != nil && err != buildErr {
		return nil, &FileError{Role: RoleRows, Path: o.Path, Err: err}
	}
	return w, err
}

// taskSplit reads the task ids of the whole file at path and splits them
// exactly; tasks go whole to one side, so it needs two or more.
func taskSplit(path string, family Family, seed uint64, fraction float64) (*splits.UnitSplit, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Role: RoleTasks, Path: path, Err: err}
	}
	defer in.Close()
	tr := NewTaskReader(in, path, family)
	seen := map[string]bool{}
	var ids []string
	for {
		t, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			ids = append(ids, t.ID)
		}
	}
	if len(ids) == 0 {
		return nil, &FileError{Role: RoleTasks, Path: path, Err: dataset.ErrNoRecords}
	}
	if len(ids) < 2 {
		return nil, fmt.Errorf("--test-fraction: %s has %d task(s); tasks go whole to one side, so a split needs two or more", path, len(ids))
	}
	return splits.NewExactSplit(seed, fraction, ids)
}

// requestFile is the teacher requests being written.
type requestFile struct {
	file     *output.File
	buf      *bufio.Writer
	enc      *TeacherEncoder
	requests int
}

func createRequests(path string, enc *TeacherEncoder) (*requestFile, error) {
	f, err := output.Create(path)
	if err != nil {
		return nil, &FileError{Role: RoleTeacherRequests, Path: path, Err: err}
	}
	return &requestFile{file: f, buf: bufio.NewWriterSize(f, 1<<20), enc: enc}, nil
}

func (r *requestFile) add(row *Row) error {
	r.requests++
	if _, err := r.buf.Write(r.enc.Encode(row)); err != nil {
		return &FileError{Role: RoleTeacherRequests, Path: r.file.Path(), Err: err}
	}
	return nil
}

// finish flushes the requests and returns their manifest entry.
func (r *requestFile) finish() (*output.Entry, error) {
	if err := r.buf.Flush(); err != nil {
		return nil, &FileError{Role: RoleTeacherRequests, Path: r.file.Path(), Err: err}
	}
	e := r.file.Entry(RoleTeacherRequests, "jsonl", &r.requests)
	return &e, nil
}

// WriteSFT converts the traces in traces (ConvertTraces) and writes the
// rows kept to o's file (no split: o.TestFraction is ignored), then
// commits it with its manifest: the file and the manifest or, after an
// error or a cancelled ctx, neither. The manifest's input is the trace
// file, its summary the conversion's.
//
// The failure of the output is a *FileError; a bad trace line is a
// *LineError.
func WriteSFT(ctx context.Context, opt SFTOptions, traces *output.Input, o synth.Output) (*synth.Written[*SFTSummary], error) {
	// The input's entry is known once it is read; Write puts the manifest
	// together after the build, from this slice.
	o.Manifest.Inputs = make([]output.Entry, 1)
	inputs := o.Manifest.Inputs
	rows := synth.RowsOf[*SFTRow]{Schema: SFTSchema, Role: RoleSFTRows,
		NewBuilder: func() output.RowBuilder[*SFTRow] { return NewSFTRecordBuilder(nil, opt.ToolDescription) }}
	var readErr error
	w, err := synth.Write(ctx, o, rows, nil, func(emit func(*SFTRow) error) (*SFTSummary, error) {
		sum, err := ConvertTraces(ctx, traces, traces.Path(), opt, emit)
		inputs[0], readErr = traces.Entry(RoleTraces), err
		return sum, err
	})
	if err != nil && err != readErr {
		return nil, &FileError{Role: RoleSFTRows, Path: o.Path, Err: err}
	}
	return w, err
}
