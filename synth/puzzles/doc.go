// Package puzzles makes Time Puzzles, after "Measuring Iterative Temporal
// Reasoning with Time Puzzles": a hidden date described by facts (a
// knowledge-base event, and calendar facts at year, month and day level,
// the Chinese lunar calendar included), whose answer is every date of the
// range that satisfies them all. [Generate] makes puzzles with a target
// number of solutions; [Solver] solves a puzzle's facts exactly; [Check]
// re-solves a stored set; [ImportPublished] reads the published set.
// [Write], [Solve] and [WritePublished] run those on files: a set written
// with its manifest (split by event, or not), a file audited, the published
// file converted; [Config] reads the options as a config file writes them.
package puzzles
