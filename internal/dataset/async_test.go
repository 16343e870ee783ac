package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var intSchema = arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)

// intRecord holds the values from, from+1, ..., from+n-1.
func intRecord(mem memory.Allocator, from, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, intSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecord()
}

var errBoom = errors.New("boom")

// fakeWriter records what the AsyncWriter hands it.
type fakeWriter struct {
	gate     chan struct{} // when set, each Write waits for a value
	delay    time.Duration
	failAt   int           // the failAt-th Write (1-based) fails with errBoom
	failed   chan struct{} // closed when that happens
	closeErr error

	mu     sync.Mutex
	values []int64
	writes int
	closed int
}

func (f *fakeWriter) Write(rec arrow.Record) error {
	if f.gate != nil {
		<-f.gate
	}
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.writes == f.failAt {
		close(f.failed)
		return errBoom
	}
	// The record must still be alive although the caller released it.
	f.values = append(f.values, rec.Column(0).(*array.Int64).Int64Values()...)
	return nil
}

func (f *fakeWriter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
	return f.closeErr
}

func TestAsyncWriterOrder(t *testing.T) {
	for _, tc := range []struct {
		depth int
		delay time.Duration
	}{
		{-1, 0}, {0, 0}, {1, 0}, {1, 100 * time.Microsecond}, {2, 0}, {8, 100 * time.Microsecond}, {100, 0},
	} {
		t.Run(fmt.Sprintf("depth=%d/delay=%v", tc.depth, tc.delay), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			fw := &fakeWriter{delay: tc.delay}
			w := NewAsyncWriter(fw, tc.depth)
			var want []int64
			for k := 0; k < 50; k++ {
				rec := intRecord(mem, k*10, k%4) // includes empty records
				require.NoError(t, w.Write(rec))
				rec.Release()
				for i := k * 10; i < k*10+k%4; i++ {
					want = append(want, int64(i))
				}
			}
			require.NoError(t, w.Close())
			assert.Equal(t, want, fw.values)
			assert.Equal(t, 50, fw.writes)
			assert.Equal(t, 1, fw.closed)
			mem.AssertSize(t, 0)
		})
	}
}

func TestAsyncWriterRetainsRecords(t *testing.T) {
	// The caller releases each record as soon as Write returns, while the
	// background writer has not yet touched it.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	fw := &fakeWriter{gate: make(chan struct{})}
	w := NewAsyncWriter(fw, 2)
	for k := 0; k < 3; k++ { // one taken by the writer, two queued
		rec := intRecord(mem, k*100, 5)
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	assert.NotZero(t, mem.CurrentAlloc(), "queued records are held by the writer")
	close(fw.gate)
	require.NoError(t, w.Close())
	var want []int64
	for k := 0; k < 3; k++ {
		for i := 0; i < 5; i++ {
			want = append(want, int64(k*100+i))
		}
	}
	assert.Equal(t, want, fw.values)
	mem.AssertSize(t, 0)
}

func TestAsyncWriterMatchesDirect(t *testing.T) {
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			opt := Options{RowGroupRows: 3}

			var buf bytes.Buffer
			fw, err := f.NewWriter(&buf, testSchema, opt)
			require.NoError(t, err)
			w := NewAsyncWriter(fw, 1)
			for r := 0; r < 3; r++ { // several rounds, to fill the queue
				for _, rows := range testBatches {
					rec := buildRecord(t, mem, rows)
					require.NoError(t, w.Write(rec))
					rec.Release()
				}
			}
			require.NoError(t, w.Close())
			mem.AssertSize(t, 0)

			var want bytes.Buffer
			fw, err = f.NewWriter(&want, testSchema, opt)
			require.NoError(t, err)
			for r := 0; r < 3; r++ {
				for _, rows := range testBatches {
					rec := buildRecord(t, mem, rows)
					require.NoError(t, fw.Write(rec))
					rec.Release()
				}
			}
			require.NoError(t, fw.Close())
			assert.Equal(t, want.Bytes(), buf.Bytes(), "async output differs from direct output")

			var rows []map[string]any
			for r := 0; r < 3; r++ {
				rows = append(rows, rowValues(allTestRows())...)
			}
			assert.Equal(t, rows, readBack[f.Name](t, buf.Bytes(), mem))
			mem.AssertSize(t, 0)
		})
	}
}

