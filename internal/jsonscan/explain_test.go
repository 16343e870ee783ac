package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

type explainMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []explainCall  `json:"tool_calls"`
	Extra     map[string]int `json:"extra"`
}

type explainCall struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type explainRecord struct {
	ID       string           `json:"id"`
	Messages []explainMessage `json:"messages"`
	Elapse   int8             `json:"elapse"`
	Count    uint             `json:"count"`
	Score    float64          `json:"score"`
	OK       bool             `json:"ok"`
	Raw      json.RawMessage  `json:"raw"`
}

// goName matches what a message must not hold: the Go names of types.
var goName = regexp.MustCompile(`Go (struct field|value)|explain[A-Z]|\[\]|map\[|struct \{|json\.|int8|uint|float64|string\b.*\btype`)

// TestExplainSaysWhereAndWhat: both decoders' errors come out the same, in
// JSON's words, with the value's path, lists' positions included.
func TestExplainSaysWhereAndWhat(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"string for a number", `{"elapse": "one"}`, `elapse: want a whole number, got "one"`},
		{"number for a string", `{"id": 5}`, `id: want a string, got 5`},
		{"object for a list", `{"messages": {"role": "user"}}`, `messages: want a list, got an object`},
		{"nested in a list", `{"messages": [{"role": "user"}, {"role": "user", "content": 3}]}`, `messages[1].content: want a string, got 3`},
		{"deeper", `{"messages": [{"tool_calls": [{"function": {"name": "a"}}, {"function": {"name": ["x"]}}]}]}`,
			`messages[0].tool_calls[1].function.name: want a string, got a list`},
		{"a map's value", `{"messages": [{"extra": {"a": 1, "b c": true}}]}`, `messages[0].extra["b c"]: want a whole number, got true`},
		{"a fraction", `{"elapse": 1.5}`, `elapse: want a whole number, got 1.5`},
		{"out of range", `{"elapse": 300}`, `elapse: want a whole number from -128 to 127, got 300`},
		{"negative unsigned", `{"count": -1}`, `count: want a whole number from 0 to 18446744073709551615, got -1`},
		{"a float too big", `{"score": 1e999}`, `score: want a number from -1.8e308 to 1.8e308, got 1e999`},
		{"a boolean", `{"ok": "yes"}`, `ok: want true or false, got "yes"`},
		{"a long string", `{"score": "` + strings.Repeat("x", 60) + `"}`, `score: want a number, got "` + strings.Repeat("x", 40) + `…"`},
		{"the record", `[1, 2]`, `want an object, got a list`},
		{"a syntax error", `{"id": "a"} x`, `invalid JSON at byte 13: invalid character 'x' after top-level value`},
		{"the end", `{"id": "a", "messages": [`, `invalid JSON at byte 25: the text ends inside a value`},
		{"not UTF-8", "{\"id\": \"a\", \xff: 1}", `invalid JSON at byte 13: byte 0xff is not UTF-8 text`},
	}
	decoders := map[string]func([]byte, any) error{"encoding/json": json.Unmarshal, "goccy/go-json": gojson.Unmarshal}
	for _, tt := range tests {
		for name, unmarshal := range decoders {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				var r explainRecord
				err := unmarshal([]byte(tt.data), &r)
				require.Error(t, err)
				got := Explain("", []byte(tt.data), err)
				assert.EqualError(t, got, tt.want)
				assert.ErrorIs(t, got, err, "the decoder's error stays in the chain")
			})
		}
	}
}

// TestExplainWithoutTheText: from a stream, the path is the decoder's.
func TestExplainWithoutTheText(t *testing.T) {
	data := `{"messages": [{"role": "user"}, {"content": 3}]}`
	var r explainRecord
	err := gojson.Unmarshal([]byte(data), &r)
	assert.EqualError(t, Explain("", nil, err), "messages[1].content: want a string, got a number")
	err = json.Unmarshal([]byte(data), &r)
	assert.EqualError(t, Explain("", nil, err), "messages.content: want a string, got a number")
	err = json.NewDecoder(strings.NewReader(`{"id": `)).Decode(&r)
	assert.EqualError(t, Explain("", nil, err), "the text ends inside a value")
}

// TestExplainPrefix: the path of a value decoded on its own starts at
// where it lies in its record.
func TestExplainPrefix(t *testing.T) {
	var m explainMessage
	data := []byte(`{"tool_calls": [{"function": {"arguments": {}}}]}`)
	err := json.Unmarshal(data, &m)
	assert.EqualError(t, Explain("messages[3]", data, err), "messages[3].tool_calls[0].function.arguments: want a string, got an object")
	var list []explainMessage
	data = []byte(`[{}, 5]`)
	err = json.Unmarshal(data, &list)
	assert.EqualError(t, Explain("prompt", data, err), "prompt[1]: want an object, got 5")
}

// TestExplainLeavesOtherErrors: errors that are not a decoder's pass
// through; a decoder's own words lose their "json: ".
func TestExplainLeavesOtherErrors(t *testing.T) {
	other := errors.New("elapse: want 0, 1 or 2")
	assert.Same(t, other, Explain("", nil, other))
	assert.NoError(t, Explain("", nil, nil))
	dec := json.NewDecoder(strings.NewReader(`{"idd": "a"}`))
	dec.DisallowUnknownFields()
	var r explainRecord
	assert.EqualError(t, Explain("", nil, dec.Decode(&r)), `unknown field "idd"`)
	assert.EqualError(t, Explain("", nil, fmt.Errorf("reading: %w", io.ErrUnexpectedEOF)), "the text ends inside a value")
	once := Explain("a", []byte(`{"id": 1}`), json.Unmarshal([]byte(`{"id": 1}`), &r))
	assert.Same(t, once, Explain("", nil, once), "an explained error is not explained again")
	assert.EqualError(t, Explain("messages[2]", nil, once), "messages[2].a.id: want a string, got 1", "but placed where it lies")
	assert.EqualError(t, Wanting("a tool call", Explain("", []byte(`[1]`), json.Unmarshal([]byte(`[1]`), &r))), "want a tool call, got a list")
	assert.EqualError(t, Wanting("a tool call", once), "a.id: want a string, got 1", "only the value itself")
}

