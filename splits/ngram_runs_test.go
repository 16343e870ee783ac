package splits

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNumberEnd: an ASCII number runs over digits and groups of one '.' or
// ',' followed by digits; a separator not followed by a digit ends it.
func TestNumberEnd(t *testing.T) {
	for _, tc := range []struct {
		text      string
		from, end int
	}{
		{"7", 0, 1},
		{"3.14x", 0, 4},
		{"1,000,000 people", 0, 9},
		{"1.2.3", 0, 5},
		{"12.", 0, 2},
		{"12. next", 0, 2},
		{"1.", 0, 1},
		{"1.5", 0, 3},
		{"1.9", 0, 3},
		{"2,9", 0, 3},
		{"7,a", 0, 1},
		{"12,3", 0, 4},
		{"in 1998,", 3, 7},
		{"a 10..5", 2, 4},
	} {
		assert.Equal(t, tc.end, numberEnd(tc.text, tc.from), "%q from %d", tc.text, tc.from)
	}
}

// TestWordRuns: the rolling keys of every run of k words are the keys of
// the runs hashed whole, in order, one per run; no run for k <= 0 or k
// more than the words; a run's key depends on its length, so that runs of
// different lengths never share a key by construction.
func TestWordRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := make([]Word, 12)
	for i := range words {
		words[i] = Word{Hash: rng.Uint64()}
	}
	for k := -1; k <= len(words)+1; k++ {
		var want []uint64
		for at := 0; k > 0 && at+k <= len(words); at++ {
			want = append(want, runKey(runHash(words[at:at+k]), k))
		}
		var got []uint64
		var ats []int
		eachWordRun(words, k, func(key uint64, at int) bool {
			got, ats = append(got, key), append(ats, at)
			return true
		})
		assert.Equal(t, want, got, "eachWordRun, k %d", k)
		for i, at := range ats {
			assert.Equal(t, i, at, "k %d", k)
		}
		assert.Equal(t, want, appendRunKeys(nil, words, k), "appendRunKeys, k %d", k)
		if k > 0 && k <= len(words) {
			assert.Len(t, want, len(words)-k+1, "k %d", k)
			last := len(words) - k
			assert.Equal(t, last, findRun(words, k, want[last]), "k %d", k)
		}
	}
	calls := 0
	eachWordRun(words, 3, func(uint64, int) bool { calls++; return calls < 4 })
	assert.Equal(t, 4, calls, "stops when f says so")
	assert.Equal(t, -1, findRun(words, 3, 12345))
	for k := 1; k < 6; k++ {
		h := rng.Uint64()
		assert.NotEqual(t, runKey(h, k), runKey(h, k+1), fmt.Sprint(k))
	}
	assert.Equal(t, uint64(1), ngramPow(0))
	base := uint64(ngramBase)
	assert.Equal(t, base*base, ngramPow(2))
}
