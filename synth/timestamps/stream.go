package timestamps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/splits"
)

// Input is one stream of TicToc records: a JSON array of records or JSONL.
// Name labels it in errors (a file name, say).
type Input struct {
	Name   string
	Reader io.Reader
}

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
	for _, l := range splits.Sensitivities {
		s.BySensitivity[l] = 0
	}
	return s
}

const recordsPerBatch = 64

type batch struct {
	raws    []conversation.RawRecord
	out     []byte
	ends    []int
	infos   []Info
	records int
	skipped int
	err     error
	done    chan struct{}
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
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *batch, workers)
	order := make(chan *batch, 2*workers)
	var readErr error
	go func() {
		defer close(order)
		defer close(jobs)
		readErr = readBatches(ctx, inputs, jobs, order)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range jobs {
				b.process(ctx, st, opt.Keep)
				close(b.done)
			}
		})
	}
	sum := newSummary()
	var firstErr error
	for b := range order {
		if firstErr != nil {
			continue
		}
		select {
		case <-b.done:
		case <-ctx.Done():
			firstErr = ctx.Err()
			continue
		}
		if b.err != nil {
			firstErr = b.err
			cancel()
			continue
		}
		sum.Records += b.records
		sum.OtherShards += b.skipped
		from := 0
		for k, end := range b.ends {
			if err := emit(b.out[from:end]); err != nil {
				firstErr = err
				cancel()
				break
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
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = readErr
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return sum, nil
}

func readBatches(ctx context.Context, inputs []Input, jobs, order chan<- *batch) error {
	send := func(b *batch) error {
		select {
		case order <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case jobs <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	newBatch := func() *batch {
		return &batch{raws: make([]conversation.RawRecord, 0, recordsPerBatch), done: make(chan struct{})}
	}
	for _, in := range inputs {
		rd := conversation.NewReader(in.Reader, in.Name)
		b := newBatch()
		for {
			raw, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("timestamps: %w", err)
			}
			b.raws = append(b.raws, raw)
			if len(b.raws) == recordsPerBatch {
				if err := send(b); err != nil {
					return err
				}
				b = newBatch()
			}
		}
		if len(b.raws) > 0 {
			if err := send(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *batch) process(ctx context.Context, st *Stamper, keep func(string) bool) {
	defer func() { b.raws = nil }()
	size := 0
	for _, raw := range b.raws {
		size += len(raw.Data) + 256
	}
	b.out = make([]byte, 0, size)
	b.ends = make([]int, 0, len(b.raws))
	b.infos = make([]Info, 0, len(b.raws))
	for _, raw := range b.raws {
		if err := ctx.Err(); err != nil {
			b.err = err
			return
		}
		b.records++
		t, err := conversation.ParseTrajectory(raw)
		if err != nil {
			b.err = fmt.Errorf("timestamps: %w", err)
			return
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
			b.err = fmt.Errorf("timestamps: %w", re)
			return
		}
		b.ends = append(b.ends, len(b.out))
		b.infos = append(b.infos, info)
	}
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
