package puzzles

import "testing"

// BenchmarkGenerate measures one puzzle on one goroutine with the
// default options (years 1900-2030, 1 to 6 solutions cycled by index,
// every kind): generation, solving and rendering, not the output file. It
// reports puzzles per second; the Time Puzzles paper reports about 2 s a puzzle.
func BenchmarkGenerate(b *testing.B) {
	opt := DefaultOptions()
	opt.Seed = 1
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
