package splits

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

// oracleRecord is a benchmark record as the brute-force oracle sees it:
// lower-case ASCII words, single spaces.
type oracleRecord struct {
	id      string
	q       []string
	answers [][]string
}

// oracleFinding is what the oracle expects of a record's best row.
type oracleFinding struct {
	kind       string
	overlap    float64
	row, rows  int
	start, end int
}

// contains reports the first position of run in words, or -1.
func oracleFind(words, run []string) int {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

// oracleGrams lists the n-grams of words, joined by spaces.
func oracleGrams(words []string, n int) []string {
	var out []string
	for i := 0; i+n <= len(words); i++ {
		out = append(out, strings.Join(words[i:i+n], " "))
	}
	return out
}

// oracleScan is the check worked out by brute force from the documented
// rules: a record's units are its distinct n-grams (question and answers
// of n words or more), one for a question shorter than n and one for its
// short answers; a row that holds any of its n-grams (or its short
// question) is looked at; it is exact when the whole question is in it,
// near when its share of units reaches minOverlap; the best row is the
// first exact one, else the first with the highest share; a near span runs
// from the first n-gram (or short question) matched to the end of the last
// one, by first occurrence.
func oracleScan(recs []oracleRecord, rows [][]string, n int, minOverlap float64) map[string]oracleFinding {
	out := map[string]oracleFinding{}
	for _, rec := range recs {
		grams := map[string]bool{}
		for _, g := range oracleGrams(rec.q, n) {
			grams[g] = true
		}
		var shortAns [][]string
		for _, a := range rec.answers {
			if len(a) >= n {
				for _, g := range oracleGrams(a, n) {
					grams[g] = true
				}
			} else if len(a) > 0 {
				shortAns = append(shortAns, a)
			}
		}
		shortQ := len(rec.q) > 0 && len(rec.q) < n
		units := len(grams)
		if shortQ {
			units++
		}
		if len(shortAns) > 0 {
			units++
		}
		best, found, count := oracleFinding{}, false, 0
		for r, words := range rows {
			hits, lo, hi := 0, len(words), -1
			for g := range grams {
				gw := strings.Fields(g)
				if at := oracleFind(words, gw); at >= 0 {
					hits++
					lo, hi = min(lo, at), max(hi, at+n)
				}
			}
			qAt := oracleFind(words, rec.q)
			if shortQ && qAt >= 0 {
				hits++
				lo, hi = min(lo, qAt), max(hi, qAt+len(rec.q))
			}
			if hits == 0 {
				continue
			}
			matched := hits
			for _, a := range shortAns {
				if oracleFind(words, a) >= 0 {
					matched++
					break
				}
			}
			share := min(float64(matched)/float64(units), 1)
			exact := len(rec.q) > 0 && qAt >= 0
			if !exact && share < minOverlap {
				continue
			}
			if exact {
				lo, hi = qAt, qAt+len(rec.q)
			}
			count++
			f := oracleFinding{kind: KindNear, overlap: share, row: r + 1}
			if exact {
				f.kind = KindExact
			}
			// Words are single-spaced: a word's offset is the letters and
			// spaces before it.
			f.start = len(strings.Join(words[:lo], " "))
			if lo > 0 {
				f.start++
			}
			f.end = f.start + len(strings.Join(words[lo:hi], " "))
			if !found || (exact && best.kind != KindExact) || (exact == (best.kind == KindExact) && share > best.overlap) {
				best, found = f, true
			}
		}
		if found {
			best.rows = count
			out[rec.id] = best
		}
	}
	return out
}

// TestContaminationAgreesWithBruteForce runs the check over random records
// and rows drawn from a small vocabulary, so that n-grams, short questions
// and short answers overlap by chance and by planted copies, and requires
// every finding (kind, share, best row, rows, span) and every count to be
// the oracle's.
func TestContaminationAgreesWithBruteForce(t *testing.T) {
	vocab := strings.Fields("ab cd ef gh ij kl mn op qr st uv wx")
	for _, tc := range []struct {
		seed       uint64
		n          int
		minOverlap float64
	}{
		{1, 8, 0.5}, {2, 3, 0.5}, {3, 4, 0.3}, {4, 2, 0.9}, {5, 5, 1}, {6, 3, 0.25},
	} {
		t.Run(fmt.Sprintf("seed %d n %d overlap %v", tc.seed, tc.n, tc.minOverlap), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 7))
			words := func(k int) []string {
				w := make([]string, k)
				for i := range w {
					w[i] = vocab[rng.IntN(len(vocab))]
				}
				return w
			}
			var recs []oracleRecord
			var fixture []benchRec
			for i := range 40 {
				rec := oracleRecord{id: fmt.Sprintf("r%02d", i), q: words(1 + rng.IntN(3*tc.n))}
				var answers []string
				for range 1 + rng.IntN(2) {
					a := words(1 + rng.IntN(tc.n+2))
					rec.answers = append(rec.answers, a)
					answers = append(answers, fmt.Sprintf("%q", strings.Join(a, " ")))
				}
				recs = append(recs, rec)
				fixture = append(fixture, benchRec{"bench", "test", rec.id, strings.Join(rec.q, " "),
					`{"answers":[` + strings.Join(answers, ",") + `]}`})
			}
			var rows [][]string
			var texts []string
			for range 300 {
				row := words(rng.IntN(12))
				for range rng.IntN(3) { // a piece of a record's question or answer
					rec := recs[rng.IntN(len(recs))]
					src := rec.q
					if rng.IntN(3) == 0 {
						src = rec.answers[0]
					}
					from := rng.IntN(len(src))
					to := from + 1 + rng.IntN(len(src)-from)
					row = append(append(row, src[from:to]...), words(rng.IntN(4))...)
				}
				rows = append(rows, row)
				texts = append(texts, strings.Join(row, " "))
			}
			opt := DefaultContaminationOptions()
			opt.NGram, opt.MinOverlap, opt.MaxFindings, opt.SpanChars, opt.Workers = tc.n, tc.minOverlap, -1, 1000, 2
			rep := scan(t, opt, fixture, texts...)
			want := oracleScan(recs, rows, tc.n, tc.minOverlap)
			got := map[string]oracleFinding{}
			for id, f := range findings(rep) {
				got[id] = oracleFinding{kind: f.Kind, overlap: f.Overlap, row: f.Row, rows: f.Rows, start: f.Start, end: f.End}
				require.Equal(t, texts[f.Row-1][f.Start:f.End], f.Span, id)
			}
			require.Equal(t, want, got)
			require.NotEmpty(t, want, "the draw plants nothing")
			exact, flaggedRows := 0, map[int]bool{}
			for _, f := range want {
				if f.kind == KindExact {
					exact++
				}
			}
			for _, f := range findings(rep) {
				flaggedRows[f.Row] = true
			}
			require.Len(t, rep.Benchmarks, 1)
			b := rep.Benchmarks[0]
			assert.Equal(t, len(want), b.Contaminated)
			assert.Equal(t, exact, b.Exact)
			assert.Equal(t, len(want)-exact, b.Near)
			assert.Equal(t, len(want), rep.Contaminated)
			assert.Equal(t, 40, rep.Records)
			assert.Equal(t, 300, rep.TrainingRows)
			matches := 0
			for _, f := range want {
				matches += f.rows
			}
			assert.Equal(t, matches, b.Matches)
			assert.GreaterOrEqual(t, b.TrainingRows, len(flaggedRows))
			assert.Equal(t, b.TrainingRows, rep.ContaminatedRows)
		})
	}
}

