package main

// Nothing lost on a failed commit: every command that writes files is run
// over a previous good output while the file system fails at a step of
// the commit (internal/commitfs); the previous output and manifest must
// then be there byte for byte, with nothing beside them, and the same run
// without the fault must replace them all.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/commitfs"
	"github.com/timeaware/timeaware/internal/output"
)

// runCLIWith runs the command with its commits on fsys.
func runCLIWith(t *testing.T, fsys commitfs.FS, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runContext(commitfs.WithFS(context.Background(), fsys), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// tree is every file under dir, hidden ones included, by relative path,
// with its contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(b)
		return nil
	}))
	return files
}

// commitWriter is a command that writes files: its arguments for a first
// run (the previous output) and a second, different one, both writing
// under dir.
type commitWriter struct {
	name string
	args func(dir string, second bool) []string
	// data are the data files in the order they are committed; manifest
	// is the manifest's path, empty for a command that writes none.
	data     func(dir string) []string
	manifest func(dir string) string
	// same: the two runs write the same bytes (the demo has no knobs).
	same bool
}

// pick is a when second, else b.
func pick(second bool, a, b string) string {
	if second {
		return a
	}
	return b
}

func one(name string) func(string) []string {
	return func(dir string) []string { return []string{filepath.Join(dir, name)} }
}

func sides(name string) func(string) []string {
	return func(dir string) []string {
		return []string{output.SidePath(filepath.Join(dir, name), "train"), output.SidePath(filepath.Join(dir, name), "test")}
	}
}

func beside(name string) func(string) string {
	return func(dir string) string { return output.ManifestPath(filepath.Join(dir, name)) }
}

const (
	negotiationScenarios = "../../examples/negotiation/scenarios.yaml"
	publishedPuzzles     = "../../examples/puzzles/published_sample.json"
)

