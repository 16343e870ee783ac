package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// cpuSample is the CPU time (user + system) used so far by this process
// and, when its pid is known (Linux), by the server.
type cpuSample struct {
	self, server time.Duration
	serverOK     bool
}

func sampleCPU(serverPID int) cpuSample {
	var s cpuSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if serverPID > 0 {
		if d, err := procCPU(serverPID); err == nil {
			s.server, s.serverOK = d, true
		}
	}
	return s
}

// procCPU reads utime + stime of a process from /proc/PID/stat, in clock
// ticks of 1/100 s (USER_HZ is 100 on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; fields resume after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// After ')': state(0) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12).
	ut, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	st, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// cpuWindow samples CPU at from and at to, in the background.
type cpuWindow struct {
	done   chan struct{}
	s0, s1 cpuSample
}

func watchCPU(serverPID int, from, to time.Time) *cpuWindow {
	w := &cpuWindow{done: make(chan struct{})}
	go func() {
		time.Sleep(time.Until(from))
		w.s0 = sampleCPU(serverPID)
		time.Sleep(time.Until(to))
		w.s1 = sampleCPU(serverPID)
		close(w.done)
	}()
	return w
}

// cpuUse is the CPU used in a measured window.
type cpuUse struct {
	ServerCPUS  *float64 `json:"server_cpu_s,omitempty"`
	LoadgenCPUS float64  `json:"loadgen_cpu_s"`
}

func (w *cpuWindow) use() cpuUse {
	<-w.done
	u := cpuUse{LoadgenCPUS: (w.s1.self - w.s0.self).Seconds()}
	if w.s0.serverOK && w.s1.serverOK {
		v := (w.s1.server - w.s0.server).Seconds()
		u.ServerCPUS = &v
	}
	return u
}

func (u cpuUse) String(secs float64) string {
	s := fmt.Sprintf("loadgen used %.2f cores", u.LoadgenCPUS/secs)
	if u.ServerCPUS != nil {
		s = fmt.Sprintf("server used %.2f cores, ", *u.ServerCPUS/secs) + s
	}
	return s
}
