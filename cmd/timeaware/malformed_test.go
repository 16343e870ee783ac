package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	gojson "github.com/goccy/go-json"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/timeaware/timeaware/internal/dataset"
)

// The malformed-input corpus: files of every kind a command reads, each
// wrong in its own way, and seeds (one valid input of each schema) whose
// values the test replaces with values of other JSON kinds.
const malformedDir = "testdata/malformed"

// fileInput is a file a command reads, named by a flag or an argument.
type fileInput struct {
	cmd  string // the command's path after "timeaware"
	flag string // the flag that names the file; "" for an argument
	// corpora are the folders of testdata/malformed whose files the
	// input is given: json (JSON texts and JSONL), rows (Parquet and Arrow
	// files the test writes), yaml, csv.
	corpora []string
	ext     string   // the extension the file is given
	seeds   []string // seed files whose records are mutated
	// args is the command line that reads in, writing (if it writes)
	// under dir.
	args func(in, dir string) []string
	// usage: a malformed input is a usage error (exit 2), as a config file's
	// is; else it is one of the data (exit 1). columns: a file without a
	// column the flags name is a usage error too.
	usage, columns bool
	// lenient: the command reports a malformed record and goes on, so a
	// run may pass.
	lenient bool
	// accepts are the corpus files the input takes as they are.
	accepts []string
}

func (f fileInput) name() string {
	if f.flag == "" {
		return f.cmd + " ARG"
	}
	return strings.TrimSpace(f.cmd + " --" + f.flag)
}

// Valid companions of the input under test.
const (
	seedTrajectory  = malformedDir + "/seeds/trajectory.jsonl"
	seedResults     = malformedDir + "/seeds/result.jsonl"
	seedSplitsTrain = malformedDir + "/seeds/splits-row.jsonl"
	seedSplitsTest  = malformedDir + "/seeds/splits-test-row.jsonl"
	seedBenchmark   = malformedDir + "/seeds/benchmark-row.jsonl"
)

