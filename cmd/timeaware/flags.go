package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/shard"
)

// The flags that several commands take, defined once so that they read the
// same everywhere, and what checks and resolves them.

// dataFlags are the flags of a command that writes a seeded dataset in
// shards: --out, --seed and --shard.
type dataFlags struct {
	out, shard string
	seed       uint64
}

// define adds the flags: out says what the file holds ("output rows"),
// seed what the seed decides ("the puzzles"), shard which part a shard
// writes ("the rows whose index is i mod n"). An empty seed or shard
// leaves that flag out.
func (d *dataFlags) define(fs *pflag.FlagSet, out, seed, shard string) {
	fs.StringVar(&d.out, "out", "", out)
	if seed != "" {
		fs.Uint64Var(&d.seed, "seed", 0, "seed of "+seed+" (required)")
	}
	if shard != "" {
		fs.StringVar(&d.shard, "shard", "", "write only "+shard+", e.g. 0/4")
	}
}

// record adds the seed and, when given, the shard to a manifest's config.
func (d *dataFlags) record(config map[string]any) map[string]any {
	config["seed"] = d.seed
	if d.shard != "" {
		config["shard"] = d.shard
	}
	return config
}

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

// testFractionFlag adds --test-fraction to a synth command.
func testFractionFlag(fs *pflag.FlagSet, p *float64, unit string) {
	fs.Float64Var(p, "test-fraction", 0, fmt.Sprintf("write <out>-train and <out>-test instead of --out, the test side taking about this share, whole %ss to one side (0: one file)", unit))
}

// checkTestFraction validates --test-fraction.
func (a *app) checkTestFraction(f float64) error {
	if f != 0 && !(f > 0 && f < 1) {
		return a.flagValueError("test-fraction", errors.New("want a share between 0 and 1 (0 writes one file)"))
	}
	return nil
}

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
		return shard.Shard{}, usagef("--shard %s: %v", showValue(s), err)
	}
	return sh, nil
}

// outputFormat picks a dataset format by the name the config key (a
// command's --format) gives, else by the file extension; an unknown
// extension without a name is a usage error, so that x.dat never silently
// becomes Parquet.
// A key "--format" names a flag that no config key sets.
func (a *app) outputFormat(key, out string) (*dataset.Format, error) {
	return a.fileFormat(key, "out", out)
}

// fileFormat is outputFormat for the file that flag names (an argument
// when flag is ""), which errors name.
func (a *app) fileFormat(key, pathFlag, out string) (*dataset.Format, error) {
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
	where := out
	if pathFlag != "" {
		where = "--" + pathFlag + " " + out
	}
	return nil, usagef("%s: unknown extension %q: name the file %s, or give --format (%s)", where, filepath.Ext(out), strings.Join(exts, ", "), dataset.Names())
}
