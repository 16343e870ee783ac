package rewards_test

import (
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

func ExampleEqualAnswers() {
	response := "Three of the four cards are red.\n<answer>\\boxed{\\dfrac{3}{4}}</answer>"
	answer, ok := rewards.ExtractAnswer(response, "answer")
	fmt.Println(answer, ok)
	fmt.Println(rewards.EqualAnswers(answer, "0.75"))
	fmt.Println(rewards.EqualAnswers(answer, "75%"))
	fmt.Println(rewards.EqualAnswers("$1{,}000$", "1000"))
	fmt.Println(rewards.EqualAnswers("1,000", "1.000"))
	fmt.Println(rewards.EqualAnswers("(B)", "\\text{b}"))
	fmt.Println(rewards.EqualAnswers("0.33", "1/3"))
	// Output:
	// \dfrac{3}{4} true
	// true
	// true
	// true
	// false
	// true
	// false
}
