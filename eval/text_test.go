package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/rewards"
)

func TestReportText(t *testing.T) {
	rep := &Report{
		DataSources: map[string]*SourceReport{
			"timepuzzles": {N: 4, Rows: 2, Failed: 1, Order: []string{"em"},
				Metrics: map[string]Interval{"em": {Mean: 0.5, CI95: [2]float64{0, 1}}}},
			"tictoc/decision": {N: 3, Rows: 3, Skipped: 2, Order: []string{"nar", "tpr"},
				Metrics: map[string]Interval{"nar": {Mean: 2.0 / 3, CI95: [2]float64{0.25, 1}}, "tpr": {Mean: 1, CI95: [2]float64{1, 1}}},
				Groups: map[string]*SourceReport{
					"elapse=2": {N: 1, Order: []string{"nar"}, Metrics: map[string]Interval{"nar": {Mean: 1, CI95: [2]float64{1, 1}, OneClass: true}}},
					"elapse=0": {N: 2, Order: []string{"nar"}, Metrics: map[string]Interval{"nar": {Mean: 0.5, CI95: [2]float64{0, 1}}}},
				}},
		},
		Missing: 3,
		Notes:   []string{"a note"},
	}
	want := `tictoc/decision: 3 results of 3 rows, 2 skipped
  nar                0.6667  [0.2500, 1.0000]
  tpr                1.0000  [1.0000, 1.0000]
  elapse=0 (2 results)
    nar                0.5000  [0.0000, 1.0000]
  elapse=2 (1 results)
    nar                1.0000* [1.0000, 1.0000]
  * one class only: NAR is that class's rate (TPR or TNR) alone

timepuzzles: 4 results of 2 rows, 1 failed
  em                 0.5000  [0.0000, 1.0000]

3 results did not finish.
note: a note
`
	assert.Equal(t, want, rep.Text())
	assert.Equal(t, "", (&Report{}).Text())
}

func TestComparisonText(t *testing.T) {
	cmp := &Comparison{
		DataSources: map[string]*SourceComparison{
			"traveler": {Rows: 5, OnlyA: 1, Order: []string{"acc"},
				Metrics: map[string]Difference{"acc": {A: 0.2, B: 0.6, Diff: 0.4, CI95: [2]float64{0.1, 0.7}}}},
			"timepuzzles": {Rows: 2, Order: []string{"em"},
				Metrics: map[string]Difference{"em": {A: 1, B: 0.5, Diff: -0.5, CI95: [2]float64{-1, 0}}}},
		},
		OnlyB: []string{"negotiation"},
	}
	want := `A: a.jsonl
B: b.jsonl
left out: data sources only in A [], only in B [negotiation]

timepuzzles: 2 rows in both
  metric                  A        B    B − A  95% interval
  em                 1.0000   0.5000  -0.5000  [-1.0000, 0.0000]

traveler: 5 rows in both (1 only in A, 0 only in B, left out)
  metric                  A        B    B − A  95% interval
  acc                0.2000   0.6000   0.4000  [0.1000, 0.7000]
`
	assert.Equal(t, want, cmp.Text("a.jsonl", "b.jsonl"))
}

// narItems: two prefer-tool items (one calls a tool) at high sensitivity,
// one prefer-direct item answered directly at low, one without the field.
const narItems = `{"solution_str":"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>","ground_truth":{"preferred":"tool"},"extra_info":{"sensitivity":"high"}}
{"solution_str":"It is 3.","ground_truth":{"preferred":"tool"},"extra_info":{"sensitivity":"high"}}
{"solution_str":"It is 3.","ground_truth":{"preferred":"direct"},"extra_info":{"sensitivity":"low"}}
{"solution_str":"It is 3.","ground_truth":{"preferred":"direct"}}
`

func TestNAR(t *testing.T) {
	cfg := rewards.DefaultConfig()
	rep, err := NAR(NAROptions{Input: "-", Stdin: strings.NewReader(narItems), By: []string{"sensitivity"}, Rewards: cfg})
	require.NoError(t, err)
	assert.Equal(t, "stdin", rep.Input)
	o := rep.Overall
	assert.Equal(t, [5]int{4, 1, 1, 2, 0}, [5]int{o.Samples, o.TP, o.FN, o.TN, o.FP})
	assert.InDelta(t, 0.75, o.NAR, 1e-12) // ½(1/2 + 2/2)
	want := `eval nar: 4 samples from stdin (2 prefer-tool, 2 prefer-direct)

group                  samples     TP    FN    TN    FP      NAR      TPR     TNR  attempt  a.tool a.direct
overall                      4      1     1     2     0    75.0%    50.0%  100.0%    25.0%   50.0%     0.0%

sensitivity=high             2      1     1     0     0    50.0%*   50.0%       -    50.0%   50.0%        -
sensitivity=low              1      0     0     1     0   100.0%*       -  100.0%     0.0%       -     0.0%
sensitivity=(missing)        1      0     0     1     0   100.0%*       -  100.0%     0.0%       -     0.0%

* one class has no samples: NAR is the other class's rate alone.
`
	assert.Equal(t, want, rep.Text())

	path := filepath.Join(t.TempDir(), "items.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(narItems), 0o644))
	rep, err = NAR(NAROptions{Input: path, Rewards: cfg})
	require.NoError(t, err)
	assert.Equal(t, path, rep.Input)
	assert.Empty(t, rep.Groups)
	assert.NotContains(t, rep.Text(), "*", "both classes overall")

	_, err = NAR(NAROptions{Input: "-", Stdin: strings.NewReader(""), Rewards: cfg})
	assert.ErrorIs(t, err, dataset.ErrNoRecords)
	assert.EqualError(t, err, "eval: -: no records")
	_, err = NAR(NAROptions{Input: filepath.Join(t.TempDir(), "absent.jsonl"), Rewards: cfg})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Input", oe.Option)
	_, err = NAR(NAROptions{Input: "-", Stdin: strings.NewReader("{oops\n"), Rewards: cfg})
	assert.ErrorContains(t, err, "stdin: line 1: invalid JSON at byte 2")
	bad := rewards.DefaultConfig()
	bad.TicToc.ToolCallPatterns = []string{"("}
	_, err = NAR(NAROptions{Input: "-", Stdin: strings.NewReader(narItems), Rewards: bad})
	assert.ErrorAs(t, err, new(*rewards.ConfigError))
}
