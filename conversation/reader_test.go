package conversation

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// v1Dir holds the TicToc v1 release, shared by every checkout.
const v1Dir = "../../shared/data/tictoc-v1"

// v1Files returns the five v1 files, skipping the test when the data is absent.
func v1Files(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(v1Dir, "*.json"))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skipf("TicToc v1 data not found in %s", v1Dir)
	}
	require.Len(t, files, 5)
	return files
}

// readRaw splits a whole file into raw records.
func readRaw(t testing.TB, path string) []RawRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := readAll(NewReader(f, filepath.Base(path)))
	require.NoError(t, err)
	return recs
}

// readAll drains a Reader. It stops after far more calls than any input of
// the tests could need, so a Reader that never ends fails instead of hanging.
func readAll(rd *Reader) ([]RawRecord, error) {
	var recs []RawRecord
	for i := 0; i < 1_000_000; i++ {
		rec, err := rd.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, errors.New("Reader.Next never returned io.EOF")
}

// rec is a raw record as the tests compare it: position and trimmed text.
type rec struct {
	Record, Line int
	Data         string
}

func simplify(recs []RawRecord) []rec {
	out := make([]rec, 0, len(recs))
	for _, r := range recs {
		out = append(out, rec{r.Record, r.Line, string(bytes.TrimSpace(r.Data))})
	}
	return out
}

func TestReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		array bool
		want  []rec
	}{
		{name: "empty input", in: ""},
		{name: "only whitespace", in: " \n\t\r\n  "},
		{name: "empty array", in: "[]", array: true},
		{name: "empty array spread out", in: "\n  [\n\n ]\n\n", array: true},
		{
			name: "array on one line", in: `[{"id":"a"},{"id":"b"} , {"id":"c"}]`, array: true,
			want: []rec{{1, 1, `{"id":"a"}`}, {2, 1, `{"id":"b"}`}, {3, 1, `{"id":"c"}`}},
		},
		{
			name:  "array over many lines",
			in:    "[\n  {\n    \"id\": \"a\",\n    \"history\": [\n      {\"role\": \"user\"}\n    ]\n  },\n\n  {\"id\": \"b\"}\n  ,\n  {\n\"id\": \"c\"}\n]\n",
			array: true,
			want: []rec{
				{1, 2, "{\n    \"id\": \"a\",\n    \"history\": [\n      {\"role\": \"user\"}\n    ]\n  }"},
				{2, 9, `{"id": "b"}`},
				{3, 11, "{\n\"id\": \"c\"}"},
			},
		},
		{
			name:  "array with CRLF and tabs",
			in:    "\r\n[\r\n\t{\"id\": \"a\"},\r\n\t{\r\n\t\"id\": \"b\"\r\n\t}\r\n]\r\n",
			array: true,
			want:  []rec{{1, 3, `{"id": "a"}`}, {2, 4, "{\r\n\t\"id\": \"b\"\r\n\t}"}},
		},
		{
			name:  "brackets, braces and escaped quotes inside strings",
			in:    `[{"id":"a]}\"{[","c":"\\"},{"id":"}"}]`,
			array: true,
			want:  []rec{{1, 1, `{"id":"a]}\"{[","c":"\\"}`}, {2, 1, `{"id":"}"}`}},
		},
		{
			name: "jsonl",
			in:   "{\"id\":\"a\"}\n{\"id\":\"b\"}\n",
			want: []rec{{1, 1, `{"id":"a"}`}, {2, 2, `{"id":"b"}`}},
		},
		{
			name: "jsonl with blank lines, CRLF, indentation and no final newline",
			in:   "\n\r\n{\"id\":\"a\"}\r\n\r\n   \n\t {\"id\":\"b\"}  \n\n{\"id\":\"c\"}",
			want: []rec{{1, 3, `{"id":"a"}`}, {2, 6, `{"id":"b"}`}, {3, 8, `{"id":"c"}`}},
		},
		{
			name: "jsonl line holding brackets in strings",
			in:   "{\"id\":\"]\"}\n{\"id\":\"[\"}\n",
			want: []rec{{1, 1, `{"id":"]"}`}, {2, 2, `{"id":"["}`}},
		},
	}
	for _, tt := range tests {
		for _, chunking := range []string{"whole", "one byte at a time"} {
			t.Run(tt.name+"/"+chunking, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if chunking != "whole" {
					r = iotest.OneByteReader(r)
				}
				recs, err := readAll(NewReader(r, "in.json"))
				require.NoError(t, err)
				assert.Equal(t, tt.want, nilIfEmpty(simplify(recs)))
				for _, r := range recs {
					assert.Equal(t, "in.json", r.Source)
					if tt.array {
						// An array element is exactly the object's bytes.
						assert.Equal(t, byte('{'), r.Data[0])
						assert.Equal(t, byte('}'), r.Data[len(r.Data)-1])
					}
				}
			})
		}
	}
}

func nilIfEmpty(r []rec) []rec {
	if len(r) == 0 {
		return nil
	}
	return r
}

