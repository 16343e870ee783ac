package prefpairs

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/prefpairs/agreement"
)

// Vote is one human judgement on one sample: which action the annotator
// thought the agent should take at the last turn of trajectory SampleID,
// asked at elapse level Elapse (0 small, 1 medium, 2 large).
//
// Annotator and Survey together identify the survey submission the vote came
// in; the consistency filter works per submission. Choice is one of
// "direct", "lean_direct", "lean_tool", "tool", and Score its number 0, 1, 2,
// 3, so a higher score means a stronger wish to call the tool again.
type Vote struct {
	SampleID  string `json:"sample_id"`
	Elapse    int    `json:"elapse"`
	Annotator string `json:"annotator"`
	Survey    string `json:"survey"`
	Choice    string `json:"choice"`
	Score     int    `json:"score"`
}

// voteChoices lists the valid choices in score order: the index is the score.
var voteChoices = [...]string{"direct", "lean_direct", "lean_tool", "tool"}

// voteChoiceList is the human-readable list used in error messages.
const voteChoiceList = "direct, lean_direct, lean_tool, tool"

// parseVoteChoice normalises a choice spelling (any case, '-' or '_') to its
// canonical underscore form and returns it with its score.
func parseVoteChoice(s string) (string, int, bool) {
	norm := strings.ReplaceAll(strings.ToLower(s), "-", "_")
	for score, c := range voteChoices {
		if norm == c {
			return c, score, true
		}
	}
	return "", 0, false
}

// voteWire is the JSONL line; fields stay raw so each can be checked and
// reported on its own.
type voteWire struct {
	SampleID  json.RawMessage `json:"sample_id"`
	Elapse    json.RawMessage `json:"elapse"`
	Annotator json.RawMessage `json:"annotator"`
	Survey    json.RawMessage `json:"survey"`
	Choice    json.RawMessage `json:"choice"`
}

// voteLineKey identifies what one annotator may vote on only once.
type voteLineKey struct {
	annotator, survey, sampleID string
	elapse                      int
}

// ReadVotes reads human annotations as JSONL, one vote per line:
//
//	{"sample_id": "flight_1", "elapse": 2, "annotator": "u17", "survey": "4", "choice": "lean_tool"}
//
// Blank lines are skipped and other keys are ignored, so exports that carry
// extra columns (timestamps, comments) load unchanged. The rules, checked per
// line so a bad export fails with a precise location:
//   - sample_id and annotator are non-empty strings;
//   - elapse is 0, 1 or 2 written as a single digit: 1.0, 2e0, -0 and "1"
//     (a string) are refused, because a level written otherwise means the
//     export passed through a float or a spreadsheet;
//   - survey is a non-empty string or a JSON number, which becomes its decimal
//     string (spreadsheets tend to turn submission ids into numbers);
//   - choice is direct, lean_direct, lean_tool or tool in any case, with '-'
//     allowed for '_'; Choice is normalised to the underscore form and Score
//     set from it;
//   - an annotator votes at most once per (sample_id, elapse) within one
//     survey submission, since a repeat would count their opinion twice.
//
// source names the input in errors, which read like
// `annotations.jsonl: line 7 (sample_id flight_1): choice: "maybe" is not one
// of direct, lean_direct, lean_tool, tool`. The first error stops reading;
// no votes are returned with it. Lines may be of any length. An input with no
// votes yields an empty result and no error.
func ReadVotes(r io.Reader, source string) ([]Vote, error) {
	br := bufio.NewReader(r)
	var votes []Vote
	seen := make(map[voteLineKey]int)
	for lineNo := 1; ; lineNo++ {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return nil, fmt.Errorf("%s: line %d: read: %w", source, lineNo, readErr)
		}
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			v, err := parseVoteLine(trimmed)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d%w", source, lineNo, err)
			}
			key := voteLineKey{v.Annotator, v.Survey, v.SampleID, v.Elapse}
			if first, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s: line %d (sample_id %s): duplicate vote: annotator %q already voted on elapse %d in survey %q at line %d",
					source, lineNo, voteShowID(v.SampleID), v.Annotator, v.Elapse, v.Survey, first)
			}
			seen[key] = lineNo
			votes = append(votes, v)
		}
		if readErr != nil {
			return votes, nil
		}
	}
}

// voteFieldError is the error of one line: the message is already prefixed
// with the sample id when one was readable, so ReadVotes only adds the source
// and line number. It wraps the underlying decoding error when there is one.
type voteFieldError struct {
	msg string
	err error
}

