package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

// TestEmptyInputIsRefused holds every command that reads records to one
// answer for an input without any: it exits 1 with "FLAG PATH: no
// records", naming the file, and writes nothing, whatever the format (an
// empty file, blank lines, an empty JSON array, a Parquet file of zero rows,
// an empty directory part, empty standard input).
func TestEmptyInputIsRefused(t *testing.T) {
	tmp := t.TempDir()
	empty := writeFile(t, filepath.Join(tmp, "empty.jsonl"), "")
	blank := writeFile(t, filepath.Join(tmp, "blank.jsonl"), "\n  \n")
	array := writeFile(t, filepath.Join(tmp, "array.json"), "[ ]\n")
	parts := filepath.Join(tmp, "parts")
	require.NoError(t, os.Mkdir(parts, 0o755))
	writeFile(t, filepath.Join(parts, "part-0.jsonl"), "")
	emptyParquet := emptyQuestions(t, tmp)
	gate := []string{"splits", "check", "--text", "question", "--group", "topic", "--id", "id"}
	endpoint := []string{"--endpoint", "http://127.0.0.1:9/v1", "--model", "m"}
	tests := []struct {
		name string
		args []string
		want string // the first line after "timeaware: "
	}{
		{"pairs build", []string{"pairs", "build", "--input", empty}, "--input " + empty},
		{"pairs build, an empty array", []string{"pairs", "build", "--input", array}, "--input " + array},
		{"pairs build, two empty inputs", []string{"pairs", "build", "--input", array, "--input", empty}, "--input " + array + ", " + empty},
		{"synth timestamps", []string{"synth", "timestamps", "--input", blank, "--seed", "1"}, "--input " + blank},
		{"synth budget", []string{"synth", "budget", "--input", empty, "--family", "general", "--seed", "1"}, "--input " + empty},
		{"synth budget, blank lines", []string{"synth", "budget", "--input", blank, "--family", "game", "--seed", "1"}, "--input " + blank},
		{"synth budget with a split", []string{"synth", "budget", "--input", empty, "--family", "general", "--seed", "1", "--test-fraction", "0.3"}, "--input " + empty},
		{"synth budget in tokens", []string{"synth", "budget", "--unit", "tokens", "--input", empty, "--family", "general", "--seed", "1"}, "--input " + empty},
		{"synth sft", []string{"synth", "sft", "--traces", empty}, "--traces " + empty},
		{"synth distill", append([]string{"synth", "distill", "--input", empty}, endpoint...), "--input " + empty},
		{"score", []string{"score", "--data-source", "timepuzzles", "--input", empty}, "--input " + empty},
		{"score, a directory of empty parts", []string{"score", "--input", parts}, "--input " + parts},
		{"score, empty standard input", []string{"score", "--input", "-"}, "--input -"},
		{"eval run", append([]string{"eval", "run", "--data", empty}, endpoint...), "--data " + empty},
		{"eval nar", []string{"eval", "nar", "--input", empty}, "--input " + empty},
		{"eval compare", []string{"eval", "compare", empty, empty}, empty},
		{"synth puzzles solve", []string{"synth", "puzzles", "solve", empty}, empty},
		{"synth puzzles import-published", []string{"synth", "puzzles", "import-published", array}, array},
		{"splits check, empty train", append(gate, "--train", empty, "--test", splitsTest), "--train " + empty},
		{"splits check, empty test", append(gate, "--train", splitsTrain, "--test", blank), "--test " + blank},
		{"splits check, both empty", append(gate, "--train", empty, "--test", blank), "--train " + empty},
		{"splits check, zero-row Parquet", append(gate, "--train", splitsTrain, "--test", emptyParquet), "--test " + emptyParquet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := tt.args
			if tt.args[0] != "splits" && tt.args[0] != "eval" && tt.args[2] != "solve" || tt.args[1] == "run" {
				out := filepath.Join(dir, "out.jsonl")
				if tt.args[1] == "sft" {
					out = filepath.Join(dir, "out.parquet")
				}
				args = append(append([]string(nil), args...), "--out", out)
			}
			code, stdout, stderr := runCLI(t, args...)
			assert.Equal(t, exitData, code, "stderr: %s", stderr)
			assert.Regexp(t, `^timeaware: `+regexp.QuoteMeta(tt.want)+`: no records( on the (train|test) side|: want a JSON array of published Time Puzzles records)?$`, firstLine(stderr))
			assert.Empty(t, stdout)
			assert.Empty(t, dirNames(t, dir), "a refused input writes nothing")
		})
	}
}

// emptyQuestions writes a Parquet file with the columns of the splits
// example's questions (id, topic, question, answer) and no row.
func emptyQuestions(t *testing.T, dir string) string {
	t.Helper()
	var fields []arrow.Field
	for _, name := range []string{"id", "topic", "question", "answer"} {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String})
	}
	path := filepath.Join(dir, "empty.parquet")
	out, err := os.Create(path)
	require.NoError(t, err)
	w, err := dataset.Parquet.NewWriter(out, arrow.NewSchema(fields, nil), dataset.Options{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, out.Close())
	return path
}