// TestReaderOwnsData checks that records read earlier are not overwritten by
// later reads: callers keep RawRecords while the Reader moves on.
func TestReaderOwnsData(t *testing.T) {
	var jsonl, array strings.Builder
	array.WriteString("[\n")
	for i := 0; i < 2000; i++ {
		line := fmt.Sprintf(`{"id":"r%d","pad":"%s"}`, i, strings.Repeat("x", i%700))
		jsonl.WriteString(line + "\n")
		if i > 0 {
			array.WriteString(",\n")
		}
		array.WriteString(line)
	}
	array.WriteString("\n]\n")
	for name, in := range map[string]string{"jsonl": jsonl.String(), "array": array.String()} {
		t.Run(name, func(t *testing.T) {
			rd := NewReader(iotest.HalfReader(strings.NewReader(in)), name)
			var recs []RawRecord
			var copies [][]byte
			for {
				r, err := rd.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				recs = append(recs, r)
				copies = append(copies, bytes.Clone(r.Data))
			}
			require.Len(t, recs, 2000)
			for i, r := range recs {
				require.Equal(t, string(copies[i]), string(r.Data), "record %d", i+1)
				require.Equal(t, i+1, r.Record)
			}
		})
	}
}

func TestReaderSyntaxErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		nOK     int    // records returned before the error
		record  int    // RecordError.Record
		line    int    // RecordError.Line
		wantMsg string // substring of the error text
	}{
		{name: "not json", in: "\n\nid,history\n", record: 1, line: 3, wantMsg: `input starts with 'i'`},
		{name: "unclosed empty array", in: "[\n", record: 1, line: 2, wantMsg: "the file ends before the array is closed"},
		{name: "unclosed array", in: "[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n", nOK: 2, record: 3, line: 4, wantMsg: "the file ends before the array is closed"},
		{name: "array ends after a comma", in: "[\n{\"id\":\"a\"},\n", nOK: 1, record: 2, line: 3, wantMsg: "the file ends after a ','"},
		{name: "unclosed record", in: "[\n{\"id\":\"a\",\n\"history\":[\n", record: 1, line: 4, wantMsg: "the file ends inside the record"},
		{name: "garbage between records", in: "[\n{\"id\":\"a\"}\n  x {\"id\":\"b\"}]", nOK: 1, record: 2, line: 3, wantMsg: `unexpected 'x' between records: want ',' or ']'`},
		{name: "missing comma", in: "[{\"id\":\"a\"}\n{\"id\":\"b\"}]", nOK: 1, record: 2, line: 2, wantMsg: `unexpected '{' between records`},
		{name: "array element is a number", in: "[\n{\"id\":\"a\"},\n 5\n]", nOK: 1, record: 2, line: 3, wantMsg: `array element starts with '5': want a JSON object`},
		{name: "first array element is a string", in: `["a"]`, record: 1, line: 1, wantMsg: `array element starts with '"'`},
		{name: "nested array", in: `[[{"id":"a"}]]`, record: 1, line: 1, wantMsg: `array element starts with '['`},
		{name: "trailing comma", in: "[{\"id\":\"a\"},\n]", nOK: 1, record: 2, line: 2, wantMsg: `array element starts with ']'`},
		{name: "trailing data after the array", in: "[{\"id\":\"a\"}]\n\n  x\n", nOK: 1, record: 2, line: 3, wantMsg: `unexpected 'x' after the closing ']'`},
		{name: "second array", in: "[{\"id\":\"a\"}]\n[]", nOK: 1, record: 2, line: 2, wantMsg: `unexpected '[' after the closing ']'`},
		{name: "empty array then data", in: "[] {}", record: 1, line: 1, wantMsg: `unexpected '{' after the closing ']'`},
		{name: "jsonl line is an array", in: "{\"id\":\"a\"}\n\n[{\"id\":\"b\"}]\n", nOK: 1, record: 2, line: 3, wantMsg: `line starts with '[': want a JSON object`},
		{name: "jsonl line is a string", in: "{\"id\":\"a\"}\r\n\"b\"\r\n", nOK: 1, record: 2, line: 2, wantMsg: `line starts with '"'`},
		{name: "unterminated string in an array, at a newline", in: "[\n{\"id\":\"a\"},\n{\"id\":\"b},\n{\"id\":\"c\"}]", nOK: 1, record: 2, line: 3, wantMsg: "newline inside a JSON string"},
		{name: "unterminated string at the end of input", in: "[{\"id\":\"abc", record: 1, line: 1, wantMsg: "the file ends inside the record"},
		{name: "unterminated escape at the end of input", in: "[{\"id\":\"ab\\", record: 1, line: 1, wantMsg: "the file ends inside the record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tt.in), "bad.json")
			recs, err := readAll(rd)
			require.Error(t, err)
			assert.Len(t, recs, tt.nOK)
			var re *RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "bad.json", re.Source)
			assert.Equal(t, tt.record, re.Record, "record")
			assert.Equal(t, tt.line, re.Line, "line")
			assert.Empty(t, re.ID)
			assert.Empty(t, re.Field)
			msg := err.Error()
			assert.Contains(t, msg, tt.wantMsg)
			assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("bad.json: record %d (line %d): ", tt.record, tt.line)), msg)
			// The Reader stops at the first syntax error.
			_, err = rd.Next()
			assert.Equal(t, io.EOF, err)
		})
	}
}

