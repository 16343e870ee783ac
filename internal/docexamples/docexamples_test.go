package docexamples

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Example
		err  string
	}{
		{
			name: "command and its output",
			src:  "# t\n\n```sh\ntimeaware x\n```\n\n```text\nok\n```\n",
			want: []Example{{File: "d.md", Line: 3, Lang: "sh", Code: "timeaware x\n", Want: "ok\n", WantLine: 7, HasWant: true}},
		},
		{
			name: "prose between a command and a text block: no output",
			src:  "```sh\na\n```\nthen\n```text\nprompt\n```\n",
			want: []Example{{File: "d.md", Line: 1, Lang: "sh", Code: "a\n"}},
		},
		{
			name: "other languages are not run",
			src:  "```yaml\na: 1\n```\n```json\n{}\n```\n```text\nx\n```\n",
		},
		{
			name: "markers",
			src: "<!-- example: skip needs a GPU -->\n```sh\ntrain\n```\n\n<!-- example: server http://127.0.0.1:8080/readyz -->\n\n```sh\ntimeaware serve\n```\n" +
				"<!-- example: trainers -->\n```python\nimport trl\n```\n<!-- example: fails -->\n```sh\nfalse\n```\n```text\nerr\n```\n" +
				"<!-- example: openenv -->\n```python\nimport openenv\n```\n",
			want: []Example{
				{File: "d.md", Line: 2, Lang: "sh", Code: "train\n", Mode: Skip, Reason: "needs a GPU"},
				{File: "d.md", Line: 8, Lang: "sh", Code: "timeaware serve\n", Mode: Server, Reason: "http://127.0.0.1:8080/readyz"},
				{File: "d.md", Line: 12, Lang: "python", Code: "import trl\n", Mode: Trainers},
				{File: "d.md", Line: 16, Lang: "sh", Code: "false\n", Mode: Fails, Want: "err\n", WantLine: 19, HasWant: true},
				{File: "d.md", Line: 23, Lang: "python", Code: "import openenv\n", Mode: Trainers},
			},
		},
		{name: "skip without a reason", src: "<!-- example: skip -->\n```sh\na\n```\n", err: "d.md:1: <!-- example: skip -->: a skipped example needs a reason"},
		{name: "unknown mode", src: "<!-- example: later -->\n```sh\na\n```\n", err: `unknown mode "later"`},
		{name: "marker before prose", src: "<!-- example: fails -->\ntext\n```sh\na\n```\n", err: "d.md:1: <!-- example: fails --> is not followed by an sh or python block"},
		{name: "marker before a yaml block", src: "<!-- example: fails -->\n```yaml\na\n```\n", err: "is not followed by an sh or python block"},
		{name: "marker at the end", src: "<!-- example: fails -->\n", err: "is not followed"},
		{name: "server without a URL", src: "<!-- example: server -->\n```sh\na\n```\n", err: "needs the http:// URL"},
		{name: "server with output", src: "<!-- example: server http://x -->\n```sh\na\n```\n```text\nb\n```\n", err: "a server example cannot show output"},
		{name: "server with an address file", src: "<!-- example: server http://{run/serve.addr}/readyz -->\n```sh\na\n```\n",
			want: []Example{{File: "d.md", Line: 2, Lang: "sh", Code: "a\n", Mode: Server, Reason: "http://{run/serve.addr}/readyz"}}},
		{name: "address file outside the checkout", src: "<!-- example: server http://{../serve.addr}/ -->\n```sh\na\n```\n", err: "{../serve.addr} must name a file inside the checkout"},
		{name: "absolute address file", src: "<!-- example: server http://{/tmp/a}/ -->\n```sh\na\n```\n", err: "{/tmp/a} must name a file inside"},
		{name: "empty address file", src: "<!-- example: server http://{}/ -->\n```sh\na\n```\n", err: "{} must name a file inside"},
		{name: "unclosed brace", src: "<!-- example: server http://{a/ -->\n```sh\na\n```\n", err: "a { without its }"},
		{name: "nested brace", src: "<!-- example: server http://{a{b}/ -->\n```sh\na\n```\n", err: "a { without its }"},
		{name: "stray brace", src: "<!-- example: server http://a}/ -->\n```sh\na\n```\n", err: "a } without its {"},
		{name: "argument to openenv", src: "<!-- example: openenv 8001 -->\n```python\na\n```\n", err: "openenv takes no argument"},
		{name: "argument to fails", src: "<!-- example: fails hard -->\n```sh\na\n```\n", err: "fails takes no argument"},
		{name: "unclosed marker", src: "<!-- example: fails\n```sh\na\n```\n", err: "must end on its line"},
		{name: "indented sh", src: "- item\n\n  ```sh\n  a\n  ```\n", err: "d.md:3: an indented sh block cannot be run"},
		{name: "unclosed block", src: "```sh\na\n", err: "d.md:1: code block is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("d.md", []byte(tt.src))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
		diff      string
	}{
		{"a\nb\n", "a\nb\n", true, ""},
		{"a\nb\n", "a  \nb\n\n\n", true, ""},
		{"a\nb\n", "a\nc\n", false, "line 2 differs:\n  doc: b\n  got: c"},
		{"a\nb\n", "a\n", false, "the output ends before line 2 of the doc: b"},
		{"a\n", "a\nb\n", false, "the output goes on after the doc's last line: b"},
		{"a\n...\nz\n", "a\nz\n", true, ""},
		{"a\n...\nz\n", "a\nb\nc\nz\n", true, ""},
		{"...\n", "", true, ""},
		{"...\nz\n", "a\nz\nz\n", true, ""},
		{"a\n...\n", "a\nanything\n", true, ""},
		{"a\n...\nz\n", "a\nb\ny\n", false, `does not match the doc's lines after its "..."`},
		{"a\n...\nc\n...\ne\n", "a\nx\nc\ny\ny\ne\n", true, ""},
		{"a\n...\nc\n...\ne\n", "a\nx\ny\ny\ne\n", false, "(line 2 of the block)"},
	}
	for _, tt := range tests {
		ok, diff := Match(tt.want, tt.got)
		assert.Equal(t, tt.ok, ok, "want %q got %q", tt.want, tt.got)
		if tt.diff != "" {
			assert.Contains(t, diff, tt.diff)
		} else {
			assert.Empty(t, diff)
		}
	}
}

