package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzParseLiteral: the parser never panics, what it accepts is JSON, and
// JSON it is given it reads as JSON does.
func FuzzParseLiteral(f *testing.F) {
	for _, s := range []string{`{'answer': '352 BC'}`, `{"H": 2.0, "M": 13.0}`, `{'l': ['a', (1, 2)], 'n': -1_0, 'b': True}`,
		`'\x41\u00e9\U0001F600'`, `[[[]]]`, `{'a': .5e-3}`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLiteral(s)
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("%q: not JSON: %s", s, got)
		}
		var want, have any
		if json.Unmarshal([]byte(s), &want) == nil && json.Unmarshal(got, &have) == nil {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(have)
			if string(a) != string(b) {
				t.Fatalf("%q: JSON reads %s, the parser %s", s, a, b)
			}
		}
	})
}

// checkCounts holds an import's counts to its records, and holds the
// import of data read a byte at a time to the import of data read whole:
// the same records, the same error.
func checkCounts(t *testing.T, b *Benchmark, path, data string) {
	whole, err := countedImport(t, b, path, strings.NewReader(data))
	bytewise, err2 := countedImport(t, b, path, iotest.OneByteReader(strings.NewReader(data)))
	if fmt.Sprint(err) != fmt.Sprint(err2) || strings.Join(whole, "\n") != strings.Join(bytewise, "\n") {
		t.Fatalf("read whole: %v\n%s\nread a byte at a time: %v\n%s", err, strings.Join(whole, "\n"), err2, strings.Join(bytewise, "\n"))
	}
}

// countedImport imports r, checks the summary's counts against the records
// and returns the records, each as its number and report or row.
func countedImport(t *testing.T, b *Benchmark, path string, r io.Reader) ([]string, error) {
	var records, converted int
	var got []string
	sum, err := b.Import(context.Background(), r, path, Options{}, func(r *Record) error {
		records++
		if (r.Row == nil) == (r.Err == nil) {
			t.Fatalf("record %d: a row and an error, or neither", r.Number)
		}
		if r.Row != nil {
			converted++
			if !json.Valid([]byte(r.Row.GroundTruth)) {
				t.Fatalf("record %d: ground truth is not JSON: %s", r.Number, r.Row.GroundTruth)
			}
			got = append(got, fmt.Sprintf("%d %+v", r.Number, *r.Row))
		} else if r.Report() == "" || r.Cause == "" {
			t.Fatalf("record %d: no cause", r.Number)
		} else {
			got = append(got, fmt.Sprintf("%d %s", r.Number, r.Report()))
		}
		return nil
	})
	if err != nil {
		return got, err
	}
	not := 0
	for _, n := range sum.NotConverted {
		not += n
	}
	if sum.Records != records || sum.Converted != converted || converted+not != records {
		t.Fatalf("summary %+v for %d records, %d converted", sum, records, converted)
	}
	return got, nil
}

// FuzzJSONRecords feeds the JSON-lines and JSON-array importers.
func FuzzJSONRecords(f *testing.F) {
	f.Add(`{"idx": "a", "question": "q", "context": "c", "targets": [""]}` + "\n" + `{"idx": 5}`)
	f.Add(`[{"question": "q", "label": "{'answer': 1}", "question_type": "x"}, 5, {"label": "`)
	f.Add(`{"question": "q", "id": "L2_1", "text_answers": {"text": ["a"]}, "fact_context": "f"}`)
	f.Fuzz(func(t *testing.T, data string) {
		checkCounts(t, &TimeQA, "test.easy.json", data)
		checkCounts(t, &TempReason, "val_l2.json", data)
		checkCounts(t, &TestOfTime, "tot_arithmetic/test.json", data)
		checkCounts(t, &TestOfTime, "tot_semantic/test.json", data)
	})
}

// FuzzCSVRecords feeds TRAM's importer.
func FuzzCSVRecords(f *testing.F) {
	f.Add("Premise,Question,Option A,Option B,Answer,Category\r\np,q\x92,a,\"b, c\",B,Cause\r\np,q,a,A,Cause\r\n")
	f.Add("Question,Answer,Category\r\nWhat is 23:48 - 01:31?,22:17,Hour\r\n\"x,y\r\n")
	f.Fuzz(func(t *testing.T, data string) {
		checkCounts(t, &TRAM, "causality_mcq.csv", data)
		checkCounts(t, &TRAM, "arithmetic_saq.csv", data)
	})
}
