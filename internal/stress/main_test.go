package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary stand in for the command: as a busy loop
// (startLoad starts os.Executable), and as a stress run that dies without
// stopping its loops.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == spinArg {
		parent, _ := strconv.Atoi(os.Args[2])
		spin(parent)
		return
	}
	if os.Getenv("STRESS_TEST_ORPHAN_LOOP") == "1" {
		procs, err := startLoad(1)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(procs[0].Pid)
		os.Exit(0) // without stopping the loop
	}
	os.Exit(m.Run())
}

const goEvents = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestFlaky"}
{"Action":"output","Package":"ex/a","Test":"TestFlaky","Output":"    a_test.go:9: Condition never satisfied\n"}
{"Action":"fail","Package":"ex/a","Test":"TestFlaky","Elapsed":5}
{"Action":"skip","Package":"ex/a","Test":"TestSkipped","Elapsed":0}
{"Action":"fail","Package":"ex/a","Elapsed":5}
{"Action":"output","Package":"ex/b","Output":"panic: test timed out after 1s\n"}
{"Action":"fail","Package":"ex/b","Elapsed":1}
{"Action":"pass","Package":"ex/c","Test":"TestC","Elapsed":0}
{"Action":"pass","Package":"ex/c","Elapsed":0}
`

func TestGoEventsCountEachTestAndPackageFailure(t *testing.T) {
	tl := newTally()
	require.NoError(t, tl.addGoEvents(strings.NewReader(goEvents), 1))
	second := strings.ReplaceAll(goEvents, `"fail","Package":"ex/a","Test":"TestFlaky"`, `"pass","Package":"ex/a","Test":"TestFlaky"`)
	second = strings.ReplaceAll(second, `"fail","Package":"ex/a","Elapsed"`, `"pass","Package":"ex/a","Elapsed"`)
	require.NoError(t, tl.addGoEvents(strings.NewReader(second), 2))
	assert.Equal(t, &outcome{pass: 2}, tl.tests["ex/a TestOK"])
	flaky := tl.tests["ex/a TestFlaky"]
	assert.Equal(t, 1, flaky.pass)
	assert.Equal(t, 1, flaky.fail)
	assert.Equal(t, 1, flaky.firstFailRun)
	assert.Contains(t, flaky.firstFail, "Condition never satisfied")
	assert.Equal(t, 2, tl.tests["ex/a TestSkipped"].skip)
	assert.NotContains(t, tl.tests, "ex/a", "a package that failed through a test is not a failure of its own")
	assert.Equal(t, 2, tl.tests["ex/b"].fail, "a package failing outside any test is one")
	assert.Contains(t, tl.tests["ex/b"].firstFail, "timed out")
	assert.NotContains(t, tl.tests, "ex/c")
	assert.True(t, tl.failedIn(1))
	assert.True(t, tl.failedIn(2), "ex/b failed in run 2")
	assert.Equal(t, "2 passed, 2 failed", tl.runSummary(1))
	assert.Equal(t, "3 passed, 1 failed", tl.runSummary(2))
}

func TestGoEventsABuildFailureIsAnError(t *testing.T) {
	tl := newTally()
	err := tl.addGoEvents(strings.NewReader(`{"Action":"build-output","ImportPath":"ex/a [ex/a.test]","Output":"a.go:1: syntax error\n"}
{"Action":"fail","Package":"ex/a","FailedBuild":"ex/a [ex/a.test]"}
`), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ex/a [ex/a.test] does not build")
	assert.Error(t, tl.addGoEvents(strings.NewReader("{\"Action\":\n"), 1), "a broken event")
}

func TestJUnitCountsFailuresErrorsAndSkips(t *testing.T) {
	for _, root := range []string{"testsuites", ""} {
		doc := `<testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_429" time="2"><failure message="assert 503 == 200">tests/test_a.py:12: AssertionError</failure></testcase>
