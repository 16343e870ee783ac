package budget

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTeacherEncoder(t *testing.T) {
	row := &Row{TaskID: "t-1", Variant: 2, System: "Use <answer></answer> & be quick.", User: "Q?\n\nYour time budget for this task is 6.90 seconds."}
	temp := 0.6
	tests := []struct {
		name string
		opt  TeacherOptions
		want string
	}{
		{"all options", TeacherOptions{Model: "teacher-1", Temperature: &temp, MaxCompletionTokens: 4096, ToolDescription: "How long so far."},
			`{"custom_id":"t-1#2","method":"POST","url":"/v1/chat/completions","body":{"model":"teacher-1","messages":[{"role":"system","content":"Use <answer></answer> & be quick."},{"role":"user","content":"Q?\n\nYour time budget for this task is 6.90 seconds."}],"tools":[{"type":"function","function":{"name":"get_duration","description":"How long so far.","parameters":{"type":"object","properties":{},"required":[]}}}],"temperature":0.6,"max_completion_tokens":4096}}` + "\n"},
		{"server defaults", TeacherOptions{Model: "teacher-1"},
			`{"custom_id":"t-1#2","method":"POST","url":"/v1/chat/completions","body":{"model":"teacher-1","messages":[{"role":"system","content":"Use <answer></answer> & be quick."},{"role":"user","content":"Q?\n\nYour time budget for this task is 6.90 seconds."}],"tools":[{"type":"function","function":{"name":"get_duration","description":"Get the total time elapsed since the task started, in seconds.","parameters":{"type":"object","properties":{},"required":[]}}}]}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := NewTeacherEncoder(tt.opt)
			require.NoError(t, err)
			line := enc.Encode(row)
			assert.Equal(t, tt.want, string(line))
			assert.True(t, json.Valid(bytes.TrimSpace(line)))
		})
	}
}

func TestTeacherEncoderOptions(t *testing.T) {
	bad := 3.0
	neg := -0.1
	for _, opt := range []TeacherOptions{
		{},
		{Model: " "},
		{Model: "m", Temperature: &bad},
		{Model: "m", Temperature: &neg},
		{Model: "m", MaxCompletionTokens: -1},
	} {
		_, err := NewTeacherEncoder(opt)
		assert.Error(t, err, "%+v", opt)
	}
}

func TestGetDurationToolMatchesTheAdapter(t *testing.T) {
	b, err := json.Marshal(GetDurationTool(""))
	require.NoError(t, err)
	// python/timeaware/tools.py DEFAULT_TOOL_SCHEMA.
	assert.JSONEq(t, `{"type":"function","function":{"name":"get_duration","description":"Get the total time elapsed since the task started, in seconds.","parameters":{"type":"object","properties":{},"required":[]}}}`, string(b))
}
