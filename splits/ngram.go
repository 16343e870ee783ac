package splits

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TextNorm says how the contamination check normalises a text before it
// cuts it into words. The zero value only splits on white space; the
// default (DefaultTextNorm) lower-cases, turns punctuation into spaces and
// folds Unicode compatibility forms and accents, and keeps numbers.
type TextNorm struct {
	// Lowercase compares words case-insensitively (Unicode lower case).
	Lowercase bool `json:"lowercase"`
	// Punctuation turns punctuation and symbols (Unicode P* and S*) into
	// spaces, so that "2019," and "2019" are one word and "Jan.-Feb." two.
	Punctuation bool `json:"punctuation"`
	// Numbers folds every number (a run of digits, with single '.' or ','
	// between digits, as in 3.14 or 1,000,000) to 0, as datatrove does. Off by
	// default: in temporal questions the years and dates are what tell
	// two questions apart.
	Numbers bool `json:"numbers"`
	// Unicode applies the compatibility decomposition (NFKD: fullwidth
	// letters, ligatures, superscripts) and drops combining marks
	// (accents), so that "Zoë", "Zoe" and "Ｚｏｅ" are one word.
	Unicode bool `json:"unicode"`
}

// DefaultTextNorm returns the contamination check's default normalisation:
// lower case, punctuation and symbols to spaces, Unicode NFKD without
// accents; numbers kept.
func DefaultTextNorm() TextNorm {
	return TextNorm{Lowercase: true, Punctuation: true, Unicode: true}
}

// Names of the TextNorm steps, as --normalize lists them.
const (
	NormLowercase   = "lowercase"
	NormPunctuation = "punctuation"
	NormNumbers     = "numbers"
	NormUnicode     = "unicode"
)

// ParseTextNorm reads a comma-separated list of the steps to apply
// (lowercase, punctuation, numbers, unicode), or "none".
func ParseTextNorm(s string) (TextNorm, error) {
	var t TextNorm
	for _, step := range SplitList(s) {
		switch strings.ToLower(step) {
		case NormLowercase:
			t.Lowercase = true
		case NormPunctuation:
			t.Punctuation = true
		case NormNumbers:
			t.Numbers = true
		case NormUnicode:
			t.Unicode = true
		case PresetNone:
		default:
			return t, fmt.Errorf("unknown step %q (want a list of %s, %s, %s, %s, or none)", step,
				NormLowercase, NormPunctuation, NormNumbers, NormUnicode)
		}
	}
	return t, nil
}

// String lists the steps, as ParseTextNorm reads them.
func (t TextNorm) String() string {
	var steps []string
	for _, s := range []struct {
		on   bool
		name string
	}{{t.Lowercase, NormLowercase}, {t.Punctuation, NormPunctuation}, {t.Numbers, NormNumbers}, {t.Unicode, NormUnicode}} {
		if s.on {
			steps = append(steps, s.name)
		}
	}
	if len(steps) == 0 {
		return PresetNone
	}
	return strings.Join(steps, ",")
}

// Word is one word of a text: the hash of its normalised form and where
// it is in the original text (byte offsets, End exclusive).
type Word struct {
	Hash       uint64
	Start, End int32
}

// Byte classes of the tokeniser's ASCII fast path.
const (
	tkLetter = iota // a-z and anything else kept as is
	tkUpper         // A-Z
	tkDigit         // 0-9
	tkSpace         // white space and control characters: always a separator
	tkPunct         // ASCII punctuation and symbols
	tkMulti         // first byte of a multi-byte (or invalid) UTF-8 sequence
)

var tokClass = func() (t [256]uint8) {
	for c := range 256 {
		t[c] = byteClass(c)
	}
	return t
}()

// byteClass is the class of byte c for the tokeniser's ASCII fast path.
func byteClass(c int) uint8 {
	if c >= utf8.RuneSelf {
		return tkMulti
	}
	if 'A' <= c && c <= 'Z' {
		return tkUpper
	}
	if '0' <= c && c <= '9' {
		return tkDigit
	}
	if c <= ' ' || c == 0x7f {
		return tkSpace
	}
	if 'a' <= c && c <= 'z' {
		return tkLetter
	}
	return tkPunct
}