// TestReaderRecordTooLarge checks the bound that keeps a corrupt file from
// exhausting memory, in both layouts.
func TestReaderRecordTooLarge(t *testing.T) {
	big := `{"id":"` + strings.Repeat("x", 3<<20) + `"}`
	for name, in := range map[string]string{
		"jsonl":                 `{"id":"ok"}` + "\n" + big + "\n",
		"array":                 `[{"id":"ok"},` + big + `]`,
		"unterminated in array": `[{"id":"ok"},{"id":"` + strings.Repeat("x", 3<<20),
	} {
		t.Run(name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(in), "big.json")
			rd.maxRec = 1 << 20
			recs, err := readAll(rd)
			require.Len(t, recs, 1)
			var re *RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 2, re.Record)
			assert.Contains(t, err.Error(), "big.json: record 2 (line ")
			assert.Contains(t, err.Error(), fmt.Sprintf("record larger than %d bytes", 1<<20))
		})
	}
}

// TestReaderReadError checks that an I/O error is reported with its position.
func TestReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	for name, in := range map[string]string{
		"before the first byte": "",
		"inside an array":       "[{\"id\":\"a\"},\n{\"id\":",
		"inside a jsonl line":   "{\"id\":\"a\"}\n{\"id\":",
	} {
		t.Run(name, func(t *testing.T) {
			r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom))
			_, err := readAll(NewReader(r, "io.json"))
			require.ErrorIs(t, err, boom)
			var re *RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "io.json", re.Source)
			assert.Positive(t, re.Record)
			assert.Positive(t, re.Line)
		})
	}
}

func TestRecordErrorText(t *testing.T) {
	inner := errors.New("missing")
	tests := []struct {
		err  RecordError
		want string
	}{
		{RecordError{Source: "a.json", Record: 3, Line: 40, ID: "x_1", Field: "history[2].time", Err: inner}, "a.json: record 3 (line 40, id x_1): history[2].time: missing"},
		{RecordError{Source: "a.json", Record: 3, Line: 40, Err: inner}, "a.json: record 3 (line 40): missing"},
		{RecordError{Record: 3, ID: "x_1", Field: "id", Err: inner}, "record 3 (id x_1): id: missing"},
		{RecordError{Record: 1, Err: inner}, "record 1: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
			assert.ErrorIs(t, &tt.err, inner)
		})
	}
}

// Records for the ParseTrajectory tests. goodMsgs is a complete, valid
// trajectory: index 2 calls a tool, index 5 is the final user question.
func goodMsgs() []string {
	return []string{
		`{"role":"system","content":"You help.","time":"2025-12-04T10:00:00Z"}`,
		`{"role":"user","content":"Weather in Paris?","time":"2025-12-04T10:00:00Z"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}],"time":"2025-12-04T10:00:02Z"}`,
		`{"role":"tool","tool_call_id":"call_1","name":"get_weather","content":"{\"sky\":\"sunny\"}","time":"2025-12-04T10:00:03Z"}`,
		`{"role":"assistant","content":"It is sunny.","time":"2025-12-04T10:00:05Z"}`,
		`{"role":"user","content":"And now?","time":["2025-12-04T10:05:00Z","2025-12-04T16:00:00Z","2025-12-11T10:00:00.5Z"]}`,
	}
}

const goodFunction = `"function":[{"type":"function","function":{"name":"get_weather","description":"Current weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`

// mkRecord builds a record: id is raw JSON ("" leaves it out), msgs the
// history (nil leaves it out), extra further members.
func mkRecord(id string, msgs []string, extra ...string) string {
	var members []string
	if id != "" {
		members = append(members, `"id":`+id)
	}
	if msgs != nil {
		members = append(members, `"history":[`+strings.Join(msgs, ",")+`]`)
	}
	members = append(members, extra...)
	return "{" + strings.Join(members, ",") + "}"
}

// withMsg returns goodMsgs with message i replaced.
func withMsg(i int, msg string) []string {
	m := goodMsgs()
	m[i] = msg
	return m
}

func parse(data string) (*Trajectory, error) {
	return ParseTrajectory(RawRecord{Source: "t.jsonl", Record: 7, Line: 12, Data: []byte(data)})
}

func TestParseTrajectoryGood(t *testing.T) {
	tr, err := parse(mkRecord(`"weather_1"`, goodMsgs(), goodFunction))
	require.NoError(t, err)
	assert.Equal(t, "weather_1", tr.ID)
	require.Len(t, tr.History, 6)
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "user"},
		[]string{tr.History[0].Role, tr.History[1].Role, tr.History[2].Role, tr.History[3].Role, tr.History[4].Role, tr.History[5].Role})
	assert.Nil(t, tr.History[2].Content)
	assert.Equal(t, []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}}, tr.History[2].ToolCalls)
	assert.Equal(t, "call_1", tr.History[3].ToolCallID)
	assert.Equal(t, "get_weather", tr.History[3].Name)
	assert.Equal(t, time.Date(2025, 12, 4, 10, 0, 3, 0, time.UTC), tr.History[3].Time)
	assert.True(t, tr.History[5].Time.IsZero(), "the final message keeps its times in FinalTimes")
	assert.Equal(t, []time.Time{
		time.Date(2025, 12, 4, 10, 5, 0, 0, time.UTC),
		time.Date(2025, 12, 4, 16, 0, 0, 0, time.UTC),
		time.Date(2025, 12, 11, 10, 0, 0, 5e8, time.UTC),
	}, tr.FinalTimes)
	require.Len(t, tr.Tools, 1)
	assert.Equal(t, "get_weather", tr.Tools[0].Function.Name)
	assert.Equal(t, "Current weather.", tr.Tools[0].Function.Description)
	assert.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string"}}}`, string(tr.Tools[0].Function.Parameters))
	assert.Equal(t, strings.TrimPrefix(goodFunction, `"function":`), string(tr.ToolsJSON))
	assert.Empty(t, tr.Scenario)
	assert.Empty(t, tr.Sensitivity)
	assert.Nil(t, tr.PrefScore)
	assert.Nil(t, tr.Preference)
	assert.Nil(t, tr.DirectAnswer)
	assert.Nil(t, tr.ToolCall)

	field, err := tr.CheckTimes()
	assert.NoError(t, err)
	assert.Empty(t, field)
}

