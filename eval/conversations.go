package eval

import "github.com/timeaware/timeaware/synth/budget"

// Conversations are the results of a live run of timely/general rows (one
// per row and sample, nil for a result that never finished) as the
// teacher conversations that budget.Distill writes as traces: each with
// its row's prompt and ground truth, the turns the model took, and what
// the timer and the reward found (elapsed time, on time, right).
func Conversations(rows []Row, results []*Result) []*budget.Conversation {
	out := make([]*budget.Conversation, len(results))
	for i, r := range results {
		if r == nil {
			continue
		}
		row := &rows[r.Row]
		out[i] = &budget.Conversation{ID: row.ID, Sample: r.Sample, Prompt: row.Prompt, Turns: r.Turns, GroundTruth: row.GroundTruth,
			TimeLimitS: row.Timer.TimeLimitS, ElapsedS: r.Details["elapsed_s"], OnTime: r.Details["on_time"] == 1, Right: r.Details["acc"] == 1,
			TurnLimit: r.TurnLimit, OutOfTime: r.OutOfTime, Error: r.Error, RequestID: r.RequestID}
	}
	return out
}
