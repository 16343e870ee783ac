package splits

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mhSets returns two random shingle-hash sets whose union has n elements
// and whose Jaccard similarity is round(j·n)/n.
func mhSets(rng *rand.Rand, n int, j float64) (a, b []uint64, exact float64) {
	shared := int(math.Round(j * float64(n)))
	for i := range n {
		x := rng.Uint64()
		switch {
		case i < shared:
			a, b = append(a, x), append(b, x)
		case i%2 == 0:
			a = append(a, x)
		default:
			b = append(b, x)
		}
	}
	return a, b, float64(shared) / float64(n)
}

func TestMinHashEstimateAccuracy(t *testing.T) {
	mh, err := NewMinHasher(128, DefaultMinHashSeed)
	require.NoError(t, err)
	for i, j := range []float64{0, 0.2, 0.5, 0.8, 0.95, 1} {
		t.Run(fmt.Sprint(j), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 2))
			// The estimate is binomial: standard deviation sqrt(J(1−J)/128)
			// ≤ 0.044, so |error| > 0.1 (2.3σ at J = 0.5) happens about once
			// in 40 estimates (hence 18 of 20, not 20), and the mean absolute
			// error is ≈ 0.8σ.
			const trials = 20
			sumErr, sumEst, within := 0.0, 0.0, 0
			for range trials {
				a, b, exact := mhSets(rng, 300, j)
				est := EstimateJaccard(mh.Signature(a, nil), mh.Signature(b, nil))
				assert.InDelta(t, exact, est, 0.15)
				if math.Abs(est-exact) <= 0.1 {
					within++
				}
				sumErr += math.Abs(est - exact)
				sumEst += est - exact
			}
			assert.GreaterOrEqual(t, within, trials-2, "estimates within 0.1")
			assert.Less(t, sumErr/trials, 0.05, "mean absolute error")
			assert.Less(t, math.Abs(sumEst/trials), 0.03, "bias")
		})
	}
}

// TestMinHashEstimateUnbiased checks over many set pairs that the
// estimator's mean and spread match binomial sampling of the Jaccard
// similarity, which an ill-mixed permutation family would not.
func TestMinHashEstimateUnbiased(t *testing.T) {
	mh, err := NewMinHasher(128, 99)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, j := range []float64{0.2, 0.5, 0.8} {
		const trials = 400
		var sum, sumSq float64
		for range trials {
			a, b, exact := mhSets(rng, 200, j)
			d := EstimateJaccard(mh.Signature(a, nil), mh.Signature(b, nil)) - exact
			sum += d
			sumSq += d * d
		}
		sd := math.Sqrt(j * (1 - j) / 128)
		assert.InDelta(t, 0, sum/trials, 3*sd/math.Sqrt(trials), "mean error at %v", j)
		assert.InDelta(t, sd, math.Sqrt(sumSq/trials), 0.25*sd, "spread at %v", j)
	}
}

func TestMinHashTexts(t *testing.T) {
	mh, err := NewMinHasher(128, DefaultMinHashSeed)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := gtVocab(rng, 3000)
	text := gtText(rng, vocab, 300)
	sig := mh.Signature(Shingles(text, 5), nil)
	for _, k := range []int{1, 3, 10, 30} {
		other := gtChangeWords(rng, text, k, 5)
		exact := gtJaccard(text, other, 5)
		est := EstimateJaccard(sig, mh.Signature(Shingles(other, 5), nil))
		assert.InDelta(t, exact, est, 0.1, "%d words changed", k)
	}
	// Case, spacing and time stamps do not change the shingles.
	assert.Equal(t, sig, mh.Signature(Shingles("[2025-12-04T10:22:44Z] "+text+"  ", 5), nil))
}

func TestShingles(t *testing.T) {
	assert.Empty(t, Shingles("", 5))
	assert.Empty(t, Shingles(" [2025-12-04T10:22:44Z] ", 5))
	assert.Len(t, Shingles("one two three", 5), 1, "short text: one shingle of all its words")
	assert.Len(t, Shingles("a b c d e", 5), 1)
	assert.Len(t, Shingles("a b c d e f g", 5), 3)
	assert.Equal(t, Shingles("A  b C d e f", 5), Shingles("a b c d e f", 5))
	assert.NotEqual(t, Shingles("a b c d e", 5), Shingles("b a c d e", 5), "order matters")
	assert.NotEqual(t, Shingles("ab c d e f", 5), Shingles("a bc d e f", 5), "word boundaries matter")
	// Repeats give repeated hashes, which MinHash ignores.
	s := Shingles("x y x y x y x y", 2)
	assert.Len(t, s, 7)
	assert.Equal(t, s[0], s[2])
}

