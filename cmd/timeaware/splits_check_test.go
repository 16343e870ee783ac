package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type jsonRow = map[string]any

// groupSplitRows builds the v1 pairs once with a group split (the gate's
// default target of 0.35 is met) and returns the train and test rows.
var groupSplitRows = sync.OnceValues(func() ([2][]jsonRow, error) {
	dir, err := os.MkdirTemp("", "timeaware-gate-*")
	if err != nil {
		return [2][]jsonRow{}, err
	}
	defer os.RemoveAll(dir)
	d, err := loadV1()
	if err != nil {
		return [2][]jsonRow{}, err
	}
	var b strings.Builder
	for _, id := range d.IDs {
		fmt.Fprintf(&b, "{\"id\": %q, \"direct_answer\": %q}\n", id, ourDirectAnswer(id))
	}
	direct := filepath.Join(dir, "direct.jsonl")
	if err := os.WriteFile(direct, []byte(b.String()), 0o644); err != nil {
		return [2][]jsonRow{}, err
	}
	out := filepath.Join(dir, "pairs.jsonl")
	var so, se strings.Builder
	if code := run([]string{"pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "group", "--seed", "3", "--out", out},
		strings.NewReader(""), &so, &se); code != 0 {
		return [2][]jsonRow{}, fmt.Errorf("build failed: %s", se.String())
	}
	var sides [2][]jsonRow
	for i, side := range []string{"train", "test"} {
		f, err := os.Open(filepath.Join(dir, "pairs-"+side+".jsonl"))
		if err != nil {
			return sides, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r jsonRow
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return sides, err
			}
			sides[i] = append(sides[i], r)
		}
		f.Close()
	}
	return sides, nil
})

// splitFixture returns deep copies of the rows, free to modify.
func splitFixture(t *testing.T) (train, test []jsonRow) {
	t.Helper()
	sides, err := groupSplitRows()
	require.NoError(t, err)
	cp := func(rows []jsonRow) []jsonRow {
		b, err := json.Marshal(rows)
		require.NoError(t, err)
		var out []jsonRow
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	return cp(sides[0]), cp(sides[1])
}

func writeRows(t *testing.T, path string, rows []jsonRow) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return writeFile(t, path, b.String())
}

// setPrompt replaces the text of a row's prompt messages.
func setPrompt(r jsonRow, texts ...string) {
	var msgs []any
	for i, s := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"role": role, "content": s, "tool_calls": nil, "tool_call_id": nil, "name": nil})
	}
	r["prompt"] = msgs
}

func promptTexts(r jsonRow) []string {
	var out []string
	for _, m := range r["prompt"].([]any) {
		if c, ok := m.(map[string]any)["content"].(string); ok {
			out = append(out, c)
		}
	}
	return out
}

type gateReport struct {
	Passed bool `json:"passed"`
	Checks []struct {
		Name     string `json:"name"`
		Status   string `json:"status"`
		Count    int    `json:"count"`
		Findings []struct {
			Message string   `json:"message"`
			IDs     []string `json:"ids"`
		} `json:"findings"`
	} `json:"checks"`
}

func runGate(t *testing.T, train, test []jsonRow, extra ...string) (int, gateReport, string) {
	t.Helper()
	dir := t.TempDir()
	a := writeRows(t, filepath.Join(dir, "pairs-train.jsonl"), train)
	b := writeRows(t, filepath.Join(dir, "pairs-test.jsonl"), test)
	code, stdout, stderr := runCLI(t, append([]string{"splits", "check", a, b, "--json"}, extra...)...)
	var rep gateReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "stdout: %s\nstderr: %s", stdout, stderr)
	return code, rep, stderr
}

func statuses(rep gateReport) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Checks {
		out[c.Name] = c.Status
	}
	return out
}

func findingsOf(rep gateReport, name string) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		if c.Name == name {
			for _, f := range c.Findings {
				b.WriteString(f.Message + "\n")
			}
		}
	}
	return b.String()
}

var allPass = map[string]string{
	"split_label": "pass", "group_disjoint": "pass", "duplicate_ids": "pass", "duplicate_texts": "pass",
	"exact_duplicates": "pass", "near_duplicates": "pass", "contamination": "skipped",
	"test_fraction": "pass", "sensitivity_coverage": "pass", "label_balance": "info",
}

