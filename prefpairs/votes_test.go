package prefpairs

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handVotes is a hand-worked annotation set: three trajectories (t1, t2, t3)
// × three elapse levels, four survey submissions.
//
//	submission   t1 e0 e1 e2 | t2 e0 e1 e2 | t3 e0 e1 e2 | inconsistent
//	alice / "1"     0  2  3  |    0  0  1  |    2  3  3  | none
//	bob   / "1"     0  3  3  |    1  0  2  |    2  2  3  | t2 (1→0): kept
//	carol / "2"     3  0  3  |    2  1  0  |    3  3  3  | t1, t2: dropped
//	carol / 3       1  2  3  |    .  .  .  |    .  .  .  | none
//
// carol has two submissions; the survey of the second is a JSON number. The
// lines are interleaved and use several spellings of the choices, and there
// are blank lines and an extra key, all of which ReadVotes must accept.
const handVotes = `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":"1","choice":"direct"}
{"sample_id":"t1","elapse":0,"annotator":"bob","survey":"1","choice":"Direct"}
{"sample_id":"t1","elapse":0,"annotator":"carol","survey":"2","choice":"tool"}
{"sample_id":"t1","elapse":1,"annotator":"alice","survey":"1","choice":"lean_tool"}
{"sample_id":"t1","elapse":1,"annotator":"bob","survey":"1","choice":"TOOL"}
{"sample_id":"t1","elapse":1,"annotator":"carol","survey":"2","choice":"direct"}
{"sample_id":"t1","elapse":2,"annotator":"alice","survey":"1","choice":"tool"}
{"sample_id":"t1","elapse":2,"annotator":"bob","survey":"1","choice":"tool"}
{"sample_id":"t1","elapse":2,"annotator":"carol","survey":"2","choice":"tool"}

{"sample_id":"t2","elapse":0,"annotator":"alice","survey":"1","choice":"direct"}
{"sample_id":"t2","elapse":0,"annotator":"bob","survey":"1","choice":"lean-direct"}
{"sample_id":"t2","elapse":0,"annotator":"carol","survey":"2","choice":"lean_tool"}
{"sample_id":"t2","elapse":1,"annotator":"alice","survey":"1","choice":"direct"}
{"sample_id":"t2","elapse":1,"annotator":"bob","survey":"1","choice":"direct"}
{"sample_id":"t2","elapse":1,"annotator":"carol","survey":"2","choice":"lean_direct"}
{"sample_id":"t2","elapse":2,"annotator":"alice","survey":"1","choice":"lean_direct"}
{"sample_id":"t2","elapse":2,"annotator":"bob","survey":"1","choice":"Lean-Tool"}
{"sample_id":"t2","elapse":2,"annotator":"carol","survey":"2","choice":"direct"}
   
{"sample_id":"t3","elapse":0,"annotator":"alice","survey":"1","choice":"lean_tool"}
{"sample_id":"t3","elapse":0,"annotator":"bob","survey":"1","choice":"lean_tool"}
{"sample_id":"t3","elapse":0,"annotator":"carol","survey":"2","choice":"tool"}
{"sample_id":"t3","elapse":1,"annotator":"alice","survey":"1","choice":"tool"}
{"sample_id":"t3","elapse":1,"annotator":"bob","survey":"1","choice":"lean_tool"}
{"sample_id":"t3","elapse":1,"annotator":"carol","survey":"2","choice":"tool"}
{"sample_id":"t3","elapse":2,"annotator":"alice","survey":"1","choice":"tool"}
{"sample_id":"t3","elapse":2,"annotator":"bob","survey":"1","choice":"tool"}
{"sample_id":"t3","elapse":2,"annotator":"carol","survey":"2","choice":"tool"}
{"sample_id":"t1","elapse":0,"annotator":"carol","survey":3,"choice":"lean_direct","submitted_at":"2025-12-04T10:22:44Z"}
{"sample_id":"t1","elapse":1,"annotator":"carol","survey":3,"choice":"lean_tool"}
{"sample_id":"t1","elapse":2,"annotator":"carol","survey":3,"choice":"tool"}
`

