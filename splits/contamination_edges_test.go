package splits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContaminationEmptyParts: a record with no question is indexed by its
// answers; one with neither is counted empty, not indexed.
func TestContaminationEmptyParts(t *testing.T) {
	longAnswer := "the treaty was signed in the old town hall of Utrecht in the spring"
	recs := []benchRec{
		{"tram", "test", "short-answer", "", `{"answers":["1713"]}`},
		{"tram", "test", "long-answer", "", `{"answers":["` + longAnswer + `"]}`},
		{"tram", "test", "nothing", "", ""},
		{"tram", "test", "no-words", "", `{"answers":["?!"]}`},
		{"tram", "test", "punctuation-answer", q3, `{"answers":["—"]}`},
	}
	rep := scan(t, DefaultContaminationOptions(), recs, "Some say "+longAnswer+", in 1713.", q3)
	require.Len(t, rep.Benchmarks, 1)
	b := rep.Benchmarks[0]
	assert.Equal(t, 3, b.Records, "the records with a question or an answer of words are indexed")
	assert.Equal(t, 2, b.Empty, "the records with no words at all")
	fs := findings(rep)
	assert.Equal(t, []string{"long-answer", "punctuation-answer"}, keys(fs), "an answer of fewer than n words alone finds nothing")
	assert.Equal(t, KindExact, fs["punctuation-answer"].Kind)
	assert.InDelta(t, 1.0, fs["punctuation-answer"].Overlap, 1e-9, "an answer without words is no part of the share")
	f := fs["long-answer"]
	assert.Equal(t, KindNear, f.Kind, "no question to find whole")
	assert.InDelta(t, 1.0, f.Overlap, 1e-9)
	assert.Equal(t, longAnswer, f.Span)
}

// TestContaminationCommonNGramEdge: an n-gram in CommonNGramRecords
// records is kept, in one more it is left out, and the records' shares
// leave it out too: a copy of a whole record is still an exact duplicate
// with all its n-grams.
func TestContaminationCommonNGramEdge(t *testing.T) {
	recsOf := func(n int) []benchRec {
		var recs []benchRec
		for i := range n {
			recs = append(recs, benchRec{"tram", "test", fmt.Sprintf("r%d", i),
				fmt.Sprintf("Read the passage and pick the one option that fits best. Option %d or %d?", i, i+1000), ""})
		}
		return recs
	}
	copied := "Read the passage and pick the one option that fits best. Option 7 or 1007?"
	rep := scan(t, DefaultContaminationOptions(), recsOf(CommonNGramRecords), copied)
	assert.Zero(t, rep.CommonDropped, "an n-gram in exactly CommonNGramRecords records is kept")

	rep = scan(t, DefaultContaminationOptions(), recsOf(CommonNGramRecords+1), copied)
	assert.Equal(t, 5, rep.CommonDropped, "the five 8-grams of the shared instruction's 12 words")
	fs := findings(rep)
	require.Equal(t, []string{"r7"}, keys(fs))
	assert.Equal(t, KindExact, fs["r7"].Kind)
	assert.InDelta(t, 1.0, fs["r7"].Overlap, 1e-9, "the left-out n-grams are not in the record's share")
}

// TestContaminationIndexSize: the table has the least power of two of
// slots that is at least twice the keys (and 16), the filter the least
// power of two of bits that is at least 16 per key (and 64).
func TestContaminationIndexSize(t *testing.T) {
	for _, tt := range []struct{ keys, slots, filterWords int }{
		{3, 16, 1},
		{4, 16, 1},
		{8, 16, 2},
		{9, 32, 4},
		{16, 32, 4},
		{17, 64, 8},
	} {
		words := make([]string, tt.keys+DefaultNGram-1)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", i)
		}
		path := writeBenchFile(t, benchRec{"tram", "test", "r", strings.Join(words, " "), ""})
		ix, err := NewContaminationIndex(context.Background(), []string{path}, DefaultContaminationOptions())
		require.NoError(t, err)
		require.Equal(t, tt.keys, ix.Keys())
		assert.Len(t, ix.keys, tt.slots, "slots for %d keys", tt.keys)
		assert.Len(t, ix.filter, tt.filterWords, "filter words for %d keys", tt.keys)
	}
}

// TestContaminationBenchmarkNames: without a benchmark column a file's
// records are named for the file, up to its first dot after the first
// character; without an id column a record is named by its row.
func TestContaminationBenchmarkNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rows ...string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644))
		return path
	}
	row := func(q, extra string) string {
		return `{"prompt":[{"role":"user","content":"` + q + `"}]` + extra + `}`
	}
	named := write("mybench.test.jsonl", row(q1, ""))
	hidden := write(".hidden.jsonl", row(q2, ""))
	short := write("x.jsonl", row(q3, ""))
	source := write("bench.jsonl", row("unrelated words that appear nowhere else at all here", `,"data_source":"tram"`),
		row(q1+" again", `,"data_source":"tram","extra_info":{"split":"test"}`))
	ix, err := NewContaminationIndex(context.Background(), []string{named, hidden, short, source}, DefaultContaminationOptions())
	require.NoError(t, err)
	rep, err := ix.Scan(context.Background(), sliceSource(q1+" again", q2, q3))
	require.NoError(t, err)
	got := map[string][]string{}
	for _, b := range rep.Benchmarks {
		for _, f := range b.Findings {
			got[b.Name] = append(got[b.Name], f.ID)
		}
	}
	assert.Equal(t, map[string][]string{"mybench": {"row 1"}, ".hidden": {"row 1"}, "x": {"row 1"}, "tram": {"row 2"}}, got)
}

const q3 = "In which year did the Berlin Wall fall after almost three decades?"

