package splits

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

// cfRows writes JSONL rows at dir/name and returns the path.
func cfRows(t *testing.T, dir, name string, rows ...map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func cfRow(id, topic, question string) map[string]any {
	return map[string]any{"id": id, "topic": topic, "question": question}
}

func TestExpandArgs(t *testing.T) {
	dir := t.TempDir()
	etFiles(t, dir, "a-train.jsonl", "a-test.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "e.jsonl", "f-train.jsonl", "f-test.jsonl")
	at := func(name string) string { return filepath.Join(dir, name) }
	first := etManifest(t, dir, "first.manifest.json", "synth traveler",
		map[string]any{"split": map[string]any{"strategy": StrategyHash, "target_test_fraction": 0.2, "units": map[string]int{Train: 8, Test: 2}}},
		[2]string{"a-train.jsonl", Train}, [2]string{"a-test.jsonl", Test})
	last := etManifest(t, dir, "last.manifest.json", "synth traveler",
		map[string]any{"split": map[string]any{"strategy": StrategyExact, "target_test_fraction": 0.5, "units": map[string]int{Train: 1, Test: 1}}},
		[2]string{"f-train.jsonl", Train}, [2]string{"f-test.jsonl", Test})
	flagged := etManifest(t, dir, "flagged.manifest.json", "synth traveler",
		map[string]any{"split": map[string]any{"strategy": StrategyHash, "target_test_fraction": 0.9}}, [2]string{"e.jsonl", "rows"})
	traveler, _ := PresetForCommand("synth traveler")

	files, split, err := ExpandArgs([]string{first, at("b.jsonl"), last}, []string{at("c.jsonl")}, []string{flagged},
		[]string{at("d.jsonl")})
	require.NoError(t, err)
	assert.Equal(t, []ArgFile{
		{Path: at("a-train.jsonl"), Side: Train, Preset: traveler}, {Path: at("a-test.jsonl"), Side: Test, Preset: traveler},
		{Path: at("b.jsonl")},
		{Path: at("f-train.jsonl"), Side: Train, Preset: traveler}, {Path: at("f-test.jsonl"), Side: Test, Preset: traveler},
		{Path: at("c.jsonl"), Side: Train},
		{Path: at("e.jsonl"), Side: Test, Preset: traveler},
		{Path: at("d.jsonl"), Side: Against},
	}, files, "the arguments in order, then train, test and against")
	assert.Equal(t, &ManifestSplit{Strategy: StrategyExact, Target: 0.5, Units: map[string]int{Train: 1, Test: 1}}, split,
		"the last manifest among the arguments; not that of a manifest given for a side")

	files, split, err = ExpandArgs(nil, []string{at("c.jsonl")}, []string{at("d.jsonl")}, nil)
	require.NoError(t, err)
	assert.Equal(t, []ArgFile{{Path: at("c.jsonl"), Side: Train}, {Path: at("d.jsonl"), Side: Test}}, files)
	assert.Nil(t, split)

	for _, tc := range []struct {
		name                       string
		args, train, test, against []string
		side, arg                  string
		fileSystem                 bool
	}{
		{name: "an argument", args: []string{at("b.jsonl"), at("none.jsonl")}, arg: at("none.jsonl"), fileSystem: true},
		{name: "a train path", args: []string{at("b.jsonl")}, train: []string{at("notes.txt")}, side: Train, arg: at("notes.txt")},
		{name: "a test path", test: []string{at("none")}, side: Test, arg: at("none"), fileSystem: true},
		{name: "an against path", train: []string{at("c.jsonl")}, against: []string{at("none")}, side: Against, arg: at("none"), fileSystem: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.arg == at("notes.txt") {
				etFiles(t, dir, "notes.txt")
			}
			files, split, err := ExpandArgs(tc.args, tc.train, tc.test, tc.against)
			assert.Nil(t, files)
			assert.Nil(t, split)
			var ae *ArgError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.side, ae.Side)
			assert.Equal(t, tc.arg, ae.Arg)
			assert.Equal(t, ae.Err.Error(), err.Error(), "the error is ExpandArg's, which names the argument")
			assert.True(t, strings.HasPrefix(err.Error(), tc.arg+": "), err.Error())
			assert.Equal(t, tc.fileSystem, errors.Is(err, fs.ErrNotExist), "the cause is kept")
		})
	}
}

