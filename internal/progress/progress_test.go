package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/output"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

func TestProgressShowsTheShareAndTheTimeLeft(t *testing.T) {
	var w bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0), step: 500 * time.Millisecond}
	p := NewTo(&w, "puzzles", clock.now).Of(600)
	for range 150 {
		p.Add(1)
	}
	p.Done()
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\r")
	require.Greater(t, len(lines), 2)
	// One row every half second: at row 1, half a second in, no guess yet.
	assert.Equal(t, "1/600 puzzles 0%\x1b[K", lines[1])
	// Row 2 after 1 s: 598 rows to go at half a second each.
	assert.Equal(t, "2/600 puzzles 0%, 4:59 left\x1b[K", lines[2])
	// The last line stays, and ends the line: read at 76 s, 75.5 s after
	// the start, a quarter done leaves 226.5 s.
	assert.Equal(t, "150/600 puzzles 25%, 3:47 left\x1b[K\n", lines[len(lines)-1]+"\n")
}

// kiloInput is an input of 1,000 bytes, not yet read.
func kiloInput(t *testing.T) *output.Input {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("x"), 1000), 0o644))
	in := output.OpenInput(path)
	t.Cleanup(func() { in.Close() })
	return in
}

func TestProgressReadsTheInputsSize(t *testing.T) {
	in := kiloInput(t)
	var w bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0), step: 2 * time.Second}
	p := NewTo(&w, "pairs", clock.now).Reading([]*output.Input{in})
	buf := make([]byte, 250)
	_, err := in.Read(buf)
	require.NoError(t, err)
	p.Add(7)
	assert.Equal(t, "\r7 pairs, input 25%, 0:06 left\x1b[K", w.String(), "a quarter read in 2 s leaves 6 s")
}

func TestProgressIsSilentOffATerminal(t *testing.T) {
	var w bytes.Buffer
	p := New(&w, "rows").Of(10)
	p.Add(10)
	p.Done()
	assert.Empty(t, w.String())
}

// TestProgressFollowsWhatTheRunWaitsOn: with replies to wait on, the share
// is the replies done over the total that those queued so far project
// from the share of the input read, and the line moves on a refresh
// without a new row; once the input is read, the queued replies are the
// total.
func TestProgressFollowsWhatTheRunWaitsOn(t *testing.T) {
	in := kiloInput(t)
	var w bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0), step: 2 * time.Second}
	var done, queued atomic.Int64
	p := NewTo(&w, "pairs", clock.now).Reading([]*output.Input{in}).Waiting("direct replies", done.Load, queued.Load)
	_, err := in.Read(make([]byte, 500))
	require.NoError(t, err)
	queued.Store(10)
	done.Store(5)
	p.Add(3)
	// Half the input read has queued 10: 20 in all, 5 done in 2 s leaves
	// 15 at that pace, 6 s.
	assert.Equal(t, "\r3 pairs, 5/10 direct replies 25%, 0:06 left\x1b[K", w.String())
	w.Reset()
	_, err = in.Read(make([]byte, 500))
	require.NoError(t, err)
	queued.Store(16)
	done.Store(12)
	p.Refresh()
	// All read: 16 in all, 12 done in 4 s leaves 4, 1 s and a third.
	assert.Equal(t, "\r3 pairs, 12/16 direct replies 75%, 0:01 left\x1b[K", w.String())
	w.Reset()
	stop := p.Every(time.Millisecond)
	done.Store(16)
	require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return w.Len() > 0 }, 10*time.Second, time.Millisecond)
	stop()
	p.Done()
	assert.True(t, strings.HasSuffix(w.String(), "\r3 pairs, 16/16 direct replies 100%\x1b[K\n"), w.String())
}
