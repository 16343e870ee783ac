package dataset

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadJSONL reads the golden JSONL rows, repeated to 4 MB, against
// their schema: the JSONL reader's scanner and builders.
func BenchmarkReadJSONL(b *testing.B) {
	one, err := os.ReadFile(filepath.Join("testdata", "golden.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat(one, (4<<20)/len(one)+1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := JSONL.NewReader(bytes.NewReader(data), ReadOptions{Schema: testSchema})
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
		r.Close()
	}
}
