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
	"unicode"

	"github.com/timeaware/timeaware/splits/scenario"
)

// Names of the leakage gate's checks, in report order.
const (
	CheckSplitLabel          = "split_label"
	CheckGroupDisjoint       = "group_disjoint"
	CheckDuplicateIDs        = "duplicate_ids"
	CheckDuplicateTexts      = "duplicate_texts"
	CheckExactDuplicates     = "exact_duplicates"
	CheckNearDuplicates      = "near_duplicates"
	CheckContamination       = "contamination"
	CheckTestFraction        = "test_fraction"
	CheckSensitivityCoverage = "sensitivity_coverage"
	CheckLabelBalance        = "label_balance"
)

// Checks lists the gate's checks in report order.
var Checks = []string{CheckSplitLabel, CheckGroupDisjoint, CheckDuplicateIDs, CheckDuplicateTexts,
	CheckExactDuplicates, CheckNearDuplicates, CheckContamination, CheckTestFraction,
	CheckSensitivityCoverage, CheckLabelBalance}

// Values of CheckResult.Status.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkipped = "skipped"
	StatusInfo    = "info" // label_balance: reported, never fails
)

// Against is the side of a row of an outside evaluation set: the gate
// reports training rows that duplicate one (the contamination check).
const Against = "against"

// Defaults of GateOptions, applied by Check to zero fields.
const (
	DefaultNearDuplicateThreshold = 0.8
	DefaultShingleWords           = 5
	DefaultPermutations           = 128
	DefaultTolerance              = 0.05
	DefaultMaxFindings            = 20
	DefaultGroupName              = "group"
)

// unknownKey stands for an empty sensitivity or label in SplitStats.
const unknownKey = "unknown"

// Row is one row of a dataset, reduced to what the gate needs.
type Row struct {
	File  string // input name, for messages
	Index int    // 1-based row number within File
	// Side is where the row is: Train or Test, or Against for a row of an
	// outside evaluation set. It comes from the row's file (its name, or
	// how the caller was told), never from the row itself.
	Side string
	// SplitLabel is the row's own split column ("" when it has none): the
	// split_label check fails a row whose label names another side.
	SplitLabel string
	// ID identifies the row: two rows with one ID are the same row twice.
	// Source is the record the row was made from (its first id column; ID
	// when empty): rows of one source may share a text, as a trajectory's
	// elapse levels do. Both may be empty.
	ID, Source string
	// Group is the unit that must not straddle the split (a scenario, a
	// task); "" when the row has none (GateOptions.GroupFromID may derive
	// one). Groups compare case-insensitively.
	Group       string
	Sensitivity string // low|medium|high or "" when unknown
	Label       string // e.g. tool|direct
	// Text is the text compared for duplicates; Normalize removes its time
	// stamps. An empty text matches nothing.
	Text string
}

// RowSource is read up to three times by Check: it must return a fresh
// iterator, over the same rows in the same order, on each call.
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
	// GroupName is what the rows' groups are called in messages ("scenario",
	// "task"); default "group".
	GroupName string `json:"group_name"`
	// GroupFromID gives a row without a group one from its Source (pairs:
	// the scenario of the trajectory id's alias); nil leaves it without.
	GroupFromID func(source string) string `json:"-"`
	// Skip names checks that cannot run on the input, with the reason
	// (the dataset has no sensitivity column, say): they are reported as
	// skipped.
	Skip map[string]string `json:"skip,omitempty"`
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
		Sensitivities:          slices.Clone(scenario.Sensitivities),
		MaxFindings:            DefaultMaxFindings,
		Seed:                   DefaultMinHashSeed,
		GroupName:              DefaultGroupName,
	}
}

// Report is the gate's verdict.
type Report struct {
	Passed bool          `json:"passed"`
	Checks []CheckResult `json:"checks"`
	// Splits describes Train and Test, and Against when there is an
	// outside evaluation set.
	Splits  map[string]*SplitStats `json:"splits"`
	Options GateOptions            `json:"options"` // as applied, defaults filled in (GroupFromID left out)
	// Columns are the dataset columns the rows came from, when the caller
	// says (Check leaves it nil).
	Columns *Columns `json:"columns,omitempty"`
}

