package splits

// White-box tests of how the gate handles 64-bit hash collisions, which
// no test can find between real ids or names: pass 1 groups rows by
// hashes, and pass 2 drops the pairs whose rows turn out to differ,
// correcting a check's count when every pair it had was named.

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gcGate returns a gate whose pass 1 saw n train rows whose ids all hash
// alike, and whose pass 2 read ids[seq] for the rows the findings name.
func gcGate(t *testing.T, maxFindings int, ids []string) *gate {
	t.Helper()
	opt := DefaultGateOptions()
	opt.MaxFindings = maxFindings
	opt, err := resolveGateOptions(opt)
	require.NoError(t, err)
	g := &gate{opt: opt}
	g.init()
	for seq := range ids {
		g.keys = append(g.keys, gateKey{id: 42, seq: uint32(seq), side: sideTrain, flags: keyHasID})
	}
	g.analyse()
	for seq := range g.wanted {
		g.wanted[seq] = &gateRef{id: ids[seq], file: "f.jsonl", row: int(seq) + 1}
	}
	return g
}

func TestGateHashCollisionsInRepeats(t *testing.T) {
	ids := func(x, y int) []string {
		var out []string
		for range x {
			out = append(out, "x")
		}
		for range y {
			out = append(out, "y")
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		maxFindings int
		ids         []string
		named       int // pairs kept to name: MaxFindings + 8, or all
		count       int
		findings    int
	}{
		// 4 x then 5 y: 8 pairs with the first x, all named; the 5 with
		// a y are collisions and come off the count.
		{"all named", 2, ids(4, 5), 8, 3, 2},
		// 10 pairs, as many as are named: still corrected.
		{"as many as named", 2, ids(6, 5), 10, 5, 2},
		// 11 pairs, one more than named: the count stays as pass 1 had it.
		{"more than named", 2, ids(6, 6), 10, 11, 2},
		{"every pair named when findings are unbounded", -1, ids(6, 6), 11, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gcGate(t, tc.maxFindings, tc.ids)
			assert.Equal(t, len(tc.ids)-1, g.idCount)
			assert.Len(t, g.seqPairs, tc.named)
			assert.Len(t, g.wanted, tc.named+1)
			c := g.checkRepeats(CheckDuplicateIDs, g.idCount)
			assert.Equal(t, tc.count, c.Count)
			require.Len(t, c.Findings, tc.findings)
			for i, f := range c.Findings {
				assert.Equal(t, fmt.Sprintf("id x is at f.jsonl row 1 and again at f.jsonl row %d", i+2), f.Message)
			}
			assert.Equal(t, StatusFail, c.Status)
		})
	}
	// Every pair a collision: the check passes.
	g := gcGate(t, 20, []string{"a", "b", "c"})
	c := g.checkRepeats(CheckDuplicateIDs, g.idCount)
	assert.Equal(t, CheckResult{Name: CheckDuplicateIDs, Status: StatusPass, Summary: "no id appears twice"}, c)
}

// TestGateHashCollisionsInGroups checks that two group names whose keys
// collide but which differ are not reported, and the count is corrected.
func TestGateHashCollisionsInGroups(t *testing.T) {
	opt, err := resolveGateOptions(DefaultGateOptions())
	require.NoError(t, err)
	g := &gate{opt: opt}
	g.init()
	g.keys = []gateKey{
		{group: 7, seq: 0, side: sideTrain, flags: keyHasGroup},
		{group: 7, seq: 1, side: sideTest, flags: keyHasGroup},
		{group: 9, seq: 2, side: sideTest, flags: keyHasGroup},
		{group: 9, seq: 3, side: sideTrain, flags: keyHasGroup},
	}
	g.analyse()
	require.Equal(t, 2, g.groupCount)
	names := []string{"Tides", "Trains", "Clocks", "CLOCKS"}
	for seq := range g.wanted {
		g.wanted[seq] = &gateRef{id: fmt.Sprintf("r%d", seq), file: "f.jsonl", row: int(seq) + 1}
		g.groupNames[seq] = names[seq]
	}
	rep := &Report{Splits: map[string]*SplitStats{Train: {Groups: 2}, Test: {Groups: 2}}}
	c := g.checkGroups(rep)
	assert.Equal(t, 1, c.Count)
	require.Len(t, c.Findings, 1)
	// The test row came first: the finding is located there.
	assert.Equal(t, Finding{Message: `group "CLOCKS" is in train (r3, f.jsonl row 4) and test (r2, f.jsonl row 3)`,
		IDs: []string{"r3", "r2"}, File: "f.jsonl", Row: 3}, c.Findings[0])
	assert.Equal(t, "1 group appears in both splits", c.Summary)
}
