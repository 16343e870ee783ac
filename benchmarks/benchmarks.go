package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// The splits of the rows: a benchmark's validation split is dev.
const (
	SplitTrain = "train"
	SplitDev   = "dev"
	SplitTest  = "test"
)

// The purposes an import is for.
const (
	PurposeEval  = "eval"
	PurposeTrain = "train"
)

// ErrTrainingRefused is the error of an import for training that the
// benchmark's terms or the file's split forbid.
var ErrTrainingRefused = errors.New("refused for training")

// OptionError is the error of a field of Options: a split, a purpose, a
// context setting or a prompt kind the benchmark does not have.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

func optionErrorf(format string, args ...any) error {
	return &OptionError{Err: fmt.Errorf(format, args...)}
}

// SplitFile says which released files are which split.
type SplitFile struct {
	// Files is the released files' names, with <easy|hard>-style
	// alternatives.
	Files string
	// Split is the rows' split and Subset their subset ("" when the name
	// gives it).
	Split, Subset string
}

// Benchmark is one public benchmark and its importer.
type Benchmark struct {
	// Name is the command line's name of the benchmark; DataSource the
	// rows' data_source.
	Name, DataSource string
	// Title is the paper's title, Licence the data's licence (an SPDX
	// name), URL where the data is released.
	Title, Licence, URL string
	// TrainingAllowed says whether its terms allow training on its train
	// and dev splits (a test split is never for training).
	TrainingAllowed bool
	// Restriction is the data card's restriction on use, in its words; ""
	// when it has none.
	Restriction string
	// Splits maps the released files to splits.
	Splits []SplitFile
	// AnswerFormat says what an answer is and what ground_truth holds.
	AnswerFormat string
	// Contexts are the settings of Options.Context, the default first;
	// nil when the benchmark has one setting.
	Contexts []string

	// detect reads split and subset from a file's path; "" for what it
	// does not say.
	detect func(path string) (split, subset string)
	// read converts a file's records.
	read func(ctx context.Context, s *source, f *fileRun) error
	// prompt is the default prompt template of a record kind ("" or "mcq",
	// "saq" for TRAM).
	prompt map[string]string
}

// All is every importer, in the order benchmarks list prints them.
var All = []*Benchmark{&TimeQA, &TempReason, &TRAM, &TestOfTime}

