package rewards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// ReadDecisions reads a JSONL file of tool-call decisions (items of the
// tictoc/decision reward: solution_str, ground_truth, extra_info with the
// grouping fields by) into ev. It adds every line's decision to ev. The first malformed line
// is an error naming the file, the line and the field.
func ReadDecisions(r io.Reader, name string, scorer *Scorer, by []string, ev *DecisionEvaluator) error {
	lines := jsonscan.NewLineReader(r)
	for {
		line, n, err := lines.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return fmt.Errorf("%s: line %d: empty line; every line must be one JSON item", name, n)
		}
		d, labels, itemErr := decodeDecision(line, scorer, by)
		if itemErr != nil {
			return fmt.Errorf("%s: line %d: %w", name, n, itemErr)
		}
		ev.Add(d.PreferTool, d.CalledTool, labels)
	}
}

// decodeDecision reads one item: its decision and its labels for the
// grouping fields (absent or null fields get no label).
func decodeDecision(line []byte, scorer *Scorer, by []string) (ToolDecision, map[string]string, error) {
	if err := uniqueMembers(line); err != nil {
		return ToolDecision{}, nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return ToolDecision{}, nil, jsonscan.Explain("", line, err)
	}
	if raw, ok := fields["data_source"]; ok && !isNull(raw) {
		var ds string
		if json.Unmarshal(raw, &ds) != nil {
			return ToolDecision{}, nil, fmt.Errorf("data_source: %s is not a string", raw)
		}
		if ds != "" && ds != TicTocDecision.DataSource {
			return ToolDecision{}, nil, fmt.Errorf("data_source: %q is not %s", ds, TicTocDecision.DataSource)
		}
	}
	it := Item{DataSource: TicTocDecision.DataSource, GroundTruth: fields["ground_truth"]}
	raw, ok := fields["solution_str"]
	if !ok || isNull(raw) {
		return ToolDecision{}, nil, fmt.Errorf("solution_str: missing: the decision is read from the response")
	}
	if json.Unmarshal(raw, &it.SolutionStr) != nil {
		return ToolDecision{}, nil, fmt.Errorf("solution_str: not a string")
	}
	var extra map[string]json.RawMessage
	if raw, ok := fields["extra_info"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &extra) != nil {
			return ToolDecision{}, nil, fmt.Errorf("extra_info: not a JSON object")
		}
	}
	labels := make(map[string]string, len(by))
	for _, f := range by {
		raw, ok := extra[f]
		if !ok || isNull(raw) {
			continue
		}
		v, err := groupValue(raw)
		if err != nil {
			return ToolDecision{}, nil, fmt.Errorf("extra_info.%s: %w", f, err)
		}
		labels[f] = v
	}
	d, err := scorer.ToolDecision(&it)
	return d, labels, err
}

// groupValue turns a JSON scalar into a group label; numbers are written in
// their shortest form, so 2 and 2.0 fall in one group.
func groupValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case 't', 'f':
		return string(raw), nil
	case '{', '[':
		return "", fmt.Errorf("an object or array cannot label a group; want a string, number or boolean")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", fmt.Errorf("%s is not a number", raw)
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
