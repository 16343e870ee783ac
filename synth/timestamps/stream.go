package timestamps

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/splits/scenario"
)

// Input is one stream of TicToc records: a JSON array of records or JSONL.
// Name labels it in errors (a file name, say).
type Input = conversation.Source

// Summary counts what Stream did.
type Summary struct {
	// Records counts the records read; Stamped those stamped and emitted;
	// OtherShards those that Options.Keep left out.
	Records     int `json:"records"`
	Stamped     int `json:"stamped"`
	OtherShards int `json:"other_shards"`
	// BySensitivity counts stamped records per sensitivity;
	// SensitivityFrom and StartFrom say where those came from (FromRecord,
	// FromCatalog, FromOption).
	BySensitivity   map[string]int `json:"by_sensitivity"`
	SensitivityFrom map[string]int `json:"sensitivity_from"`
	StartFrom       map[string]int `json:"start_from"`
	// TimesFilled and TimesKept count messages whose times were drawn and
	// kept (fill mode); a final message counts once for its three times.
	TimesFilled int `json:"times_filled"`
	TimesKept   int `json:"times_kept"`
}

func newSummary() *Summary {
	s := &Summary{BySensitivity: map[string]int{}, SensitivityFrom: map[string]int{}, StartFrom: map[string]int{}}
	for _, l := range scenario.Sensitivities {
		s.BySensitivity[l] = 0
	}
	return s
}

// batch is what one batch of records gave: the rewritten records, one
// after another (ends[k] is where record k ends), and what stamping did.
type batch struct {
	out     []byte
	ends    []int
	infos   []Info
	records int
	skipped int
}

// Stream reads the inputs in order, stamps every record (see
// Stamper.Stamp) and calls emit with each stamped record, rewritten by
// RewriteTimes (one line of compact JSON), in input order. The slice passed
// to emit is valid only during the call. Records are decoded and stamped on
// Options.Workers goroutines with a bounded number of batches in flight,
// so memory does not grow with the input; emit runs on the caller's
// goroutine.
//
// The first problem stops the run: a malformed record or one that cannot be
// stamped is a *conversation.RecordError naming the input, the record's
// position and line, its id and the field; an error from emit is returned
// as it is.
func Stream(ctx context.Context, inputs []Input, opt Options, emit func(rec []byte) error) (*Summary, error) {
	st, err := NewStamper(opt)
	if err != nil {
		return nil, err
	}
	sum := newSummary()
	err = conversation.ForEachBatch(ctx, inputs, conversation.BatchOptions{Workers: opt.Workers, Prefix: "timestamps"},
		func(ctx context.Context, from conversation.Batch) (*batch, error) {
			return process(ctx, from.Records, st, opt.Keep)
		},
		func(_ conversation.Batch, b *batch) error {
			sum.Records += b.records
			sum.OtherShards += b.skipped
			from := 0
			for k, end := range b.ends {
				if err := emit(b.out[from:end]); err != nil {
					return err
				}
				from = end
				in := &b.infos[k]
				sum.Stamped++
				sum.BySensitivity[in.Sensitivity]++
				sum.SensitivityFrom[in.SensitivityFrom]++
				sum.StartFrom[in.StartFrom]++
				sum.TimesFilled += in.Filled
				sum.TimesKept += in.Kept
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// process stamps one batch of records.
func process(ctx context.Context, raws []conversation.RawRecord, st *Stamper, keep func(string) bool) (*batch, error) {
	size := 0
	for _, raw := range raws {
		size += len(raw.Data) + 256
	}
	b := &batch{out: make([]byte, 0, size), ends: make([]int, 0, len(raws)), infos: make([]Info, 0, len(raws))}
	for _, raw := range raws {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.records++
		// Another shard's record is passed over on its id alone.
		if keep != nil {
			if id, ok := conversation.RecordID(raw.Data); ok && !keep(id) {
				b.skipped++
				continue
			}
		}
		t, err := conversation.ParseTrajectory(raw)
		if err != nil {
			return nil, fmt.Errorf("timestamps: %w", err)
		}
		if keep != nil && !keep(t.ID) {
			b.skipped++
			continue
		}
		info, err := st.Stamp(t)
		if err == nil {
			b.out, err = RewriteTimes(b.out, raw.Data, t)
		}
		if err == nil {
			b.out = keepV1Sample(b.out, raw.Source, t)
		}
		if err != nil {
			re := &conversation.RecordError{Source: raw.Source, Record: raw.Record, Line: raw.Line, ID: t.ID, Err: err}
			var fe *FieldError
			if errors.As(err, &fe) {
				re.Field, re.Err = fe.Field, fe.Err
			}
			return nil, fmt.Errorf("timestamps: %w", re)
		}
		b.ends = append(b.ends, len(b.out))
		b.infos = append(b.infos, info)
	}
	return b, nil
}

// keepV1Sample gives a record read from a TicToc v1 file
// (prefer(Tool|NoTool)_elapse_<k>.json) the class and elapse level that
// the file's name held, as "preference" and "elapse" members, unless it
// has them: records merged from several such files into one output then
// still read back as the samples they were. out ends with the record,
// compact JSON.
func keepV1Sample(out []byte, source string, t *conversation.Trajectory) []byte {
	label, elapse, ok := conversation.V1Name(source)
	if !ok || len(out) == 0 || out[len(out)-1] != '}' {
		return out
	}
	out = out[:len(out)-1]
	if len(t.Preference) == 0 {
		out = append(out, `,"preference":"`...)
		out = append(out, label...)
		out = append(out, '"')
	}
	if t.Elapse == nil {
		out = append(out, `,"elapse":`...)
		out = strconv.AppendInt(out, int64(elapse), 10)
	}
	return append(out, '}')
}
