package main

// The leakage gate on any dataset: the planted leaks a user's CI must
// catch, clean splits of every synth output and of a generic JSONL, the
// ways a dataset's sides and columns are given, and an outside evaluation
// set.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/internal/output"
)

// gateRun runs splits check --json with args and returns the exit code and
// report.
func gateRun(t *testing.T, args ...string) (int, fullReport, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"splits", "check", "--json"}, args...)...)
	var rep fullReport
	if (code == 0 || code == 1) && stdout != "" {
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "stdout: %s\nstderr: %s", stdout, stderr)
	}
	return code, rep, stderr
}

type fullReport struct {
	Passed bool          `json:"passed"`
	Checks []checkResult `json:"checks"`
	Splits map[string]struct {
		Rows   int `json:"rows"`
		Groups int `json:"groups"`
	} `json:"splits"`
	Columns struct {
		Preset string   `json:"preset"`
		Text   []string `json:"text"`
		Group  string   `json:"group"`
	} `json:"columns"`
}

type checkResult struct {
	Name     string `json:"name"`
	Status   string `json:"status"`
	Summary  string `json:"summary"`
	Count    int    `json:"count"`
	Findings []struct {
		Message string   `json:"message"`
		IDs     []string `json:"ids"`
		File    string   `json:"file"`
		Row     int      `json:"row"`
	} `json:"findings"`
}

// failing lists the checks that failed.
func (r fullReport) failing() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == "fail" {
			out = append(out, c.Name)
		}
	}
	return out
}

func (r fullReport) check(name string) checkResult {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return checkResult{}
}

// readJSONL reads the rows of a JSONL file as maps.
func readJSONL(t *testing.T, path string) []jsonRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []jsonRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r jsonRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	return rows
}

// questions writes a generic question dataset: n questions of 40 words in
// topics of 5, the topics of every third group of five on the test side.
func questions(t *testing.T, dir string, n int) (train, test string, trainRows, testRows []jsonRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range n {
		var words []string
		for range 40 {
			words = append(words, fmt.Sprintf("w%d", rng.IntN(50000)))
		}
		r := jsonRow{"id": fmt.Sprintf("q%03d", i), "topic": fmt.Sprintf("topic-%d", i/5),
			"question": strings.Join(words, " "), "answer": fmt.Sprint(i)}
		if (i/5)%3 == 2 {
			testRows = append(testRows, r)
		} else {
			trainRows = append(trainRows, r)
		}
	}
	return writeRows(t, filepath.Join(dir, "questions-train.jsonl"), trainRows),
		writeRows(t, filepath.Join(dir, "questions-test.jsonl"), testRows), trainRows, testRows
}

var genericColumns = []string{"--text", "question", "--group", "topic", "--id", "id"}

