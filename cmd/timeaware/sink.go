package main

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// sinkOptions are a synth command's sink options: with labels (the
// --openrlhf-label flag), OpenRLHF's label column is added to the VeRL rows.
func sinkOptions(labels bool) output.SinkOptions {
	if !labels {
		return output.SinkOptions{}
	}
	return output.SinkOptions{Schema: synth.LabelSchema, Transform: synth.WithLabels}
}

// newSplitSinks starts a synth command's --out, or with a --test-fraction
// split its train and test files.
func newSplitSinks[R any](out string, format *dataset.Format, schema *arrow.Schema, role string, labels bool,
	split *splits.UnitSplit, unit output.Unit[R], newBuilder func() output.RowBuilder[R]) (*output.SplitSinks[R], error) {
	var sp output.Splitter // nil, not a nil *UnitSplit, for one file
	if split != nil {
		sp = split
	}
	s, err := output.NewSplitSinks(output.SplitSinksOptions[R]{Out: out, Format: format, Schema: schema, Sink: sinkOptions(labels),
		Role: role, Split: sp, Unit: unit, NewBuilder: newBuilder})
	if err != nil {
		return nil, pathError("out", out, err)
	}
	return s, nil
}