// commitWriters is every command that writes files, with the inputs it
// needs made under inputs.
func commitWriters(t *testing.T, inputs string) []commitWriter {
	t.Helper()
	items := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"solution_str":"<answer>%d</answer>","ground_truth":"4","extra_info":{}}`+"\n", i+3)
		}
		return writeFile(t, filepath.Join(inputs, fmt.Sprintf("items-%d.jsonl", n)), b.String())
	}
	scoreOne, scoreTwo := items(1), items(2)
	trace := func(id string, elapsed float64) string {
		return fmt.Sprintf(`{"custom_id":%q,"messages":[{"role":"system","content":"Work against the clock."},`+
			`{"role":"user","content":"What is 6 times 7?\n\nYour time budget for this task is 10.00 seconds."},`+
			`{"role":"assistant","content":"<answer>42</answer>"}],"ground_truth":"42","time_limit_s":10,"elapsed_s":%g}`, id, elapsed)
	}
	tracesOne := writeFile(t, filepath.Join(inputs, "traces-1.jsonl"), trace("a#0", 3)+"\n")
	tracesTwo := writeFile(t, filepath.Join(inputs, "traces-2.jsonl"), trace("a#0", 3)+"\n"+trace("b#0", 4)+"\n")
	rows, _ := puzzleRows(t, inputs, 2)
	budget, _ := budgetRows(t, inputs)
	model := newScriptedModel(t, func(scriptedRequest) string { return "Done.\n<answer>1</answer>" }, "")
	modelArgs := func(second bool) []string {
		return []string{"--endpoint", model.URL + "/v1", "--model", "m", "--no-cache", "--samples", pick(second, "2", "1")}
	}

	return []commitWriter{
		{name: "pairs build", data: one("p.jsonl"), manifest: beside("p.jsonl"), args: func(dir string, second bool) []string {
			return []string{"pairs", "build", "--input", demoTrajectories, "--direct-answers", demoDirect, "--annotations", demoVotes,
				"--min-margin", pick(second, "1", "0"), "--out", filepath.Join(dir, "p.jsonl")}
		}},
		{name: "pairs build --split", data: sides("p.jsonl"), manifest: beside("p.jsonl"), args: func(dir string, second bool) []string {
			return []string{"pairs", "build", "--input", demoTrajectories, "--direct-answers", demoDirect, "--annotations", demoVotes,
				"--split", "group", "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "p.jsonl")}
		}},
		{name: "synth timestamps", data: one("t.jsonl"), manifest: beside("t.jsonl"), args: func(dir string, second bool) []string {
			return []string{"synth", "timestamps", "--input", demoTrajectories, "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "t.jsonl")}
		}},
		{name: "synth budget", data: one("rl.parquet"), manifest: beside("rl.parquet"), args: func(dir string, second bool) []string {
			return []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "rl.parquet")}
		}},
		{name: "synth budget --teacher-requests",
			data: func(dir string) []string {
				return []string{filepath.Join(dir, "rl.parquet"), filepath.Join(dir, "teacher.jsonl")}
			},
			manifest: beside("rl.parquet"), args: func(dir string, second bool) []string {
				return []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", pick(second, "2", "1"),
					"--teacher-model", "m", "--teacher-requests", filepath.Join(dir, "teacher.jsonl"), "--out", filepath.Join(dir, "rl.parquet")}
			}},
		{name: "synth budget --test-fraction", data: sides("rl.parquet"), manifest: beside("rl.parquet"), args: func(dir string, second bool) []string {
			return []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", pick(second, "2", "1"),
				"--test-fraction", "0.5", "--out", filepath.Join(dir, "rl.parquet")}
		}},
		{name: "synth sft", data: one("sft.jsonl"), manifest: beside("sft.jsonl"), args: func(dir string, second bool) []string {
			return []string{"synth", "sft", "--traces", pick(second, tracesTwo, tracesOne), "--out", filepath.Join(dir, "sft.jsonl")}
		}},
		{name: "synth distill", data: one("traces.jsonl"), manifest: beside("traces.jsonl"), args: func(dir string, second bool) []string {
			return append([]string{"synth", "distill", "--input", budget, "--out", filepath.Join(dir, "traces.jsonl")}, modelArgs(second)...)
		}},
		{name: "synth puzzles", data: one("pz.parquet"), manifest: beside("pz.parquet"), args: func(dir string, second bool) []string {
			return []string{"synth", "puzzles", "--count", "3", "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "pz.parquet")}
		}},
		{name: "synth puzzles --test-fraction", data: sides("pz.jsonl"), manifest: beside("pz.jsonl"), args: func(dir string, second bool) []string {
			return []string{"synth", "puzzles", "--count", "20", "--seed", pick(second, "2", "1"), "--test-fraction", "0.3", "--out", filepath.Join(dir, "pz.jsonl")}
		}},
		{name: "synth puzzles import-published", data: one("pub.jsonl"), manifest: beside("pub.jsonl"), args: func(dir string, second bool) []string {
			args := []string{"synth", "puzzles", "import-published", publishedPuzzles, "--out", filepath.Join(dir, "pub.jsonl")}
			if second {
				args = append(args, "--explicit")
			}
			return args
		}},
		{name: "synth traveler", data: one("tr.parquet"), manifest: beside("tr.parquet"), args: func(dir string, second bool) []string {
			return []string{"synth", "traveler", "--count", "3", "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "tr.parquet")}
		}},
		{name: "synth negotiation", data: one("ng.parquet"), manifest: beside("ng.parquet"), args: func(dir string, second bool) []string {
			return []string{"synth", "negotiation", "--count", "3", "--seed", pick(second, "2", "1"), "--out", filepath.Join(dir, "ng.parquet")}
		}},
		{name: "synth negotiation --test-fraction", data: sides("ng.jsonl"), manifest: beside("ng.jsonl"), args: func(dir string, second bool) []string {
			return []string{"synth", "negotiation", "--count", "12", "--seed", pick(second, "2", "1"), "--scenario", negotiationScenarios,
				"--test-fraction", "0.25", "--out", filepath.Join(dir, "ng.jsonl")}
		}},
		{name: "score", data: one("scores.jsonl"), args: func(dir string, second bool) []string {
			return []string{"score", "--data-source", "timely/general", "--input", pick(second, scoreTwo, scoreOne), "--out", filepath.Join(dir, "scores.jsonl")}
		}},
		{name: "eval run", data: one("results.jsonl"), args: func(dir string, second bool) []string {
			return append([]string{"eval", "run", "--data", rows, "--out", filepath.Join(dir, "results.jsonl")}, modelArgs(second)...)
		}},
		{name: "demo", data: one("budget.parquet"), same: true, args: func(dir string, _ bool) []string {
			return []string{"demo", "--out", dir}
		}},
	}
}

// commitFault is a failure of the file system during a command's commit.
type commitFault struct {
	name string
	// needsManifest: the fault is of a commit with a manifest.
	needsManifest bool
	fsys          func(data []string, manifest string) commitfs.FS
	want          string // in the error
}

var commitFaults = []commitFault{
	{"the manifest cannot be written", true, func([]string, string) commitfs.FS {
		return commitfs.FailFirst(commitfs.OpWrite, func(p string) bool { return strings.Contains(filepath.Base(p), ".manifest.json.tmp-") }, commitfs.ErrInjected)
	}, "injected fault"},
	{"a data rename fails", false, func(data []string, _ string) commitfs.FS {
		last := data[len(data)-1] // the others are in place by then
		return commitfs.FailFirst(commitfs.OpRename, func(p string) bool { return p == last }, commitfs.ErrInjected)
	}, "injected fault"},
	{"the disk fills between the data and the manifest", true, func(data []string, manifest string) commitfs.FS {
		return commitfs.DiskFullAfter(data[len(data)-1], manifest)
	}, "no space left on device"},
}

// TestCommitFaultsKeepThePreviousOutput: for every command that writes
// files and every fault its commit can meet, a run over a previous good
// output fails and leaves that output and its
// manifest byte for byte, with no temporary file, backup or journal
// beside them (exit 3, an I/O error naming --out); the same run without the fault then replaces them, and
// its manifest checks out against its files.
func TestCommitFaultsKeepThePreviousOutput(t *testing.T) {
	for _, w := range commitWriters(t, t.TempDir()) {
		for _, fault := range commitFaults {
			if fault.needsManifest && w.manifest == nil {
				continue // one file and no manifest: its rename is the whole commit
			}
			t.Run(w.name+"/"+fault.name, func(t *testing.T) {
				dir := t.TempDir()
				code, _, stderr := runCLI(t, w.args(dir, false)...)
				require.Equal(t, 0, code, stderr)
				before := tree(t, dir)
				data := w.data(dir)
				var mp string
				if w.manifest != nil {
					mp = w.manifest(dir)
					require.FileExists(t, mp)
				}
				for _, p := range data {
					require.FileExists(t, p)
				}

				code, _, stderr = runCLIWith(t, fault.fsys(data, mp), w.args(dir, true)...)
				assert.Equal(t, exitIO, code, stderr)
				assert.Contains(t, stderr, fault.want)
				assert.True(t, strings.HasPrefix(stderr, "timeaware: --out "+filepath.Join(dir, "")), "the error names --out and its path: %s", stderr)
				assert.Equal(t, before, tree(t, dir), "the previous output and manifest, and nothing else")

				code, _, stderr = runCLI(t, w.args(dir, true)...)
				require.Equal(t, 0, code, stderr)
				after := tree(t, dir)
				assert.Equal(t, len(before), len(after), "no file is left beside the new output")
				if mp != "" {
					_, err := output.ReadManifest(mp, true)
					require.NoError(t, err, "the new manifest describes the new files")
				}
				if !w.same {
					for _, p := range append(data, mp) {
						if p != "" {
							rel, _ := filepath.Rel(dir, p)
							assert.NotEqual(t, before[rel], after[rel], "the second run writes another %s", rel)
						}
					}
				}
			})
		}
	}
}

// TestCommitWithoutHardLinksReplacesTheOutput: where the file system has
// no hard links, a command still replaces its output and manifest.
func TestCommitWithoutHardLinksReplacesTheOutput(t *testing.T) {
	noLinks := &commitfs.Faulty{Fail: func(c commitfs.Call) error {
		if c.Op == commitfs.OpLink {
			return syscall.EPERM
		}
		return nil
	}}
	dir := t.TempDir()
	out := filepath.Join(dir, "pz.jsonl")
	args := []string{"synth", "puzzles", "--count", "20", "--test-fraction", "0.3", "--out", out, "--seed"}
	code, _, stderr := runCLI(t, append(args, "1")...)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLIWith(t, noLinks, append(args, "2")...)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, tree(t, dir), 3)
	m, err := output.ReadManifest(output.ManifestPath(out), true)
	require.NoError(t, err)
	assert.Equal(t, 2.0, m.Config["seed"])
}