func TestAsyncWriterCloseError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	fw := &fakeWriter{closeErr: errBoom}
	w := NewAsyncWriter(fw, 2)
	rec := intRecord(mem, 0, 3)
	require.NoError(t, w.Write(rec))
	rec.Release()
	err := w.Close()
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, 1, fw.closed)
	assert.Equal(t, []int64{0, 1, 2}, fw.values)
	mem.AssertSize(t, 0)
}

func TestAsyncWriterWriteError(t *testing.T) {
	t.Run("on a later Write", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		fw := &fakeWriter{failAt: 2, failed: make(chan struct{})}
		w := NewAsyncWriter(fw, 2)
		for k := 0; k < 2; k++ {
			rec := intRecord(mem, k*10, 2)
			require.NoError(t, w.Write(rec))
			rec.Release()
		}
		<-fw.failed
		// The error is recorded just after the failed Write returns.
		require.Eventually(t, func() bool { return w.failed() != nil }, 5*time.Second, time.Millisecond)
		for k := 2; k < 5; k++ {
			rec := intRecord(mem, k*10, 2)
			assert.ErrorIs(t, w.Write(rec), errBoom)
			rec.Release()
		}
		assert.ErrorIs(t, w.Close(), errBoom)
		assert.Equal(t, []int64{0, 1}, fw.values)
		assert.Equal(t, 2, fw.writes, "nothing written after the failure")
		mem.AssertSize(t, 0)
	})

	t.Run("on Close", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		fw := &fakeWriter{failAt: 1, failed: make(chan struct{}), gate: make(chan struct{})}
		w := NewAsyncWriter(fw, 4)
		for k := 0; k < 4; k++ {
			rec := intRecord(mem, k*10, 2)
			require.NoError(t, w.Write(rec)) // queued before the failure
			rec.Release()
		}
		close(fw.gate)
		assert.ErrorIs(t, w.Close(), errBoom)
		assert.Empty(t, fw.values)
		assert.Equal(t, 1, fw.writes, "queued records after the failure are dropped")
		mem.AssertSize(t, 0)
	})

	t.Run("while writing many", func(t *testing.T) {
		// Whatever Write returned it, the error is returned from then on.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		fw := &fakeWriter{failAt: 3, failed: make(chan struct{})}
		w := NewAsyncWriter(fw, 1)
		var first error
		for k := 0; k < 200; k++ {
			rec := intRecord(mem, k, 1)
			err := w.Write(rec)
			rec.Release()
			if first != nil {
				assert.ErrorIs(t, err, errBoom, "write %d", k)
			}
			if err != nil && first == nil {
				first = err
			}
		}
		assert.ErrorIs(t, w.Close(), errBoom)
		assert.Equal(t, []int64{0, 1}, fw.values)
		mem.AssertSize(t, 0)
	})
}

func TestAsyncWriterAbort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	fw := &fakeWriter{gate: make(chan struct{})}
	w := NewAsyncWriter(fw, 3)
	for k := 0; k < 4; k++ {
		rec := intRecord(mem, k*10, 2)
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	close(fw.gate)
	w.Abort()
	w.Abort() // idempotent
	assert.Zero(t, fw.closed, "Abort must not close the underlying writer")
	mem.AssertSize(t, 0)
}

func TestAsyncWriterAbortAfterClose(t *testing.T) {
	// The deferred Abort after a successful Close does nothing more.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	fw := &fakeWriter{}
	w := NewAsyncWriter(fw, 2)
	rec := intRecord(mem, 0, 1)
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.NoError(t, w.Close())
	w.Abort()
	assert.Equal(t, 1, fw.closed)
	assert.Equal(t, []int64{0}, fw.values)
	mem.AssertSize(t, 0)
}

func TestAsyncWriterAbortKeepsOutputOpen(t *testing.T) {
	// With a real format: Abort leaves both the format writer and the
	// caller's writer open.
	for _, f := range All {
		t.Run(f.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			out := &closeRecorder{}
			fw, err := f.NewWriter(out, testSchema, Options{})
			require.NoError(t, err)
			w := NewAsyncWriter(fw, 2)
			rec := buildRecord(t, mem, testBatches[0])
			require.NoError(t, w.Write(rec))
			rec.Release()
			w.Abort()
			assert.False(t, out.closed)
			mem.AssertSize(t, 0)
		})
	}
}