// TestStrictContaminationOptions: zero fields take their defaults (except
// the findings and span caps, where 0 is a value), and each value out of
// range is refused by its key.
func TestStrictContaminationOptions(t *testing.T) {
	got, err := StrictContaminationOptions(ContaminationOptions{})
	require.NoError(t, err)
	assert.Equal(t, DefaultNGram, got.NGram)
	assert.Equal(t, DefaultMinOverlap, got.MinOverlap)
	assert.Equal(t, ScopeBenchmark, got.Scope)
	assert.Equal(t, []string{Test}, got.Splits)
	assert.Equal(t, DefaultBenchmarkColumns().Text, got.Columns.Text)
	assert.Positive(t, got.Workers)
	assert.Zero(t, got.MaxFindings)
	assert.Zero(t, got.SpanChars)
	for _, tc := range []struct {
		key string
		set func(*ContaminationOptions)
	}{
		{"", func(o *ContaminationOptions) { o.NGram, o.MinOverlap, o.MaxFindings = 32, 1, -1 }},
		{"ngram", func(o *ContaminationOptions) { o.NGram = 33 }},
		{"ngram", func(o *ContaminationOptions) { o.NGram = -1 }},
		{"", func(o *ContaminationOptions) { o.NGram = 1 }},
		{"min_overlap", func(o *ContaminationOptions) { o.MinOverlap = 1.0001 }},
		{"min_overlap", func(o *ContaminationOptions) { o.MinOverlap = -0.1 }},
		{"max_contaminated", func(o *ContaminationOptions) { o.MaxContaminated = -1 }},
		{"", func(o *ContaminationOptions) { o.Scope = ScopeTotal }},
		{"scope", func(o *ContaminationOptions) { o.Scope = "file" }},
		{"max_findings", func(o *ContaminationOptions) { o.MaxFindings = -2 }},
		{"span_chars", func(o *ContaminationOptions) { o.SpanChars = -1 }},
	} {
		opt := DefaultContaminationOptions()
		tc.set(&opt)
		_, err := StrictContaminationOptions(opt)
		if tc.key == "" {
			assert.NoError(t, err, "%+v", opt)
			continue
		}
		var oe *OptionError
		require.ErrorAs(t, err, &oe, tc.key)
		assert.Equal(t, tc.key, oe.Key)
	}
}

