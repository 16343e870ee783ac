package splits

import (
	"context"
	"sync"
)

// orderedPipeline runs produce in the calling goroutine; the batches it
// emits are processed by work on workers goroutines (each with its own
// scratch from newWorker) and handed to merge one at a time, in emission
// order. The gate's passes and the contamination scan run on it. At most
// 2·workers+2 batches are in flight, so memory does not grow with the
// input. Once ctx is done, emit returns its error.
func orderedPipeline[W, B any](ctx context.Context, workers int, newWorker func() W, work func(W, B), merge func(B),
	produce func(emit func(B) error) error) error {
	type job struct {
		seq int
		b   B
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tokens := make(chan struct{}, 2*workers+2)
	jobs := make(chan job)
	results := make(chan job, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := newWorker()
			for j := range jobs {
				work(w, j.b)
				results <- j
			}
		})
	}
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		pending := map[int]B{}
		next := 0
		for j := range results {
			pending[j.seq] = j.b
			for {
				b, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				merge(b)
				next++
				<-tokens
			}
		}
	}()
	seq := 0
	err := produce(func(b B) error {
		if err := ctx.Err(); err != nil { // select below picks at random when both are ready
			return err
		}
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		j := job{seq: seq, b: b}
		seq++
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	close(results)
	<-merged
	return err
}
