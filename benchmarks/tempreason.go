package benchmarks

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
)

// The context settings of TempReason: closed book (no context), ReasonQA
// (fact, the facts about the subject: fact_context) and open book (open,
// the Wikipedia page: context).
const (
	ContextClosed = "closed"
	ContextFact   = "fact"
	ContextOpen   = "open"
)

// tempreasonName is a released TempReason file: {train,val,test}_l{1,2,3}.json
// and test_l1_future.json.
var tempreasonName = regexp.MustCompile(`^(train|val|test)_(l[123])(_future)?\.json$`)

// TempReason (Tan, Ng and Bing, ACL 2023) asks time–time (level 1),
// time–event (level 2) and event–event (level 3) questions. Records are
// JSON lines despite the .json suffix: question, id, text_answers {text:
// [...]}, and at levels 2 and 3 fact_context, context, none_context and
// neg_answers.
var TempReason = Benchmark{
	Name:            "tempreason",
	DataSource:      "tempreason",
	Title:           "Towards Benchmarking and Improving the Temporal Reasoning Capability of Large Language Models",
	Licence:         "CC-BY-SA-3.0",
	URL:             "https://huggingface.co/datasets/tonytan48/TempReason",
	TrainingAllowed: true,
	Splits: []SplitFile{
		{Files: "train_l<1|2|3>.json", Split: SplitTrain, Subset: "l<1|2|3>"},
		{Files: "val_l<1|2|3>.json", Split: SplitDev, Subset: "l<1|2|3>"},
		{Files: "test_l<1|2|3>.json", Split: SplitTest, Subset: "l<1|2|3>"},
		{Files: "test_l1_future.json", Split: SplitTest, Subset: "l1_future"},
	},
	AnswerFormat: `free text; ground_truth {"answers": [...]} holds text_answers.text`,
	Contexts:     []string{ContextFact, ContextClosed, ContextOpen},
	detect: func(path string) (string, string) {
		m := tempreasonName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			return "", ""
		}
		split, _ := ParseSplit(m[1])
		return split, m[2] + m[3]
	},
	read: readTempReason,
	prompt: map[string]string{"": "{context}Question: {question}\n\n" +
		"Put your final answer on the last line as \"Answer: <answer>\"."},
}

// tempreasonContext is the field of each context setting.
var tempreasonContext = map[string]string{ContextFact: "fact_context", ContextOpen: "context"}

func readTempReason(ctx context.Context, s *source, f *fileRun) error {
	return jsonRecords(ctx, s, f, func(index int, o object) error {
		id := o.id("id")
		row, fe := convertTempReason(f, index, id, o)
		return f.done(index, id, row, fe, 0)
	})
}

func convertTempReason(f *fileRun, index int, id string, o object) (*Row, *fieldError) {
	if id == "" {
		if _, fe := o.text("id"); fe != nil {
			return nil, fe
		}
	}
	question, fe := o.text("question")
	if fe != nil {
		return nil, fe
	}
	raw, ok := o["text_answers"]
	if !ok {
		return nil, fieldErr(CauseMissing, "text_answers", "missing")
	}
	var answers object
	if err := json.Unmarshal(raw, &answers); err != nil || answers == nil {
		return nil, fieldErr(CauseWrongKind, "text_answers", "want an object {\"text\": [...]}, got %s", shown(raw))
	}
	raw, ok = answers["text"]
	list, fe := strList("text_answers.text", raw, ok)
	if fe != nil {
		return nil, fe
	}
	context := ""
	if field := tempreasonContext[f.context]; field != "" {
		// Level 1 asks about times alone: its records have no
		// fact_context and an empty context.
		if _, ok := o[field]; ok || f.t.Subset != "l1" && f.t.Subset != "l1_future" {
			if context, fe = o.optStr(field); fe != nil {
				return nil, fe
			}
			if _, ok := o[field]; !ok {
				return nil, fieldErr(CauseMissing, field, "missing (the %s setting reads it; --context closed does not)", f.context)
			}
		}
	}
	prompt := render(f.prompts[""], map[string]string{"question": question, "context": contextBlock("Context", context)})
	return f.row(index, id, "", question, prompt, jsonText(map[string][]string{"answers": list})), nil
}
