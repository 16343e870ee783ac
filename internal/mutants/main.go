// Command mutants runs mutation testing (gremlins) over the packages whose
// tests guard what users train on — the rewards, the timers, the leakage
// gate, the preference pairs and the tokenizer the length rewards count
// with — and prints, for each, the efficacy
// (mutants the tests kill, of those they run) and the mutant coverage
// (mutants some test runs, of all). It fails when a package is below the
// threshold.
//
// A mutant the tests cannot kill because it does not change behaviour is
// listed, with a one-line reason, in equivalent/PKG*.txt:
//
//	timers/timers.go:341:17 CONDITIONALS_NEGATION # open is 0 once stopped is set
//
// Listed mutants that live count as equivalent, not as survivors; a listed
// mutant that no longer lives (the code moved, or a test now kills it) fails
// a full run, so the list stays true.
//
// Usage (make mutants runs it):
//
//	go run ./internal/mutants -gremlins .bin/gremlins-v0.6.0 [-diff REF] [-threshold 90] PKG...
//
// With -diff, only the packages with Go changes since REF are run, and only
// the mutants on changed lines (gremlins --diff). gremlins names a package's
// files relative to the package while git diff names them relative to the
// repository, so that no line would ever match and every mutant would be
// skipped: gremlins runs with a git on PATH whose diff is relative to the
// package (gitShim).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

// report is what gremlins writes with -o.
type report struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// tally counts one package's mutants.
type tally struct {
	pkg                                                  string
	killed, lived, equivalent, timedOut, notCovered, bad int
	survivors                                            []string
	// uncovered are the mutants on lines no test of the package runs.
	uncovered []string
	ran       bool
}

func (t *tally) efficacy() float64 {
	n := t.killed + t.timedOut + t.lived
	if n == 0 {
		return 100
	}
	return 100 * float64(t.killed+t.timedOut) / float64(n)
}

func (t *tally) coverage() float64 {
	covered := t.killed + t.timedOut + t.lived + t.equivalent
	n := covered + t.notCovered
	if n == 0 {
		return 100
	}
	return 100 * float64(covered) / float64(n)
}

// entryLine is one line of an equivalent-mutants list.
var entryLine = regexp.MustCompile(`^(\S+\.go):(\d+):(\d+) ([A-Z_]+)\s+#\s*(\S.*)$`)

