package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const benchmarksTestdata = "../../benchmarks/testdata"

func TestBenchmarksImport(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string // lines stderr holds
		rows   int      // rows written; -1: no file
	}{
		{name: "records not converted are named, the rest written",
			args: []string{"tram", benchmarksTestdata + "/causality_mcq.csv", benchmarksTestdata + "/arithmetic_saq.csv"}, code: exitOK, rows: 6,
			stderr: []string{
				"../../benchmarks/testdata/causality_mcq.csv: record 3 (id causality-mcq-2): line 4: want 6 fields as in the header, got 5",
				"benchmarks import: 6 records converted, 4 not converted (bad_answer 1, bad_row 2, empty 1); 4 bytes in 3 records were not UTF-8 and were read as Windows-1252",
			}},
		{name: "training on Test of Time is refused", args: []string{"test-of-time", benchmarksTestdata + "/tot_arithmetic/test.json", "--purpose", "train"},
			code: exitUsage, rows: -1, stderr: []string{"Using ToT as a training set is strictly prohibited."}},
		{name: "training on a test split is refused", args: []string{"timeqa", benchmarksTestdata + "/test.easy.json", "--purpose", "train"},
			code: exitUsage, rows: -1, stderr: []string{"refused for training: the test split is for evaluation"}},
		{name: "training on a train split", args: []string{"timeqa", benchmarksTestdata + "/train.hard.json.gzip", "--purpose", "train"},
			code: exitOK, rows: 2},
		{name: "a name the benchmark does not release", args: []string{"tempreason", benchmarksTestdata + "/test.easy.json"},
			code: exitUsage, rows: -1, stderr: []string{"give --split train|dev|test and --subset NAME"}},
		{name: "the flags name its split", args: []string{"tempreason", benchmarksTestdata + "/test.easy.json", "--split", "test", "--subset", "l2", "--context", "closed"},
			code: exitData, rows: -1, stderr: []string{"no record was converted"}},
		{name: "not the format", args: []string{"tram", "../../examples/benchmarks/tempreason/val_l2.json", "--split", "test", "--subset", "x"},
			code: exitData, rows: -1, stderr: []string{"val_l2.json: not CSV: the header"}},
		{name: "a file that is not there", args: []string{"tram", benchmarksTestdata + "/ordering_mcq.csv"}, code: exitIO, rows: -1},
		{name: "an unknown benchmark", args: []string{"gaia2", benchmarksTestdata + "/test.easy.json"}, code: exitUsage, rows: -1,
			stderr: []string{`no benchmark "gaia2": want one of timeqa, tempreason, tram, test-of-time`}},
		{name: "an unknown context", args: []string{"timeqa", benchmarksTestdata + "/test.easy.json", "--context", "open"}, code: exitUsage, rows: -1},
		{name: "an unknown purpose", args: []string{"timeqa", benchmarksTestdata + "/test.easy.json", "--purpose", "fun"}, code: exitUsage, rows: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			code, _, stderr := runCLI(t, append(append([]string{"benchmarks", "import"}, tt.args...), "--out", out)...)
			assert.Equal(t, tt.code, code, stderr)
			for _, line := range tt.stderr {
				assert.Contains(t, stderr, line)
			}
			b, err := os.ReadFile(out)
			if tt.rows < 0 {
				assert.True(t, os.IsNotExist(err), "nothing is written")
				return
			}
			require.NoError(t, err)
			assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), tt.rows)
		})
	}
}

// The prompt templates are config keys.
func TestBenchmarksPromptFromConfig(t *testing.T) {
	t.Setenv("TIMEAWARE_BENCHMARKS_PROMPTS_TRAM_SAQ", "Q: {question}\nAnswer: <answer>")
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, stderr := runCLI(t, "benchmarks", "import", "tram", benchmarksTestdata+"/arithmetic_saq.csv", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var row struct {
		Prompt []struct{ Role, Content string } `json:"prompt"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &row))
	assert.Equal(t, "Q: What is 23:48 - 01:31?\nAnswer: <answer>", row.Prompt[0].Content)

	code, stdout, _ := runCLI(t, "benchmarks", "list", "--prompts")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "prompt benchmarks.prompts.tram_saq:")
	assert.Contains(t, stdout, "test-of-time\tCC-BY-4.0\tno training")
}
