package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth/puzzles"
)

// writeJSONLines writes rows back as JSONL.
func writeJSONLines(t *testing.T, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

func TestSynthPuzzlesWritesVerifiableRows(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	code, stdout, stderr := runCLI(t, "synth", "puzzles", "--count", "60", "--seed", "1", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "synth puzzles: 60 puzzles written to "+out)
	assert.Contains(t, stdout, "solutions:   1 10, 2 10, 3 10, 4 10, 5 10, 6 10")
	assert.FileExists(t, output.ManifestPath(out))

	rows := readJSONLines(t, out)
	require.Len(t, rows, 60)
	for i, r := range rows {
		assert.Equal(t, "timepuzzles", r["data_source"])
		assert.Equal(t, "rule", get(r, "reward_model", "style"))
		assert.EqualValues(t, i, get(r, "extra_info", "index"))
		sols := r["solutions"].([]any)
		assert.Len(t, sols, i%6+1)
		parts := make([]string, len(sols))
		for j, s := range sols {
			parts[j] = s.(string)
		}
		assert.Equal(t, strings.Join(parts, ","), get(r, "reward_model", "ground_truth"))
		n := len(r["constraints_meta"].([]any))
		assert.Len(t, r["constraints"], n)
		assert.Len(t, r["explicit_constraints"], n)
		prompt := r["prompt"].([]any)
		assert.Equal(t, "user", get(prompt[0], "role"))
		assert.Contains(t, get(prompt[0], "content"), "MY ANSWER: ")
	}

	again := filepath.Join(dir, "again.jsonl")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "60", "--seed", "1", "--out", again, "--workers", "3")
	require.Equal(t, 0, code, stderr)
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	assert.Equal(t, string(a), string(b), "same seed, same bytes, whatever the workers")

	shard := filepath.Join(dir, "shard.jsonl")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "60", "--seed", "1", "--shard", "1/3", "--out", shard)
	require.Equal(t, 0, code, stderr)
	srows := readJSONLines(t, shard)
	require.Len(t, srows, 20)
	for k, r := range srows {
		assert.Equal(t, rows[3*k+1], r)
	}

	pq := filepath.Join(dir, "p.parquet")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "60", "--seed", "1", "--out", pq)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, rows, readDataset(t, pq, puzzles.Schema))

	for _, f := range []string{out, pq} {
		code, stdout, stderr = runCLI(t, "synth", "puzzles", "--solve", f)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, "synth puzzles --solve: 60 puzzles checked, 0 differ, 0 undecidable\n", stdout)
	}
}

