package rewards_test

import (
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

func ExampleSetMetrics() {
	gold := []string{"2024-03-01", "2024-03-08"}
	pred, ok := rewards.ParseDateAnswer("Fridays in early March 2024...\nMY ANSWER: 2024-03-01")
	em, f1, jaccard := rewards.SetMetrics(gold, pred)
	fmt.Println(pred, ok)
	fmt.Printf("EM %.0f, F1 %.3f, Jaccard %.2f\n", em, f1, jaccard)

	none, _ := rewards.ParseDateAnswer("MY ANSWER: None")
	em, f1, jaccard = rewards.SetMetrics(nil, none)
	fmt.Printf("both empty: EM %.0f, F1 %.0f, Jaccard %.0f\n", em, f1, jaccard)
	// Output:
	// [2024-03-01] true
	// EM 0, F1 0.667, Jaccard 0.50
	// both empty: EM 1, F1 1, Jaccard 1
}
