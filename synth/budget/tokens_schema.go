package budget

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/timeaware/timeaware/synth"
)

// tokenExtraInfoFields are the extra_info fields of every token-budgeted
// row; elastic rows add think_budget and answer_budget.
var tokenExtraInfoFields = []arrow.Field{
	{Name: "split", Type: arrow.BinaryTypes.String},
	{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	{Name: "task_id", Type: arrow.BinaryTypes.String},
	{Name: "variant", Type: arrow.PrimitiveTypes.Int64},
	{Name: "request_id", Type: arrow.BinaryTypes.String},
	{Name: "answer_check", Type: arrow.BinaryTypes.String},
	{Name: "token_budget", Type: arrow.PrimitiveTypes.Int64},
}

var (
	// TokenSchema is the schema of the rows of the LCPO and ThinkPrune
	// rewards: VeRL's RL dataset row, single-turn.
	//
	//	data_source   length/lcpo_exact, length/lcpo_max or length/thinkprune
	//	prompt        [{role: system, content}, {role: user, content}]; the
	//	              user turn ends with the sentence that states the budget
	//	ability       the family, or the task's own ability
	//	reward_model  {style: "rule", ground_truth}: the task's answer
	//	extra_info    split, index, task_id, variant, request_id
	//	              ("<task id>#<variant>", the row's id), answer_check
	//	              ("": the reward checks the answer in its tag against
	//	              ground_truth), token_budget (int64: n_gold of the LCPO
	//	              rewards, the limit L of ThinkPrune)
	//
	// There is no agent_name and no tools_kwargs: the rows need no tool,
	// so VeRL's agent loop runs its default (single-turn) loop on them.
	// The token counts the rewards also read (response_tokens and the
	// like) are the rollout's, added by the trainer's adapter.
	TokenSchema = synth.RowSchema(arrow.StructOf(tokenExtraInfoFields...))
	// ElasticSchema is TokenSchema for the elastic reward: extra_info adds
	// think_budget and answer_budget (int64: t and s), and token_budget is
	// their sum.
	ElasticSchema = synth.RowSchema(arrow.StructOf(append(append([]arrow.Field(nil), tokenExtraInfoFields...),
		arrow.Field{Name: "think_budget", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "answer_budget", Type: arrow.PrimitiveTypes.Int64})...))
)

// TokenSchemaOf returns the schema of a reward's rows: ElasticSchema for
// the elastic reward, TokenSchema for the others.
func TokenSchemaOf(r TokenReward) *arrow.Schema {
	if r == RewardElastic {
		return ElasticSchema
	}
	return TokenSchema
}

// TokenRecordBuilder accumulates token-budgeted rows into record batches of
// one reward's schema (TokenSchemaOf).
type TokenRecordBuilder struct {
	synth.Rows
	split, taskID, requestID, check *array.StringBuilder
	index, variant, budget          *array.Int64Builder
	think, answer                   *array.Int64Builder // nil but for elastic
}

// NewTokenRecordBuilder returns an empty builder of r's rows; mem may be
// nil.
func NewTokenRecordBuilder(mem memory.Allocator, r TokenReward) *TokenRecordBuilder {
	b := &TokenRecordBuilder{Rows: synth.NewRows(mem, TokenSchemaOf(r))}
	ei := b.ExtraInfo()
	b.split = ei.FieldBuilder(0).(*array.StringBuilder)
	b.index = ei.FieldBuilder(1).(*array.Int64Builder)
	b.taskID = ei.FieldBuilder(2).(*array.StringBuilder)
	b.variant = ei.FieldBuilder(3).(*array.Int64Builder)
	b.requestID = ei.FieldBuilder(4).(*array.StringBuilder)
	b.check = ei.FieldBuilder(5).(*array.StringBuilder)
	b.budget = ei.FieldBuilder(6).(*array.Int64Builder)
	if r == RewardElastic {
		b.think = ei.FieldBuilder(7).(*array.Int64Builder)
		b.answer = ei.FieldBuilder(8).(*array.Int64Builder)
	}
	return b
}

// Append adds one row.
func (b *TokenRecordBuilder) Append(row *TokenRow) {
	gt := row.GroundTruth
	b.AppendHead(row.DataSource, row.Ability, &gt)
	b.AppendTurn("system", row.System)
	b.AppendTurn("user", row.User)
	b.split.Append(row.Split)
	b.index.Append(row.Index)
	b.taskID.Append(row.TaskID)
	b.variant.Append(int64(row.Variant))
	b.requestID.Append(row.RequestID())
	b.check.Append("")
	b.budget.Append(int64(row.TokenBudget))
	if b.think != nil {
		b.think.Append(int64(row.ThinkBudget))
		b.answer.Append(int64(row.AnswerBudget))
	}
}
