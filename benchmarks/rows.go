package benchmarks

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/synth"
)

// Ability is the rows' ability.
const Ability = "temporal_reasoning"

var extraType = arrow.StructOf(
	arrow.Field{Name: "benchmark", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "subset", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "category", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "licence", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "training_allowed", Type: arrow.FixedWidthTypes.Boolean},
	arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "question", Type: arrow.BinaryTypes.String},
)

// Schema is the rows' schema: VeRL's RL dataset layout.
//
//	data_source   timeqa, tempreason, tram or test_of_time
//	prompt        [{role: user, content}]
//	ability       Ability
//	reward_model  {style: "rule", ground_truth}: a JSON text, the
//	              benchmark's (Benchmark.AnswerFormat)
//	extra_info    benchmark (its Name), split (train, dev, test), subset,
//	              id (the benchmark's own), category (TRAM's Category or
//	              Source, Test of Time's question_type; else ""), licence,
//	              training_allowed, index (the record's 0-based position
//	              in its file), question (Row.Question: the item's own
//	              text, which splits contamination indexes)
var Schema = synth.RowSchema(extraType)

// RecordBuilder accumulates rows into record batches of Schema.
type RecordBuilder struct {
	synth.Rows
	strs     [6]*array.StringBuilder
	allowed  *array.BooleanBuilder
	index    *array.Int64Builder
	question *array.StringBuilder
}

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	r := &RecordBuilder{Rows: synth.NewRows(mem, Schema)}
	for i := range r.strs {
		r.strs[i] = r.ExtraInfo().FieldBuilder(i).(*array.StringBuilder)
	}
	r.allowed = r.ExtraInfo().FieldBuilder(6).(*array.BooleanBuilder)
	r.index = r.ExtraInfo().FieldBuilder(7).(*array.Int64Builder)
	r.question = r.ExtraInfo().FieldBuilder(8).(*array.StringBuilder)
	return r
}

// Append adds a row.
func (r *RecordBuilder) Append(row *Row) {
	gt := row.GroundTruth
	r.AppendHead(row.DataSource, Ability, &gt)
	r.AppendTurn("user", row.Prompt)
	for i, v := range []string{row.Benchmark, row.Split, row.Subset, row.ID, row.Category, row.Licence} {
		r.strs[i].Append(v)
	}
	r.allowed.Append(row.TrainingAllowed)
	r.index.Append(int64(row.Index))
	r.question.Append(row.Question)
}
