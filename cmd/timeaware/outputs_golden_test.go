package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateOutputs = flag.Bool("update", false, "rewrite testdata/outputs.golden.json with the hashes of what the commands write now")

// goldenOutputs are commands whose data files must stay byte-identical for
// the same inputs and seeds, whatever the code behind them becomes: every
// synth output and pairs build, in each format. {out} is a scratch folder.
var goldenOutputs = []struct {
	name string
	args []string
}{
	{"synth puzzles parquet", []string{"synth", "puzzles", "--count", "30", "--seed", "7", "--out", "{out}/puzzles.parquet"}},
	{"synth puzzles jsonl openrlhf", []string{"synth", "puzzles", "--count", "12", "--seed", "8", "--openrlhf-label", "--out", "{out}/puzzles.jsonl"}},
	{"synth traveler parquet", []string{"synth", "traveler", "--count", "30", "--seed", "7", "--out", "{out}/traveler.parquet"}},
	{"synth traveler arrow", []string{"synth", "traveler", "--count", "12", "--seed", "9", "--out", "{out}/traveler.arrow"}},
	{"synth negotiation split", []string{"synth", "negotiation", "--count", "24", "--seed", "2", "--scenario", "../../examples/negotiation/scenarios.yaml",
		"--test-fraction", "0.25", "--out", "{out}/negotiation.parquet"}},
	{"synth negotiation jsonl", []string{"synth", "negotiation", "--count", "8", "--seed", "3", "--out", "{out}/negotiation.jsonl"}},
	{"synth budget general", []string{"synth", "budget", "--input", "../../examples/budget/tasks.jsonl", "--family", "general", "--seed", "19", "--out", "{out}/budget.parquet"}},
	{"synth budget jsonl openrlhf", []string{"synth", "budget", "--input", "../../examples/budget/tasks.jsonl", "--family", "general", "--seed", "5",
		"--openrlhf-label", "--out", "{out}/budget.jsonl"}},
	{"synth budget tokens", []string{"synth", "budget", "--input", "../../examples/budget/tasks.jsonl", "--family", "general", "--seed", "19",
		"--unit", "tokens", "--out", "{out}/tokens.parquet"}},
	{"synth budget tokens set jsonl", []string{"synth", "budget", "--input", "../../examples/budget/tasks.jsonl", "--family", "general", "--seed", "7",
		"--unit", "tokens", "--reward", "length/thinkprune", "--token-budgets", "1000,2000", "--every-token-budget", "--out", "{out}/tokens.jsonl"}},
	{"synth budget tokens elastic jsonl openrlhf", []string{"synth", "budget", "--input", "../../examples/budget/tasks.jsonl", "--family", "general",
		"--seed", "5", "--unit", "tokens", "--reward", "length/elastic", "--openrlhf-label", "--out", "{out}/tokens.jsonl"}},
	{"synth sft", []string{"synth", "sft", "--traces", "../../examples/budget/traces.jsonl", "--out", "{out}/sft.parquet"}},
	{"synth timestamps", []string{"synth", "timestamps", "--input", v1Dir, "--seed", "3", "--out", "{out}/timestamps.jsonl"}},
	{"pairs build demo", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes, "--direct-answers", demoDirect,
		"--out", "{out}/pairs.parquet"}},
	{"pairs build demo jsonl", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes, "--direct-answers", demoDirect,
		"--time-format", "iso_delta", "--out", "{out}/pairs.jsonl"}},
	{"pairs build v1 paper split", []string{"pairs", "build", "--input", v1Dir, "--direct-answers", "{direct}", "--split", "paper",
		"--out", "{out}/v1.parquet"}},
}

// TestOutputsStayByteIdentical runs every goldenOutputs command in process
// and compares the SHA-256 of each data file it wrote (manifests aside:
// they name the scratch paths) with testdata/outputs.golden.json. A change
// that alters an output for the same inputs and seeds fails here; when the
// change is meant, rerun with -update and say why in the commit.
func TestOutputsStayByteIdentical(t *testing.T) {
	if _, err := os.Stat(v1Dir); err != nil {
		t.Skip("the shared reference data is not beside the checkout")
	}
	d := v1(t)
	direct := writeDirectAnswers(t, filepath.Join(t.TempDir(), "direct.jsonl"), d.IDs, nil)
	got := map[string]map[string]string{}
	for _, c := range goldenOutputs {
		out := t.TempDir()
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = strings.NewReplacer("{out}", out, "{direct}", direct).Replace(a)
		}
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, "%s: %s", c.name, stderr)
		files := map[string]string{}
		for _, name := range dirNames(t, out) {
			if strings.HasSuffix(name, ".manifest.json") {
				continue
			}
			files[name] = sha256File(t, filepath.Join(out, name))
		}
		require.NotEmpty(t, files, c.name)
		got[c.name] = files
	}
	path := filepath.Join("testdata", "outputs.golden.json")
	if *updateOutputs {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/timeaware -run TestOutputsStayByteIdentical -update to write it")
	var want map[string]map[string]string
	require.NoError(t, json.Unmarshal(b, &want))
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		require.Equal(t, want[n], got[n], "%s: the output changed for the same inputs and seeds", n)
	}
	require.Len(t, got, len(want), "a command without a golden entry: run with -update")
}
