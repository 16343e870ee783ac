package main

import (
	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/internal/dataset"
)

// The flags that several commands take, defined once so that they read the
// same everywhere.

// outputFormatFlag defines --format for a command that writes a dataset,
// bound to the config key (pairs.format, synth.puzzles.format, ...).
func outputFormatFlag(fs *pflag.FlagSet, key string) {
	fs.String("format", "", "output format: "+dataset.Names()+" (default: from --out's extension, else parquet)")
	bindKey(fs, "format", key)
}

// labelFlag defines --openrlhf-label for a command that writes RL rows.
func labelFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "openrlhf-label", false, "add a \"label\" column holding each row's item as JSON {data_source, ground_truth, extra_info}, for OpenRLHF's --label_key")
}
