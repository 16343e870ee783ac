package budget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth"
)

// GetDurationName is the name of the timer tool, as the verifier service
// and the Python adapter's GetDurationTool call it.
const GetDurationName = "get_duration"

// DefaultGetDurationDescription is the tool description the Python
// adapter's tool schema and example tool config use: the teacher and the
// SFT rows show the model the same text as the RL rollouts.
const DefaultGetDurationDescription = "Get the total time elapsed since the task started, in seconds."

// getDurationParameters is the JSON Schema of get_duration's arguments:
// none.
var getDurationParameters = json.RawMessage(`{"type":"object","properties":{},"required":[]}`)

// GetDurationTool returns the get_duration tool schema with a description
// ("" gives DefaultGetDurationDescription).
func GetDurationTool(description string) conversation.Tool {
	if description == "" {
		description = DefaultGetDurationDescription
	}
	return conversation.Tool{
		Type:     "function",
		Function: conversation.ToolFunction{Name: GetDurationName, Description: description, Parameters: getDurationParameters},
	}
}

// TeacherOptions configures the distillation requests.
type TeacherOptions struct {
	// Model is the teacher model the requests name.
	Model string
	// Temperature is the sampling temperature; nil leaves it to the server.
	Temperature *float64
	// MaxCompletionTokens caps the reply; 0 leaves it to the server.
	MaxCompletionTokens int
	// ToolDescription is get_duration's description ("" for the default).
	ToolDescription string
}

// TeacherEndpoint is the url of every request line.
const TeacherEndpoint = "/v1/chat/completions"

// TeacherEncoder writes distillation requests in the OpenAI batch API's
// input format, one JSON line per row:
//
//	{"custom_id": "<task id>#<variant>", "method": "POST", "url": "/v1/chat/completions",
//	 "body": {"model", "messages": <the row's prompt>, "tools": [get_duration],
//	          "temperature"?, "max_completion_tokens"?}}
//
// The messages are the row's system and user turns, so the teacher sees the
// prompt the RL policy will see, budget sentence included. A batch request
// yields the teacher's first turn; a driver that answers its get_duration
// calls continues the conversation and records the trace that "synth sft"
// reads (see Trace). An encoder is not safe for concurrent use.
type TeacherEncoder struct {
	model  []byte // the quoted model name
	tail   []byte // tools, sampling options and the closing braces
	system string // the system text of the last row, and its quoted form
	sysQ   []byte
	buf    []byte
}

// NewTeacherEncoder checks the options and returns an encoder; a bad option
// is an *synth.OptionError keyed teacher.model, teacher.temperature or
// teacher.max_tokens.
func NewTeacherEncoder(opt TeacherOptions) (*TeacherEncoder, error) {
	if strings.TrimSpace(opt.Model) == "" {
		return nil, &synth.OptionError{Family: "budget", Key: "teacher.model", Err: errors.New("empty: the requests must name a model")}
	}
	if t := opt.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, &synth.OptionError{Family: "budget", Key: "teacher.temperature", Err: fmt.Errorf("%v is not in [0, 2]", *t)}
	}
	if opt.MaxCompletionTokens < 0 {
		return nil, &synth.OptionError{Family: "budget", Key: "teacher.max_tokens", Err: fmt.Errorf("%d is negative", opt.MaxCompletionTokens)}
	}
	var tools bytes.Buffer
	enc := json.NewEncoder(&tools)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]conversation.Tool{GetDurationTool(opt.ToolDescription)}); err != nil {
		return nil, fmt.Errorf("budget: teacher tools: %w", err)
	}
	tail := append([]byte(`,"tools":`), bytes.TrimSpace(tools.Bytes())...)
	if t := opt.Temperature; t != nil {
		tail = append(tail, `,"temperature":`...)
		tail = strconv.AppendFloat(tail, *t, 'g', -1, 64)
	}
	if n := opt.MaxCompletionTokens; n > 0 {
		tail = append(tail, `,"max_completion_tokens":`...)
		tail = strconv.AppendInt(tail, int64(n), 10)
	}
	tail = append(tail, "}}\n"...)
	return &TeacherEncoder{model: dataset.AppendJSONString(nil, opt.Model), tail: tail}, nil
}

// Encode returns the request line of a row, newline included. The slice is
// valid until the next call.
func (e *TeacherEncoder) Encode(row *Row) []byte {
	if e.sysQ == nil || row.System != e.system {
		e.system, e.sysQ = row.System, dataset.AppendJSONString(nil, row.System)
	}
	b := append(e.buf[:0], `{"custom_id":`...)
	b = dataset.AppendJSONString(b, row.TaskID+"#"+strconv.Itoa(row.Variant))
	b = append(b, `,"method":"POST","url":"`+TeacherEndpoint+`","body":{"model":`...)
	b = append(b, e.model...)
	b = append(b, `,"messages":[{"role":"system","content":`...)
	b = append(b, e.sysQ...)
	b = append(b, `},{"role":"user","content":`...)
	b = dataset.AppendJSONString(b, row.User)
	b = append(b, "}]"...)
	b = append(b, e.tail...)
	e.buf = b
	return b
}
