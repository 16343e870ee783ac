package synth

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var travelerExtraInfoType = arrow.StructOf(
	arrow.Field{Name: "split", Type: budgetString},
	arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "category", Type: budgetString},
	arrow.Field{Name: "template", Type: budgetString},
	arrow.Field{Name: "expression", Type: budgetString},
	arrow.Field{Name: "speech_time", Type: budgetString},
	arrow.Field{Name: "n_events", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "answer", Type: budgetString},
	arrow.Field{Name: "best_score", Type: budgetFloat},
)

// TravelerSchema is the schema of TRAVELER rows, the row layout of VeRL's RL
// dataset:
//
//	data_source   "traveler": the reward that scores the rows
//	prompt        [{role: system, content}, {role: user, content}]; the user
//	              turn holds the speech time, the event set, the question and
//	              the answer format (a last line "ANSWER: <answer>")
//	ability       "temporal_reasoning"
//	reward_model  {style: "rule", ground_truth}: the JSON text of the
//	              traveler reward's ground truth
//	extra_info    split, index, category, template, expression (the temporal
//	              expression as worded; "" for when_last), speech_time
//	              ("YYYY-MM-DD HH:MM"), n_events, answer (the gold answer as
//	              the model should write it; for vague questions one that no
//	              other answer beats), best_score (1 for crisp questions, the
//	              highest soft accuracy for vague ones)
//
// Every row has every key and no field is null.
var TravelerSchema = arrow.NewSchema([]arrow.Field{
	{Name: "data_source", Type: budgetString},
	{Name: "prompt", Type: arrow.ListOf(promptMessageType)},
	{Name: "ability", Type: budgetString},
	{Name: "reward_model", Type: rewardModelType},
	{Name: "extra_info", Type: travelerExtraInfoType},
}, nil)

// TravelerRecordBuilder accumulates rows into record batches of
// TravelerSchema.
type TravelerRecordBuilder struct {
	b                                               *array.RecordBuilder
	dataSource, role, content, ability, style, gt   *array.StringBuilder
	prompt                                          *array.ListBuilder
	msg, rm, ei                                     *array.StructBuilder
	split, category, template, expr, speech, answer *array.StringBuilder
	index, nEvents                                  *array.Int64Builder
	best                                            *array.Float64Builder
}

// NewTravelerRecordBuilder returns an empty builder; mem may be nil.
func NewTravelerRecordBuilder(mem memory.Allocator) *TravelerRecordBuilder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, TravelerSchema)
	r := &TravelerRecordBuilder{b: b}
	r.dataSource = b.Field(0).(*array.StringBuilder)
	r.prompt = b.Field(1).(*array.ListBuilder)
	r.msg = r.prompt.ValueBuilder().(*array.StructBuilder)
	r.role = r.msg.FieldBuilder(0).(*array.StringBuilder)
	r.content = r.msg.FieldBuilder(1).(*array.StringBuilder)
	r.ability = b.Field(2).(*array.StringBuilder)
	r.rm = b.Field(3).(*array.StructBuilder)
	r.style = r.rm.FieldBuilder(0).(*array.StringBuilder)
	r.gt = r.rm.FieldBuilder(1).(*array.StringBuilder)
	r.ei = b.Field(4).(*array.StructBuilder)
	r.split = r.ei.FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ei.FieldBuilder(1).(*array.Int64Builder)
	r.category = r.ei.FieldBuilder(2).(*array.StringBuilder)
	r.template = r.ei.FieldBuilder(3).(*array.StringBuilder)
	r.expr = r.ei.FieldBuilder(4).(*array.StringBuilder)
	r.speech = r.ei.FieldBuilder(5).(*array.StringBuilder)
	r.nEvents = r.ei.FieldBuilder(6).(*array.Int64Builder)
	r.answer = r.ei.FieldBuilder(7).(*array.StringBuilder)
	r.best = r.ei.FieldBuilder(8).(*array.Float64Builder)
	return r
}

// Append adds one row.
func (r *TravelerRecordBuilder) Append(row *TravelerRow) {
	r.dataSource.Append(TravelerDataSource)
	r.prompt.Append(true)
	r.msg.Append(true)
	r.role.Append("system")
	r.content.Append(row.System)
	r.msg.Append(true)
	r.role.Append("user")
	r.content.Append(row.User)
	r.ability.Append(TravelerAbility)
	r.rm.Append(true)
	r.style.Append("rule")
	r.gt.Append(row.GroundTruth)
	r.ei.Append(true)
	r.split.Append(row.Split)
	r.index.Append(row.Index)
	r.category.Append(row.Category)
	r.template.Append(row.Template)
	r.expr.Append(row.Expression)
	r.speech.Append(row.SpeechTime.Format("2006-01-02 15:04"))
	r.nEvents.Append(int64(len(row.Events)))
	r.answer.Append(row.Answer)
	r.best.Append(row.BestScore)
}

// Len is the number of rows appended since the last NewRecord.
func (r *TravelerRecordBuilder) Len() int { return r.dataSource.Len() }

// NewRecord returns the rows appended so far and resets the builder. The
// caller releases the record.
func (r *TravelerRecordBuilder) NewRecord() arrow.Record { return r.b.NewRecord() }

// Release frees the builder's buffers.
func (r *TravelerRecordBuilder) Release() { r.b.Release() }