// fileInputs lists every file input of the CLI; TestFileInputsAreListed
// keeps it complete.
func fileInputs(endpoint string) []fileInput {
	out := func(dir string) string { return filepath.Join(dir, "out.jsonl") }
	model := []string{"--endpoint", endpoint, "--model", "m", "--no-cache"}
	pairs := func(more ...string) func(in, dir string) []string {
		return func(in, dir string) []string {
			args := []string{"pairs", "build", "--format", "jsonl", "--out", out(dir)}
			for _, m := range more {
				args = append(args, strings.ReplaceAll(m, "IN", in))
			}
			return args
		}
	}
	puzzleFlag := func(flag string) func(in, dir string) []string {
		return func(in, dir string) []string {
			return []string{"synth", "puzzles", "--count", "2", "--seed", "1", "--years", "2000-2001", "--" + flag, in, "--out", out(dir)}
		}
	}
	importFlag := func(flag string) func(in, dir string) []string {
		return func(in, dir string) []string {
			return []string{"synth", "puzzles", "import-published", publishedPzl, "--" + flag, in, "--out", out(dir)}
		}
	}
	gateColumns := []string{"--text", "question", "--group", "topic", "--id", "id", "--test-fraction", "0", "--sensitivities", ""}
	gate := func(flag string) func(in, dir string) []string {
		return func(in, _ string) []string {
			sides := map[string]string{"train": seedSplitsTrain, "test": seedSplitsTest, "against": seedSplitsTest}
			sides[flag] = in
			return append([]string{"splits", "check", "--train", sides["train"], "--test", sides["test"], "--against", sides["against"]}, gateColumns...)
		}
	}
	rows := []string{"json", "rows"}
	evalRows := []string{"pairs-row.jsonl", "budget-row.jsonl", "puzzle-row.jsonl", "traveler-row.jsonl", "negotiation-row.jsonl", "length-row.jsonl"}
	return []fileInput{
		// A config of null sets nothing, as an empty one.
		{cmd: "", flag: "config", corpora: []string{"yaml"}, ext: ".yaml", seeds: []string{"config.json"}, usage: true, accepts: []string{"null"},
			args: func(in, _ string) []string { return []string{"--config", in, "config", "show"} }},
		{cmd: "pairs build", flag: "input", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"trajectory.jsonl"},
			args: pairs("--input", "IN", "--annotations", demoVotes, "--direct-answers", demoDirect)},
		{cmd: "pairs build", flag: "annotations", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"vote.jsonl"},
			args: pairs("--input", seedTrajectory, "--annotations", "IN", "--direct-answers", demoDirect)},
		{cmd: "pairs build", flag: "direct-answers", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"direct.jsonl"},
			args: pairs("--input", seedTrajectory, "--annotations", demoVotes, "--direct-answers", "IN")},
		{cmd: "pairs build", flag: "catalog", corpora: []string{"yaml"}, ext: ".yaml", seeds: []string{"catalog.json"},
			args: pairs("--input", seedTrajectory, "--annotations", demoVotes, "--direct-answers", demoDirect, "--catalog", "IN")},
		{cmd: "synth budget", flag: "input", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"task.jsonl"},
			args: func(in, dir string) []string {
				return []string{"synth", "budget", "--input", in, "--family", "general", "--seed", "1", "--out", out(dir)}
			}},
		{cmd: "synth distill", flag: "input", corpora: rows, ext: ".jsonl", seeds: []string{"budget-row.jsonl"},
			args: func(in, dir string) []string {
				return append([]string{"synth", "distill", "--input", in, "--out", out(dir)}, model...)
			}},
		{cmd: "synth sft", flag: "traces", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"trace.jsonl"},
			args: func(in, dir string) []string { return []string{"synth", "sft", "--traces", in, "--out", out(dir)} }},
		{cmd: "synth timestamps", flag: "input", corpora: []string{"json"}, ext: ".json", seeds: []string{"trajectory.jsonl"},
			args: func(in, dir string) []string {
				return []string{"synth", "timestamps", "--input", in, "--seed", "1", "--out", out(dir)}
			}},
		{cmd: "synth timestamps", flag: "catalog", corpora: []string{"yaml"}, ext: ".yaml", seeds: []string{"catalog.json"},
			args: func(in, dir string) []string {
				return []string{"synth", "timestamps", "--input", seedTrajectory, "--catalog", in, "--seed", "1", "--out", out(dir)}
			}},
		{cmd: "synth negotiation", flag: "scenario", corpora: []string{"yaml", "json"}, ext: ".yaml", seeds: []string{"scenario.json"},
			args: func(in, dir string) []string {
				return []string{"synth", "negotiation", "--count", "2", "--seed", "1", "--scenario", in, "--out", out(dir)}
			}},
		{cmd: "synth puzzles", flag: "kb", corpora: []string{"csv"}, ext: ".csv", args: puzzleFlag("kb")},
		{cmd: "synth puzzles", flag: "year-sets", corpora: []string{"csv"}, ext: ".csv", args: puzzleFlag("year-sets")},
		{cmd: "synth puzzles solve", corpora: rows, ext: ".jsonl", seeds: []string{"puzzle-row.jsonl"},
			args: func(in, _ string) []string { return []string{"synth", "puzzles", "solve", in} }},
		{cmd: "synth puzzles import-published", corpora: []string{"json"}, ext: ".json", seeds: []string{"published.json"}, lenient: true,
			args: func(in, dir string) []string {
				return []string{"synth", "puzzles", "import-published", in, "--out", out(dir)}
			}},
		{cmd: "synth puzzles import-published", flag: "kb", corpora: []string{"csv"}, ext: ".csv", args: importFlag("kb")},
		{cmd: "synth puzzles import-published", flag: "year-sets", corpora: []string{"csv"}, ext: ".csv", args: importFlag("year-sets")},
		// Test of Time's importer reads any name with --subset; the other
		// importers share its readers (the benchmarks package's fuzz
		// tests feed them all).
		{cmd: "benchmarks import", corpora: []string{"json"}, ext: ".json", seeds: []string{"tot.json"}, lenient: true,
			args: func(in, dir string) []string {
				return []string{"benchmarks", "import", "test-of-time", in, "--subset", "tot_arithmetic", "--out", out(dir)}
			}},
		{cmd: "splits check", corpora: rows, ext: ".jsonl", seeds: []string{"splits-rows.jsonl"}, columns: true,
			args: func(in, _ string) []string {
				return append([]string{"splits", "check", in, "--split-column", "split"}, gateColumns...)
			}},
		{cmd: "splits check", flag: "train", corpora: rows, ext: ".jsonl", seeds: []string{"splits-row.jsonl"}, columns: true, args: gate("train")},
		{cmd: "splits check", flag: "test", corpora: rows, ext: ".jsonl", seeds: []string{"splits-test-row.jsonl"}, columns: true, args: gate("test")},
		// The outside set needs only its text column, and reads any value
		// there as text.
		{cmd: "splits check", flag: "against", corpora: rows, ext: ".jsonl", seeds: []string{"splits-test-row.jsonl"}, columns: true, args: gate("against"),
			accepts: []string{"invalid-utf8-in-string", "wrong-types", "wrong-nested-types", "rows/text-columns.parquet", "rows/text-columns.arrow",
				"rows/number-columns.parquet", "rows/number-columns.arrow", "rows/nested-wrong-types.parquet", "rows/nested-wrong-types.arrow"}},
		// Both sides read any value of their text columns as text, as the
		// gate's outside set does.
		{cmd: "splits contamination", corpora: rows, ext: ".jsonl", seeds: []string{"splits-row.jsonl"}, columns: true,
			accepts: []string{"invalid-utf8-in-string", "wrong-types", "wrong-nested-types", "rows/text-columns.parquet", "rows/text-columns.arrow",
				"rows/number-columns.parquet", "rows/number-columns.arrow"},
			args: func(in, _ string) []string {
				return []string{"splits", "contamination", "--benchmark", seedBenchmark, in, "--text", "question", "--id", "id"}
			}},
		{cmd: "splits contamination", flag: "benchmark", corpora: rows, ext: ".jsonl", seeds: []string{"benchmark-row.jsonl"}, columns: true,
			accepts: []string{"invalid-utf8-in-string", "wrong-types", "wrong-nested-types", "rows/text-columns.parquet", "rows/text-columns.arrow",
				"rows/number-columns.parquet", "rows/number-columns.arrow", "rows/nested-wrong-types.parquet", "rows/nested-wrong-types.arrow"},
			args: func(in, _ string) []string {
				return []string{"splits", "contamination", "--benchmark", in, seedSplitsTrain, "--text", "question", "--id", "id"}
			}},
		{cmd: "eval compare", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"result.jsonl"},
			args: func(in, _ string) []string { return []string{"eval", "compare", in, seedResults, "--bootstrap", "10"} }},
		{cmd: "eval nar", flag: "input", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"decision.jsonl"},
			args: func(in, _ string) []string { return []string{"eval", "nar", "--input", in} }},
		{cmd: "eval run", flag: "data", corpora: rows, ext: ".jsonl", seeds: evalRows,
			args: func(in, dir string) []string {
				return append([]string{"eval", "run", "--data", in, "--out", out(dir), "--bootstrap", "10"}, model...)
			}},
		{cmd: "score", flag: "input", corpora: []string{"json"}, ext: ".jsonl", seeds: []string{"score-item.jsonl"},
			args: func(in, _ string) []string { return []string{"score", "--input", in} }},
	}
}

