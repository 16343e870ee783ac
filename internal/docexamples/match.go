package docexamples

import (
	"fmt"
	"strings"
)

// Ellipsis is the output line that stands for any number of lines.
const Ellipsis = "..."

// lines splits output into lines without trailing white space, dropping
// trailing blank lines, the way a reader compares two terminal outputs.
func lines(s string) []string {
	ls := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " \t")
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// Match reports whether got is the output want shows, where a want line of
// exactly "..." matches any run of lines (none included). On a mismatch the
// string says where the two part, line by line.
func Match(want, got string) (bool, string) {
	w, g := lines(want), lines(got)
	if matchFrom(w, g) {
		return true, ""
	}
	return false, describe(w, g)
}

// matchFrom matches w against g with "..." lines as wildcards, by dynamic
// programming over (i, j): ok[i][j] is whether w[i:] matches g[j:].
func matchFrom(w, g []string) bool {
	next := make([]bool, len(g)+1) // row i+1
	cur := make([]bool, len(g)+1)
	next[len(g)] = true // empty want matches empty got
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g); j >= 0; j-- {
			switch {
			case w[i] == Ellipsis:
				// skip nothing, or one line and stay
				cur[j] = next[j] || (j < len(g) && cur[j+1])
			case j < len(g) && w[i] == g[j]:
				cur[j] = next[j+1]
			default:
				cur[j] = false
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// describe names the first line where want and got part, ignoring "..."
// (it shows where the literal lines begin to differ, which is what a reader
// fixing the doc needs).
func describe(w, g []string) string {
	var b strings.Builder
	i, j := 0, 0
	for i < len(w) && j < len(g) && w[i] != Ellipsis && w[i] == g[j] {
		i++
		j++
	}
	switch {
	case i < len(w) && w[i] == Ellipsis:
		fmt.Fprintf(&b, "output line %d on does not match the doc's lines after its \"...\" (line %d of the block)\n", j+1, i+1)
	case i < len(w) && j < len(g):
		fmt.Fprintf(&b, "line %d differs:\n  doc: %s\n  got: %s\n", i+1, w[i], g[j])
	case i < len(w):
		fmt.Fprintf(&b, "the output ends before line %d of the doc: %s\n", i+1, w[i])
	default:
		fmt.Fprintf(&b, "the output goes on after the doc's last line: %s\n", g[j])
	}
	b.WriteString("full output:\n")
	for _, l := range g {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
