package prefpairs

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/conversation"
)

// Pair is one DPO preference pair in TRL's conversational preference layout:
// the prompt is the conversation up to the final user question, chosen and
// rejected each hold one assistant message, and the metadata says where the
// pair came from.
type Pair struct {
	Prompt   []conversation.Message
	Chosen   []conversation.Message
	Rejected []conversation.Message
	// Tools is the JSON text of the tool schemas offered to the agent.
	Tools string
	// Margin is |S − 1.5|, or the label-only margin when S is unknown.
	Margin float64
	// Score is the mean human score S in [0, 3], nil when unknown.
	Score       *float64
	ID          string
	Scenario    string
	Sensitivity string // low, medium, high, or "" when unknown
	Elapse      int
	// Label is the preferred action: conversation.PreferTool or PreferDirect.
	Label string
	// Split is train or test, or "" when the build does not split.
	Split string
}

var (
	functionCallType = arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "arguments", Type: arrow.BinaryTypes.String},
	)
	toolCallType = arrow.StructOf(
		arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "function", Type: functionCallType},
	)
	// MessageType is the Arrow struct of one chat message. Optional fields
	// are nullable so that every message of every column has one type, which
	// Hugging Face datasets requires.
	MessageType = arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "tool_calls", Type: arrow.ListOf(toolCallType), Nullable: true},
		arrow.Field{Name: "tool_call_id", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	messagesType = arrow.ListOf(MessageType)
)

// Schema is the one schema of a pairs dataset, whatever its file format.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "prompt", Type: messagesType},
	{Name: "chosen", Type: messagesType},
	{Name: "rejected", Type: messagesType},
	{Name: "tools", Type: arrow.BinaryTypes.String},
	{Name: "margin", Type: arrow.PrimitiveTypes.Float64},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "scenario", Type: arrow.BinaryTypes.String},
	{Name: "sensitivity", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "elapse", Type: arrow.PrimitiveTypes.Int64},
	{Name: "label", Type: arrow.BinaryTypes.String},
	{Name: "split", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// RecordBuilder accumulates pairs into Arrow record batches of Schema.
type RecordBuilder struct {
	b                        *array.RecordBuilder
	prompt, chosen, rejected messageListBuilder
	tools                    *array.StringBuilder
	margin, score            *array.Float64Builder
	id, scenario, sens       *array.StringBuilder
	elapse                   *array.Int64Builder
	label, split             *array.StringBuilder
	// strings lists every string builder, so that each batch can start with
	// the capacity the previous one needed instead of growing by doubling.
	strings []*array.StringBuilder
}

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, Schema)
	r := &RecordBuilder{
		b:        b,
		prompt:   newMessageListBuilder(b.Field(0).(*array.ListBuilder)),
		chosen:   newMessageListBuilder(b.Field(1).(*array.ListBuilder)),
		rejected: newMessageListBuilder(b.Field(2).(*array.ListBuilder)),
		tools:    b.Field(3).(*array.StringBuilder),
		margin:   b.Field(4).(*array.Float64Builder),
		score:    b.Field(5).(*array.Float64Builder),
		id:       b.Field(6).(*array.StringBuilder),
		scenario: b.Field(7).(*array.StringBuilder),
		sens:     b.Field(8).(*array.StringBuilder),
		elapse:   b.Field(9).(*array.Int64Builder),
		label:    b.Field(10).(*array.StringBuilder),
		split:    b.Field(11).(*array.StringBuilder),
	}
	r.strings = []*array.StringBuilder{r.tools, r.id, r.scenario, r.sens, r.label, r.split}
	for _, m := range []*messageListBuilder{&r.prompt, &r.chosen, &r.rejected} {
		r.strings = append(r.strings, m.role, m.content, m.callID, m.callType, m.fnName, m.fnArgs, m.toolCallID, m.name)
	}
	return r
}

// Append adds one pair as a row.
func (r *RecordBuilder) Append(p *Pair) {
	r.prompt.append(p.Prompt)
	r.chosen.append(p.Chosen)
	r.rejected.append(p.Rejected)
	r.tools.Append(p.Tools)
	r.margin.Append(p.Margin)
	if p.Score != nil {
		r.score.Append(*p.Score)
	} else {
		r.score.AppendNull()
	}
	r.id.Append(p.ID)
	r.scenario.Append(p.Scenario)
	appendOptional(r.sens, p.Sensitivity)
	r.elapse.Append(int64(p.Elapse))
	r.label.Append(p.Label)
	appendOptional(r.split, p.Split)
}

// Len is the number of rows appended since the last NewRecord.
func (r *RecordBuilder) Len() int { return r.id.Len() }

// NewRecord returns the rows appended so far as a record and resets the
// builder. The caller releases the record.
func (r *RecordBuilder) NewRecord() arrow.Record {
	sizes := make([][2]int, len(r.strings))
	for i, b := range r.strings {
		sizes[i] = [2]int{b.Len(), b.DataLen()}
	}
	rec := r.b.NewRecord()
	for i, b := range r.strings {
		b.Reserve(sizes[i][0])
		b.ReserveData(sizes[i][1])
	}
	return rec
}

// Release frees the builder's buffers.
func (r *RecordBuilder) Release() { r.b.Release() }

func appendOptional(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}

type messageListBuilder struct {
	list             *array.ListBuilder
	msg              *array.StructBuilder
	role, content    *array.StringBuilder
	calls            *array.ListBuilder
	call             *array.StructBuilder
	callID, callType *array.StringBuilder
	fn               *array.StructBuilder
	fnName, fnArgs   *array.StringBuilder
	toolCallID, name *array.StringBuilder
}

func newMessageListBuilder(list *array.ListBuilder) messageListBuilder {
	msg := list.ValueBuilder().(*array.StructBuilder)
	calls := msg.FieldBuilder(2).(*array.ListBuilder)
	call := calls.ValueBuilder().(*array.StructBuilder)
	fn := call.FieldBuilder(2).(*array.StructBuilder)
	return messageListBuilder{
		list:       list,
		msg:        msg,
		role:       msg.FieldBuilder(0).(*array.StringBuilder),
		content:    msg.FieldBuilder(1).(*array.StringBuilder),
		calls:      calls,
		call:       call,
		callID:     call.FieldBuilder(0).(*array.StringBuilder),
		callType:   call.FieldBuilder(1).(*array.StringBuilder),
		fn:         fn,
		fnName:     fn.FieldBuilder(0).(*array.StringBuilder),
		fnArgs:     fn.FieldBuilder(1).(*array.StringBuilder),
		toolCallID: msg.FieldBuilder(3).(*array.StringBuilder),
		name:       msg.FieldBuilder(4).(*array.StringBuilder),
	}
}

func (m *messageListBuilder) append(msgs []conversation.Message) {
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
				m.callID.Append(tc.ID)
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