// notFileFlags are the string flags that name no file the command reads:
// outputs, and values of other kinds.
var notFileFlags = map[string]bool{
	"out": true, "format": true, "cache": true, "plot": true, "teacher-requests": true, "addr-file": true, "cpuprofile": true,
	"shard": true, "family": true, "unit": true, "reward": true, "teacher-model": true, "token-budget-range": true, "token-budgets": true,
	"api-key-env": true, "endpoint": true, "model": true, "tool-choice": true, "opponent-endpoint": true, "opponent-model": true,
	"condition": true, "disputed": true, "solutions": true, "year-set-reading": true, "years": true,
	"categories": true, "events": true, "templates": true, "against-text": true, "group": true, "id": true, "label-column": true,
	"preset": true, "sensitivities": true, "sensitivity-column": true, "split-column": true, "text": true, "data-source": true,
	"addr": true, "split": true, "time-format": true, "generate-direct": true, "mode": true, "sensitivity": true, "start": true,
	"by": true, "tool-call-pattern": true, "purpose": true, "subset": true, "context": true,
	"benchmark-text": true, "benchmark-answer": true, "benchmark-id": true, "benchmark-splits": true, "max-contaminated-per": true, "normalize": true,
	// Deprecated: they refuse to run and name the command that replaced them.
	"solve": true, "import-published": true,
}

// notFileArguments are the commands whose arguments name no file.
var notFileArguments = map[string]bool{"help": true}

