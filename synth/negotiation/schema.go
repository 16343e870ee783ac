package negotiation

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/timeaware/timeaware/synth"
)

var extraInfoType = arrow.StructOf(
	arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "scenario_id", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "other_role", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "condition", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "first_speaker", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "deadline_s", Type: arrow.PrimitiveTypes.Float64},
	arrow.Field{Name: "turn_limit", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "wpm", Type: arrow.PrimitiveTypes.Float64},
	arrow.Field{Name: "turn_prefix", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
)

// Schema is the schema of a negotiation prompt set, in the row
// layout of VeRL's RL dataset:
//
//	data_source   "negotiation"
//	prompt        [{role: system, content}, {role: user, content}]: the
//	              role's brief, payoff table, reply format and budget rules;
//	              then the first turn (the condition's prefix and the other
//	              role's opening, or the start line)
//	ability       "negotiation"
//	reward_model  {style: "rule", ground_truth}: ground_truth is the JSON
//	              of rewards.NegotiationGroundTruth (scenario payoffs, role,
//	              condition, deadline_s or turn_limit, wpm, first_speaker,
//	              opening)
//	extra_info    split, index, scenario_id, role, other_role, condition,
//	              first_speaker, deadline_s (0 under turn_limit), turn_limit
//	              (0 under the clock conditions), wpm, turn_prefix (the
//	              template the environment puts before each later turn;
//	              "" under control and turn_limit), id (unique:
//	              negotiation-s<seed>-<index>)
//
// Every row has every key, because VeRL reads a missing nested key as None.
var Schema = synth.RowSchema(extraInfoType)

// RecordBuilder accumulates rows into record batches of
// Schema.
type RecordBuilder struct {
	synth.Rows
	strs     [6]*array.StringBuilder
	index    *array.Int64Builder
	deadline *array.Float64Builder
	turns    *array.Int64Builder
	wpm      *array.Float64Builder
	prefix   *array.StringBuilder
	id       *array.StringBuilder
}

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	r := &RecordBuilder{Rows: synth.NewRows(mem, Schema)}
	r.strs[0] = r.ExtraInfo().FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ExtraInfo().FieldBuilder(1).(*array.Int64Builder)
	for i := 1; i < 6; i++ {
		r.strs[i] = r.ExtraInfo().FieldBuilder(i + 1).(*array.StringBuilder)
	}
	r.deadline = r.ExtraInfo().FieldBuilder(7).(*array.Float64Builder)
	r.turns = r.ExtraInfo().FieldBuilder(8).(*array.Int64Builder)
	r.wpm = r.ExtraInfo().FieldBuilder(9).(*array.Float64Builder)
	r.prefix = r.ExtraInfo().FieldBuilder(10).(*array.StringBuilder)
	r.id = r.ExtraInfo().FieldBuilder(11).(*array.StringBuilder)
	return r
}

// Append adds one row.
func (r *RecordBuilder) Append(row *Row) {
	r.AppendHead(DataSource, Ability, &row.GroundTruth)
	r.AppendTurn("system", row.System)
	r.AppendTurn("user", row.User)
	for i, s := range [6]string{row.Split, row.ScenarioID, row.Role, row.OtherRole, row.Condition, row.FirstSpeaker} {
		r.strs[i].Append(s)
	}
	r.index.Append(row.Index)
	r.deadline.Append(row.DeadlineS)
	r.turns.Append(int64(row.TurnLimit))
	r.wpm.Append(row.WPM)
	r.prefix.Append(row.TurnPrefix)
	r.id.Append(row.ID)
}
