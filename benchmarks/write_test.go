package benchmarks

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.jsonl with what Write writes now")

// TestWriteGolden writes the rows of a small import of two TRAM files and
// compares them with testdata/golden.jsonl.
func TestWriteGolden(t *testing.T) {
	format, err := dataset.Lookup("jsonl")
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "tram.jsonl")
	var reports []string
	w, err := Write(context.Background(), &TRAM, []string{"testdata/causality_mcq.csv", "testdata/arithmetic_saq.csv"}, Options{},
		synth.Output{Path: out, Format: format, Manifest: output.Manifest{Tool: "test"}}, func(r *Record) error {
			if line := r.Report(); line != "" {
				reports = append(reports, line)
			}
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, "6 records converted, 4 not converted (bad_answer 1, bad_row 2, empty 1); 4 bytes in 3 records were not UTF-8 and were read as Windows-1252",
		w.Summary.String())
	assert.Equal(t, 2, w.Summary.Files)
	assert.Len(t, reports, 4)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	golden := filepath.Join("testdata", "golden.jsonl")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "go test ./benchmarks -run TestWriteGolden -update rewrites it")
	manifest, err := os.ReadFile(w.ManifestPath)
	require.NoError(t, err)
	assert.Contains(t, string(manifest), `"role": "benchmark_file"`)
}

// A refused import, or a file whose name says no split, writes nothing.
func TestWriteRefusesBeforeWriting(t *testing.T) {
	format, err := dataset.Lookup("jsonl")
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "tot.jsonl")
	o := synth.Output{Path: out, Format: format}
	_, err = Write(context.Background(), &TestOfTime, []string{"testdata/tot_arithmetic/test.json"}, Options{Purpose: PurposeTrain}, o,
		func(*Record) error { return nil })
	require.ErrorIs(t, err, ErrTrainingRefused)
	_, err = Write(context.Background(), &TRAM, []string{"testdata/arithmetic_saq.csv", "testdata/val_l2.json"}, Options{}, o,
		func(*Record) error { return nil })
	var ne *NameError
	require.ErrorAs(t, err, &ne)
	_, err = Write(context.Background(), &TimeQA, []string{"testdata/test.easy.json", "testdata/missing/dev.easy.json"}, Options{}, o,
		func(*Record) error { return nil })
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "testdata/missing/dev.easy.json", ie.Path)
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func ExampleBenchmark_Import() {
	csv := "Question,Answer,Category\r\nWhat is 23:48 - 01:31?,22:17,Hour Adjustment (24h)\r\nWhat is 1 + 1?,,Time Computation\r\n"
	sum, err := TRAM.Import(context.Background(), strings.NewReader(csv), "arithmetic_saq.csv", Options{}, func(r *Record) error {
		if r.Row == nil {
			fmt.Println(r.Report())
			return nil
		}
		fmt.Println(r.Row.ID, r.Row.Split, r.Row.GroundTruth)
		fmt.Printf("%q\n", r.Row.Prompt)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum)
	// Output:
	// arithmetic-saq-0 test {"answers":["22:17"]}
	// "Question: What is 23:48 - 01:31?\n\nPut your final answer on the last line as \"Answer: <answer>\"."
	// arithmetic_saq.csv: record 2 (id arithmetic-saq-1): Answer: empty (line 3)
	// 1 records converted, 1 not converted (empty 1)
}
