package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeRow: any line either decodes to a row that can be sent (a
// registered data source, a non-empty prompt of messages with roles) or
// is an error; it never panics.
func FuzzDecodeRow(f *testing.F) {
	f.Add(`{"data_source":"timepuzzles","prompt":[{"role":"user","content":"q"}],"reward_model":{"ground_truth":"2024-01-01"},"extra_info":{"id":"p1"}}`)
	f.Add(`{"data_source":"timely/general","prompt":[{"role":"user","content":"q"}],"reward_model":{"ground_truth":"4"},"extra_info":{"timer":{"speed_factor":2},"time_limit_s":3}}`)
	f.Add(`{"prompt":[{"role":"user","content":null,"tool_calls":[{"function":{"name":"f"}}]}],"chosen":[],"tools":"[]","label":"tool","id":"a","elapse":1,"sensitivity":"low","margin":1}`)
	f.Add(`{"data_source":"traveler","prompt":[{"role":"user"}],"reward_model":{},"extra_info":{"category":"vague","id":7}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, line string) {
		r, err := decodeRow([]byte(line), "f.jsonl", 1)
		if err != nil {
			return
		}
		if r.DataSource == "" || len(r.Prompt) == 0 || r.ID == "" {
			t.Fatalf("accepted an unusable row: %+v", r)
		}
		for _, m := range r.Prompt {
			if m.Role == "" || (m.Content == nil && len(m.ToolCalls) == 0) {
				t.Fatalf("accepted a message the endpoint would refuse: %+v", m)
			}
			for _, c := range m.ToolCalls {
				if c.Type == "" || c.Function.Arguments == "" {
					t.Fatalf("tool call without type or arguments: %+v", c)
				}
			}
		}
		if r.Timer != nil && len(r.Tools) != 1 {
			t.Fatalf("a live row offers get_duration only: %+v", r.Tools)
		}
	})
}

// FuzzTextToolCalls: every call read from a reply's text has a name and
// JSON arguments.
func FuzzTextToolCalls(f *testing.F) {
	f.Add(`<tool_call>{"name": "get_duration", "arguments": {}}</tool_call>`)
	f.Add(`x<tool_call>{"name":"a","arguments":null}<tool_call>{"name":"b"}</tool_call>`)
	f.Add(`<tool_call></tool_call><tool_call>`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range textToolCalls(s) {
			if c.Function.Name == "" || !json.Valid([]byte(c.Function.Arguments)) {
				t.Fatalf("bad call %+v from %q", c, s)
			}
		}
	})
}

// FuzzReadResults: a results file either reads back to results naming
// their data source and request id, or is an error naming the file.
func FuzzReadResults(f *testing.F) {
	f.Add(`{"index":0,"row":0,"request_id":"a","data_source":"timepuzzles","score":1,"details":{"em":1}}` + "\n")
	f.Add("{}\n\n[1]\n")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := ReadResults(strings.NewReader(s), "r.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "eval: r.jsonl: line ") {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			return
		}
		for _, r := range res {
			if r.DataSource == "" || r.RequestID == "" || r.Details == nil {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
