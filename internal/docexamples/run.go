package docexamples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrMismatch is the error of an example that ran but printed something
// else than its doc shows.
var ErrMismatch = errors.New("output differs from the doc's")

// Runner runs the examples of doc files in scratch directories laid out like
// a checkout.
type Runner struct {
	// Root is the checkout; Inputs are the entries of it the examples may
	// read (examples, python, ...), linked into every scratch checkout.
	Root   string
	Inputs []string
	// Shared is the reference data directory, linked as ../shared.
	Shared string
	// BinDir holds the timeaware binary; it is put first on PATH.
	BinDir string
	// Python runs python examples.
	Python string
	// Timeout bounds one example (default 5 minutes).
	Timeout time.Duration
	// ServerWait bounds how long a server example may take to answer its
	// URL (default 30 s).
	ServerWait time.Duration
	// OutputDir, when set, is where the examples write (the docs' out/):
	// an example that leaves anything else in the checkout, which git
	// would show as untracked, fails. Ignored lists the patterns of the
	// checkout's .gitignore, whose matches do not count.
	OutputDir string
	Ignored   []string
}

// Result is what one example did.
type Result struct {
	Example
	Ran    bool   // false for skipped and trainers examples
	Output string // stdout and stderr, in the order written
	Err    error  // a failed run, a mismatch, a server that never got ready
}

// RunFile runs one file's examples in order in a fresh scratch checkout, and
// stops its servers afterwards. Every example gets a Result; Err is set on
// those that failed.
func (r *Runner) RunFile(ctx context.Context, examples []Example) ([]Result, error) {
	dir, err := r.scratch()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(filepath.Dir(dir))
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	results := make([]Result, 0, len(examples))
	seen := map[string]bool{}
	for _, ex := range examples {
		res := Result{Example: ex}
		switch ex.Mode {
		case Skip, Trainers:
		case Server:
			res.Ran = true
			s, err := r.startServer(ctx, dir, ex)
			if err != nil {
				res.Err = err
			} else {
				servers = append(servers, s)
			}
		default:
			res.Ran = true
			res.Output, res.Err = r.run(ctx, dir, ex)
			if res.Err == nil && ex.HasWant {
				if ok, diff := Match(ex.Want, res.Output); !ok {
					res.Err = fmt.Errorf("%w (text block at line %d): %s", ErrMismatch, ex.WantLine, diff)
				}
			}
		}
		if stray := r.strays(dir, seen); len(stray) > 0 && res.Ran && res.Err == nil {
			res.Err = fmt.Errorf("wrote %s outside %s/: run from a checkout, git would show them as untracked", strings.Join(stray, ", "), r.OutputDir)
		}
		if res.Err != nil {
			res.Err = fmt.Errorf("%s:%d: %w", ex.File, ex.Line, res.Err)
		}
		results = append(results, res)
	}
	return results, nil
}

// strays lists the entries of the scratch checkout that are not an input,
// the output directory or ignored by .gitignore, and were not listed
// before (seen records them). Nothing when OutputDir is unset.
func (r *Runner) strays(dir string, seen map[string]bool) []string {
	if r.OutputDir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if seen[name] || name == r.OutputDir || slices.Contains(r.Inputs, name) || ignored(r.Ignored, name) {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// ignored reports whether a .gitignore pattern matches name, an entry at
// the top of the checkout.
func ignored(patterns []string, name string) bool {
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "!") {
			continue
		}
		if ok, _ := filepath.Match(strings.Trim(p, "/"), name); ok {
			return true
		}
	}
	return false
}

