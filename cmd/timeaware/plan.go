package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/prefpairs"
)

// What the data-building commands (pairs build, synth budget, synth
// timestamps, synth sft) check and report the same way.

// requireSeed fails unless --seed was given; what names what the seed
// decides ("budgets", "times").
func requireSeed(cmd *cobra.Command, what string) error {
	if !cmd.Flags().Changed("seed") {
		return usagef("--seed is required: the same seed gives the same %s", what)
	}
	return nil
}

// checkJSONLFile checks that the file named by --flag exists and is not a
// directory.
func checkJSONLFile(flag, path string) error {
	if st, err := os.Stat(path); err != nil {
		return usagef("--%s %s: %v", flag, path, unwrapPathError(err))
	} else if st.IsDir() {
		return usagef("--%s %s: is a directory, want a JSONL file", flag, path)
	}
	return nil
}

// parseShardFlag reads --shard i/n.
func parseShardFlag(s string) (prefpairs.Shard, error) {
	sh, err := prefpairs.ParseShard(s)
	if err != nil {
		return prefpairs.Shard{}, usagef("--shard: %v", err)
	}
	return sh, nil
}

// outputFormat picks a dataset format by name, else by the file
// extension; an unknown extension without a name is a usage error, so that
// x.dat never silently becomes Parquet.
func outputFormat(name, out string) (*dataset.Format, error) {
	if name != "" {
		f, err := dataset.Lookup(name)
		if err != nil {
			return nil, usagef("--format: %v", err)
		}
		return f, nil
	}
	if f, ok := dataset.ForPath(out); ok {
		return f, nil
	}
	var exts []string
	for _, f := range dataset.All {
		exts = append(exts, f.Extensions...)
	}
	return nil, usagef("--out %s: unknown extension %q: name the file %s, or give --format (%s)", out, filepath.Ext(out), strings.Join(exts, ", "), dataset.Names())
}

// streamError is the error of a streaming build: an interruption says that
// nothing was written (outputs are atomic), any other error is returned as
// it is.
func streamError(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted; no output written")
	}
	return err
}
