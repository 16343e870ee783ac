package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/rewards"
)

func (a *app) evalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate model outputs against human preferences",
	}
	cmd.AddCommand(a.evalNARCmd())
	return cmd
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
--tool-call-pattern) and reports, as in seed 000 §4:

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
		Example: `  timeaware eval nar --input results.jsonl
  timeaware eval nar --input results.jsonl --by sensitivity,elapse --json > nar.json`,
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
	cfg, err := rewardsConfig(a.v)
	if err != nil {
		return err
	}
	scorer, err := rewards.NewScorer(cfg, nil)
	if err != nil {
		return usageError{err}
	}
	var r io.Reader = a.stdin
	name := "stdin"
	if input != "-" {
		f, err := os.Open(input)
		if err != nil {
			return usagef("--input %s: %v", input, unwrapPathError(err))
		}
		defer f.Close()
		r, name = f, input
	}
	ev := rewards.NewDecisionEvaluator(by)
	if err := readDecisions(r, name, scorer, by, ev); err != nil {
		return err
	}
	if ev.Overall().Samples() == 0 {
		return fmt.Errorf("%s: no items to evaluate", name)
	}
	report := ev.Report()
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Input string `json:"input"`
			rewards.DecisionReport
		}{name, report})
	}
	printNARReport(a.stdout, name, report)
	return nil
}

// readDecisions adds every line's decision to ev. The first malformed line
// is an error naming the file, the line and the field.
func readDecisions(r io.Reader, name string, scorer *rewards.Scorer, by []string, ev *rewards.DecisionEvaluator) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var line []byte
	for lineNo := 1; ; lineNo++ {
		var err error
		line, err = readLine(br, line[:0])
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: line %d: %w", name, lineNo, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return fmt.Errorf("%s: line %d: empty line; every line must be one JSON item", name, lineNo)
		}
		d, labels, itemErr := decodeDecision(line, scorer, by)
		if itemErr != nil {
			return fmt.Errorf("%s: line %d: %w", name, lineNo, itemErr)
		}
		ev.Add(d.PreferTool, d.CalledTool, labels)
		if err == io.EOF {
			return nil
		}
	}
}

// decodeDecision reads one item: its decision and its labels for the
// grouping fields (absent or null fields get no label).
func decodeDecision(line []byte, scorer *rewards.Scorer, by []string) (rewards.ToolDecision, map[string]string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return rewards.ToolDecision{}, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if raw, ok := fields["data_source"]; ok && !isNull(raw) {
		var ds string
		if json.Unmarshal(raw, &ds) != nil {
			return rewards.ToolDecision{}, nil, fmt.Errorf("data_source: %s is not a string", raw)
		}
		if ds != "" && ds != rewards.TicTocDecision.DataSource {
			return rewards.ToolDecision{}, nil, fmt.Errorf("data_source: %q is not %s", ds, rewards.TicTocDecision.DataSource)
		}
	}
	it := rewards.Item{DataSource: rewards.TicTocDecision.DataSource, GroundTruth: fields["ground_truth"]}
	raw, ok := fields["solution_str"]
	if !ok || isNull(raw) {
		return rewards.ToolDecision{}, nil, fmt.Errorf("solution_str: missing: the decision is read from the response")
	}
	if json.Unmarshal(raw, &it.SolutionStr) != nil {
		return rewards.ToolDecision{}, nil, fmt.Errorf("solution_str: not a string")
	}
	var extra map[string]json.RawMessage
	if raw, ok := fields["extra_info"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &extra) != nil {
			return rewards.ToolDecision{}, nil, fmt.Errorf("extra_info: not a JSON object")
		}
	}
	labels := make(map[string]string, len(by))
	for _, f := range by {
		raw, ok := extra[f]
		if !ok || isNull(raw) {
			continue
		}
		v, err := groupValue(raw)
		if err != nil {
			return rewards.ToolDecision{}, nil, fmt.Errorf("extra_info.%s: %w", f, err)
		}
		labels[f] = v
	}
	d, err := scorer.ToolDecision(&it)
	return d, labels, err
}

// groupValue turns a JSON scalar into a group label; numbers are written in
// their shortest form, so 2 and 2.0 fall in one group.
func groupValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case 't', 'f':
		return string(raw), nil
	case '{', '[':
		return "", fmt.Errorf("an object or array cannot label a group; want a string, number or boolean")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", fmt.Errorf("%s is not a number", raw)
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func printNARReport(w io.Writer, name string, r rewards.DecisionReport) {
	o := r.Overall
	fmt.Fprintf(w, "eval nar: %d samples from %s (%d prefer-tool, %d prefer-direct)\n\n", o.Samples, name, o.PreferTool, o.PreferDirect)
	type row struct {
		field, label string
		s            rewards.DecisionStats
	}
	rows := []row{{"", "overall", o}}
	width := len("overall")
	for _, g := range r.Groups {
		v := g.Value
		if g.Missing {
			v = "(missing)"
		}
		rows = append(rows, row{g.Field, g.Field + "=" + v, g.DecisionStats})
		width = max(width, len(rows[len(rows)-1].label))
	}
	const format = "%-*s  %7s  %5s %5s %5s %5s  %7s%1s %7s %7s  %7s %7s %8s\n"
	fmt.Fprintf(w, format, width, "group", "samples", "TP", "FN", "TN", "FP", "NAR", "", "TPR", "TNR", "attempt", "a.tool", "a.direct")
	partial := false
	for i, rw := range rows {
		if i > 0 && rw.field != rows[i-1].field {
			fmt.Fprintln(w)
		}
		s := rw.s
		mark := ""
		if !s.BothClasses {
			mark, partial = "*", true
		}
		fmt.Fprintf(w, format, width, rw.label, strconv.Itoa(s.Samples), strconv.Itoa(s.TP), strconv.Itoa(s.FN), strconv.Itoa(s.TN), strconv.Itoa(s.FP),
			pct(&s.NAR), mark, pct(s.TPR), pct(s.TNR), pct(&s.AttemptRate), pct(s.AttemptRateTool), pct(s.AttemptRateDirect))
	}
	if partial {
		fmt.Fprintln(w, "\n* one class has no samples: NAR is the other class's rate alone.")
	}
}

func pct(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(100**f, 'f', 1, 64) + "%"
}