func TestSynthPuzzlesSolveDetectsTampering(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", "30", "--seed", "4", "--solutions", "0-2", "--out", out)
	require.Equal(t, 0, code, stderr)
	rows := readJSONLines(t, out)
	none := 0
	for _, r := range rows {
		if get(r, "reward_model", "ground_truth") == "None" {
			none++
			assert.Empty(t, r["solutions"])
		}
	}
	assert.Equal(t, 10, none)

	code, stdout, stderr := runCLI(t, "synth", "puzzles", "--solve", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "30 puzzles checked, 0 differ")

	cases := []struct {
		name, want string
		edit       func(rows []map[string]any)
	}{
		{"solutions", "row 5 (id puzzles-s4-4, index 4): stored 1999-12-31", func(rows []map[string]any) {
			rows[4]["solutions"] = []any{"1999-12-31"}
		}},
		{"ground truth of a puzzle without solution", "row 1 (id puzzles-s4-0, index 0): stored None (ground_truth \"2001-01-01\"), solved None", func(rows []map[string]any) {
			rows[0]["reward_model"].(map[string]any)["ground_truth"] = "2001-01-01"
		}},
		{"meta", "row 8 (id puzzles-s4-7, index 7)", func(rows []map[string]any) {
			for _, f := range rows[7]["constraints_meta"].([]any) {
				if m := f.(map[string]any); m["kind"] != "event" {
					m["kind"], m["level"], m["year"] = "year", "year", 1850
					for _, k := range []string{"month", "day", "weekday", "n", "leap", "animal", "season", "months", "weekdays", "op"} {
						m[k] = nil
					}
					break
				}
			}
		}},
		{"unsolvable", "row 3 (id puzzles-s4-2, index 2): cannot solve: fact 1 (moon_phase): unknown kind", func(rows []map[string]any) {
			rows[2]["constraints_meta"].([]any)[0].(map[string]any)["kind"] = "moon_phase"
		}},
		{"a fact no day satisfies", "row 3 (id puzzles-s4-2, index 2): stored 2001-01-01 (ground_truth \"2001-01-01\"), solved None: fact 1 (lunar_month): month 13 is not from 1 to 12, so no day satisfies it", func(rows []map[string]any) {
			rows[2]["constraints_meta"].([]any)[0] = map[string]any{"kind": "lunar_month", "level": "month", "month": 13}
			rows[2]["solutions"] = []any{"2001-01-01"}
			rows[2]["reward_model"].(map[string]any)["ground_truth"] = "2001-01-01"
		}},
	}
	// A row whose fact holds on no day, stored without a solution, is right:
	// --solve says why it has none and passes.
	t.Run("no solution as stored", func(t *testing.T) {
		rows := readJSONLines(t, out)
		rows[0]["constraints_meta"].([]any)[0] = map[string]any{"kind": "month", "level": "month", "month": 13}
		ok := filepath.Join(t.TempDir(), "ok.jsonl")
		writeJSONLines(t, ok, rows)
		code, stdout, stderr := runCLI(t, "synth", "puzzles", "--solve", ok)
		assert.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "row 1 (id puzzles-s4-0, index 0): no solution, as stored: fact 1 (month): month 13 is not from 1 to 12, so no day satisfies it\n")
		assert.Contains(t, stdout, "30 puzzles checked (1 without a solution: a fact no day satisfies), 0 differ, 0 undecidable\n")
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := readJSONLines(t, out)
			tc.edit(rows)
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			writeJSONLines(t, bad, rows)
			code, stdout, stderr := runCLI(t, "synth", "puzzles", "--solve", bad)
			assert.Equal(t, 1, code)
			assert.Contains(t, stdout, tc.want)
			assert.Regexp(t, `30 puzzles checked( \(1 without a solution: a fact no day satisfies\))?, 1 differ`, stdout)
			assert.Contains(t, stderr, "1 of 30 puzzles have a stored answer that differs")
		})
	}
}

func TestSynthPuzzlesUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	kb := writeFile(t, filepath.Join(dir, "kb.csv"), "event,start,end\nthe Moon landing,1969-07-20,\nbad,1969-02-30,\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int // exitUsage unless set
	}{
		{"no seed", []string{"--count", "5", "--out", out}, "--seed is required", 0},
		{"no count", []string{"--seed", "1", "--out", out}, "--count is required", 0},
		{"negative count", []string{"--seed", "1", "--count", "-1", "--out", out}, "--count -1: want a positive number of puzzles", 0},
		{"no out", []string{"--seed", "1", "--count", "5"}, "--out is required", 0},
		{"years", []string{"--seed", "1", "--count", "5", "--out", out, "--years", "2030-1900"}, `--years 2030-1900: want years`, 0},
		{"solutions", []string{"--seed", "1", "--count", "5", "--out", out, "--solutions", "7"}, "--solutions 7: 7-7: want", 0},
		{"kb", []string{"--seed", "1", "--count", "5", "--out", out, "--kb", kb}, "--kb " + kb + ": line 3, column 5 (start)", exitData},
		{"kb missing", []string{"--seed", "1", "--count", "5", "--out", out, "--kb", filepath.Join(dir, "none.csv")}, "--kb " + filepath.Join(dir, "none.csv") + ": no such file or directory", exitIO},
		{"solve with count", []string{"--solve", out, "--count", "5"}, "takes no --count", 0},
		{"solve missing", []string{"--solve", filepath.Join(dir, "none.jsonl")}, "--solve " + filepath.Join(dir, "none.jsonl") + ": no such file or directory", exitIO},
		{"year sets", []string{"--seed", "1", "--count", "5", "--out", out, "--year-sets", kb}, `--year-sets ` + kb + `: line 1, column 7: unknown column "start"`, exitData},
		{"disputed", []string{"--seed", "1", "--count", "5", "--out", out, "--disputed", "maybe"}, `--disputed maybe: not avoid or allow`, 0},
		{"import without out", []string{"--import-published", kb}, "--import-published needs --out", 0},
		{"import with seed", []string{"--import-published", kb, "--out", out, "--seed", "1"}, "takes no --seed", 0},
		{"import and solve", []string{"--import-published", kb, "--solve", kb}, "give one", 0},
		{"import not json", []string{"--import-published", kb, "--out", out}, "--import-published " + kb + ": record 1", exitData},
		{"import missing", []string{"--import-published", filepath.Join(dir, "none.json"), "--out", out}, "--import-published " + filepath.Join(dir, "none.json") + ": no such file or directory", exitIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"synth", "puzzles"}, tc.args...)...)
			want := tc.code
			if want == 0 {
				want = exitUsage
			}
			assert.Equal(t, want, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	assert.NoFileExists(t, out)
}

