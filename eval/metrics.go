package eval

import (
	"slices"

	"github.com/timeaware/timeaware/rewards"
)

// How a data source's rows are put to the model.
const (
	runOnce    = iota // one reply to the prompt
	runLive           // a tool loop against a live timer
	runSkip           // not sent: Row.Skip says why
	runEpisode        // a negotiation episode against the scripted opponent
)

// source is how one data source is run and reported. Every reward in
// rewards.All gets "score" and the mean of each of its detail keys; a
// source lists what it adds.
type source struct {
	run  int
	skip string
	// by names the labels the report breaks results down by.
	by []string
	// metrics are reported besides "score" and the detail means.
	metrics []metric
	// groupMetrics are reported for each group besides "score" and
	// metrics (the source as a whole has them among its detail means).
	groupMetrics []metric
	// note is said in the report whenever the source has rows.
	note string
	// tokens says what a reply's token counts give the reward
	// (tokensNone, tokensCounted, tokensSplit).
	tokens int
	// curve, when set, is the label (one of by) whose groups, by their
	// numeric value, make the report's accuracy-against-budget curve.
	curve string
}

// What a length reward's item is given of a reply's token counts.
const (
	tokensNone    = iota // nothing
	tokensCounted        // response_tokens, and the think split when the server gives it
	tokensSplit          // response_tokens and the think split, which the reward needs
)

// budgetLabel is the label, and extra_info field, that length rows are
// broken down by: the token budget.
const budgetLabel = "token_budget"

// tokenBudget is how the length rewards' rows are run and reported: once,
// with the server's token counts in extra_info, broken down by budget,
// with the share within budget, the overshoot's mean and 90th percentile
// and the accuracy-against-budget curve.
var tokenBudget = source{
	by:      []string{budgetLabel},
	curve:   budgetLabel,
	tokens:  tokensCounted,
	metrics: []metric{quantile("overshoot_p90", "overshoot_tokens", 0.9)},
	groupMetrics: []metric{
		mean("correct"), mean("within_budget"), mean("overshoot_tokens"),
	},
}

// withTokens is s with its tokens set.
func withTokens(s source, tokens int) source {
	s.tokens = tokens
	return s
}

// sources is the explicit list of data sources with more than the shared
// metrics; a data source not listed is run once and reported with them.
var sources = map[string]source{
	rewards.TicTocDecision.DataSource: {
		by:      []string{"sensitivity", "elapse"},
		metrics: decisionMetrics,
	},
	rewards.TimelyGeneral.DataSource: {run: runLive},
	rewards.TimelyGame.DataSource:    {run: runSkip, skip: "timely/game rows need the game's environment to score a reply"},
	rewards.TimelyML.DataSource:      {run: runSkip, skip: "timely/ml rows need the ML task's environment to score a reply"},
	rewards.Traveler.DataSource: {
		by: []string{"category"},
		metrics: []metric{
			ratio("crisp_accuracy", func(r *Result) (float64, float64) { v := r.Details["vague"]; return r.Score * (1 - v), 1 - v }),
			ratio("soft_accuracy", func(r *Result) (float64, float64) { v := r.Details["vague"]; return r.Score * v, v }),
		},
	},
	rewards.Negotiation.DataSource: {
		run:  runEpisode,
		by:   []string{"condition"},
		note: "negotiation: whole episodes against the scripted concession opponent, each reply charged its generation time on the clock",
	},
	rewards.LCPOExact.DataSource:  tokenBudget,
	rewards.LCPOMax.DataSource:    tokenBudget,
	rewards.ThinkPrune.DataSource: tokenBudget,
	rewards.Elastic.DataSource:    withTokens(tokenBudget, tokensSplit),
	rewards.Anytime.DataSource:    {run: runSkip, skip: "length/anytime rows need the answers drawn after cutting one thinking at each budget, which a served model's reply does not give"},
	rewards.TimeQA.DataSource:     publicQA,
	rewards.TempReason.DataSource: withNote(publicQA, "tempreason: exact_match and f1 are the SQuAD v1.1 script's figures ÷ 100 over the scored rows; the script counts a question without a prediction as 0, so they are its figures when no row failed"),
	rewards.TRAM.DataSource:       publicAccuracy,
	rewards.TestOfTime.DataSource: publicAccuracy,
}

// publicBenchBy are the labels rows imported from public benchmarks are
// broken down by: extra_info.subset (TimeQA easy or hard, TempReason's
// level, TRAM's task, Test of Time's arithmetic or semantic) and
// extra_info.category.
var publicBenchBy = []string{"subset", "category"}

// publicQA is how TimeQA and TempReason rows are run and reported: once,
// with exact match and F1 (the means of the reward's details, which are
// the official scripts' per-question values, so the means are the scripts'
// figures ÷ 100) for the source and for each subset and category.
var publicQA = source{
	by:           publicBenchBy,
	groupMetrics: []metric{mean("exact_match"), mean("f1"), mean("answered")},
}

// publicAccuracy is how TRAM and Test of Time rows are run and reported:
// once, with accuracy, the mean of the reward's correct, for the source
// and for each subset and category.
var publicAccuracy = source{
	by:           publicBenchBy,
	groupMetrics: []metric{mean("correct")},
}

// withNote is s with its note set.
func withNote(s source, note string) source {
	s.note = note
	return s
}

