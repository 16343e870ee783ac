package budget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/output"
)

func text(s string) *string { return &s }

// distillLine is a line of TRACES.jsonl as synth distill has always
// encoded it: the messages through json.Marshal into a raw message, the
// line through an Encoder that does not escape HTML.
func distillLine(t *testing.T, id string, msgs []conversation.Message, gt string, limit *float64, elapsed float64) string {
	t.Helper()
	raw, err := json.Marshal(msgs)
	require.NoError(t, err)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(struct {
		CustomID    string          `json:"custom_id"`
		Messages    json.RawMessage `json:"messages"`
		GroundTruth string          `json:"ground_truth"`
		TimeLimitS  *float64        `json:"time_limit_s"`
		ElapsedS    float64         `json:"elapsed_s"`
	}{id, raw, gt, limit, elapsed}))
	return b.String()
}

func TestTraceMarshalJSON(t *testing.T) {
	limit := 12.35
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: text("Answer in <answer></answer> & be quick.")},
		{Role: conversation.RoleUser, Content: text("Is 3 < 4 > 2? \u2028 ünïcode")},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Type: "function",
			Function: conversation.FunctionCall{Name: GetDurationName, Arguments: "{}"}}}},
		{Role: conversation.RoleTool, ToolCallID: "c1", Content: text("2.10 seconds.")},
		{Role: conversation.RoleAssistant, Content: text("<answer>42</answer>")},
	}
	for _, tc := range []struct {
		name  string
		trace Trace
	}{
		{"limit", Trace{CustomID: "t<1>#0/sample-1", Messages: msgs, GroundTruth: "a & <b>", TimeLimitS: &limit, ElapsedS: 8.100000000000001, Line: 9}},
		{"no limit", Trace{CustomID: "t1#1", Messages: msgs[:2], GroundTruth: "42", ElapsedS: 0}},
		{"big elapsed", Trace{CustomID: "t1#2", Messages: msgs[1:], GroundTruth: "0", ElapsedS: 1e21}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.trace
			got, err := tr.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, distillLine(t, tr.CustomID, tr.Messages, tr.GroundTruth, tr.TimeLimitS, tr.ElapsedS), string(got)+"\n")
			back, err := ParseTrace(got)
			require.NoError(t, err)
			tr.Line = 0
			assert.Equal(t, &tr, back, "ParseTrace reads what MarshalJSON writes")
		})
	}
	got, err := json.Marshal(Trace{CustomID: "x", Messages: msgs[4:], GroundTruth: "<b>", ElapsedS: 1.5})
	require.NoError(t, err)
	assert.Equal(t, `{"custom_id":"x","messages":[{"role":"assistant","content":"\u003canswer\u003e42\u003c/answer\u003e"}],"ground_truth":"\u003cb\u003e","time_limit_s":null,"elapsed_s":1.5}`,
		string(got), "json.Marshal uses it (and escapes the rest as it does)")
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(Trace{CustomID: "x", Messages: msgs[4:], GroundTruth: "<b>", ElapsedS: 1.5}))
	assert.Equal(t, `{"custom_id":"x","messages":[{"role":"assistant","content":"\u003canswer\u003e42\u003c/answer\u003e"}],"ground_truth":"<b>","time_limit_s":null,"elapsed_s":1.5}`+"\n",
		plain.String())
}

// conv is a finished conversation of row id, sample k: the prompt, one
// timer call and an answer.
func conv(id string, k int) *Conversation {
	return &Conversation{ID: id, Sample: k, RequestID: fmt.Sprintf("%s/%d", id, k),
		Prompt: []conversation.Message{{Role: conversation.RoleSystem, Content: text("Be quick.")}, {Role: conversation.RoleUser, Content: text("6 × 7?")}},
		Turns: []conversation.Message{{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c", Type: "function",
			Function: conversation.FunctionCall{Name: GetDurationName, Arguments: "{}"}}}},
			{Role: conversation.RoleTool, ToolCallID: "c", Content: text("1.00 seconds.")}, {Role: conversation.RoleAssistant, Content: text("<answer>42</answer>")}},
		GroundTruth: json.RawMessage(`"42"`), TimeLimitS: 10, ElapsedS: 3.25, OnTime: true, Right: true}
}

