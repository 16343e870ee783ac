package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSynthOpenRLHFLabel: with --openrlhf-label every synth RL output gets
// a label column whose JSON is the row's own data_source,
// reward_model.ground_truth and extra_info, as the JSONL writer wrote them;
// without the flag there is no such column.
func TestSynthOpenRLHFLabel(t *testing.T) {
	dir := t.TempDir()
	commands := map[string][]string{
		"budget":      {"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "3"},
		"puzzles":     {"synth", "puzzles", "--count", "4", "--seed", "3"},
		"traveler":    {"synth", "traveler", "--count", "4", "--seed", "3"},
		"negotiation": {"synth", "negotiation", "--count", "4", "--seed", "3"},
	}
	for name, args := range commands {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name+".jsonl")
			code, _, stderr := runCLI(t, append(args, "--out", out, "--openrlhf-label")...)
			require.Equal(t, 0, code, stderr)
			rows := readJSONLObjects(t, out)
			require.NotEmpty(t, rows)
			for i, row := range rows {
				var text string
				require.NoError(t, json.Unmarshal(row["label"], &text), "row %d", i)
				var label map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(text), &label), "row %d", i)
				assert.Len(t, label, 3)
				var rm map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(row["reward_model"], &rm))
				assert.JSONEq(t, string(row["data_source"]), string(label["data_source"]), "row %d", i)
				assert.JSONEq(t, string(rm["ground_truth"]), string(label["ground_truth"]), "row %d", i)
				assert.JSONEq(t, string(row["extra_info"]), string(label["extra_info"]), "row %d", i)
			}

			plain := filepath.Join(dir, name+"-plain.jsonl")
			code, _, stderr = runCLI(t, append(args, "--out", plain)...)
			require.Equal(t, 0, code, stderr)
			assert.NotContains(t, readJSONLObjects(t, plain)[0], "label")
		})
	}
}

func readJSONLObjects(t *testing.T, path string) []map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var row map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}
