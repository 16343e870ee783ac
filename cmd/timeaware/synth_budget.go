package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth/budget"
)

type synthBudgetFlags struct {
	input, family, out, teacher, shard string
	seed                               uint64
	labels                             bool
	testFraction                       float64
}

func (a *app) synthBudgetCmd() *cobra.Command {
	var f synthBudgetFlags
	cmd := &cobra.Command{
		Use:   "budget --input FILE --family general|game|ml --seed N --out FILE",
		Short: "Time-budgeted RL prompts for VeRL, and distillation requests for a teacher",
		Long: `Budget turns a JSONL file of tasks {id, question, answer, baseline_seconds?}
into time-budgeted prompts: VeRL rows for the tool agent loop with the
get_duration timer (data_source timely/<family>, a system and a user turn whose
last sentence states the budget, the timer settings in
extra_info.tools_kwargs.get_duration.create_kwargs), and, with
--teacher-requests, OpenAI batch-API request lines for a teacher model.

A task's budget is multiplier × baseline, rounded to 0.01 s. The baseline is
the task's baseline_seconds; without one, a log-normal draw (general), steps ×
per-step latency (game: the task's steps and step_latency_s, else config) or
rounds × per-round latency (ml). A configured fraction of rows has no limit.
The speed factor comes from a configured set or range. Draws depend only on
--seed and the task id: the same seed gives byte-identical output, and a task
gets the same rows whatever its position or shard.

Each task gives one row with a multiplier drawn from the set, or one row per
multiplier with --every-multiplier. Outputs are written atomically, with a
manifest beside --out.

--test-fraction X writes <out>-train and <out>-test instead: the round(X·n)
tasks of lowest hash with --seed (at least one on each side) go, with all
their rows, to the test side, so no task straddles the split and "timeaware
splits check" passes the two files.
A task's own split field is then replaced by its side, and teacher requests
are written for the train side only (distilling on test tasks would leak
them).`,
		Example: `  timeaware synth budget --input examples/budget/tasks.jsonl --family general --seed 1 --out out/rl.parquet
  timeaware synth budget --input examples/budget/tasks.jsonl --family general --seed 1 --test-fraction 0.34 \
    --teacher-requests out/teacher.jsonl --teacher-model Qwen/Qwen3-8B --out out/rl.parquet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireSeed(cmd, "budgets"); err != nil {
				return err
			}
			return a.runSynthBudget(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.input, "input", "", "JSONL tasks {id, question, answer, baseline_seconds?, ...}")
	fs.StringVar(&f.family, "family", "", "task family: general, game or ml (data source timely/<family>)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the budget draws (required)")
	fs.StringVar(&f.out, "out", "", "RL rows; the extension picks the format unless --format is given")
	labelFlag(fs, &f.labels)
	testFractionFlag(fs, &f.testFraction, "task")
	fs.StringVar(&f.teacher, "teacher-requests", "", "also write OpenAI batch-API requests for a teacher model to this JSONL file")
	fs.StringVar(&f.shard, "shard", "", "build only shard i/n of the tasks (by id hash), e.g. 0/4")
	outputFormatFlag(fs, "synth.budget.format")
	fs.String("teacher-model", "", "model named in the teacher requests")
	fs.Bool("every-multiplier", false, "one row per multiplier for every task, instead of one row with a drawn multiplier")
	bindKey(fs, "teacher-model", "synth.budget.teacher.model")
	bindKey(fs, "every-multiplier", "synth.budget.every_multiplier")
	return cmd
}

// budgetPlan is a validated budget build.
type budgetPlan struct {
	f       *synthBudgetFlags
	split   *splits.UnitSplit
	format  *dataset.Format
	opt     budget.Options
	teacher *budget.TeacherOptions
	config  map[string]any
}

func (a *app) planSynthBudget(f *synthBudgetFlags) (*budgetPlan, error) {
	v := a.v
	if f.input == "" {
		return nil, usagef("--input is required")
	}
	if f.family == "" {
		return nil, usagef("--family is required: general, game or ml")
	}
	if f.out == "" {
		return nil, usagef("--out is required")
	}
	family, err := budget.ParseFamily(f.family)
	if err != nil {
		return nil, a.flagValueError("family", err)
	}
	if err := a.checkJSONLFile("input", f.input); err != nil {
		return nil, err
	}
	p := &budgetPlan{f: f}
	if p.format, err = a.outputFormat("synth.budget.format", f.out); err != nil {
		return nil, err
	}
	if p.opt, err = a.budgetOptions(family); err != nil {
		return nil, err
	}
	p.opt.Seed = f.seed
	if f.shard != "" {
		sh, err := parseShardFlag(f.shard)
		if err != nil {
			return nil, err
		}
		p.opt.Select = sh.HasID
	}
	if err := p.opt.Validate(); err != nil {
		return nil, a.optionError(err, budgetKeys(family))
	}
	if err := a.checkTestFraction(f.testFraction); err != nil {
		return nil, err
	}
	if f.testFraction > 0 {
		if p.split, err = budgetSplit(f, family); err != nil {
			return nil, err
		}
	}
	if f.teacher != "" {
		if f.teacher == f.out {
			return nil, usagef("--teacher-requests and --out name the same file %s", f.out)
		}
		temp := v.GetFloat64("synth.budget.teacher.temperature")
		p.teacher = &budget.TeacherOptions{
			Model:               v.GetString("synth.budget.teacher.model"),
			Temperature:         &temp,
			MaxCompletionTokens: v.GetInt("synth.budget.teacher.max_tokens"),
			ToolDescription:     v.GetString("synth.budget.tool_description"),
		}
		if p.teacher.Model == "" {
			return nil, usagef("--teacher-requests needs --teacher-model (or synth.budget.teacher.model)")
		}
		if _, err := budget.NewTeacherEncoder(*p.teacher); err != nil {
			return nil, a.optionError(err, budgetKeys(family))
		}
	}
	p.config = typedConfig(v, "synth.budget.")
	p.config["family"] = string(family)
	p.config["seed"] = f.seed
	p.config["test_fraction"] = f.testFraction
	if f.shard != "" {
		p.config["shard"] = f.shard
	}
	return p, nil
}

// budgetSplit reads the task ids of the whole input (every shard reads
// them all, so shards agree) and splits them exactly.
func budgetSplit(f *synthBudgetFlags, family budget.Family) (*splits.UnitSplit, error) {
	in, err := os.Open(f.input)
	if err != nil {
		return nil, pathError("input", f.input, err)
	}
	defer in.Close()
	tr := budget.NewTaskReader(in, f.input, family)
	seen := map[string]bool{}
	var ids []string
	for {
		t, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			ids = append(ids, t.ID)
		}
	}
	if len(ids) < 2 {
		return nil, fmt.Errorf("--test-fraction: %s has %d task(s); tasks go whole to one side, so a split needs two or more", f.input, len(ids))
	}
	return splits.NewExactSplit(f.seed, f.testFraction, ids)
}

// budgetKeys names the options of synth budget that are not a key
// synth.budget.OPTION.
func budgetKeys(family budget.Family) map[string]string {
	return map[string]string{"family": "--family", "system_prompt": "synth.budget.system_prompt." + string(family)}
}

// budgetOptions reads the synth.budget.* keys over the family's defaults.
func (a *app) budgetOptions(family budget.Family) (budget.Options, error) {
	v := a.v
	o := budget.DefaultOptions(family)
	var err error
	if o.Multipliers, err = a.floatList("synth.budget.multipliers"); err != nil {
		return o, err
	}
	if o.SpeedFactors, err = a.floatList("synth.budget.speed_factors"); err != nil {
		return o, err
	}
	rng, err := a.floatList("synth.budget.speed_factor_range")
	if err != nil {
		return o, err
	}
	switch len(rng) {
	case 0:
	case 2:
		o.SpeedFactorRange = [2]float64{rng[0], rng[1]}
	default:
		return o, a.badKeyf("synth.budget.speed_factor_range", "want \"min,max\" or empty, got %d numbers", len(rng))
	}
	o.EveryMultiplier = v.GetBool("synth.budget.every_multiplier")
	o.NoLimitFraction = v.GetFloat64("synth.budget.no_limit_fraction")
	o.BaselineLogMu = v.GetFloat64("synth.budget.baseline_log_mu")
	o.BaselineLogSigma = v.GetFloat64("synth.budget.baseline_log_sigma")
	o.GameSteps = v.GetInt("synth.budget.game_steps")
	o.GameStepLatencyS = v.GetFloat64("synth.budget.game_step_latency_s")
	o.MLRounds = v.GetInt("synth.budget.ml_rounds")
	o.MLRoundLatencyS = v.GetFloat64("synth.budget.ml_round_latency_s")
	o.Jitter = v.GetFloat64("synth.budget.jitter")
	o.TTLS = v.GetFloat64("synth.budget.ttl_s")
	o.Split = v.GetString("synth.budget.split")
	if s := v.GetString("synth.budget.system_prompt." + string(family)); s != "" {
		o.Prompts.System = s
	}
	if s := v.GetString("synth.budget.budget_sentence"); s != "" {
		o.Prompts.BudgetSentence = s
	}
	if s := v.GetString("synth.budget.no_limit_sentence"); s != "" {
		o.Prompts.NoLimitSentence = s
	}
	return o, nil
}

// floatList reads a key's comma-separated list of finite numbers.
func (a *app) floatList(key string) ([]float64, error) {
	raw := strings.TrimSpace(a.v.GetString(key))
	if raw == "" {
		return nil, nil
	}
	var out []float64
	for i, s := range strings.Split(raw, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, a.badKeyf(key, "entry %d %q is not a number", i+1, strings.TrimSpace(s))
		}
		out = append(out, x)
	}
	return out, nil
}

func (a *app) runSynthBudget(ctx context.Context, f *synthBudgetFlags) error {
	p, err := a.planSynthBudget(f)
	if err != nil {
		return err
	}
	tuneGCForStreaming()
	res, err := p.execute(ctx, a.stderr)
	if err != nil {
		return err
	}
	printBudgetSummary(a.stdout, res)
	return nil
}

// budgetResult is what a finished budget build reports.
type budgetResult struct {
	summary  *budget.Summary
	split    *output.SplitSummary
	rows     []output.Entry // the rows, or the train and test rows
	teacher  *output.Entry
	model    string
	manifest string
}

func (p *budgetPlan) execute(ctx context.Context, progress io.Writer) (*budgetResult, error) {
	unit := output.Unit[*budget.Row]{Name: "task", Of: func(r *budget.Row) string { return r.TaskID },
		SetSplit: func(r *budget.Row, s string) { r.Split = s }}
	sinks, err := newSplitSinks(p.f.out, p.format, budget.Schema, "rl_rows", p.f.labels, p.split, unit,
		func() output.RowBuilder[*budget.Row] { return budget.NewRecordBuilder(nil) })
	if err != nil {
		return nil, err
	}
	defer sinks.Abort()
	defer sinks.Release()

	var (
		teacherFile *output.File
		teacherBuf  *bufio.Writer
		enc         *budget.TeacherEncoder
		requests    int
	)
	if p.teacher != nil {
		if teacherFile, err = output.Create(p.f.teacher); err != nil {
			return nil, pathError("teacher-requests", p.f.teacher, err)
		}
		defer teacherFile.Abort()
		teacherBuf = bufio.NewWriterSize(teacherFile, 1<<20)
		if enc, err = budget.NewTeacherEncoder(*p.teacher); err != nil {
			return nil, usageError{err}
		}
	}

	in := output.OpenInput(p.f.input)
	defer in.Close()
	prog := newProgress(progress, "rows").reading([]*output.Input{in})
	sum, err := budget.Build(ctx, in, p.f.input, p.opt, func(row *budget.Row) error {
		prog.add(1)
		if err := sinks.Add(row); err != nil {
			return err
		}
		if enc == nil || row.Split == splits.Test && p.split != nil {
			return nil
		}
		requests++
		if _, err := teacherBuf.Write(enc.Encode(row)); err != nil {
			return pathError("teacher-requests", p.f.teacher, err)
		}
		return nil
	})
	prog.done()
	if err != nil {
		return nil, streamError(err)
	}
	if err := sinks.Finish(); err != nil {
		return nil, pathError("out", p.f.out, err)
	}
	res := &budgetResult{summary: sum, split: sinks.Summary(), rows: sinks.Entries(p.format.Name), manifest: output.ManifestPath(p.f.out)}
	outputs := slices.Clone(res.rows)
	files := sinks.Files()
	if teacherFile != nil {
		if err := teacherBuf.Flush(); err != nil {
			return nil, pathError("teacher-requests", p.f.teacher, err)
		}
		res.model = p.teacher.Model
		res.teacher = &output.Entry{Path: p.f.teacher, Role: "teacher_requests", Format: "jsonl",
			SHA256: teacherFile.SHA256(), Bytes: teacherFile.Bytes(), Rows: &requests}
		outputs = append(outputs, *res.teacher)
		files = append(files, teacherFile)
	}
	input := in.Entry("")
	input.Role = "tasks"
	summary := struct {
		*budget.Summary
		Split *output.SplitSummary `json:"split,omitempty"`
	}{sum, res.split}
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth budget",
		Outputs: outputs, Inputs: []output.Entry{input}, Config: p.config, Summary: summary,
	}
	if err := output.Commit(ctx, res.manifest, m, files...); err != nil {
		return nil, pathError("out", p.f.out, err)
	}
	return res, nil
}

func printBudgetSummary(w io.Writer, r *budgetResult) {
	s := r.summary
	fmt.Fprintf(w, "synth budget: %s\n", writtenTo(r.rows, "row"))
	printSplit(w, r.split, r.rows)
	fmt.Fprintf(w, "  tasks:       %d read", s.Tasks)
	if s.Skipped > 0 {
		fmt.Fprintf(w, ", %d left to other shards", s.Skipped)
	}
	fmt.Fprintf(w, "; family %s, data source %s\n", s.Family, s.DataSource)
	fmt.Fprintf(w, "  rows:        %d with a time limit, %d without\n", s.WithLimit, s.NoLimit)
	fmt.Fprintf(w, "  multipliers: %s\n", countList(s.ByMultiplier))
	if s.WithLimit > 0 {
		fmt.Fprintf(w, "  budgets:     min %.2f s, mean %.2f s, max %.2f s\n", s.LimitMinS, s.LimitMeanS, s.LimitMaxS)
	}
	fmt.Fprintf(w, "  baselines:   %s\n", countList(s.BaselineSource))
	if len(s.BySpeedFactor) <= 8 {
		fmt.Fprintf(w, "  speed:       %s\n", countList(s.BySpeedFactor))
	} else {
		keys := slices.Sorted(maps.Keys(s.BySpeedFactor))
		fmt.Fprintf(w, "  speed:       %d values from %s to %s (counts in the manifest)\n", len(keys), keys[0], keys[len(keys)-1])
	}
	if t := r.teacher; t != nil {
		fmt.Fprintf(w, "  teacher:     %d requests for %s written to %s\n", *t.Rows, r.model, t.Path)
	}
	fmt.Fprintf(w, "  manifest:    %s\n", r.manifest)
}

type synthSFTFlags struct {
	traces, out, format string
}

func (a *app) synthSFTCmd() *cobra.Command {
	var f synthSFTFlags
	cmd := &cobra.Command{
		Use:   "sft --traces FILE --out FILE",
		Short: "VeRL multi-turn SFT rows from teacher traces that the rewards verify",
		Long: `SFT reads teacher traces, one JSON object per line:

  {"custom_id": "t1#0", "messages": [...], "ground_truth": "42",
   "time_limit_s": 12.35, "elapsed_s": 8.1}

(messages: the whole conversation, prompt included, OpenAI-style with tool
calls and tool results; time_limit_s null for no limit; elapsed_s the measured
duration, never the teacher's claim). Each trace is scored with the
timely/general reward under the rewards.* config; only traces that end in an
answer, call no tool but get_duration, pass the format check, finish on time and
answer correctly become rows {messages, tools} of VeRL's multi-turn SFT dataset.
The summary counts the dropped traces by reason. Output is written atomically,
with a manifest beside it.`,
		Example: `  timeaware synth sft --traces examples/budget/traces.jsonl --out out/sft.parquet`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runSynthSFT(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.traces, "traces", "", "JSONL teacher traces {custom_id, messages, ground_truth, time_limit_s, elapsed_s}")
	fs.StringVar(&f.out, "out", "", "SFT rows; the extension picks the format unless --format is given")
	fs.StringVar(&f.format, "format", "", "output format: "+dataset.Names()+" (default: from --out's extension, else parquet)")
	return cmd
}

func (a *app) runSynthSFT(ctx context.Context, f *synthSFTFlags) error {
	if f.traces == "" {
		return usagef("--traces is required")
	}
	if f.out == "" {
		return usagef("--out is required")
	}
	if err := a.checkJSONLFile("traces", f.traces); err != nil {
		return err
	}
	format, err := a.outputFormat("--format", f.out)
	if err != nil {
		return err
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	scorer, err := rewards.NewScorer(cfg, nil)
	if err != nil {
		return a.rewardsError(err)
	}
	desc := a.v.GetString("synth.budget.tool_description")
	sink, err := output.NewSink(f.out, format, budget.SFTSchema, output.SinkOptions{})
	if err != nil {
		return pathError("out", f.out, err)
	}
	defer sink.Abort()
	rb := budget.NewSFTRecordBuilder(nil, desc)
	defer rb.Release()
	in := output.OpenInput(f.traces)
	defer in.Close()
	prog := newProgress(a.stderr, "traces")
	sum, err := budget.ConvertTraces(ctx, in, f.traces, budget.SFTOptions{Scorer: scorer}, func(row *budget.SFTRow) error {
		prog.add(1)
		rb.Append(row)
		return sink.FlushFull(rb)
	})
	prog.done()
	if err != nil {
		return streamError(err)
	}
	if err := sink.Drain(rb); err != nil {
		return err
	}
	input := in.Entry("traces")
	out := sink.Entry("sft_rows", format.Name)
	config := typedConfig(a.v, "rewards.")
	config["synth.budget.tool_description"] = desc
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth sft",
		Outputs: []output.Entry{out}, Inputs: []output.Entry{input}, Config: config, Summary: sum,
	}
	mp := output.ManifestPath(f.out)
	if err := output.Commit(ctx, mp, m, sink.File()); err != nil {
		return pathError("out", f.out, err)
	}
	w := a.stdout
	fmt.Fprintf(w, "synth sft: %s\n", writtenTo([]output.Entry{out}, "row"))
	fmt.Fprintf(w, "  traces:      %d read, %d kept, %d dropped\n", sum.Traces, sum.Kept, sum.Traces-sum.Kept)
	fmt.Fprintf(w, "  dropped:     %s\n", countList(sum.Dropped))
	fmt.Fprintf(w, "  manifest:    %s\n", mp)
	return nil
}
