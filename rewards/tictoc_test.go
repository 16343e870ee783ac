package rewards

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tcCases = []struct {
	name     string
	response string
	style    string // "" when not a call
}{
	// Qwen / Hermes.
	{"qwen", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", styleHermes},
	{"qwen after text", "Let me look that up again.\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{}}</tool_call>", styleHermes},
	{"qwen loose whitespace", "<tool_call>  \n\t{ \"name\" : \"f\" ,\n \"arguments\" : { } }  \n\n  </tool_call>\n", styleHermes},
	{"qwen without closing tag", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}", styleHermes},
	{"qwen before im_end", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n<|im_end|>", styleHermes},
	{"qwen string arguments", `<tool_call>{"name": "search", "arguments": "{\"q\": \"x\"}"}</tool_call>`, styleHermes},
	{"qwen after reasoning", "<think>The data is two days old; check again.</think>\n\n<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {\"sym\": \"ACME\"}}\n</tool_call>", styleHermes},
	{"qwen second tag is the call", "I will use a <tool_call> block.\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", styleHermes},
	{"qwen two calls", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>", styleHermes},

	// OpenAI.
	{"openai message", `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]}`, styleOpenAI},
	{"openai message pretty", "\n{\n  \"role\": \"assistant\",\n  \"content\": \"\",\n  \"tool_calls\": [\n    {\"type\": \"function\", \"function\": {\"name\": \"lookup\", \"arguments\": \"{}\"}}\n  ]\n}\n", styleOpenAI},
	{"openai bare list", `[{"type":"function","function":{"name":"get_time","arguments":"{}"}},{"type":"function","function":{"name":"get_date","arguments":"{}"}}]`, styleOpenAI},
	{"openai single call object", `{"id":"call_9","type":"function","function":{"name":"get_time","arguments":"{}"}}`, styleOpenAI},
	{"openai legacy function_call", `{"role":"assistant","content":null,"function_call":{"name":"get_time","arguments":"{}"}}`, styleOpenAI},

	// Llama 3.x and Mistral.
	{"llama parameters", `{"name": "get_weather", "parameters": {"city": "Paris"}}`, styleLlama},
	{"llama arguments", `{"name": "get_weather", "arguments": {"city": "Paris"}}`, styleLlama},
	{"llama type function", `{"type": "function", "name": "get_weather", "parameters": {}}`, styleLlama},
	{"llama python_tag", "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", styleLlama},
	{"llama python_tag builtin", `<|python_tag|>brave_search.call(query="flight status UA 90")`, styleLlama},
	{"llama eom", "{\"name\": \"get_time\", \"parameters\": {}}<|eom_id|>", styleLlama},
	{"llama eot and eos", "{\"name\": \"get_time\", \"parameters\": {}}\n<|eot_id|></s>", styleLlama},
	{"llama list", `[{"name": "get_time", "parameters": {}}, {"name": "get_date", "parameters": {}}]`, styleLlama},
	{"llama semicolon", `{"name": "get_time", "parameters": {}}; {"name": "get_date", "parameters": {}}`, styleLlama},
	{"mistral", `[TOOL_CALLS][{"name": "get_time", "arguments": {}}]`, styleMistral},

	// Not calls.
	{"plain answer", "The meeting is at 3 pm, as the calendar showed.", ""},
	{"empty", "", ""},
	{"whitespace", " \n\t", ""},
	{"prose mentions tool_call", "No tool_call is needed: the balance you saw a minute ago is still current.", ""},
	{"prose mentions tool_calls field", `I won't fill the "tool_calls" field; the answer is 42.`, ""},
	{"tag without json", "You could wrap a request in <tool_call></tool_call> tags, but I don't need to.", ""},
	{"tag with non-call json", `<tool_call>{"arguments": {}}</tool_call>`, ""},
	{"tag with empty name", `<tool_call>{"name": "  ", "arguments": {}}</tool_call>`, ""},
	{"tag then prose", `The format is <tool_call>{"name": "f", "arguments": {}} followed by a closing tag.`, ""},
	{"tag with broken json", `<tool_call>{"name": "f", "arguments": {</tool_call>`, ""},
	{"call only in reasoning", "<think>Maybe <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>? No, it is fresh.</think>\nYour order shipped yesterday.", ""},
	{"openai empty tool_calls", `{"role":"assistant","content":"It is 3 pm.","tool_calls":[]}`, ""},
	{"openai null tool_calls", `{"role":"assistant","content":"It is 3 pm.","tool_calls":null}`, ""},
	{"openai tool_calls without names", `{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"arguments":"{}"}}]}`, ""},
	{"openai plain message", `{"role":"assistant","content":"It is 3 pm."}`, ""},
	{"json data with name", `{"name": "Alice", "age": 30}`, ""},
	{"json data with numeric parameters", `{"name": "beam", "parameters": 5}`, ""},
	{"json list of data", `[{"name": "Alice"}, {"name": "Bob"}]`, ""},
	{"json list mixing data", `[{"name": "get_time", "parameters": {}}, {"name": "Bob"}]`, ""},
	{"json list of numbers", `[1, 2, 3]`, ""},
	{"empty json list", `[]`, ""},
	{"json then prose", `{"name": "get_time", "parameters": {}} is what I would call, but the time is 3 pm.`, ""},
	{"invalid json", `{"name": "get_time", "parameters": {`, ""},
	{"fenced json", "```json\n{\"name\": \"get_time\", \"parameters\": {}}\n```", ""},
	{"bare python_tag", "<|python_tag|>  ", ""},
	{"bracketed prose", "[Note] The store closes at 6 pm.", ""},
}

func TestToolCallDetection(t *testing.T) {
	for _, tc := range tcCases {
		t.Run(tc.name, func(t *testing.T) {
			style, called := tcBuiltinDetector.detect(tc.response)
			assert.Equal(t, tc.style != "", called)
			assert.Equal(t, tc.style, style)
			assert.Equal(t, called, DetectToolCall(tc.response))
		})
	}
}

func TestToolCallPatterns(t *testing.T) {
	d, err := newToolCallDetector([]string{`(?m)^Action:\s*\w+`, `<function=\w+>`})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, response, style string
	}{
		{"react action", "Thought: the price may have moved.\nAction: get_price\nAction Input: {\"sym\": \"ACME\"}", stylePattern},
		{"llama custom function tag", `<function=get_time>{"tz": "UTC"}</function>`, stylePattern},
		{"built-in wins", "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", styleHermes},
		{"no match", "The action you asked about is done.", ""},
		{"pattern only in reasoning", "<think>Action: get_price</think>The price is 12.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			style, called := d.detect(tc.response)
			assert.Equal(t, tc.style, style)
			assert.Equal(t, tc.style != "", called)
		})
	}

	t.Run("invalid", func(t *testing.T) {
		_, err := newToolCallDetector([]string{`ok`, `(unclosed`})
		require.ErrorContains(t, err, "entry 2")
		_, err = newToolCallDetector([]string{""})
		require.ErrorContains(t, err, "entry 1 is empty")

		cfg := DefaultConfig()
		cfg.TicToc.ToolCallPatterns = []string{`[`}
		_, err = NewScorer(cfg, nil)
		require.ErrorContains(t, err, "tictoc.tool_call_patterns: entry 1")
	})

	t.Run("scorer uses patterns", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.TicToc.ToolCallPatterns = []string{`(?m)^Action:`}
		s, err := NewScorer(cfg, nil)
		require.NoError(t, err)
		res := s.Score(context.Background(), &Item{DataSource: "tictoc/decision", SolutionStr: "Action: refresh", GroundTruth: json.RawMessage(`{"preferred":"tool"}`)})
		require.NoError(t, res.Err)
		assert.Equal(t, 1.0, res.Score)
	})
}