func TestSynthPuzzlesConfigAndKB(t *testing.T) {
	dir := t.TempDir()
	kb := writeFile(t, filepath.Join(dir, "kb.csv"), "event,start,end\nthe opening of the test track,1961-05-06,\nthe test era,1960-01-01,1962-12-31\n")
	config := writeFile(t, filepath.Join(dir, "c.yaml"), "synth:\n  puzzles:\n    years: 1960-1962\n    solutions: \"3\"\n    explicit: true\n    split: test\n")
	out := filepath.Join(dir, "p.jsonl")
	code, stdout, stderr := runCLI(t, "--config", config, "synth", "puzzles", "--count", "12", "--seed", "2", "--kb", kb, "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "years:       1960-1962; lunar facts on")
	for _, r := range readJSONLines(t, out) {
		assert.Len(t, r["solutions"], 3)
		assert.Equal(t, "test", get(r, "extra_info", "split"))
		assert.Equal(t, "explicit", get(r, "extra_info", "variant"))
		assert.Equal(t, "1960-01-01", get(r, "extra_info", "first_date"))
		content := get(r["prompt"].([]any)[0], "content").(string)
		for _, c := range r["explicit_constraints"].([]any) {
			assert.Contains(t, content, c.(string))
		}
		for _, f := range r["constraints_meta"].([]any) {
			if m := f.(map[string]any); m["kind"] == "event" {
				assert.Contains(t, []any{"the opening of the test track", "the test era"}, m["event"])
			}
		}
	}
	var m output.Manifest
	b, err := os.ReadFile(output.ManifestPath(out))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, "knowledge_base", m.Inputs[0].Role)
	assert.Equal(t, "1960-1962", m.Config["synth.puzzles.years"])
}

