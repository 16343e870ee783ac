package splits

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
)

// Defaults of ContaminationOptions.
const (
	// DefaultNGram is the word n-gram length. Temporal benchmark questions
	// are short (TimeQA's and TempReason's 8 to 15 words), so datatrove's
	// 12-gram and GPT-3's 13-gram would leave most of them as short items
	// that match only whole; 8 (PaLM's choice) still spans more than the
	// template words between a question's slots (entity, date), so two
	// instances of one template share no n-gram.
	DefaultNGram = 8
	// DefaultMinOverlap is the share of a benchmark record's n-grams that a
	// training row must hold to be a near duplicate.
	DefaultMinOverlap = 0.5
	// DefaultSpanChars bounds the matching span quoted in a finding.
	DefaultSpanChars = 160
	// CommonNGramRecords: an n-gram shared by more benchmark records than
	// this (an instruction, a template) is left out of the index and of
	// its records' shares, so that it cannot make every training row that
	// holds it a candidate for them all.
	CommonNGramRecords = 256
)

// Values of ContaminationOptions.Scope.
const (
	ScopeBenchmark = "benchmark" // MaxContaminated applies to each benchmark
	ScopeTotal     = "total"     // MaxContaminated applies to all benchmarks together
)

// Kinds of contamination findings.
const (
	KindExact = "exact" // the whole normalised benchmark prompt is in the training text
	KindNear  = "near"  // a share of the record's n-grams ≥ MinOverlap is
)

// BenchmarkColumns name the columns of a benchmark file; a column the
// file lacks is left out, except the text.
type BenchmarkColumns struct {
	// Item is the benchmark's own item text (default extra_info.question,
	// which benchmarks import writes: the question without the prompt's
	// instructions, options or reading passage). A file that has it is
	// indexed by it; other files by Text. "" always reads Text.
	Item string `json:"item,omitempty"`
	// Text is the question: the paths of the prompt (default prompt:user).
	Text []string `json:"text"`
	// Answer is the ground truth: a JSON object with answers (a list), a
	// letter and its options, or a label whose values are the answers; or
	// plain text (default reward_model.ground_truth; "" leaves it out).
	Answer string `json:"answer,omitempty"`
	// ID identifies a record (default extra_info.id; the row number
	// without).
	ID string `json:"id,omitempty"`
	// Benchmark names the record's benchmark (default
	// extra_info.benchmark, then data_source; the file's name without).
	Benchmark []string `json:"benchmark,omitempty"`
	// Split is the record's split (default extra_info.split): only the
	// splits of ContaminationOptions.Splits are checked; a file without
	// the column counts whole.
	Split string `json:"split,omitempty"`
}

// DefaultBenchmarkColumns are the columns of the toolkit's imported
// benchmark rows (synth.RowSchema, extra_info {benchmark, split, id, ...}).
func DefaultBenchmarkColumns() BenchmarkColumns {
	return BenchmarkColumns{Item: "extra_info.question", Text: []string{"prompt:user"}, Answer: "reward_model.ground_truth", ID: "extra_info.id",
		Benchmark: []string{"extra_info.benchmark", "data_source"}, Split: "extra_info.split"}
}

// ContaminationOptions configure the contamination check. Zero fields
// take the defaults, except Norm (NewContaminationIndex callers set it;
// DefaultContaminationOptions has the default), MaxContaminated, and
// MaxFindings and SpanChars, where 0 lists no record and quotes no span.
type ContaminationOptions struct {
	// NGram is the word n-gram length (default DefaultNGram).
	NGram int `json:"ngram"`
	// Norm is the normalisation of both sides.
	Norm TextNorm `json:"normalize"`
	// MinOverlap is the share of a record's n-grams (a short item counting
	// as one) a training row must hold to be a near duplicate, in (0, 1].
	MinOverlap float64 `json:"min_overlap"`
	// MaxContaminated is how many contaminated benchmark records are
	// tolerated (per benchmark or in total, Scope) before the check fails.
	MaxContaminated int `json:"max_contaminated"`
	// Scope is ScopeBenchmark (default) or ScopeTotal.
	Scope string `json:"scope"`
	// Splits are the benchmark splits checked (default test), compared
	// case-insensitively; "all" checks every row.
	Splits []string `json:"splits"`
	// MaxFindings caps the records listed per benchmark (default 20; -1
	// lists all). Counts are always complete.
	MaxFindings int `json:"max_findings"`
	// SpanChars bounds the quoted span (default DefaultSpanChars).
	SpanChars int `json:"span_chars"`
	// Columns are the benchmark files' columns.
	Columns BenchmarkColumns `json:"columns"`
	// Workers scan training rows (default GOMAXPROCS).
	Workers int `json:"-"`
}

