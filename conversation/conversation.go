// Package conversation holds the chat types shared by every part of timeaware:
// OpenAI-style messages with tool calls, tool schemas, and TicToc trajectories
// whose messages carry the time at which they were completed.
//
// The types mirror the JSON that chat-completions APIs and the TicToc release
// use, so a record read here can be written back out without loss of the
// fields the toolkit understands.
package conversation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// Roles a message may have.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Elapse levels of a trajectory's final user message: the three gaps, small to
// large, that precede the follow-up question.
const (
	ElapseSmall  = 0
	ElapseMedium = 1
	ElapseLarge  = 2
	// NumElapse is the number of elapse levels a trajectory's final message carries.
	NumElapse = 3
)

// Message is one turn of a chat. Content is nil when the JSON had null (an
// assistant turn that only calls tools). Time is the moment the message was
// completed; it is the zero time when the input had none. The final user
// message of a trajectory keeps its per-level times in Trajectory.FinalTimes.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	Time       time.Time  `json:"-"`
}

// Text returns the message content, or "" when it is null.
func (m *Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// ToolCall is a call the assistant makes, in the OpenAI layout.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text, the
// form chat-completions APIs use. Arguments given as a JSON object are kept as
// their compact JSON text.
type FunctionCall struct {
	Name      string    `json:"name"`
	Arguments Arguments `json:"arguments"`
}

// Arguments is the JSON text of a call's arguments. It decodes from either a
// JSON string holding the text (OpenAI) or a JSON object (Hugging Face chat
// templates) and always encodes as a JSON string.
type Arguments string

// UnmarshalJSON accepts a JSON string or any other JSON value.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Arguments(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*a = ""
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = Arguments(buf.String())
	return nil
}

// Tool is an OpenAI tool schema: a function the agent may call.
type Tool struct {
	Type     string       `json:"type"`
	Function ToolFunction `json:"function"`
}

// ToolFunction describes a callable function; Parameters is its JSON Schema,
// kept verbatim.
type ToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Trajectory is one TicToc record: a multi-turn tool-use conversation whose
// last message is the user's follow-up question, asked after one of three
// elapsed times.
//
// The optional fields are nil or empty when the record does not carry them.
// PrefScore, Preference and DirectAnswer hold either one value shared by all
// elapse levels or one value per level (see ForElapse helpers).
type Trajectory struct {
	ID      string
	History []Message
	// FinalTimes are the times of the final user message, one per elapse
	// level, small to large. Empty when the record has none.
	FinalTimes []time.Time
	Tools      []Tool
	// ToolsJSON is the record's tool list as compact JSON text, kept so that
	// writers need not encode it again.
	ToolsJSON []byte

	Scenario     string
	Sensitivity  string
	PrefScore    []*float64
	Preference   []string
	DirectAnswer []*string
	// ToolCall, when the record has one, is the call that the tool-call
	// response should make instead of repeating the most recent one.
	ToolCall []ToolCall
	// Elapse is the one elapse level the record is a sample of (its
	// "elapse" field, as a merged file of TicToc v1 records carries it), or
	// nil when the record is a sample at every level.
	Elapse *int
}

// CheckTimes reports the first message whose time is missing or earlier than
// the message before it, and a final message without one time per elapse
// level, naming the field as the reader does (history[3].time).
func (t *Trajectory) CheckTimes() (field string, err error) {
	var prev time.Time
	last := len(t.History) - 1
	for i := 0; i < last; i++ {
		m := &t.History[i]
		if m.Time.IsZero() {
			return fmt.Sprintf("history[%d].time", i), fmt.Errorf("missing")
		}
		if m.Time.Before(prev) {
			return fmt.Sprintf("history[%d].time", i), fmt.Errorf("%s is earlier than the previous message (%s)", FormatTime(m.Time), FormatTime(prev))
		}
		prev = m.Time
	}
	f := fmt.Sprintf("history[%d].time", last)
	if len(t.FinalTimes) != NumElapse {
		return f, fmt.Errorf("missing: the final message needs %d times, one per elapse level", NumElapse)
	}
	for k, ft := range t.FinalTimes {
		if ft.Before(prev) {
			return fmt.Sprintf("%s[%d]", f, k), fmt.Errorf("%s is earlier than the previous message (%s)", FormatTime(ft), FormatTime(prev))
		}
	}
	return "", nil
}

// Final returns the final message of the history, or nil for an empty history.
func (t *Trajectory) Final() *Message {
	if len(t.History) == 0 {
		return nil
	}
	return &t.History[len(t.History)-1]
}

// ScoreAt returns the record's mean human score for an elapse level, if any.
func (t *Trajectory) ScoreAt(elapse int) (float64, bool) {
	v := pick(t.PrefScore, elapse)
	if v == nil {
		return 0, false
	}
	return *v, true
}

// V1Name reads a TicToc v1 file name, prefer(Tool|NoTool)_elapse_<k>.json
// (or .jsonl): the preference class of its records and their elapse level.
func V1Name(name string) (label string, elapse int, ok bool) {
	m := v1Name.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return "", -1, false
	}
	label = PreferTool
	if m[1] == "NoTool" {
		label = PreferDirect
	}
	elapse, _ = strconv.Atoi(m[2])
	return label, elapse, true
}

var v1Name = regexp.MustCompile(`^prefer(Tool|NoTool)_elapse_([0-2])\.(json|jsonl)$`)

// PreferenceAt returns the record's preference class ("tool" or "direct") for
// an elapse level, or "" when the record has none.
func (t *Trajectory) PreferenceAt(elapse int) string {
	switch len(t.Preference) {
	case 0:
		return ""
	case 1:
		return t.Preference[0]
	}
	if elapse < len(t.Preference) {
		return t.Preference[elapse]
	}
	return ""
}

// DirectAnswerAt returns the record's direct-reply text for an elapse level.
func (t *Trajectory) DirectAnswerAt(elapse int) (string, bool) {
	v := pick(t.DirectAnswer, elapse)
	if v == nil {
		return "", false
	}
	return *v, true
}

func pick[T any](vals []*T, elapse int) *T {
	switch {
	case len(vals) == 1:
		return vals[0]
	case elapse >= 0 && elapse < len(vals):
		return vals[elapse]
	}
	return nil
}

// LastToolCallTurn returns the index of the most recent assistant message that
// calls tools, or -1.
func (t *Trajectory) LastToolCallTurn() int {
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == RoleAssistant && len(t.History[i].ToolCalls) > 0 {
			return i
		}
	}
	return -1
}

// FormatTime renders a time the way TicToc records do: ISO 8601 in UTC with a
// trailing Z, to the second unless sub-second digits are present.
func FormatTime(t time.Time) string {
	return string(AppendTime(nil, t))
}

// AppendTime appends FormatTime's rendering to b, for hot paths that build
// strings around it.
func AppendTime(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, time.RFC3339Nano)
}

// ParseTime parses an ISO 8601 / RFC 3339 timestamp.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q (want RFC 3339, e.g. 2025-12-04T10:22:44Z)", s)
	}
	return t, nil
}

// ScenarioAlias returns the scenario alias of a trajectory id of the form
// <alias>_<n>: the id without its trailing underscore and
// digits. An id without such a suffix, or with nothing before it, is its own
// alias.
func ScenarioAlias(id string) string {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	if i == len(id) || i < 2 || id[i-1] != '_' {
		return id
	}
	return id[:i-1]
}
