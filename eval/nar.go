package eval

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/rewards"
)

// NAROptions configures NAR.
type NAROptions struct {
	// Input is the JSONL file of TicToc decision items ("-": Stdin).
	Input string
	Stdin io.Reader
	// By names the extra_info fields to break the statistics down by.
	By []string
	// Rewards configures the tool-call detection (its TicToc tool-call
	// patterns).
	Rewards rewards.Config
}

// NARReport is NAR's outcome: the input's name ("stdin" for "-") and the
// decisions' statistics.
type NARReport struct {
	Input string `json:"input"`
	rewards.DecisionReport
}

// NAR reads TicToc decision items, one JSON object a line
// (rewards.ReadDecisions), and reports the normalised alignment rate, its
// halves and the attempt rates, overall and by each field of By. A file
// that cannot be opened is an *OptionError of Option "Input"; an input
// without items is an error naming it; a configuration the rewards
// refuse is a *rewards.ConfigError.
func NAR(opt NAROptions) (*NARReport, error) {
	scorer, err := rewards.NewScorer(opt.Rewards, nil)
	if err != nil {
		return nil, err
	}
	r, name := opt.Stdin, "stdin"
	if opt.Input != "-" {
		f, err := os.Open(opt.Input)
		if err != nil {
			return nil, &OptionError{Option: "Input", Value: opt.Input, Err: err}
		}
		defer f.Close()
		r, name = f, opt.Input
	}
	ev := rewards.NewDecisionEvaluator(opt.By)
	if err := rewards.ReadDecisions(r, name, scorer, opt.By, ev); err != nil {
		return nil, err
	}
	if ev.Overall().Samples() == 0 {
		return nil, &OptionError{Option: "Input", Value: opt.Input, Err: dataset.ErrNoRecords}
	}
	rep := ev.Report()
	for _, field := range opt.By {
		if !hasField(rep.Groups, field) {
			return nil, &OptionError{Option: "By", Value: field, Invalid: true,
				Err: fmt.Errorf("no item of %s has the extra_info field %q to break the results down by", name, field)}
		}
	}
	return &NARReport{Input: name, DecisionReport: rep}, nil
}

// hasField reports whether some item had field: a group of it that is not
// the one of the items without it.
func hasField(groups []rewards.DecisionGroup, field string) bool {
	for _, g := range groups {
		if g.Field == field && !g.Missing {
			return true
		}
	}
	return false
}

// Text renders the report as a table: a line for every sample and one per
// group, the groups of a field together; rates of a class without samples
// show "-", and a NAR of one class only is marked "*".
func (r *NARReport) Text() string {
	var b strings.Builder
	o := r.Overall
	fmt.Fprintf(&b, "eval nar: %d samples from %s (%d prefer-tool, %d prefer-direct)\n\n", o.Samples, r.Input, o.PreferTool, o.PreferDirect)
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
	fmt.Fprintf(&b, format, width, "group", "samples", "TP", "FN", "TN", "FP", "NAR", "", "TPR", "TNR", "attempt", "a.tool", "a.direct")
	partial := false
	for i, rw := range rows {
		if i > 0 && rw.field != rows[i-1].field {
			b.WriteString("\n")
		}
		s := rw.s
		mark := ""
		if !s.BothClasses {
			mark, partial = "*", true
		}
		fmt.Fprintf(&b, format, width, rw.label, strconv.Itoa(s.Samples), strconv.Itoa(s.TP), strconv.Itoa(s.FN), strconv.Itoa(s.TN), strconv.Itoa(s.FP),
			pct(&s.NAR), mark, pct(s.TPR), pct(s.TNR), pct(&s.AttemptRate), pct(s.AttemptRateTool), pct(s.AttemptRateDirect))
	}
	if partial {
		b.WriteString("\n* one class has no samples: NAR is the other class's rate alone.\n")
	}
	return b.String()
}

// pct renders a rate as a percentage with one decimal, "-" for none.
func pct(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(100**f, 'f', 1, 64) + "%"
}
