package splits

// Tests of the checks that judge rows by what they are and where they sit:
// split labels, repeated ids and texts, an outside evaluation set, empty
// sides and skipped checks.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gtLeak runs the gate on rows and asserts that exactly the checks in fail
// fail; it returns the report.
func gtLeak(t *testing.T, rows gtRows, opt GateOptions, fail ...string) *Report {
	t.Helper()
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	var failed []string
	for _, c := range rep.Checks {
		if c.Status == StatusFail {
			failed = append(failed, c.Name)
		}
	}
	assert.ElementsMatch(t, fail, failed)
	assert.Equal(t, len(fail) == 0, rep.Passed)
	return rep
}

func TestCheckSplitLabels(t *testing.T) {
	rows := gtClean(21, 60)
	for i := range rows {
		rows[i].SplitLabel = rows[i].Side
	}
	// Other names of the sides agree with them.
	gtFind(t, rows, "test_sc0_1").SplitLabel = "Validation"
	gtFind(t, rows, "train_sc0_1").SplitLabel = " training "
	gtLeak(t, rows, gtOptions())

	gtFind(t, rows, "test_sc1_4").SplitLabel = "train"
	gtFind(t, rows, "test_sc2_0").SplitLabel = "holdout"
	rep := gtLeak(t, rows, gtOptions(), CheckSplitLabel)
	c := gtCheck(rep, CheckSplitLabel)
	assert.Equal(t, 2, c.Count)
	assert.Equal(t, "2 rows have a split label that disagrees with the side of its file", c.Summary)
	require.Len(t, c.Findings, 2)
	assert.Equal(t, `test_sc1_4 (pairs-test.parquet row 15) says split "train", but its file is on the test side`, c.Findings[0].Message)
	assert.Equal(t, []string{"test_sc1_4"}, c.Findings[0].IDs)
	assert.Equal(t, gtTestFile, c.Findings[0].File)
	assert.Equal(t, 15, c.Findings[0].Row)
	assert.Contains(t, c.Findings[1].Message, `says split "holdout"`)
}

func TestCheckDuplicateIDs(t *testing.T) {
	t.Run("twice on one side", func(t *testing.T) {
		rows := gtClean(22, 60)
		dup := *gtFind(t, rows, "test_sc1_2")
		dup.Index = 31
		rows = append(rows, dup)
		rep := gtLeak(t, rows, gtOptions(), CheckDuplicateIDs)
		c := gtCheck(rep, CheckDuplicateIDs)
		assert.Equal(t, 1, c.Count)
		assert.Equal(t, "id test_sc1_2 is at pairs-test.parquet row 13 and again at pairs-test.parquet row 31", c.Findings[0].Message)
		assert.Equal(t, []string{"test_sc1_2"}, c.Findings[0].IDs)
		assert.Equal(t, 31, c.Findings[0].Row, "the finding sits at the repeat")
		assert.Equal(t, "1 row repeats the id of an earlier row", c.Summary)
		// Its text is its own source's: no duplicate_texts finding.
		assert.Equal(t, StatusPass, gtCheck(rep, CheckDuplicateTexts).Status)
	})
	t.Run("on both sides", func(t *testing.T) {
		rows := gtClean(23, 60)
		gtFind(t, rows, "test_sc0_0").ID = "train_sc3_3"
		rep := gtLeak(t, rows, gtOptions(), CheckDuplicateIDs)
		assert.Equal(t, "id train_sc3_3 is at pairs-train.parquet row 34 and again at pairs-test.parquet row 1",
			gtCheck(rep, CheckDuplicateIDs).Findings[0].Message)
	})
	t.Run("three times counts two repeats", func(t *testing.T) {
		rows := gtClean(24, 60)
		for _, id := range []string{"train_sc0_5", "train_sc1_5"} {
			gtFind(t, rows, id).ID = "train_sc2_5"
		}
		rep := gtLeak(t, rows, gtOptions(), CheckDuplicateIDs)
		assert.Equal(t, 2, gtCheck(rep, CheckDuplicateIDs).Count)
	})
	t.Run("rows without an id are not compared", func(t *testing.T) {
		rows := gtClean(25, 60)
		for i := range rows {
			rows[i].ID = ""
		}
		gtLeak(t, rows, gtOptions())
	})
	t.Run("all of many are counted, the first listed", func(t *testing.T) {
		rows := gtClean(26, 60)
		for i := range rows {
			if rows[i].Side == Test {
				rows[i].ID = strings.Replace(rows[i].ID, "test", "train", 1)
			}
		}
		opt := gtOptions()
		opt.MaxFindings = 2
		rep := gtLeak(t, rows, opt, CheckDuplicateIDs)
		c := gtCheck(rep, CheckDuplicateIDs)
		assert.Equal(t, 30, c.Count)
		require.Len(t, c.Findings, 2)
		assert.Equal(t, "id train_sc0_0 is at pairs-train.parquet row 1 and again at pairs-test.parquet row 1", c.Findings[0].Message)
		assert.Equal(t, "id train_sc0_1 is at pairs-train.parquet row 2 and again at pairs-test.parquet row 2", c.Findings[1].Message)
	})
}

