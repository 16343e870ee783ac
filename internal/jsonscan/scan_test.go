package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
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
		`{}`:   "want string, got object",
		`[1]`:  "want string, got array",
		`12.5`: "want string, got number 12.5",
		`true`: "want string, got boolean true",
		`null`: "want string, got null",
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
			// AppendString decodes the same onto a buffer.
			s.Reset(data)
			s.Peek()
			app, err := s.AppendString([]byte("x"))
			require.NoError(t, err)
			require.Equal(t, "x"+want, string(app))
			// A strict scanner agrees, or refuses what it is strict about.
			strict := Scanner{StrictUTF8: true, StrictSurrogates: true}
			strict.Reset(data)
			strict.Peek()
			sg, err := strict.ReadString()
			if err != nil {
				require.True(t, errors.Is(err, ErrInvalidUTF8) || errors.Is(err, ErrLoneSurrogate), "%v", err)
				require.Contains(t, want, "\uFFFD")
			} else {
				require.Equal(t, want, string(sg))
			}
		case IsNumberStart(c):
			got, err := s.ReadNumber()
			require.NoError(t, err)
			require.Equal(t, string(bytes.TrimSpace(data)), string(got))
		}
	})
}

// FuzzPlainRun checks the eight-bytes-at-a-time scan against the plain loop.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`plain text, then a "quote`))
	f.Add([]byte("0123456789abcdef\x1f"))
	f.Add([]byte("long plain run of ascii text \\ backslash é"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := 0
		for want < len(b) {
			c := b[want]
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				break
			}
			want++
		}
		if got := plainRun(b); got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
		}
	})
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		aliased bool
	}{
		{`"plain ascii, a long run of it"`, "plain ascii, a long run of it", true},
		{`"café 日本 😀"`, "café 日本 😀", true},
		{`"a\nb"`, "a\nb", false},
		{`"\u00e9\ud83d\ude00"`, "é😀", false},
		{`"lone \ud83d here"`, "lone \uFFFD here", false},
		{"\"bad \xff byte\"", "bad \uFFFD byte", false},
		{`""`, "", true},
	} {
		var s Scanner
		s.Reset([]byte(tc.in))
		got, err := s.ReadString()
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, string(got), tc.in)
		assert.Equal(t, tc.aliased, s.Aliased(), tc.in)
		assert.Equal(t, End, s.Peek(), tc.in)

		s.Reset([]byte(tc.in))
		out, err := s.AppendString([]byte("prefix:"))
		require.NoError(t, err)
		assert.Equal(t, "prefix:"+tc.want, string(out))
	}
}

func TestStrictAndLimits(t *testing.T) {
	read := func(in string, set func(*Scanner)) ([]byte, error) {
		var s Scanner
		set(&s)
		s.Reset([]byte(in))
		return s.ReadString()
	}
	_, err := read("\"bad \xff\"", func(s *Scanner) { s.StrictUTF8 = true })
	assert.ErrorIs(t, err, ErrInvalidUTF8)
	_, err = read("\"esc\\n then bad \xff\"", func(s *Scanner) { s.StrictUTF8 = true })
	assert.ErrorIs(t, err, ErrInvalidUTF8)
	got, err := read(`"\ud83d"`, func(s *Scanner) { s.StrictUTF8 = true })
	require.NoError(t, err, "strict UTF-8 alone still replaces a lone surrogate")
	assert.Equal(t, "\uFFFD", string(got))
	_, err = read(`"\ud83d"`, func(s *Scanner) { s.StrictSurrogates = true })
	assert.ErrorIs(t, err, ErrLoneSurrogate)
	_, err = read(`"\ude00\ud83d"`, func(s *Scanner) { s.StrictSurrogates = true })
	assert.ErrorIs(t, err, ErrLoneSurrogate)
	got, err = read(`"\ud83d\ude00"`, func(s *Scanner) { s.StrictSurrogates = true })
	require.NoError(t, err)
	assert.Equal(t, "😀", string(got))

	for _, in := range []string{`"abcdef"`, `"abc\ndef"`, `"abcdé"`} {
		_, err = read(in, func(s *Scanner) { s.MaxString = 5 })
		assert.ErrorIs(t, err, ErrTooLong, in)
		_, err = read(in, func(s *Scanner) { s.MaxString = 7 })
		assert.NoError(t, err, in)
	}

	var s Scanner
	s.MaxDepth = 3
	s.Reset([]byte(`[[[1]]]`))
	assert.NoError(t, s.SkipValue(0))
	s.Reset([]byte(`[[[[1]]]]`))
	err = s.SkipValue(0)
	assert.ErrorIs(t, err, ErrTooDeep)
	assert.ErrorAs(t, err, new(SyntaxError))
}

func TestKeys(t *testing.T) {
	k := Keys{"id", "score", "kind"}
	for key, want := range map[string]struct {
		idx    int
		folded bool
	}{
		"id": {0, false}, "score": {1, false}, "ID": {-1, true}, "Score": {-1, true},
		"ſcore":     {-1, true}, // LATIN SMALL LETTER LONG S folds to s
		"\u212aind": {-1, true}, // KELVIN SIGN folds to k
		"scores":    {-1, false}, "": {-1, false}, "other": {-1, false},
	} {
		idx, folded := k.Index([]byte(key))
		assert.Equal(t, want.idx, idx, key)
		assert.Equal(t, want.folded, folded, key)
	}
	// A known name that is not ASCII folds against an ASCII key too.
	idx, folded := Keys{"\u212aind", "ſcore"}.Index([]byte("KIND"))
	assert.Equal(t, -1, idx)
	assert.True(t, folded, "KIND and the name with the Kelvin sign are one name ignoring case")
	_, folded = Keys{"ſcore"}.Index([]byte("Score"))
	assert.True(t, folded)
}

// FuzzAppendCompact checks AppendCompact against encoding/json's Compact on
// valid JSON, the only input it is given.
func FuzzAppendCompact(f *testing.F) {
	f.Add([]byte(`[ {"type": "function", "function": {"name": "a b", "parameters": { "x" : [1, 2 ] }}} ]`))
	f.Add([]byte("{\"s\": \"tab\\t and \\\" quote \\\\\" ,\n \"n\": null}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, data); err != nil {
			t.Fatal(err)
		}
		if got := AppendCompact(nil, data); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("AppendCompact(%q) = %q, want %q", data, got, want.Bytes())
		}
	})
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	in := "\xef\xbb\xbf{\"a\":1}\n\n" + long + "\n" + "last"
	lr := NewLineReader(strings.NewReader(in))
	var got []string
	var nums []int
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, string(line))
		nums = append(nums, n)
	}
	assert.Equal(t, []string{"{\"a\":1}\n", "\n", long + "\n", "last"}, got)
	assert.Equal(t, []int{1, 2, 3, 4}, nums)
	_, n, err := lr.Next()
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, 4, n)
}
