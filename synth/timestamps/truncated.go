package timestamps

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// tailStart is the standardised truncation point from which sampling leaves
// Gonum's normal quantile for the log-space tail method. At 5σ the tail
// probability is 2.9e-7, well inside the range where the quantile is
// accurate; from there on every probability is handled as a logarithm of a
// ratio of tail probabilities, which neither underflows nor cancels.
const tailStart = 5

// millsSwitch is where logMills changes from Gonum's CDF (accurate while the
// tail probability is a normal float64, up to about 37σ) to the continued
// fraction (fast and exact to rounding from here on).
const millsSwitch = 30

var (
	sqrt2Pi    = math.Sqrt(2 * math.Pi)
	logSqrt2Pi = math.Log(sqrt2Pi)
)

// TruncatedNormal is the normal distribution N(Mu, Sigma²) conditioned on
// [Min, Max]; Min may be -Inf and Max +Inf. Written TN(μ, σ, [a, b]) in the
// TicToc paper (§3.4).
//
// Samples are drawn by inversion: one uniform u per sample is mapped through
// the inverse of the truncated CDF, so every draw consumes exactly one value
// from Src and a sample is a monotone function of u. Inside 5σ of the mean
// the inverse is Gonum's normal quantile applied to F(a) + u·(F(b) − F(a)),
// taken on whichever side of the mean keeps the probabilities away from 1
// (so no precision is lost to 1 − p). When the whole interval lies more than
// 5σ out, where F(a) is 1 to double precision (and Gonum's Survival, computed
// as 1 − Erf, is 0 beyond about 8σ), the inverse is solved in log space:
// log Q(z) − log Q(a) = log(1 − u·(1 − Q(b)/Q(a))), with Q the upper tail,
// by Newton's method on the log-concave tail from a start to the right of
// the root, which therefore converges monotonically. Samples never fall
// outside [Min, Max], however far out the interval lies.
type TruncatedNormal struct {
	Mu, Sigma float64
	Min, Max  float64
	// Src is the source of randomness for Rand. Nil uses the global source
	// of math/rand/v2, as Gonum's distributions do.
	Src rand.Source
}

// Validate reports parameters that do not define a distribution: a mean or
// standard deviation that is not finite, σ ≤ 0, a NaN bound, or bounds that
// do not leave an interval (Min must be below Max).
func (d TruncatedNormal) Validate() error {
	switch {
	case math.IsNaN(d.Mu) || math.IsInf(d.Mu, 0):
		return fmt.Errorf("mean %g is not a finite number", d.Mu)
	case math.IsNaN(d.Sigma) || math.IsInf(d.Sigma, 0) || d.Sigma <= 0:
		return fmt.Errorf("standard deviation %g is not a positive finite number", d.Sigma)
	case math.IsNaN(d.Min) || math.IsNaN(d.Max):
		return errors.New("a truncation bound is NaN")
	case !(d.Min < d.Max) || math.IsInf(d.Min, 1) || math.IsInf(d.Max, -1):
		return fmt.Errorf("truncation interval [%g, %g] is empty", d.Min, d.Max)
	}
	return nil
}

func (d TruncatedNormal) std() (alpha, beta float64) {
	return (d.Min - d.Mu) / d.Sigma, (d.Max - d.Mu) / d.Sigma
}

// CDF returns P(X ≤ x) of the truncated distribution, computed exactly (to
// rounding) however far the interval lies in a tail: it is the reference
// the sampler is tested against.
func (d TruncatedNormal) CDF(x float64) float64 {
	alpha, beta := d.std()
	c, _ := stdCDF(alpha, beta, (x-d.Mu)/d.Sigma)
	return c
}

// Survival returns P(X > x) of the truncated distribution, accurate when it
// is small (where 1 − CDF would round to zero).
func (d TruncatedNormal) Survival(x float64) float64 {
	alpha, beta := d.std()
	_, s := stdCDF(alpha, beta, (x-d.Mu)/d.Sigma)
	return s
}

// Quantile returns the x with CDF(x) = p: Min for p = 0, Max for p = 1. It
// panics if p is outside [0, 1], as Gonum's quantiles do.
func (d TruncatedNormal) Quantile(p float64) float64 {
	if !(p >= 0 && p <= 1) {
		panic("timestamps: quantile probability outside [0, 1]")
	}
	return d.quantile(p, 1-p)
}

