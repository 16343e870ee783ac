package conversation

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generalDecode is what decodeWire falls back to: the reflective decoder into
// a fresh wireRecord.
func generalDecode(data []byte) (wireRecord, error) {
	var w wireRecord
	err := json.Unmarshal(data, &w)
	return w, err
}

// TestDecodeRecordV1 checks that the fast decoder handles every released
// record itself and agrees exactly with the general decoder.
func TestDecodeRecordV1(t *testing.T) {
	n := 0
	for _, path := range v1Files(t) {
		for _, raw := range readRaw(t, path) {
			var fast wireRecord
			require.NoError(t, decodeRecord(raw.Data, &fast), "%s record %d", raw.Source, raw.Record)
			slow, err := generalDecode(raw.Data)
			require.NoError(t, err)
			require.True(t, reflect.DeepEqual(slow, fast), "%s record %d: fast and general decoders differ", raw.Source, raw.Record)
			n++
		}
	}
	assert.Equal(t, 1379, n)
}

const deepUnknown = 70 // nesting beyond the fast decoder's limit of 64

// slowPathInputs must all make decodeRecord give up.
var slowPathInputs = []struct {
	name string
	data string
}{
	{"duplicate key", `{"id":"a","id":"b","history":[]}`},
	{"duplicate key in a message", `{"id":"a","history":[{"role":"user","role":"tool"}]}`},
	{"duplicate key in a tool call", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","name":"g"}}]}]}`},
	{"key differing in case", `{"ID":"a","history":[]}`},
	{"key differing in case after the exact one", `{"id":"a","Id":"b"}`},
	{"message key differing in case", `{"id":"a","history":[{"Role":"user"}]}`},
	{"key folding to a known one only in Unicode (long s)", `{"id":"a","hi\u017ftory":[{"role":"user"}]}`},
	{"raw Unicode-folding key", "{\"id\":\"a\",\"hiſtory\":[{\"role\":\"user\"}]}"},
	{"raw Unicode-folding message key", "{\"id\":\"a\",\"history\":[{\"role\":\"user\",\"content\":\"x\",\"tool_callſ\":[]}]}"},
	{"invalid UTF-8 in a string", "{\"id\":\"a\",\"history\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}"},
	{"invalid UTF-8 in an escaped string", "{\"id\":\"a\",\"scenario\":\"\\n\xff\"}"},
	{"invalid UTF-8 in a key", "{\"\xff\":1}"},
	{"invalid UTF-8 in an unknown field", "{\"id\":\"a\",\"x\":[\"\xc3\x28\"]}"},
	{"control character in a string", "{\"id\":\"a\",\"history\":[{\"role\":\"user\",\"content\":\"a\tb\"}]}"},
	{"newline in a string", "{\"id\":\"a\nb\"}"},
	{"bad escape", `{"id":"a\qb"}`},
	{"short unicode escape", `{"id":"a\u00e"}`},
	{"bad second half of a surrogate pair", `{"id":"\ud83d\uZZZZ"}`},
	{"number with leading zero", `{"id":"a","pref_score":01}`},
	{"number with leading zero in an unknown field", `{"id":"a","x":[-01]}`},
	{"number ending in a dot", `{"id":"a","pref_score":1.}`},
	{"number with bare exponent", `{"id":"a","pref_score":1e}`},
	{"lone minus", `{"id":"a","x":-}`},
	{"plus sign", `{"id":"a","x":+1}`},
	{"message that is null", `{"id":"a","history":[null]}`},
	{"tool call that is null", `{"id":"a","history":[{"role":"assistant","tool_calls":[null]}]}`},
	{"message that is a string", `{"id":"a","history":["hi"]}`},
	{"role is a number", `{"id":"a","history":[{"role":5}]}`},
	{"content is a bool", `{"id":"a","history":[{"role":"user","content":true}]}`},
	{"history is an object", `{"id":"a","history":{}}`},
	{"scenario is a list", `{"id":"a","scenario":["x"]}`},
	{"tool_calls is a string", `{"id":"a","history":[{"role":"assistant","tool_calls":"f"}]}`},
	{"function is a string", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"function":"f"}]}]}`},
	{"arguments object with an invalid string", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":"\x"}}}]}]}`},
	{"trailing garbage", `{"id":"a","history":[]}x`},
	{"second object", `{"id":"a"} {"id":"b"}`},
	{"trailing NUL", "{\"id\":\"a\"}\x00"},
	{"trailing comma", `{"id":"a",}`},
	{"missing colon", `{"id" "a"}`},
	{"missing comma", `{"id":"a" "history":[]}`},
	{"unclosed object", `{"id":"a"`},
	{"unclosed array", `{"id":"a","history":[{"role":"user"}`},
	{"unclosed string", `{"id":"a`},
	{"bad literal", `{"id":"a","x":nul}`},
	{"single quotes", `{'id':'a'}`},
	{"top-level array", `[{"id":"a"}]`},
	{"top-level null", `null`},
	{"empty input", ``},
	{"deeply nested unknown field", `{"id":"a","x":` + strings.Repeat("[", deepUnknown) + strings.Repeat("]", deepUnknown) + `}`},
	{"deeply nested objects in a raw field", `{"id":"a","function":` + strings.Repeat(`{"a":`, deepUnknown) + "1" + strings.Repeat("}", deepUnknown) + `}`},
}

