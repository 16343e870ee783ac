package tokenizer

import (
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/stretchr/testify/require"
)

// engineMatches are the matches of expr in s on the backtracking engine.
func engineMatches(t *testing.T, re *regexp2.Regexp, s string) [][2]int {
	idx, err := re.FindAllStringIndex(s, -1)
	require.NoError(t, err)
	var out [][2]int
	for _, m := range idx {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

var scanSeeds = []string{
	"", " ", "a", "it's IT'S it'ſ we'Re THEY'VE i'M you'LL he'D 'x '", "  x", "   x", "\t\tx", " \n x", "a \r\n \n  b",
	"x  ", "x\n", "\n\n\nx", " \r", "\r\n", " 12345 678", "٣٤٥ ①② ²", "!!! ?? ...\n\n", " !x", " 'x", "''s",
	"日本語 テキスト", "e\u0301 é", "a\u00a0b\u3000c\u2028d\u0085e", "🙂 🙂\n🙂", "x\u200by", "\x00\x1f\x7f", "A1b2C3",
	"'ſx", "'rſx", "'ſ", "x'Ls", "'LL", "'lL'", "'veX", "'RE", "' ", "'", " '", "x '",
}

// FuzzScanners: each scanner finds exactly the matches its pattern finds
// on the engine that runs every other pattern.
func FuzzScanners(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	for _, g := range readGolden(f)[:300] {
		f.Add(g.Text)
	}
	res := map[string]*regexp2.Regexp{}
	for expr := range scanners {
		res[expr] = regexp2.MustCompile(expr)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // Count makes its text valid first
		}
		for expr, scan := range scanners {
			require.Equal(t, engineMatches(t, res[expr], s), scan(s), "%s on %q", expr, s)
		}
	})
}
