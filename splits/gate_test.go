package splits

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/splits/scenario"
)

// gtRows is an in-memory RowSource.
type gtRows []Row

func (rows gtRows) source() RowSource {
	return func() (RowIterator, error) { return &gtIter{rows: rows}, nil }
}

type gtIter struct {
	rows []Row
	i    int
	err  error // returned instead of io.EOF at the end, when set
}

func (it *gtIter) Next() (Row, error) {
	if it.i >= len(it.rows) {
		if it.err != nil {
			return Row{}, it.err
		}
		return Row{}, io.EOF
	}
	it.i++
	return it.rows[it.i-1], nil
}

func (it *gtIter) Close() error { return nil }

// gtVocab returns n distinct random lower-case words.
func gtVocab(rng *rand.Rand, n int) []string {
	seen := make(map[string]bool, n)
	words := make([]string, 0, n)
	buf := make([]byte, 0, 12)
	for len(words) < n {
		buf = buf[:0]
		for range 3 + rng.IntN(7) {
			buf = append(buf, byte('a'+rng.IntN(26)))
		}
		if w := string(buf); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// gtText returns n words drawn from vocab.
func gtText(rng *rand.Rand, vocab []string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[rng.IntN(len(vocab))])
	}
	return b.String()
}

// gtChangeWords replaces k words of text, at least gap words apart, by
// words that occur nowhere else.
func gtChangeWords(rng *rand.Rand, text string, k, gap int) string {
	words := strings.Fields(text)
	stride := len(words) / k
	if stride < gap {
		panic("text too short for the changes")
	}
	for i := range k {
		pos := i*stride + rng.IntN(stride-gap+1)
		words[pos] = fmt.Sprintf("changed%dword%d", i, rng.IntN(1_000_000))
	}
	return strings.Join(words, " ")
}

// refStamp matches, at the start of a string, a time stamp as
// docs/splits.md and Normalize's documentation define it: an RFC 3339
// date-time in square brackets ("[2025-12-04T10:22:44Z]"), or one followed
// by "; ... passed" ("[2025-12-04T10:22:44Z; 2 minutes passed]", a note of
// at most 201 bytes on one line). Submatch 1 is the note.
var refStamp = regexp.MustCompile(`^\[[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?` +
	`(?:[Zz]|[+-][0-9]{2}:[0-9]{2})(?:\]|;([^\]\n]{0,201})\])`)

// refNormalize is the gate's normalisation written from its definition,
// without the package's code: time stamps removed, lower-cased, white
// space runs collapsed to one space, no leading or trailing space.
func refNormalize(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] == '[' {
			if m := refStamp.FindStringSubmatchIndex(text[i:]); m != nil {
				noteOK := m[2] < 0 || strings.HasSuffix(strings.ToLower(strings.TrimRight(text[i+m[2]:i+m[3]], " \t")), "passed")
				if noteOK {
					i += m[1]
					continue
				}
			}
		}
		b.WriteByte(text[i])
		i++
	}
	return strings.Join(strings.Fields(strings.ToLower(b.String())), " ")
}

// refShingles is the set of k-word shingles of a normalised text, each the
// words joined by spaces: one per run of k consecutive words, or one of all
// the words when there are fewer than k, none for an empty text.
func refShingles(text string, k int) map[string]bool {
	words := strings.Fields(refNormalize(text))
	set := map[string]bool{}
	if len(words) == 0 {
		return set
	}
	if len(words) < k {
		set[strings.Join(words, " ")] = true
		return set
	}
	for i := 0; i+k <= len(words); i++ {
		set[strings.Join(words[i:i+k], " ")] = true
	}
	return set
}

