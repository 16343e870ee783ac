package synth

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var (
	// promptMessageType is a prompt turn: VeRL's RL dataset applies the
	// chat template to a list of {role, content}.
	promptMessageType = arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.String},
	)
	rewardModelType = arrow.StructOf(
		arrow.Field{Name: "style", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "ground_truth", Type: arrow.BinaryTypes.String, Nullable: true},
	)
)

// RowSchema is VeRL's RL dataset row: data_source, prompt (a list of
// {role, content}), ability, reward_model {style, ground_truth} and
// extra_info, then any columns of the task family's own.
func RowSchema(extraInfo arrow.DataType, more ...arrow.Field) *arrow.Schema {
	return arrow.NewSchema(append([]arrow.Field{
		{Name: "data_source", Type: arrow.BinaryTypes.String},
		{Name: "prompt", Type: arrow.ListOf(promptMessageType)},
		{Name: "ability", Type: arrow.BinaryTypes.String},
		{Name: "reward_model", Type: rewardModelType},
		{Name: "extra_info", Type: extraInfo},
	}, more...), nil)
}

// Rows builds the columns every RowSchema row shares; the record builder
// of each task family embeds it and adds extra_info's fields (ExtraInfo)
// and its own columns (Column).
type Rows struct {
	b                                             *array.RecordBuilder
	dataSource, role, content, ability, style, gt *array.StringBuilder
	prompt                                        *array.ListBuilder
	msg, rm, ei                                   *array.StructBuilder
}

// NewRows returns an empty builder of schema, a RowSchema; mem may be nil.
func NewRows(mem memory.Allocator, schema *arrow.Schema) Rows {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, schema)
	r := Rows{b: b}
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
	return r
}

// ExtraInfo is the builder of extra_info, whose fields the family fills.
func (r *Rows) ExtraInfo() *array.StructBuilder { return r.ei }

// Column is the builder of the schema's i-th column, for a family's own
// columns after extra_info.
func (r *Rows) Column(i int) array.Builder { return r.b.Field(i) }

// AppendHead starts a row: data_source, an open prompt list that
// AppendTurn fills, ability, reward_model {style: "rule", ground_truth}
// (null when groundTruth is nil), and a non-null extra_info whose fields
// the caller appends next. Each column is its own builder, so the order in
// which a row's columns are filled does not matter.
func (r *Rows) AppendHead(dataSource, ability string, groundTruth *string) {
	r.dataSource.Append(dataSource)
	r.prompt.Append(true)
	r.ability.Append(ability)
	r.rm.Append(true)
	r.style.Append("rule")
	if groundTruth != nil {
		r.gt.Append(*groundTruth)
	} else {
		r.gt.AppendNull()
	}
	r.ei.Append(true)
}

// AppendTurn adds a {role, content} turn to the prompt of the current row.
func (r *Rows) AppendTurn(role, content string) {
	r.msg.Append(true)
	r.role.Append(role)
	r.content.Append(content)
}

// Len is the number of rows appended since the last NewRecord.
func (r *Rows) Len() int { return r.dataSource.Len() }

// NewRecord returns the rows appended so far and resets the builder. The
// caller releases the record.
func (r *Rows) NewRecord() arrow.Record { return r.b.NewRecord() }

// Release frees the builder's buffers.
func (r *Rows) Release() { r.b.Release() }

// LabelColumn names the column WithLabels adds: the whole item for
// OpenRLHF's remote reward (its --label_key), because OpenRLHF passes one
// column of a row to the reward server and a VeRL row spreads the item over
// three (data_source, reward_model.ground_truth, extra_info).
const LabelColumn = "label"

// LabelSchema returns schema, a RowSchema, with the LabelColumn
// string column appended.
func LabelSchema(schema *arrow.Schema) *arrow.Schema {
	return arrow.NewSchema(append(schema.Fields(), arrow.Field{Name: LabelColumn, Type: arrow.BinaryTypes.String}), nil)
}

// WithLabels returns rec, a batch of VeRL rows, with the LabelColumn
// appended: per row the JSON text {"data_source", "ground_truth",
// "extra_info"}, which the verifier's OpenRLHF route reads as the item. The
// caller releases both records.
func WithLabels(rec arrow.Record) (arrow.Record, error) {
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("synth: labels: the rows have no %s column", name)
		}
		return rec.Column(idx[0]), nil
	}
	ds, err := col("data_source")
	if err != nil {
		return nil, err
	}
	rm, err := col("reward_model")
	if err != nil {
		return nil, err
	}
	ei, err := col("extra_info")
	if err != nil {
		return nil, err
	}
	dsa, ok1 := ds.(*array.String)
	rma, ok2 := rm.(*array.Struct)
	eia, ok3 := ei.(*array.Struct)
	gtIdx, ok4 := rm.DataType().(*arrow.StructType).FieldIdx("ground_truth")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, fmt.Errorf("synth: labels: the rows are not VeRL rows (data_source, reward_model.ground_truth, extra_info)")
	}
	gt, ok := rma.Field(gtIdx).(*array.String)
	if !ok {
		return nil, fmt.Errorf("synth: labels: reward_model.ground_truth is not a string column")
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	type label struct {
		DataSource  string  `json:"data_source"`
		GroundTruth *string `json:"ground_truth"`
		ExtraInfo   any     `json:"extra_info"`
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		l := label{DataSource: dsa.Value(i), ExtraInfo: eia.GetOneForMarshal(i)}
		if gt.IsValid(i) && rma.IsValid(i) {
			v := gt.Value(i)
			l.GroundTruth = &v
		}
		text, err := json.Marshal(l)
		if err != nil {
			return nil, fmt.Errorf("synth: labels: row %d: %w", i, err)
		}
		b.Append(string(text))
	}
	labels := b.NewArray()
	defer labels.Release()
	return array.NewRecord(LabelSchema(rec.Schema()), append(rec.Columns(), labels), rec.NumRows()), nil
}
