package eval

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/rewards"
)

// BenchmarkRun measures the runner itself: Time Puzzles rows against a
// model that answers at once over loopback, so that everything timed is
// ours (request encoding, HTTP, decoding, scoring, bookkeeping) plus the
// in-process test server. It reports rows/s and CPU microseconds per row
// (user + system of the whole process, the server included).
func BenchmarkRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Counting the days.\nMY ANSWER: 2024-03-01, 2024-03-08"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	const n = 2000
	rows := make([]Row, n)
	for i := range rows {
		text := fmt.Sprintf("Puzzle %d. The date is a Friday in March 2024, in the first half of the month. Give every date that fits. End with MY ANSWER: followed by the dates.", i)
		rows[i] = Row{
			File: "bench.jsonl", Line: i + 1, ID: fmt.Sprint(i), DataSource: "timepuzzles",
			Prompt:      []conversation.Message{{Role: "user", Content: &text}},
			GroundTruth: []byte(`"2024-03-01, 2024-03-08"`),
		}
	}
	c, err := chat.New(chat.Options{URL: srv.URL, Model: "bench", Concurrency: 16})
	if err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), cpu()
	for range b.N {
		res, err := Run(context.Background(), rows, Options{Client: c, Rewards: rewards.DefaultConfig(), Workers: 16})
		if err != nil || res[n-1] == nil || res[n-1].Score != 1 {
			b.Fatalf("run: %v", err)
		}
	}
	wall, used := time.Since(start), cpu()-cpu0
	rowsDone := float64(n * b.N)
	b.ReportMetric(rowsDone/wall.Seconds(), "rows/s")
	b.ReportMetric(float64(used.Microseconds())/rowsDone, "cpu-µs/row")
	b.ReportMetric(0, "ns/op")
}