func TestDecodeRecordSlowPath(t *testing.T) {
	for _, tt := range slowPathInputs {
		t.Run(tt.name, func(t *testing.T) {
			var w wireRecord
			err := decodeRecord([]byte(tt.data), &w)
			assert.ErrorIs(t, err, errSlowPath)

			// Whatever the general decoder then makes of it is what
			// decodeWire returns.
			want, wantErr := generalDecode([]byte(tt.data))
			var got wireRecord
			gotErr := decodeWire([]byte(tt.data), &got)
			if wantErr != nil {
				assert.EqualError(t, gotErr, wantErr.Error())
				return
			}
			require.NoError(t, gotErr)
			assert.True(t, reflect.DeepEqual(want, got))
		})
	}
}

// TestDecodeRecordSlowPathKeepsMeaning checks a few of the inputs above
// whose general decoding is legal, to show the fast decoder was right to give
// up: its naive reading would have been different.
func TestDecodeRecordSlowPathKeepsMeaning(t *testing.T) {
	w, err := generalDecode([]byte(`{"ID":"a"}`))
	require.NoError(t, err)
	assert.Equal(t, `"a"`, string(w.ID), "keys match case-insensitively")

	w, err = generalDecode([]byte(`{"id":"a","id":"b"}`))
	require.NoError(t, err)
	assert.Equal(t, `"b"`, string(w.ID), "the last duplicate wins")

	w, err = generalDecode([]byte("{\"hiſtory\":[{\"role\":\"user\"}]}"))
	require.NoError(t, err)
	assert.Len(t, w.History, 1, "ſ folds to s")

	w, err = generalDecode([]byte(`{"history":[null]}`))
	require.NoError(t, err)
	assert.Equal(t, []wireMessage{{}}, w.History)
}

