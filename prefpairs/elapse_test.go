package prefpairs

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// voteWithElapse is one annotation line whose elapse is the literal lit.
func voteWithElapse(lit string) string {
	return `{"sample_id":"t1","elapse":` + lit + `,"annotator":"alice","survey":"1","choice":"tool"}`
}

// TestReadVotesElapseExact: an elapse is a level only when the number as
// written equals 0, 1 or 2 exactly; one that a float64 would round to a level
// is refused with the value the line gave.
func TestReadVotesElapseExact(t *testing.T) {
	tests := []struct {
		lit  string
		want int // the level, or -1 for a refusal
	}{
		{"0", 0}, {"1", 1}, {"2", 2},
		{"-0", 0}, {"-0.0", 0}, {"0.000", 0}, {"0e5", 0}, {"0E-999999999999999999999", 0}, {"-0e+3", 0},
		{"1.0", 1}, {"1.000000000000000000000", 1}, {"2e0", 2}, {"2E+0", 2}, {"2e-0", 2}, {"2e000", 2},
		{"0.2e1", 2}, {"0.1E+1", 1}, {"20e-1", 2}, {"10E-1", 1}, {"200.00e-2", 2}, {"0.0001e4", 1},
		{"0.00020e4", 2},
		// Values a float64 rounds to a level.
		{"9e-400", -1}, {"-9e-400", -1}, {"1e-324", -1}, {"1.0000000000000000001", -1},
		{"1.9999999999999999999", -1}, {"2.0000000000000000001", -1}, {"0.99999999999999999999", -1},
		{"1" + strings.Repeat("0", 40) + "1e-41", -1},
		// Whole numbers outside 0..2 and other fractions.
		{"3", -1}, {"-1", -1}, {"-2", -1}, {"-1.0", -1}, {"12", -1}, {"21", -1}, {"11", -1},
		{"1e1", -1}, {"2e1", -1}, {"1e-1", -1}, {"0.2", -1}, {"0.1", -1}, {"0.5", -1}, {"1.5", -1},
		{"10", -1}, {"20", -1}, {"100e-1", -1}, {"0.02e1", -1}, {"0.01e2", 1}, {"0.01e1", -1},
		{"3e0", -1}, {"1e9223372036854775807", -1}, {"1e-9223372036854775808", -1},
		{"1e9223372036854775808", -1}, {"2e-9223372036854775809", -1}, {"1e400", -1},
	}
	for _, tc := range tests {
		t.Run(tc.lit, func(t *testing.T) {
			votes, err := ReadVotes(strings.NewReader(voteWithElapse(tc.lit)), "a.jsonl")
			if tc.want < 0 {
				require.EqualError(t, err, "a.jsonl: line 1 (sample_id t1): elapse: want an integer 0..2, got "+voteClip([]byte(tc.lit), 40))
				return
			}
			require.NoError(t, err)
			require.Len(t, votes, 1)
			assert.Equal(t, tc.want, votes[0].Elapse)
		})
	}
}

// TestReadVotesElapseRational checks ReadVotes against exact rational
// arithmetic on random number literals near the levels: a literal is
// accepted exactly when its value is 0, 1 or 2.
func TestReadVotesElapseRational(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 4))
	digits := func(n int, zeroBias bool) string {
		var b strings.Builder
		for range n {
			if zeroBias && rng.IntN(3) > 0 {
				b.WriteByte('0')
			} else {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		return b.String()
	}
	accepted := 0
	for range 20000 {
		var lit strings.Builder
		if rng.IntN(4) == 0 {
			lit.WriteByte('-')
		}
		// A JSON integer part: 0, or digits without a leading zero.
		if rng.IntN(3) == 0 {
			lit.WriteByte('0')
		} else {
			lit.WriteByte(byte('1' + rng.IntN(3)))
			lit.WriteString(digits(rng.IntN(4), true))
		}
		if rng.IntN(2) == 0 {
			lit.WriteByte('.')
			lit.WriteString(digits(1+rng.IntN(25), true))
		}
		if rng.IntN(2) == 0 {
			lit.WriteString([]string{"e", "E"}[rng.IntN(2)])
			lit.WriteString([]string{"", "+", "-"}[rng.IntN(3)])
			lit.WriteString(fmt.Sprint(rng.IntN(30)))
		}
		s := lit.String()
		var r big.Rat
		_, ok := r.SetString(s)
		require.True(t, ok, "oracle cannot read %s", s)
		want := -1
		for k := range 3 {
			if r.Cmp(big.NewRat(int64(k), 1)) == 0 {
				want = k
			}
		}
		votes, err := ReadVotes(strings.NewReader(voteWithElapse(s)), "a.jsonl")
		if want < 0 {
			require.Error(t, err, "elapse %s", s)
			continue
		}
		accepted++
		require.NoError(t, err, "elapse %s", s)
		require.Equal(t, want, votes[0].Elapse, "elapse %s", s)
	}
	assert.Greater(t, accepted, 1000, "the literals should often be levels")
}
