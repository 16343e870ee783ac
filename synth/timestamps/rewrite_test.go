package timestamps

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
)

// setTimes gives every message a time, one minute apart from a fixed start,
// and the final message three.
func setTimes(t *conversation.Trajectory) {
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	last := len(t.History) - 1
	for i := range t.History[:last] {
		t.History[i].Time = start.Add(time.Duration(i) * time.Minute)
	}
	end := start.Add(time.Duration(last) * time.Minute)
	t.FinalTimes = []time.Time{end, end.Add(time.Hour), end.Add(24 * time.Hour)}
}

const (
	t0 = `"2025-06-01T12:00:00Z"`
	t1 = `"2025-06-01T12:01:00Z"`
	f1 = `["2025-06-01T12:01:00Z","2025-06-01T13:01:00Z","2025-06-02T12:01:00Z"]`
)

func TestRewriteTimes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"replaces times",
			`{"id":"a_1","history":[{"role":"user","content":"hi","time":"2020-01-01T00:00:00Z"},{"role":"user","content":"q","time":["2020-01-01T00:00:01Z","2020-01-01T00:00:02Z","2020-01-01T00:00:03Z"]}]}`,
			`{"id":"a_1","history":[{"role":"user","content":"hi","time":` + t0 + `},{"role":"user","content":"q","time":` + f1 + `}]}`},
		{"adds missing times as the last member",
			`{"id":"a_1","history":[{"role":"user","content":"hi"},{"content":"q","role":"user"}]}`,
			`{"id":"a_1","history":[{"role":"user","content":"hi","time":` + t0 + `},{"content":"q","role":"user","time":` + f1 + `}]}`},
		{"compacts whitespace outside strings only",
			"{\n  \"id\": \"a_1\",\n  \"history\": [\n    {\"role\": \"user\", \"content\": \"two  spaces\\n\", \"time\": null},\n    {\"role\": \"user\", \"content\": \"q\"}\n  ]\n}",
			`{"id":"a_1","history":[{"role":"user","content":"two  spaces\n","time":` + t0 + `},{"role":"user","content":"q","time":` + f1 + `}]}`},
		{"keeps unknown fields and nested values",
			`{"meta":{"history":[1,2],"time":"keep"},"id":"a_1","history":[{"role":"user","content":"hi","extra":{"time":"keep"},"time":"2020-01-01T00:00:00Z"},{"role":"user","content":"q"}],"function":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
			`{"meta":{"history":[1,2],"time":"keep"},"id":"a_1","history":[{"role":"user","content":"hi","extra":{"time":"keep"},"time":` + t0 + `},{"role":"user","content":"q","time":` + f1 + `}],"function":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`},
		{"matches keys as JSON decoders do",
			`{"id":"a_1","History":[{"role":"user","content":"hi","TIME":"2020-01-01T00:00:00Z"},{"role":"user","content":"q","ti\u006de":null}]}`,
			`{"id":"a_1","History":[{"role":"user","content":"hi","TIME":` + t0 + `},{"role":"user","content":"q","ti\u006de":` + f1 + `}]}`},
		{"three messages",
			`{"id":"a_1","history":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x": [1, "}"]}}}]},{"role":"user","content":"q"}]}`,
			`{"id":"a_1","history":[{"role":"user","content":"hi","time":` + t0 + `},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x":[1,"}"]}}}],"time":` + t1 + `},{"role":"user","content":"q","time":["2025-06-01T12:02:00Z","2025-06-01T13:02:00Z","2025-06-02T12:02:00Z"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parse(t, []byte(tt.in))
			setTimes(tr)
			got, err := RewriteTimes([]byte("prefix "), []byte(tt.in), tr)
			require.NoError(t, err)
			assert.Equal(t, "prefix "+tt.want, string(got))
			assert.True(t, json.Valid(got[len("prefix "):]))
		})
	}
}

func TestRewriteTimesErrors(t *testing.T) {
	ok := `{"id":"a_1","history":[{"role":"user","content":"hi"},{"role":"user","content":"q"}]}`
	tests := []struct {
		name  string
		raw   string
		from  string // the record the trajectory is parsed from; raw when empty
		stamp bool
		field string
		want  string
	}{
		{"not stamped", ok, "", false, "history[0].time", "stamp the trajectory first"},
		{"duplicate time", `{"id":"a_1","history":[{"role":"user","content":"hi","time":"a","Time":"b"},{"role":"user","content":"q"}]}`, ok, true, "history[0].time", "more than once"},
		{"duplicate history", `{"id":"a_1","history":[{"role":"user"},{"role":"user"}],"HISTORY":[]}`, ok, true, "history", "more than once"},
		{"fewer messages than parsed", `{"id":"a_1","history":[{"role":"user","content":"q"}]}`, ok, true, "history", "has 1 messages, but 2 were parsed"},
		{"more messages than parsed", `{"id":"a_1","history":[{"role":"user"},{"role":"user"},{"role":"user"}]}`, ok, true, "history", "more than the 2 messages"},
		{"history not a list", `{"id":"a_1","history":{}}`, ok, true, "history", "not a list"},
		{"no history", `{"id":"a_1"}`, ok, true, "history", "missing"},
		{"truncated", `{"id":"a_1","history":[{"role":"user"`, ok, true, "history", "unexpected end"},
		{"truncated before history", `{"id":"a_1",`, ok, true, "", "want a string"},
		{"trailing data", ok + `{}`, ok, true, "", "data after the record"},
		{"not an object", `[1]`, ok, true, "", "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := tt.from
			if from == "" {
				from = tt.raw
			}
			tr := parse(t, []byte(from))
			if tt.stamp {
				setTimes(tr)
			}
			_, err := RewriteTimes(nil, []byte(tt.raw), tr)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			assert.Equal(t, "a_1", fe.ID)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzRewriteTimes checks RewriteTimes against the record decoder: for any
// input the decoder accepts, the rewritten record is valid JSON that decodes
// to the same trajectory with the new times; for any other input it returns
// an error or a result, never a panic. Run it with -fuzzminimizetime 50x:
// minimising inputs as large as a v1 record takes most of a short run.
func FuzzRewriteTimes(f *testing.F) {
	raws := v1Raw(f)
	f.Add(slices.MinFunc(raws, func(a, b []byte) int { return len(a) - len(b) }))
	f.Add([]byte(`{"id":"a_1","history":[{"role":"user","content":"hi"},{"role":"user","content":"q"}]}`))
	f.Add([]byte("{\"id\":\"a_1\",\"History\" : [ {\"role\":\"user\",\"TIME\":null} ,{\"role\":\"user\"}] }"))
	f.Add([]byte(`{"id":"a_1","history":[{"role":"user","content":"\"}\\","time":"x"},{"role":"user","content":"[{"}],"x":[[[]]]}`))
	f.Add([]byte(`{"id":"a_1","history":[{"role":"user","ti\u006de":"x"},{"role":"user"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := conversation.RawRecord{Source: "fuzz", Record: 1, Data: data}
		tr, err := conversation.ParseTrajectory(raw)
		if err != nil {
			_, _ = RewriteTimes(nil, data, &conversation.Trajectory{ID: "x", History: make([]conversation.Message, 2), FinalTimes: make([]time.Time, 3)})
			return
		}
		setTimes(tr)
		got, err := RewriteTimes(nil, data, tr)
		if errors.Is(err, ErrDuplicateKey) {
			return
		}
		require.NoError(t, err)
		require.True(t, json.Valid(got), "invalid JSON: %s", got)
		back, err := conversation.ParseTrajectory(conversation.RawRecord{Source: "fuzz", Record: 1, Data: got})
		require.NoError(t, err, "%s", got)
		require.Equal(t, tr.ID, back.ID)
		require.Equal(t, tr.FinalTimes, back.FinalTimes)
		require.Len(t, back.History, len(tr.History))
		for i := range tr.History {
			a, b := tr.History[i], back.History[i]
			require.Equal(t, a.Role, b.Role)
			require.Equal(t, a.Content, b.Content)
			require.Equal(t, a.ToolCalls, b.ToolCalls)
			if i < len(tr.History)-1 {
				require.True(t, a.Time.Equal(b.Time), "history[%d]", i)
			}
		}
	})
}
