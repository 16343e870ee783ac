package benchmarks

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The record kinds of TRAM, whose prompts differ.
const (
	FormatMCQ = "mcq"
	FormatSAQ = "saq"
)

// tramName is a released TRAM file: <task>_mcq.csv and <task>_saq.csv (the
// test set), <task>_shots_mcq.csv and <task>_shots_saq.csv (the few-shot
// examples), and the older <task>.csv and <task>_shots.csv.
var tramName = regexp.MustCompile(`^(ordering|frequency|duration|typical_time|ambiguity_resolution|arithmetic|relation|nli|causality|causality_mirrored|storytelling)(_shots)?(?:_(mcq|saq))?\.csv$`)

// tramOption is the column of an option; its letter follows.
const tramOption = "Option "

// TRAM (Wang and Zhao, Findings of ACL 2024) is ten temporal reasoning
// tasks (ordering, frequency, duration, typical time, ambiguity
// resolution, arithmetic, relation, temporal NLI, causality,
// storytelling) as multiple-choice questions, and some as short answers.
// Files are CSV with CRLF line ends: Question, Option A to D, Answer (a
// letter), Category (Source for relation); causality has a Premise first,
// and its files are Windows-1252, not UTF-8. Columns besides these
// (Premise, Hypothesis, Story) are the question's context.
var TRAM = Benchmark{
	Name:            "tram",
	DataSource:      "tram",
	Title:           "TRAM: Benchmarking Temporal Reasoning for Large Language Models",
	Licence:         "MIT",
	URL:             "https://github.com/EternityYW/TRAM-Benchmark",
	TrainingAllowed: true,
	Splits: []SplitFile{
		{Files: "<task>_mcq.csv, <task>_saq.csv, causality_mirrored_mcq.csv", Split: SplitTest, Subset: "<task>"},
		{Files: "<task>_shots_mcq.csv, <task>_shots_saq.csv (few-shot examples)", Split: SplitDev, Subset: "<task>"},
	},
	AnswerFormat: `multiple choice: a letter, ground_truth {"letter": "B", "options": {"A": ..., "B": ...}}; ` +
		`short answer: free text, ground_truth {"answers": [...]}`,
	detect: func(path string) (string, string) {
		m := tramName.FindStringSubmatch(strings.ToLower(filepath.Base(path)))
		switch {
		case m == nil:
			return "", ""
		case m[2] != "":
			return SplitDev, m[1]
		}
		return SplitTest, m[1]
	},
	read: readTRAM,
	prompt: map[string]string{
		FormatMCQ: "{context}Question: {question}\n\n{options}\n\n" +
			"Choose the one correct option. Put your final answer on the last line as \"Answer: <letter>\".",
		FormatSAQ: "{context}Question: {question}\n\n" +
			"Put your final answer on the last line as \"Answer: <answer>\".",
	},
}

// tramFormat is a file's format: from its name, else from its header.
func tramFormat(path string, header []string) (string, error) {
	m := tramName.FindStringSubmatch(strings.ToLower(filepath.Base(path)))
	hasOptions := slices.Contains(header, tramOption+"A")
	switch {
	case m != nil && m[3] == FormatMCQ && !hasOptions:
		return "", fmt.Errorf("%s: a multiple-choice file without an %sA column", path, tramOption)
	case m != nil && m[3] != "":
		return m[3], nil
	case hasOptions:
		return FormatMCQ, nil
	}
	return FormatSAQ, nil
}

func readTRAM(ctx context.Context, s *source, f *fileRun) error {
	var format string
	f.idOf = func(index int) string { return f.t.Subset + "-" + format + "-" + strconv.Itoa(index) }
	header := func(h []string) (err error) {
		format, err = tramFormat(f.path, h)
		return err
	}
	return csvRecords(ctx, s, f, []string{"Question", "Answer"}, header, func(index int, header []string, row csvRow) error {
		r, fe := convertTRAM(f, index, format, header, row)
		return f.done(index, "", r, fe, row.repaired)
	})
}

func convertTRAM(f *fileRun, index int, format string, header []string, row csvRow) (*Row, *fieldError) {
	question := strings.TrimSpace(row.fields["Question"])
	if question == "" {
		return nil, fieldErr(CauseEmpty, "Question", "empty (line %d)", row.line)
	}
	answer := strings.TrimSpace(row.fields["Answer"])
	if answer == "" {
		return nil, fieldErr(CauseEmpty, "Answer", "empty (line %d)", row.line)
	}
	category := row.fields["Category"]
	if c, ok := row.fields["Source"]; ok && category == "" {
		category = c
	}
	var context []string
	for _, h := range header {
		if h == "Question" || h == "Answer" || h == "Category" || h == "Source" || strings.HasPrefix(h, tramOption) {
			continue
		}
		if v := strings.TrimSpace(row.fields[h]); v != "" {
			context = append(context, h+": "+v)
		}
	}
	values := map[string]string{"question": question, "context": ""}
	if len(context) > 0 {
		values["context"] = strings.Join(context, "\n") + "\n\n"
	}
	id := f.idOf(index)
	item := values["context"] + question // a premise or story, then the question; not the options
	if format == FormatSAQ {
		return f.row(index, id, category, item, render(f.prompts[FormatSAQ], values), jsonText(map[string][]string{"answers": {answer}})), nil
	}
	options := map[string]string{}
	var letters, lines []string
	for _, h := range header {
		letter, ok := strings.CutPrefix(h, tramOption)
		if !ok {
			continue
		}
		if text := strings.TrimSpace(row.fields[h]); text != "" {
			options[letter] = text
			letters = append(letters, letter)
			lines = append(lines, letter+". "+text)
		}
	}
	if len(options) < 2 {
		return nil, fieldErr(CauseEmpty, "Option", "fewer than two options (line %d)", row.line)
	}
	if _, ok := options[answer]; !ok {
		return nil, fieldErr(CauseBadAnswer, "Answer", "%q is not one of the options %s (line %d)", answer, strings.Join(letters, ", "), row.line)
	}
	values["options"] = strings.Join(lines, "\n")
	gt := jsonText(struct {
		Letter  string            `json:"letter"`
		Options map[string]string `json:"options"`
	}{answer, options})
	return f.row(index, id, category, item, render(f.prompts[FormatMCQ], values), gt), nil
}