// readEquivalent reads every *.txt of dir: key "pkg/file.go:line:col TYPE"
// to its reason.
func readEquivalent(dir string) (map[string]string, error) {
	out := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			m := entryLine.FindStringSubmatch(line)
			if m == nil {
				f.Close()
				return nil, fmt.Errorf("%s: line %d: want \"pkg/file.go:LINE:COL TYPE # reason\", have %q", p, n, line)
			}
			key := fmt.Sprintf("%s:%s:%s %s", m[1], m[2], m[3], m[4])
			if _, dup := out[key]; dup {
				f.Close()
				return nil, fmt.Errorf("%s: line %d: %s listed twice", p, n, key)
			}
			out[key] = m[5]
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

// count folds a gremlins report of package pkg into a tally, taking the
// listed equivalent mutants out of the survivors; seen collects the listed
// keys that lived.
func count(pkg string, r *report, equivalent map[string]string, seen map[string]bool) *tally {
	t := &tally{pkg: pkg, ran: true}
	for _, f := range r.Files {
		// gremlins names a file from the folder it ran in ("build.go",
		// "agreement/alpha.go" for a subpackage); the lists name it from
		// the module's root, as a run of the subpackage alone does.
		name := f.FileName
		if !strings.HasPrefix(name, pkg+"/") {
			name = pkg + "/" + name
		}
		for _, m := range f.Mutations {
			key := fmt.Sprintf("%s:%d:%d %s", name, m.Line, m.Column, m.Type)
			switch m.Status {
			case "KILLED":
				t.killed++
			case "LIVED":
				if _, ok := equivalent[key]; ok {
					t.equivalent++
					seen[key] = true
				} else {
					t.lived++
					t.survivors = append(t.survivors, key)
				}
			case "TIMED OUT":
				t.timedOut++
			case "NOT COVERED":
				t.notCovered++
				t.uncovered = append(t.uncovered, key)
			default: // NOT VIABLE, SKIPPED: no test can say anything
				t.bad++
			}
		}
	}
	slices.Sort(t.survivors)
	slices.Sort(t.uncovered)
	return t
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gremlins := fs.String("gremlins", "gremlins", "the gremlins binary")
	diff := fs.String("diff", "", "run only packages changed since this git ref, and only the mutants on changed lines")
	threshold := fs.Float64("threshold", 90, "least efficacy and mutant coverage, in percent")
	eqDir := fs.String("equivalent", "internal/mutants/equivalent", "directory of the equivalent-mutant lists")
	workers := fs.Int("workers", 2, "gremlins --workers")
	timeout := fs.Int("timeout-coefficient", 10, "gremlins --timeout-coefficient")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		return errors.New("no packages given")
	}
	equivalent, err := readEquivalent(*eqDir)
	if err != nil {
		return err
	}
	if *diff != "" {
		changed, err := exec.CommandContext(ctx, "git", "diff", "--name-only", *diff, "--").Output()
		if err != nil {
			return fmt.Errorf("-diff %s: git diff: %w", *diff, err)
		}
		var keep []string
		for _, p := range pkgs {
			for _, f := range strings.Fields(string(changed)) {
				if strings.HasPrefix(f, p+"/") && strings.HasSuffix(f, ".go") {
					keep = append(keep, p)
					break
				}
			}
		}
		if len(keep) == 0 {
			fmt.Fprintf(stdout, "mutants: no Go changes since %s in %s\n", *diff, strings.Join(pkgs, ", "))
			return nil
		}
		pkgs = keep
	}
	seen := map[string]bool{}
	var tallies []*tally
	for _, p := range pkgs {
		out, err := os.CreateTemp("", "mutants-*.json")
		if err != nil {
			return err
		}
		out.Close()
		defer os.Remove(out.Name())
		argv := []string{"unleash", "./" + p, "--workers", fmt.Sprint(*workers),
			"--timeout-coefficient", fmt.Sprint(*timeout), "-o", out.Name(), "--silent"}
		env := os.Environ()
		if *diff != "" {
			argv = append(argv, "--diff", *diff)
			shim, err := gitShim(p)
			if err != nil {
				return err
			}
			defer os.RemoveAll(shim)
			env = append(env, "PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		start := time.Now()
		cmd := exec.CommandContext(ctx, *gremlins, argv...)
		cmd.Stderr = stderr
		// A cached test result makes gremlins' coverage run look instant and
		// its timeouts far too short: measure the tests for real.
		cmd.Env = append(env, "GOFLAGS=-count=1")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: gremlins %s: %w", p, strings.Join(argv, " "), err)
		}
		b, err := os.ReadFile(out.Name())
		if err != nil {
			return err
		}
		var r report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: gremlins report: %w", p, err)
		}
		t := count(p, &r, equivalent, seen)
		tallies = append(tallies, t)
		fmt.Fprintf(stderr, "mutants: %s in %s\n", p, time.Since(start).Round(time.Second))
	}
	fmt.Fprintf(stdout, "%-10s %7s %6s %10s %9s %11s %9s %9s\n", "package", "killed", "lived", "equivalent", "timed out", "not covered", "efficacy", "coverage")
	var failed []string
	for _, t := range tallies {
		fmt.Fprintf(stdout, "%-10s %7d %6d %10d %9d %11d %8.1f%% %8.1f%%\n", t.pkg, t.killed, t.lived, t.equivalent, t.timedOut, t.notCovered, t.efficacy(), t.coverage())
		if t.efficacy() < *threshold || t.coverage() < *threshold {
			failed = append(failed, t.pkg)
		}
	}
	for _, t := range tallies {
		for _, s := range t.uncovered {
			fmt.Fprintf(stdout, "not covered: %s\n", s)
		}
		for _, s := range t.survivors {
			fmt.Fprintf(stdout, "lived: %s\n", s)
		}
	}
	// A listed mutant that no longer lives in a full run: the list is stale.
	if *diff == "" {
		var stale []string
		for key := range equivalent {
			if seen[key] {
				continue
			}
			for _, t := range tallies {
				if strings.HasPrefix(key, t.pkg+"/") {
					stale = append(stale, key)
				}
			}
		}
		slices.Sort(stale)
		for _, s := range stale {
			fmt.Fprintf(stdout, "stale equivalent entry (no such living mutant): %s\n", s)
		}
		if len(stale) > 0 {
			return fmt.Errorf("%d stale entries in %s", len(stale), *eqDir)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("below %.0f%% efficacy or mutant coverage: %s", *threshold, strings.Join(failed, ", "))
	}
	return nil
}

// gitShim writes, in a new directory it returns, a git that runs the real
// one, but for git diff, which it runs with --relative=pkg: paths relative
// to the package, as gremlins names the files it mutates, and only the
// package's files.
func gitShim(pkg string) (string, error) {
	real, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("-diff needs git: %w", err)
	}
	dir, err := os.MkdirTemp("", "mutants-git-")
	if err != nil {
		return "", err
	}
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = diff ]; then shift; exec " + shellQuote(real) + " diff --relative=" + shellQuote(pkg) + " \"$@\"; fi\n" +
		"exec " + shellQuote(real) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
