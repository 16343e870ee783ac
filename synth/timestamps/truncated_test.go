package timestamps

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ksCritical is the Kolmogorov–Smirnov critical value c(α)/√n at
// α = 0.001, c = √(−ln(α/2)/2): a correct sampler fails one test in a
// thousand seeds, and the seeds here are fixed.
func ksCritical(n int) float64 {
	return math.Sqrt(-math.Log(0.001/2)/2) / math.Sqrt(float64(n))
}

// ksStatistic is the one-sample statistic D = sup |F_n − F| of sorted
// samples against a CDF.
func ksStatistic(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	d := 0.0
	for i, x := range sorted {
		f := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

type distribution interface {
	Rand() float64
	CDF(float64) float64
	Quantile(float64) float64
}

// sampleSorted draws n samples and returns them sorted.
func sampleSorted(d distribution, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.Rand()
	}
	slices.Sort(xs)
	return xs
}

func withSrc(d distribution, src rand.Source) distribution {
	switch v := d.(type) {
	case TruncatedNormal:
		v.Src = src
		return v
	case TruncatedLogNormal:
		v.Src = src
		return v
	}
	panic(fmt.Sprintf("unexpected %T", d))
}

func bounds(d distribution) (float64, float64) {
	switch v := d.(type) {
	case TruncatedNormal:
		return v.Min, v.Max
	case TruncatedLogNormal:
		return v.Min, v.Max
	}
	panic(fmt.Sprintf("unexpected %T", d))
}

type namedDist struct {
	name string
	d    distribution
}

// paperDists are r, w, g and the nine final gaps.
func paperDists() []namedDist {
	opt := DefaultOptions()
	out := []namedDist{
		{"read r", opt.Read},
		{"write w", opt.Write},
		{"generate g", opt.Generate},
	}
	for _, s := range []string{"low", "medium", "high"} {
		for k, g := range opt.Gaps[s] {
			out = append(out, namedDist{fmt.Sprintf("gap %s/%s", s, levelNames[k]), g})
		}
	}
	return out
}

// farTailDists are truncations far outside the bulk, where a sampler built
// on F(b) − F(a) or on Gonum's Survival would find no probability mass.
func farTailDists() []namedDist {
	inf := math.Inf(1)
	return []namedDist{
		{"8σ above", TruncatedNormal{Mu: 0, Sigma: 1, Min: 8, Max: inf}},
		{"12σ above", TruncatedNormal{Mu: 3, Sigma: 2, Min: 27, Max: inf}},
		{"20σ to 20.5σ", TruncatedNormal{Mu: 0, Sigma: 1, Min: 20, Max: 20.5}},
		{"35σ above, across the Mills switch", TruncatedNormal{Mu: 0, Sigma: 1, Min: 29.99, Max: inf}},
		{"40σ above", TruncatedNormal{Mu: 0, Sigma: 1, Min: 40, Max: inf}},
		{"1000σ above", TruncatedNormal{Mu: -5, Sigma: 0.5, Min: 495, Max: inf}},
		{"9σ below", TruncatedNormal{Mu: 0, Sigma: 1, Min: math.Inf(-1), Max: -9}},
		{"50σ to 45σ below", TruncatedNormal{Mu: 10, Sigma: 1, Min: -40, Max: -35}},
		{"narrow, 60σ above", TruncatedNormal{Mu: 0, Sigma: 1, Min: 60, Max: 60.001}},
		{"log-normal 10σ above", TruncatedLogNormal{Mu: 0, Sigma: 1, Min: math.Exp(10), Max: inf}},
		{"log-normal writing speed from 200 wpm", TruncatedLogNormal{Mu: 3.61, Sigma: 0.40, Min: 200, Max: inf}},
	}
}

func TestTruncatedKolmogorovSmirnov(t *testing.T) {
	const n = 20000
	crit := ksCritical(n)
	cases := append(paperDists(), farTailDists()...)
	cases = append(cases,
		namedDist{"untruncated", TruncatedNormal{Mu: 1, Sigma: 2, Min: math.Inf(-1), Max: math.Inf(1)}},
		namedDist{"straddling the mean", TruncatedNormal{Mu: 0, Sigma: 1, Min: -0.5, Max: 0.25}},
		namedDist{"narrow near the mean", TruncatedNormal{Mu: 0, Sigma: 1, Min: 0.1, Max: 0.1000001}},
	)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := withSrc(c.d, rand.NewPCG(uint64(i)+1, 42))
			xs := sampleSorted(d, n)
			lo, hi := bounds(c.d)
			require.GreaterOrEqual(t, xs[0], lo, "sample below the lower bound")
			require.LessOrEqual(t, xs[n-1], hi, "sample above the upper bound")
			require.False(t, math.IsNaN(xs[0]) || math.IsNaN(xs[n-1]))
			D := ksStatistic(xs, c.d.CDF)
			t.Logf("D = %.5f, critical %.5f", D, crit)
			assert.Less(t, D, crit, "KS statistic D = %.5f, critical %.5f", D, crit)
		})
	}
}

