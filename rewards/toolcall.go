package rewards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Tool-call styles the detector recognises, as reported by detect.
const (
	styleHermes  = "hermes"  // Qwen / Hermes: <tool_call>{"name": …, "arguments": …}</tool_call>
	styleOpenAI  = "openai"  // an assistant message with tool_calls (or function_call), or a list of calls
	styleLlama   = "llama"   // Llama 3.x: {"name": …, "parameters": …}, optionally after <|python_tag|>
	styleMistral = "mistral" // [TOOL_CALLS] followed by the calls
	stylePattern = "pattern" // a configured regular expression matched
)

// toolCallDetector decides whether a response calls a tool. The built-in
// styles need no regular expression; configured patterns are tried only
// when none of them matches. It is safe for concurrent use.
type toolCallDetector struct {
	patterns []*regexp.Regexp
}

// newToolCallDetector compiles the extra patterns (Go regexp syntax). An
// empty or invalid pattern is an error naming its 1-based entry.
func newToolCallDetector(patterns []string) (*toolCallDetector, error) {
	d := &toolCallDetector{}
	for i, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("entry %d is empty (it would match every response)", i+1)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		d.patterns = append(d.patterns, re)
	}
	return d, nil
}

var tcBuiltinDetector = &toolCallDetector{}

// DetectToolCall reports whether a model response calls a tool in one of
// the built-in styles:
//
//   - Qwen / Hermes: <tool_call>{"name": "f", "arguments": {…}}</tool_call>
//     anywhere in the response; the JSON must parse and carry a non-empty
//     name (the closing tag may be missing, as when a stop string cut it);
//   - OpenAI: the response is a JSON assistant message whose tool_calls
//     holds at least one call with a function name (or whose legacy
//     function_call names a function), or a JSON array of such calls;
//   - Llama 3.x: the response is a JSON object {"name": "f", "parameters":
//     {…}} ("arguments" also accepted) or an array of them; any response
//     that starts with <|python_tag|> counts, as does one that starts with
//     Mistral's [TOOL_CALLS], since those tokens open a call.
//
// A JSON response may be followed only by end-of-turn tokens (<|eot_id|>
// and the like) or by further calls after a semicolon. When the response
// holds a reasoning block, only the text after the last </think> counts.
// Prose that mentions tool calls, and JSON data that is not a function
// call, are not calls.
func DetectToolCall(response string) bool {
	_, called := tcBuiltinDetector.detect(response)
	return called
}

// detect returns whether s calls a tool and, if so, the style that matched.
// A nil detector knows only the built-in styles.
func (d *toolCallDetector) detect(s string) (style string, called bool) {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	if style, ok := tcBuiltin(s); ok {
		return style, true
	}
	if d != nil {
		for _, re := range d.patterns {
			if re.MatchString(s) {
				return stylePattern, true
			}
		}
	}
	return "", false
}

func tcBuiltin(s string) (string, bool) {
	if tcHermes(s) {
		return styleHermes, true
	}
	t := strings.TrimSpace(s)
	for _, p := range []struct{ token, style string }{{"<|python_tag|>", styleLlama}, {"[TOOL_CALLS]", styleMistral}} {
		if rest, ok := strings.CutPrefix(t, p.token); ok {
			return p.style, strings.TrimSpace(rest) != ""
		}
	}
	if t == "" || t[0] != '{' && t[0] != '[' {
		return "", false
	}
	return tcJSON(t)
}

// HermesCall is a tool call written in a reply's text in the Qwen / Hermes
// style: <tool_call>{"name": "f", "arguments": {...}}</tool_call>.
// Arguments is the raw JSON of "arguments" (nil when the call gives none).
type HermesCall struct {
	Name      string
	Arguments json.RawMessage
}