// SplitStats describes one side. Empty sensitivities and labels count as
// "unknown"; BySensitivity lists every required level, with 0 when absent.
type SplitStats struct {
	Rows          int                `json:"rows"`
	Groups        int                `json:"groups"`
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

// Finding is one offending item. For train/test pairs File and Row locate
// the train row; for repeats, the later row.
type Finding struct {
	Message string   `json:"message"` // names the offending ids
	IDs     []string `json:"ids"`
	File    string   `json:"file,omitempty"` // file of the (first) offending row
	Row     int      `json:"row,omitempty"`
	// Similarity is the estimated Jaccard similarity of a near-duplicate pair.
	Similarity float64 `json:"similarity,omitempty"`
}

// Check runs the leakage gate over the rows of src in two passes, and a
// third when findings name rows.
//
// Pass 1 collects per-side statistics and split-label disagreements; for
// every row a compact key (64-bit hashes of its id, source, group and
// normalised text, 40 bytes a row), sorted after pass 2 to find repeated
// ids, repeated texts within a side and groups on both sides; and for test
// and outside rows with text, the MinHash signature and LSH band buckets
// of each distinct text (memory that grows with the test side only). It
// leaves train texts alone: a source that can does not even read them.
// Pass 2 hashes every train text once, for its key and to look it up:
// exact duplicates by fingerprint, near-duplicates among the indexed texts
// that share an LSH band, kept when the signatures' estimated Jaccard
// similarity reaches the threshold (pairs that are exact duplicates are
// not reported again); a source that can leaves out the other sides'
// texts. Pass 3, needed only when the keys show repeated ids, repeated
// texts or groups on both sides, reads back, without texts, the file, row
// and id of the rows those findings name. Texts are hashed by GOMAXPROCS
// workers; the report does not depend on their number or timing.
//
// A row whose Side is not Train, Test or Against is an error naming its
// file, row and id, as is any error of src.
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

	if err := g.pass(ctx, skipTextsOf(src, Train), workers, g.read1, g.work1, g.merge1); err != nil {
		return nil, err
	}
	if g.sides[sideTrain].rows > 0 {
		g.buildBandFilter()
		if err := g.pass(ctx, skipTextsOf(src, Test, Against), workers, g.read2, g.work2, g.merge2); err != nil {
			return nil, err
		}
		if g.rows2 != g.rows1 {
			return nil, g.rowsChanged()
		}
	}
	g.analyse()
	if len(g.wanted) > 0 {
		if err := g.pass(ctx, skipTextsOf(src, Train, Test, Against), workers, g.read3, nil, nil); err != nil {
			return nil, err
		}
		if g.rows3 != g.rows1 {
			return nil, g.rowsChanged()
		}
	}
	return g.report(), nil
}

// skipTextsOf returns src, whose iterators leave out the texts of the
// files of sides when they can.
func skipTextsOf(src RowSource, sides ...string) RowSource {
	return func() (RowIterator, error) {
		it, err := src()
		if s, ok := it.(textSkipper); ok && err == nil {
			s.skipTexts(sides...)
		}
		return it, err
	}
}

// rowsChanged is the error of a pass that read another number of rows
// than pass 1.
func (g *gate) rowsChanged() error {
	n := g.rows2
	if n == g.rows1 {
		n = g.rows3
	}
	return fmt.Errorf("splits: the rows changed between the gate's passes (%d rows, then %d)", g.rows1, n)
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
		opt.Sensitivities = slices.Clone(scenario.Sensitivities)
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
	if opt.GroupName == "" {
		opt.GroupName = DefaultGroupName
	}
	for name, reason := range opt.Skip {
		if !slices.Contains(Checks, name) {
			return bad("skip: no check %q", name)
		}
		if strings.TrimSpace(reason) == "" {
			return bad("skip: check %s needs a reason", name)
		}
	}
	return opt, nil
}

// Side indexes.
const (
	sideTrain   = 0
	sideTest    = 1
	sideAgainst = 2
)

var sideNames = [3]string{Train, Test, Against}

// SideOf reads a split label: train and training are Train; test,
// testing, validation, valid, val, dev, eval and evaluation are Test (a
// held-out set, whatever its name). Case and surrounding space do not
// matter.
func SideOf(label string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "train", "training":
		return Train, true
	case "test", "testing", "validation", "valid", "val", "dev", "eval", "evaluation":
		return Test, true
	}
	return "", false
}

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

// bracketed renders a row as "id (file row 7)".
func (r gateRef) bracketed() string {
	return fmt.Sprintf("%s (%s)", r.displayID(), r.place())
}

// gateKey is the compact record of one train or test row, sorted after
// pass 2 by each of its hashes in turn.
type gateKey struct {
	id, source, group, text uint64
	seq                     uint32 // the row's position in the input
	side                    uint8
	flags                   uint8 // keyHas*
}

const (
	keyHasID = 1 << iota
	keyHasSource
	keyHasGroup
	keyHasText
)

// gateSideStats accumulates SplitStats for one side.
type gateSideStats struct {
	rows          int
	groups        int
	bySensitivity map[string]int
	byLabel       map[string]int
}

// gatePair is a pair of rows that a check reports: train and test (or
// outside) rows for duplicates, first and later rows for repeats; agree
// is the number of signature positions in which they agree (near pairs
// only), exact marks an exact duplicate among contamination pairs.
type gatePair struct {
	a, b  gateRef
	agree int
	exact bool
	note  string // split_label: the side of the row's file
}

// gateSeqPair is a pair of rows found in the keys, named by their input
// positions until pass 3 reads their file, row and id.
type gateSeqPair struct {
	check string
	a, b  uint32
}

// gateNear is a near-duplicate candidate that passed verification.
type gateNear struct {
	group int32
	agree int32
}

