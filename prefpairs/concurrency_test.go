package prefpairs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/prefpairs"
)

// flightCounter tracks the calls in progress and the most seen at once. A
// call waits until want calls are in progress together, or until wait has
// passed once (after which no call waits), so that a build that never gets
// there still ends.
type flightCounter struct {
	want     int64
	wait     time.Duration
	inFlight atomic.Int64
	most     atomic.Int64
	reached  chan struct{}
	gaveUp   chan struct{}
	once     sync.Once
	giveUp   sync.Once
}

func newFlightCounter(want int, wait time.Duration) *flightCounter {
	return &flightCounter{want: int64(want), wait: wait, reached: make(chan struct{}), gaveUp: make(chan struct{})}
}

// enter counts a call in and waits; the caller must call leave.
func (f *flightCounter) enter() {
	n := f.inFlight.Add(1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	if n >= f.want {
		f.once.Do(func() { close(f.reached) })
	}
	select {
	case <-f.reached:
	case <-f.gaveUp:
	case <-time.After(f.wait):
		f.giveUp.Do(func() { close(f.gaveUp) })
	}
}

func (f *flightCounter) leave() { f.inFlight.Add(-1) }

// toolRecords is n records preferring the tool call, with no direct answer.
func toolRecords(n int) string {
	var in strings.Builder
	for i := range n {
		in.WriteString(record(fmt.Sprintf("w_%d", i), `"elapse":0,"preference":"tool",`) + "\n")
	}
	return in.String()
}

// TestBuildGenerateConcurrency: the generator's concurrency is the number of
// requests the server sees at once, above 16 too and with an input of only a
// few batches, and never more.
func TestBuildGenerateConcurrency(t *testing.T) {
	for _, concurrency := range []int{3, 17, 32} {
		t.Run(fmt.Sprint(concurrency), func(t *testing.T) {
			flights := newFlightCounter(concurrency, 3*time.Second)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				flights.enter()
				defer flights.leave()
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"from the server"},"finish_reason":"stop"}]}`)
			}))
			t.Cleanup(srv.Close)
			gen, err := prefpairs.NewDirectGenerator(prefpairs.GeneratorOptions{URL: srv.URL, Model: "m", Concurrency: concurrency})
			require.NoError(t, err)
			assert.Equal(t, concurrency, gen.Concurrency())

			opt := noTimes()
			opt.Generator = gen
			const n = 3 * 64 // three batches
			pairs, sum, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(toolRecords(n))))
			require.NoError(t, err)
			require.Len(t, pairs, n)
			for i, p := range pairs {
				require.Equal(t, fmt.Sprintf("w_%d", i), p.ID, "pairs come in input order")
				require.Len(t, p.Rejected, 1)
				assert.Equal(t, "from the server", p.Rejected[0].Text())
				assert.NotEmpty(t, p.Chosen[0].ToolCalls)
			}
			assert.Equal(t, map[string]int{"generated": n}, sum.DirectSource)
			assert.EqualValues(t, n, gen.Stats().Requests)
			assert.EqualValues(t, concurrency, flights.most.Load(), "requests in flight at once")
		})
	}
}

// boundedGenerator is a BoundedSource reporting limit that answers after
// counting the call in flight.
type boundedGenerator struct {
	limit   int
	flights *flightCounter
	calls   atomic.Int64
}

func (g *boundedGenerator) Concurrency() int { return g.limit }

func (g *boundedGenerator) Generate(_ context.Context, req prefpairs.DirectRequest) (string, error) {
	g.calls.Add(1)
	g.flights.enter()
	defer g.flights.leave()
	return "reply to " + req.Key.ID, nil
}

// TestBuildBoundedSourceOneBatch: with one worker, a BoundedSource gets as
// many requests of the batch at once as its Concurrency says, at least one.
func TestBuildBoundedSourceOneBatch(t *testing.T) {
	tests := []struct {
		limit, want int
		wait        time.Duration
	}{
		{limit: 5, want: 5, wait: 3 * time.Second},
		{limit: 1, want: 1, wait: 3 * time.Second},
		{limit: 0, want: 1, wait: 3 * time.Second},
		{limit: -2, want: 1, wait: 3 * time.Second},
		// A limit above the batch's 64 requests sends them all at once.
		{limit: 100, want: 64, wait: 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			gen := &boundedGenerator{limit: tc.limit, flights: newFlightCounter(tc.want, tc.wait)}
			opt := noTimes()
			opt.Generator = gen
			opt.Workers = 1
			pairs, _, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(toolRecords(64))))
			require.NoError(t, err)
			require.Len(t, pairs, 64)
			for i, p := range pairs {
				assert.Equal(t, fmt.Sprintf("reply to w_%d", i), p.Rejected[0].Text())
			}
			assert.EqualValues(t, 64, gen.calls.Load())
			assert.EqualValues(t, tc.want, gen.flights.most.Load())
		})
	}
}

// failingGenerator fails the request of one sample at once and holds every
// other until the build cancels it.
type failingGenerator struct {
	fail  string
	calls atomic.Int64
}

func (g *failingGenerator) Concurrency() int { return 16 }

func (g *failingGenerator) Generate(ctx context.Context, req prefpairs.DirectRequest) (string, error) {
	g.calls.Add(1)
	if req.Key.ID == g.fail {
		return "", errors.New("the model is gone")
	}
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("waiting: %w", ctx.Err())
	case <-time.After(5 * time.Second):
		return "late reply", nil
	}
}

// TestBuildGenerateFailure: a failed request fails the build naming its
// sample, not one of the requests it cancelled (those were sent first), and
// the requests not yet sent are not sent.
func TestBuildGenerateFailure(t *testing.T) {
	gen := &failingGenerator{fail: "w_10"}
	opt := noTimes()
	opt.Generator = gen
	opt.Workers = 1
	start := time.Now()
	pairs, _, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(toolRecords(64))))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 4*time.Second, "the held requests were cancelled")
	assert.Empty(t, pairs)
	assert.EqualError(t, err, "prefpairs: in.jsonl: record 11 (line 11, id w_10): the model is gone")
	assert.NotErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, gen.calls.Load(), int64(16), "no request is sent after the failure")
}

// cancellingGenerator cancels the build on its first call and reports the
// cancellation; later calls answer.
type cancellingGenerator struct {
	cancel context.CancelFunc
	once   sync.Once
}

func (g *cancellingGenerator) Concurrency() int { return 4 }

func (g *cancellingGenerator) Generate(ctx context.Context, _ prefpairs.DirectRequest) (string, error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		g.cancel()
		return "", fmt.Errorf("stopped: %w", ctx.Err())
	}
	return "reply", nil
}

// TestBuildGenerateCancelled: a build cancelled while generating fails with
// the cancellation and emits no pair without its responses.
func TestBuildGenerateCancelled(t *testing.T) {
	for _, gen := range []prefpairs.DirectSource{&cancellingGenerator{}, &plainCancellingGenerator{}} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		switch g := gen.(type) {
		case *cancellingGenerator:
			g.cancel = cancel
		case *plainCancellingGenerator:
			g.cancel = cancel
		}
		opt := noTimes()
		opt.Generator = gen
		opt.Workers = 1
		var emitted []*prefpairs.Pair
		_, err := prefpairs.Build(ctx, []prefpairs.Input{prefpairs.InputFromName("in.jsonl", strings.NewReader(toolRecords(64)))}, opt,
			func(p *prefpairs.Pair) error {
				emitted = append(emitted, p)
				return nil
			})
		require.ErrorIs(t, err, context.Canceled)
		for _, p := range emitted {
			assert.NotEmpty(t, p.Chosen, "pair %s", p.ID)
			assert.NotEmpty(t, p.Rejected, "pair %s", p.ID)
		}
	}
}

// plainCancellingGenerator is a DirectSource (not bounded) that cancels the
// build on its first call and then answers every call.
type plainCancellingGenerator struct {
	cancel context.CancelFunc
	calls  atomic.Int64
}

func (g *plainCancellingGenerator) Generate(context.Context, prefpairs.DirectRequest) (string, error) {
	if g.calls.Add(1) == 1 {
		g.cancel()
	}
	return "reply", nil
}

// canceledGenerator fails one sample with an error of its own that wraps
// context.Canceled (an upstream client's cancellation), while the build's
// context stays alive, and answers every other sample.
type canceledGenerator struct{ fail string }

func (g *canceledGenerator) Concurrency() int { return 4 }

func (g *canceledGenerator) Generate(_ context.Context, req prefpairs.DirectRequest) (string, error) {
	if req.Key.ID == g.fail {
		return "", fmt.Errorf("upstream stream closed: %w", context.Canceled)
	}
	return "reply", nil
}

// TestBuildGenerateErrorWrappingCanceled: a generator error that wraps
// context.Canceled fails the build like any other, naming its sample, and
// no pair is emitted without its responses.
func TestBuildGenerateErrorWrappingCanceled(t *testing.T) {
	opt := noTimes()
	opt.Generator = &canceledGenerator{fail: "w_3"}
	opt.Workers = 1
	pairs, _, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(toolRecords(64))))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "in.jsonl: record 4 (line 4, id w_3): upstream stream closed")
	for _, p := range pairs {
		assert.NotEmpty(t, p.Rejected, "pair %s", p.ID)
	}
	assert.Empty(t, pairs)
}
