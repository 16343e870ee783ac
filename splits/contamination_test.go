package splits

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchRec is a fixture benchmark row in the imported benchmarks' shape.
type benchRec struct {
	bench, split, id, question, gt string
}

func (b benchRec) json() string {
	row := map[string]any{
		"data_source":  b.bench,
		"prompt":       []map[string]string{{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": b.question}},
		"reward_model": map[string]any{"style": "rule", "ground_truth": b.gt},
		"extra_info": map[string]any{"benchmark": b.bench, "split": b.split, "subset": "", "id": b.id, "category": "",
			"licence": "cc-by-4.0", "training_allowed": false, "index": 0},
	}
	out, _ := json.Marshal(row)
	return string(out)
}

func writeBenchFile(t *testing.T, recs ...benchRec) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(r.json())
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "bench.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// sliceSource yields training rows with these texts.
func sliceSource(texts ...string) RowSource {
	return func() (RowIterator, error) { return &sliceRows{texts: texts}, nil }
}

type sliceRows struct {
	texts []string
	i     int
}

func (s *sliceRows) Next() (Row, error) {
	if s.i == len(s.texts) {
		return Row{}, io.EOF
	}
	s.i++
	return Row{File: "train.jsonl", Index: s.i, ID: fmt.Sprintf("t%d", s.i), Side: Train, Text: s.texts[s.i-1]}, nil
}

func (s *sliceRows) Close() error { return nil }

func scan(t *testing.T, opt ContaminationOptions, recs []benchRec, texts ...string) *ContaminationReport {
	t.Helper()
	ix, err := NewContaminationIndex(context.Background(), []string{writeBenchFile(t, recs...)}, opt)
	require.NoError(t, err)
	rep, err := ix.Scan(context.Background(), sliceSource(texts...))
	require.NoError(t, err)
	return rep
}

func findings(rep *ContaminationReport) map[string]ContaminationFinding {
	m := map[string]ContaminationFinding{}
	for _, b := range rep.Benchmarks {
		for _, f := range b.Findings {
			m[f.ID] = f
		}
	}
	return m
}

const (
	q1 = "Which team did Thierry Henry play for from 1999 to 2007?" // 11 words
	q2 = "Which position did Angela Merkel hold between November 2005 and December 2021?"
)

func TestContaminationCases(t *testing.T) {
	recs := []benchRec{
		{"timeqa", "test", "tq-1", q1, `{"answers":["Arsenal"]}`},
		{"timeqa", "test", "tq-2", q2, `{"answers":["Chancellor of Germany"]}`},
		{"tram", "test", "tr-1", "When was it built?", `{"letter":"B","options":{"A":"in 1850","B":"in 1901"}}`},
		{"tempreason", "train", "tr-9", "Who was the chair of the board of the Bank of England in 1990?", `{"kind":"name","label":{"name":"Robin Leigh-Pemberton"}}`},
	}
	for _, tt := range []struct {
		name    string
		text    string
		want    map[string]string // id → kind
		overlap map[string]float64
		span    string
	}{
		{name: "exact inside longer text", text: "Trivia night. " + q1 + " Answer: Arsenal.",
			want: map[string]string{"tq-1": KindExact}, span: q1[:len(q1)-1]},
		{name: "light paraphrase: case, punctuation, white space", text: "WHICH team, did \"Thierry\"  Henry\n\nplay for -- from 1999 to 2007!!",
			want: map[string]string{"tq-1": KindExact}},
		{name: "partial span of most of the question", text: "the question asked which position did angela merkel hold between november 2005 and",
			want: map[string]string{"tq-2": KindNear}, overlap: map[string]float64{"tq-2": 3.0 / 6}},
		{name: "partial span under the share", text: "which position did angela merkel hold between november 2005 in other years",
			want: map[string]string{}},
		{name: "unrelated text", text: "The weather in Paris was mild in 2005 and the team played well.", want: map[string]string{}},
		{name: "a template with other slots shares no n-gram", text: "Which team did Zinedine Zidane play for from 1996 to 2001?", want: map[string]string{}},
		{name: "short question only as a whole run", text: "so, when was it built? nobody knows", want: map[string]string{"tr-1": KindExact}},
		{name: "short question apart is not found", text: "when was it that they built it", want: map[string]string{}},
		{name: "records of other splits are not indexed", text: "Who was the chair of the board of the Bank of England in 1990?", want: map[string]string{}},
		{name: "a short answer alone is not found", text: "Arsenal won in 1901.", want: map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := scan(t, DefaultContaminationOptions(), recs, tt.text)
			got := map[string]string{}
			for id, f := range findings(rep) {
				got[id] = f.Kind
				if o, ok := tt.overlap[id]; ok {
					assert.InDelta(t, o, f.Overlap, 1e-9)
				}
				if tt.span != "" {
					assert.Equal(t, tt.span, f.Span)
					assert.Equal(t, tt.span, string([]rune(tt.text)[f.Start:f.End]))
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(tt.want) == 0, rep.Passed)
		})
	}
}

func TestContaminationAnswersCount(t *testing.T) {
	// 9 words with n=8: 2 question n-grams and the short answer, 3 units.
	// The first 8 words alone are 1 of 3, under a share of 0.6; with the
	// answer anywhere in the row, 2 of 3.
	recs := []benchRec{{"timeqa", "test", "a", "Which club did the striker join in early 1999", `{"answers":["Arsenal F.C.", "Arsenal"]}`}}
	opt := DefaultContaminationOptions()
	opt.MinOverlap = 0.6
	head := "which club did the striker join in early days"
	assert.Empty(t, findings(scan(t, opt, recs, head)))
	f := findings(scan(t, opt, recs, head+", then Arsenal"))["a"]
	assert.Equal(t, KindNear, f.Kind)
	assert.InDelta(t, 2.0/3, f.Overlap, 1e-9)
	// The question whole is exact, whatever the share.
	assert.Equal(t, KindExact, findings(scan(t, opt, recs, "which club did the striker join in early 1999"))["a"].Kind)
	opt.NGram = 4
	f = findings(scan(t, opt, recs, "did the striker join in early 1999? Yes: Arsenal"))["a"]
	assert.Equal(t, KindNear, f.Kind)
	assert.InDelta(t, 5.0/7, f.Overlap, 1e-9) // 4 of 6 n-grams and the answer
}

func TestContaminationSplitsOption(t *testing.T) {
	recs := []benchRec{{"timeqa", "dev", "d", q1, `{"answers":["Arsenal"]}`}, {"timeqa", "", "none", q2, ""}}
	rep := scan(t, DefaultContaminationOptions(), recs, q1, q2)
	assert.Equal(t, []string{"none"}, keys(findings(rep)))
	assert.Equal(t, 1, rep.Benchmarks[0].Skipped)
	opt := DefaultContaminationOptions()
	opt.Splits = []string{"test", "dev"}
	assert.Len(t, findings(scan(t, opt, recs, q1, q2)), 2)
	opt.Splits = []string{"all"}
	assert.Len(t, findings(scan(t, opt, recs, q1, q2)), 2)
}

// keys are m's keys, sorted.
func keys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func TestContaminationTolerance(t *testing.T) {
	recs := []benchRec{
		{"a", "test", "a1", q1, ""}, {"a", "test", "a2", q2, ""},
		{"b", "test", "b1", "How many years passed between the fall of the Berlin Wall and the euro?", ""},
	}
	texts := []string{q1, q2, "How many years passed between the fall of the Berlin Wall and the euro?", q1}
	for _, tt := range []struct {
		max    int
		scope  string
		passed bool
	}{
		{0, ScopeBenchmark, false}, {1, ScopeBenchmark, false}, {2, ScopeBenchmark, true},
		{2, ScopeTotal, false}, {3, ScopeTotal, true},
	} {
		opt := DefaultContaminationOptions()
		opt.MaxContaminated, opt.Scope = tt.max, tt.scope
		rep := scan(t, opt, recs, texts...)
		assert.Equal(t, tt.passed, rep.Passed, "%d %s", tt.max, tt.scope)
		assert.Equal(t, 3, rep.Contaminated)
		assert.Equal(t, 4, rep.ContaminatedRows)
		a := rep.Benchmarks[0]
		assert.Equal(t, 2, a.Contaminated)
		assert.Equal(t, 3, a.TrainingRows)
		assert.Equal(t, 2, a.Findings[0].Rows) // q1 is in two rows
	}
	opt := DefaultContaminationOptions()
	opt.MaxFindings = 1
	rep := scan(t, opt, recs, texts...)
	assert.Len(t, rep.Benchmarks[0].Findings, 1)
	assert.Equal(t, 2, rep.Benchmarks[0].Contaminated) // counts stay complete
}

// TestContaminationPlanted plants each kind in random text and checks the
// rates docs/splits.md states: exact 100%, light paraphrase 100% with the
// default normalisation, partial spans of 80% of a question's words
// (≥ half its n-grams at the default 8-grams for 15 words or more) 100%;
// and no finding on unrelated rows.
func TestContaminationPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 3000)
	for i := range vocab {
		b := make([]byte, 3+rng.IntN(6))
		for k := range b {
			b[k] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(b)
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	var recs []benchRec
	for i := range 300 {
		recs = append(recs, benchRec{"timeqa", "test", fmt.Sprintf("r%d", i), words(15+rng.IntN(20)) + "?", fmt.Sprintf(`{"answers":[%q]}`, words(1+rng.IntN(2)))})
	}
	var texts []string
	want := map[string]string{}
	for i, r := range recs[:240] {
		q := r.question
		kind := []string{"exact", "paraphrase", "partial"}[i%3]
		switch kind {
		case "paraphrase":
			w := strings.Fields(q)
			for k := range w {
				switch rng.IntN(3) {
				case 0:
					w[k] = strings.ToUpper(w[k])
				case 1:
					w[k] = "(" + w[k] + "),"
				}
			}
			q = strings.Join(w, " \t ")
		case "partial":
			w := strings.Fields(q)
			q = strings.Join(w[:len(w)*4/5], " ")
		}
		texts = append(texts, words(rng.IntN(50))+" "+q+" "+words(rng.IntN(50)))
		want[r.id] = map[string]string{"exact": KindExact, "paraphrase": KindExact, "partial": KindNear}[kind]
	}
	for range 2000 {
		texts = append(texts, words(150))
	}
	rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	opt := DefaultContaminationOptions()
	opt.MaxFindings = -1
	got := map[string]string{}
	for id, f := range findings(scan(t, opt, recs, texts...)) {
		got[id] = f.Kind
	}
	assert.Equal(t, want, got)
}

func TestContaminationCommonNGramsDropped(t *testing.T) {
	var recs []benchRec
	for i := range CommonNGramRecords + 1 {
		recs = append(recs, benchRec{"tram", "test", fmt.Sprintf("r%d", i),
			fmt.Sprintf("Answer the question by choosing one of the options below. Option %d or %d?", i, i+1000), ""})
	}
	rep := scan(t, DefaultContaminationOptions(), recs, "Answer the question by choosing one of the options below.")
	assert.True(t, rep.Passed)
	assert.Positive(t, rep.CommonDropped)
	rep = scan(t, DefaultContaminationOptions(), recs, "Answer the question by choosing one of the options below. Option 7 or 1007?")
	assert.Equal(t, []string{"r7"}, keys(findings(rep)))
}

func TestContaminationErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	noText := filepath.Join(dir, "notext.jsonl")
	require.NoError(t, os.WriteFile(noText, []byte(`{"question":"q","answer":"a"}`+"\n"), 0o644))
	badLetter := writeBenchFile(t, benchRec{"tram", "test", "x7", "Which?", `{"letter":"C","options":{"A":"a","B":"b"}}`})
	otherSplit := writeBenchFile(t, benchRec{"tram", "dev", "x7", "Which?", ""})
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		files []string
		opt   func(*ContaminationOptions)
		want  string
	}{
		{"missing file", []string{filepath.Join(dir, "missing.jsonl")}, nil, "missing.jsonl"},
		{"no rows", []string{empty}, nil, "empty.jsonl: no records: the benchmark file has no rows"},
		{"no text column", []string{noText}, nil, "notext.jsonl: no text column prompt:user (its columns are answer, question); name it with --benchmark-text"},
		{"letter not an option", []string{badLetter}, nil, `bench.jsonl: record 1 (id x7): reward_model.ground_truth: letter "C" is not one of the options (A, B)`},
		{"ngram", []string{otherSplit}, func(o *ContaminationOptions) { o.NGram = 40 }, "ngram: want 1 to 32 words, not 40"},
		{"min overlap", []string{otherSplit}, func(o *ContaminationOptions) { o.MinOverlap = 1.5 }, "min_overlap: want a share in (0, 1]"},
		{"scope", []string{otherSplit}, func(o *ContaminationOptions) { o.Scope = "file" }, `scope: want benchmark or total, not "file"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultContaminationOptions()
			if tt.opt != nil {
				tt.opt(&opt)
			}
			_, err := NewContaminationIndex(ctx, tt.files, opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	ix, err := NewContaminationIndex(ctx, []string{otherSplit}, DefaultContaminationOptions())
	require.NoError(t, err)
	_, err = ix.Scan(ctx, sliceSource("Which?"))
	assert.ErrorContains(t, err, "no benchmark record to check")
}

func TestGroundTruthAnswers(t *testing.T) {
	for _, tt := range []struct {
		gt   string
		want []string
	}{
		{`{"answers":["Arsenal","Arsenal F.C."]}`, []string{"Arsenal", "Arsenal F.C."}},
		{`{"letter":"B","options":{"A":"10 minutes","B":"3 days"}}`, []string{"3 days"}},
		{`{"letter":"B"}`, []string{"B"}},
		{`{"kind":"date","label":{"year":1998,"month":"May"}}`, []string{"May", "1998"}},
		{`"plain"`, []string{"plain"}},
		{`1998`, []string{"1998"}},
		{`[not json`, []string{"[not json"}},
		{`  `, nil},
	} {
		got, err := groundTruthAnswers(tt.gt)
		require.NoError(t, err, tt.gt)
		assert.Equal(t, tt.want, got, tt.gt)
	}
}

// TestContaminationGoldenJSON pins the JSON report of a fixed case
// (UPDATE=1 rewrites testdata/contamination.golden.json).
var update = flag.Bool("update", false, "rewrite testdata/contamination.golden.json with the report the check writes now")

func TestContaminationGoldenJSON(t *testing.T) {
	recs := []benchRec{
		{"timeqa", "test", "tq-1", q1, `{"answers":["Arsenal"]}`},
		{"timeqa", "test", "tq-2", q2, `{"answers":["Chancellor of Germany"]}`},
		{"tram", "test", "tr-1", "When was it built?", `{"letter":"B","options":{"A":"in 1850","B":"in 1901"}}`},
		{"tram", "dev", "tr-2", "How long is a day on Mars?", `{"answers":["24.6 hours"]}`},
	}
	path := writeBenchFile(t, recs...)
	opt := DefaultContaminationOptions()
	opt.Workers = 2
	ix, err := NewContaminationIndex(context.Background(), []string{path}, opt)
	require.NoError(t, err)
	rep, err := ix.Scan(context.Background(), sliceSource(
		"Trivia night. "+q1+" Answer: Arsenal.",
		"the question asked which position did angela merkel hold between november 2005 and",
		"Unrelated text about the weather.",
		"so, When was it built? nobody knows",
	))
	require.NoError(t, err)
	rep.BenchmarkFiles = []string{"bench.jsonl"}
	for i := range rep.Benchmarks {
		for k := range rep.Benchmarks[i].Findings {
			rep.Benchmarks[i].Findings[k].BenchmarkFile = "bench.jsonl"
		}
	}
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJSON(&buf))
	golden := filepath.Join("testdata", "contamination.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())

	var text, gh bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "splits contamination: FAILED — 3 of 3 benchmark records found in 3 of 4 training rows")
	assert.Contains(t, text.String(), `timeqa tq-1: exact duplicate in train.jsonl row 1 (id t1), characters 14-69: "Which team did Thierry Henry play for from 1999 to 2007"`)
	require.NoError(t, rep.WriteGitHubAnnotations(&gh))
	assert.Contains(t, gh.String(), "::error file=train.jsonl,line=1,title=splits contamination%3A timeqa::timeqa tq-1: exact duplicate")
}

// TestContaminationIndexesTheItem: a record whose prompt wraps its question
// in a reading passage and instructions is indexed by extra_info.question
// when the file has it, so a training row holding the question alone is
// an exact duplicate; naming the prompt's columns (Item "") reads the
// whole prompt, in which the question is a small share.
func TestContaminationIndexesTheItem(t *testing.T) {
	question := "Which club did the striker join after leaving the academy in the spring of 1998?"
	passage := strings.Repeat("The town's river was dredged and widened for barges over several decades of the century. ", 12)
	prompt := "Read the passage.\n\n" + passage + "\n\nQuestion: " + question + "\n\nPut your final answer on the last line."
	row := fmt.Sprintf(`{"data_source": "timeqa", "prompt": [{"role": "user", "content": %q}], "reward_model": {"style": "rule", "ground_truth": "{\"answers\": [\"Lyon\"]}"}, "extra_info": {"benchmark": "timeqa", "split": "test", "id": "q-1", "question": %q}}`, prompt, question)
	path := filepath.Join(t.TempDir(), "bench.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(row+"\n"), 0o644))
	for _, tc := range []struct {
		name  string
		item  string
		found int
	}{
		{"by the item", "extra_info.question", 1},
		{"by the prompt", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := DefaultContaminationOptions()
			opt.Columns.Item = tc.item
			ix, err := NewContaminationIndex(context.Background(), []string{path}, opt)
			require.NoError(t, err)
			rep, err := ix.Scan(context.Background(), sliceSource("Quiz: "+question))
			require.NoError(t, err)
			assert.Equal(t, tc.found, rep.Contaminated)
			if tc.found > 0 {
				require.Len(t, rep.Benchmarks, 1)
				require.Len(t, rep.Benchmarks[0].Findings, 1)
				assert.Equal(t, "exact", rep.Benchmarks[0].Findings[0].Kind)
			}
		})
	}
}