func TestCheckDuplicateTexts(t *testing.T) {
	t.Run("another id on the same side", func(t *testing.T) {
		rows := gtClean(27, 60)
		gtFind(t, rows, "test_sc2_7").Text = strings.ToUpper(gtFind(t, rows, "test_sc0_3").Text)
		rep := gtLeak(t, rows, gtOptions(), CheckDuplicateTexts)
		c := gtCheck(rep, CheckDuplicateTexts)
		assert.Equal(t, 1, c.Count)
		assert.Equal(t, "test_sc2_7 (pairs-test.parquet row 28) has the text of test_sc0_3 (pairs-test.parquet row 4) after normalisation", c.Findings[0].Message)
		assert.Equal(t, []string{"test_sc0_3", "test_sc2_7"}, c.Findings[0].IDs)
	})
	t.Run("one source may repeat its text", func(t *testing.T) {
		rows := gtClean(28, 60)
		// A trajectory's elapse levels: one source, two ids, one text.
		a, b := gtFind(t, rows, "train_sc4_1"), gtFind(t, rows, "train_sc4_2")
		a.ID, a.Source = "flight_1 (elapse 0)", "flight_1"
		b.ID, b.Source, b.Text = "flight_1 (elapse 2)", "flight_1", a.Text
		gtLeak(t, rows, gtOptions())
		b.Source = "flight_2"
		gtLeak(t, rows, gtOptions(), CheckDuplicateTexts)
	})
	t.Run("across sides it is an exact duplicate instead", func(t *testing.T) {
		rows := gtClean(29, 60)
		gtFind(t, rows, "train_sc1_1").Text = gtFind(t, rows, "test_sc1_1").Text
		gtLeak(t, rows, gtOptions(), CheckExactDuplicates)
	})
}

func TestCheckContamination(t *testing.T) {
	rows := gtClean(30, 150)
	rep := gtLeak(t, rows, gtOptions())
	c := gtCheck(rep, CheckContamination)
	assert.Equal(t, StatusSkipped, c.Status)
	assert.Equal(t, "no outside evaluation set given (--against)", c.Summary)

	// An outside set: one row copied from train, one a near copy of
	// another, one unrelated, one identical to a test row (not a train
	// problem).
	words := strings.Fields(gtFind(t, rows, "train_sc5_5").Text)
	words[10] = "alteredword"
	against := []Row{
		{File: "eval.jsonl", Index: 1, ID: "q1", Side: Against, Text: strings.ToUpper(gtFind(t, rows, "train_sc2_2").Text)},
		{File: "eval.jsonl", Index: 2, ID: "q2", Side: Against, Text: strings.Join(words, " ")},
		{File: "eval.jsonl", Index: 3, ID: "q3", Side: Against, Text: "nothing like the rest of the rows at all here"},
		{File: "eval.jsonl", Index: 4, ID: "q4", Side: Against, Text: gtFind(t, rows, "test_sc0_0").Text},
		// Outside rows take no part in the other checks.
		{File: "eval.jsonl", Index: 5, ID: "train_sc0_0", Group: "train scenario 0", Side: Against, SplitLabel: "test", Text: "x y z"},
	}
	rows = append(rows, against...)
	rep = gtLeak(t, rows, gtOptions(), CheckContamination)
	c = gtCheck(rep, CheckContamination)
	assert.Equal(t, 2, c.Count)
	require.Len(t, c.Findings, 2)
	assert.Equal(t, "train train_sc2_2 (pairs-train.parquet row 23) duplicates evaluation row q1 (eval.jsonl row 1) after normalisation", c.Findings[0].Message)
	assert.Contains(t, c.Findings[1].Message, "train train_sc5_5 (pairs-train.parquet row 56) is a near-duplicate of evaluation row q2 (eval.jsonl row 2) (estimated Jaccard 0.")
	assert.Greater(t, c.Findings[1].Similarity, 0.8)
	assert.Equal(t, 5, rep.Splits[Against].Rows)
	assert.Equal(t, 70, rep.Splits[Train].Rows)
	assert.Equal(t, 30, rep.Splits[Test].Rows)
	assert.Equal(t, "2 train/evaluation pairs are duplicates or near-duplicates: train rows against the 5 rows of the outside evaluation set", c.Summary)

	// Without near-duplicates, only the copy counts.
	opt := gtOptions()
	opt.NearDuplicateThreshold = -1
	rep = gtLeak(t, rows, opt, CheckContamination)
	assert.Equal(t, 1, gtCheck(rep, CheckContamination).Count)
	assert.Equal(t, "1 train row duplicates or nearly duplicates a row of the 5 rows of the outside evaluation set", gtCheck(rep, CheckContamination).Summary)

	// Without the copies, nothing.
	rows = append(rows[:len(rows)-5], against[2:]...)
	rep = gtLeak(t, rows, opt)
	assert.Equal(t, "no train row is an exact duplicate of the 3 rows of the outside evaluation set", gtCheck(rep, CheckContamination).Summary)
	rep = gtLeak(t, rows[:len(rows)-2], gtOptions())
	assert.Equal(t, "no train row is a duplicate or near-duplicate (estimated Jaccard ≥ 0.80) of the 1 row of the outside evaluation set",
		gtCheck(rep, CheckContamination).Summary)
}

