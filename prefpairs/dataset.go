package prefpairs

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits/scenario"
)

// DatasetOptions configure BuildDataset: the files to read, Build's
// options, the split and where the pairs go.
type DatasetOptions struct {
	// Inputs are the trajectory files (a JSON array or JSONL each), read in
	// order; a TicToc v1 file's name gives its records' class and elapse
	// level (InputFromName).
	Inputs []string
	// Build holds Build's options. BuildDataset sets its Scores, Direct,
	// Generator, Scenario and Split from the fields below.
	Build Options
	// Annotations, when set, is a JSONL file of human votes (ReadVotes):
	// the votes that pass the Consistency filter give the mean scores
	// (SummarizeVotes).
	Annotations string
	Consistency ConsistencyOptions
	// DirectAnswers, when set, is a JSONL file of direct replies
	// (ReadDirectAnswers).
	DirectAnswers string
	// Generate, when set, configures the DirectGenerator of the direct
	// replies that neither a record nor DirectAnswers has.
	Generate *GeneratorOptions
	// Catalog names every trajectory's scenario and sensitivity; nil is
	// the built-in catalog (scenario.Default). CatalogFile, when set,
	// is the catalog's file, listed among the manifest's inputs.
	Catalog     *scenario.Catalog
	CatalogFile *output.Entry
	// Split, with a Strategy, writes the pairs of each scenario to a train
	// or a test file.
	Split SplitOptions
	// Out is the output file, or with a split the path that names the
	// files <out>-train.<ext> and <out>-test.<ext> (output.SidePath); the
	// manifest goes beside it (output.ManifestPath) either way.
	Out string
	// Format and Dataset are the files' format and its writer's options.
	Format  *dataset.Format
	Dataset dataset.Options
	// Manifest holds what the caller records: tool, version, command and
	// config. Outputs, Inputs, Summary and Notes are filled in.
	Manifest output.Manifest
	// OnInputs, when set, is handed the inputs of the pass that writes
	// the pairs before any is read, to follow how much of them is read.
	OnInputs func([]*output.Input)
	// OnPair, when set, sees every pair before it is written.
	OnPair func(*Pair)
	// Generated, when set, counts the direct replies as they are generated
	// (see Options.Generated).
	Generated *GenerationProgress
}

// Dataset is what BuildDataset wrote and what it found on the way.
type Dataset struct {
	// Summary is Build's summary of the pairs written.
	Summary *Summary
	// Votes summarises the annotations; nil without them.
	Votes *VoteSummary
	// Generator counts the direct-reply requests; nil without Generate.
	Generator *GeneratorStats
	// Split records the split; nil without one.
	Split *SplitReport
	// Notes are the manifest's notes: what a reader of the pairs should
	// know about how they were made.
	Notes []string
	// Outputs are the files, the one file or train and test.
	Outputs []output.Entry
	// ManifestPath is where the manifest was written.
	ManifestPath string
}

// OptionError is BuildDataset's error that one of its options caused
// rather than the data: a file an option names that cannot be opened or
// written (Path set), or generator settings NewDirectGenerator refused.
// Option names the option as its config key does: "annotations",
// "direct_answers", "out" or "generate".
type OptionError struct {
	Option, Path string
	Err          error
}

func (e *OptionError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("prefpairs: %s: %v", e.Option, e.Err)
	}
	return fmt.Sprintf("prefpairs: %s %s: %v", e.Option, e.Path, e.Err)
}

func (e *OptionError) Unwrap() error { return e.Err }

// datasetSummary is the manifest's summary: Build's, with the annotations,
// the generator and the split beside it.
type datasetSummary struct {
	*Summary
	Annotations *VoteSummary    `json:"annotations,omitempty"`
	Generator   *GeneratorStats `json:"generator,omitempty"`
	Split       *SplitReport    `json:"split,omitempty"`
}

