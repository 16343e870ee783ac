package splits

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Names of the leakage gate's checks, in report order.
const (
	CheckScenarioDisjoint    = "scenario_disjoint"
	CheckExactDuplicates     = "exact_duplicates"
	CheckNearDuplicates      = "near_duplicates"
	CheckTestFraction        = "test_fraction"
	CheckSensitivityCoverage = "sensitivity_coverage"
	CheckLabelBalance        = "label_balance"
)

// Values of CheckResult.Status.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkipped = "skipped"
	StatusInfo    = "info" // label_balance: reported, never fails
)

// Defaults of GateOptions, applied by Check to zero fields.
const (
	DefaultNearDuplicateThreshold = 0.8
	DefaultShingleWords           = 5
	DefaultPermutations           = 128
	DefaultTolerance              = 0.05
	DefaultMaxFindings            = 20
)

// unknownKey stands for an empty sensitivity or label in SplitStats.
const unknownKey = "unknown"

// Row is one conversation of a split file, reduced to what the gate needs.
type Row struct {
	File        string // input name, for messages
	Index       int    // 1-based row number within File
	ID          string
	Scenario    string
	Sensitivity string // low|medium|high or "" when unknown
	Label       string // e.g. tool|direct
	Split       string // train|test
	// Text is the conversation text compared for duplicates (the prompt
	// messages' contents joined with "\n"); Normalize removes its time
	// stamps. An empty text matches nothing.
	Text string
}

// RowSource is read twice by Check: it must return a fresh iterator, over
// the same rows in the same order, on each call.
type RowSource func() (RowIterator, error)

// RowIterator yields rows; Next returns io.EOF after the last one. Check
// hashes rows on other goroutines after Next has returned them, so a row's
// strings must stay valid (and unchanged) after the next call to Next or
// Close, as Go strings normally do.
type RowIterator interface {
	Next() (Row, error)
	Close() error
}

// GateOptions configures Check. Zero fields take the defaults of
// DefaultGateOptions, except TestFraction (0 skips the check) and
// Sensitivities (nil takes the default, an empty non-nil slice disables
// the check).
type GateOptions struct {
	// NearDuplicateThreshold is the estimated Jaccard similarity of word
	// shingle sets from which a train/test pair counts as a near-duplicate;
	// default 0.8; negative disables the check.
	NearDuplicateThreshold float64 `json:"near_duplicate_threshold"`
	// ShingleWords is the number of consecutive words in a shingle; default 5.
	ShingleWords int `json:"shingle_words"`
	// Permutations is the MinHash signature length; default 128.
	Permutations int `json:"permutations"`
	// Bands is the number of LSH bands, of Permutations/Bands signature
	// rows each; default DefaultBands(Permutations, NearDuplicateThreshold):
	// 16 bands of 8 rows for 128 permutations and 0.8, an S-curve midpoint
	// (1/16)^(1/8) ≈ 0.707. Candidates are verified against the threshold.
	Bands int `json:"bands"`
	// TestFraction is the target share of rows on the test side; 0 skips
	// the check.
	TestFraction float64 `json:"test_fraction"`
	// Tolerance is the allowed |achieved − target| test fraction; default 0.05.
	Tolerance float64 `json:"tolerance"`
	// Sensitivities are the levels that must have rows in every split;
	// nil means low, medium and high; an empty slice disables the check.
	Sensitivities []string `json:"sensitivities"`
	// MaxFindings caps the findings listed per check (default 20; negative
	// lists all). Counts are always complete.
	MaxFindings int `json:"max_findings"`
	// Seed seeds the MinHash permutations; 0 means DefaultMinHashSeed.
	Seed uint64 `json:"seed"`
}

// DefaultGateOptions returns the gate's defaults: near-duplicates at
// Jaccard 0.8 over 5-word shingles with 128 MinHash permutations in 16
// LSH bands, no test fraction target, tolerance 0.05, all three
// sensitivity levels required, 20 findings per check.
func DefaultGateOptions() GateOptions {
	return GateOptions{
		NearDuplicateThreshold: DefaultNearDuplicateThreshold,
		ShingleWords:           DefaultShingleWords,
		Permutations:           DefaultPermutations,
		Bands:                  DefaultBands(DefaultPermutations, DefaultNearDuplicateThreshold),
		Tolerance:              DefaultTolerance,
		Sensitivities:          slices.Clone(Sensitivities),
		MaxFindings:            DefaultMaxFindings,
		Seed:                   DefaultMinHashSeed,
	}
}