// TestExplainRecords: a file of a JSON array names the record and the
// byte.
func TestExplainRecords(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"cut inside a record", "[\n {\"id\": \"a\"},\n {\"id\": \"b\", \"messages\": [{\"ro", `record 2 at byte 18: the file ends inside the record`},
		{"cut after a comma", "[{\"id\": \"a\"},\n", `after record 1: the file ends before the array is closed`},
		{"cut after a record", `[{"id": "a"}`, `after record 1: the file ends before the array is closed`},
		{"a bad character", `[{"id": "a"}, {"id": tru}]`, `record 2 at byte 25: invalid character '}' in literal true (expecting 'e')`},
		{"a wrong kind", `[{"id": "a"}, {"id": "b", "elapse": "x"}]`, `record 2: elapse: want a whole number, got "x"`},
		{"not a record", `[{"id": "a"}, 7]`, `record 2: want an object, got 7`},
		{"after the array", `[{"id": "a"}] x`, `invalid JSON at byte 15: invalid character 'x' after top-level value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []explainRecord
			err := json.Unmarshal([]byte(tt.data), &rs)
			require.Error(t, err)
			assert.EqualError(t, ExplainRecords([]byte(tt.data), err), tt.want)
		})
	}
}

// TestDecoderPath checks how a decoder's field paths are written the way
// the other errors write them.
func TestDecoderPath(t *testing.T) {
	tests := map[string]string{
		"":                                      "",
		"history":                               "history",
		"history.0.role":                        "history[0].role",
		"history.12.tool_calls.3.function.name": "history[12].tool_calls[3].function.name",
		"history.0":                             "history[0]",
	}
	for in, want := range tests {
		assert.Equal(t, want, decoderPath(in), in)
	}
}

// TestExplainYAML: YAML's decoder's errors in the same words.
func TestExplainYAML(t *testing.T) {
	var v struct {
		Aliases []string          `yaml:"aliases"`
		Name    string            `yaml:"name"`
		Count   int               `yaml:"count"`
		Points  map[string]string `yaml:"points"`
	}
	tests := []struct{ doc, want string }{
		{"aliases: {a: 1}\n", "line 1: want a list, got a mapping"},
		{"name: [x]\n", "line 1: want a string, got a list"},
		{"count: many\n", `line 1: want a whole number, got "many"`},
		{"- 1\n", "line 1: want a mapping, got a list"},
		{"aliases: x\nname: [y]\n", `line 1: want a list, got "x"; line 2: want a string, got a list`},
		{"name: [unclosed\n", "line 1: did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		err := yaml.Unmarshal([]byte(tt.doc), &v)
		require.Error(t, err, tt.doc)
		got := ExplainYAML(err)
		assert.EqualError(t, got, tt.want, tt.doc)
		assert.NotRegexp(t, goName, got.Error())
	}
	dec := yaml.NewDecoder(strings.NewReader("nmae: x\n"))
	dec.KnownFields(true)
	assert.EqualError(t, ExplainYAML(dec.Decode(&v)), `line 1: unknown field "nmae"`)
}

func TestPathAt(t *testing.T) {
	data := `{"a": [1, {"b": "xy"}], "c d": null}`
	tests := []struct {
		off   int
		path  string
		start int
	}{
		{0, "", 0},
		{3, "", 0}, // inside a key: the object
		{7, "a[0]", 7},
		{17, "a[1].b", 16},
		{34, `["c d"]`, 31},
	}
	for _, tt := range tests {
		path, start, ok := PathAt([]byte(data), tt.off)
		require.True(t, ok, "offset %d", tt.off)
		assert.Equal(t, tt.path, path, "offset %d", tt.off)
		assert.Equal(t, tt.start, start, "offset %d", tt.off)
	}
	_, _, ok := PathAt([]byte(`  `), 0)
	assert.False(t, ok)
}

// FuzzExplain: whatever the input, explaining a decoder's error neither
// panics nor names a Go type, and keeps the decoder's error.
func FuzzExplain(f *testing.F) {
	for _, s := range []string{`{"id": 5}`, `{"messages": [{"content": 3}]}`, `[{"id": "a"}, {"id`, `{"elapse": 1e400}`, `[1,`, `{"a": "\u00`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var r explainRecord
		for _, unmarshal := range []func([]byte, any) error{json.Unmarshal, gojson.Unmarshal} {
			err := unmarshal(data, &r)
			if err == nil {
				continue
			}
			got := Explain("", data, err)
			if goName.MatchString(got.Error()) {
				t.Errorf("%q: %q names a Go type", s, got)
			}
			if !errors.Is(got, err) {
				t.Errorf("%q: the decoder's error is lost", s)
			}
			var rs []explainRecord
			if err := json.Unmarshal(data, &rs); err != nil {
				if got := ExplainRecords(data, err); goName.MatchString(got.Error()) {
					t.Errorf("%q: %q names a Go type", s, got)
				}
			}
		}
		for _, off := range []int{0, len(data) / 2, len(data) - 1} {
			if off < 0 {
				continue
			}
			if path, start, ok := PathAt(data, off); ok && (start > off || start < 0) {
				t.Errorf("%q at %d: %q starts at %d", s, off, path, start)
			}
		}
	})
}