func TestColumnSetting(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want *string
	}{
		{"", nil},
		{"  \t", nil},
		{"none", new("")},
		{" NoNe ", new("")},
		{"question", new("question")},
		{" prompt:user, answer ", new("prompt:user, answer")},
		{"nones", new("nones")},
	} {
		assert.Equal(t, tc.want, ColumnSetting(tc.raw), "%q", tc.raw)
	}
}

func TestStrictOptions(t *testing.T) {
	base := DefaultGateOptions()
	with := func(change func(o *GateOptions)) GateOptions {
		o := base
		change(&o)
		return o
	}
	for _, tc := range []struct {
		name   string
		opt    GateOptions
		key    string
		reason string
		bands  int
	}{
		{name: "the defaults", opt: base, bands: base.Bands},
		{name: "one shingle word", opt: with(func(o *GateOptions) { o.ShingleWords = 1 }), bands: base.Bands},
		{name: "no shingle words", opt: with(func(o *GateOptions) { o.ShingleWords = 0 }), key: "shingle_words", reason: "want at least 1"},
		{name: "one permutation", opt: with(func(o *GateOptions) { o.Permutations, o.Bands = 1, 1 }), bands: 1},
		{name: "no permutations", opt: with(func(o *GateOptions) { o.Permutations, o.Bands = 0, 0 }), key: "permutations", reason: "want at least 1"},
		{name: "negative bands", opt: with(func(o *GateOptions) { o.Bands = -1 }), key: "bands", reason: "want a divisor of the permutations (128)"},
		{name: "bands that do not divide", opt: with(func(o *GateOptions) { o.Bands = 3 }), key: "bands", reason: "want a divisor of the permutations (128)"},
		{name: "bands that divide", opt: with(func(o *GateOptions) { o.Bands = 32 }), bands: 32},
		{name: "as many bands as permutations", opt: with(func(o *GateOptions) { o.Bands = 128 }), bands: 128},
		{name: "bands chosen", opt: with(func(o *GateOptions) { o.Bands, o.NearDuplicateThreshold = 0, 0.5 }), bands: DefaultBands(128, 0.5)},
		{name: "no test fraction", opt: with(func(o *GateOptions) { o.TestFraction = 0 }), bands: base.Bands},
		{name: "a test fraction just under 1", opt: with(func(o *GateOptions) { o.TestFraction = 0.99 }), bands: base.Bands},
		{name: "a test fraction of 1", opt: with(func(o *GateOptions) { o.TestFraction = 1 }), key: "test_fraction", reason: "want 0 (skip) or a share between 0 and 1"},
		{name: "a negative test fraction", opt: with(func(o *GateOptions) { o.TestFraction = -0.01 }), key: "test_fraction", reason: "want 0 (skip) or a share between 0 and 1"},
		{name: "no tolerance", opt: with(func(o *GateOptions) { o.Tolerance = 0 }), bands: base.Bands},
		{name: "a negative tolerance", opt: with(func(o *GateOptions) { o.Tolerance = -0.01 }), key: "tolerance", reason: "want 0 or more"},
		{name: "a threshold of 1", opt: with(func(o *GateOptions) { o.NearDuplicateThreshold = 1 }), bands: base.Bands},
		{name: "a threshold over 1", opt: with(func(o *GateOptions) { o.NearDuplicateThreshold = 1.01 }), key: "near_duplicate_threshold",
			reason: "want a similarity in (0, 1], or a negative value to disable the check"},
		{name: "a threshold of 0", opt: with(func(o *GateOptions) { o.NearDuplicateThreshold = 0 }), key: "near_duplicate_threshold",
			reason: "want a similarity in (0, 1], or a negative value to disable the check"},
		{name: "no near-duplicate check", opt: with(func(o *GateOptions) { o.NearDuplicateThreshold = -1 }), bands: base.Bands},
		{name: "all findings", opt: with(func(o *GateOptions) { o.MaxFindings = -1 }), bands: base.Bands},
		{name: "no findings", opt: with(func(o *GateOptions) { o.MaxFindings = 0 }), bands: base.Bands},
		{name: "fewer than -1 findings", opt: with(func(o *GateOptions) { o.MaxFindings = -2 }), key: "max_findings", reason: "want -1 (all) or more"},
		{name: "the first problem", opt: with(func(o *GateOptions) { o.Tolerance, o.MaxFindings = -1, -2 }), key: "tolerance", reason: "want 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StrictOptions(tc.opt)
			if tc.key != "" {
				var oe *OptionError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, tc.key, oe.Key)
				assert.EqualError(t, oe.Err, tc.reason)
				assert.Equal(t, "splits: "+tc.key+": "+tc.reason, err.Error())
				return
			}
			require.NoError(t, err)
			want := tc.opt
			want.Bands = tc.bands
			assert.Equal(t, want, got, "only the bands are filled in")
		})
	}
}

