package verifier

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// BenchmarkScoreBatch measures the handler's cost per 64-item batch of
// ~2 KB timely/general responses, without the network.
func BenchmarkScoreBatch(b *testing.B) {
	store, _ := timers.New(timers.Options{Secret: []byte("bench secret bench secret bench")})
	scorer, _ := rewards.NewScorer(rewards.DefaultConfig(), store)
	srv, err := New(Options{Scorer: scorer, Timers: store})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	reasoning := strings.Repeat("We compare the two cases and check the arithmetic once more. ", 32)
	var body bytes.Buffer
	body.WriteString(`{"items":[`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"data_source":"timely/general","solution_str":%q,"ground_truth":"%d/4","extra_info":{"elapsed_s":%d.5,"time_limit_s":30,"index":%d,"split":"train"}}`,
			reasoning+fmt.Sprintf(`<answer>\boxed{\frac{%d}{4}}</answer>`, i%7), i%5, i%40, i)
	}
	body.WriteString(`]}`)
	payload := body.Bytes()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/score/batch", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(64*b.N)/time.Since(start).Seconds(), "items/s")
}