// scratch makes T/checkout with the inputs linked in and T/shared, and
// returns T/checkout.
func (r *Runner) scratch() (string, error) {
	top, err := os.MkdirTemp("", "docexamples-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(top, "checkout")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	links := map[string]string{filepath.Join(top, "shared"): r.Shared}
	for _, in := range r.Inputs {
		links[filepath.Join(dir, in)] = filepath.Join(r.Root, in)
	}
	for link, target := range links {
		abs, err := filepath.Abs(target)
		if err != nil {
			return "", err
		}
		if err := os.Symlink(abs, link); err != nil {
			os.RemoveAll(top)
			return "", err
		}
	}
	return dir, nil
}

// command returns the process for an example, writing stdout and stderr to
// one pipe, as a terminal would show them.
func (r *Runner) command(ctx context.Context, dir string, ex Example) *exec.Cmd {
	var cmd *exec.Cmd
	if ex.Lang == "python" {
		cmd = exec.CommandContext(ctx, r.Python, "-")
		cmd.Stdin = strings.NewReader(ex.Code)
	} else {
		cmd = exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", ex.Code)
	}
	cmd.Dir = dir
	cmd.Env = r.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// env is the environment of every example: the caller's, with the binary
// first on PATH and no TIMEAWARE_* settings, so outputs depend on the doc
// only, and without the progress bars of Hugging Face datasets, which draw
// timings a terminal would overwrite.
func (r *Runner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TIMEAWARE_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	abs, _ := filepath.Abs(r.BinDir)
	return append(env, "PATH="+abs+string(os.PathListSeparator)+os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1", "HF_DATASETS_DISABLE_PROGRESS_BARS=1", "HF_HUB_OFFLINE=1")
}

func (r *Runner) run(ctx context.Context, dir string, ex Example) (string, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := r.command(ctx, dir, ex)
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return "", err
	}
	pw.Close()
	var out bytes.Buffer
	_, _ = io.Copy(&out, pr)
	pr.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("still running after %v:\n%s", timeout, indent(out.String()))
	}
	switch {
	case ex.Mode == Fails && err == nil:
		return out.String(), fmt.Errorf("exited 0, but the doc says it fails:\n%s", indent(out.String()))
	case ex.Mode == Fails:
		return out.String(), nil
	case err != nil:
		return out.String(), fmt.Errorf("%v:\n%s", err, indent(out.String()))
	}
	return out.String(), nil
}

type server struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// startServer starts a server example and waits until its URL answers 200.
// A URL that names address files waits for them first (see the package
// documentation): a server that binds a port the kernel picks cannot collide
// with another process, as one on a fixed port can.
func (r *Runner) startServer(ctx context.Context, dir string, ex Example) (*server, error) {
	files, err := addrFiles(ex.Reason)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		// A file left by an earlier block would name another process.
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("%s exists before the server starts: its address would be an earlier one", f)
		}
	}
	if len(files) == 0 {
		// Someone else answering the URL would make every later example
		// talk to the wrong process.
		if resp, err := http.Get(ex.Reason); err == nil {
			resp.Body.Close()
			return nil, fmt.Errorf("%s already answers before the example starts: free the port", ex.Reason)
		}
	}
	s := &server{out: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = r.command(context.WithoutCancel(ctx), dir, ex)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	wait := r.ServerWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	client := &http.Client{Timeout: time.Second}
	url, missing := ex.Reason, ""
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("exited before %s answered:\n%s", ex.Reason, indent(s.out.String()))
		case <-time.After(50 * time.Millisecond):
		}
		if url, missing = resolveURL(dir, ex.Reason, files); missing != "" {
			continue
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.stop()
	if missing != "" {
		return nil, fmt.Errorf("no address in %s within %v:\n%s", missing, wait, indent(s.out.String()))
	}
	return nil, fmt.Errorf("%s did not answer 200 within %v:\n%s", url, wait, indent(s.out.String()))
}

// resolveURL puts into url, for each {FILE}, the first line of FILE in dir.
// It returns the first file that does not exist yet or is empty, if any.
func resolveURL(dir, url string, files []string) (string, string) {
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		first, _, _ := strings.Cut(string(b), "\n")
		if first = strings.TrimSpace(first); err != nil || first == "" {
			return "", f
		}
		url = strings.Replace(url, "{"+f+"}", first, 1)
	}
	return url, ""
}

// stop ends the server's process group: SIGTERM, then SIGKILL.
func (s *server) stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

func indent(s string) string {
	if s == "" {
		return "  (no output)"
	}
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// Update returns src with the output block of every result that has one
// replaced by what the example printed. A block that uses "..." is left for
// a person to edit, and reported, since the runner cannot know what the
// elision should hide.
func Update(src []byte, results []Result) ([]byte, error) {
	ls := strings.SplitAfter(string(src), "\n")
	var errs []error
	// From the bottom, so earlier line numbers stay valid.
	for i := len(results) - 1; i >= 0; i-- {
		res := results[i]
		if !res.Ran || !res.HasWant || (res.Err != nil && !errors.Is(res.Err, ErrMismatch)) {
			continue
		}
		if ok, _ := Match(res.Want, res.Output); ok {
			continue
		}
		if strings.Contains("\n"+res.Want, "\n"+Ellipsis+"\n") {
			errs = append(errs, fmt.Errorf("%s:%d: the output block elides lines with %q; edit it by hand", res.File, res.WantLine, Ellipsis))
			continue
		}
		start := res.WantLine // index of the first body line (0-based)
		end := start
		for end < len(ls) && strings.TrimSpace(ls[end]) != "```" {
			end++
		}
		body := strings.Join(lines(res.Output), "\n")
		if body != "" {
			body += "\n"
		}
		ls = append(ls[:start], append([]string{body}, ls[end:]...)...)
	}
	return []byte(strings.Join(ls, "")), errors.Join(errs...)
}