func TestCheckEmptySide(t *testing.T) {
	rows := gtClean(31, 40)
	var train gtRows
	for _, r := range rows {
		if r.Side == Train {
			train = append(train, r)
		}
	}
	opt := gtOptions()
	opt.TestFraction = 0
	opt.Sensitivities = []string{}
	rep := gtLeak(t, train, opt, CheckTestFraction)
	assert.Equal(t, "the test side has no rows", gtCheck(rep, CheckTestFraction).Summary)
}

func TestCheckSkipAndGroupName(t *testing.T) {
	rows := gtClean(32, 40)
	gtFind(t, rows, "train_sc1_1").Group = "test scenario 2"
	opt := gtOptions()
	opt.GroupName = "topic"
	rep := gtLeak(t, rows, opt, CheckGroupDisjoint)
	c := gtCheck(rep, CheckGroupDisjoint)
	assert.Equal(t, "1 topic appears in both splits", c.Summary)
	assert.Contains(t, c.Findings[0].Message, `topic "test scenario 2" is in train`)

	opt.Skip = map[string]string{CheckGroupDisjoint: "the dataset has no group column (--group)", CheckLabelBalance: "no labels"}
	rep = gtLeak(t, rows, opt)
	c = gtCheck(rep, CheckGroupDisjoint)
	assert.Equal(t, CheckResult{Name: CheckGroupDisjoint, Status: StatusSkipped, Summary: "the dataset has no group column (--group)"}, c)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckLabelBalance).Status)

	for _, bad := range []map[string]string{{"no_such_check": "x"}, {CheckLabelBalance: " "}} {
		opt.Skip = bad
		_, err := Check(context.Background(), rows.source(), opt)
		assert.ErrorContains(t, err, "splits: gate options: skip:")
	}
}

func TestSideOf(t *testing.T) {
	for label, want := range map[string]string{
		"train": Train, "TRAINING": Train, " train ": Train,
		"test": Test, "testing": Test, "validation": Test, "valid": Test, "val": Test, "dev": Test, "eval": Test, "Evaluation": Test,
		"": "", "holdout": "", "trainer": "", "pretest": "",
	} {
		got, ok := SideOf(label)
		assert.Equal(t, want, got, label)
		assert.Equal(t, want != "", ok, label)
	}
}

