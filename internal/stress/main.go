// Command stress runs tests again and again beside busy loops, the way a
// shared CI machine runs them, and reports every test that failed in any
// run: how often, and what its first failure printed. A test that waits on
// time instead of on the event it means passes on a quiet machine and fails
// here.
//
// Usage (make test-stress runs it):
//
//	go run ./internal/stress [-count 20] [-load 2] [-run RE] [-race=true] PKG...
//	go run ./internal/stress -pytest PYTHON [-count 20] [-load 2] -- PYTEST_ARGS...
//
// Go packages run with `go test -count=1 -json` once per run, each run a
// fresh process as in CI; pytest runs with --junitxml once per run. Beside
// them, -load busy loops per CPU spin for the whole time: separate
// processes, so that the scheduler shares the cores between them and the
// tests as it would share them with other jobs. A busy loop ends when this
// command does, however it ends.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == spinArg {
		parent, _ := strconv.Atoi(os.Args[2])
		spin(parent)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "stress:", err)
		}
		os.Exit(1)
	}
}

// errFailed: some test failed in some run (the report says which).
var errFailed = errors.New("tests failed")

// options are the command's flags.
type options struct {
	count   int
	load    int
	run     string
	race    bool
	timeout time.Duration
	pytest  string
	args    []string
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.IntVar(&o.count, "count", 20, "runs of the tests")
	fs.IntVar(&o.load, "load", 2, "busy loops per CPU beside the tests")
	fs.StringVar(&o.run, "run", "", "go test -run: only the tests matching this expression")
	fs.BoolVar(&o.race, "race", true, "go test -race")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "go test -timeout, for each run")
	fs.StringVar(&o.pytest, "pytest", "", "the Python to run pytest with; the arguments after -- go to pytest")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.args = fs.Args()
	switch {
	case o.count < 1:
		return nil, fmt.Errorf("-count %d: want at least 1 run", o.count)
	case o.load < 0:
		return nil, fmt.Errorf("-load %d: want 0 or more busy loops per CPU", o.load)
	case len(o.args) == 0 && o.pytest == "":
		return nil, errors.New("no packages given (go run ./internal/stress ./verifier)")
	case len(o.args) == 0:
		return nil, errors.New("-pytest: no pytest arguments given (-pytest .venv/bin/python -- python/tests/interop/test_adapter.py)")
	case o.pytest != "" && o.run != "":
		return nil, errors.New("-run selects Go tests; with -pytest, select with pytest's own -k or node ids")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	loops := o.load * runtime.NumCPU()
	procs, err := startLoad(loops)
	if err != nil {
		return err
	}
	defer stopLoad(procs)

	tmp, err := os.MkdirTemp("", "stress-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	what := strings.Join(o.args, " ")
	if o.pytest == "" && o.race {
		what += " with -race"
	}
	fmt.Fprintf(stdout, "stress: %d runs of %s beside %d busy loops (%d per CPU, %d CPUs)\n",
		o.count, what, loops, o.load, runtime.NumCPU())
	t := newTally()
	for i := 1; i <= o.count; i++ {
		start := time.Now()
		var err error
		if o.pytest != "" {
			err = runPytest(ctx, o, filepath.Join(tmp, fmt.Sprintf("run%d.xml", i)), i, t)
		} else {
			err = runGo(ctx, o, i, t)
		}
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		fmt.Fprintf(stdout, "  run %d of %d: %s, %s\n", i, o.count, t.runSummary(i), time.Since(start).Round(time.Second))
	}
	t.report(stdout, o.count)
	if t.anyFailed() {
		return errFailed
	}
	return nil
}

// runGo runs the packages' tests once, folding go test's JSON events into t.
func runGo(ctx context.Context, o *options, i int, t *tally) error {
	args := []string{"test", "-count=1", "-json", "-timeout", o.timeout.String()}
	if o.race {
		args = append(args, "-race")
	}
	if o.run != "" {
		args = append(args, "-run", o.run)
	}
	args = append(args, o.args...)
	cmd := exec.CommandContext(ctx, "go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	perr := t.addGoEvents(out, i)
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if perr != nil {
		return perr
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return werr
	}
	if werr != nil && !t.failedIn(i) {
		// go test failed with no test or package failing: a build error,
		// or flags it refused.
		return fmt.Errorf("go test failed before any test ran: %s", strings.TrimSpace(stderr.String()))
	}
	return nil
}

// runPytest runs pytest once with a JUnit report, folding it into t.
func runPytest(ctx context.Context, o *options, report string, i int, t *tally) error {
	args := append([]string{"-m", "pytest", "-p", "no:cacheprovider", "-q", "--junitxml=" + report}, o.args...)
	cmd := exec.CommandContext(ctx, o.pytest, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	werr := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f, err := os.Open(report)
	if err != nil {
		return fmt.Errorf("pytest wrote no report (%v): %s", werr, lastLines(out.String(), 20))
	}
	defer f.Close()
	if err := t.addJUnit(f, i); err != nil {
		return fmt.Errorf("pytest's report: %w", err)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return werr
	}
	if werr != nil && !t.failedIn(i) {
		return fmt.Errorf("pytest failed with no test failing: %s", lastLines(out.String(), 20))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