// DefaultContaminationOptions returns the defaults: 8-grams, the default
// normalisation, a near duplicate from half a record's n-grams, no
// contaminated record tolerated, the test split, 20 findings listed.
func DefaultContaminationOptions() ContaminationOptions {
	return ContaminationOptions{NGram: DefaultNGram, Norm: DefaultTextNorm(), MinOverlap: DefaultMinOverlap,
		Scope: ScopeBenchmark, Splits: []string{Test}, MaxFindings: DefaultMaxFindings, SpanChars: DefaultSpanChars,
		Columns: DefaultBenchmarkColumns()}
}

// resolve fills in defaults and rejects impossible values; the errors
// name the option as the command line does.
func (o ContaminationOptions) resolve() (ContaminationOptions, error) {
	bad := func(key, format string, args ...any) (ContaminationOptions, error) {
		return o, &OptionError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	if o.NGram == 0 {
		o.NGram = DefaultNGram
	}
	if o.MinOverlap == 0 {
		o.MinOverlap = DefaultMinOverlap
	}
	if o.Scope == "" {
		o.Scope = ScopeBenchmark
	}
	if o.Splits == nil {
		o.Splits = []string{Test}
	}
	if len(o.Columns.Text) == 0 {
		o.Columns.Text = DefaultBenchmarkColumns().Text
	}
	if o.Workers <= 0 {
		o.Workers = max(runtime.GOMAXPROCS(0), 1)
	}
	if o.NGram < 1 || o.NGram > 32 {
		return bad("ngram", "want 1 to 32 words, not %d", o.NGram)
	}
	if math.IsNaN(o.MinOverlap) || o.MinOverlap < 0 || o.MinOverlap > 1 {
		return bad("min_overlap", "want a share in (0, 1], not %v", o.MinOverlap)
	}
	if o.MaxContaminated < 0 {
		return bad("max_contaminated", "want 0 or more, not %d", o.MaxContaminated)
	}
	if o.Scope != ScopeBenchmark && o.Scope != ScopeTotal {
		return bad("scope", "want %s or %s, not %q", ScopeBenchmark, ScopeTotal, o.Scope)
	}
	if o.MaxFindings < -1 {
		return bad("max_findings", "want -1 (all) or more")
	}
	if o.SpanChars < 0 {
		return bad("span_chars", "want 0 or more")
	}
	return o, nil
}

// StrictContaminationOptions returns opt with its defaults filled in, or
// an *OptionError naming the first option out of range by its key (ngram,
// min_overlap, max_contaminated, scope, max_findings, span_chars).
func StrictContaminationOptions(opt ContaminationOptions) (ContaminationOptions, error) {
	return opt.resolve()
}

// BenchmarkRecord is one benchmark record as the index holds it.
type benchRecord struct {
	bench     uint32
	row       int32
	file      string
	id        string
	qLen      int32  // words of the question
	qKey      uint64 // runKey of the whole question
	qUnits    int32  // indexed n-grams of the question
	units     int32  // what the share is over
	shortQ    bool   // the question is shorter than n: one unit, matched whole
	shortAns  []shortRun
	longUnits int32 // indexed n-grams (question and answers)
}

// shortRun is an item shorter than n words: matched only whole.
type shortRun struct {
	key uint64
	k   int32
}

// ContaminationIndex is the benchmark side in memory: an open-addressing
// table from n-gram key to a list of record ids, kept flat (one offsets
// array, one ids array), a bit filter in front of it, and the records.
type ContaminationIndex struct {
	opt     ContaminationOptions
	records []benchRecord
	benches []BenchmarkResult
	files   []string

	// keys/groups: the table; groups[i] indexes offs.
	keys   []uint64
	groups []uint32
	mask   uint64
	offs   []uint32
	ids    []uint32
	filter []uint64 // one bit per key's hash, 16 bits a key
	fmask  uint64
	// shortFirst filters the first words of short questions; shortLens has
	// bit k set when a question of k < n words is indexed.
	shortFirst [1024]uint64
	shortLens  uint64
	dropped    int // common n-grams left out
}

// NewContaminationIndex reads the benchmark files and indexes the records
// of the chosen splits. An error about a file starts with its path: a
// missing text column, a file without rows, a record whose ground truth
// cannot be read.
func NewContaminationIndex(ctx context.Context, files []string, opt ContaminationOptions) (*ContaminationIndex, error) {
	opt, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	ix := &ContaminationIndex{opt: opt}
	tk := NewTokenizer(opt.Norm)
	n := opt.NGram
	var pairs []keyRec
	var words []Word
	var recKeys []uint64
	benchByName := map[string]uint32{}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows, cols, err := openBenchmark(path, opt.Columns)
		if err != nil {
			return nil, err
		}
		ix.files = append(ix.files, path)
		seen := false
		for {
			v, err := rows.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rows.close()
				return nil, err
			}
			seen = true
			r, err := cols.record(path, v)
			if err != nil {
				rows.close()
				return nil, err
			}
			b, ok := benchByName[r.bench]
			if !ok {
				b = uint32(len(ix.benches))
				benchByName[r.bench] = b
				ix.benches = append(ix.benches, BenchmarkResult{Name: r.bench})
			}
			br := &ix.benches[b]
			if !splitChosen(r.split, opt.Splits) {
				br.Skipped++
				continue
			}
			if len(ix.records) == math.MaxUint32 { // a record's number is a uint32
				rows.close()
				return nil, fmt.Errorf("splits: %s: more than %d benchmark records", path, uint32(math.MaxUint32))
			}
			rec := benchRecord{bench: b, row: int32(v.row), file: path, id: r.id}
			id := uint32(len(ix.records))
			recKeys = recKeys[:0]
			words = tk.Words(words[:0], r.question)
			rec.qLen = int32(len(words))
			rec.qKey = runKey(runHash(words), len(words))
			if len(words) >= n {
				eachWordRun(words, n, func(key uint64, _ int) bool { recKeys = append(recKeys, key); return true })
			} else if len(words) > 0 {
				rec.shortQ = true
				recKeys = append(recKeys, rec.qKey)
				ix.shortLens |= 1 << len(words)
				h := words[0].Hash
				ix.shortFirst[(h>>6)&1023] |= 1 << (h & 63)
			}
			slices.Sort(recKeys)
			recKeys = slices.Compact(recKeys)
			rec.qUnits = int32(len(recKeys))
			if rec.shortQ {
				rec.qUnits = 0
			}
			for _, a := range r.answers {
				words = tk.Words(words[:0], a)
				if len(words) >= n {
					eachWordRun(words, n, func(key uint64, _ int) bool { recKeys = append(recKeys, key); return true })
				} else if len(words) > 0 {
					rec.shortAns = append(rec.shortAns, shortRun{key: runKey(runHash(words), len(words)), k: int32(len(words))})
				}
			}
			slices.Sort(recKeys)
			recKeys = slices.Compact(recKeys)
			if len(recKeys) == 0 && len(rec.shortAns) == 0 {
				br.Empty++
				continue
			}
			for _, k := range recKeys {
				pairs = append(pairs, keyRec{key: k, rec: id})
			}
			rec.longUnits = int32(len(recKeys))
			if rec.shortQ {
				rec.longUnits--
			}
			br.Records++
			ix.records = append(ix.records, rec)
		}
		rows.close()
		if !seen {
			return nil, fmt.Errorf("splits: %s: %w: the benchmark file has no rows", path, dataset.ErrNoRecords)
		}
	}
	ix.build(pairs)
	return ix, nil
}

