package splits

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenizerWords(t *testing.T) {
	def := DefaultTextNorm()
	withNumbers := def
	withNumbers.Numbers = true
	for _, tt := range []struct {
		name, text string
		norm       TextNorm
		want       string   // NormalizeWords
		spans      []string // the words' original text
	}{
		{"case and punctuation", "Hello, World!", def, "hello world", []string{"Hello", "World"}},
		{"white space runs", "  a\t\tb\n\nc  ", def, "a b c", []string{"a", "b", "c"}},
		{"numbers kept", "In 1,000 years, 3.14", def, "in 1 000 years 3 14", []string{"In", "1", "000", "years", "3", "14"}},
		{"numbers folded as datatrove", "In 1,000 years, 3.14", withNumbers, "in 0 years 0", []string{"In", "1,000", "years", "3.14"}},
		{"accents and compatibility forms", "Zoë Ｚｏｅ ﬁne", def, "zoe zoe fine", []string{"Zoë", "Ｚｏｅ", "ﬁne"}},
		{"curly quotes and dashes", "“Jan.—Feb.” 2019", def, "jan feb 2019", []string{"Jan", "Feb", "2019"}},
		{"symbols are separators", "$5 × 3°C", def, "5 3 c", []string{"5", "3", "C"}},
		{"punctuation kept when off", "Hello, World!", TextNorm{Lowercase: true}, "hello, world!", []string{"Hello,", "World!"}},
		{"case kept when off", "Hello World", TextNorm{Punctuation: true}, "Hello World", []string{"Hello", "World"}},
		{"accents kept when off", "Zoë", TextNorm{Lowercase: true}, "zoë", []string{"Zoë"}},
		{"empty", " \n ", def, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tk := NewTokenizer(tt.norm)
			assert.Equal(t, tt.want, tk.NormalizeWords(tt.text))
			var spans []string
			for _, w := range tk.Words(nil, tt.text) {
				spans = append(spans, tt.text[w.Start:w.End])
			}
			assert.Equal(t, tt.spans, spans)
		})
	}
}

func TestTokenizerSameWordsSameHashes(t *testing.T) {
	tk := NewTokenizer(DefaultTextNorm())
	hashes := func(s string) []uint64 {
		var h []uint64
		for _, w := range tk.Words(nil, s) {
			h = append(h, w.Hash)
		}
		return h
	}
	assert.Equal(t, hashes("when did the war end"), hashes("WHEN, did \"the\" war... END?"))
	assert.NotEqual(t, hashes("when did the war end"), hashes("when did the war start"))
}

func TestParseTextNorm(t *testing.T) {
	n, err := ParseTextNorm("lowercase, numbers")
	require.NoError(t, err)
	assert.Equal(t, TextNorm{Lowercase: true, Numbers: true}, n)
	assert.Equal(t, "lowercase,numbers", n.String())
	n, err = ParseTextNorm("none")
	require.NoError(t, err)
	assert.Equal(t, TextNorm{}, n)
	assert.Equal(t, "none", n.String())
	assert.Equal(t, "lowercase,punctuation,unicode", DefaultTextNorm().String())
	_, err = ParseTextNorm("lowercase,stemming")
	assert.ErrorContains(t, err, `unknown step "stemming"`)
}

func TestEachWordRunRolls(t *testing.T) {
	tk := NewTokenizer(DefaultTextNorm())
	words := tk.Words(nil, "a b c d e")
	for _, tt := range []struct {
		k    int
		runs []string
	}{
		{1, []string{"a", "b", "c", "d", "e"}},
		{2, []string{"a b", "b c", "c d", "d e"}},
		{3, []string{"a b c", "b c d", "c d e"}},
		{5, []string{"a b c d e"}},
		{6, nil},
	} {
		var got []uint64
		eachWordRun(words, tt.k, func(key uint64, at int) bool {
			// The rolled key is the key of the run's words hashed afresh.
			assert.Equal(t, runKey(runHash(words[at:at+tt.k]), tt.k), key)
			got = append(got, key)
			return true
		})
		var want []uint64
		for _, r := range tt.runs {
			w := tk.Words(nil, r)
			want = append(want, runKey(runHash(w), len(w)))
		}
		assert.Equal(t, want, got, "k=%d", tt.k)
	}
	// A run and an n-gram of other lengths never share a key by
	// construction; nor do two orders of the same words.
	ab, ba := tk.Words(nil, "a b"), tk.Words(nil, "b a")
	assert.NotEqual(t, runKey(runHash(ab), 2), runKey(runHash(ba), 2))
	assert.Equal(t, 2, findRun(words, 2, runKey(runHash(tk.Words(nil, "c d")), 2)))
	assert.Equal(t, -1, findRun(words, 2, runKey(runHash(ba), 2)))
}

// FuzzTokenizer: words lie inside the text, in order and apart, and the
// normalised text has the same words (normalising is idempotent).
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"Hello, World!", "In 1,000 years, 3.14", "Zoë Ｚｏｅ ﬁne", "“Jan.—Feb.”", "a\xffb", "x̃ ½ ² Ⅻ İ K", "1.2.3,4"} {
		f.Add(s, uint8(15))
	}
	f.Fuzz(func(t *testing.T, text string, steps uint8) {
		n := TextNorm{Lowercase: steps&1 != 0, Punctuation: steps&2 != 0, Numbers: steps&4 != 0, Unicode: steps&8 != 0}
		tk := NewTokenizer(n)
		words := tk.Words(nil, text)
		last := int32(0)
		for _, w := range words {
			if w.Start < last || w.End <= w.Start || int(w.End) > len(text) {
				t.Fatalf("%+v: word [%d, %d) out of order in %q", n, w.Start, w.End, text)
			}
			last = w.End
		}
		norm := tk.NormalizeWords(text)
		if !utf8.ValidString(text) {
			return // invalid bytes become U+FFFD, which is a separator; offsets were checked
		}
		again := tk.Words(nil, norm)
		if len(again) != len(words) {
			t.Fatalf("%+v: %q has %d words, its normal form %q has %d", n, text, len(words), norm, len(again))
		}
		for i := range words {
			if words[i].Hash != again[i].Hash {
				t.Fatalf("%+v: word %d of %q hashes apart from its normal form in %q", n, i, text, norm)
			}
		}
	})
}