func readHandVotes(t *testing.T) []Vote {
	t.Helper()
	votes, err := ReadVotes(strings.NewReader(handVotes), "hand.jsonl")
	require.NoError(t, err)
	require.Len(t, votes, 30)
	return votes
}

func TestReadVotesHandWorked(t *testing.T) {
	votes := readHandVotes(t)
	tests := []struct {
		name string
		i    int
		want Vote
	}{
		{"first line", 0, Vote{SampleID: "t1", Elapse: 0, Annotator: "alice", Survey: "1", Choice: "direct", Score: 0}},
		{"capitalised choice", 1, Vote{SampleID: "t1", Elapse: 0, Annotator: "bob", Survey: "1", Choice: "direct", Score: 0}},
		{"upper-case tool", 4, Vote{SampleID: "t1", Elapse: 1, Annotator: "bob", Survey: "1", Choice: "tool", Score: 3}},
		{"hyphenated lean-direct", 10, Vote{SampleID: "t2", Elapse: 0, Annotator: "bob", Survey: "1", Choice: "lean_direct", Score: 1}},
		{"mixed-case Lean-Tool", 16, Vote{SampleID: "t2", Elapse: 2, Annotator: "bob", Survey: "1", Choice: "lean_tool", Score: 2}},
		{"numeric survey and extra key", 27, Vote{SampleID: "t1", Elapse: 0, Annotator: "carol", Survey: "3", Choice: "lean_direct", Score: 1}},
		{"last line", 29, Vote{SampleID: "t1", Elapse: 2, Annotator: "carol", Survey: "3", Choice: "tool", Score: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, votes[tc.i])
		})
	}
}

func TestReadVotesAccepts(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []Vote
	}{
		{"empty input", "", nil},
		{"only blank lines", "\n  \n\r\n", nil},
		{
			"no trailing newline, CRLF, BOM",
			"\ufeff" + `{"sample_id":"a","elapse":1,"annotator":"x","survey":"s","choice":"lean_tool"}` + "\r\n" +
				`{"sample_id":"a","elapse":2,"annotator":"x","survey":"s","choice":"tool"}`,
			[]Vote{
				{SampleID: "a", Elapse: 1, Annotator: "x", Survey: "s", Choice: "lean_tool", Score: 2},
				{SampleID: "a", Elapse: 2, Annotator: "x", Survey: "s", Choice: "tool", Score: 3},
			},
		},
		{
			"same sample in two surveys of one annotator is not a duplicate",
			`{"sample_id":"a","elapse":0,"annotator":"x","survey":"1","choice":"tool"}
{"sample_id":"a","elapse":0,"annotator":"x","survey":"2","choice":"direct"}`,
			[]Vote{
				{SampleID: "a", Elapse: 0, Annotator: "x", Survey: "1", Choice: "tool", Score: 3},
				{SampleID: "a", Elapse: 0, Annotator: "x", Survey: "2", Choice: "direct", Score: 0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadVotes(strings.NewReader(tc.input), "in.jsonl")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadVotesSurveyNumbers(t *testing.T) {
	tests := []struct {
		raw  string
		want string
	}{
		{`17`, "17"},
		{`17.0`, "17"},
		{`1.7e1`, "17"},
		{`2.5`, "2.5"},
		{`-0`, "0"},
		{`0.0`, "0"},
		{`-4`, "-4"},
		{`9`, "9"},
		{`90.5`, "90.5"},
		{`0`, "0"},
		{`123456789012345678901234567890`, "123456789012345678901234567890"},
		{`"017"`, "017"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			line := `{"sample_id":"a","elapse":0,"annotator":"x","survey":` + tc.raw + `,"choice":"tool"}`
			got, err := ReadVotes(strings.NewReader(line), "in.jsonl")
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0].Survey)
		})
	}
}

func TestReadVotesLongLine(t *testing.T) {
	// A line far beyond bufio.Scanner's default 64 KiB token limit.
	long := `{"sample_id":"a","elapse":0,"annotator":"x","survey":"1","choice":"tool","comment":"` +
		strings.Repeat("z", 1<<20) + `"}`
	got, err := ReadVotes(strings.NewReader(long+"\n"), "in.jsonl")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "tool", got[0].Choice)
}

