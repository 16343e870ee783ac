package splits

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// ContaminationReport is the contamination check's verdict.
type ContaminationReport struct {
	Passed bool `json:"passed"`
	// Summary is one readable line.
	Summary string               `json:"summary"`
	Options ContaminationOptions `json:"options"`
	// BenchmarkFiles and Keys describe the index; TrainingRows the rows
	// scanned, ContaminatedRows those holding at least one benchmark record.
	BenchmarkFiles   []string `json:"benchmark_files"`
	Keys             int      `json:"ngram_keys"`
	CommonDropped    int      `json:"common_ngrams_dropped"`
	TrainingRows     int      `json:"training_rows"`
	ContaminatedRows int      `json:"contaminated_rows"`
	// Records and Contaminated total the benchmarks'.
	Records      int `json:"records"`
	Contaminated int `json:"contaminated"`
	// Benchmarks, by name.
	Benchmarks []BenchmarkResult `json:"benchmarks"`
}

// BenchmarkResult is one benchmark's part of the report. Counts are
// complete; Findings lists the contaminated records, in index order, up
// to ContaminationOptions.MaxFindings.
type BenchmarkResult struct {
	Name   string `json:"name"`
	Status string `json:"status"` // StatusPass or StatusFail (ScopeBenchmark), else StatusInfo
	// Records indexed; Skipped of other splits; Empty without words.
	Records int `json:"records"`
	Skipped int `json:"skipped_other_splits"`
	Empty   int `json:"empty"`
	// Contaminated records: Exact ones (the whole prompt in a training
	// row), Near ones (only a share of their n-grams).
	Contaminated int `json:"contaminated"`
	Exact        int `json:"exact"`
	Near         int `json:"near"`
	// TrainingRows hold at least one of its records; Matches are the
	// (training row, record) pairs.
	TrainingRows int                    `json:"training_rows"`
	Matches      int                    `json:"matches"`
	Findings     []ContaminationFinding `json:"findings,omitempty"`
}

