// Package suggest finds what a user most likely meant by a mistyped name
// (a flag, a config key, an environment variable) among the names there
// are, for the "did you mean" of an error or a warning.
package suggest

import (
	"slices"
	"strings"
)

// Closest returns the candidates a user most likely meant by typed: those
// within a small edit distance (transpositions count once), the closest
// first; failing those, the ones typed is a prefix of. Nothing when no
// candidate is close: a far-fetched guess misleads more than it helps.
func Closest(typed string, candidates []string) []string {
	limit := max(1, min(3, len(typed)/4))
	best := limit
	var out, prefixed []string
	for _, c := range candidates {
		if c == typed {
			continue
		}
		if len(typed) >= 3 && strings.HasPrefix(c, typed) {
			prefixed = append(prefixed, c)
		}
		switch d := Distance(typed, c); {
		case d > best:
		case d < best || len(out) == 0:
			best, out = d, []string{c}
		default:
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = prefixed
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DidYouMean is "; did you mean X?" (or "X or Y?") for the suggestions of
// typed among candidates, each shown through show; empty when there are none.
func DidYouMean(typed string, candidates []string, show func(string) string) string {
	s := Closest(typed, candidates)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = show(s[i])
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// Distance is the optimal string alignment distance of two strings'
// bytes: insertions, deletions, substitutions and swaps of neighbours each
// cost one, so "inptu" is one edit from "input".
func Distance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
