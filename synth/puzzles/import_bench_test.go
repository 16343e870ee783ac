package puzzles

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"testing"
)

// readBenchInput reads the published-format input of
// BenchmarkImportPublished (TestPublishedBenchInput makes it).
func readBenchInput(tb testing.TB) []byte {
	tb.Helper()
	f, err := os.Open("testdata/published_bench.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkImportPublished imports a published-format file of 700 records
// (testdata/published_bench.json.gz: every constraint type, lunar ones
// included, most over 1800–2050, with the answers the published
// generator's readings give), as synth puzzles import-published does,
// without the output file: a fresh solver per run, every record converted,
// solved and judged.
func BenchmarkImportPublished(b *testing.B) {
	data := readBenchInput(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		_, err := ImportPublished(context.Background(), bytes.NewReader(data), "published_bench.json", ImportOptions{}, func(*Imported) error {
			n++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if n != 700 {
			b.Fatalf("%d records imported, want 700", n)
		}
	}
}