func TestFileGateOptions(t *testing.T) {
	group := func(s string) string { return "g-" + s }
	full := &Columns{Preset: TravelerPreset.Name, Text: []string{"q"}, Group: "event", GroupName: "event set", ID: []string{"id"},
		Split: "split", Sensitivity: "sensitivity", Label: "label", GroupFromID: group}
	gate := DefaultGateOptions()
	gate.TestFraction, gate.Tolerance = 0.3, 0.05
	for _, tc := range []struct {
		name            string
		opt             FilesOptions
		cols            *Columns
		fraction, tol   float64
		sensitivities   []string
		noSensitivities bool
	}{
		{name: "a target set outright", opt: FilesOptions{Gate: gate, TestFractionSet: true,
			Split: &ManifestSplit{Strategy: StrategyExact, Target: 0.5, Units: map[string]int{Train: 2, Test: 2}}},
			cols: full, fraction: 0.3, tol: 0.05},
		{name: "the manifest's target, its tolerance wider", opt: FilesOptions{Gate: gate,
			Split: &ManifestSplit{Strategy: StrategyExact, Target: 0.5, Units: map[string]int{Train: 2, Test: 2}}},
			cols: full, fraction: 0.5, tol: 0.25},
		{name: "the manifest's target, the tolerance wider", opt: FilesOptions{Gate: gate,
			Split: &ManifestSplit{Strategy: StrategyExact, Target: 0.25, Units: map[string]int{Train: 75, Test: 25}}},
			cols: full, fraction: 0.25, tol: 0.05},
		{name: "the manifest's target, a single unit", opt: FilesOptions{Gate: gate,
			Split: &ManifestSplit{Strategy: StrategyExact, Target: 0.4, Units: map[string]int{Test: 1}}},
			cols: full, fraction: 0.4, tol: 1},
		{name: "the manifest's target without units", opt: FilesOptions{Gate: gate,
			Split: &ManifestSplit{Strategy: StrategyGroup, Target: 0.35}},
			cols: full, fraction: 0.35, tol: 0.05},
		{name: "no target for other than pairs", opt: FilesOptions{Gate: gate}, cols: full, fraction: 0, tol: 0.05},
		{name: "no target without a preset", opt: FilesOptions{Gate: gate}, cols: &Columns{Text: []string{"q"}, Sensitivity: "s"},
			fraction: 0, tol: 0.05},
		{name: "the paper's target for pairs", opt: FilesOptions{Gate: gate},
			cols: &Columns{Preset: PairsPreset.Name, Text: []string{"q"}, Sensitivity: "s"}, fraction: 0.3, tol: 0.05},
		{name: "no sensitivity column", opt: FilesOptions{Gate: gate, TestFractionSet: true},
			cols: &Columns{Text: []string{"q"}}, fraction: 0.3, tol: 0.05, noSensitivities: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fileGateOptions(tc.opt, tc.cols)
			assert.Equal(t, tc.fraction, got.TestFraction)
			assert.InDelta(t, tc.tol, got.Tolerance, 1e-12)
			assert.Equal(t, tc.cols.GroupName, got.GroupName)
			assert.Equal(t, tc.cols.Skips(), got.Skip)
			if tc.noSensitivities {
				assert.Equal(t, []string{}, got.Sensitivities)
			} else {
				assert.Equal(t, gate.Sensitivities, got.Sensitivities)
			}
			assert.Equal(t, gate.Permutations, got.Permutations, "the rest as given")
		})
	}
	got := fileGateOptions(FilesOptions{Gate: gate}, full)
	require.NotNil(t, got.GroupFromID)
	assert.Equal(t, "g-x", got.GroupFromID("x"))
	assert.Equal(t, 0.3, gate.TestFraction, "the caller's options stay as they were")
}