// HermesCalls returns the calls written in response in the Qwen / Hermes
// style, in order, as DetectToolCall reads them: only the text after the
// last </think> counts; a tag's body ends at </tool_call>, at the next
// <tool_call> or at the end of the text (a stop string may have cut the
// closing tag), as in vLLM's Hermes parser; it must hold a JSON object
// with a function name, followed by nothing but whitespace and special
// tokens. Bodies never overlap, so the work is linear in the response.
func HermesCalls(response string) []HermesCall {
	s := response
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	const open, end = "<tool_call>", "</tool_call>"
	var calls []HermesCall
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return calls
		}
		s = s[i+len(open):]
		body := s
		if j := strings.Index(body, open); j >= 0 {
			body = body[:j]
		}
		if j := strings.Index(body, end); j >= 0 {
			body = body[:j]
		}
		dec := json.NewDecoder(strings.NewReader(body))
		var m map[string]json.RawMessage
		if dec.Decode(&m) == nil && tcOnlyTrailer(body[dec.InputOffset():]) {
			if name := tcJSONString(m["name"]); name != "" {
				calls = append(calls, HermesCall{Name: name, Arguments: m["arguments"]})
			}
		}
	}
}

// tcHermes reports whether some <tool_call> tag holds a call (HermesCalls).
func tcHermes(s string) bool { return len(HermesCalls(s)) > 0 }

// tcJSON reports whether t, which starts with { or [, is a JSON tool
// call followed by nothing but end-of-turn tokens or further calls.
func tcJSON(t string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(t))
	var v json.RawMessage
	if dec.Decode(&v) != nil || !tcOnlyTrailer(t[dec.InputOffset():]) {
		return "", false
	}
	if t[0] == '[' {
		return tcCallList(v)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return "", false
	}
	if raw, ok := m["tool_calls"]; ok {
		var calls []json.RawMessage
		if json.Unmarshal(raw, &calls) != nil {
			return "", false
		}
		for _, c := range calls {
			if _, ok := tcCallObject(c); ok {
				return styleOpenAI, true
			}
		}
		return "", false
	}
	if raw, ok := m["function_call"]; ok {
		var fc map[string]json.RawMessage
		if json.Unmarshal(raw, &fc) == nil && tcJSONString(fc["name"]) != "" {
			return styleOpenAI, true
		}
		return "", false
	}
	return tcCallFields(m)
}

// tcCallList accepts a non-empty JSON array whose every element is a call.
func tcCallList(v json.RawMessage) (string, bool) {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || len(items) == 0 {
		return "", false
	}
	style := ""
	for _, it := range items {
		s, ok := tcCallObject(it)
		if !ok {
			return "", false
		}
		if style == "" {
			style = s
		}
	}
	return style, true
}

func tcCallObject(raw json.RawMessage) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false
	}
	return tcCallFields(m)
}

// tcCallFields recognises one call: OpenAI's {"function": {"name": …}} or
// Llama's {"name": …, "parameters"|"arguments": object or string}.
func tcCallFields(m map[string]json.RawMessage) (string, bool) {
	if raw, ok := m["function"]; ok {
		var f map[string]json.RawMessage
		if json.Unmarshal(raw, &f) == nil && tcJSONString(f["name"]) != "" {
			return styleOpenAI, true
		}
		return "", false
	}
	if tcJSONString(m["name"]) == "" {
		return "", false
	}
	for _, key := range []string{"parameters", "arguments"} {
		if b := trimSpace(m[key]); len(b) > 0 && (b[0] == '{' || b[0] == '"') {
			return styleLlama, true
		}
	}
	return "", false
}

// tcJSONString returns a JSON string's trimmed value, or "" for anything else.
func tcJSONString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// tcOnlyTrailer reports whether what follows a JSON call is empty, special
// tokens (<|eot_id|>, <|eom_id|>, <|im_end|>, </s>) or further calls
// after a semicolon.
func tcOnlyTrailer(s string) bool {
	for {
		s = strings.TrimSpace(s)
		if s == "" || s[0] == ';' {
			return true
		}
		if strings.HasPrefix(s, "</s>") {
			s = s[len("</s>"):]
			continue
		}
		if !strings.HasPrefix(s, "<|") {
			return false
		}
		i := strings.Index(s, "|>")
		if i < 0 {
			return false
		}
		s = s[i+2:]
	}
}
