package benchmarks

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// words are the words of the generated records' texts.
var words = strings.Fields("the war started in BC and went on for years who owned house from to " +
	"position held by commander team play member senate state north dakota university oxford")

// sentence is n words drawn with rng.
func sentence(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(w, " ")
}

// timeqaLine is a TimeQA record, JSON line i, with a context of n words.
func timeqaLine(rng *rand.Rand, i, n int) string {
	return timeqaRecord(i, strconv.Quote(sentence(rng, n)))
}

// timeqaRecord is JSON line i with context, a JSON string.
func timeqaRecord(i int, context string) string {
	n := strconv.Itoa(i)
	return `{"idx": "/wiki/R` + n + `#P39#0", "question": "Who held it in ` + strconv.Itoa(1900+i%100) + `?", "context": ` +
		context + `, "targets": ["A` + n + `"]}` + "\n"
}

// jsonLinesText is n TimeQA records of some 40 words each (seed 1).
func jsonLinesText(n int) string {
	rng := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for i := range n {
		b.WriteString(timeqaLine(rng, i, 40))
	}
	return b.String()
}

// jsonArrayText is n Test of Time arithmetic records in one array (seed 2).
func jsonArrayText(n int) string {
	rng := rand.New(rand.NewPCG(2, 2))
	var recs []string
	for i := range n {
		recs = append(recs, fmt.Sprintf(`{"question": %q, "label": "{'answer': '%d BC'}", "question_type": "add_subtract"}`, sentence(rng, 40), i))
	}
	return "[\n " + strings.Join(recs, ",\n ") + "\n]\n"
}

// csvText is n TRAM short-answer rows (seed 3).
func csvText(n int) string {
	rng := rand.New(rand.NewPCG(3, 3))
	var b strings.Builder
	b.WriteString("Question,Answer,Category\r\n")
	for i := range n {
		fmt.Fprintf(&b, "\"%s, %d?\",%d,Hour\r\n", sentence(rng, 40), i, i)
	}
	return b.String()
}

// gzipped is text as a gzip stream.
func gzipped(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(text))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// importAll imports r and returns the records it emitted.
func importAll(b *Benchmark, path string, r io.Reader) ([]*Record, error) {
	var got []*Record
	_, err := b.Import(context.Background(), r, path, Options{}, func(rec *Record) error {
		got = append(got, rec)
		return nil
	})
	return got, err
}

// notConverted is the reports of the records not converted.
func notConverted(recs []*Record) []string {
	var out []string
	for _, r := range recs {
		if r.Row == nil {
			out = append(out, r.Report())
		}
	}
	return out
}

// TestGzipBroken: a gzip stream cut short or corrupt in its body is the
// file's error, naming it and gzip, whether it holds JSON lines or an
// array; a stream cut short emits the records before the cut, converted,
// and no record for the cut.
func TestGzipBroken(t *testing.T) {
	lines := gzipped(t, jsonLinesText(3000))
	array := gzipped(t, jsonArrayText(3000))
	corrupt := func(data []byte) []byte {
		out := bytes.Clone(data)
		copy(out[len(out)/2:], bytes.Repeat([]byte{0xff}, 64))
		return out
	}
	tests := []struct {
		name, path string
		b          *Benchmark
		data       []byte
		want       string
		cut        bool
	}{
		{"JSON lines cut short", "train.easy.json.gzip", &TimeQA, lines[:len(lines)/2], "train.easy.json.gzip: gzip: unexpected EOF", true},
		{"JSON array cut short", "tot_arithmetic.json", &TestOfTime, array[:len(array)/2], "tot_arithmetic.json: gzip: unexpected EOF", true},
		{"JSON lines cut before the checksum", "train.easy.json.gzip", &TimeQA, lines[:len(lines)-4], "train.easy.json.gzip: gzip: unexpected EOF", true},
		{"JSON array cut before the checksum", "tot_arithmetic.json", &TestOfTime, array[:len(array)-4], "tot_arithmetic.json: gzip: unexpected EOF", true},
		{"JSON lines corrupt", "train.easy.json.gzip", &TimeQA, corrupt(lines), "train.easy.json.gzip: gzip: ", false},
		{"JSON array corrupt", "tot_arithmetic.json", &TestOfTime, corrupt(array), "tot_arithmetic.json: gzip: ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := importAll(tt.b, tt.path, bytes.NewReader(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.cut {
				assert.NotEmpty(t, got, "the records before the cut are read as they come")
				assert.Empty(t, notConverted(got))
			}
		})
	}
}

