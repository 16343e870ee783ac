package conversation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONArguments(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{name: "empty", in: "", want: ""},
		{name: "json kept byte for byte", in: `{"a": 1,  "b": [true]}`, want: `{"a": 1,  "b": [true]}`},
		{name: "python dict", in: `{'location': 'Malibu Beach'}`, want: `{"location":"Malibu Beach"}`},
		{name: "python constants and tuple", in: `{'ok': True, 'no': False, 'none': None, 'pair': (1, 2.5,)}`,
			want: `{"ok":true,"no":false,"none":null,"pair":[1,2.5]}`},
		{name: "quotes of the other kind inside", in: `{'q': "it's", 'r': 'say "hi"'}`, want: `{"q":"it's","r":"say \"hi\""}`},
		{name: "escapes", in: `{'s': 'a\'b\\c\n\x41\u00e9\U0001F600'}`, want: `{"s":"a'b\\c\nAé😀"}`},
		{name: "html characters stay", in: `{'s': '<a&b>'}`, want: `{"s":"<a&b>"}`},
		{name: "nested list, trailing commas", in: `{'xs': [{'a': -1}, [], {},], }`, want: `{"xs":[{"a":-1},[],{}]}`},
		{name: "numbers", in: `{'a': +3, 'b': 1_000, 'c': .5, 'd': 1e3}`, want: `{"a":3,"b":1000,"c":0.5,"d":1e3}`},
		{name: "non-string key", in: `{1: 'a'}`, err: "a dict key must be a string"},
		{name: "free text", in: `location=Malibu`, err: "neither JSON nor a Python literal"},
		{name: "unterminated", in: `{'a': 'b`, err: "unterminated string"},
		{name: "trailing junk", in: `{'a': 1} x`, err: "unexpected 'x'"},
		{name: "identifier, not a constant", in: `{'a': Trueish}`, err: "unexpected 'T'"},
		{name: "bad escape", in: `{'a': '\q'}`, err: `unsupported escape \q`},
		{name: "surrogate escape", in: `{'a': '\ud800'}`, err: `bad escape \ud800`},
		{name: "missing colon", in: `{'a' 1}`, err: "want ':'"},
		{name: "missing comma", in: `[1 2]`, err: "want ',' or ']'"},
		{name: "not a number", in: `{'a': 1.2.3}`, err: "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSONArguments(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestJSONArgumentsDepth(t *testing.T) {
	deep := ""
	for range maxLiteralDepth + 2 {
		deep += "["
	}
	_, err := JSONArguments(deep + "1")
	require.ErrorContains(t, err, "nested deeper than 64")
}

// FuzzJSONArguments: whatever the input, the result is valid JSON, and JSON
// or blank input comes back unchanged.
func FuzzJSONArguments(f *testing.F) {
	for _, s := range []string{`{'a': [1, (2,), None]}`, `{"a": 1}`, `'x\u00e9'`, `{'k': 'v', }`, `1_0e-3`, "{'a': '\\x4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := JSONArguments(s)
		if err != nil {
			return
		}
		if json.Valid([]byte(s)) || strings.TrimSpace(s) == "" {
			require.Equal(t, s, got)
			return
		}
		require.True(t, json.Valid([]byte(got)), "%q gave %q", s, got)
	})
}
