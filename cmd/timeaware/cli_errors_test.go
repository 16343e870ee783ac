package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Inputs the repository ships, relative to the package directory.
const (
	budgetTasks   = "../../examples/budget/tasks.jsonl"
	budgetTraces  = "../../examples/budget/traces.jsonl"
	scorePuzzles  = "../../examples/score/puzzles.jsonl"
	evalDecisions = "../../examples/eval/decisions.jsonl"
	splitsTrain   = "../../examples/splits/train.jsonl"
	splitsTest    = "../../examples/splits/test.jsonl"
	publishedPzl  = "../../examples/puzzles/published_sample.json"
)

// TestCommandsNeverPassByMistake: a misspelt command, a group without its
// command, a misspelt flag: each is a usage error (exit 2) that names the
// word typed, suggests the close ones, and points at the help of the
// command the user reached. None of these may exit 0, since a CI job
// running the gate would then pass without checking anything.
func TestCommandsNeverPassByMistake(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the first line of stderr, whole
		help string // the command the hint names
	}{
		{"misspelt gate", []string{"splits", "chek", "out/pairs.parquet.manifest.json"},
			`unknown command "chek" for "timeaware splits"; did you mean "check"?`, "timeaware splits"},
		{"misspelt synth command", []string{"synth", "puzles"},
			`unknown command "puzles" for "timeaware synth"; did you mean "puzzles"?`, "timeaware synth"},
		{"misspelt command with its flags", []string{"synth", "puzles", "--count", "10", "--seed", "1", "--out", "p.jsonl"},
			`unknown command "puzles" for "timeaware synth"; did you mean "puzzles"?`, "timeaware synth"},
		{"misspelt top-level command", []string{"evl", "nar"},
			`unknown command "evl" for "timeaware"; did you mean "eval"?`, "timeaware"},
		{"a prefix", []string{"synth", "puz"},
			`unknown command "puz" for "timeaware synth"; did you mean "puzzles"?`, "timeaware synth"},
		{"nothing close", []string{"eval", "frobnicate"},
			`unknown command "frobnicate" for "timeaware eval"`, "timeaware eval"},
		{"group alone", []string{"splits"},
			`"timeaware splits" needs a command: one of check, contamination`, "timeaware splits"},
		{"synth alone", []string{"synth"},
			`"timeaware synth" needs a command: one of budget, distill, negotiation, puzzles, sft, timestamps, traveler`, "timeaware synth"},
		{"root alone", nil,
			`"timeaware" needs a command: one of benchmarks, completion, config, demo, eval, pairs, score, serve, splits, synth`, "timeaware"},
		{"misspelt flag", []string{"pairs", "build", "--inptu", "x.jsonl"},
			`unknown flag --inptu; did you mean --input?`, "timeaware pairs build"},
		{"misspelt flag, two close", []string{"splits", "check", "--tset", "x"},
			`unknown flag --tset; did you mean --test?`, "timeaware splits check"},
		{"unknown flag, nothing close", []string{"score", "--frobnicate"},
			`unknown flag --frobnicate`, "timeaware score"},
		{"bad flag value", []string{"pairs", "build", "--seed", "abc"},
			`--seed abc: want a whole number`, "timeaware pairs build"},
		{"flag without its value", []string{"score", "--input"},
			`--input needs a value`, "timeaware score"},
		{"argument to a command that takes none", []string{"pairs", "build", "extra"},
			`"timeaware pairs build" takes no arguments; got "extra"`, "timeaware pairs build"},
		{"misspelt subcommand of a command that runs", []string{"synth", "puzzles", "solv"},
			`unknown command "solv" for "timeaware synth puzzles"; did you mean "solve"?`, "timeaware synth puzzles"},
		{"misspelt shell", []string{"completion", "bsh"},
			`unknown command "bsh" for "timeaware completion"; did you mean "bash" or "zsh"?`, "timeaware completion"},
		{"completion alone", []string{"completion"},
			`"timeaware completion" needs a command: one of bash, fish, powershell, zsh`, "timeaware completion"},
		{"help on no command", []string{"help", "chek"},
			`unknown command "chek" for "timeaware"`, "timeaware help"},
		{"help on a misspelt subcommand", []string{"help", "synth", "puzzles", "solv"},
			`unknown command "solv" for "timeaware synth puzzles"; did you mean "solve"?`, "timeaware help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Empty(t, stdout, "a usage error prints no help on stdout")
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			require.Len(t, lines, 2, "stderr: %s", stderr)
			assert.Equal(t, "timeaware: "+tt.want, lines[0])
			assert.Equal(t, "Run '"+tt.help+" --help' for usage.", lines[1])
		})
	}
}

