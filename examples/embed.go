// Package examples holds the small inputs the docs' examples run on
// (examples/*/), written for this project, and embeds the ones the demo
// command writes out, so that the demo and the docs show the same sample,
// and the documented configuration that "timeaware config defaults" prints.
package examples

import (
	"embed"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/timeaware/timeaware/internal/atomicfile"
)

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

// WriteSample writes the sample's files into dir, creating it when
// missing, under their base names (trajectories.jsonl, votes.jsonl,
// direct.jsonl, tasks.jsonl), each whole or not at all.
func WriteSample(dir string) error {
	return fs.WalkDir(Sample, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := Sample.ReadFile(name)
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(filepath.Join(dir, path.Base(name)), b)
	})
}
