package rewards

import (
	"math"
	"strconv"
	"strings"
)

// This file is ported to bench/serve/reference.py; a change of behaviour
// here needs the same change there (python/tests/interop/test_reward_reference.py
// compares the two).
//
// Whitespace, case folding and every delimiter are ASCII-only, so scanning
// bytes here and code points in Python give identical results on valid UTF-8.

const (
	ansSpace    = " \t\n\r\v\f"
	ansLineLead = ansSpace + "*#>-"
	ansLead     = ansSpace + "*:"
	ansTrail    = ansSpace + "*"
)

// ExtractAnswer returns the final answer of a model response, trimmed of
// ASCII whitespace, and whether one was found. An empty answer counts as not
// found. It runs in time linear in len(response) and never panics.
//
// With a non-empty tag, the answer is the content of the last <tag>…</tag>
// pair (the last closing tag and the nearest opening tag before it); when
// that content holds a \boxed{…} or \fbox{…}, the answer is the content of the
// last of them instead.
//
// With an empty tag, the first of these rules that applies decides:
//  1. the content of the last \boxed{…} or \fbox{…} in the response;
//  2. the text after the colon of the last line that starts with
//     "MY ANSWER:" (case-insensitive);
//  3. the text after "final answer is" on the last line holding it, or
//     after a leading "Answer:" or "Final answer:" (case-insensitive), on the
//     last line having either.
//
// A line may start with whitespace and Markdown marks (* # > -) before its
// label. Text taken from a line loses leading colons and surrounding
// asterisks, and one trailing period.
//
// Braces match with TeX escapes honoured (\{ and \} are not group braces).
// When the last \boxed{ (or \fbox{) has no matching brace, no answer is
// found: an earlier balanced one is not used.
func ExtractAnswer(response, tag string) (string, bool) {
	if tag != "" {
		j := strings.LastIndex(response, "</"+tag+">")
		if j < 0 {
			return "", false
		}
		i := strings.LastIndex(response[:j], "<"+tag+">")
		if i < 0 {
			return "", false
		}
		body := response[i+len(tag)+2 : j]
		if box, found := ansLastBoxed(body); found {
			return ansNonEmpty(box)
		}
		return ansNonEmpty(ansTrimSpace(body))
	}
	if box, found := ansLastBoxed(response); found {
		return ansNonEmpty(box)
	}
	if ans, found := ansLastLabelLine(response, false); found {
		return ansNonEmpty(ans)
	}
	if ans, found := ansLastLabelLine(response, true); found {
		return ansNonEmpty(ans)
	}
	return "", false
}

func ansNonEmpty(s string) (string, bool) { return s, s != "" }

// ansLastBoxed reports whether s holds \boxed{ or \fbox{ and returns the trimmed
// content of the last one, or "" when its brace is unmatched.
func ansLastBoxed(s string) (string, bool) {
	k, n := strings.LastIndex(s, `\boxed{`), len(`\boxed{`)
	if f := strings.LastIndex(s, `\fbox{`); f > k {
		k, n = f, len(`\fbox{`)
	}
	if k < 0 {
		return "", false
	}
	open := k + n - 1
	end := ansMatchBrace(s, open)
	if end < 0 {
		return "", true
	}
	return ansTrimSpace(s[open+1 : end]), true
}

// ansMatchBrace returns the index of the brace closing the one at s[open], or
// -1. A backslash escapes the byte after it.
func ansMatchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ansLastLabelLine scans lines from the end for "MY ANSWER:" (final false) or
// for the final-answer phrasings (final true) and returns the cleaned text
// after the label of the last matching line.
func ansLastLabelLine(s string, final bool) (string, bool) {
	end := len(s)
	for end >= 0 {
		start := strings.LastIndexByte(s[:end], '\n') + 1
		line := s[start:end]
		if final {
			if k := ansLastIndexFold(line, "final answer is"); k >= 0 {
				return ansCleanLabelled(line[k+len("final answer is"):]), true
			}
		}
		t := strings.TrimLeft(line, ansLineLead)
		if !final && ansHasPrefixFold(t, "my answer:") {
			return ansCleanLabelled(t[len("my answer:"):]), true
		}
		if final && ansHasPrefixFold(t, "answer:") {
			return ansCleanLabelled(t[len("answer:"):]), true
		}
		if final && ansHasPrefixFold(t, "final answer:") {
			return ansCleanLabelled(t[len("final answer:"):]), true
		}
		end = start - 1
	}
	return "", false
}

func ansCleanLabelled(s string) string {
	s = strings.TrimRight(strings.TrimLeft(s, ansLead), ansTrail)
	if strings.HasSuffix(s, ".") {
		s = strings.TrimRight(s[:len(s)-1], ansTrail)
	}
	return s
}

func ansLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func ansIsLetter(c byte) bool { return 'a' <= ansLower(c) && ansLower(c) <= 'z' }

func ansIsDigit(c byte) bool { return '0' <= c && c <= '9' }

// ansHasPrefixFold is strings.HasPrefix with ASCII case folding; prefix is lower case.
func ansHasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && ansEqualFold(s[:len(prefix)], prefix)
}

// ansLastIndexFold is strings.LastIndex with ASCII case folding; sub is lower case.
func ansLastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if ansLower(s[i]) == sub[0] && ansEqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// ansEqualFold reports whether a and b are equal under ASCII case folding only.
func ansEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if ansLower(a[i]) != ansLower(b[i]) {
			return false
		}
	}
	return true
}

// EqualAnswers reports whether a predicted answer equals the reference. It
// is symmetric, never panics, and is true for EqualAnswers(x, x) exactly
// when x does not normalise to the empty string (an empty answer equals
// nothing).
//
// Both sides are normalised first: surrounding whitespace, $…$, $$…$$, \(…\),
// \[…\], \boxed{…}, \fbox{…} and a trailing period are stripped; \text{…},
// \textbf{…}, \textit{…}, \textrm{…}, \mathrm{…}, \mathbf{…}, \mbox{…},
// \boxed{…} and \fbox{…} are replaced by their content wherever they occur;
// \left and \right (as delimiters), \displaystyle, thin spaces (\! \, \; \:),
// ~, dollar signs (\$ and $), ^\circ, ^{\circ} and ° are dropped; \dfrac and
// \tfrac become \frac, \% becomes %, {,} becomes a comma and U+2212 a
// hyphen-minus; then all whitespace is removed, a leading single-letter
// assignment ("x=") is dropped, and "(B)" becomes "B" for a single letter.
//
// When both normalised sides are numbers they compare numerically, equal
// when |a−b| ≤ 1e-12·max(1, |a|, |b|) (so integers up to 10^12 compare
// exactly). Numbers are an optional sign followed
// by a decimal (12, -0.50, .5, 1e3, 2.5E-3), a fraction of decimals (3/4,
// 3/-4), or \frac with braced or single-character arguments (\frac{3}{4},
// \frac34, -\frac{1}{2}, \frac{-1}{2}); a trailing % makes a percentage.
// Commas are thousands separators only when every group after the first has
// exactly three digits ("1,000" and "12,345.5" are numbers; "1,00" and
// "1,2" are not), and "1.000" is the number 1. A percentage p% equals a
// plain number equal to p or to p/100; two percentages compare their p.
// A zero denominator or a non-finite value is not a number.
//
// Otherwise the normalised strings are compared with ASCII case folding.
func EqualAnswers(pred, ref string) bool {
	a, b := ansNormalizeAnswer(pred), ansNormalizeAnswer(ref)
	if a == "" || b == "" {
		return false
	}
	x, xPct, xOK := ansParseNumber(a)
	y, yPct, yOK := ansParseNumber(b)
	if xOK && yOK {
		switch {
		case xPct == yPct:
			return ansCloseEnough(x, y)
		case xPct:
			return ansCloseEnough(y, x) || ansCloseEnough(y, x/100)
		default:
			return ansCloseEnough(x, y) || ansCloseEnough(x, y/100)
		}
	}
	return ansEqualFold(a, b)
}

func ansCloseEnough(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*max(1, math.Abs(a), math.Abs(b))
}

// ansNormalizeAnswer returns the comparison form of an answer described at
// EqualAnswers.
func ansNormalizeAnswer(s string) string {
	s = ansStripOuter(s)
	s = ansUnwrapCommands(s)
	s = ansDropLeftRight(s)
	s = ansReplaceTokens(s)
	s = ansStripOuter(s)
	s = ansRemoveSpace(s)
	if len(s) > 2 && ansIsLetter(s[0]) && s[1] == '=' {
		s = s[2:]
	}
	if len(s) == 3 && s[0] == '(' && s[2] == ')' && ansIsLetter(s[1]) {
		s = s[1:2]
	}
	return s
}