// Rand draws a sample using one value from Src.
func (d TruncatedNormal) Rand() float64 {
	u, uc := uniform(d.Src)
	return d.quantile(u, uc)
}

func (d TruncatedNormal) quantile(u, uc float64) float64 {
	alpha, beta := d.std()
	x := d.Mu + d.Sigma*stdQuantile(alpha, beta, u, uc)
	return math.Min(math.Max(x, d.Min), d.Max)
}

// uniform returns u in (0, 1) from the top 53 bits of one draw, and 1 − u,
// both exact, so that neither end of the interval loses resolution.
func uniform(src rand.Source) (u, uc float64) {
	var k uint64
	if src == nil {
		k = rand.Uint64()
	} else {
		k = src.Uint64()
	}
	k >>= 11
	const scale = 1.0 / (1 << 53)
	return (float64(k) + 0.5) * scale, (float64((1<<53)-1-k) + 0.5) * scale
}

// phi is the standard normal CDF and q its upper tail; both are Gonum's
// CDF, which is computed from Erfc and keeps full relative precision in
// the lower tail (q(z) = phi(−z) inherits it in the upper tail).
func phi(z float64) float64 { return distuv.UnitNormal.CDF(z) }
func q(z float64) float64   { return distuv.UnitNormal.CDF(-z) }

// stdQuantile inverts the CDF of the standard normal truncated to
// [alpha, beta] at u (uc = 1 − u, given separately so that it is exact).
func stdQuantile(alpha, beta, u, uc float64) float64 {
	switch {
	case u <= 0:
		return alpha
	case uc <= 0:
		return beta
	case alpha+beta < 0:
		// Work on the mirror image, so that the interval leans to the right.
		return -stdQuantile(-beta, -alpha, uc, u)
	case alpha >= tailStart:
		return alpha + tailOffset(alpha, beta, u, uc)
	}
	qa, qb := q(alpha), q(beta)
	m := qa - qb
	// z is the point with upper-tail probability qb + (1−u)·m, which equals
	// lower-tail probability phi(alpha) + u·m; use whichever is below 1/2.
	if upper := qb + uc*m; upper < 0.5 {
		return clamp(-distuv.UnitNormal.Quantile(upper), alpha, beta)
	}
	return clamp(distuv.UnitNormal.Quantile(phi(alpha)+u*m), alpha, beta)
}

func clamp(z, lo, hi float64) float64 { return math.Min(math.Max(z, lo), hi) }

// logMills returns log(Q(x)/φ(x)), the log of Mills' ratio, for x ≥ tailStart.
// Below millsSwitch it comes from Gonum's CDF; above, from Laplace's
// continued fraction Q/φ = 1/(x + 1/(x + 2/(x + 3/(x + …)))), of which 24
// terms are exact to rounding for x ≥ 30.
func logMills(x float64) float64 {
	if x < millsSwitch {
		return math.Log(q(x)) + x*x/2 + logSqrt2Pi
	}
	f := x
	for k := 24.0; k >= 1; k-- {
		f = x + k/f
	}
	return -math.Log(f)
}

// tailLogRatio is log(Q(alpha+t)/Q(alpha)) for t ≥ 0, given logMills(alpha):
// the quadratic part of the exponent is formed as a product, not as the
// difference of two large squares.
func tailLogRatio(alpha, t, lmA float64) float64 {
	if math.IsInf(t, 1) {
		return math.Inf(-1)
	}
	return -t*(t+2*alpha)/2 + logMills(alpha+t) - lmA
}

