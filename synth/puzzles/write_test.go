package puzzles

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/synth"
)

// jsonRows reads a JSONL file's rows.
func jsonRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

func writeRows(t *testing.T, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

func extra(r map[string]any, key string) any { return r["extra_info"].(map[string]any)[key] }

func readManifest(t *testing.T, path string) output.Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m output.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func testOutput(path string) synth.Output {
	return synth.Output{Path: path, Format: dataset.JSONL, Manifest: output.Manifest{Tool: "test", Command: "puzzles"}}
}

// TestWriteSplitsByEvent checks that a split keeps each event's puzzles on
// one side, that the two files hold the puzzles Generate makes, each once,
// and that the manifest records the split.
func TestWriteSplitsByEvent(t *testing.T) {
	dir := t.TempDir()
	opt := testOptions(9, nil)
	want := map[string]string{} // id -> group
	_, err := Generate(context.Background(), opt, Range{Count: 80}, 1, func(p *Puzzle) error {
		want[p.ID] = p.Group
		return nil
	})
	require.NoError(t, err)

	o := testOutput(filepath.Join(dir, "p.jsonl"))
	o.TestFraction = 0.25
	w, err := Write(context.Background(), opt, Range{Count: 80}, 0, o)
	require.NoError(t, err)
	require.Len(t, w.Outputs, 2)
	require.NotNil(t, w.Split)
	assert.Equal(t, 80, w.Summary.Puzzles)

	side := map[string]string{} // group -> side
	got := map[string]string{}
	for i, name := range []string{"p-train.jsonl", "p-test.jsonl"} {
		assert.Equal(t, filepath.Join(dir, name), w.Outputs[i].Path)
		for _, r := range jsonRows(t, filepath.Join(dir, name)) {
			id, group, split := extra(r, "id").(string), extra(r, "group").(string), extra(r, "split").(string)
			assert.Equal(t, []string{"train", "test"}[i], split, id)
			if s, ok := side[group]; ok {
				assert.Equal(t, s, split, "event %q straddles the split", group)
			}
			side[group] = split
			got[id] = group
		}
	}
	assert.Equal(t, want, got)
	sides := map[string]int{}
	for _, s := range side {
		sides[s]++
	}
	assert.Positive(t, sides["test"], "events on the test side")
	assert.Greater(t, sides["train"], sides["test"])

	m := readManifest(t, w.ManifestPath)
	assert.Equal(t, filepath.Join(dir, "p.jsonl.manifest.json"), w.ManifestPath)
	assert.Equal(t, []output.Entry{}, m.Inputs)
	summary := m.Summary.(map[string]any)
	assert.EqualValues(t, 80, summary["puzzles"])
	assert.Equal(t, "event", summary["split"].(map[string]any)["unit"])
}

func TestWriteOneFile(t *testing.T) {
	dir := t.TempDir()
	opt := testOptions(3, nil)
	o := testOutput(filepath.Join(dir, "p.jsonl"))
	w, err := Write(context.Background(), opt, Range{Start: 10, Count: 9, Shard: mustShard(t, "1/3")}, 2, o)
	require.NoError(t, err)
	assert.Nil(t, w.Split)
	rows := jsonRows(t, o.Path)
	require.Len(t, rows, 3, "indexes 10 to 18, one in three")
	for _, r := range rows {
		assert.EqualValues(t, 1, int(extra(r, "index").(float64))%3)
	}
	assert.Equal(t, 6, w.Summary.Skipped)
}

func TestWriteSplitNeedsTwoEvents(t *testing.T) {
	dir := t.TempDir()
	opt := testOptions(1, func(o *Options) { o.KB = mustKB(t, "event,start,end\nthe Moon landing,1969-07-20,\n") })
	o := testOutput(filepath.Join(dir, "p.jsonl"))
	o.TestFraction = 0.5
	_, err := Write(context.Background(), opt, Range{Count: 5}, 1, o)
	var oe *synth.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "test_fraction", oe.Key)
	assert.ErrorContains(t, err, "the split is by knowledge-base event: ")
	assert.NoFileExists(t, filepath.Join(dir, "p-train.jsonl"))
}

