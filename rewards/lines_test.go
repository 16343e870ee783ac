package rewards

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rollout log scored by each line's own data source: every line gets
// its own reward's keys, and a line that carries the reward a run logged
// gets it back with whether it changed. The expected results are worked
// by hand: a Time Puzzles answer is 1 when its date is the ground truth's,
// 0 otherwise; tictoc/decision is 1 when the response's kind agrees.
func TestScoreLinesByRowComparesLoggedRewards(t *testing.T) {
	s := newTestScorer(t, func(c *Config) { c.FallbackScore = -0.5 })
	puzzle := func(answer, logged string) string {
		return `{"data_source":"timepuzzles","solution_str":"MY ANSWER: ` + answer + `","ground_truth":"2023-08-15","reward":` + logged + `}`
	}
	in := strings.Join([]string{
		puzzle("2023-08-15", "1"),            // 1: same
		puzzle("2023-08-15", "0"),            // 2: 0 -> 1
		puzzle("1999-01-01", "null"),         // 3: unscored then, 0 now
		puzzle("2023-08-15", "1.0000000001"), // 4: within the tolerance
		bItem(t, bDirect, `"direct"`),        // 5: another data source, no logged reward
		`{"data_source":"nosuch","solution_str":"x","ground_truth":"y","reward":0.5}`,  // 6: scored then, not now
		`{"solution_str":"x","ground_truth":"y"}`,                                      // 7: no data source
		`{"data_source":"nosuch","solution_str":"x","ground_truth":"y","reward":null}`, // 8: unscored then and now
	}, "\n") + "\n"
	var out bytes.Buffer
	sum, err := s.ScoreLines(context.Background(), nil, strings.NewReader(in), "log.jsonl", &out, LinesOptions{})
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, got, 8)
	right := `{"score":1,"em":1,"f1":1,"jaccard":1,"parsed":1,"n_pred":1,"n_gold":1,`
	assert.Equal(t, right+`"logged_reward":1,"changed":false}`, got[0])
	assert.Equal(t, right+`"logged_reward":0,"changed":true}`, got[1])
	assert.Equal(t, `{"score":0,"em":0,"f1":0,"jaccard":0,"parsed":1,"n_pred":1,"n_gold":1,"logged_reward":null,"changed":true}`, got[2])
	assert.Equal(t, right+`"logged_reward":1.0000000001,"changed":false}`, got[3])
	assert.Equal(t, `{"score":1,"called_tool":0,"preferred_tool":0,"agree":1,"margin":0}`, got[4])
	assert.Equal(t, `{"score":-0.5,"error":"data_source: \"nosuch\" is not a registered reward","logged_reward":0.5,"changed":true}`, got[5])
	assert.Equal(t, `{"score":-0.5,"error":"data_source: missing; scoring by each item's own data source needs it (or pass the reward to apply)"}`, got[6])
	assert.Equal(t, `{"score":-0.5,"error":"data_source: \"nosuch\" is not a registered reward","logged_reward":null,"changed":false}`, got[7])

	assert.Equal(t, 8, sum.Items)
	assert.Equal(t, 2, sum.Failed, "lines 6 and 7; line 8 was unscored then too")
	require.Len(t, sum.FirstErrors, 2)
	assert.True(t, strings.HasPrefix(sum.FirstErrors[0], "line 6: "), sum.FirstErrors)
	assert.True(t, strings.HasPrefix(sum.FirstErrors[1], "line 7: "), sum.FirstErrors)
	assert.Equal(t, 1, sum.Unscored)
	assert.Equal(t, 6, sum.Logged)
	assert.Equal(t, 3, sum.Changed)
	assert.Equal(t, []string{
		"line 2 (timepuzzles): 0 -> 1",
		"line 3 (timepuzzles): unscored -> 0",
		`line 6 (nosuch): 0.5 -> unscored`,
	}, sum.FirstChanges)
}

// The change tolerance is exclusive (a reward 1e-9 from the logged one is
// the same), and the summary names the first three changes only.
func TestScoreLinesChangeBoundaryAndFirstThree(t *testing.T) {
	s := newTestScorer(t, nil)
	wrong := `{"data_source":"timepuzzles","solution_str":"MY ANSWER: 1999-01-01","ground_truth":"2023-08-15","reward":`
	in := wrong + "1e-9}\n" + strings.Repeat(wrong+"1}\n", 4)
	var out bytes.Buffer
	sum, err := s.ScoreLines(context.Background(), nil, strings.NewReader(in), "log", &out, LinesOptions{})
	require.NoError(t, err)
	assert.Contains(t, strings.SplitN(out.String(), "\n", 2)[0], `"logged_reward":1e-09,"changed":false}`)
	assert.Equal(t, 5, sum.Logged)
	assert.Equal(t, 4, sum.Changed)
	assert.Equal(t, []string{"line 2 (timepuzzles): 1 -> 0", "line 3 (timepuzzles): 1 -> 0", "line 4 (timepuzzles): 1 -> 0"},
		sum.FirstChanges)
}

// With a reward named, a line of another data source is not compared: it
// was left out on purpose, not changed.
func TestScoreLinesWithARewardLeavesOtherSourcesUncompared(t *testing.T) {
	s := newTestScorer(t, nil)
	in := `{"data_source":"traveler","solution_str":"x","ground_truth":"y","reward":0.5}` + "\n" +
		`{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15","reward":null}` + "\n"
	var out bytes.Buffer
	sum, err := s.ScoreLines(context.Background(), TimePuzzles, strings.NewReader(in), "log", &out, LinesOptions{})
	require.NoError(t, err)
	first, _, _ := strings.Cut(out.String(), "\n")
	assert.NotContains(t, first, "logged_reward")
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, 0, sum.Unscored)
	assert.Equal(t, 1, sum.Logged)
	assert.Equal(t, 1, sum.Changed)
}

// With a reward named, a logged reward is compared the same way, and a
// logged value that is not a number stops the run naming its line.
func TestScoreLinesLoggedRewardErrors(t *testing.T) {
	s := newTestScorer(t, nil)
	item := `{"data_source":"timepuzzles","solution_str":"MY ANSWER: 2023-08-15","ground_truth":"2023-08-15"`
	var out bytes.Buffer
	sum, err := s.ScoreLines(context.Background(), TimePuzzles, strings.NewReader(item+`,"reward":0.25}`+"\n"), "in", &out, LinesOptions{})
	require.NoError(t, err)
	assert.Equal(t, `{"score":1,"em":1,"f1":1,"jaccard":1,"parsed":1,"n_pred":1,"n_gold":1,"logged_reward":0.25,"changed":true}`+"\n", out.String())
	assert.Equal(t, []string{"line 1 (timepuzzles): 0.25 -> 1"}, sum.FirstChanges)

	for _, bad := range []string{`"1"`, `true`, `{}`, `[1]`} {
		out.Reset()
		_, err := s.ScoreLines(context.Background(), nil, strings.NewReader(item+"}\n"+item+`,"reward":`+bad+"}\n"), "log.jsonl", &out, LinesOptions{})
		require.Error(t, err, bad)
		assert.Equal(t, "log.jsonl: line 2: reward: want the logged reward, a number or null", err.Error(), bad)
	}
}
