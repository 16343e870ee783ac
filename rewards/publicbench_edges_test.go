package rewards

import (
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPythonCharacterClasses: the character classes of the SQuAD
// normalisation at their edges: string.punctuation, re's \w and
// str.split's white space.
func TestPythonCharacterClasses(t *testing.T) {
	const punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" // Python's string.punctuation
	for r := rune(0); r < 0x80; r++ {
		assert.Equal(t, strings.ContainsRune(punctuation, r), isASCIIPunct(r), "%q", r)
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
		assert.Equal(t, word, pyIsWord(r), "%q", r)
	}
	for _, r := range []rune{'é', 'ß', '東', 'ǅ', '²', 'Ⅻ', '٣'} {
		assert.True(t, pyIsWord(r), "%q", r)
		assert.False(t, isASCIIPunct(r), "%q", r)
	}
	for _, r := range []rune{0x80, 0x301, '—', '«', '、'} {
		assert.False(t, pyIsWord(r), "%q", r)
	}
	for r, want := range map[rune]bool{0x1b: false, 0x1c: true, 0x1f: true, 0x20: true, '!': false, 0x85: true, 0xa0: true, 0x3000: true, 'x': false} {
		assert.Equal(t, want, pyIsSpace(r), "%U", r)
	}
}

// TestFinalSigma: Σ lowers to ς after a cased letter and not before one,
// case-ignorable characters (' . : and marks) skipped on both sides.
func TestFinalSigma(t *testing.T) {
	for in, want := range map[string]string{
		"AΣ":        "aς",
		"Σ":         "σ",
		"'Σ":        "'σ",
		"A'Σ":       "a'ς",
		"A'.Σ":      "a'.ς",
		"AΣ'":       "aς'",
		"AΣ'B":      "aσ'b",
		"AΣ\u0301B": "aσ\u0301b",
		"1Σ":        "1σ",
		"ΑΣ Β":      "ας β",
		"İ":         "i\u0307",
		"ʰΣ":        "ʰσ",
		"ʰAΣ":       "ʰaς",
	} {
		assert.Equal(t, want, pyLower(in), "%q", in)
	}
}

func TestReadOptionLetterForms(t *testing.T) {
	opts := map[string]string{"A": "12 months back", "B": "in the dead of night", "C": "sooner or later"}
	for ans, want := range map[string]string{
		"(B). at night": "B", "(B): at night": "B", "(B)\tat night": "B", "(B) at night": "B",
		"(B)x": "", "optionB": "", "Option: B": "B", "Option": "", "(B": "", "": "", "B:": "B", "B-": "",
	} {
		got, ok := ReadOptionLetter(ans, opts)
		assert.Equal(t, want, got, "%q", ans)
		assert.Equal(t, want != "", ok, "%q", ans)
	}
	az := map[string]string{}
	for c := 'A'; c <= 'Z'; c++ {
		az[string(c)] = "option " + strings.Repeat("x", int(c-'A')+1)
	}
	got, ok := ReadOptionLetter("Z", az)
	assert.True(t, ok)
	assert.Equal(t, "Z", got)
	g, err := parseTRAMGold([]byte(`{"letter": "Z", "options": {"A": "x", "Z": "y"}}`))
	require.NoError(t, err)
	assert.Equal(t, "Z", g.letter)
	g, err = parseTRAMGold([]byte(`{"letter": "A", "options": {"A": "x", "Z": "y"}}`))
	require.NoError(t, err)
	assert.Equal(t, "A", g.letter)
	for _, gt := range []string{`{"letter": "@", "options": {"@": "x"}}`, `{"letter": "[", "options": {"[": "x"}}`, `{"letter": "A", "options": {"A": "x", "[": "y"}}`, `{"letter": "A", "options": {"A": "x", "@": "y"}}`} {
		_, err := parseTRAMGold([]byte(gt))
		assert.Error(t, err, gt)
	}
}

func TestTestOfTimeValues(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, tc := range []struct {
		label, answer string
		correct       float64
	}{
		{`{"answer": -3}`, `{"answer": "-3.0"}`, 1},
		{`{"x": 1000}`, `{"x": "1e3"}`, 1},
		{`{"x": 1000}`, `{"x": "1E3"}`, 1},
		{`{"x": 2}`, `{"x": "+2"}`, 1},
		{`{"x": 16}`, `{"x": "0x10"}`, 0},
		{`{"x": "inf"}`, `{"x": "Infinity"}`, 0},
		{`{"answer": {"a": 1}}`, `{"answer": {"a": 1.0}}`, 1},
		{`{"answer": {"a": 1}}`, `{"answer": {"a": 1, "b": 2}}`, 0},
		{`{"answer": {"a": 1}}`, `{"answer": {"b": 1}}`, 0},
		{`{"answer": {"a": 1}}`, `{"answer": "a"}`, 0},
		{`{"answer": "x"}`, `{"answer": ["x"]}`, 0},
		{`{"answer": null}`, `{"answer": null}`, 1},
		{`{"answer": true}`, `{"answer": "TRUE"}`, 1},
		{`{"answer": "say \"hi\""}`, `{"answer": "say \"HI\""}`, 1},
	} {
		it := item("test_of_time", "JSON: "+tc.answer, `{"kind": "arithmetic", "label": `+tc.label+`}`)
		res := s.Score(context.Background(), &it)
		require.NoError(t, res.Err, tc.label)
		assert.Equal(t, tc.correct, res.Score, "%s against %s", tc.answer, tc.label)
	}
	for _, tc := range []struct {
		label, answer string
		correct       float64
	}{
		{`"1985"`, `{"answer": "1985"}`, 1},
		{`"E1"`, `{"answer": ["E1", ["E2"]]}`, 0},
		{`"E1,E2"`, `{"answer": ["E1", 2]}`, 0},
		{`"E1,2"`, `{"answer": ["E1", 2]}`, 1},
		{`"E1"`, `{"answer": true}`, 0},
		{`"E1"`, `{"answer": {"a": "E1"}}`, 0},
		{`"2"`, `{"answer": "two"}`, 0},
	} {
		it := item("test_of_time", tc.answer, `{"kind": "semantic", "label": {"answer": `+tc.label+`}}`)
		res := s.Score(context.Background(), &it)
		require.NoError(t, res.Err, tc.label)
		assert.Equal(t, tc.correct, res.Score, "%s against %s", tc.answer, tc.label)
	}
}

func TestLastJSONObjectEdges(t *testing.T) {
	for resp, want := range map[string]string{
		`xx {"a": 1] {"answer": "E76"}`:        `"E76"`,
		`{"a": 1] {"answer": "E76"}`:           `"E76"`,
		`{"answer": "a } { \" b"} trailing {`:  `"a } { \" b"`,
		`[{"answer": 1}]`:                      `1`,
		`{"answer": [1, {"b": 2}]}`:            `[1, {"b": 2}]`,
		`{"x": {"answer": 3}`:                  `3`,
		"```json\n{\"answer\": 5}\n```\nDone.": `5`,
	} {
		m, ok := LastJSONObject(resp)
		require.True(t, ok, resp)
		assert.Equal(t, want, string(m["answer"]), resp)
	}
	for _, resp := range []string{"", "{", "}", `{"a": }`, `{'a': 1}`, "[1, 2]", `{"a": 1]`} {
		_, ok := LastJSONObject(resp)
		assert.False(t, ok, resp)
	}
}

// TestLastJSONObjectBudget: brace groups that are not objects cost at
// most jsonScanFactor times the response's length; past that the reader
// gives up, and within it the object is found.
func TestLastJSONObjectBudget(t *testing.T) {
	_, ok := LastJSONObject(strings.Repeat("{", 1000) + `{"answer": 1}`)
	assert.False(t, ok, "a thousand unclosed braces, each read to the end, are past the budget")
	within := strings.Repeat("{"+strings.Repeat("x", 2000), 30) + `{"answer": 1}`
	_, ok = LastJSONObject(within)
	assert.True(t, ok, "30 unclosed braces over 60,000 bytes cost about 900,000 bytes of 1.9 million")
	// 64 unclosed braces before a 127-byte object spend the budget of
	// 32 × 191 + 4096 bytes exactly: the object is not tried.
	exact := strings.Repeat("{", 64) + `{"answer": 1` + strings.Repeat(" ", 114) + "}"
	_, ok = LastJSONObject(exact)
	assert.False(t, ok, "a budget spent exactly")
	_, ok = LastJSONObject(exact[1:])
	assert.True(t, ok, "a byte less")
	past := strings.Repeat("{"+strings.Repeat("x", 2000), 70) + `{"answer": 1}`
	_, ok = LastJSONObject(past)
	assert.False(t, ok, "70 of them cost about 4.9 million of 4.5 million")
}
