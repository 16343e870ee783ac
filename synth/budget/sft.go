package budget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
)

// Trace is one teacher conversation, a line of the JSONL that "synth sft"
// reads:
//
//	{"custom_id": "t1#0",
//	 "messages": [system, user, assistant (tool_calls: get_duration), tool ("3.42 seconds."), ..., assistant (final answer)],
//	 "ground_truth": "42",
//	 "time_limit_s": 12.35,
//	 "elapsed_s": 8.1}
//
// custom_id is the request's (Row.RequestID); messages are
// OpenAI-style, the prompt included, with tool calls' arguments as JSON text
// or an object; ground_truth is the reference answer (string or number);
// time_limit_s is the budget (null or absent: none), the row's
// extra_info.time_limit_s; elapsed_s is the time the driver measured for the
// whole trace (for example the verifier timer's elapsed_s), never the
// teacher's own claim. Messages may carry other keys (refusal, annotations);
// they are ignored. Any other top-level key is an error, so that a misspelt
// time_limit_s cannot pass for "no limit".
type Trace struct {
	CustomID    string
	Messages    []conversation.Message
	GroundTruth string
	TimeLimitS  *float64
	ElapsedS    float64
	Line        int
}

var traceFields = []string{"custom_id", "messages", "ground_truth", "time_limit_s", "elapsed_s"}

// ParseTrace decodes one trace line; the *LineError it returns names the
// field and, once read, the custom_id.
func ParseTrace(line []byte) (*Trace, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, &LineError{Err: jsonscan.Explain("", line, err)}
	}
	if raw == nil {
		return nil, &LineError{Err: errors.New("want an object, got null")}
	}
	t := &Trace{}
	bad := func(field, format string, args ...any) error {
		return &LineError{ID: t.CustomID, Field: field, Err: fmt.Errorf(format, args...)}
	}
	id, ok, err := jsonString(raw["custom_id"])
	switch {
	case err != nil:
		return nil, bad("custom_id", "%v", err)
	case !ok || strings.TrimSpace(id) == "":
		return nil, bad("custom_id", "missing: every trace names the request it answers")
	}
	t.CustomID = id
	for k := range raw {
		if !slices.Contains(traceFields, k) {
			return nil, bad(k, "unknown field (a trace has %s)", strings.Join(traceFields, ", "))
		}
	}
	msgs, ok := raw["messages"]
	if !ok || isNull(msgs) {
		return nil, bad("messages", "missing")
	}
	if b := bytes.TrimSpace(msgs); len(b) == 0 || b[0] != '[' {
		return nil, bad("messages", "want an array of messages, got %s", truncate(b))
	}
	if err := json.Unmarshal(msgs, &t.Messages); err != nil {
		field, reason := jsonscan.ExplainField("messages", msgs, err)
		return nil, &LineError{ID: t.CustomID, Field: field, Err: reason}
	}
	if len(t.Messages) == 0 {
		return nil, bad("messages", "empty")
	}
	for i := range t.Messages {
		m := &t.Messages[i]
		switch m.Role {
		case conversation.RoleSystem, conversation.RoleUser, conversation.RoleTool:
			if m.Content == nil {
				return nil, bad(fmt.Sprintf("messages[%d].content", i), "null: a %s message needs text", m.Role)
			}
			if len(m.ToolCalls) > 0 {
				return nil, bad(fmt.Sprintf("messages[%d].tool_calls", i), "only an assistant message calls tools")
			}
		case conversation.RoleAssistant:
		default:
			return nil, bad(fmt.Sprintf("messages[%d].role", i), "%q is not system, user, assistant or tool", m.Role)
		}
	}
	if r := t.Messages[0].Role; r != conversation.RoleSystem && r != conversation.RoleUser {
		return nil, bad("messages[0].role", "%q: a conversation starts with the system or user message", r)
	}
	gt, ok := raw["ground_truth"]
	if !ok || isNull(gt) {
		return nil, bad("ground_truth", "missing: the reference answer the trace is checked against")
	}
	if t.GroundTruth, err = jsonAnswer(gt); err != nil {
		return nil, bad("ground_truth", "%v", err)
	}
	if limit, ok, err := jsonNumber(raw["time_limit_s"]); err != nil {
		return nil, bad("time_limit_s", "%v", err)
	} else if ok {
		if !(limit > 0) {
			return nil, bad("time_limit_s", "%v is not a positive number of seconds (null means no limit)", limit)
		}
		t.TimeLimitS = &limit
	}
	el, ok, err := jsonNumber(raw["elapsed_s"])
	switch {
	case err != nil:
		return nil, bad("elapsed_s", "%v", err)
	case !ok:
		return nil, bad("elapsed_s", "missing: the measured duration of the trace")
	case el < 0:
		return nil, bad("elapsed_s", "%v is negative", el)
	}
	t.ElapsedS = el
	return t, nil
}

