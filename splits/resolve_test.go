package splits

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtLines are the first rows of small datasets, one of each kind the
// tests resolve columns for.
const (
	rtPairs = `{"id":"tide_3","scenario":"Tide Tracker","elapse":2,"prompt":[{"role":"user","content":"When?"}],` +
		`"chosen":"x","rejected":"y","split":"train","sensitivity":"high","label":"tool"}`
	rtBudget = `{"prompt":[{"role":"user","content":"Plan it."}],` +
		`"extra_info":{"task_id":"t1","request_id":"r1","split":"train"}}`
	rtPlain = `{"question":"When is high tide?","meta":{"topic":"sea","uid":"q1"},"part":"train","level":"low","kind":"a"}`
)

// rtWrite writes a one-row JSONL file named name in dir.
func rtWrite(t *testing.T, dir, name, line string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(line+"\n"), 0o644))
	return p
}

func rtStr(s string) *string { return &s }

func TestResolveColumnsPresets(t *testing.T) {
	dir := t.TempDir()
	pairs := rtWrite(t, dir, "pairs-train.jsonl", rtPairs)
	pairs2 := rtWrite(t, dir, "pairs-test.jsonl", rtPairs)
	budget := rtWrite(t, dir, "budget-train.jsonl", rtBudget)
	plain := rtWrite(t, dir, "plain-train.jsonl", rtPlain)

	t.Run("recognised from the columns of every file", func(t *testing.T) {
		for _, preset := range []string{"", PresetAuto, " auto "} {
			cols, err := ResolveColumns([]Dataset{{Path: pairs}, {Path: pairs2}}, Overrides{Preset: preset})
			require.NoError(t, err, "preset %q", preset)
			assert.Equal(t, "pairs", cols.Preset)
			assert.Equal(t, []string{"prompt"}, cols.Text)
			assert.Equal(t, []string{"id", "elapse"}, cols.ID)
			assert.Equal(t, "scenario", cols.Group)
			assert.Equal(t, "scenario", cols.GroupName)
			assert.Equal(t, "id", cols.Source)
			assert.Equal(t, "split", cols.Split)
			assert.Equal(t, "sensitivity", cols.Sensitivity)
			assert.Equal(t, "label", cols.Label)
			require.NotNil(t, cols.GroupFromID)
			assert.Equal(t, "tide_height", cols.GroupFromID("tide_height_12"))
		}
	})
	t.Run("the preset's lists are copies", func(t *testing.T) {
		cols, err := ResolveColumns([]Dataset{{Path: pairs}}, Overrides{})
		require.NoError(t, err)
		cols.ID[0], cols.Text[0] = "changed", "changed"
		assert.Equal(t, []string{"id", "elapse"}, PairsPreset.Columns.ID)
		assert.Equal(t, []string{"prompt"}, PairsPreset.Columns.Text)
	})
	t.Run("a file without a preset beside one with", func(t *testing.T) {
		// The plain file is recognised as nothing, so the pairs preset
		// stands, and then its columns are missing from the plain file.
		_, err := ResolveColumns([]Dataset{{Path: plain}, {Path: pairs}}, Overrides{})
		require.Error(t, err)
		assert.Equal(t, plain+": --text prompt: no such column (its columns are kind, level, meta, part, question)", err.Error())
	})
	t.Run("a manifest's preset is taken without looking at the columns", func(t *testing.T) {
		cols, err := ResolveColumns([]Dataset{{Path: budget, Preset: BudgetPreset}}, Overrides{})
		require.NoError(t, err)
		assert.Equal(t, "budget", cols.Preset)
		assert.Equal(t, []string{"prompt:user"}, cols.Text)
		assert.Equal(t, "extra_info.task_id", cols.Group)
		assert.Equal(t, "task", cols.GroupName)
		assert.Nil(t, cols.GroupFromID)
		// A manifest naming the pairs preset for the budget file is
		// checked against its columns all the same.
		_, err = ResolveColumns([]Dataset{{Path: budget, Preset: PairsPreset}}, Overrides{})
		assert.EqualError(t, err, budget+": --id id: no such column (its columns are extra_info, prompt)")
	})
	t.Run("files of two presets", func(t *testing.T) {
		_, err := ResolveColumns([]Dataset{{Path: pairs}, {Path: budget}}, Overrides{Preset: PresetAuto})
		assert.EqualError(t, err, pairs+" looks like pairs output and "+budget+" like budget output: "+
			"check one kind at a time, or name the columns with --preset none and --text")
		_, err = ResolveColumns([]Dataset{{Path: budget, Preset: BudgetPreset}, {Path: pairs, Preset: PairsPreset}}, Overrides{})
		assert.EqualError(t, err, budget+" looks like budget output and "+pairs+" like pairs output: "+
			"check one kind at a time, or name the columns with --preset none and --text")
	})
	t.Run("a preset by name", func(t *testing.T) {
		cols, err := ResolveColumns([]Dataset{{Path: budget}}, Overrides{Preset: " budget "})
		require.NoError(t, err)
		assert.Equal(t, "budget", cols.Preset)
		_, err = ResolveColumns([]Dataset{{Path: budget}}, Overrides{Preset: "bugdet"})
		assert.EqualError(t, err, "--preset bugdet: want auto, none or one of pairs, budget, puzzles, traveler, negotiation")
	})
	t.Run("no preset and no text", func(t *testing.T) {
		for _, o := range []Overrides{{}, {Preset: PresetNone}} {
			_, err := ResolveColumns([]Dataset{{Path: plain}}, o)
			assert.EqualError(t, err, plain+" is not a timeaware output the gate knows (pairs, budget, puzzles, traveler, negotiation): "+
				"name its columns with --text (and --group, --id); its columns are kind, level, meta, part, question")
		}
		// --preset none on a pairs file: its columns are not used.
		_, err := ResolveColumns([]Dataset{{Path: pairs}}, Overrides{Preset: PresetNone})
		assert.ErrorContains(t, err, pairs+" is not a timeaware output the gate knows")
	})
	t.Run("unreadable files", func(t *testing.T) {
		missing := filepath.Join(dir, "missing-train.jsonl")
		_, err := ResolveColumns([]Dataset{{Path: missing}}, Overrides{})
		assert.ErrorContains(t, err, "missing-train.jsonl: no such file")
		_, err = ResolveColumns([]Dataset{{Path: missing}}, Overrides{Preset: PresetNone})
		assert.ErrorContains(t, err, "missing-train.jsonl: no such file", "the error names the file when listing its columns")
		_, err = ResolveColumns([]Dataset{{Path: pairs}, {Path: missing}}, Overrides{Preset: "pairs"})
		assert.ErrorContains(t, err, "missing-train.jsonl: no such file", "every file's columns are checked")
	})
}

