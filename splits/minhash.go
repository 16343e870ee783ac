package splits

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultMinHashSeed seeds the MinHash permutations when GateOptions.Seed
// is 0, so that signatures, and hence reports, are the same on every run.
const DefaultMinHashSeed uint64 = 0x74696d6561776172 // "timeawar"

// FNV-1a, 64 bit.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// mix64 is the MurmurHash3 finaliser: it spreads every input bit over the
// whole word, which the multiply-add permutations rely on (they rank
// values by their high bits).
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Fingerprint returns the 64-bit hash (FNV-1a) of Normalize(text), which
// the gate uses to find exact duplicates.
func Fingerprint(text string) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range appendNormalized(nil, text) {
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h
}

// hashWords hashes the normalised text norm: the FNV-1a hash of all of it
// (the fingerprint) and one hash per space-separated word, appended to
// words.
func hashWords(norm []byte, words []uint64) (uint64, []uint64) {
	fp := uint64(fnvOffset64)
	w := uint64(fnvOffset64)
	inWord := false
	for _, c := range norm {
		fp = (fp ^ uint64(c)) * fnvPrime64
		if c == ' ' {
			if inWord {
				words = append(words, w)
			}
			w, inWord = fnvOffset64, false
			continue
		}
		w = (w ^ uint64(c)) * fnvPrime64
		inWord = true
	}
	if inWord {
		words = append(words, w)
	}
	return fp, words
}

// appendShingles appends the hashes of the k-word shingles of a word-hash
// sequence: one per run of k consecutive words, or one of all the words
// when there are fewer than k (none when there are no words).
func appendShingles(dst, words []uint64, k int) []uint64 {
	if len(words) == 0 {
		return dst
	}
	if k < 1 {
		k = 1
	}
	if len(words) < k {
		k = len(words)
	}
	for i := 0; i+k <= len(words); i++ {
		h := uint64(k) * 0x9e3779b97f4a7c15
		for _, w := range words[i : i+k] {
			h = (h ^ w) * 0x100000001b3
			h ^= h >> 29
		}
		dst = append(dst, mix64(h))
	}
	return dst
}

// Shingles returns the hashes of the word shingles of Normalize(text): one
// per run of k consecutive words, or a single one of all the words when the
// text has fewer than k. An empty text has none. The result may contain
// repeats (a text that repeats itself); MinHash ignores them.
func Shingles(text string, k int) []uint64 {
	_, words := hashWords(appendNormalized(nil, text), nil)
	return appendShingles(nil, words, k)
}

// MinHasher computes MinHash signatures of shingle sets: signature element
// i is the high 32 bits of min over x of a_i·x + b_i (mod 2^64), with odd
// a_i and any b_i drawn from a PCG generator seeded by the seed. The
// probability that two sets agree in an element is (very nearly) their
// Jaccard similarity.
//
// A MinHasher is read-only after construction and safe for concurrent use.
type MinHasher struct {
	a, b []uint64
}

