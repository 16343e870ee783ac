package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/splits/scenario"
	"github.com/timeaware/timeaware/synth"
	"github.com/timeaware/timeaware/synth/timestamps"
)

type synthTimestampsFlags struct {
	dataFlags
	inputs []string
}

func (a *app) synthTimestampsCmd() *cobra.Command {
	var f synthTimestampsFlags
	cmd := &cobra.Command{
		Use:   "timestamps --input PATH --seed N --out FILE",
		Short: "Stamp TicToc trajectories with realistic message times",
		Long:  longHelp("synth timestamps"),
		Example: `  timeaware synth timestamps --input examples/pairs/trajectories.jsonl --seed 1 --out out/stamped.jsonl
  timeaware synth timestamps --input examples/pairs/trajectories.jsonl --seed 7 --start 2025-03-01T09:00:00Z \
    --sensitivity medium --mode fill --shard 0/4 --out out/part-0.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSeed(cmd, "times"); err != nil {
				return err
			}
			return a.runSynthTimestamps(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.inputs, "input", nil, "trajectory file (JSON array or JSONL) or directory of them; repeatable")
	f.define(fs, "output file: .json for a JSON array, .jsonl for JSONL", "the times", "")
	fs.StringVar(&f.shard, "shard", "", "stamp only shard i/n of the trajectories (by id hash), e.g. 0/4")
	fs.String("start", "", "start time (RFC 3339) for records whose first messages have none")
	fs.String("sensitivity", "", "low, medium or high, for records that have none and whose scenario the catalog does not know")
	fs.String("mode", string(timestamps.ModeReplace), "replace: draw every time; fill: keep the times a record has")
	fs.String("catalog", "", "scenario catalog YAML (default: the built-in "+scenario.DefaultSource+")")
	fs.Int("workers", 0, "decoding and stamping goroutines (0: one per CPU)")
	for _, flag := range []string{"start", "sensitivity", "mode", "catalog", "workers"} {
		bindKey(fs, flag, "synth.timestamps."+flag)
	}
	return cmd
}

func (a *app) runSynthTimestamps(ctx context.Context, f *synthTimestampsFlags) error {
	if len(f.inputs) == 0 {
		return usagef("--input is required")
	}
	if f.out == "" {
		return usagef("--out is required")
	}
	if _, err := timestamps.FormatOf(f.out); err != nil {
		return usagef("--out %s: %w", f.out, err)
	}
	files, err := a.expandInputs("input", f.inputs)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(f.out) // "" when it fails, which no input's is
	for _, in := range files {
		if a, err := filepath.Abs(in); err == nil && a == abs {
			return usagef("--out %s is also an input", f.out)
		}
	}
	opt, m, err := a.timestampsOptions(f)
	if err != nil {
		return err
	}
	tuneGCForStreaming()
	prog := progress.New(a.stderr, "records")
	w, err := timestamps.Write(ctx, files, opt, timestamps.Output{Path: f.out, Manifest: m,
		Progress: func() { prog.Add(1) }, Reading: func(in []*output.Input) { prog.Reading(in) }})
	prog.Done()
	if we := (*timestamps.WriteError)(nil); errors.As(err, &we) {
		return pathError("out", f.out, we.Err)
	} else if err != nil {
		return streamError(err)
	}
	s := w.Summary
	inputsLine := fmt.Sprintf("inputs:      %s, %s", synth.Counted(len(files), "file"), synth.Counted(s.Records, "record"))
	if s.OtherShards > 0 {
		inputsLine += fmt.Sprintf(", %d in other shards", s.OtherShards)
	}
	mode := fmt.Sprintf("mode:        %s, seed %d", opt.Mode, opt.Seed)
	if opt.Mode == timestamps.ModeFill {
		mode += fmt.Sprintf("; messages drawn %d, kept %d", s.TimesFilled, s.TimesKept)
	}
	printWritten(a.stdout, "synth timestamps", "record", w.Outputs, nil, w.ManifestPath, inputsLine,
		fmt.Sprintf("sensitivity: %s (from %s)", countList(s.BySensitivity), countList(s.SensitivityFrom)),
		"start from:  "+countList(s.StartFrom), mode)
	return nil
}

// timestampsOptions reads the model's settings from the config, with the
// seed, the shard and the catalog, and the manifest that records them.
func (a *app) timestampsOptions(f *synthTimestampsFlags) (opt timestamps.Options, m output.Manifest, err error) {
	v, k := a.v, "synth.timestamps."
	dist := func(name string) timestamps.TruncatedNormal {
		return timestamps.TruncatedNormal{Mu: v.GetFloat64(k + name + ".mu"), Sigma: v.GetFloat64(k + name + ".sigma"),
			Min: v.GetFloat64(k + name + ".min"), Max: v.GetFloat64(k + name + ".max")}
	}
	c := timestamps.Config{Start: v.GetString(k + "start"), Sensitivity: v.GetString(k + "sensitivity"), Mode: v.GetString(k + "mode"),
		Read: dist("read"), Write: dist("write"), Generate: dist("generate"), ToolSeconds: v.GetFloat64(k + "tool_seconds"),
		Jitter: timestamps.Jitter{User: v.GetFloat64(k + "jitter.user"), Assistant: v.GetFloat64(k + "jitter.assistant"),
			Tool: v.GetFloat64(k + "jitter.tool")}, Gaps: map[string]string{}, Resolution: v.GetString(k + "resolution"), Workers: v.GetInt(k + "workers")}
	for _, s := range scenario.Sensitivities {
		c.Gaps[s] = v.GetString(k + "gaps." + s)
	}
	if opt, err = c.Options(); err != nil {
		return opt, m, a.optionError(err, nil)
	}
	opt.Seed = f.seed
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return opt, m, err
		}
		opt.Keep = sh.HasID
	}
	m = manifest("synth timestamps", f.record(typedConfig(v, k)))
	if path := v.GetString(k + "catalog"); path != "" {
		m.Inputs = make([]output.Entry, 1)
		if opt.Catalog, m.Inputs[0], err = readSideFile(a, k+"catalog", path, "catalog", scenario.Load); err != nil {
			return opt, m, err
		}
	} else if opt.Catalog, err = scenario.Default(); err != nil {
		return opt, m, err
	}
	if _, err := timestamps.NewStamper(opt); err != nil {
		return opt, m, usageError{err}
	}
	return opt, m, nil
}