func TestUpdate(t *testing.T) {
	src := "```sh\na\n```\n\n```text\nold\nlines\n```\nmid\n```sh\nb\n```\n```text\nkeep\n```\n```sh\nc\n```\n```text\nx\n...\n```\n"
	exs, err := Parse("d.md", []byte(src))
	require.NoError(t, err)
	require.Len(t, exs, 3)
	results := []Result{
		{Example: exs[0], Ran: true, Output: "new\n", Err: ErrMismatch},
		{Example: exs[1], Ran: true, Output: "keep\n"},
		{Example: exs[2], Ran: true, Output: "y\n", Err: ErrMismatch},
	}
	out, err := Update([]byte(src), results)
	require.Error(t, err, "an elided block is left for a person")
	assert.Contains(t, err.Error(), `d.md:19: the output block elides lines with "..."`)
	assert.Equal(t, "```sh\na\n```\n\n```text\nnew\n```\nmid\n```sh\nb\n```\n```text\nkeep\n```\n```sh\nc\n```\n```text\nx\n...\n```\n", string(out))

	// A run that failed for another reason than its output is not written
	// into the doc.
	results[0].Err = assert.AnError
	out, _ = Update([]byte(src), results[:1])
	assert.Equal(t, src, string(out))
}

func TestRunFile(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "examples"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "examples", "in.txt"), []byte("from examples\n"), 0o644))
	sharedDir := filepath.Join(top, "data")
	require.NoError(t, os.MkdirAll(sharedDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sharedDir, "s.txt"), []byte("from shared\n"), 0o644))
	bin := filepath.Join(top, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "timeaware"), []byte("#!/bin/sh\necho \"timeaware $*\"\necho \"to stderr\" >&2\n"), 0o755))

	doc := strings.Join([]string{
		"```sh", "cat examples/in.txt ../shared/s.txt", "echo written > out.txt", "```", "```text", "from examples", "from shared", "```",
		"```sh", "cat out.txt; timeaware synth x", "echo \"${TIMEAWARE_SECRET:-unset}\"", "```", "```text", "written", "timeaware synth x", "to stderr", "unset", "```",
		"```sh", "echo changed", "```", "```text", "unchanged", "```",
		"<!-- example: fails -->", "```sh", "exit 3", "```",
		"<!-- example: fails -->", "```sh", "true", "```",
		"```sh", "false", "echo not reached", "```",
		"<!-- example: skip not here -->", "```sh", "exit 1", "```",
	}, "\n") + "\n"
	exs, err := Parse("d.md", []byte(doc))
	require.NoError(t, err)
	t.Setenv("TIMEAWARE_SECRET", "leaks")
	r := &Runner{Root: repo, Inputs: []string{"examples"}, Shared: sharedDir, BinDir: bin, Python: "python3"}
	results, err := r.RunFile(context.Background(), exs)
	require.NoError(t, err)
	require.Len(t, results, 7)
	assert.NoError(t, results[0].Err)
	assert.NoError(t, results[1].Err, "the binary on PATH, stderr in order, no TIMEAWARE_* variables")
	assert.ErrorIs(t, results[2].Err, ErrMismatch)
	assert.Contains(t, results[2].Err.Error(), "d.md:19:")
	assert.NoError(t, results[3].Err, "a failing example that fails")
	assert.ErrorContains(t, results[4].Err, "exited 0, but the doc says it fails")
	assert.ErrorContains(t, results[5].Err, "exit status 1", "errexit: a failing line fails the example")
	assert.NotContains(t, results[5].Output, "not reached")
	assert.False(t, results[6].Ran)
	assert.NoError(t, results[6].Err)
	_, err = os.Stat(filepath.Join(repo, "out.txt"))
	assert.True(t, os.IsNotExist(err), "examples write into a scratch checkout, not the real one")
}

