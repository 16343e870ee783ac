package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
)

// jsonlSource is a JSONL source of n records with ids <name>-0 ... <name>-(n-1).
func jsonlSource(name string, n int) conversation.Source {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "%s-%d"}`+"\n", name, i)
	}
	return conversation.Source{Name: name, Reader: strings.NewReader(b.String())}
}

// ids reads the id of every record of a batch, in order.
func ids(b conversation.Batch) []string {
	var out []string
	for _, r := range b.Records {
		s := string(r.Data)
		s = s[strings.Index(s, `"id": "`)+7:]
		out = append(out, s[:strings.IndexByte(s, '"')])
	}
	return out
}

// jitter makes workers finish out of order.
func jitter() { time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) }

func TestForEachBatchKeepsInputOrder(t *testing.T) {
	var want []string
	for i := range 23 {
		want = append(want, fmt.Sprintf("a-%d", i))
	}
	for i := range 41 {
		want = append(want, fmt.Sprintf("c-%d", i))
	}
	for _, workers := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			sources := []conversation.Source{jsonlSource("a", 23), jsonlSource("b", 0), jsonlSource("c", 41)}
			var got []string
			var sizes []int
			err := conversation.ForEachBatch(context.Background(), sources, conversation.BatchOptions{Workers: workers, Size: 5},
				func(_ context.Context, b conversation.Batch) ([]string, error) {
					jitter()
					return ids(b), nil
				},
				func(b conversation.Batch, got1 []string) error {
					// assert, not require: done runs on the test's goroutine,
					// and stopping it would strand the pipeline.
					assert.Equal(t, ids(b), got1, "done gets its own batch's result")
					name := sources[b.Source].Name
					for _, id := range got1 {
						assert.True(t, strings.HasPrefix(id, name+"-"), "batch of source %d holds %s", b.Source, id)
					}
					got = append(got, got1...)
					sizes = append(sizes, len(got1))
					return nil
				})
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, []int{5, 5, 5, 5, 3, 5, 5, 5, 5, 5, 5, 5, 5, 1}, sizes, "batches never span two sources")
		})
	}
}

func TestForEachBatchStopsAtTheFirstErrorInInputOrder(t *testing.T) {
	errEarly, errLate := errors.New("early"), errors.New("late")
	sources := []conversation.Source{jsonlSource("a", 100)}
	var seen []string
	err := conversation.ForEachBatch(context.Background(), sources, conversation.BatchOptions{Workers: 4, Size: 10},
		func(_ context.Context, b conversation.Batch) (int, error) {
			first := ids(b)[0]
			switch first {
			case "a-30":
				time.Sleep(5 * time.Millisecond) // finishes after the later failure
				return 0, errEarly
			case "a-50":
				return 0, errLate
			}
			return len(b.Records), nil
		},
		func(b conversation.Batch, _ int) error {
			seen = append(seen, ids(b)[0])
			return nil
		})
	require.ErrorIs(t, err, errEarly)
	assert.Equal(t, []string{"a-0", "a-10", "a-20"}, seen, "no batch after the failing one is handed on")

	errDone := errors.New("emit failed")
	calls := 0
	err = conversation.ForEachBatch(context.Background(), []conversation.Source{jsonlSource("a", 100)}, conversation.BatchOptions{Size: 10},
		func(_ context.Context, b conversation.Batch) (int, error) { return 0, nil },
		func(b conversation.Batch, _ int) error {
			calls++
			if calls == 2 {
				return errDone
			}
			return nil
		})
	require.ErrorIs(t, err, errDone)
	assert.Equal(t, 2, calls)
}

// TestForEachBatchRefusesNoRecords: sources without a record between them
// are refused, named; one empty source beside others is not.
func TestForEachBatchRefusesNoRecords(t *testing.T) {
	run := func(sources ...conversation.Source) (int, error) {
		n := 0
		err := conversation.ForEachBatch(context.Background(), sources, conversation.BatchOptions{Workers: 2, Prefix: "pfx"},
			func(_ context.Context, b conversation.Batch) (int, error) { return len(b.Records), nil },
			func(_ conversation.Batch, got int) error { n += got; return nil })
		return n, err
	}
	src := func(name, text string) conversation.Source {
		return conversation.Source{Name: name, Reader: strings.NewReader(text)}
	}
	for _, tc := range []struct {
		sources []conversation.Source
		want    string
	}{
		{[]conversation.Source{src("a.jsonl", "")}, "pfx: a.jsonl: no records"},
		{[]conversation.Source{src("a.json", " [ ] ")}, "pfx: a.json: no records"},
		{[]conversation.Source{src("a.jsonl", "\n\n"), src("b.json", "[]")}, "pfx: a.jsonl, b.json: no records"},
		{[]conversation.Source{src("a", ""), src("b", ""), src("c", ""), src("d", ""), src("e", "")}, "pfx: a, b, c and 2 more: no records"},
	} {
		_, err := run(tc.sources...)
		require.ErrorIs(t, err, dataset.ErrNoRecords)
		assert.EqualError(t, err, tc.want)
	}
	n, err := run(src("a.jsonl", ""), jsonlSource("b", 3), src("c.json", "[]"))
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func TestForEachBatchReadingErrors(t *testing.T) {
	bad := conversation.Source{Name: "bad.jsonl", Reader: strings.NewReader("{\"id\": \"x-0\"}\n[1]\n")}
	var seen []string
	err := conversation.ForEachBatch(context.Background(), []conversation.Source{jsonlSource("a", 12), bad},
		conversation.BatchOptions{Workers: 2, Size: 5, Prefix: "pfx"},
		func(_ context.Context, b conversation.Batch) ([]string, error) { return ids(b), nil },
		func(_ conversation.Batch, got []string) error {
			seen = append(seen, got...)
			return nil
		})
	require.Error(t, err)
	var re *conversation.RecordError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "bad.jsonl", re.Source)
	assert.True(t, strings.HasPrefix(err.Error(), "pfx: bad.jsonl: record 2"), err.Error())
	assert.Len(t, seen, 12, "every batch read before the bad record is handed on first")
}

func TestForEachBatchCancelAndNoLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := conversation.ForEachBatch(ctx, []conversation.Source{jsonlSource("a", 10000)}, conversation.BatchOptions{Workers: 4, Size: 3},
		func(ctx context.Context, b conversation.Batch) (int, error) { return len(b.Records), nil },
		func(_ conversation.Batch, k int) error {
			n += k
			if n >= 30 {
				cancel()
			}
			return nil
		})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, n, 10000)

	err = conversation.ForEachBatch(ctx, []conversation.Source{jsonlSource("a", 10)}, conversation.BatchOptions{},
		func(ctx context.Context, b conversation.Batch) (int, error) { return 0, nil },
		func(conversation.Batch, int) error { return nil })
	require.ErrorIs(t, err, context.Canceled, "a cancelled context stops the run before it starts")

	// Polled by hand: testify's Eventually runs a goroutine of its own.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "every goroutine ForEachBatch started has finished")
}