// TestSynthPuzzlesImportPublished runs the published-format sample through
// the command: the summary by cause, the rows written with the solved
// answers (which --solve then confirms), the manifest.
func TestSynthPuzzlesImportPublished(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "imported.jsonl")
	sample := filepath.Join("..", "..", "examples", "puzzles", "published_sample.json")
	code, stdout, stderr := runCLI(t, "synth", "puzzles", "--import-published", sample, "--out", out)
	require.Equal(t, 0, code, stderr)
	// The sample's records name themselves by an "id" field, which the
	// published format does not have (it keys records by "identifier"), so
	// they are named by position.
	for _, want := range []string{
		"p3 (record 3): wrong (year_set_rule): published 2020-07-24, solved 2021-07-24\n",
		"p6 (record 6): undecidable (lunar_disputed), published 1933-07-23: fact 4 (lunar_month)",
		"p7 (record 7): not converted (type_western_zodiac)",
		"synth puzzles --import-published: 12 records, 10 converted, 2 not converted\n",
		"  agree:         4\n",
		"  wrong:         5 (boundary_days 1, lunar_calendar_boundary 1, lunar_leap_month 1, unexplained 1, year_set_rule 1)\n",
		"  undecidable:   1 (lunar_disputed 1)\n",
		"  written:       9 puzzles written to " + out,
	} {
		assert.Contains(t, stdout, want)
	}
	rows := readJSONLines(t, out)
	require.Len(t, rows, 9)
	assert.Equal(t, "p3", get(rows[2], "extra_info", "id"))
	for _, r := range rows {
		assert.Equal(t, "test", get(r, "extra_info", "split"), "the published set is an evaluation set")
	}
	assert.Equal(t, "2021-07-24", get(rows[2], "reward_model", "ground_truth"))
	var m output.Manifest
	b, err := os.ReadFile(output.ManifestPath(out))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m.Inputs, 1)
	assert.Equal(t, "published_puzzles", m.Inputs[0].Role)

	code, stdout, stderr = runCLI(t, "synth", "puzzles", "--solve", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "9 puzzles checked, 0 differ, 0 undecidable")

	// --disputed allow lets the embedded table decide p6 (the sixth lunar
	// month of 1933 starts on 1933-07-23 by the table), as generation does:
	// it agrees and is written; solve still calls it undecidable.
	allowedOut := filepath.Join(dir, "allowed-import.jsonl")
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "import-published", sample, "--disputed", "allow", "--out", allowedOut)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "p6 (record 6)")
	for _, want := range []string{"  agree:         5\n", "  undecidable:   0\n", "  written:       10 puzzles written to "} {
		assert.Contains(t, stdout, want)
	}
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "solve", allowedOut)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "10 puzzles checked, 0 differ, 1 undecidable")

	// A generated set that lets disputed days decide: --solve reports those
	// puzzles undecidable, not wrong, and exits 0.
	allowed := filepath.Join(dir, "allowed.jsonl")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "300", "--seed", "5", "--years", "1888-1892",
		"--disputed", "allow", "--out", allowed)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "--solve", allowed)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `300 puzzles checked, 0 differ, [1-9]\d* undecidable`, stdout)
	assert.Regexp(t, `(a day|days) whose lunar month or year is disputed; in the answer under every reading: `, stdout)
}

