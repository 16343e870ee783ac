package rewards_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

// A two-issue negotiation under a 10-second deadline at 150 words per
// minute (0.4 s a word): the seller's 4-word proposal ends at 1.6 s, and the
// buyer's 4-word accept at 3.2 s, in time. The deal (price "high", delivery
// "fast") is worth 8 + 1 = 9 points to the seller, whose agreements range
// from 1 to 10, so it scores (9 − 1) / (10 − 1) = 0.89.
func ExampleNegotiation() {
	gt := rewards.NegotiationGroundTruth{
		Scenario: rewards.NegotiationScenario{
			ID:    "toy",
			Roles: []rewards.NegotiationRole{{ID: "seller", BATNA: 3}, {ID: "buyer", BATNA: 2}},
			Issues: []rewards.NegotiationIssue{
				{ID: "price", Options: []string{"low", "high"}, Points: map[string][]float64{"seller": {0, 8}, "buyer": {6, 0}}},
				{ID: "delivery", Options: []string{"slow", "fast"}, Points: map[string][]float64{"seller": {2, 1}, "buyer": {0, 5}}},
			},
		},
		Role: "seller", Condition: rewards.NegotiationTimeAware, DeadlineS: 10, FirstSpeaker: "seller",
	}
	b, _ := json.Marshal(gt)
	transcript := `{"role": "seller", "text": "High price, fast delivery?", "action": {"action": "propose", "offer": {"price": "high", "delivery": "fast"}}}
{"role": "buyer", "text": "Yes, it's a deal.", "action": {"action": "accept"}}`

	s, _ := rewards.NewScorer(rewards.DefaultConfig(), nil)
	res := s.Score(context.Background(), &rewards.Item{DataSource: "negotiation", SolutionStr: transcript, GroundTruth: b})
	fmt.Printf("score %.2f\n", res.Score)
	for i, k := range rewards.Negotiation.Keys {
		fmt.Printf("%s=%g ", k, res.Details[i])
	}
	fmt.Println()
	// Output:
	// score 0.89
	// deal=1 batna_used=0 batna_taken=0 out_of_budget=0 closed_at_s=3.2 closed_at_turn=2 turns=2 elapsed_s=3.2 points_self=9 points_other=5 invalid_actions=0 parsed=1
}