func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	train := cfRows(t, dir, "train.jsonl", cfRow("t1", "rivers", "How long is the Nile river in Egypt today?"),
		cfRow("t2", "mountains", "How high is Mount Everest above the sea?"))
	test := cfRows(t, dir, "test.jsonl", cfRow("q1", "rivers", "Which river runs through the city of Paris?"),
		cfRow("q2", "deserts", "How large is the Sahara desert in Africa?"))
	published := cfRows(t, dir, "published.jsonl", map[string]any{"prompt": "How high is Mount Everest above the sea?"})
	files := []ArgFile{{Path: train, Side: Train}, {Path: test, Side: Test}, {Path: published, Side: Against}}
	text, group, id := "question", "topic", "id"

	rep, err := CheckFiles(context.Background(), files, FilesOptions{Gate: DefaultGateOptions(),
		Columns: Overrides{Text: &text, Group: &group, ID: &id}, AgainstText: new(" prompt ")})
	require.NoError(t, err)
	assert.Equal(t, &Columns{Text: []string{"question"}, Group: "topic", GroupName: "topic", ID: []string{"id"}}, rep.Columns)
	assert.False(t, rep.Passed)
	assert.Equal(t, StatusFail, gtCheck(rep, CheckGroupDisjoint).Status, "rivers on both sides")
	assert.Equal(t, StatusFail, gtCheck(rep, CheckContamination).Status, "t2 is in the published set")
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckTestFraction).Status, "no target for a dataset of no preset")
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckSensitivityCoverage).Status)
	assert.Equal(t, "topic", rep.Options.GroupName)
	assert.Equal(t, []string{}, rep.Options.Sensitivities)
	assert.Equal(t, 2, rep.Splits[Train].Rows)
	assert.Equal(t, 2, rep.Splits[Test].Rows)
	assert.Equal(t, 1, rep.Splits[Against].Rows)

	// Without --against-text the outside set's text is the gate's, which
	// it lacks.
	_, err = CheckFiles(context.Background(), files, FilesOptions{Gate: DefaultGateOptions(),
		Columns: Overrides{Text: &text}, AgainstText: new("")})
	var ce *ColumnsError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "--against "+published+": no text column question (its columns are prompt); name it with --against-text", err.Error())

	// A column the files lack.
	_, err = CheckFiles(context.Background(), files[:2], FilesOptions{Columns: Overrides{Text: new("answer")}})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ce.Err.Error(), err.Error())
	assert.Contains(t, err.Error(), "--text answer: no such column")

	// A file that cannot be read is what it is, before any column is chosen.
	broken := filepath.Join(dir, "broken-test.jsonl")
	require.NoError(t, os.WriteFile(broken, []byte("not json\n"), 0o644))
	for _, set := range [][]ArgFile{
		{{Path: train, Side: Train}, {Path: broken, Side: Test}},
		{{Path: train, Side: Train}, {Path: test, Side: Test}, {Path: broken, Side: Against}},
	} {
		_, err = CheckFiles(context.Background(), set, FilesOptions{Columns: Overrides{Text: &text}, AgainstText: new("nothing")})
		require.Error(t, err)
		assert.False(t, errors.As(err, &ce), "%v", err)
		assert.Contains(t, err.Error(), broken+": line 1: invalid JSON at byte 2")
	}

	_, err = CheckFiles(context.Background(), []ArgFile{{Path: published, Side: Against}}, FilesOptions{})
	assert.ErrorIs(t, err, ErrNoSplitFiles)
	_, err = CheckFiles(context.Background(), nil, FilesOptions{})
	assert.ErrorIs(t, err, ErrNoSplitFiles)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = CheckFiles(ctx, files[:2], FilesOptions{Columns: Overrides{Text: &text}})
	assert.ErrorIs(t, err, context.Canceled, "the gate's own error")
}