// TestSynthPuzzlesImportNeverAborts: a file whose records hold a malformed
// constraint, a lunar month that does not exist and a puzzle whose answer
// the disputed 1890 new year leaves open is imported whole: every record
// gets a verdict, named by its identifier (or position), a summary is
// printed, the command exits 0, and the rows written are the decided ones,
// under their identifiers, which --solve passes.
func TestSynthPuzzlesImportNeverAborts(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "published.jsonl")
	records := []string{
		`{"identifier": "7f3a", "constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "month", "value": "May"}], "solutions": [], "year_range": [1990, 2010]}`,
		`{"identifier": "b21c", "constraints_meta": [{"type": "explicit_year", "value": 2020}, {"type": "lunar_month", "value": 13}], "solutions": [], "year_range": [1950, 2050]}`,
		`{"identifier": "c9d0", "constraints_meta": [{"type": "explicit_year", "value": 2020}, {"type": "lunar_month", "value": 0}], "solutions": ["2020-01-01"], "year_range": [1950, 2050]}`,
		`{"identifier": "e4f1", "constraints_meta": [{"type": "month", "value": 2}, {"type": "day_of_month_specific", "value": 15}, {"type": "chinese_zodiac", "value": "Ox"}], "solutions": [], "year_range": [1889, 1890]}`,
		`{"constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "month", "value": 2}, {"type": "last_day_of_month", "value": true}], "solutions": ["2000-02-29"], "year_range": [1990, 2010]}`,
		`{"identifier": "f5a2", "constraints_meta": [{"type": "chinese_zodiac", "value": "Ox"}, {"type": "month", "value": 2}, {"type": "day_of_month", "operator": "<", "value": 10}, {"type": "lunar_month", "value": 12}], "solutions": ["1890-02-01", "1890-02-02", "1890-02-03", "1890-02-04", "1890-02-05", "1890-02-06", "1890-02-07", "1890-02-08", "1890-02-09"], "year_range": [1890, 1890]}`,
	}
	require.NoError(t, os.WriteFile(in, []byte(strings.Join(records, "\n")+"\n"), 0o644))
	out := filepath.Join(dir, "imported.jsonl")
	code, stdout, stderr := runCLI(t, "synth", "puzzles", "--import-published", in, "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `7f3a (record 1): not converted (malformed): constraint 2: field "value": want an integer, have "May"
b21c (record 2): agree (no_day), no solution: fact 2 (lunar_month): month 13 is not from 1 to 12, so no day satisfies it
c9d0 (record 3): wrong (no_day): published 2020-01-01, solved None: fact 2 (lunar_month): month 0 is not from 1 to 12, so no day satisfies it
e4f1 (record 4): wrong (unexplained): published None, solved 1889-02-15, undecidable on 1890-02-15
f5a2 (record 6): undecidable (lunar_disputed), published 1890-02-01,1890-02-02,1890-02-03,1890-02-04,1890-02-05,1890-02-06,1890-02-07,1890-02-08,1890-02-09: facts 1 (zodiac) and 4 (lunar_month): undecidable: the answer depends on 1890-02-01 to 1890-02-09, days whose lunar month or year is disputed; in the answer under every reading: none
synth puzzles --import-published: 6 records, 5 converted, 1 not converted
  agree:         2 (no solution 1)
  wrong:         2 (no_day 1, unexplained 1)
  undecidable:   1 (lunar_disputed 1)
  not converted: 1 (malformed 1)
  written:       3 puzzles written to `+out+` (jsonl, 5.8 KiB): the decided ones, agreeing and wrong, with the solved answers
  manifest:      `+output.ManifestPath(out)+`
`, stdout)
	rows := readJSONLines(t, out)
	require.Len(t, rows, 3)
	assert.Equal(t, "b21c", get(rows[0], "extra_info", "id"))
	assert.Equal(t, "c9d0", get(rows[1], "extra_info", "id"))
	assert.Equal(t, "None", get(rows[1], "reward_model", "ground_truth"))
	assert.Equal(t, "published-5", get(rows[2], "extra_info", "id"))
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "--solve", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "row 2 (id c9d0, index 2): no solution, as stored: fact 2 (lunar_month): month 0 is not from 1 to 12")
	assert.Contains(t, stdout, "3 puzzles checked (2 without a solution: a fact no day satisfies), 0 differ, 0 undecidable")
}

// TestSynthPuzzlesYearSetReading: --year-set-reading rule reads the
// Olympic and World Cup years as the published generator does, so the
// sample's Tokyo record (2020) agrees, and generated year-set facts say they
// count scheduled editions; a reading that is neither is refused.
func TestSynthPuzzlesYearSetReading(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join("..", "..", "examples", "puzzles", "published_sample.json")
	code, stdout, stderr := runCLI(t, "synth", "puzzles", "--import-published", sample, "--year-set-reading", "rule", "--out", filepath.Join(dir, "i.jsonl"))
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "p3 (record 3)")
	assert.Contains(t, stdout, "  agree:         5\n")
	assert.Contains(t, stdout, "  wrong:         4 (boundary_days 1, lunar_calendar_boundary 1, lunar_leap_month 1, unexplained 1)\n")

	out := filepath.Join(dir, "g.jsonl")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "60", "--seed", "2", "--years", "2000-2040",
		"--year-set-reading", "rule", "--out", out)
	require.Equal(t, 0, code, stderr)
	scheduled := 0
	for _, r := range readJSONLines(t, out) {
		for _, f := range r["constraints_meta"].([]any) {
			if m := f.(map[string]any); m["kind"] == "year_set" {
				scheduled++
				assert.Equal(t, "scheduled", m["relation"])
			}
		}
	}
	assert.Positive(t, scheduled)
	code, _, stderr = runCLI(t, "synth", "puzzles", "--solve", out)
	assert.Equal(t, 0, code, stderr)

	code, _, stderr = runCLI(t, "synth", "puzzles", "--count", "5", "--seed", "2", "--year-set-reading", "awarded", "--out", out)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--year-set-reading awarded: ")
	assert.Contains(t, stderr, `--year-set-reading awarded: not held or rule`)
}

// TestPuzzleVerbsAndTheirDeprecatedFlags: solve and import-published are
// verbs; --solve and --import-published still do the same, with a warning
// that names the verb, and write the same bytes.
func TestPuzzleVerbsAndTheirDeprecatedFlags(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set.jsonl")
	code, _, stderr := runCLI(t, "synth", "puzzles", "--count", "6", "--seed", "4", "--out", set)
	require.Equal(t, 0, code, stderr)

	code, stdout, stderr := runCLI(t, "synth", "puzzles", "solve", set)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, "synth puzzles solve: 6 puzzles checked, 0 differ, 0 undecidable\n", stdout)

	code, stdout, stderr = runCLI(t, "synth", "puzzles", "--solve", set)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "timeaware: --solve FILE is deprecated: use \"timeaware synth puzzles solve FILE\"\n", stderr)
	assert.Equal(t, "synth puzzles --solve: 6 puzzles checked, 0 differ, 0 undecidable\n", stdout)

	sample := "../../examples/puzzles/published_sample.json"
	viaVerb, viaFlag := filepath.Join(dir, "verb.jsonl"), filepath.Join(dir, "flag.jsonl")
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "import-published", sample, "--out", viaVerb)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "\nsynth puzzles import-published: 12 records, 10 converted")
	assert.Equal(t, "synth puzzles import-published", readManifest(t, viaVerb).Command)
	code, stdout, stderr = runCLI(t, "synth", "puzzles", "--import-published", sample, "--out", viaFlag)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "--import-published FILE is deprecated")
	assert.Contains(t, stdout, "\nsynth puzzles --import-published: 12 records, 10 converted")
	assert.Equal(t, sha256File(t, viaVerb), sha256File(t, viaFlag))

	// The verbs take their file as an argument, and errors name it so.
	code, _, stderr = runCLI(t, "synth", "puzzles", "solve")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "accepts 1 arg(s)")
	code, _, stderr = runCLI(t, "synth", "puzzles", "solve", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "timeaware: "+dir+": is a directory")
	// A file of an unknown kind is named as the argument, not as an --out
	// that solve does not have.
	published := writeFile(t, filepath.Join(dir, "published.json"), "[]\n")
	code, _, stderr = runCLI(t, "synth", "puzzles", "solve", published)
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(stderr, "timeaware: "+published+`: unknown extension ".json": name the file `), stderr)
	code, _, stderr = runCLI(t, "synth", "puzzles", "import-published", sample)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "import-published needs --out")
}

// TestPuzzleCommandsRefuseAnInputWithoutRecords: solve and import-published
// give every command's answer to an input without records (an empty file,
// blank lines, an empty JSON array): the file named, "no records", exit 1,
// nothing printed and nothing written.
func TestPuzzleCommandsRefuseAnInputWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, filepath.Join(dir, "empty.jsonl"), "")
	blank := writeFile(t, filepath.Join(dir, "blank.jsonl"), "\n\n")
	emptyJSON := writeFile(t, filepath.Join(dir, "empty.json"), "")
	emptyArray := writeFile(t, filepath.Join(dir, "array.json"), "[]\n")
	out := filepath.Join(dir, "out.jsonl")
	const want = ": want a JSON array of published Time Puzzles records\n"
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"solve empty", []string{"solve", empty}, "timeaware: " + empty + ": no records\n"},
		{"solve blank lines", []string{"solve", blank}, "timeaware: " + blank + ": no records\n"},
		{"import empty", []string{"import-published", emptyJSON, "--out", out}, "timeaware: " + emptyJSON + ": no records" + want},
		{"import empty array", []string{"import-published", emptyArray, "--out", out}, "timeaware: " + emptyArray + ": no records" + want},
		{"import blank lines", []string{"import-published", blank, "--out", out}, "timeaware: " + blank + ": no records" + want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"synth", "puzzles"}, tc.args...)...)
			assert.Equal(t, exitData, code)
			assert.Equal(t, tc.stderr, stderr)
			assert.Empty(t, stdout)
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, output.ManifestPath(out))
		})
	}
	// The deprecated flags name the file as theirs.
	code, _, stderr := runCLI(t, "synth", "puzzles", "--solve", empty)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, "timeaware: --solve "+empty+": no records\n")
	code, _, stderr = runCLI(t, "synth", "puzzles", "--import-published", emptyArray, "--out", out)
	assert.Equal(t, exitData, code)
	assert.Contains(t, stderr, "timeaware: --import-published "+emptyArray+": no records"+want)
	assert.NoFileExists(t, out)
}
