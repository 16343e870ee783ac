package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paperTestScenariosInV1 are the scenarios of the TicToc paper, App. D.1 that have
// trajectories in the v1 release.
var paperTestScenariosInV1 = []string{
	"Airline Baggage Policy", "Airport Security Line Wait Time", "Astronomical Object Info",
	"Cloud Server Load Balancer", "Hotel Room Availability & Rates", "ICU Vitals Monitor",
	"Job Board Live Listings", "Live Auction Price Retrieval", "Live Sports Score Tracker",
	"Live Vehicle GPS Tracker", "Live Weather Sensor Data", "Public Health Screening Guidelines",
	"Restaurant Wait Time Checker", "Stock Market Order Book", "Tide Height Tracker", "Train Delay Tracker",
}

type splitManifest struct {
	Outputs []struct {
		Path string `json:"path"`
		Rows int    `json:"rows"`
	} `json:"outputs"`
	Summary struct {
		Split struct {
			Strategy      string             `json:"strategy"`
			Seed          *uint64            `json:"seed"`
			Target        float64            `json:"target_test_fraction"`
			TrainAll      []string           `json:"train_scenarios"`
			TestAll       []string           `json:"test_scenarios"`
			TrainSamples  int                `json:"train_samples"`
			TestSamples   int                `json:"test_samples"`
			TestFraction  float64            `json:"test_fraction"`
			BySensitivity map[string]float64 `json:"test_fraction_by_sensitivity"`
			Train         []string           `json:"train_scenarios_present"`
			Test          []string           `json:"test_scenarios_present"`
		} `json:"split"`
	} `json:"summary"`
}

func readSplitManifest(t *testing.T, out string) splitManifest {
	t.Helper()
	b, err := os.ReadFile(out + ".manifest.json")
	require.NoError(t, err)
	var m splitManifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func scenariosOf(rows []pairRow) []string {
	var s []string
	for _, r := range rows {
		if !slices.Contains(s, r.Scenario) {
			s = append(s, r.Scenario)
		}
	}
	slices.Sort(s)
	return s
}

func TestPairsBuildPaperSplit(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	out := filepath.Join(dir, "out", "pairs.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	code, stdout, stderr := runCLI(t, "pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "paper", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, []string{"pairs-test.jsonl", "pairs-train.jsonl", "pairs.jsonl.manifest.json"}, dirNames(t, filepath.Dir(out)))

	train := readPairsJSONL(t, filepath.Join(dir, "out", "pairs-train.jsonl"))
	test := readPairsJSONL(t, filepath.Join(dir, "out", "pairs-test.jsonl"))
	assert.Len(t, append(train, test...), 1379)
	assert.Equal(t, paperTestScenariosInV1, scenariosOf(test), "the test side holds exactly the v1 scenarios of App. D.1")
	for _, s := range scenariosOf(train) {
		assert.NotContains(t, paperTestScenariosInV1, s)
	}
	// No trajectory has elapse levels on both sides.
	trainIDs := map[string]bool{}
	for _, r := range train {
		trainIDs[r.ID] = true
	}
	for _, r := range test {
		assert.False(t, trainIDs[r.ID], "trajectory %s is on both sides", r.ID)
	}

	m := readSplitManifest(t, out)
	sp := m.Summary.Split
	assert.Equal(t, "paper", sp.Strategy)
	assert.Len(t, sp.TestAll, 26)
	assert.Len(t, sp.TrainAll, 50)
	assert.Equal(t, paperTestScenariosInV1, sp.Test)
	assert.Equal(t, len(test), sp.TestSamples)
	assert.InDelta(t, float64(len(test))/1379, sp.TestFraction, 1e-12)
	require.Len(t, m.Outputs, 2)
	assert.Equal(t, len(train), m.Outputs[0].Rows)
	assert.Equal(t, len(test), m.Outputs[1].Rows)
	assert.Contains(t, stdout, "assignment:  paper; test fraction")
}

func TestPairsBuildGroupSplit(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	build := func(seed, name string, extra ...string) ([]pairRow, []pairRow, splitManifest) {
		out := filepath.Join(dir, name+".jsonl")
		args := append([]string{"pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "group", "--seed", seed, "--out", out}, extra...)
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		return readPairsJSONL(t, filepath.Join(dir, name+"-train.jsonl")), readPairsJSONL(t, filepath.Join(dir, name+"-test.jsonl")), readSplitManifest(t, out)
	}
	train, test, m := build("3", "a")
	sp := m.Summary.Split
	assert.Equal(t, "group", sp.Strategy)
	require.NotNil(t, sp.Seed)
	assert.EqualValues(t, 3, *sp.Seed)
	assert.InDelta(t, 0.35, sp.TestFraction, 0.03)
	for level, f := range sp.BySensitivity {
		assert.InDelta(t, 0.35, f, 0.06, level)
	}
	trainScen, testScen := scenariosOf(train), scenariosOf(test)
	for _, s := range testScen {
		assert.NotContains(t, trainScen, s, "scenario %s on both sides", s)
	}
	for _, r := range test {
		assert.Equal(t, "test", r.Split)
	}

	// Same seed, same split; the target fraction is honoured.
	_, test2, _ := build("3", "b")
	assert.Equal(t, testScen, scenariosOf(test2))
	_, _, m3 := build("3", "c", "--test-fraction", "0.2")
	assert.InDelta(t, 0.2, m3.Summary.Split.TestFraction, 0.03)
}

func TestPairsBuildUnknownScenario(t *testing.T) {
	dir := t.TempDir()
	rec := `{"id": "time_machine_rental_4", "preference": "tool", "direct_answer": "Same as before.", "history": [` +
		`{"role": "user", "content": "book it", "time": "2026-01-01T00:00:00Z"},` +
		`{"role": "assistant", "content": null, "time": "2026-01-01T00:00:01Z", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "book", "arguments": "{}"}}]},` +
		`{"role": "user", "content": "done?", "time": ["2026-01-01T00:01:00Z", "2026-01-01T01:00:00Z", "2026-01-02T00:00:00Z"]}]}`
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), rec+"\n")
	out := filepath.Join(dir, "pairs.jsonl")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", in, "--out", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `timeaware: --input `+in+`: record 1 (line 1, id time_machine_rental_4): id: id "time_machine_rental_4": unknown scenario alias "time_machine_rental"`)
	assert.Empty(t, dirNames(t, dir)[1:], "nothing but the input is left")

	// A catalog of the user's own makes it known.
	cat := writeFile(t, filepath.Join(dir, "catalog.yaml"), `scenarios:
  - name: Time Machine Rental
    sensitivity: high
    io: read_write
    paper_split: train
    aliases: [time_machine_rental]
`)
	code, _, stderr = runCLI(t, "pairs", "build", "--input", in, "--catalog", cat, "--out", out)
	require.Equal(t, 0, code, stderr)
	rows := readPairsJSONL(t, out)
	require.Len(t, rows, 3)
	assert.Equal(t, "Time Machine Rental", rows[0].Scenario)
}

func TestPairsBuildSplitUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--split", "random"}, exitUsage, "--split random: want paper or group"},
		{[]string{"--split", "group", "--test-fraction", "1.5"}, exitUsage, "--test-fraction 1.5: want a share between 0 and 1"},
		{[]string{"--catalog", filepath.Join(dir, "missing.yaml")}, exitIO, "--catalog " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
	} {
		full := append([]string{"pairs", "build", "--input", demoTrajectories, "--out", filepath.Join(dir, "p.jsonl")}, tt.args...)
		code, _, stderr := runCLI(t, full...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, stderr)
		assert.Equal(t, "timeaware: "+tt.want, firstLine(stderr), tt.args)
	}
}

