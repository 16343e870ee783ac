package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScannerErrors(t *testing.T) {
	tests := []struct {
		in   string
		line bool
		want string
	}{
		{`{"a" 1}`, false, `invalid character '1' after object key at byte 6`},
		{`[1,]`, false, `invalid character ']' looking for beginning of value at byte 4`},
		{`"abc`, false, `unexpected end of input`},
		{`"abc`, true, `unexpected end of line`},
		{`[1 2]`, false, `invalid character '2' after array element at byte 4`},
		{`"\x"`, false, `invalid character 'x' in string escape code at byte 3`},
		{`01`, false, ``}, // a number followed by more: SkipValue stops after 0
		{`1.`, false, `unexpected end of input`},
		{`nul`, false, `unexpected end of input`},
		{`{"é":tru}`, false, `invalid character '}' in literal true at byte 10`},
	}
	for _, tc := range tests {
		var s Scanner
		if tc.line {
			s.ResetLine([]byte(tc.in))
		} else {
			s.Reset([]byte(tc.in))
		}
		err := s.SkipValue(0)
		if tc.want == "" {
			require.NoError(t, err, tc.in)
			continue
		}
		require.EqualError(t, err, tc.want, tc.in)
		var se SyntaxError
		assert.ErrorAs(t, err, &se, tc.in)
		if bytes.Contains([]byte(tc.want), []byte("end of")) {
			assert.ErrorIs(t, err, ErrEndOfInput, "%s: both endings are ErrEndOfInput", tc.in)
		}
	}
}

func TestDescribeAndTypeError(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:    "want string, got object",
		`[1]`:   "want string, got array",
		`12.5`:  "want string, got number 12.5",
		`true`:  "want string, got boolean true",
		`null`:  "want string, got null",
		`"` + string(bytes.Repeat([]byte("é"), 30)) + `"`: "want number, got string \"" + string(bytes.Repeat([]byte("é"), 20)) + "…\"",
	} {
		var s Scanner
		s.Reset([]byte(in))
		w := "string"
		if in[0] == '"' {
			w = "number"
		}
		assert.EqualError(t, s.TypeError(w), want, in)
	}
}

func TestMoreAndDepth(t *testing.T) {
	var s Scanner
	s.Reset([]byte(` , ] x`))
	more, err := s.More(']', "after element")
	assert.True(t, more)
	assert.NoError(t, err)
	more, err = s.More(']', "after element")
	assert.False(t, more)
	assert.NoError(t, err)
	more, err = s.More(']', "after element")
	assert.False(t, more)
	assert.EqualError(t, err, "invalid character 'x' after element at byte 6")

	deep := bytes.Repeat([]byte("["), MaxDepth+2)
	s.Reset(deep)
	err = s.SkipValue(0)
	assert.EqualError(t, err, "exceeded max depth")
	assert.True(t, errors.As(err, new(SyntaxError)))
}

// FuzzScanner checks the scanner against encoding/json: it accepts the
// same documents and decodes strings and numbers the same.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x"],"b":{}}`, `[]`, `[1,]`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `1E+9`, `-0.0e-0`,
		`"\"\\\/\b\f\n\r\t\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\uZZZZ"`,
		"\"\xff\xfe\"", "\"a\x00\"", "\"\u2028\"", `"\x"`, `"abc`, `tru`, `nulls`, ` [ 1 , [ [ ] ] ] `, `{"a":1}}`, `"\u00"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Scanner
		s.Reset(data)
		err := s.SkipValue(0)
		valid := err == nil && s.Peek() == End
		require.Equal(t, json.Valid(data), valid, "scanner error %v", err)
		if err != nil {
			var bad SyntaxError
			require.ErrorAs(t, err, &bad)
		}
		if !valid {
			return
		}
		s.Reset(data)
		switch c := s.Peek(); {
		case c == '"':
			got, err := s.ReadString()
			require.NoError(t, err)
			var want string
			require.NoError(t, json.Unmarshal(data, &want))
			require.Equal(t, want, string(got))
		case IsNumberStart(c):
			got, err := s.ReadNumber()
			require.NoError(t, err)
			require.Equal(t, string(bytes.TrimSpace(data)), string(got))
		}
	})
}
