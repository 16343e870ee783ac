package benchmarks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importFile imports testdata/name with opt.
func importFile(t *testing.T, b *Benchmark, name string, opt Options) ([]*Record, *Summary, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var got []*Record
	sum, err := b.Import(context.Background(), bytes.NewReader(data), filepath.Join("testdata", name), opt, func(r *Record) error {
		got = append(got, r)
		return nil
	})
	return got, sum, err
}

// The files of testdata/ are written by hand in each benchmark's released
// format, with the record that is wrong in each way the tests name; what
// each record becomes was worked out by hand.
func TestImport(t *testing.T) {
	tests := []struct {
		name      string
		b         *Benchmark
		file      string
		opt       Options
		converted int
		not       map[string]int
		repaired  [2]int // records, bytes
		reports   []string
		// truths are the ground truths of the converted records, in order.
		truths             []string
		split, subset, ids string
		allowed            bool
	}{
		{name: "TimeQA", b: &TimeQA, file: "test.easy.json", converted: 3,
			not: map[string]int{CauseEmpty: 1, CauseMissing: 1, CauseNotJSON: 1, CauseWrongKind: 1},
			reports: []string{
				"testdata/test.easy.json: record 3 (id /wiki/X#P466#0): targets: want a list of strings, got 5",
				"testdata/test.easy.json: record 4 (id /wiki/Y#P39#1): question: missing",
				"testdata/test.easy.json: record 5: not a JSON object: the text ends too soon",
				"testdata/test.easy.json: record 6 (id /wiki/W#P54#2): targets: an empty list: want at least one answer",
			},
			truths: []string{`{"answers":["George Peter"]}`, `{"answers":[""]}`, `{"answers":["Oxford","University of Oxford"]}`},
			split:  SplitTest, subset: "easy", ids: "/wiki/Newton_D._Baker_House#P466#0,/wiki/Engelbert_Endrass#P410#0,/wiki/V#P69#0"},
		{name: "TimeQA gzipped train", b: &TimeQA, file: "train.hard.json.gzip", converted: 2,
			truths: []string{`{"answers":["George Peter"]}`, `{"answers":[""]}`}, split: SplitTrain, subset: "hard", allowed: true,
			ids: "/wiki/Newton_D._Baker_House#P466#0,/wiki/Engelbert_Endrass#P410#0"},
		{name: "TempReason L2, facts", b: &TempReason, file: "val_l2.json", converted: 1,
			not: map[string]int{CauseEmpty: 2, CauseMissing: 1, CauseWrongKind: 1},
			reports: []string{
				"testdata/val_l2.json: record 2 (id L2_Q1_P54_0): fact_context: missing (the fact setting reads it; --context closed does not)",
				`testdata/val_l2.json: record 3 (id L2_Q2_P54_0): text_answers: want an object {"text": [...]}, got ["D"]`,
				"testdata/val_l2.json: record 4 (id L2_Q3_P54_0): text_answers.text: an empty list: want at least one answer",
				"testdata/val_l2.json: record 5 (id L2_Q4_P54_0): question: empty",
			},
			truths: []string{`{"answers":["member of the State Senate of North Dakota"]}`}, split: SplitDev, subset: "l2", allowed: true,
			ids: "L2_Q367750_P39_0"},
		{name: "TempReason L2, closed book", b: &TempReason, file: "val_l2.json", opt: Options{Context: ContextClosed}, converted: 2,
			not: map[string]int{CauseEmpty: 2, CauseWrongKind: 1},
			reports: []string{
				`testdata/val_l2.json: record 3 (id L2_Q2_P54_0): text_answers: want an object {"text": [...]}, got ["D"]`,
				"testdata/val_l2.json: record 4 (id L2_Q3_P54_0): text_answers.text: an empty list: want at least one answer",
				"testdata/val_l2.json: record 5 (id L2_Q4_P54_0): question: empty",
			},
			truths: []string{`{"answers":["member of the State Senate of North Dakota"]}`, `{"answers":["B"]}`}, split: SplitDev, subset: "l2", allowed: true,
			ids: "L2_Q367750_P39_0,L2_Q1_P54_0"},
		{name: "TempReason L1", b: &TempReason, file: "test_l1.json", converted: 2,
			truths: []string{`{"answers":["Oct, 1874"]}`, `{"answers":["Nov, 1999"]}`}, split: SplitTest, subset: "l1", ids: "0,1"},
		{name: "TRAM causality, Windows-1252", b: &TRAM, file: "causality_mcq.csv", converted: 3,
			not: map[string]int{CauseBadAnswer: 1, CauseBadRow: 1}, repaired: [2]int{3, 4},
			reports: []string{
				"testdata/causality_mcq.csv: record 3 (id causality-mcq-2): line 4: want 6 fields as in the header, got 5",
				`testdata/causality_mcq.csv: record 4 (id causality-mcq-3): Answer: "C" is not one of the options A, B (line 5)`,
			},
			truths: []string{
				`{"letter":"B","options":{"A":"They were following a nationwide mandate.","B":"They wanted fewer distractions, and more talk."}}`,
				`{"letter":"A","options":{"A":"The neighbour woke up.","B":"The moon rose."}}`,
				`{"letter":"A","options":{"A":"It was left out of the fridge.","B":"It was “fresh”."}}`,
			},
			split: SplitTest, subset: "causality", ids: "causality-mcq-0,causality-mcq-1,causality-mcq-4"},
		{name: "TRAM short answers", b: &TRAM, file: "arithmetic_saq.csv", converted: 3,
			not: map[string]int{CauseBadRow: 1, CauseEmpty: 1},
			reports: []string{
				"testdata/arithmetic_saq.csv: record 3 (id arithmetic-saq-2): Answer: empty (line 4)",
				`testdata/arithmetic_saq.csv: record 4 (id arithmetic-saq-3): line 5: bare " in non-quoted-field`,
			},
			truths: []string{`{"answers":["22:17"]}`, `{"answers":["12:30"]}`, `{"answers":["2000"]}`},
			split:  SplitTest, subset: "arithmetic", ids: "arithmetic-saq-0,arithmetic-saq-1,arithmetic-saq-4"},
		{name: "Test of Time arithmetic, cut short", b: &TestOfTime, file: "tot_arithmetic/test.json", converted: 3,
			not: map[string]int{CauseBadLabel: 1, CauseTruncated: 1, CauseWrongKind: 1},
			reports: []string{
				`testdata/tot_arithmetic/test.json: record 4 (id tot_arithmetic-3): label: "{'answer': 'seven days'" is not a dict literal: at character 24: want , or } in a dict, got end of text`,
				"testdata/tot_arithmetic/test.json: record 5 (id tot_arithmetic-4): label: want a string holding a dict, got 7",
				"testdata/tot_arithmetic/test.json: record 6 (id tot_arithmetic-5): the file ends inside the record",
			},
			truths: []string{
				`{"kind":"arithmetic","label":{"answer":"352 BC"}}`,
				`{"kind":"arithmetic","label":{"H":2.0,"M":13.0,"S":30.0}}`,
				`{"kind":"arithmetic","label":{"unordered_list":["Monday","Friday"],"n":2}}`,
			},
			split: SplitTest, subset: ToTArithmetic, ids: "tot_arithmetic-0,tot_arithmetic-1,tot_arithmetic-2"},
		{name: "Test of Time semantic", b: &TestOfTime, file: "tot_semantic/test.json", converted: 2,
			not:     map[string]int{CauseWrongKind: 1},
			reports: []string{`testdata/tot_semantic/test.json: record 3 (id tot_semantic-2): label: want a string, got ["E59", "E98"]`},
			truths:  []string{`{"kind":"semantic","label":{"answer":"E76"}}`, `{"kind":"semantic","label":{"answer":"1985"}}`},
			split:   SplitTest, subset: ToTSemantic, ids: "tot_semantic-0,tot_semantic-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sum, err := importFile(t, tt.b, tt.file, tt.opt)
			require.NoError(t, err)
			if tt.not == nil {
				tt.not = map[string]int{}
			}
			assert.Equal(t, tt.converted, sum.Converted)
			assert.Equal(t, tt.not, sum.NotConverted)
			assert.Equal(t, len(got), sum.Records)
			assert.Equal(t, tt.repaired, [2]int{sum.RepairedRecords, sum.RepairedBytes})
			var reports, truths, ids []string
			for i, r := range got {
				assert.Equal(t, i+1, r.Number)
				if line := r.Report(); line != "" {
					reports = append(reports, line)
					continue
				}
				truths = append(truths, r.Row.GroundTruth)
				ids = append(ids, r.Row.ID)
				assert.Equal(t, r.ID, r.Row.ID)
				assert.Equal(t, i, r.Row.Index)
				assert.Equal(t, tt.split, r.Row.Split)
				assert.Equal(t, tt.subset, r.Row.Subset)
				assert.Equal(t, tt.allowed, r.Row.TrainingAllowed)
				assert.Equal(t, tt.b.Licence, r.Row.Licence)
				assert.Equal(t, tt.b.DataSource, r.Row.DataSource)
				assert.Equal(t, tt.b.Name, r.Row.Benchmark)
				assert.True(t, strings.HasSuffix(strings.TrimSpace(r.Row.Prompt), ".") || strings.HasSuffix(r.Row.Prompt, "on its own."), r.Row.Prompt)
			}
			assert.Equal(t, tt.reports, reports)
			assert.Equal(t, tt.truths, truths)
			assert.Equal(t, tt.ids, strings.Join(ids, ","))
		})
	}
}
