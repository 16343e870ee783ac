package budget

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/conversation"
)

// sftToolType is one OpenAI tool schema. get_duration takes no arguments,
// and Parquet cannot hold the empty "properties" object of its JSON Schema,
// so parameters carries type and required only: {"type": "object",
// "required": []}, which says the same to a chat template.
var sftToolType = arrow.StructOf(
	arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "function", Type: arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "description", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "parameters", Type: arrow.StructOf(
			arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "required", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		)},
	)},
)

// SFTSchema is the schema of a multi-turn SFT set in the layout of VeRL's
// MultiTurnSFTDataset (data.multiturn.messages_key=messages,
// tools_key=tools):
//
//	messages      the conversation, prompt included: {role, content,
//	              tool_calls [{id, type, function {name, arguments}}],
//	              tool_call_id, name}, the message type of the pairs
//	              datasets; arguments is JSON text ("{}" for get_duration)
//	tools         [get_duration]: {type, function {name, description,
//	              parameters {type, required}}}
//	id            the trace's custom_id
//	time_limit_s  the budget (null: none)
//	elapsed_s     the measured duration
//	score         the Timely-RL reward the trace earned
var SFTSchema = arrow.NewSchema([]arrow.Field{
	{Name: "messages", Type: conversation.MessagesArrowType},
	{Name: "tools", Type: arrow.ListOf(sftToolType)},
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "time_limit_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "elapsed_s", Type: arrow.PrimitiveTypes.Float64},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// SFTRecordBuilder accumulates SFT rows into record batches of SFTSchema.
type SFTRecordBuilder struct {
	b        *array.RecordBuilder
	messages *conversation.MessageListBuilder

	tools    *array.ListBuilder
	tool     *array.StructBuilder
	toolType *array.StringBuilder
	tf       *array.StructBuilder
	tfName   *array.StringBuilder
	tfDesc   *array.StringBuilder
	params   *array.StructBuilder
	pType    *array.StringBuilder
	pReq     *array.ListBuilder

	id      *array.StringBuilder
	limit   *array.Float64Builder
	elapsed *array.Float64Builder
	score   *array.Float64Builder

	toolDesc string
}

// NewSFTRecordBuilder returns an empty builder whose rows list get_duration
// with the given description ("" for the default); mem may be nil.
func NewSFTRecordBuilder(mem memory.Allocator, toolDescription string) *SFTRecordBuilder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if toolDescription == "" {
		toolDescription = DefaultGetDurationDescription
	}
	b := array.NewRecordBuilder(mem, SFTSchema)
	r := &SFTRecordBuilder{b: b, toolDesc: toolDescription}
	// Trace ids name their calls; a call without one is written as null.
	r.messages = conversation.NewMessageListBuilder(b.Field(0).(*array.ListBuilder), true)

	r.tools = b.Field(1).(*array.ListBuilder)
	r.tool = r.tools.ValueBuilder().(*array.StructBuilder)
	r.toolType = r.tool.FieldBuilder(0).(*array.StringBuilder)
	r.tf = r.tool.FieldBuilder(1).(*array.StructBuilder)
	r.tfName = r.tf.FieldBuilder(0).(*array.StringBuilder)
	r.tfDesc = r.tf.FieldBuilder(1).(*array.StringBuilder)
	r.params = r.tf.FieldBuilder(2).(*array.StructBuilder)
	r.pType = r.params.FieldBuilder(0).(*array.StringBuilder)
	r.pReq = r.params.FieldBuilder(1).(*array.ListBuilder)

	r.id = b.Field(2).(*array.StringBuilder)
	r.limit = b.Field(3).(*array.Float64Builder)
	r.elapsed = b.Field(4).(*array.Float64Builder)
	r.score = b.Field(5).(*array.Float64Builder)
	return r
}

// Append adds one row.
func (r *SFTRecordBuilder) Append(row *SFTRow) {
	r.messages.Append(row.Messages)
	r.tools.Append(true)
	r.tool.Append(true)
	r.toolType.Append("function")
	r.tf.Append(true)
	r.tfName.Append(GetDurationName)
	r.tfDesc.Append(r.toolDesc)
	r.params.Append(true)
	r.pType.Append("object")
	r.pReq.Append(true)
	r.id.Append(row.ID)
	if row.TimeLimitS != nil {
		r.limit.Append(*row.TimeLimitS)
	} else {
		r.limit.AppendNull()
	}
	r.elapsed.Append(row.ElapsedS)
	r.score.Append(row.Score)
}

// Len is the number of rows appended since the last NewRecord.
func (r *SFTRecordBuilder) Len() int { return r.id.Len() }

// NewRecord returns the rows appended so far and resets the builder. The
// caller releases the record.
func (r *SFTRecordBuilder) NewRecord() arrow.Record { return r.b.NewRecord() }

// Release frees the builder's buffers.
func (r *SFTRecordBuilder) Release() { r.b.Release() }
