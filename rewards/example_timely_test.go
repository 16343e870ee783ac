package rewards_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

// The Timely-RL reward of a correct answer given after half the budget:
// r_f + r + λ·sin(π/4) = 0.1 + 0.5 + 0.4·0.7071.
func ExampleTimelyReward() {
	c := rewards.DefaultConfig().Timely
	fmt.Printf("%.4f\n", rewards.TimelyReward(c, 15, 30, 0.5))
	fmt.Printf("%.4f\n", rewards.TimelyReward(c, 31, 30, 0.5)) // late
	// Output:
	// 0.8828
	// 0.0000
}

// Scoring an item as the service does, with its detail keys.
func ExampleScorer_Score() {
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}
	elapsed, limit := 20.0, 40.0
	it := rewards.Item{
		DataSource:  "timely/general",
		SolutionStr: `The sum is 3/4. <answer>\boxed{\frac{3}{4}}</answer>`,
		GroundTruth: json.RawMessage(`"0.75"`),
		ExtraInfo:   rewards.ExtraInfo{ElapsedS: &elapsed, TimeLimitS: &limit},
	}
	res := s.Score(context.Background(), &it)
	r, _ := rewards.Lookup(it.DataSource)
	fmt.Println(string(res.AppendJSON(nil, r.Keys, res.Err)))
	// Output:
	// {"score":0.882842712474619,"acc":1,"task_reward":0.5,"format_ok":1,"on_time":1,"elapsed_s":20,"time_limit_s":40,"time_ratio":0.5,"utilization":0.7071067811865475,"reported_s":0}
}