// gtJaccard is the exact Jaccard similarity of two texts' k-word shingle
// sets, |A ∩ B| / |A ∪ B|, computed by refShingles (not by the package's
// Shingles, so that a fault there cannot hide in the expectation); 0 when
// both texts are empty.
func gtJaccard(a, b string, k int) float64 {
	sa, sb := refShingles(a, k), refShingles(b, k)
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

const (
	gtTrainFile = "pairs-train.parquet"
	gtTestFile  = "pairs-test.parquet"
)

// gtClean returns a clean split: 7 train scenarios and 3 test scenarios of
// 10 rows each (a test fraction of 0.3), every split with all three
// sensitivity levels, and distinct random texts of wordsPerText words.
func gtClean(seed uint64, wordsPerText int) gtRows {
	rng := rand.New(rand.NewPCG(seed, 1))
	vocab := gtVocab(rng, 5000)
	levels := []string{scenario.SensitivityLow, scenario.SensitivityMedium, scenario.SensitivityHigh}
	var rows gtRows
	index := map[string]int{}
	add := func(split string, sc int) {
		name := fmt.Sprintf("%s scenario %d", split, sc)
		file := gtTrainFile
		if split == Test {
			file = gtTestFile
		}
		for k := range 10 {
			index[file]++
			rows = append(rows, Row{
				File:        file,
				Index:       index[file],
				ID:          fmt.Sprintf("%s_sc%d_%d", split, sc, k),
				Group:       name,
				Sensitivity: levels[sc%3],
				Label:       []string{"tool", "direct"}[k%2],
				Side:        split,
				Text:        gtText(rng, vocab, wordsPerText),
			})
		}
	}
	for sc := range 7 {
		add(Train, sc)
	}
	for sc := range 3 {
		add(Test, sc)
	}
	return rows
}

// gtFind returns the row with an id.
func gtFind(t *testing.T, rows gtRows, id string) *Row {
	for i := range rows {
		if rows[i].ID == id {
			return &rows[i]
		}
	}
	t.Fatalf("no row %s", id)
	return nil
}

// gtStamp puts toolkit time stamps in front of every line of text.
func gtStamp(text string, start time.Time, delta bool) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		ts := start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		if delta && i > 0 {
			lines[i] = fmt.Sprintf("[%s; %d minutes passed] %s", ts, i, l)
		} else {
			lines[i] = fmt.Sprintf("[%s] %s", ts, l)
		}
	}
	return strings.Join(lines, "\n")
}

// gtStatuses maps check names to statuses.
func gtStatuses(rep *Report) map[string]string {
	m := map[string]string{}
	for _, c := range rep.Checks {
		m[c.Name] = c.Status
	}
	return m
}

func gtCheck(rep *Report, name string) CheckResult {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	return CheckResult{}
}

func gtOptions() GateOptions {
	opt := DefaultGateOptions()
	opt.TestFraction = 0.3
	opt.GroupName = "scenario"
	opt.GroupFromID = scenario.AliasOf
	return opt
}

func TestCheckCleanSplitPasses(t *testing.T) {
	rows := gtClean(1, 120)
	rep, err := Check(context.Background(), rows.source(), gtOptions())
	require.NoError(t, err)
	assert.True(t, rep.Passed)
	assert.Equal(t, map[string]string{
		CheckSplitLabel:          StatusPass,
		CheckGroupDisjoint:       StatusPass,
		CheckDuplicateIDs:        StatusPass,
		CheckDuplicateTexts:      StatusPass,
		CheckExactDuplicates:     StatusPass,
		CheckNearDuplicates:      StatusPass,
		CheckContamination:       StatusSkipped,
		CheckTestFraction:        StatusPass,
		CheckSensitivityCoverage: StatusPass,
		CheckLabelBalance:        StatusInfo,
	}, gtStatuses(rep))
	for _, c := range rep.Checks {
		assert.Zero(t, c.Count, c.Name)
		assert.Empty(t, c.Findings, c.Name)
		assert.NotEmpty(t, c.Summary, c.Name)
	}
	names := make([]string, len(rep.Checks))
	for i, c := range rep.Checks {
		names[i] = c.Name
	}
	assert.Equal(t, []string{CheckSplitLabel, CheckGroupDisjoint, CheckDuplicateIDs, CheckDuplicateTexts,
		CheckExactDuplicates, CheckNearDuplicates, CheckContamination, CheckTestFraction,
		CheckSensitivityCoverage, CheckLabelBalance}, names)
	assert.Equal(t, Checks, names)

	assert.Equal(t, &SplitStats{
		Rows: 70, Groups: 7,
		BySensitivity: map[string]int{"low": 30, "medium": 20, "high": 20},
		ByLabel:       map[string]int{"tool": 35, "direct": 35},
		LabelShare:    map[string]float64{"tool": 0.5, "direct": 0.5},
	}, rep.Splits[Train])
	assert.Equal(t, 30, rep.Splits[Test].Rows)
	assert.Equal(t, 3, rep.Splits[Test].Groups)
	assert.Equal(t, "no scenario appears in both splits (7 train, 3 test scenarios)", gtCheck(rep, CheckGroupDisjoint).Summary)
	assert.Equal(t, "test fraction 0.300 (30 of 100 rows), target 0.300 ± 0.050", gtCheck(rep, CheckTestFraction).Summary)
	assert.Equal(t, "train: direct 50.0%, tool 50.0%; test: direct 50.0%, tool 50.0%", gtCheck(rep, CheckLabelBalance).Summary)

	// Defaults are reported as applied.
	assert.Equal(t, 16, rep.Options.Bands)
	assert.Equal(t, DefaultMinHashSeed, rep.Options.Seed)

	js, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, key := range []string{`"passed":true`, `"near_duplicate_threshold":0.8`, `"by_sensitivity"`, `"label_share"`, `"status":"info"`} {
		assert.Contains(t, string(js), key)
	}
	assert.NotContains(t, string(js), `"findings"`)
}

