package puzzles

import (
	"errors"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/synth"
)

// Report is the line an audit shows for the verdict, "" when there is
// nothing to say: the stored answer agrees and the puzzle has a solution.
// It names the row (its id, when it has one, and index) and says that the
// puzzle has no solution, as stored; that its answer is undecidable; that
// it cannot be solved; or what was stored and what was solved.
func (c *Verdict) Report() string {
	where := fmt.Sprintf("row %d (index %d)", c.Row+1, c.Index)
	if c.ID != "" {
		where = fmt.Sprintf("row %d (id %s, index %d)", c.Row+1, c.ID, c.Index)
	}
	noDay := errors.Is(c.Err, ErrNoDay)
	switch {
	case !c.Differs() && noDay:
		return fmt.Sprintf("%s: no solution, as stored: %v", where, c.Err)
	case !c.Differs():
		return ""
	case errors.Is(c.Err, ErrUndecidable):
		return fmt.Sprintf("%s: undecidable, stored %s: %v", where, answerList(c.Stored), c.Err)
	case c.Err != nil && !noDay:
		return fmt.Sprintf("%s: cannot solve: %v", where, c.Err)
	}
	line := fmt.Sprintf("%s: stored %s (ground_truth %q), solved %s", where, answerList(c.Stored), c.GroundTruth, answerList(c.Solved))
	if c.Err != nil {
		line += fmt.Sprintf(": %v", c.Err)
	}
	return line
}

// Report is the line an import shows for the record, "" when there is
// nothing to say: the published answer agrees and the puzzle has a
// solution. It names the record (ID and position) and gives the verdict
// with its cause: not converted or undecidable with the error behind it,
// wrong with the published and the solved answers, or agreeing on no
// solution with the constraint no day satisfies.
func (im *Imported) Report() string {
	where := fmt.Sprintf("%s (record %d)", im.ID, im.Record)
	noDay := im.Cause == CauseNoDay
	switch im.Verdict {
	case VerdictNotConverted:
		return fmt.Sprintf("%s: not converted (%s): %v", where, im.Cause, im.Err)
	case VerdictUndecidable:
		return fmt.Sprintf("%s: undecidable (%s), published %s: %v", where, im.Cause, answerList(im.Published), im.Err)
	case VerdictWrong:
		solved := answerList(im.Solved)
		if len(im.Undecided) > 0 {
			solved += ", undecidable on " + dayRuns(im.Undecided)
		}
		line := fmt.Sprintf("%s: wrong (%s): published %s, solved %s", where, im.Cause, answerList(im.Published), solved)
		if noDay {
			line += fmt.Sprintf(": %v", im.Err)
		}
		return line
	case VerdictAgree:
		if noDay {
			return fmt.Sprintf("%s: agree (%s), no solution: %v", where, im.Cause, im.Err)
		}
	}
	return ""
}

// answerList writes an answer set as the prompt asks for it: the dates
// joined by commas, or None.
func answerList(xs []string) string {
	if len(xs) == 0 {
		return "None"
	}
	return strings.Join(xs, ",")
}

// Lines are the summary as a command shows it under its first line, one
// fact a line: the puzzles left to other shards (when any), the years and
// whether lunar facts are in use, the counts by solutions, level and kind
// (and by event relation), and the facts and attempts per puzzle.
func (s *Summary) Lines() []string {
	var lines []string
	if s.Skipped > 0 {
		lines = append(lines, fmt.Sprintf("shard:       %d puzzles left to other shards", s.Skipped))
	}
	lunar := "on"
	if !s.LunarFacts {
		lunar = "off (years that miss the lunar table, or not enabled)"
	}
	lines = append(lines, "years:       "+s.Years+"; lunar facts "+lunar, "solutions:   "+synth.CountList(s.BySolutions),
		"levels:      "+synth.CountList(s.ByLevel), "kinds:       "+synth.CountList(s.ByKind))
	if len(s.ByRelation) > 0 {
		lines = append(lines, "events:      "+synth.CountList(s.ByRelation))
	}
	if n := float64(s.Puzzles); n > 0 {
		lines = append(lines, fmt.Sprintf("per puzzle:  %.2f facts, %.2f attempts", float64(s.Facts)/n, float64(s.Attempts)/n))
	}
	return lines
}

// String is the summary as a command shows it: the puzzles checked (of
// them, those without a solution, when there are any, whether their stored
// answer agrees or not), those that differ and the undecidable ones.
func (s *SolveSummary) String() string {
	checked := synth.Counted(s.Checked, "puzzle") + " checked"
	if s.NoDay > 0 {
		checked += fmt.Sprintf(" (%d without a solution: a fact no day satisfies)", s.NoDay)
	}
	return fmt.Sprintf("%s, %d differ, %d undecidable", checked, s.Differ, s.Undecidable)
}

// Lines are the summary as a command shows it: first the records, those
// converted and those not, then one verdict a line with its count, which
// add up to the records: agreeing (of them, those that agree on no solution,
// when any), then wrong, undecidable and not converted (when any) by cause.
func (s *ImportSummary) Lines() []string {
	notConverted := total(s.NotConverted)
	agree := fmt.Sprintf("agree:         %d", s.Agree)
	if s.AgreeNoDay > 0 {
		agree += fmt.Sprintf(" (no solution %d)", s.AgreeNoDay)
	}
	lines := []string{fmt.Sprintf("%s, %d converted, %d not converted", synth.Counted(s.Records, "record"), s.Converted, notConverted), agree,
		fmt.Sprintf("wrong:         %d%s", total(s.Wrong), byCause(s.Wrong)),
		fmt.Sprintf("undecidable:   %d%s", total(s.Undecidable), byCause(s.Undecidable))}
	if notConverted > 0 {
		lines = append(lines, fmt.Sprintf("not converted: %d%s", notConverted, byCause(s.NotConverted)))
	}
	return lines
}

// total is the sum of a count map.
func total(m map[string]int) int {
	n := 0
	for _, k := range m {
		n += k
	}
	return n
}

// byCause writes " (a 2, b 1)" for a non-empty count map.
func byCause(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + synth.CountList(m) + ")"
}
