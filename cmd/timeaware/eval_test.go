package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalItems are four prefer-tool and four prefer-direct items; the last
// response calls a tool only under a ReAct-style pattern.
const evalItems = `{"data_source":"tictoc/decision","solution_str":"<tool_call>\n{\"name\": \"get_balance\", \"arguments\": {}}\n</tool_call>","ground_truth":{"preferred":"tool","margin":1.5},"extra_info":{"sensitivity":"high","elapse":2}}
{"data_source":"tictoc/decision","solution_str":"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"type\":\"function\",\"function\":{\"name\":\"get_balance\",\"arguments\":\"{}\"}}]}","ground_truth":{"preferred":"tool","margin":1.0},"extra_info":{"sensitivity":"high","elapse":1}}
{"data_source":"tictoc/decision","solution_str":"{\"name\": \"get_balance\", \"parameters\": {}}","ground_truth":"{\"preferred\": \"tool\", \"margin\": 1.0}","extra_info":{"sensitivity":"medium","elapse":2.0}}
{"data_source":"tictoc/decision","solution_str":"Your balance is $120.","ground_truth":{"preferred":"tool","margin":1.0},"extra_info":{"sensitivity":"medium","elapse":0}}
{"data_source":"tictoc/decision","solution_str":"Your balance is $120.","ground_truth":{"preferred":"direct","margin":1.0},"extra_info":{"sensitivity":"low","elapse":0}}
{"data_source":"tictoc/decision","solution_str":"No tool_call needed: it is $120.","ground_truth":{"preferred":"direct"},"extra_info":{"sensitivity":"low","elapse":1}}
{"data_source":"tictoc/decision","solution_str":"<tool_call>{\"name\": \"get_balance\", \"arguments\": {}}</tool_call>","ground_truth":{"preferred":"direct","margin":0.5},"extra_info":{"sensitivity":"low"}}
{"solution_str":"Action: get_balance","ground_truth":{"preferred":"direct","margin":0.5},"extra_info":{"sensitivity":"medium","elapse":1}}
`

type evalJSON struct {
	Input   string   `json:"input"`
	By      []string `json:"by"`
	Overall struct {
		Samples         int `json:"samples"`
		TP, FN, TN, FP  int
		BothClasses     bool     `json:"both_classes"`
		NAR             float64  `json:"nar"`
		TPR             *float64 `json:"tpr"`
		TNR             *float64 `json:"tnr"`
		AttemptRate     float64  `json:"attempt_rate"`
		AttemptRateTool *float64 `json:"attempt_rate_tool"`
	} `json:"overall"`
	Groups []struct {
		Field   string   `json:"field"`
		Value   string   `json:"value"`
		Missing bool     `json:"missing"`
		Samples int      `json:"samples"`
		NAR     float64  `json:"nar"`
		TNR     *float64 `json:"tnr"`
	} `json:"groups"`
}

func TestEvalNARJSON(t *testing.T) {
	in := writeFile(t, filepath.Join(t.TempDir(), "results.jsonl"), evalItems)
	code, out, errOut := runCLI(t, "eval", "nar", "--input", in, "--by", "sensitivity,elapse", "--json")
	require.Equal(t, 0, code, errOut)
	var r evalJSON
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, in, r.Input)
	assert.Equal(t, []string{"sensitivity", "elapse"}, r.By)
	o := r.Overall
	// "Action: get_balance" is no built-in call: TN, not FP.
	assert.Equal(t, []int{8, 3, 1, 3, 1}, []int{o.Samples, o.TP, o.FN, o.TN, o.FP})
	// TPR 3/4, TNR 3/4, NAR (0.75 + 0.75)/2 = 0.75; attempt rate (3 + 1)/8 = 0.5.
	assert.True(t, o.BothClasses)
	assert.InDelta(t, 0.75, o.NAR, 1e-12)
	assert.InDelta(t, 0.75, *o.TPR, 1e-12)
	assert.InDelta(t, 0.75, *o.TNR, 1e-12)
	assert.InDelta(t, 0.5, o.AttemptRate, 1e-12)

	var groups []string
	for _, g := range r.Groups {
		v := g.Value
		if g.Missing {
			v = "(missing)"
		}
		groups = append(groups, g.Field+"="+v)
	}
	assert.Equal(t, []string{
		"sensitivity=high", "sensitivity=low", "sensitivity=medium",
		"elapse=0", "elapse=1", "elapse=2", "elapse=(missing)",
	}, groups)
	high := r.Groups[0]
	assert.Equal(t, 2, high.Samples)
	assert.InDelta(t, 1, high.NAR, 1e-12)
	assert.Nil(t, high.TNR, "no prefer-direct sample in sensitivity=high")
	elapse2 := r.Groups[5]
	assert.Equal(t, 2, elapse2.Samples, "2 and 2.0 are one group")
}