func TestCheckPlantedLeaks(t *testing.T) {
	stamp := time.Date(2025, 12, 4, 10, 22, 44, 0, time.UTC)
	tests := []struct {
		name     string
		plant    func(t *testing.T, rows gtRows) gtRows
		opt      func(*GateOptions)
		check    string
		count    int
		messages []string // substrings of the findings' messages
		ids      []string // ids of the first finding
		file     string
		row      int
		alsoFail []string // other checks the leak fails
	}{
		{
			name: "scenario on both sides",
			plant: func(t *testing.T, rows gtRows) gtRows {
				gtFind(t, rows, "train_sc2_7").Group = "Tide Height Tracker"
				gtFind(t, rows, "test_sc1_1").Group = "Tide Height Tracker"
				return rows
			},
			check: CheckGroupDisjoint,
			count: 1,
			messages: []string{`scenario "Tide Height Tracker" is in train (train_sc2_7, pairs-train.parquet row 28) ` +
				`and test (test_sc1_1, pairs-test.parquet row 12)`},
			ids:  []string{"train_sc2_7", "test_sc1_1"},
			file: gtTrainFile, row: 28,
		},
		{
			name: "scenario from id aliases",
			plant: func(t *testing.T, rows gtRows) gtRows {
				tr, te := gtFind(t, rows, "train_sc3_0"), gtFind(t, rows, "test_sc2_4")
				tr.Group, tr.ID = "", "tide_height_3"
				te.Group, te.ID = "", "tide_height_9"
				return rows
			},
			check:    CheckGroupDisjoint,
			count:    1,
			messages: []string{`scenario "tide_height" is in train (tide_height_3, pairs-train.parquet row 31) and test (tide_height_9, pairs-test.parquet row 25)`},
			ids:      []string{"tide_height_3", "tide_height_9"},
			file:     gtTrainFile, row: 31,
		},
		{
			name: "scenario names differ in case only",
			plant: func(t *testing.T, rows gtRows) gtRows {
				for i := range rows {
					if rows[i].Group == "test scenario 0" {
						rows[i].Group = "TRAIN Scenario 5"
					}
				}
				return rows
			},
			check:    CheckGroupDisjoint,
			count:    1,
			messages: []string{`scenario "train scenario 5" is in train (train_sc5_0, pairs-train.parquet row 51) and test (test_sc0_0, pairs-test.parquet row 1)`},
			ids:      []string{"train_sc5_0", "test_sc0_0"},
			file:     gtTrainFile, row: 51, // the first of the two in input order
		},
		{
			name: "exact duplicate after case, space and stamp changes",
			plant: func(t *testing.T, rows gtRows) gtRows {
				te := gtFind(t, rows, "test_sc0_3")
				words := strings.Fields(te.Text)
				text := strings.Join(words[:40], " ") + "\n" + strings.Join(words[40:80], " ") + "\n" + strings.Join(words[80:], " ")
				te.Text = gtStamp(text, stamp, false)
				tr := gtFind(t, rows, "train_sc4_6")
				tr.Text = "  " + strings.ToUpper(gtStamp(strings.ReplaceAll(text, " ", " \t "), stamp.Add(72*time.Hour), true)) + "\n\n"
				return rows
			},
			check:    CheckExactDuplicates,
			count:    1,
			messages: []string{"train train_sc4_6 (pairs-train.parquet row 47) duplicates test test_sc0_3 (pairs-test.parquet row 4) after normalisation"},
			ids:      []string{"train_sc4_6", "test_sc0_3"},
			file:     gtTrainFile, row: 47,
		},
		{
			name: "exact duplicate of two identical test rows",
			plant: func(t *testing.T, rows gtRows) gtRows {
				text := gtFind(t, rows, "test_sc2_2").Text
				gtFind(t, rows, "test_sc2_5").Text = strings.ToUpper(text)
				gtFind(t, rows, "train_sc0_0").Text = text
				return rows
			},
			check: CheckExactDuplicates,
			count: 2,
			messages: []string{
				"train train_sc0_0 (pairs-train.parquet row 1) duplicates test test_sc2_2 (pairs-test.parquet row 23)",
				"train train_sc0_0 (pairs-train.parquet row 1) duplicates test test_sc2_5 (pairs-test.parquet row 26)",
			},
			ids:  []string{"train_sc0_0", "test_sc2_2"},
			file: gtTrainFile, row: 1,
			// The two test rows are one text under two ids.
			alsoFail: []string{CheckDuplicateTexts},
		},
		{
			name: "near-duplicate with three words changed",
			plant: func(t *testing.T, rows gtRows) gtRows {
				rng := rand.New(rand.NewPCG(7, 7))
				te := gtFind(t, rows, "test_sc1_8")
				tr := gtFind(t, rows, "train_sc6_2")
				tr.Text = gtChangeWords(rng, te.Text, 3, 5)
				require.GreaterOrEqual(t, gtJaccard(te.Text, tr.Text, 5), 0.85)
				return rows
			},
			check: CheckNearDuplicates,
			count: 1,
			messages: []string{
				"train train_sc6_2 (pairs-train.parquet row 63) is a near-duplicate of test test_sc1_8 (pairs-test.parquet row 19) (estimated Jaccard 0.",
			},
			ids:  []string{"train_sc6_2", "test_sc1_8"},
			file: gtTrainFile, row: 63,
		},
		{
			name: "missing sensitivity level",
			plant: func(t *testing.T, rows gtRows) gtRows {
				for i := range rows {
					if rows[i].Side == Test && rows[i].Sensitivity == scenario.SensitivityHigh {
						rows[i].Sensitivity = scenario.SensitivityMedium
					}
				}
				return rows
			},
			check:    CheckSensitivityCoverage,
			count:    1,
			messages: []string{`split "test" has no rows with sensitivity "high"`},
			ids:      []string{},
		},
		{
			name:     "test fraction outside tolerance",
			plant:    func(t *testing.T, rows gtRows) gtRows { return rows },
			opt:      func(o *GateOptions) { o.TestFraction = 0.4 },
			check:    CheckTestFraction,
			count:    1,
			messages: []string{"test fraction 0.300 (30 of 100 rows), target 0.400 ± 0.050"},
			ids:      []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := tt.plant(t, gtClean(2, 200))
			opt := gtOptions()
			if tt.opt != nil {
				tt.opt(&opt)
			}
			rep, err := Check(context.Background(), rows.source(), opt)
			require.NoError(t, err)
			assert.False(t, rep.Passed)
			for _, c := range rep.Checks {
				if c.Name == tt.check {
					assert.Equal(t, StatusFail, c.Status, c.Summary)
					assert.Equal(t, tt.count, c.Count)
					require.Len(t, c.Findings, tt.count)
					for i, want := range tt.messages {
						assert.Contains(t, c.Findings[i].Message, want)
					}
					assert.Equal(t, tt.ids, c.Findings[0].IDs)
					assert.Equal(t, tt.file, c.Findings[0].File)
					assert.Equal(t, tt.row, c.Findings[0].Row)
					t.Logf("%s: %s", c.Name, c.Summary)
					continue
				}
				if slices.Contains(tt.alsoFail, c.Name) {
					assert.Equal(t, StatusFail, c.Status, "%s: %s", c.Name, c.Summary)
					continue
				}
				assert.NotEqual(t, StatusFail, c.Status, "%s: %s", c.Name, c.Summary)
			}
		})
	}
}

