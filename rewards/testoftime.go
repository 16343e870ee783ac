package rewards

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// testOfTimeKeys are the details of the Test of Time reward:
//
//	correct  1 if the answer object matches the label (the score)
//	parsed   1 if the response holds a JSON object
var testOfTimeKeys = []string{"correct", "parsed"}

// TestOfTime scores an answer to a Test of Time question (Fatemi et al.,
// 2024, "Test of Time: A Benchmark for Evaluating LLMs on Temporal
// Reasoning"), whose metric is accuracy; the benchmark ships no scoring
// script. The answer is the last JSON object in the response
// (LastJSONObject); it is right when it matches the label
// (TestOfTimeMatch). The score is correct (0 or 1).
var TestOfTime = &Reward{
	DataSource:  "test_of_time",
	Summary:     "Test of Time: accuracy of the last JSON object of the response against the label (semantic: the answer string; arithmetic: every label key)",
	GroundTruth: `JSON object (or a JSON string holding one) {"kind": "semantic", "label": {"answer": "E76"}} or {"kind": "arithmetic", "label": {...}}`,
	Keys:        testOfTimeKeys,
	score:       scoreTestOfTime,
}

func scoreTestOfTime(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
	semantic, label, err := parseTestOfTimeGold(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	obj, ok := LastJSONObject(it.SolutionStr)
	if !ok {
		return 0, nil
	}
	d[1] = 1
	d[0] = b2f(TestOfTimeMatch(semantic, label, obj))
	return d[0], nil
}

func parseTestOfTimeGold(raw json.RawMessage) (semantic bool, label map[string]json.RawMessage, err error) {
	const want = `want {"kind": "semantic"|"arithmetic", "label": {...}}`
	b, err := objectGroundTruth(raw, want)
	if err != nil {
		return false, nil, err
	}
	var gt struct {
		Kind  *string         `json:"kind"`
		Label json.RawMessage `json:"label"`
	}
	if err := json.Unmarshal(b, &gt); err != nil {
		return false, nil, decodeError("ground_truth", b, err)
	}
	if gt.Kind == nil {
		return false, nil, fieldErrorf("ground_truth.kind", "missing: want semantic or arithmetic")
	}
	switch *gt.Kind {
	case "semantic":
		semantic = true
	case "arithmetic":
	default:
		return false, nil, fieldErrorf("ground_truth.kind", "%s: want semantic or arithmetic", quoteForError(*gt.Kind))
	}
	lb := trimSpace(gt.Label)
	if len(lb) == 0 || lb[0] != '{' {
		return false, nil, fieldErrorf("ground_truth.label", "missing or not an object: want the label object, {\"answer\": ...} or keyed like the question's JSON")
	}
	if err := json.Unmarshal(lb, &label); err != nil {
		return false, nil, decodeError("ground_truth.label", lb, err)
	}
	if len(label) == 0 {
		return false, nil, fieldErrorf("ground_truth.label", "empty: want at least one key")
	}
	if semantic {
		var s string
		if a, ok := label["answer"]; !ok || json.Unmarshal(a, &s) != nil {
			return false, nil, fieldErrorf("ground_truth.label.answer", "missing or not a string: a semantic label is {\"answer\": \"...\"}")
		}
	}
	return semantic, label, nil
}

// jsonScanFactor bounds the work LastJSONObject spends on brace groups
// that are not JSON objects to this many times the response's length, so
// that nested or unclosed braces cost linear time; LaTeX groups such as
// \frac{1}{2} close at once and cost little.
const jsonScanFactor = 32

// LastJSONObject returns the keys of the last JSON object in a response:
// the object, among those that are valid JSON text, that ends last, and of
// those the outermost. It may sit in a ```json fence or among prose; only
// strict JSON counts, so Python-style single-quoted dicts are not read. ok
// is false when the response holds none. Keys repeated in an object keep
// their last value, as in Python's json.loads.
func LastJSONObject(response string) (map[string]json.RawMessage, bool) {
	var found []byte
	s := []byte(response)
	budget := jsonScanFactor*len(s) + 4096
	for i := 0; i < len(s) && budget > 0; {
		j := bytes.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		i += j
		end := balancedEnd(s, i)
		if end > 0 && json.Valid(s[i:end]) {
			found = s[i:end]
			i = end
			continue
		}
		if end < 0 {
			end = len(s)
		}
		budget -= end - i
		i++
	}
	if found == nil {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(found, &m) != nil {
		return nil, false
	}
	return m, true
}

// balancedEnd returns the end (exclusive) of the brace group opening at
// s[i], skipping braces inside JSON strings, or -1 when it does not close.
func balancedEnd(s []byte, i int) int {
	// An if-else chain rather than a switch: Go's coverage profile leaves
	// case expressions outside every block (see ansStripOuter).
	depth, inStr := 0, false
	for k := i; k < len(s); k++ {
		c := s[k]
		if inStr {
			if c == '\\' {
				k++
			} else if c == '"' {
				inStr = false
			}
		} else if c == '"' {
			inStr = true
		} else if c == '{' || c == '[' {
			depth++
		} else if c == '}' || c == ']' {
			// depth is at least 1 here: s[i] is '{' and a group that
			// closes returns at once
			depth--
			if depth == 0 {
				if c == ']' {
					return -1
				}
				return k + 1
			}
		}
	}
	return -1
}

// TestOfTimeMatch reports whether a parsed answer object matches a Test of
// Time label.
//
// Semantic labels, {"answer": "E76"}: the answer's "answer" value is a
// string or a number (its JSON text), or a list of them (joined with
// commas); it matches when it equals the label's answer once all white
// space is removed from both, case-sensitively: the answers are entity
// and relation names copied from the prompt (E76, R12), years (1985),
// counts, or timelines of names with no spaces (E59,E57,E43), so
// "E59, E57, E43" is the timeline E59,E57,E43, while e76 names no entity.
// When the label is a number, a numeric answer of equal value matches
// (2.0 is 2).
//
// Arithmetic labels: every key of the label must be in the answer with a
// matching value (other keys, such as "explanation", are ignored). Numbers
// compare by value, a string holding a number matching the number; other
// strings compare with surrounding white space trimmed, inner runs of
// white space as one space, and Unicode case folded ("352 bc" is "352 BC");
// "unordered_list" compares its items as multisets, "ordered_list" and
// other lists item by item in order; objects compare key by key.
func TestOfTimeMatch(semantic bool, label, answer map[string]json.RawMessage) bool {
	if semantic {
		var gold string
		if json.Unmarshal(label["answer"], &gold) != nil {
			return false
		}
		got, ok := semanticText(answer["answer"])
		if !ok {
			return false
		}
		g, a := removeSpace(gold), removeSpace(got)
		if g == a {
			return true
		}
		x, okx := totNumber(g)
		y, oky := totNumber(a)
		return okx && oky && x == y
	}
	for k, want := range label {
		got, ok := answer[k]
		if !ok {
			return false
		}
		if !totEqual(want, got, k == "unordered_list") {
			return false
		}
	}
	return true
}

// semanticText is the text of a semantic answer value: a string, a
// number's JSON text, or a list of those joined with commas.
func semanticText(raw json.RawMessage) (string, bool) {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return "", false
		}
		parts := make([]string, len(items))
		for i, it := range items {
			p, ok := semanticText(it)
			if !ok || strings.HasPrefix(string(trimSpace(it)), "[") {
				return "", false
			}
			parts[i] = p
		}
		return strings.Join(parts, ","), true
	}
	if _, ok := totNumber(string(raw)); ok {
		return string(raw), true
	}
	return "", false
}

func removeSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// totNumber parses a JSON-style decimal number (no hex, no Inf or NaN).
func totNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// totEqual compares a label value with an answer value as TestOfTimeMatch
// describes; unordered compares lists as multisets.
func totEqual(want, got json.RawMessage, unordered bool) bool {
	want, got = trimSpace(want), trimSpace(got)
	if len(want) == 0 || len(got) == 0 {
		return false
	}
	switch want[0] {
	case '[':
		var ws, gs []json.RawMessage
		if json.Unmarshal(want, &ws) != nil || json.Unmarshal(got, &gs) != nil || len(ws) != len(gs) {
			return false
		}
		if !unordered {
			for i := range ws {
				if !totEqual(ws[i], gs[i], false) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(gs))
	next:
		for _, w := range ws {
			for j, g := range gs {
				if !used[j] && totEqual(w, g, false) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	case '{':
		var wm, gm map[string]json.RawMessage
		if json.Unmarshal(want, &wm) != nil || json.Unmarshal(got, &gm) != nil || len(wm) != len(gm) {
			return false
		}
		for k, w := range wm {
			g, ok := gm[k]
			if !ok || !totEqual(w, g, false) {
				return false
			}
		}
		return true
	}
	ws, wok := totScalar(want)
	gs, gok := totScalar(got)
	if !wok || !gok {
		return false
	}
	if x, ok := totNumber(ws); ok {
		if y, ok := totNumber(gs); ok {
			return x == y
		}
	}
	return strings.EqualFold(strings.Join(strings.Fields(ws), " "), strings.Join(strings.Fields(gs), " "))
}

// totScalar is the text of a JSON string, number, boolean or null.
func totScalar(raw json.RawMessage) (string, bool) {
	if raw[0] == '"' {
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	}
	if raw[0] == '[' || raw[0] == '{' {
		return "", false
	}
	return string(raw), true
}