// TestKolmogorovSmirnovRejectsWrongSamples shows the KS check has power:
// samples of the untruncated normal, or clamped into the interval (the
// naive far-tail fallback), fail it.
func TestKolmogorovSmirnovRejectsWrongSamples(t *testing.T) {
	const n = 20000
	src := rand.New(rand.NewPCG(7, 7))
	gap := DefaultOptions().Gaps["medium"][1]
	far := TruncatedNormal{Mu: 0, Sigma: 1, Min: 8, Max: math.Inf(1)}
	tests := []struct {
		name string
		d    TruncatedNormal
		draw func() float64
	}{
		{"untruncated gap", gap, func() float64 { return gap.Mu + gap.Sigma*src.NormFloat64() }},
		{"clamped far tail", far, func() float64 { return math.Max(far.Min, src.NormFloat64()) }},
		{"exponential tail without the quadratic term", far, func() float64 { return far.Min + src.ExpFloat64()/(far.Min+1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = tt.draw()
			}
			slices.Sort(xs)
			assert.Greater(t, ksStatistic(xs, tt.d.CDF), ksCritical(n))
		})
	}
}

// TestTruncatedAgainstRejection compares the sampler with an independent
// one, Gonum's normal and log-normal samplers with rejection outside the
// interval, by the two-sample statistic of gonum's stat.KolmogorovSmirnov.
// It checks the sampler without trusting this package's CDF.
func TestTruncatedAgainstRejection(t *testing.T) {
	const n = 20000
	crit := math.Sqrt(-math.Log(0.001/2)/2) * math.Sqrt(2.0/n)
	for i, c := range paperDists() {
		t.Run(c.name, func(t *testing.T) {
			xs := sampleSorted(withSrc(c.d, rand.NewPCG(uint64(i)+100, 1)), n)
			var ref func() float64
			lo, hi := bounds(c.d)
			switch v := c.d.(type) {
			case TruncatedNormal:
				ref = distuv.Normal{Mu: v.Mu, Sigma: v.Sigma, Src: rand.NewPCG(uint64(i)+200, 2)}.Rand
			case TruncatedLogNormal:
				ref = distuv.LogNormal{Mu: v.Mu, Sigma: v.Sigma, Src: rand.NewPCG(uint64(i)+200, 2)}.Rand
			}
			ys := make([]float64, 0, n)
			for len(ys) < n {
				if y := ref(); y >= lo && y <= hi {
					ys = append(ys, y)
				}
			}
			slices.Sort(ys)
			D := stat.KolmogorovSmirnov(xs, nil, ys, nil)
			assert.Less(t, D, crit, "two-sample D = %.5f, critical %.5f", D, crit)
		})
	}
}

// TestTruncatedCDFReference checks the exact CDF against independent
// formulas: the ratio of Erfc tails (exact to ~37σ) and, beyond, the
// asymptotic tail ratio Q(a+s)/Q(a) = e^{−as−s²/2}·a/(a+s)·(1 + O(a⁻²)).
func TestTruncatedCDFReference(t *testing.T) {
	upper := func(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }
	for _, a := range []float64{-2, 0, 3, 4.99, 5, 8, 12, 20, 29.9, 30.1, 36} {
		d := TruncatedNormal{Mu: 0, Sigma: 1, Min: a, Max: math.Inf(1)}
		for _, s := range []float64{1e-3, 0.01, 0.1, 0.5, 1, 2} {
			want := 1 - upper(a+s)/upper(a)
			assert.InDelta(t, want, d.CDF(a+s), 1e-12*math.Max(1, want/1e-3), "a=%g s=%g", a, s)
		}
	}
	for _, a := range []float64{1e3, 1e4, 1e6} {
		d := TruncatedNormal{Mu: 0, Sigma: 1, Min: a, Max: math.Inf(1)}
		for _, k := range []float64{0.01, 0.5, 1, 3, 10} {
			x := a + k/a
			s := x - a // exact: the offset x really has
			want := 1 - math.Exp(-a*s-s*s/2)*a/(a+s)
			assert.InEpsilon(t, want, d.CDF(x), 1e-5, "a=%g s=%g", a, s)
		}
	}
	inner := TruncatedNormal{Mu: 0, Sigma: 1, Min: 9, Max: 9.5}
	for _, x := range []float64{9.01, 9.1, 9.3, 9.49} {
		want := (upper(9) - upper(x)) / (upper(9) - upper(9.5))
		assert.InEpsilon(t, want, inner.CDF(x), 1e-11, "x=%g", x)
	}
}