// Report is the gate's verdict.
type Report struct {
	Passed  bool                   `json:"passed"`
	Checks  []CheckResult          `json:"checks"`
	Splits  map[string]*SplitStats `json:"splits"`  // Train, Test
	Options GateOptions            `json:"options"` // as applied, defaults filled in
}

// SplitStats describes one side. Empty sensitivities and labels count as
// "unknown"; BySensitivity lists every required level, with 0 when absent.
type SplitStats struct {
	Rows          int                `json:"rows"`
	Scenarios     int                `json:"scenarios"`
	BySensitivity map[string]int     `json:"by_sensitivity"`
	ByLabel       map[string]int     `json:"by_label"`
	LabelShare    map[string]float64 `json:"label_share"`
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Name     string    `json:"name"`    // one of the Check* constants
	Status   string    `json:"status"`  // one of the Status* constants
	Summary  string    `json:"summary"` // one readable line
	Count    int       `json:"count"`   // offending items, 0 when passing
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one offending item. For duplicates, an item is a train/test
// pair and File and Row locate the train row.
type Finding struct {
	Message string   `json:"message"` // names the offending ids
	IDs     []string `json:"ids"`
	File    string   `json:"file,omitempty"` // file of the (first) offending row
	Row     int      `json:"row,omitempty"`
	// Similarity is the estimated Jaccard similarity of a near-duplicate pair.
	Similarity float64 `json:"similarity,omitempty"`
}

// Check runs the leakage gate over the rows of src in two passes.
//
// Pass 1 collects per-split statistics, the sides each scenario is on, and
// for test rows the fingerprint of the normalised text, its MinHash
// signature and its LSH band buckets (memory grows with the test side
// only). Pass 2 looks every train row up: exact duplicates by fingerprint,
// near-duplicates among the test rows that share an LSH band, kept when
// the signatures' estimated Jaccard similarity reaches the threshold (pairs
// that are exact duplicates are not reported again). Pass 2 is skipped when
// no test row has text. Texts are hashed by GOMAXPROCS workers; the report
// does not depend on their number or timing.
//
// A row whose Split is not "train" or "test" is an error naming its file,
// row and id, as is any error of src.
func Check(ctx context.Context, src RowSource, opt GateOptions) (*Report, error) {
	opt, err := resolveGateOptions(opt)
	if err != nil {
		return nil, err
	}
	g := &gate{opt: opt, rowsPerBand: opt.Permutations / opt.Bands, near: opt.NearDuplicateThreshold >= 0}
	if g.near {
		if g.mh, err = NewMinHasher(opt.Permutations, opt.Seed); err != nil {
			return nil, err
		}
		g.need = int(math.Ceil(opt.NearDuplicateThreshold*float64(opt.Permutations) - 1e-9))
		g.need = max(g.need, 1)
	}
	g.init()
	workers := max(runtime.GOMAXPROCS(0), 1)

	if err := g.pass(ctx, src, workers, g.read1, g.work1, g.merge1); err != nil {
		return nil, err
	}
	if len(g.groupFirst) > 0 {
		if err := g.pass(ctx, src, workers, g.read2, g.work2, g.merge2); err != nil {
			return nil, err
		}
		if g.rows2 != g.rows1 {
			return nil, fmt.Errorf("splits: the rows changed between the gate's two passes (%d rows, then %d)", g.rows1, g.rows2)
		}
	}
	return g.report(), nil
}

// resolveGateOptions fills in defaults and rejects impossible values.
func resolveGateOptions(opt GateOptions) (GateOptions, error) {
	bad := func(format string, args ...any) (GateOptions, error) {
		return GateOptions{}, fmt.Errorf("splits: gate options: "+format, args...)
	}
	switch t := opt.NearDuplicateThreshold; {
	case math.IsNaN(t) || t > 1:
		return bad("near-duplicate threshold %v is not in (0, 1] (negative disables the check)", t)
	case t == 0:
		opt.NearDuplicateThreshold = DefaultNearDuplicateThreshold
	}
	if opt.ShingleWords < 0 {
		return bad("shingle words %d is negative", opt.ShingleWords)
	} else if opt.ShingleWords == 0 {
		opt.ShingleWords = DefaultShingleWords
	}
	if opt.Permutations < 0 {
		return bad("permutations %d is negative", opt.Permutations)
	} else if opt.Permutations == 0 {
		opt.Permutations = DefaultPermutations
	}
	if opt.Bands < 0 || opt.Bands > opt.Permutations {
		return bad("bands %d is not between 1 and the %d permutations", opt.Bands, opt.Permutations)
	} else if opt.Bands == 0 {
		t := opt.NearDuplicateThreshold
		if t < 0 {
			t = DefaultNearDuplicateThreshold
		}
		opt.Bands = DefaultBands(opt.Permutations, t)
	}
	if f := opt.TestFraction; math.IsNaN(f) || f < 0 || f > 1 {
		return bad("test fraction %v is not in [0, 1] (0 skips the check)", f)
	}
	if opt.Tolerance < 0 || math.IsNaN(opt.Tolerance) {
		return bad("tolerance %v is negative", opt.Tolerance)
	} else if opt.Tolerance == 0 {
		opt.Tolerance = DefaultTolerance
	}
	if opt.Sensitivities == nil {
		opt.Sensitivities = slices.Clone(Sensitivities)
	} else {
		levels := make([]string, 0, len(opt.Sensitivities))
		for _, s := range opt.Sensitivities {
			s = strings.ToLower(strings.TrimSpace(s))
			if s == "" {
				return bad("empty sensitivity level")
			}
			if !slices.Contains(levels, s) {
				levels = append(levels, s)
			}
		}
		opt.Sensitivities = levels
	}
	if opt.MaxFindings == 0 {
		opt.MaxFindings = DefaultMaxFindings
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultMinHashSeed
	}
	return opt, nil
}

// Split indexes.
const (
	sideTrain = 0
	sideTest  = 1
)

var sideNames = [2]string{Train, Test}

// gateRef locates a row.
type gateRef struct {
	id, file string
	row      int
}

// location renders a row for messages: "id, file row 7".
func (r gateRef) location() string { return r.displayID() + ", " + r.place() }

func (r gateRef) displayID() string {
	if r.id == "" {
		return "(no id)"
	}
	return r.id
}

// place renders "file row 7", or "row 7" without a file name.
func (r gateRef) place() string {
	if r.file == "" {
		return fmt.Sprintf("row %d", r.row)
	}
	return fmt.Sprintf("%s row %d", r.file, r.row)
}

// gateScenario records where a scenario was seen: one example row per side
// and the input position of each.
type gateScenario struct {
	name string
	on   [2]bool
	ex   [2]gateRef
	seq  [2]int
}

// gateSideStats accumulates SplitStats for one side.
type gateSideStats struct {
	rows          int
	bySensitivity map[string]int
	byLabel       map[string]int
}

// gatePair is a train/test duplicate pair; agree is the number of
// signature positions in which they agree (near-duplicates only).
type gatePair struct {
	train, test gateRef
	agree       int
}

// gateNear is a near-duplicate candidate that passed verification.
type gateNear struct {
	group int32
	agree int32
}

// gateBatch is a run of rows hashed by one worker.
type gateBatch struct {
	seq   int
	rows  []Row
	fps   []uint64
	empty []bool
	sigs  []uint32 // len(rows)·Permutations, pass 1 only

	exact      []int32      // pass 2: test group with the same text, or -1
	near       [][]gateNear // pass 2: verified near-duplicate groups
	candidates int          // pass 2: candidate pairs verified
}

// gateBatchRows is the number of rows hashed per batch.
const gateBatchRows = 256

// gateWorker is the scratch space of one hashing goroutine.
type gateWorker struct {
	norm     []byte
	words    []uint64
	shingles []uint64
	sig      []uint32
	seen     []uint32 // pass 2: group → generation last seen
	gen      uint32
}

// gate is the state of one Check.
type gate struct {
	opt         GateOptions
	mh          *MinHasher
	near        bool
	need        int // agreeing positions needed for a near-duplicate
	rowsPerBand int

	// pass 1, reader
	rows1     int
	sides     [2]gateSideStats
	scenarios map[string]*gateScenario
	files     map[string]string // interned file names

	// pass 1, merger: test rows with text, grouped by fingerprint
	fpGroup    map[uint64]int32
	groupFirst []int32 // group → first test row
	groupLast  []int32
	testRows   []gateRef
	rowNext    []int32  // test row → next test row of its group, or -1
	sigs       []uint32 // group → signature, flat
	bucketHead map[uint64]int32
	bucketNext []int32 // group·bands+band → next entry of the bucket, or -1

	// pass 2
	rows2      int
	exactCount int
	nearCount  int
	candidates int
	exactTop   gateTop[gatePair]
	nearTop    gateTop[gatePair]
}

func (g *gate) init() {
	g.scenarios = map[string]*gateScenario{}
	g.files = map[string]string{}
	for i := range g.sides {
		g.sides[i] = gateSideStats{bySensitivity: map[string]int{}, byLabel: map[string]int{}}
		for _, l := range g.opt.Sensitivities {
			g.sides[i].bySensitivity[l] = 0
		}
	}
	g.fpGroup = map[uint64]int32{}
	g.bucketHead = map[uint64]int32{}
	g.exactTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
	g.nearTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
}

func comparePairs(a, b gatePair) int {
	return cmp.Or(
		strings.Compare(a.train.file, b.train.file), cmp.Compare(a.train.row, b.train.row),
		strings.Compare(a.test.file, b.test.file), cmp.Compare(a.test.row, b.test.row),
		strings.Compare(a.train.id, b.train.id), strings.Compare(a.test.id, b.test.id))
}

// side validates a row's split.
func (g *gate) side(r Row) (int, error) {
	switch r.Split {
	case Train:
		return sideTrain, nil
	case Test:
		return sideTest, nil
	}
	return 0, fmt.Errorf("splits: %s: row %d (id %s): split %q is not %s or %s", r.File, r.Index, r.ID, r.Split, Train, Test)
}

func (g *gate) intern(file string) string {
	if f, ok := g.files[file]; ok {
		return f
	}
	f := strings.Clone(file)
	g.files[f] = f
	return f
}

// pass reads src once, handing each row to read, which batches rows for
// work (run by the workers) and merge (run in input order).
func (g *gate) pass(ctx context.Context, src RowSource, workers int,
	read func(r Row, side int, add func(Row) error) error,
	work func(*gateWorker, *gateBatch), merge func(*gateBatch)) (err error) {
	it, err := src()
	if err != nil {
		return fmt.Errorf("splits: open rows: %w", err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("splits: close rows: %w", cerr)
		}
	}()
	return gatePipeline(ctx, workers, work, merge, func(emit func(*gateBatch) error) error {
		var b *gateBatch
		add := func(r Row) error {
			if b == nil {
				b = &gateBatch{rows: make([]Row, 0, gateBatchRows)}
			}
			b.rows = append(b.rows, r)
			if len(b.rows) == gateBatchRows {
				full := b
				b = nil
				return emit(full)
			}
			return nil
		}
		for n := 0; ; n++ {
			if n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("splits: read rows: %w", err)
			}
			side, err := g.side(r)
			if err != nil {
				return err
			}
			if err := read(r, side, add); err != nil {
				return err
			}
		}
		if b != nil {
			return emit(b)
		}
		return nil
	})
}

