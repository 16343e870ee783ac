package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstRow is the first converted row of testdata/name.
func firstRow(t *testing.T, b *Benchmark, name string, opt Options) *Row {
	t.Helper()
	got, _, err := importFile(t, b, name, opt)
	require.NoError(t, err)
	for _, r := range got {
		if r.Row != nil {
			return r.Row
		}
	}
	t.Fatalf("%s: no row", name)
	return nil
}

func TestPrompts(t *testing.T) {
	tests := []struct {
		name string
		b    *Benchmark
		file string
		opt  Options
		want string
	}{
		{"TimeQA with its page", &TimeQA, "test.easy.json", Options{},
			"Context:\nNewton D . Baker House , also known as Jacqueline Kennedy House , was owned by George Peter from 1811 to 1827 .\n\n" +
				"Question: Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?\n\n" +
				"Answer with the shortest span that answers the question; if nothing in the context answers it, answer \"unanswerable\".\n" +
				"Put your final answer on the last line as \"Answer: <answer>\"."},
		{"TimeQA closed book", &TimeQA, "test.easy.json", Options{Context: ContextNone},
			"Question: Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?\n\n" +
				"Answer with the shortest span that answers the question; if nothing in the context answers it, answer \"unanswerable\".\n" +
				"Put your final answer on the last line as \"Answer: <answer>\"."},
		{"TempReason with its facts", &TempReason, "val_l2.json", Options{},
			"Context:\nClarence Norman Brunsdale holds the position of member of the State Senate of North Dakota from Jan, 1941 to Jan, 1951.\n\n" +
				"Question: Which position did Clarence Norman Brunsdale hold in May, 1946?\n\nPut your final answer on the last line as \"Answer: <answer>\"."},
		{"TempReason open book", &TempReason, "val_l2.json", Options{Context: ContextOpen},
			"Context:\nClarence Norman Brunsdale was an American politician.\n\n" +
				"Question: Which position did Clarence Norman Brunsdale hold in May, 1946?\n\nPut your final answer on the last line as \"Answer: <answer>\"."},
		{"TRAM multiple choice with a premise", &TRAM, "causality_mcq.csv", Options{},
			"Premise: The couple set a rule to limit their screen time to one hour per day.\n\n" +
				"Question: What’s the more plausible CAUSE?\n\nA. They were following a nationwide mandate.\nB. They wanted fewer distractions, and more talk.\n\n" +
				"Choose the one correct option. Put your final answer on the last line as \"Answer: <letter>\"."},
		{"TRAM short answer, prompt from config", &TRAM, "arithmetic_saq.csv", Options{Prompts: map[string]string{FormatSAQ: "Q: {question}\nAnswer: <answer>"}},
			"Q: What is 23:48 - 01:31?\nAnswer: <answer>"},
		{"Test of Time semantic: the prompt holds the question", &TestOfTime, "tot_semantic/test.json", Options{},
			"Here are some facts:\nE98 was the R82 of E59 from 1978 to 1983.\nE76 was the R82 of E59 from 1970 to 1977.\n\n" +
				"Question: Which entity was the R82 of E59 before E98 was?\nAnswer in JSON {\"explanation\": ..., \"answer\": ...}.\n\n" +
				"Think step by step if you need to, then end your reply with the JSON object the question asks for, on its own."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, firstRow(t, tt.b, tt.file, tt.opt).Prompt)
		})
	}
	// The semantic record whose prompt does not repeat its question gets
	// both, the facts first.
	got, _, err := importFile(t, &TestOfTime, "tot_semantic/test.json", Options{})
	require.NoError(t, err)
	assert.Equal(t, "Here are some facts:\nE30 was the R12 of E4 from 1985 to 1990.\n\nIn which year did E30 start being the R12 of E4?\n\n"+
		"Think step by step if you need to, then end your reply with the JSON object the question asks for, on its own.", got[1].Row.Prompt)
	assert.Equal(t, "event_at_what_time", got[1].Row.Category)
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, path, data string
		b                *Benchmark
		opt              Options
		want             string
	}{
		{"not JSON", "dev.easy.json", "Who owned it?\n", &TimeQA, Options{}, "dev.easy.json: not JSON: want JSON lines or a JSON array of records"},
		{"no record on any line", "dev.easy.json", "{\"idx\": \n{oops\n", &TempReason, Options{Split: "dev", Subset: "l1"}, "dev.easy.json: not JSON lines: no line is a record: dev.easy.json: line 1: not a JSON object"},
		{"empty", "test.hard.json", "  \n", &TimeQA, Options{}, "test.hard.json: no records"},
		{"empty array", "tot_arithmetic.json", "[]", &TestOfTime, Options{}, "tot_arithmetic.json: no records: an empty array"},
		{"an array cut in its first record", "tot_arithmetic.json", `[{"question": "x", "la`, &TestOfTime, Options{}, "tot_arithmetic.json: not a JSON array of records: the text ends too soon"},
		{"gzip cut short", "train.easy.json.gzip", "\x1f\x8b\x08\x00", &TimeQA, Options{}, "train.easy.json.gzip: gzip: unexpected EOF"},
		{"CSV without Answer", "duration_mcq.csv", "Question,Option A\r\nq,a\r\n", &TRAM, Options{}, `duration_mcq.csv: not a tram CSV file: the header "Question,Option A" has no Answer column`},
		{"CSV header only", "duration_mcq.csv", "Question,Option A,Option B,Answer\r\n", &TRAM, Options{}, "duration_mcq.csv: no records"},
		{"multiple choice without options", "duration_mcq.csv", "Question,Answer\r\nq,A\r\n", &TRAM, Options{}, "duration_mcq.csv: a multiple-choice file without an Option A column"},
		{"unknown name", "data.jsonl", "{}", &TimeQA, Options{}, "data.jsonl: not a file name timeqa releases"},
		{"unknown ToT directory", "mine/test.json", "[]", &TestOfTime, Options{}, "mine/test.json: not a file name test-of-time releases (<tot_arithmetic|tot_semantic|tot_semantic_large>/test.json): give --subset NAME"},
		{"unknown ToT subset", "mine/test.json", "[]", &TestOfTime, Options{Subset: "tot_other"}, `mine/test.json: subset "tot_other": want tot_arithmetic, tot_semantic or tot_semantic_large`},
		{"unknown split", "x.csv", "", &TRAM, Options{Split: "holdout", Subset: "x"}, `split "holdout": want train, dev or test`},
		{"unknown context", "test.easy.json", "", &TimeQA, Options{Context: "fact"}, `context "fact": want one of full, none for timeqa`},
		{"context of none", "x.csv", "", &TRAM, Options{Split: "test", Subset: "x", Context: "full"}, `context "full": tram has no context setting`},
		{"unknown prompt kind", "x.csv", "", &TRAM, Options{Split: "test", Subset: "x", Prompts: map[string]string{"essay": "x"}}, `prompt "essay": tram has no such kind of record`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			_, err := tt.b.Import(context.Background(), strings.NewReader(tt.data), tt.path, tt.opt, func(*Record) error { n++; return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, goName := range []string{"*json", "Go value", "[]string", "map["} {
				assert.NotContains(t, err.Error(), goName, "no Go names")
			}
		})
	}
}

