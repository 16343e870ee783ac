package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The Test of Time configurations, and the record kinds they hold.
const (
	ToTArithmetic    = "tot_arithmetic"
	ToTSemantic      = "tot_semantic"
	ToTSemanticLarge = "tot_semantic_large"
)

// totName is a Test of Time file: test.json in its configuration's
// directory, or a file named after the configuration.
var totName = regexp.MustCompile(`^(tot_arithmetic|tot_semantic|tot_semantic_large)(?:_test)?\.json$`)

// totRestriction is the Test of Time data card's restriction, in its words.
const totRestriction = "ToT is primarily designed for use as a test set. Using ToT as a training set is strictly prohibited."

// TestOfTime is Test of Time (Fatemi et al., 2024): synthetic questions on
// temporal arithmetic (tot_arithmetic: question, label, question_type) and
// temporal semantics over made-up facts (tot_semantic,
// tot_semantic_large: prompt, question, label, question_type, ...). Each
// test.json is one JSON array. An arithmetic label is a string holding a
// dict, mostly as Python writes it ({'answer': '352 BC'}), some as JSON; a
// semantic label is the answer itself. Its card prohibits training on it.
var TestOfTime = Benchmark{
	Name:        "test-of-time",
	DataSource:  "test_of_time",
	Title:       "Test of Time: A Benchmark for Evaluating LLMs on Temporal Reasoning",
	Licence:     "CC-BY-4.0",
	URL:         "https://huggingface.co/datasets/baharef/ToT",
	Restriction: totRestriction,
	Splits: []SplitFile{
		{Files: "<tot_arithmetic|tot_semantic|tot_semantic_large>/test.json", Split: SplitTest, Subset: "the directory's name"},
	},
	AnswerFormat: `a JSON object the question asks for; ground_truth {"kind": "arithmetic", "label": {...}} ` +
		`(the label's dict) or {"kind": "semantic", "label": {"answer": "..."}}`,
	detect: totTarget,
	read:   readToT,
	prompt: map[string]string{"": "{context}{question}\n\n" +
		"Think step by step if you need to, then end your reply with the JSON object the question asks for, on its own."},
}

// totTarget reads a file's configuration from its name, or, for
// test.json, from its directory's; every file is the test split.
func totTarget(path string) (string, string) {
	base := filepath.Base(path)
	if base == "test.json" {
		if dir := filepath.Base(filepath.Dir(path)); totName.MatchString(dir + ".json") {
			return SplitTest, dir
		}
		return SplitTest, ""
	}
	if m := totName.FindStringSubmatch(base); m != nil {
		return SplitTest, m[1]
	}
	return SplitTest, ""
}

func readToT(ctx context.Context, s *source, f *fileRun) error {
	if f.t.Subset != ToTArithmetic && f.t.Subset != ToTSemantic && f.t.Subset != ToTSemanticLarge {
		return fmt.Errorf("%s: subset %q: want %s, %s or %s", f.path, f.t.Subset, ToTArithmetic, ToTSemantic, ToTSemanticLarge)
	}
	f.idOf = func(index int) string { return f.t.Subset + "-" + strconv.Itoa(index) }
	return jsonRecords(ctx, s, f, func(index int, o object) error {
		row, fe := convertToT(f, index, o)
		return f.done(index, "", row, fe, 0)
	})
}

func convertToT(f *fileRun, index int, o object) (*Row, *fieldError) {
	category, fe := o.optStr("question_type")
	if fe != nil {
		return nil, fe
	}
	question, fe := o.optStr("question")
	if fe != nil {
		return nil, fe
	}
	semantic := f.t.Subset != ToTArithmetic
	var gt, context string
	if semantic {
		label, fe := totSemanticLabel(o)
		if fe != nil {
			return nil, fe
		}
		gt = jsonText(map[string]any{"kind": "semantic", "label": map[string]string{"answer": label}})
		// The prompt holds the facts, and the question unless it repeats
		// it.
		prompt, fe := o.optStr("prompt")
		if fe != nil {
			return nil, fe
		}
		switch {
		case strings.TrimSpace(prompt) == "" && strings.TrimSpace(question) == "":
			return nil, fieldErr(CauseMissing, "prompt", "missing, and no question either")
		case strings.Contains(prompt, strings.TrimSpace(question)):
			question = prompt
		default:
			context = strings.TrimSpace(prompt) + "\n\n"
		}
	} else {
		if strings.TrimSpace(question) == "" {
			if _, ok := o["question"]; !ok {
				return nil, fieldErr(CauseMissing, "question", "missing")
			}
			return nil, fieldErr(CauseEmpty, "question", "empty")
		}
		label, fe := totArithmeticLabel(o)
		if fe != nil {
			return nil, fe
		}
		gt = jsonText(struct {
			Kind  string          `json:"kind"`
			Label json.RawMessage `json:"label"`
		}{"arithmetic", label})
	}
	prompt := render(f.prompts[""], map[string]string{"question": strings.TrimSpace(question), "context": context})
	// The item is the facts and the question: the facts are what is
	// particular to a semantic record.
	item := strings.TrimSpace(context + strings.TrimSpace(question))
	return f.row(index, f.idOf(index), category, item, prompt, gt), nil
}

// totArithmeticLabel is an arithmetic record's label: a string holding a
// dict (a Python literal or JSON), or the dict itself.
func totArithmeticLabel(o object) (json.RawMessage, *fieldError) {
	raw, ok := o["label"]
	if !ok {
		return nil, fieldErr(CauseMissing, "label", "missing")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return raw, nil
		}
		return nil, fieldErr(CauseWrongKind, "label", "want a string holding a dict, got %s", shown(raw))
	}
	lit, err := ParseLiteral(text)
	if err != nil {
		return nil, fieldErr(CauseBadLabel, "label", "%q is not a dict literal: %v", cut(text), err)
	}
	if !bytes.HasPrefix(lit, []byte("{")) {
		return nil, fieldErr(CauseBadLabel, "label", "want a dict, got %s", shown(lit))
	}
	if string(lit) == "{}" {
		return nil, fieldErr(CauseEmpty, "label", "an empty dict")
	}
	return lit, nil
}

// totSemanticLabel is a semantic record's label: a string (a number is
// read as its text).
func totSemanticLabel(o object) (string, *fieldError) {
	raw, ok := o["label"]
	if !ok {
		return "", fieldErr(CauseMissing, "label", "missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "", fieldErr(CauseEmpty, "label", "empty")
		}
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", fieldErr(CauseWrongKind, "label", "want a string, got %s", shown(raw))
}

// cut shortens a text for a message.
func cut(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