// TestCheckNearDuplicatesMatchReference runs the near-duplicate check on
// short train/test pairs whose 5-word shingle Jaccard similarity is worked
// out by hand (and by gtJaccard, which must agree), with a threshold low
// enough to report most of them and 4096 permutations, so that an estimate
// is within 0.04 of the true similarity (σ ≤ 0.008). On texts of a few
// words an off-by-one in the shingling moves the similarity far: shingles
// of 4 words, or a last shingle left out, report pairs that are not
// near-duplicates or report them at the wrong similarity.
func TestCheckNearDuplicatesMatchReference(t *testing.T) {
	// w(p, i, j) is the words p1..pj from i: "pi ... pj"; every pair has
	// words of its own, so pairs never match each other.
	w := func(p string, i, j int) string {
		var words []string
		for n := i; n <= j; n++ {
			words = append(words, fmt.Sprintf("%s%d", p, n))
		}
		return strings.Join(words, " ")
	}
	tests := []struct {
		name        string
		test, train string
		jaccard     float64 // by hand
		reported    bool    // at threshold 0.25
	}{
		{
			// {a1-a5, a2-a6} and {a1-a5, a2-a5 x}: 1 shared of 3.
			name: "6 words, last changed", test: w("a", 1, 6), train: w("a", 1, 5) + " x",
			jaccard: 1.0 / 3, reported: true,
		},
		{
			// 6 shingles each, all but the last shared: 5 of 7.
			name: "10 words, last changed", test: w("b", 1, 10), train: w("b", 1, 9) + " y",
			jaccard: 5.0 / 7, reported: true,
		},
		{
			// 6 shingles each, all but the first shared: 5 of 7.
			name: "10 words, first changed", test: w("c", 1, 10), train: "z " + w("c", 2, 10),
			jaccard: 5.0 / 7, reported: true,
		},
		{
			// Every one of the 5 shingles holds the middle word c5.
			name: "9 words, middle changed", test: w("d", 1, 9), train: w("d", 1, 4) + " q " + w("d", 6, 9),
			jaccard: 0, reported: false,
		},
		{
			// One shingle of all 4 words against one of 5 words.
			name: "4 words and their 5-word extension", test: w("e", 1, 4), train: w("e", 1, 5),
			jaccard: 0, reported: false,
		},
		{
			// 8 shingles each; only e1-e5 and e8-e12 avoid words 6 and 7.
			name: "12 words, two swapped", test: w("f", 1, 12), train: w("f", 1, 5) + " f7 f6 " + w("f", 8, 12),
			jaccard: 2.0 / 14, reported: false,
		},
		{
			// 8 shingles against 7, all of them shared: 7 of 8.
			name: "12 words, first dropped", test: w("g", 1, 12), train: w("g", 2, 12),
			jaccard: 7.0 / 8, reported: true,
		},
		{
			// Stamps, case and spacing do not count: 16 shingles against
			// 17, all 16 shared.
			name:    "20 words stamped and upper-cased, one word added",
			test:    "[2025-12-04T10:22:44Z] " + w("h", 1, 10) + "\n[2025-12-04T10:23:44Z; 1 minute passed] " + w("h", 11, 20),
			train:   strings.ToUpper(w("h", 1, 7)) + " \t " + w("h", 8, 21),
			jaccard: 16.0 / 17, reported: true,
		},
		{
			// Texts shorter than a shingle: one shingle each, the same words
			// in another order.
			name: "3 words reordered", test: "k1 k2 k3", train: "k2 k1 k3",
			jaccard: 0, reported: false,
		},
	}
	var rows gtRows
	for i, tt := range tests {
		require.InDelta(t, tt.jaccard, gtJaccard(tt.test, tt.train, 5), 1e-12, "%s: hand-worked similarity", tt.name)
		rows = append(rows,
			Row{File: gtTestFile, Index: i + 1, ID: fmt.Sprintf("test%d", i), Side: Test, Text: tt.test},
			Row{File: gtTrainFile, Index: i + 1, ID: fmt.Sprintf("train%d", i), Side: Train, Text: tt.train})
	}
	opt := DefaultGateOptions()
	opt.NearDuplicateThreshold = 0.25
	opt.Permutations = 4096
	opt.Bands = 0 // DefaultBands for 4096 and 0.25
	opt.Sensitivities = []string{}
	opt.MaxFindings = -1
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	near := gtCheck(rep, CheckNearDuplicates)
	got := map[int]float64{}
	for _, f := range near.Findings {
		var i int
		_, err := fmt.Sscanf(f.IDs[0], "train%d", &i)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("test%d", i), f.IDs[1], "unrelated pair reported")
		got[i] = f.Similarity
	}
	for i, tt := range tests {
		sim, ok := got[i]
		if !tt.reported {
			assert.False(t, ok, "%s: reported at estimated Jaccard %.3f, true %.3f", tt.name, sim, tt.jaccard)
			continue
		}
		t.Logf("%s: true Jaccard %.3f, estimated %.3f", tt.name, tt.jaccard, sim)
		if assert.True(t, ok, "%s: not reported (true Jaccard %.3f)", tt.name, tt.jaccard) {
			assert.InDelta(t, tt.jaccard, sim, 0.04, "%s: estimated Jaccard", tt.name)
		}
	}
	assert.Equal(t, len(got), near.Count)
	assert.Equal(t, StatusPass, gtCheck(rep, CheckExactDuplicates).Status)
}

