package prefpairs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/prefpairs"
)

// v1Dir is the public TicToc release beside the repository.
var v1Dir = filepath.Join("..", "..", "shared", "data", "tictoc-v1")

// rekeyedCorpus re-keys the v1 trajectories into n label-only samples with
// in-record direct answers, as JSONL per v1 file, the layout of the
// benchmark corpus (bench/pairs/make_corpus.py).
func rekeyedCorpus(tb testing.TB, n int) map[string][]byte {
	files, _ := filepath.Glob(filepath.Join(v1Dir, "*.json"))
	if len(files) == 0 {
		tb.Skip("TicToc v1 data not found at " + v1Dir)
	}
	var recs [][]map[string]any
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(tb, err)
		var rs []map[string]any
		require.NoError(tb, json.Unmarshal(b, &rs))
		recs = append(recs, rs)
		total += len(rs)
	}
	out := map[string][]byte{}
	for i, f := range files {
		want := n * len(recs[i]) / total
		var buf bytes.Buffer
		for j := 0; j < want; j++ {
			r := recs[i][j%len(recs[i])]
			c := map[string]any{}
			for k, v := range r {
				c[k] = v
			}
			id := conversation.ScenarioAlias(r["id"].(string))
			c["id"] = fmt.Sprintf("%s_%d", id, j)
			c["direct_answer"] = fmt.Sprintf("Going by what we found earlier, here is the answer (%d).", j)
			b, _ := json.Marshal(c)
			buf.Write(b)
			buf.WriteByte('\n')
		}
		out[filepath.Base(f)+"l"] = buf.Bytes()
	}
	return out
}

// BenchmarkBuildParquet measures pair building plus zstd Parquet writing, the
// path of "timeaware pairs build", on re-keyed v1 samples.
func BenchmarkBuildParquet(b *testing.B) {
	corpus := rekeyedCorpus(b, 20000)
	var size int64
	for _, c := range corpus {
		size += int64(len(c))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var inputs []prefpairs.Input
		for name, data := range corpus {
			inputs = append(inputs, prefpairs.InputFromName(name, bytes.NewReader(data)))
		}
		w, err := dataset.Parquet.NewWriter(io.Discard, prefpairs.Schema, dataset.Options{})
		require.NoError(b, err)
		rb := prefpairs.NewRecordBuilder(nil)
		flush := func() error {
			rec := rb.NewRecord()
			defer rec.Release()
			return w.Write(rec)
		}
		sum, err := prefpairs.Build(context.Background(), inputs, prefpairs.DefaultOptions(), func(p *prefpairs.Pair) error {
			rb.Append(p)
			if rb.Len() >= 8192 {
				return flush()
			}
			return nil
		})
		require.NoError(b, err)
		require.NoError(b, flush())
		require.NoError(b, w.Close())
		rb.Release()
		b.ReportMetric(float64(sum.Pairs), "pairs/op")
	}
}
