package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
)

// Output says where a family's rows go and what their manifest records:
// everything a family's Write needs besides the family's own options.
type Output struct {
	// Path is the output file; with a Split the files are
	// <path>-train.<ext> and <path>-test.<ext>, and the manifest goes beside
	// Path either way.
	Path string
	// Format is the files' format.
	Format *dataset.Format
	// Labels adds OpenRLHF's label column ([WithLabels]).
	Labels bool
	// TestFraction, when above zero, splits the rows by their units: the
	// family builds its Splitter from it and the seed.
	TestFraction float64
	// Manifest holds what the caller records: tool, version, command and
	// config. Outputs, Inputs (when nil) and Summary are filled in.
	Manifest output.Manifest
	// Progress, when set, is called once per row written.
	Progress func()
}

// SinkOptions are the options of o's sinks: with Labels, OpenRLHF's label
// column is added to every row (WithLabels).
func (o Output) SinkOptions() output.SinkOptions {
	if !o.Labels {
		return output.SinkOptions{}
	}
	return output.SinkOptions{Schema: LabelSchema, Transform: WithLabels}
}

// RowsOf is how a family's rows R are written: their schema, their role in
// the manifest, their split unit and their record builder.
type RowsOf[R any] struct {
	Schema     *arrow.Schema
	Role       string
	Unit       output.Unit[R]
	NewBuilder func() output.RowBuilder[R]
}

// Written is what Write put in place.
type Written[S any] struct {
	// Outputs are the files, the one file or train and test.
	Outputs []output.Entry
	// Summary is the family's summary of the rows.
	Summary S
	// Split is the split's record; nil without a split.
	Split *output.SplitSummary
	// ManifestPath is where the manifest was written.
	ManifestPath string
}

// Write writes the rows that build emits to o's files, split by split
// (nil: one file), and commits them with their manifest: all of them or,
// after an error or a cancelled ctx, none, the previous ones staying. The
// manifest's summary is build's summary with the split's record under
// "split".
func Write[R, S any](ctx context.Context, o Output, rows RowsOf[R], split output.Splitter,
	build func(emit func(R) error) (S, error)) (*Written[S], error) {
	sinks, err := output.NewSplitSinks(output.SplitSinksOptions[R]{Out: o.Path, Format: o.Format, Schema: rows.Schema,
		Sink: o.SinkOptions(), Role: rows.Role, Split: split, Unit: rows.Unit, NewBuilder: rows.NewBuilder})
	if err != nil {
		return nil, err
	}
	defer sinks.Abort()
	defer sinks.Release()
	sum, err := build(func(r R) error {
		if o.Progress != nil {
			o.Progress()
		}
		return sinks.Add(r)
	})
	if err != nil {
		return nil, err
	}
	if err := sinks.Finish(); err != nil {
		return nil, err
	}
	w := &Written[S]{Outputs: sinks.Entries(o.Format.Name), Summary: sum, Split: sinks.Summary()}
	m := o.Manifest
	m.Outputs = w.Outputs
	if m.Inputs == nil {
		m.Inputs = []output.Entry{}
	}
	if m.Summary, err = withSplit(sum, w.Split); err != nil {
		return nil, err
	}
	if w.ManifestPath, err = sinks.Commit(ctx, &m); err != nil {
		return nil, err
	}
	return w, nil
}

// withSplit is summary, a JSON object, with split added as its last key
// "split" when there is one: what embedding summary's struct beside a
// Split field gives, for any summary type.
func withSplit(summary any, split *output.SplitSummary) (json.RawMessage, error) {
	b, err := json.Marshal(summary)
	if err != nil {
		return nil, fmt.Errorf("synth: manifest summary: %w", err)
	}
	if split == nil {
		return b, nil
	}
	sb, err := json.Marshal(split)
	if err != nil {
		return nil, fmt.Errorf("synth: manifest summary: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("synth: manifest summary: want a JSON object, got %.20s", b)
	}
	out := append([]byte{}, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"split":`...)
	out = append(out, sb...)
	return append(out, '}'), nil
}
