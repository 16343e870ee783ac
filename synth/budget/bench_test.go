package budget

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/timeaware/timeaware/internal/dataset"
)

// BenchmarkBuild measures the whole path of "synth budget" short of
// the file system: parse tasks, draw budgets, build Arrow batches and write
// zstd Parquet. It reports rows per second.
func BenchmarkBuild(b *testing.B) {
	const n = 20000
	input := []byte(strings.Join(taskLines(n), "\n"))
	opt := DefaultOptions(FamilyGeneral)
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w, err := dataset.Parquet.NewWriter(io.Discard, Schema, dataset.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rb := NewRecordBuilder(nil)
		_, err = Build(context.Background(), bytes.NewReader(input), "bench.jsonl", opt, func(r *Row) error {
			rb.Append(r)
			if rb.Len() == 8192 {
				rec := rb.NewRecord()
				defer rec.Release()
				return w.Write(rec)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		rec := rb.NewRecord()
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		rb.Release()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRows measures the budget draws alone, per task.
func BenchmarkRows(b *testing.B) {
	bg, err := NewGenerator(DefaultOptions(FamilyGeneral))
	if err != nil {
		b.Fatal(err)
	}
	task := &Task{ID: "task-123456", Question: "What is 2 + 2?"}
	var rows []Row
	b.ReportAllocs()
	for range b.N {
		if rows, err = bg.Rows(task, rows[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