func TestCheckSummaries(t *testing.T) {
	rows := gtClean(3, 100)
	gtFind(t, rows, "train_sc1_1").Group = "test scenario 1"
	gtFind(t, rows, "train_sc1_2").Group = "test scenario 2"
	for i := range rows {
		if rows[i].Side == Train && rows[i].Sensitivity == scenario.SensitivityLow {
			rows[i].Sensitivity = ""
		}
	}
	rep, err := Check(context.Background(), rows.source(), gtOptions())
	require.NoError(t, err)
	assert.Equal(t, "2 scenarios appear in both splits", gtCheck(rep, CheckGroupDisjoint).Summary)
	sens := gtCheck(rep, CheckSensitivityCoverage)
	assert.Equal(t, `1 sensitivity level is missing: train lacks low`, sens.Summary)
	assert.Equal(t, `split "train" has no rows with sensitivity "low"`, sens.Findings[0].Message)
	assert.Equal(t, map[string]int{"low": 0, "medium": 20, "high": 20, "unknown": 30}, rep.Splits[Train].BySensitivity)
}

func TestCheckNearDuplicateBelowThreshold(t *testing.T) {
	rows := gtClean(4, 200)
	rng := rand.New(rand.NewPCG(4, 4))
	te := gtFind(t, rows, "test_sc0_0")
	for i, k := range []int{15, 20, 30} {
		tr := gtFind(t, rows, fmt.Sprintf("train_sc%d_0", i))
		tr.Text = gtChangeWords(rng, te.Text, k, 5)
		require.Less(t, gtJaccard(te.Text, tr.Text, 5), 0.7, "%d words changed", k)
	}
	rep, err := Check(context.Background(), rows.source(), gtOptions())
	require.NoError(t, err)
	assert.True(t, rep.Passed)
	near := gtCheck(rep, CheckNearDuplicates)
	assert.Equal(t, StatusPass, near.Status)
	assert.Zero(t, near.Count)
	assert.Equal(t, StatusPass, gtCheck(rep, CheckExactDuplicates).Status)
}