func TestReadVotesErrors(t *testing.T) {
	const ok = `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":"1","choice":"direct"}`
	tests := []struct {
		name  string
		input string
		want  string // the full message, or its prefix when pfx is set
		pfx   bool
	}{
		{
			name:  "bad choice on line 7",
			input: ok + "\n\n" + strings.Replace(ok, `"t1"`, `"t2"`, 1) + "\n\n  \n\n" + `{"sample_id":"flight_1","elapse":1,"annotator":"bob","survey":"2","choice":"maybe"}`,
			want:  `annotations.jsonl: line 7 (sample_id flight_1): choice: "maybe" is not one of direct, lean_direct, lean_tool, tool`,
		},
		{
			name:  "bad JSON",
			input: ok + "\n" + `{"sample_id":"t1","elapse":0,`,
			want:  "annotations.jsonl: line 2: invalid JSON: ",
			pfx:   true,
		},
		{
			name:  "trailing garbage after the object",
			input: ok + ` x`,
			want:  "annotations.jsonl: line 1: invalid JSON: ",
			pfx:   true,
		},
		{
			name:  "not an object",
			input: `[1, 2]`,
			want:  `annotations.jsonl: line 1: want a JSON object, line starts with "[1, 2]"`,
		},
		{
			name:  "null line",
			input: `null`,
			want:  `annotations.jsonl: line 1: want a JSON object, line starts with "null"`,
		},
		{
			name:  "missing sample_id",
			input: `{"elapse":0,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1: sample_id: missing",
		},
		{
			name:  "empty sample_id",
			input: `{"sample_id":" ","elapse":0,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  `annotations.jsonl: line 1: sample_id: empty string " "`,
		},
		{
			name:  "numeric sample_id",
			input: `{"sample_id":12,"elapse":0,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1: sample_id: want a string, got 12",
		},
		{
			name:  "missing elapse",
			input: `{"sample_id":"t1","annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): elapse: missing",
		},
		{
			name:  "elapse 3",
			input: `{"sample_id":"t1","elapse":3,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got 3",
		},
		{
			name:  `elapse "1"`,
			input: `{"sample_id":"t1","elapse":"1","annotator":"alice","survey":"1","choice":"direct"}`,
			want:  `annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got "1"`,
		},
		{
			name:  "elapse 1.5",
			input: `{"sample_id":"t1","elapse":1.5,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got 1.5",
		},
		{
			name:  "elapse -1",
			input: `{"sample_id":"t1","elapse":-1,"annotator":"alice","survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got -1",
		},
		{
			name:  "an offending value of 40 bytes is shown whole",
			input: `{"sample_id":"t1","elapse":"` + strings.Repeat("e", 38) + `","annotator":"alice","survey":"1","choice":"direct"}`,
			want:  `annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got "` + strings.Repeat("e", 38) + `"`,
		},
		{
			name:  "an offending value of 41 bytes is clipped to 40",
			input: `{"sample_id":"t1","elapse":"` + strings.Repeat("e", 39) + `","annotator":"alice","survey":"1","choice":"direct"}`,
			want:  `annotations.jsonl: line 1 (sample_id t1): elapse: want 0, 1 or 2 written as a single digit, got "` + strings.Repeat("e", 39) + `…`,
		},
		{
			name:  "a line that is not an object is shown to 20 bytes",
			input: `["` + strings.Repeat("x", 30) + `"]`,
			want:  `annotations.jsonl: line 1: want a JSON object, line starts with "[\"` + strings.Repeat("x", 18) + `…"`,
		},
		{
			name:  "missing annotator",
			input: `{"sample_id":"t1","elapse":0,"survey":"1","choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): annotator: missing",
		},
		{
			name:  "empty annotator",
			input: `{"sample_id":"t1","elapse":0,"annotator":"","survey":"1","choice":"direct"}`,
			want:  `annotations.jsonl: line 1 (sample_id t1): annotator: empty string ""`,
		},
		{
			name:  "null survey",
			input: `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":null,"choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): survey: missing",
		},
		{
			name:  "boolean survey",
			input: `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":true,"choice":"direct"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): survey: want a string or a number, got true",
		},
		{
			name:  "missing choice",
			input: `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":"1"}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): choice: missing",
		},
		{
			name:  "numeric choice",
			input: `{"sample_id":"t1","elapse":0,"annotator":"alice","survey":"1","choice":3}`,
			want:  "annotations.jsonl: line 1 (sample_id t1): choice: want a string, got 3",
		},
		{
			name:  "sample id with spaces is quoted",
			input: `{"sample_id":"my flight","elapse":0,"annotator":"alice","survey":"1","choice":"yes"}`,
			want:  `annotations.jsonl: line 1 (sample_id "my flight"): choice: "yes" is not one of direct, lean_direct, lean_tool, tool`,
		},
		{
			name:  "duplicate vote",
			input: ok + "\n" + strings.Replace(ok, `"elapse":0`, `"elapse":1`, 1) + "\n" + strings.Replace(ok, `"direct"`, `"tool"`, 1),
			want:  `annotations.jsonl: line 3 (sample_id t1): duplicate vote: annotator "alice" already voted on elapse 0 in survey "1" at line 1`,
		},
		{
			name:  "duplicate vote with the survey as a number",
			input: ok + "\n" + strings.Replace(ok, `"survey":"1"`, `"survey":1`, 1),
			want:  `annotations.jsonl: line 2 (sample_id t1): duplicate vote: annotator "alice" already voted on elapse 0 in survey "1" at line 1`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadVotes(strings.NewReader(tc.input), "annotations.jsonl")
			require.Error(t, err)
			assert.Nil(t, got)
			if tc.pfx {
				assert.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q lacks prefix %q", err, tc.want)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

func TestReadVotesReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(
		strings.NewReader(`{"sample_id":"a","elapse":0,"annotator":"x","survey":"1","choice":"tool"}`+"\n"),
		iotest.ErrReader(boom),
	)
	got, err := ReadVotes(r, "votes.jsonl")
	require.Error(t, err)
	assert.Nil(t, got)
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "votes.jsonl: line 2: read: disk on fire")
}

func TestFilterConsistentHandWorked(t *testing.T) {
	votes := readHandVotes(t)
	carol2 := DroppedSubmission{Annotator: "carol", Survey: "2", Inconsistent: []string{"t1", "t2"}, Votes: 9}
	bob1 := DroppedSubmission{Annotator: "bob", Survey: "1", Inconsistent: []string{"t2"}, Votes: 9}
	tests := []struct {
		name string
		max  int
		want ConsistencyReport
	}{
		{
			// carol/2 has two inconsistent trajectories (t2 falls twice but
			// counts once) and goes; bob/1 has one and stays.
			name: "default limit 1",
			max:  DefaultMaxInconsistencies,
			want: ConsistencyReport{Submissions: 4, Kept: 3, Dropped: []DroppedSubmission{carol2}, VotesIn: 30, VotesKept: 21},
		},
		{
			name: "limit 0 drops bob too, sorted by annotator",
			max:  0,
			want: ConsistencyReport{Submissions: 4, Kept: 2, Dropped: []DroppedSubmission{bob1, carol2}, VotesIn: 30, VotesKept: 12},
		},
		{
			name: "limit 2 keeps everything",
			max:  2,
			want: ConsistencyReport{Submissions: 4, Kept: 4, Dropped: []DroppedSubmission{}, VotesIn: 30, VotesKept: 30},
		},
		{
			name: "negative limit disables the filter",
			max:  -1,
			want: ConsistencyReport{Submissions: 4, Kept: 4, Dropped: []DroppedSubmission{}, VotesIn: 30, VotesKept: 30},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]Vote(nil), votes...)
			kept, rep := FilterConsistent(in, ConsistencyOptions{MaxInconsistencies: tc.max})
			assert.Equal(t, tc.want, rep)
			assert.Equal(t, votes, in, "input must not be modified")

			// Kept votes are exactly the input minus dropped submissions, in
			// input order.
			dropped := make(map[[2]string]bool)
			for _, d := range rep.Dropped {
				dropped[[2]string{d.Annotator, d.Survey}] = true
			}
			var want []Vote
			for _, v := range votes {
				if !dropped[[2]string{v.Annotator, v.Survey}] {
					want = append(want, v)
				}
			}
			assert.Equal(t, want, kept)
		})
	}
}

func TestFilterConsistentEdgeCases(t *testing.T) {
	v := func(id string, elapse, score int) Vote {
		return Vote{SampleID: id, Elapse: elapse, Annotator: "a", Survey: "s", Choice: voteChoices[score], Score: score}
	}
	tests := []struct {
		name         string
		votes        []Vote
		inconsistent []string // nil: submission kept with limit 0
	}{
		{"empty input", nil, nil},
		{"flat scores are consistent", []Vote{v("x", 0, 2), v("x", 1, 2), v("x", 2, 2)}, nil},
		{"rise is consistent, any input order", []Vote{v("x", 2, 3), v("x", 0, 0), v("x", 1, 1)}, nil},
		{"drop out of input order is found", []Vote{v("x", 2, 0), v("x", 0, 3)}, []string{"x"}},
		{"gap in levels still compared", []Vote{v("x", 0, 2), v("x", 2, 1)}, []string{"x"}},
		{"same-level duplicates are not compared with each other", []Vote{v("x", 1, 3), v("x", 1, 0), v("x", 2, 3)}, nil},
		{"duplicate at higher level below an earlier vote", []Vote{v("x", 0, 2), v("x", 1, 3), v("x", 1, 1)}, []string{"x"}},
		{"single vote", []Vote{v("x", 1, 0)}, nil},
		{"ids sorted in report", []Vote{v("z", 0, 3), v("z", 1, 0), v("b", 0, 1), v("b", 2, 0)}, []string{"b", "z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, rep := FilterConsistent(tc.votes, ConsistencyOptions{MaxInconsistencies: 0})
			assert.Equal(t, len(tc.votes), rep.VotesIn)
			if tc.inconsistent == nil {
				assert.Empty(t, rep.Dropped)
				assert.NotNil(t, rep.Dropped)
				assert.Len(t, kept, len(tc.votes))
				return
			}
			require.Len(t, rep.Dropped, 1)
			assert.Equal(t, tc.inconsistent, rep.Dropped[0].Inconsistent)
			assert.Equal(t, len(tc.votes), rep.Dropped[0].Votes)
			assert.Empty(t, kept)
			assert.Equal(t, 0, rep.VotesKept)
		})
	}
}

func TestMeanScoresHandWorked(t *testing.T) {
	kept, _ := FilterConsistent(readHandVotes(t), ConsistencyOptions{MaxInconsistencies: DefaultMaxInconsistencies})
	// Kept: alice/1, bob/1, carol/3. Scores per sample (alice, bob[, carol]):
	want := map[SampleKey]Score{
		{"t1", 0}: {Mean: 1.0 / 3, Votes: 3}, // 0, 0, 1
		{"t1", 1}: {Mean: 7.0 / 3, Votes: 3}, // 2, 3, 2
		{"t1", 2}: {Mean: 3, Votes: 3},       // 3, 3, 3
		{"t2", 0}: {Mean: 0.5, Votes: 2},     // 0, 1
		{"t2", 1}: {Mean: 0, Votes: 2},       // 0, 0
		{"t2", 2}: {Mean: 1.5, Votes: 2},     // 1, 2: a tie
		{"t3", 0}: {Mean: 2, Votes: 2},       // 2, 2
		{"t3", 1}: {Mean: 2.5, Votes: 2},     // 3, 2
		{"t3", 2}: {Mean: 3, Votes: 2},       // 3, 3
	}
	got := MeanScores(kept)
	require.Len(t, got, len(want))
	for k, w := range want {
		t.Run(fmt.Sprintf("%s/%d", k.ID, k.Elapse), func(t *testing.T) {
			require.Contains(t, got, k)
			assert.Equal(t, w.Votes, got[k].Votes)
			assert.InDelta(t, w.Mean, got[k].Mean, 1e-15)
		})
	}
	assert.Equal(t, 1.5, got[SampleKey{"t2", 2}].Mean, "the tie must be exact")
	assert.Empty(t, MeanScores(nil))
}

func TestAgreementUnits(t *testing.T) {
	tests := []struct {
		name  string
		votes []Vote
		want  [][]float64
	}{
		{"nil", nil, nil},
		{
			name: "sorted by id then elapse, values in input order",
			votes: []Vote{
				{SampleID: "b", Elapse: 1, Score: 3},
				{SampleID: "a", Elapse: 2, Score: 1},
				{SampleID: "b", Elapse: 0, Score: 0},
				{SampleID: "a", Elapse: 2, Score: 2},
				{SampleID: "b", Elapse: 1, Score: 2},
				{SampleID: "a", Elapse: 0, Score: 0},
			},
			want: [][]float64{{0}, {1, 2}, {0}, {3, 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, AgreementUnits(tc.votes))
		})
	}
}

func TestSummarizeVotesHandWorked(t *testing.T) {
	// Kept votes with the default limit, one unit per sample:
	//   [0,0,1] [2,3,2] [3,3,3] [0,1] [0,0] [1,2] [2,2] [3,2] [3,3]
	// Coincidences (weight 1/(m_u−1)): o00=3, o01=o10=2, o12=o21=1, o22=3,
	// o23=o32=2, o33=5; marginals n0=5, n1=3, n2=6, n3=7, n=21.
	//
	// Interval: Σ o·δ² = 4·1 + 2·1 + 4·1 = 10;
	//   Σ n_c·n_k·δ² = 2·(15·1 + 30·4 + 35·9 + 18·1 + 21·4 + 42·1) = 1188;
	//   alpha = 1 − 20·10/1188 = 247/297 ≈ 0.831650.
	// Ordinal: δ²(0,1)=(8−4)²=16, δ²(1,2)=(9−4.5)²=20.25,
	//   δ²(2,3)=(13−6.5)²=42.25, δ²(0,2)=(14−5.5)²=72.25,
	//   δ²(1,3)=(16−5)²=121, δ²(0,3)=(21−6)²=225;
	//   Σ o·δ² = 4·16 + 2·20.25 + 4·42.25 = 273.5;
	//   Σ n_c·n_k·δ² = 2·(15·16 + 30·72.25 + 35·225 + 18·20.25 + 21·121 + 42·42.25) = 29925;
	//   alpha = 1 − 20·273.5/29925 = 4891/5985 ≈ 0.817210.
	//
	// With limit 0 only alice/1 and carol/3 remain; the pairable units are
	// t1's [0,1] [2,2] [3,3]: o01=o10=1, o22=2, o33=2, n=(1,1,2,2), n=6.
	// Interval: 1 − 5·2/(2·(1 + 2·4 + 2·9 + 2·1 + 2·4 + 4·1)) = 1 − 10/82 = 36/41.
	//
	// Each value was also checked with the Python `krippendorff` package
	// 0.9.0 (coders×units matrix, one row per submission, NaN = missing):
	// kept 0.8316498316498316 / 0.8172096908939014; limit 0
	// 0.8780487804878049 / 0.9494949494949495; filter disabled (all 30 votes)
	// 0.47300103842159924 / 0.5040127232689015 (interval / ordinal).
	tests := []struct {
		name              string
		max               int
		kept, samples     int
		interval, ordinal float64
	}{
		{"default limit", DefaultMaxInconsistencies, 21, 9, 247.0 / 297, 4891.0 / 5985},
		{"limit 0", 0, 12, 9, 36.0 / 41, 0.9494949494949495},
		{"filter disabled", -1, 30, 9, 0.47300103842159924, 0.5040127232689015},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, scores, sum := SummarizeVotes(readHandVotes(t), ConsistencyOptions{MaxInconsistencies: tc.max})
			assert.Len(t, kept, tc.kept)
			assert.Len(t, scores, tc.samples)
			assert.Equal(t, tc.samples, sum.Samples)
			assert.Equal(t, tc.kept, sum.Consistency.VotesKept)
			require.NotNil(t, sum.AlphaInterval)
			require.NotNil(t, sum.AlphaOrdinal)
			assert.InDelta(t, tc.interval, *sum.AlphaInterval, 1e-12)
			assert.InDelta(t, tc.ordinal, *sum.AlphaOrdinal, 1e-12)
		})
	}
	assert.InDelta(t, 0.8316498316498316, 247.0/297, 1e-15)
	assert.InDelta(t, 0.8172096908939014, 4891.0/5985, 1e-15)
	assert.InDelta(t, 0.8780487804878049, 36.0/41, 1e-15)
}