func TestParseTrajectoryMalformed(t *testing.T) {
	const id = `"weather_1"`
	tests := []struct {
		name    string
		data    string
		field   string
		id      string // the id the error must report
		wantMsg string
	}{
		{"missing id", mkRecord("", goodMsgs(), goodFunction), "id", "", "missing or not a non-empty string"},
		{"id is a number", mkRecord(`17`, goodMsgs(), goodFunction), "id", "", "missing or not a non-empty string"},
		{"id is null", mkRecord(`null`, goodMsgs(), goodFunction), "id", "", "missing or not a non-empty string"},
		{"id is blank", mkRecord(`"  "`, goodMsgs(), goodFunction), "id", "", "missing or not a non-empty string"},
		{"missing history", mkRecord(id, nil, goodFunction), "history", "weather_1", "missing or empty"},
		{"empty history", mkRecord(id, []string{}, goodFunction), "history", "weather_1", "missing or empty"},
		{"null history", mkRecord(id, nil, `"history":null`), "history", "weather_1", "missing or empty"},
		{"history is an object", mkRecord(id, nil, `"history":{"role":"user"}`), "history", "weather_1", "want a list, got an object"},
		{"history is a string", mkRecord(id, nil, `"history":"hi"`), "history", "weather_1", `want a list, got "hi"`},
		{"unknown role", mkRecord(id, withMsg(1, `{"role":"robot","content":"x","time":"2025-12-04T10:00:00Z"}`)), "history[1].role", "weather_1", `unknown role "robot"`},
		{"missing role", mkRecord(id, withMsg(1, `{"content":"x","time":"2025-12-04T10:00:00Z"}`)), "history[1].role", "weather_1", "missing"},
		{"null message", mkRecord(id, withMsg(3, `null`)), "history[3].role", "weather_1", "missing"},
		{"role is a number", mkRecord(id, withMsg(1, `{"role":5}`)), "history[1].role", "weather_1", "want a string, got 5"},
		{"content is a number", mkRecord(id, withMsg(4, `{"role":"assistant","content":5}`)), "history[4].content", "weather_1", "want a string, got 5"},
		{"tool_calls is an object", mkRecord(id, withMsg(2, `{"role":"assistant","tool_calls":{}}`)), "history[2].tool_calls", "weather_1", "want a list, got an object"},
		{"function name is a number", mkRecord(id, withMsg(2, `{"role":"assistant","tool_calls":[{"function":{"name":5}}]}`)), "history[2].tool_calls[0].function.name", "weather_1", "want a string, got 5"},
		{"time not RFC 3339", mkRecord(id, withMsg(2, `{"role":"assistant","content":"x","time":"2025-12-04 10:00:02"}`)), "history[2].time", "weather_1", `invalid time "2025-12-04 10:00:02"`},
		{"time is a number", mkRecord(id, withMsg(2, `{"role":"assistant","content":"x","time":1733306402}`)), "history[2].time", "weather_1", "want an RFC 3339 string"},
		{"time list on a non-final message", mkRecord(id, withMsg(1, `{"role":"user","content":"x","time":["2025-12-04T10:00:00Z","2025-12-04T10:00:00Z","2025-12-04T10:00:00Z"]}`)), "history[1].time", "weather_1", "only allowed on the final message"},
		{"final time list of 2", mkRecord(id, withMsg(5, `{"role":"user","content":"x","time":["2025-12-04T10:05:00Z","2025-12-04T16:00:00Z"]}`)), "history[5].time", "weather_1", "has 2 times, want 3"},
		{"final time list of 4", mkRecord(id, withMsg(5, `{"role":"user","content":"x","time":["2025-12-04T10:05:00Z","2025-12-04T16:00:00Z","2025-12-04T16:00:00Z","2025-12-04T16:00:00Z"]}`)), "history[5].time", "weather_1", "has 4 times, want 3"},
		{"final time list of numbers", mkRecord(id, withMsg(5, `{"role":"user","content":"x","time":[1,2,3]}`)), "history[5].time", "weather_1", "want a list of RFC 3339 strings"},
		{"bad time inside the list", mkRecord(id, withMsg(5, `{"role":"user","content":"x","time":["2025-12-04T10:05:00Z","tomorrow","2025-12-11T10:00:00Z"]}`)), "history[5].time[1]", "weather_1", `invalid time "tomorrow"`},
		{"tool call without function name", mkRecord(id, withMsg(2, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"arguments":"{}"}}]}`)), "history[2].tool_calls[0].function.name", "weather_1", "missing"},
		{"second tool call without function", mkRecord(id, withMsg(2, `{"role":"assistant","tool_calls":[{"function":{"name":"a"}},{"id":"call_2"}]}`)), "history[2].tool_calls[1].function.name", "weather_1", "missing"},
		{"tool call arguments neither JSON nor a literal", mkRecord(id, withMsg(2, `{"role":"assistant","tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"city=Paris"}}]}`)), "history[2].tool_calls[1].function.arguments", "weather_1", "neither JSON nor a Python literal"},
		{"sensitivity extreme", mkRecord(id, goodMsgs(), `"sensitivity":"extreme"`), "sensitivity", "weather_1", `"extreme" is not low, medium or high`},
		{"pref_score above 3", mkRecord(id, goodMsgs(), `"pref_score":3.5`), "pref_score[0]", "weather_1", "3.5 is outside [0, 3]"},
		{"pref_score below 0 in a list", mkRecord(id, goodMsgs(), `"pref_score":[1,-0.25,null]`), "pref_score[1]", "weather_1", "-0.25 is outside [0, 3]"},
		{"pref_score list of 2", mkRecord(id, goodMsgs(), `"pref_score":[1,2]`), "pref_score", "weather_1", "a list of 2 values: want one value for every level or a list of 3"},
		{"pref_score is a string", mkRecord(id, goodMsgs(), `"pref_score":"high"`), "pref_score", "weather_1", `want a number or a list of 3 (one per elapse level), got "high"`},
		{"preference maybe", mkRecord(id, goodMsgs(), `"preference":"maybe"`), "preference[0]", "weather_1", `"maybe" is not tool or direct`},
		{"preference maybe in a list", mkRecord(id, goodMsgs(), `"preference":["tool",null,"maybe"]`), "preference[2]", "weather_1", `"maybe" is not tool or direct`},
		{"direct_answer is a number", mkRecord(id, goodMsgs(), `"direct_answer":42`), "direct_answer", "weather_1", "want a string or a list of 3 (one per elapse level), got 42"},
		{"direct_answer is an object", mkRecord(id, goodMsgs(), `"direct_answer":{"text":"x"}`), "direct_answer", "weather_1", "want a string or a list of 3 (one per elapse level), got an object"},
		{"direct_answer list of numbers", mkRecord(id, goodMsgs(), `"direct_answer":[1,2,3]`), "direct_answer[0]", "weather_1", "want a string, got 1"},
		{"tool_call without name", mkRecord(id, goodMsgs(), `"tool_call":{"type":"function","function":{"arguments":"{}"}}`), "tool_call[0].function.name", "weather_1", "missing"},
		{"tool_call list entry without name", mkRecord(id, goodMsgs(), `"tool_call":[{"function":{"name":"a"}},{"function":{}}]`), "tool_call[1].function.name", "weather_1", "missing"},
		{"tool_call is a string", mkRecord(id, goodMsgs(), `"tool_call":"get_weather"`), "tool_call", "weather_1", `want a tool call object or a list of them, got "get_weather"`},
		{"function entry without name", mkRecord(id, goodMsgs(), `"function":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"description":"no name"}}]`), "function[1].function.name", "weather_1", "missing"},
		{"tools entry without name", mkRecord(id, goodMsgs(), `"tools":[{"type":"function"}]`), "tools[0].function.name", "weather_1", "missing"},
		{"function is an object", mkRecord(id, goodMsgs(), `"function":{"name":"a"}`), "function", "weather_1", "want a list of tool schemas, got an object"},
		{"function name is a number", mkRecord(id, goodMsgs(), `"function":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":7}}]`), "function[1].function.name", "weather_1", "want a string, got 7"},
		{"two objects on one line", mkRecord(id, goodMsgs()) + ` {"id":"other"}`, "", "weather_1", "invalid JSON"},
		{"truncated", strings.TrimSuffix(mkRecord(id, goodMsgs()), "]}"), "", "", "invalid JSON"},
		{"unterminated string", `{"id":"weather_1","history":[{"role":"user}]}`, "", "", "invalid JSON"},
		{"not an object", `["weather_1"]`, "", "", "want an object, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := parse(tt.data)
			require.Error(t, err)
			assert.Nil(t, tr)
			var re *RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "t.jsonl", re.Source)
			assert.Equal(t, 7, re.Record)
			assert.Equal(t, 12, re.Line)
			assert.Equal(t, tt.field, re.Field, "field")
			assert.Equal(t, tt.id, re.ID, "id")
			msg := err.Error()
			assert.Contains(t, msg, tt.wantMsg)
			prefix := "t.jsonl: record 7 (line 12"
			if tt.id != "" {
				prefix += ", id " + tt.id
			}
			prefix += "): "
			if tt.field != "" {
				prefix += tt.field + ": "
			}
			assert.True(t, strings.HasPrefix(msg, prefix), "%q does not start with %q", msg, prefix)
		})
	}
}