// ansStripOuter repeatedly trims whitespace, one trailing period and one
// enclosing $$…$$, $…$, \(…\), \[…\], \boxed{…} or \fbox{…}.
//
// An if-else chain rather than a switch: Go's coverage profile leaves case
// expressions outside every block, so mutation testing (gremlins) would
// count the mutants of these conditions as not covered.
func ansStripOuter(s string) string {
	for {
		s = ansTrimSpace(s)
		n := len(s)
		if n > 0 && s[n-1] == '.' {
			s = s[:n-1]
		} else if n >= 4 && strings.HasPrefix(s, "$$") && strings.HasSuffix(s, "$$") {
			s = s[2 : n-2]
		} else if n >= 2 && s[0] == '$' && s[n-1] == '$' {
			s = s[1 : n-1]
		} else if n >= 4 && (strings.HasPrefix(s, `\(`) && strings.HasSuffix(s, `\)`) ||
			strings.HasPrefix(s, `\[`) && strings.HasSuffix(s, `\]`)) {
			s = s[2 : n-2]
		} else if strings.HasPrefix(s, `\boxed{`) && ansMatchBrace(s, len(`\boxed{`)-1) == n-1 {
			s = s[len(`\boxed{`) : n-1]
		} else if strings.HasPrefix(s, `\fbox{`) && ansMatchBrace(s, len(`\fbox{`)-1) == n-1 {
			s = s[len(`\fbox{`) : n-1]
		} else {
			return s
		}
	}
}

// ansWrappers are the commands ansUnwrapCommands replaces by their argument.
var ansWrappers = []string{`\text{`, `\textbf{`, `\textit{`, `\textrm{`, `\mathrm{`, `\mathbf{`, `\mbox{`, `\boxed{`, `\fbox{`}

// ansUnwrapCommands replaces every wrapper command whose brace is matched by
// the content of its group.
func ansUnwrapCommands(s string) string {
	if strings.IndexByte(s, '\\') < 0 || !ansContainsAny(s, ansWrappers) {
		return s
	}
	match := make([]int, len(s))
	stack := make([]int, 0, 8)
	for i := 0; i < len(s); i++ {
		match[i] = -1
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				match[i+1] = -1
			}
			i++
		case '{':
			stack = append(stack, i)
		case '}':
			if len(stack) > 0 {
				match[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
			}
		}
	}
	const dropped = -2
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			wrapped := false
			for _, w := range ansWrappers {
				if strings.HasPrefix(s[i:], w) {
					if j := i + len(w) - 1; match[j] >= 0 {
						match[match[j]] = dropped
						i = j + 1
						wrapped = true
					}
					break
				}
			}
			if !wrapped {
				e := min(i+2, len(s))
				out = append(out, s[i:e]...)
				i = e
			}
			continue
		}
		if s[i] != '}' || match[i] != dropped {
			out = append(out, s[i])
		}
		i++
	}
	return string(out)
}

func ansContainsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// ansDropLeftRight removes \left and \right when no letter follows (so
// \leftarrow stays).
func ansDropLeftRight(s string) string {
	if !strings.Contains(s, `\left`) && !strings.Contains(s, `\right`) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if n := ansLeftRightAt(s, i); n > 0 {
			i += n
			continue
		}
		out = append(out, s[i])
		i++
	}
	return string(out)
}

func ansLeftRightAt(s string, i int) int {
	for _, w := range [...]string{`\left`, `\right`} {
		if strings.HasPrefix(s[i:], w) && (i+len(w) == len(s) || !ansIsLetter(s[i+len(w)])) {
			return len(w)
		}
	}
	return 0
}

// ansReplaceTokens makes these replacements in one left-to-right pass that
// does not rescan replaced text (no two of them match at the same place):
//
//	\dfrac, \tfrac  → \frac
//	\%              → %
//	{,}             → ,
//	U+2212          → -
//	\displaystyle, \! \, \; \:, \$, $, ^{\circ}, ^\circ, °, ~ → removed
func ansReplaceTokens(s string) string {
	var out []byte
	copied := 0
	for i := 0; i < len(s); i++ {
		n, repl := ansTokenAt(s[i:])
		if n == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		out = append(append(out, s[copied:i]...), repl...)
		copied = i + n
		i = copied - 1
	}
	if out == nil {
		return s
	}
	return string(append(out, s[copied:]...))
}

// ansTokenAt returns the length and replacement of the token s starts with.
func ansTokenAt(s string) (int, string) {
	switch s[0] {
	case '\\':
		if len(s) < 2 {
			return 0, ""
		}
		switch s[1] {
		case '!', ',', ';', ':', '$':
			return 2, ""
		case '%':
			return 2, "%"
		case 'd':
			if strings.HasPrefix(s, `\dfrac`) {
				return len(`\dfrac`), `\frac`
			}
			if strings.HasPrefix(s, `\displaystyle`) {
				return len(`\displaystyle`), ""
			}
		case 't':
			if strings.HasPrefix(s, `\tfrac`) {
				return len(`\tfrac`), `\frac`
			}
		}
	case '$', '~':
		return 1, ""
	case '^':
		if strings.HasPrefix(s, `^{\circ}`) {
			return len(`^{\circ}`), ""
		}
		if strings.HasPrefix(s, `^\circ`) {
			return len(`^\circ`), ""
		}
	case '{':
		if strings.HasPrefix(s, "{,}") {
			return 3, ","
		}
	case "°"[0]:
		if strings.HasPrefix(s, "°") {
			return len("°"), ""
		}
	case "\u2212"[0]:
		if strings.HasPrefix(s, "\u2212") {
			return len("\u2212"), "-"
		}
	}
	return 0, ""
}

func ansIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// ansTrimSpace trims ASCII whitespace; strings.TrimSpace would trim Unicode
// spaces too.
func ansTrimSpace(s string) string {
	for len(s) > 0 && ansIsSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && ansIsSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func ansRemoveSpace(s string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		switch {
		case !ansIsSpace(s[i]):
			if out != nil {
				out = append(out, s[i])
			}
		case out == nil:
			out = append(make([]byte, 0, len(s)), s[:i]...)
		}
	}
	if out == nil {
		return s
	}
	return string(out)
}

// ansParseNumber parses a normalised answer as described at EqualAnswers.
func ansParseNumber(s string) (v float64, pct, ok bool) {
	if strings.HasSuffix(s, "%") {
		s, pct = s[:len(s)-1], true
	}
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s, neg = s[1:], s[0] == '-'
	}
	switch {
	case strings.HasPrefix(s, `\frac`):
		num, rest, ok1 := ansFracArg(s[len(`\frac`):])
		den, rest, ok2 := ansFracArg(rest)
		if !ok1 || !ok2 || rest != "" {
			return 0, false, false
		}
		v, ok = ansRatio(num, den)
	case strings.IndexByte(s, '/') >= 0 && strings.IndexByte(s, '/') == strings.LastIndexByte(s, '/'):
		k := strings.IndexByte(s, '/')
		v, ok = ansRatio(s[:k], s[k+1:])
	default:
		v, ok = ansPlainNumber(s)
	}
	if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, false
	}
	if neg {
		v = -v
	}
	return v, pct, true
}

// ansFracArg splits one \frac argument, braced or a single byte, off s.
func ansFracArg(s string) (arg, rest string, ok bool) {
	switch {
	case s == "" || s[0] == '\\':
		return "", "", false
	case s[0] == '{':
		end := ansMatchBrace(s, 0)
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+1:], true
	}
	return s[:1], s[1:], true
}

func ansRatio(num, den string) (float64, bool) {
	a, ok1 := ansSignedNumber(num)
	b, ok2 := ansSignedNumber(den)
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return a / b, true
}

func ansSignedNumber(s string) (float64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s, neg = s[1:], s[0] == '-'
	}
	v, ok := ansPlainNumber(s)
	if neg {
		v = -v
	}
	return v, ok
}

// ansPlainNumber parses an unsigned decimal, [0-9]+(.[0-9]*)? or .[0-9]+ with
// an optional exponent, or a comma-grouped [0-9]{1,3}(,[0-9]{3})+(.[0-9]*)?.
func ansPlainNumber(s string) (float64, bool) {
	if strings.IndexByte(s, ',') >= 0 {
		return ansGroupedNumber(s)
	}
	i := 0
	for i < len(s) && ansIsDigit(s[i]) {
		i++
	}
	digits := i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && ansIsDigit(s[i]) {
			i++
		}
		digits += i - fracStart
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && ansIsDigit(s[i]) {
			i++
		}
		if i == start {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	// The grammar is a subset of ParseFloat's; its only error is ErrRange,
	// whose ±Inf or ±0 result is what Python's float() gives.
	v, _ := strconv.ParseFloat(s, 64)
	return v, true
}

func ansGroupedNumber(s string) (float64, bool) {
	intPart, frac, hasFrac := strings.Cut(s, ".")
	first, groups, _ := strings.Cut(intPart, ",")
	if len(first) < 1 || len(first) > 3 || !ansAllDigits(first) {
		return 0, false
	}
	var buf [64]byte
	b := append(buf[:0], first...)
	for more := true; more; {
		var g string
		g, groups, more = strings.Cut(groups, ",")
		if len(g) != 3 || !ansAllDigits(g) {
			return 0, false
		}
		b = append(b, g...)
	}
	if hasFrac {
		if !ansAllDigits(frac) {
			return 0, false
		}
		b = append(append(b, '.'), frac...)
	}
	v, _ := strconv.ParseFloat(string(b), 64)
	return v, true
}

func ansAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !ansIsDigit(s[i]) {
			return false
		}
	}
	return true
}