func TestDistill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "traces.jsonl")
	with := func(c *Conversation, f func(*Conversation)) *Conversation { f(c); return c }
	convs := []*Conversation{
		conv("a#0", 0),
		conv("a#0", 1),
		nil, // unfinished: no trace, not counted
		with(conv("b#0", 0), func(c *Conversation) { c.Right = false }),
		with(conv("b#0", 1), func(c *Conversation) { c.OnTime = false }),
		with(conv("c#0", 0), func(c *Conversation) { c.OutOfTime, c.OnTime = true, true }),
		with(conv("c#0", 1), func(c *Conversation) { c.TurnLimit, c.OutOfTime = true, true }),
		with(conv("d#0", 0), func(c *Conversation) { c.TimeLimitS, c.GroundTruth = 0, json.RawMessage(" 42 ") }),
		with(conv("d#0", 1), func(c *Conversation) { c.GroundTruth = json.RawMessage(`{"x": 1}`) }),
	}
	for i := range 4 {
		convs = append(convs, with(conv("e#0", i), func(c *Conversation) { c.Error = fmt.Sprintf("boom %d", i) }))
	}
	manifest := output.Manifest{Tool: "timeaware", Version: "test", Command: "synth distill", Config: map[string]any{"model": "m"}}
	type key struct{}
	var got any
	ctx := context.WithValue(context.Background(), key{}, "mine")
	d, err := Distill(ctx, DistillOptions{Path: path, Samples: 2, Rows: 7, Skipped: 3, Manifest: manifest},
		func(ctx context.Context) ([]*Conversation, bool, error) {
			got = ctx.Value(key{})
			_, err := os.Stat(path)
			assert.True(t, errors.Is(err, os.ErrNotExist), "the file appears only when committed")
			return convs, true, nil
		})
	require.NoError(t, err)
	assert.Equal(t, "mine", got, "the teacher runs under Distill's context")
	assert.Equal(t, DistillSummary{Rows: 7, Traces: 8, OnTime: 5, Late: 2, Unfinished: 1, Failed: 4, Right: 4, Skipped: 3}, d.Summary)
	assert.Equal(t, 13, d.Conversations)
	assert.Equal(t, []string{"e#0/0: boom 0", "e#0/1: boom 1", "e#0/2: boom 2"}, d.FirstErrors)
	assert.True(t, d.Written)

	var want strings.Builder
	for _, c := range convs[:9] {
		if c == nil {
			continue
		}
		msgs := append(append([]conversation.Message{}, c.Prompt...), c.Turns...)
		var limit *float64
		if c.TimeLimitS > 0 {
			limit = &c.TimeLimitS
		}
		gt := map[string]string{`"42"`: "42", " 42 ": "42", `{"x": 1}`: `{"x": 1}`}[string(c.GroundTruth)]
		want.WriteString(distillLine(t, fmt.Sprintf("%s/sample-%d", c.ID, c.Sample), msgs, gt, limit, c.ElapsedS))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(b), "the traces in order, as synth distill writes them")
	assert.Len(t, convs[0].Prompt, 2, "the prompt is not appended to in place")

	raw, err := os.ReadFile(output.ManifestPath(path))
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"inputs": null`, "distill's manifest records no input file")
	m, err := output.ReadManifest(output.ManifestPath(path), true)
	require.NoError(t, err)
	require.Len(t, m.Outputs, 1)
	assert.Equal(t, RoleTraces, m.Outputs[0].Role)
	assert.Equal(t, 8, *m.Outputs[0].Rows)
	assert.Equal(t, "synth distill", m.Command)
	assert.Equal(t, "m", m.Config["model"])
	assert.Equal(t, 4.0, m.Summary.(map[string]any)["failed"])

	t.Run("one sample", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "traces.jsonl")
		_, err := Distill(context.Background(), DistillOptions{Path: path, Samples: 1},
			func(context.Context) ([]*Conversation, bool, error) { return convs[:1], true, nil })
		require.NoError(t, err)
		assert.Equal(t, "a#0", jsonLines(t, path)[0]["custom_id"], "the row's id as it is")
	})
}

func TestDistillWritesNothingUnlessTheRunFinished(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "traces.jsonl")
	d, err := Distill(context.Background(), DistillOptions{Path: path, Samples: 1, Rows: 2},
		func(context.Context) ([]*Conversation, bool, error) {
			return []*Conversation{conv("a#0", 0), nil, failed(conv("b#0", 0), "down")}, false, nil
		})
	require.NoError(t, err)
	assert.False(t, d.Written)
	assert.Equal(t, DistillSummary{Rows: 2, Traces: 1, OnTime: 1, Right: 1, Failed: 1}, d.Summary, "counted all the same")
	assert.Equal(t, 3, d.Conversations)
	assert.Equal(t, []string{"b#0/0: down"}, d.FirstErrors)
	assert.Empty(t, entries(t, dir))

	boom := errors.New("no endpoint")
	d, err = Distill(context.Background(), DistillOptions{Path: path},
		func(context.Context) ([]*Conversation, bool, error) { return nil, false, boom })
	assert.Nil(t, d)
	assert.Same(t, boom, err, "the teacher's error as it is")
	assert.Empty(t, entries(t, dir))

	called := false
	bad := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(bad, nil, 0o644))
	_, err = Distill(context.Background(), DistillOptions{Path: filepath.Join(bad, "traces.jsonl")},
		func(context.Context) ([]*Conversation, bool, error) { called = true; return nil, true, nil })
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, FileError{Role: RoleTraces, Path: filepath.Join(bad, "traces.jsonl"), Err: fe.Err}, *fe)
	assert.False(t, called, "nothing is asked before the file is created")
}

// failed is c failed with err.
func failed(c *Conversation, err string) *Conversation {
	c.Error = err
	return c
}