// TestParseTrajectoryJSONLLineErrors runs malformed JSONL lines through the
// Reader so that the reported line is the one in the input.
func TestParseTrajectoryJSONLLineErrors(t *testing.T) {
	good := mkRecord(`"a_1"`, goodMsgs(), goodFunction)
	in := good + "\n\n" + good + ` {"id":"b_1"}` + "\n" + `{"id":"c_1","history":[{"role":"user}]}` + "\n"
	rd := NewReader(strings.NewReader(in), "mixed.jsonl")
	recs, err := readAll(rd)
	require.NoError(t, err)
	require.Len(t, recs, 3)

	_, err = ParseTrajectory(recs[0])
	require.NoError(t, err)

	_, err = ParseTrajectory(recs[1])
	var re *RecordError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, RecordError{Source: "mixed.jsonl", Record: 2, Line: 3, ID: "a_1", Err: re.Err}, *re)
	assert.Contains(t, err.Error(), "mixed.jsonl: record 2 (line 3, id a_1): invalid JSON")

	_, err = ParseTrajectory(recs[2])
	require.ErrorAs(t, err, &re)
	assert.Equal(t, RecordError{Source: "mixed.jsonl", Record: 3, Line: 4, Err: re.Err}, *re)
	assert.Contains(t, err.Error(), "mixed.jsonl: record 3 (line 4): invalid JSON")
}

