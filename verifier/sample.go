package verifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// Rollout is what SampleRollout saw, as a trainer sees it.
type Rollout struct {
	// URL is the service's base URL, on a loopback port.
	URL string
	// ID, SpeedFactor and TimeLimitS are the rollout's timer settings.
	ID          string
	SpeedFactor float64
	TimeLimitS  float64
	// Duration is the get_duration tool's text for the rollout.
	Duration string
	// GroundTruth is the task's answer; Scores the batch's results, one
	// per answer.
	GroundTruth string
	Scores      []RolloutScore
}

// RolloutScore is one scored answer of a Rollout.
type RolloutScore struct {
	Answer     string
	ElapsedS   float64
	TimeLimitS float64
	Right      bool
	Score      float64
}

// SampleRollout starts the service on a loopback port with the default
// rewards and a random timer secret, and runs one timed rollout through it
// over HTTP: it creates a timer for rollout demo-rollout (speed factor 25,
// a budget of 10 s), lets 120 ms pass (3 s on hardware 25 times slower),
// reads the get_duration tool's text, and scores four answers to a
// timely/general task (3/4) in one batch: one timed by the timer, and
// three with their elapsed time given, right near the budget's end, wrong,
// and right but late. The service stops before it returns.
func SampleRollout(ctx context.Context, version string) (*Rollout, error) {
	store, err := timers.New(timers.Options{Secret: timers.RandomSecret()})
	if err != nil {
		return nil, err
	}
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	if err != nil {
		return nil, err
	}
	srv, err := New(Options{Scorer: scorer, Timers: store, Version: version})
	if err != nil {
		return nil, err
	}
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("verifier: sample rollout: starting the service: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()
	ro := &Rollout{URL: "http://" + ln.Addr().String(), ID: "demo-rollout", SpeedFactor: 25, TimeLimitS: 10, GroundTruth: "3/4"}
	if err := ro.run(); err != nil {
		return nil, err
	}
	return ro, nil
}

// run makes the rollout's calls.
func (ro *Rollout) run() error {
	var timer struct {
		Timer string `json:"timer"`
	}
	if err := ro.call("/v1/timers", map[string]any{"rollout_id": ro.ID, "speed_factor": ro.SpeedFactor, "time_limit_s": ro.TimeLimitS}, &timer); err != nil {
		return err
	}
	time.Sleep(120 * time.Millisecond) // the model "generates" on hardware 25 times slower
	var dur struct {
		Text string `json:"text"`
	}
	if err := ro.call("/v1/tools/get_duration", map[string]any{"timer": timer.Timer}, &dur); err != nil {
		return err
	}
	ro.Duration = dur.Text
	answers := []string{`\frac{3}{4}`, "0.75", "0.5", "75%"}
	extras := []map[string]any{{"timer": timer.Timer}, {"elapsed_s": 9.5, "time_limit_s": 10},
		{"elapsed_s": 4, "time_limit_s": 10}, {"elapsed_s": 12, "time_limit_s": 10}}
	items := make([]map[string]any, len(answers))
	for i, a := range answers {
		items[i] = map[string]any{"data_source": "timely/general", "ground_truth": ro.GroundTruth, "extra_info": extras[i],
			"solution_str": "Three of the four slots are free. <answer>\\boxed{" + a + "}</answer>"}
	}
	var scored struct {
		Results []struct {
			Score      float64 `json:"score"`
			Acc        float64 `json:"acc"`
			ElapsedS   float64 `json:"elapsed_s"`
			TimeLimitS float64 `json:"time_limit_s"`
		} `json:"results"`
	}
	if err := ro.call("/v1/score/batch", map[string]any{"items": items}, &scored); err != nil {
		return err
	}
	for i, r := range scored.Results {
		ro.Scores = append(ro.Scores, RolloutScore{Answer: answers[i], ElapsedS: r.ElapsedS, TimeLimitS: r.TimeLimitS, Right: r.Acc == 1, Score: r.Score})
	}
	return nil
}

// call posts body as JSON to the service's path and decodes the answer
// into out.
func (ro *Rollout) call(path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("verifier: sample rollout: %s: %w", path, err)
	}
	resp, err := http.Post(ro.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("verifier: sample rollout: %s: status %d: %s", path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}