type keyRec struct {
	key uint64
	rec uint32
}

// build sorts the (key, record) pairs into the flat lists and the table,
// leaving out the common n-grams, and sets every record's units.
func (ix *ContaminationIndex) build(pairs []keyRec) {
	slices.SortFunc(pairs, func(a, b keyRec) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.rec, b.rec)
	})
	var uniq []uint64
	ix.offs = append(ix.offs[:0], 0)
	ix.ids = make([]uint32, 0, len(pairs))
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j].key == pairs[i].key {
			j++
		}
		if j-i > CommonNGramRecords {
			ix.dropped++
			for _, p := range pairs[i:j] {
				r := &ix.records[p.rec]
				r.longUnits--
				if !r.shortQ {
					r.qUnits-- // an upper bound of the question's share stays an upper bound
				}
			}
		} else {
			uniq = append(uniq, pairs[i].key)
			for _, p := range pairs[i:j] {
				ix.ids = append(ix.ids, p.rec)
			}
			ix.offs = append(ix.offs, uint32(len(ix.ids)))
		}
		i = j
	}
	for i := range ix.records {
		r := &ix.records[i]
		r.units = max(r.longUnits, 0)
		if r.shortQ {
			r.units++
		}
		if len(r.shortAns) > 0 {
			r.units++
		}
		r.qUnits = max(r.qUnits, 0)
	}
	size := 16
	for size < 2*len(uniq) {
		size <<= 1
	}
	ix.keys = make([]uint64, size)
	ix.groups = make([]uint32, size)
	ix.mask = uint64(size - 1)
	fbits := 64
	for fbits < 16*len(uniq) {
		fbits <<= 1
	}
	ix.filter = make([]uint64, fbits/64)
	ix.fmask = uint64(fbits - 1)
	for g, k := range uniq {
		k = tableKey(k)
		for s := k & ix.mask; ; s = (s + 1) & ix.mask {
			if ix.keys[s] == 0 {
				ix.keys[s], ix.groups[s] = k, uint32(g)
				break
			}
		}
		f := (k >> 20) & ix.fmask
		ix.filter[f>>6] |= 1 << (f & 63)
	}
}