func TestCheckDisabledChecks(t *testing.T) {
	rows := gtClean(5, 50)
	te := gtFind(t, rows, "test_sc0_0")
	gtFind(t, rows, "train_sc0_0").Text = gtChangeWords(rand.New(rand.NewPCG(1, 1)), te.Text, 1, 5)
	for i := range rows {
		if rows[i].Side == Test {
			rows[i].Sensitivity = scenario.SensitivityLow
		}
	}
	opt := DefaultGateOptions()
	opt.NearDuplicateThreshold = -1
	opt.Sensitivities = []string{}
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	assert.True(t, rep.Passed)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckNearDuplicates).Status)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckTestFraction).Status)
	assert.Equal(t, StatusSkipped, gtCheck(rep, CheckSensitivityCoverage).Status)

	// Nil sensitivities mean the default levels, and the near-duplicate is found.
	opt = GateOptions{}
	rep, err = Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	assert.Equal(t, StatusFail, gtCheck(rep, CheckNearDuplicates).Status)
	assert.Equal(t, StatusFail, gtCheck(rep, CheckSensitivityCoverage).Status)
	assert.Equal(t, 2, gtCheck(rep, CheckSensitivityCoverage).Count)
	assert.Equal(t, scenario.Sensitivities, rep.Options.Sensitivities)
}

func TestCheckEmptyTexts(t *testing.T) {
	rows := gtClean(6, 40)
	for _, id := range []string{"train_sc0_0", "test_sc0_0"} {
		gtFind(t, rows, id).Text = ""
	}
	for _, id := range []string{"train_sc0_1", "test_sc0_1"} {
		gtFind(t, rows, id).Text = " [2025-12-04T10:22:44Z] \n "
	}
	rep, err := Check(context.Background(), rows.source(), gtOptions())
	require.NoError(t, err)
	assert.True(t, rep.Passed, "%+v", rep.Checks)

	// No test text at all: the second pass hashes the train texts, and
	// there is nothing for a third to name.
	for i := range rows {
		if rows[i].Side == Test {
			rows[i].Text = ""
		}
	}
	opens := 0
	src := func() (RowIterator, error) { opens++; return rows.source()() }
	rep, err = Check(context.Background(), src, gtOptions())
	require.NoError(t, err)
	assert.True(t, rep.Passed)
	assert.Equal(t, 2, opens)

	// No train rows: the second pass is not needed either.
	test := slices.DeleteFunc(slices.Clone(rows), func(r Row) bool { return r.Side == Train })
	opens = 0
	src = func() (RowIterator, error) { opens++; return test.source()() }
	rep, err = Check(context.Background(), src, gtOptions())
	require.NoError(t, err)
	assert.Equal(t, 1, opens)
	assert.Zero(t, rep.Splits[Train].Rows)
}

func TestCheckMaxFindings(t *testing.T) {
	rows := gtClean(7, 60)
	te := gtFind(t, rows, "test_sc2_9")
	for i := range rows {
		if rows[i].Side == Train {
			rows[i].Text = te.Text
		}
	}
	// Put three train scenarios on the test side too, in reverse order.
	for sc := range 3 {
		gtFind(t, rows, fmt.Sprintf("test_sc%d_0", sc)).Group = fmt.Sprintf("train scenario %d", 6-sc)
	}
	opt := gtOptions()
	opt.MaxFindings = 3
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	exact := gtCheck(rep, CheckExactDuplicates)
	assert.Equal(t, 70, exact.Count)
	require.Len(t, exact.Findings, 3)
	for i, f := range exact.Findings {
		assert.Equal(t, i+1, f.Row)
		assert.Equal(t, []string{fmt.Sprintf("train_sc0_%d", i), "test_sc2_9"}, f.IDs)
	}
	assert.Equal(t, StatusPass, gtCheck(rep, CheckNearDuplicates).Status, "exact pairs are not near-duplicates too")
	sc := gtCheck(rep, CheckGroupDisjoint)
	assert.Equal(t, 3, sc.Count)
	require.Len(t, sc.Findings, 3)
	// Located at the train rows, read first; sorted by file, then row.
	for i, f := range sc.Findings {
		assert.Equal(t, gtTrainFile, f.File)
		assert.Equal(t, 41+10*i, f.Row)
		assert.Equal(t, []string{fmt.Sprintf("train_sc%d_0", 4+i), fmt.Sprintf("test_sc%d_0", 2-i)}, f.IDs)
	}

	opt.MaxFindings = -1
	rep, err = Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	assert.Len(t, gtCheck(rep, CheckExactDuplicates).Findings, 70)
}

func TestCheckDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	rows := gtClean(8, 150)
	// Some leaks of every kind, so that the findings are not empty.
	for i := range 20 {
		te := gtFind(t, rows, fmt.Sprintf("test_sc%d_%d", i%3, i%10))
		tr := gtFind(t, rows, fmt.Sprintf("train_sc%d_%d", i%7, (i*3)%10))
		if i%2 == 0 {
			tr.Text = gtChangeWords(rng, te.Text, 1, 5)
		} else {
			tr.Text = strings.ToUpper(te.Text)
		}
	}
	gtFind(t, rows, "train_sc1_1").Group = "test scenario 1"
	opt := gtOptions()
	opt.MaxFindings = 5
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var reports []*Report
	for _, procs := range []int{1, 4, 4, 2} {
		runtime.GOMAXPROCS(procs)
		rep, err := Check(context.Background(), rows.source(), opt)
		require.NoError(t, err)
		reports = append(reports, rep)
	}
	for _, rep := range reports[1:] {
		assert.True(t, reflect.DeepEqual(reports[0], rep))
	}
	assert.Equal(t, 10, gtCheck(reports[0], CheckNearDuplicates).Count)
	assert.Equal(t, 10, gtCheck(reports[0], CheckExactDuplicates).Count)

	// Another seed finds the same near-duplicates here (they are far above
	// the threshold), with other estimates.
	opt.Seed = 12345
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	assert.Equal(t, 10, gtCheck(rep, CheckNearDuplicates).Count)
}

func TestCheckRowErrors(t *testing.T) {
	bad := Row{File: gtTrainFile, Index: 12, ID: "x_1", Side: "dev", Text: "x"}
	boom := errors.New("disk on fire")
	tests := []struct {
		name string
		src  RowSource
		want string
		is   error
	}{
		{
			name: "bad side",
			src:  gtRows{{File: gtTrainFile, Index: 11, ID: "x_0", Side: Train}, bad}.source(),
			want: `splits: pairs-train.parquet: row 12 (id x_1): side "dev" is not train, test or against`,
		},
		{
			name: "no side",
			src:  gtRows{{File: gtTestFile, Index: 3, ID: "y_2"}}.source(),
			want: `splits: pairs-test.parquet: row 3 (id y_2): side "" is not train, test or against`,
		},
		{
			name: "open error",
			src:  func() (RowIterator, error) { return nil, boom },
			want: "splits: open rows: disk on fire",
			is:   boom,
		},
		{
			name: "read error",
			src: func() (RowIterator, error) {
				return &gtIter{rows: []Row{{Side: Test, Text: "a"}}, err: boom}, nil
			},
			want: "splits: disk on fire",
			is:   boom,
		},
		{
			name: "rows change between passes",
			src:  rowsGrowAfter(1, Row{Side: Test, Text: "a b c"}, Row{Side: Train, Text: "d e f"}, Row{Side: Train}),
			want: "splits: the rows changed between the gate's passes (2 rows, then 3)",
		},
		{
			name: "rows change between passes, the new row with a text",
			src:  rowsGrowAfter(1, Row{Side: Test, Text: "a b c"}, Row{Side: Train, Text: "d e f"}, Row{Side: Train, Text: "g h i"}),
			want: "splits: the rows changed between the gate's passes (2 rows, then 3)",
		},
		{
			name: "rows change before the third pass",
			src:  rowsGrowAfter(2, Row{Side: Test, ID: "a", Text: "a b c"}, Row{Side: Train, ID: "a", Text: "d e f"}, Row{Side: Train}),
			want: "splits: the rows changed between the gate's passes (2 rows, then 3)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Check(context.Background(), tt.src, DefaultGateOptions())
			require.Error(t, err)
			assert.Nil(t, rep)
			assert.Equal(t, tt.want, err.Error())
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// rowsGrowAfter is a row source that gives test and train, and from its
// open number pass+1 on, extra after them: rows that change between the
// gate's passes.
func rowsGrowAfter(pass int, test, train, extra Row) RowSource {
	n := 0
	return func() (RowIterator, error) {
		n++
		rows := []Row{test, train}
		if n > pass {
			rows = append(rows, extra)
		}
		return &gtIter{rows: rows}, nil
	}
}

func TestCheckOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  func(*GateOptions)
		want string
	}{
		{"threshold above 1", func(o *GateOptions) { o.NearDuplicateThreshold = 1.5 }, "near-duplicate threshold 1.5"},
		{"negative shingles", func(o *GateOptions) { o.ShingleWords = -1 }, "shingle words -1"},
		{"negative permutations", func(o *GateOptions) { o.Permutations = -1 }, "permutations -1"},
		{"too many bands", func(o *GateOptions) { o.Bands = 200 }, "bands 200"},
		{"fraction above 1", func(o *GateOptions) { o.TestFraction = 2 }, "test fraction 2"},
		{"negative tolerance", func(o *GateOptions) { o.Tolerance = -0.1 }, "tolerance -0.1"},
		{"empty level", func(o *GateOptions) { o.Sensitivities = []string{"low", " "} }, "empty sensitivity level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultGateOptions()
			tt.opt(&opt)
			_, err := Check(context.Background(), gtRows{}.source(), opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "splits: gate options: "+tt.want)
		})
	}
}

func TestCheckCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Check(ctx, gtClean(9, 20).source(), DefaultGateOptions())
	assert.ErrorIs(t, err, context.Canceled)
}

// TestCheckLSHRecall plants 200 near-duplicate pairs at true Jaccard ≥ 0.85
// (one to three words changed in 200-word texts) among 1000 unrelated train
// and test texts.
func TestCheckLSHRecall(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	vocab := gtVocab(rng, 20000)
	var rows gtRows
	add := func(split, id, text string) {
		file := gtTrainFile
		if split == Test {
			file = gtTestFile
		}
		rows = append(rows, Row{File: file, Index: len(rows) + 1, ID: id, Group: id, Side: split, Text: text})
	}
	minJ := 1.0
	for i := range 200 {
		text := gtText(rng, vocab, 200)
		dup := gtChangeWords(rng, text, 1+i%3, 5)
		j := gtJaccard(text, dup, 5)
		require.GreaterOrEqual(t, j, 0.85)
		minJ = min(minJ, j)
		add(Test, fmt.Sprintf("planted_test_%d", i), text)
		add(Train, fmt.Sprintf("planted_train_%d", i), dup)
	}
	for i := range 1000 {
		add(Test, fmt.Sprintf("other_test_%d", i), gtText(rng, vocab, 200))
		add(Train, fmt.Sprintf("other_train_%d", i), gtText(rng, vocab, 200))
	}
	opt := DefaultGateOptions()
	opt.Sensitivities = []string{}
	opt.MaxFindings = -1
	rep, err := Check(context.Background(), rows.source(), opt)
	require.NoError(t, err)
	near := gtCheck(rep, CheckNearDuplicates)
	found := 0
	for _, f := range near.Findings {
		require.Len(t, f.IDs, 2)
		tr, okTr := strings.CutPrefix(f.IDs[0], "planted_train_")
		te, okTe := strings.CutPrefix(f.IDs[1], "planted_test_")
		require.True(t, okTr && okTe && tr == te, "unrelated pair reported: %v", f.IDs)
		assert.GreaterOrEqual(t, f.Similarity, 0.8)
		found++
	}
	assert.Equal(t, near.Count, found)
	t.Logf("recall %d/200 (smallest true Jaccard %.3f); %s", found, minJ, near.Summary)
	assert.GreaterOrEqual(t, found, 196)
	assert.Equal(t, StatusPass, gtCheck(rep, CheckExactDuplicates).Status)
}

// gtBenchRows synthesises train and test conversations of ~300 distinct
// random words each.
func gtBenchRows(train, test int) gtRows {
	rng := rand.New(rand.NewPCG(42, 42))
	vocab := gtVocab(rng, 50000)
	levels := []string{scenario.SensitivityLow, scenario.SensitivityMedium, scenario.SensitivityHigh}
	rows := make(gtRows, 0, train+test)
	for i := range train + test {
		split, file, index := Train, gtTrainFile, i+1
		if i >= train {
			split, file, index = Test, gtTestFile, i-train+1
		}
		sc := i / 50
		rows = append(rows, Row{
			File:        file,
			Index:       index,
			ID:          fmt.Sprintf("scenario%d_%d", sc, i%50),
			Sensitivity: levels[sc%3],
			Label:       []string{"tool", "direct"}[i%2],
			Side:        split,
			Text:        gtText(rng, vocab, 280+rng.IntN(41)),
		})
	}
	return rows
}

func BenchmarkCheck(b *testing.B) {
	rows := gtBenchRows(20000, 5000)
	opt := DefaultGateOptions()
	opt.TestFraction = 0.2
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		rep, err := Check(context.Background(), rows.source(), opt)
		if err != nil {
			b.Fatal(err)
		}
		if !rep.Passed {
			b.Fatalf("clean benchmark split fails: %+v", rep.Checks)
		}
	}
	b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
}

// TestGateTopKeepsFirst checks the bounded finding list against a full sort.
func TestGateTopKeepsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, limit := range []int{0, 1, 5, 100} {
		top := gateTop[int]{max: limit, cmp: func(a, b int) int { return a - b }}
		var all []int
		for range 1000 {
			x := rng.IntN(10000)
			all = append(all, x)
			top.add(x)
		}
		slices.Sort(all)
		assert.Equal(t, all[:limit], top.trim(), "limit %d", limit)
	}
}
