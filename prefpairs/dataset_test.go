package prefpairs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/commitfs"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/splits/scenario"
)

// The demo sample (examples/pairs): six trajectories of six scenarios, 90
// votes of which eli/s3's are dropped, and a direct reply for each
// trajectory. With the votes it gives 16 pairs (two ties dropped).
var (
	sampleDir          = filepath.Join("..", "examples", "pairs")
	sampleTrajectories = filepath.Join(sampleDir, "trajectories.jsonl")
	sampleVotes        = filepath.Join(sampleDir, "votes.jsonl")
	sampleDirect       = filepath.Join(sampleDir, "direct.jsonl")
)

// sampleScenarios are the scenario fields of the sample's records, by id.
var sampleScenarios = map[string]string{
	"flight_status_1": "Flight Search & Booking", "parcel_tracker_1": "Package / Shipment Tracker",
	"share_price_1": "Stock Market Order Book", "library_hours_1": "Public Attraction Hours",
	"weather_station_1": "Live Weather Sensor Data", "exchange_rate_1": "Currency Exchange Rate",
}

// datasetOptions are the options of a build of the sample with its votes
// and direct replies into dir/pairs.jsonl.
func datasetOptions(dir string) DatasetOptions {
	return DatasetOptions{
		Inputs: []string{sampleTrajectories}, Build: DefaultOptions(),
		Annotations: sampleVotes, Consistency: ConsistencyOptions{MaxInconsistencies: DefaultMaxInconsistencies},
		DirectAnswers: sampleDirect, Out: filepath.Join(dir, "pairs.jsonl"), Format: dataset.JSONL,
		Manifest: output.Manifest{Tool: "timeaware", Version: "test", Command: "pairs build", Config: map[string]any{"seed": 3}},
	}
}

// row is what a test reads back of a pair.
type row struct {
	ID       string `json:"id"`
	Elapse   int    `json:"elapse"`
	Scenario string `json:"scenario"`
	Split    string `json:"split"`
}