// TestFileInputsAreListed walks the command tree: every flag that takes a
// string and every command that takes arguments must be an input of the
// malformed-input table or a value the table has no use for, so that a
// new command's inputs are fed the corpus too.
func TestFileInputsAreListed(t *testing.T) {
	listed := map[string]bool{}
	for _, in := range fileInputs("http://127.0.0.1:9/v1") {
		listed[in.name()] = true
	}
	found := map[string]bool{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, v: newViper()}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), "timeaware"))
		visit := func(f *pflag.Flag) {
			if notFileFlags[f.Name] || !slices.Contains([]string{"string", "stringArray", "stringSlice"}, f.Value.Type()) {
				return
			}
			in := fileInput{cmd: path, flag: f.Name}
			found[in.name()] = true
			assert.True(t, listed[in.name()], "%s: add it to fileInputs if it names a file the command reads, else to notFileFlags", in.name())
		}
		c.LocalNonPersistentFlags().VisitAll(visit)
		c.PersistentFlags().VisitAll(visit)
		if !notFileArguments[c.Name()] && takesArguments(c) {
			in := fileInput{cmd: path}
			found[in.name()] = true
			assert.True(t, listed[in.name()], "%s: add its argument to fileInputs if it names a file, else to notFileArguments", in.name())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCmd())
	for name := range listed {
		assert.True(t, found[name], "fileInputs lists %s, which the CLI does not have", name)
	}
}

// takesArguments says c accepts one, two or three arguments.
func takesArguments(c *cobra.Command) bool {
	if c.Args == nil {
		return !c.HasSubCommands()
	}
	for n := 1; n <= 3; n++ {
		if c.Args(c, slices.Repeat([]string{"x"}, n)) == nil {
			return true
		}
	}
	return false
}

// TestMalformedInputsAreToldInUserWords feeds every file input every file
// of its corpora, and every seed with one value replaced by a value of
// another JSON kind. A run that fails exits with the input's code and names
// the file; no run, passing or failing, prints a Go type name.
func TestMalformedInputsAreToldInUserWords(t *testing.T) {
	model := newScriptedModel(t, func(scriptedRequest) string { return "<answer>42</answer>" }, "")
	goNames := goTypeNames(t)
	corpus := malformedCorpus(t)
	for _, in := range fileInputs(model.URL + "/v1") {
		t.Run(in.name(), func(t *testing.T) {
			dir := t.TempDir()
			n := 0
			// check runs the input on data; valid: the data is a seed,
			// which must pass; mutant: it may.
			check := func(label, data string, mutant, valid bool) {
				n++
				runDir := filepath.Join(dir, strconv.Itoa(n))
				require.NoError(t, os.MkdirAll(runDir, 0o755))
				path := filepath.Join(runDir, label+in.ext)
				if strings.HasPrefix(label, "rows/") {
					path = filepath.Join(runDir, strings.TrimPrefix(label, "rows/"))
				}
				require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
				args := in.args(path, runDir)
				code, stdout, stderr := runCLI(t, args...)
				what := fmt.Sprintf("%s given %s", in.name(), label)
				for _, stream := range []string{stdout, stderr} {
					if m := goNames.FindString(stream); m != "" {
						t.Errorf("%s: a Go type name (%q) reaches the user:\n%s", what, m, shorten(stream))
					}
				}
				if valid {
					assert.Equal(t, exitOK, code, "%s: a seed must pass: %s", what, stderr)
					return
				}
				if code == exitOK {
					if !mutant && !in.lenient && !slices.Contains(in.accepts, label) {
						t.Errorf("%s: exit 0 for a malformed input\nstdout: %s", what, shorten(stdout))
					}
					return
				}
				switch {
				case in.usage && code == exitIO:
					// A key of the config naming a file that is not there.
					assert.Contains(t, firstLine(stderr), "no such file or directory", "%s: stderr: %s", what, stderr)
				case in.usage:
					assert.Equal(t, exitUsage, code, "%s: stderr: %s", what, stderr)
				case in.columns && code == exitUsage:
					assert.Contains(t, stderr, "column", "%s: only a missing column is a usage error", what)
				default:
					assert.Equal(t, exitData, code, "%s: stderr: %s", what, stderr)
				}
				line := firstLine(stderr)
				assert.LessOrEqual(t, strings.Count(line, path), 1, "%s: the file is named once: %s", what, line)
				if mutant && !strings.Contains(line, path) {
					// A value of the right kind that is wrong may show
					// only where another input meets it: a catalog
					// without the record's scenario.
					assert.True(t, slices.ContainsFunc(args, func(a string) bool { return strings.Contains(line, a) && fileExists(a) }),
						"%s: the message names an input: %s", what, line)
					return
				}
				assert.Contains(t, line, path, "%s: the message names the file", what)
				if in.flag != "" && !in.lenient {
					assert.Contains(t, line, "--"+in.flag+" "+path, "%s: the message names the flag with the file", what)
				}
			}
			for _, kind := range in.corpora {
				for _, c := range corpus[kind] {
					check(c.name, c.data, false, false)
				}
			}
			for _, seed := range in.seeds {
				for _, m := range mutants(t, filepath.Join(malformedDir, "seeds", seed), in.ext) {
					check(m.name, m.data, true, m.valid)
				}
			}
		})
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func shorten(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

type corpusFile struct{ name, data string }

// malformedCorpus reads testdata/malformed/{json,yaml,csv} and makes the
// rows corpus: Parquet and Arrow files whose columns have the wrong types.
func malformedCorpus(t *testing.T) map[string][]corpusFile {
	t.Helper()
	out := map[string][]corpusFile{}
	for _, kind := range []string{"json", "yaml", "csv"} {
		entries, err := os.ReadDir(filepath.Join(malformedDir, kind))
		require.NoError(t, err)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(malformedDir, kind, e.Name()))
			require.NoError(t, err)
			out[kind] = append(out[kind], corpusFile{strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), string(b)})
		}
	}
	out["rows"] = malformedRows(t)
	return out
}