func TestGroundTruthAnswersList(t *testing.T) {
	got, err := groundTruthAnswers(`["1998", 1999, {"b": "two", "a": "one"}]`)
	require.NoError(t, err)
	assert.Equal(t, []string{"1998", "1999", "one", "two"}, got)
}

func TestCutSpan(t *testing.T) {
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abcdefghij", 0, "abcdefghij"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghij", 9, "abcdef…ij"},
		{"abcdefghij", 6, "abcd…j"},
		{"  a \n b\t\tc  ", 0, "a b c"},
		{"äöüßéèêëï", 5, "äöü…ï"},
	} {
		got := cutSpan(tt.s, tt.limit)
		assert.Equal(t, tt.want, got, "cutSpan(%q, %d)", tt.s, tt.limit)
		if tt.limit > 0 {
			assert.LessOrEqual(t, len([]rune(got)), tt.limit)
		}
	}
}

func TestFindingMessage(t *testing.T) {
	f := &ContaminationFinding{Benchmark: "timeqa", ID: "tq-1", Kind: KindNear, Overlap: 0.625, File: "train.jsonl", Row: 4,
		TrainID: "t4", Rows: 3, Start: 10, End: 42, Span: "who led"}
	assert.Equal(t, `timeqa tq-1: near duplicate (62% of its n-grams) in train.jsonl row 4 (id t4) and 2 more rows, characters 10-42: "who led"`,
		findingMessage(f))
	f.Kind, f.TrainID, f.Rows = KindExact, "", 1
	assert.Equal(t, `timeqa tq-1: exact duplicate in train.jsonl row 4, characters 10-42: "who led"`, findingMessage(f))
}

func TestContaminationSummary(t *testing.T) {
	recs := []benchRec{{"timeqa", "test", "tq-1", q1, ""}, {"tram", "test", "tr-1", q2, ""}}
	rep := scan(t, DefaultContaminationOptions(), recs, "nothing of either", "still nothing")
	assert.True(t, rep.Passed)
	assert.Equal(t, "0 of 2 benchmark records found in 0 of 2 training rows (0 tolerated per benchmark)", rep.Summary)
	rep = scan(t, DefaultContaminationOptions(), recs, q1, q2)
	assert.Equal(t, "2 of 2 benchmark records found in 2 of 2 training rows (0 tolerated per benchmark); 2 benchmarks over", rep.Summary)
}

func TestAnnotationPlace(t *testing.T) {
	for _, tt := range []struct {
		file string
		row  int
		want string
	}{
		{"", 3, ""},
		{"data/train.jsonl", 3, "file=data/train.jsonl,line=3,"},
		{"data/train.jsonl", 0, "file=data/train.jsonl,"},
		{"data/train.parquet", 3, "file=data/train.parquet,"},
		{"a,b:c.jsonl", 1, "file=a%2Cb%3Ac.jsonl,line=1,"},
	} {
		assert.Equal(t, tt.want, annotationPlace(tt.file, tt.row), "%s row %d", tt.file, tt.row)
	}
}

// TestByteClass checks the tokeniser's ASCII table against the unicode
// package's classes.
func TestByteClass(t *testing.T) {
	for c := range 256 {
		r := rune(c)
		var want uint8
		switch {
		case c >= 0x80:
			want = tkMulti
		case unicode.IsUpper(r):
			want = tkUpper
		case unicode.IsDigit(r):
			want = tkDigit
		case unicode.IsSpace(r) || unicode.IsControl(r) || r == ' ':
			want = tkSpace
		case unicode.IsLower(r):
			want = tkLetter
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			want = tkPunct
		default:
			t.Fatalf("byte %#x has no class in this test", c)
		}
		assert.Equal(t, want, tokClass[c], "byte %#x %q", c, r)
	}
}

// TestOrderedPipeline: every batch is merged once, in emission order, for
// any number of workers; a producer's error and a done context end it.
func TestOrderedPipeline(t *testing.T) {
	const batches = 200
	for _, workers := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			var merged []int
			done := make(chan error, 1)
			go func() {
				done <- orderedPipeline(context.Background(), workers, func() *int { return new(int) },
					func(w *int, b *int) { *w++; *b *= 2 },
					func(b *int) { merged = append(merged, *b) },
					func(emit func(*int) error) error {
						for i := range batches {
							if err := emit(&[]int{i}[0]); err != nil {
								return err
							}
						}
						return nil
					})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute): // a guard: the run takes milliseconds unless it deadlocks
				t.Fatal("the pipeline stalled: a batch waits for a token only a later merge gives back")
			}
			require.NoError(t, err)
			require.Len(t, merged, batches)
			for i, v := range merged {
				require.Equal(t, 2*i, v)
			}
		})
	}
	errStop := errors.New("stop")
	merges := 0
	err := orderedPipeline(context.Background(), 2, func() struct{} { return struct{}{} }, func(struct{}, int) {},
		func(int) { merges++ }, func(emit func(int) error) error {
			for i := range 5 {
				require.NoError(t, emit(i))
			}
			return errStop
		})
	assert.ErrorIs(t, err, errStop)
	assert.Equal(t, 5, merges, "what was emitted before the error is merged")

	ctx, cancel := context.WithCancel(context.Background())
	emitted := 0
	err = orderedPipeline(ctx, 2, func() struct{} { return struct{}{} }, func(struct{}, int) {}, func(int) {},
		func(emit func(int) error) error {
			for i := 0; ; i++ {
				if i == 3 {
					cancel()
				}
				if err := emit(i); err != nil {
					return err
				}
				emitted++
			}
		})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 3, emitted, "the first emit after the cancel fails")
}