func TestMinHasherDeterministic(t *testing.T) {
	sh := Shingles("the quick brown fox jumps over the lazy dog again and again", 5)
	a, err := NewMinHasher(64, 7)
	require.NoError(t, err)
	b, err := NewMinHasher(64, 7)
	require.NoError(t, err)
	c, err := NewMinHasher(64, 8)
	require.NoError(t, err)
	assert.Equal(t, a.Signature(sh, nil), b.Signature(sh, nil))
	assert.NotEqual(t, a.Signature(sh, nil), c.Signature(sh, nil))
	assert.Equal(t, 64, a.Permutations())

	// Odd lengths use the scalar tail.
	d, err := NewMinHasher(7, 7)
	require.NoError(t, err)
	assert.Equal(t, a.Signature(sh, nil)[:4], d.Signature(sh, nil)[:4])
	assert.Len(t, d.Signature(sh, make([]uint32, 2)), 7)

	_, err = NewMinHasher(0, 1)
	assert.Error(t, err)
	assert.Equal(t, 0.0, EstimateJaccard(nil, nil))
}

func TestDefaultBands(t *testing.T) {
	tests := []struct {
		perms     int
		threshold float64
		bands     int
	}{
		{128, 0.8, 16}, // 16 × 8 = 128
		{128, 0.9, 9},  // 9 × 14 = 126: two permutations only count in verification
		{128, 0.5, 42}, // 42 × 3
		{64, 0.8, 10},  // 10 × 6
		{256, 0.8, 25}, // 25 × 10
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d@%v", tt.perms, tt.threshold), func(t *testing.T) {
			b := DefaultBands(tt.perms, tt.threshold)
			assert.Equal(t, tt.bands, b)
			r := tt.perms / b
			assert.GreaterOrEqual(t, LSHCandidateProbability(tt.threshold, b, r), 0.9)
			assert.Less(t, math.Pow(1/float64(b), 1/float64(r)), tt.threshold, "S-curve midpoint below the threshold")
		})
	}
	assert.Equal(t, 1, DefaultBands(1, 0.8))
	assert.Equal(t, 1, DefaultBands(0, 0.8))
	assert.Equal(t, 16, DefaultBands(128, -1), "disabled check: default threshold")
	assert.InDelta(t, 0.707, math.Pow(1.0/16, 1.0/8), 0.001)
	assert.InDelta(t, 0.994, LSHCandidateProbability(0.85, 16, 8), 0.001)
}

// TestSignatureFormula checks every signature element against its
// definition, computed plainly: the high 32 bits of the least a_i·x + b_i
// (mod 2^64) over the shingles x, with the MinHasher's a_i (odd) and b_i.
// Lengths of 1 to 17 cover the eight-at-a-time blocks and the tail.
func TestSignatureFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	for _, perms := range []int{1, 7, 8, 9, 16, 17} {
		mh, err := NewMinHasher(perms, uint64(perms))
		require.NoError(t, err)
		require.Equal(t, perms, mh.Permutations())
		for _, n := range []int{0, 1, 2, 50} {
			shingles := make([]uint64, n)
			for i := range shingles {
				shingles[i] = rng.Uint64()
			}
			want := make([]uint32, perms)
			for i := range want {
				require.Equal(t, uint64(1), mh.a[i]%2, "a_%d is odd", i)
				least := uint64(math.MaxUint64)
				for _, x := range shingles {
					if v := mh.a[i]*x + mh.b[i]; v < least {
						least = v
					}
				}
				want[i] = uint32(least >> 32)
			}
			assert.Equal(t, want, mh.Signature(shingles, nil), "%d permutations, %d shingles", perms, n)
		}
	}
}

// TestSignatureReusesDst checks that Signature writes into a dst that is
// large enough (the gate hashes into slices of one buffer) and grows one
// that is not.
func TestSignatureReusesDst(t *testing.T) {
	mh, err := NewMinHasher(16, 5)
	require.NoError(t, err)
	shingles := []uint64{1, 2, 3}
	want := mh.Signature(shingles, nil)
	buf := make([]uint32, 40)
	for _, dst := range [][]uint32{buf[:16], buf[0:0:16], buf[20:20:36]} {
		got := mh.Signature(shingles, dst)
		assert.Equal(t, want, got)
		assert.Same(t, &dst[:1][0], &got[0], "written into dst")
	}
	assert.Equal(t, want, buf[:16])
	assert.Equal(t, want, buf[20:36])
	assert.Equal(t, want, mh.Signature(shingles, make([]uint32, 15)), "a dst too small is grown")
}