type mutant struct {
	name, data string
	valid      bool // the seed itself
}

// mutants are the records of a seed file, each with one value replaced
// by values of other JSON kinds, one record a file: a JSONL line, or a
// JSON array of one record for an input that reads arrays (ext .json). A
// .json seed is one document: an array of records, or an object that is
// the input itself (a config, a catalog). A string that holds a JSON
// object or array (tools, arguments, ground truths) is mutated inside too.
func mutants(t *testing.T, seed, ext string) []mutant {
	t.Helper()
	b, err := os.ReadFile(seed)
	require.NoError(t, err)
	var records []any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for dec.More() {
		var v any
		require.NoError(t, dec.Decode(&v), seed)
		records = append(records, v)
	}
	whole := false // the record is the document
	if strings.HasSuffix(seed, ".json") {
		require.Len(t, records, 1, seed)
		list, ok := records[0].([]any)
		whole = !ok
		if ok {
			records = list
		}
	}
	base := strings.TrimSuffix(filepath.Base(seed), filepath.Ext(seed))
	// file writes the records, record i replaced by rec.
	file := func(i int, rec any) string {
		if whole {
			if i < 0 {
				rec = records[0]
			}
			return encode(rec) + "\n"
		}
		lines := make([]string, len(records))
		for j, r := range records {
			if j == i {
				r = rec
			}
			lines[j] = encode(r)
		}
		if ext == ".json" {
			return "[\n" + strings.Join(lines, ",\n") + "\n]\n"
		}
		return strings.Join(lines, "\n") + "\n"
	}
	out := []mutant{{base, file(-1, nil), true}}
	for i, rec := range records {
		for _, m := range mutate(rec, "") {
			name := fmt.Sprintf("%s-%d%s=%s", base, i+1, m.path, m.kind)
			out = append(out, mutant{safeName(name), file(i, m.value), false})
		}
	}
	return out
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)

func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

type mutation struct {
	path, kind string
	value      any
}

// replacements are the values of other kinds put in place of v.
func replacements(v any) map[string]any {
	switch v.(type) {
	case string:
		return map[string]any{"number": json.Number("7"), "object": map[string]any{"a": json.Number("1")}}
	case json.Number:
		return map[string]any{"string": "7", "list": []any{}}
	case bool:
		return map[string]any{"string": "yes", "number": json.Number("1")}
	case nil:
		return map[string]any{"object": map[string]any{}, "number": json.Number("-1.5")}
	case map[string]any:
		return map[string]any{"list": []any{json.Number("1")}, "string": "x", "null": nil}
	case []any:
		return map[string]any{"object": map[string]any{}, "string": "x", "null": nil}
	}
	return nil
}