// tableKey keeps 0 free to mark an empty slot.
func tableKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

// lookup returns the records of key, or nil.
func (ix *ContaminationIndex) lookup(key uint64) []uint32 {
	k := tableKey(key)
	f := (k >> 20) & ix.fmask
	if ix.filter[f>>6]&(1<<(f&63)) == 0 {
		return nil
	}
	for s := k & ix.mask; ; s = (s + 1) & ix.mask {
		switch ix.keys[s] {
		case k:
			g := ix.groups[s]
			return ix.ids[ix.offs[g]:ix.offs[g+1]]
		case 0:
			return nil
		}
	}
}

// Records is the number of benchmark records indexed.
func (ix *ContaminationIndex) Records() int { return len(ix.records) }

// Keys is the number of n-gram keys indexed.
func (ix *ContaminationIndex) Keys() int { return len(ix.offs) - 1 }

// splitChosen reports whether a record of split is checked.
func splitChosen(split string, chosen []string) bool {
	split = strings.TrimSpace(split)
	if split == "" {
		return true
	}
	for _, c := range chosen {
		if strings.EqualFold(c, "all") || strings.EqualFold(c, split) {
			return true
		}
	}
	return false
}

// benchCols are the columns one benchmark file has, in compiled paths'
// order: the text, then the id, source (the first benchmark column) and
// split; answer as the label.
type benchCols struct {
	cols *Columns
	name string // the benchmark name when the file has no benchmark column
}

type benchRow struct {
	question, id, bench, split string
	answers                    []string
}