// NewMinHasher returns a MinHasher with the given number of permutations
// (at least 1).
func NewMinHasher(permutations int, seed uint64) (*MinHasher, error) {
	if permutations < 1 {
		return nil, fmt.Errorf("splits: MinHash needs at least 1 permutation, not %d", permutations)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := &MinHasher{a: make([]uint64, permutations), b: make([]uint64, permutations)}
	for i := range m.a {
		m.a[i] = rng.Uint64() | 1
		m.b[i] = rng.Uint64()
	}
	return m, nil
}

// Permutations returns the signature length.
func (m *MinHasher) Permutations() int { return len(m.a) }

// Signature writes the signature of the shingle hashes to dst (grown to
// Permutations() elements) and returns it. An empty set gets all ones,
// which no set of shingles is expected to match: the gate never compares
// empty texts.
func (m *MinHasher) Signature(shingles []uint64, dst []uint32) []uint32 {
	n := len(m.a)
	if cap(dst) < n {
		dst = make([]uint32, n)
	}
	dst = dst[:n]
	a, b := m.a, m.b
	i := 0
	// Eight permutations at a time: independent min chains keep the
	// multiplier busy.
	for ; i+8 <= n; i += 8 {
		a, b := a[i:i+8:i+8], b[i:i+8:i+8]
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		m4, m5, m6, m7 := m0, m0, m0, m0
		for _, x := range shingles {
			m0 = min(m0, a[0]*x+b[0])
			m1 = min(m1, a[1]*x+b[1])
			m2 = min(m2, a[2]*x+b[2])
			m3 = min(m3, a[3]*x+b[3])
			m4 = min(m4, a[4]*x+b[4])
			m5 = min(m5, a[5]*x+b[5])
			m6 = min(m6, a[6]*x+b[6])
			m7 = min(m7, a[7]*x+b[7])
		}
		d := dst[i : i+8 : i+8]
		d[0], d[1], d[2], d[3] = uint32(m0>>32), uint32(m1>>32), uint32(m2>>32), uint32(m3>>32)
		d[4], d[5], d[6], d[7] = uint32(m4>>32), uint32(m5>>32), uint32(m6>>32), uint32(m7>>32)
	}
	for ; i < n; i++ {
		mi := uint64(math.MaxUint64)
		for _, x := range shingles {
			mi = min(mi, a[i]*x+b[i])
		}
		dst[i] = uint32(mi >> 32)
	}
	return dst
}

// EstimateJaccard returns the share of positions in which two signatures of
// the same MinHasher agree: an estimate of the Jaccard similarity of the
// two shingle sets. Signatures of different lengths compare over the
// shorter one.
func EstimateJaccard(a, b []uint32) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	return float64(agreements(a[:n], b[:n])) / float64(n)
}

// agreements counts the positions in which a and b (of equal length) agree.
func agreements(a, b []uint32) int {
	b = b[:len(a)]
	same := 0
	for i, v := range a {
		if v == b[i] {
			same++
		}
	}
	return same
}

// bandKey hashes rows [band·r, band·r+r) of a signature together with the
// band number: two signatures share a bucket in a band when the keys are
// equal.
func bandKey(sig []uint32, band, r int) uint64 {
	h := uint64(band+1) * 0x9e3779b97f4a7c15
	for _, v := range sig[band*r : band*r+r] {
		h = (h ^ uint64(v)) * 0x100000001b3
		h ^= h >> 31
	}
	return mix64(h)
}

// LSHCandidateProbability is the chance that two sets with Jaccard
// similarity s share at least one of b bands of r rows: 1 − (1 − s^r)^b.
func LSHCandidateProbability(s float64, bands, rows int) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(rows)), float64(bands))
}

// minLSHRecall is the candidate probability at the near-duplicate
// threshold that DefaultBands asks for.
const minLSHRecall = 0.9

// DefaultBands returns the LSH band count for a signature length and a
// Jaccard threshold: the fewest bands b of r = permutations/b rows (so the
// longest, most selective bands) that still make a pair right at the
// threshold a candidate with probability at least 0.9. When b does not
// divide the signature length, the b·r banded positions are a prefix and
// the rest only count when candidates are verified. The S-curve midpoint (1/b)^(1/r) then sits
// below the threshold; for 128 permutations and 0.8 it gives 16 bands of 8
// rows (midpoint ≈ 0.707, ≈ 95% of pairs at 0.8 and 99.4% at 0.85 become
// candidates), which are then verified against the threshold.
//
// A threshold outside (0, 1] (such as a negative one that disables the
// near-duplicate check) is taken as the default 0.8.
func DefaultBands(permutations int, threshold float64) int {
	if permutations < 1 {
		return 1
	}
	if !(threshold > 0 && threshold <= 1) {
		threshold = DefaultNearDuplicateThreshold
	}
	for r := permutations; r >= 1; r-- {
		b := permutations / r
		if LSHCandidateProbability(threshold, b, r) >= minLSHRecall {
			return b
		}
	}
	return permutations
}