// mutate returns v with each of its values in turn replaced. Lists are
// entered at their first two elements.
func mutate(v any, path string) []mutation {
	var out []mutation
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			orig := v[k]
			for kind, r := range sortedReplacements(orig) {
				v[k] = r
				out = append(out, mutation{path + "." + k, kind, deepCopy(v)})
			}
			for _, m := range mutate(orig, path+"."+k) {
				v[k] = m.value
				out = append(out, mutation{m.path, m.kind, deepCopy(v)})
			}
			v[k] = orig
		}
	case []any:
		for i := 0; i < len(v) && i < 2; i++ {
			orig := v[i]
			p := fmt.Sprintf("%s[%d]", path, i)
			for kind, r := range sortedReplacements(orig) {
				v[i] = r
				out = append(out, mutation{p, kind, deepCopy(v)})
			}
			for _, m := range mutate(orig, p) {
				v[i] = m.value
				out = append(out, mutation{m.path, m.kind, deepCopy(v)})
			}
			v[i] = orig
		}
	case string:
		// A string holding JSON: mutate inside, keep it a string.
		if s := strings.TrimSpace(v); len(s) > 1 && (s[0] == '{' || s[0] == '[') {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var inner any
			if dec.Decode(&inner) == nil && !dec.More() {
				for _, m := range mutate(inner, path+"(json)") {
					out = append(out, mutation{m.path, m.kind, encode(m.value)})
				}
			}
		}
	}
	return out
}