// gateBatch is a run of rows hashed by one worker.
type gateBatch struct {
	rows  []Row
	fps   []uint64
	empty []bool
	sigs  []uint32 // len(rows)·Permutations, pass 1 only, test and outside rows
	seqs  []uint32 // each row's position in the input

	exact      []int32      // pass 2: text group with the same text, or -1
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
	firsts   []uint32 // pass 2: the first signature element of each band
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
	rows1      int
	sides      [3]gateSideStats
	files      map[string]string // interned file names
	labelCount int
	labelTop   gateTop[gatePair]

	// pass 1, merger
	keys []gateKey
	// indexed texts of test and outside rows, grouped by fingerprint
	fpGroup    map[uint64]int32
	groupFirst []int32 // text group → first indexed row
	groupLast  []int32
	indexed    []gateRef
	indexSide  []uint8
	rowNext    []int32  // indexed row → next indexed row of its group, or -1
	sigs       []uint32 // text group → signature, flat
	bucketHead map[uint64]int32
	bucketNext []int32 // group·bands+band → next entry of the bucket, or -1

	// before pass 2: the first element of each band of the indexed
	// signatures, which a train row's band must share to match a bucket
	bandFilter bandFilter
	firstsMH   *MinHasher   // the permutations of each band's first row
	bandMH     []*MinHasher // the permutations of each band's rows

	// after pass 2: pairs to name in pass 3, and complete counts
	seqPairs   []gateSeqPair
	wanted     map[uint32]*gateRef
	groupNames map[uint32]string // the group of each wanted row
	groupCount int
	idCount    int
	textCount  int

	// pass 2
	rows2       int
	exactCount  int
	nearCount   int
	contamCount int
	candidates  int
	exactTop    gateTop[gatePair]
	nearTop     gateTop[gatePair]
	contamTop   gateTop[gatePair]

	// pass 3
	rows3 int
}

func (g *gate) init() {
	g.files = map[string]string{}
	for i := range g.sides {
		g.sides[i] = gateSideStats{bySensitivity: map[string]int{}, byLabel: map[string]int{}}
		if i == sideAgainst {
			continue
		}
		for _, l := range g.opt.Sensitivities {
			g.sides[i].bySensitivity[l] = 0
		}
	}
	g.fpGroup = map[uint64]int32{}
	g.bucketHead = map[uint64]int32{}
	g.wanted = map[uint32]*gateRef{}
	g.groupNames = map[uint32]string{}
	g.labelTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
	g.exactTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
	g.nearTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
	g.contamTop = gateTop[gatePair]{max: g.opt.MaxFindings, cmp: comparePairs}
}

func comparePairs(a, b gatePair) int {
	return cmp.Or(
		strings.Compare(a.a.file, b.a.file), cmp.Compare(a.a.row, b.a.row),
		strings.Compare(a.b.file, b.b.file), cmp.Compare(a.b.row, b.b.row),
		strings.Compare(a.a.id, b.a.id), strings.Compare(a.b.id, b.b.id))
}

// side validates a row's side.
func (g *gate) side(r Row) (int, error) {
	switch r.Side {
	case Train:
		return sideTrain, nil
	case Test:
		return sideTest, nil
	case Against:
		return sideAgainst, nil
	}
	return 0, fmt.Errorf("splits: %s: row %d (id %s): side %q is not %s, %s or %s", r.File, r.Index, r.ID, r.Side, Train, Test, Against)
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
// work (run by the workers) and merge (run in input order); work and merge
// may be nil for a read that batches nothing.
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
	newWorker := func() *gateWorker { return &gateWorker{} }
	return orderedPipeline(ctx, workers, newWorker, work, merge, func(emit func(*gateBatch) error) error {
		var b *gateBatch
		pos := 0 // the position in the input of the row read
		add := func(r Row) error {
			if b == nil {
				b = &gateBatch{rows: make([]Row, 0, gateBatchRows), seqs: make([]uint32, 0, gateBatchRows)}
			}
			b.rows = append(b.rows, r)
			b.seqs = append(b.seqs, uint32(pos))
			if len(b.rows) == gateBatchRows {
				full := b
				b = nil
				return emit(full)
			}
			return nil
		}
		for n := 0; ; n++ {
			pos = n
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
				return fmt.Errorf("splits: %w", err) // the reader names the file and line
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

// hashString is the 64-bit FNV-1a hash of s, mixed.
func hashString(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime64
	}
	return mix64(h)
}

// groupOf returns a row's group and the case-insensitive key it is
// compared by ("" when it has none).
func (g *gate) groupOf(r *Row) (name, key string) {
	name = strings.TrimSpace(r.Group)
	if name == "" && g.opt.GroupFromID != nil {
		name = strings.TrimSpace(g.opt.GroupFromID(strings.TrimSpace(sourceOf(r))))
	}
	return name, foldKey(name)
}

// foldKey returns the form of s that two strings share exactly when
// strings.EqualFold calls them equal: every rune replaced by the least rune
// of its Unicode case-folding orbit (so Σ, σ and ς are one, as are S, s
// and ſ). Lower-casing would not do: it keeps σ and ς apart, and makes
// İ and i̇ alike.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func sourceOf(r *Row) string {
	if r.Source != "" {
		return r.Source
	}
	return r.ID
}

func statsKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return unknownKey
	}
	return s
}

