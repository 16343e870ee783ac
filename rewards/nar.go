package rewards

import (
	"cmp"
	"slices"
	"strconv"
)

// Confusion counts tool-call decisions against the human preference, in the
// terms of the TicToc paper, §4: TP are prefer-tool samples where the model attempted
// a tool call, FN prefer-tool samples where it did not, TN prefer-direct
// samples where it did not and FP prefer-direct samples where it did.
//
// Rates over an empty class are 0, never NaN: check PreferTool and
// PreferDirect (or BothClasses) before reading them.
type Confusion struct {
	TP, FN, TN, FP int
}

// Add counts one sample.
func (c *Confusion) Add(preferTool, calledTool bool) {
	switch {
	case preferTool && calledTool:
		c.TP++
	case preferTool:
		c.FN++
	case calledTool:
		c.FP++
	default:
		c.TN++
	}
}

// Merge adds another matrix's counts to c.
func (c *Confusion) Merge(o Confusion) {
	c.TP += o.TP
	c.FN += o.FN
	c.TN += o.TN
	c.FP += o.FP
}

// Samples is the number of samples counted.
func (c Confusion) Samples() int { return c.TP + c.FN + c.TN + c.FP }

// PreferTool is the number of prefer-tool samples (TP + FN).
func (c Confusion) PreferTool() int { return c.TP + c.FN }

// PreferDirect is the number of prefer-direct samples (TN + FP).
func (c Confusion) PreferDirect() int { return c.TN + c.FP }

// BothClasses reports whether both classes have samples, which NAR needs to
// mean what the TicToc paper defines.
func (c Confusion) BothClasses() bool { return c.PreferTool() > 0 && c.PreferDirect() > 0 }

// TPR is TP/(TP+FN), the share of prefer-tool samples where the model
// called a tool; 0 when there are none.
func (c Confusion) TPR() float64 { return narRatio(c.TP, c.PreferTool()) }

// TNR is TN/(TN+FP), the share of prefer-direct samples answered directly;
// 0 when there are none.
func (c Confusion) TNR() float64 { return narRatio(c.TN, c.PreferDirect()) }

// NAR is the normalised alignment rate ½(TPR + TNR) (the TicToc paper, §4); 0.5 is
// chance. When one class is empty it is the other class's rate alone, and 0
// when there are no samples.
func (c Confusion) NAR() float64 {
	if c.BothClasses() {
		return (c.TPR() + c.TNR()) / 2
	}
	if c.PreferTool() > 0 {
		return c.TPR()
	}
	return c.TNR()
}

// AttemptRate is the share of all samples where the model called a tool;
// 0 when there are no samples.
func (c Confusion) AttemptRate() float64 { return narRatio(c.TP+c.FP, c.Samples()) }

// AttemptRateTool is the attempt rate on prefer-tool samples (equal to TPR).
func (c Confusion) AttemptRateTool() float64 { return c.TPR() }

// AttemptRateDirect is the attempt rate on prefer-direct samples,
// FP/(TN+FP) = 1 − TNR; 0 when there are none.
func (c Confusion) AttemptRateDirect() float64 { return narRatio(c.FP, c.PreferDirect()) }

func narRatio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// DecisionStats is a Confusion with its rates, for reports. A class rate is
// nil when its class has no samples, and NAR then uses the other class
// alone (BothClasses is false).
type DecisionStats struct {
	Samples           int      `json:"samples"`
	PreferTool        int      `json:"prefer_tool"`
	PreferDirect      int      `json:"prefer_direct"`
	TP                int      `json:"tp"`
	FN                int      `json:"fn"`
	TN                int      `json:"tn"`
	FP                int      `json:"fp"`
	BothClasses       bool     `json:"both_classes"`
	NAR               float64  `json:"nar"`
	TPR               *float64 `json:"tpr"`
	TNR               *float64 `json:"tnr"`
	AttemptRate       float64  `json:"attempt_rate"`
	AttemptRateTool   *float64 `json:"attempt_rate_tool"`
	AttemptRateDirect *float64 `json:"attempt_rate_direct"`
}