func TestSplitsCheckPlantedLeaksAreNamed(t *testing.T) {
	t.Run("a train row copied into the test file, its split unchanged", func(t *testing.T) {
		train, test := splitFixture(t)
		copied := train[7]
		test = append(test, copied)
		dir := t.TempDir()
		a := writeRows(t, filepath.Join(dir, "pairs-train.jsonl"), train)
		b := writeRows(t, filepath.Join(dir, "pairs-test.jsonl"), test)
		code, rep, stderr := gateRun(t, a, b)
		assert.Equal(t, 1, code, stderr)
		assert.ElementsMatch(t, []string{"split_label", "duplicate_ids", "group_disjoint", "exact_duplicates"}, rep.failing())
		id := fmt.Sprintf("%s (elapse %v)", copied["id"], copied["elapse"])
		lbl := rep.check("split_label")
		require.Len(t, lbl.Findings, 1)
		assert.Equal(t, b, lbl.Findings[0].File)
		assert.Equal(t, len(test), lbl.Findings[0].Row)
		assert.Equal(t, []string{id}, lbl.Findings[0].IDs)
		assert.Equal(t, fmt.Sprintf(`%s (%s row %d) says split "train", but its file is on the test side`, id, b, len(test)), lbl.Findings[0].Message)
		ids := rep.check("duplicate_ids")
		require.Len(t, ids.Findings, 1)
		assert.Equal(t, fmt.Sprintf("id %s is at %s row 8 and again at %s row %d", id, a, b, len(test)), ids.Findings[0].Message)
	})
	t.Run("the same row twice in test", func(t *testing.T) {
		train, test := splitFixture(t)
		test = append(test, test[3])
		dir := t.TempDir()
		a := writeRows(t, filepath.Join(dir, "pairs-train.jsonl"), train)
		b := writeRows(t, filepath.Join(dir, "pairs-test.jsonl"), test)
		code, rep, _ := gateRun(t, a, b)
		assert.Equal(t, 1, code)
		assert.Equal(t, []string{"duplicate_ids"}, rep.failing())
		f := rep.check("duplicate_ids").Findings[0]
		assert.Equal(t, b, f.File)
		assert.Equal(t, len(test), f.Row)
		assert.Contains(t, f.Message, fmt.Sprintf("is at %s row 4 and again at %s row %d", b, b, len(test)))
	})
	t.Run("a group on both sides of a generic JSONL", func(t *testing.T) {
		dir := t.TempDir()
		_, _, trainRows, testRows := questions(t, dir, 60)
		testRows[4]["topic"] = trainRows[0]["topic"]
		a := writeRows(t, filepath.Join(dir, "questions-train.jsonl"), trainRows)
		b := writeRows(t, filepath.Join(dir, "questions-test.jsonl"), testRows)
		code, rep, _ := gateRun(t, append([]string{a, b}, genericColumns...)...)
		assert.Equal(t, 1, code)
		assert.Equal(t, []string{"group_disjoint"}, rep.failing())
		f := rep.check("group_disjoint").Findings[0]
		assert.Equal(t, fmt.Sprintf(`topic "topic-0" is in train (q000, %s row 1) and test (%s, %s row 5)`, a, testRows[4]["id"], b), f.Message)
		assert.Equal(t, []string{"q000", testRows[4]["id"].(string)}, f.IDs)
	})
	t.Run("a train question copied into test under another id and group", func(t *testing.T) {
		dir := t.TempDir()
		_, _, trainRows, testRows := questions(t, dir, 60)
		testRows = append(testRows, jsonRow{"id": "new-id", "topic": "new-topic", "question": strings.ToUpper(trainRows[11]["question"].(string)), "answer": "x"})
		a := writeRows(t, filepath.Join(dir, "questions-train.jsonl"), trainRows)
		b := writeRows(t, filepath.Join(dir, "questions-test.jsonl"), testRows)
		code, rep, _ := gateRun(t, append([]string{a, b}, genericColumns...)...)
		assert.Equal(t, 1, code)
		assert.Equal(t, []string{"exact_duplicates"}, rep.failing())
		f := rep.check("exact_duplicates").Findings[0]
		assert.Equal(t, fmt.Sprintf("train %s (%s row 12) duplicates test new-id (%s row %d) after normalisation", trainRows[11]["id"], a, b, len(testRows)), f.Message)
		assert.Equal(t, a, f.File)
	})
	t.Run("a near-duplicate budget row", func(t *testing.T) {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(9, 9))
		var tasks strings.Builder
		for i := range 40 {
			var words []string
			for range 60 {
				words = append(words, fmt.Sprintf("w%d", rng.IntN(40000)))
			}
			fmt.Fprintf(&tasks, `{"id": "task-%02d", "question": %q, "answer": %d}`+"\n", i, strings.Join(words, " "), i)
		}
		in := writeFile(t, filepath.Join(dir, "tasks.jsonl"), tasks.String())
		out := filepath.Join(dir, "rl.jsonl")
		code, _, stderr := runCLI(t, "synth", "budget", "--input", in, "--family", "general", "--seed", "4", "--test-fraction", "0.25", "--out", out)
		require.Equal(t, 0, code, stderr)
		trainPath, testPath := filepath.Join(dir, "rl-train.jsonl"), filepath.Join(dir, "rl-test.jsonl")
		code, rep, _ := gateRun(t, trainPath, testPath)
		require.Equal(t, 0, code, "the clean split passes: %v", rep.failing())
		assert.Equal(t, "budget", rep.Columns.Preset)

		trainRows, testRows := readJSONL(t, trainPath), readJSONL(t, testPath)
		src := trainRows[2]["prompt"].([]any)[1].(map[string]any)["content"].(string)
		words := strings.Fields(src)
		words[5] = "changedword"
		testRows[0]["prompt"].([]any)[1].(map[string]any)["content"] = strings.Join(words, " ")
		writeRows(t, testPath, testRows)
		code, rep, _ = gateRun(t, trainPath, testPath)
		assert.Equal(t, 1, code)
		assert.Equal(t, []string{"near_duplicates"}, rep.failing())
		f := rep.check("near_duplicates").Findings[0]
		assert.Contains(t, f.Message, fmt.Sprintf("train %s (%s row 3) is a near-duplicate of test %s (%s row 1)",
			trainRows[2]["extra_info"].(map[string]any)["request_id"], trainPath, testRows[0]["extra_info"].(map[string]any)["request_id"], testPath))
	})
}