// TraceReader reads a JSONL trace file one trace at a time, skipping blank
// lines.
type TraceReader struct{ lines lineReader }

// NewTraceReader reads traces from r; name is the file name used in errors.
func NewTraceReader(r io.Reader, name string) *TraceReader {
	return &TraceReader{lines: newLineReader(r, name)}
}

// Next returns the next trace, or io.EOF after the last one; a bad line
// yields a *LineError naming the file, line, custom_id and field.
func (r *TraceReader) Next() (*Trace, error) {
	line, err := r.lines.next()
	if err != nil {
		return nil, err
	}
	t, err := ParseTrace(line)
	if err != nil {
		return nil, r.lines.annotate(err)
	}
	t.Line = r.lines.line
	return t, nil
}

// Reasons a trace is left out of the SFT set, in the order they are checked.
const (
	// DropUnfinished: the last message is not an assistant answer (it is a
	// tool result, a tool call, or empty).
	DropUnfinished = "unfinished"
	// DropBadToolCall: a call names a tool the rows do not offer, or its
	// arguments are not a JSON object.
	DropBadToolCall = "bad_tool_call"
	// DropBadFormat: the final answer fails the reward's format check (no
	// answer tag; with rewards.timely.duration_tag, no or a dishonest
	// duration).
	DropBadFormat = "bad_format"
	// DropLate: the measured time exceeds the time limit.
	DropLate = "late"
	// DropWrongAnswer: the answer does not match the ground truth.
	DropWrongAnswer = "wrong_answer"
)

// DropReasons lists the reasons in the order they are checked.
var DropReasons = []string{DropUnfinished, DropBadToolCall, DropBadFormat, DropLate, DropWrongAnswer}

// SFTOptions configures the conversion of traces.
type SFTOptions struct {
	// Scorer checks each trace with the timely/general reward: the final
	// assistant message is the solution, the trace's ground truth, time
	// limit and elapsed time fill the item.
	Scorer *rewards.Scorer
	// ToolDescription is the get_duration description the rows list in
	// their tools ("" for the default); WriteSFT passes it to the
	// SFTRecordBuilder.
	ToolDescription string
}

// SFTRow is one kept trace as a row of VeRL's multi-turn SFT dataset.
type SFTRow struct {
	ID       string
	Messages []conversation.Message
	// TimeLimitS is nil when the trace had no limit.
	TimeLimitS *float64
	ElapsedS   float64
	// Score is the Timely-RL reward the trace earned.
	Score float64
}

// SFTSummary counts the traces read, kept and dropped by reason.
type SFTSummary struct {
	Traces  int            `json:"traces"`
	Kept    int            `json:"kept"`
	Dropped map[string]int `json:"dropped"`
}

// sftChecker decides whether a trace is kept.
type sftChecker struct {
	scorer                *rewards.Scorer
	acc, formatOK, onTime int
	tools                 []string
	gtBuf                 []byte
}

