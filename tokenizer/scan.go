package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The split patterns of today's byte-level tokenizers, matched without the
// backtracking engine: each scanner finds exactly the matches the pattern
// finds (FuzzScanners holds them to the engine, and the golden counts to
// tokenizers), several times faster. A pattern not listed here runs on the
// engine.

// Patterns with a scanner of their own.
const (
	// GPT-2's, the split of ByteLevel's use_regex.
	gpt2Regex = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// Llama 3's (and the cl100k family's).
	llama3Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Qwen 2's and later Qwen's: Llama 3's with digits one at a time.
	qwen2Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// scanners maps a pattern to its scanner.
var scanners = map[string]func(string) [][2]int{
	gpt2Regex:   scanGPT2,
	llama3Regex: func(s string) [][2]int { return scanLlama3(s, 3) },
	qwen2Regex:  func(s string) [][2]int { return scanLlama3(s, 1) },
}

// class is what the patterns tell characters apart by: \s, \p{L},
// \p{N}, or none of them; every character is one.
type class uint8

const (
	space class = iota
	letter
	number
	other
)

func classOf(r rune) class {
	switch {
	case r < utf8.RuneSelf:
		return asciiClass[r]
	case unicode.IsLetter(r):
		return letter
	case unicode.IsNumber(r):
		return number
	case unicode.IsSpace(r):
		return space
	}
	return other
}

var asciiClass = func() (t [utf8.RuneSelf]class) {
	for r := range rune(utf8.RuneSelf) {
		switch {
		case unicode.IsLetter(r):
			t[r] = letter
		case unicode.IsNumber(r):
			t[r] = number
		case unicode.IsSpace(r):
			t[r] = space
		default:
			t[r] = other
		}
	}
	return t
}()

func isOther(r rune) bool { return classOf(r) == other }

// runOf is the end of the run of characters of class c from i, and how
// many there are, up to limit (0: no limit).
func runOf(s string, i int, c class, limit int) (end, n int) {
	for i < len(s) && (limit == 0 || n < limit) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b] != c {
				break
			}
			i++
			n++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if classOf(r) != c {
			break
		}
		i += w
		n++
	}
	return i, n
}

// newlinesFrom is the end of the run of \r and \n from i.
func newlinesFrom(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// contraction is the end of a contraction ('s, 't, 're, 've, 'm, 'll,
// 'd) at i, if one starts there; fold matches letters in any case, as (?i)
// does, where ſ is an s.
func contraction(s string, i int, fold bool) (int, bool) {
	if s[i] != '\'' {
		return 0, false
	}
	at := func(j int, lower byte) (int, bool) {
		if j >= len(s) {
			return j, false
		}
		c := s[j]
		if c == lower || fold && c == lower-'a'+'A' {
			return j + 1, true
		}
		if fold && lower == 's' && strings.HasPrefix(s[j:], "ſ") {
			return j + len("ſ"), true
		}
		return j, false
	}
	for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		j, ok := i+1, true
		for k := 0; k < len(c) && ok; k++ {
			j, ok = at(j, c[k])
		}
		if ok {
			return j, true
		}
	}
	return 0, false
}

// spaceRun handles the white space alternatives at i, where a white space
// character starts: with newlines, \s*[\r\n]+ (up to the run's last
// newline); then \s+(?!\S) (the run but its last character, when
// something follows it); then \s+.
func spaceRun(s string, i int, newlines bool) int {
	end, _ := runOf(s, i, space, 0)
	if newlines {
		for j := end; j > i; {
			r, w := utf8.DecodeLastRuneInString(s[:j])
			if r == '\r' || r == '\n' {
				return j
			}
			j -= w
		}
	}
	if end == len(s) {
		return end
	}
	if _, w := utf8.DecodeLastRuneInString(s[:end]); end-w > i {
		return end - w
	}
	return end
}

// scanGPT2 matches gpt2Regex.
func scanGPT2(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		end, ok := contraction(s, i, false)
		if !ok {
			// at the text's end, after a space, r is utf8.RuneError: an
			// other character, whose run from j (the end) is empty, so
			// the match is the space, as \s+ makes it
			r, w := utf8.DecodeRuneInString(s[i:])
			j := i
			if r == ' ' {
				r, _ = utf8.DecodeRuneInString(s[i+w:])
				j = i + w
			}
			switch c := classOf(r); c {
			case letter, number, other:
				end, _ = runOf(s, j, c, 0)
			default: // white space at i (and at j, after a space)
				end = spaceRun(s, i, false)
			}
		}
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}

// scanLlama3 matches llama3Regex, or qwen2Regex with digits 1.
func scanLlama3(s string, digits int) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		end, ok := contraction(s, i, true)
		if !ok {
			end = llama3At(s, i, digits)
		}
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}

// llama3At is the end of the match at i of the alternatives after the
// contractions.
func llama3At(s string, i, digits int) int {
	r, w := utf8.DecodeRuneInString(s[i:])
	c := classOf(r)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c == letter {
		end, _ := runOf(s, i, letter, 0)
		return end
	}
	if r != '\r' && r != '\n' && c != number {
		if next, _ := utf8.DecodeRuneInString(s[i+w:]); classOf(next) == letter { // RuneError at the end
			end, _ := runOf(s, i+w, letter, 0)
			return end
		}
	}
	// \p{N}{1,digits}
	if c == number {
		end, _ := runOf(s, i, number, digits)
		return end
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	// a space at the end, before RuneError (other), ends at the end as
	// \s+ makes it
	j := i
	if r == ' ' {
		if next, _ := utf8.DecodeRuneInString(s[i+w:]); isOther(next) {
			j = i + w
		}
	}
	if first, _ := utf8.DecodeRuneInString(s[j:]); isOther(first) {
		end, _ := runOf(s, j, other, 0)
		return newlinesFrom(s, end)
	}
	return spaceRun(s, i, true)
}
