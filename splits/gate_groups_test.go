package splits

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckGroupsCaseFolded checks that groups compare case-insensitively
// as Unicode case folding (strings.EqualFold) has it, in both directions:
// names that fold together are one group, on both sides; names that only
// lower-case alike but do not fold together are two.
func TestCheckGroupsCaseFolded(t *testing.T) {
	for _, tc := range []struct {
		name, train, test string
		leak              bool
	}{
		{"ASCII case", "Tide Tracker", "TIDE tracker", true},
		{"Greek final sigma", "ΟΔΟΣ", "οδος", true},
		{"long s", "Claſs", "CLASS", true},
		{"Kelvin sign", "\u212Aelvin", "kelvin", true},
		{"dotted capital I and i with a combining dot", "İstanbul", "i\u0307stanbul", false},
		{"other names", "Tide Tracker", "Tide Tracking", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.leak, strings.EqualFold(tc.train, tc.test), "the definition")
			rows := gtClean(41, 20)
			gtFind(t, rows, "train_sc3_2").Group = tc.train
			gtFind(t, rows, "test_sc1_7").Group = tc.test
			if !tc.leak {
				rep := gtLeak(t, rows, gtOptions())
				assert.Equal(t, 8, rep.Splits[Train].Groups, "7 scenarios and the new name")
				assert.Equal(t, 4, rep.Splits[Test].Groups, "3 scenarios and the new name")
				return
			}
			rep := gtLeak(t, rows, gtOptions(), CheckGroupDisjoint)
			c := gtCheck(rep, CheckGroupDisjoint)
			assert.Equal(t, 1, c.Count)
			require.Len(t, c.Findings, 1)
			assert.Equal(t, `scenario "`+tc.train+`" is in train (train_sc3_2, pairs-train.parquet row 33) and test (test_sc1_7, pairs-test.parquet row 18)`,
				c.Findings[0].Message)
			assert.Equal(t, 8, rep.Splits[Train].Groups, "7 scenarios and the new name")
			assert.Equal(t, 4, rep.Splits[Test].Groups, "3 scenarios and the new name")
		})
	}
}

// TestFoldKey checks that foldKey gives two strings one key exactly when
// strings.EqualFold calls them equal, over random strings of letters with
// several cases each, and their variants in other cases.
func TestFoldKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 61))
	// Letters by their case classes (as written, not worked out by the
	// unicode package); strings.EqualFold decides.
	classes := [][]string{{"s", "S", "ſ"}, {"k", "K", "\u212A"}, {"σ", "ς", "Σ"}, {"i", "I"}, {"İ"}, {"ı"}, {"\u0307"},
		{"a", "A"}, {"ß", "ẞ"}, {"µ", "μ", "Μ"}, {" "}, {"\xff"}, {"\xfe"}}
	variants := func() (string, string) {
		var a, b strings.Builder
		for range 1 + rng.IntN(4) {
			c := classes[rng.IntN(len(classes))]
			a.WriteString(c[rng.IntN(len(c))])
			if rng.IntN(8) == 0 {
				c = classes[rng.IntN(len(classes))]
			}
			b.WriteString(c[rng.IntN(len(c))])
		}
		return a.String(), b.String()
	}
	same, differ := 0, 0
	for range 20000 {
		a, b := variants()
		fold := strings.EqualFold(a, b)
		require.Equal(t, fold, foldKey(a) == foldKey(b), "%q %q", a, b)
		if fold && a != b {
			same++
		}
		if !fold {
			differ++
		}
	}
	assert.Greater(t, same, 5000, "pairs equal under folding only")
	assert.Greater(t, differ, 5000, "pairs not equal under folding")
	assert.Equal(t, "", foldKey(""))
}

// TestCheckGroupsFirstRows checks that a group on both sides is named by
// its first row on each side, when the very first row of the input is one
// of them, on either side.
func TestCheckGroupsFirstRows(t *testing.T) {
	t.Run("train first", func(t *testing.T) {
		rows := gtClean(42, 20)
		gtFind(t, rows, "test_sc1_3").Group = "Train Scenario 0"
		rep := gtLeak(t, rows, gtOptions(), CheckGroupDisjoint)
		c := gtCheck(rep, CheckGroupDisjoint)
		require.Len(t, c.Findings, 1)
		assert.Equal(t, Finding{
			Message: `scenario "train scenario 0" is in train (train_sc0_0, pairs-train.parquet row 1) and test (test_sc1_3, pairs-test.parquet row 14)`,
			IDs:     []string{"train_sc0_0", "test_sc1_3"}, File: gtTrainFile, Row: 1,
		}, c.Findings[0])
	})
	t.Run("test first", func(t *testing.T) {
		rows := gtRows{
			{File: gtTestFile, Index: 1, ID: "t1", Group: "tides", Side: Test, Text: "a"},
			{File: gtTestFile, Index: 2, ID: "t2", Group: "tides", Side: Test, Text: "b"},
			{File: gtTrainFile, Index: 1, ID: "r1", Group: "trains", Side: Train, Text: "c"},
			{File: gtTrainFile, Index: 2, ID: "r2", Group: "Tides", Side: Train, Text: "d"},
			{File: gtTrainFile, Index: 3, ID: "r3", Group: "tides", Side: Train, Text: "e"},
		}
		opt := gtOptions()
		opt.Sensitivities = []string{}
		opt.TestFraction = 0
		rep := gtLeak(t, rows, opt, CheckGroupDisjoint)
		c := gtCheck(rep, CheckGroupDisjoint)
		assert.Equal(t, 1, c.Count)
		require.Len(t, c.Findings, 1)
		assert.Equal(t, Finding{
			Message: `scenario "Tides" is in train (r2, pairs-train.parquet row 2) and test (t1, pairs-test.parquet row 1)`,
			IDs:     []string{"r2", "t1"}, File: gtTestFile, Row: 1,
		}, c.Findings[0], "located at the test row, the first in input order")
		assert.Equal(t, 2, rep.Splits[Train].Groups)
		assert.Equal(t, 1, rep.Splits[Test].Groups)
	})
}
