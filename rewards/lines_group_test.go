package rewards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// groupLine is a JSONL item of length/kimi, right or wrong, of n tokens,
// in group g of size k.
func groupLine(g string, k int, ok bool, n int) string {
	ans := "41"
	if ok {
		ans = "42"
	}
	return fmt.Sprintf(`{"data_source":"length/kimi","solution_str":"<think>Add.</think><answer>%s</answer>","ground_truth":"42","extra_info":{"response_tokens":%d},"group":%q,"group_size":%d}`, ans, n, g, k)
}

// TestScoreLinesScoresGroupsTogether: the members of a group are scored
// together once the last is read, whatever lines come between, and every
// result is written in input order; a group short of members at the end
// fails each member, counted and named.
func TestScoreLinesScoresGroupsTogether(t *testing.T) {
	lines := []string{
		groupLine("g", 4, true, 100),
		groupLine("g", 4, false, 200),
		`{"data_source":"length/thinkprune","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"response_tokens":9}}`,
		groupLine("h", 3, true, 100),
		groupLine("g", 4, true, 300),
		groupLine("g", 4, false, 500),
		groupLine("h", 3, false, 200),
	}
	var out bytes.Buffer
	sum, err := newTestScorer(t, nil).ScoreLines(context.Background(), nil, strings.NewReader(strings.Join(lines, "\n")+"\n"), "in.jsonl", &out, LinesOptions{})
	require.NoError(t, err)
	results := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, results, len(lines))
	score := func(i int) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(results[i]), &m))
		return m
	}
	// Kimi over lengths 100 to 500 (see TestKimiByHand): 1.5, 0, 1, −0.5.
	for i, want := range map[int]float64{0: 1.5, 1: 0, 2: 1, 4: 1, 5: -0.5} {
		assert.InDelta(t, want, score(i)["score"], 1e-12, "line %d", i+1)
		assert.NotContains(t, score(i), "error")
	}
	assert.Equal(t, 4.0, score(0)["group_size"])
	for _, i := range []int{3, 6} {
		assert.Equal(t, `group "h": group_size: 2 of its 3 members are given: a group is scored whole, its members together`, score(i)["error"])
	}
	assert.Equal(t, 7, sum.Items)
	assert.Equal(t, 2, sum.Failed)
	assert.Equal(t, []string{`line 4: group "h": group_size: 2 of its 3 members are given: a group is scored whole, its members together`,
		`line 7: group "h": group_size: 2 of its 3 members are given: a group is scored whole, its members together`}, sum.FirstErrors)
}

// TestScoreLinesBoundsAGroupsWait: a group whose members lie more than
// maxPendingLines apart stops the run, naming it, instead of holding an
// unbounded stream back.
func TestScoreLinesBoundsAGroupsWait(t *testing.T) {
	var b strings.Builder
	b.WriteString(groupLine("far", 2, true, 100) + "\n")
	other := `{"data_source":"length/thinkprune","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"response_tokens":9}}` + "\n"
	for range maxPendingLines {
		b.WriteString(other)
	}
	_, err := newTestScorer(t, nil).ScoreLines(context.Background(), nil, strings.NewReader(b.String()), "in.jsonl", &bytes.Buffer{}, LinesOptions{})
	assert.EqualError(t, err, fmt.Sprintf(`in.jsonl: line %d: group "far" of line 1 waits on more than %d lines: write a group's lines together`, maxPendingLines+1, maxPendingLines))
}

// TestScoreLinesTakesKeysAgainAndGroupsOfOne: a key a later step uses
// again names a new group once the first is whole, as in a rollout log of
// several steps; an item of a group of one needs no key.
func TestScoreLinesTakesKeysAgainAndGroupsOfOne(t *testing.T) {
	lines := []string{
		groupLine("g", 2, true, 100), groupLine("g", 2, false, 300), // step 1
		groupLine("g", 2, false, 100), groupLine("g", 2, true, 300), // step 2
		`{"data_source":"length/kimi","solution_str":"<answer>42</answer>","ground_truth":"42","extra_info":{"response_tokens":9},"group_size":1}`,
	}
	var out bytes.Buffer
	sum, err := newTestScorer(t, nil).ScoreLines(context.Background(), nil, strings.NewReader(strings.Join(lines, "\n")+"\n"), "log.jsonl", &out, LinesOptions{})
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Failed, "%v", sum.FirstErrors)
	var scores []float64
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		scores = append(scores, m["score"].(float64))
	}
	// λ = 0.5, −0.5 in each step: right short 1.5, wrong long −0.5; wrong
	// short 0, right long 0.5; the group of one 1.
	assert.Equal(t, []float64{1.5, -0.5, 0, 0.5, 1}, scores)
}
