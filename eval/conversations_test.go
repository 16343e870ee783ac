package eval

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/synth/budget"
	"github.com/timeaware/timeaware/timers"
)

func TestConversationsAreTheRowsResults(t *testing.T) {
	text := "how long?"
	rows := []Row{
		{ID: "a", GroundTruth: json.RawMessage(`"155"`), Prompt: []conversation.Message{{Role: "user", Content: &text}}, Timer: &timers.Settings{TimeLimitS: 6.9}},
		{ID: "b", GroundTruth: json.RawMessage(`"7.5"`), Timer: &timers.Settings{}},
	}
	answer := "<answer>155</answer>"
	turns := []conversation.Message{{Role: "assistant", Content: &answer}}
	results := []*Result{
		{Row: 1, Sample: 0, RequestID: "b-0", Details: map[string]float64{"elapsed_s": 9, "on_time": 1, "acc": 0}, TurnLimit: true},
		nil, // a result that never finished
		{Row: 0, Sample: 1, RequestID: "a-1", Turns: turns, Details: map[string]float64{"elapsed_s": 3.5, "on_time": 1, "acc": 1}},
		{Row: 0, Sample: 0, RequestID: "a-0", Details: map[string]float64{"elapsed_s": 8, "on_time": 0, "acc": 1}, OutOfTime: true, Error: "late"},
	}
	assert.Equal(t, []*budget.Conversation{
		{ID: "b", Sample: 0, GroundTruth: json.RawMessage(`"7.5"`), ElapsedS: 9, OnTime: true, TurnLimit: true, RequestID: "b-0"},
		nil,
		{ID: "a", Sample: 1, Prompt: rows[0].Prompt, Turns: turns, GroundTruth: json.RawMessage(`"155"`), TimeLimitS: 6.9, ElapsedS: 3.5, OnTime: true, Right: true, RequestID: "a-1"},
		{ID: "a", Sample: 0, Prompt: rows[0].Prompt, GroundTruth: json.RawMessage(`"155"`), TimeLimitS: 6.9, ElapsedS: 8, Right: true, OutOfTime: true, Error: "late", RequestID: "a-0"},
	}, Conversations(rows, results))
}
