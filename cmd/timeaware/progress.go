package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress prints a running count on stderr when it is a terminal, at most a
// few times a second; it is silent in pipelines and CI logs.
type progress struct {
	w     io.Writer
	what  string
	n     int
	last  time.Time
	shown bool
}

func newProgress(w io.Writer, what string) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{}
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return &progress{}
	}
	return &progress{w: w, what: what}
}

func (p *progress) add(n int) {
	if p.w == nil {
		return
	}
	p.n += n
	if now := time.Now(); now.Sub(p.last) > 250*time.Millisecond {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r%d %s", p.n, p.what)
	}
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprintf(p.w, "\r%d %s\n", p.n, p.what)
	}
}