func TestTruncatedQuantile(t *testing.T) {
	cases := append(paperDists(), farTailDists()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo, hi := bounds(c.d)
			assert.Equal(t, lo, c.d.Quantile(0))
			assert.Equal(t, hi, c.d.Quantile(1))
			prev := math.Inf(-1)
			for i := 1; i < 1000; i++ {
				p := float64(i) / 1000
				x := c.d.Quantile(p)
				require.GreaterOrEqual(t, x, prev, "quantile decreases at p=%g", p)
				require.True(t, x >= lo && x <= hi, "quantile %g at p=%g outside [%g, %g]", x, p, lo, hi)
				assert.InDelta(t, p, c.d.CDF(x), 1e-7, "CDF(Quantile(%g))", p)
				prev = x
			}
			assert.Panics(t, func() { c.d.Quantile(1.5) })
			assert.Panics(t, func() { c.d.Quantile(math.NaN()) })
		})
	}
}

// TestGapsOrdered checks that the final gaps are ordered small < medium <
// large in distribution for every sensitivity: every quantile of a level is
// below the same quantile of the next, and indeed the supports do not meet.
func TestGapsOrdered(t *testing.T) {
	gaps := DefaultOptions().Gaps
	for _, s := range []string{"low", "medium", "high"} {
		g := gaps[s]
		for k := 0; k+1 < len(g); k++ {
			lo, hi := g[k], g[k+1]
			assert.Less(t, lo.Max, hi.Min, "%s: %s reaches into %s", s, levelNames[k], levelNames[k+1])
			for i := 0; i <= 100; i++ {
				p := float64(i) / 100
				assert.Less(t, lo.Quantile(p), hi.Quantile(p), "%s: quantile %g", s, p)
			}
		}
		xs := [3][]float64{}
		for k := range g {
			xs[k] = sampleSorted(withSrc(g[k], rand.NewPCG(uint64(k), 9)), 5000)
		}
		assert.Less(t, xs[0][len(xs[0])-1], xs[1][0], s)
		assert.Less(t, xs[1][len(xs[1])-1], xs[2][0], s)
	}
}

func TestPaperGapMeans(t *testing.T) {
	m := PaperGapMeans()
	assert.Equal(t, [3]float64{180, 259200, 7776000}, seconds3(m["low"]))
	assert.Equal(t, [3]float64{180, 10800, 259200}, seconds3(m["medium"]))
	assert.Equal(t, [3]float64{3, 180, 10800}, seconds3(m["high"]))
	g := PaperGap(3 * Day)
	assert.Equal(t, TruncatedNormal{Mu: 259200, Sigma: 86400, Min: 86400, Max: 518400}, g)
}

func seconds3(ds [3]time.Duration) [3]float64 {
	return [3]float64{ds[0].Seconds(), ds[1].Seconds(), ds[2].Seconds()}
}

func TestTruncatedValidate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		d    interface{ Validate() error }
		want string
	}{
		{"ok", TruncatedNormal{Mu: 0, Sigma: 1, Min: 0, Max: inf}, ""},
		{"zero sigma", TruncatedNormal{Mu: 0, Sigma: 0, Min: 0, Max: 1}, "standard deviation"},
		{"NaN mean", TruncatedNormal{Mu: math.NaN(), Sigma: 1, Min: 0, Max: 1}, "mean"},
		{"infinite mean", TruncatedNormal{Mu: inf, Sigma: 1, Min: 0, Max: inf}, "mean"},
		{"empty interval", TruncatedNormal{Mu: 0, Sigma: 1, Min: 2, Max: 2}, "empty"},
		{"reversed interval", TruncatedNormal{Mu: 0, Sigma: 1, Min: 2, Max: 1}, "empty"},
		{"interval at +inf", TruncatedNormal{Mu: 0, Sigma: 1, Min: inf, Max: inf}, "empty"},
		{"NaN bound", TruncatedNormal{Mu: 0, Sigma: 1, Min: math.NaN(), Max: 1}, "NaN"},
		{"log-normal ok", TruncatedLogNormal{Mu: 3.61, Sigma: 0.4, Min: 0, Max: inf}, ""},
		{"log-normal negative bound", TruncatedLogNormal{Mu: 3.61, Sigma: 0.4, Min: -1, Max: inf}, "negative"},
		{"log-normal empty", TruncatedLogNormal{Mu: 3.61, Sigma: 0.4, Min: 5, Max: 5}, "empty"},
		{"log-normal sigma", TruncatedLogNormal{Mu: 3.61, Sigma: -1, Min: 5, Max: inf}, "standard deviation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestRandUsesOneDrawPerSample pins the contract that makes streams
// reproducible: a sample consumes exactly one value of the source, in every
// regime, so the draws after it do not depend on where it fell.
func TestRandUsesOneDrawPerSample(t *testing.T) {
	for _, c := range append(paperDists(), farTailDists()...) {
		src := &countingSource{Source: rand.NewPCG(1, 1)}
		d := withSrc(c.d, src)
		for i := 0; i < 100; i++ {
			d.Rand()
		}
		assert.Equal(t, 100, src.n, c.name)
	}
}

type countingSource struct {
	rand.Source
	n int
}

func (c *countingSource) Uint64() uint64 { c.n++; return c.Source.Uint64() }