// Tokenizer cuts texts into words under one TextNorm. It keeps scratch
// space between calls: one per goroutine.
type Tokenizer struct {
	norm TextNorm
	// folded caches the normalised form of non-ASCII runes ("" when the
	// rune is a separator).
	folded map[rune]string
}

// NewTokenizer returns a Tokenizer for t.
func NewTokenizer(t TextNorm) *Tokenizer {
	return &Tokenizer{norm: t, folded: map[rune]string{}}
}

// wordHasher hashes a word's normalised bytes (FNV-1a, mixed at the end).
type wordHasher struct {
	h     uint64
	start int
	open  bool
	zero  bool // the last byte was a folded number: the next number joins it
}

// Words appends the words of text to dst. A word is a maximal run of
// characters that are not separators after normalisation; its hash is
// that of its normalised bytes, so two texts that normalise alike give
// the same hashes, and its offsets cover the original characters.
func (tk *Tokenizer) Words(dst []Word, text string) []Word {
	var w wordHasher
	end := func(at int) {
		if w.open {
			dst = append(dst, Word{Hash: mix64(w.h), Start: int32(w.start), End: int32(at)})
			w.open = false
		}
	}
	add := func(at int, b byte) {
		if !w.open {
			w = wordHasher{h: fnvOffset64, start: at, open: true}
		}
		w.h = (w.h ^ uint64(b)) * fnvPrime64
		w.zero = false
	}
	// addZero adds a folded number: numbers in a row fold to one 0.
	addZero := func(at int) {
		if !w.open || !w.zero {
			add(at, '0')
			w.zero = true
		}
	}
	n := tk.norm
	for i := 0; i < len(text); {
		c := text[i]
		switch tokClass[c] {
		case tkLetter:
			// The common case, a run of bytes kept as they are, hashed
			// without a call per byte.
			if !w.open {
				w = wordHasher{h: fnvOffset64, start: i, open: true}
			}
			h := w.h
			for ; i < len(text) && tokClass[text[i]] == tkLetter; i++ {
				h = (h ^ uint64(text[i])) * fnvPrime64
			}
			w.h, w.zero = h, false
		case tkUpper:
			if n.Lowercase {
				c += 'a' - 'A'
			}
			add(i, c)
			i++
		case tkSpace:
			end(i)
			i++
		case tkPunct:
			if n.Punctuation {
				end(i)
			} else {
				add(i, c)
			}
			i++
		case tkDigit:
			if !n.Numbers {
				add(i, c)
				i++
				continue
			}
			addZero(i)
			i = numberEnd(text, i)
		case tkMulti:
			r, size := utf8.DecodeRuneInString(text[i:])
			f, ok := tk.folded[r]
			if !ok {
				f = tk.fold(r)
				tk.folded[r] = f
			}
			if f == "" {
				end(i)
			} else if n.Numbers && f == "0" {
				addZero(i)
			} else {
				for k := 0; k < len(f); k++ {
					add(i, f[k])
				}
			}
			i += size
		}
	}
	end(len(text))
	return dst
}

// numberEnd returns the end of the ASCII number that starts at i: digits,
// then any groups of one '.' or ',' and more digits (3.14, 1,000,000; one
// number where datatrove's pattern would see 1,000 and ,000).
func numberEnd(text string, i int) int {
	digits := func(i int) int {
		for i < len(text) && '0' <= text[i] && text[i] <= '9' {
			i++
		}
		return i
	}
	i = digits(i)
	for i+1 < len(text) && (text[i] == '.' || text[i] == ',') && '0' <= text[i+1] && text[i+1] <= '9' {
		i = digits(i + 1)
	}
	return i
}

