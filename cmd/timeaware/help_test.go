package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleOrder is the order the help examples run in: those that write
// what others read come first (the pairs that eval run evaluates, the
// prompts that synth distill answers). Every command with examples is here.
var exampleOrder = []string{
	"timeaware pairs build", "timeaware synth budget", "timeaware synth timestamps", "timeaware synth puzzles",
	"timeaware synth puzzles solve", "timeaware synth puzzles import-published", "timeaware synth traveler", "timeaware synth negotiation", "timeaware synth distill", "timeaware synth sft",
	"timeaware benchmarks list", "timeaware benchmarks import",
	"timeaware eval run", "timeaware eval compare", "timeaware eval nar", "timeaware score", "timeaware splits check",
	"timeaware splits contamination",
	"timeaware serve", "timeaware demo", "timeaware config defaults", "timeaware config show",
}

// modelURLInExamples is the endpoint the examples name; the test points it
// at a scripted stand-in for a model server.
const modelURLInExamples = "http://127.0.0.1:8000/v1"

// leafCommands is every command that runs something, by its path, but
// cobra's own (help, completion).
func leafCommands(root *cobra.Command) map[string]*cobra.Command {
	out := map[string]*cobra.Command{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			// A command with subcommands of its own is also a leaf when it
			// runs something itself (synth puzzles generates).
			if !sub.HasSubCommands() || sub.Example != "" {
				out[sub.CommandPath()] = sub
			}
			if sub.HasSubCommands() {
				walk(sub)
			}
		}
	}
	walk(root)
	return out
}

// helpExample is one command line of a help text's Examples section.
type helpExample struct {
	line string
	code int // the exit code it must give: 0, or 1 where a comment before it says "(exit 1)"
	// comment is the comment lines since the previous command line.
	comment string
}

// exampleLines are the command lines of a help text's Examples section,
// with continuation lines joined; a "#" line is a comment on the next.
func exampleLines(example string) []helpExample {
	var out []helpExample
	cur, code, comment := "", exitOK, ""
	for _, line := range strings.Split(example, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			if strings.Contains(line, "(exit 1)") {
				code = exitData
			}
			comment += line + "\n"
			continue
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur += more
			continue
		}
		out = append(out, helpExample{cur + line, code, comment})
		cur, code, comment = "", exitOK, ""
	}
	return out
}

// TestHelpExamplesRun: every command's help shows examples, and each one
// runs, as written, in a checkout (from the repository's root, with the
// files it ships), exits 0, and writes only under out/, the directory the
// docs name for outputs (ignored by git). A model server is a scripted
// stand-in; serve runs until it is ready, on a port the kernel picks.
func TestHelpExamplesRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	work := t.TempDir()
	for _, dir := range []string{"examples"} {
		require.NoError(t, os.Symlink(filepath.Join(repo, dir), filepath.Join(work, dir)))
	}
	t.Chdir(work)
	model := newScriptedModel(t, func(req scriptedRequest) string { return "<answer>42</answer>" }, "")

	leaves := leafCommands((&app{v: newViper()}).rootCmd())
	var withExamples []string
	for path, c := range leaves {
		assert.NotEmpty(t, c.Example, "%s has no examples in its help", path)
		if c.Example != "" {
			withExamples = append(withExamples, path)
		}
	}
	assert.ElementsMatch(t, exampleOrder, withExamples, "exampleOrder lists every command with examples")

	for _, path := range exampleOrder {
		c, ok := leaves[path]
		if !ok {
			continue
		}
		for _, ex := range exampleLines(c.Example) {
			t.Run(ex.line, func(t *testing.T) {
				runExample(t, strings.ReplaceAll(ex.line, modelURLInExamples, model.URL+"/v1"), ex.code)
			})
		}
	}

	// Nothing but out/ was written beside the checkout's files.
	var stray []string
	require.NoError(t, filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(work, p)
		switch {
		case rel == ".":
			return nil
		case rel == "out" || rel == "examples":
			return filepath.SkipDir
		}
		stray = append(stray, rel)
		return nil
	}))
	assert.Empty(t, stray, "the examples wrote outside out/")
}

var exampleEnv = regexp.MustCompile(`^([A-Z_]+)=(\S+)$`)

// runExample runs one example line in process: leading VAR=value words set
// variables, a final "> FILE" takes standard output.
func runExample(t *testing.T, line string, want int) {
	t.Helper()
	words := strings.Fields(line)
	for len(words) > 0 {
		m := exampleEnv.FindStringSubmatch(words[0])
		if m == nil {
			break
		}
		t.Setenv(m[1], m[2])
		words = words[1:]
	}
	require.NotEmpty(t, words)
	require.Equal(t, "timeaware", words[0], "an example runs the binary")
	args := words[1:]
	var stdout bytes.Buffer
	redirect := ""
	if n := len(args); n >= 2 && args[n-2] == ">" {
		redirect, args = args[n-1], args[:n-2]
	}
	for _, w := range args {
		require.NotContains(t, []string{"|", "<", "&&", ";", "..."}, w, "an example is one plain command line")
	}
	var stderr lockedBuffer
	if slices.Contains(args, "serve") {
		runServeExample(t, args, &stderr)
		return
	}
	code := runContext(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, want, code, "stderr: %s", stderr.String())
	if redirect != "" {
		require.NoError(t, os.WriteFile(redirect, stdout.Bytes(), 0o644))
	}
}