// read1 records a row's statistics and checks its split label; every row
// goes on to be hashed.
func (g *gate) read1(r Row, side int, add func(Row) error) error {
	g.rows1++
	if g.rows1 > math.MaxUint32 {
		return fmt.Errorf("splits: more than %d rows", uint32(math.MaxUint32))
	}
	r.File = g.intern(r.File)
	st := &g.sides[side]
	st.rows++
	if side != sideAgainst {
		st.bySensitivity[statsKey(r.Sensitivity)]++
		st.byLabel[statsKey(r.Label)]++
		if r.SplitLabel != "" {
			if got, ok := SideOf(r.SplitLabel); !ok || got != sideNames[side] {
				g.labelCount++
				g.labelTop.add(gatePair{a: gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index},
					b: gateRef{id: strings.Clone(r.SplitLabel)}, note: sideNames[side]})
			}
		}
	}
	r.Sensitivity, r.Label, r.SplitLabel = "", "", ""
	if side == sideTrain {
		r.Text = "" // hashed in pass 2
	}
	return add(r)
}

// hash normalises a text and fills the worker's word and shingle hashes.
// It reports false for a text that normalises to nothing.
func (g *gate) hash(w *gateWorker, text string, shingles bool) (fp uint64, ok bool) {
	w.norm = appendNormalized(w.norm[:0], text)
	if len(w.norm) == 0 {
		return 0, false
	}
	fp, w.words = hashWords(w.norm, w.words[:0])
	if shingles {
		w.shingles = appendShingles(w.shingles[:0], w.words, g.opt.ShingleWords)
	}
	return fp, true
}

func (g *gate) work1(w *gateWorker, b *gateBatch) {
	n, p := len(b.rows), g.opt.Permutations
	b.fps = make([]uint64, n)
	b.empty = make([]bool, n)
	for i, r := range b.rows {
		indexed := r.Side != Train && g.near
		fp, ok := g.hash(w, r.Text, indexed)
		if !ok {
			b.empty[i] = true
			continue
		}
		b.fps[i] = fp
		if indexed {
			if b.sigs == nil {
				b.sigs = make([]uint32, n*p)
			}
			g.mh.Signature(w.shingles, b.sigs[i*p:(i+1)*p:(i+1)*p])
		}
	}
}