// errDisk is the error of a file that cannot be read further.
var errDisk = errors.New("input/output error")

// TestReadErrors: a read error in the middle of a file is the file's
// error, naming it and the error, and no record: not for the record it
// cuts, not for a decoder that reports it as its own, not for a file whose
// start is not the format.
func TestReadErrors(t *testing.T) {
	lines, array, csv := jsonLinesText(2000), jsonArrayText(2000), csvText(2000)
	tests := []struct {
		name, path string
		b          *Benchmark
		data       []byte
		n          int
	}{
		{"JSON lines", "test.easy.json", &TimeQA, []byte(lines), len(lines)/2 + 7},
		{"JSON lines, at the start", "test.easy.json", &TimeQA, []byte(lines), 0},
		{"JSON lines in gzip", "train.easy.json.gzip", &TimeQA, gzipped(t, lines), len(gzipped(t, lines)) / 2},
		{"JSON array", "tot_arithmetic.json", &TestOfTime, []byte(array), len(array)/2 + 7},
		{"JSON array, in its first record", "tot_arithmetic.json", &TestOfTime, []byte(array), 20},
		{"CSV", "arithmetic_saq.csv", &TRAM, []byte(csv), len(csv)/2 + 7},
		{"CSV, in its header", "arithmetic_saq.csv", &TRAM, []byte(csv), 10},
		{"not JSON at the start", "test.easy.json", &TimeQA, []byte("Who owned it?\n" + lines), len(lines) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := io.MultiReader(bytes.NewReader(tt.data[:tt.n]), iotest.ErrReader(errDisk))
			got, err := importAll(tt.b, tt.path, r)
			require.ErrorIs(t, err, errDisk)
			assert.Equal(t, tt.path+": input/output error", err.Error())
			assert.Empty(t, notConverted(got))
		})
	}
}

// TestBOM: a byte order mark before JSON lines, a JSON array or a CSV
// header, gzipped or not, is skipped.
func TestBOM(t *testing.T) {
	const bom = "\ufeff"
	tests := []struct {
		name, path string
		b          *Benchmark
		data       []byte
	}{
		{"JSON lines", "test.easy.json", &TimeQA, []byte(bom + jsonLinesText(3))},
		{"JSON lines in gzip", "train.easy.json.gzip", &TimeQA, gzipped(t, bom+jsonLinesText(3))},
		{"JSON array", "tot_arithmetic.json", &TestOfTime, []byte(bom + jsonArrayText(3))},
		{"CSV", "arithmetic_saq.csv", &TRAM, []byte(bom + csvText(3))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := importAll(tt.b, tt.path, bytes.NewReader(tt.data))
			require.NoError(t, err)
			assert.Len(t, got, 3)
			assert.Empty(t, notConverted(got))
		})
	}
}

// TestLongLine: a JSON line of 5 MB, longer than any buffer, is one record.
func TestLongLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	long := timeqaLine(rng, 1, 5<<20/5)
	require.Greater(t, len(long), 5<<20)
	data := timeqaLine(rng, 0, 10) + long + timeqaLine(rng, 2, 10)
	got, err := importAll(&TimeQA, "test.easy.json", iotest.HalfReader(strings.NewReader(data)))
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Empty(t, notConverted(got))
	assert.Greater(t, len(got[1].Row.Prompt), 5<<20)
	assert.Equal(t, []string{"/wiki/R0#P39#0", "/wiki/R1#P39#0", "/wiki/R2#P39#0"}, []string{got[0].ID, got[1].ID, got[2].ID})
}

