package budget

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/rewards"
)

const (
	sysMsg  = `{"role":"system","content":"Work against the clock."}`
	userMsg = `{"role":"user","content":"What is 6 times 7?\n\nYour time budget for this task is 10.00 seconds."}`
	callMsg = `{"role":"assistant","content":"Let me check the time.","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_duration","arguments":"{}"}}]}`
	toolMsg = `{"role":"tool","tool_call_id":"c1","content":"2.10 seconds."}`
)

func answerMsg(text string) string {
	b, _ := json.Marshal(map[string]string{"role": "assistant", "content": text})
	return string(b)
}

func traceLine(id string, msgs []string, extra string) string {
	return `{"custom_id":"` + id + `","messages":[` + strings.Join(msgs, ",") + `],"ground_truth":42` + extra + `}`
}

func convert(t *testing.T, cfg rewards.Config, lines ...string) ([]SFTRow, *SFTSummary) {
	t.Helper()
	scorer, err := rewards.NewScorer(cfg, nil)
	require.NoError(t, err)
	var rows []SFTRow
	sum, err := ConvertTraces(context.Background(), strings.NewReader(strings.Join(lines, "\n")), "traces.jsonl", SFTOptions{Scorer: scorer}, func(r *SFTRow) error {
		rows = append(rows, *r)
		return nil
	})
	require.NoError(t, err)
	return rows, sum
}

