package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// spinArg makes the command a busy loop (startLoad runs it so, followed by
// its own pid).
const spinArg = "-busy-loop"

// startLoad starts n busy loops, each a process of its own; stopLoad ends
// them.
func startLoad(n int) ([]*os.Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("busy loops: %w", err)
	}
	var procs []*os.Process
	for range n {
		cmd := exec.Command(self, spinArg, strconv.Itoa(os.Getpid()))
		if err := cmd.Start(); err != nil {
			stopLoad(procs)
			return nil, fmt.Errorf("busy loops: %w", err)
		}
		procs = append(procs, cmd.Process)
	}
	return procs, nil
}

func stopLoad(procs []*os.Process) {
	for _, p := range procs {
		_ = p.Kill()
		_, _ = p.Wait()
	}
}

// sink keeps the loop's sum alive.
var sink uint64

// spin keeps one CPU busy until the process that started it, parent, is
// gone: it looks up its parent every few milliseconds, so that a stress run
// killed without a chance to stop its loops leaves none behind. The parent
// is named, not looked up at the start, since it may be gone by then.
func spin(parent int) {
	for {
		for i := range uint64(1 << 22) {
			sink += i ^ sink>>3
		}
		if os.Getppid() != parent {
			return
		}
	}
}
