package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGremlins writes a script that stands in for gremlins: it writes
// report to the file after -o.
func fakeGremlins(t *testing.T, report string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "report.json"), []byte(report), 0o644))
	script := `#!/bin/sh
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then cp "` + filepath.Join(dir, "report.json") + `" "$2"; fi
  shift
done
`
	path := filepath.Join(dir, "gremlins")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

const sampleReport = `{"files": [{"file_name": "a.go", "mutations": [
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 1, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 2, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 3, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 4, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 5, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 6, "column": 2},
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 7, "column": 2},
 {"type": "CONDITIONALS_BOUNDARY", "status": "TIMED OUT", "line": 8, "column": 3},
 {"type": "CONDITIONALS_NEGATION", "status": "LIVED", "line": 9, "column": 4},
 {"type": "CONDITIONALS_NEGATION", "status": "LIVED", "line": 10, "column": 5},
 {"type": "INVERT_NEGATIVES", "status": "NOT COVERED", "line": 11, "column": 6},
 {"type": "INVERT_NEGATIVES", "status": "NOT VIABLE", "line": 12, "column": 6}
]}]}`

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name, equivalent string
		threshold        string
		err              string
		out              []string
	}{
		{
			// 8 killed or timed out of 10 run: 80 %; 10 of 11 covered.
			name: "survivors fail", threshold: "90", err: "below 90% efficacy or mutant coverage: pkg",
			out: []string{"pkg              7      2          0         1           1     80.0%     90.9%", "lived: pkg/a.go:9:4 CONDITIONALS_NEGATION", "lived: pkg/a.go:10:5 CONDITIONALS_NEGATION"},
		},
		{
			// One listed as equivalent: 8 of 9, 88.9 %.
			name: "one equivalent", threshold: "85", equivalent: "pkg/a.go:9:4 CONDITIONALS_NEGATION # both branches agree\n",
			out: []string{"pkg              7      1          1         1           1     88.9%     90.9%"},
		},
		{
			name: "stale entry", threshold: "50", equivalent: "pkg/a.go:1:2 ARITHMETIC_BASE # killed now\n",
			err: "1 stale entries", out: []string{"stale equivalent entry (no such living mutant): pkg/a.go:1:2 ARITHMETIC_BASE"},
		},
		{name: "no reason", threshold: "50", equivalent: "pkg/a.go:9:4 CONDITIONALS_NEGATION\n", err: `line 3: want "pkg/file.go:LINE:COL TYPE # reason"`},
		{name: "listed twice", threshold: "50", equivalent: "pkg/a.go:9:4 CONDITIONALS_NEGATION # x\npkg/a.go:9:4 CONDITIONALS_NEGATION # y\n", err: "line 4: pkg/a.go:9:4 CONDITIONALS_NEGATION listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eq := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(eq, "pkg.txt"), []byte("# comment\n\n"+tc.equivalent), 0o644))
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"-gremlins", fakeGremlins(t, sampleReport), "-equivalent", eq, "-threshold", tc.threshold, "pkg"}, &stdout, &stderr)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			} else {
				require.NoError(t, err, stdout.String())
			}
			for _, want := range tc.out {
				assert.Contains(t, stdout.String(), want)
			}
		})
	}
}

// A subpackage's file, which gremlins names from the package's folder
// (sub/b.go), is listed as from the module's root (pkg/sub/b.go), the name a
// run of the subpackage alone gives it.
func TestRunNamesSubpackageFilesFromTheRoot(t *testing.T) {
	report := `{"files": [{"file_name": "sub/b.go", "mutations": [
 {"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 1, "column": 2},
 {"type": "CONDITIONALS_NEGATION", "status": "LIVED", "line": 9, "column": 4}]}]}`
	eq := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(eq, "pkg.txt"), []byte("pkg/sub/b.go:9:4 CONDITIONALS_NEGATION # both branches agree\n"), 0o644))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-gremlins", fakeGremlins(t, report), "-equivalent", eq, "-threshold", "90", "pkg"}, &stdout, &stderr)
	require.NoError(t, err, stdout.String())
	assert.Contains(t, stdout.String(), "pkg              1      0          1")
}

func TestRunDiffSkipsUnchangedPackages(t *testing.T) {
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"-gremlins", "/nonexistent", "-equivalent", t.TempDir(), "-diff", "HEAD", "no-such-package"}, &stdout, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Contains(t, stdout.String(), "mutants: no Go changes since HEAD in no-such-package")
}

func TestRunErrors(t *testing.T) {
	err := run(context.Background(), []string{"-equivalent", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{})
	assert.EqualError(t, err, "no packages given")
	err = run(context.Background(), []string{"-gremlins", fakeGremlins(t, "{"), "-equivalent", t.TempDir(), "pkg"}, &bytes.Buffer{}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "pkg: gremlins report")
}

// TestRunDiffNamesFilesAsGremlinsDoes: with -diff, the git diff gremlins
// runs names the package's changed files relative to the package, as
// gremlins names the files it mutates, so that the changed lines match
// (with paths from the repository's root no mutant ever matched, and a
// diff run tested nothing).
func TestRunDiffNamesFilesAsGremlinsDoes(t *testing.T) {
	repo := t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644))
	}
	gitRun("init", "-q")
	write("pkg/a.go", "package pkg\n")
	write("pkg/b.go", "package pkg\n")
	write("top.go", "package top\n")
	gitRun("add", ".")
	gitRun("commit", "-q", "-m", "first")
	write("pkg/a.go", "package pkg\n\nvar x = 1 + 2\n")
	write("top.go", "package top\n\nvar y = 3\n")

	// A gremlins that records what git diff tells it, and reports nothing.
	dir := t.TempDir()
	names := filepath.Join(dir, "names")
	fake := filepath.Join(dir, "gremlins")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
git diff --name-only HEAD > `+names+`
git diff HEAD | grep '^+++' >> `+names+`
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then echo '{"files": []}' > "$2"; fi
  shift
done
`), 0o755))
	t.Chdir(repo)
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-gremlins", fake, "-equivalent", t.TempDir(), "-diff", "HEAD", "-threshold", "0", "pkg"}, &stdout, &bytes.Buffer{}))
	got, err := os.ReadFile(names)
	require.NoError(t, err)
	assert.Equal(t, "a.go\n+++ b/a.go\n", string(got), "the package's files, named from the package; not top.go")

	// Other git commands are the real git's.
	out, err := exec.Command(filepath.Join(mustShim(t, "pkg"), "git"), "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	assert.Equal(t, repo, strings.TrimSpace(string(out)))
}

func mustShim(t *testing.T, pkg string) string {
	t.Helper()
	dir, err := gitShim(pkg)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestShellQuote(t *testing.T) {
	assert.Equal(t, `'a b'`, shellQuote("a b"))
	assert.Equal(t, `'it'\''s'`, shellQuote("it's"))
}