// gatePipeline runs produce in the calling goroutine; the batches it emits
// are processed by work on workers goroutines and handed to merge, one at
// a time and in emission order. At most 2·workers+2 batches are in flight.
func gatePipeline(ctx context.Context, workers int, work func(*gateWorker, *gateBatch), merge func(*gateBatch),
	produce func(emit func(*gateBatch) error) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tokens := make(chan struct{}, 2*workers+2)
	jobs := make(chan *gateBatch)
	results := make(chan *gateBatch, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := &gateWorker{}
			for b := range jobs {
				work(w, b)
				results <- b
			}
		})
	}
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		pending := map[int]*gateBatch{}
		next := 0
		for b := range results {
			pending[b.seq] = b
			for {
				nb, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				merge(nb)
				next++
				<-tokens
			}
		}
	}()
	seq := 0
	err := produce(func(b *gateBatch) error {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		b.seq = seq
		seq++
		select {
		case jobs <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	close(results)
	<-merged
	return err
}

// scenarioKey returns a row's scenario (or, without one, its id's alias)
// and the case-insensitive key it is compared by.
func scenarioKey(r Row) (name, key string) {
	name = strings.TrimSpace(r.Scenario)
	if name == "" {
		name = AliasOf(strings.TrimSpace(r.ID))
	}
	return name, strings.ToLower(name)
}

func statsKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return unknownKey
	}
	return s
}