// sortedReplacements iterates replacements in a fixed order.
func sortedReplacements(v any) func(func(string, any) bool) {
	r := replacements(v)
	return func(yield func(string, any) bool) {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !yield(k, r[k]) {
				return
			}
		}
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// goTypeNames matches what no message may hold: the names Go gives types,
// as decoders write them. The module's own types come from its source,
// parsed here, so the test does not trust the code it checks.
func goTypeNames(t *testing.T) *regexp.Regexp {
	t.Helper()
	typesOf := map[string]map[string]bool{} // package name → its types
	imported := map[string]bool{}
	fset := token.NewFileSet()
	require.NoError(t, filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "../.." || d.Name() == "testdata" || d.Name() == "python") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		if typesOf[pkg] == nil {
			typesOf[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					typesOf[pkg][s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := filepath.Base(path)
			if regexp.MustCompile(`^v\d+$`).MatchString(name) {
				name = filepath.Base(filepath.Dir(path))
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if regexp.MustCompile(`^[a-z][a-z0-9]*$`).MatchString(name) {
				imported[name] = true
			}
		}
		return nil
	}))
	var module []string
	for pkg, types := range typesOf {
		for name := range types {
			module = append(module, regexp.QuoteMeta(pkg+"."+name))
		}
	}
	sort.Strings(module)
	var std []string
	for name := range imported {
		std = append(std, name)
	}
	sort.Strings(std)
	require.NotEmpty(t, module)
	patterns := []string{
		`Go struct field`, `Go value of type`, `\binto Go\b`,
		`\binterface ?\{`, `\bstruct ?\{`, `\bmap\[`, `\bfunc\(`,
		`\[\][A-Za-z*\[]`,   // a slice type: []conversation.Message, []string
		`\*[a-z]\w*\.[A-Z]`, // a pointer type: *json.SyntaxError
		`\breflect\.`,
		`%!`, // a formatting verb gone wrong
		`\b(?:` + strings.Join(module, "|") + `)\b`,
		`\b(?:` + strings.Join(std, "|") + `)\.[A-Z]\w*`,
	}
	return regexp.MustCompile(strings.Join(patterns, "|"))
}

// TestGoTypeNamesAreFound keeps the oracle honest: the messages the issue
// reported are caught, messages in the user's words are not.
func TestGoTypeNamesAreFound(t *testing.T) {
	re := goTypeNames(t)
	for _, s := range []string{
		"json: cannot unmarshal number into Go struct field rawRow.id of type string",
		"cannot unmarshal object into []conversation.Message",
		"cannot unmarshal array into map[string]interface {}",
		"json: cannot unmarshal array into Go value of type puzzles.publishedRecord",
		"line 1: eval.rawRow",
		"want a json.RawMessage",
		"got *json.SyntaxError",
		"%!v(MISSING)",
		"a struct { ID string }",
	} {
		assert.Regexp(t, re, s)
	}
	for _, s := range []string{
		"--input in.jsonl: record 12 (line 12, id flight_3): history[2].content: want a string, got 7",
		"--data rows.parquet: row 3: prompt: want a list of messages, got a string",
		"out/pairs.parquet: 16 pairs written (jsonl, 30.1 KiB)",
		"year_range: want [first, last] years, have []",
		"e.g. 0/4",
	} {
		assert.NotRegexp(t, re, s)
	}
}

// malformedRows are Parquet and Arrow files whose columns have the types
// of a hasty export: text where a list of messages belongs, numbers for
// names, lists for scalars; and files that are not what their extension
// says.
func malformedRows(t *testing.T) []corpusFile {
	t.Helper()
	str, i64, f64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	field := func(name string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true}
	}
	tables := []struct {
		name   string
		fields []arrow.Field
		rows   string
	}{
		{"text-columns", []arrow.Field{field("data_source", str), field("prompt", str), field("reward_model", str), field("extra_info", str),
			field("id", str), field("question", str), field("chosen", str), field("rejected", str), field("tools", str), field("label", str)},
			`[{"data_source": "timely/general", "prompt": "[{\"role\": \"user\", \"content\": \"hi\"}]", "reward_model": "{\"ground_truth\": \"1\"}",
			  "extra_info": "{}", "id": "a", "question": "q", "chosen": "[]", "rejected": "[]", "tools": "[]", "label": "tool"}]`},
		{"number-columns", []arrow.Field{field("data_source", i64), field("prompt", i64), field("reward_model", f64), field("extra_info", i64),
			field("id", i64), field("question", i64), field("constraints", i64), field("solutions", i64), field("elapse", f64), field("label", i64)},
			`[{"data_source": 1, "prompt": 2, "reward_model": 3.5, "extra_info": 4, "id": 5, "question": 6, "constraints": 7, "solutions": 8, "elapse": 1.5, "label": 0}]`},
		{"nested-wrong-types", []arrow.Field{field("data_source", arrow.ListOf(str)),
			field("prompt", arrow.ListOf(arrow.StructOf(field("role", i64), field("content", arrow.ListOf(i64))))),
			field("reward_model", arrow.StructOf(field("ground_truth", arrow.ListOf(f64)))),
			field("extra_info", arrow.StructOf(field("time_limit_s", str), field("id", arrow.ListOf(str)), field("index", str))),
			field("id", arrow.StructOf(field("a", str))), field("question", arrow.ListOf(str)),
			field("chosen", arrow.ListOf(arrow.StructOf(field("role", i64)))), field("constraints_meta", arrow.ListOf(str))},
			`[{"data_source": ["timely/general"], "prompt": [{"role": 1, "content": [2]}], "reward_model": {"ground_truth": [1.5]},
			  "extra_info": {"time_limit_s": "ten", "id": ["x"], "index": "0"}, "id": {"a": "b"}, "question": ["q"],
			  "chosen": [{"role": 3}], "constraints_meta": ["x"]}]`},
	}
	var out []corpusFile
	for _, tb := range tables {
		schema := arrow.NewSchema(tb.fields, nil)
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(tb.rows))
		require.NoError(t, err, tb.name)
		for _, f := range []*dataset.Format{dataset.Parquet, dataset.ArrowIPC} {
			var buf bytes.Buffer
			w, err := f.NewWriter(&buf, schema, dataset.Options{})
			require.NoError(t, err)
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
			name := "rows/" + tb.name + f.Extensions[0]
			out = append(out, corpusFile{name, buf.String()})
			if tb.name == "text-columns" {
				out = append(out, corpusFile{"rows/truncated" + f.Extensions[0], buf.String()[:buf.Len()/2]})
			}
		}
		rec.Release()
	}
	out = append(out, corpusFile{"rows/jsonl-named-parquet.parquet", `{"data_source": "timely/general"}` + "\n"},
		corpusFile{"rows/jsonl-named-arrow.arrow", `{"data_source": "timely/general"}` + "\n"})
	return out
}