func TestResolveColumnsOverrides(t *testing.T) {
	dir := t.TempDir()
	pairs := rtWrite(t, dir, "pairs-train.jsonl", rtPairs)
	plain := rtWrite(t, dir, "plain-train.jsonl", rtPlain)
	plain2 := rtWrite(t, dir, "plain-test.jsonl", rtPlain)

	t.Run("every column named", func(t *testing.T) {
		cols, err := ResolveColumns([]Dataset{{Path: plain}, {Path: plain2}}, Overrides{
			Text: rtStr(" question, ,meta.topic "), Group: rtStr("meta.topic"), ID: rtStr("meta.uid"),
			Split: rtStr("part"), Sensitivity: rtStr("level"), Label: rtStr("kind"),
		})
		require.NoError(t, err)
		assert.Equal(t, &Columns{Text: []string{"question", "meta.topic"}, Group: "meta.topic", GroupName: "topic",
			ID: []string{"meta.uid"}, Split: "part", Sensitivity: "level", Label: "kind"}, cols)
	})
	t.Run("a group without dots names itself", func(t *testing.T) {
		cols, err := ResolveColumns([]Dataset{{Path: plain}}, Overrides{Text: rtStr("question"), Group: rtStr("kind")})
		require.NoError(t, err)
		assert.Equal(t, "kind", cols.GroupName)
		// A name that starts with its only dot is named by what follows.
		dotted := rtWrite(t, dir, "dotted-train.jsonl", `{"question":"q",".topic":"sea"}`)
		cols, err = ResolveColumns([]Dataset{{Path: dotted}}, Overrides{Text: rtStr("question"), Group: rtStr(".topic")})
		require.NoError(t, err)
		assert.Equal(t, "topic", cols.GroupName)
	})
	t.Run("over a preset", func(t *testing.T) {
		// Another group replaces the preset's name for it and its
		// derivation from ids; another id list replaces the preset's.
		cols, err := ResolveColumns([]Dataset{{Path: pairs}}, Overrides{Group: rtStr("label"), ID: rtStr("id"), Text: rtStr("prompt:user")})
		require.NoError(t, err)
		assert.Equal(t, "label", cols.Group)
		assert.Equal(t, "label", cols.GroupName)
		assert.Nil(t, cols.GroupFromID)
		assert.Equal(t, []string{"id"}, cols.ID)
		assert.Equal(t, []string{"prompt:user"}, cols.Text)
		assert.Equal(t, "split", cols.Split, "the columns not named stay the preset's")
	})
	t.Run("dropping a preset's columns", func(t *testing.T) {
		empty := rtStr("")
		cols, err := ResolveColumns([]Dataset{{Path: pairs}}, Overrides{Group: empty, ID: empty, Split: empty, Sensitivity: empty, Label: empty})
		require.NoError(t, err)
		assert.Equal(t, "", cols.Group)
		assert.Equal(t, "", cols.GroupName)
		assert.Nil(t, cols.GroupFromID, "no group, no group from the id")
		assert.Nil(t, cols.ID)
		assert.Equal(t, "", cols.Split)
		assert.Equal(t, "", cols.Sensitivity)
		assert.Equal(t, "", cols.Label)
		assert.Equal(t, "id", cols.Source, "the preset's source stays")
		assert.Equal(t, map[string]string{
			CheckSplitLabel:          "the dataset has no split column (--split-column)",
			CheckGroupDisjoint:       "the dataset has no group column (--group)",
			CheckDuplicateIDs:        "the dataset has no id column (--id)",
			CheckSensitivityCoverage: "the dataset has no sensitivity column (--sensitivity-column)",
			CheckLabelBalance:        "the dataset has no label column (--label-column)",
		}, cols.Skips())
	})
	t.Run("a column the file lacks", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			o    Overrides
			want string
		}{
			{"text", Overrides{Text: rtStr("question,answer")}, "--text answer"},
			{"id", Overrides{Text: rtStr("question"), ID: rtStr("meta.uid,meta.n")}, "--id meta.n"},
			{"group", Overrides{Text: rtStr("question"), Group: rtStr("topic")}, "--group topic"},
			{"split", Overrides{Text: rtStr("question"), Split: rtStr("split")}, "--split-column split"},
			{"sensitivity", Overrides{Text: rtStr("question"), Sensitivity: rtStr("sensitivity")}, "--sensitivity-column sensitivity"},
			{"label", Overrides{Text: rtStr("question"), Label: rtStr("label")}, "--label-column label"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := ResolveColumns([]Dataset{{Path: plain}, {Path: plain2}}, tc.o)
				assert.EqualError(t, err, plain+": "+tc.want+": no such column (its columns are kind, level, meta, part, question)")
			})
		}
		// The preset's source column is checked too.
		_, err := ResolveColumns([]Dataset{{Path: plain}}, Overrides{Preset: "pairs", Text: rtStr("question"),
			Group: rtStr(""), ID: rtStr(""), Split: rtStr(""), Sensitivity: rtStr(""), Label: rtStr("")})
		assert.EqualError(t, err, plain+": the preset's source column id: no such column (its columns are kind, level, meta, part, question)")
	})
}