// merge1 records each row's key (a train row's text comes in pass 2) and
// adds the texts of test and outside rows to the fingerprint groups and,
// for each new text, its signature to the LSH buckets.
func (g *gate) merge1(b *gateBatch) {
	p, bands := g.opt.Permutations, g.opt.Bands
	for i := range b.rows {
		r := &b.rows[i]
		seq := uint32(len(g.keys))
		side := sideTrain
		switch r.Side {
		case Test:
			side = sideTest
		case Against:
			side = sideAgainst
		}
		k := gateKey{seq: seq, side: uint8(side)}
		if r.ID != "" {
			k.id, k.flags = hashString(r.ID), k.flags|keyHasID
		}
		if src := sourceOf(r); src != "" {
			k.source, k.flags = hashString(src), k.flags|keyHasSource
		}
		if _, key := g.groupOf(r); key != "" {
			k.group, k.flags = hashString(key), k.flags|keyHasGroup
		}
		if !b.empty[i] {
			k.text, k.flags = b.fps[i], k.flags|keyHasText
		}
		g.keys = append(g.keys, k)
		if side == sideTrain || b.empty[i] {
			continue
		}
		t := int32(len(g.indexed))
		g.indexed = append(g.indexed, gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index})
		g.indexSide = append(g.indexSide, uint8(side))
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

// analyse sorts the keys of passes 1 and 2 to find groups on both sides,
// repeated ids and texts repeated within a side under other sources.
// Counts are complete; the pairs it keeps to name (the first MaxFindings of each
// check in input order, and a few more: pass 3 drops hash collisions) are
// read back in pass 3.
func (g *gate) analyse() {
	keys := g.keys
	keep := func(check string, a, b uint32) {
		g.seqPairs = append(g.seqPairs, gateSeqPair{check: check, a: a, b: b})
	}
	trainTest := func(k gateKey) bool { return k.side != sideAgainst }

	// Groups: the first row of each side, per group.
	eachRun(keys, keyHasGroup, func(k gateKey) [2]uint64 { return [2]uint64{0, k.group} }, func(run []gateKey) {
		first := [2]int{-1, -1}
		for _, k := range run {
			if trainTest(k) && first[k.side] < 0 {
				first[k.side] = int(k.seq)
			}
		}
		for s := range first {
			if first[s] >= 0 {
				g.sides[s].groups++
			}
		}
		if first[sideTrain] >= 0 && first[sideTest] >= 0 {
			g.groupCount++
			keep(CheckGroupDisjoint, uint32(first[sideTrain]), uint32(first[sideTest]))
		}
	})
	// Ids: every row after the first with the same id.
	eachRun(keys, keyHasID, func(k gateKey) [2]uint64 { return [2]uint64{0, k.id} }, func(run []gateKey) {
		first := -1
		for _, k := range run {
			if !trainTest(k) {
				continue
			}
			if first < 0 {
				first = int(k.seq)
				continue
			}
			g.idCount++
			keep(CheckDuplicateIDs, uint32(first), k.seq)
		}
	})
	// Texts within a side: every row whose source differs from the first
	// row's with that text on that side.
	eachRun(keys, keyHasText, func(k gateKey) [2]uint64 { return [2]uint64{uint64(k.side), k.text} }, func(run []gateKey) {
		if !trainTest(run[0]) {
			return
		}
		first := run[0]
		for _, k := range run[1:] {
			if k.flags&keyHasSource != 0 && first.flags&keyHasSource != 0 && k.source == first.source {
				continue
			}
			g.textCount++
			keep(CheckDuplicateTexts, first.seq, k.seq)
		}
	})
	g.keys = nil // no longer needed

	// Name the first findings of each check in input order, with spare
	// ones for pairs that pass 3 finds to be hash collisions.
	slices.SortStableFunc(g.seqPairs, func(a, b gateSeqPair) int {
		return cmp.Or(strings.Compare(a.check, b.check), cmp.Compare(max(a.a, a.b), max(b.a, b.b)), cmp.Compare(a.a, b.a))
	})
	limit := g.opt.MaxFindings + 8
	kept := g.seqPairs[:0]
	per := map[string]int{}
	for _, p := range g.seqPairs {
		if g.opt.MaxFindings >= 0 && per[p.check] >= limit {
			continue
		}
		per[p.check]++
		kept = append(kept, p)
		g.wanted[p.a] = nil
		g.wanted[p.b] = nil
	}
	g.seqPairs = kept
}

// eachRun calls f with each run of keys that have flag and one value of
// by, in input order within the run; runs come in no particular order.
// It reorders keys: a radix sort by by's second value (a hash, and so
// spread evenly), then the few keys that share one by their first value
// and input order.
func eachRun(keys []gateKey, flag uint8, by func(gateKey) [2]uint64, f func(run []gateKey)) {
	n := 0
	for i, k := range keys {
		if k.flags&flag != 0 {
			keys[i], keys[n] = keys[n], k
			n++
		}
	}
	keys = keys[:n]
	vals := make([]uint64, n)
	for i, k := range keys {
		vals[i] = by(k)[1]
	}
	radixSortKeys(keys, vals)
	for i := 0; i < n; {
		j := i + 1
		for j < n && vals[j] == vals[i] {
			j++
		}
		run := keys[i:j]
		if len(run) > 1 {
			slices.SortFunc(run, func(a, b gateKey) int {
				return cmp.Or(cmp.Compare(by(a)[0], by(b)[0]), cmp.Compare(a.seq, b.seq))
			})
		}
		for len(run) > 0 {
			m := 1
			for m < len(run) && by(run[m])[0] == by(run[0])[0] {
				m++
			}
			f(run[:m])
			run = run[m:]
		}
		i = j
	}
}

// radixSortKeys sorts keys and their values vals (of equal length) by
// the values, a byte at a time from the lowest.
func radixSortKeys(keys []gateKey, vals []uint64) {
	n := len(keys)
	if n < 2 {
		return
	}
	k2, v2 := make([]gateKey, n), make([]uint64, n)
	for shift := uint(0); shift < 64; shift += 8 {
		var count [257]int
		for _, v := range vals {
			count[v>>shift&0xff+1]++
		}
		if count[vals[0]>>shift&0xff+1] == n {
			continue // every value has this byte
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for i, v := range vals {
			d := v >> shift & 0xff
			k2[count[d]], v2[count[d]] = keys[i], v
			count[d]++
		}
		copy(keys, k2)
		copy(vals, v2)
	}
}

// buildBandFilter prepares pass 2's shortcut past bands that cannot
// match: the filter of the indexed signatures' first elements of each
// band, and the permutations to compute those elements and then the rest
// of a band.
func (g *gate) buildBandFilter() {
	groups := len(g.groupFirst)
	if !g.near || groups == 0 {
		return
	}
	bands, r, p := g.opt.Bands, g.rowsPerBand, g.opt.Permutations
	g.firstsMH = &MinHasher{a: make([]uint64, bands), b: make([]uint64, bands)}
	g.bandMH = make([]*MinHasher, bands)
	for band := range bands {
		lo, hi := band*r, band*r+r
		g.firstsMH.a[band], g.firstsMH.b[band] = g.mh.a[lo], g.mh.b[lo]
		g.bandMH[band] = &MinHasher{a: g.mh.a[lo:hi:hi], b: g.mh.b[lo:hi:hi]}
	}
	g.bandFilter = newBandFilter(groups * bands)
	for grp := range groups {
		sig := g.sigs[grp*p : grp*p+p]
		for band := range bands {
			g.bandFilter.add(band, sig[band*r])
		}
	}
}

// bandFilter is a one-hash Bloom filter of (band, signature element)
// pairs: has never misses an added pair, and reports a pair that was not
// added with probability about 1/bandFilterBits.
type bandFilter struct {
	bits  []uint64
	shift uint
}

// bandFilterBits is the filter's size in bits per pair added.
const bandFilterBits = 32

func newBandFilter(pairs int) bandFilter {
	logBits := uint(6)
	for 1<<logBits < pairs*bandFilterBits {
		logBits++
	}
	return bandFilter{bits: make([]uint64, 1<<(logBits-6)), shift: 64 - logBits}
}

func (f *bandFilter) slot(band int, v uint32) uint64 {
	return (uint64(v) | uint64(band)<<32) * 0x9e3779b97f4a7c15 >> f.shift
}

func (f *bandFilter) add(band int, v uint32) {
	i := f.slot(band, v)
	f.bits[i>>6] |= 1 << (i & 63)
}

func (f *bandFilter) has(band int, v uint32) bool {
	i := f.slot(band, v)
	return f.bits[i>>6]&(1<<(i&63)) != 0
}

// read2 passes train rows with text on to be hashed and looked up.
func (g *gate) read2(r Row, side int, add func(Row) error) error {
	g.rows2++
	if side != sideTrain || r.Text == "" {
		return nil
	}
	r.File = g.intern(r.File)
	r.Sensitivity, r.Label, r.SplitLabel, r.Group = "", "", "", ""
	return add(r)
}

// read3 keeps the file, row, id and group of the rows that findings of
// the keys name.
func (g *gate) read3(r Row, _ int, _ func(Row) error) error {
	seq := uint32(g.rows3)
	g.rows3++
	if ref, ok := g.wanted[seq]; ok && ref == nil {
		name, _ := g.groupOf(&r)
		g.wanted[seq] = &gateRef{id: strings.Clone(r.ID), file: g.intern(r.File), row: r.Index}
		g.groupNames[seq] = strings.Clone(name)
	}
	return nil
}

// work2 hashes train rows and looks them up: the text group with the same
// fingerprint, and the text groups sharing an LSH band whose signatures
// agree in enough positions.
func (g *gate) work2(w *gateWorker, b *gateBatch) {
	n, p, bands := len(b.rows), g.opt.Permutations, g.opt.Bands
	near := g.near && len(g.groupFirst) > 0
	b.fps = make([]uint64, n)
	b.empty = make([]bool, n)
	b.exact = make([]int32, n)
	b.near = make([][]gateNear, n)
	if near && len(w.seen) != len(g.groupFirst) {
		w.seen = make([]uint32, len(g.groupFirst))
		w.gen = 0
	}
	for i, r := range b.rows {
		b.exact[i] = -1
		fp, ok := g.hash(w, r.Text, near)
		if !ok {
			b.empty[i] = true
			continue
		}
		b.fps[i] = fp
		exact := int32(-1)
		if grp, ok := g.fpGroup[fp]; ok {
			exact = grp
		}
		b.exact[i] = exact
		if !near {
			continue
		}
		// A band can only match a bucket when its first element is one
		// that an indexed signature has in that band: most train rows
		// are settled by the first elements alone, and the rest of a
		// band, or of the signature, is computed only when needed. The
		// elements are those Signature computes, so the candidates are
		// the same.
		w.firsts = g.firstsMH.Signature(w.shingles, w.firsts)
		if len(w.sig) != p {
			w.sig = make([]uint32, p)
		}
		full := false
		w.gen++
		if w.gen == 0 {
			clear(w.seen)
			w.gen = 1
		}
		var found []gateNear
		r := g.rowsPerBand
		for band := range bands {
			if !g.bandFilter.has(band, w.firsts[band]) {
				continue
			}
			if !full {
				g.bandMH[band].Signature(w.shingles, w.sig[band*r:band*r+r:band*r+r])
			}
			e, ok := g.bucketHead[bandKey(w.sig, band, r)]
			if ok && !full {
				g.mh.Signature(w.shingles, w.sig)
				full = true
			}
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

// merge2 completes the keys of a batch of train rows with their texts,
// and counts and records their pairs.
func (g *gate) merge2(b *gateBatch) {
	g.candidates += b.candidates
	for i, r := range b.rows {
		if seq := int(b.seqs[i]); !b.empty[i] && seq < len(g.keys) { // else the rows changed, an error
			k := &g.keys[seq]
			k.text, k.flags = b.fps[i], k.flags|keyHasText
		}
		if b.exact[i] < 0 && len(b.near[i]) == 0 {
			continue
		}
		train := gateRef{id: strings.Clone(r.ID), file: r.File, row: r.Index}
		if grp := b.exact[i]; grp >= 0 {
			for t := g.groupFirst[grp]; t >= 0; t = g.rowNext[t] {
				if g.indexSide[t] == sideAgainst {
					g.contamCount++
					g.contamTop.add(gatePair{a: train, b: g.indexed[t], exact: true})
					continue
				}
				g.exactCount++
				g.exactTop.add(gatePair{a: train, b: g.indexed[t]})
			}
		}
		for _, nd := range b.near[i] {
			for t := g.groupFirst[nd.group]; t >= 0; t = g.rowNext[t] {
				if g.indexSide[t] == sideAgainst {
					g.contamCount++
					g.contamTop.add(gatePair{a: train, b: g.indexed[t], agree: int(nd.agree)})
					continue
				}
				g.nearCount++
				g.nearTop.add(gatePair{a: train, b: g.indexed[t], agree: int(nd.agree)})
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
	rep.Options.GroupFromID = nil // a report is data
	for side, st := range g.sides {
		if side == sideAgainst && st.rows == 0 {
			continue
		}
		ss := &SplitStats{
			Rows:          st.rows,
			Groups:        st.groups,
			BySensitivity: st.bySensitivity,
			ByLabel:       st.byLabel,
			LabelShare:    map[string]float64{},
		}
		for l, n := range st.byLabel {
			ss.LabelShare[l] = float64(n) / float64(st.rows)
		}
		rep.Splits[sideNames[side]] = ss
	}
	byCheck := map[string]CheckResult{
		CheckSplitLabel:          g.checkSplitLabels(),
		CheckGroupDisjoint:       g.checkGroups(rep),
		CheckDuplicateIDs:        g.checkRepeats(CheckDuplicateIDs, g.idCount),
		CheckDuplicateTexts:      g.checkRepeats(CheckDuplicateTexts, g.textCount),
		CheckExactDuplicates:     g.checkDuplicates(CheckExactDuplicates),
		CheckNearDuplicates:      g.checkDuplicates(CheckNearDuplicates),
		CheckContamination:       g.checkContamination(),
		CheckTestFraction:        g.checkTestFraction(),
		CheckSensitivityCoverage: g.checkSensitivities(),
		CheckLabelBalance:        g.checkLabels(rep),
	}
	rep.Passed = true
	for _, name := range Checks {
		c := byCheck[name]
		if reason, ok := g.opt.Skip[name]; ok {
			c = CheckResult{Name: name, Status: StatusSkipped, Summary: reason}
		}
		if c.Status == StatusFail {
			rep.Passed = false
		}
		rep.Checks = append(rep.Checks, c)
	}
	return rep
}

func (g *gate) checkSplitLabels() CheckResult {
	c := CheckResult{Name: CheckSplitLabel, Count: g.labelCount}
	for _, p := range g.labelTop.trim() {
		c.Findings = append(c.Findings, Finding{
			Message: fmt.Sprintf("%s says split %q, but its file is on the %s side", p.a.bracketed(), p.b.id, p.note),
			IDs:     []string{p.a.id}, File: p.a.file, Row: p.a.row,
		})
	}
	if c.Count > 0 {
		c.Status = StatusFail
		c.Summary = plural(c.Count, "row has a split label", "rows have a split label") + " that disagrees with the side of its file"
	} else {
		c.Status = StatusPass
		c.Summary = "every split label agrees with the side of its row's file"
	}
	return c
}

// named reports whether the pairs kept by analyse for a check of count
// pairs are all of them, so that dropping a hash collision among them can
// correct the count.
func (g *gate) named(count int) bool {
	return g.opt.MaxFindings < 0 || count <= g.opt.MaxFindings+8
}

// seqFindings turns the named pairs of a pass-1 check into findings,
// dropping the pairs whose rows turn out not to repeat (a hash collision),
// and returns the check's count, corrected for the dropped pairs when
// every pair was named.
func (g *gate) seqFindings(check string, count int, message func(p gateSeqPair, a, b gateRef) (Finding, bool)) ([]Finding, int) {
	var fs []Finding
	dropped := 0
	for _, p := range g.seqPairs {
		if p.check != check {
			continue
		}
		a, b := g.wanted[p.a], g.wanted[p.b]
		if a == nil || b == nil {
			continue
		}
		f, ok := message(p, *a, *b)
		if !ok {
			dropped++
			continue
		}
		fs = append(fs, f)
	}
	if g.named(count) {
		count -= dropped
	}
	return truncateFindings(fs, g.opt.MaxFindings), count
}

func (g *gate) checkGroups(rep *Report) CheckResult {
	c := CheckResult{Name: CheckGroupDisjoint}
	name := g.opt.GroupName
	c.Findings, c.Count = g.seqFindings(CheckGroupDisjoint, g.groupCount, func(p gateSeqPair, a, b gateRef) (Finding, bool) {
		ga, gb := g.groupNames[p.a], g.groupNames[p.b]
		if !strings.EqualFold(ga, gb) {
			return Finding{}, false
		}
		first := a
		if p.b < p.a {
			first = b
		}
		return Finding{
			Message: fmt.Sprintf("%s %q is in %s (%s) and %s (%s)", name, ga, Train, a.location(), Test, b.location()),
			IDs:     []string{a.id, b.id},
			File:    first.file,
			Row:     first.row,
		}, true
	})
	if c.Count > 0 {
		c.Status = StatusFail
		c.Summary = plural(c.Count, name+" appears", name+"s appear") + " in both splits"
	} else {
		c.Status = StatusPass
		c.Summary = fmt.Sprintf("no %s appears in both splits (%d train, %d test %ss)", name,
			rep.Splits[Train].Groups, rep.Splits[Test].Groups, name)
	}
	return c
}

func (g *gate) checkRepeats(check string, count int) CheckResult {
	c := CheckResult{Name: check}
	if check == CheckDuplicateIDs {
		c.Findings, c.Count = g.seqFindings(check, count, func(_ gateSeqPair, a, b gateRef) (Finding, bool) {
			if a.id != b.id {
				return Finding{}, false
			}
			return Finding{Message: fmt.Sprintf("id %s is at %s and again at %s", a.id, a.place(), b.place()),
				IDs: []string{a.id}, File: b.file, Row: b.row}, true
		})
	} else {
		c.Findings, c.Count = g.seqFindings(check, count, func(_ gateSeqPair, a, b gateRef) (Finding, bool) {
			return Finding{Message: fmt.Sprintf("%s has the text of %s after normalisation", b.bracketed(), a.bracketed()),
				IDs: []string{a.id, b.id}, File: b.file, Row: b.row}, true
		})
	}
	switch {
	case c.Count > 0 && check == CheckDuplicateIDs:
		c.Status = StatusFail
		c.Summary = plural(c.Count, "row repeats the id", "rows repeat the id") + " of an earlier row"
	case c.Count > 0:
		c.Status = StatusFail
		c.Summary = plural(c.Count, "row repeats the text", "rows repeat the text") + " of an earlier row of its side under another id, after normalisation"
	case check == CheckDuplicateIDs:
		c.Status = StatusPass
		c.Summary = "no id appears twice"
	default:
		c.Status = StatusPass
		c.Summary = "no text appears twice on one side under different ids"
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
		f := Finding{IDs: []string{p.a.id, p.b.id}, File: p.a.file, Row: p.a.row}
		if name == CheckNearDuplicates {
			f.Similarity = float64(p.agree) / float64(g.opt.Permutations)
			f.Message = fmt.Sprintf("train %s is a near-duplicate of test %s (estimated Jaccard %.2f)",
				p.a.bracketed(), p.b.bracketed(), f.Similarity)
		} else {
			f.Message = fmt.Sprintf("train %s duplicates test %s after normalisation", p.a.bracketed(), p.b.bracketed())
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

func (g *gate) checkContamination() CheckResult {
	c := CheckResult{Name: CheckContamination, Count: g.contamCount}
	if g.sides[sideAgainst].rows == 0 {
		c.Status = StatusSkipped
		c.Summary = "no outside evaluation set given (--against)"
		return c
	}
	for _, p := range g.contamTop.trim() {
		f := Finding{IDs: []string{p.a.id, p.b.id}, File: p.a.file, Row: p.a.row}
		if p.exact {
			f.Message = fmt.Sprintf("train %s duplicates evaluation row %s after normalisation", p.a.bracketed(), p.b.bracketed())
		} else {
			f.Similarity = float64(p.agree) / float64(g.opt.Permutations)
			f.Message = fmt.Sprintf("train %s is a near-duplicate of evaluation row %s (estimated Jaccard %.2f)",
				p.a.bracketed(), p.b.bracketed(), f.Similarity)
		}
		c.Findings = append(c.Findings, f)
	}
	n := g.sides[sideAgainst].rows
	if c.Count > 0 {
		c.Status = StatusFail
		c.Summary = plural(c.Count, "train row duplicates or nearly duplicates a row of", "train/evaluation pairs are duplicates or near-duplicates: train rows against") +
			fmt.Sprintf(" the %s of the outside evaluation set", plural(n, "row", "rows"))
	} else {
		c.Status = StatusPass
		what := "an exact duplicate"
		if g.near {
			what = fmt.Sprintf("a duplicate or near-duplicate (estimated Jaccard ≥ %.2f)", g.opt.NearDuplicateThreshold)
		}
		c.Summary = fmt.Sprintf("no train row is %s of the %s of the outside evaluation set", what, plural(n, "row", "rows"))
	}
	return c
}

func (g *gate) checkTestFraction() CheckResult {
	c := CheckResult{Name: CheckTestFraction}
	target := g.opt.TestFraction
	total := g.sides[sideTrain].rows + g.sides[sideTest].rows
	achieved := 0.0
	if total > 0 {
		achieved = float64(g.sides[sideTest].rows) / float64(total)
	}
	for side, st := range g.sides[:sideAgainst] {
		if st.rows == 0 {
			c.Status, c.Count = StatusFail, 1
			c.Summary = fmt.Sprintf("the %s side has no rows", sideNames[side])
			c.Findings = []Finding{{Message: c.Summary + ": a split needs rows on both sides", IDs: []string{}}}
			return c
		}
	}
	if target == 0 {
		c.Status = StatusSkipped
		c.Summary = fmt.Sprintf("no target test fraction set: give --test-fraction, or the split's manifest (achieved %.3f, %d of %d rows)", achieved, g.sides[sideTest].rows, total)
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
	for side, st := range g.sides[:sideAgainst] {
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
	for _, side := range []string{Train, Test} {
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
