package main

import (
	"context"
	"fmt"

	"github.com/timeaware/timeaware/verifier"
)

// demoRewards runs one timed rollout through the verifier service on a
// loopback port (verifier.SampleRollout) and prints what a trainer sees.
func (a *app) demoRewards(ctx context.Context) error {
	ro, err := verifier.SampleRollout(ctx, buildVersion())
	if err != nil {
		return err
	}
	w := a.stdout
	fmt.Fprintf(w, "\ntimeaware demo: the verifier service (timeaware serve) on %s\n", ro.URL)
	fmt.Fprintf(w, "  get_duration for rollout %s (speed factor %g, budget %g s): %q\n", ro.ID, ro.SpeedFactor, ro.TimeLimitS, ro.Duration)
	fmt.Fprintf(w, "  POST /v1/score/batch, data source timely/general, ground truth %s:\n", ro.GroundTruth)
	fmt.Fprintf(w, "    %-14s %9s %9s %6s %6s\n", "answer", "elapsed", "budget", "right", "score")
	for _, s := range ro.Scores {
		fmt.Fprintf(w, "    %-14s %8.2fs %8.0fs %6v %6.3f\n", s.Answer, s.ElapsedS, s.TimeLimitS, s.Right, s.Score)
	}
	fmt.Fprintln(w, "  (late answers score 0; on time: 0.1 for the format, +0.5 if right, +0.4·sin(π/2·t/T) for using the budget)")
	return nil
}
