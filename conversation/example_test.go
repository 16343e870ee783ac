package conversation_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/timeaware/timeaware/conversation"
)

// record is one TicToc trajectory on a single JSONL line: a tool call, its
// result, the answer, and the follow-up question asked after each of the three
// elapsed times.
const record = `{"id":"weather_1","history":[` +
	`{"role":"user","content":"Weather in Paris?","time":"2025-12-04T10:00:00Z"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}],"time":"2025-12-04T10:00:02Z"},` +
	`{"role":"tool","tool_call_id":"call_1","name":"get_weather","content":"sunny","time":"2025-12-04T10:00:03Z"},` +
	`{"role":"assistant","content":"It is sunny.","time":"2025-12-04T10:00:05Z"},` +
	`{"role":"user","content":"And now?","time":["2025-12-04T10:05:00Z","2025-12-04T16:00:00Z","2025-12-11T10:00:00Z"]}],` +
	`"function":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`

// ExampleReader splits JSONL input into raw records, which say where each
// one starts; blank lines are skipped.
func ExampleReader() {
	in := "\n" + record + "\n\n" + strings.Replace(record, "weather_1", "weather_2", 1) + "\n"
	rd := conversation.NewReader(strings.NewReader(in), "weather.jsonl")
	for {
		raw, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: record %d on line %d\n", raw.Source, raw.Record, raw.Line)
	}
	// Output:
	// weather.jsonl: record 1 on line 2
	// weather.jsonl: record 2 on line 4
}

// ExampleParseTrajectory reads a record and prints its id, its number of
// messages, the tool call it makes and the final question's times.
func ExampleParseTrajectory() {
	rd := conversation.NewReader(strings.NewReader(record+"\n"), "weather.jsonl")
	raw, err := rd.Next()
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := conversation.ParseTrajectory(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d messages\n", t.ID, len(t.History))
	call := t.History[t.LastToolCallTurn()].ToolCalls[0]
	fmt.Printf("calls %s(%s)\n", call.Function.Name, call.Function.Arguments)
	fmt.Printf("final question: %q\n", t.Final().Text())
	for level, at := range t.FinalTimes {
		fmt.Printf("elapse %d: %s\n", level, conversation.FormatTime(at))
	}
	// Output:
	// weather_1: 5 messages
	// calls get_weather({"city":"Paris"})
	// final question: "And now?"
	// elapse 0: 2025-12-04T10:05:00Z
	// elapse 1: 2025-12-04T16:00:00Z
	// elapse 2: 2025-12-11T10:00:00Z
}

// ExampleRecordError shows how a malformed record is reported: the input,
// the record's position and line, its id and the offending field.
func ExampleRecordError() {
	bad := strings.Replace(record, `"2025-12-04T16:00:00Z"`, `"tomorrow"`, 1)
	rd := conversation.NewReader(strings.NewReader(record+"\n"+bad+"\n"), "weather.jsonl")
	for {
		raw, err := rd.Next()
		if err != nil {
			break
		}
		if _, err := conversation.ParseTrajectory(raw); err != nil {
			fmt.Println(err)
			var re *conversation.RecordError
			if errors.As(err, &re) {
				fmt.Println(re.Field)
			}
		}
	}
	// Output:
	// weather.jsonl: record 2 (line 2, id weather_1): history[4].time[1]: invalid time "tomorrow" (want RFC 3339, e.g. 2025-12-04T10:22:44Z)
	// history[4].time[1]
}