func TestSplitsCheckCleanSplitPasses(t *testing.T) {
	train, test := splitFixture(t)
	code, rep, stderr := runGate(t, train, test)
	assert.Equal(t, 0, code, stderr)
	assert.True(t, rep.Passed)
	assert.Equal(t, allPass, statuses(rep))
}

func TestSplitsCheckCatchesPlantedLeaks(t *testing.T) {
	longText := func(seed int) string {
		var words []string
		for i := 0; i < 120; i++ {
			words = append(words, fmt.Sprintf("w%d_%d", seed, (i*7919+seed*31)%1000))
		}
		return strings.Join(words, " ")
	}
	tests := []struct {
		name  string
		plant func(train, test []jsonRow) (trainOut, testOut []jsonRow)
		check string
		ids   []string // ids the findings must name
	}{
		{
			name: "scenario on both sides",
			plant: func(train, test []jsonRow) ([]jsonRow, []jsonRow) {
				r := jsonRow{}
				for k, v := range test[0] {
					r[k] = v
				}
				r["id"], r["split"] = "planted_scenario_leak_1", "train"
				setPrompt(r, longText(1), longText(2)) // new text: only the scenario leaks
				return append(train, r), test
			},
			check: "group_disjoint",
			ids:   []string{"planted_scenario_leak_1"},
		},
		{
			name: "exact duplicate after whitespace and case changes",
			plant: func(train, test []jsonRow) ([]jsonRow, []jsonRow) {
				var texts []string
				for _, s := range promptTexts(test[5]) {
					texts = append(texts, "  "+strings.ToUpper(strings.ReplaceAll(s, " ", "\t "))+"\n")
				}
				setPrompt(train[3], texts...)
				return train, test
			},
			check: "exact_duplicates",
		},
		{
			name: "near duplicate with a few words changed",
			plant: func(train, test []jsonRow) ([]jsonRow, []jsonRow) {
				setPrompt(test[7], longText(3), longText(4))
				setPrompt(train[9], strings.Replace(longText(3), "w3_", "x3_", 2), longText(4))
				return train, test
			},
			check: "near_duplicates",
		},
		{
			name: "missing sensitivity level",
			plant: func(train, test []jsonRow) ([]jsonRow, []jsonRow) {
				var kept []jsonRow
				for _, r := range test {
					if r["sensitivity"] != "low" {
						kept = append(kept, r)
					}
				}
				return train, kept
			},
			check: "sensitivity_coverage",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			train, test := splitFixture(t)
			ids := tt.ids
			if ids == nil && tt.check != "sensitivity_coverage" {
				// The duplicate checks name the train and the test row.
				switch tt.check {
				case "exact_duplicates":
					ids = []string{train[3]["id"].(string), test[5]["id"].(string)}
				case "near_duplicates":
					ids = []string{train[9]["id"].(string), test[7]["id"].(string)}
				}
			}
			train, test = tt.plant(train, test)
			code, rep, stderr := runGate(t, train, test, "--test-fraction", "0")
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "splits check failed")
			assert.False(t, rep.Passed)
			want := map[string]string{}
			for k, v := range allPass {
				want[k] = v
			}
			want["test_fraction"] = "skipped"
			want[tt.check] = "fail"
			assert.Equal(t, want, statuses(rep), "only %s fails", tt.check)
			msg := findingsOf(rep, tt.check)
			for _, id := range ids {
				assert.Contains(t, msg, id)
			}
			if tt.check == "sensitivity_coverage" {
				assert.Contains(t, msg, "test")
				assert.Contains(t, msg, "low")
			}
		})
	}
}

func TestSplitsCheckTestFractionAndAnnotations(t *testing.T) {
	train, test := splitFixture(t)
	t.Setenv("GITHUB_ACTIONS", "true")
	code, rep, stderr := runGate(t, train, test, "--test-fraction", "0.6")
	assert.Equal(t, 1, code)
	assert.Equal(t, "fail", statuses(rep)["test_fraction"])
	assert.Contains(t, stderr, "::error title=splits check%3A test_fraction::")

	// The readable report, annotations on stdout.
	dir := t.TempDir()
	a := writeRows(t, filepath.Join(dir, "pairs-train.jsonl"), train)
	b := writeRows(t, filepath.Join(dir, "pairs-test.jsonl"), test)
	code, stdout, _ := runCLI(t, "splits", "check", a, b, "--test-fraction", "0.6")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "splits check: FAILED (1 of 10 checks)")
	assert.Contains(t, stdout, "FAIL    test_fraction")
	assert.Contains(t, stdout, "::error ")
}