func TestSummarizeVotesJSON(t *testing.T) {
	// One vote per sample: nothing to pair, so both alphas are null.
	votes := []Vote{{SampleID: "a", Elapse: 0, Annotator: "x", Survey: "1", Choice: "tool", Score: 3}}
	_, scores, sum := SummarizeVotes(votes, ConsistencyOptions{MaxInconsistencies: DefaultMaxInconsistencies})
	assert.Equal(t, map[SampleKey]Score{{"a", 0}: {Mean: 3, Votes: 1}}, scores)
	assert.Nil(t, sum.AlphaInterval)
	assert.Nil(t, sum.AlphaOrdinal)
	b, err := json.Marshal(sum)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"consistency": {"submissions": 1, "kept": 1, "dropped": [], "votes_in": 1, "votes_kept": 1},
		"samples": 1, "alpha_interval": null, "alpha_ordinal": null}`, string(b))

	_, rep := FilterConsistent([]Vote{
		{SampleID: "a", Elapse: 0, Annotator: "x", Survey: "1", Score: 2},
		{SampleID: "a", Elapse: 1, Annotator: "x", Survey: "1", Score: 1},
	}, ConsistencyOptions{})
	b, err = json.Marshal(rep)
	require.NoError(t, err)
	assert.JSONEq(t, `{"submissions": 1, "kept": 0, "votes_in": 2, "votes_kept": 0,
		"dropped": [{"annotator": "x", "survey": "1", "inconsistent": ["a"], "votes": 2}]}`, string(b))
}

func FuzzReadVotes(f *testing.F) {
	for _, line := range strings.Split(handVotes, "\n")[:4] {
		f.Add(line)
	}
	f.Add(handVotes)
	f.Add(`{"sample_id":"a","elapse":2.0,"annotator":"x","survey":1e2,"choice":"Lean-Tool"}`)
	f.Add(`{"sample_id":"a","elapse":"1","annotator":"x","survey":"1","choice":"tool"}`)
	f.Add(`{"sample_id":"a","elapse":0,"annotator":"x","survey":-0.0,"choice":"direct"}` + "\n" +
		`{"sample_id":"a","elapse":0,"annotator":"x","survey":0,"choice":"tool"}`)
	f.Add("\ufeff{}\r\n[]\nnull")
	f.Add(`{"sample_id":"\u0000","elapse":1,"annotator":"\ud800","survey":"s","choice":"TOOL"}`)
	f.Fuzz(func(t *testing.T, input string) {
		votes, err := ReadVotes(strings.NewReader(input), "fuzz.jsonl")
		if err != nil {
			require.Nil(t, votes)
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.jsonl: line "), "error %q does not name the source", err)
			return
		}
		seen := make(map[voteLineKey]bool)
		for _, v := range votes {
			require.NotEmpty(t, strings.TrimSpace(v.SampleID))
			require.NotEmpty(t, strings.TrimSpace(v.Annotator))
			require.NotEmpty(t, strings.TrimSpace(v.Survey))
			require.GreaterOrEqual(t, v.Elapse, 0)
			require.LessOrEqual(t, v.Elapse, 2)
			require.GreaterOrEqual(t, v.Score, 0)
			require.Less(t, v.Score, len(voteChoices))
			require.Equal(t, voteChoices[v.Score], v.Choice)
			k := voteLineKey{v.Annotator, v.Survey, v.SampleID, v.Elapse}
			require.False(t, seen[k], "duplicate vote %+v", v)
			seen[k] = true
		}
		// Whatever was read must flow through the rest of the pipeline.
		kept, scores, sum := SummarizeVotes(votes, ConsistencyOptions{MaxInconsistencies: DefaultMaxInconsistencies})
		require.Equal(t, len(votes), sum.Consistency.VotesIn)
		require.Equal(t, len(kept), sum.Consistency.VotesKept)
		require.Equal(t, len(scores), sum.Samples)
		for _, s := range scores {
			require.GreaterOrEqual(t, s.Mean, 0.0)
			require.LessOrEqual(t, s.Mean, 3.0)
		}
	})
}