// Lookup returns the benchmark called name, or an error listing the names.
func Lookup(name string) (*Benchmark, error) {
	for _, b := range All {
		if b.Name == name {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no benchmark %q: want one of %s", name, Names())
}

// Names lists the benchmarks' names, comma-separated.
func Names() string {
	var names []string
	for _, b := range All {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// PromptKinds are the record kinds whose prompt template can be replaced
// (Options.Prompts): "" for a benchmark with one, "mcq" and "saq" for
// TRAM.
func (b *Benchmark) PromptKinds() []string {
	return slices.Sorted(maps.Keys(b.prompt))
}

// DefaultPrompt is the default prompt template of a record kind.
func (b *Benchmark) DefaultPrompt(kind string) string { return b.prompt[kind] }

// Options configures an import. The zero value imports for evaluation with
// the default prompts and context setting, split and subset from the file
// names.
type Options struct {
	// Split and Subset, when set, replace what the file name says.
	Split, Subset string
	// Purpose is PurposeEval ("" too) or PurposeTrain.
	Purpose string
	// Context is the context setting: one of the benchmark's Contexts; ""
	// is its default.
	Context string
	// Prompts replace the default prompt templates, by record kind
	// (PromptKinds); an empty template keeps the default. A template's
	// placeholders: {question}, {context} (the context block, or nothing),
	// and for TRAM's multiple-choice records {options}.
	Prompts map[string]string
}

// Target is where a file's rows go: its split and subset, and whether the
// rows may be trained on.
type Target struct {
	Split, Subset   string
	TrainingAllowed bool
}

// Target is the split and subset of the file at path: from its name,
// replaced by opt's. A name the benchmark does not know, without opt's
// Split and Subset, is a *NameError. A split for training that may not be
// trained on wraps ErrTrainingRefused.
func (b *Benchmark) Target(path string, opt Options) (Target, error) {
	split, subset := b.detect(path)
	if opt.Split != "" {
		s, err := ParseSplit(opt.Split)
		if err != nil {
			return Target{}, &OptionError{Err: err}
		}
		split = s
	}
	if opt.Subset != "" {
		subset = opt.Subset
	}
	if split == "" || subset == "" {
		return Target{}, &NameError{Benchmark: b, Path: path, NeedSplit: split == "", NeedSubset: subset == ""}
	}
	t := Target{Split: split, Subset: subset, TrainingAllowed: b.TrainingAllowed && split != SplitTest}
	if opt.Purpose == PurposeTrain {
		switch {
		case !b.TrainingAllowed:
			return t, fmt.Errorf("%s: %w: %s's data card says: %q", path, ErrTrainingRefused, b.Title, b.Restriction)
		case split == SplitTest:
			return t, fmt.Errorf("%s: %w: the test split is for evaluation", path, ErrTrainingRefused)
		}
	}
	return t, nil
}

// ParseSplit reads a split's name: train, dev (validation, val) or test.
func ParseSplit(s string) (string, error) {
	switch strings.ToLower(s) {
	case "train":
		return SplitTrain, nil
	case "dev", "val", "validation":
		return SplitDev, nil
	case "test":
		return SplitTest, nil
	}
	return "", fmt.Errorf("split %q: want train, dev or test", s)
}

// NameError is the error of a file whose name says no split or subset the
// benchmark knows.
type NameError struct {
	Benchmark             *Benchmark
	Path                  string
	NeedSplit, NeedSubset bool
}

func (e *NameError) Error() string {
	var want []string
	for _, s := range e.Benchmark.Splits {
		want = append(want, s.Files)
	}
	var flags []string
	if e.NeedSplit {
		flags = append(flags, "--split train|dev|test")
	}
	if e.NeedSubset {
		flags = append(flags, "--subset NAME")
	}
	return fmt.Sprintf("%s: not a file name %s releases (%s): give %s", e.Path, e.Benchmark.Name,
		strings.Join(want, ", "), strings.Join(flags, " and "))
}

// Import converts the records of one released file, read from r, whose
// path says its split and subset (Target). It reads r as a stream, one
// record at a time, to its end, and calls emit with every record in file
// order, converted or not, and counts them. Errors are the file's (it
// cannot be read, it is not the format, it holds no record; they name
// path), opt's, and emit's or ctx's, returned as they are. A read error is
// the file's even when it comes after records were emitted.
func (b *Benchmark) Import(ctx context.Context, r io.Reader, path string, opt Options, emit func(*Record) error) (*Summary, error) {
	t, err := b.Target(path, opt)
	if err != nil {
		return nil, err
	}
	run, err := b.newRun(path, t, opt, emit)
	if err != nil {
		return nil, err
	}
	src, err := openSource(r, path)
	if err != nil {
		return nil, err
	}
	err = b.read(ctx, src, run)
	// The file is read to its end unless emit or ctx stopped the import:
	// a read error comes before what the file holds.
	if !run.stopped && ctx.Err() == nil {
		if derr := src.drain(); derr != nil {
			return nil, derr
		}
	}
	if err != nil {
		return nil, err
	}
	if run.sum.Records == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	return run.sum, nil
}

// newRun checks opt for the benchmark and starts the run of one file.
func (b *Benchmark) newRun(path string, t Target, opt Options, emit func(*Record) error) (*fileRun, error) {
	if opt.Purpose != "" && opt.Purpose != PurposeEval && opt.Purpose != PurposeTrain {
		return nil, optionErrorf("purpose %q: want eval or train", opt.Purpose)
	}
	context := opt.Context
	if context == "" && len(b.Contexts) > 0 {
		context = b.Contexts[0]
	}
	if context != "" && !slices.Contains(b.Contexts, context) {
		if len(b.Contexts) == 0 {
			return nil, optionErrorf("context %q: %s has no context setting", opt.Context, b.Name)
		}
		return nil, optionErrorf("context %q: want one of %s for %s", opt.Context, strings.Join(b.Contexts, ", "), b.Name)
	}
	prompts := maps.Clone(b.prompt)
	for kind, p := range opt.Prompts {
		if _, ok := b.prompt[kind]; !ok {
			return nil, optionErrorf("prompt %q: %s has no such kind of record", kind, b.Name)
		}
		if p != "" {
			prompts[kind] = p
		}
	}
	return &fileRun{b: b, path: path, t: t, context: context, prompts: prompts,
		emit: emit, sum: newSummary()}, nil
}

// Row is one converted record: the fields of its row.
type Row struct {
	// DataSource is the benchmark's data_source; Prompt the user turn.
	DataSource, Prompt string
	// GroundTruth is reward_model.ground_truth, a JSON text.
	GroundTruth string
	// The fields of extra_info.
	Benchmark, Split, Subset, ID, Category, Licence string
	TrainingAllowed                                 bool
	Index                                           int
	// Question is the benchmark's own item text, without the prompt's
	// instructions, options or reading passage: what a contamination check
	// looks for in training data.
	Question string
}

// The causes of a record not converted.
const (
	CauseNotJSON   = "not_json"   // the record is not a JSON object
	CauseTruncated = "truncated"  // the file ends inside the record
	CauseMissing   = "missing"    // a field is not there
	CauseWrongKind = "wrong_kind" // a field holds a value of another kind
	CauseEmpty     = "empty"      // a field that must hold something is empty
	CauseBadLabel  = "bad_label"  // a Test of Time label is no Python or JSON literal
	CauseBadAnswer = "bad_answer" // a TRAM answer names no option
	CauseBadRow    = "bad_row"    // a CSV row does not parse or has the wrong number of fields
)

// Record is one record of a file after import.
type Record struct {
	// File is the file's path; Number the record's 1-based position in it
	// (a CSV's data row); ID the benchmark's id for it, "" when unknown.
	File   string
	Number int
	ID     string
	// Row is the converted row; nil when not converted.
	Row *Row
	// Cause and Err say why it was not converted: Err names the record and
	// the field.
	Cause string
	Err   error
	// Repaired counts the bytes decoded as Windows-1252 because they were
	// not UTF-8.
	Repaired int
}

// Report is the line of a record that was not converted, "" for one that
// was: "test.easy.json: record 12 (id /wiki/X#P466#0): targets: want a
// list of strings, got 5".
func (r *Record) Report() string {
	if r.Row != nil {
		return ""
	}
	return r.Err.Error()
}

// fieldError is the reason a record was not converted.
type fieldError struct {
	cause, field, msg string
}

func (e *fieldError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

func fieldErr(cause, field, format string, args ...any) *fieldError {
	return &fieldError{cause: cause, field: field, msg: fmt.Sprintf(format, args...)}
}

// recordError names a record in its file.
type recordError struct {
	file   string
	number int
	id     string
	err    *fieldError
}

func (e *recordError) Error() string {
	id := ""
	if e.id != "" {
		id = " (id " + e.id + ")"
	}
	return fmt.Sprintf("%s: record %d%s: %s", e.file, e.number, id, e.err)
}

func (e *recordError) Unwrap() error { return e.err }

// fileRun is the import of one file.
type fileRun struct {
	b       *Benchmark
	path    string
	t       Target
	context string
	prompts map[string]string
	emit    func(*Record) error
	sum     *Summary
	// idOf is the id of the record at index when the benchmark's ids are
	// positions (TRAM, Test of Time); nil when records carry their own.
	idOf func(index int) string
	// stopped says emit returned an error.
	stopped bool
}

// row starts a row of the record at index (0-based) with its target's
// fields.
func (f *fileRun) row(index int, id, category, question, prompt, groundTruth string) *Row {
	return &Row{DataSource: f.b.DataSource, Prompt: prompt, GroundTruth: groundTruth, Benchmark: f.b.Name, Question: question,
		Split: f.t.Split, Subset: f.t.Subset, ID: id, Category: category, Licence: f.b.Licence,
		TrainingAllowed: f.t.TrainingAllowed, Index: index}
}

// done counts a record, converted (row) or not (fe), and emits it.
func (f *fileRun) done(index int, id string, row *Row, fe *fieldError, repaired int) error {
	if id == "" && f.idOf != nil {
		id = f.idOf(index)
	}
	rec := &Record{File: f.path, Number: index + 1, ID: id, Row: row, Repaired: repaired}
	f.sum.Records++
	if repaired > 0 {
		f.sum.RepairedRecords++
		f.sum.RepairedBytes += repaired
	}
	if row == nil {
		rec.Cause = fe.cause
		rec.Err = &recordError{file: f.path, number: index + 1, id: id, err: fe}
		f.sum.NotConverted[fe.cause]++
	} else {
		f.sum.Converted++
	}
	if err := f.emit(rec); err != nil {
		f.stopped = true
		return err
	}
	return nil
}

// render fills a prompt template.
func render(template string, values map[string]string) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		pairs = append(pairs, "{"+k+"}", values[k])
	}
	return strings.NewReplacer(pairs...).Replace(template)
}

// contextBlock is the {context} of a prompt: the text under a heading, and
// a blank line, or nothing.
func contextBlock(heading, text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	return heading + ":\n" + text + "\n\n"
}
