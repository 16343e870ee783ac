package synth

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var negotiationExtraInfoType = arrow.StructOf(
	arrow.Field{Name: "split", Type: budgetString},
	arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "scenario_id", Type: budgetString},
	arrow.Field{Name: "role", Type: budgetString},
	arrow.Field{Name: "other_role", Type: budgetString},
	arrow.Field{Name: "condition", Type: budgetString},
	arrow.Field{Name: "first_speaker", Type: budgetString},
	arrow.Field{Name: "deadline_s", Type: budgetFloat},
	arrow.Field{Name: "turn_limit", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "wpm", Type: budgetFloat},
	arrow.Field{Name: "turn_prefix", Type: budgetString},
	arrow.Field{Name: "id", Type: budgetString},
)

// NegotiationSchema is the schema of a negotiation prompt set, in the row
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
var NegotiationSchema = verlSchema(negotiationExtraInfoType)

// NegotiationRecordBuilder accumulates rows into record batches of
// NegotiationSchema.
type NegotiationRecordBuilder struct {
	verlRows
	strs     [6]*array.StringBuilder
	index    *array.Int64Builder
	deadline *array.Float64Builder
	turns    *array.Int64Builder
	wpm      *array.Float64Builder
	prefix   *array.StringBuilder
	id       *array.StringBuilder
}

// NewNegotiationRecordBuilder returns an empty builder; mem may be nil.
func NewNegotiationRecordBuilder(mem memory.Allocator) *NegotiationRecordBuilder {
	r := &NegotiationRecordBuilder{verlRows: newVerlRows(mem, NegotiationSchema)}
	r.strs[0] = r.ei.FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ei.FieldBuilder(1).(*array.Int64Builder)
	for i := 1; i < 6; i++ {
		r.strs[i] = r.ei.FieldBuilder(i + 1).(*array.StringBuilder)
	}
	r.deadline = r.ei.FieldBuilder(7).(*array.Float64Builder)
	r.turns = r.ei.FieldBuilder(8).(*array.Int64Builder)
	r.wpm = r.ei.FieldBuilder(9).(*array.Float64Builder)
	r.prefix = r.ei.FieldBuilder(10).(*array.StringBuilder)
	r.id = r.ei.FieldBuilder(11).(*array.StringBuilder)
	return r
}

// Append adds one row.
func (r *NegotiationRecordBuilder) Append(row *NegotiationRow) {
	r.appendHead(NegotiationDataSource, NegotiationAbility, &row.GroundTruth)
	r.appendTurn("system", row.System)
	r.appendTurn("user", row.User)
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