// Stats returns the counts and rates of c.
func (c Confusion) Stats() DecisionStats {
	s := DecisionStats{
		Samples: c.Samples(), PreferTool: c.PreferTool(), PreferDirect: c.PreferDirect(),
		TP: c.TP, FN: c.FN, TN: c.TN, FP: c.FP,
		BothClasses: c.BothClasses(), NAR: c.NAR(), AttemptRate: c.AttemptRate(),
	}
	if c.PreferTool() > 0 {
		s.TPR, s.AttemptRateTool = narPtr(c.TPR()), narPtr(c.AttemptRateTool())
	}
	if c.PreferDirect() > 0 {
		s.TNR, s.AttemptRateDirect = narPtr(c.TNR()), narPtr(c.AttemptRateDirect())
	}
	return s
}

func narPtr(f float64) *float64 { return &f }

// DecisionGroup is the statistics of the samples whose label for Field is
// Value. Missing is true for the samples that have no label for Field (Value
// is then empty).
type DecisionGroup struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Missing bool   `json:"missing,omitempty"`
	DecisionStats
}

// DecisionReport is the outcome of a DecisionEvaluator: every sample, then
// one group per field and label value, ordered by field as given to
// NewDecisionEvaluator and within a field by value (numbers numerically and
// before text, text lexically, missing last).
type DecisionReport struct {
	Overall DecisionStats   `json:"overall"`
	By      []string        `json:"by"`
	Groups  []DecisionGroup `json:"groups"`
}

// DecisionEvaluator accumulates tool-call decisions overall and, for each
// grouping field, by the sample's label for that field (for example
// sensitivity or elapse). It is not safe for concurrent use.
type DecisionEvaluator struct {
	by      []string
	overall Confusion
	groups  []map[narLabel]*Confusion
}

type narLabel struct {
	value   string
	missing bool
}

// NewDecisionEvaluator returns an evaluator grouping by the given fields;
// with none it reports only the overall statistics.
func NewDecisionEvaluator(by []string) *DecisionEvaluator {
	e := &DecisionEvaluator{by: slices.Clone(by), groups: make([]map[narLabel]*Confusion, len(by))}
	for i := range e.groups {
		e.groups[i] = map[narLabel]*Confusion{}
	}
	return e
}

// Add counts one sample. labels maps a grouping field to the sample's value;
// a field absent from labels puts the sample in that field's missing group.
func (e *DecisionEvaluator) Add(preferTool, calledTool bool, labels map[string]string) {
	e.overall.Add(preferTool, calledTool)
	for i, field := range e.by {
		v, ok := labels[field]
		k := narLabel{value: v, missing: !ok}
		c := e.groups[i][k]
		if c == nil {
			c = &Confusion{}
			e.groups[i][k] = c
		}
		c.Add(preferTool, calledTool)
	}
}

// Overall returns the matrix of every sample added so far.
func (e *DecisionEvaluator) Overall() Confusion { return e.overall }

// Report returns the statistics of the samples added so far.
func (e *DecisionEvaluator) Report() DecisionReport {
	r := DecisionReport{Overall: e.overall.Stats(), By: slices.Clone(e.by), Groups: []DecisionGroup{}}
	if r.By == nil {
		r.By = []string{}
	}
	for i, field := range e.by {
		labels := make([]narLabel, 0, len(e.groups[i]))
		for k := range e.groups[i] {
			labels = append(labels, k)
		}
		slices.SortFunc(labels, narCompareLabels)
		for _, k := range labels {
			r.Groups = append(r.Groups, DecisionGroup{Field: field, Value: k.value, Missing: k.missing, DecisionStats: e.groups[i][k].Stats()})
		}
	}
	return r
}

func narCompareLabels(a, b narLabel) int {
	if a.missing != b.missing {
		if a.missing {
			return 1
		}
		return -1
	}
	fa, errA := strconv.ParseFloat(a.value, 64)
	fb, errB := strconv.ParseFloat(b.value, 64)
	if errA == nil && errB == nil {
		if c := cmp.Compare(fa, fb); c != 0 {
			return c
		}
	} else if errA == nil {
		return -1
	} else if errB == nil {
		return 1
	}
	return cmp.Compare(a.value, b.value)
}