func TestParseTrajectoryV1(t *testing.T) {
	files := v1Files(t)
	ids := map[string]bool{}
	total := 0
	for _, path := range files {
		recs := readRaw(t, path)
		for i, raw := range recs {
			require.Equal(t, i+1, raw.Record)
			tr, err := ParseTrajectory(raw)
			require.NoError(t, err)
			total++
			ids[tr.ID] = true

			where := fmt.Sprintf("%s record %d (%s)", raw.Source, raw.Record, tr.ID)
			require.NotEmpty(t, tr.History, where)
			assert.Len(t, tr.FinalTimes, NumElapse, where)
			assert.Equal(t, RoleUser, tr.Final().Role, where)
			assert.True(t, tr.Final().Time.IsZero(), where)
			for j, m := range tr.History[:len(tr.History)-1] {
				assert.False(t, m.Time.IsZero(), "%s: history[%d] has no time", where, j)
			}
			field, err := tr.CheckTimes()
			assert.NoError(t, err, "%s: %s", where, field)

			// The tools and their compact JSON text match the record's
			// function array.
			require.NotEmpty(t, tr.Tools, where)
			var rawRec struct {
				Function stdjson.RawMessage `json:"function"`
			}
			require.NoError(t, stdjson.Unmarshal(raw.Data, &rawRec))
			require.True(t, stdjson.Valid(tr.ToolsJSON), where)
			var compact bytes.Buffer
			require.NoError(t, stdjson.Compact(&compact, tr.ToolsJSON))
			assert.Equal(t, compact.String(), string(tr.ToolsJSON), "%s: ToolsJSON is not compact", where)
			assert.JSONEq(t, string(rawRec.Function), string(tr.ToolsJSON), where)
			var tools []Tool
			require.NoError(t, stdjson.Unmarshal(rawRec.Function, &tools))
			assert.Equal(t, tools, tr.Tools, where)
			for _, tl := range tr.Tools {
				assert.NotEmpty(t, tl.Function.Name, where)
			}
			for _, m := range tr.History {
				for _, tc := range m.ToolCalls {
					assert.NotEmpty(t, tc.Function.Name, where)
					assert.Equal(t, "function", tc.Type, where)
				}
			}
		}
	}
	assert.Equal(t, 1379, total, "samples")
	assert.Len(t, ids, 725, "trajectories")
}

// TestParseTrajectoryConcurrent decodes one file's records on several
// goroutines, as the data commands do; run with -race.
func TestParseTrajectoryConcurrent(t *testing.T) {
	files := v1Files(t)
	recs := readRaw(t, files[0])
	want := make([]*Trajectory, len(recs))
	for i, raw := range recs {
		var err error
		want[i], err = ParseTrajectory(raw)
		require.NoError(t, err)
	}
	got := make([]*Trajectory, len(recs))
	errs := make([]error, len(recs))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(recs); i += 4 {
				got[i], errs[i] = ParseTrajectory(recs[i])
			}
		}(w)
	}
	wg.Wait()
	for i := range recs {
		require.NoError(t, errs[i])
		require.Equal(t, want[i], got[i])
	}
}

