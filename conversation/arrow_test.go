package conversation

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The builder writes what a reader of the column expects: content null for
// a call-only message, tool_calls null without calls, empty optional
// strings null, and an empty call id "" or, for SFT rows, null.
func TestMessageListBuilder(t *testing.T) {
	text := "hi"
	msgs := []Message{
		{Role: RoleUser, Content: &text},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{Type: "function", Function: FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
		{Role: RoleTool, Content: &text, ToolCallID: "c1", Name: "f"},
	}
	for _, nullIDs := range []bool{false, true} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "m", Type: MessagesArrowType}}, nil)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b := NewMessageListBuilder(rb.Field(0).(*array.ListBuilder), nullIDs)
		b.Append(msgs)
		b.Append(nil)
		rec := rb.NewRecord()
		list := rec.Column(0).(*array.List)
		require.Equal(t, 2, list.Len())
		s := list.ListValues().(*array.Struct)
		require.Equal(t, 3, s.Len())
		role, content := s.Field(0).(*array.String), s.Field(1).(*array.String)
		calls, callRef, name := s.Field(2).(*array.List), s.Field(3).(*array.String), s.Field(4).(*array.String)
		assert.Equal(t, []string{"user", "assistant", "tool"}, []string{role.Value(0), role.Value(1), role.Value(2)})
		assert.True(t, content.IsNull(1))
		assert.True(t, calls.IsNull(0) && calls.IsNull(2) && !calls.IsNull(1))
		assert.True(t, callRef.IsNull(0) && name.IsNull(0))
		assert.Equal(t, "c1", callRef.Value(2))
		call := calls.ListValues().(*array.Struct)
		id, fn := call.Field(0).(*array.String), call.Field(2).(*array.Struct)
		assert.Equal(t, nullIDs, id.IsNull(0))
		assert.Equal(t, `{"a":1}`, fn.Field(1).(*array.String).Value(0))
		start, end := list.ValueOffsets(1)
		assert.Equal(t, start, end, "an empty conversation is an empty list")
		assert.Len(t, b.StringBuilders(), 8)
		rec.Release()
		rb.Release()
	}
}