// TestArrayEnds: a JSON array is read as a whole file is, the white space
// at its end not part of it; the file is read to its end, what follows the
// array included, and a gzip stream's checksum is checked there.
func TestArrayEnds(t *testing.T) {
	rec := `{"question": "q", "label": "{'answer': 1}"}`
	sum := gzipped(t, "["+rec+"]\n")
	sum[len(sum)-8] ^= 0xff // the CRC-32
	tests := []struct {
		name string
		data []byte
		// want is the report of the last record, or the file's error.
		want, err string
	}{
		{"cut in a string, then a tab", []byte("[" + rec + `, {"label": "` + "\t\n"), "the file ends inside the record", ""},
		{"cut in a literal, then spaces", []byte("[" + rec + `, {"label": tru` + "  \n"), "the file ends inside the record", ""},
		{"not closed, then a form feed and a no-break space", []byte("[" + rec + "\f\u00a0\n"), "the file ends before the array is closed", ""},
		{"cut after a comma, then a form feed", []byte("[" + rec + ",\f"), "not JSON: the text ends too soon; the records after it are not read", ""},
		{"closed, then anything", []byte("[" + rec + "]\f garbage"), "", ""},
		{"a checksum that does not match", sum, "", "tot_arithmetic.json: gzip: gzip: invalid checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &countingReader{r: iotest.OneByteReader(bytes.NewReader(tt.data))}
			got, err := importAll(&TestOfTime, "tot_arithmetic.json", r)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(tt.data), r.n, "read to the end")
			assert.NotNil(t, got[0].Row)
			if tt.want == "" {
				assert.Len(t, got, 1)
				return
			}
			require.Len(t, got, 2)
			assert.Equal(t, "tot_arithmetic.json: record 2 (id tot_arithmetic-1): "+tt.want, got[1].Report())
		})
	}
}

// countingReader counts what is read of r.
type countingReader struct {
	r io.Reader
	n int
}

// Read reads r and counts the bytes.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// generated is a JSON-lines TimeQA file of at least size bytes, made one
// record at a time as it is read, with contexts drawn from a few: none of
// it is held but the record being read.
type generated struct {
	contexts   []string
	size, read int
	records    int
	line       string
}

// newGenerated is a generated file of size bytes whose records' contexts
// are 300 words, 64 of them drawn with seed 5.
func newGenerated(size int) *generated {
	rng := rand.New(rand.NewPCG(5, 5))
	g := &generated{size: size}
	for range 64 {
		g.contexts = append(g.contexts, strconv.Quote(sentence(rng, 300)))
	}
	return g
}

// Read reads the next bytes, making the next record when the last is read.
func (g *generated) Read(p []byte) (int, error) {
	if g.line == "" {
		if g.read >= g.size {
			return 0, io.EOF
		}
		g.line = timeqaRecord(g.records, g.contexts[g.records%len(g.contexts)])
		g.records++
	}
	n := copy(p, g.line)
	g.line = g.line[n:]
	g.read += n
	return n, nil
}

// TestImportMemory: an import's memory is bounded by a record, not by the
// file: 200 MB of JSON lines (64 MB under the race detector), made as they
// are read, import with the heap in use (sampled every 256 records) below
// a quarter of the file's size.
func TestImportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 200 MB")
	}
	size := 200 << 20
	if raceBuild {
		size = 64 << 20
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	peak, n := m.HeapInuse, 0
	g := newGenerated(size)
	sum, err := TimeQA.Import(context.Background(), g, "test.easy.json", Options{}, func(r *Record) error {
		if n++; n%256 == 0 {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, g.records, sum.Converted)
	assert.GreaterOrEqual(t, g.read, size)
	t.Logf("%d records, %d MB: the heap in use peaked at %.1f MB", g.records, g.read>>20, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(size/4))
}