// TestFlagValuesAreSaidOnce gives flags values they refuse: the message
// names the flag and its value once ("--family x: family is not …", not
// `--family x: family "x" is not …`), and no Go type name.
func TestFlagValuesAreSaidOnce(t *testing.T) {
	goNames := goTypeNames(t)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	const bad = "zz9/x"
	budget := []string{"synth", "budget", "--input", budgetTasks, "--family", "general", "--seed", "1", "--out", out}
	puzzles := []string{"synth", "puzzles", "--count", "2", "--seed", "1", "--out", out}
	traveler := []string{"synth", "traveler", "--count", "2", "--seed", "1", "--out", out}
	stamps := []string{"synth", "timestamps", "--input", demoTrajectories, "--seed", "1", "--out", out}
	pairs := []string{"pairs", "build", "--input", demoTrajectories, "--out", out}
	evalRun := []string{"eval", "run", "--data", "../../examples/eval/length.jsonl", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out", out}
	tests := []struct {
		args  []string
		flag  string
		value string
		env   map[string]string
	}{
		{args: pairs, flag: "shard", value: "5/4"},
		{args: pairs, flag: "shard"},
		{args: pairs, flag: "split"},
		{args: pairs, flag: "time-format"},
		{args: pairs, flag: "format"},
		{args: pairs, env: map[string]string{"TIMEAWARE_PAIRS_TIME_FORMAT": bad}},
		{args: []string{"synth", "budget", "--input", budgetTasks, "--seed", "1", "--out", out}, flag: "family"},
		{args: budget, flag: "unit"},
		{args: append(slicesClone(budget), "--unit", "tokens"), flag: "reward"},
		{args: append(slicesClone(budget), "--unit", "tokens"), flag: "token-budgets"},
		{args: append(slicesClone(budget), "--unit", "tokens"), flag: "token-budget-range"},
		{args: budget, flag: "shard"},
		{args: []string{"synth", "negotiation", "--count", "2", "--seed", "1", "--out", out}, flag: "condition"},
		{args: puzzles, flag: "years"},
		{args: puzzles, flag: "solutions"},
		{args: puzzles, flag: "disputed"},
		{args: puzzles, flag: "year-set-reading"},
		{args: puzzles, flag: "shard"},
		{args: traveler, flag: "events"},
		{args: traveler, flag: "categories"},
		{args: traveler, flag: "templates"},
		{args: stamps, flag: "mode"},
		{args: stamps, flag: "start"},
		{args: stamps, flag: "sensitivity"},
		{args: []string{"score", "--input", scorePuzzles}, flag: "data-source"},
		{args: []string{"score", "--input", scorePuzzles}, flag: "shard"},
		{args: []string{"splits", "check", "--train", splitsTrain, "--test", splitsTest}, flag: "preset"},
		{args: []string{"splits", "check", "--train", splitsTrain, "--test", splitsTest, "--text", "question"}, flag: "group"},
		{args: []string{"eval", "nar", "--input", evalDecisions}, flag: "by"},
		{args: evalRun, flag: "tool-choice"},
		{args: evalRun, flag: "endpoint"},
		{args: []string{"demo", "--out", filepath.Join(t.TempDir(), "demo")}, flag: "format"},
		{args: []string{"serve"}, flag: "addr"},
		{args: pairs, flag: "seed", value: "abc"},
	}
	for _, tt := range tests {
		value := tt.value
		if value == "" {
			value = bad
		}
		args := slicesClone(tt.args)
		if tt.flag != "" {
			args = append(args, "--"+tt.flag, value)
		}
		t.Run(strings.Join(args[:2], " ")+" --"+tt.flag, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, stdout, stderr := runCLI(t, args...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			line := firstLine(stderr)
			if tt.flag != "" {
				assert.Contains(t, line, "--"+tt.flag+" "+value+": ", "the flag and its value lead the reason")
			}
			assert.Equal(t, 1, strings.Count(line, value), "the value is said once: %s", line)
			assert.NotRegexp(t, goNames, stderr+stdout)
		})
	}
}

// TestMessageSaysDecoderErrorsInJSONWords: a decoder's error that reaches
// a command as the decoder wrote it is said in JSON's (or YAML's) words.
func TestMessageSaysDecoderErrorsInJSONWords(t *testing.T) {
	var v struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	var m map[string]any
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"encoding/json", json.Unmarshal([]byte(`{"messages": [{"content": 5}]}`), &v), "messages.content: want a string, got a number"},
		{"goccy/go-json", gojson.Unmarshal([]byte(`{"messages": [{"content": 5}]}`), &v), "messages[0].content: want a string, got a number"},
		{"the whole value", json.Unmarshal([]byte(`[1]`), &m), "want an object, got a list"},
		{"yaml", yaml.Unmarshal([]byte("- 1\n"), &m), "line 1: want a mapping, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.Equal(t, "--input f.jsonl: line 3: "+tt.want, message(fmt.Errorf("--input f.jsonl: line 3: %w", tt.err)))
		})
	}
}
