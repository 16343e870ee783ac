package puzzles

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth"
)

var (
	intType = arrow.PrimitiveTypes.Int64

	// factType is one entry of constraints_meta: Fact, with the
	// fields its kind does not read null.
	factType = arrow.StructOf(
		arrow.Field{Name: "kind", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "level", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "year", Type: intType, Nullable: true},
		arrow.Field{Name: "month", Type: intType, Nullable: true},
		arrow.Field{Name: "day", Type: intType, Nullable: true},
		arrow.Field{Name: "weekday", Type: intType, Nullable: true},
		arrow.Field{Name: "n", Type: intType, Nullable: true},
		arrow.Field{Name: "leap", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		arrow.Field{Name: "animal", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "season", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "months", Type: arrow.ListOf(intType), Nullable: true},
		arrow.Field{Name: "weekdays", Type: arrow.ListOf(intType), Nullable: true},
		arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "event", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "relation", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "start", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "end", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "years", Type: arrow.ListOf(intType), Nullable: true},
	)
	extraType = arrow.StructOf(
		arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "index", Type: intType},
		arrow.Field{Name: "variant", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "target_solutions", Type: intType},
		arrow.Field{Name: "first_date", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "last_date", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "group", Type: arrow.BinaryTypes.String},
	)
)

