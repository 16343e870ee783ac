package eval

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Text renders the report as a table: a block per data source, a line per
// metric with its interval, then its groups; a NAR of one class only is
// marked "*".
func (r *Report) Text() string {
	var b strings.Builder
	for i, n := range sortedKeys(r.DataSources) {
		if i > 0 {
			b.WriteString("\n")
		}
		sr := r.DataSources[n]
		fmt.Fprintf(&b, "%s: %d results of %d rows", n, sr.N, sr.Rows)
		if sr.Failed > 0 {
			fmt.Fprintf(&b, ", %d failed", sr.Failed)
		}
		if sr.Skipped > 0 {
			fmt.Fprintf(&b, ", %d skipped", sr.Skipped)
		}
		b.WriteString("\n")
		oneClass := writeMetrics(&b, "", sr)
		for _, g := range groupOrder(sr.Groups) {
			gr := sr.Groups[g]
			fmt.Fprintf(&b, "  %s (%d results)\n", g, gr.N)
			oneClass = writeMetrics(&b, "  ", gr) || oneClass
		}
		if oneClass {
			b.WriteString("  * one class only: NAR is that class's rate (TPR or TNR) alone\n")
		}
		writeCurve(&b, sr.Curve)
	}
	if r.Missing > 0 {
		fmt.Fprintf(&b, "\n%d results did not finish.\n", r.Missing)
	}
	for _, note := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	return b.String()
}

// writeMetrics writes a metric a line; it reports whether a NAR was of one
// class only (marked *).
func writeMetrics(b *strings.Builder, indent string, sr *SourceReport) (oneClass bool) {
	for _, m := range sr.Order {
		iv := sr.Metrics[m]
		mark := " "
		if iv.OneClass {
			mark, oneClass = "*", true
		}
		fmt.Fprintf(b, "%s  %-16s %8s%s [%s, %s]\n", indent, m, num(iv.Mean), mark, num(iv.CI95[0]), num(iv.CI95[1]))
	}
	return oneClass
}

// writeCurve writes the accuracy-against-budget table, if there is one.
func writeCurve(b *strings.Builder, pts []CurvePoint) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(b, "  accuracy against token budget\n    %8s %6s %9s  %-18s %9s\n", "budget", "n", "accuracy", "95% interval", "within")
	for _, p := range pts {
		a := p.Accuracy
		fmt.Fprintf(b, "    %8s %6d %9s  %-18s %9s\n", strconv.FormatFloat(p.Budget, 'f', -1, 64), p.N, num(a.Mean),
			"["+num(a.CI95[0])+", "+num(a.CI95[1])+"]", num(p.WithinBudget.Mean))
	}
}

// groupOrder is the groups' keys ("field=value") in order: by field, then
// by value, numbers first and in numeric order (token_budget=500 before
// token_budget=1000), then the other values in text order.
func groupOrder[V any](m map[string]V) []string {
	keys := sortedKeys(m)
	slices.SortStableFunc(keys, func(a, b string) int {
		fa, va, _ := strings.Cut(a, "=")
		fb, vb, _ := strings.Cut(b, "=")
		if c := strings.Compare(fa, fb); c != 0 {
			return c
		}
		x, errA := strconv.ParseFloat(va, 64)
		y, errB := strconv.ParseFloat(vb, 64)
		switch {
		case errA == nil && errB == nil:
			return cmp.Compare(x, y)
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return strings.Compare(va, vb)
	})
	return keys
}

// Text renders the comparison as a table: the two runs, named a and b,
// then a block per data source with a line per metric: A, B, B − A and
// the interval.
func (c *Comparison) Text(a, b string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "A: %s\nB: %s\n", a, b)
	if len(c.OnlyA)+len(c.OnlyB) > 0 {
		fmt.Fprintf(&s, "left out: data sources only in A %v, only in B %v\n", c.OnlyA, c.OnlyB)
	}
	for _, n := range sortedKeys(c.DataSources) {
		sc := c.DataSources[n]
		fmt.Fprintf(&s, "\n%s: %d rows in both", n, sc.Rows)
		if sc.OnlyA+sc.OnlyB > 0 {
			fmt.Fprintf(&s, " (%d only in A, %d only in B, left out)", sc.OnlyA, sc.OnlyB)
		}
		fmt.Fprintf(&s, "\n  %-16s %8s %8s %8s  %s\n", "metric", "A", "B", "B − A", "95% interval")
		for _, m := range sc.Order {
			d := sc.Metrics[m]
			fmt.Fprintf(&s, "  %-16s %8s %8s %8s  [%s, %s]\n", m, num(d.A), num(d.B), num(d.Diff), num(d.CI95[0]), num(d.CI95[1]))
		}
	}
	return s.String()
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// num renders a metric value with four decimals.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }
