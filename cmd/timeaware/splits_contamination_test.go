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

// contaminationBench is a fixture of imported benchmark rows: TimeQA,
// TempReason, TRAM and Test of Time test records in synth.RowSchema's
// shape (the help's examples use it too).
const contaminationBench = "../../examples/splits/benchmark.jsonl"

func writeContaminationBench(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(contaminationBench)
	require.NoError(t, err)
	return writeFile(t, filepath.Join(dir, "bench.jsonl"), string(b))
}

type contaminationReport struct {
	Passed       bool `json:"passed"`
	TrainingRows int  `json:"training_rows"`
	Records      int  `json:"records"`
	Contaminated int  `json:"contaminated"`
	Benchmarks   []struct {
		Name     string `json:"name"`
		Findings []struct {
			ID, Kind, File, Span string
			Row                  int
		} `json:"findings"`
	} `json:"benchmarks"`
}

// importVendoredBenchmarks imports every real or hand-made sample of
// examples/benchmarks with benchmarks import, one file per benchmark in
// the directory it returns.
func importVendoredBenchmarks(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "imported")
	require.NoError(t, os.MkdirAll(out, 0o755))
	for _, name := range []string{"tram", "timeqa", "tempreason", "test-of-time"} {
		var files []string
		require.NoError(t, filepath.WalkDir(filepath.Join("../../examples/benchmarks", name), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != "LICENSE" {
				files = append(files, path)
			}
			return err
		}))
		require.NotEmpty(t, files, name)
		args := append([]string{"benchmarks", "import", name}, files...)
		code, _, stderr := runCLI(t, append(args, "--out", filepath.Join(out, name+".jsonl"))...)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
	}
	return out
}

// TestOwnSynthOutputsHoldNoImportedBenchmark: every synth family's output
// holds none of the records of every benchmark imported from the samples
// in examples/benchmarks (all their splits), while a training file with
// two of those records planted in it, one re-cased and re-punctuated, is
// caught with both.
func TestOwnSynthOutputsHoldNoImportedBenchmark(t *testing.T) {
	dir := t.TempDir()
	bench := importVendoredBenchmarks(t, dir)
	outs := map[string][]string{
		"puzzles.parquet":   {"synth", "puzzles", "--count", "50", "--seed", "1"},
		"traveler.jsonl":    {"synth", "traveler", "--count", "50", "--seed", "1"},
		"negotiation.jsonl": {"synth", "negotiation", "--count", "12", "--seed", "5"},
		"budget.parquet":    {"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "4"},
		"timestamps.jsonl":  {"synth", "timestamps", "--input", demoTrajectories, "--seed", "5"},
	}
	check := func(train string, more ...string) contaminationReport {
		args := append([]string{"splits", "contamination", "--benchmark", bench, "--benchmark-splits", "all", train, "--json"}, more...)
		_, stdout, stderr := runCLI(t, args...)
		var rep contaminationReport
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "%s: %s", train, stderr)
		require.Len(t, rep.Benchmarks, 4, train)
		return rep
	}
	for name, args := range outs {
		out := filepath.Join(dir, name)
		code, _, stderr := runCLI(t, append(args, "--out", out)...)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		var more []string
		if name == "timestamps.jsonl" {
			more = []string{"--text", "history"} // not a preset's: its columns named
		}
		rep := check(out, more...)
		assert.True(t, rep.Passed, name)
		assert.Zero(t, rep.Contaminated, name)
		assert.Equal(t, 266, rep.Records, name)
		assert.Positive(t, rep.TrainingRows, name)
	}
	planted := writeFile(t, filepath.Join(dir, "planted.jsonl"), strings.Join([]string{
		`{"id": "a", "text": "A worked example. IF A FLIGHT TAKES OFF AT 2 PM, and the duration of the flight is 2 hours -- at what time will it land? It lands at 4 PM."}`,
		`{"id": "b", "text": "Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?"}`,
		`{"id": "c", "text": "A regional train leaves at 07:42 and reaches the harbour at 09:15."}`,
	}, "\n")+"\n")
	rep := check(planted)
	assert.False(t, rep.Passed)
	// The TRAM question is in its multiple-choice and short-answer files;
	// TimeQA asks the same question of another period, which shares most
	// of its n-grams.
	assert.Equal(t, 4, rep.Contaminated)
	found := map[string]string{}
	for _, b := range rep.Benchmarks {
		for _, f := range b.Findings {
			found[b.Name+" "+f.ID] = f.Kind
		}
	}
	assert.Equal(t, map[string]string{
		"tram arithmetic-mcq-1": "exact", "tram arithmetic-saq-1": "exact",
		"timeqa /wiki/Newton_D._Baker_House#P466#0": "exact", "timeqa /wiki/Newton_D._Baker_House#P466#1": "near",
	}, found)
}

// TestContaminationOfOwnSynthOutputs: the toolkit's own synth outputs
// hold none of the fixture benchmark records.
func TestContaminationOfOwnSynthOutputs(t *testing.T) {
	dir := t.TempDir()
	bench := writeContaminationBench(t, dir)
	outs := map[string][]string{
		"puzzles.parquet":   {"synth", "puzzles", "--count", "20", "--seed", "1"},
		"traveler.jsonl":    {"synth", "traveler", "--count", "20", "--seed", "1"},
		"negotiation.jsonl": {"synth", "negotiation", "--count", "12", "--seed", "5"},
		"budget.parquet":    {"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "4"},
		"timestamps.jsonl":  {"synth", "timestamps", "--input", demoTrajectories, "--seed", "5"},
	}
	for name, args := range outs {
		out := filepath.Join(dir, name)
		code, _, stderr := runCLI(t, append(args, "--out", out)...)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		check := []string{"splits", "contamination", "--benchmark", bench, out, "--json"}
		if name == "timestamps.jsonl" {
			check = append(check, "--text", "history") // not a preset's: its columns named
		}
		code, stdout, stderr := runCLI(t, check...)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		var rep contaminationReport
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), name)
		assert.True(t, rep.Passed, name)
		assert.Zero(t, rep.Contaminated, name)
		assert.Equal(t, 4, rep.Records, name)
		assert.Positive(t, rep.TrainingRows, name)
	}
}

func TestContaminationCommand(t *testing.T) {
	dir := t.TempDir()
	bench := writeContaminationBench(t, dir)
	train := writeFile(t, filepath.Join(dir, "corpus.jsonl"), strings.Join([]string{
		`{"id":"c1","text":"Sports quiz: WHICH team did Thierry Henry play for, from 1999 to 2007? (Arsenal)"}`,
		`{"id":"c2","text":"The weather in Paris was mild."}`,
		`{"id":"c3","text":"e1 happened 3 days before e2 and e2 happened on 2021 03 04 on which"}`,
	}, "\n")+"\n")
	code, stdout, stderr := runCLI(t, "splits", "contamination", "--benchmark", bench, train)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "timeaware: splits contamination failed: see the report")
	assert.Contains(t, stdout, "splits contamination: FAILED — 2 of 4 benchmark records found in 2 of 3 training rows")
	assert.Contains(t, stdout, `timeqa tq-1: exact duplicate in `+train+` row 1 (id c1), characters 13-69: "WHICH team did Thierry Henry play for, from 1999 to 2007"`)
	assert.Contains(t, stdout, "test_of_time tot-1: near duplicate (")

	// Tolerated: per benchmark one each, in total two.
	code, _, stderr = runCLI(t, "splits", "contamination", "--benchmark", bench, train, "--max-contaminated", "1")
	assert.Equal(t, 0, code, stderr)
	code, _, _ = runCLI(t, "splits", "contamination", "--benchmark", bench, train, "--max-contaminated", "1", "--max-contaminated-per", "total")
	assert.Equal(t, 1, code)

	// GitHub annotations go to stderr beside --json.
	t.Setenv("GITHUB_ACTIONS", "true")
	code, stdout, stderr = runCLI(t, "splits", "contamination", "--benchmark", bench, train, "--json")
	assert.Equal(t, 1, code)
	var rep contaminationReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, 2, rep.Contaminated)
	assert.Contains(t, stderr, "::error file="+train+",line=1,title=splits contamination%3A timeqa::timeqa tq-1: exact duplicate")
	// The same settings from a config file and a variable.
	t.Setenv("GITHUB_ACTIONS", "")
	cfg := writeFile(t, filepath.Join(dir, "c.yaml"), "splits:\n  contamination:\n    max_contaminated: 2\n    max_contaminated_per: total\n")
	code, _, stderr = runCLI(t, "--config", cfg, "splits", "contamination", "--benchmark", bench, train)
	assert.Equal(t, 0, code, stderr)
	t.Setenv("TIMEAWARE_SPLITS_CONTAMINATION_MAX_CONTAMINATED", "1")
	code, _, _ = runCLI(t, "--config", cfg, "splits", "contamination", "--benchmark", bench, train)
	assert.Equal(t, 1, code, "the variable wins over the file")
	// --max-findings 0 lists no record; the counts stay whole.
	code, stdout, _ = runCLI(t, "splits", "contamination", "--benchmark", bench, train, "--max-findings", "0", "--max-contaminated", "9")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "2 of 4 benchmark records found")
	assert.NotContains(t, stdout, "tq-1")
}

func TestContaminationCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bench := writeContaminationBench(t, dir)
	train := writeFile(t, filepath.Join(dir, "corpus.jsonl"), `{"id":"c1","text":"hello"}`+"\n")
	empty := writeFile(t, filepath.Join(dir, "empty.jsonl"), "")
	other := writeFile(t, filepath.Join(dir, "rows.jsonl"), `{"id":"c1","body":"hello"}`+"\n")
	missing := filepath.Join(dir, "missing.jsonl")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no benchmark", []string{train}, 2, "splits contamination needs --benchmark FILE"},
		{"no training files", []string{"--benchmark", bench}, 2, "splits contamination needs training files"},
		{"missing benchmark", []string{"--benchmark", missing, train}, 3, "--benchmark " + missing + ":"},
		{"missing training file", []string{"--benchmark", bench, missing}, 3, missing + ":"},
		{"benchmark without rows", []string{"--benchmark", empty, train}, 1, "--benchmark " + empty + ": no records: the benchmark file has no rows"},
		{"benchmark without the text column", []string{"--benchmark", train, train}, 1, "--benchmark " + train + ": no text column prompt:user (its columns are id, text); name it with --benchmark-text"},
		{"training file without a text column", []string{"--benchmark", bench, other}, 2, "--text"},
		{"bad ngram", []string{"--benchmark", bench, train, "--ngram", "0"}, 2, "--ngram 0: want 1 to 32 words"},
		{"bad overlap", []string{"--benchmark", bench, train, "--min-overlap", "1.5"}, 2, "--min-overlap 1.5: want a share in (0, 1]"},
		{"bad scope", []string{"--benchmark", bench, train, "--max-contaminated-per", "file"}, 2, "--max-contaminated-per file: want benchmark or total"},
		{"bad normalisation", []string{"--benchmark", bench, train, "--normalize", "lowercase,stem"}, 2, `--normalize lowercase,stem: unknown step "stem"`},
		{"bad max findings", []string{"--benchmark", bench, train, "--max-findings", "-2"}, 2, "--max-findings -2: want -1 (all) or more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"splits", "contamination"}, tt.args...)...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.want)
			assert.NotContains(t, stderr, "splits: ")
		})
	}
}