// read1 records a row's statistics and scenario; test rows with text go
// on to be hashed.
func (g *gate) read1(r Row, side int, add func(Row) error) error {
	seq := g.rows1
	g.rows1++
	r.File = g.intern(r.File)
	st := &g.sides[side]
	st.rows++
	st.bySensitivity[statsKey(r.Sensitivity)]++
	st.byLabel[statsKey(r.Label)]++
	if name, key := scenarioKey(r); key != "" {
		sc := g.scenarios[key]
		if sc == nil {
			sc = &gateScenario{name: strings.Clone(name)}
			g.scenarios[key] = sc
		}
		if !sc.on[side] {
			sc.on[side] = true
			sc.ex[side] = gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index}
			sc.seq[side] = seq
		}
	}
	if side == sideTest && r.Text != "" {
		r.Scenario, r.Sensitivity, r.Label = "", "", ""
		return add(r)
	}
	return nil
}

// hash normalises a text and fills the worker's word and shingle hashes.
// It reports false for a text that normalises to nothing.
func (g *gate) hash(w *gateWorker, text string) (fp uint64, ok bool) {
	w.norm = appendNormalized(w.norm[:0], text)
	if len(w.norm) == 0 {
		return 0, false
	}
	fp, w.words = hashWords(w.norm, w.words[:0])
	if g.near {
		w.shingles = appendShingles(w.shingles[:0], w.words, g.opt.ShingleWords)
	}
	return fp, true
}