func TestTrainingRefused(t *testing.T) {
	tests := []struct {
		name string
		b    *Benchmark
		path string
		want string // "" when allowed
	}{
		{"Test of Time", &TestOfTime, "tot_arithmetic/test.json", `refused for training: Test of Time: A Benchmark for Evaluating LLMs on Temporal Reasoning's data card says: "ToT is primarily designed for use as a test set. Using ToT as a training set is strictly prohibited."`},
		{"a test split", &TimeQA, "test.hard.json", "test.hard.json: refused for training: the test split is for evaluation"},
		{"TRAM's test set", &TRAM, "duration_mcq.csv", "the test split is for evaluation"},
		{"a train split", &TimeQA, "train.hard.json.gzip", ""},
		{"a dev split", &TempReason, "val_l3.json", ""},
		{"few-shot examples", &TRAM, "duration_shots_saq.csv", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := tt.b.Target(tt.path, Options{Purpose: PurposeTrain})
			if tt.want == "" {
				require.NoError(t, err)
				assert.True(t, target.TrainingAllowed)
				return
			}
			require.ErrorIs(t, err, ErrTrainingRefused)
			assert.Contains(t, err.Error(), tt.want)
			// For evaluation the file imports, its rows marked.
			target, err = tt.b.Target(tt.path, Options{})
			require.NoError(t, err)
			assert.False(t, target.TrainingAllowed)
		})
	}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		b                   *Benchmark
		path, split, subset string
	}{
		{&TimeQA, "dataset/train.easy.json.gzip", SplitTrain, "easy"},
		{&TimeQA, "dev.hard.json", SplitDev, "hard"},
		{&TimeQA, "human_test.hard.json", SplitTest, "human_hard"},
		{&TimeQA, "human_train.easy.json.gzip", SplitTrain, "human_easy"},
		{&TempReason, "val_l2.json", SplitDev, "l2"},
		{&TempReason, "train_l3.json", SplitTrain, "l3"},
		{&TempReason, "test_l1_future.json", SplitTest, "l1_future"},
		{&TRAM, "duration_mcq.csv", SplitTest, "duration"},
		{&TRAM, "arithmetic_saq.csv", SplitTest, "arithmetic"},
		{&TRAM, "ambiguity_resolution_shots_mcq.csv", SplitDev, "ambiguity_resolution"},
		{&TRAM, "causality_mirrored_mcq.csv", SplitTest, "causality_mirrored"},
		{&TRAM, "ordering.csv", SplitTest, "ordering"},
		{&TRAM, "typical_time_shots.csv", SplitDev, "typical_time"},
		{&TestOfTime, "ToT/tot_semantic_large/test.json", SplitTest, ToTSemanticLarge},
		{&TestOfTime, "tot_arithmetic.json", SplitTest, ToTArithmetic},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := tt.b.Target(tt.path, Options{})
			require.NoError(t, err)
			assert.Equal(t, Target{Split: tt.split, Subset: tt.subset, TrainingAllowed: tt.b.TrainingAllowed && tt.split != SplitTest}, got)
		})
	}
	got, err := TRAM.Target("my_set.csv", Options{Split: "validation", Subset: "mine"})
	require.NoError(t, err)
	assert.Equal(t, Target{Split: SplitDev, Subset: "mine", TrainingAllowed: true}, got)
	_, err = TRAM.Target("my_set.csv", Options{Subset: "mine"})
	var ne *NameError
	require.ErrorAs(t, err, &ne)
	assert.Contains(t, err.Error(), "give --split train|dev|test")
}

