package splits

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/output"
)

// etFiles writes empty files at the paths below dir.
func etFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(name+"\n"), 0o644))
	}
}

// etManifest writes a manifest at dir/name listing the outputs (path and
// role) with their hashes.
func etManifest(t *testing.T, dir, name, command string, summary any, outputs ...[2]string) string {
	t.Helper()
	m := &output.Manifest{Tool: "timeaware", Command: command, Summary: summary}
	for _, o := range outputs {
		e, err := output.HashFile(filepath.Join(dir, o[0]), o[1])
		require.NoError(t, err)
		m.Outputs = append(m.Outputs, e)
	}
	mp := filepath.Join(dir, name)
	require.NoError(t, output.WriteManifest(mp, m))
	return mp
}

func TestExpandArg(t *testing.T) {
	dir := t.TempDir()
	etFiles(t, dir, "pairs-train.parquet", "pairs-test.parquet", "plain.jsonl", "notes.txt", "teacher.jsonl",
		"data/train/a.parquet", "data/train/b.parquet", "data/validation/c.jsonl", "mixed/x.arrow")
	budget, ok := PresetForCommand("synth budget")
	require.True(t, ok)
	split := &output.SplitSummary{Strategy: StrategyHash, Unit: "task", Target: 0.2, TestFraction: 0.25,
		Rows: map[string]int{Train: 6, Test: 2}, Units: map[string]int{Train: 3, Test: 1}}
	synth := etManifest(t, dir, "budget.jsonl.manifest.json", "synth budget", map[string]any{"tasks": 4, "split": split},
		[2]string{"pairs-train.parquet", Train}, [2]string{"pairs-test.parquet", Test}, [2]string{"notes.txt", "notes"},
		[2]string{"teacher.jsonl", "teacher_requests"}) // a dataset file, but requests for a teacher, not rows of the split
	byName := etManifest(t, dir, "named.manifest.json", "unknown command", map[string]any{},
		[2]string{"pairs-test.parquet", "rows"}, [2]string{"plain.jsonl", "rows"})
	at := func(name string) string { return filepath.Join(dir, name) }

	for _, tc := range []struct {
		name, arg, side string
		want            []ArgFile
		split           *ManifestSplit
	}{
		{name: "a file named by its side", arg: at("pairs-test.parquet"),
			want: []ArgFile{{Path: at("pairs-test.parquet"), Side: Test}}},
		{name: "a file whose name says no side", arg: at("plain.jsonl"),
			want: []ArgFile{{Path: at("plain.jsonl")}}},
		{name: "a side given outright", arg: at("pairs-test.parquet"), side: Against,
			want: []ArgFile{{Path: at("pairs-test.parquet"), Side: Against}}},
		{name: "a directory of sides", arg: at("data"),
			want: []ArgFile{{Path: at("data/train/a.parquet"), Side: Train}, {Path: at("data/train/b.parquet"), Side: Train},
				{Path: at("data/validation/c.jsonl"), Side: Test}}},
		{name: "a directory with a side given", arg: at("mixed"), side: Train,
			want: []ArgFile{{Path: at("mixed/x.arrow"), Side: Train}}},
		{name: "a manifest: roles, preset and split", arg: synth,
			want:  []ArgFile{{Path: at("pairs-train.parquet"), Side: Train, Preset: budget}, {Path: at("pairs-test.parquet"), Side: Test, Preset: budget}},
			split: &ManifestSplit{Strategy: StrategyHash, Target: 0.2, Units: map[string]int{Train: 3, Test: 1}}},
		{name: "a manifest whose roles say no side", arg: byName,
			want: []ArgFile{{Path: at("pairs-test.parquet"), Side: Test}, {Path: at("plain.jsonl")}}},
		{name: "a manifest with a side given", arg: synth, side: Test,
			want:  []ArgFile{{Path: at("pairs-train.parquet"), Side: Test, Preset: budget}, {Path: at("pairs-test.parquet"), Side: Test, Preset: budget}},
			split: &ManifestSplit{Strategy: StrategyHash, Target: 0.2, Units: map[string]int{Train: 3, Test: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, split, err := ExpandArg(tc.arg, tc.side)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.split, split)
		})
	}
}

func TestExpandArgErrors(t *testing.T) {
	dir := t.TempDir()
	etFiles(t, dir, "a.parquet", "notes.txt", "empty/readme.md")
	noData := etManifest(t, dir, "notes.manifest.json", "synth budget", nil, [2]string{"notes.txt", "notes"})
	changed := etManifest(t, dir, "a.manifest.json", "synth budget", nil, [2]string{"a.parquet", Train})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.parquet"), []byte("other bytes"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.manifest.json"), []byte("{"), 0o644))
	for _, tc := range []struct {
		name, arg, err string
		changed        bool
	}{
		{name: "missing", arg: "nowhere.parquet", err: "nowhere.parquet: no such file or directory"},
		{name: "unknown format", arg: filepath.Join(dir, "notes.txt"),
			err: filepath.Join(dir, "notes.txt") + ": unknown dataset format (want a .parquet, .arrow or .jsonl file, a directory of them, or a .manifest.json)"},
		{name: "directory without data", arg: filepath.Join(dir, "empty"), err: "holds no dataset files"},
		{name: "manifest without data", arg: noData, err: noData + ": the manifest lists no dataset outputs"},
		{name: "not a manifest", arg: filepath.Join(dir, "bad.manifest.json"), err: "not a timeaware manifest"},
		{name: "output changed", arg: changed, err: changed + ": " + filepath.Join(dir, "a.parquet") + " has changed since the build", changed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ExpandArg(tc.arg, "")
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.err)
			assert.Equal(t, tc.changed, errors.Is(err, output.ErrChanged))
		})
	}
}
