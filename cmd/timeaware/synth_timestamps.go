package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/timestamps"
)

type synthTimestampsFlags struct {
	inputs []string
	out    string
	shard  string
	seed   uint64
}

func (a *app) synthTimestampsCmd() *cobra.Command {
	var f synthTimestampsFlags
	cmd := &cobra.Command{
		Use:   "timestamps --input PATH --seed N --out FILE",
		Short: "Stamp TicToc trajectories with realistic message times",
		Long: `Timestamps gives every message of TicToc trajectories the time at which it
was completed, with the interaction-time model of the TicToc paper
(§3.4, App. A.4), and the final user message three times, one per elapse level.

Per trajectory it draws a reading speed r ~ TN(238, 60, [50, ∞)) words/min, a
writing speed w ~ TLN(3.61, 0.40, [5, ∞)) words/min and a generation speed
g ~ TN(40, 16, [10, ∞)) words/s. The conversation opens at the start time; then
a user message takes words/w (plus words/r to read the assistant message just
before it), an assistant message words/g, a tool message 1 s, each with
Gaussian jitter that never makes time go backwards. The final question comes
after a gap per elapse level, TN(μ, μ/3, [μ/3, 2μ]) with μ from the paper's
table for the trajectory's sensitivity (low: 3 min, 3 d, 90 d; medium: 3 min,
3 h, 3 d; high: 3 s, 3 min, 3 h).

The start is the record's first message time, else --start. The sensitivity
is the record's, else the scenario catalog's, else --sensitivity. With
--mode fill the times a record has are kept and only missing ones drawn.

A trajectory's times depend only on --seed and its id: the same seed gives
byte-identical output, whatever the order or sharding of the input. Every
field other than the times is kept as it is. Output is a JSON array (.json) or
JSONL (.jsonl), one record per line, written atomically.`,
		Example: `  timeaware synth timestamps --input examples/pairs/trajectories.jsonl --seed 1 --out out/stamped.jsonl
  timeaware synth timestamps --input examples/pairs/trajectories.jsonl --seed 7 --start 2025-03-01T09:00:00Z \
    --sensitivity medium --mode fill --shard 0/4 --out out/part-0.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSeed(cmd, "times"); err != nil {
				return err
			}
			return a.runSynthTimestamps(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.inputs, "input", nil, "trajectory file (JSON array or JSONL) or directory of them; repeatable")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the times (required)")
	fs.StringVar(&f.out, "out", "", "output file: .json for a JSON array, .jsonl for JSONL")
	fs.StringVar(&f.shard, "shard", "", "stamp only shard i/n of the trajectories (by id hash), e.g. 0/4")
	fs.String("start", "", "start time (RFC 3339) for records whose first messages have none")
	fs.String("sensitivity", "", "low, medium or high, for records that have none and whose scenario the catalog does not know")
	fs.String("mode", string(timestamps.ModeReplace), "replace: draw every time; fill: keep the times a record has")
	fs.String("catalog", "", "scenario catalog YAML (default: the built-in configs/scenarios.yaml)")
	fs.Int("workers", 0, "decoding and stamping goroutines (0: one per CPU)")
	bindKey(fs, "start", "synth.timestamps.start")
	bindKey(fs, "sensitivity", "synth.timestamps.sensitivity")
	bindKey(fs, "mode", "synth.timestamps.mode")
	bindKey(fs, "catalog", "synth.timestamps.catalog")
	bindKey(fs, "workers", "synth.timestamps.workers")
	return cmd
}

// timestampsPlan is a validated run: the files, the output and the options.
type timestampsPlan struct {
	files []string
	out   string
	jsonl bool
	opt   timestamps.Options
	// config is the manifest's record of the settings; catalog the
	// catalog file's entry when one was read.
	config  map[string]any
	catalog *output.Entry
}

func (a *app) planSynthTimestamps(f *synthTimestampsFlags) (*timestampsPlan, error) {
	v := a.v
	if len(f.inputs) == 0 {
		return nil, usagef("--input is required")
	}
	if f.out == "" {
		return nil, usagef("--out is required")
	}
	p := &timestampsPlan{out: f.out}
	switch strings.ToLower(filepath.Ext(f.out)) {
	case ".json":
	case ".jsonl":
		p.jsonl = true
	default:
		return nil, usagef("--out %s: unknown extension %q: want a .json (JSON array) or .jsonl (JSONL) file name", f.out, filepath.Ext(f.out))
	}
	files, err := a.expandInputs("input", f.inputs)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(f.out); err == nil {
		for _, in := range files {
			if a, err := filepath.Abs(in); err == nil && a == abs {
				return nil, usagef("--out %s is also an input", f.out)
			}
		}
	}
	p.files = files
	opt, err := a.timestampsOptions()
	if err != nil {
		return nil, err
	}
	opt.Seed = f.seed
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return nil, err
		}
		opt.Keep = sh.HasID
	}
	if path := v.GetString("synth.timestamps.catalog"); path != "" {
		var mf output.Entry
		if opt.Catalog, mf, err = readSideFile(a, path, "catalog", splits.LoadCatalog); err != nil {
			return nil, err
		}
		p.catalog = &mf
	} else if opt.Catalog, err = splits.DefaultCatalog(); err != nil {
		return nil, err
	}
	if _, err := timestamps.NewStamper(opt); err != nil {
		return nil, usageError{err}
	}
	p.opt = opt
	p.config = typedConfig(v, "synth.timestamps.")
	p.config["seed"] = f.seed
	if f.shard != "" {
		p.config["shard"] = f.shard
	}
	return p, nil
}

// timestampsOptions reads the model's parameters from the config.
func (a *app) timestampsOptions() (timestamps.Options, error) {
	v := a.v
	opt := timestamps.DefaultOptions()
	var err error
	if s := v.GetString("synth.timestamps.start"); s != "" {
		if opt.Start, err = conversation.ParseTime(s); err != nil {
			return opt, a.badKey("synth.timestamps.start", err)
		}
	}
	if s := v.GetString("synth.timestamps.sensitivity"); s != "" {
		var ok bool
		if opt.Sensitivity, ok = conversation.NormalizeSensitivity(s); !ok {
			return opt, a.badKeyf("synth.timestamps.sensitivity", "want low, medium or high")
		}
	}
	if opt.Mode, err = timestamps.ParseMode(v.GetString("synth.timestamps.mode")); err != nil {
		return opt, a.badKey("synth.timestamps.mode", err)
	}
	opt.Workers = v.GetInt("synth.timestamps.workers")
	bound := func(key string) float64 {
		if x := v.GetFloat64(key); x != 0 {
			return x
		}
		return math.Inf(1)
	}
	normal := func(name string) timestamps.TruncatedNormal {
		k := "synth.timestamps." + name + "."
		return timestamps.TruncatedNormal{Mu: v.GetFloat64(k + "mu"), Sigma: v.GetFloat64(k + "sigma"), Min: v.GetFloat64(k + "min"), Max: bound(k + "max")}
	}
	opt.Read = normal("read")
	opt.Generate = normal("generate")
	w := normal("write")
	opt.Write = timestamps.TruncatedLogNormal{Mu: w.Mu, Sigma: w.Sigma, Min: w.Min, Max: w.Max}
	opt.ToolSeconds = v.GetFloat64("synth.timestamps.tool_seconds")
	opt.Jitter = timestamps.Jitter{
		User:      v.GetFloat64("synth.timestamps.jitter.user"),
		Assistant: v.GetFloat64("synth.timestamps.jitter.assistant"),
		Tool:      v.GetFloat64("synth.timestamps.jitter.tool"),
	}
	means := map[string][conversation.NumElapse]time.Duration{}
	for _, s := range splits.Sensitivities {
		key := "synth.timestamps.gaps." + s
		if means[s], err = parseGapMeans(v.GetString(key)); err != nil {
			return opt, a.badKey(key, err)
		}
	}
	opt.Gaps = timestamps.GapsFromMeans(means)
	res, err := time.ParseDuration(v.GetString("synth.timestamps.resolution"))
	if err != nil || res < 0 {
		return opt, a.badKeyf("synth.timestamps.resolution", "want a duration >= 0 such as 1s")
	}
	opt.Resolution = res
	return opt, nil
}

// parseGapMeans reads the three mean final gaps, small to large, as
// comma-separated durations: Go durations (90s, 3m, 1h30m) or a number of
// days (3d, 90d, 1.5d). Each must be positive and larger than the one
// before.
func parseGapMeans(s string) ([conversation.NumElapse]time.Duration, error) {
	var out [conversation.NumElapse]time.Duration
	parts := strings.Split(s, ",")
	if len(parts) != len(out) {
		return out, fmt.Errorf("%q: want %d durations (small, medium, large), e.g. 3m,3h,3d", s, len(out))
	}
	for k, part := range parts {
		d, err := parseSpan(strings.TrimSpace(part))
		if err != nil {
			return out, fmt.Errorf("%q: %w", s, err)
		}
		if d <= 0 {
			return out, fmt.Errorf("%q: gap %q is not positive", s, part)
		}
		if k > 0 && d <= out[k-1] {
			return out, fmt.Errorf("%q: the gaps must grow from small to large", s)
		}
		out[k] = d
	}
	return out, nil
}

// parseSpan reads a Go duration or a number of days ("3d").
func parseSpan(s string) (time.Duration, error) {
	if num, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(days) || days < 0 || days*float64(timestamps.Day) >= math.MaxInt64 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(days * float64(timestamps.Day)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 3s, 3m, 3h or 3d", s)
	}
	return d, nil
}

func (a *app) runSynthTimestamps(ctx context.Context, f *synthTimestampsFlags) error {
	p, err := a.planSynthTimestamps(f)
	if err != nil {
		return err
	}
	tuneGCForStreaming()
	out, err := output.Create(p.out)
	if err != nil {
		return pathError("out", p.out, err)
	}
	defer out.Abort()
	inputs := make([]timestamps.Input, len(p.files))
	readers := make([]*output.Input, len(p.files))
	for i, path := range p.files {
		readers[i] = output.OpenInput(path)
		inputs[i] = timestamps.Input{Name: path, Reader: readers[i]}
	}
	defer closeInputs(readers)

	w := bufio.NewWriterSize(out, 1<<20)
	n := 0
	sep, open, end := []byte("\n"), []byte{}, []byte{}
	if !p.jsonl {
		sep, open, end = []byte(",\n"), []byte("[\n"), []byte("\n]\n")
	}
	prog := newProgress(a.stderr, "records").reading(readers)
	sum, err := timestamps.Stream(ctx, inputs, p.opt, func(rec []byte) error {
		switch {
		case n == 0:
			w.Write(open)
		case !p.jsonl:
			w.Write(sep)
		}
		// A bufio.Writer keeps its first error and returns it from every
		// later write, so this check covers the separators too.
		if _, err := w.Write(rec); err != nil {
			return pathError("out", p.out, err)
		}
		if p.jsonl {
			w.Write(sep)
		}
		n++
		prog.add(1)
		return nil
	})
	prog.done()
	if err != nil {
		return streamError(err)
	}
	switch {
	case !p.jsonl && n == 0:
		w.WriteString("[]\n")
	case !p.jsonl:
		w.Write(end)
	}
	if err := w.Flush(); err != nil {
		return pathError("out", p.out, err)
	}
	format := "json"
	if p.jsonl {
		format = "jsonl"
	}
	stamped := sum.Stamped
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth timestamps",
		Outputs: []output.Entry{out.Entry("trajectories", format, &stamped)},
		Config:  p.config,
		Summary: sum,
	}
	for _, r := range readers {
		m.Inputs = append(m.Inputs, r.Entry("trajectories"))
	}
	if p.catalog != nil {
		m.Inputs = append(m.Inputs, *p.catalog)
	}
	if err := output.Commit(ctx, output.ManifestPath(p.out), m, out); err != nil {
		return pathError("out", p.out, err)
	}
	printTimestampsSummary(a.stdout, p, sum, len(p.files), format, out.Bytes())
	return nil
}

func printTimestampsSummary(w io.Writer, p *timestampsPlan, s *timestamps.Summary, files int, format string, bytes int64) {
	fmt.Fprintf(w, "synth timestamps: %s written to %s (%s, %s)\n", counted(s.Stamped, "record"), p.out, format, humanBytes(bytes))
	fmt.Fprintf(w, "  inputs:      %s, %s", counted(files, "file"), counted(s.Records, "record"))
	if s.OtherShards > 0 {
		fmt.Fprintf(w, ", %d in other shards", s.OtherShards)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  sensitivity: %s (from %s)\n", countList(s.BySensitivity), countList(s.SensitivityFrom))
	fmt.Fprintf(w, "  start from:  %s\n", countList(s.StartFrom))
	fmt.Fprintf(w, "  mode:        %s, seed %d", p.opt.Mode, p.opt.Seed)
	if p.opt.Mode == timestamps.ModeFill {
		fmt.Fprintf(w, "; messages drawn %d, kept %d", s.TimesFilled, s.TimesKept)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  manifest:    %s\n", output.ManifestPath(p.out))
}