// BuildDataset builds the pairs of opt.Inputs (Build) and writes them to
// opt.Out with their manifest. It reads the annotations and direct replies
// first, then fixes the split (see SplitOptions), then builds and writes
// the pairs, each to the file of its scenario's side; the files and the
// manifest are committed together: all of them or, after an error or a
// cancelled ctx, none, the previous ones staying (output.Commit), since a
// train file beside an older test file would be a split that was never
// built.
func BuildDataset(ctx context.Context, opt DatasetOptions) (*Dataset, error) {
	if err := opt.Split.validate(); err != nil {
		return nil, err
	}
	d := &Dataset{}
	bo := opt.Build
	var sideFiles []output.Entry
	if opt.Annotations != "" {
		votes, e, err := readOptionFile(opt.Annotations, "annotations", ReadVotes)
		if err != nil {
			return nil, err
		}
		_, scores, vs := SummarizeVotes(votes, opt.Consistency)
		bo.Scores, d.Votes = scores, &vs
		sideFiles = append(sideFiles, e)
	}
	if opt.DirectAnswers != "" {
		direct, e, err := readOptionFile(opt.DirectAnswers, "direct_answers", ReadDirectAnswers)
		if err != nil {
			return nil, err
		}
		bo.Direct = direct
		sideFiles = append(sideFiles, e)
	}
	var gen *DirectGenerator
	if opt.Generate != nil {
		g, err := NewDirectGenerator(*opt.Generate)
		if err != nil {
			return nil, &OptionError{Option: "generate", Err: err}
		}
		gen, bo.Generator, bo.Generated = g, g, opt.Generated
	}
	catalog := opt.Catalog
	if catalog == nil {
		c, err := scenario.Default()
		if err != nil {
			return nil, err
		}
		catalog = c
	}
	bo.Scenario = catalog.ScenarioOf
	assignment, err := assign(ctx, opt.Inputs, bo, catalog, opt.Split)
	if err != nil {
		return nil, err
	}
	if assignment != nil {
		bo.Split = func(p *Pair) (string, error) { return assignment.Side(p.Scenario) }
	}
	sinks, err := newPairSinks(opt, opt.Split.sides())
	if err != nil {
		return nil, err
	}
	defer sinks.abort()
	inputs, readers := openInputs(opt.Inputs)
	defer closeInputs(readers)
	if opt.OnInputs != nil {
		opt.OnInputs(readers)
	}
	counts := scenarioCounts{}
	if d.Summary, err = Build(ctx, inputs, bo, func(p *Pair) error {
		if opt.OnPair != nil {
			opt.OnPair(p)
		}
		counts.add(p)
		return sinks.byside[p.Split].Add(p)
	}); err != nil {
		return nil, err
	}
	if d.Outputs, err = sinks.finish(opt.Format.Name); err != nil {
		return nil, err
	}
	if gen != nil {
		st := gen.Stats()
		d.Generator = &st
	}
	if assignment != nil {
		fr, err := assignment.Measure(counts.list())
		if err != nil {
			return nil, err
		}
		d.Split = &SplitReport{Assignment: assignment, Fractions: fr}
	}
	d.Notes = notes(d.Summary, bo.LabelOnlyMargin)
	m := opt.Manifest
	m.Outputs, m.Notes = d.Outputs, d.Notes
	m.Summary = datasetSummary{Summary: d.Summary, Annotations: d.Votes, Generator: d.Generator, Split: d.Split}
	for _, r := range readers {
		m.Inputs = append(m.Inputs, r.Entry(""))
	}
	m.Inputs = append(m.Inputs, sideFiles...)
	if opt.CatalogFile != nil {
		m.Inputs = append(m.Inputs, *opt.CatalogFile)
	}
	d.ManifestPath = output.ManifestPath(opt.Out)
	if err := output.Commit(ctx, d.ManifestPath, &m, sinks.files()...); err != nil {
		return nil, &OptionError{Option: "out", Path: opt.Out, Err: err}
	}
	return d, nil
}

