package conversation

import (
	stdjson "encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
)

func v1Records(b *testing.B) ([]RawRecord, int64) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "data", "tictoc-v1", "*.json"))
	if len(files) == 0 {
		b.Skip("TicToc v1 data not found")
	}
	var recs []RawRecord
	var size int64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		r := NewReader(fh, f)
		for {
			raw, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, raw)
			size += int64(len(raw.Data))
		}
		fh.Close()
	}
	return recs, size
}

// BenchmarkDecodeRecord compares the record decoders on the v1 release:
// fast is the one ParseTrajectory uses; goccy and encoding_json are the
// general decoders it falls back to and the standard library's, the
// baselines for the ratio.
func BenchmarkDecodeRecord(b *testing.B) {
	recs, size := v1Records(b)
	decoders := []struct {
		name   string
		decode func([]byte, *wireRecord) error
	}{
		{"fast", decodeRecord},
		{"goccy", func(d []byte, w *wireRecord) error { return json.Unmarshal(d, w) }},
		{"encoding_json", func(d []byte, w *wireRecord) error { return stdjson.Unmarshal(d, w) }},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, r := range recs {
					var w wireRecord
					if err := d.decode(r.Data, &w); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkParseTrajectory measures decoding plus validation per record.
func BenchmarkParseTrajectory(b *testing.B) {
	recs, size := v1Records(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, r := range recs {
			if _, err := ParseTrajectory(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