func (g *gate) work1(w *gateWorker, b *gateBatch) {
	n, p := len(b.rows), g.opt.Permutations
	b.fps = make([]uint64, n)
	b.empty = make([]bool, n)
	if g.near {
		b.sigs = make([]uint32, n*p)
	}
	for i, r := range b.rows {
		fp, ok := g.hash(w, r.Text)
		if !ok {
			b.empty[i] = true
			continue
		}
		b.fps[i] = fp
		if g.near {
			g.mh.Signature(w.shingles, b.sigs[i*p:(i+1)*p:(i+1)*p])
		}
	}
}

// merge1 adds a batch of hashed test rows to the fingerprint groups and,
// for each new text, its signature to the LSH buckets.
func (g *gate) merge1(b *gateBatch) {
	p, bands := g.opt.Permutations, g.opt.Bands
	for i, r := range b.rows {
		if b.empty[i] {
			continue
		}
		t := int32(len(g.testRows))
		g.testRows = append(g.testRows, gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index})
		g.rowNext = append(g.rowNext, -1)
		grp, ok := g.fpGroup[b.fps[i]]
		if ok {
			g.rowNext[g.groupLast[grp]] = t
			g.groupLast[grp] = t
			continue
		}
		grp = int32(len(g.groupFirst))
		g.fpGroup[b.fps[i]] = grp
		g.groupFirst = append(g.groupFirst, t)
		g.groupLast = append(g.groupLast, t)
		if !g.near {
			continue
		}
		sig := b.sigs[i*p : (i+1)*p]
		g.sigs = append(g.sigs, sig...)
		for band := range bands {
			key := bandKey(sig, band, g.rowsPerBand)
			entry := grp*int32(bands) + int32(band)
			if head, ok := g.bucketHead[key]; ok {
				g.bucketNext = append(g.bucketNext, head)
			} else {
				g.bucketNext = append(g.bucketNext, -1)
			}
			g.bucketHead[key] = entry
		}
	}
}

