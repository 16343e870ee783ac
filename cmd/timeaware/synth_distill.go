package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
)

// synthDistillFlags are the flags of synth distill.
type synthDistillFlags struct {
	modelFlags
	input, out string
}

func (a *app) synthDistillCmd() *cobra.Command {
	var f synthDistillFlags
	cmd := &cobra.Command{
		Use:   "distill --input ROWS --endpoint URL --model NAME --out TRACES.jsonl",
		Short: "Teacher traces for synth sft: live conversations with a model, get_duration answered from a timer",
		Long: `distill plays every timely/general row of a synth budget output (Parquet,
Arrow or JSONL, or a directory of them) as a live conversation with a teacher
behind an OpenAI-compatible endpoint. The teacher is offered get_duration;
each call is answered from a real timer created with the row's settings
(extra_info.tools_kwargs.get_duration.create_kwargs: speed factor, jitter,
time limit), whose clock advances by the time each teacher call took, scaled
by the speed factor. The conversation ends when the teacher answers without
calling a tool, when its timer has passed the row's limit, or after
--max-turns replies.

Every conversation is written to TRACES.jsonl, in input order, in the format
synth sft reads: {custom_id, messages, ground_truth, time_limit_s, elapsed_s},
elapsed_s read from the timer, never the teacher's claim; synth sft then keeps
the right, on-time ones. custom_id is the row's request_id (with /sample-K
appended when --samples is above 1). Replies are cached under --cache: a rerun
sends no request already answered. The summary counts the traces answered on
time, answered late or stopped out of time, unfinished at the turn limit, and
failed.`,
		Example: `  timeaware synth distill --input out/rl-train.parquet --endpoint http://127.0.0.1:8000/v1 \
    --model teacher --samples 2 --out out/traces.jsonl
  timeaware synth sft --traces out/traces.jsonl --out out/sft.parquet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSynthDistill(cmd, &f) },
	}
	fs := cmd.Flags()
	f.add(fs, "seed of the requests (sample k: seed+k) and the timers' jitter")
	fs.StringVar(&f.input, "input", "", "rows of synth budget (Parquet, Arrow, JSONL, or a directory of them)")
	fs.StringVar(&f.out, "out", "", "TRACES.jsonl, written atomically with a manifest beside it")
	return cmd
}

// distillTrace is a line of TRACES.jsonl (budget.Trace's format).
type distillTrace struct {
	CustomID    string          `json:"custom_id"`
	Messages    json.RawMessage `json:"messages"`
	GroundTruth string          `json:"ground_truth"`
	TimeLimitS  *float64        `json:"time_limit_s"`
	ElapsedS    float64         `json:"elapsed_s"`
}

// distillSummary counts the traces by how they ended.
type distillSummary struct {
	Rows       int `json:"rows"`
	Traces     int `json:"traces"`
	OnTime     int `json:"answered_on_time"`
	Late       int `json:"answered_late_or_out_of_time"`
	Unfinished int `json:"unfinished"`
	Failed     int `json:"failed"`
	Right      int `json:"right_and_on_time"`
	Skipped    int `json:"rows_not_distilled"`
}

func (a *app) runSynthDistill(cmd *cobra.Command, f *synthDistillFlags) error {
	switch {
	case f.input == "":
		return usagef("--input is required (rows of synth budget)")
	case f.out == "":
		return usagef("--out is required (TRACES.jsonl)")
	}
	if err := f.check(f.out); err != nil {
		return err
	}
	if format, ok := dataset.ForPath(f.out); !ok || format.Name != "jsonl" {
		return usagef("--out %s: traces are JSONL; name a .jsonl file", f.out)
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	all, err := a.readEvalData("input", []string{f.input}, f.out, f.cache(f.out))
	if err != nil {
		return err
	}
	var rows []eval.Row
	skipped := 0
	for _, r := range all {
		if r.Timer == nil || r.Skip != "" {
			skipped++
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return fmt.Errorf("--input %s: no timely/general rows to distill (%d rows of other data sources)", f.input, skipped)
	}
	client, af, err := f.start("distill", f.out, rows, cfg)
	if err != nil {
		return err
	}
	defer af.Abort()
	run, err := f.run(cmd, a, rows, client, cfg, true, 0, nil)
	if err != nil {
		return err
	}
	sum := distillSummary{Rows: len(rows), Skipped: skipped}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var firstErrs []string
	for _, r := range run.results {
		if r == nil {
			continue
		}
		if r.Error != "" {
			sum.Failed++
			if len(firstErrs) < 3 {
				firstErrs = append(firstErrs, r.RequestID+": "+r.Error)
			}
			continue
		}
		tr, err := traceOf(&rows[r.Row], r, f.samples)
		if err != nil {
			return err
		}
		if err := enc.Encode(tr); err != nil {
			return pathError("out", f.out, err)
		}
		sum.Traces++
		switch onTime := r.Details["on_time"] == 1; {
		case r.TurnLimit:
			sum.Unfinished++
		case r.OutOfTime || !onTime:
			sum.Late++
		default:
			sum.OnTime++
			if r.Details["acc"] == 1 {
				sum.Right++
			}
		}
	}
	if _, err := io.Copy(af, &buf); err != nil {
		return pathError("out", f.out, err)
	}
	traces := sum.Traces
	m := &output.Manifest{
		Tool: "timeaware", Version: buildVersion(), Command: "synth distill",
		Outputs: []output.Entry{af.Entry("traces", "jsonl", &traces)},
		Config: map[string]any{
			"input": f.input, "endpoint": client.Endpoint(), "model": f.model, "samples": f.samples,
			"temperature": f.temperature, "seed": f.seed, "max_turns": f.maxTurns, "max_tokens": f.maxTokens,
			"tool_choice": f.toolChoice,
		},
		Summary: sum,
	}
	if run.err == nil && !run.gaveUp {
		if err := output.Commit(cmd.Context(), output.ManifestPath(f.out), m, af); err != nil {
			return pathError("out", f.out, err)
		}
	}
	stats := client.Stats()
	fmt.Fprintf(a.stdout, "synth distill: %d traces of %d rows written to %s\n", sum.Traces, sum.Rows, f.out)
	fmt.Fprintf(a.stdout, "  ended:       %d answered on time (%d right), %d late or out of time, %d unfinished at --max-turns %d, %d failed\n",
		sum.OnTime, sum.Right, sum.Late, sum.Unfinished, f.maxTurns, sum.Failed)
	fmt.Fprintf(a.stdout, "  requests:    %d sent, %d from the cache, %d retries\n", stats.Requests, stats.CacheHits, stats.Retries)
	if sum.Skipped > 0 {
		fmt.Fprintf(a.stdout, "  skipped:     %d rows that are not timely/general\n", sum.Skipped)
	}
	switch {
	case run.gaveUp:
		return fmt.Errorf("stopped after %d failed conversations (--max-errors %d); nothing written; first: %s", sum.Failed, f.maxErrors, strings.Join(firstErrs, "; "))
	case run.err != nil:
		return fmt.Errorf("interrupted with %d of %d conversations done; nothing written; run the same command again to resume from the cache", sum.Traces+sum.Failed, len(run.results))
	case sum.Failed > f.maxErrors:
		return fmt.Errorf("%d conversations failed (--max-errors %d); first: %s", sum.Failed, f.maxErrors, strings.Join(firstErrs, "; "))
	}
	return nil
}

// traceOf is the trace of one conversation: the prompt and the turns the
// live loop added, the row's ground truth and limit, the timer's time.
func traceOf(row *eval.Row, r *eval.Result, samples int) (*distillTrace, error) {
	msgs, err := json.Marshal(append(row.Prompt[:len(row.Prompt):len(row.Prompt)], r.Turns...))
	if err != nil {
		return nil, fmt.Errorf("%s: row %d: %w", row.File, row.Line, err)
	}
	var gt string
	if err := json.Unmarshal(row.GroundTruth, &gt); err != nil {
		gt = strings.TrimSpace(string(row.GroundTruth))
	}
	tr := &distillTrace{CustomID: row.ID, Messages: msgs, GroundTruth: gt, ElapsedS: r.Details["elapsed_s"]}
	if samples > 1 {
		tr.CustomID = fmt.Sprintf("%s/sample-%d", row.ID, r.Sample)
	}
	if l := row.Timer.TimeLimitS; l > 0 {
		tr.TimeLimitS = &l
	}
	return tr, nil
}
