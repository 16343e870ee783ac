package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/eval"
)

func (a *app) evalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a model on pairs and synth datasets, or model outputs against human preferences",
	}
	cmd.AddCommand(a.evalRunCmd(), a.evalCompareCmd(), a.evalNARCmd())
	return groupCommand(cmd)
}

func (a *app) evalNARCmd() *cobra.Command {
	var (
		input  string
		asJSON bool
		by     []string
	)
	cmd := &cobra.Command{
		Use:   "nar --input FILE.jsonl [--by FIELD,...] [--json]",
		Short: "Normalised alignment rate and attempt rates of tool-call decisions",
		Long: `nar reads TicToc decision items, one JSON object per line, in the format
"timeaware score" reads:

  {"data_source": "tictoc/decision", "solution_str": "<model response>",
   "ground_truth": {"preferred": "tool"|"direct", "margin": 1.0},
   "extra_info": {"sensitivity": "high", "elapse": 2}}

It detects whether each response calls a tool (Qwen <tool_call>, OpenAI
tool_calls, Llama JSON calls, plus rewards.tictoc.tool_call_patterns and
--tool-call-pattern) and reports, as in the TicToc paper, §4:

  NAR       ½(TP/(TP+FN) + TN/(TN+FP)); 50% is chance
  TPR, TNR  the two halves: calls on prefer-tool, direct answers on prefer-direct
  attempt   the share of samples with a tool call: overall, on prefer-tool
            and on prefer-direct samples

--by adds a breakdown by each named extra_info field (string, number or
boolean values; items without the field form a "(missing)" group). When a
group has samples of one class only, its NAR is that class's rate alone and
is marked with *; the other class's rates are shown as "-" (null in --json).

A malformed line stops the run with exit 1, naming the file, the line and
the field.`,
		Example: `  timeaware eval nar --input examples/eval/decisions.jsonl
  timeaware eval nar --input examples/eval/decisions.jsonl --by sensitivity,elapse --json > out/nar.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runEvalNAR(input, by, asJSON)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&input, "input", "", "JSONL decision items (- for stdin)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.StringSliceVar(&by, "by", nil, "extra_info fields to break the results down by (comma-separated)")
	fs.StringArray("tool-call-pattern", []string{}, "extra regular expression that marks a response as a tool call (repeatable)")
	bindKey(fs, "tool-call-pattern", "rewards.tictoc.tool_call_patterns")
	return cmd
}

func (a *app) runEvalNAR(input string, by []string, asJSON bool) error {
	if input == "" {
		return usagef("--input is required (a JSONL file of tictoc/decision items, or - for stdin)")
	}
	seen := map[string]bool{}
	for _, f := range by {
		switch {
		case strings.TrimSpace(f) != f || f == "":
			return usagef("--by %q: want extra_info field names separated by commas, without spaces", strings.Join(by, ","))
		case seen[f]:
			return usagef("--by: %s is given twice", f)
		}
		seen[f] = true
	}
	cfg, err := a.rewardsConfig()
	if err != nil {
		return err
	}
	a.named("input", input)
	rep, err := eval.NAR(eval.NAROptions{Input: input, Stdin: a.stdin, By: by, Rewards: cfg})
	if err != nil {
		return a.evalError(err, map[string]string{"Input": "input"})
	}
	return a.report(asJSON, rep, rep.Text())
}
