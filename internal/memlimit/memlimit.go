// Package memlimit finds the memory a process may use: the lowest limit of
// its cgroup and the cgroup's ancestors (v2 memory.max, or v1
// memory.limit_in_bytes) when one is set, else the machine's memory. The verifier service derives its soft memory limit
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
// the lowest cgroup limit that applies when it is below the machine's
// memory. The process's own cgroup comes from /proc/self/cgroup; its limit
// and every ancestor's bind it, so each is read, up to the hierarchy's root
// (the only one visible inside a container with a cgroup namespace). cgroup
// v2 is read when its hierarchy holds a limit, else v1.
func find(root fs.FS) (Ceiling, error) {
	total, err := memTotal(root)
	if err != nil {
		return Ceiling{}, err
	}
	c := Ceiling{Bytes: total, Source: Machine}
	v2, v1 := ownCgroups(root)
	for _, h := range []struct {
		base, own, file string
		src             Source
	}{
		{"sys/fs/cgroup", v2, "memory.max", CgroupV2},
		{"sys/fs/cgroup/memory", v1, "memory.limit_in_bytes", CgroupV1},
	} {
		found := false
		for _, dir := range ancestors(h.own) {
			p := h.base + dir + "/" + h.file
			b, err := fs.ReadFile(root, p)
			if err != nil {
				continue
			}
			found = true
			s := strings.TrimSpace(string(b))
			if s == "max" {
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return Ceiling{}, fmt.Errorf("memlimit: /%s: %q is not a number of bytes", p, s)
			}
			if n > 0 && n < unlimited && n < c.Bytes {
				c = Ceiling{Bytes: n, Source: h.src}
			}
		}
		if found {
			break
		}
	}
	return c, nil
}

// ownCgroups reads the process's cgroup paths from /proc/self/cgroup: the
// v2 path (line "0::PATH") and the v1 memory controller's. A path missing
// from the file is "".
func ownCgroups(root fs.FS) (v2, v1 string) {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl == "memory" {
				v1 = parts[2]
			}
		}
	}
	return v2, v1
}

// ancestors returns a cgroup path and its ancestors as directory suffixes,
// deepest first, ending with "" (the hierarchy's root): "/a/b" gives
// "/a/b", "/a", "". Paths with "." or ".." elements give the root only.
func ancestors(p string) []string {
	p = strings.TrimRight(p, "/")
	if p == "" || !strings.HasPrefix(p, "/") || strings.Contains(p+"/", "/../") || strings.Contains(p+"/", "/./") {
		return []string{""}
	}
	var out []string
	for p != "" {
		out = append(out, p)
		p = p[:strings.LastIndexByte(p, '/')]
	}
	return append(out, "")
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
