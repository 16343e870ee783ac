// Package pace hands out bytes at a fixed rate to everyone who asks, in
// the order they ask. The verifier pays through it for what it reads from
// connections it is closing, and the serve benchmark's load generator for
// the header floods it sends.
package pace

import (
	"sync"
	"time"
)

// Pacer spends a rate of bytes a second among those who ask. It keeps no
// credit while nobody asks, so a burst is one reservation at most. The
// zero Pacer is not usable; make one with New.
type Pacer struct {
	rate float64 // bytes a second
	mu   sync.Mutex
	next time.Time // when the bytes reserved so far are paid for
}

// New returns a Pacer of bytesPerSecond (at least 1).
func New(bytesPerSecond float64) *Pacer {
	return &Pacer{rate: max(bytesPerSecond, 1)}
}

// Wait reserves n bytes and sleeps until they are paid for. It reports
// false at once, reserving nothing, when they would be paid for after
// deadline (the zero time: no deadline), and false as soon as stop closes
// (nil: never), the bytes then reserved all the same.
func (p *Pacer) Wait(stop <-chan struct{}, n int, deadline time.Time) bool {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	if !deadline.IsZero() && at.After(deadline) {
		p.mu.Unlock()
		return false
	}
	p.next = at.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	p.mu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}
