package budget

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/timeaware/timeaware/synth"
)

var (
	timerSettingsType = arrow.StructOf(
		arrow.Field{Name: "speed_factor", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "jitter", Type: arrow.PrimitiveTypes.Float64},
	)
	// createKwargsType holds the options GetDurationTool.create reads
	// (python/timeaware/tools.py TIMER_OPTIONS) and POST /v1/timers accepts.
	createKwargsType = arrow.StructOf(
		arrow.Field{Name: "speed_factor", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "jitter", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "time_limit_s", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "ttl_s", Type: arrow.PrimitiveTypes.Float64},
	)
	toolsKwargsType = arrow.StructOf(
		arrow.Field{Name: GetDurationName, Type: arrow.StructOf(
			arrow.Field{Name: "create_kwargs", Type: createKwargsType},
		)},
	)
	extraInfoType = arrow.StructOf(
		arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "task_id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "variant", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "request_id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "multiplier", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "baseline_s", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "baseline_source", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "time_limit_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "timer", Type: timerSettingsType},
		arrow.Field{Name: "tools_kwargs", Type: toolsKwargsType},
		arrow.Field{Name: "need_tools_kwargs", Type: arrow.FixedWidthTypes.Boolean},
	)
)

// Schema is the schema of a budgeted RL prompt set: the row layout of
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
var Schema = synth.RowSchema(extraInfoType, arrow.Field{Name: "agent_name", Type: arrow.BinaryTypes.String})

// ToolAgentName is the agent_name of every row: VeRL's ToolAgentLoop.
const ToolAgentName = "tool_agent"

// RecordBuilder accumulates rows into record batches of Schema.
type RecordBuilder struct {
	synth.Rows
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

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	r := &RecordBuilder{Rows: synth.NewRows(mem, Schema)}
	r.split = r.ExtraInfo().FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ExtraInfo().FieldBuilder(1).(*array.Int64Builder)
	r.taskID = r.ExtraInfo().FieldBuilder(2).(*array.StringBuilder)
	r.variant = r.ExtraInfo().FieldBuilder(3).(*array.Int64Builder)
	r.requestID = r.ExtraInfo().FieldBuilder(4).(*array.StringBuilder)
	r.mult = r.ExtraInfo().FieldBuilder(5).(*array.Float64Builder)
	r.baseline = r.ExtraInfo().FieldBuilder(6).(*array.Float64Builder)
	r.baseSrc = r.ExtraInfo().FieldBuilder(7).(*array.StringBuilder)
	r.limit = r.ExtraInfo().FieldBuilder(8).(*array.Float64Builder)
	r.ts = r.ExtraInfo().FieldBuilder(9).(*array.StructBuilder)
	r.tsSpeed = r.ts.FieldBuilder(0).(*array.Float64Builder)
	r.tsJitter = r.ts.FieldBuilder(1).(*array.Float64Builder)
	r.tk = r.ExtraInfo().FieldBuilder(10).(*array.StructBuilder)
	r.gd = r.tk.FieldBuilder(0).(*array.StructBuilder)
	r.ck = r.gd.FieldBuilder(0).(*array.StructBuilder)
	r.ckSpeed = r.ck.FieldBuilder(0).(*array.Float64Builder)
	r.ckJitter = r.ck.FieldBuilder(1).(*array.Float64Builder)
	r.ckLimit = r.ck.FieldBuilder(2).(*array.Float64Builder)
	r.ckTTL = r.ck.FieldBuilder(3).(*array.Float64Builder)
	r.needTK = r.ExtraInfo().FieldBuilder(11).(*array.BooleanBuilder)
	r.agent = r.Column(5).(*array.StringBuilder)
	return r
}

// Append adds one row.
func (r *RecordBuilder) Append(row *Row) {
	r.AppendHead(row.DataSource, row.Ability, row.GroundTruth)
	r.AppendTurn("system", row.System)
	r.AppendTurn("user", row.User)
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
