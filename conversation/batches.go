package conversation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/timeaware/timeaware/internal/dataset"
)

// Source is one named input of records: a JSON array of records or JSONL.
type Source struct {
	Name   string
	Reader io.Reader
}

// Batch is a run of consecutive raw records of one source.
type Batch struct {
	// Source is the index of the records' source.
	Source  int
	Records []RawRecord
}

// BatchOptions tune ForEachBatch.
type BatchOptions struct {
	// Workers run the work function (0: one per CPU).
	Workers int
	// Size is the number of records in a batch (0: 64).
	Size int
	// Prefix begins the message of a reading error ("prefpairs").
	Prefix string
}

// ForEachBatch is the pipeline of every command that decodes records:
// it reads the sources in order, cuts their records into batches, runs work
// on each batch on several goroutines, and calls done with each batch and
// its result on the caller's goroutine, in input order. At most 2 × Workers
// batches are in flight, so memory is bounded by the batch size whatever the
// input size.
//
// The first error in input order stops the run: a record that cannot be
// split off (a *RecordError, prefixed with Prefix), or what work or done
// returned for a batch; errors of later batches are dropped. ForEachBatch
// returns once every goroutine it started has finished, with that error, or
// with ctx's error when ctx ends first. Sources that hold no record at all
// are refused: the error wraps dataset.ErrNoRecords and names them.
func ForEachBatch[T any](ctx context.Context, sources []Source, opt BatchOptions,
	work func(context.Context, Batch) (T, error), done func(Batch, T) error) error {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := opt.Size
	if size <= 0 {
		size = 64
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		Batch
		result T
		err    error
		ready  chan struct{}
	}
	jobs := make(chan *job, workers)
	order := make(chan *job, 2*workers)
	var readErr error
	go func() {
		defer close(order)
		defer close(jobs)
		send := func(j *job) error {
			// order first: the consumer must learn of a batch before a
			// worker can finish it, or the two could wait on each other.
			for _, ch := range []chan *job{order, jobs} {
				select {
				case ch <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}
		newJob := func(src int) *job {
			return &job{Batch: Batch{Source: src, Records: make([]RawRecord, 0, size)}, ready: make(chan struct{})}
		}
		records := 0
		defer func() {
			if readErr == nil && records == 0 {
				readErr = noRecords(sources, opt.Prefix)
			}
		}()
		for i, src := range sources {
			rd := NewReader(src.Reader, src.Name)
			j := newJob(i)
			for {
				raw, err := rd.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					if opt.Prefix != "" {
						err = fmt.Errorf("%s: %w", opt.Prefix, err)
					}
					readErr = err
					return
				}
				records++
				j.Records = append(j.Records, raw)
				if len(j.Records) == size {
					if readErr = send(j); readErr != nil {
						return
					}
					j = newJob(i)
				}
			}
			if len(j.Records) > 0 {
				if readErr = send(j); readErr != nil {
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.result, j.err = work(ctx, j.Batch)
				close(j.ready)
			}
		})
	}
	var first error
	for j := range order {
		if first != nil {
			continue // drain, so that the reader and the workers can finish
		}
		select {
		case <-j.ready:
		case <-ctx.Done():
			first = ctx.Err()
			continue
		}
		if j.err == nil {
			j.err = done(j.Batch, j.result)
		}
		if j.err != nil {
			first = j.err
			cancel()
		}
		j.Records = nil
	}
	wg.Wait()
	// The reader's error comes after every batch it sent, so it is the
	// first error only when no batch failed.
	if first == nil {
		first = readErr
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// noRecords is the error for sources without a single record between them,
// naming them (the first three, and how many more).
func noRecords(sources []Source, prefix string) error {
	names := make([]string, 0, 3)
	for _, src := range sources[:min(len(sources), 3)] {
		names = append(names, src.Name)
	}
	list := strings.Join(names, ", ")
	if n := len(sources) - len(names); n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	err := fmt.Errorf("%s: %w", list, dataset.ErrNoRecords)
	if prefix != "" {
		err = fmt.Errorf("%s: %w", prefix, err)
	}
	return err
}
