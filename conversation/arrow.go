package conversation

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

var (
	functionCallArrowType = arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "arguments", Type: arrow.BinaryTypes.String},
	)
	toolCallArrowType = arrow.StructOf(
		arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "function", Type: functionCallArrowType},
	)
	// MessageArrowType is the Arrow struct of one Message, as every dataset
	// of the toolkit writes it ({role, content, tool_calls [{id, type,
	// function {name, arguments}}], tool_call_id, name}). Optional fields
	// are nullable so that every message of every column has one type,
	// which Hugging Face datasets requires.
	MessageArrowType = arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "tool_calls", Type: arrow.ListOf(toolCallArrowType), Nullable: true},
		arrow.Field{Name: "tool_call_id", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	// MessagesArrowType is a list of MessageArrowType: one conversation.
	MessagesArrowType = arrow.ListOf(MessageArrowType)
)

// MessageListBuilder appends conversations to a list column of
// MessagesArrowType.
type MessageListBuilder struct {
	list             *array.ListBuilder
	msg              *array.StructBuilder
	role, content    *array.StringBuilder
	calls            *array.ListBuilder
	call             *array.StructBuilder
	callID, callType *array.StringBuilder
	fn               *array.StructBuilder
	fnName, fnArgs   *array.StringBuilder
	toolCallID, name *array.StringBuilder
	// nullCallIDs writes an empty tool-call id as null rather than "".
	nullCallIDs bool
}

// NewMessageListBuilder wraps the builder of a MessagesArrowType column. An
// empty tool-call id is written as "" (the pairs datasets) or, with
// nullCallIDs, as null (the SFT rows).
func NewMessageListBuilder(list *array.ListBuilder, nullCallIDs bool) *MessageListBuilder {
	msg := list.ValueBuilder().(*array.StructBuilder)
	calls := msg.FieldBuilder(2).(*array.ListBuilder)
	call := calls.ValueBuilder().(*array.StructBuilder)
	fn := call.FieldBuilder(2).(*array.StructBuilder)
	return &MessageListBuilder{
		list:        list,
		msg:         msg,
		role:        msg.FieldBuilder(0).(*array.StringBuilder),
		content:     msg.FieldBuilder(1).(*array.StringBuilder),
		calls:       calls,
		call:        call,
		callID:      call.FieldBuilder(0).(*array.StringBuilder),
		callType:    call.FieldBuilder(1).(*array.StringBuilder),
		fn:          fn,
		fnName:      fn.FieldBuilder(0).(*array.StringBuilder),
		fnArgs:      fn.FieldBuilder(1).(*array.StringBuilder),
		toolCallID:  msg.FieldBuilder(3).(*array.StringBuilder),
		name:        msg.FieldBuilder(4).(*array.StringBuilder),
		nullCallIDs: nullCallIDs,
	}
}

// Append adds one conversation as a row of the column.
func (m *MessageListBuilder) Append(msgs []Message) {
	m.list.Append(true)
	for i := range msgs {
		msg := &msgs[i]
		m.msg.Append(true)
		m.role.Append(msg.Role)
		if msg.Content != nil {
			m.content.Append(*msg.Content)
		} else {
			m.content.AppendNull()
		}
		if len(msg.ToolCalls) == 0 {
			m.calls.AppendNull()
		} else {
			m.calls.Append(true)
			for _, tc := range msg.ToolCalls {
				m.call.Append(true)
				if m.nullCallIDs {
					appendOptional(m.callID, tc.ID)
				} else {
					m.callID.Append(tc.ID)
				}
				m.callType.Append(tc.Type)
				m.fn.Append(true)
				m.fnName.Append(tc.Function.Name)
				m.fnArgs.Append(string(tc.Function.Arguments))
			}
		}
		appendOptional(m.toolCallID, msg.ToolCallID)
		appendOptional(m.name, msg.Name)
	}
}

// StringBuilders lists the column's string builders, for a caller that
// sizes each batch from the previous one.
func (m *MessageListBuilder) StringBuilders() []*array.StringBuilder {
	return []*array.StringBuilder{m.role, m.content, m.callID, m.callType, m.fnName, m.fnArgs, m.toolCallID, m.name}
}

// appendOptional writes "" as null.
func appendOptional(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}