// TestShinglesMatchReference checks Shingles against the tests' own word
// shingles (refShingles) over random texts and widths: one hash per window
// of k words (one for a shorter text), in order, and equal hashes exactly
// for equal shingles, across all the texts.
func TestShinglesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	vocab := []string{"a", "b", "c", "ab", "ba", "Tide", "tide", "école", "x1", "1x"}
	byHash := map[uint64]string{}
	byShingle := map[string]uint64{}
	for range 400 {
		n := rng.IntN(9)
		words := make([]string, n)
		for i := range words {
			words[i] = vocab[rng.IntN(len(vocab))]
		}
		text := strings.Join(words, []string{" ", "  ", "\t", "\n "}[rng.IntN(4)])
		k := rng.IntN(7) // 0 means 1
		hashes := Shingles(text, k)
		norm := strings.Fields(refNormalize(text))
		width := min(max(k, 1), len(norm))
		var shingles []string
		for i := 0; len(norm) > 0 && i+width <= len(norm); i++ {
			shingles = append(shingles, strings.Join(norm[i:i+width], " "))
		}
		require.Len(t, hashes, len(shingles), "%q, k %d", text, k)
		require.Equal(t, len(refShingles(text, max(k, 1))), len(slicesCompactSorted(shingles)), "%q, k %d", text, k)
		for i, h := range hashes {
			if s, ok := byHash[h]; ok {
				require.Equal(t, s, shingles[i], "one hash for two shingles")
			}
			if g, ok := byShingle[shingles[i]]; ok {
				require.Equal(t, g, h, "two hashes for one shingle %q", shingles[i])
			}
			byHash[h], byShingle[shingles[i]] = shingles[i], h
		}
	}
	require.Greater(t, len(byShingle), 300, "distinct shingles seen")
}

// slicesCompactSorted returns the distinct strings of s.
func slicesCompactSorted(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}

// TestEstimateJaccardByHand counts agreeing positions of hand-made
// signatures.
func TestEstimateJaccardByHand(t *testing.T) {
	for _, tc := range []struct {
		a, b []uint32
		want float64
	}{
		{[]uint32{1, 2, 3, 4}, []uint32{1, 2, 3, 4}, 1},
		{[]uint32{1, 2, 3, 4}, []uint32{1, 0, 3, 0}, 0.5},
		{[]uint32{1, 2, 3, 4}, []uint32{0, 0, 0, 4}, 0.25},
		{[]uint32{1, 2, 3, 4}, []uint32{4, 3, 2, 1}, 0},
		{[]uint32{1, 2, 3, 4}, []uint32{1, 2}, 1},             // over the shorter
		{[]uint32{7, 2, 9}, []uint32{7, 5, 9, 9, 9}, 2.0 / 3}, // over the shorter
		{nil, []uint32{1}, 0},
	} {
		assert.Equal(t, tc.want, EstimateJaccard(tc.a, tc.b), "%v %v", tc.a, tc.b)
		assert.Equal(t, tc.want, EstimateJaccard(tc.b, tc.a), "%v %v", tc.b, tc.a)
	}
}

// TestBandKey checks that band keys depend on the band's rows only, and on
// the band number: equal rows in two bands are not one bucket.
func TestBandKey(t *testing.T) {
	sig := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	other := []uint32{1, 2, 3, 4, 0, 0, 0, 0, 9}
	assert.Equal(t, bandKey(sig, 0, 4), bandKey(other, 0, 4), "rows 0-3 agree")
	assert.NotEqual(t, bandKey(sig, 1, 4), bandKey(other, 1, 4), "rows 4-7 differ")
	shifted := []uint32{0, 0, 0, 0, 1, 2, 3, 4}
	assert.NotEqual(t, bandKey(sig, 0, 4), bandKey(shifted, 1, 4), "band 1 holding band 0's rows")
	assert.NotEqual(t, bandKey(sig, 0, 2), bandKey(sig, 0, 3), "rows per band count")
	// Every row of a band counts.
	for i := range 4 {
		changed := append([]uint32(nil), sig...)
		changed[4+i]++
		assert.NotEqual(t, bandKey(sig, 1, 4), bandKey(changed, 1, 4), "row %d", 4+i)
	}
}

// TestDefaultBandsEdges checks DefaultBands at the edges of its threshold
// and of its 0.9 recall: 0 takes the default 0.8 (16 bands for 128
// permutations), 1 needs one band of every row (a pair at Jaccard 1
// agrees everywhere), and a candidate probability of exactly 0.9 is
// enough. For 9 permutations at this threshold, 1 band of 9 rows catches a
// pair with probability 0.15, 2 of 4 with 0.68, 3 of 3 with 0.9 exactly.
func TestDefaultBandsEdges(t *testing.T) {
	assert.Equal(t, 16, DefaultBands(128, 0))
	assert.Equal(t, 16, DefaultBands(128, 1.5))
	assert.Equal(t, 1, DefaultBands(128, 1))
	assert.Equal(t, 1, DefaultBands(-3, 0.8))
	const exact = 0.8122293494191408
	require.Equal(t, 0.9, LSHCandidateProbability(exact, 3, 3))
	assert.Less(t, LSHCandidateProbability(exact, 2, 4), 0.9)
	assert.Equal(t, 3, DefaultBands(9, exact))
	assert.Equal(t, 4, DefaultBands(9, math.Nextafter(exact, 0)), "just below: 4 bands of 2 rows")
}
