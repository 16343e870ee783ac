package budget_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/synth/budget"
)

// A general task with a measured baseline gets a budget of multiplier ×
// baseline; the user turn ends with the budget, which the row also carries
// as extra_info.time_limit_s and hands the get_duration timer.
func ExampleBuild() {
	tasks := `{"id": "trip", "question": "A train leaves at 14:10 and arrives at 16:45. How many minutes is the trip?", "answer": 155, "baseline_seconds": 9.2}`
	opt := budget.DefaultOptions(budget.FamilyGeneral)
	opt.Seed = 1
	opt.Multipliers = []float64{2}
	opt.NoLimitFraction = 0
	opt.SpeedFactors = []float64{1.5}
	sum, err := budget.Build(context.Background(), strings.NewReader(tasks), "tasks.jsonl", opt, func(r *budget.Row) error {
		fmt.Println(r.DataSource, r.RequestID())
		fmt.Println(r.User[strings.LastIndex(r.User, "\n")+1:])
		fmt.Printf("time_limit_s %.2f, speed factor %g, jitter %g, ttl %g s\n", r.TimeLimitS, r.SpeedFactor, r.Jitter, r.TTLS)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Rows, "row")
	// Output:
	// timely/general trip#0
	// Your time budget for this task is 18.40 seconds.
	// time_limit_s 18.40, speed factor 1.5, jitter 0.05, ttl 3600 s
	// 1 row
}