// TestCheckFilesRefusesASideWithoutRows: a side whose files hold no row
// (empty JSONL files, however many; rows that all go to the other side) is
// refused, naming its files by their side, before or after the gate reads
// them; an empty file beside others of its side is not.
func TestCheckFilesRefusesASideWithoutRows(t *testing.T) {
	dir := t.TempDir()
	train := cfRows(t, dir, "train.jsonl", cfRow("t1", "rivers", "How long is the Nile river in Egypt today?"))
	test := cfRows(t, dir, "test.jsonl", cfRow("q1", "deserts", "How large is the Sahara desert in Africa?"))
	empty := cfRows(t, dir, "empty.jsonl")
	blank := filepath.Join(dir, "blank.jsonl")
	require.NoError(t, os.WriteFile(blank, []byte("\n \n"), 0o644))
	labelled := cfRows(t, dir, "labelled.jsonl", map[string]any{"id": "a", "question": "How long is a day on Mars?", "split": "train"},
		map[string]any{"id": "b", "question": "How long is a year on Venus?", "split": "train"})
	text := "question"
	opt := FilesOptions{Columns: Overrides{Text: &text}}
	for _, tc := range []struct {
		name  string
		files []ArgFile
		side  string
		arg   string
		msg   string
	}{
		{"empty train", []ArgFile{{Path: empty, Side: Train}, {Path: test, Side: Test}}, Train, empty, "no records on the train side"},
		{"blank test", []ArgFile{{Path: train, Side: Train}, {Path: blank, Side: Test}}, Test, blank, "no records on the test side"},
		{"two empty test files", []ArgFile{{Path: train, Side: Train}, {Path: empty, Side: Test}, {Path: blank, Side: Test}},
			Test, empty + ", " + blank, "no records on the test side"},
		{"empty against", []ArgFile{{Path: train, Side: Train}, {Path: test, Side: Test}, {Path: empty, Side: Against}},
			Against, empty, "no records on the against side"},
		{"every row on the train side", []ArgFile{{Path: labelled}}, "", labelled, "no records on the train or test side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := opt
			if tc.side == "" {
				opt.Columns.Split = new("split")
			}
			_, err := CheckFiles(context.Background(), tc.files, opt)
			var ae *ArgError
			require.ErrorAs(t, err, &ae)
			require.ErrorIs(t, err, dataset.ErrNoRecords)
			assert.Equal(t, tc.side, ae.Side)
			assert.Equal(t, tc.arg, ae.Arg)
			assert.EqualError(t, err, tc.msg)
		})
	}
	rep, err := CheckFiles(context.Background(), []ArgFile{{Path: empty, Side: Train}, {Path: train, Side: Train}, {Path: test, Side: Test}}, opt)
	require.NoError(t, err, "an empty part beside a part with rows")
	assert.Equal(t, 1, rep.Splits[Train].Rows)
}

// TestCheckFilesOfAManifest: the files of a manifest check with their
// preset's columns and against their manifest's target, or against none
// without one.
func TestCheckFilesOfAManifest(t *testing.T) {
	dir := t.TempDir()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	var rows [2][]map[string]any
	for i, w := range words {
		side := Train
		if i < 2 {
			side = Test
		}
		rows[sideIndex(side)] = append(rows[sideIndex(side)], map[string]any{
			"prompt":     []map[string]any{{"role": "system", "content": "shared instructions"}, {"role": "user", "content": strings.Repeat(w+" ", 9)}},
			"extra_info": map[string]any{"speech_time": "2025-01-01", "id": "q-" + w, "group": "set-" + w, "split": side}})
	}
	files := []ArgFile{{Path: cfRows(t, dir, "rows-train.jsonl", rows[0]...), Side: Train, Preset: TravelerPreset},
		{Path: cfRows(t, dir, "rows-test.jsonl", rows[1]...), Side: Test, Preset: TravelerPreset}}

	split := &ManifestSplit{Strategy: StrategyExact, Target: 0.25, Units: map[string]int{Train: 6, Test: 2}}
	rep, err := CheckFiles(context.Background(), files, FilesOptions{Gate: DefaultGateOptions(), Split: split})
	require.NoError(t, err)
	assert.True(t, rep.Passed, "%+v", rep.Checks)
	assert.Equal(t, TravelerPreset.Name, rep.Columns.Preset)
	assert.Equal(t, "event set", rep.Options.GroupName)
	assert.Equal(t, 0.25, rep.Options.TestFraction)
	assert.InDelta(t, 1.0/8, rep.Options.Tolerance, 1e-12, "an exact split of 8 units is within one unit")
	assert.Equal(t, StatusPass, gtCheck(rep, CheckTestFraction).Status)
	assert.Equal(t, StatusPass, gtCheck(rep, CheckGroupDisjoint).Status)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckSensitivityCoverage).Status)

	rep, err = CheckFiles(context.Background(), files, FilesOptions{Gate: DefaultGateOptions()})
	require.NoError(t, err)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckTestFraction).Status, "synthetic rows have no conventional split")
}

// sideIndex is 0 for train, 1 for test.
func sideIndex(side string) int {
	if side == Test {
		return 1
	}
	return 0
}

func TestFilesErrors(t *testing.T) {
	cause := errors.New("cause")
	for _, err := range []error{&ArgError{Side: Train, Arg: "x", Err: cause}, &ColumnsError{Err: cause}, &OptionError{Key: "bands", Err: cause}} {
		assert.ErrorIs(t, err, cause)
	}
	assert.Equal(t, "cause", (&ArgError{Side: Train, Arg: "x", Err: cause}).Error())
	assert.Equal(t, "cause", (&ColumnsError{Err: cause}).Error())
	assert.Equal(t, "splits: bands: cause", (&OptionError{Key: "bands", Err: cause}).Error())
}
