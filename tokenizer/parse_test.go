package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// minimal is a tokenizer.json with a model of two characters and one
// merge, into which the cases put their component.
func minimal(normalizer, preTokenizer, model, added string) string {
	if model == "" {
		model = `{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}`
	}
	if added == "" {
		added = "[]"
	}
	return `{"added_tokens":` + added + `,"normalizer":` + normalizer + `,"pre_tokenizer":` + preTokenizer + `,"model":` + model + `}`
}

// TestParseErrors: a file that cannot be counted as tokenizers would is
// refused, naming the field and what is wrong, never read differently.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"not JSON", `{"model":`, "not a tokenizer.json: invalid JSON at byte 9: the text ends inside a value"},
		{"an array", `[1]`, "not a tokenizer.json: want an object, got a list"},
		{"no model", `{"normalizer":null}`, "model: missing"},
		{"WordPiece", minimal("null", "null", `{"type":"WordPiece","vocab":{"a":0}}`, ""), "model: type: the WordPiece model is not read here (only BPE)"},
		{"Unigram", minimal("null", "null", `{"type":"Unigram","vocab":[["a",0]]}`, ""), "the Unigram model is not read here"},
		{"dropout", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[],"dropout":0.1}`, ""), "model: dropout: 0.1: BPE dropout"},
		{"empty vocab", minimal("null", "null", `{"type":"BPE","vocab":{},"merges":[]}`, ""), "model: vocab: missing or empty"},
		{"vocab of strings", minimal("null", "null", `{"type":"BPE","vocab":{"a":"x"},"merges":[]}`, ""), `model: vocab.a: want a whole number, got "x"`},
		{"unknown unk", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"<unk>"}`, ""), `model: unk_token: "<unk>" is not in the vocab`},
		{"merge of three", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[["a","a","a"]]}`, ""), "model: merges[0]: 3 tokens: want 2"},
		{"merge string", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":["aa"]}`, ""), `model: merges[0]: "aa": want two tokens with one space between`},
		{"merge number", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[7]}`, ""), `model: merges[0]: want ["a", "b"] or "a b"`},
		{"merge outside the vocab", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[["a","c"]]}`, ""), `model: merges[0]: "a" or "c" is not in the vocab`},
		{"merged token outside the vocab", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[["a","a"]]}`, ""), `model: merges[0]: the merged token "aa" is not in the vocab`},
		{"BertNormalizer", minimal(`{"type":"BertNormalizer"}`, "null", "", ""), "normalizer: the BertNormalizer normalizer is not read here (only Sequence, NFC"},
		{"Precompiled in a sequence", minimal(`{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Precompiled"}]}`, "null", "", ""), "normalizer.normalizers[1]: the Precompiled normalizer is not read here"},
		{"normalizer without type", minimal(`{}`, "null", "", ""), "normalizer: no type"},
		{"Replace without pattern", minimal(`{"type":"Replace","content":"x"}`, "null", "", ""), `normalizer.pattern: want {"String": …} or {"Regex": …}`},
		{"bad regex", minimal(`{"type":"Replace","pattern":{"Regex":"(a"},"content":"x"}`, "null", "", ""), `normalizer.pattern: the regular expression "(a"`},
		{"Whitespace", minimal("null", `{"type":"Sequence","pretokenizers":[{"type":"ByteLevel"},{"type":"Whitespace"}]}`, "", ""), "pre_tokenizer.pretokenizers[1]: the Whitespace pre-tokenizer is not read here (only Sequence, ByteLevel, Split, Metaspace, Digits)"},
		{"split behavior", minimal("null", `{"type":"Split","pattern":{"String":" "},"behavior":"Merged"}`, "", ""), `pre_tokenizer.behavior: "Merged": want Removed, Isolated`},
		{"split pattern both", minimal("null", `{"type":"Split","pattern":{"String":" ","Regex":" "},"behavior":"Isolated"}`, "", ""), "pre_tokenizer.pattern: want"},
		{"metaspace replacement", minimal("null", `{"type":"Metaspace","replacement":"__"}`, "", ""), `pre_tokenizer.replacement: "__": want one character`},
		{"metaspace scheme", minimal("null", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"sometimes"}`, "", ""), `pre_tokenizer.prepend_scheme: "sometimes": want always, first or never`},
		{"pre-tokenizer without type", minimal("null", `{"type":""}`, "", ""), "pre_tokenizer: no type"},
		{"added without content", minimal("null", "null", "", `[{"id":3,"content":""}]`), "added_tokens[0] (id 3): no content"},
		{"added of wrong shape", minimal("null", "null", "", `{"id":3}`), "not a tokenizer.json: added_tokens: want a list, got an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "json.", "no Go type names")
		})
	}
}

// TestLoadNamesThePath: Load's errors start with the file's path.
func TestLoadNamesThePath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tokenizer.json")
	require.NoError(t, os.WriteFile(p, []byte(minimal("null", `{"type":"Punctuation"}`, "", "")), 0o644))
	_, err := Load(p)
	require.ErrorContains(t, err, p+": pre_tokenizer: the Punctuation pre-tokenizer is not read here")
	_, err = Load(filepath.Join(dir, "missing.json"))
	require.ErrorContains(t, err, "missing.json: no such file or directory")
}

// TestCountSmall: counts worked by hand on small tokenizers, one for each
// rule the golden tokenizers may not isolate (each checked once with
// tokenizers 0.22.2, from_str of the same JSON).
func TestCountSmall(t *testing.T) {
	cases := []struct {
		name, json, text string
		want             int
	}{
		{"merges by rank", minimal("null", "null", "", ""), "abab", 2},
		{"no merge", minimal("null", "null", "", ""), "ba", 2},
		{"unknown characters dropped without unk, then merged across", minimal("null", "null", "", ""), "axb", 1},
		{"unknown fused", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"<unk>":1},"merges":[],"unk_token":"<unk>","fuse_unk":true}`, ""), "axyza", 3},
		{"unknown not fused", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"<unk>":1},"merges":[],"unk_token":"<unk>"}`, ""), "axyza", 5},
		{"byte fallback", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"<0xC3>":1,"<0xA9>":2},"merges":[],"byte_fallback":true}`, ""), "aéa", 4},
		{"byte fallback missing a byte is unknown", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"<unk>":1,"<0xC3>":2},"merges":[],"byte_fallback":true,"unk_token":"<unk>"}`, ""), "aéa", 3},
		{"ignore_merges takes a whole word", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"b":1,"bab":2},"merges":[],"ignore_merges":true}`, ""), "bab", 1},
		{"added tokens count one each", minimal("null", "null", "", `[{"id":9,"content":"<x>"}]`), "ab<x>ab<x>", 4},
		{"added tokens take the longest", minimal("null", "null", "", `[{"id":9,"content":"<x"},{"id":10,"content":"<xy>"}]`), "a<xy>", 2},
		{"empty text", minimal("null", "null", "", ""), "", 0},
		{"invalid UTF-8 as U+FFFD", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"\ufffd":1},"merges":[]}`, ""), "a\xffa", 3},
		{"continuing_subword_prefix", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"b":1,"##a":2,"##b":3,"ab":4,"abb":5},"merges":[["a","##b"],["ab","##b"]],"continuing_subword_prefix":"##"}`, ""), "abbabab", 5},
		{"end_of_word_suffix", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"b":1,"a</w>":2,"b</w>":3,"ab</w>":4},"merges":[["a","b</w>"]],"end_of_word_suffix":"</w>"}`, ""), "abab", 3},
		{"equal ranks merge leftmost first", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"aa":1,"aaa":2},"merges":[["a","a"],["aa","a"]]}`, ""), "aaa", 1},
		{"equal ranks, five", minimal("null", "null", `{"type":"BPE","vocab":{"a":0,"aa":1,"aaa":2},"merges":[["a","a"],["aa","a"]]}`, ""), "aaaaa", 2},
		{"dropout 0 is none", minimal("null", "null", `{"type":"BPE","vocab":{"a":0},"merges":[],"dropout":0.0}`, ""), "aa", 2},
		{"empty matches leave no split", minimal("null", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\d*"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":true,"use_regex":false}]}`,
			`{"type":"BPE","vocab":{"a":0,"b":1,"1":2,"Ġ":3,"Ġa":4},"merges":[]}`, ""), "ab1a", 8},
		{"Metaspace first after a split", minimal("null", `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\d+"},"behavior":"Isolated","invert":false},{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":false}]}`,
			`{"type":"BPE","vocab":{"a":0,"b":1,"1":2,"▁":3,"c":4},"merges":[]}`, ""), "1ab1c", 6},
		{"one-byte added tokens", minimal("null", "null", "", `[{"id":7,"content":"§"},{"id":8,"content":"x"}]`), "axbx§a", 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Parse([]byte(tc.json))
			require.NoError(t, err)
			n, err := tok.Count(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
		})
	}
}

// FuzzParse: no file makes Parse or Count panic.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, p := range paths[:3] {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(minimal(`{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Lowercase"}]}`,
		`{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`, "", `[{"id":9,"content":"<x>","lstrip":true,"rstrip":true,"single_word":true}]`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range []string{"", "a", " ab <x> ba\n\n", "日本 123"} {
			n, err := tok.Count(s)
			if err == nil && n < 0 {
				t.Fatalf("%q: %d tokens", s, n)
			}
		}
	})
}

// FuzzCount: on the byte-level tokenizers of testdata, any text counts at
// least one token if it has any byte and no more than it has bytes (each
// byte is a character of the vocabulary), and the same each time.
func FuzzCount(f *testing.F) {
	for _, g := range readGolden(f)[:200] {
		f.Add(g.Text)
	}
	toks := loadAll(f)
	byteLevel := []string{"gpt2", "llama3", "qwen2", "o200k", "deepseek"}
	f.Fuzz(func(t *testing.T, text string) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		for _, name := range byteLevel {
			n, err := toks[name].Count(text)
			require.NoError(t, err)
			again, _ := toks[name].Count(text)
			require.Equal(t, n, again)
			if len(text) == 0 {
				require.Zero(t, n)
				continue
			}
			require.GreaterOrEqual(t, n, 1, "%s: %q", name, text)
			require.LessOrEqual(t, n, len(text)+utf8.RuneCountInString(text), "%s: %q", name, text)
		}
	})
}
