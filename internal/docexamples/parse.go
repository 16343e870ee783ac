// Package docexamples finds the runnable examples in the project's Markdown
// docs, runs them against the built binary, and compares what they print with
// the output the docs show, so that an example in the docs is a test.
//
// The conventions, in the Markdown source:
//
//   - A fenced block tagged sh or python is an example. The blocks of one
//     file run in order in one scratch directory laid out like a checkout
//     (examples/, python/, ... and ../shared beside it), so a later block
//     may read what an earlier one wrote. sh blocks run under bash with
//     errexit and pipefail; python blocks with the configured interpreter.
//   - A block tagged text that follows an example with only blank lines
//     between is that example's output: stdout and stderr as a terminal
//     would show them. A line holding only "..." stands for any number of
//     lines. Without such a block the example must only succeed.
//   - An HTML comment right before a block changes how it runs:
//     <!-- example: skip REASON --> does not run it (a GPU, a model server);
//     <!-- example: trainers --> leaves it to the trainers test tier
//     (python/tests/trainers/test_docs.py), which runs it against the real trainer;
//     <!-- example: openenv --> leaves it to the same tier with the OpenEnv
//     server running too (python/tests/trainers/test_openenv_docs.py);
//     <!-- example: server URL --> starts it in the background, waits until
//     URL answers 200, and stops it after the file's last block. A server
//     that binds a port the kernel picks names the file it writes its
//     address to in braces, <!-- example: server http://{serve.addr}/readyz -->:
//     the runner waits for the file, a path in the scratch checkout that must
//     not exist before the block starts, and puts its first line in the
//     URL; later blocks read the same file. A fixed port, which another
//     process may hold, is for docs that show one;
//     <!-- example: fails --> expects it to exit non-zero.
package docexamples

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// Mode says how an example is run.
type Mode int

// Modes of an example, set by the comment before its block.
const (
	Run      Mode = iota // run it and compare its output
	Skip                 // not run here; Reason says why
	Trainers             // run by the trainers test tier
	Server               // run in the background until the file is done
	Fails                // run it; it must exit non-zero
)

// Example is one runnable block of a doc.
type Example struct {
	File string // the doc, as given to Parse
	Line int    // line of the opening fence, from 1
	Lang string // sh or python
	Code string
	Mode Mode
	// Reason is the skip reason, or the readiness URL of a server, which
	// may name address files in braces (see the package documentation).
	Reason string
	// Want is the output the doc shows, WantLine the line of its opening
	// fence; HasWant is false when the doc shows none.
	Want     string
	WantLine int
	HasWant  bool
}

const marker = "<!-- example:"

// item is a piece of a Markdown file: a fenced block, an example marker, or
// any other non-blank line (blank lines are dropped).
type item struct {
	kind int // itemBlock, itemMarker, itemText
	line int
	lang string // of a block
	body string // of a block: its lines; of a marker: the comment
}

const (
	itemBlock = iota
	itemMarker
	itemText
)

func split(name string, src []byte) ([]item, error) {
	var items []item
	var open *item
	var body []string
	lineNo := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if open != nil {
			if trimmed == "```" {
				open.body = strings.Join(body, "\n")
				if len(body) > 0 {
					open.body += "\n"
				}
				items = append(items, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, line)
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "```"):
			lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			if line != trimmed && (lang == "sh" || lang == "python") {
				return nil, fmt.Errorf("%s:%d: an indented %s block cannot be run; move it to the left margin or tag it text", name, lineNo, lang)
			}
			open = &item{kind: itemBlock, line: lineNo, lang: lang}
		case strings.HasPrefix(trimmed, marker):
			items = append(items, item{kind: itemMarker, line: lineNo, body: trimmed})
		case trimmed != "":
			items = append(items, item{kind: itemText, line: lineNo})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if open != nil {
		return nil, fmt.Errorf("%s:%d: code block is never closed", name, open.line)
	}
	return items, nil
}

// Parse returns the examples of one Markdown file. It rejects what would
// silently not run: an unknown or dangling marker, an indented example
// fence, an unterminated block.
func Parse(name string, src []byte) ([]Example, error) {
	items, err := split(name, src)
	if err != nil {
		return nil, err
	}
	var out []Example
	for i := 0; i < len(items); i++ {
		it := items[i]
		ex := Example{File: name}
		if it.kind == itemMarker {
			if i+1 >= len(items) || items[i+1].kind != itemBlock || !runnable(items[i+1].lang) {
				return nil, fmt.Errorf("%s:%d: %s is not followed by an sh or python block", name, it.line, it.body)
			}
			if err := parseMarker(it.body, &ex); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, it.line, err)
			}
			i++
			it = items[i]
		}
		if it.kind != itemBlock || !runnable(it.lang) {
			continue
		}
		ex.Line, ex.Lang, ex.Code = it.line, it.lang, it.body
		if i+1 < len(items) && items[i+1].kind == itemBlock && items[i+1].lang == "text" {
			i++
			ex.Want, ex.WantLine, ex.HasWant = items[i].body, items[i].line, true
		}
		if ex.HasWant && ex.Mode == Server {
			return nil, fmt.Errorf("%s:%d: a server example cannot show output", name, ex.Line)
		}
		out = append(out, ex)
	}
	return out, nil
}

func runnable(lang string) bool { return lang == "sh" || lang == "python" }

// parseMarker reads "<!-- example: MODE [ARG] -->" into ex.
func parseMarker(s string, ex *Example) error {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(s, marker), "-->")
	if !ok {
		return fmt.Errorf("%s: the marker must end on its line with -->", s)
	}
	mode, arg, _ := strings.Cut(strings.TrimSpace(inner), " ")
	arg = strings.TrimSpace(arg)
	switch mode {
	case "skip":
		if arg == "" {
			return fmt.Errorf("%s: a skipped example needs a reason", s)
		}
		ex.Mode, ex.Reason = Skip, arg
	case "trainers", "openenv":
		ex.Mode = Trainers
	case "server":
		if !strings.HasPrefix(arg, "http://") {
			return fmt.Errorf("%s: a server example needs the http:// URL that answers 200 once it is ready", s)
		}
		if _, err := addrFiles(arg); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		ex.Mode, ex.Reason = Server, arg
	case "fails":
		ex.Mode = Fails
	default:
		return fmt.Errorf("%s: unknown mode %q (want skip, trainers, openenv, server or fails)", s, mode)
	}
	if mode != "skip" && mode != "server" && arg != "" {
		return fmt.Errorf("%s: %s takes no argument", s, mode)
	}
	return nil
}

// addrFiles returns the address files a server's readiness URL names in
// braces, in order: paths relative to the scratch checkout, within it.
func addrFiles(url string) ([]string, error) {
	var files []string
	for rest := url; ; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			return files, nil
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("%s: a } without its {", url)
		}
		n := strings.IndexAny(rest[open+1:], "{}")
		if n < 0 || rest[open+1+n] == '{' {
			return nil, fmt.Errorf("%s: a { without its }", url)
		}
		f := rest[open+1 : open+1+n]
		if !filepath.IsLocal(f) || strings.ContainsAny(f, " \t") {
			return nil, fmt.Errorf("%s: {%s} must name a file inside the checkout (a relative path without spaces)", url, f)
		}
		files = append(files, f)
		rest = rest[open+1+n+1:]
	}
}
