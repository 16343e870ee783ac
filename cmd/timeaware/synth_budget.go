package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
	"github.com/timeaware/timeaware/synth/budget"
)

type synthBudgetFlags struct {
	dataFlags
	input, family, teacher string
	labels                 bool
	testFraction           float64
}

func (a *app) synthBudgetCmd() *cobra.Command {
	var f synthBudgetFlags
	cmd := &cobra.Command{
		Use:   "budget --input FILE --family general|game|ml --seed N [--unit seconds|tokens] --out FILE",
		Short: "Time- or token-budgeted RL prompts for VeRL and TRL, and distillation requests for a teacher",
		Long:  longHelp("synth budget"),
		Example: `  timeaware synth budget --input examples/budget/tasks.jsonl --family general --seed 1 --out out/rl.parquet
  timeaware synth budget --input examples/budget/tasks.jsonl --family general --seed 1 --test-fraction 0.34 \
    --teacher-requests out/teacher.jsonl --teacher-model Qwen/Qwen3-8B --out out/timely.parquet
  timeaware synth budget --input examples/budget/tasks.jsonl --family general --seed 1 --unit tokens \
    --reward length/thinkprune --token-budgets 1024,2048 --out out/tokens.parquet`,
		Args: noArgs,
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
	f.define(fs, "RL rows; the extension picks the format unless --format is given", "the budget draws",
		"shard i/n of the tasks (by id hash)")
	labelFlag(fs, &f.labels)
	testFractionFlag(fs, &f.testFraction, "task")
	fs.StringVar(&f.teacher, "teacher-requests", "", "also write OpenAI batch-API requests for a teacher model to this JSONL file")
	outputFormatFlag(fs, "synth.budget.format")
	fs.String("teacher-model", "", "model named in the teacher requests")
	fs.Bool("every-multiplier", false, "one row per multiplier for every task, instead of one row with a drawn multiplier")
	bindKey(fs, "teacher-model", "synth.budget.teacher.model")
	bindKey(fs, "every-multiplier", "synth.budget.every_multiplier")
	defineTokenFlags(fs)
	return cmd
}

// budgetKeys names the options of synth budget that are not a key
// synth.budget.OPTION.
func budgetKeys(family budget.Family) map[string]string {
	return map[string]string{"family": "--family", "system_prompt": "synth.budget.system_prompt." + string(family)}
}

// budgetFlags are the flags that name the budget pipelines' files, by the
// files' roles in the manifest.
var budgetFlags = map[string]string{budget.RoleTasks: "input", budget.RoleRows: "out", budget.RoleTeacherRequests: "teacher-requests",
	budget.RoleSFTRows: "out", budget.RoleTraces: "out"}

// budgetError is the error of a budget pipeline: a file's names the flag
// that named the file, a bad option its key or flag (keys as for
// optionError), anything else is about an input's data (streamError).
func (a *app) budgetError(err error, keys map[string]string) error {
	var fe *budget.FileError
	var oe *synth.OptionError
	switch {
	case errors.As(err, &fe):
		return pathError(budgetFlags[fe.Role], fe.Path, fe.Err)
	case errors.As(err, &oe):
		return a.optionError(err, keys)
	}
	return streamError(err)
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

// budgetFiles maps --input and --teacher-requests to the files of a build.
func (a *app) budgetFiles(f *synthBudgetFlags) (budget.Files, error) {
	files := budget.Files{Tasks: output.OpenInput(f.input), TeacherPath: f.teacher}
	if f.teacher == "" {
		return files, nil
	}
	if f.teacher == f.out {
		return files, usagef("--teacher-requests and --out name the same file %s", f.out)
	}
	v := a.v
	temp := v.GetFloat64("synth.budget.teacher.temperature")
	files.Teacher = budget.TeacherOptions{Model: v.GetString("synth.budget.teacher.model"), Temperature: &temp,
		MaxCompletionTokens: v.GetInt("synth.budget.teacher.max_tokens"), ToolDescription: v.GetString("synth.budget.tool_description")}
	if files.Teacher.Model == "" {
		return files, usagef("--teacher-requests needs --teacher-model (or synth.budget.teacher.model)")
	}
	return files, nil
}

func (a *app) runSynthBudget(ctx context.Context, f *synthBudgetFlags) error {
	switch {
	case f.input == "":
		return usagef("--input is required")
	case f.family == "":
		return usagef("--family is required: general, game or ml")
	case f.out == "":
		return usagef("--out is required")
	}
	family, err := budget.ParseFamily(f.family)
	if err != nil {
		return a.flagValueError("family", err)
	}
	unit, err := a.budgetUnit()
	if err != nil {
		return err
	}
	if err := a.checkJSONLFile("input", f.input); err != nil {
		return err
	}
	sh, err := parseShardFlag(f.shard)
	if err != nil {
		return err
	}
	if unit == budget.UnitTokens {
		return a.runSynthBudgetTokens(ctx, f, family, sh.HasID)
	}
	opt, err := a.budgetOptions(family)
	if err != nil {
		return err
	}
	opt.Seed, opt.Select = f.seed, sh.HasID
	files, err := a.budgetFiles(f)
	if err != nil {
		return err
	}
	config := budgetConfig(a, budget.UnitSeconds)
	config["family"], config["test_fraction"] = string(family), f.testFraction
	o, prog, err := a.synthOutput(&f.dataFlags, "synth.budget.format", f.labels, f.testFraction, "synth budget", config, 0)
	if err != nil {
		return err
	}
	prog.Reading([]*output.Input{files.Tasks})
	w, err := budget.Write(ctx, opt, files, o)
	prog.Done()
	if err != nil {
		return a.budgetError(err, budgetKeys(family))
	}
	printWritten(a.stdout, "synth budget", "row", w.Outputs, w.Split, w.ManifestPath, budgetLines(w, files.Teacher.Model)...)
	return nil
}

// budgetLines are the summary lines of a budget build.
func budgetLines(w *budget.Written, model string) []string {
	s := w.Summary
	tasks := fmt.Sprintf("tasks:       %d read", s.Tasks)
	if s.Skipped > 0 {
		tasks += fmt.Sprintf(", %d left to other shards", s.Skipped)
	}
	lines := []string{tasks + fmt.Sprintf("; family %s, data source %s", s.Family, s.DataSource),
		fmt.Sprintf("rows:        %d with a time limit, %d without", s.WithLimit, s.NoLimit),
		"multipliers: " + countList(s.ByMultiplier)}
	if s.WithLimit > 0 {
		lines = append(lines, fmt.Sprintf("budgets:     min %.2f s, mean %.2f s, max %.2f s", s.LimitMinS, s.LimitMeanS, s.LimitMaxS))
	}
	lines = append(lines, "baselines:   "+countList(s.BaselineSource))
	if keys := slices.Sorted(maps.Keys(s.BySpeedFactor)); len(keys) <= 8 {
		lines = append(lines, "speed:       "+countList(s.BySpeedFactor))
	} else {
		lines = append(lines, fmt.Sprintf("speed:       %d values from %s to %s (counts in the manifest)", len(keys), keys[0], keys[len(keys)-1]))
	}
	if t := w.Teacher; t != nil {
		lines = append(lines, fmt.Sprintf("teacher:     %d requests for %s written to %s", *t.Rows, model, t.Path))
	}
	return lines
}

type synthSFTFlags struct{ traces, out string }

func (a *app) synthSFTCmd() *cobra.Command {
	var f synthSFTFlags
	cmd := &cobra.Command{
		Use:     "sft --traces FILE --out FILE",
		Short:   "VeRL multi-turn SFT rows from teacher traces that the rewards verify",
		Long:    longHelp("synth sft"),
		Example: `  timeaware synth sft --traces examples/budget/traces.jsonl --out out/sft.parquet`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runSynthSFT(cmd.Context(), &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.traces, "traces", "", "JSONL teacher traces {custom_id, messages, ground_truth, time_limit_s, elapsed_s}")
	fs.StringVar(&f.out, "out", "", "SFT rows; the extension picks the format unless --format is given")
	fs.String("format", "", "output format: "+dataset.Names()+" (default: from --out's extension, else parquet)")
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
	opt := budget.SFTOptions{Scorer: scorer, ToolDescription: a.v.GetString("synth.budget.tool_description")}
	config := typedConfig(a.v, "rewards.")
	config["synth.budget.tool_description"] = opt.ToolDescription
	prog := progress.New(a.stderr, "traces")
	w, err := budget.WriteSFT(ctx, opt, output.OpenInput(f.traces), synth.Output{Path: f.out, Format: format,
		Manifest: manifest("synth sft", config), Progress: func() { prog.Add(1) }})
	prog.Done()
	if err != nil {
		return a.budgetError(err, nil)
	}
	s := w.Summary
	printWritten(a.stdout, "synth sft", "row", w.Outputs, nil, w.ManifestPath,
		fmt.Sprintf("traces:      %d read, %d kept, %d dropped", s.Traces, s.Kept, s.Traces-s.Kept), "dropped:     "+countList(s.Dropped))
	return nil
}
