// Package examples holds the small inputs the docs' examples run on
// (examples/*/), written for this project, and embeds the ones the demo
// command writes out, so that the demo and the docs show the same sample,
// and the documented configuration that "timeaware config defaults" prints.
package examples

import "embed"

// Sample is the demo's input: the trajectories, human votes and direct
// replies under pairs/ (six trajectories across three sensitivities; one
// survey submission is inconsistent and gets dropped, two samples tie) and
// the tasks under budget/.
//
//go:embed pairs/trajectories.jsonl pairs/votes.jsonl pairs/direct.jsonl budget/tasks.jsonl
var Sample embed.FS

// DefaultConfig is the documented configuration (timeaware.yaml): every key
// at its built-in default, with what it does.
//
//go:embed timeaware.yaml
var DefaultConfig []byte
