package traveler

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/timeaware/timeaware/synth"
)

var extraInfoType = arrow.StructOf(
	arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "category", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "template", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "expression", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "speech_time", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "n_events", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "answer", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "best_score", Type: arrow.PrimitiveTypes.Float64},
	arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "group", Type: arrow.BinaryTypes.String},
)

// Schema is the schema of TRAVELER rows, the row layout of VeRL's RL
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
//	              highest soft accuracy for vague ones), id (unique:
//	              traveler-s<seed>-<index>), group (the unit a split keeps
//	              on one side: a hash of the speech time and event set)
//
// Every row has every key and no field is null.
var Schema = synth.RowSchema(extraInfoType)

// RecordBuilder accumulates rows into record batches of
// Schema.
type RecordBuilder struct {
	synth.Rows
	split, category, template, expr, speech, answer *array.StringBuilder
	id, group                                       *array.StringBuilder
	index, nEvents                                  *array.Int64Builder
	best                                            *array.Float64Builder
}

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	r := &RecordBuilder{Rows: synth.NewRows(mem, Schema)}
	r.split = r.ExtraInfo().FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ExtraInfo().FieldBuilder(1).(*array.Int64Builder)
	r.category = r.ExtraInfo().FieldBuilder(2).(*array.StringBuilder)
	r.template = r.ExtraInfo().FieldBuilder(3).(*array.StringBuilder)
	r.expr = r.ExtraInfo().FieldBuilder(4).(*array.StringBuilder)
	r.speech = r.ExtraInfo().FieldBuilder(5).(*array.StringBuilder)
	r.nEvents = r.ExtraInfo().FieldBuilder(6).(*array.Int64Builder)
	r.answer = r.ExtraInfo().FieldBuilder(7).(*array.StringBuilder)
	r.best = r.ExtraInfo().FieldBuilder(8).(*array.Float64Builder)
	r.id = r.ExtraInfo().FieldBuilder(9).(*array.StringBuilder)
	r.group = r.ExtraInfo().FieldBuilder(10).(*array.StringBuilder)
	return r
}

// Append adds one row.
func (r *RecordBuilder) Append(row *Row) {
	r.AppendHead(DataSource, Ability, &row.GroundTruth)
	r.AppendTurn("system", row.System)
	r.AppendTurn("user", row.User)
	r.split.Append(row.Split)
	r.index.Append(row.Index)
	r.category.Append(row.Category)
	r.template.Append(row.Template)
	r.expr.Append(row.Expression)
	r.speech.Append(row.SpeechTime.Format("2006-01-02 15:04"))
	r.nEvents.Append(int64(len(row.Events)))
	r.answer.Append(row.Answer)
	r.best.Append(row.BestScore)
	r.id.Append(row.ID)
	r.group.Append(row.Group())
}
