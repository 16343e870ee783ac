package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemo(t *testing.T) {
	tests := []struct {
		name   string
		format []string
		file   string
		kind   string
	}{
		{name: "default parquet", file: "pairs.parquet", kind: "parquet"},
		{name: "jsonl", format: []string{"--format", "jsonl"}, file: "pairs.jsonl", kind: "jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runCLI(t, append([]string{"demo", "--out", dir}, tt.format...)...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			out := filepath.Join(dir, tt.file)
			for _, want := range []string{
				"16 pairs",
				"dropped submission eli/s3",
				"ties 2",
				"Krippendorff's alpha",
				"One pair",
				"pairs build: 16 pairs written to " + out,
				"the verifier service (timeaware serve) on http://127.0.0.1:",
				"get_duration for rollout demo-rollout",
				"POST /v1/score/batch",
				"a time-budgeted prompt set for VeRL",
			} {
				assert.Contains(t, stdout, want)
			}
			assert.ElementsMatch(t, []string{"input", tt.file, tt.file + ".manifest.json", "budget.parquet"}, dirNames(t, dir))
			assert.ElementsMatch(t, []string{"trajectories.jsonl", "votes.jsonl", "direct.jsonl", "tasks.jsonl"},
				dirNames(t, filepath.Join(dir, "input")))
			if runtime.GOOS != "windows" {
				for _, p := range []string{out, out + ".manifest.json", filepath.Join(dir, "input", "votes.jsonl")} {
					st, err := os.Stat(p)
					require.NoError(t, err)
					assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "%s is readable by others, as os.Create would make it", p)
				}
			}
			m := requireManifestRows(t, out, tt.kind, 16)
			assert.Len(t, m.Inputs, 3, "trajectories, annotations and direct answers")
			if tt.kind == "jsonl" {
				assert.Len(t, readPairsJSONL(t, out), 16)
			}
		})
	}
}

// TestDemoRefusesAnUnknownFormatBeforeWriting: --format names itself in
// the error, not the config key the demo sets from it, and a usage error
// leaves nothing behind (the built-in sample was written first before).
func TestDemoRefusesAnUnknownFormatBeforeWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI(t, "demo", "--out", dir, "--format", "xml")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "timeaware: --format xml: want parquet, arrow or jsonl\n"), stderr)
	assert.NoDirExists(t, dir)
}

// TestDemoSaysWhatToRunNext: the demo ends with what to run next, and its
// commands run as printed on what the demo wrote (but serve, which runs
// until stopped: its help examples run it); the gate finds what the demo
// says it finds.
func TestDemoSaysWhatToRunNext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI(t, "demo", "--out", dir)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	_, next, ok := strings.Cut(stdout, "\nNext:\n")
	require.True(t, ok, "the demo says what to run next:\n%s", stdout)
	var commands [][]string
	cur := ""
	for _, line := range strings.Split(next, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "timeaware ") && cur == "" {
			continue
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur += more
			continue
		}
		commands = append(commands, strings.Fields(cur + line)[1:])
		cur = ""
	}
	require.Equal(t, [][]string{
		{"pairs", "build", "--input", filepath.Join(dir, "input", "trajectories.jsonl"), "--annotations", filepath.Join(dir, "input", "votes.jsonl"),
			"--direct-answers", filepath.Join(dir, "input", "direct.jsonl"), "--split", "group", "--seed", "3", "--out", filepath.Join(dir, "split", "pairs.parquet")},
		{"splits", "check", filepath.Join(dir, "split", "pairs.parquet.manifest.json")},
		{"serve"},
	}, commands)
	code, _, stderr = runCLI(t, commands[0]...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	code, report, _ := runCLI(t, commands[1]...)
	assert.Equal(t, exitData, code)
	assert.Contains(t, report, `split "test" has no rows with sensitivity "low"`)
	assert.Contains(t, report, "FAILED (1 of 10 checks)")
}