func TestConvertTracesKeepsOnlyVerifiedTraces(t *testing.T) {
	good := answerMsg("6 × 7 = 42. <answer>42</answer>")
	timed := `,"time_limit_s":10,"elapsed_s":5`
	rows, sum := convert(t, rewards.DefaultConfig(),
		traceLine("keep-timed", []string{sysMsg, userMsg, callMsg, toolMsg, good}, timed),
		traceLine("keep-no-limit", []string{userMsg, good}, `,"time_limit_s":null,"elapsed_s":500`),
		traceLine("keep-object-args", []string{sysMsg, userMsg,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"get_duration","arguments":{}}}]}`,
			toolMsg,
			`{"role":"assistant","content":"","tool_calls":[{"id":"c2","type":"function","function":{"name":"get_duration","arguments":""}}]}`,
			`{"role":"tool","tool_call_id":"c2","content":"3.00 seconds."}`, good}, timed),
		traceLine("ends-with-tool", []string{sysMsg, userMsg, callMsg, toolMsg}, timed),
		traceLine("ends-with-call", []string{sysMsg, userMsg, callMsg}, timed),
		traceLine("ends-empty", []string{sysMsg, userMsg, answerMsg("  ")}, timed),
		traceLine("other-tool", []string{sysMsg, userMsg, strings.Replace(callMsg, "get_duration", "web_search", 1), toolMsg, good}, timed),
		traceLine("array-args", []string{sysMsg, userMsg, strings.Replace(callMsg, `"{}"`, `"[1]"`, 1), toolMsg, good}, timed),
		traceLine("broken-args", []string{sysMsg, userMsg, strings.Replace(callMsg, `"{}"`, `"{"`, 1), toolMsg, good}, timed),
		traceLine("no-tag", []string{sysMsg, userMsg, answerMsg("It is 42.")}, timed),
		traceLine("late", []string{sysMsg, userMsg, good}, `,"time_limit_s":10,"elapsed_s":10.5`),
		traceLine("wrong", []string{sysMsg, userMsg, answerMsg("<answer>41</answer>")}, timed),
		traceLine("wrong-and-late", []string{sysMsg, userMsg, answerMsg("<answer>41</answer>")}, `,"time_limit_s":10,"elapsed_s":11`),
	)
	assert.Equal(t, &SFTSummary{Traces: 13, Kept: 3, Dropped: map[string]int{
		DropUnfinished: 3, DropBadToolCall: 3, DropBadFormat: 1, DropLate: 2, DropWrongAnswer: 1,
	}}, sum)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"keep-timed", "keep-no-limit", "keep-object-args"}, []string{rows[0].ID, rows[1].ID, rows[2].ID})

	assert.InDelta(t, 0.1+0.5+0.4*math.Sin(math.Pi/2*0.5), rows[0].Score, 1e-12)
	require.NotNil(t, rows[0].TimeLimitS)
	assert.Equal(t, 10.0, *rows[0].TimeLimitS)
	assert.Equal(t, 5.0, rows[0].ElapsedS)
	assert.Len(t, rows[0].Messages, 5)

	assert.Nil(t, rows[1].TimeLimitS)
	assert.InDelta(t, 0.6, rows[1].Score, 1e-12, "no limit: no utilisation term")

	calls := [][2]string{}
	for _, m := range rows[2].Messages {
		for _, c := range m.ToolCalls {
			calls = append(calls, [2]string{c.Type, string(c.Function.Arguments)})
		}
	}
	assert.Equal(t, [][2]string{{"function", "{}"}, {"function", "{}"}}, calls, "tool calls are normalised")
}

func TestConvertTracesHonestyCheck(t *testing.T) {
	cfg := rewards.DefaultConfig()
	cfg.Timely.DurationTag = "conclusion"
	cfg.Timely.HonestyTolerance = 0.2
	honest := answerMsg("<conclusion>total duration: 8.3 seconds</conclusion> <answer>42</answer>")
	dishonest := answerMsg("<conclusion>total duration: 2 seconds</conclusion> <answer>42</answer>")
	silent := answerMsg("<answer>42</answer>")
	_, sum := convert(t, cfg,
		traceLine("honest", []string{userMsg, honest}, `,"time_limit_s":10,"elapsed_s":8`),
		traceLine("dishonest", []string{userMsg, dishonest}, `,"time_limit_s":10,"elapsed_s":8`),
		traceLine("silent", []string{userMsg, silent}, `,"time_limit_s":10,"elapsed_s":8`),
	)
	assert.Equal(t, 1, sum.Kept)
	assert.Equal(t, 2, sum.Dropped[DropBadFormat])
}

func TestParseTraceErrors(t *testing.T) {
	ok := []string{sysMsg, userMsg, answerMsg("<answer>42</answer>")}
	tests := []struct {
		name  string
		line  string
		id    string
		field string
		msg   string
	}{
		{"not an object", `[1]`, "", "", "want an object, got a list"},
		{"missing custom_id", `{"messages":[]}`, "", "custom_id", "missing"},
		{"unknown field", traceLine("a", ok, `,"elapsed_s":1,"time_limit":5`), "a", "time_limit", "unknown field"},
		{"messages missing", `{"custom_id":"a","ground_truth":1,"elapsed_s":1}`, "a", "messages", "missing"},
		{"messages not a list", `{"custom_id":"a","messages":{"role":"user"},"ground_truth":1,"elapsed_s":1}`, "a", "messages", "want an array"},
		{"no messages", traceLine("a", nil, `,"elapsed_s":1`), "a", "messages", "empty"},
		{"bad role", traceLine("a", []string{`{"role":"robot","content":"x"}`}, `,"elapsed_s":1`), "a", "messages[0].role", "not system"},
		{"tool without text", traceLine("a", []string{userMsg, `{"role":"tool","content":null}`}, `,"elapsed_s":1`), "a", "messages[1].content", "null"},
		{"user calling a tool", traceLine("a", []string{strings.Replace(callMsg, `"assistant"`, `"user"`, 1)}, `,"elapsed_s":1`), "a", "messages[0].tool_calls", "only an assistant"},
		{"starts with the assistant", traceLine("a", []string{answerMsg("hi"), userMsg}, `,"elapsed_s":1`), "a", "messages[0].role", "starts with"},
		{"no ground truth", `{"custom_id":"a","messages":[` + userMsg + `],"elapsed_s":1}`, "a", "ground_truth", "missing"},
		{"zero limit", traceLine("a", ok, `,"time_limit_s":0,"elapsed_s":1`), "a", "time_limit_s", "not a positive number"},
		{"limit as text", traceLine("a", ok, `,"time_limit_s":"5","elapsed_s":1`), "a", "time_limit_s", "want a number"},
		{"no elapsed", traceLine("a", ok, ``), "a", "elapsed_s", "missing"},
		{"negative elapsed", traceLine("a", ok, `,"elapsed_s":-1`), "a", "elapsed_s", "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace([]byte(tt.line))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.id, le.ID)
			assert.Equal(t, tt.field, le.Field)
			assert.Contains(t, le.Err.Error(), tt.msg)
		})
	}
}

func TestConvertTracesStopsAtABadLine(t *testing.T) {
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	input := traceLine("a", []string{userMsg, answerMsg("<answer>42</answer>")}, `,"elapsed_s":1`) + "\n\n" +
		traceLine("b", []string{userMsg}, `,"elapsed_s":"soon"`) + "\n"
	_, err = ConvertTraces(context.Background(), strings.NewReader(input), "traces.jsonl", SFTOptions{Scorer: scorer}, func(*SFTRow) error { return nil })
	require.Error(t, err)
	assert.Equal(t, `budget: traces.jsonl: line 3 (id b): elapsed_s: want a number, got "soon"`, err.Error())

	_, err = ConvertTraces(context.Background(), strings.NewReader(input), "traces.jsonl", SFTOptions{}, func(*SFTRow) error { return nil })
	assert.ErrorContains(t, err, "no scorer")
}

// TestSFTRecordLayout pins the row layout VeRL's MultiTurnSFTDataset reads.
func TestSFTRecordLayout(t *testing.T) {
	rows, _ := convert(t, rewards.DefaultConfig(),
		traceLine("t1#0", []string{sysMsg, userMsg, callMsg, toolMsg, answerMsg("<answer>42</answer>")}, `,"time_limit_s":10,"elapsed_s":10`))
	require.Len(t, rows, 1)
	rb := NewSFTRecordBuilder(nil, "")
	defer rb.Release()
	rb.Append(&rows[0])
	rec := rb.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := dataset.JSONL.NewWriter(&buf, SFTSchema, dataset.Options{})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	want := `{"messages":[` +
		`{"role":"system","content":"Work against the clock.","tool_calls":null,"tool_call_id":null,"name":null},` +
		`{"role":"user","content":"What is 6 times 7?\n\nYour time budget for this task is 10.00 seconds.","tool_calls":null,"tool_call_id":null,"name":null},` +
		`{"role":"assistant","content":"Let me check the time.","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_duration","arguments":"{}"}}],"tool_call_id":null,"name":null},` +
		`{"role":"tool","content":"2.10 seconds.","tool_calls":null,"tool_call_id":"c1","name":null},` +
		`{"role":"assistant","content":"<answer>42</answer>","tool_calls":null,"tool_call_id":null,"name":null}],` +
		`"tools":[{"type":"function","function":{"name":"get_duration","description":"Get the total time elapsed since the task started, in seconds.","parameters":{"type":"object","required":[]}}}],` +
		`"id":"t1#0","time_limit_s":10.0,"elapsed_s":10.0,"score":1.0}` + "\n"
	assert.Equal(t, want, buf.String())

	var pq bytes.Buffer
	pw, err := dataset.Parquet.NewWriter(&pq, SFTSchema, dataset.Options{})
	require.NoError(t, err)
	require.NoError(t, pw.Write(rec), "Parquet holds the layout: no empty struct")
	require.NoError(t, pw.Close())
}
