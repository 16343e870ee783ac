package synth

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var (
	budgetFloat  = arrow.PrimitiveTypes.Float64
	budgetString = arrow.BinaryTypes.String

	// promptMessageType is a prompt turn: VeRL's RL dataset applies the
	// chat template to a list of {role, content}.
	promptMessageType = arrow.StructOf(
		arrow.Field{Name: "role", Type: budgetString},
		arrow.Field{Name: "content", Type: budgetString},
	)
	rewardModelType = arrow.StructOf(
		arrow.Field{Name: "style", Type: budgetString},
		arrow.Field{Name: "ground_truth", Type: budgetString, Nullable: true},
	)
	timerSettingsType = arrow.StructOf(
		arrow.Field{Name: "speed_factor", Type: budgetFloat},
		arrow.Field{Name: "jitter", Type: budgetFloat},
	)
	// createKwargsType holds the options GetDurationTool.create reads
	// (python/timeaware/tools.py TIMER_OPTIONS) and POST /v1/timers accepts.
	createKwargsType = arrow.StructOf(
		arrow.Field{Name: "speed_factor", Type: budgetFloat},
		arrow.Field{Name: "jitter", Type: budgetFloat},
		arrow.Field{Name: "time_limit_s", Type: budgetFloat},
		arrow.Field{Name: "ttl_s", Type: budgetFloat},
	)
	toolsKwargsType = arrow.StructOf(
		arrow.Field{Name: GetDurationName, Type: arrow.StructOf(
			arrow.Field{Name: "create_kwargs", Type: createKwargsType},
		)},
	)
	extraInfoType = arrow.StructOf(
		arrow.Field{Name: "split", Type: budgetString},
		arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "task_id", Type: budgetString},
		arrow.Field{Name: "variant", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "request_id", Type: budgetString},
		arrow.Field{Name: "multiplier", Type: budgetFloat, Nullable: true},
		arrow.Field{Name: "baseline_s", Type: budgetFloat},
		arrow.Field{Name: "baseline_source", Type: budgetString},
		arrow.Field{Name: "time_limit_s", Type: budgetFloat, Nullable: true},
		arrow.Field{Name: "timer", Type: timerSettingsType},
		arrow.Field{Name: "tools_kwargs", Type: toolsKwargsType},
		arrow.Field{Name: "need_tools_kwargs", Type: arrow.FixedWidthTypes.Boolean},
	)
)

// BudgetSchema is the schema of a budgeted RL prompt set: the row layout of
// VeRL's RL dataset with its tool agent loop.
//
//	data_source   timely/general, timely/game or timely/ml: the reward
//	prompt        [{role: system, content}, {role: user, content}]; the user
//	              turn ends with the budget sentence
//	ability       the family, or the task's own ability
//	reward_model  {style: "rule", ground_truth}; ground_truth is null for game
//	              and ML tasks without an answer
//	extra_info    split, index, task_id, variant, request_id (the custom_id of
//	              the row's teacher request), multiplier and baseline_s (how the
//	              budget was made), time_limit_s (null: no limit, as the rewards
//	              read it), timer {speed_factor, jitter},
//	              tools_kwargs.get_duration.create_kwargs {speed_factor, jitter,
//	              time_limit_s (0: no limit, as the timer reads it), ttl_s},
//	              need_tools_kwargs = true
//	agent_name    "tool_agent"
//
// Every row has every key and no struct is empty, because VeRL reads a
// missing nested key as None and Parquet cannot hold an empty struct. The
// rewards read the settings object in extra_info.timer as "no timer" until
// the rollout's timer token takes its place.
var BudgetSchema = verlSchema(extraInfoType, arrow.Field{Name: "agent_name", Type: budgetString})

// ToolAgentName is the agent_name of every row: VeRL's ToolAgentLoop.
const ToolAgentName = "tool_agent"

