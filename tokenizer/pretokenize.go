package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// preTokenizer is one of tokenizer.json's pre-tokenizers: it cuts each
// split into smaller ones, or rewrites it.
type preTokenizer interface {
	apply(in []split) ([]split, error)
}

// preTokenizerTypes are the pre-tokenizers read, for the error that names
// the others.
const preTokenizerTypes = "Sequence, ByteLevel, Split, Metaspace, Digits"

// parsePreTokenizer reads the pre-tokenizer at field, a Sequence flattened
// into its steps; null is none.
func parsePreTokenizer(raw json.RawMessage, field string) ([]preTokenizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var head struct {
		Type             string            `json:"type"`
		PreTokenizers    []json.RawMessage `json:"pretokenizers"`
		AddPrefixSpace   *bool             `json:"add_prefix_space"`
		UseRegex         *bool             `json:"use_regex"`
		Pattern          json.RawMessage   `json:"pattern"`
		Behavior         string            `json:"behavior"`
		Invert           bool              `json:"invert"`
		Replacement      string            `json:"replacement"`
		PrependScheme    string            `json:"prepend_scheme"`
		Split            *bool             `json:"split"`
		IndividualDigits bool              `json:"individual_digits"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, jsonscan.Explain(field, raw, err)
	}
	switch head.Type {
	case "Sequence":
		var out []preTokenizer
		for i, r := range head.PreTokenizers {
			steps, err := parsePreTokenizer(r, fmt.Sprintf("%s.pretokenizers[%d]", field, i))
			if err != nil {
				return nil, err
			}
			out = append(out, steps...)
		}
		return out, nil
	case "ByteLevel":
		// tokenizers' defaults: add_prefix_space true, use_regex true.
		return []preTokenizer{byteLevel{prefixSpace: head.AddPrefixSpace == nil || *head.AddPrefixSpace,
			regex: head.UseRegex == nil || *head.UseRegex}}, nil
	case "Split":
		p, err := parsePattern(head.Pattern, field+".pattern")
		if err != nil {
			return nil, err
		}
		b, err := parseBehavior(head.Behavior, field+".behavior")
		if err != nil {
			return nil, err
		}
		return []preTokenizer{splitter{find: p.find, behavior: b, invert: head.Invert}}, nil
	case "Metaspace":
		return parseMetaspace(head.Replacement, head.PrependScheme, head.AddPrefixSpace, head.Split, field)
	case "Digits":
		b := contiguous
		if head.IndividualDigits {
			b = isolated
		}
		return []preTokenizer{splitter{find: eachRune(unicode.IsNumber), behavior: b}}, nil
	case "":
		return nil, fmt.Errorf("%s: no type", field)
	}
	return nil, fmt.Errorf("%s: the %s pre-tokenizer is not read here (only %s): its count could differ from the tokenizer's", field, head.Type, preTokenizerTypes)
}

// behavior is what a Split does with the pattern's matches.
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s, field string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("%s: %q: want Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous", field, s)
}

// eachRune finds every character for which is holds, each a match of its
// own.
func eachRune(is func(rune) bool) func(string) ([][2]int, error) {
	return func(s string) ([][2]int, error) {
		var out [][2]int
		for i, r := range s {
			if is(r) {
				out = append(out, [2]int{i, i + utf8.RuneLen(r)})
			}
		}
		return out, nil
	}
}

// piece is a range of a split, and whether it is a match of the pattern.
type piece struct {
	start, end int
	match      bool
}

// splitter cuts each split at the matches of find, keeping them as its
// behavior says.
type splitter struct {
	find     func(string) ([][2]int, error)
	behavior behavior
	invert   bool
}

func (sp splitter) apply(in []split) ([]split, error) {
	out := make([]split, 0, len(in))
	for _, x := range in {
		m, err := sp.find(x.s)
		if err != nil {
			return nil, err
		}
		ps := pieces(len(x.s), m, sp.invert)
		for _, p := range sp.keep(ps) {
			if p.end > p.start {
				out = append(out, split{x.s[p.start:p.end], x.first && p.start == 0})
			}
		}
	}
	return out, nil
}

// pieces covers [0, n) with the matches m and the ranges between them.
func pieces(n int, m [][2]int, invert bool) []piece {
	ps := make([]piece, 0, 2*len(m)+1)
	prev := 0
	for _, r := range m {
		if r[0] > prev {
			ps = append(ps, piece{prev, r[0], invert})
		}
		ps = append(ps, piece{r[0], r[1], !invert})
		prev = r[1]
	}
	if prev < n {
		ps = append(ps, piece{prev, n, invert})
	}
	return ps
}

// keep applies the behavior to pieces, giving the ranges kept.
func (sp splitter) keep(ps []piece) []piece {
	var out []piece
	switch sp.behavior {
	case removed:
		for _, p := range ps {
			if !p.match {
				out = append(out, p)
			}
		}
	case isolated:
		out = ps
	case mergedWithPrevious:
		prevMatch := false
		for _, p := range ps {
			if p.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(ps) - 1; i >= 0; i-- {
			p := ps[i]
			if p.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = p.start
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case contiguous:
		prevMatch := false
		for _, p := range ps {
			if p.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
	}
	return out
}

// gpt2Pattern is the split of ByteLevel's use_regex: GPT-2's.
var gpt2Pattern = &pattern{scan: scanGPT2}

// byteChars maps each byte to the character that stands for it in a
// byte-level vocabulary (GPT-2's table): printable Latin-1 bytes stand
// for themselves, the others for the characters from U+0100 on.
var byteChars = func() (t [256]rune) {
	next := rune(256)
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
			t[b] = rune(b)
		} else {
			t[b] = next
			next++
		}
	}
	return t
}()

// byteLevel is the ByteLevel pre-tokenizer: an optional space before each
// split, GPT-2's split, then each byte written as its character. As the
// last step (mapLater) it leaves the bytes as they are: the count is the
// same, and the tokenizer writes a split's characters only when its count
// is not cached.
type byteLevel struct{ prefixSpace, regex, mapLater bool }

func (bl byteLevel) apply(in []split) ([]split, error) {
	out := in
	if bl.prefixSpace {
		out = make([]split, len(in))
		for i, x := range in {
			out[i] = x
			if !strings.HasPrefix(x.s, " ") {
				out[i].s = " " + x.s
			}
		}
	}
	if bl.regex {
		var err error
		if out, err = (splitter{find: gpt2Pattern.find, behavior: isolated}).apply(out); err != nil {
			return nil, err
		}
	}
	if bl.mapLater {
		return out, nil
	}
	res := make([]split, len(out))
	for i, x := range out {
		res[i] = split{byteString(x.s), x.first}
	}
	return res, nil
}

// byteString writes each byte of s as its character.
func byteString(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for j := 0; j < len(s); j++ {
		b.WriteRune(byteChars[s[j]])
	}
	return b.String()
}

// metaspace is the Metaspace pre-tokenizer: spaces become the replacement
// character, which is put before the text as the scheme says, and the
// text is cut before each replacement when split is set.
type metaspace struct {
	replacement string
	scheme      string // always, first or never
	split       bool
	cut         splitter
}

func parseMetaspace(replacement, scheme string, addPrefixSpace, split *bool, field string) ([]preTokenizer, error) {
	rs := []rune(replacement)
	if len(rs) != 1 {
		return nil, fmt.Errorf("%s.replacement: %q: want one character", field, replacement)
	}
	switch scheme {
	case "":
		// files older than prepend_scheme: add_prefix_space, true by default
		scheme = "always"
		if addPrefixSpace != nil && !*addPrefixSpace {
			scheme = "never"
		}
	case "always", "first", "never":
	default:
		return nil, fmt.Errorf("%s.prepend_scheme: %q: want always, first or never", field, scheme)
	}
	r := rs[0]
	return []preTokenizer{metaspace{replacement: replacement, scheme: scheme, split: split == nil || *split,
		cut: splitter{find: eachRune(func(c rune) bool { return c == r }), behavior: mergedWithNext}}}, nil
}

func (m metaspace) apply(in []split) ([]split, error) {
	out := make([]split, len(in))
	for i, x := range in {
		s := strings.ReplaceAll(x.s, " ", m.replacement)
		if !strings.HasPrefix(s, m.replacement) && (m.scheme == "always" || (m.scheme == "first" && x.first)) {
			s = m.replacement + s
		}
		out[i] = split{s, x.first}
	}
	if !m.split {
		return out, nil
	}
	return m.cut.apply(out)
}
