package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// golden is a text of testdata/texts.jsonl and the number of tokens each
// tokenizer of testdata made of it, counted by Hugging Face's tokenizers
// (testdata/make.py).
type golden struct {
	Text   string         `json:"text"`
	Counts map[string]int `json:"counts"`
}

func readGolden(t testing.TB) []golden {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "texts.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []golden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g golden
		require.NoError(t, json.Unmarshal(sc.Bytes(), &g))
		out = append(out, g)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// loadAll loads every tokenizer of testdata by name.
func loadAll(t testing.TB) map[string]*Tokenizer {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	out := map[string]*Tokenizer{}
	for _, p := range paths {
		tok, err := Load(p)
		require.NoError(t, err, p)
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = tok
	}
	return out
}

// TestCountsAgreeWithTokenizers holds every tokenizer of testdata to the
// counts Hugging Face's tokenizers made of every text.
func TestCountsAgreeWithTokenizers(t *testing.T) {
	toks := loadAll(t)
	texts := readGolden(t)
	names := make([]string, 0, len(toks))
	for name := range toks {
		names = append(names, name)
	}
	sort.Strings(names)
	require.Len(t, texts[0].Counts, len(names), "testdata/texts.jsonl counts a tokenizer the directory lacks, or the other way round")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			bad := 0
			for i, g := range texts {
				want, ok := g.Counts[name]
				require.True(t, ok, "texts.jsonl line %d has no count for %s", i+1, name)
				got, err := toks[name].Count(g.Text)
				require.NoError(t, err)
				if got != want {
					bad++
					if bad <= 10 {
						t.Errorf("line %d %q: %d tokens, tokenizers counts %d", i+1, g.Text, got, want)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts counted differently", bad, len(texts))
			}
		})
	}
}
