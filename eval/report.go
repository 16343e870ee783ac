package eval

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// DefaultResamples is the number of bootstrap resamples of a report.
const DefaultResamples = 1000

// ReportOptions configures Summarize and Compare.
type ReportOptions struct {
	// Resamples is the number of bootstrap resamples (default
	// DefaultResamples).
	Resamples int
	// Seed seeds the resampling: one seed, one report.
	Seed uint64
}

// Interval is a metric's value on all rows and its 95% percentile
// bootstrap interval. A rate (NAR, TPR, ...) is a value like any other.
type Interval struct {
	Mean float64    `json:"mean"`
	CI95 [2]float64 `json:"ci95"`
	// OneClass marks a NAR over rows of one class only: it is then that
	// class's rate (TPR or TNR) alone, as eval nar reports it with "*".
	OneClass bool `json:"one_class,omitempty"`
}

// SourceReport is the report of one data source, or of one group of it.
type SourceReport struct {
	// N counts the scored results (rows × samples); Rows the rows they
	// belong to; Failed and Skipped the results left out.
	N       int                      `json:"n"`
	Rows    int                      `json:"rows"`
	Failed  int                      `json:"failed"`
	Skipped int                      `json:"skipped"`
	Metrics map[string]Interval      `json:"metrics"`
	Groups  map[string]*SourceReport `json:"groups,omitempty"`
	// Curve is a token-budget source's accuracy against its budget: a
	// point per budget with scored results, in increasing order of budget.
	Curve []CurvePoint `json:"curve,omitempty"`
	// Order lists the metric names in the order to show them.
	Order []string `json:"-"`
}

// CurvePoint is one budget's point of a source's accuracy-against-budget
// curve: the results whose token_budget label is Budget (the budget the
// reward applied), how many were scored, their accuracy (the mean of the
// reward's "correct") and their share within budget.
type CurvePoint struct {
	Budget       float64  `json:"budget"`
	N            int      `json:"n"`
	Accuracy     Interval `json:"accuracy"`
	WithinBudget Interval `json:"within_budget"`
}