// TestCheckContaminationFiles runs the check on files: a benchmark
// directory, a dataset with text and id columns read without naming them,
// a manifest-less JSONL file by named columns, and the errors of each side.
func TestCheckContaminationFiles(t *testing.T) {
	dir := t.TempDir()
	benchDir := filepath.Join(dir, "bench")
	require.NoError(t, os.MkdirAll(benchDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(benchDir, "b.jsonl"), []byte(strings.Join([]string{
		benchRec{"timeqa", "test", "tq-1", q1, `{"answers":["Arsenal"]}`}.json(),
		benchRec{"timeqa", "dev", "tq-2", q2, `{"answers":["Chancellor"]}`}.json(),
	}, "\n")+"\n"), 0o644))
	text := filepath.Join(dir, "text.jsonl")
	require.NoError(t, os.WriteFile(text, []byte(`{"id": "a", "text": "Quiz. `+q1+`"}`+"\n"+`{"id": "b", "text": "`+q2+`"}`+"\n"), 0o644))
	body := filepath.Join(dir, "body.jsonl")
	require.NoError(t, os.WriteFile(body, []byte(`{"key": "k1", "body": "`+q1+`"}`+"\n"), 0o644))
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	ctx := context.Background()
	opt := DefaultContaminationOptions()

	rep, err := CheckContaminationFiles(ctx, []string{benchDir}, []string{text}, Overrides{}, opt)
	require.NoError(t, err)
	assert.False(t, rep.Passed)
	assert.Equal(t, 1, rep.Contaminated, "the dev record is not checked")
	assert.Equal(t, 2, rep.TrainingRows)
	f := findings(rep)["tq-1"]
	assert.Equal(t, "a", f.TrainID)
	assert.Equal(t, KindExact, f.Kind)

	textCol, idCol := "body", "key"
	rep, err = CheckContaminationFiles(ctx, []string{benchDir}, []string{body}, Overrides{Text: &textCol, ID: &idCol}, opt)
	require.NoError(t, err)
	assert.Equal(t, "k1", findings(rep)["tq-1"].TrainID)

	_, err = CheckContaminationFiles(ctx, []string{benchDir}, []string{body}, Overrides{}, opt)
	var ce *ColumnsError
	assert.ErrorAs(t, err, &ce, "no text column and no preset")

	_, err = CheckContaminationFiles(ctx, []string{filepath.Join(dir, "nope")}, []string{text}, Overrides{}, opt)
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, SideBenchmark, ae.Side)

	_, err = CheckContaminationFiles(ctx, []string{benchDir}, []string{filepath.Join(dir, "nope")}, Overrides{}, opt)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, Train, ae.Side)

	_, err = CheckContaminationFiles(ctx, []string{benchDir}, []string{empty}, Overrides{}, opt)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, Train, ae.Side)
	assert.ErrorIs(t, err, dataset.ErrNoRecords)

	bad := opt
	bad.NGram = 40
	_, err = CheckContaminationFiles(ctx, []string{benchDir}, []string{text}, Overrides{}, bad)
	var oe *OptionError
	assert.ErrorAs(t, err, &oe)

	// Cancelled: the scan stops and says why.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = CheckContaminationFiles(cctx, []string{benchDir}, []string{text}, Overrides{}, opt)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestContaminationReportLines: the text report's "and N more" line and the