// evalItems, with the pattern, has TP 3, FN 1, TN 2, FP 2:
// TPR = 3/4, TNR = 2/4, NAR = (0.75 + 0.5)/2 = 0.625.
func TestEvalNARPatterns(t *testing.T) {
	in := writeFile(t, filepath.Join(t.TempDir(), "results.jsonl"), evalItems)
	for _, args := range [][]string{
		{"--tool-call-pattern", `^Action:\s+\w{1,40}`},
		{"--config", writeFile(t, filepath.Join(t.TempDir(), "c.yaml"), "rewards:\n  tictoc:\n    tool_call_patterns: ['^Action:\\s+\\w{1,40}']\n")},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"eval", "nar", "--input", in, "--json"}, args...)...)
			require.Equal(t, 0, code, errOut)
			var r evalJSON
			require.NoError(t, json.Unmarshal([]byte(out), &r))
			assert.Equal(t, []int{3, 1, 2, 2}, []int{r.Overall.TP, r.Overall.FN, r.Overall.TN, r.Overall.FP})
			assert.InDelta(t, 0.625, r.Overall.NAR, 1e-12)
		})
	}
}

func TestEvalNARTable(t *testing.T) {
	in := writeFile(t, filepath.Join(t.TempDir(), "results.jsonl"), evalItems)
	code, out, errOut := runCLI(t, "eval", "nar", "--input", in, "--by", "sensitivity")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(out, "\n")
	assert.Equal(t, "eval nar: 8 samples from "+in+" (4 prefer-tool, 4 prefer-direct)", lines[0])
	assert.Regexp(t, `^group\s+samples\s+TP\s+FN\s+TN\s+FP\s+NAR\s+TPR\s+TNR\s+attempt\s+a\.tool\s+a\.direct$`, lines[2])
	assert.Regexp(t, `^overall\s+8\s+3\s+1\s+3\s+1\s+75\.0%\s+75\.0%\s+75\.0%\s+50\.0%\s+75\.0%\s+25\.0%$`, lines[3])
	assert.Regexp(t, `^sensitivity=high\s+2\s+2\s+0\s+0\s+0\s+100\.0%\*\s+100\.0%\s+-\s+100\.0%\s+100\.0%\s+-$`, lines[5])
	assert.Contains(t, out, "* one class has no samples")
}

func TestEvalNARErrors(t *testing.T) {
	dir := t.TempDir()
	good := strings.SplitN(evalItems, "\n", 2)[0] + "\n"
	for _, tc := range []struct {
		name  string
		input string // file contents; "" means the flag value is used as is
		args  []string
		code  int
		msg   string
	}{
		{"bad preferred", good + `{"solution_str":"x","ground_truth":{"preferred":"maybe"}}` + "\n", nil, 1,
			`line 2: ground_truth.preferred: "maybe" is not tool or direct`},
		{"bad margin", `{"solution_str":"x","ground_truth":{"preferred":"tool","margin":3}}`, nil, 1, "line 1: ground_truth.margin: 3 is not in [0, 1.5]"},
		{"missing ground truth", `{"solution_str":"x"}`, nil, 1, "line 1: ground_truth: missing"},
		{"missing response", `{"ground_truth":{"preferred":"tool"}}`, nil, 1, "line 1: solution_str: missing"},
		{"response not text", `{"solution_str":5,"ground_truth":{"preferred":"tool"}}`, nil, 1, "line 1: solution_str: not a string"},
		{"other data source", `{"data_source":"timepuzzles","solution_str":"x","ground_truth":{"preferred":"tool"}}`, nil, 1,
			`line 1: data_source: "timepuzzles" is not tictoc/decision`},
		{"not json", good + "{oops\n", nil, 1, "line 2: invalid JSON at byte 2: invalid character 'o' looking for beginning of object key string"},
		{"empty line", good + "\n" + good, nil, 1, "line 2: empty line"},
		{"group by object", `{"solution_str":"x","ground_truth":{"preferred":"tool"},"extra_info":{"sensitivity":{"a":1}}}`, []string{"--by", "sensitivity"}, 1,
			"line 1: extra_info.sensitivity: an object or array cannot label a group"},
		{"extra_info not object", `{"solution_str":"x","ground_truth":{"preferred":"tool"},"extra_info":"high"}`, nil, 1, "line 1: extra_info: not a JSON object"},
		{"no items", " ", nil, 1, "line 1: empty line"},
		{"empty file", "\x00", nil, 1, "empty_file.jsonl: no records"},
		{"duplicate by", good, []string{"--by", "elapse,elapse"}, 2, "--by: elapse is given twice"},
		{"empty by entry", good, []string{"--by", "elapse,,sensitivity"}, 2, "--by"},
		{"bad pattern", good, []string{"--tool-call-pattern", "("}, 2, "--tool-call-pattern (: entry 1: error parsing regexp"},
		{"unknown by field", good, []string{"--by", "sensitivity,nope"}, 2, `--by nope: no item of `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			content := tc.input
			if content == "\x00" {
				content = ""
			}
			writeFile(t, path, content)
			code, _, errOut := runCLI(t, append([]string{"eval", "nar", "--input", path}, tc.args...)...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Contains(t, errOut, tc.msg)
			if tc.code == 1 && tc.name != "empty file" {
				assert.Contains(t, errOut, path+": line ")
			}
		})
	}

	t.Run("usage", func(t *testing.T) {
		code, _, errOut := runCLI(t, "eval", "nar")
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "--input is required")

		code, _, errOut = runCLI(t, "eval", "nar", "--input", filepath.Join(dir, "absent.jsonl"))
		assert.Equal(t, exitIO, code)
		assert.Contains(t, errOut, "absent.jsonl: no such file or directory")

		code, _, errOut = runCLI(t, "eval", "nar", "--input", "-")
		assert.Equal(t, 1, code)
		assert.Equal(t, "timeaware: --input -: no records\n", errOut)
	})
}
