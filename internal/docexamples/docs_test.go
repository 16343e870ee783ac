package docexamples_test

import (
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/docexamples"
)

var (
	binDir = flag.String("bin", "", "directory holding the built timeaware binary: run the docs' examples with it (make examples)")
	python = flag.String("python", "", "Python interpreter for the python examples (default: the checkout's .venv)")
	shared = flag.String("shared", "", "reference data directory (default: ../shared beside the checkout)")
	only   = flag.String("doc", "", "run only the docs whose path contains this")
	update = flag.Bool("update", false, "rewrite the docs' output blocks with what the examples print")
)

// root is the checkout.
var root = filepath.Join("..", "..")

// inputs are the checkout entries the examples may read.
var inputs = []string{"examples", "python", "synth"}

// docs lists every Markdown file whose examples are run.
func docs(t *testing.T) []string {
	var out []string
	for _, pat := range []string{"README.md", "docs/*.md", "python/README.md", "examples/*/README.md", "bench/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		out = append(out, m...)
	}
	require.NotEmpty(t, out)
	return out
}

func rel(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}

func parseAll(t *testing.T) map[string][]docexamples.Example {
	all := map[string][]docexamples.Example{}
	for _, d := range docs(t) {
		src, err := os.ReadFile(d)
		require.NoError(t, err)
		exs, err := docexamples.Parse(rel(d), src)
		require.NoError(t, err)
		all[d] = exs
	}
	return all
}

// TestDocsParse holds every doc to the example conventions, so a marker
// that would silently stop an example from running fails here.
func TestDocsParse(t *testing.T) {
	n := 0
	for _, exs := range parseAll(t) {
		n += len(exs)
	}
	assert.Greater(t, n, 40, "the docs' runnable examples")
}

var examplePath = regexp.MustCompile(`(?:^|[\s="'])((?:examples|python)/[A-Za-z0-9_./-]+|\.\./shared/[A-Za-z0-9_./-]+)`)

// TestDocsNameFilesThatExist checks that every path an example names under
// examples/, python/ or ../shared exists, and that every input in
// examples/ is used by some doc, so the two cannot drift apart.
func TestDocsNameFilesThatExist(t *testing.T) {
	used := map[string]bool{}
	sharedDir := sharedPath()
	for d, exs := range parseAll(t) {
		for _, ex := range exs {
			for _, m := range examplePath.FindAllStringSubmatch(ex.Code, -1) {
				p := strings.TrimRight(m[1], ".")
				if rest, ok := strings.CutPrefix(p, "../shared/"); ok {
					if _, err := os.Stat(sharedDir); err != nil {
						continue
					}
					_, err := os.Stat(filepath.Join(sharedDir, rest))
					assert.NoError(t, err, "%s:%d names %s", rel(d), ex.Line, p)
					continue
				}
				_, err := os.Stat(filepath.Join(root, p))
				assert.NoError(t, err, "%s:%d names %s", rel(d), ex.Line, p)
				used[filepath.Clean(p)] = true
			}
		}
	}
	// Every data file under examples/ (not the recipes' own scripts and
	// READMEs) is an input some example reads.
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".jsonl", ".json", ".yaml", ".csv":
		default:
			return nil
		}
		p := rel(path)
		usedHere := used[p]
		for u := range used {
			if strings.HasPrefix(p, u+"/") {
				usedHere = true
			}
		}
		assert.True(t, usedHere, "%s is in examples/ but no doc example reads it", p)
		return nil
	})
	require.NoError(t, err)
}

func sharedPath() string {
	if *shared != "" {
		return *shared
	}
	if s := os.Getenv("TIMEAWARE_SHARED"); s != "" {
		return s
	}
	return filepath.Join(root, "..", "shared")
}

// TestDocExamples runs every example of the docs with the built binary and
// compares its output with the doc's. It needs -bin (make examples builds
// the binary and passes it); -update rewrites stale output blocks.
func TestDocExamples(t *testing.T) {
	if *binDir == "" {
		t.Skip("the docs' examples run with a built binary: make examples")
	}
	py := *python
	if py == "" {
		py = filepath.Join(root, ".venv", "bin", "python")
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		require.NoError(t, err)
		return a
	}
	gitignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	require.NoError(t, err)
	// The docs write under out/, which .gitignore names: run from a
	// checkout, they leave no untracked file.
	r := &docexamples.Runner{Root: abs(root), Inputs: inputs, Shared: abs(sharedPath()), BinDir: abs(*binDir), Python: abs(py),
		OutputDir: "out", Ignored: strings.Split(string(gitignore), "\n")}
	all := parseAll(t)
	names := make([]string, 0, len(all))
	for d := range all {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if *only != "" && !strings.Contains(rel(d), *only) {
			continue
		}
		exs := all[d]
		t.Run(rel(d), func(t *testing.T) {
			results, err := r.RunFile(context.Background(), exs)
			require.NoError(t, err)
			ran, skipped := 0, 0
			for _, res := range results {
				if !res.Ran {
					skipped++
					continue
				}
				ran++
				if res.Err != nil {
					t.Error(res.Err)
				}
			}
			t.Logf("%d examples ran, %d run elsewhere or need what CI lacks", ran, skipped)
			if *update {
				src, err := os.ReadFile(d)
				require.NoError(t, err)
				out, err := docexamples.Update(src, results)
				require.NoError(t, os.WriteFile(d, out, 0o644))
				require.NoError(t, err)
			}
		})
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)\s]*)?\)`)

// TestDocsLinksResolve checks that every relative link of the docs names a
// file or folder of the checkout, as GitHub resolves it: from the linking
// file's folder.
func TestDocsLinksResolve(t *testing.T) {
	n := 0
	for _, d := range docs(t) {
		src, err := os.ReadFile(d)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			_, err := os.Stat(filepath.Join(filepath.Dir(d), target))
			assert.NoError(t, err, "%s links to %s, which is not there", rel(d), target)
		}
	}
	assert.Greater(t, n, 50, "relative links checked")
}
