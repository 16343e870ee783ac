package puzzles

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestImportCauseCostsNoAllocationPerDay: finding why a published answer
// is wrong tries the published generator's readings on every day of the
// range, and reads each constraint's JSON once, not once a day: a wrong
// record over 1800–2050 (91,676 days) costs a few thousand allocations,
// not millions.
func TestImportCauseCostsNoAllocationPerDay(t *testing.T) {
	rec := []byte(`[{"identifier": "off", "constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "month", "value": 1}, {"type": "first_day_of_month", "value": true}, {"type": "lunar_month", "value": 11}], "solutions": ["2000-01-02"], "year_range": [1800, 2050]}]`)
	solver := NewSolver()
	var verdict, cause string
	allocs := testing.AllocsPerRun(3, func() {
		_, err := ImportPublished(context.Background(), bytes.NewReader(rec), "p.json", ImportOptions{Solver: solver}, func(im *Imported) error {
			verdict, cause = im.Verdict, im.Cause
			return nil
		})
		require.NoError(t, err)
	})
	assert.Equal(t, VerdictWrong, verdict)
	assert.Equal(t, CauseUnexplained, cause)
	assert.Less(t, allocs, 20000.0, "allocations to import one wrong record")
}
