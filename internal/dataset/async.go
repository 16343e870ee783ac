package dataset

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
)

// AsyncWriter writes records on a goroutine of its own, so that encoding and
// compressing one batch overlaps with building the next. At most depth
// batches wait in the queue, which bounds memory. An error from the
// underlying writer is returned by the next Write or by Close.
type AsyncWriter struct {
	w     RecordWriter
	queue chan arrow.Record
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error

	closeOnce sync.Once
	closeErr  error
}

// NewAsyncWriter starts writing to w in the background; depth < 1 means 1.
func NewAsyncWriter(w RecordWriter, depth int) *AsyncWriter {
	if depth < 1 {
		depth = 1
	}
	a := &AsyncWriter{w: w, queue: make(chan arrow.Record, depth), done: make(chan struct{})}
	go a.loop()
	return a
}

func (a *AsyncWriter) loop() {
	defer close(a.done)
	for rec := range a.queue {
		if a.failed() == nil {
			if err := a.w.Write(rec); err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
			}
		}
		rec.Release()
	}
}

func (a *AsyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Write queues rec; the writer takes its own reference, so the caller may
// release rec as soon as Write returns.
func (a *AsyncWriter) Write(rec arrow.Record) error {
	if err := a.failed(); err != nil {
		return err
	}
	rec.Retain()
	a.queue <- rec
	return nil
}

// Close waits for the queued records, then closes the underlying writer.
// Further calls return the first call's result.
func (a *AsyncWriter) Close() error {
	a.closeOnce.Do(func() {
		a.once.Do(func() { close(a.queue) })
		<-a.done
		if a.closeErr = a.failed(); a.closeErr == nil {
			a.closeErr = a.w.Close()
		}
	})
	return a.closeErr
}

// Abort stops the background goroutine without closing the underlying
// writer, for runs that fail and discard their output.
func (a *AsyncWriter) Abort() {
	a.once.Do(func() { close(a.queue) })
	<-a.done
}
