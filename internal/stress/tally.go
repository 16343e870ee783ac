package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// outcome is one test over all runs.
type outcome struct {
	pass, fail, skip int
	firstFailRun     int
	firstFail        string // what the test printed when it first failed
}

// tally collects the outcomes of every test over the runs.
type tally struct {
	tests map[string]*outcome
	// per run: how many tests passed and failed
	passed, failed map[int]int
	output         map[string]*strings.Builder // a Go test's output in the current run
}

func newTally() *tally {
	return &tally{tests: map[string]*outcome{}, passed: map[int]int{}, failed: map[int]int{}, output: map[string]*strings.Builder{}}
}

func (t *tally) outcome(name string) *outcome {
	o := t.tests[name]
	if o == nil {
		o = &outcome{}
		t.tests[name] = o
	}
	return o
}

func (t *tally) record(name, action string, run int, printed string) {
	o := t.outcome(name)
	switch action {
	case "pass":
		o.pass++
		t.passed[run]++
	case "skip":
		o.skip++
	case "fail":
		o.fail++
		t.failed[run]++
		if o.firstFailRun == 0 {
			o.firstFailRun, o.firstFail = run, printed
		}
	}
}

func (t *tally) failedIn(run int) bool { return t.failed[run] > 0 }

func (t *tally) anyFailed() bool {
	for _, o := range t.tests {
		if o.fail > 0 {
			return true
		}
	}
	return false
}

func (t *tally) runSummary(run int) string {
	return fmt.Sprintf("%d passed, %d failed", t.passed[run], t.failed[run])
}

// goEvent is one line of go test -json (cmd/test2json).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
	// FailedBuild names the package that did not build (Go 1.24 on).
	FailedBuild string
}

// addGoEvents folds one run's go test -json stream into t. A package that
// fails outside any test (a panic in init, a timeout between tests) counts
// as a failure of the package; a package that does not build is an error.
func (t *tally) addGoEvents(r io.Reader, run int) error {
	testFailed := map[string]bool{} // packages with a failed test in this run
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test's own lines (a build failure's) are not events
		}
		var e goEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("go test -json: %w (line %q)", err, line)
		}
		name := e.Package
		if e.Test != "" {
			name += " " + e.Test
		}
		switch e.Action {
		case "output":
			b := t.output[name]
			if b == nil {
				b = &strings.Builder{}
				t.output[name] = b
			}
			if b.Len() < 64<<10 {
				b.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" && e.FailedBuild != "" {
				return fmt.Errorf("%s does not build", e.FailedBuild)
			}
			if e.Test == "" && (e.Action != "fail" || testFailed[e.Package]) {
				delete(t.output, name)
				break // a package's outcome is its tests'
			}
			if e.Action == "fail" {
				testFailed[e.Package] = true
			}
			printed := ""
			if b := t.output[name]; b != nil {
				printed = b.String()
			}
			delete(t.output, name)
			t.record(name, e.Action, run, printed)
		}
	}
	return sc.Err()
}

// junitSuites is what pytest --junitxml writes: testsuites, or one
// testsuite, of testcases.
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
	junitSuite
}

type junitSuite struct {
	Cases []struct {
		Class   string       `xml:"classname,attr"`
		Name    string       `xml:"name,attr"`
		Failure *junitResult `xml:"failure"`
		Error   *junitResult `xml:"error"`
		Skipped *junitResult `xml:"skipped"`
	} `xml:"testcase"`
}

type junitResult struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// addJUnit folds one run's JUnit report into t.
func (t *tally) addJUnit(r io.Reader, run int) error {
	var doc junitSuites
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return err
	}
	suites := append(doc.Suites, doc.junitSuite)
	for _, s := range suites {
		for _, c := range s.Cases {
			name := c.Name
			if c.Class != "" {
				name = c.Class + "::" + c.Name
			}
			switch {
			case c.Failure != nil || c.Error != nil:
				res := c.Failure
				if res == nil {
					res = c.Error
				}
				t.record(name, "fail", run, strings.TrimSpace(res.Message+"\n"+res.Text))
			case c.Skipped != nil:
				t.record(name, "skip", run, "")
			default:
				t.record(name, "pass", run, "")
			}
		}
	}
	return nil
}

// report writes every test that failed in some run, most often first, with
// the end of what it printed when it first failed.
func (t *tally) report(w io.Writer, runs int) {
	var failing []string
	passing, skipped := 0, 0
	for name, o := range t.tests {
		switch {
		case o.fail > 0:
			failing = append(failing, name)
		case o.pass > 0:
			passing++
		default:
			skipped++
		}
	}
	slices.SortFunc(failing, func(a, b string) int {
		if d := t.tests[b].fail - t.tests[a].fail; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if len(failing) == 0 {
		fmt.Fprintf(w, "stress: every test passed in each of %d runs (%d tests, %d skipped in every run)\n", runs, passing, skipped)
		return
	}
	fmt.Fprintf(w, "stress: %d of %d tests failed in some run\n", len(failing), len(t.tests))
	for _, name := range failing {
		o := t.tests[name]
		fmt.Fprintf(w, "FAIL %d of %d  %s\n", o.fail, o.fail+o.pass, name)
		fmt.Fprintf(w, "    first in run %d:\n", o.firstFailRun)
		for _, l := range strings.Split(lastLines(o.firstFail, 15), "\n") {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
	fmt.Fprintf(w, "stress: %d tests passed in every run they ran, %d skipped in every run\n", passing, skipped)
}
