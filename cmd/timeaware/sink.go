package main

import (
	"github.com/timeaware/timeaware/output"
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
