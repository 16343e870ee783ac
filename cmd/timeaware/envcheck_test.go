package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownVariablesAreNamedWithTheClosestKey(t *testing.T) {
	var w bytes.Buffer
	warnUnknownVariables(&w, []string{
		"TIMEAWARE_SERVE_MAX_BATCH_ITMES=10",  // misspelt
		"TIMEAWARE_SPLITS_SHINGLE_WORD=4",     // a letter short
		"TIMEAWARE_SERVE_MAX_BATCH_ITEMS=10",  // a config key
		"TIMEAWARE_URL=http://127.0.0.1:8080", // the Python adapter's
		"TIMEAWARE_BENCH_SECONDS=5",           // the benchmarks'
		"PATH=/usr/bin", "NOT_TIMEAWARE_X=1",
	})
	assert.Equal(t, "timeaware: warning: TIMEAWARE_SERVE_MAX_BATCH_ITMES is not a config variable and is ignored; did you mean TIMEAWARE_SERVE_MAX_BATCH_ITEMS (serve.max_batch_items)?\n"+
		"timeaware: warning: TIMEAWARE_SPLITS_SHINGLE_WORD is not a config variable and is ignored; did you mean TIMEAWARE_SPLITS_SHINGLE_WORDS (splits.shingle_words)?\n", w.String())

	// Through the command: a warning, and the run goes on.
	t.Setenv("TIMEAWARE_PAIRS_MIN_MARGN", "0.5")
	out := filepath.Join(t.TempDir(), "p.jsonl")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", demoTrajectories, "--direct-answers", demoDirect, "--annotations", demoVotes, "--out", out)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "TIMEAWARE_PAIRS_MIN_MARGN is not a config variable and is ignored; did you mean TIMEAWARE_PAIRS_MIN_MARGIN (pairs.min_margin)?")
}

// TestOtherVariablesAreThoseThePythonPackageReads keeps the list of
// variables read elsewhere in step with the Python adapter.
func TestOtherVariablesAreThoseThePythonPackageReads(t *testing.T) {
	files, err := filepath.Glob("../../python/timeaware/*.py")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	name := regexp.MustCompile(`TIMEAWARE_[A-Z_]+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, v := range name.FindAllString(string(b), -1) {
			v = strings.TrimRight(v, "_")
			var w bytes.Buffer
			warnUnknownVariables(&w, []string{v + "=x"})
			assert.Empty(t, w.String(), "%s reads %s: add it to otherVariables", f, v)
		}
	}
}

// TestVariablesTheDocsNameAreKnown: every TIMEAWARE_* variable the docs,
// the deployment files and the test suites tell a user to set is a config
// key's or one of otherVariables, so that setting it as documented draws
// no warning. The docs' deliberate misspelling is the one exception.
func TestVariablesTheDocsNameAreKnown(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../README.md", "../../docs/*.md", "../../python/README.md", "../../examples/*/README.md",
		"../../examples/*/*.sh", "../../deploy/*/*.yaml", "../../Dockerfile", "../../python/tests/*/*.py", "../../.ci/run", "../../Makefile"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 20)
	misspelt := map[string]bool{"TIMEAWARE_PAIRS_TIME_FROMAT": true} // docs/configuration.md shows its warning
	name := regexp.MustCompile(`TIMEAWARE_[A-Z0-9_]*[A-Z0-9]`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, v := range name.FindAllString(string(b), -1) {
			if misspelt[v] || strings.HasPrefix(v, "TIMEAWARE_VERIFIER") { // the Kubernetes service links deploy/ turns off
				continue
			}
			var w bytes.Buffer
			warnUnknownVariables(&w, []string{v + "=x"})
			assert.Empty(t, w.String(), "%s names %s, which timeaware would warn about", f, v)
		}
	}
}

// TestFarNamesGetNoSuggestion: a variable far from every key is named
// without a guess.
func TestFarNamesGetNoSuggestion(t *testing.T) {
	var w bytes.Buffer
	warnUnknownVariables(&w, []string{"TIMEAWARE_FOO=1", "TIMEAWARE_TOKEN=secret"})
	assert.Equal(t, "timeaware: warning: TIMEAWARE_FOO is not a config variable and is ignored\n"+
		"timeaware: warning: TIMEAWARE_TOKEN is not a config variable and is ignored\n", w.String())
}