const (
	tcQwenCall = "<tool_call>\n{\"name\": \"get_balance\", \"arguments\": {}}\n</tool_call>"
	tcDirect   = "Your balance is $120, as of the lookup a minute ago."
)

func TestTicTocDecisionScore(t *testing.T) {
	require.Equal(t, []string{"called_tool", "preferred_tool", "agree", "margin"}, TicTocDecision.Keys)
	for _, tc := range []struct {
		name     string
		gt       string
		response string
		weighted bool
		score    float64
		details  []float64
	}{
		{"tool preferred, called", `{"preferred": "tool", "margin": 1.2}`, tcQwenCall, false, 1, []float64{1, 1, 1, 1.2}},
		{"tool preferred, answered", `{"preferred": "tool", "margin": 1.2}`, tcDirect, false, 0, []float64{0, 1, 0, 1.2}},
		{"direct preferred, answered", `{"preferred": "direct", "margin": 0.5}`, tcDirect, false, 1, []float64{0, 0, 1, 0.5}},
		{"direct preferred, called", `{"preferred": "direct", "margin": 0.5}`, tcQwenCall, false, 0, []float64{1, 0, 0, 0.5}},
		{"no margin", `{"preferred": "direct"}`, tcDirect, false, 1, []float64{0, 0, 1, 0}},
		{"null margin", `{"preferred": "direct", "margin": null}`, tcDirect, false, 1, []float64{0, 0, 1, 0}},
		{"stringified", `"{\"preferred\": \"tool\", \"margin\": 1.5}"`, tcQwenCall, false, 1, []float64{1, 1, 1, 1.5}},
		{"bare label", `"direct"`, tcDirect, false, 1, []float64{0, 0, 1, 0}},
		{"extra keys", `{"preferred": "tool", "margin": 1, "score": 2.5, "label": "tool"}`, tcQwenCall, false, 1, []float64{1, 1, 1, 1}},
		// margin/1.5: 1.5/1.5 = 1, 0.75/1.5 = 0.5, 0/1.5 = 0.
		{"weighted full margin", `{"preferred": "tool", "margin": 1.5}`, tcQwenCall, true, 1, []float64{1, 1, 1, 1.5}},
		{"weighted half margin", `{"preferred": "direct", "margin": 0.75}`, tcDirect, true, 0.5, []float64{0, 0, 1, 0.75}},
		{"weighted zero margin", `{"preferred": "direct", "margin": 0}`, tcDirect, true, 0, []float64{0, 0, 1, 0}},
		{"weighted disagreement", `{"preferred": "direct", "margin": 1.5}`, tcQwenCall, true, 0, []float64{1, 0, 0, 1.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TicToc.MarginWeighted = tc.weighted
			s, err := NewScorer(cfg, nil)
			require.NoError(t, err)
			res := s.Score(context.Background(), &Item{DataSource: "tictoc/decision", SolutionStr: tc.response, GroundTruth: json.RawMessage(tc.gt)})
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.InDeltaSlice(t, tc.details, res.Details, 1e-12)
		})
	}
}

func TestTicTocGroundTruthErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gt       string
		weighted bool
		field    string
		msg      string
	}{
		{"missing", ``, false, "ground_truth", "ground_truth: missing"},
		{"null", `null`, false, "ground_truth", "ground_truth: missing"},
		{"number", `42`, false, "ground_truth", "ground_truth: 42 is not an object"},
		{"other string", `"maybe"`, false, "ground_truth", `ground_truth: string "maybe" is neither tool, direct nor a JSON object`},
		{"broken object", `"{\"preferred\": "`, false, "ground_truth", "ground_truth: not a valid JSON object"},
		{"no preferred", `{"margin": 1}`, false, "ground_truth.preferred", "ground_truth.preferred: missing"},
		{"preferred not string", `{"preferred": 3}`, false, "ground_truth.preferred", "ground_truth.preferred: 3 is not a string"},
		{"bad preferred", `{"preferred": "maybe"}`, false, "ground_truth.preferred", `ground_truth.preferred: "maybe" is not tool or direct`},
		{"bad preferred in string", `"{\"preferred\": \"maybe\"}"`, false, "ground_truth.preferred", `ground_truth.preferred: "maybe" is not tool or direct`},
		{"long preferred clipped", `{"preferred": "` + strings.Repeat("x", 100) + `"}`, false, "ground_truth.preferred", `"` + strings.Repeat("x", 40) + `…" is not tool or direct`},
		{"margin too large", `{"preferred": "tool", "margin": 2}`, false, "ground_truth.margin", "ground_truth.margin: 2 is not in [0, 1.5]"},
		{"negative margin", `{"preferred": "tool", "margin": -0.1}`, false, "ground_truth.margin", "ground_truth.margin: -0.1 is not in [0, 1.5]"},
		{"margin as string", `{"preferred": "tool", "margin": "1"}`, false, "ground_truth.margin", `ground_truth.margin: "1" is not a number`},
		{"weighted without margin", `{"preferred": "tool"}`, true, "ground_truth.margin", "ground_truth.margin: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.FallbackScore = -1
			cfg.TicToc.MarginWeighted = tc.weighted
			s, err := NewScorer(cfg, nil)
			require.NoError(t, err)
			res := s.Score(context.Background(), &Item{DataSource: "tictoc/decision", SolutionStr: tcQwenCall, GroundTruth: json.RawMessage(tc.gt)})
			require.Error(t, res.Err)
			assert.ErrorContains(t, res.Err, tc.msg)
			assert.ErrorIs(t, res.Err, ErrInvalidItem)
			var fe *FieldError
			require.ErrorAs(t, res.Err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, -1.0, res.Score)
			assert.Equal(t, []float64{0, 0, 0, 0}, res.Details)
		})
	}
}

