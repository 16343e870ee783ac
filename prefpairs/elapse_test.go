package prefpairs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// voteWithElapse is one annotation line whose elapse is the literal lit.
func voteWithElapse(lit string) string {
	return `{"sample_id":"t1","elapse":` + lit + `,"annotator":"alice","survey":"1","choice":"tool"}`
}

// TestReadVotesElapseExact: an elapse is a level only when it is written as
// the digit 0, 1 or 2; every other spelling of a level (1.0, 2e0, -0), which
// only a float or a spreadsheet writes, is refused with the value the line
// gave, as are other numbers and a level as a string.
func TestReadVotesElapseExact(t *testing.T) {
	tests := []struct {
		lit  string
		want int // the level, or -1 for a refusal
	}{
		{"0", 0}, {"1", 1}, {"2", 2},
		{"-0", -1}, {"-0.0", -1}, {"0.000", -1}, {"0e5", -1}, {"1.0", -1}, {"2e0", -1}, {"2E+0", -1},
		{"0.2e1", -1}, {"20e-1", -1}, {"1.000000000000000000000", -1},
		{"9e-400", -1}, {"1.0000000000000000001", -1}, {"1.9999999999999999999", -1},
		{"3", -1}, {"-1", -1}, {"-2", -1}, {"12", -1}, {"10", -1}, {"0.5", -1}, {"1e400", -1},
		{`"1"`, -1}, {`"0"`, -1}, {"true", -1}, {"[1]", -1}, {`{"level":1}`, -1},
		{"1" + strings.Repeat("0", 60), -1},
	}
	for _, tc := range tests {
		t.Run(tc.lit, func(t *testing.T) {
			votes, err := ReadVotes(strings.NewReader(voteWithElapse(tc.lit)), "a.jsonl")
			if tc.want < 0 {
				require.EqualError(t, err, "a.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got "+voteClip([]byte(tc.lit), 40))
				return
			}
			require.NoError(t, err)
			require.Len(t, votes, 1)
			assert.Equal(t, tc.want, votes[0].Elapse)
		})
	}
	_, err := ReadVotes(strings.NewReader(voteWithElapse("null")), "a.jsonl")
	require.EqualError(t, err, "a.jsonl: line 1 (sample_id t1): elapse: missing")
}
