package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The sigterm mode stops the server under load and counts what its clients
// lost. -clients clients send -batch item requests back to back, each on a
// keep-alive connection of its own (raw client), reconnecting whenever the
// server closes one; they never look at readiness, as clients that talk to
// a replica directly do not. After -warmup the load generator sends SIGTERM
// to -server-pid, and each client goes on until a connection it opens is
// refused. Every request then ends one way:
//
//   - answered: a 200 with every item scored;
//   - unsent: the connection was refused, or never completed its
//     handshake, before the request was written: the client knows it was
//     not served and may send it elsewhere;
//   - reset: the request was written and no answer came (a reset, or the
//     connection closed): the client cannot know whether it was served.
//
// With -retry-429, a 429 is retried after its Retry-After and counted as
// shed. A connection that fails is never tried again with the same request (the
// raw client's retry on a fresh connection is off), so no reset is hidden.
// The run fails on a reset, an answer other than 200, or a server still
// answering -duration after SIGTERM.

// sigtermSummary is the sigterm mode's -json line.
type sigtermSummary struct {
	Mode    string `json:"mode"`
	Clients int    `json:"clients"`
	Batch   int    `json:"batch"`
	// Before and After count the requests answered before and after SIGTERM.
	Before int64 `json:"answered_before"`
	After  int64 `json:"answered_after"`
	// Unsent counts the clients' connections refused (or never accepted)
	// after SIGTERM, Reset the requests lost after they were written, and
	// Other the answers other than 200.
	Unsent int64 `json:"unsent"`
	Reset  int64 `json:"reset"`
	Other  int64 `json:"other"`
	// Shed counts the 429s retried after their Retry-After (-retry-429).
	Shed int64 `json:"shed"`
	// StoppedS is the time from SIGTERM to the last client's refusal, and
	// ExitedS the time to the server process's exit (-1: still running).
	StoppedS float64 `json:"stopped_s"`
	ExitedS  float64 `json:"exited_s"`
}

func runSigterm(c config) error {
	if c.serverPID <= 0 {
		return errors.New("-mode sigterm: -server-pid names the server to stop")
	}
	if c.client != "raw" {
		return errors.New("-mode sigterm: only -client raw, which never resends a request")
	}
	u, err := url.Parse(c.url)
	if err != nil {
		return err
	}
	bodies, err := loadBodies(c)
	if err != nil {
		return err
	}
	var (
		before, after, refused, reset, other atomic.Int64
		errs, lost                           errorLog
		shed                                 atomic.Int64
		termed                               = make(chan struct{})
		termAt                               time.Time
	)
	var wg sync.WaitGroup
	for ci := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &rawDoer{addr: u.Host, timeout: c.timeout, once: true}
			defer p.close()
			for k := ci % len(bodies); ; k = (k + c.clients) % len(bodies) {
				afterTerm := false
				select {
				case <-termed:
					afterTerm = true
					if time.Since(termAt) > c.duration {
						errs.add("client %d: the server still accepts connections %v after SIGTERM", ci, c.duration)
						return
					}
				default:
				}
				status, body, n429, err := doShed(c, p, bodies[k].req, time.Time{})
				shed.Add(n429)
				select {
				case <-termed:
					afterTerm = true // a 429's wait may span SIGTERM
				default:
				}
				switch {
				case err != nil && unsent(err):
					if !afterTerm {
						errs.add("client %d: %v before SIGTERM", ci, err)
						return
					}
					refused.Add(1)
					return
				case err != nil:
					reset.Add(1)
					lost.add("client %d: batch %d lost after it was sent (%s SIGTERM): %v", ci, k, map[bool]string{false: "before", true: "after"}[afterTerm], err)
				case status != http.StatusOK:
					other.Add(1)
					errs.add("client %d: batch %d: HTTP %d: %.200s", ci, k, status, body)
				case afterTerm:
					after.Add(1)
				default:
					before.Add(1)
				}
			}
		}()
	}
	time.Sleep(c.warmup)
	termAt = time.Now()
	if err := syscall.Kill(c.serverPID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM to the server (pid %d): %w", c.serverPID, err)
	}
	close(termed)
	wg.Wait()
	stopped := time.Since(termAt)
	exited := -1.0
	for end := termAt.Add(c.duration); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(c.serverPID, 0); errors.Is(err, syscall.ESRCH) || zombie(c.serverPID) {
			exited = time.Since(termAt).Seconds()
			break
		}
	}
	s := sigtermSummary{Mode: "sigterm", Clients: c.clients, Batch: c.batch,
		Before: before.Load(), After: after.Load(), Unsent: refused.Load(), Reset: reset.Load(), Other: other.Load(), Shed: shed.Load(),
		StoppedS: stopped.Seconds(), ExitedS: exited}
	fmt.Fprintf(os.Stderr, "sigterm: %d clients x %d items: %d requests answered before SIGTERM, %d after; %d clients refused after SIGTERM before sending; %d requests lost after they were sent; %d answers other than 200 (%d 429s retried); the last client refused %.2f s after SIGTERM, the server gone after %.2f s\n",
		s.Clients, s.Batch, s.Before, s.After, s.Unsent, s.Reset, s.Other, s.Shed, s.StoppedS, s.ExitedS)
	emit(c, s)
	if err := lost.err("requests lost after they were sent"); err != nil {
		return err
	}
	if err := errs.err("requests refused"); err != nil {
		return err
	}
	if exited < 0 {
		return fmt.Errorf("the server (pid %d) was still running %v after SIGTERM", c.serverPID, c.duration)
	}
	return nil
}

// zombie reports whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) S ...: the state follows the last ')'.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && b[i+2] == 'Z'
		}
	}
	return false
}