func TestParseTrajectoryOptionalFields(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	tests := []struct {
		name  string
		extra []string
		check func(t *testing.T, tr *Trajectory)
	}{
		{"none", nil, func(t *testing.T, tr *Trajectory) {
			for k := 0; k < NumElapse; k++ {
				_, ok := tr.ScoreAt(k)
				assert.False(t, ok)
				assert.Empty(t, tr.PreferenceAt(k))
				_, ok = tr.DirectAnswerAt(k)
				assert.False(t, ok)
			}
			assert.Nil(t, tr.ToolCall)
		}},
		{"nulls", []string{`"pref_score":null`, `"preference":null`, `"direct_answer":null`, `"tool_call":null`, `"scenario":null`, `"sensitivity":null`}, func(t *testing.T, tr *Trajectory) {
			assert.Nil(t, tr.PrefScore)
			assert.Nil(t, tr.Preference)
			assert.Nil(t, tr.DirectAnswer)
			assert.Nil(t, tr.ToolCall)
			assert.Empty(t, tr.Scenario)
			assert.Empty(t, tr.Sensitivity)
		}},
		{"scenario and sensitivity", []string{`"scenario":"weather"`, `"sensitivity":" Mid "`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, "weather", tr.Scenario)
			assert.Equal(t, "medium", tr.Sensitivity)
		}},
		{"pref_score number", []string{`"pref_score":2.5`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []*float64{f(2.5)}, tr.PrefScore)
			for k := 0; k < NumElapse; k++ {
				v, ok := tr.ScoreAt(k)
				assert.True(t, ok)
				assert.Equal(t, 2.5, v)
			}
		}},
		{"pref_score list with null", []string{`"pref_score":[0,null,3]`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []*float64{f(0), nil, f(3)}, tr.PrefScore)
			v, ok := tr.ScoreAt(ElapseSmall)
			assert.True(t, ok)
			assert.Equal(t, 0.0, v)
			_, ok = tr.ScoreAt(ElapseMedium)
			assert.False(t, ok)
			v, ok = tr.ScoreAt(ElapseLarge)
			assert.True(t, ok)
			assert.Equal(t, 3.0, v)
			_, ok = tr.ScoreAt(NumElapse)
			assert.False(t, ok)
			_, ok = tr.ScoreAt(-1)
			assert.False(t, ok)
		}},
		{"preference preferTool", []string{`"preference":"preferTool"`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []string{PreferTool}, tr.Preference)
			assert.Equal(t, PreferTool, tr.PreferenceAt(ElapseLarge))
		}},
		{"preference NoTool", []string{`"preference":"NoTool"`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, PreferDirect, tr.PreferenceAt(ElapseSmall))
		}},
		{"preference direct", []string{`"preference":"direct"`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, PreferDirect, tr.PreferenceAt(ElapseMedium))
		}},
		{"preference per level", []string{`"preference":["prefer-notool",null,"TOOL"]`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []string{PreferDirect, "", PreferTool}, tr.Preference)
			assert.Equal(t, PreferDirect, tr.PreferenceAt(ElapseSmall))
			assert.Equal(t, "", tr.PreferenceAt(ElapseMedium))
			assert.Equal(t, PreferTool, tr.PreferenceAt(ElapseLarge))
			assert.Equal(t, "", tr.PreferenceAt(NumElapse))
		}},
		{"direct_answer shared", []string{`"direct_answer":"Still sunny."`}, func(t *testing.T, tr *Trajectory) {
			for k := 0; k < NumElapse; k++ {
				v, ok := tr.DirectAnswerAt(k)
				assert.True(t, ok)
				assert.Equal(t, "Still sunny.", v)
			}
		}},
		{"direct_answer per level", []string{`"direct_answer":["Still sunny.",null,"Let me check."]`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []*string{s("Still sunny."), nil, s("Let me check.")}, tr.DirectAnswer)
			v, ok := tr.DirectAnswerAt(ElapseSmall)
			assert.True(t, ok)
			assert.Equal(t, "Still sunny.", v)
			_, ok = tr.DirectAnswerAt(ElapseMedium)
			assert.False(t, ok)
			v, ok = tr.DirectAnswerAt(ElapseLarge)
			assert.True(t, ok)
			assert.Equal(t, "Let me check.", v)
		}},
		{"tool_call object", []string{`"tool_call":{"id":"call_9","function":{"name":"get_weather","arguments":{"city":"Paris", "when": "now"}}}`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []ToolCall{{ID: "call_9", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","when":"now"}`}}}, tr.ToolCall)
		}},
		{"tool_call list", []string{`"tool_call":[{"type":"function","function":{"name":"a","arguments":"{}"}},{"function":{"name":"b"}}]`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, []ToolCall{
				{Type: "function", Function: FunctionCall{Name: "a", Arguments: "{}"}},
				{Type: "function", Function: FunctionCall{Name: "b"}},
			}, tr.ToolCall)
		}},
		{"tools instead of function", []string{`"tools":[{"type":"function","function":{"name":"x"}}]`}, func(t *testing.T, tr *Trajectory) {
			require.Len(t, tr.Tools, 1)
			assert.Equal(t, "x", tr.Tools[0].Function.Name)
			assert.Equal(t, `[{"type":"function","function":{"name":"x"}}]`, string(tr.ToolsJSON))
		}},
		{"function wins over tools", []string{goodFunction, `"tools":[{"type":"function","function":{"name":"x"}}]`}, func(t *testing.T, tr *Trajectory) {
			require.Len(t, tr.Tools, 1)
			assert.Equal(t, "get_weather", tr.Tools[0].Function.Name)
		}},
		{"null function falls back to tools", []string{`"function":null`, `"tools":[{"type":"function","function":{"name":"x"}}]`}, func(t *testing.T, tr *Trajectory) {
			require.Len(t, tr.Tools, 1)
			assert.Equal(t, "x", tr.Tools[0].Function.Name)
		}},
		{"no tools", nil, func(t *testing.T, tr *Trajectory) {
			assert.Nil(t, tr.Tools)
			assert.Nil(t, tr.ToolsJSON)
		}},
		{"unknown fields are ignored", []string{`"extra":{"a":[1,true,null,"x"]}`, `"n":-1.5e3`}, func(t *testing.T, tr *Trajectory) {
			assert.Equal(t, "weather_1", tr.ID)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := parse(mkRecord(`"weather_1"`, goodMsgs(), tt.extra...))
			require.NoError(t, err)
			tt.check(t, tr)
		})
	}
}

