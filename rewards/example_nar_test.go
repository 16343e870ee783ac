package rewards_test

import (
	"fmt"

	"github.com/timeaware/timeaware/rewards"
)

func ExampleConfusion() {
	var c rewards.Confusion
	// Four prefer-tool samples, three answered with a call; four
	// prefer-direct samples, one answered with a call.
	for _, called := range []bool{true, true, true, false} {
		c.Add(true, called)
	}
	for _, called := range []bool{false, false, false, true} {
		c.Add(false, called)
	}
	fmt.Printf("TP=%d FN=%d TN=%d FP=%d\n", c.TP, c.FN, c.TN, c.FP)
	fmt.Printf("NAR %.3f = (TPR %.2f + TNR %.2f)/2\n", c.NAR(), c.TPR(), c.TNR())
	fmt.Printf("attempt rate %.2f: %.2f on prefer-tool, %.2f on prefer-direct\n", c.AttemptRate(), c.AttemptRateTool(), c.AttemptRateDirect())
	// Output:
	// TP=3 FN=1 TN=3 FP=1
	// NAR 0.750 = (TPR 0.75 + TNR 0.75)/2
	// attempt rate 0.50: 0.75 on prefer-tool, 0.25 on prefer-direct
}

func ExampleDetectToolCall() {
	for _, response := range []string{
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
		`{"name": "get_weather", "parameters": {"city": "Oslo"}}`,
		`{"name": "Oslo", "population": 709000}`,
		"No tool_call needed: it was 4 °C ten minutes ago.",
	} {
		fmt.Println(rewards.DetectToolCall(response))
	}
	// Output:
	// true
	// true
	// false
	// false
}