func (e *voteFieldError) Error() string { return e.msg }
func (e *voteFieldError) Unwrap() error { return e.err }

// parseVoteLine decodes and validates one non-blank line.
func parseVoteLine(line []byte) (Vote, error) {
	if line[0] != '{' {
		return Vote{}, &voteFieldError{msg: fmt.Sprintf(": want a JSON object, line starts with %q", voteClip(line, 20))}
	}
	var w voteWire
	if err := json.Unmarshal(line, &w); err != nil {
		return Vote{}, &voteFieldError{msg: ": invalid JSON: " + err.Error(), err: err}
	}

	// The sample id comes first so every later error can name it.
	var v Vote
	var prefix string
	id, err := voteString(w.SampleID)
	if err != nil {
		return Vote{}, voteErr("", "sample_id", err)
	}
	v.SampleID = id
	prefix = " (sample_id " + voteShowID(id) + ")"

	if v.Elapse, err = voteElapse(w.Elapse); err != nil {
		return Vote{}, voteErr(prefix, "elapse", err)
	}
	if v.Annotator, err = voteString(w.Annotator); err != nil {
		return Vote{}, voteErr(prefix, "annotator", err)
	}
	if v.Survey, err = voteSurvey(w.Survey); err != nil {
		return Vote{}, voteErr(prefix, "survey", err)
	}
	raw, err := voteString(w.Choice)
	if err != nil {
		return Vote{}, voteErr(prefix, "choice", err)
	}
	c, score, ok := parseVoteChoice(raw)
	if !ok {
		return Vote{}, voteErr(prefix, "choice", fmt.Errorf("%q is not one of %s", raw, voteChoiceList))
	}
	v.Choice, v.Score = c, score
	return v, nil
}

func voteErr(prefix, field string, err error) error {
	return &voteFieldError{msg: prefix + ": " + field + ": " + err.Error(), err: err}
}

var errVoteMissing = errors.New("missing")

// voteString decodes a required, non-blank JSON string.
func voteString(raw json.RawMessage) (string, error) {
	if voteAbsent(raw) {
		return "", errVoteMissing
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("want a string, got %s", voteClip(raw, 40))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("invalid string %s: %w", voteClip(raw, 40), err)
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("empty string %s", voteClip(raw, 40))
	}
	return s, nil
}

// voteElapse decodes an elapse level: the JSON number 0, 1 or 2 written as
// that digit alone. 1.0, 2e0 and -0 denote a level too, but an export that
// writes one has passed through a float or a spreadsheet, which may have
// turned other values into levels on the way; "2" (a string) is refused for
// the same reason.
func voteElapse(raw json.RawMessage) (int, error) {
	if voteAbsent(raw) {
		return 0, errVoteMissing
	}
	if len(raw) == 1 && raw[0] >= '0' && raw[0] <= '2' {
		return int(raw[0] - '0'), nil
	}
	return 0, fmt.Errorf("want 0, 1 or 2 written as a single digit, got %s", voteClip(raw, 40))
}