func newSFTChecker(opt SFTOptions) (*sftChecker, error) {
	if opt.Scorer == nil {
		return nil, errors.New("budget: sft: no scorer: traces are kept only when the rewards package verifies them")
	}
	c := &sftChecker{scorer: opt.Scorer, tools: []string{GetDurationName}, acc: -1, formatOK: -1, onTime: -1}
	for i, k := range rewards.TimelyGeneral.Keys {
		switch k {
		case "acc":
			c.acc = i
		case "format_ok":
			c.formatOK = i
		case "on_time":
			c.onTime = i
		}
	}
	if c.acc < 0 || c.formatOK < 0 || c.onTime < 0 {
		return nil, errors.New("budget: sft: the timely/general reward no longer reports acc, format_ok and on_time")
	}
	return c, nil
}

// check returns the reason to drop the trace ("" to keep it) and its score.
// It normalises the trace's tool calls in place: type "function", and "{}"
// for empty arguments.
func (c *sftChecker) check(ctx context.Context, t *Trace) (string, float64, error) {
	last := &t.Messages[len(t.Messages)-1]
	if last.Role != conversation.RoleAssistant || len(last.ToolCalls) > 0 || strings.TrimSpace(last.Text()) == "" {
		return DropUnfinished, 0, nil
	}
	for i := range t.Messages {
		for j := range t.Messages[i].ToolCalls {
			tc := &t.Messages[i].ToolCalls[j]
			if tc.Type == "" {
				tc.Type = "function"
			}
			if strings.TrimSpace(string(tc.Function.Arguments)) == "" {
				tc.Function.Arguments = "{}"
			}
			args := bytes.TrimSpace([]byte(tc.Function.Arguments))
			if tc.Type != "function" || !slices.Contains(c.tools, tc.Function.Name) || len(args) == 0 || args[0] != '{' || !json.Valid(args) {
				return DropBadToolCall, 0, nil
			}
		}
	}
	c.gtBuf, _ = json.Marshal(t.GroundTruth)
	el := t.ElapsedS
	res := c.scorer.ScoreWith(ctx, rewards.TimelyGeneral, &rewards.Item{
		DataSource:  rewards.TimelyGeneral.DataSource,
		SolutionStr: last.Text(),
		GroundTruth: c.gtBuf,
		ExtraInfo:   rewards.ExtraInfo{TimeLimitS: t.TimeLimitS, ElapsedS: &el},
	})
	if res.Err != nil {
		return "", 0, &LineError{ID: t.CustomID, Err: fmt.Errorf("scoring: %w", res.Err)}
	}
	d := res.Details
	switch {
	case d[c.formatOK] != 1:
		return DropBadFormat, res.Score, nil
	case d[c.onTime] != 1:
		return DropLate, res.Score, nil
	case d[c.acc] != 1:
		return DropWrongAnswer, res.Score, nil
	}
	return "", res.Score, nil
}

// ConvertTraces reads a JSONL trace file from r (name is used in errors),
// verifies each trace with the rewards package and hands the traces that are
// correct, well-formed and on time to emit, in input order. A malformed line
// stops it with a *LineError; a trace that fails a check is counted under
// its reason in the summary.
func ConvertTraces(ctx context.Context, r io.Reader, name string, opt SFTOptions, emit func(*SFTRow) error) (*SFTSummary, error) {
	c, err := newSFTChecker(opt)
	if err != nil {
		return nil, err
	}
	sum := &SFTSummary{Dropped: map[string]int{}}
	for _, reason := range DropReasons {
		sum.Dropped[reason] = 0
	}
	tr := NewTraceReader(r, name)
	for {
		if sum.Traces%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t, err := tr.Next()
		if errors.Is(err, io.EOF) && sum.Traces == 0 {
			return nil, fmt.Errorf("%s: %w", name, dataset.ErrNoRecords)
		}
		if errors.Is(err, io.EOF) {
			return sum, nil
		}
		if err != nil {
			return nil, err
		}
		sum.Traces++
		reason, score, err := c.check(ctx, t)
		if err != nil {
			return nil, tr.lines.annotate(err)
		}
		if reason != "" {
			sum.Dropped[reason]++
			continue
		}
		sum.Kept++
		if err := emit(&SFTRow{ID: t.CustomID, Messages: t.Messages, TimeLimitS: t.TimeLimitS, ElapsedS: t.ElapsedS, Score: score}); err != nil {
			return nil, err
		}
	}
}