func TestColumnsSkips(t *testing.T) {
	all := Columns{Text: []string{"t"}, Group: "g", ID: []string{"i"}, Split: "s", Sensitivity: "v", Label: "l"}
	assert.Empty(t, all.Skips())
	for _, tc := range []struct {
		name  string
		drop  func(*Columns)
		check string
	}{
		{"split", func(c *Columns) { c.Split = "" }, CheckSplitLabel},
		{"group", func(c *Columns) { c.Group = "" }, CheckGroupDisjoint},
		{"id", func(c *Columns) { c.ID = nil }, CheckDuplicateIDs},
		{"sensitivity", func(c *Columns) { c.Sensitivity = "" }, CheckSensitivityCoverage},
		{"label", func(c *Columns) { c.Label = "" }, CheckLabelBalance},
	} {
		c := all
		tc.drop(&c)
		skips := c.Skips()
		assert.Len(t, skips, 1, tc.name)
		assert.Contains(t, skips, tc.check, tc.name)
	}
}

func TestAgainstColumns(t *testing.T) {
	dir := t.TempDir()
	pairs := rtWrite(t, dir, "pairs.jsonl", rtPairs)
	budget := rtWrite(t, dir, "budget.jsonl", rtBudget)
	plain := rtWrite(t, dir, "plain.jsonl", rtPlain)
	gate := &Columns{Text: []string{"question"}}

	for _, tc := range []struct {
		name string
		sets []string
		text []string
		want []string
		err  string
	}{
		{name: "named text", sets: []string{plain}, text: []string{"meta.topic"}, want: []string{"meta.topic"}},
		{name: "the file's own preset", sets: []string{budget}, want: []string{"prompt:user"}},
		{name: "the gate's text", sets: []string{plain}, want: []string{"question"}},
		{name: "the first file decides for the others", sets: []string{pairs, budget}, want: []string{"prompt"}},
		{name: "named text missing", sets: []string{plain}, text: []string{"answer"},
			err: "--against " + plain + ": no text column answer (its columns are kind, level, meta, part, question); name it with --against-text"},
		{name: "a later file lacking the first's text", sets: []string{plain, budget},
			err: "--against " + budget + ": no text column question (its columns are extra_info, prompt); name it with --against-text"},
		{name: "unreadable", sets: []string{filepath.Join(dir, "missing.jsonl")}, err: "missing.jsonl: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sets []Dataset
			for _, p := range tc.sets {
				sets = append(sets, Dataset{Path: p})
			}
			cols, err := AgainstColumns(sets, tc.text, gate)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, &Columns{Text: tc.want}, cols)
		})
	}
}

func TestSplitList(t *testing.T) {
	assert.Nil(t, SplitList(""))
	assert.Nil(t, SplitList(" , ,"))
	assert.Equal(t, []string{"a", "b.c", "d"}, SplitList(" a,b.c ,, d "))
	assert.Equal(t, "pairs, budget, puzzles, traveler, negotiation", PresetNames())
}