// read2 passes train rows with text on to be looked up.
func (g *gate) read2(r Row, side int, add func(Row) error) error {
	g.rows2++
	if side == sideTrain && r.Text != "" {
		r.File = g.intern(r.File)
		r.Scenario, r.Sensitivity, r.Label = "", "", ""
		return add(r)
	}
	return nil
}

// work2 looks train rows up: the test group with the same fingerprint, and
// the test groups sharing an LSH band whose signatures agree in enough
// positions.
func (g *gate) work2(w *gateWorker, b *gateBatch) {
	n, p, bands := len(b.rows), g.opt.Permutations, g.opt.Bands
	b.exact = make([]int32, n)
	b.near = make([][]gateNear, n)
	if g.near && len(w.seen) != len(g.groupFirst) {
		w.seen = make([]uint32, len(g.groupFirst))
		w.gen = 0
	}
	for i, r := range b.rows {
		b.exact[i] = -1
		fp, ok := g.hash(w, r.Text)
		if !ok {
			continue
		}
		exact := int32(-1)
		if grp, ok := g.fpGroup[fp]; ok {
			exact = grp
		}
		b.exact[i] = exact
		if !g.near {
			continue
		}
		w.sig = g.mh.Signature(w.shingles, w.sig)
		w.gen++
		if w.gen == 0 {
			clear(w.seen)
			w.gen = 1
		}
		var found []gateNear
		for band := range bands {
			e, ok := g.bucketHead[bandKey(w.sig, band, g.rowsPerBand)]
			for ok && e >= 0 {
				grp := e / int32(bands)
				e = g.bucketNext[e]
				if w.seen[grp] == w.gen || grp == exact {
					continue
				}
				w.seen[grp] = w.gen
				b.candidates++
				if agree := agreements(w.sig, g.sigs[int(grp)*p:int(grp+1)*p]); agree >= g.need {
					found = append(found, gateNear{group: grp, agree: int32(agree)})
				}
			}
		}
		slices.SortFunc(found, func(x, y gateNear) int { return cmp.Compare(x.group, y.group) })
		b.near[i] = found
	}
}

// merge2 counts and records the pairs of a batch of train rows.
func (g *gate) merge2(b *gateBatch) {
	g.candidates += b.candidates
	for i, r := range b.rows {
		if b.exact[i] < 0 && len(b.near[i]) == 0 {
			continue
		}
		train := gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index}
		if grp := b.exact[i]; grp >= 0 {
			for t := g.groupFirst[grp]; t >= 0; t = g.rowNext[t] {
				g.exactCount++
				g.exactTop.add(gatePair{train: train, test: g.testRows[t]})
			}
		}
		for _, nd := range b.near[i] {
			for t := g.groupFirst[nd.group]; t >= 0; t = g.rowNext[t] {
				g.nearCount++
				g.nearTop.add(gatePair{train: train, test: g.testRows[t], agree: int(nd.agree)})
			}
		}
	}
}

// gateTop keeps the first max items in cmp order of everything added, in
// memory bounded by max (all of them when max < 0).
type gateTop[T any] struct {
	max   int
	cmp   func(a, b T) int
	items []T
}

func (t *gateTop[T]) add(x T) {
	t.items = append(t.items, x)
	if t.max >= 0 && len(t.items) >= 2*t.max+64 {
		t.trim()
	}
}

// trim sorts the items and drops all but the first max.
func (t *gateTop[T]) trim() []T {
	slices.SortStableFunc(t.items, t.cmp)
	if t.max >= 0 && len(t.items) > t.max {
		clear(t.items[t.max:])
		t.items = t.items[:t.max]
	}
	return t.items
}

