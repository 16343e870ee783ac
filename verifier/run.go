package verifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/internal/atomicfile"
	"github.com/timeaware/timeaware/internal/memlimit"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// RunOptions configures Run: the service's Options, and where and within
// what memory the process serves them.
type RunOptions struct {
	Options
	// Addr is the address to listen on, host:port; port 0 takes a free one.
	Addr string
	// AddrFile, when set, receives the bound address (host:port and a
	// newline), atomically, once the listener is bound, so that whoever
	// started the service waits for the file rather than guessing a free
	// port. Run removes it at exit unless another process has written its
	// own address there since.
	AddrFile string
	// AllowNoToken lets the service listen beyond loopback without a
	// Token, where anyone who reaches the port may call every route.
	// Without it that is refused (ErrNoToken).
	AllowNoToken bool
	// MemoryLimit bounds the process's memory in bytes: 0 is 90% of its
	// cgroup's limit, else half the machine's memory; GOMEMLIMIT in the
	// environment wins over both. Run sets the Go runtime's soft limit to
	// MemoryLimit less MemoryReserve, and a MemoryBudget of 0 to half of
	// MemoryLimit: requests are shed well before the limit, which leaves
	// room for the scorer's work and the garbage collector's lag.
	MemoryLimit int64
	// TimerIndexBytes bounds the memory of the timers the service holds
	// (timers.Store.SetMaxIndexBytes): 0 is a quarter of MemoryLimit.
	TimerIndexBytes int64
	// Opponent, when its URL or Model is set, is the endpoint and model
	// that play the other side of negotiation steps asking for a model
	// opponent: the NegotiationOpponent.
	Opponent chat.Options
	// Warnings are logged once the listener is bound: what the caller
	// found worth saying about a service that starts, and only then (a
	// port in use is then the one thing said).
	Warnings []string
}

// ErrNoToken is the error of an address beyond loopback without a Token
// or AllowNoToken.
var ErrNoToken = errors.New("listening beyond loopback needs a token")

// MemoryError is the error of a MemoryBudget above the memory limit.
type MemoryError struct{ Budget, Limit int64 }

func (e *MemoryError) Error() string {
	return fmt.Sprintf("verifier: memory budget %d: exceeds the memory limit %d", e.Budget, e.Limit)
}

// ServeError is Run's error once the service has started: serving or
// draining failed.
type ServeError struct{ Err error }

func (e *ServeError) Error() string { return "verifier: serve: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ServeError) Unwrap() error { return e.Err }

// Run builds the service (New), listens on Addr and serves until ctx is
// done, then shuts down gracefully (Server.Serve): readiness fails and
// keep-alives stop for ShutdownGrace, then the requests in flight drain.
// It sets the process's memory limit (RunOptions.MemoryLimit). Errors
// before the service starts are *OptionError values naming the field
// (Addr, AddrFile, MemoryLimit, and New's), a *MemoryError, the opponent
// client's or New's other errors; an error once it serves is a
// *ServeError.
func Run(ctx context.Context, opt RunOptions) error {
	limit, err := opt.memory()
	if err != nil {
		return err
	}
	if opt.Opponent.URL != "" || opt.Opponent.Model != "" {
		c, err := chat.New(opt.Opponent)
		if err != nil {
			return err
		}
		opt.NegotiationOpponent = negotiation.ModelOpponent{Client: c}
	}
	srv, err := New(opt.Options)
	if err != nil {
		return err
	}
	if opt.TimerIndexBytes <= 0 {
		opt.TimerIndexBytes = limit / 4
	}
	opt.Timers.SetMaxIndexBytes(opt.TimerIndexBytes)
	log := srv.opts.Logger
	ln, err := opt.listen()
	if err != nil {
		return err
	}
	if opt.AddrFile != "" {
		bound := ln.Addr().String()
		if err := atomicfile.WriteFile(opt.AddrFile, []byte(bound+"\n")); err != nil {
			ln.Close()
			return &OptionError{Field: "AddrFile", Err: err}
		}
		defer removeAddrFile(opt.AddrFile, bound, log)
	}
	for _, w := range opt.Warnings {
		log.Warn(w)
	}
	reserve := MemoryReserve(limit)
	debug.SetMemoryLimit(limit - reserve)
	log.Info("memory", "limit_bytes", limit, "runtime_limit_bytes", limit-reserve, "request_budget_bytes", srv.opts.MemoryBudget,
		"timer_index_bytes", opt.TimerIndexBytes)
	start := time.Now()
	if err := srv.Serve(ctx, ln); err != nil {
		return &ServeError{Err: err}
	}
	log.Info("served", "uptime", time.Since(start).Round(time.Second).String())
	return nil
}

// memory resolves the memory limit, and a MemoryBudget of 0 to half of it.
func (opt *RunOptions) memory() (int64, error) {
	limit := opt.MemoryLimit
	if os.Getenv("GOMEMLIMIT") != "" {
		limit = debug.SetMemoryLimit(-1) // the runtime parsed it at start
	} else if limit == 0 {
		c, err := memlimit.Find()
		if err != nil {
			return 0, &OptionError{Field: "MemoryLimit", Err: fmt.Errorf("0 asks for the cgroup or machine limit: %w", err)}
		}
		limit = c.Bytes / 2
		if c.Source != memlimit.Machine {
			limit = c.Bytes / 10 * 9
		}
	}
	if opt.MemoryBudget == 0 {
		opt.MemoryBudget = limit / 2
	}
	if opt.MemoryBudget > limit {
		return 0, &MemoryError{Budget: opt.MemoryBudget, Limit: limit}
	}
	return limit, nil
}

// listen binds Addr, refusing an address beyond loopback without a token
// unless AllowNoToken.
func (opt *RunOptions) listen() (net.Listener, error) {
	ln, err := listenTCP(opt.Addr)
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se // "bind: address already in use", without the address again
		}
		return nil, &OptionError{Field: "Addr", Err: err}
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() && opt.Token == "" && !opt.AllowNoToken {
		ln.Close()
		return nil, &OptionError{Field: "Addr", Err: ErrNoToken}
	}
	return ln, nil
}

// listenTCP listens on addr with plain TCP, not the multipath TCP Go
// listens with by default where the kernel has it: a multipath listener
// takes no socket filter, and the drain on shutdown filters new connection
// requests (see refuseHandshakes). Clients gain nothing from multipath
// here.
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// MemoryReserve is the part of a memory limit kept from the Go runtime's
// soft limit for what the runtime does not count but the kernel does: the
// program's text and data, and the runtime's own lag (it lets the heap
// overshoot rather than spend more than half the CPU collecting). With
// GOGC=400 the heap grows to the runtime's limit before it is collected,
// so the resident set settles that much above it: 30–40 MiB under the
// attack benchmark. An eighth of the limit, from 64 MiB to 256 MiB, and
// never more than a quarter.
func MemoryReserve(limit int64) int64 {
	return min(max(64<<20, limit/8), 256<<20, limit/4)
}

// removeAddrFile removes the address file written at start, unless another
// process has written its own address there since.
func removeAddrFile(path, bound string, log *slog.Logger) {
	b, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(b)) != bound {
		return
	}
	if err := os.Remove(path); err != nil {
		log.Warn("removing the address file", "path", path, "err", err)
	}
}
