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
		Long:  longHelp("eval nar"),
		Example: `  timeaware eval nar --input examples/eval/decisions.jsonl
  timeaware eval nar --input examples/eval/decisions.jsonl --by sensitivity,elapse --json > out/nar.json`,
		Args: noArgs,
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
		return a.evalError(err, map[string]string{"Input": "input", "By": "by"})
	}
	return a.report(asJSON, rep, rep.Text())
}