// ContaminationFinding is a contaminated benchmark record, with its best
// match: an exact one first, else the highest share, else the first row.
type ContaminationFinding struct {
	Message   string `json:"message"`
	Benchmark string `json:"benchmark"`
	ID        string `json:"id"`
	// BenchmarkFile and BenchmarkRow locate the record.
	BenchmarkFile string `json:"benchmark_file"`
	BenchmarkRow  int    `json:"benchmark_row"`
	Kind          string `json:"kind"` // KindExact or KindNear
	// Overlap is the share of the record's n-grams in the training row.
	Overlap float64 `json:"overlap"`
	// Rows is how many training rows hold the record.
	Rows int `json:"rows"`
	// File, Row and TrainID locate the best training row; Start and End
	// are the matching span's character (code point) offsets in its text,
	// End exclusive; Span the span's text, cut to SpanChars.
	File    string `json:"file"`
	Row     int    `json:"row"`
	TrainID string `json:"train_id,omitempty"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Span    string `json:"span"`
}

// contamHit is a (training row, record) match a worker found.
type contamHit struct {
	row     int32 // in the batch
	rec     uint32
	exact   bool
	overlap float64
	start   int32 // character offsets
	end     int32
	span    string
}

type contamBatch struct {
	rows []Row
	hits []contamHit
}

// contamAcc accumulates one record's matches in one training row.
type contamAcc struct {
	count  int32
	lo, hi int32 // words [lo, hi) of the matched n-grams
	shortQ bool
}

// contamWorker is one worker's scratch.
type contamWorker struct {
	tk    *Tokenizer
	words []Word
	acc   map[uint32]*contamAcc
	pool  []contamAcc
	seen  map[uint64]struct{}
	order []uint32
	keys  []uint64
	cands []int32
}

// Scan looks up every training row of src in the index, in parallel, and
// returns the report. Memory grows with the index and the records found,
// not with the training rows: batches of rows stream through the workers.
func (ix *ContaminationIndex) Scan(ctx context.Context, src RowSource) (*ContaminationReport, error) {
	if len(ix.records) == 0 {
		why := "every row is of a split other than " + strings.Join(ix.opt.Splits, ", ") + ", or has no text (--benchmark-splits all checks every split)"
		if slices.ContainsFunc(ix.opt.Splits, func(s string) bool { return strings.EqualFold(s, "all") }) {
			why = "no row has a text"
		}
		return nil, fmt.Errorf("splits: %s: %w: %s", strings.Join(ix.files, ", "), errNoBenchmarkRecords, why)
	}
	opt := ix.opt
	rep := &ContaminationReport{Options: opt, BenchmarkFiles: ix.files, Keys: ix.Keys(), CommonDropped: ix.dropped}
	benches := slices.Clone(ix.benches)
	recRows := map[uint32]int{}
	best := map[uint32]*ContaminationFinding{}
	benchSeen := make([]int, len(benches)) // last training row (1-based count) that hit the bench
	it, err := src()
	if err != nil {
		return nil, fmt.Errorf("splits: open rows: %w", err)
	}
	defer it.Close()
	var workersMu sync.Mutex
	var workers []*contamWorker
	newWorker := func() *contamWorker {
		w := &contamWorker{tk: NewTokenizer(opt.Norm), acc: map[uint32]*contamAcc{}, seen: map[uint64]struct{}{}}
		workersMu.Lock()
		workers = append(workers, w)
		workersMu.Unlock()
		return w
	}
	rowNo := 0
	merge := func(b *contamBatch) {
		hi := 0
		for i := range b.rows {
			rowNo++
			any := false
			for ; hi < len(b.hits) && int(b.hits[hi].row) == i; hi++ {
				h := &b.hits[hi]
				any = true
				rec := &ix.records[h.rec]
				bench := &benches[rec.bench]
				bench.Matches++
				if benchSeen[rec.bench] != rowNo {
					benchSeen[rec.bench] = rowNo
					bench.TrainingRows++
				}
				recRows[h.rec]++
				f := best[h.rec]
				if f == nil || (h.exact && f.Kind != KindExact) || (h.exact == (f.Kind == KindExact) && h.overlap > f.Overlap) {
					r := &b.rows[i]
					kind := KindNear
					if h.exact {
						kind = KindExact
					}
					best[h.rec] = &ContaminationFinding{Benchmark: bench.Name, ID: rec.id, BenchmarkFile: rec.file, BenchmarkRow: int(rec.row),
						Kind: kind, Overlap: h.overlap, File: r.File, Row: r.Index, TrainID: r.ID, Start: int(h.start), End: int(h.end), Span: h.span}
				}
			}
			if any {
				rep.ContaminatedRows++
			}
		}
		rep.TrainingRows += len(b.rows)
		b.rows, b.hits = nil, nil
	}
	err = orderedPipeline(ctx, opt.Workers, newWorker, ix.scanBatch, merge, func(emit func(*contamBatch) error) error {
		files := map[string]string{}
		b := &contamBatch{}
		for {
			r, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("splits: %w", err)
			}
			if f, ok := files[r.File]; ok {
				r.File = f
			} else {
				files[r.File] = r.File
			}
			r.Group, r.Source, r.Sensitivity, r.Label, r.SplitLabel = "", "", "", "", ""
			b.rows = append(b.rows, r)
			if len(b.rows) == contamBatchRows {
				if err := emit(b); err != nil {
					return err
				}
				b = &contamBatch{}
			}
		}
		return emit(b) // the rest, maybe none
	})
	if err != nil {
		return nil, err
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("splits: close rows: %w", err)
	}
	ix.finish(rep, benches, recRows, best)
	return rep, nil
}

// contamBatchRows is the rows of a batch: enough to amortise the hand-off,
// few enough that the batches in flight stay small.
const contamBatchRows = 256

// scanBatch finds the records each row of a batch holds.
func (ix *ContaminationIndex) scanBatch(w *contamWorker, b *contamBatch) {
	for i := range b.rows {
		ix.scanRow(w, b, int32(i))
	}
}

func (ix *ContaminationIndex) scanRow(w *contamWorker, b *contamBatch, row int32) {
	text := b.rows[row].Text
	if text == "" {
		return
	}
	n := ix.opt.NGram
	w.words = w.tk.Words(w.words[:0], text)
	words := w.words
	clear(w.acc)
	clear(w.seen)
	w.pool, w.order = w.pool[:0], w.order[:0]
	add := func(key uint64, at, k int, shortQ bool) {
		recs := ix.lookup(key)
		if recs == nil {
			return
		}
		if _, dup := w.seen[key]; dup {
			return
		}
		w.seen[key] = struct{}{}
		for _, r := range recs {
			a := w.acc[r]
			if a == nil {
				if cap(w.pool) == len(w.pool) {
					w.pool = make([]contamAcc, 0, 2*cap(w.pool)+16) // the old entries stay where acc points
				}
				w.pool = append(w.pool, contamAcc{lo: int32(at)}) // hi is set below
				a = &w.pool[len(w.pool)-1]
				w.acc[r] = a
				w.order = append(w.order, r)
			}
			a.count++
			a.lo, a.hi = min(a.lo, int32(at)), max(a.hi, int32(at+k))
			a.shortQ = a.shortQ || shortQ
		}
	}
	// The n-grams' keys first, then the filter over them in a tight loop
	// whose independent memory reads overlap, then the table for the few
	// that pass.
	w.keys = appendRunKeys(w.keys[:0], words, n)
	w.cands = w.cands[:0]
	filter, fmask := ix.filter, ix.fmask
	for i, k := range w.keys {
		f := (tableKey(k) >> 20) & fmask
		if filter[f>>6]&(1<<(f&63)) != 0 {
			w.cands = append(w.cands, int32(i))
		}
	}
	for _, i := range w.cands {
		add(w.keys[i], int(i), n, false)
	}
	if ix.shortLens != 0 {
		for i, wd := range words {
			if ix.shortFirst[(wd.Hash>>6)&1023]&(1<<(wd.Hash&63)) == 0 {
				continue
			}
			var h uint64
			for k := 1; k < n && i+k <= len(words); k++ {
				h = h*ngramBase + words[i+k-1].Hash
				if ix.shortLens&(1<<k) != 0 {
					add(runKey(h, k), i, k, true)
				}
			}
		}
	}
	if len(w.order) == 0 {
		return
	}
	slices.Sort(w.order)
	for _, r := range w.order {
		a := w.acc[r]
		rec := &ix.records[r]
		matched := a.count
		if a.shortQ && rec.shortQ {
			// The short question's key counted once; other short runs that
			// share its key by chance are not the question.
			if findRun(words, int(rec.qLen), rec.qKey) < 0 {
				matched--
				a.shortQ = false
			}
		} else {
			a.shortQ = false
		}
		for _, s := range rec.shortAns {
			if findRun(words, int(s.k), s.key) >= 0 {
				matched++
				break
			}
		}
		exactAt, exactLen := -1, 0
		if rec.shortQ {
			if a.shortQ {
				exactAt, exactLen = findRun(words, int(rec.qLen), rec.qKey), int(rec.qLen)
			}
		} else if a.count >= rec.qUnits { // an empty question has no run to find
			exactAt, exactLen = findRun(words, int(rec.qLen), rec.qKey), int(rec.qLen)
		}
		overlap := 0.0
		if rec.units > 0 {
			overlap = min(float64(matched)/float64(rec.units), 1)
		}
		if exactAt < 0 && (overlap < ix.opt.MinOverlap || matched == 0) {
			continue
		}
		lo, hi := int(a.lo), int(a.hi)
		if exactAt >= 0 {
			lo, hi = exactAt, exactAt+exactLen
		}
		start, end := int(words[lo].Start), int(words[hi-1].End)
		h := contamHit{row: row, rec: r, exact: exactAt >= 0, overlap: overlap}
		h.start = int32(utf8.RuneCountInString(text[:start]))
		h.end = h.start + int32(utf8.RuneCountInString(text[start:end]))
		h.span = cutSpan(text[start:end], ix.opt.SpanChars)
		b.hits = append(b.hits, h)
	}
}

// cutSpan returns s with its white space runs collapsed, cut to about
// limit characters (the head and the tail, an ellipsis between).
func cutSpan(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	head := limit * 2 / 3
	tail := limit - head - 1
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// finish turns the counts into the report.
func (ix *ContaminationIndex) finish(rep *ContaminationReport, benches []BenchmarkResult, recRows map[uint32]int,
	best map[uint32]*ContaminationFinding) {
	opt := ix.opt
	recs := make([]uint32, 0, len(best))
	for r := range best {
		recs = append(recs, r)
	}
	slices.Sort(recs)
	for _, r := range recs {
		f := best[r]
		f.Rows = recRows[r]
		bench := &benches[ix.records[r].bench]
		bench.Contaminated++
		if f.Kind == KindExact {
			bench.Exact++
		} else {
			bench.Near++
		}
		if opt.MaxFindings < 0 || len(bench.Findings) < opt.MaxFindings {
			f.Message = findingMessage(f)
			bench.Findings = append(bench.Findings, *f)
		}
	}
	rep.Passed = true
	failed := 0
	for i := range benches {
		b := &benches[i]
		rep.Records += b.Records
		rep.Contaminated += b.Contaminated
		b.Status = StatusInfo
		if opt.Scope == ScopeBenchmark {
			b.Status = StatusPass
			if b.Contaminated > opt.MaxContaminated {
				b.Status = StatusFail
				rep.Passed = false
				failed++
			}
		}
	}
	if opt.Scope == ScopeTotal && rep.Contaminated > opt.MaxContaminated {
		rep.Passed = false
	}
	slices.SortStableFunc(benches, func(a, b BenchmarkResult) int { return strings.Compare(a.Name, b.Name) })
	rep.Benchmarks = benches
	rep.Summary = fmt.Sprintf("%d of %d benchmark records found in %d of %d training rows (%d tolerated %s)",
		rep.Contaminated, rep.Records, rep.ContaminatedRows, rep.TrainingRows, opt.MaxContaminated, scopeWords(opt.Scope))
	if failed > 0 {
		rep.Summary += fmt.Sprintf("; %s over", plural(failed, "benchmark", "benchmarks"))
	}
}

func scopeWords(scope string) string {
	if scope == ScopeTotal {
		return "in total"
	}
	return "per benchmark"
}

// findingMessage is a finding's one line.
func findingMessage(f *ContaminationFinding) string {
	what := "exact duplicate"
	if f.Kind == KindNear {
		what = fmt.Sprintf("near duplicate (%.0f%% of its n-grams)", 100*f.Overlap)
	}
	where := fmt.Sprintf("%s row %d", f.File, f.Row)
	if f.TrainID != "" {
		where += " (id " + f.TrainID + ")"
	}
	more := ""
	if f.Rows > 1 {
		more = fmt.Sprintf(" and %d more rows", f.Rows-1)
	}
	return fmt.Sprintf("%s %s: %s in %s%s, characters %d-%d: %q", f.Benchmark, f.ID, what, where, more, f.Start, f.End, f.Span)
}