// fold is the normalised form of a non-ASCII rune: "" for a separator,
// "0" for a digit when numbers fold, else its UTF-8 bytes after the
// TextNorm's steps.
func (tk *Tokenizer) fold(r rune) string {
	n := tk.norm
	if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
		return ""
	}
	runes := []rune{r}
	if n.Unicode {
		runes = []rune(norm.NFKD.String(string(r)))
	}
	var b strings.Builder
	for _, r := range runes {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return "" // a compatibility form with a space in it is a separator
		case n.Unicode && unicode.Is(unicode.Mn, r):
			continue
		case n.Punctuation && (unicode.IsPunct(r) || unicode.IsSymbol(r)):
			return ""
		case n.Numbers && unicode.IsDigit(r):
			return "0"
		case n.Lowercase:
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NormalizeWords returns the normalised words of text joined by single
// spaces: what the contamination check compares, for reading.
func (tk *Tokenizer) NormalizeWords(text string) string {
	var b strings.Builder
	for i, w := range tk.Words(nil, text) {
		if i > 0 {
			b.WriteByte(' ')
		}
		tk.appendWord(&b, text[w.Start:w.End])
	}
	return b.String()
}

// appendWord writes the normalised form of one word's original text.
func (tk *Tokenizer) appendWord(b *strings.Builder, word string) {
	n := tk.norm
	zero := false
	for i := 0; i < len(word); {
		c := word[i]
		wasZero := zero
		zero = false
		switch tokClass[c] {
		case tkUpper:
			if n.Lowercase {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
		case tkDigit:
			if n.Numbers {
				if !wasZero {
					b.WriteByte('0')
				}
				zero = true
				i = numberEnd(word, i)
				continue
			}
			b.WriteByte(c)
			i++
		case tkMulti:
			r, size := utf8.DecodeRuneInString(word[i:])
			f := tk.fold(r)
			if n.Numbers && f == "0" {
				if !wasZero {
					b.WriteByte('0')
				}
				zero = true
			} else {
				b.WriteString(f)
			}
			i += size
		default:
			b.WriteByte(c)
			i++
		}
	}
}

// ngramBase is the multiplier of the n-gram rolling hash.
const ngramBase = 0x9E3779B97F4A7C15 | 1

// runKey turns the rolling hash of k words into an index key: the length
// is mixed in, so that a run of k words and an n-gram never share a key
// by construction.
func runKey(h uint64, k int) uint64 { return mix64(h + uint64(k)*0xD6E8FEB86659FD93) }

// pow returns ngramBase^k (mod 2^64).
func ngramPow(k int) uint64 {
	p := uint64(1)
	for range k {
		p *= ngramBase
	}
	return p
}

// runHash is the rolling hash of words (before runKey).
func runHash(words []Word) uint64 {
	var h uint64
	for _, w := range words {
		h = h*ngramBase + w.Hash
	}
	return h
}

// eachWordRun calls f with the key of every run of k consecutive words and
// the index of its first word, rolling the hash: one multiply-add per
// word, no allocation. f returns false to stop.
func eachWordRun(words []Word, k int, f func(key uint64, at int) bool) {
	if k <= 0 || len(words) < k {
		return
	}
	top := ngramPow(k - 1)
	h := runHash(words[:k])
	if !f(runKey(h, k), 0) {
		return
	}
	for i := k; i < len(words); i++ {
		h = (h-words[i-k].Hash*top)*ngramBase + words[i].Hash
		if !f(runKey(h, k), i-k+1) {
			return
		}
	}
}

// appendRunKeys appends the keys of every run of k consecutive words, in
// order (eachWordRun without the call per run).
func appendRunKeys(dst []uint64, words []Word, k int) []uint64 {
	if k <= 0 || len(words) < k {
		return dst
	}
	top := ngramPow(k - 1)
	h := runHash(words[:k])
	dst = append(dst, runKey(h, k))
	for i := k; i < len(words); i++ {
		h = (h-words[i-k].Hash*top)*ngramBase + words[i].Hash
		dst = append(dst, runKey(h, k))
	}
	return dst
}

// findRun returns the index of the first run of k words in words whose
// key is key, or -1.
func findRun(words []Word, k int, key uint64) int {
	at := -1
	eachWordRun(words, k, func(got uint64, i int) bool {
		if got == key {
			at = i
			return false
		}
		return true
	})
	return at
}