// TestErrorsNameTheirSource: a bad value is reported as the user set it:
// the flag, the TIMEAWARE_* variable, or the config file and key; never as
// a flag the user did not type.
func TestErrorsNameTheirSource(t *testing.T) {
	unsetenv(t, "TIMEAWARE_PAIRS_TIME_FORMAT")
	unsetenv(t, "TIMEAWARE_PAIRS_MIN_MARGIN")
	unsetenv(t, "TIMEAWARE_SPLITS_BANDS")
	tmp := t.TempDir()
	badFile := writeFile(t, filepath.Join(tmp, "bad.yaml"), "pairs:\n  time_format: utc\n")
	typoFile := writeFile(t, filepath.Join(tmp, "typo.yaml"), "pairs:\n  time_fromat: iso\n")
	typeFile := writeFile(t, filepath.Join(tmp, "type.yaml"), "pairs:\n  min_margin: lots\n")
	out := filepath.Join(tmp, "pairs.parquet")
	build := []string{"pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes, "--direct-answers", demoDirect, "--out", out}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"flag", nil, append(slicesClone(build), "--time-format", "utc"),
			`--time-format utc: unknown time format (want none, iso or iso_delta)`},
		{"variable", map[string]string{"TIMEAWARE_PAIRS_TIME_FORMAT": "utc"}, build,
			`TIMEAWARE_PAIRS_TIME_FORMAT=utc: unknown time format (want none, iso or iso_delta)`},
		{"config file", nil, append([]string{"--config", badFile}, build...),
			`--config ` + badFile + `: pairs.time_format utc: unknown time format (want none, iso or iso_delta)`},
		{"the flag wins over the file", nil, append(append([]string{"--config", badFile}, build...), "--time-format", "none"), ""},
		{"misspelt config key", nil, append([]string{"--config", typoFile}, build...),
			`--config ` + typoFile + `: unknown key pairs.time_fromat; did you mean pairs.time_format?`},
		{"wrong type in the file", nil, append([]string{"--config", typeFile}, build...),
			`--config ` + typeFile + `: pairs.min_margin lots: want a finite number`},
		{"wrong type in a variable", map[string]string{"TIMEAWARE_PAIRS_MIN_MARGIN": "abc"}, build,
			`TIMEAWARE_PAIRS_MIN_MARGIN=abc: want a finite number`},
		{"range from a variable", map[string]string{"TIMEAWARE_PAIRS_MIN_MARGIN": "2"}, build,
			`TIMEAWARE_PAIRS_MIN_MARGIN=2: want a margin from 0 to 1.5`},
		{"range from a flag", nil, append(slicesClone(build), "--min-margin", "2"),
			`--min-margin 2: want a margin from 0 to 1.5`},
		{"gate option from a variable", map[string]string{"TIMEAWARE_SPLITS_BANDS": "7"},
			[]string{"splits", "check", "--train", splitsTrain, "--test", splitsTest},
			`TIMEAWARE_SPLITS_BANDS=7: want a divisor of the permutations (128)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, tt.args...)
			if tt.want == "" {
				assert.Equal(t, exitOK, code, "stderr: %s", stderr)
				return
			}
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Equal(t, "timeaware: "+tt.want, firstLine(stderr))
			assert.Contains(t, stderr, "Run 'timeaware ")
		})
	}
}

// TestErrorsHaveOneShape runs every command on a missing input, a
// malformed one and an output it cannot write: the message is "--flag
// PATH: reason" (or "PATH: reason" for an argument), without the names of
// the library packages, and the exit code is the documented one: 3 for a
// file that cannot be read or written, 1 for bad data.
func TestErrorsHaveOneShape(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing.jsonl")
	notJSON := writeFile(t, filepath.Join(tmp, "notjson.jsonl"), "not json\n")
	aFile := writeFile(t, filepath.Join(tmp, "plain"), "x\n")
	badCatalog := writeFile(t, filepath.Join(tmp, "catalog.yaml"), "scenarios:\n  - {name: Alpha, sensitivity: low, io: read_only, paper_split: train,\n     aliases: alpha}\n")
	pzl := filepath.Join(tmp, "p.jsonl")
	// The example votes with the first line's elapse written as a float, as
	// a spreadsheet export writes it.
	votes, err := os.ReadFile(demoVotes)
	require.NoError(t, err)
	floatVotes := writeFile(t, filepath.Join(tmp, "votes.jsonl"), strings.Replace(string(votes), `"elapse": 0`, `"elapse": 1.0`, 1))
	tests := []struct {
		name string
		args []string
		code int
		want string // a regexp of the first line after "timeaware: "
	}{
		{"pairs input", []string{"pairs", "build", "--input", missing, "--out", pzl}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"pairs annotations", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", missing, "--out", pzl}, exitIO,
			`--annotations ` + missing + `: no such file or directory`},
		{"pairs direct answers", []string{"pairs", "build", "--input", demoTrajectories, "--direct-answers", missing, "--out", pzl}, exitIO,
			`--direct-answers ` + missing + `: no such file or directory`},
		{"pairs bad record", []string{"pairs", "build", "--input", notJSON, "--out", pzl}, exitData,
			`--input ` + notJSON + `: record 1 \(line 1\): .+`},
		{"pairs bad votes", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", notJSON, "--out", pzl}, exitData,
			`--annotations ` + notJSON + `: line 1: .+`},
		{"pairs float elapse", []string{"pairs", "build", "--input", demoTrajectories, "--annotations", floatVotes, "--out", pzl}, exitData,
			`--annotations ` + floatVotes + `: line 1 \(sample_id flight_status_1\): elapse: want 0, 1 or 2 written as a single digit, got 1\.0$`},
		{"pairs catalog", []string{"pairs", "build", "--input", demoTrajectories, "--catalog", badCatalog, "--out", pzl}, exitData,
			`--catalog ` + badCatalog + `:2: scenario 1 \(Alpha\): line 3: want a list, got "alpha"$`},
		{"gate argument", []string{"splits", "check", missing}, exitIO,
			missing + `: no such file or directory`},
		{"gate train", []string{"splits", "check", "--train", missing, "--test", splitsTest}, exitIO,
			`--train ` + missing + `: no such file or directory`},
		{"gate bad rows", []string{"splits", "check", "--train", notJSON, "--test", splitsTest}, exitData,
			`--train ` + notJSON + `: line 1: .+`},
		{"timestamps input", []string{"synth", "timestamps", "--input", missing, "--seed", "1", "--out", pzl}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"timestamps bad record", []string{"synth", "timestamps", "--input", notJSON, "--seed", "1", "--out", pzl}, exitData,
			`--input ` + notJSON + `: record 1 \(line 1\): .+`},
		{"budget input", []string{"synth", "budget", "--input", missing, "--family", "general", "--seed", "1", "--out", pzl}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"budget bad task", []string{"synth", "budget", "--input", notJSON, "--family", "general", "--seed", "1", "--out", pzl}, exitData,
			`--input ` + notJSON + `: line 1: .+`},
		{"sft traces", []string{"synth", "sft", "--traces", missing, "--out", pzl}, exitIO,
			`--traces ` + missing + `: no such file or directory`},
		{"sft bad traces", []string{"synth", "sft", "--traces", notJSON, "--out", pzl}, exitData,
			`--traces ` + notJSON + `: line 1: .+`},
		{"puzzles solve", []string{"synth", "puzzles", "solve", missing}, exitIO,
			missing + `: no such file or directory`},
		{"puzzles bad solve", []string{"synth", "puzzles", "solve", notJSON}, exitData,
			notJSON + `: line 1: .+`},
		{"puzzles import", []string{"synth", "puzzles", "import-published", missing, "--out", pzl}, exitIO,
			missing + `: no such file or directory`},
		{"puzzles kb", []string{"synth", "puzzles", "--count", "2", "--seed", "1", "--kb", missing, "--out", pzl}, exitIO,
			`--kb ` + missing + `: no such file or directory`},
		{"negotiation scenarios", []string{"synth", "negotiation", "--count", "2", "--seed", "1", "--scenario", missing, "--out", pzl}, exitIO,
			`--scenario ` + missing + `: no such file or directory`},
		{"score input", []string{"score", "--data-source", "timepuzzles", "--input", missing}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"nar input", []string{"eval", "nar", "--input", missing}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"nar bad line", []string{"eval", "nar", "--input", notJSON}, exitData,
			`--input ` + notJSON + `: line 1: .+`},
		{"eval run data", []string{"eval", "run", "--data", missing, "--out", pzl, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"}, exitIO,
			`--data ` + missing + `: no such file or directory`},
		{"eval compare argument", []string{"eval", "compare", missing, notJSON}, exitIO,
			missing + `: no such file or directory`},
		{"eval compare bad results", []string{"eval", "compare", notJSON, notJSON}, exitData,
			notJSON + `: line 1: .+`},
		{"distill input", []string{"synth", "distill", "--input", missing, "--out", pzl, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"}, exitIO,
			`--input ` + missing + `: no such file or directory`},
		{"demo output", []string{"demo", "--out", filepath.Join(aFile, "demo")}, exitIO,
			`--out ` + filepath.Join(aFile, "demo") + `: ` + aFile + ` is not a directory`},
		{"config file", []string{"--config", missing, "score", "--data-source", "timepuzzles", "--input", scorePuzzles}, exitIO,
			`--config ` + missing + `: no such file or directory`},
		// An --out that names a directory is an output that cannot be
		// written, found before any work (exit 1 or a rename error before).
		{"score out is a directory", []string{"score", "--data-source", "timepuzzles", "--input", scorePuzzles, "--out", tmp}, exitIO,
			`--out ` + tmp + `: is a directory; name a file$`},
		{"pairs out is a directory", []string{"pairs", "build", "--input", demoTrajectories, "--format", "jsonl", "--out", tmp}, exitIO,
			`--out ` + tmp + `: is a directory; name a file$`},
		{"synth out is a directory", []string{"synth", "puzzles", "--count", "2", "--seed", "1", "--format", "jsonl", "--out", tmp}, exitIO,
			`--out ` + tmp + `: is a directory; name a file$`},
	}
	packageName := regexp.MustCompile(`(^|[: ])(` + strings.Join(internalPackages, "|") + `): `)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			line := firstLine(stderr)
			assert.Regexp(t, `^timeaware: `+tt.want+`$`, line)
			assert.NotRegexp(t, packageName, line, "a library package's name reaches the user")
			if tt.code != exitUsage {
				assert.NotContains(t, stderr, "--help' for usage", "only a usage error points at the help")
			}
			assert.NoFileExists(t, pzl, "a failed run writes nothing")
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestInternalPackagesAreTheLibraries keeps internalPackages, whose names
// the CLI drops from error messages, in step with the module's library
// packages: a new package's prefix must not reach users.
func TestInternalPackagesAreTheLibraries(t *testing.T) {
	// Packages whose errors never reach a command's output: the embedded
	// examples, and the docs' example runner (a test tool).
	notLibraries := map[string]bool{"main": true, "examples": true, "docexamples": true}
	decl := regexp.MustCompile(`(?m)^package (\w+)`)
	found := map[string]bool{}
	require.NoError(t, filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "../.." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if m := decl.FindSubmatch(b); m != nil && !notLibraries[string(m[1])] {
			found[string(m[1])] = true
		}
		return nil
	}))
	assert.ElementsMatch(t, keysOf(found), internalPackages)
}