// tailOffset solves for the offset t = z − alpha of the u-quantile of the
// standard normal truncated to [alpha, beta], alpha ≥ tailStart.
func tailOffset(alpha, beta, u, uc float64) float64 {
	lmA := logMills(alpha)
	tmax := beta - alpha
	rb := math.Exp(tailLogRatio(alpha, tmax, lmA)) // Q(beta)/Q(alpha)
	// The target c = log(Q(z)/Q(alpha)) = log(1 − u·(1 − rb)).
	var c float64
	if u < 0.5 {
		c = math.Log1p(-u * (1 - rb))
	} else {
		c = math.Log(uc + u*rb)
	}
	// Without the Mills-ratio terms the equation is a quadratic in t; its
	// root lies to the right of the true one, where Newton's steps on the
	// concave log tail move monotonically left.
	t := math.Min(-2*c/(alpha+math.Sqrt(alpha*alpha-2*c)), tmax)
	for i := 0; i < 100; i++ {
		z := alpha + t
		g := tailLogRatio(alpha, t, lmA) - c
		hazard := math.Exp(-logMills(z)) // φ(z)/Q(z)
		next := clamp(t+g/hazard, 0, tmax)
		if math.Abs(next-t) <= 1e-15*(next+1/alpha) {
			return next
		}
		t = next
	}
	return t
}

// stdCDF returns the CDF and survival function at z of the standard normal
// truncated to [alpha, beta], each accurate where it is small.
func stdCDF(alpha, beta, z float64) (cdf, sf float64) {
	switch {
	case math.IsNaN(z):
		return math.NaN(), math.NaN()
	case z <= alpha:
		return 0, 1
	case z >= beta:
		return 1, 0
	case alpha+beta < 0:
		s, c := stdCDF(-beta, -alpha, -z)
		return c, s
	case alpha >= tailStart:
		lmA := logMills(alpha)
		den := -math.Expm1(tailLogRatio(alpha, beta-alpha, lmA)) // 1 − Q(beta)/Q(alpha)
		rz := tailLogRatio(alpha, z-alpha, lmA)
		rb := math.Exp(tailLogRatio(alpha, beta-alpha, lmA))
		return -math.Expm1(rz) / den, (math.Exp(rz) - rb) / den
	}
	qa, qb, qz := q(alpha), q(beta), q(z)
	m := qa - qb
	if z < 0 {
		cdf = (phi(z) - phi(alpha)) / m
	} else {
		cdf = (qa - qz) / m
	}
	return clamp(cdf, 0, 1), clamp((qz-qb)/m, 0, 1)
}

// TruncatedLogNormal is the log-normal distribution whose logarithm is
// N(Mu, Sigma²) (log-space parameters, as Gonum's LogNormal), conditioned on
// [Min, Max] in natural units; Min ≥ 0, Max may be +Inf. Written
// TLN(μ, σ, [a, b]) in the TicToc paper. It is exp of a TruncatedNormal on
// [log Min, log Max], and inherits its sampler and its far-tail accuracy.
type TruncatedLogNormal struct {
	Mu, Sigma float64
	Min, Max  float64
	// Src is the source of randomness for Rand; nil uses math/rand/v2's.
	Src rand.Source
}

func (d TruncatedLogNormal) normal() TruncatedNormal {
	return TruncatedNormal{Mu: d.Mu, Sigma: d.Sigma, Min: math.Log(d.Min), Max: math.Log(d.Max)}
}

// Validate reports parameters that do not define a distribution, as
// TruncatedNormal.Validate does, and a negative Min.
func (d TruncatedLogNormal) Validate() error {
	if d.Min < 0 {
		return fmt.Errorf("lower bound %g is negative", d.Min)
	}
	if !(d.Min < d.Max) {
		return fmt.Errorf("truncation interval [%g, %g] is empty", d.Min, d.Max)
	}
	return d.normal().Validate()
}

// CDF returns P(X ≤ x) of the truncated distribution (exact to rounding).
func (d TruncatedLogNormal) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return d.normal().CDF(math.Log(x))
}

// Quantile returns the x with CDF(x) = p; it panics if p is outside [0, 1].
func (d TruncatedLogNormal) Quantile(p float64) float64 {
	if !(p >= 0 && p <= 1) {
		panic("timestamps: quantile probability outside [0, 1]")
	}
	return d.quantile(p, 1-p)
}

// Rand draws a sample using one value from Src.
func (d TruncatedLogNormal) Rand() float64 {
	u, uc := uniform(d.Src)
	return d.quantile(u, uc)
}

func (d TruncatedLogNormal) quantile(u, uc float64) float64 {
	return clamp(math.Exp(d.normal().quantile(u, uc)), d.Min, d.Max)
}
