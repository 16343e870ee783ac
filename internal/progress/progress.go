// Package progress draws a command's running count on a terminal: rows
// made or input read, the share done and the time left, rewritten in place
// a few times a second, and nothing at all when the output is not a
// terminal (pipelines, CI logs).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/timeaware/timeaware/internal/output"
)

// Meter prints a running count on a terminal, at most a few times a
// second, with the share done and the time left when the total is known (a
// number of rows, or the bytes of the inputs). Its zero value is silent. Its
// methods are safe for concurrent use.
type Meter struct {
	mu    sync.Mutex
	w     io.Writer
	what  string
	n     int
	total int // rows to make; 0: unknown
	// read and size give the share of the inputs read, when the total
	// number of rows is unknown but the inputs' size is not.
	read func() int64
	size int64
	// waiting, when set, is work the input does not measure: requests
	// answered and queued so far (see Waiting).
	waiting         string
	answered, asked func() int64
	now             func() time.Time
	start           time.Time
	last            time.Time
	shown           bool
}

// New is a meter of what ("rows") on w, or a silent one when w is not a
// terminal.
func New(w io.Writer, what string) *Meter {
	f, ok := w.(*os.File)
	if !ok {
		return &Meter{}
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return &Meter{}
	}
	return NewTo(w, what, time.Now)
}

// NewTo is a meter that writes to w whatever it is, on the clock now.
func NewTo(w io.Writer, what string, now func() time.Time) *Meter {
	return &Meter{w: w, what: what, now: now, start: now()}
}

// Of sets the number of rows the run makes.
func (p *Meter) Of(total int) *Meter {
	p.total = total
	return p
}

// Reading measures the share done by the bytes read of the inputs.
func (p *Meter) Reading(inputs []*output.Input) *Meter {
	if p.w == nil {
		return p // silent: no sizes to read
	}
	var size int64
	for _, in := range inputs {
		if st, err := os.Stat(in.Path()); err == nil {
			size += st.Size()
		}
	}
	p.size = size
	p.read = func() int64 {
		var n int64
		for _, in := range inputs {
			n += in.BytesRead()
		}
		return n
	}
	return p
}

// Waiting adds work that reading the input does not measure, such as the
// replies a model generates for the rows: done of queued so far, what
// naming them ("direct replies"). The share done is then done over the
// total that queued projects once the input is read (queued over the share
// of the input read), and the time left follows from it.
func (p *Meter) Waiting(what string, done, queued func() int64) *Meter {
	p.waiting, p.answered, p.asked = what, done, queued
	return p
}

// Counting renames what is counted ("puzzles").
func (p *Meter) Counting(what string) *Meter {
	p.what = what
	return p
}

// Add counts n more.
func (p *Meter) Add(n int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	p.draw()
}

// Refresh redraws the line, at most a few times a second: for a run whose
// rows come slowly while what it waits on moves (see Waiting).
func (p *Meter) Refresh() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
}

// Every refreshes the line every d until the function it returns is
// called, which waits for the last refresh to end.
func (p *Meter) Every(d time.Duration) (stop func()) {
	if p.w == nil {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.Refresh()
			}
		}
	}()
	return func() { close(done); <-ended }
}

// draw writes the line when the last one is old enough; p.mu is held.
func (p *Meter) draw() {
	if now := p.now(); now.Sub(p.last) > 250*time.Millisecond {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(now))
	}
}

// line is the progress text at now: "120/600 puzzles, 20%, 0:12 left".
func (p *Meter) line(now time.Time) string {
	share := -1.0
	text := fmt.Sprintf("%d %s", p.n, p.what)
	switch {
	case p.total > 0:
		text = fmt.Sprintf("%d/%d %s", p.n, p.total, p.what)
		share = float64(p.n) / float64(p.total)
	case p.waiting != "" && p.asked() > 0:
		queued, done := float64(p.asked()), float64(p.answered())
		total := queued
		if p.read != nil && p.size > 0 {
			if read := float64(p.read()) / float64(p.size); read > 0 && read < 1 {
				total = max(queued/read, queued)
			}
		}
		text += fmt.Sprintf(", %d/%d %s", int64(done), int64(queued), p.waiting)
		share = done / total
	case p.read != nil && p.size > 0:
		share = float64(p.read()) / float64(p.size)
		text += ", input"
	}
	if share < 0 {
		return text
	}
	share = min(share, 1)
	text += fmt.Sprintf(" %.0f%%", 100*share)
	if elapsed := now.Sub(p.start); share > 0 && share < 1 && elapsed >= time.Second {
		left := time.Duration(float64(elapsed) * (1 - share) / share).Round(time.Second)
		text += fmt.Sprintf(", %s left", clock(left))
	}
	return text
}

// clock writes a duration as h:mm:ss, or m:ss under an hour.
func clock(d time.Duration) string {
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Done ends the line, leaving the last count on the terminal.
func (p *Meter) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", p.line(p.now()))
	}
}
