// Package synth makes synthetic data for time-aware training: timestamps for
// multi-turn tool-use trajectories, time budgets for prompts, and tasks.
//
// Everything here is deterministic: a generator takes a seed, and every
// record's random stream is derived from that seed and the record's own id,
// so output does not depend on the order, batching or sharding of the input.
// Library functions take plain option structs and a context, return errors,
// and never print.
package synth