// BudgetRecordBuilder accumulates rows into record batches of BudgetSchema.
type BudgetRecordBuilder struct {
	verlRows
	split     *array.StringBuilder
	index     *array.Int64Builder
	taskID    *array.StringBuilder
	variant   *array.Int64Builder
	requestID *array.StringBuilder
	mult      *array.Float64Builder
	baseline  *array.Float64Builder
	baseSrc   *array.StringBuilder
	limit     *array.Float64Builder
	ts        *array.StructBuilder
	tsSpeed   *array.Float64Builder
	tsJitter  *array.Float64Builder
	tk        *array.StructBuilder
	gd        *array.StructBuilder
	ck        *array.StructBuilder
	ckSpeed   *array.Float64Builder
	ckJitter  *array.Float64Builder
	ckLimit   *array.Float64Builder
	ckTTL     *array.Float64Builder
	needTK    *array.BooleanBuilder
	agent     *array.StringBuilder
}

// NewBudgetRecordBuilder returns an empty builder; mem may be nil.
func NewBudgetRecordBuilder(mem memory.Allocator) *BudgetRecordBuilder {
	r := &BudgetRecordBuilder{verlRows: newVerlRows(mem, BudgetSchema)}
	b := r.b
	r.split = r.ei.FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ei.FieldBuilder(1).(*array.Int64Builder)
	r.taskID = r.ei.FieldBuilder(2).(*array.StringBuilder)
	r.variant = r.ei.FieldBuilder(3).(*array.Int64Builder)
	r.requestID = r.ei.FieldBuilder(4).(*array.StringBuilder)
	r.mult = r.ei.FieldBuilder(5).(*array.Float64Builder)
	r.baseline = r.ei.FieldBuilder(6).(*array.Float64Builder)
	r.baseSrc = r.ei.FieldBuilder(7).(*array.StringBuilder)
	r.limit = r.ei.FieldBuilder(8).(*array.Float64Builder)
	r.ts = r.ei.FieldBuilder(9).(*array.StructBuilder)
	r.tsSpeed = r.ts.FieldBuilder(0).(*array.Float64Builder)
	r.tsJitter = r.ts.FieldBuilder(1).(*array.Float64Builder)
	r.tk = r.ei.FieldBuilder(10).(*array.StructBuilder)
	r.gd = r.tk.FieldBuilder(0).(*array.StructBuilder)
	r.ck = r.gd.FieldBuilder(0).(*array.StructBuilder)
	r.ckSpeed = r.ck.FieldBuilder(0).(*array.Float64Builder)
	r.ckJitter = r.ck.FieldBuilder(1).(*array.Float64Builder)
	r.ckLimit = r.ck.FieldBuilder(2).(*array.Float64Builder)
	r.ckTTL = r.ck.FieldBuilder(3).(*array.Float64Builder)
	r.needTK = r.ei.FieldBuilder(11).(*array.BooleanBuilder)
	r.agent = b.Field(5).(*array.StringBuilder)
	return r
}

// Append adds one row.
func (r *BudgetRecordBuilder) Append(row *BudgetRow) {
	r.appendHead(row.DataSource, row.Ability, row.GroundTruth)
	r.appendTurn("system", row.System)
	r.appendTurn("user", row.User)
	r.split.Append(row.Split)
	r.index.Append(row.Index)
	r.taskID.Append(row.TaskID)
	r.variant.Append(int64(row.Variant))
	r.requestID.Append(row.RequestID())
	if row.HasLimit() {
		r.mult.Append(row.Multiplier)
		r.limit.Append(row.TimeLimitS)
	} else {
		r.mult.AppendNull()
		r.limit.AppendNull()
	}
	r.baseline.Append(row.BaselineS)
	r.baseSrc.Append(row.BaselineSource)
	r.ts.Append(true)
	r.tsSpeed.Append(row.SpeedFactor)
	r.tsJitter.Append(row.Jitter)
	r.tk.Append(true)
	r.gd.Append(true)
	r.ck.Append(true)
	r.ckSpeed.Append(row.SpeedFactor)
	r.ckJitter.Append(row.Jitter)
	r.ckLimit.Append(row.TimeLimitS)
	r.ckTTL.Append(row.TTLS)
	r.needTK.Append(true)
	r.agent.Append(ToolAgentName)
}
