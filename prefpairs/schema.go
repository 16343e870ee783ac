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

// Schema is the one schema of a pairs dataset, whatever its file format.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "prompt", Type: conversation.MessagesArrowType},
	{Name: "chosen", Type: conversation.MessagesArrowType},
	{Name: "rejected", Type: conversation.MessagesArrowType},
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
	prompt, chosen, rejected *conversation.MessageListBuilder
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
		prompt:   conversation.NewMessageListBuilder(b.Field(0).(*array.ListBuilder), false),
		chosen:   conversation.NewMessageListBuilder(b.Field(1).(*array.ListBuilder), false),
		rejected: conversation.NewMessageListBuilder(b.Field(2).(*array.ListBuilder), false),
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
	for _, m := range []*conversation.MessageListBuilder{r.prompt, r.chosen, r.rejected} {
		r.strings = append(r.strings, m.StringBuilders()...)
	}
	return r
}

// Append adds one pair as a row.
func (r *RecordBuilder) Append(p *Pair) {
	r.prompt.Append(p.Prompt)
	r.chosen.Append(p.Chosen)
	r.rejected.Append(p.Rejected)
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
