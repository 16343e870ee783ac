package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClosestOnlyWhatIsClose: suggestions come within a small edit
// distance, swaps of neighbours counting once; far names get none.
func TestClosestOnlyWhatIsClose(t *testing.T) {
	keys := []string{"input", "inputs", "out", "seed", "shard", "split", "test-fraction"}
	tests := []struct {
		typed string
		want  []string
	}{
		{"inptu", []string{"input"}},
		{"ouptut", nil},
		{"otu", []string{"out"}},
		{"sede", []string{"seed"}},
		{"test-fractoin", []string{"test-fraction"}},
		{"test", []string{"test-fraction"}},  // a prefix
		{"inp", []string{"input", "inputs"}}, // prefixes, when nothing is an edit away
		{"spli", []string{"split"}},          // an edit away beats a prefix (shard is not one)
		{"spilt", []string{"split"}},
		{"foo", nil},
		{"input", []string{"inputs"}}, // the candidate equal to what was typed is not suggested
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Closest(tt.typed, keys), tt.typed)
	}
	assert.Equal(t, 1, Distance("inptu", "input"))
	assert.Equal(t, 1, Distance("ab", "ba"))
	assert.Equal(t, 3, Distance("kitten", "sitting"))
	assert.Equal(t, 0, Distance("", ""))
	assert.Equal(t, 4, Distance("", "abcd"))
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "abd", 1}, {"abc", "ab", 1}, {"kitten", "sitting", 3}, {"", "xyz", 3}} {
		assert.Equal(t, tc.d, Distance(tc.a, tc.b), "%s %s", tc.a, tc.b)
		assert.Equal(t, tc.d, Distance(tc.b, tc.a), "%s %s", tc.b, tc.a)
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"input", "inputs", "out"}
	assert.Equal(t, "; did you mean --input?", DidYouMean("inptu", names, func(s string) string { return "--" + s }))
	assert.Equal(t, "; did you mean input or inputs?", DidYouMean("inp", names, func(s string) string { return s }))
	assert.Equal(t, "", DidYouMean("zzz", names, func(s string) string { return s }))
}