// voteSurvey decodes a survey id: a non-blank string, or a JSON number turned
// into its decimal string. An integer literal is kept digit for digit (so
// ids beyond 2^53 survive); other numbers are formatted in plain decimal
// notation, so 17.0 and 1.7e1 both give "17" and 2.5 gives "2.5".
func voteSurvey(raw json.RawMessage) (string, error) {
	if voteAbsent(raw) {
		return "", errVoteMissing
	}
	if raw[0] == '"' {
		return voteString(raw)
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return "", fmt.Errorf("want a string or a number, got %s", voteClip(raw, 40))
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err != nil {
		return "", fmt.Errorf("invalid number %s: %w", voteClip(raw, 40), err)
	}
	lit := num.String()
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return "0", nil
		}
		return lit, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %s is out of range", voteClip(raw, 40))
	}
	if f == 0 {
		return "0", nil // -0.0 and 0e5 both name survey "0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

// voteAbsent reports whether a field is missing or null.
func voteAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// voteClip renders at most n bytes of b for an error message.
func voteClip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// voteShowID prints a sample id bare when that is unambiguous and quoted
// when it holds spaces, control characters or invalid text.
func voteShowID(id string) string {
	for _, r := range id {
		if r == unicode.ReplacementChar || unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '(' || r == ')' {
			return strconv.Quote(id)
		}
	}
	return id
}

// DefaultMaxInconsistencies is the number of inconsistent trajectories a
// survey submission may contain and still be kept. It follows the TicToc paper, App.
// A.5, which tolerates one slip per submission as an occasional typo.
const DefaultMaxInconsistencies = 1

// ConsistencyOptions configures FilterConsistent.
type ConsistencyOptions struct {
	// MaxInconsistencies is the largest number of inconsistent trajectories a
	// submission may hold and be kept. The value is used as given: the zero
	// value tolerates none, so set DefaultMaxInconsistencies for the paper's
	// rule. A negative value disables the filter (every submission is kept),
	// which is useful to measure agreement on the raw votes.
	MaxInconsistencies int `json:"max_inconsistencies"`
}

// DroppedSubmission records one survey submission removed by the consistency
// filter and why, so a build manifest can show what was discarded.
type DroppedSubmission struct {
	Annotator string `json:"annotator"`
	Survey    string `json:"survey"`
	// Inconsistent lists the trajectory ids whose score fell as the elapse
	// level grew, sorted.
	Inconsistent []string `json:"inconsistent"`
	// Votes is the number of votes dropped with the submission.
	Votes int `json:"votes"`
}

// ConsistencyReport summarises one run of FilterConsistent for a manifest:
// how many submissions and votes came in, how many were kept, and each
// dropped submission (sorted by annotator, then survey).
type ConsistencyReport struct {
	Submissions int                 `json:"submissions"`
	Kept        int                 `json:"kept"`
	Dropped     []DroppedSubmission `json:"dropped"`
	VotesIn     int                 `json:"votes_in"`
	VotesKept   int                 `json:"votes_kept"`
}

// voteSubmissionKey identifies a survey submission.
type voteSubmissionKey struct{ annotator, survey string }

// FilterConsistent applies the sanity check of the TicToc paper, App. A.5. A survey
// submission is the set of votes with one (Annotator, Survey). Within it, a
// trajectory is inconsistent when, with its votes ordered by elapse level,
// the score drops from a shorter elapse to a longer one: time passing should
// never make calling the tool less attractive, so such a pattern suggests a
// careless or confused annotator. Each trajectory counts at most once. A
// submission with more than opt.MaxInconsistencies inconsistent trajectories
// is dropped whole; see ConsistencyOptions for the zero and negative values.
//
// Scores are taken from Vote.Score as given. If a submission holds several
// votes for the same trajectory and elapse level (ReadVotes rejects this,
// hand-built input may not), any vote scoring below a vote at a strictly
// smaller elapse makes the trajectory inconsistent.
//
// The kept votes keep their input order; the input slice is not modified.
// The report is deterministic: Dropped is sorted by annotator then survey and
// is an empty, non-nil slice when nothing was dropped.
func FilterConsistent(votes []Vote, opt ConsistencyOptions) ([]Vote, ConsistencyReport) {
	bySub := make(map[voteSubmissionKey]map[string][]Vote)
	counts := make(map[voteSubmissionKey]int)
	for _, v := range votes {
		k := voteSubmissionKey{v.Annotator, v.Survey}
		traj := bySub[k]
		if traj == nil {
			traj = make(map[string][]Vote)
			bySub[k] = traj
		}
		traj[v.SampleID] = append(traj[v.SampleID], v)
		counts[k]++
	}

	rep := ConsistencyReport{
		Submissions: len(bySub),
		Dropped:     []DroppedSubmission{},
		VotesIn:     len(votes),
	}
	drop := make(map[voteSubmissionKey]bool)
	if opt.MaxInconsistencies >= 0 {
		for k, traj := range bySub {
			var bad []string
			for id, tv := range traj {
				if voteInconsistent(tv) {
					bad = append(bad, id)
				}
			}
			if len(bad) > opt.MaxInconsistencies {
				slices.Sort(bad)
				drop[k] = true
				rep.Dropped = append(rep.Dropped, DroppedSubmission{
					Annotator:    k.annotator,
					Survey:       k.survey,
					Inconsistent: bad,
					Votes:        counts[k],
				})
			}
		}
	}
	slices.SortFunc(rep.Dropped, func(a, b DroppedSubmission) int {
		return cmp.Or(cmp.Compare(a.Annotator, b.Annotator), cmp.Compare(a.Survey, b.Survey))
	})
	rep.Kept = rep.Submissions - len(rep.Dropped)

	kept := make([]Vote, 0, len(votes))
	for _, v := range votes {
		if !drop[voteSubmissionKey{v.Annotator, v.Survey}] {
			kept = append(kept, v)
		}
	}
	rep.VotesKept = len(kept)
	return kept, rep
}

// voteInconsistent reports whether some vote scores lower than a vote at a
// strictly smaller elapse level. tv is reordered in place.
func voteInconsistent(tv []Vote) bool {
	slices.SortStableFunc(tv, func(a, b Vote) int { return cmp.Compare(a.Elapse, b.Elapse) })
	best := math.MinInt // highest score seen at smaller elapse levels
	for i := 0; i < len(tv); {
		j, levelMax := i, math.MinInt
		for ; j < len(tv) && tv[j].Elapse == tv[i].Elapse; j++ {
			if tv[j].Score < best {
				return true
			}
			levelMax = max(levelMax, tv[j].Score)
		}
		best = max(best, levelMax)
		i = j
	}
	return false
}

// Score is the aggregated human judgement of one sample: Mean is the mean
// vote score S in [0, 3] (3 = call the tool) and Votes the number of votes
// behind it, which callers use to require a minimum number of annotations.
type Score struct {
	Mean  float64 `json:"mean"`
	Votes int     `json:"votes"`
}

// MeanScores returns the score S of every sample that has at least one vote,
// keyed by (sample id, elapse level). S is the plain mean of Vote.Score, as
// in the TicToc paper, §3.5; filter the votes first if inconsistent submissions must
// not count.
func MeanScores(votes []Vote) map[SampleKey]Score {
	sums := make(map[SampleKey]int)
	out := make(map[SampleKey]Score)
	for _, v := range votes {
		k := SampleKey{ID: v.SampleID, Elapse: v.Elapse}
		sums[k] += v.Score
		s := out[k]
		s.Votes++
		out[k] = s
	}
	for k, s := range out {
		s.Mean = float64(sums[k]) / float64(s.Votes)
		out[k] = s
	}
	return out
}

// AgreementUnits groups vote scores per sample — the sample is the unit that
// annotators judge — into the form agreement.Alpha takes. Units are ordered
// by sample id, then elapse level, and each unit's values follow input order,
// so the result (and any float rounding in alpha) is deterministic. Samples
// with a single vote are included; Alpha ignores them.
func AgreementUnits(votes []Vote) [][]float64 {
	pos := make(map[SampleKey]int)
	var keys []SampleKey
	var units [][]float64
	for _, v := range votes {
		k := SampleKey{ID: v.SampleID, Elapse: v.Elapse}
		i, ok := pos[k]
		if !ok {
			i = len(units)
			pos[k] = i
			keys = append(keys, k)
			units = append(units, nil)
		}
		units[i] = append(units[i], float64(v.Score))
	}
	if len(units) == 0 {
		return nil
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].ID, keys[b].ID), cmp.Compare(keys[a].Elapse, keys[b].Elapse))
	})
	sorted := make([][]float64, len(order))
	for i, j := range order {
		sorted[i] = units[j]
	}
	return sorted
}