<testcase classname="tests.test_a" name="test_setup" time="0"><error message="fixture failed">boom</error></testcase>
<testcase classname="tests.test_a" name="test_gpu" time="0"><skipped message="no GPU"/></testcase>
</testsuite>`
		if root != "" {
			doc = "<" + root + ">" + doc + "</" + root + ">"
		}
		t.Run("root "+root, func(t *testing.T) {
			tl := newTally()
			require.NoError(t, tl.addJUnit(strings.NewReader(`<?xml version="1.0" encoding="utf-8"?>`+doc), 3))
			assert.Equal(t, 1, tl.tests["tests.test_a::test_ok"].pass)
			f := tl.tests["tests.test_a::test_429"]
			assert.Equal(t, 1, f.fail)
			assert.Equal(t, 3, f.firstFailRun)
			assert.Equal(t, "assert 503 == 200\ntests/test_a.py:12: AssertionError", f.firstFail)
			assert.Equal(t, 1, tl.tests["tests.test_a::test_setup"].fail, "an error is a failure")
			assert.Equal(t, 1, tl.tests["tests.test_a::test_gpu"].skip)
			assert.Equal(t, "1 passed, 2 failed", tl.runSummary(3))
		})
	}
	assert.Error(t, newTally().addJUnit(strings.NewReader("<testsuite><testcase"), 1))
}

func TestReportListsTheFailingMostOftenFirst(t *testing.T) {
	tl := newTally()
	for run := 1; run <= 4; run++ {
		tl.record("p TestA", "pass", run, "")
		tl.record("p TestRare", map[bool]string{true: "fail", false: "pass"}[run == 4], run, "rare failure\n")
		tl.record("p TestOften", map[bool]string{true: "fail", false: "pass"}[run%2 == 0], run, fmt.Sprintf("often, run %d\n", run))
		tl.record("p TestSkip", "skip", run, "")
	}
	var out bytes.Buffer
	tl.report(&out, 4)
	assert.Equal(t, `stress: 2 of 4 tests failed in some run
FAIL 2 of 4  p TestOften
    first in run 2:
      often, run 2
FAIL 1 of 4  p TestRare
    first in run 4:
      rare failure
stress: 1 tests passed in every run they ran, 1 skipped in every run
`, out.String())

	quiet := newTally()
	quiet.record("p TestA", "pass", 1, "")
	out.Reset()
	quiet.report(&out, 1)
	assert.Equal(t, "stress: every test passed in each of 1 runs (1 tests, 0 skipped in every run)\n", out.String())
}

func TestFlagsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no packages given"},
		{[]string{"-count", "0", "./x"}, "-count 0: want at least 1 run"},
		{[]string{"-load", "-1", "./x"}, "-load -1"},
		{[]string{"-pytest", "python3"}, "-pytest: no pytest arguments given"},
		{[]string{"-pytest", "python3", "-run", "X", "--", "t.py"}, "-run selects Go tests"},
		{[]string{"-nope"}, "flag provided but not defined"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
}

// TestRunsPytestAndReportsItsFailures: the command end to end on a fake
// pytest that fails one test in its second run only.
func TestRunsPytestAndReportsItsFailures(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "runs")
	fake := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
n=$(cat `+counter+` 2>/dev/null || echo 0); n=$((n+1)); echo $n > `+counter+`
for a in "$@"; do case $a in --junitxml=*) out=${a#--junitxml=};; esac; done
if [ $n = 2 ]; then case='<failure message="flaked">late</failure>'; else case=''; fi
echo "<testsuite><testcase classname=\"t\" name=\"test_one\">$case</testcase><testcase classname=\"t\" name=\"test_two\"/></testsuite>" > "$out"
[ $n != 2 ]
`), 0o755))
	var out bytes.Buffer
	err := run(context.Background(), []string{"-count", "3", "-load", "0", "-pytest", fake, "--", "t.py"}, &out, &bytes.Buffer{})
	require.ErrorIs(t, err, errFailed)
	assert.Contains(t, out.String(), "stress: 3 runs of t.py beside 0 busy loops")
	assert.Contains(t, out.String(), "run 2 of 3: 1 passed, 1 failed")
	assert.Contains(t, out.String(), "FAIL 1 of 3  t::test_one\n    first in run 2:\n      flaked\n      late\n")

	// pytest that writes no report: the run is an error, naming why.
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho no such option >&2\nexit 4\n"), 0o755))
	err = run(context.Background(), []string{"-count", "1", "-load", "0", "-pytest", fake, "--", "t.py"}, &out, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run 1: pytest wrote no report")
	assert.Contains(t, err.Error(), "no such option")
}

// TestBusyLoopsEndWithTheirRun: a run that dies without stopping its busy
// loops leaves none behind.
func TestBusyLoopsEndWithTheirRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "STRESS_TEST_ORPHAN_LOOP=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	loop, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err, "the run prints its loop's pid: %q", out)
	require.Eventually(t, func() bool {
		// Gone, or a zombie waiting for whoever adopted it.
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", loop))
		return err != nil || strings.Contains(string(stat), ") Z ")
	}, 30*time.Second, 10*time.Millisecond, "the busy loop ends once its run is gone")
}