func TestSideFromPath(t *testing.T) {
	for _, tc := range []struct{ root, path, want string }{
		{"pairs-train.parquet", "pairs-train.parquet", Train},
		{"out/pairs_test.jsonl", "out/pairs_test.jsonl", Test},
		{"train.arrow", "train.arrow", Train},
		{"d/validation.parquet", "d/validation.parquet", Test},
		{"data", "data/train-00000-of-00002.parquet", Train},
		{"data", "data/test-00001-of-00002.parquet", Test},
		{"ds", "ds/train/data-00000-of-00001.arrow", Train},
		{"ds", "ds/test/data-00000-of-00001.arrow", Test},
		{"corpus-test", "corpus-test/part-00000-of-00004.parquet", Test},
		{"corpus-test", "corpus-test/sub/part-0.parquet", Test},
		// A name says more than the directory it is in.
		{"corpus-test", "corpus-test/x-train.parquet", Train},
		// Directories above the argument say nothing.
		{"/tmp/test/run/pairs.parquet", "/tmp/test/run/pairs.parquet", ""},
		{"/tmp/train-x", "/tmp/train-x/shard.parquet", Train},
		{"/srv/train/d", "/srv/train/d/part.parquet", ""},
		{"pairs.parquet", "pairs.parquet", ""},
		{"trainer.parquet", "trainer.parquet", ""},
		{"contest.jsonl", "contest.jsonl", ""},
		// A name that is only a separator and a side.
		{"-train.jsonl", "-train.jsonl", Train},
		{"_test.parquet", "_test.parquet", Test},
		{"d", "d/-validation/part.arrow", Test},
		// A name starting with a dot has no extension to drop.
		{"d", "d/.x-train", Train},
		// A path outside its root: its own name only.
		{"a/b", "c/train/x.jsonl", ""},
		{"a/b", "c/x/train.jsonl", Train},
	} {
		assert.Equal(t, tc.want, SideFromPath(tc.root, tc.path), "%s under %s", tc.path, tc.root)
	}
}

func TestDisplayID(t *testing.T) {
	assert.Equal(t, "", displayID(nil, nil))
	assert.Equal(t, "a_1", displayID([]string{"id"}, []string{"a_1"}))
	assert.Equal(t, "flight_3 (elapse 2)", displayID([]string{"id", "elapse"}, []string{"flight_3", "2"}))
	assert.Equal(t, "t1 (request_id t1#0, n 4)", displayID([]string{"task", "extra_info.request_id", "n"}, []string{"t1", "t1#0", "4"}))
}

func TestUnitSplit(t *testing.T) {
	t.Run("hash", func(t *testing.T) {
		u, err := NewHashSplit(7, 0.2)
		require.NoError(t, err)
		assert.Equal(t, StrategyHash, u.Strategy())
		test := 0
		for i := range 20000 {
			name := fmt.Sprintf("unit-%d", i)
			s := u.Side(name)
			assert.Equal(t, s, u.Side(name), "deterministic")
			if s == Test {
				test++
			}
		}
		// 20,000 draws at p = 0.2: a standard deviation of 57.
		assert.InDelta(t, 4000, test, 4*57)
		other, err := NewHashSplit(8, 0.2)
		require.NoError(t, err)
		differ := 0
		for i := range 1000 {
			if u.Side(fmt.Sprint(i)) != other.Side(fmt.Sprint(i)) {
				differ++
			}
		}
		assert.Greater(t, differ, 200, "the seed matters")
	})
	t.Run("exact", func(t *testing.T) {
		units := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
		for _, tc := range []struct {
			f    float64
			want int
		}{{0.3, 3}, {0.35, 4}, {0.01, 1}, {0.99, 9}, {0.5, 5}} {
			u, err := NewExactSplit(3, tc.f, units)
			require.NoError(t, err)
			n := 0
			for _, x := range units {
				if u.Side(x) == Test {
					n++
				}
			}
			assert.Equal(t, tc.want, n, "fraction %v", tc.f)
			assert.Equal(t, Train, u.Side("not a unit"))
		}
		_, err := NewExactSplit(3, 0.3, []string{"a"})
		assert.ErrorContains(t, err, "at least two units")
		_, err = NewExactSplit(3, 0.3, []string{"a", "a"})
		assert.ErrorContains(t, err, "not distinct")
	})
	for _, f := range []float64{0, 1, -0.1, 1.5} {
		_, err := NewHashSplit(1, f)
		assert.Error(t, err, "%v", f)
		_, err = NewExactSplit(1, f, []string{"a", "b"})
		assert.Error(t, err, "%v", f)
	}
	assert.InDelta(t, 3*0.04, UnitTolerance(StrategyHash, 0.2, 100), 1e-12)
	assert.InDelta(t, 0.25, UnitTolerance(StrategyExact, 0.2, 4), 1e-12)
	assert.Zero(t, UnitTolerance(StrategyHash, 0.2, 0))
}