// VoteSummary is what a build reports about its human annotations: the
// consistency filter's report, the number of samples with at least one kept
// vote, and Krippendorff's alpha over the kept votes with the interval and
// ordinal metrics. An alpha is nil when it cannot be computed (no sample has
// two kept votes), so a manifest shows null rather than a made-up number.
type VoteSummary struct {
	Consistency   ConsistencyReport `json:"consistency"`
	Samples       int               `json:"samples"`
	AlphaInterval *float64          `json:"alpha_interval"`
	AlphaOrdinal  *float64          `json:"alpha_ordinal"`
}

// SummarizeVotes runs the annotation pipeline in one call:
// FilterConsistent with opt, then the mean score S of every sample and the
// agreement of the kept votes. It returns the kept votes (input order), the
// scores keyed by sample and the summary for the manifest.
func SummarizeVotes(votes []Vote, opt ConsistencyOptions) (kept []Vote, scores map[SampleKey]Score, sum VoteSummary) {
	kept, sum.Consistency = FilterConsistent(votes, opt)
	scores = MeanScores(kept)
	sum.Samples = len(scores)
	units := AgreementUnits(kept)
	if a, err := agreement.Alpha(units, agreement.Interval); err == nil {
		sum.AlphaInterval = &a
	}
	if a, err := agreement.Alpha(units, agreement.Ordinal); err == nil {
		sum.AlphaOrdinal = &a
	}
	return kept, scores, sum
}