// Schema is the schema of a Time Puzzles set: VeRL's RL dataset
// layout plus the puzzle itself.
//
//	data_source           "timepuzzles", the rewards.TimePuzzles key
//	prompt                [{role: system, content}?, {role: user, content}]
//	ability               Options.Ability
//	reward_model          {style: "rule", ground_truth}: the solutions joined
//	                      by commas, or "None"
//	extra_info            split, index, variant (the rendering in the prompt:
//	                      implicit or explicit), target_solutions, first_date
//	                      and last_date (the dates that count), id (unique:
//	                      puzzles-s<seed>-<index>) and group (the unit kept
//	                      on one side of a split: the answer set, or for a
//	                      puzzle without one its fact set's hash)
//	constraints           the implicit rendering of each fact
//	explicit_constraints  the explicit rendering of each fact
//	constraints_meta      each fact as Fact: kind, level and the fields
//	                      of its kind (others null); with extra_info's dates,
//	                      enough to solve the puzzle again
//	solutions             the answer dates, sorted, YYYY-MM-DD
//
// The three constraint lists are parallel and in prompt order.
var Schema = synth.RowSchema(extraType,
	arrow.Field{Name: "constraints", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	arrow.Field{Name: "explicit_constraints", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	arrow.Field{Name: "constraints_meta", Type: arrow.ListOf(factType)},
	arrow.Field{Name: "solutions", Type: arrow.ListOf(arrow.BinaryTypes.String)},
)

// RecordBuilder accumulates puzzles into record batches of
// Schema.
type RecordBuilder struct {
	synth.Rows
	split, variant, first, last, id, group *array.StringBuilder
	index, target                          *array.Int64Builder
	cons, expl, sols                       *array.ListBuilder
	consV, explV, solsV                    *array.StringBuilder
	meta                                   *array.ListBuilder
	fact                                   *array.StructBuilder
	kind, level                            *array.StringBuilder
	year, month, day, weekday, n           *array.Int64Builder
	leap                                   *array.BooleanBuilder
	animal, season                         *array.StringBuilder
	months, weekdays, years                *array.ListBuilder
	monthsV, weekdaysV, yearsV             *array.Int64Builder
	op, event, relation, start, end        *array.StringBuilder
}

// NewRecordBuilder returns an empty builder; mem may be nil.
func NewRecordBuilder(mem memory.Allocator) *RecordBuilder {
	r := &RecordBuilder{Rows: synth.NewRows(mem, Schema)}
	r.split = r.ExtraInfo().FieldBuilder(0).(*array.StringBuilder)
	r.index = r.ExtraInfo().FieldBuilder(1).(*array.Int64Builder)
	r.variant = r.ExtraInfo().FieldBuilder(2).(*array.StringBuilder)
	r.target = r.ExtraInfo().FieldBuilder(3).(*array.Int64Builder)
	r.first = r.ExtraInfo().FieldBuilder(4).(*array.StringBuilder)
	r.last = r.ExtraInfo().FieldBuilder(5).(*array.StringBuilder)
	r.id = r.ExtraInfo().FieldBuilder(6).(*array.StringBuilder)
	r.group = r.ExtraInfo().FieldBuilder(7).(*array.StringBuilder)
	r.cons = r.Column(5).(*array.ListBuilder)
	r.consV = r.cons.ValueBuilder().(*array.StringBuilder)
	r.expl = r.Column(6).(*array.ListBuilder)
	r.explV = r.expl.ValueBuilder().(*array.StringBuilder)
	r.meta = r.Column(7).(*array.ListBuilder)
	r.fact = r.meta.ValueBuilder().(*array.StructBuilder)
	r.kind = r.fact.FieldBuilder(0).(*array.StringBuilder)
	r.level = r.fact.FieldBuilder(1).(*array.StringBuilder)
	r.year = r.fact.FieldBuilder(2).(*array.Int64Builder)
	r.month = r.fact.FieldBuilder(3).(*array.Int64Builder)
	r.day = r.fact.FieldBuilder(4).(*array.Int64Builder)
	r.weekday = r.fact.FieldBuilder(5).(*array.Int64Builder)
	r.n = r.fact.FieldBuilder(6).(*array.Int64Builder)
	r.leap = r.fact.FieldBuilder(7).(*array.BooleanBuilder)
	r.animal = r.fact.FieldBuilder(8).(*array.StringBuilder)
	r.season = r.fact.FieldBuilder(9).(*array.StringBuilder)
	r.months = r.fact.FieldBuilder(10).(*array.ListBuilder)
	r.monthsV = r.months.ValueBuilder().(*array.Int64Builder)
	r.weekdays = r.fact.FieldBuilder(11).(*array.ListBuilder)
	r.weekdaysV = r.weekdays.ValueBuilder().(*array.Int64Builder)
	r.op = r.fact.FieldBuilder(12).(*array.StringBuilder)
	r.event = r.fact.FieldBuilder(13).(*array.StringBuilder)
	r.relation = r.fact.FieldBuilder(14).(*array.StringBuilder)
	r.start = r.fact.FieldBuilder(15).(*array.StringBuilder)
	r.end = r.fact.FieldBuilder(16).(*array.StringBuilder)
	r.years = r.fact.FieldBuilder(17).(*array.ListBuilder)
	r.yearsV = r.years.ValueBuilder().(*array.Int64Builder)
	r.sols = r.Column(8).(*array.ListBuilder)
	r.solsV = r.sols.ValueBuilder().(*array.StringBuilder)
	return r
}

// factFields lists, per kind, the optional fields it writes, in
// schema order from year (2) to years (17).
var factFields = map[Kind][]int{
	KindYear: {2}, KindDecade: {2}, KindLeapYear: {7}, KindZodiac: {8}, KindYearSet: {2, 13, 17},
	KindMonth: {3}, KindSeason: {9, 10}, KindLunar: {3, 7},
	KindWeekday: {5}, KindNth: {5, 6}, KindDay: {4}, KindDayRange: {4, 12},
	KindWeekdays: {11}, KindEvent: {13, 14, 15, 16},
}

func (r *RecordBuilder) appendFact(f *Fact) {
	r.fact.Append(true)
	r.kind.Append(string(f.Kind))
	r.level.Append(string(f.Level))
	var has [18]bool
	for _, i := range factFields[f.Kind] {
		has[i] = true
	}
	if f.Kind == KindEvent && f.End == "" {
		has[16] = false
	}
	if f.Kind == KindYearSet && f.Relation != "" {
		has[14] = true // read by rule: relation scheduled
	}
	ints := []struct {
		b *array.Int64Builder
		v int
	}{{r.year, f.Year}, {r.month, f.Month}, {r.day, f.Day}, {r.weekday, f.Weekday}, {r.n, f.N}}
	for i, x := range ints {
		if has[2+i] {
			x.b.Append(int64(x.v))
		} else {
			x.b.AppendNull()
		}
	}
	if has[7] {
		r.leap.Append(f.Leap)
	} else {
		r.leap.AppendNull()
	}
	str := func(b *array.StringBuilder, on bool, v string) {
		if on {
			b.Append(v)
		} else {
			b.AppendNull()
		}
	}
	list := func(b *array.ListBuilder, v *array.Int64Builder, on bool, xs []int) {
		if !on {
			b.AppendNull()
			return
		}
		b.Append(true)
		for _, x := range xs {
			v.Append(int64(x))
		}
	}
	str(r.animal, has[8], f.Animal)
	str(r.season, has[9], f.Season)
	list(r.months, r.monthsV, has[10], f.Months)
	list(r.weekdays, r.weekdaysV, has[11], f.Weekdays)
	str(r.op, has[12], f.Op)
	str(r.event, has[13], f.Event)
	str(r.relation, has[14], string(f.Relation))
	str(r.start, has[15], f.Start)
	str(r.end, has[16], f.End)
	list(r.years, r.yearsV, has[17], f.Years)
}

// Append adds one puzzle.
func (r *RecordBuilder) Append(p *Puzzle) {
	gt := p.GroundTruth()
	r.AppendHead(DataSource, p.Ability, &gt)
	for _, m := range p.Messages {
		r.AppendTurn(m.Role, m.Text())
	}
	r.split.Append(p.Split)
	r.index.Append(p.Index)
	r.variant.Append(p.Variant)
	r.target.Append(int64(p.Target))
	r.first.Append(p.FirstDate)
	r.last.Append(p.LastDate)
	r.id.Append(p.ID)
	r.group.Append(p.Group)
	strs := func(b *array.ListBuilder, v *array.StringBuilder, xs []string) {
		b.Append(true)
		for _, x := range xs {
			v.Append(x)
		}
	}
	strs(r.cons, r.consV, p.Constraints)
	strs(r.expl, r.explV, p.Explicit)
	r.meta.Append(true)
	for i := range p.Facts {
		r.appendFact(&p.Facts[i])
	}
	strs(r.sols, r.solsV, p.Solutions)
}

// Verdict is what Check finds of one stored puzzle.
type Verdict struct {
	// Row is the 0-based row of the file; Index is extra_info.index and ID
	// extra_info.id, which names the row.
	Row   int64
	Index int64
	ID    string
	// Stored is the answer set of the row's solutions column; GroundTruth
	// is its reward_model.ground_truth.
	Stored      []string
	GroundTruth string
	// Solved is the answer set computed from constraints_meta, or nil when
	// the row cannot be solved (Err says why). A row with a fact that holds
	// on no day has the empty answer, and Err says which (a *NoDayError).
	Solved []string
	Err    error
}

// Differs reports whether the stored answer set (solutions or
// ground_truth, each read as a set) disagrees with the solved one, or the
// row could not be solved. A row whose fact holds on no day is solved: its
// answer is empty.
func (c *Verdict) Differs() bool {
	if c.Err != nil && !errors.Is(c.Err, ErrNoDay) {
		return true
	}
	gt := []string{}
	if t := strings.TrimSpace(c.GroundTruth); t != "" && !strings.EqualFold(t, "none") {
		for _, x := range strings.Split(t, ",") {
			gt = append(gt, strings.TrimSpace(x))
		}
	}
	return !slices.Equal(setOf(c.Stored), c.Solved) || !slices.Equal(setOf(gt), c.Solved)
}

func setOf(xs []string) []string {
	out := slices.Clone(xs)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// storedRow is what Check reads of a row.
type storedRow struct {
	RewardModel struct {
		GroundTruth *string `json:"ground_truth"`
	} `json:"reward_model"`
	ExtraInfo struct {
		Index     int64  `json:"index"`
		ID        string `json:"id"`
		FirstDate string `json:"first_date"`
		LastDate  string `json:"last_date"`
	} `json:"extra_info"`
	Meta      []Fact   `json:"constraints_meta"`
	Solutions []string `json:"solutions"`
}

// Check reads a puzzle file (any dataset format with Schema's
// columns reward_model, extra_info, constraints_meta and solutions), solves
// every row again from its constraints_meta with solver (nil: NewSolver())
// and calls check with each verdict, in file order. Rows that cannot be
// solved are verdicts with Err set (an *UndecidableError for an answer the
// lunar data cannot decide), not errors; errors are for files that cannot
// be read.
func Check(ctx context.Context, f dataset.File, name string, format *dataset.Format, solver *Solver, check func(*Verdict) error) error {
	cols := []string{"reward_model", "extra_info", "constraints_meta", "solutions"}
	rr, err := dataset.Open(f, name, format, dataset.ReadOptions{Schema: Schema, Columns: cols})
	if err != nil {
		return err
	}
	defer rr.Close()
	if solver == nil {
		solver = NewSolver()
	}
	var buf bytes.Buffer
	w, err := dataset.JSONL.NewWriter(&buf, rr.Schema(), dataset.Options{})
	if err != nil {
		return err
	}
	var row int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		buf.Reset()
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<30)
		for sc.Scan() {
			var s storedRow
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				return fmt.Errorf("%s: row %d: %w", name, row+1, err)
			}
			c := &Verdict{Row: row, Index: s.ExtraInfo.Index, ID: s.ExtraInfo.ID, Stored: s.Solutions}
			if s.RewardModel.GroundTruth != nil {
				c.GroundTruth = *s.RewardModel.GroundTruth
			}
			if from, to, err := YearsOf(s.ExtraInfo.FirstDate, s.ExtraInfo.LastDate); err != nil {
				c.Err = err
			} else {
				c.Solved, c.Err = solver.Solve(s.Meta, from, to)
			}
			if err := check(c); err != nil {
				return err
			}
			row++
		}
	}
}