// Report is an evaluation's summary: per data source and metric the value
// and its interval.
type Report struct {
	DataSources map[string]*SourceReport `json:"data_sources"`
	// Missing counts results that never finished (an interrupted run).
	Missing int      `json:"missing,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// rowSums is one row's column sums for every metric of its source.
type rowSums [][]float64

// Summarize reports the results, which may hold nils (unfinished results).
func Summarize(results []*Result, opt ReportOptions) *Report {
	opt = opt.withDefaults()
	rep := &Report{DataSources: map[string]*SourceReport{}}
	bySource := map[string][]*Result{}
	var names []string
	for _, r := range results {
		if r == nil {
			rep.Missing++
			continue
		}
		if _, ok := bySource[r.DataSource]; !ok {
			names = append(names, r.DataSource)
		}
		bySource[r.DataSource] = append(bySource[r.DataSource], r)
	}
	sort.Strings(names)
	for _, name := range names {
		rs := bySource[name]
		sr := summarizeSource(name, "", rs, opt)
		for _, field := range sourceFor(name).by {
			groups := map[string][]*Result{}
			for _, r := range rs {
				v, ok := r.Labels[field]
				if !ok {
					v = "(missing)"
				}
				groups[v] = append(groups[v], r)
			}
			for v, grs := range groups {
				if sr.Groups == nil {
					sr.Groups = map[string]*SourceReport{}
				}
				key := field + "=" + v
				sr.Groups[key] = summarizeSource(name, key, grs, opt)
			}
		}
		sr.Curve = curve(sr, sourceFor(name).curve)
		if note := sourceFor(name).note; note != "" {
			rep.Notes = append(rep.Notes, note)
		}
		if sr.Skipped > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d results skipped: %s", name, sr.Skipped, sourceFor(name).skip))
		}
		rep.DataSources[name] = sr
	}
	return rep
}

// curve reads a source's accuracy-against-budget curve from its groups by
// label: one point per group whose value is a positive number and that
// has scored results. No label, no curve.
func curve(sr *SourceReport, label string) []CurvePoint {
	if label == "" {
		return nil
	}
	var pts []CurvePoint
	for key, g := range sr.Groups {
		v, ok := strings.CutPrefix(key, label+"=")
		if !ok || g.N == 0 {
			continue
		}
		b, err := strconv.ParseFloat(v, 64)
		if err != nil || !(b > 0) || math.IsInf(b, 0) {
			continue
		}
		pts = append(pts, CurvePoint{Budget: b, N: g.N, Accuracy: g.Metrics["correct"], WithinBudget: g.Metrics["within_budget"]})
	}
	slices.SortFunc(pts, func(a, b CurvePoint) int { return cmp.Compare(a.Budget, b.Budget) })
	return pts
}

func (o ReportOptions) withDefaults() ReportOptions {
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	return o
}

// summarizeSource reports one data source (or one group of it: group names
// it, for the resampling seed).
func summarizeSource(name, group string, rs []*Result, opt ReportOptions) *SourceReport {
	sr := &SourceReport{Metrics: map[string]Interval{}}
	ms := metricsFor(name)
	if group != "" {
		ms = groupMetricsFor(name)
	}
	rows, _ := sumRows(rs, ms, sr, byRow)
	sr.Rows = len(rows)
	rng := rand.New(rand.NewPCG(opt.Seed, streamOf(name, group)))
	for j, m := range ms {
		full := m.over(rows, nil, j)
		fell := m.on(full)
		oneClass := fell.fallback == nil && m.fallback != nil
		m = fell
		v, ok := m.value(full)
		if !ok {
			continue
		}
		lo, hi := bootstrap(len(rows), opt.Resamples, rng, func(idx []int) (float64, bool) {
			return m.value(m.over(rows, idx, j))
		})
		if math.IsNaN(lo) {
			lo, hi = v, v // no resample defines it: the rows hold one case
		}
		sr.Metrics[m.name] = Interval{Mean: v, CI95: [2]float64{lo, hi}, OneClass: oneClass}
		sr.Order = append(sr.Order, m.name)
	}
	return sr
}

// sumRows groups the counted results by row and sums each metric's
// columns over a row's samples; it counts N, Failed and Skipped into sr.
// A row is named by key(r); the rows' keys come back in order.
func sumRows(rs []*Result, ms []metric, sr *SourceReport, key func(*Result) string) ([]rowSums, []string) {
	at := map[string]int{}
	var rows []rowSums
	var keys []string
	for _, r := range rs {
		switch {
		case r.Skipped != "":
			sr.Skipped++
			continue
		case r.Error != "":
			sr.Failed++
			continue
		}
		sr.N++
		k := key(r)
		i, ok := at[k]
		if !ok {
			i = len(rows)
			at[k] = i
			sums := make(rowSums, len(ms))
			for j, m := range ms {
				if m.pool == nil {
					sums[j] = make([]float64, m.width)
				}
			}
			rows = append(rows, sums)
			keys = append(keys, k)
		}
		for j, m := range ms {
			if m.pool != nil {
				rows[i][j] = append(rows[i][j], m.pool(r))
				continue
			}
			c := make([]float64, m.width)
			m.cols(r, c)
			for k := range c {
				rows[i][j][k] += c[k]
			}
		}
	}
	return rows, keys
}

// byRow names a result's row by its position in the run.
func byRow(r *Result) string { return strconv.Itoa(r.Row) }

// byRequest names a result's row by its request id, which two runs on the
// same data share.
func byRequest(r *Result) string { return r.RequestID }

// over is what metric m (the j-th of its rows' metrics) is computed from
// on the rows at idx (all rows when idx is nil): its columns' sums, or
// the rows' pooled values.
func (m metric) over(rows []rowSums, idx []int, j int) []float64 {
	if m.pool == nil {
		return sumOver(rows, idx, j, m.width)
	}
	var vals []float64
	if idx == nil {
		for _, r := range rows {
			vals = append(vals, r[j]...)
		}
		return vals
	}
	for _, i := range idx {
		vals = append(vals, rows[i][j]...)
	}
	return vals
}

// sumOver sums metric j's columns over the rows at idx (all rows when idx
// is nil).
func sumOver(rows []rowSums, idx []int, j, width int) []float64 {
	s := make([]float64, width)
	add := func(r rowSums) {
		for k := range s {
			s[k] += r[j][k]
		}
	}
	if idx == nil {
		for _, r := range rows {
			add(r)
		}
		return s
	}
	for _, i := range idx {
		add(rows[i])
	}
	return s
}

// streamOf picks a data source's resampling stream, so a report's
// intervals do not depend on the order sources are summarised in.
func streamOf(name, group string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, name+"\x00"+group)
	return h.Sum64()
}

// bootstrap draws resamples of n rows with replacement and returns the
// 2.5th and 97.5th percentiles of the statistic over the resamples where it
// is defined (linear interpolation between order statistics). With no
// defined resample both are NaN.
func bootstrap(n, resamples int, rng *rand.Rand, stat func(idx []int) (float64, bool)) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	idx := make([]int, n)
	vals := make([]float64, 0, resamples)
	for range resamples {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		if v, ok := stat(idx); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(vals)
	return Quantile(vals, 0.025), Quantile(vals, 0.975)
}

// Quantile returns the q-quantile of sorted values by linear interpolation
// between the closest order statistics (the default of R and NumPy).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// Difference is a metric's paired difference B − A on the rows both runs
// scored, with its paired bootstrap interval.
type Difference struct {
	A    float64    `json:"a"`
	B    float64    `json:"b"`
	Diff float64    `json:"diff"`
	CI95 [2]float64 `json:"ci95"`
}

// SourceComparison compares one data source across two runs.
type SourceComparison struct {
	// Rows is the number of rows both runs scored; OnlyA and OnlyB count
	// the rows one run scored and the other did not.
	Rows    int                   `json:"rows"`
	OnlyA   int                   `json:"only_a"`
	OnlyB   int                   `json:"only_b"`
	Metrics map[string]Difference `json:"metrics"`
	Order   []string              `json:"-"`
}

// Comparison is the paired comparison of two runs.
type Comparison struct {
	DataSources map[string]*SourceComparison `json:"data_sources"`
	// OnlyA and OnlyB name the data sources one run has and the other not.
	OnlyA []string `json:"only_a,omitempty"`
	OnlyB []string `json:"only_b,omitempty"`
}

// Compare pairs the rows of two runs by data source and request id and
// reports, per metric, B − A with a paired bootstrap interval: each
// resample draws rows and takes both runs' results of those rows. A run
// that holds one sample of a row twice (two result files concatenated, a
// dataset read twice) is an error: its pairing would be ambiguous.
func Compare(a, b []*Result, opt ReportOptions) (*Comparison, error) {
	opt = opt.withDefaults()
	split := func(rs []*Result, run string) (map[string][]*Result, error) {
		m := map[string][]*Result{}
		seen := map[[3]string]bool{}
		for _, r := range rs {
			if r == nil {
				continue
			}
			k := [3]string{r.DataSource, r.RequestID, strconv.Itoa(r.Sample)}
			if seen[k] {
				return nil, fmt.Errorf("eval: compare: %s: request id %q sample %d appears twice in run %s", r.DataSource, r.RequestID, r.Sample, run)
			}
			seen[k] = true
			m[r.DataSource] = append(m[r.DataSource], r)
		}
		return m, nil
	}
	sa, err := split(a, "A")
	if err != nil {
		return nil, err
	}
	sb, err := split(b, "B")
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{DataSources: map[string]*SourceComparison{}}
	for name := range sa {
		if _, ok := sb[name]; !ok {
			cmp.OnlyA = append(cmp.OnlyA, name)
		}
	}
	for name := range sb {
		if _, ok := sa[name]; !ok {
			cmp.OnlyB = append(cmp.OnlyB, name)
		}
	}
	sort.Strings(cmp.OnlyA)
	sort.Strings(cmp.OnlyB)
	for name, ra := range sa {
		rb, ok := sb[name]
		if !ok {
			continue
		}
		ms := metricsFor(name)
		rowsA, keysA := sumRows(ra, ms, &SourceReport{}, byRequest)
		rowsB, keysB := sumRows(rb, ms, &SourceReport{}, byRequest)
		inB := map[string]int{}
		for i, k := range keysB {
			inB[k] = i
		}
		sc := &SourceComparison{Metrics: map[string]Difference{}}
		var pa, pb []rowSums
		for i, k := range keysA {
			if j, ok := inB[k]; ok {
				pa, pb = append(pa, rowsA[i]), append(pb, rowsB[j])
			} else {
				sc.OnlyA++
			}
		}
		sc.Rows = len(pa)
		sc.OnlyB = len(rowsB) - sc.Rows
		if sc.Rows == 0 {
			cmp.DataSources[name] = sc
			continue
		}
		rng := rand.New(rand.NewPCG(opt.Seed, streamOf(name, "compare")))
		for j, m := range ms {
			fa, fb := m.over(pa, nil, j), m.over(pb, nil, j)
			m = m.on(fa)
			va, okA := m.value(fa)
			vb, okB := m.value(fb)
			if !okA || !okB {
				continue
			}
			lo, hi := bootstrap(len(pa), opt.Resamples, rng, func(idx []int) (float64, bool) {
				x, ok1 := m.value(m.over(pa, idx, j))
				y, ok2 := m.value(m.over(pb, idx, j))
				return y - x, ok1 && ok2
			})
			if math.IsNaN(lo) {
				lo, hi = vb-va, vb-va
			}
			sc.Metrics[m.name] = Difference{A: va, B: vb, Diff: vb - va, CI95: [2]float64{lo, hi}}
			sc.Order = append(sc.Order, m.name)
		}
		cmp.DataSources[name] = sc
	}
	if len(cmp.DataSources) == 0 {
		return nil, errors.New("eval: compare: the two runs share no data source")
	}
	return cmp, nil
}

// ReadResults reads a RESULTS.jsonl file written by eval run; name names
// it in errors.
func ReadResults(r io.Reader, name string) ([]*Result, error) {
	lr := jsonscan.NewLineReader(r)
	var out []*Result
	for {
		line, n, err := lr.Next()
		if err == io.EOF && len(out) == 0 {
			return nil, fmt.Errorf("eval: %s: %w", name, dataset.ErrNoRecords)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("eval: %s: line %d: %w", name, n, err)
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if n == 1 && isReport(line) {
			return nil, fmt.Errorf("eval: %s: this is an eval report (eval run --json); compare reads the RESULTS.jsonl files eval run writes with --out", name)
		}
		var res Result
		if err := json.Unmarshal(line, &res); err != nil {
			return nil, fmt.Errorf("eval: %s: line %d: %w", name, n, jsonscan.Explain("", line, err))
		}
		if res.DataSource == "" || res.RequestID == "" {
			return nil, fmt.Errorf("eval: %s: line %d: a result needs data_source and request_id", name, n)
		}
		if res.Details == nil {
			res.Details = map[string]float64{}
		}
		out = append(out, &res)
	}
}

// isReport tells the first line of an eval run --json report: an object
// that opens with "{" alone or holds "data_sources".
func isReport(line []byte) bool {
	t := strings.TrimSpace(string(line))
	if t == "{" {
		return true
	}
	var probe struct {
		DataSources json.RawMessage `json:"data_sources"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.DataSources != nil
}

// CompareFiles reads two RESULTS.jsonl files (ReadResults) and compares
// them (Compare). A file that cannot be opened is an *OptionError of
// Option "A" or "B".
func CompareFiles(a, b string, opt ReportOptions) (*Comparison, error) {
	var runs [2][]*Result
	for i, p := range []string{a, b} {
		f, err := os.Open(p)
		if err != nil {
			return nil, &OptionError{Option: string(rune('A' + i)), Value: p, Err: err}
		}
		runs[i], err = ReadResults(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return Compare(runs[0], runs[1], opt)
}
