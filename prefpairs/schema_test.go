package prefpairs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/prefpairs"
)

func sp(s string) *string { return &s }

// TestRecordBuilderRows: pairs become rows of Schema with every field in
// place: optional fields (score, sensitivity, split, a message's content,
// tool calls, tool call id and name) are null when unset, and each record
// holds only the rows appended since the previous one.
func TestRecordBuilderRows(t *testing.T) {
	score := 0.25
	first := &prefpairs.Pair{
		Prompt: []conversation.Message{
			{Role: "system", Content: sp("Be brief.")},
			{Role: "user", Content: sp("Price?")},
			{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "c1", Type: "function", Function: conversation.FunctionCall{Name: "price", Arguments: conversation.Arguments(`{"sku":7}`)}}}},
			{Role: "tool", Content: sp("5"), ToolCallID: "c1", Name: "price"},
			{Role: "user", Content: sp("And now?")},
		},
		Chosen:   []conversation.Message{{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "c1_refresh", Type: "function", Function: conversation.FunctionCall{Name: "price", Arguments: conversation.Arguments(`{"sku":7}`)}}}}},
		Rejected: []conversation.Message{{Role: "assistant", Content: sp("Still 5.")}},
		Tools:    `[{"type":"function"}]`,
		Margin:   1.25, Score: &score,
		ID: "shop_1", Scenario: "shop", Sensitivity: "high", Elapse: 2, Label: conversation.PreferTool, Split: "train",
	}
	second := &prefpairs.Pair{
		Prompt:   []conversation.Message{{Role: "user", Content: sp("")}},
		Chosen:   []conversation.Message{{Role: "assistant", Content: sp("No.")}},
		Rejected: []conversation.Message{{Role: "assistant", ToolCalls: []conversation.ToolCall{{Function: conversation.FunctionCall{Name: "f"}}}}},
		Tools:    "[]",
		Margin:   1,
		ID:       "q_2", Scenario: "q", Elapse: 0, Label: conversation.PreferDirect,
	}
	wantFirst := `{
		"prompt": [
			{"role":"system","content":"Be brief.","tool_calls":null,"tool_call_id":null,"name":null},
			{"role":"user","content":"Price?","tool_calls":null,"tool_call_id":null,"name":null},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"price","arguments":"{\"sku\":7}"}}],"tool_call_id":null,"name":null},
			{"role":"tool","content":"5","tool_calls":null,"tool_call_id":"c1","name":"price"},
			{"role":"user","content":"And now?","tool_calls":null,"tool_call_id":null,"name":null}
		],
		"chosen": [{"role":"assistant","content":null,"tool_calls":[{"id":"c1_refresh","type":"function","function":{"name":"price","arguments":"{\"sku\":7}"}}],"tool_call_id":null,"name":null}],
		"rejected": [{"role":"assistant","content":"Still 5.","tool_calls":null,"tool_call_id":null,"name":null}],
		"tools": "[{\"type\":\"function\"}]",
		"margin": 1.25, "score": 0.25,
		"id": "shop_1", "scenario": "shop", "sensitivity": "high", "elapse": 2, "label": "tool", "split": "train"
	}`
	wantSecond := `{
		"prompt": [{"role":"user","content":"","tool_calls":null,"tool_call_id":null,"name":null}],
		"chosen": [{"role":"assistant","content":"No.","tool_calls":null,"tool_call_id":null,"name":null}],
		"rejected": [{"role":"assistant","content":null,"tool_calls":[{"id":"","type":"","function":{"name":"f","arguments":""}}],"tool_call_id":null,"name":null}],
		"tools": "[]",
		"margin": 1, "score": null,
		"id": "q_2", "scenario": "q", "sensitivity": null, "elapse": 0, "label": "direct", "split": null
	}`

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rb := prefpairs.NewRecordBuilder(mem)
	defer rb.Release()

	rows := func(t *testing.T) []string {
		t.Helper()
		rec := rb.NewRecord()
		defer rec.Release()
		assert.True(t, rec.Schema().Equal(prefpairs.Schema))
		assert.Positive(t, mem.CurrentAlloc(), "the record lives in the given allocator")
		var buf bytes.Buffer
		require.NoError(t, array.RecordToJSON(rec, &buf))
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}

	rb.Append(first)
	rb.Append(second)
	assert.Equal(t, 2, rb.Len())
	got := rows(t)
	require.Len(t, got, 2)
	assert.JSONEq(t, wantFirst, got[0])
	assert.JSONEq(t, wantSecond, got[1])
	assert.Zero(t, rb.Len(), "a record resets the builder")

	rb.Append(second)
	assert.Equal(t, 1, rb.Len())
	got = rows(t)
	require.Len(t, got, 1)
	assert.JSONEq(t, wantSecond, got[0])
}

// TestNewRecordBuilderDefaultAllocator: a nil allocator means the default.
func TestNewRecordBuilderDefaultAllocator(t *testing.T) {
	rb := prefpairs.NewRecordBuilder(nil)
	defer rb.Release()
	rb.Append(&prefpairs.Pair{ID: "a_1", Label: conversation.PreferTool})
	rec := rb.NewRecord()
	defer rec.Release()
	assert.EqualValues(t, 1, rec.NumRows())
}