func readRows(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

// jsonKeys are the keys of a JSON object, in order.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

type manifestOnDisk struct {
	Outputs []output.Entry             `json:"outputs"`
	Inputs  []output.Entry             `json:"inputs"`
	Config  map[string]any             `json:"config"`
	Summary map[string]json.RawMessage `json:"summary"`
	Notes   []string                   `json:"notes"`
}

func readManifest(t *testing.T, path string) (manifestOnDisk, json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m manifestOnDisk
	require.NoError(t, json.Unmarshal(b, &m))
	return m, b
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestBuildDatasetWritesOneFileAndItsManifest(t *testing.T) {
	dir := t.TempDir()
	opt := datasetOptions(dir)
	var inputs, pairs int
	opt.OnInputs = func(in []*output.Input) {
		inputs += len(in)
		assert.Zero(t, pairs, "the inputs are handed over before any pair")
	}
	opt.OnPair = func(*Pair) { pairs++ }
	d, err := BuildDataset(context.Background(), opt)
	require.NoError(t, err)

	assert.Equal(t, 1, inputs)
	assert.Equal(t, 16, pairs)
	assert.Equal(t, []string{"pairs.jsonl", "pairs.jsonl.manifest.json"}, dirNames(t, dir))
	rows := readRows(t, opt.Out)
	require.Len(t, rows, 16)
	for _, r := range rows {
		assert.Empty(t, r.Split, r.ID)
		assert.Equal(t, sampleScenarios[r.ID], r.Scenario, r.ID)
	}
	require.Len(t, d.Outputs, 1)
	o := d.Outputs[0]
	assert.Equal(t, opt.Out, o.Path)
	assert.Equal(t, "pairs", o.Role)
	assert.Equal(t, "jsonl", o.Format)
	require.NotNil(t, o.Rows)
	assert.Equal(t, 16, *o.Rows)
	st, err := os.Stat(opt.Out)
	require.NoError(t, err)
	assert.Equal(t, st.Size(), o.Bytes)

	assert.Equal(t, 16, d.Summary.Pairs)
	require.NotNil(t, d.Votes)
	assert.Equal(t, 18, d.Votes.Samples)
	assert.Nil(t, d.Generator)
	assert.Nil(t, d.Split)
	assert.Empty(t, d.Notes)
	assert.Equal(t, opt.Out+".manifest.json", d.ManifestPath)

	m, raw := readManifest(t, d.ManifestPath)
	assert.Equal(t, []string{"tool", "version", "command", "outputs", "inputs", "config", "summary"}, jsonKeys(t, raw))
	assert.Equal(t, d.Outputs, m.Outputs)
	assert.Equal(t, map[string]any{"seed": 3.0}, m.Config)
	var roles, paths []string
	for _, in := range m.Inputs {
		roles, paths = append(roles, in.Role), append(paths, in.Path)
		assert.Len(t, in.SHA256, 64)
	}
	assert.Equal(t, []string{"", "annotations", "direct_answers"}, roles)
	assert.Equal(t, []string{sampleTrajectories, sampleVotes, sampleDirect}, paths)
	assert.Contains(t, m.Summary, "annotations")
	assert.NotContains(t, m.Summary, "generator")
	assert.NotContains(t, m.Summary, "split")
	assert.JSONEq(t, "16", string(m.Summary["pairs"]))
}

func TestBuildDatasetSplitsByScenario(t *testing.T) {
	catalog, err := scenario.Default()
	require.NoError(t, err)
	paperSide := map[string]string{}
	for _, sc := range sampleScenarios {
		s, ok := catalog.ByName(sc)
		require.True(t, ok, sc)
		paperSide[sc] = s.PaperSplit
	}
	for _, strategy := range []string{splits.StrategyPaper, splits.StrategyGroup} {
		t.Run(strategy, func(t *testing.T) {
			dir := t.TempDir()
			opt := datasetOptions(dir)
			opt.Split = SplitOptions{Strategy: strategy, Seed: 3, TestFraction: 0.35}
			d, err := BuildDataset(context.Background(), opt)
			require.NoError(t, err)

			train, test := filepath.Join(dir, "pairs-train.jsonl"), filepath.Join(dir, "pairs-test.jsonl")
			assert.Equal(t, []string{"pairs-test.jsonl", "pairs-train.jsonl", "pairs.jsonl.manifest.json"}, dirNames(t, dir))
			require.Len(t, d.Outputs, 2)
			assert.Equal(t, []string{train, test}, []string{d.Outputs[0].Path, d.Outputs[1].Path})
			assert.Equal(t, []string{"pairs", "pairs"}, []string{d.Outputs[0].Role, d.Outputs[1].Role})
			side := map[string]string{}
			perScenario := map[string]int{}
			for path, want := range map[string]string{train: splits.Train, test: splits.Test} {
				for _, r := range readRows(t, path) {
					assert.Equal(t, want, r.Split, r.ID)
					if s, ok := side[r.Scenario]; ok {
						assert.Equal(t, s, want, "scenario %s is on both sides", r.Scenario)
					}
					side[r.Scenario] = want
					perScenario[r.Scenario]++
				}
			}
			require.Len(t, side, 6)

			// The oracle: the paper split is the catalog's paper_split; the
			// group split is GroupAssignment of the pairs per scenario.
			want := paperSide
			if strategy == splits.StrategyGroup {
				var counts []splits.ScenarioSamples
				for sc, n := range perScenario {
					counts = append(counts, splits.ScenarioSamples{Scenario: sc, Sensitivity: sensitivityOf(t, sc), Samples: n})
				}
				a, err := splits.GroupAssignment(counts, splits.GroupOptions{Seed: 3, TestFraction: 0.35})
				require.NoError(t, err)
				want = map[string]string{}
				for sc := range perScenario {
					want[sc], err = a.Side(sc)
					require.NoError(t, err)
				}
			}
			assert.Equal(t, want, side)

			require.NotNil(t, d.Split)
			assert.Equal(t, strategy, d.Split.Assignment.Strategy)
			nTest := len(readRows(t, test))
			assert.Equal(t, nTest, d.Split.TestSamples)
			assert.Equal(t, 16-nTest, d.Split.TrainSamples)
			assert.InDelta(t, float64(nTest)/16, d.Split.Fractions.Test, 1e-12)
			assert.Equal(t, map[string]int{splits.Train: 16 - nTest, splits.Test: nTest}, d.Summary.BySplit)
			m, _ := readManifest(t, d.ManifestPath)
			require.Contains(t, m.Summary, "split")
			var rec struct {
				Strategy string   `json:"strategy"`
				Test     []string `json:"test_scenarios_present"`
				Samples  int      `json:"test_samples"`
			}
			require.NoError(t, json.Unmarshal(m.Summary["split"], &rec))
			assert.Equal(t, strategy, rec.Strategy)
			assert.Equal(t, nTest, rec.Samples)
			assert.Len(t, rec.Test, countSide(side, splits.Test))
		})
	}
}

// sensitivityOf is the sensitivity field of the sample's record of
// scenario sc.
func sensitivityOf(t *testing.T, sc string) string {
	t.Helper()
	b, err := os.ReadFile(sampleTrajectories)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct{ Scenario, Sensitivity string }
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r.Scenario == sc {
			return r.Sensitivity
		}
	}
	t.Fatalf("no record of scenario %s", sc)
	return ""
}

func countSide(side map[string]string, want string) int {
	n := 0
	for _, s := range side {
		if s == want {
			n++
		}
	}
	return n
}

// Every shard of a group split draws the split of all the records, so that
// the shards' files together are the split of the whole.
func TestBuildDatasetGroupSplitIsTheSameInEveryShard(t *testing.T) {
	build := func(sh shard.Shard) *SplitReport {
		opt := datasetOptions(t.TempDir())
		opt.Build.Shard = sh
		opt.Split = SplitOptions{Strategy: splits.StrategyGroup, Seed: 7, TestFraction: 0.5}
		d, err := BuildDataset(context.Background(), opt)
		require.NoError(t, err)
		return d.Split
	}
	whole := build(shard.Shard{})
	for i := range 2 {
		part := build(shard.Shard{Index: i, Count: 2})
		assert.Equal(t, whole.Assignment.Test, part.Assignment.Test, "shard %d/2", i)
		assert.Equal(t, whole.Assignment.Train, part.Assignment.Train, "shard %d/2", i)
		assert.Less(t, part.TrainSamples+part.TestSamples, 16, "shard %d/2 writes only its own pairs", i)
	}
}

// A catalog of one's own replaces the built-in one, and its file is the
// manifest's last input.
func TestBuildDatasetOwnCatalog(t *testing.T) {
	var y strings.Builder
	y.WriteString("scenarios:\n")
	names := slices.Sorted(func(yield func(string) bool) {
		for _, sc := range sampleScenarios {
			if !yield(sc) {
				return
			}
		}
	})
	for _, sc := range names {
		split := "train"
		if sc == "Stock Market Order Book" {
			split = "test"
		}
		y.WriteString("  - name: " + sc + "\n    sensitivity: low\n    io: read_only\n    paper_split: " + split +
			"\n    aliases: [" + strings.ToLower(strings.NewReplacer(" ", "_", "&", "and", "/", "or").Replace(sc)) + "]\n")
	}
	catalog, err := scenario.Load(strings.NewReader(y.String()), "own.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	opt := datasetOptions(dir)
	opt.Catalog = catalog
	opt.CatalogFile = &output.Entry{Path: "own.yaml", Role: "catalog", SHA256: strings.Repeat("0", 64), Bytes: 1}
	opt.Split.Strategy = splits.StrategyPaper
	d, err := BuildDataset(context.Background(), opt)
	require.NoError(t, err)
	assert.Equal(t, []string{"Stock Market Order Book"}, d.Split.TestScenarios)
	for _, r := range readRows(t, filepath.Join(dir, "pairs-test.jsonl")) {
		assert.Equal(t, "share_price_1", r.ID)
	}
	m, _ := readManifest(t, d.ManifestPath)
	require.Len(t, m.Inputs, 4)
	assert.Equal(t, *opt.CatalogFile, m.Inputs[3])
}

// writeLabelled copies the sample's trajectories to a file whose v1 name
// labels every record "prefer the tool" at elapse 0.
func writeLabelled(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sampleTrajectories)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "preferTool_elapse_0.jsonl")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestBuildDatasetNotes(t *testing.T) {
	labelled := writeLabelled(t)
	tests := []struct {
		name  string
		edit  func(*DatasetOptions)
		notes []string
	}{
		{"scored by votes", func(*DatasetOptions) {}, nil},
		{"label only", func(o *DatasetOptions) {
			o.Inputs, o.Annotations, o.Build.LabelOnlyMargin = []string{labelled}, "", 1.25
		}, []string{"6 pairs are label-only: their score S is unknown (null) and their margin is label_only_margin = 1.25"}},
		// At elapse 0 every sample's S is below 1.5 (direct), against the
		// file's label; the votes at elapses 1 and 2 (12 samples) match
		// none of the file's samples.
		{"votes against the label", func(o *DatasetOptions) { o.Inputs = []string{labelled} }, []string{
			"12 annotated samples match no input sample; their votes were not used",
			"6 samples have a human score that contradicts their file or record label; the score decided",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := datasetOptions(t.TempDir())
			tt.edit(&opt)
			d, err := BuildDataset(context.Background(), opt)
			require.NoError(t, err)
			assert.Equal(t, tt.notes, d.Notes)
			m, _ := readManifest(t, d.ManifestPath)
			assert.Equal(t, tt.notes, m.Notes)
		})
	}
}

func TestBuildDatasetGeneratesMissingDirectReplies(t *testing.T) {
	srv := newFakeServer(t, okHandler("A direct reply from the model."))
	opt := datasetOptions(t.TempDir())
	opt.DirectAnswers = ""
	opt.Generate = &GeneratorOptions{URL: srv.URL, Model: "test-model"}
	d, err := BuildDataset(context.Background(), opt)
	require.NoError(t, err)
	require.NotNil(t, d.Generator)
	assert.Equal(t, srv.hits.Load(), d.Generator.Requests)
	assert.EqualValues(t, 16, d.Generator.Requests)
	assert.Equal(t, map[string]int{"generated": 16}, d.Summary.DirectSource)
	m, _ := readManifest(t, d.ManifestPath)
	assert.Contains(t, m.Summary, "generator")
	require.Len(t, m.Inputs, 2, "the trajectories and the votes")
}

func TestBuildDatasetErrors(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing.jsonl")
	badVotes := filepath.Join(tmp, "votes.jsonl")
	require.NoError(t, os.WriteFile(badVotes, []byte(`{"sample_id": "a_1", "elapse": 0, "annotator": "x", "survey": "s", "choice": "maybe"}`+"\n"), 0o644))
	// A file where a folder should be: the output cannot be created.
	noDir := filepath.Join(tmp, "plain")
	require.NoError(t, os.WriteFile(noDir, nil, 0o644))
	tests := []struct {
		name   string
		edit   func(*DatasetOptions)
		option string // the OptionError's; "" for an error of another kind
		path   func(o *DatasetOptions) string
		is     error
		text   string
	}{
		{name: "unknown split", edit: func(o *DatasetOptions) { o.Split.Strategy = "random" }, text: `prefpairs: split "random" is not paper or group`},
		{name: "annotations missing", edit: func(o *DatasetOptions) { o.Annotations = missing }, option: "annotations",
			path: func(*DatasetOptions) string { return missing }, is: fs.ErrNotExist},
		{name: "direct answers missing", edit: func(o *DatasetOptions) { o.DirectAnswers = missing }, option: "direct_answers",
			path: func(*DatasetOptions) string { return missing }, is: fs.ErrNotExist},
		{name: "bad votes", edit: func(o *DatasetOptions) { o.Annotations = badVotes }, text: badVotes + ": line 1"},
		{name: "no direct replies", edit: func(o *DatasetOptions) { o.DirectAnswers = "" }, is: ErrMissingDirect},
		{name: "generator refused", edit: func(o *DatasetOptions) {
			o.Generate = &GeneratorOptions{URL: "http://127.0.0.1:9/v1", Model: "m", MaxTokens: -1}
		},
			option: "generate", path: func(*DatasetOptions) string { return "" }, text: "max-tokens must not be negative"},
		{name: "no output folder", edit: func(o *DatasetOptions) { o.Out = filepath.Join(noDir, "p.jsonl") }, option: "out",
			path: func(o *DatasetOptions) string { return o.Out }, text: "is not a directory"},
		{name: "no output folder for a split", edit: func(o *DatasetOptions) {
			o.Out, o.Split.Strategy = filepath.Join(noDir, "p.jsonl"), splits.StrategyPaper
		}, option: "out", path: func(o *DatasetOptions) string { return output.SidePath(o.Out, splits.Train) }, text: "is not a directory"},
		{name: "unknown scenario", edit: func(o *DatasetOptions) {
			c, err := scenario.Load(strings.NewReader("scenarios:\n  - name: Other\n    sensitivity: low\n    io: read_only\n    paper_split: test\n    aliases: [other]\n"), "c.yaml")
			require.NoError(t, err)
			o.Catalog = c
		}, text: "not in the scenario catalog"},
		{name: "group split of a failing count", edit: func(o *DatasetOptions) {
			o.Inputs, o.Split.Strategy = []string{badVotes}, splits.StrategyGroup
		}, text: badVotes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opt := datasetOptions(dir)
			tt.edit(&opt)
			d, err := BuildDataset(context.Background(), opt)
			require.Error(t, err)
			assert.Nil(t, d)
			var oe *OptionError
			if tt.option == "" {
				assert.False(t, errors.As(err, &oe), "%v", err)
			} else {
				require.True(t, errors.As(err, &oe), "%v", err)
				assert.Equal(t, tt.option, oe.Option)
				assert.Equal(t, tt.path(&opt), oe.Path)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, dirNames(t, dir), "a failed build leaves nothing behind")
		})
	}
}

func TestBuildDatasetCommitFailureKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	opt := datasetOptions(dir)
	opt.Split.Strategy = splits.StrategyPaper
	manifest := output.ManifestPath(opt.Out)
	fsys := commitfs.FailFirst(commitfs.OpRename, func(p string) bool { return strings.HasSuffix(p, manifest) }, commitfs.ErrInjected)
	_, err := BuildDataset(commitfs.WithFS(context.Background(), fsys), opt)
	var oe *OptionError
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Equal(t, "out", oe.Option)
	assert.Equal(t, opt.Out, oe.Path)
	assert.ErrorIs(t, err, commitfs.ErrInjected)
	assert.Empty(t, dirNames(t, dir))
}

func TestOptionErrorText(t *testing.T) {
	err := errors.New("no such file or directory")
	assert.Equal(t, "prefpairs: annotations v.jsonl: no such file or directory",
		(&OptionError{Option: "annotations", Path: "v.jsonl", Err: err}).Error())
	assert.Equal(t, "prefpairs: generate: no such file or directory", (&OptionError{Option: "generate", Err: err}).Error())
	assert.Same(t, err, errors.Unwrap(&OptionError{Option: "out", Path: "p", Err: err}))
}
