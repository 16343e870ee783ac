// Package synth holds what the synthetic task families share, and each
// family is a package below it:
//
//   - [github.com/timeaware/timeaware/synth/timestamps]: message times for
//     multi-turn tool-use trajectories, from a model of reading, writing and
//     generation paces;
//   - [github.com/timeaware/timeaware/synth/budget]: time-budgeted prompts
//     for Timely-RL and distillation, teacher requests, and SFT rows from
//     verified teacher traces;
//   - [github.com/timeaware/timeaware/synth/puzzles]: Time Puzzles, date
//     inference from calendar and event facts, solved exactly;
//   - [github.com/timeaware/timeaware/synth/traveler]: TRAVELER questions
//     about a household's events, with explicit, implicit and vague time;
//   - [github.com/timeaware/timeaware/synth/negotiation]: bilateral
//     negotiations under a deadline.
//
// What they share is VeRL's RL dataset row ([RowSchema], built with
// [Rows]), OpenRLHF's label column ([WithLabels]), and the error of an
// option that fails validation ([OptionError]).
//
// Everything is deterministic: a generator takes a seed, and every record's
// random stream is derived from that seed and the record's own id or index,
// so output does not depend on the order, batching or sharding of the
// input. Library functions take plain option structs and a context, return
// errors, and never print.
package synth