// truncateFindings sorts findings by file and row, then keeps the first
// limit (all when limit < 0).
func truncateFindings(fs []Finding, limit int) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row), strings.Compare(a.Message, b.Message))
	})
	if limit >= 0 && len(fs) > limit {
		fs = fs[:limit]
	}
	return fs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (g *gate) report() *Report {
	rep := &Report{Splits: map[string]*SplitStats{}, Options: g.opt}
	for side, st := range g.sides {
		ss := &SplitStats{
			Rows:          st.rows,
			BySensitivity: st.bySensitivity,
			ByLabel:       st.byLabel,
			LabelShare:    map[string]float64{},
		}
		for l, n := range st.byLabel {
			ss.LabelShare[l] = float64(n) / float64(st.rows)
		}
		for _, sc := range g.scenarios {
			if sc.on[side] {
				ss.Scenarios++
			}
		}
		rep.Splits[sideNames[side]] = ss
	}
	rep.Checks = []CheckResult{
		g.checkScenarios(rep),
		g.checkDuplicates(CheckExactDuplicates),
		g.checkDuplicates(CheckNearDuplicates),
		g.checkTestFraction(),
		g.checkSensitivities(),
		g.checkLabels(rep),
	}
	rep.Passed = true
	for _, c := range rep.Checks {
		if c.Status == StatusFail {
			rep.Passed = false
		}
	}
	return rep
}

func (g *gate) checkScenarios(rep *Report) CheckResult {
	c := CheckResult{Name: CheckScenarioDisjoint}
	for _, sc := range g.scenarios {
		if !sc.on[sideTrain] || !sc.on[sideTest] {
			continue
		}
		c.Count++
		first := sc.ex[sideTrain]
		if sc.seq[sideTest] < sc.seq[sideTrain] {
			first = sc.ex[sideTest]
		}
		c.Findings = append(c.Findings, Finding{
			Message: fmt.Sprintf("scenario %q is in %s (%s) and %s (%s)", sc.name,
				Train, sc.ex[sideTrain].location(), Test, sc.ex[sideTest].location()),
			IDs:  []string{sc.ex[sideTrain].id, sc.ex[sideTest].id},
			File: first.file,
			Row:  first.row,
		})
	}
	c.Findings = truncateFindings(c.Findings, g.opt.MaxFindings)
	if c.Count > 0 {
		c.Status = StatusFail
		c.Summary = plural(c.Count, "scenario appears", "scenarios appear") + " in both splits"
	} else {
		c.Status = StatusPass
		c.Summary = fmt.Sprintf("no scenario appears in both splits (%d train, %d test scenarios)",
			rep.Splits[Train].Scenarios, rep.Splits[Test].Scenarios)
	}
	return c
}

func (g *gate) checkDuplicates(name string) CheckResult {
	c := CheckResult{Name: name}
	top, count := &g.exactTop, g.exactCount
	if name == CheckNearDuplicates {
		top, count = &g.nearTop, g.nearCount
		if !g.near {
			c.Status = StatusSkipped
			c.Summary = "near-duplicate check disabled (negative threshold)"
			return c
		}
	}
	c.Count = count
	for _, p := range top.trim() {
		f := Finding{IDs: []string{p.train.id, p.test.id}, File: p.train.file, Row: p.train.row}
		if name == CheckNearDuplicates {
			f.Similarity = float64(p.agree) / float64(g.opt.Permutations)
			f.Message = fmt.Sprintf("train %s is a near-duplicate of test %s (estimated Jaccard %.2f)",
				bracketed(p.train), bracketed(p.test), f.Similarity)
		} else {
			f.Message = fmt.Sprintf("train %s duplicates test %s after normalisation", bracketed(p.train), bracketed(p.test))
		}
		c.Findings = append(c.Findings, f)
	}
	switch {
	case count > 0 && name == CheckNearDuplicates:
		c.Status = StatusFail
		c.Summary = fmt.Sprintf("%s (estimated Jaccard ≥ %.2f)",
			plural(count, "train/test pair is a near-duplicate", "train/test pairs are near-duplicates"), g.opt.NearDuplicateThreshold)
	case count > 0:
		c.Status = StatusFail
		c.Summary = plural(count, "train/test pair is an exact duplicate", "train/test pairs are exact duplicates") +
			" after normalisation"
	case name == CheckNearDuplicates:
		c.Status = StatusPass
		c.Summary = fmt.Sprintf("no train/test pair reaches estimated Jaccard %.2f (%s verified; LSH %d bands × %d rows)",
			g.opt.NearDuplicateThreshold, plural(g.candidates, "candidate pair", "candidate pairs"), g.opt.Bands, g.rowsPerBand)
	default:
		c.Status = StatusPass
		c.Summary = "no test text reappears in train after normalisation"
	}
	return c
}

