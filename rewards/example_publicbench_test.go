package rewards_test

import (
	"encoding/json"
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

func ExampleSQuADScores() {
	golds := []string{"March 1995", "1994"}
	em, f1 := rewards.SQuADScores("March 1994", golds, false)
	fmt.Printf("EM %.0f, F1 %.4f\n", em, f1)

	// An unanswerable TimeQA question: both sides normalise to no token.
	fmt.Println(rewards.NormalizeSQuAD("The."))
	_, timeQA := rewards.SQuADScores("The.", []string{""}, true)
	_, squad := rewards.SQuADScores("The.", []string{""}, false)
	fmt.Printf("TimeQA F1 %.0f, SQuAD v1.1 F1 %.0f\n", timeQA, squad)
	// Output:
	// EM 0, F1 0.6667
	//
	// TimeQA F1 1, SQuAD v1.1 F1 0
}

func ExampleReadOptionLetter() {
	options := map[string]string{"A": "12 months back", "B": "in the dead of night", "C": "sooner or later"}
	for _, answer := range []string{"(B)", "Option b", "B) in the dead of night", "In the dead of night.", "B) sooner or later", "B or C"} {
		letter, ok := rewards.ReadOptionLetter(answer, options)
		fmt.Printf("%-25q %q %v\n", answer, letter, ok)
	}
	// Output:
	// "(B)"                     "B" true
	// "Option b"                "B" true
	// "B) in the dead of night" "B" true
	// "In the dead of night."   "B" true
	// "B) sooner or later"      "" false
	// "B or C"                  "" false
}

func ExampleTestOfTimeMatch() {
	response := "The war lasted 8 years.\n```json\n{\"explanation\": \"360 - 8 = 352\", \"answer\": \"352 bc\"}\n```"
	answer, ok := rewards.LastJSONObject(response)
	var label map[string]json.RawMessage
	_ = json.Unmarshal([]byte(`{"answer": "352 BC"}`), &label)
	fmt.Println(ok, rewards.TestOfTimeMatch(false, label, answer))

	answer, _ = rewards.LastJSONObject(`{"unordered_list": ["E2", "E1", "E2"]}`)
	label = nil
	_ = json.Unmarshal([]byte(`{"unordered_list": ["E1", "E2", "E2"]}`), &label)
	fmt.Println(rewards.TestOfTimeMatch(false, label, answer))

	answer, _ = rewards.LastJSONObject(`{"answer": "E59, E57, E43"}`)
	label = nil
	_ = json.Unmarshal([]byte(`{"answer": "E59,E57,E43"}`), &label)
	fmt.Println(rewards.TestOfTimeMatch(true, label, answer))
	// Output:
	// true true
	// true
	// true
}
