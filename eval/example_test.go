package eval_test

import (
	"fmt"

	"github.com/timeaware/timeaware/eval"
)

// Four Time Puzzles rows, three answered exactly: EM 0.75, and the 95%
// bootstrap interval of the mean of {0, 1, 1, 1} is [0.25, 1].
func ExampleSummarize() {
	var results []*eval.Result
	for i, em := range []float64{0, 1, 1, 1} {
		results = append(results, &eval.Result{
			Row: i, RequestID: fmt.Sprintf("p%d", i), DataSource: "timepuzzles",
			Score: em, Details: map[string]float64{"em": em},
		})
	}
	rep := eval.Summarize(results, eval.ReportOptions{Resamples: 20000, Seed: 3})
	iv := rep.DataSources["timepuzzles"].Metrics["em"]
	fmt.Printf("em %.2f [%.2f, %.2f]\n", iv.Mean, iv.CI95[0], iv.CI95[1])
	// Output: em 0.75 [0.25, 1.00]
}