// bracketed renders a row as "id (file row 7)".
func bracketed(r gateRef) string {
	return fmt.Sprintf("%s (%s)", r.displayID(), r.place())
}

func (g *gate) checkTestFraction() CheckResult {
	c := CheckResult{Name: CheckTestFraction}
	target := g.opt.TestFraction
	total := g.sides[sideTrain].rows + g.sides[sideTest].rows
	achieved := 0.0
	if total > 0 {
		achieved = float64(g.sides[sideTest].rows) / float64(total)
	}
	if target == 0 {
		c.Status = StatusSkipped
		c.Summary = fmt.Sprintf("no target test fraction set (achieved %.3f, %d of %d rows)", achieved, g.sides[sideTest].rows, total)
		return c
	}
	c.Summary = fmt.Sprintf("test fraction %.3f (%d of %d rows), target %.3f ± %.3f",
		achieved, g.sides[sideTest].rows, total, target, g.opt.Tolerance)
	if math.Abs(achieved-target) > g.opt.Tolerance+1e-9 {
		c.Status = StatusFail
		c.Count = 1
		c.Findings = []Finding{{Message: c.Summary + ": outside the tolerance", IDs: []string{}}}
	} else {
		c.Status = StatusPass
	}
	return c
}

func (g *gate) checkSensitivities() CheckResult {
	c := CheckResult{Name: CheckSensitivityCoverage}
	levels := g.opt.Sensitivities
	if len(levels) == 0 {
		c.Status = StatusSkipped
		c.Summary = "no sensitivity levels required"
		return c
	}
	var missing []string
	for side, st := range g.sides {
		for _, l := range levels {
			if st.bySensitivity[l] > 0 {
				continue
			}
			c.Count++
			missing = append(missing, fmt.Sprintf("%s lacks %s", sideNames[side], l))
			c.Findings = append(c.Findings, Finding{
				Message: fmt.Sprintf("split %q has no rows with sensitivity %q", sideNames[side], l),
				IDs:     []string{},
			})
		}
	}
	if g.opt.MaxFindings >= 0 && len(c.Findings) > g.opt.MaxFindings {
		c.Findings = c.Findings[:g.opt.MaxFindings]
	}
	if c.Count > 0 {
		c.Status = StatusFail
		c.Summary = fmt.Sprintf("%s: %s",
			plural(c.Count, "sensitivity level is missing", "sensitivity levels are missing"), strings.Join(missing, "; "))
	} else {
		c.Status = StatusPass
		c.Summary = fmt.Sprintf("every split has rows of each sensitivity level (%s)", strings.Join(levels, ", "))
	}
	return c
}

func (g *gate) checkLabels(rep *Report) CheckResult {
	c := CheckResult{Name: CheckLabelBalance, Status: StatusInfo}
	var parts []string
	for _, side := range sideNames {
		ss := rep.Splits[side]
		labels := make([]string, 0, len(ss.LabelShare))
		for l := range ss.LabelShare {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		shares := make([]string, 0, len(labels))
		for _, l := range labels {
			shares = append(shares, fmt.Sprintf("%s %.1f%%", l, 100*ss.LabelShare[l]))
		}
		if len(shares) == 0 {
			shares = append(shares, "no rows")
		}
		parts = append(parts, side+": "+strings.Join(shares, ", "))
	}
	c.Summary = strings.Join(parts, "; ")
	return c
}
