// Package puzzles makes Time Puzzles, after "Measuring Iterative Temporal
// Reasoning with Time Puzzles": a hidden date described by facts (a
// knowledge-base event, and calendar facts at year, month and day level,
// the Chinese lunar calendar included), whose answer is every date of the
// range that satisfies them all. [Generate] makes puzzles with a target
// number of solutions; [Solver] solves a puzzle's facts exactly; [Check]
// re-solves a stored set.
package puzzles