func TestSplitsCheckManifestAndFormats(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	for _, format := range []string{"parquet", "arrow"} {
		out := filepath.Join(dir, "pairs."+format)
		code, _, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "group", "--seed", "3", "--test-fraction", "0.3", "--out", out)
		require.Equal(t, 0, code, stderr)
		// The manifest's target (0.3) applies unless a flag says otherwise.
		code, stdout, stderr := runCLI(t, "splits", "check", out+".manifest.json")
		assert.Equal(t, 0, code, stdout+stderr)
		assert.Contains(t, stdout, "target 0.300")
		code, _, _ = runCLI(t, "splits", "check", out+".manifest.json", "--test-fraction", "0.5", "--tolerance", "0.01")
		assert.Equal(t, 1, code)
	}
}

func TestSplitsCheckUsage(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "a-train.jsonl"), "")
	code, _, stderr := runCLI(t, "splits", "check", filepath.Join(dir, "missing-test.parquet"))
	assert.Equal(t, exitIO, code, "a missing input is an I/O error: %s", stderr)
	for _, args := range [][]string{
		{"splits", "check"},
		{"splits", "check", writeFile(t, filepath.Join(dir, "notes.txt"), "x")},
		{"splits", "check", f, "--bands", "7"},
		{"splits", "check", f, "--test-fraction", "1"},
		{"splits", "check", f, "--shingle-words", "0"},
		{"splits", "check", writeFile(t, filepath.Join(dir, "x.manifest.json"), "{}")},
	} {
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	// A row with no side anywhere is a data error naming file and row.
	rows := `{"prompt":[],"chosen":[],"rejected":[],"tools":"[]","margin":1.0,"score":null,"id":"a_1","scenario":"A","sensitivity":"low","elapse":0,"label":"tool","split":null}` + "\n"
	g := writeFile(t, filepath.Join(dir, "rows.jsonl"), rows)
	code, _, stderr = runCLI(t, "splits", "check", g)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "rows.jsonl")
	assert.Contains(t, stderr, "a_1")
}

func TestSplitsCheckManifestTargets(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	paper := filepath.Join(dir, "paper.parquet")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "paper", "--out", paper)
	require.Equal(t, 0, code, stderr)
	// The paper split has no target: the gate skips the fraction check.
	code, stdout, _ := runCLI(t, "splits", "check", paper+".manifest.json")
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "SKIPPED test_fraction")
	// A target from the config file counts as explicit.
	cfg := writeFile(t, filepath.Join(dir, "gate.yaml"), "splits:\n  test_fraction: 0.5\n")
	code, stdout, _ = runCLI(t, "splits", "check", paper+".manifest.json", "--config", cfg)
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "target 0.500")

	// A data file changed after the build is refused.
	f, err := os.OpenFile(filepath.Join(dir, "paper-test.parquet"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("x")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	code, _, stderr = runCLI(t, "splits", "check", paper+".manifest.json")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "has changed since the build")
}

func TestConfigValuesAreChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ env, val, want string }{
		{"TIMEAWARE_PAIRS_LABEL_ONLY_MARGIN", "abc", "want a finite number"},
		{"TIMEAWARE_PAIRS_CONFIDENT_ONLY", "yes", "want true or false"},
		{"TIMEAWARE_PAIRS_MIN_MARGIN", "NaN", "want a finite number"},
	} {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(tt.env, tt.val)
			code, _, stderr := runCLI(t, "pairs", "build", "--input", demoTrajectories, "--out", filepath.Join(dir, "p.jsonl"))
			assert.Equal(t, 2, code, stderr)
			assert.Equal(t, "timeaware: "+tt.env+"="+tt.val+": "+tt.want, firstLine(stderr))
		})
	}
	code, _, stderr := runCLI(t, "splits", "check", demoTrajectories, "--near-duplicate-threshold", "0")
	assert.Equal(t, 2, code, stderr)
	code, _, stderr = runCLI(t, "pairs", "build", "--input", demoTrajectories, "--out", filepath.Join(dir, "p.jsonl"), "--min-margin", "NaN")
	assert.Equal(t, 2, code, stderr)
}