func TestParseLiteral(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: `{'answer': '352 BC'}`, want: `{"answer":"352 BC"}`},
		{in: `{"H": 2.0, "M": 13.0, "S": 30.0}`, want: `{"H":2.0,"M":13.0,"S":30.0}`},
		{in: `{'ordered_list': ['a', "b's"], 'n': -3, 'x': 1e3, 'y': .5, 'z': 5., 'big': 1_000,}`, want: `{"ordered_list":["a","b's"],"n":-3,"x":1e3,"y":0.5,"z":5,"big":1000}`},
		{in: `{'day': 'Monday', 'time': (10, 30), 'ok': True, 'no': False, 'none': None}`, want: `{"day":"Monday","time":[10,30],"ok":true,"no":false,"none":null}`},
		{in: `'it\'s \u00e9\x41\n'`, want: `"it's éA\n"`},
		{in: `{"a": "<&>"}`, want: `{"a":"<&>"}`},
		{in: ` [ ] `, want: `[]`},
		{in: `+7`, want: `7`},
		{in: `007`, err: "a leading zero"},
		{in: `{'a': 1, 'a': 2}`, err: `the key "a" twice`},
		{in: `{1: 'a'}`, err: "want a string key or }"},
		{in: `{'a': __import__('os')}`, err: "want a dict, list, string, number, True, False or None"},
		{in: `{'a': 1} + 1`, err: "after the value"},
		{in: `{'a': 'b`, err: "never closed"},
		{in: `'\q'`, err: `an escape Python literals do not have: \q`},
		{in: `{'a' 1}`, err: "want : after the key"},
		{in: `[1 2]`, err: "want , or ] in a list"},
		{in: `1.2.3`, err: "not a number"},
		{in: `1e999`, err: "not a number"},
		{in: `Truest`, err: "want a dict"},
		{in: strings.Repeat("[", 100), err: "nested more than 64 deep"},
		{in: ``, err: "the text ends"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLiteral(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := TRAM.Import(context.Background(), strings.NewReader("Question,Answer\r\na,b\r\nc,d\r\n"), "duration_saq.csv", Options{},
		func(*Record) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = TimeQA.Import(ctx, bytes.NewReader([]byte(`{"idx":"a"}`)), "dev.easy.json", Options{}, func(*Record) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}
