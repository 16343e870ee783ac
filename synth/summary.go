package synth

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// CountList writes a summary's count map as "a 2, b 1", keys in order, for
// the lines a family's summary shows; "-" when empty.
func CountList(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+strconv.Itoa(m[k]))
	}
	return strings.Join(parts, ", ")
}

// Counted writes a count with its noun, singular for one: "1 record",
// "3 records".
func Counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