// openBenchmark opens a benchmark file with the columns it has.
func openBenchmark(path string, want BenchmarkColumns) (fileRows, *benchCols, error) {
	fs, err := Fields(path)
	if err != nil {
		return nil, nil, err
	}
	if fs.empty {
		return nil, nil, fmt.Errorf("splits: %s: %w: the benchmark file has no rows", path, dataset.ErrNoRecords)
	}
	if want.Item != "" && fs.Has(want.Item) {
		want.Text = []string{want.Item}
	}
	for _, p := range want.Text {
		if !fs.Has(p) {
			return nil, nil, fmt.Errorf("splits: %s: no text column %s (its columns are %s); name it with --benchmark-text",
				path, p, strings.Join(fs.Top(), ", "))
		}
	}
	has := func(p string) string {
		if p != "" && fs.Has(p) {
			return p
		}
		return ""
	}
	bc := &benchCols{cols: &Columns{Text: want.Text, Split: has(want.Split), Label: has(want.Answer)}}
	if id := has(want.ID); id != "" {
		bc.cols.ID = []string{id}
	}
	for _, b := range want.Benchmark {
		if has(b) != "" {
			bc.cols.Source = b
			break
		}
	}
	base := filepath.Base(path) // never "": the name up to its first dot after the first character
	name, _, _ := strings.Cut(base[1:], ".")
	bc.name = base[:1] + name
	in := &Input{Path: path, Side: Test, Columns: bc.cols}
	rows, _, err := openFileRows(in, false)
	if err != nil {
		return nil, nil, err
	}
	return rows, bc, nil
}

// record reads one benchmark row's values.
func (bc *benchCols) record(path string, v values) (benchRow, error) {
	c := bc.cols
	k := len(c.Text)
	var parts []string
	for _, t := range v.vals[:k] {
		parts = append(parts, t...)
	}
	r := benchRow{question: strings.Join(parts, "\n"), bench: bc.name}
	one := func() string {
		vs := v.vals[k]
		k++
		return strings.Join(vs, " ")
	}
	if len(c.ID) > 0 {
		r.id = one()
	}
	if r.id == "" {
		r.id = "row " + strconv.Itoa(v.row)
	}
	if c.Source != "" {
		if s := strings.TrimSpace(one()); s != "" {
			r.bench = s
		}
	}
	if c.Split != "" {
		r.split = one()
	}
	if c.Label != "" {
		var answers []string
		for _, gt := range v.vals[k] {
			a, err := groundTruthAnswers(gt)
			if err != nil {
				return r, fmt.Errorf("splits: %s: record %d (id %s): %s: %w", path, v.row, r.id, c.Label, err)
			}
			answers = append(answers, a...)
		}
		r.answers = answers
	}
	return r, nil
}

// groundTruthAnswers reads the answers out of a ground truth: a JSON
// object's answers (or answer), the option text of its letter (or the
// letter), or its label's values; a JSON string or number itself; any
// other text as it is.
func groundTruthAnswers(gt string) ([]string, error) {
	s := strings.TrimSpace(gt)
	if s == "" {
		return nil, nil
	}
	if s[0] != '{' && s[0] != '[' && s[0] != '"' {
		return []string{s}, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{s}, nil // text that happens to start like JSON
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return scalars(v, nil), nil
	}
	var out []string
	for _, key := range []string{"answers", "answer"} {
		if a, ok := obj[key]; ok {
			out = scalars(a, out)
		}
	}
	if l, ok := obj["letter"]; ok {
		letter, _ := l.(string)
		opts, _ := obj["options"].(map[string]any)
		if opts == nil {
			out = scalars(l, out)
		} else if text, ok := opts[letter]; ok {
			out = scalars(text, out)
		} else {
			keys := make([]string, 0, len(opts))
			for k := range opts {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("letter %q is not one of the options (%s)", letter, strings.Join(keys, ", "))
		}
	}
	if l, ok := obj["label"]; ok {
		out = scalars(l, out)
	}
	return out, nil
}

// scalars appends the strings and numbers in v (lists and objects
// walked, objects in key order).
func scalars(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	case json.Number:
		out = append(out, v.String())
	case bool:
		out = append(out, strconv.FormatBool(v))
	case []any:
		for _, x := range v {
			out = scalars(x, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = scalars(v[k], out)
		}
	}
	return out
}

// errNoBenchmarkRecords is Scan's error when no record was indexed.
var errNoBenchmarkRecords = errors.New("no benchmark record to check")