// notes are the manifest's notes on a build's summary: label-only pairs
// (margin label_only_margin), votes that matched no sample, and human
// scores that overruled a label.
func notes(sum *Summary, labelOnlyMargin float64) []string {
	var out []string
	if n := sum.ScoreSource[SourceLabelOnly]; n > 0 {
		out = append(out, fmt.Sprintf("%d pairs are label-only: their score S is unknown (null) and their margin is label_only_margin = %g", n, labelOnlyMargin))
	}
	if sum.UnmatchedScores > 0 {
		out = append(out, fmt.Sprintf("%d annotated samples match no input sample; their votes were not used", sum.UnmatchedScores))
	}
	if sum.LabelDisagreements > 0 {
		out = append(out, fmt.Sprintf("%d samples have a human score that contradicts their file or record label; the score decided", sum.LabelDisagreements))
	}
	return out
}

// readOptionFile reads the whole file that the option names with read,
// returning it with its manifest entry (role option). A file that cannot
// be opened is an *OptionError; read's error about the data is returned
// as it is.
func readOptionFile[T any](path, option string, read func(io.Reader, string) (T, error)) (T, output.Entry, error) {
	var zero T
	in := output.OpenInput(path)
	defer in.Close()
	if _, err := os.Stat(path); err != nil {
		return zero, output.Entry{}, &OptionError{Option: option, Path: path, Err: err}
	}
	v, err := read(in, path)
	if err != nil {
		return zero, output.Entry{}, err
	}
	e := in.Entry("")
	e.Role = option
	return v, e, nil
}

// openInputs opens the trajectory files as Build's inputs, and as the
// output.Inputs that hash them for the manifest.
func openInputs(paths []string) ([]Input, []*output.Input) {
	inputs := make([]Input, len(paths))
	readers := make([]*output.Input, len(paths))
	for i, path := range paths {
		readers[i] = output.OpenInput(path)
		inputs[i] = InputFromName(path, readers[i])
	}
	return inputs, readers
}

func closeInputs(readers []*output.Input) {
	for _, r := range readers {
		r.Close()
	}
}

// pairSinks are the files of a build: one, or one per side of a split,
// each holding every pair whose Split names its side.
type pairSinks struct {
	sides  []string
	byside map[string]*output.SplitSinks[*Pair]
}

// newPairSinks starts the files of sides ("" for the one file). On an
// error the files already started are discarded.
func newPairSinks(opt DatasetOptions, sides []string) (*pairSinks, error) {
	s := &pairSinks{sides: sides, byside: map[string]*output.SplitSinks[*Pair]{}}
	for _, side := range sides {
		path := opt.Out
		if side != "" {
			path = output.SidePath(opt.Out, side)
		}
		sink, err := output.NewSplitSinks(output.SplitSinksOptions[*Pair]{Out: path, Format: opt.Format, Schema: Schema,
			Sink: output.SinkOptions{Dataset: opt.Dataset}, Role: "pairs",
			NewBuilder: func() output.RowBuilder[*Pair] { return NewRecordBuilder(nil) }})
		if err != nil {
			s.abort()
			return nil, &OptionError{Option: "out", Path: path, Err: err}
		}
		s.byside[side] = sink
	}
	return s, nil
}

// finish writes every file's remaining pairs and footer, and returns the
// files' manifest entries in side order; they are still temporary until
// committed.
func (s *pairSinks) finish(format string) ([]output.Entry, error) {
	var entries []output.Entry
	for _, side := range s.sides {
		if err := s.byside[side].Finish(); err != nil {
			return nil, err
		}
		entries = append(entries, s.byside[side].Entries(format)...)
	}
	return entries, nil
}

// files are the files to commit, in side order.
func (s *pairSinks) files() []*output.File {
	var files []*output.File
	for _, side := range s.sides {
		files = append(files, s.byside[side].Files()...)
	}
	return files
}

// abort discards the files not committed and frees their builders.
func (s *pairSinks) abort() {
	for _, sink := range s.byside {
		sink.Abort()
		sink.Release()
	}
}
