package traveler_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/synth/traveler"
)

// Three TRAVELER questions, one per category, over small event sets: the
// question as the user turn asks it, the ground truth the traveler reward
// reads, and the answer that scores best.
func ExampleBuild() {
	opt := traveler.DefaultOptions()
	opt.Seed = 2
	opt.MinEvents, opt.MaxEvents = 5, 10
	_, err := traveler.Build(context.Background(), opt, 3, func(row *traveler.Row) error {
		q := row.User[strings.Index(row.User, "Question: "):]
		fmt.Println(q[:strings.IndexByte(q, '\n')])
		fmt.Println("  ground truth:", row.GroundTruth)
		fmt.Printf("  answer: %s (best score %.3f)\n", row.Answer, row.BestScore)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// Question: Who ate a risotto in the kitchen in the year 2023?
	//   ground truth: {"category":"explicit","template":"who","answer":["Mary"]}
	//   answer: Mary (best score 1.000)
	// Question: Who ate a risotto in the living room today?
	//   ground truth: {"category":"implicit","template":"who","answer":[]}
	//   answer: nobody (best score 1.000)
	// Question: Did Mary read a book in the living room recently?
	//   ground truth: {"category":"vague","template":"did","probabilities":[0.888999,0.485]}
	//   answer: yes (best score 0.943)
}