func TestScorerToolDecision(t *testing.T) {
	s, err := NewScorer(DefaultConfig(), nil)
	require.NoError(t, err)
	d, err := s.ToolDecision(&Item{SolutionStr: `{"name": "get_time", "parameters": {}}`, GroundTruth: json.RawMessage(`{"preferred": "direct", "margin": 0.5}`)})
	require.NoError(t, err)
	assert.Equal(t, ToolDecision{PreferTool: false, CalledTool: true, Margin: 0.5, HasMargin: true}, d)
	assert.False(t, d.Agree())
}

func FuzzDetectToolCall(f *testing.F) {
	for _, tc := range tcCases {
		f.Add(tc.response)
	}
	f.Fuzz(func(t *testing.T, s string) {
		style, called := tcBuiltinDetector.detect(s)
		if called != (style != "") {
			t.Fatalf("style %q with called=%v", style, called)
		}
		if DetectToolCall(s) != called {
			t.Fatal("DetectToolCall disagrees with the detector")
		}
		if called && !strings.ContainsAny(s, "{[<") {
			t.Fatalf("call detected in text without {, [ or <: %q", s)
		}
		if DetectToolCall(s + "</think>\nThe answer is 42.") {
			t.Fatal("a call inside the reasoning counted")
		}
		if DetectToolCall("<think>hmm</think>"+s) != called {
			t.Fatal("a leading reasoning block changed the decision")
		}
		if strings.TrimSpace(s) != "" && !strings.Contains(s, "</think>") {
			call, _ := json.Marshal(map[string]any{"name": s, "arguments": map[string]any{}})
			if !DetectToolCall("<tool_call>" + string(call) + "</tool_call>") {
				t.Fatalf("a Hermes call named %q was missed", s)
			}
		}
	})
}

func FuzzTicTocGroundTruth(f *testing.F) {
	for _, gt := range []string{
		`{"preferred": "tool", "margin": 1.2}`, `{"preferred": "direct"}`, `"{\"preferred\": \"tool\"}"`, `"tool"`,
		`{"preferred": "maybe"}`, `{"preferred": "tool", "margin": 9}`, `null`, ``, `[1]`, `{"preferred": "direct", "margin": "x"}`,
	} {
		f.Add([]byte(gt), tcQwenCall, false)
		f.Add([]byte(gt), tcDirect, true)
	}
	f.Fuzz(func(t *testing.T, gt []byte, response string, weighted bool) {
		d, err := parseTicTocGroundTruth(gt)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "ground_truth") {
				t.Fatalf("error %v does not name a ground_truth field", err)
			}
		} else {
			if d.Margin < 0 || d.Margin > MaxMargin || !d.HasMargin && d.Margin != 0 {
				t.Fatalf("margin %v (has %v)", d.Margin, d.HasMargin)
			}
			if t0 := trimSpace(gt); len(t0) > 0 && t0[0] == '{' {
				quoted, _ := json.Marshal(string(gt))
				d2, err := parseTicTocGroundTruth(quoted)
				if err != nil || d2 != d {
					t.Fatalf("stringified ground truth read as %+v, %v; want %+v", d2, err, d)
				}
			}
		}
		cfg := DefaultConfig()
		cfg.TicToc.MarginWeighted = weighted
		s, err := NewScorer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := s.Score(context.Background(), &Item{DataSource: "tictoc/decision", SolutionStr: response, GroundTruth: gt})
		if res.Score < 0 || res.Score > 1 || len(res.Details) != len(TicTocDecision.Keys) {
			t.Fatalf("score %v, details %v", res.Score, res.Details)
		}
		for _, v := range res.Details[:3] {
			if v != 0 && v != 1 {
				t.Fatalf("details %v", res.Details)
			}
		}
		if res.Err == nil && (res.Details[2] == 1) != (res.Details[0] == res.Details[1]) {
			t.Fatalf("agree %v with called %v and preferred %v", res.Details[2], res.Details[0], res.Details[1])
		}
	})
}
