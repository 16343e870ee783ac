package verifier

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/rewards"
)

// decodeCorpus is a 64-item batch body as trainers send it: reasoning of
// about 2 KB with new lines and TeX backslashes (an escape every 40 bytes
// or so), an answer, and extra_info.
func decodeCorpus() []byte {
	var body bytes.Buffer
	body.WriteString(`{"items":[`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		var r strings.Builder
		for k := 0; r.Len() < 2000; k++ {
			fmt.Fprintf(&r, "Step %d: we compare $\\frac{%d}{4}$ with the bound and keep the smaller one.\n", k, k+i)
		}
		r.WriteString(fmt.Sprintf(`<answer>\boxed{\frac{%d}{4}}</answer>`, i%7))
		text, _ := json.Marshal(r.String())
		fmt.Fprintf(&body, `{"data_source":"timely/general","solution_str":%s,"ground_truth":"%d/4","extra_info":{"elapsed_s":%d.5,"time_limit_s":30,"index":%d,"split":"train"}}`,
			text, i%5, i%40, i)
	}
	body.WriteString(`]}`)
	return body.Bytes()
}

// BenchmarkDecodeBatch measures the batch decoders alone: fast is the one
// the service uses, general the reflective decoder it falls back to.
func BenchmarkDecodeBatch(b *testing.B) {
	body := decodeCorpus()
	lim := limits{maxItems: 8192, maxDepth: 64, maxString: 8 << 20}
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			items, ok, err := decodeBatchFast(body, lim)
			if !ok || err != nil || len(items) != 64 {
				b.Fatalf("ok %v, %v, %d items", ok, err, len(items))
			}
		}
	})
	// check is the walk that every route but the batch fast path takes
	// before its decoder: limits, duplicate members, trailing data.
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := checkJSON(body, lim, "items"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var req struct {
				Items []rewards.Item `json:"items"`
			}
			if err := json.Unmarshal(body, &req); err != nil || len(req.Items) != 64 {
				b.Fatal(err)
			}
		}
	})
}