// TestRunFileFindsStrayOutputs: with an output directory set, an example
// that writes anywhere else in the checkout fails, naming what it wrote;
// one that writes under the output directory, or what .gitignore
// ignores, does not.
func TestRunFileFindsStrayOutputs(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "examples"), 0o755))
	doc := strings.Join([]string{
		"```sh", "mkdir -p out && echo a > out/a.txt", "```",
		"```sh", "echo b > b.txt; mkdir c", "```",
		"```sh", "echo b again > b.txt; touch x.test; mkdir -p .cache/d", "```",
		"```sh", "echo e > e.txt", "```",
	}, "\n") + "\n"
	exs, err := Parse("d.md", []byte(doc))
	require.NoError(t, err)
	r := &Runner{Root: repo, Inputs: []string{"examples"}, Shared: top, BinDir: top, Python: "python3",
		OutputDir: "out", Ignored: []string{"# a comment", "*.test", "/.cache/", "", "!b.txt"}}
	results, err := r.RunFile(context.Background(), exs)
	require.NoError(t, err)
	require.Len(t, results, 4)
	assert.NoError(t, results[0].Err, "out/ is where examples write")
	assert.EqualError(t, results[1].Err, "d.md:4: wrote b.txt, c outside out/: run from a checkout, git would show them as untracked")
	assert.NoError(t, results[2].Err, "an entry already reported, and ignored ones")
	assert.ErrorContains(t, results[3].Err, "wrote e.txt outside out/")
}

// addrServer is an sh example: a web server on a loopback port the kernel
// picks, which writes its address to FILE whole (renamed into place) once
// it listens, as timeaware serve --addr-file does.
const addrServer = `exec python3 -c 'import http.server, os, sys
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
open(sys.argv[1] + ".tmp", "w").write("127.0.0.1:%d\n" % s.server_address[1])
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' FILE
`

func TestRunFileServer(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{Root: dir, Shared: dir, BinDir: dir, Python: "python3"}
	short := *r // for the servers that never get ready
	short.ServerWait = 2 * time.Second
	server := strings.ReplaceAll(addrServer, "FILE", "run/srv.addr")
	doc := "```sh\nmkdir run\n```\n<!-- example: server http://{run/srv.addr}/ -->\n```sh\n" + server + "```\n" +
		"```sh\ncurl -fsS -o /dev/null -w '%{http_code}\\n' \"http://$(cat run/srv.addr)/\"\n```\n```text\n200\n```\n" +
		"```sh\ncat run/srv.addr\n```\n"
	exs, err := Parse("d.md", []byte(doc))
	require.NoError(t, err)
	results, err := r.RunFile(context.Background(), exs)
	require.NoError(t, err)
	for _, res := range results {
		require.NoError(t, res.Err)
	}
	addr := strings.TrimSpace(results[3].Output)
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, addr)
	_, err = http.Get("http://" + addr + "/")
	assert.Error(t, err, "the server is stopped after the file")

	t.Run("an address file there before the server", func(t *testing.T) {
		stale := append([]Example{{File: "d.md", Line: 1, Lang: "sh", Code: "mkdir run; echo 127.0.0.1:1 > run/srv.addr\n"}}, exs[1:2]...)
		results, err := r.RunFile(context.Background(), stale)
		require.NoError(t, err)
		assert.ErrorContains(t, results[1].Err, "run/srv.addr exists before the server starts")
	})
	t.Run("no address written", func(t *testing.T) {
		quiet := exs[1]
		quiet.Code = "echo listening somewhere; exec sleep 60\n"
		results, err := short.RunFile(context.Background(), []Example{exs[0], quiet})
		require.NoError(t, err)
		assert.ErrorContains(t, results[1].Err, "no address in run/srv.addr within 2s")
		assert.ErrorContains(t, results[1].Err, "listening somewhere")
	})
	t.Run("an address that does not answer", func(t *testing.T) {
		// Port 1 of loopback: nothing listens there.
		wrong := exs[1]
		wrong.Code = "echo 127.0.0.1:1 > run/srv.addr; exec sleep 60\n"
		results, err := short.RunFile(context.Background(), []Example{exs[0], wrong})
		require.NoError(t, err)
		assert.ErrorContains(t, results[1].Err, "http://127.0.0.1:1/ did not answer 200 within 2s")
	})
	t.Run("exits before it is ready", func(t *testing.T) {
		bad := exs[1]
		bad.Code = "echo bad config >&2; exit 2\n"
		results, err := r.RunFile(context.Background(), []Example{exs[0], bad})
		require.NoError(t, err)
		assert.ErrorContains(t, results[1].Err, "exited before")
		assert.ErrorContains(t, results[1].Err, "bad config")
	})
	t.Run("a fixed URL another process answers", func(t *testing.T) {
		other := httptest.NewServer(http.NotFoundHandler())
		defer other.Close()
		fixed := exs[1]
		fixed.Reason = other.URL + "/"
		results, err := r.RunFile(context.Background(), []Example{fixed})
		require.NoError(t, err)
		assert.ErrorContains(t, results[0].Err, "already answers before the example starts")
	})
}
