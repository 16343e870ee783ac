package output_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
)

// skRow is a row of the Sinks tests: its unit, a number and its label.
type skRow struct {
	unit  string
	n     int64
	split string
}

var skSchema = arrow.NewSchema([]arrow.Field{
	{Name: "unit", Type: arrow.BinaryTypes.String},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "split", Type: arrow.BinaryTypes.String},
}, nil)

// skBuilder is the RowBuilder of skRows.
type skBuilder struct{ b *array.RecordBuilder }

func newSkBuilder() output.RowBuilder[*skRow] {
	return &skBuilder{array.NewRecordBuilder(memory.DefaultAllocator, skSchema)}
}

func (b *skBuilder) Append(r *skRow) {
	b.b.Field(0).(*array.StringBuilder).Append(r.unit)
	b.b.Field(1).(*array.Int64Builder).Append(r.n)
	b.b.Field(2).(*array.StringBuilder).Append(r.split)
}
func (b *skBuilder) Len() int                { return b.b.Field(0).Len() }
func (b *skBuilder) NewRecord() arrow.Record { return b.b.NewRecord() }
func (b *skBuilder) Release()                { b.b.Release() }

var skUnit = output.Unit[*skRow]{Name: "task", Of: func(r *skRow) string { return r.unit },
	SetSplit: func(r *skRow, s string) { r.split = s }}

// skRows makes units × perUnit rows, numbered in order.
func skRows(units []string, perUnit int) []*skRow {
	var rows []*skRow
	for _, u := range units {
		for range perUnit {
			rows = append(rows, &skRow{unit: u, n: int64(len(rows))})
		}
	}
	return rows
}

