package negotiation_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// Under time_aware every turn the agent receives starts with the seconds
// left. When the other role opens, its scripted opening (20 words, 8 s at
// 150 wpm) has already used part of the deadline.
func ExampleBuild() {
	opt := negotiation.DefaultOptions()
	opt.Seed = 1
	opt.Count = 4
	opt.Conditions = []string{rewards.NegotiationTimeAware}
	_, err := negotiation.Build(context.Background(), opt, func(r *negotiation.Row) error {
		first := "other opens"
		if r.FirstSpeaker == r.Role {
			first = "agent opens"
		}
		prefix, _, _ := strings.Cut(r.User, "\n")
		fmt.Printf("%d %s as %s, %g s, %s: %s\n", r.Index, r.ScenarioID, r.Role, r.DeadlineS, first, prefix)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0 new_recruit as hr_manager, 360 s, other opens: [352 seconds left]
	// 1 new_recruit as candidate, 240 s, agent opens: [240 seconds left]
	// 2 new_recruit as hr_manager, 360 s, other opens: [352 seconds left]
	// 3 new_recruit as candidate, 360 s, agent opens: [360 seconds left]
}