// GitHub annotations' levels, lines and the summary annotation of a failed
// check that lists nothing.
func TestContaminationReportLines(t *testing.T) {
	recs := []benchRec{
		{"timeqa", "test", "tq-1", q1, `{"answers":["Arsenal"]}`},
		{"timeqa", "test", "tq-2", q2, `{"answers":["Chancellor"]}`},
	}
	texts := []string{q1, q2}
	annotate := func(rep *ContaminationReport) string {
		var b strings.Builder
		require.NoError(t, rep.WriteGitHubAnnotations(&b))
		return b.String()
	}
	text := func(rep *ContaminationReport) string {
		var b strings.Builder
		require.NoError(t, rep.WriteText(&b))
		return b.String()
	}
	opt := DefaultContaminationOptions()
	opt.MaxFindings = 1
	rep := scan(t, opt, recs, texts...)
	assert.Contains(t, text(rep), "            ... and 1 more (see --json, --max-findings)\n")
	out := annotate(rep)
	assert.Equal(t, 1, strings.Count(out, "::error file="), out)
	assert.Contains(t, out, ".jsonl,line=1,title=splits contamination%3A timeqa::")

	opt.MaxFindings = 2
	assert.NotContains(t, text(scan(t, opt, recs, texts...)), "more (see")

	opt.MaxFindings = 0
	rep = scan(t, opt, recs, texts...)
	assert.NotContains(t, text(rep), "more (see", "nothing listed, nothing to say more of")
	assert.Equal(t, "::error title=splits contamination::"+escapeData(rep.Summary)+"\n", annotate(rep))

	opt.MaxFindings, opt.MaxContaminated = -1, 2
	rep = scan(t, opt, recs, texts...)
	assert.True(t, rep.Passed)
	assert.Equal(t, 2, strings.Count(annotate(rep), "::warning file="), "tolerated findings warn")

	opt.MaxContaminated, opt.Scope = 1, ScopeTotal
	rep = scan(t, opt, recs, texts...)
	assert.False(t, rep.Passed)
	assert.Equal(t, 2, strings.Count(annotate(rep), "::error file="), "over the total, every benchmark's findings are errors")
	assert.Equal(t, StatusInfo, rep.Benchmarks[0].Status)
}
