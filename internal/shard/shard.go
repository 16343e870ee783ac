// Package shard is the one way a command splits its work into n shards that
// separate processes run and that together cover every item once: by the
// item's id (FNV-1a hash, for inputs read in any order) or by its index (for
// generated rows, numbered from 0).
package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
)

// Shard selects shard Index (0-based) of Count. The zero value, like any
// Count of 1 or less, selects everything.
type Shard struct{ Index, Count int }

// Parse reads "i/n" with 0 ≤ i < n. Its errors say what is wanted, not
// the value: the caller names it (--shard 5/4: ...).
func Parse(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || fmt.Sprintf("%d/%d", sh.Index, sh.Count) != s {
		return Shard{}, errors.New("want i/n, such as 0/4")
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return Shard{}, errors.New("want i/n with 0 <= i < n")
	}
	return sh, nil
}

// Validate reports a shard that Parse would not have made (set by hand in
// an option struct).
func (s Shard) Validate() error {
	if s.Count > 1 && (s.Index < 0 || s.Index >= s.Count) {
		return fmt.Errorf("shard %d/%d: want 0 <= i < n", s.Index, s.Count)
	}
	return nil
}

// HasID reports whether the item with this id belongs to the shard.
func (s Shard) HasID(id string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}

// HasIndex reports whether the item numbered i belongs to the shard (a
// negative i counts back from 0: -1 is in the last shard).
func (s Shard) HasIndex(i int64) bool {
	n := int64(s.Count)
	return n <= 1 || ((i%n)+n)%n == int64(s.Index)
}

// Rows is how many of the indices start, …, start+count-1 the shard holds.
func (s Shard) Rows(start, count int64) int64 {
	if s.Count <= 1 {
		return count
	}
	m := int64(s.Count)
	// The first index of the shard at or after start, then every m-th.
	first := start + ((int64(s.Index)-start)%m+m)%m
	if first >= start+count {
		return 0
	}
	return (start+count-1-first)/m + 1
}