func TestCheckTimes(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []string
		field   string
		wantMsg string
	}{
		{"good", goodMsgs(), "", ""},
		{"equal times are fine", withMsg(4, `{"role":"assistant","content":"x","time":"2025-12-04T10:00:03Z"}`), "", ""},
		{"missing time", withMsg(3, `{"role":"tool","tool_call_id":"call_1","content":"x"}`), "history[3].time", "missing"},
		{"null time", withMsg(0, `{"role":"system","content":"x","time":null}`), "history[0].time", "missing"},
		{"time going backwards", withMsg(3, `{"role":"tool","tool_call_id":"call_1","content":"x","time":"2025-12-04T09:59:59Z"}`), "history[3].time",
			"2025-12-04T09:59:59Z is earlier than the previous message (2025-12-04T10:00:02Z)"},
		{"offset times compare as instants", withMsg(4, `{"role":"assistant","content":"x","time":"2025-12-04T11:00:02+01:00"}`), "history[4].time",
			"2025-12-04T10:00:02Z is earlier than the previous message (2025-12-04T10:00:03Z)"},
		{"final time earlier than previous", withMsg(5, `{"role":"user","content":"x","time":["2025-12-04T10:05:00Z","2025-12-04T10:00:04Z","2025-12-11T10:00:00Z"]}`), "history[5].time[1]",
			"2025-12-04T10:00:04Z is earlier than the previous message (2025-12-04T10:00:05Z)"},
		{"final message without times", withMsg(5, `{"role":"user","content":"x"}`), "history[5].time", "missing: the final message needs 3 times"},
		{"final message with one time", withMsg(5, `{"role":"user","content":"x","time":"2025-12-04T10:05:00Z"}`), "history[5].time", "missing: the final message needs 3 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := parse(mkRecord(`"weather_1"`, tt.msgs))
			require.NoError(t, err)
			field, err := tr.CheckTimes()
			assert.Equal(t, tt.field, field)
			if tt.wantMsg == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestArguments(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Arguments
	}{
		{"string", `"{\"city\": \"Paris\"}"`, `{"city": "Paris"}`},
		{"string with escapes", `"{\"q\": \"caf\u00e9\\n\"}"`, `{"q": "café\n"}`},
		{"empty string", `""`, ""},
		{"object", `{"city": "Paris", "days": [1, 2],  "opts": {"metric": true}}`, `{"city":"Paris","days":[1,2],"opts":{"metric":true}}`},
		{"empty object", `{ }`, `{}`},
		{"null", `null`, ""},
		{"number", ` 5 `, "5"},
		{"array", `[1, "a"]`, `[1,"a"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Arguments
			require.NoError(t, a.UnmarshalJSON([]byte(tt.json)))
			assert.Equal(t, tt.want, a)

			// Inside a tool call, through the package's decoder (fast path
			// and general decoder) and through encoding/json.
			call := `{"function":{"name":"f","arguments":` + tt.json + `}}`
			tr, err := parse(mkRecord(`"x_1"`, withMsg(2, `{"role":"assistant","tool_calls":[`+call+`],"time":"2025-12-04T10:00:02Z"}`)))
			require.NoError(t, err)
			assert.Equal(t, tt.want, tr.History[2].ToolCalls[0].Function.Arguments)

			var tc ToolCall
			require.NoError(t, stdjson.Unmarshal([]byte(call), &tc))
			assert.Equal(t, tt.want, tc.Function.Arguments)

			// Arguments always encode as a JSON string.
			out, err := stdjson.Marshal(tc.Function)
			require.NoError(t, err)
			var back struct{ Arguments string }
			require.NoError(t, stdjson.Unmarshal(out, &back))
			assert.Equal(t, string(tt.want), back.Arguments)
		})
	}
	t.Run("invalid", func(t *testing.T) {
		var a Arguments
		assert.Error(t, a.UnmarshalJSON([]byte(`{"a":`)))
		assert.Error(t, a.UnmarshalJSON([]byte(`"unterminated`)))
	})
}

// TicToc v1 logs hold a few calls whose arguments are a Python dict's repr;
// chat-completions servers refuse those (transformers serve answers 500), so
// the trajectory reader rewrites them as JSON, on both decoding paths.
func TestParseTrajectoryPythonLiteralArguments(t *testing.T) {
	for _, args := range []string{`"{'location': 'Malibu Beach', 'exact': True}"`, `"{'location': 'Malibu Beach', 'exact': True}" `} {
		call := `{"function":{"name":"f","arguments":` + args + `}}`
		tr, err := parse(mkRecord(`"x_1"`, withMsg(2, `{"role":"assistant","tool_calls":[`+call+`],"time":"2025-12-04T10:00:02Z"}`)))
		require.NoError(t, err)
		assert.Equal(t, Arguments(`{"location":"Malibu Beach","exact":true}`), tr.History[2].ToolCalls[0].Function.Arguments)
	}
}

func TestReaderSkipsByteOrderMark(t *testing.T) {
	r := NewReader(strings.NewReader("\xef\xbb\xbf[{\"id\":\"a_1\"}]"), "bom.json")
	raw, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, `{"id":"a_1"}`, string(raw.Data))
	_, err = r.Next()
	assert.Equal(t, io.EOF, err)
}

func TestPerLevelSingleElementList(t *testing.T) {
	rec := `{"id":"a_1","preference":["tool"],"history":[{"role":"user","content":"hi"}]}`
	tr, err := ParseTrajectory(RawRecord{Source: "x", Record: 1, Data: []byte(rec)})
	require.NoError(t, err)
	for k := 0; k < NumElapse; k++ {
		assert.Equal(t, PreferTool, tr.PreferenceAt(k))
	}
}

func TestTypeErrorNamesJSONKinds(t *testing.T) {
	rec := `{"id":"a_1","history":{"role":"user"}}`
	_, err := ParseTrajectory(RawRecord{Source: "x", Record: 1, Data: []byte(rec)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "history: want a list, got an object")
	assert.NotContains(t, err.Error(), "conversation.")
}