// TestPuzzleSplitNeedsTwoEvents: the puzzles split is by knowledge-base
// event, so a base of one event cannot be split, and says so.
func TestPuzzleSplitNeedsTwoEvents(t *testing.T) {
	dir := t.TempDir()
	kb := writeFile(t, filepath.Join(dir, "kb.csv"), "event,start,end\nthe opening of the Channel Tunnel,1994-05-06,\n")
	out := filepath.Join(dir, "p.jsonl")
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", "10", "--seed", "1", "--kb", kb, "--test-fraction", "0.3", "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--test-fraction: the split is by knowledge-base event: a split needs at least two units, got 1")
	assert.NoFileExists(t, out)
	assert.NoFileExists(t, output.SidePath(out, "train"))
}

// TestSplitsCheckCleanSynthSplitsPass: every synth output written with
// --test-fraction passes the gate, from its manifest and from its two
// files, in Parquet and JSONL.
func TestSplitsCheckCleanSynthSplitsPass(t *testing.T) {
	dir := t.TempDir()
	scenarios := "../../examples/negotiation/scenarios.yaml"
	for _, tc := range []struct {
		name, preset, unit string
		args               []string
	}{
		{"budget", "budget", "task", []string{"synth", "budget", "--input", demoTasks, "--family", "general", "--seed", "2", "--every-multiplier"}},
		// Enough puzzles that near-twins about one event occur (with the
		// answer set as the unit, 2,000 puzzles gave 21 straddling pairs).
		{"puzzles", "puzzles", "event", []string{"synth", "puzzles", "--count", "3000", "--seed", "2"}},
		{"traveler", "traveler", "event set", []string{"synth", "traveler", "--count", "200", "--seed", "2"}},
		{"negotiation", "negotiation", "scenario", []string{"synth", "negotiation", "--count", "120", "--seed", "2", "--scenario", scenarios}},
	} {
		for _, ext := range []string{"parquet", "jsonl"} {
			t.Run(tc.name+"/"+ext, func(t *testing.T) {
				out := filepath.Join(dir, tc.name+"."+ext)
				code, stdout, stderr := runCLI(t, append(tc.args, "--test-fraction", "0.3", "--out", out)...)
				require.Equal(t, 0, code, stderr)
				assert.Contains(t, stdout, "split: ")
				assert.NoFileExists(t, out)
				train, test := output.SidePath(out, "train"), output.SidePath(out, "test")
				for _, args := range [][]string{{out + ".manifest.json"}, {train, test}, {"--train", train, "--test", test}} {
					code, rep, stderr := gateRun(t, args...)
					assert.Equal(t, 0, code, "%v: %v %s", args, rep.failing(), stderr)
					assert.Equal(t, tc.preset, rep.Columns.Preset)
					assert.Positive(t, rep.Splits["train"].Rows)
					assert.Positive(t, rep.Splits["test"].Rows)
					for _, c := range rep.Checks {
						if c.Name == "split_label" || c.Name == "group_disjoint" || c.Name == "duplicate_ids" {
							assert.Equal(t, "pass", c.Status, "%s runs on %s output", c.Name, tc.name)
						}
					}
				}
				// The manifest's target applies, within what a split by
				// units can reach.
				_, rep, _ := gateRun(t, out+".manifest.json")
				assert.NotEqual(t, "skipped", rep.check("test_fraction").Status)
				assert.Contains(t, rep.check("test_fraction").Summary, "target 0.300")
				// The manifest says what the split is by, and counts the
				// units and rows of each side.
				raw, err := os.ReadFile(out + ".manifest.json")
				require.NoError(t, err)
				var m struct {
					Summary struct {
						Split struct {
							Unit  string         `json:"unit"`
							Rows  map[string]int `json:"rows"`
							Units map[string]int `json:"units"`
						} `json:"split"`
					} `json:"summary"`
				}
				require.NoError(t, json.Unmarshal(raw, &m))
				sp := m.Summary.Split
				assert.Equal(t, tc.unit, sp.Unit)
				assert.Equal(t, rep.Splits["train"].Rows, sp.Rows["train"])
				assert.Equal(t, rep.Splits["test"].Rows, sp.Rows["test"])
				assert.Positive(t, sp.Units["train"])
				assert.Positive(t, sp.Units["test"])
			})
		}
	}
}

