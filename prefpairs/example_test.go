package prefpairs_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/prefpairs"
)

// Build turns a labelled trajectory into pairs. Here the file name says the
// tool call is preferred at the large elapse level, and the record carries
// its direct reply.
func ExampleBuild() {
	record := `{"id": "bus_times_3", "direct_answer": "The 42 leaves at 08:15.", "history": [
	  {"role": "user", "content": "When does the next 42 leave?", "time": "2026-04-01T08:00:00Z"},
	  {"role": "assistant", "content": null, "time": "2026-04-01T08:00:02Z",
	   "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "next_departure", "arguments": "{\"line\": \"42\"}"}}]},
	  {"role": "tool", "tool_call_id": "c1", "name": "next_departure", "content": "08:15", "time": "2026-04-01T08:00:03Z"},
	  {"role": "assistant", "content": "The next 42 leaves at 08:15.", "time": "2026-04-01T08:00:05Z"},
	  {"role": "user", "content": "And when does the one after that leave?",
	   "time": ["2026-04-01T08:01:00Z", "2026-04-01T09:30:00Z", "2026-04-02T18:00:00Z"]}]}`
	opt := prefpairs.DefaultOptions()
	opt.TimeFormat = prefpairs.TimeISODelta
	in := prefpairs.InputFromName("preferTool_elapse_2.json", strings.NewReader("["+record+"]"))
	sum, err := prefpairs.Build(context.Background(), []prefpairs.Input{in}, opt, func(p *prefpairs.Pair) error {
		fmt.Println("prompt ends:", p.Prompt[len(p.Prompt)-1].Text())
		fmt.Println("chosen calls:", p.Chosen[0].ToolCalls[0].Function.Name)
		fmt.Println("rejected says:", p.Rejected[0].Text())
		fmt.Println("margin:", p.Margin, "score known:", p.Score != nil)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pairs:", sum.Pairs)
	// Output:
	// prompt ends: [2026-04-02T18:00:00Z; 1 day passed] And when does the one after that leave?
	// chosen calls: next_departure
	// rejected says: The 42 leaves at 08:15.
	// margin: 1 score known: false
	// pairs: 1
}