func TestWritePublished(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join("..", "..", "examples", "puzzles", "published_sample.json")
	o := testOutput(filepath.Join(dir, "pub.jsonl"))
	kb := output.Entry{Path: "kb.csv", Role: "knowledge_base", SHA256: "00"}
	callers := []output.Entry{kb}
	o.Manifest.Inputs = callers
	var reported []string
	decided := 0
	w, err := WritePublished(context.Background(), DefaultOptions(), sample, o, func(im *Imported) error {
		reported = append(reported, im.ID)
		if im.Decided() {
			decided++
		}
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, reported, 12, "every record, decided or not")
	assert.Equal(t, 12, w.Summary.Records)
	rows := jsonRows(t, o.Path)
	require.Len(t, rows, decided)
	assert.Equal(t, 9, decided)
	for _, r := range rows {
		// DefaultOptions' split, train, labels generated rows only.
		assert.Equal(t, "test", r["extra_info"].(map[string]any)["split"], "the published set is an evaluation set")
	}
	assert.Equal(t, []output.Entry{kb}, callers, "the caller's inputs stay as they were")
	m := readManifest(t, w.ManifestPath)
	require.Len(t, m.Inputs, 2)
	assert.Equal(t, kb, m.Inputs[0])
	assert.Equal(t, output.Entry{Path: sample, Role: "published_puzzles", SHA256: sha256Of(t, sample), Bytes: fileSize(t, sample)}, m.Inputs[1])
	assert.EqualValues(t, 12, m.Summary.(map[string]any)["records"])
}

// TestWritePublishedDisputedPolicy: the disputed-data policy of generation
// holds for the import: with avoid (the default) a record whose answer
// depends on a disputed lunar day is undecidable and not written; with
// allow the embedded table decides it, as it decides generated puzzles, and
// it is judged and written. Days outside the table stay undecidable.
func TestWritePublishedDisputedPolicy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "published.json")
	require.NoError(t, os.WriteFile(in, []byte(`[
{"identifier": "m6", "constraints_meta": [{"type": "explicit_year", "value": 1933}, {"type": "month", "value": 7}, {"type": "day_of_month_specific", "value": 23}, {"type": "lunar_month", "value": 6}], "solutions": ["1933-07-23"], "year_range": [1900, 2000]},
{"identifier": "m12", "constraints_meta": [{"type": "month", "value": 1}, {"type": "day_of_month_specific", "value": 10}, {"type": "lunar_month", "value": 12}], "solutions": ["1802-01-10", "1803-01-10", "1805-01-10", "1807-01-10", "1808-01-10", "1810-01-10"], "year_range": [1800, 1810]}
]`), 0o644))
	for _, tc := range []struct {
		policy   string
		verdicts []string
		causes   []string
		written  []string
	}{
		{"", []string{VerdictUndecidable, VerdictUndecidable}, []string{CauseLunarDisputed, CauseLunarUnknown}, nil},
		{DisputedAvoid, []string{VerdictUndecidable, VerdictUndecidable}, []string{CauseLunarDisputed, CauseLunarUnknown}, nil},
		// The table starts the sixth month of 1933 on 07-23, and puts
		// 1808-01-10 (the disputed new year's month before) in month 12, as
		// published; 1800-01-10 precedes the table.
		{DisputedAllow, []string{VerdictAgree, VerdictUndecidable}, []string{"", CauseLunarUnknown}, []string{"m6"}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Disputed = tc.policy
			o := testOutput(filepath.Join(t.TempDir(), "pub.jsonl"))
			var verdicts, causes []string
			_, err := WritePublished(context.Background(), opt, in, o, func(im *Imported) error {
				verdicts, causes = append(verdicts, im.Verdict), append(causes, im.Cause)
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, tc.verdicts, verdicts)
			assert.Equal(t, tc.causes, causes)
			var written []string
			for _, r := range jsonRows(t, o.Path) {
				written = append(written, r["extra_info"].(map[string]any)["id"].(string))
			}
			assert.Equal(t, tc.written, written)
		})
	}
}

func mustShard(t *testing.T, s string) shard.Shard {
	t.Helper()
	sh, err := shard.Parse(s)
	require.NoError(t, err)
	return sh
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

func TestWritePublishedErrors(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join("..", "..", "examples", "puzzles", "published_sample.json")
	none := func(*Imported) error { return nil }
	for _, tc := range []struct {
		name, path string
		edit       func(*synth.Output)
		report     func(*Imported) error
		want       string
		input      bool
	}{
		{"missing", filepath.Join(dir, "none.json"), nil, none, "no such file", true},
		{"not json", filepath.Join("..", "..", "examples", "puzzles", "kb.csv"), nil, none, "record 1", true},
		{"report fails", sample, nil, func(*Imported) error { return fmt.Errorf("stop") }, "stop", true},
		{"split", sample, func(o *synth.Output) { o.TestFraction = 0.5 }, none, "test_fraction: an imported set is not split", false},
		{"output in the way", sample, func(o *synth.Output) { require.NoError(t, os.Mkdir(o.Path, 0o755)) }, none, "is a directory; name a file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOutput(filepath.Join(t.TempDir(), "pub.jsonl"))
			if tc.edit != nil {
				tc.edit(&o)
			}
			_, err := WritePublished(context.Background(), DefaultOptions(), tc.path, o, tc.report)
			require.ErrorContains(t, err, tc.want)
			var ie *InputError
			assert.Equal(t, tc.input, errors.As(err, &ie))
			if tc.input {
				assert.Equal(t, "import_published", ie.Key)
				assert.Equal(t, tc.path, ie.Path)
				assert.NoFileExists(t, o.Path)
			}
		})
	}
}

func TestSolveCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.jsonl")
	opt := testOptions(4, func(o *Options) { o.MinSolutions, o.MaxSolutions = 0, 2 })
	_, err := Write(context.Background(), opt, Range{Count: 12}, 1, testOutput(path))
	require.NoError(t, err)
	rows := jsonRows(t, path)
	// Row 0: a fact no day satisfies, stored without a solution: right.
	rows[0]["constraints_meta"].([]any)[0] = map[string]any{"kind": "month", "level": "month", "month": 13}
	rows[0]["solutions"], rows[0]["reward_model"].(map[string]any)["ground_truth"] = []any{}, "None"
	// Row 1: a stored answer that differs.
	rows[1]["solutions"] = []any{"1899-12-31"}
	// Row 2: a fact of no known kind: it cannot be solved.
	rows[2]["constraints_meta"].([]any)[0].(map[string]any)["kind"] = "moon_phase"
	bad := filepath.Join(dir, "bad.jsonl")
	writeRows(t, bad, rows)

	var lines []string
	sum, err := Solve(context.Background(), bad, dataset.JSONL, SolverOptions{}, func(v *Verdict) error {
		if l := v.Report(); l != "" {
			lines = append(lines, l)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, &SolveSummary{Checked: 12, Differ: 2, NoDay: 1}, sum)
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], "row 1 (id puzzles-s4-0, index 0): no solution, as stored: "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "row 2 (id puzzles-s4-1, index 1): stored 1899-12-31 "), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "row 3 (id puzzles-s4-2, index 2): cannot solve: "), lines[2])

	_, err = Solve(context.Background(), filepath.Join(dir, "none.jsonl"), dataset.JSONL, SolverOptions{}, nil)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, filepath.Join(dir, "none.jsonl"), pe.Path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Solve(ctx, bad, dataset.JSONL, SolverOptions{}, func(*Verdict) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)
}

// TestSolveRefusesAFileWithoutRecords: an empty file, one of blank lines
// and a Parquet file of no rows hold no puzzle to check: Solve refuses them
// with dataset.ErrNoRecords, naming the file, and reports nothing.
func TestSolveRefusesAFileWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	noRows := filepath.Join(dir, "none.parquet")
	o := testOutput(noRows)
	o.Format = dataset.Parquet
	_, err := Write(context.Background(), testOptions(1, nil), Range{Count: 0}, 1, o)
	require.NoError(t, err)
	empty, blank := filepath.Join(dir, "empty.jsonl"), filepath.Join(dir, "blank.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	require.NoError(t, os.WriteFile(blank, []byte("\n\n"), 0o644))
	for _, tc := range []struct {
		name, path string
		format     *dataset.Format
	}{
		{"empty", empty, dataset.JSONL},
		{"blank lines", blank, dataset.JSONL},
		{"no rows", noRows, dataset.Parquet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reported := 0
			sum, err := Solve(context.Background(), tc.path, tc.format, SolverOptions{}, func(*Verdict) error {
				reported++
				return nil
			})
			require.ErrorIs(t, err, dataset.ErrNoRecords)
			assert.EqualError(t, err, tc.path+": no records")
			assert.Nil(t, sum)
			assert.Zero(t, reported)
		})
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join("..", "..", "examples", "puzzles", "kb.csv")
	sets := filepath.Join(dir, "sets.csv")
	require.NoError(t, os.WriteFile(sets, []byte("set,event,first,every,through,cancelled,moved\nfairs,the fair,1900,10,1990,,\n"), 0o644))
	o := DefaultOptions()
	inputs, err := o.ReadFiles(kb, sets)
	require.NoError(t, err)
	assert.Equal(t, []output.Entry{
		{Path: kb, Role: "knowledge_base", SHA256: sha256Of(t, kb), Bytes: fileSize(t, kb)},
		{Path: sets, Role: "year_sets", SHA256: sha256Of(t, sets), Bytes: fileSize(t, sets)},
	}, inputs)
	assert.Len(t, o.KB, 8)
	require.Len(t, o.YearSets, 1)
	assert.Equal(t, "fairs", o.YearSets[0].Name)

	o = DefaultOptions()
	inputs, err = o.ReadFiles("", "")
	require.NoError(t, err)
	assert.Empty(t, inputs)
	assert.Equal(t, DefaultOptions().KB, o.KB, "no file leaves the defaults")

	for _, tc := range []struct{ kb, sets, key, path string }{
		{filepath.Join(dir, "none.csv"), "", "kb", filepath.Join(dir, "none.csv")},
		{kb, kb, "year_sets", kb},
	} {
		o := DefaultOptions()
		_, err := o.ReadFiles(tc.kb, tc.sets)
		var ie *InputError
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, tc.key, ie.Key)
		assert.Equal(t, tc.path, ie.Path)
		assert.Equal(t, DefaultOptions().YearSets, o.YearSets, "a file that fails leaves its option")
	}
}