func TestSplitsCheckGenericDatasets(t *testing.T) {
	dir := t.TempDir()
	train, test, trainRows, testRows := questions(t, dir, 90)

	code, rep, stderr := gateRun(t, append([]string{train, test}, genericColumns...)...)
	assert.Equal(t, 0, code, "%v %s", rep.failing(), stderr)
	statuses := map[string]string{}
	for _, c := range rep.Checks {
		statuses[c.Name] = c.Status
	}
	assert.Equal(t, map[string]string{
		"split_label": "skipped", "group_disjoint": "pass", "duplicate_ids": "pass", "duplicate_texts": "pass",
		"exact_duplicates": "pass", "near_duplicates": "pass", "contamination": "skipped", "test_fraction": "skipped",
		"sensitivity_coverage": "skipped", "label_balance": "skipped",
	}, statuses)
	assert.Equal(t, "the dataset has no sensitivity column (--sensitivity-column)", rep.check("sensitivity_coverage").Summary)
	assert.Equal(t, 12, rep.Splits["train"].Groups)

	t.Run("readable report", func(t *testing.T) {
		code, stdout, _ := runCLI(t, append([]string{"splits", "check", train, test}, genericColumns...)...)
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "columns: preset none; text question; group topic; id id")
		assert.Contains(t, stdout, "train:   60 rows, 12 topics\n")
		assert.Contains(t, stdout, "SKIPPED split_label           the dataset has no split column (--split-column)")
	})

	t.Run("one file with a split column", func(t *testing.T) {
		var all []jsonRow
		for _, r := range trainRows {
			r["split"] = "train"
			all = append(all, r)
		}
		for _, r := range testRows {
			r["split"] = "validation"
			all = append(all, r)
		}
		one := writeRows(t, filepath.Join(dir, "all.jsonl"), all)
		code, rep, stderr := gateRun(t, append([]string{one, "--split-column", "split"}, genericColumns...)...)
		assert.Equal(t, 0, code, "%v %s", rep.failing(), stderr)
		assert.Equal(t, 30, rep.Splits["test"].Rows)
		// Without the column, the file says nothing of its rows' sides.
		code, _, stderr = gateRun(t, append([]string{one}, genericColumns...)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "all.jsonl: row 1 (id q000): the file's name does not say train or test, and it has no split column")
	})

	t.Run("flags decide over names", func(t *testing.T) {
		a := writeRows(t, filepath.Join(dir, "first.jsonl"), trainRows)
		b := writeRows(t, filepath.Join(dir, "second-train.jsonl"), testRows)
		code, rep, _ := gateRun(t, append([]string{"--train", a, "--test", b}, genericColumns...)...)
		assert.Equal(t, 0, code)
		assert.Equal(t, 30, rep.Splits["test"].Rows)
	})

	t.Run("sharded directories", func(t *testing.T) {
		for side, rows := range map[string][]jsonRow{"train": trainRows, "test": testRows} {
			half := len(rows) / 2
			writeRows(t, filepath.Join(dir, "corpus-"+side, "part-00000-of-00002.jsonl"), rows[:half])
			writeRows(t, filepath.Join(dir, "corpus-"+side, "part-00001-of-00002.jsonl"), rows[half:])
		}
		code, rep, stderr := gateRun(t, append([]string{filepath.Join(dir, "corpus-train"), filepath.Join(dir, "corpus-test")}, genericColumns...)...)
		assert.Equal(t, 0, code, "%v %s", rep.failing(), stderr)
		assert.Equal(t, 60, rep.Splits["train"].Rows)
		// A shard copied across is found, named by its file.
		writeRows(t, filepath.Join(dir, "corpus-test", "part-00002-of-00002.jsonl"), trainRows[:2])
		code, rep, _ = gateRun(t, append([]string{filepath.Join(dir, "corpus-train"), filepath.Join(dir, "corpus-test")}, genericColumns...)...)
		assert.Equal(t, 1, code)
		assert.ElementsMatch(t, []string{"group_disjoint", "duplicate_ids", "exact_duplicates"}, rep.failing())
		assert.Contains(t, rep.check("duplicate_ids").Findings[0].Message, filepath.Join(dir, "corpus-test", "part-00002-of-00002.jsonl")+" row 1")
	})

	t.Run("an outside evaluation set", func(t *testing.T) {
		eval := []jsonRow{
			{"qid": "bench-1", "prompt": strings.ToUpper(trainRows[20]["question"].(string))},
			{"qid": "bench-2", "prompt": "an unrelated question about the moon and the tides"},
		}
		ev := writeRows(t, filepath.Join(dir, "published.jsonl"), eval)
		code, rep, stderr := gateRun(t, append([]string{train, test, "--against", ev, "--against-text", "prompt"}, genericColumns...)...)
		assert.Equal(t, 1, code, stderr)
		assert.Equal(t, []string{"contamination"}, rep.failing())
		f := rep.check("contamination").Findings[0]
		assert.Equal(t, fmt.Sprintf("train %s (%s row 21) duplicates evaluation row (no id) (%s row 1) after normalisation", trainRows[20]["id"], train, ev), f.Message)
		assert.Equal(t, 2, rep.Splits["against"].Rows)
		// The outside set's text column must exist.
		code, _, stderr = gateRun(t, append([]string{train, test, "--against", ev}, genericColumns...)...)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "--against "+ev+": no text column question (its columns are prompt, qid); name it with --against-text")
	})
}