// skRead reads a written JSONL file's rows.
func skRead(t *testing.T, path string) []skRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []skRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Unit  string `json:"unit"`
			N     int64  `json:"n"`
			Split string `json:"split"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, skRow{r.Unit, r.N, r.Split})
	}
	require.NoError(t, sc.Err())
	return rows
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestSplitSinks(t *testing.T) {
	units := make([]string, 10)
	for i := range units {
		units[i] = fmt.Sprintf("u%d", i)
	}
	exact, err := splits.NewExactSplit(1, 0.3, units)
	require.NoError(t, err)
	hash, err := splits.NewHashSplit(2, 0.5)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		split   output.Splitter
		perUnit int
		// files are the files committed, with their roles.
		files map[string]string
	}{
		{name: "one file", perUnit: 3, files: map[string]string{"rows.jsonl": "rows"}},
		{name: "exact split", split: exact, perUnit: 3, files: map[string]string{"rows-train.jsonl": output.Train, "rows-test.jsonl": output.Test}},
		{name: "hash split", split: hash, perUnit: 4, files: map[string]string{"rows-train.jsonl": output.Train, "rows-test.jsonl": output.Test}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "rows.jsonl")
			s, err := output.NewSplitSinks(output.SplitSinksOptions[*skRow]{Out: out, Format: dataset.JSONL, Schema: skSchema, Role: "rows",
				Split: tc.split, Unit: skUnit, NewBuilder: newSkBuilder})
			require.NoError(t, err)
			defer s.Release()
			defer s.Abort()
			rows := skRows(units, tc.perUnit)
			for _, r := range rows {
				require.NoError(t, s.Add(r))
			}
			require.NoError(t, s.Finish())
			entries := s.Entries(dataset.JSONL.Name)
			mp, err := s.Commit(context.Background(), &output.Manifest{Tool: "timeaware", Command: "test", Outputs: entries})
			require.NoError(t, err)
			assert.Equal(t, output.ManifestPath(out), mp)
			assert.FileExists(t, mp)
			require.Len(t, entries, len(tc.files))

			// Every row is in the file of its unit's side, labelled with
			// it; no unit is on both sides.
			sideOf := map[string]string{}
			perSide := map[string]int{}
			unitsPerSide := map[string]map[string]bool{}
			var all []int64
			for _, e := range entries {
				role, ok := tc.files[filepath.Base(e.Path)]
				require.True(t, ok, "unexpected file %s", e.Path)
				assert.Equal(t, role, e.Role)
				assert.Equal(t, "jsonl", e.Format)
				got := skRead(t, e.Path)
				assert.Equal(t, len(got), *e.Rows)
				for _, r := range got {
					all = append(all, r.n)
					want := ""
					if tc.split != nil {
						want = tc.split.Side(r.unit)
						assert.Equal(t, role, want, "row %d of unit %s", r.n, r.unit)
					}
					assert.Equal(t, want, r.split, "row %d's label", r.n)
					if prev, ok := sideOf[r.unit]; ok {
						assert.Equal(t, prev, role, "unit %s straddles the split", r.unit)
					}
					sideOf[r.unit] = role
					perSide[role]++
					if unitsPerSide[role] == nil {
						unitsPerSide[role] = map[string]bool{}
					}
					unitsPerSide[role][r.unit] = true
				}
			}
			assert.ElementsMatch(t, skNumbers(rows), all, "every row is written once")

			sum := s.Summary()
			if tc.split == nil {
				assert.Nil(t, sum)
				return
			}
			require.NotNil(t, sum)
			assert.Equal(t, &output.SplitSummary{
				Strategy: tc.split.Strategy(), Unit: "task", Target: tc.split.TestFraction(),
				TestFraction: float64(perSide[output.Test]) / float64(len(rows)),
				Rows:         map[string]int{output.Train: perSide[output.Train], output.Test: perSide[output.Test]},
				Units:        map[string]int{output.Train: len(unitsPerSide[output.Train]), output.Test: len(unitsPerSide[output.Test])},
			}, sum)
			assert.Equal(t, len(units), sum.Units[output.Train]+sum.Units[output.Test])
			if tc.split == exact {
				assert.Equal(t, 3, sum.Units[output.Test], "the exact split's share of units")
			}
		})
	}
}

func skNumbers(rows []*skRow) []int64 {
	ns := make([]int64, len(rows))
	for i, r := range rows {
		ns[i] = r.n
	}
	return ns
}

// TestSinksEmptySide: a split that leaves a side without rows is an error.
func TestSplitSinksEmptySide(t *testing.T) {
	split, err := splits.NewHashSplit(3, 0.5)
	require.NoError(t, err)
	dir := t.TempDir()
	s, err := output.NewSplitSinks(output.SplitSinksOptions[*skRow]{Out: filepath.Join(dir, "rows.jsonl"), Format: dataset.JSONL, Schema: skSchema,
		Split: split, Unit: skUnit, NewBuilder: newSkBuilder})
	require.NoError(t, err)
	defer s.Release()
	defer s.Abort()
	for _, r := range skRows([]string{"only"}, 5) {
		require.NoError(t, s.Add(r))
	}
	empty := output.Test
	if split.Side("only") == output.Test {
		empty = output.Train
	}
	assert.EqualError(t, s.Finish(), "--test-fraction 0.5: the "+empty+" side has no rows (1 task, all on the other side); give more rows or another fraction")
}

// TestSinksAbort: an aborted write leaves no file behind; an abort after
// the commit leaves the committed files alone.
func TestSplitSinksAbort(t *testing.T) {
	split, err := splits.NewHashSplit(4, 0.5)
	require.NoError(t, err)
	units := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, tc := range []struct {
		name   string
		split  output.Splitter
		finish bool
		commit bool
		want   []string
	}{
		{name: "one file, before finishing", want: nil},
		{name: "split, before finishing", split: split, want: nil},
		{name: "split, finished", split: split, finish: true, want: nil},
		{name: "split, committed", split: split, finish: true, commit: true,
			want: []string{"rows-test.jsonl", "rows-train.jsonl", "rows.jsonl.manifest.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := output.NewSplitSinks(output.SplitSinksOptions[*skRow]{Out: filepath.Join(dir, "rows.jsonl"), Format: dataset.JSONL, Schema: skSchema,
				Role: "rows", Split: tc.split, Unit: skUnit, NewBuilder: newSkBuilder})
			require.NoError(t, err)
			defer s.Release()
			for _, r := range skRows(units, 2) {
				require.NoError(t, s.Add(r))
			}
			if tc.finish {
				require.NoError(t, s.Finish())
			}
			if tc.commit {
				_, err := s.Commit(context.Background(), &output.Manifest{Tool: "timeaware", Command: "test", Outputs: s.Entries("jsonl")})
				require.NoError(t, err)
			}
			s.Abort()
			assert.Equal(t, tc.want, dirNames(t, dir))
		})
	}
}

// TestNewSinksError: a file that cannot be started is an error, and
// nothing is left behind; a missing directory is made (output.Create).
func TestNewSplitSinksError(t *testing.T) {
	split, err := splits.NewHashSplit(5, 0.5)
	require.NoError(t, err)
	dir := t.TempDir()
	blocker := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	for _, split := range []output.Splitter{nil, split} {
		_, err = output.NewSplitSinks(output.SplitSinksOptions[*skRow]{Out: filepath.Join(blocker, "sub", "rows.jsonl"), Format: dataset.JSONL, Schema: skSchema,
			Split: split, Unit: skUnit, NewBuilder: newSkBuilder})
		assert.ErrorContains(t, err, blocker+" is not a directory")
	}
	assert.Equal(t, []string{"a-file"}, dirNames(t, dir))

	s, err := output.NewSplitSinks(output.SplitSinksOptions[*skRow]{Out: filepath.Join(dir, "new", "rows.jsonl"), Format: dataset.JSONL, Schema: skSchema,
		Split: split, Unit: skUnit, NewBuilder: newSkBuilder})
	require.NoError(t, err, "a missing directory is made")
	s.Abort()
}