// runServeExample starts the service as the example says, on a port the
// kernel picks (TIMEAWARE_SERVE_ADDR, which a flag given overrides), waits
// until it serves, and stops it.
func runServeExample(t *testing.T, args []string, stderr *lockedBuffer) {
	t.Helper()
	t.Setenv("TIMEAWARE_SERVE_ADDR", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, args, strings.NewReader(""), &bytes.Buffer{}, stderr) }()
	defer func() {
		cancel()
		assert.Equal(t, exitOK, <-done, "stderr: %s", stderr.String())
	}()
	addrFile := ""
	if i := slices.Index(args, "--addr-file"); i >= 0 {
		addrFile = args[i+1]
	}
	require.Eventually(t, func() bool {
		if addrFile != "" {
			_, err := os.Stat(addrFile)
			return err == nil
		}
		return strings.Contains(stderr.String(), "msg=serving")
	}, 20*time.Second, 20*time.Millisecond, "the service never served: %s", stderr.String())
}

// TestHelpShowsOneDefault: no flag's help shows two defaults (its own
// words and pflag's), which could disagree.
func TestHelpShowsOneDefault(t *testing.T) {
	for path, c := range leafCommands((&app{v: newViper()}).rootCmd()) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			line := c.Flags().FlagUsages()
			for _, l := range strings.Split(line, "\n") {
				if strings.Contains(l, "--"+f.Name+" ") || strings.HasSuffix(l, "--"+f.Name) {
					assert.LessOrEqual(t, strings.Count(l, "(default"), 1, "%s --%s: %s", path, f.Name, l)
				}
			}
		})
	}
}

// TestHelpExamplesStandAlone: the help examples of one command never
// break another's. No two examples write the same file; an example that
// reads a file that no earlier line of its own help writes names the file
// and the command whose example writes it in a comment above; and the
// examples that need a model say how to start the scripted stand-in the
// repository ships.
func TestHelpExamplesStandAlone(t *testing.T) {
	leaves := leafCommands((&app{v: newViper()}).rootCmd())
	type writer struct{ command, line string }
	writers := map[string]writer{}
	for _, path := range exampleOrder {
		if c, ok := leaves[path]; ok {
			for _, ex := range exampleLines(c.Example) {
				writes, _ := exampleFiles(ex.line)
				for _, p := range writes {
					// A parent's help repeats its subcommands' examples.
					if w, ok := writers[p]; ok && w.line != ex.line {
						t.Errorf("%s is written by two examples:\n  %s\n  %s", p, w.line, ex.line)
					}
					writers[p] = writer{exampleCommand(ex.line), ex.line}
				}
			}
		}
	}
	_, err := os.Stat("../../examples/eval/standin_model.py")
	require.NoError(t, err, "the stand-in the examples name")
	for _, path := range exampleOrder {
		c, ok := leaves[path]
		if !ok {
			continue
		}
		comments, written, model := "", map[string]bool{}, false
		for _, ex := range exampleLines(c.Example) {
			comments += ex.comment
			writes, reads := exampleFiles(ex.line)
			for _, p := range reads {
				w, ok := writers[p]
				if !assert.True(t, ok, "%s reads %s, which no example writes", ex.line, p) || written[p] {
					continue
				}
				assert.True(t, strings.Contains(comments, p) && strings.Contains(comments, w.command),
					"%s: %s reads %s, written by %s, and no comment above says so", path, ex.line, p, w.line)
			}
			for _, p := range writes {
				written[p] = true
			}
			if strings.Contains(ex.line, modelURLInExamples) && !model {
				assert.Contains(t, comments, "python3 examples/eval/standin_model.py --port 8000 &",
					"%s: the first example that needs a model says how to start the stand-in", path)
				model = true
			}
		}
	}
}

// exampleFiles are the files under out/ an example line writes (--out, its
// train and test sides and manifest, the other output flags, "> FILE") and
// those it reads (every other path under out/).
func exampleFiles(line string) (writes, reads []string) {
	words := strings.Fields(line)
	split := slices.Contains(words, "--test-fraction") || slices.Contains(words, "group")
	for i, w := range words {
		if !strings.HasPrefix(w, "out/") {
			continue
		}
		switch prev := words[i-1]; prev {
		case "--out":
			writes = append(writes, w)
			if w != "out/demo" {
				writes = append(writes, w+".manifest.json")
			}
			if ext := filepath.Ext(w); split {
				base := strings.TrimSuffix(w, ext)
				writes = append(writes, base+"-train"+ext, base+"-test"+ext)
			}
		case ">", "--teacher-requests", "--addr-file", "--plot":
			writes = append(writes, w)
		default:
			reads = append(reads, w)
		}
	}
	return writes, reads
}

// exampleCommand is the command an example line runs, "synth budget": the
// words after "timeaware" up to the first flag, path or redirection.
func exampleCommand(line string) string {
	words := strings.Fields(line)
	words = words[slices.Index(words, "timeaware")+1:]
	end := slices.IndexFunc(words, func(w string) bool {
		return strings.HasPrefix(w, "-") || strings.Contains(w, "/") || w == ">"
	})
	if end < 0 {
		end = len(words)
	}
	return strings.Join(words[:end], " ")
}
