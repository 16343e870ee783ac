package rewards

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// MaxMargin is the largest preference margin |S − 1.5| of a TicToc sample,
// S being the mean human score on the 0 (direct) to 3 (tool) scale.
const MaxMargin = 1.5

// ticTocKeys are the details of the TicToc decision reward:
//
//	called_tool     1 if the response calls a tool
//	preferred_tool  1 if humans prefer a tool call for this sample
//	agree           1 if the two agree
//	margin          the ground truth's margin (0 when it gives none)
var ticTocKeys = []string{"called_tool", "preferred_tool", "agree", "margin"}

// TicTocDecision rewards a tool-call decision that agrees with the human
// preference of the TicToc paper: 1 when the response calls a tool exactly when
// the preferred action is the tool call, else 0. With
// TicTocConfig.MarginWeighted an agreeing decision earns margin/1.5
// instead, and a ground truth without a margin is an error.
var TicTocDecision = &Reward{
	DataSource:  "tictoc/decision",
	Summary:     "TicToc tool-call decision: 1 when the response calls a tool exactly when humans prefer it (optionally margin/1.5)",
	GroundTruth: `object {"preferred": "tool"|"direct", "margin": 0..1.5 (optional)}, that object as a JSON string, or the string "tool" or "direct"`,
	Keys:        ticTocKeys,
	score:       scoreTicToc,
}

// ToolDecision is a TicToc item's preferred action next to the action its
// response took.
type ToolDecision struct {
	PreferTool bool
	CalledTool bool
	// Margin is the ground truth's |S − 1.5| in [0, MaxMargin]; HasMargin is
	// false when the ground truth gives none (Margin is then 0).
	Margin    float64
	HasMargin bool
}

// Agree reports whether the response took the preferred action.
func (d ToolDecision) Agree() bool { return d.PreferTool == d.CalledTool }

// ToolDecision reads a tictoc/decision item: the preferred action from its
// ground truth and, with the scorer's tool-call detector (the built-in
// styles of DetectToolCall plus TicTocConfig.ToolCallPatterns), whether its
// response calls a tool. A malformed ground truth is a *FieldError naming
// ground_truth, ground_truth.preferred or ground_truth.margin.
func (s *Scorer) ToolDecision(it *Item) (ToolDecision, error) {
	d, err := parseTicTocGroundTruth(it.GroundTruth)
	if err != nil {
		return ToolDecision{}, err
	}
	_, d.CalledTool = s.tictoc.detect(it.SolutionStr)
	return d, nil
}

func scoreTicToc(_ context.Context, s *Scorer, it *Item, det []float64) (float64, error) {
	d, err := s.ToolDecision(it)
	if err != nil {
		return 0, err
	}
	weighted := s.cfg.TicToc.MarginWeighted
	if weighted && !d.HasMargin {
		return 0, fieldErrorf("ground_truth.margin", "missing: tictoc.margin_weighted needs every item's preference margin")
	}
	det[0], det[1], det[2], det[3] = b2f(d.CalledTool), b2f(d.PreferTool), b2f(d.Agree()), d.Margin
	switch {
	case !d.Agree():
		return 0, nil
	case weighted:
		return d.Margin / MaxMargin, nil
	}
	return 1, nil
}

// parseTicTocGroundTruth accepts {"preferred": "tool"|"direct", "margin":
// x}, the same object as a JSON string (some trainers stringify ground
// truths), or a bare "tool" or "direct". Unknown keys are ignored; a null
// margin counts as absent.
func parseTicTocGroundTruth(raw json.RawMessage) (ToolDecision, error) {
	const want = `want {"preferred": "tool"|"direct", "margin": 0..1.5}`
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return ToolDecision{}, fieldErrorf("ground_truth", "missing: %s", want)
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return ToolDecision{}, fieldErrorf("ground_truth", "not a valid JSON string: %v", err)
		}
		t := strings.TrimSpace(s)
		if t == "tool" || t == "direct" {
			return ToolDecision{PreferTool: t == "tool"}, nil
		}
		if !strings.HasPrefix(t, "{") {
			return ToolDecision{}, fieldErrorf("ground_truth", "string %s is neither tool, direct nor a JSON object", quoteForError(t))
		}
		b = []byte(t)
	}
	if b[0] != '{' {
		return ToolDecision{}, fieldErrorf("ground_truth", "%s is not an object: %s", clipForError(string(b)), want)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return ToolDecision{}, fieldErrorf("ground_truth", "not a valid JSON object: %v", err)
	}
	p := trimSpace(m["preferred"])
	if len(p) == 0 || string(p) == "null" {
		return ToolDecision{}, fieldErrorf("ground_truth.preferred", "missing: want tool or direct")
	}
	var pref string
	if json.Unmarshal(p, &pref) != nil {
		return ToolDecision{}, fieldErrorf("ground_truth.preferred", "%s is not a string: want tool or direct", clipForError(string(p)))
	}
	if pref != "tool" && pref != "direct" {
		return ToolDecision{}, fieldErrorf("ground_truth.preferred", "%s is not tool or direct", quoteForError(pref))
	}
	d := ToolDecision{PreferTool: pref == "tool"}
	if mr := trimSpace(m["margin"]); len(mr) > 0 && string(mr) != "null" {
		var f float64
		if json.Unmarshal(mr, &f) != nil {
			return ToolDecision{}, fieldErrorf("ground_truth.margin", "%s is not a number in [0, 1.5]", clipForError(string(mr)))
		}
		if !finite(f) || f < 0 || f > MaxMargin {
			return ToolDecision{}, fieldErrorf("ground_truth.margin", "%v is not in [0, 1.5]", f)
		}
		d.Margin, d.HasMargin = f, true
	}
	return d, nil
}

// clipForError shortens text quoted in an error message to 40 bytes, cutting
// on a rune boundary.
func clipForError(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

func quoteForError(s string) string { return strconv.Quote(clipForError(s)) }
