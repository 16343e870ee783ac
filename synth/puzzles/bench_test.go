package puzzles

import (
	"fmt"
	"testing"
)

// BenchmarkGenerate measures one puzzle on one goroutine with the
// default options (years 1900-2030, 1 to 6 solutions cycled by index,
// every kind): generation, solving and rendering, not the output file. It
// reports puzzles per second; the Time Puzzles paper reports about 2 s a puzzle.
func BenchmarkGenerate(b *testing.B) {
	opt := DefaultOptions()
	opt.Seed = 1
	benchGenerate(b, opt)
}

// benchGenerate generates b.N puzzles of opt on one goroutine and reports
// puzzles per second.
func benchGenerate(b *testing.B, opt Options) {
	g, err := NewGenerator(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := g.Generate(int64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puzzles/s")
}

// BenchmarkGenerateYears is BenchmarkGenerate over the published ranges:
// 1801-2050, within the lunar table, and 1800-2050, whose first 24 days
// the table does not place.
func BenchmarkGenerateYears(b *testing.B) {
	for _, r := range [][2]int{{1801, 2050}, {1800, 2050}} {
		b.Run(fmt.Sprintf("%d-%d", r[0], r[1]), func(b *testing.B) {
			opt := DefaultOptions()
			opt.Seed = 1
			opt.FromYear, opt.ToYear = r[0], r[1]
			benchGenerate(b, opt)
		})
	}
}
