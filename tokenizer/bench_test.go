package tokenizer

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	benchTokenizer = flag.String("tokenizer", filepath.Join("testdata", "qwen2.json"), "BenchmarkCount: the tokenizer.json")
	benchTexts     = flag.String("texts", "", "BenchmarkCount: a text file, counted in pieces of -piece characters (default: testdata/texts.jsonl's texts)")
	benchPiece     = flag.Int("piece", 8000, "BenchmarkCount: characters a piece of -texts")
)

// benchPieces are the texts BenchmarkCount counts.
func benchPieces(b *testing.B) []string {
	if *benchTexts == "" {
		var out []string
		for _, g := range readGolden(b) {
			out = append(out, g.Text)
		}
		return out
	}
	raw, err := os.ReadFile(*benchTexts)
	require.NoError(b, err)
	rs := []rune(strings.ToValidUTF8(string(raw), "\uFFFD"))
	var out []string
	for len(rs) > 0 {
		n := min(len(rs), *benchPiece)
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	return out
}

// BenchmarkCount counts every piece once an op, with a fresh tokenizer
// (an empty cache) for the first op only; SetBytes makes MB/s the
// throughput on the text. bench/tokenizer/run.sh sets -tokenizer and
// -texts and times Hugging Face's tokenizers on the same pieces.
func BenchmarkCount(b *testing.B) {
	tok, err := Load(*benchTokenizer)
	require.NoError(b, err)
	pieces := benchPieces(b)
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	tokens := 0
	for b.Loop() {
		tokens = 0
		for _, p := range pieces {
			n, err := tok.Count(p)
			if err != nil {
				b.Fatal(err)
			}
			tokens += n
		}
	}
	b.ReportMetric(float64(tokens), "tokens")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tokens), "ns/token")
}
