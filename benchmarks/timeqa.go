package benchmarks

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
)

// The context settings of TimeQA: the Wikipedia page the question is about
// (full, the benchmark's reading-comprehension setting) or none
// (closed book).
const (
	ContextFull = "full"
	ContextNone = "none"
)

// timeqaName is a released TimeQA file: {train,dev,test}.{easy,hard}.json,
// the train files gzipped as .json.gzip, and the human-annotated
// human_{train,test} ones.
var timeqaName = regexp.MustCompile(`^(human_)?(train|dev|test)\.(easy|hard)\.json(\.gzip|\.gz)?$`)

// TimeQA is Time-Sensitive QA (Chen, Wang and Wang, NeurIPS 2021 Datasets
// and Benchmarks): questions about facts that change over time, each with
// the Wikipedia page that answers it. Records are JSON lines despite the
// .json suffix: idx, question, context (the page), targets (the answers;
// [""] when the page does not answer), paragraphs, and in train from and
// end. The human_ files are the human-paraphrased questions.
var TimeQA = Benchmark{
	Name:            "timeqa",
	DataSource:      "timeqa",
	Title:           "A Dataset for Answering Time-Sensitive Questions",
	Licence:         "BSD-3-Clause",
	URL:             "https://github.com/wenhuchen/Time-Sensitive-QA",
	TrainingAllowed: true,
	Splits: []SplitFile{
		{Files: "dataset/train.<easy|hard>.json.gzip", Split: SplitTrain},
		{Files: "dataset/dev.<easy|hard>.json", Split: SplitDev},
		{Files: "dataset/test.<easy|hard>.json", Split: SplitTest},
		{Files: "dataset/human_<train|test>.<easy|hard>.json[.gzip]", Subset: "human_<easy|hard>"},
	},
	AnswerFormat: `a free-text span; ground_truth {"answers": [...]} holds every gold answer, [""] when the context does not answer`,
	Contexts:     []string{ContextFull, ContextNone},
	detect: func(path string) (string, string) {
		m := timeqaName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			return "", ""
		}
		return m[2], m[1] + m[3]
	},
	read: readTimeQA,
	prompt: map[string]string{"": "{context}Question: {question}\n\n" +
		"Answer with the shortest span that answers the question; if nothing in the context answers it, answer \"unanswerable\".\n" +
		"Put your final answer on the last line as \"Answer: <answer>\"."},
}

func readTimeQA(ctx context.Context, s *source, f *fileRun) error {
	return jsonRecords(ctx, s, f, func(index int, o object) error {
		id := o.id("idx")
		row, fe := convertTimeQA(f, index, id, o)
		return f.done(index, id, row, fe, 0)
	})
}

func convertTimeQA(f *fileRun, index int, id string, o object) (*Row, *fieldError) {
	if _, err := o.text("idx"); err != nil && id == "" {
		return nil, err
	}
	question, fe := o.text("question")
	if fe != nil {
		return nil, fe
	}
	raw, ok := o["targets"]
	targets, fe := strList("targets", raw, ok)
	if fe != nil {
		return nil, fe
	}
	context := ""
	if f.context == ContextFull {
		if context, fe = timeqaContext(o); fe != nil {
			return nil, fe
		}
	}
	prompt := render(f.prompts[""], map[string]string{"question": question, "context": contextBlock("Context", context)})
	return f.row(index, id, "", question, prompt, jsonText(map[string][]string{"answers": targets})), nil
}

// timeqaContext is a record's page: its context, else its paragraphs'
// texts joined.
func timeqaContext(o object) (string, *fieldError) {
	if _, ok := o["context"]; ok {
		return o.text("context")
	}
	if _, ok := o["paragraphs"]; !ok {
		return "", fieldErr(CauseMissing, "context", "missing, and no paragraphs either")
	}
	var paras []struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(o["paragraphs"], &paras); err != nil {
		return "", fieldErr(CauseWrongKind, "paragraphs", "want a list of {title, text}, got %s", shown(o["paragraphs"]))
	}
	var texts []string
	for i, p := range paras {
		if p.Text == nil {
			return "", fieldErr(CauseMissing, "paragraphs", "paragraph %d has no text", i+1)
		}
		texts = append(texts, strings.TrimSpace(*p.Text))
	}
	if len(texts) == 0 {
		return "", fieldErr(CauseEmpty, "paragraphs", "empty")
	}
	return strings.Join(texts, " "), nil
}
