package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/shard"
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

// parseShardFlag reads --shard i/n; without one, the whole.
func parseShardFlag(s string) (shard.Shard, error) {
	if s == "" {
		return shard.Shard{}, nil
	}
	sh, err := shard.Parse(s)
	if err != nil {
		return shard.Shard{}, usagef("--shard: %v", err)
	}
	return sh, nil
}

// outputFormat picks a dataset format by the name the config key (a
// command's --format) gives, else by the file extension; an unknown
// extension without a name is a usage error, so that x.dat never silently
// becomes Parquet.
// A key "--format" names a flag that no config key sets.
func (a *app) outputFormat(key, out string) (*dataset.Format, error) {
	flag, flagOnly := strings.CutPrefix(key, "--")
	name := ""
	if flagOnly {
		name = a.cmd.Flags().Lookup(flag).Value.String()
	} else {
		name = a.v.GetString(key)
	}
	if name != "" {
		f, err := dataset.Lookup(name)
		if err != nil {
			if flagOnly {
				return nil, a.flagValueError(flag, fmt.Errorf("want %s", dataset.Names()))
			}
			return nil, a.badKeyf(key, "want %s", dataset.Names())
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