// fastPathInputs must be decoded by decodeRecord itself.
var fastPathInputs = []struct {
	name  string
	data  string
	check func(t *testing.T, w *wireRecord)
}{
	{"minimal", `{"id":"a","history":[{"role":"user","content":"hi","time":"2025-12-04T10:00:00Z"}]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, `"a"`, string(w.ID))
		require.Len(t, w.History, 1)
		assert.Equal(t, "hi", *w.History[0].Content)
		assert.Equal(t, `"2025-12-04T10:00:00Z"`, string(w.History[0].Time))
	}},
	{"whitespace everywhere", " \r\n\t{ \"id\" : \"a\" ,\n \"history\" : [ { \"role\" : \"user\" , \"time\" : [ \"x\" , \"y\" ] } ] } \n", func(t *testing.T, w *wireRecord) {
		assert.Equal(t, `"a"`, string(w.ID))
		assert.Equal(t, `[ "x" , "y" ]`, string(w.History[0].Time))
	}},
	{"escapes", `{"id":"a","scenario":"q\"\\\/\b\f\n\r\tcaf\u00e9\u00E9"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "q\"\\/\b\f\n\r\tcaféé", w.Scenario)
	}},
	{"escaped NUL", `{"id":"a","scenario":"a\u0000b"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "a\x00b", w.Scenario)
	}},
	{"surrogate pair", `{"id":"a","scenario":"\ud83d\ude00!"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "😀!", w.Scenario)
	}},
	{"lone high surrogate", `{"id":"a","scenario":"x\ud83dy"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "x\uFFFDy", w.Scenario)
	}},
	{"lone low surrogate", `{"id":"a","scenario":"\ude00"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "\uFFFD", w.Scenario)
	}},
	{"two high surrogates", `{"id":"a","scenario":"\ud83d\ud83d\ude00"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "\uFFFD😀", w.Scenario)
	}},
	{"high surrogate then a plain escape", `{"id":"a","scenario":"\ud83d\u0041"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "\uFFFDA", w.Scenario)
	}},
	{"high surrogate then another escape", `{"id":"a","scenario":"\ud83d\n"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "\uFFFD\n", w.Scenario)
	}},
	{"raw UTF-8", `{"id":"a","scenario":"café 😀 日本"}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "café 😀 日本", w.Scenario)
	}},
	{"escaped key", `{"\u0069d":"a","hist\u006fry":[]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, `"a"`, string(w.ID))
		assert.NotNil(t, w.History)
	}},
	{"unknown fields of every type", `{"s":"x","n":-1.5e+3,"z":0,"t":true,"f":false,"nl":null,"o":{"a":[1,{"b":null}],"c":{}},"a":[],"id":"a","deep":` + strings.Repeat("[", 60) + strings.Repeat("]", 60) + `}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, `"a"`, string(w.ID))
	}},
	{"non-ASCII unknown key that folds to nothing known", `{"id":"a","日本":1}`, nil},
	{"null content, tool_calls and strings", `{"id":"a","scenario":null,"sensitivity":null,"history":[{"role":"assistant","content":null,"tool_calls":null,"tool_call_id":null,"name":null,"time":null}]}`, func(t *testing.T, w *wireRecord) {
		m := w.History[0]
		assert.Nil(t, m.Content)
		assert.Nil(t, m.ToolCalls)
		assert.Equal(t, "null", string(m.Time))
	}},
	{"null history", `{"id":"a","history":null}`, func(t *testing.T, w *wireRecord) {
		assert.Nil(t, w.History)
	}},
	{"null raw fields", `{"id":null,"function":null,"tools":null,"pref_score":null,"preference":null,"direct_answer":null,"tool_call":null}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "null", string(w.ID))
		assert.Equal(t, "null", string(w.Function))
	}},
	{"empty arrays", `{"id":"a","history":[{"role":"assistant","tool_calls":[]}],"function":[]}`, func(t *testing.T, w *wireRecord) {
		assert.NotNil(t, w.History[0].ToolCalls)
		assert.Empty(t, w.History[0].ToolCalls)
		assert.Equal(t, "[]", string(w.Function))
	}},
	{"empty history", `{"id":"a","history":[]}`, func(t *testing.T, w *wireRecord) {
		assert.NotNil(t, w.History)
		assert.Empty(t, w.History)
	}},
	{"empty object", `{}`, nil},
	{"empty message", `{"history":[{}]}`, nil},
	{"arguments as a string", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]}]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, Arguments(`{"a": 1}`), w.History[0].ToolCalls[0].Function.Arguments)
	}},
	{"arguments as an object", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{ "a" : [1, "x\u00e9"] }}}]}]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, Arguments(`{"a":[1,"x\u00e9"]}`), w.History[0].ToolCalls[0].Function.Arguments)
	}},
	{"arguments null", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":null}}]}]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, Arguments(""), w.History[0].ToolCalls[0].Function.Arguments)
	}},
	{"function null", `{"id":"a","history":[{"role":"assistant","tool_calls":[{"id":"c","function":null}]}]}`, nil},
	{"unknown keys in nested objects", `{"id":"a","history":[{"role":"user","x":1,"tool_calls":[{"x":[],"function":{"x":{},"name":"f"}}]}]}`, nil},
	{"optional fields", `{"id":"a","scenario":"s","sensitivity":"high","pref_score":[1,null,2.5],"preference":"tool","direct_answer":["a","b","c"],"tool_call":{"function":{"name":"f"}},"tools":[{"type":"function"}]}`, func(t *testing.T, w *wireRecord) {
		assert.Equal(t, "s", w.Scenario)
		assert.Equal(t, "high", w.Sensitivity)
		assert.Equal(t, "[1,null,2.5]", string(w.PrefScore))
		assert.Equal(t, `"tool"`, string(w.Preference))
		assert.Equal(t, `{"function":{"name":"f"}}`, string(w.ToolCall))
	}},
	{"many messages", `{"id":"a","history":[` + strings.Repeat(`{"role":"user","content":"x"},`, 40) + `{"role":"user"}]}`, func(t *testing.T, w *wireRecord) {
		assert.Len(t, w.History, 41)
	}},
}

func TestDecodeRecordFastPath(t *testing.T) {
	for _, tt := range fastPathInputs {
		t.Run(tt.name, func(t *testing.T) {
			var fast wireRecord
			require.NoError(t, decodeRecord([]byte(tt.data), &fast))
			slow, err := generalDecode([]byte(tt.data))
			require.NoError(t, err)
			require.True(t, reflect.DeepEqual(slow, fast), "fast %#v\ngeneral %#v", fast, slow)
			if tt.check != nil {
				tt.check(t, &fast)
			}
		})
	}
}

// seedFile is the smallest v1 file; its first records seed the fuzz tests.
const seedFile = v1Dir + "/preferNoTool_elapse_1.json"

// fuzzSeeds are the first records of a v1 file (kept few and small) and the
// table inputs above.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	if f, err := os.Open(seedFile); err == nil {
		rd := NewReader(f, "seed")
		for i := 0; i < 2; i++ {
			raw, err := rd.Next()
			if err != nil {
				break
			}
			seeds = append(seeds, raw.Data)
		}
		f.Close()
	}
	for _, tt := range slowPathInputs {
		seeds = append(seeds, []byte(tt.data))
	}
	for _, tt := range fastPathInputs {
		seeds = append(seeds, []byte(tt.data))
	}
	return seeds
}

// FuzzDecodeRecord checks the fast decoder's contract: whenever it succeeds,
// the general decoder (the fallback actually used) succeeds too and gives
// exactly the same result.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		var fast wireRecord
		err := decodeRecord(data, &fast)
		if err != nil {
			if !errors.Is(err, errSlowPath) {
				t.Fatalf("decodeRecord returned %v, want nil or errSlowPath", err)
			}
			return
		}
		if !bytes.Equal(in, data) {
			t.Fatalf("decodeRecord modified its input")
		}
		slow, err := generalDecode(data)
		if err != nil {
			t.Fatalf("fast decoder accepted %q, general decoder failed: %v", data, err)
		}
		if !reflect.DeepEqual(slow, fast) {
			t.Fatalf("decoders differ on %q\nfast    %#v\ngeneral %#v", data, fast, slow)
		}
	})
}

// FuzzParseTrajectory: any bytes give a trajectory with an id and a history,
// or a *RecordError that says where the record came from.
func FuzzParseTrajectory(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Add([]byte(mkRecord(`"weather_1"`, goodMsgs(), goodFunction, `"pref_score":[0,null,3]`, `"preference":"NoTool"`, `"direct_answer":"x"`, `"tool_call":{"function":{"name":"f","arguments":{"a":1}}}`, `"sensitivity":"mid"`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := RawRecord{Source: "fuzz.jsonl", Record: 3, Line: 9, Data: data}
		tr, err := ParseTrajectory(raw)
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T) is not a *RecordError", err, err)
			}
			if re.Source != raw.Source || re.Record != raw.Record || re.Line != raw.Line {
				t.Fatalf("error %q does not locate the record", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl: record 3 (line 9") {
				t.Fatalf("error text %q does not locate the record", err)
			}
			return
		}
		if tr == nil || strings.TrimSpace(tr.ID) == "" || len(tr.History) == 0 {
			t.Fatalf("success without an id or history: %+v", tr)
		}
		for i, m := range tr.History {
			switch m.Role {
			case RoleSystem, RoleUser, RoleAssistant, RoleTool:
			default:
				t.Fatalf("history[%d] has role %q", i, m.Role)
			}
		}
		if n := len(tr.FinalTimes); n != 0 && n != NumElapse {
			t.Fatalf("%d final times", n)
		}
		// The accessors and the time check must cope with whatever was accepted.
		for k := -1; k <= NumElapse; k++ {
			tr.ScoreAt(k)
			tr.PreferenceAt(k)
			tr.DirectAnswerAt(k)
		}
		_, _ = tr.CheckTimes()
		tr.LastToolCallTurn()
	})
}

// FuzzReader: any bytes run through the Reader end in io.EOF or a
// *RecordError, in a bounded number of calls, and the records found do not
// depend on how the input is chunked.
func FuzzReader(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("[]"))
	f.Add([]byte("[\n  {\"id\": \"a\", \"s\": \"]}\\\"\"},\n  {\"id\": \"b\"}\n]\n"))
	f.Add([]byte("{\"id\":\"a\"}\r\n\r\n{\"id\":\"b\"} {\"id\":\"c\"}\n[1]\n"))
	f.Add([]byte("[{\"id\":\"a\"} x]"))
	f.Add([]byte("[{\"id\":\"a\"}] ]"))
	f.Add([]byte("[{\"id\":\"a\n\"}]"))
	for _, s := range fuzzSeeds()[:2] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(r *Reader) ([]RawRecord, error) {
			var recs []RawRecord
			for i := 0; i <= len(data)+1; i++ {
				raw, err := r.Next()
				if err != nil {
					return recs, err
				}
				recs = append(recs, raw)
			}
			t.Fatalf("Reader.Next did not end after %d calls", len(data)+2)
			return nil, nil
		}
		recs, err := read(NewReader(bytes.NewReader(data), "fuzz"))
		if err != io.EOF {
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T) is not a *RecordError", err, err)
			}
			if re.Source != "fuzz" || re.Record != len(recs)+1 || re.Line < 1 {
				t.Fatalf("error %+v after %d records", re, len(recs))
			}
		}
		line := 1
		for i, r := range recs {
			if r.Record != i+1 || r.Line < line || len(r.Data) == 0 || r.Data[0] != '{' {
				t.Fatalf("record %d: %+v", i+1, r)
			}
			line = r.Line
		}
		// One byte at a time gives the same records and the same error.
		recs2, err2 := read(NewReader(iotest.OneByteReader(bytes.NewReader(data)), "fuzz"))
		if !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("records depend on chunking: %+v vs %+v", recs, recs2)
		}
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("errors depend on chunking: %v vs %v", err, err2)
		}
	})
}

// FuzzDecodeTools checks the fast tool-schema decoder against the general
// decoder: whenever the fast one succeeds, both must give the same schemas.
func FuzzDecodeTools(f *testing.F) {
	f.Add([]byte(`[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object","properties":{}}}}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"type":"function","function":{"name":"a\u00e9","parameters":null,"extra":[1,2]}},{"function":{"name":"b"}}]`))
	f.Add([]byte(`[{"Type":"function"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, err := decodeTools(data)
		if err != nil {
			return
		}
		var slow []Tool
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("fast decoder accepted %q, general decoder: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("decoders differ on %q:\nfast %#v\nslow %#v", data, fast, slow)
		}
	})
}

func TestDecodeString(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"abc"`, "abc", true},
		{` "a\nb" `, "a\nb", true},
		{`"a" "b"`, "", false},
		{`5`, "", false},
		{`"unterminated`, "", false},
	} {
		got, ok := decodeString([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// FuzzRecordID: whenever RecordID reads an id, a record that parses has
// that very id, so a shard passing over records by RecordID keeps the
// same trajectories as one that parses them all.
func FuzzRecordID(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Add([]byte(`{"id":"a","ID":"b"}`))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"x":{"id":"inner"},"id":"w\u00e9_1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, ok := RecordID(data)
		if !ok {
			return
		}
		tr, err := ParseTrajectory(RawRecord{Source: "f.jsonl", Record: 1, Line: 1, Data: data})
		if err == nil && tr.ID != id {
			t.Fatalf("RecordID %q, ParseTrajectory %q", id, tr.ID)
		}
		var probe struct {
			ID *string `json:"id"`
		}
		if json.Unmarshal(data, &probe) == nil && probe.ID != nil && *probe.ID != id {
			t.Fatalf("RecordID %q, encoding/json %q", id, *probe.ID)
		}
	})
}

func TestRecordID(t *testing.T) {
	for _, tc := range []struct {
		data string
		id   string
		ok   bool
	}{
		{`{"id":"flight_1","messages":[{"role":"user","content":"{\"id\":\"x\"}"}]}`, "flight_1", true},
		{` { "messages" : [] , "id" : "w\u00e9_2" } `, "wé_2", true},
		{`{"meta":{"id":"inner"}}`, "", false},
		{`{"id":7}`, "", false},
		{`{"ID":"a"}`, "", false},
		{`{"id":"a","Id":"b"}`, "", false},
		{`{"id":"a","id":"b"}`, "", false},
		{`{"id":"a",}`, "", false},
		{`[{"id":"a"}]`, "", false},
		{`{}`, "", false},
	} {
		id, ok := RecordID([]byte(tc.data))
		assert.Equal(t, tc.ok, ok, tc.data)
		assert.Equal(t, tc.id, id, tc.data)
	}
}
