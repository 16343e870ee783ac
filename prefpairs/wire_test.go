package prefpairs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/timeaware/timeaware/conversation"
)

// TestChatMessage: the wire form of a message gives every tool call a type
// ("function" unless the call names one) and arguments ("{}" when blank),
// and null content only to an assistant turn that calls tools.
func TestChatMessage(t *testing.T) {
	call := func(id, typ, args string) conversation.ToolCall {
		return conversation.ToolCall{ID: id, Type: typ, Function: conversation.FunctionCall{Name: "f", Arguments: conversation.Arguments(args)}}
	}
	wire := func(id, typ, args string) conversation.ToolCall {
		return conversation.ToolCall{ID: id, Type: typ, Function: conversation.FunctionCall{Name: "f", Arguments: conversation.Arguments(args)}}
	}
	tests := []struct {
		name string
		in   conversation.Message
		want conversation.Message
	}{
		{
			name: "calls without a type or arguments",
			in:   conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{call("c1", "", ""), call("c2", "", " \n")}},
			want: conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{wire("c1", "function", "{}"), wire("c2", "function", "{}")}},
		},
		{
			name: "a call's own type and arguments are kept",
			in:   conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{call("c1", "function", `{"a":1}`), call("", "custom", `"x"`)}},
			want: conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{wire("c1", "function", `{"a":1}`), wire("", "custom", `"x"`)}},
		},
		{
			name: "an assistant turn calling tools keeps its text",
			in:   conversation.Message{Role: "assistant", Content: strp("Checking."), ToolCalls: []conversation.ToolCall{call("c1", "function", "{}")}},
			want: conversation.Message{Role: "assistant", Content: strp("Checking."), ToolCalls: []conversation.ToolCall{wire("c1", "function", "{}")}},
		},
		{
			name: "an assistant turn without calls or text has empty text",
			in:   conversation.Message{Role: "assistant"},
			want: conversation.Message{Role: "assistant", Content: strp("")},
		},
		{
			name: "a tool result keeps its call id and name",
			in:   conversation.Message{Role: "tool", Content: strp("5"), ToolCallID: "c1", Name: "f"},
			want: conversation.Message{Role: "tool", Content: strp("5"), ToolCallID: "c1", Name: "f"},
		},
		{
			name: "a user turn with null content has empty text",
			in:   conversation.Message{Role: "user"},
			want: conversation.Message{Role: "user", Content: strp("")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, chatMessage(tc.in))
		})
	}
}