func TestPairsBuildGroupSplitIsTheSameForEveryShard(t *testing.T) {
	d := v1(t)
	dir := t.TempDir()
	direct := writeDirectAnswers(t, filepath.Join(dir, "direct.jsonl"), d.IDs, nil)
	var tests [][]string
	for _, shard := range []string{"", "0/2", "1/2"} {
		out := filepath.Join(dir, "s"+strings.ReplaceAll(shard, "/", "of")+".jsonl")
		args := []string{"pairs", "build", "--input", v1Dir, "--direct-answers", direct, "--split", "group", "--seed", "5", "--out", out}
		if shard != "" {
			args = append(args, "--shard", shard)
		}
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		tests = append(tests, readSplitManifest(t, out).Summary.Split.TestAll)
	}
	assert.Equal(t, tests[0], tests[1])
	assert.Equal(t, tests[0], tests[2])
}

func TestPairsBuildRecordScenarioMustBeKnown(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(demoTrajectories)
	require.NoError(t, err)
	line := strings.SplitN(string(b), "\n", 2)[0]
	bad := strings.Replace(line, `"scenario": "Flight Search & Booking"`, `"scenario": "Flight Serach"`, 1)
	require.NotEqual(t, line, bad)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), bad+"\n")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", in, "--out", filepath.Join(dir, "p.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `id flight_status_1): id: scenario "Flight Serach" is not in the scenario catalog`)

	// A field that contradicts an id alias is an error too.
	bad = strings.Replace(strings.Replace(line, `"id": "flight_status_1"`, `"id": "delivery_tracking_99"`, 1), `"scenario": "Flight Search & Booking"`, `"scenario": "Tide Height Tracker"`, 1)
	in = writeFile(t, filepath.Join(dir, "in2.jsonl"), bad+"\n")
	code, _, stderr = runCLI(t, "pairs", "build", "--input", in, "--out", filepath.Join(dir, "p.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `scenario "Tide Height Tracker" contradicts the id, whose alias belongs to "Package / Shipment Tracker"`)
}

func TestPairsBuildSplitCommitsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	// The test file's path is taken by a directory: an output that cannot
	// be written (exit 3), found before any is (internal/output's tests
	// hold the commit to all or nothing when one appears later).
	require.NoError(t, os.Mkdir(filepath.Join(dir, "p-test.jsonl"), 0o755))
	code, _, stderr := runCLI(t, "pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes,
		"--direct-answers", demoDirect, "--split", "paper", "--out", filepath.Join(dir, "p.jsonl"))
	assert.Equal(t, exitIO, code, stderr)
	assert.Contains(t, stderr, filepath.Join(dir, "p-test.jsonl")+": is a directory; name a file")
	assert.Equal(t, []string{"p-test.jsonl"}, dirNames(t, dir), "no train file, manifest or temp file is left")
}

func TestPairsManifestConfigIsTyped(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	code, _, stderr := runCLI(t, "pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes,
		"--direct-answers", demoDirect, "--min-margin", "0.5", "--seed", "3", "--out", out)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(out + ".manifest.json")
	require.NoError(t, err)
	var m struct {
		Config map[string]any `json:"config"`
	}
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, 0.5, m.Config["pairs.min_margin"])
	assert.Equal(t, 3.0, m.Config["pairs.seed"])
	assert.Equal(t, false, m.Config["pairs.confident_only"])
	assert.NotContains(t, m.Config, "pairs.generate.api_key_env")
}
