package rewards_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

// A vague TRAVELER question scored with soft accuracy: the TRAVELER paper's "Did Tom
// eat risotto in the kitchen a long time ago?", whose two matching events
// fit "a long time ago" with probabilities 0 and 0.75.
func ExampleTraveler() {
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}
	gt := json.RawMessage(`{"category": "vague", "template": "did", "probabilities": [0, 0.75]}`)
	for _, answer := range []string{"yes", "no"} {
		res := s.Score(context.Background(), &rewards.Item{
			DataSource:  "traveler",
			SolutionStr: "The second event was a week before now.\nANSWER: " + answer,
			GroundTruth: gt,
		})
		fmt.Printf("%s: %.2f\n", answer, res.Score)
	}
	// Output:
	// yes: 0.75
	// no: 0.25
}