// sourceFor returns how a data source is run and reported.
func sourceFor(dataSource string) source { return sources[dataSource] }

// metric is a statistic of a set of results, computed from sums of
// per-result columns so that a bootstrap resample needs only additions,
// or, for a quantile, from the pooled values of the results.
type metric struct {
	name string
	// cols writes the result's columns into c (len(c) == width).
	width int
	cols  func(r *Result, c []float64)
	// pool, when set, makes the metric one of the results' values rather
	// than of column sums: a row holds the values of its results, a set of
	// rows their concatenation (width and cols are unused).
	pool func(r *Result) float64
	// value computes the metric from the columns' sums (or the pooled
	// values); ok is false when it is undefined there (no results of the
	// kind it needs).
	value func(s []float64) (v float64, ok bool)
	// fallback, when set, stands in for the metric on rows where value is
	// undefined, for the point estimate and every resample alike: a
	// statistic never changes meaning from one resample to the next.
	fallback *metric
}

// on returns the metric to use on rows whose column sums are full: m, or
// its fallback when m is undefined there.
func (m metric) on(full []float64) metric {
	if _, ok := m.value(full); !ok && m.fallback != nil {
		return *m.fallback
	}
	return m
}

// ratio is the metric Σnum/Σden over the results.
func ratio(name string, f func(r *Result) (num, den float64)) metric {
	return metric{
		name: name, width: 2,
		cols: func(r *Result, c []float64) { c[0], c[1] = f(r) },
		value: func(s []float64) (float64, bool) {
			if s[1] <= 0 {
				return 0, false
			}
			return s[0] / s[1], true
		},
	}
}

// quantile is the q-quantile (Quantile: linear interpolation) of a detail
// key over the results.
func quantile(name, key string, q float64) metric {
	return metric{
		name: name,
		pool: func(r *Result) float64 { return r.Details[key] },
		value: func(vals []float64) (float64, bool) {
			if len(vals) == 0 {
				return 0, false
			}
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			return Quantile(sorted, q), true
		},
	}
}

// mean is the mean of a detail key ("score": the reward).
func mean(key string) metric {
	if key == "score" {
		return ratio(key, func(r *Result) (float64, float64) { return r.Score, 1 })
	}
	return ratio(key, func(r *Result) (float64, float64) { return r.Details[key], 1 })
}

// confusion is the decision confusion matrix's columns: TP, FN, TN, FP.
func confusion(r *Result, c []float64) {
	prefer, called := r.Details["preferred_tool"] == 1, r.Details["called_tool"] == 1
	c[0], c[1], c[2], c[3] = 0, 0, 0, 0
	switch {
	case prefer && called:
		c[0] = 1
	case prefer:
		c[1] = 1
	case !called:
		c[2] = 1
	default:
		c[3] = 1
	}
}

// fromConfusion is a metric of the confusion matrix, computed by
// rewards.Confusion (the same code as eval nar); need says which classes
// must have samples.
func fromConfusion(name string, f func(rewards.Confusion) float64, needTool, needDirect bool) metric {
	return metric{
		name: name, width: 4, cols: confusion,
		value: func(s []float64) (float64, bool) {
			c := rewards.Confusion{TP: int(s[0]), FN: int(s[1]), TN: int(s[2]), FP: int(s[3])}
			if c.Samples() == 0 || (needTool && c.PreferTool() == 0) || (needDirect && c.PreferDirect() == 0) {
				return 0, false
			}
			return f(c), true
		},
	}
}

// narOneClass is NAR on rows of one class only: that class's rate, as eval
// nar reports it.
var narOneClass = fromConfusion("nar", rewards.Confusion.NAR, false, false)

// decisionMetrics are the TicToc paper's: NAR, its halves, attempt rates.
// NAR needs both classes wherever the rows have both; a resample that
// lost one does not count, rather than reporting the other's rate.
var decisionMetrics = []metric{
	withFallback(fromConfusion("nar", rewards.Confusion.NAR, true, true), narOneClass),
	fromConfusion("tpr", rewards.Confusion.TPR, true, false),
	fromConfusion("tnr", rewards.Confusion.TNR, false, true),
	fromConfusion("attempt", rewards.Confusion.AttemptRate, false, false),
	fromConfusion("attempt_tool", rewards.Confusion.AttemptRateTool, true, false),
	fromConfusion("attempt_direct", rewards.Confusion.AttemptRateDirect, false, true),
}

func withFallback(m, fb metric) metric {
	m.fallback = &fb
	return m
}

// metricsFor lists a data source's metrics: score, the means of its
// reward's detail keys, then its own.
func metricsFor(dataSource string) []metric {
	ms := []metric{mean("score")}
	if rw, ok := rewards.Lookup(dataSource); ok {
		for _, k := range rw.Keys {
			ms = append(ms, mean(k))
		}
	}
	return append(ms, sourceFor(dataSource).metrics...)
}

// groupMetricsFor lists the metrics of a group of a data source's results
// (sensitivity=high, ...): score, the source's group metrics and its own
// metrics.
func groupMetricsFor(dataSource string) []metric {
	src := sourceFor(dataSource)
	ms := append([]metric{mean("score")}, src.groupMetrics...)
	return append(ms, src.metrics...)
}
