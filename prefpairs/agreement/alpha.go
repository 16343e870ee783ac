// Package agreement measures how much human annotators agree with each other,
// so a build can report whether its preference labels are reliable enough to
// train on.
//
// It implements Krippendorff's alpha through the coincidence-matrix
// formulation, which needs no coder identities and tolerates missing values:
// a caller only says which values were given to which unit. Alpha is 1 for
// perfect agreement, 0 when agreement is what chance alone would produce, and
// negative when coders disagree systematically.
package agreement

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Metric selects the difference function delta² used to weigh a
// disagreement between two values. The right choice depends on the scale the
// values live on: treating an ordered scale as nominal throws away the fact
// that near misses are better than far ones.
type Metric int

const (
	// Nominal treats values as unordered labels: any two different values
	// disagree equally (delta² = 1), equal values not at all.
	Nominal Metric = iota
	// Ordinal treats values as ranks: the cost of a disagreement grows with
	// how many observed values lie between the two, so it depends on the
	// value frequencies, not on the numeric gaps.
	Ordinal
	// Interval treats values as points on a line: delta² = (c − k)².
	Interval
)

// String returns the lower-case metric name ("nominal", "ordinal",
// "interval"), the same spelling ParseMetric accepts, so a metric can round
// trip through flags and manifests.
func (m Metric) String() string {
	switch m {
	case Nominal:
		return "nominal"
	case Ordinal:
		return "ordinal"
	case Interval:
		return "interval"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// ParseMetric maps a metric name, case-insensitively and ignoring surrounding
// space, to its Metric. It exists so command-line flags and configuration
// files can name a metric; an unknown name is an error that lists the valid
// ones.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nominal":
		return Nominal, nil
	case "ordinal":
		return Ordinal, nil
	case "interval":
		return Interval, nil
	}
	return 0, fmt.Errorf("agreement: unknown metric %q: want nominal, ordinal or interval", s)
}

// ErrNoPairableValues is returned (wrapped) by Alpha when no unit holds at
// least two values, so there is no pair of judgements to compare and alpha is
// undefined. Callers can test for it with errors.Is to tell "too little data"
// apart from invalid input.
var ErrNoPairableValues = errors.New("no unit has two or more values")

// Alpha returns Krippendorff's alpha for the given units under metric m.
//
// units[i] lists every value any coder assigned to unit i; which coder gave
// which value does not matter and missing judgements are simply left out.
// Units with fewer than two values cannot form a pair and are ignored, as the
// coefficient prescribes. Values must be finite.
//
// Alpha = 1 − D_o/D_e, with the observed disagreement D_o taken from the
// coincidence matrix (each unit with m_u values contributes its ordered value
// pairs with weight 1/(m_u − 1)) and the expected disagreement D_e from the
// matrix marginals n_c.
//
// Errors: an unknown metric, a NaN or infinite value, or no pairable unit at
// all (wrapping ErrNoPairableValues) — never a NaN result. When every pairable
// value is the same, D_e is 0 and the ratio is undefined; Alpha then returns 1
// with no error, because the coders agree perfectly on the data they saw,
// even though such data cannot show that the agreement is not due to chance.
//
// The cost is linear in the number of values plus, per unit, the square of
// its distinct values, plus the square of the distinct values overall; rating
// scales have few distinct values, so this is effectively linear.
func Alpha(units [][]float64, m Metric) (float64, error) {
	if m != Nominal && m != Ordinal && m != Interval {
		return 0, fmt.Errorf("agreement: alpha: unknown metric %v", m)
	}

	// Index the distinct values of pairable units in ascending order.
	index := make(map[float64]int)
	for i, u := range units {
		if len(u) < 2 {
			continue
		}
		for j, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("agreement: alpha: unit %d value %d: %v is not a finite number", i, j, v)
			}
			index[v] = 0
		}
	}
	if len(index) == 0 {
		return 0, fmt.Errorf("agreement: alpha over %d units: %w", len(units), ErrNoPairableValues)
	}
	values := make([]float64, 0, len(index))
	for v := range index {
		values = append(values, v)
	}
	slices.Sort(values)
	for i, v := range values {
		index[v] = i
	}
	d := len(values)

	// Build the coincidence matrix o (d×d, row-major). counts is scratch
	// space reset after each unit through the list of touched indices, so
	// a unit costs O(m_u + distinct(u)²) rather than O(d²).
	o := make([]float64, d*d)
	counts := make([]float64, d)
	touched := make([]int, 0, d)
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		for _, v := range u {
			c := index[v]
			if counts[c] == 0 {
				touched = append(touched, c)
			}
			counts[c]++
		}
		w := 1 / float64(len(u)-1)
		for _, c := range touched {
			for _, k := range touched {
				pairs := counts[c] * counts[k]
				if c == k {
					pairs = counts[c] * (counts[c] - 1)
				}
				o[c*d+k] += pairs * w
			}
		}
		for _, c := range touched {
			counts[c] = 0
		}
		touched = touched[:0]
	}

	// Marginals n_c and their total n (the number of pairable values).
	nc := make([]float64, d)
	var n float64
	for c := range d {
		for k := range d {
			nc[c] += o[c*d+k]
		}
		n += nc[c]
	}

	delta := deltaSquared(m, values, nc)
	var observed, expected float64
	for c := range d {
		for k := range d {
			dd := delta(c, k)
			if dd == 0 {
				continue
			}
			observed += o[c*d+k] * dd
			expected += nc[c] * nc[k] * dd
		}
	}
	if expected == 0 {
		// Only one distinct value: perfect agreement by definition here.
		return 1, nil
	}
	return 1 - (n-1)*observed/expected, nil
}

// deltaSquared returns the squared difference function for metric m over the
// sorted distinct values, indexed by position. For Ordinal it precomputes
// prefix sums of the marginals so each lookup is O(1).
func deltaSquared(m Metric, values, nc []float64) func(c, k int) float64 {
	switch m {
	case Interval:
		return func(c, k int) float64 {
			diff := values[c] - values[k]
			return diff * diff
		}
	case Ordinal:
		// prefix[i] = n_0 + … + n_{i−1}.
		prefix := make([]float64, len(nc)+1)
		for i, x := range nc {
			prefix[i+1] = prefix[i] + x
		}
		return func(c, k int) float64 {
			if c == k {
				return 0
			}
			if c > k {
				c, k = k, c
			}
			x := prefix[k+1] - prefix[c] - (nc[c]+nc[k])/2
			return x * x
		}
	default:
		return func(c, k int) float64 {
			if c == k {
				return 0
			}
			return 1
		}
	}
}
