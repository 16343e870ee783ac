package main

// What every command that writes files promises about them: a missing
// output directory is created, as `mkdir -p` would; an output that cannot
// be created is an I/O error (exit 3) naming the flag and the path, not a
// usage error; and a run killed mid-write, even by SIGKILL, leaves the
// output directory exactly as it was.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writers is one valid invocation of every command that writes an output
// file, with the output flag last so a test can point it elsewhere.
func writers(t *testing.T) []struct {
	name string
	args []string // without the output path
} {
	t.Helper()
	scoreIn := filepath.Join(t.TempDir(), "items.jsonl")
	require.NoError(t, os.WriteFile(scoreIn, []byte(`{"solution_str":"<answer>4</answer>","ground_truth":"4","extra_info":{}}`+"\n"), 0o644))
	return []struct {
		name string
		args []string
	}{
		{"pairs build", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes, "--direct-answers", demoDirect, "--out"}},
		{"synth timestamps", []string{"synth", "timestamps", "--input", demoTrajectories, "--seed", "1", "--out"}},
		{"synth budget", []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "1", "--out"}},
		{"synth budget teacher requests", []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "1",
			"--out", filepath.Join(t.TempDir(), "rl.parquet"), "--teacher-model", "m", "--teacher-requests"}},
		{"synth puzzles", []string{"synth", "puzzles", "--count", "3", "--seed", "1", "--out"}},
		{"synth traveler", []string{"synth", "traveler", "--count", "3", "--seed", "1", "--out"}},
		{"synth negotiation", []string{"synth", "negotiation", "--count", "3", "--seed", "1", "--out"}},
		{"score", []string{"score", "--data-source", "timely/general", "--input", scoreIn, "--out"}},
		{"synth sft", []string{"synth", "sft", "--traces", "../../examples/budget/traces.jsonl", "--out"}},
		{"synth puzzles import-published", []string{"synth", "puzzles", "import-published", "../../examples/puzzles/published_sample.json", "--out"}},
	}
}

func TestOutputDirectoriesAreCreatedOrNamed(t *testing.T) {
	for _, w := range writers(t) {
		dir := t.TempDir()
		aFile := filepath.Join(dir, "file")
		require.NoError(t, os.WriteFile(aFile, nil, 0o644))
		ext := ".jsonl"
		if w.args[0] == "synth" && w.args[1] != "timestamps" && w.args[len(w.args)-1] == "--out" {
			ext = ".parquet"
		}
		flag := w.args[len(w.args)-1]
		t.Run(w.name+"/directories missing", func(t *testing.T) {
			out := filepath.Join(dir, "new", "deeper", "out"+ext)
			code, _, stderr := runCLI(t, append(w.args, out)...)
			require.Equal(t, exitOK, code, stderr)
			assert.FileExists(t, out)
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "new")))
		})
		t.Run(w.name+"/a file where a directory should be", func(t *testing.T) {
			out := filepath.Join(aFile, "sub", "out"+ext)
			code, _, stderr := runCLI(t, append(w.args, out)...)
			assert.Equal(t, exitIO, code, stderr)
			assert.Equal(t, "timeaware: "+flag+" "+out+": "+aFile+" is not a directory\n", stderr)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing is left behind")
		})
	}
}

// snapshot is every file of dir (hidden ones included) with its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	m := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		m[e.Name()] = string(b)
	}
	return m
}

// waitForPartialOutput waits until process pid holds an open file under dir
// with data in it, the output being written, and returns its size.
func waitForPartialOutput(t *testing.T, pid int, dir string) int64 {
	t.Helper()
	fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
	// A guard, not a bound: on a quiet machine the first bytes come within
	// a second.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(target, dir+"/") {
				continue
			}
			if st, err := os.Stat(filepath.Join(fdDir, fd.Name())); err == nil && st.Size() > 0 {
				return st.Size()
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d wrote nothing under %s", pid, dir)
	return 0
}

// TestSigkillMidWriteLeavesTheOutputDirectoryAsItWas: a good output and its
// manifest are in place; a second run on the same output is killed with
// SIGKILL while its data is half written. The directory holds exactly the
// previous output and manifest, byte for byte, and no temporary file; the
// next run then succeeds and leaves only its own output and manifest.
func TestSigkillMidWriteLeavesTheOutputDirectoryAsItWas(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the half-written file through /proc")
	}
	bin := serverBinary(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"synth puzzles", []string{"synth", "puzzles", "--seed", "1", "--format", "jsonl", "--out", filepath.Join(dir, "puzzles.jsonl"), "--count"}},
		{"synth negotiation", []string{"synth", "negotiation", "--seed", "1", "--format", "jsonl", "--out", filepath.Join(dir, "negotiation.jsonl"), "--count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bin, append(tc.args, "5")...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			before := snapshot(t, dir)

			cmd := exec.Command(bin, append(tc.args, "100000000")...)
			require.NoError(t, cmd.Start())
			// A run of 100,000,000 records lasts hours: however the test
			// ends, it must not outlive it.
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			waitForPartialOutput(t, cmd.Process.Pid, dir)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			assert.Equal(t, before, snapshot(t, dir), "the killed run left the directory as it was")

			out, err = exec.Command(bin, append(tc.args, "7")...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			after := snapshot(t, dir)
			assert.Equal(t, len(before), len(after), "no temporary file outlives the runs")
		})
	}
}

// TestUnknownOutputExtensionIsAUsageError: without --format, an --out whose
// extension names no format is refused, never written as Parquet.
func TestUnknownOutputExtensionIsAUsageError(t *testing.T) {
	for _, w := range writers(t) {
		if w.args[len(w.args)-1] != "--out" || w.args[0] == "score" {
			continue // score writes JSONL results whatever the name
		}
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "rows.dat")
			code, _, stderr := runCLI(t, append(w.args, out)...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, "--out "+out+": ")
			assert.Contains(t, stderr, `".dat"`)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries)
		})
	}
}
