// Package memlimit finds the memory a process may use: the limit of its
// cgroup (v2 memory.max, or v1 memory.limit_in_bytes) when one is set, else
// the machine's memory. The verifier service derives its soft memory limit
// (what GOMEMLIMIT would set) and its request-memory budget from it, so that
// under attack it sheds requests before the kernel kills it.
package memlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// unlimited is what a cgroup without a limit reports (v1 rounds
// math.MaxInt64 down to a page; v2 writes "max").
const unlimited = 1 << 62

// Source says where a Ceiling came from.
type Source string

// The sources of a ceiling.
const (
	CgroupV2 Source = "cgroup v2 memory.max"
	CgroupV1 Source = "cgroup v1 memory.limit_in_bytes"
	Machine  Source = "machine MemTotal"
)

// Ceiling is the memory available to the process, in bytes, and its source.
type Ceiling struct {
	Bytes  int64
	Source Source
}

// Find reads the ceiling from the host's /sys and /proc.
func Find() (Ceiling, error) { return find(os.DirFS("/")) }

// find reads the ceiling from root (a file system rooted like /), taking
// the cgroup limit when it is set and below the machine's memory.
func find(root fs.FS) (Ceiling, error) {
	total, err := memTotal(root)
	if err != nil {
		return Ceiling{}, err
	}
	c := Ceiling{Bytes: total, Source: Machine}
	for _, f := range []struct {
		path string
		src  Source
	}{
		{"sys/fs/cgroup/memory.max", CgroupV2},
		{"sys/fs/cgroup/memory/memory.limit_in_bytes", CgroupV1},
	} {
		b, err := fs.ReadFile(root, f.path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Ceiling{}, fmt.Errorf("memlimit: /%s: %q is not a number of bytes", f.path, s)
		}
		if n > 0 && n < unlimited && n < c.Bytes {
			c = Ceiling{Bytes: n, Source: f.src}
		}
		break
	}
	return c, nil
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal(root fs.FS) (int64, error) {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("memlimit: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, errors.New("memlimit: /proc/meminfo has no MemTotal line in kB")
}