func TestSplitsCheckColumnErrors(t *testing.T) {
	dir := t.TempDir()
	train, test, _, _ := questions(t, dir, 30)
	pairsTrain, pairsTest := splitFixture(t)
	pa := writeRows(t, filepath.Join(dir, "pairs-train.jsonl"), pairsTrain)
	pb := writeRows(t, filepath.Join(dir, "pairs-test.jsonl"), pairsTest)
	puzzles := filepath.Join(dir, "puzzles-test.jsonl")
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", "5", "--seed", "1", "--out", puzzles)
	require.Equal(t, 0, code, stderr)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no columns for an unknown dataset", []string{train, test},
			"questions-train.jsonl is not a timeaware output the gate knows (pairs, budget, puzzles, traveler, negotiation): name its columns with --text (and --group, --id); its columns are answer, id, question, topic"},
		{"a column the dataset lacks", []string{train, test, "--text", "question", "--group", "subject"},
			"--group subject: no such column (its columns are answer, id, question, topic)"},
		{"a column one file lacks", []string{pa, test, "--text", "question"}, "pairs-train.jsonl: --text question: no such column"},
		{"two kinds of output", []string{pa, puzzles}, "looks like pairs output and " + puzzles + " like puzzles output"},
		{"an unknown preset", []string{train, test, "--preset", "recipes"}, "--preset recipes: want auto, none or one of pairs, budget, puzzles, traveler, negotiation"},
		{"a file of another format", []string{writeFile(t, filepath.Join(dir, "notes.txt"), "x")}, "unknown dataset format"},
		{"only an outside set", []string{"--against", train}, "needs split files"},
		{"an empty directory", []string{t.TempDir()}, "holds no dataset files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"splits", "check"}, tc.args...)...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	// Pairs with a preset column dropped: its check is skipped, not failed.
	code, rep, _ := gateRun(t, pa, pb, "--group", "none", "--id", "none")
	assert.Equal(t, 0, code)
	assert.Equal(t, "skipped", rep.check("group_disjoint").Status)
	assert.Equal(t, "skipped", rep.check("duplicate_ids").Status)
	assert.Equal(t, "pairs", rep.Columns.Preset)
}
