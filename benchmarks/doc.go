// Package benchmarks imports public temporal-reasoning benchmarks, as their
// authors release them, into the RL rows of the synth families
// (synth.RowSchema: data_source, prompt, ability, reward_model, extra_info)
// for evaluation.
//
// [All] lists the importers, one file each: TimeQA (timeqa.go), TempReason
// (tempreason.go), TRAM (tram.go) and Test of Time (testoftime.go). Each
// [Benchmark] says which released file is which split, the answer format,
// the licence and any restriction on use; [Benchmark.Import] reads one
// released file and [Write] writes the rows of several with their manifest.
// A file is read as a stream, gunzipped as it is read when it is a gzip
// stream, one record at a time: memory is bounded by one record, not by
// the file.
//
// An importer never stops at a bad record: every record is converted or
// named as not converted with its reason (record number, id, field), and
// the [Summary] counts both, by cause, and the bytes it repaired while
// decoding (TRAM's causality files are Windows-1252, not UTF-8). A file
// that is not the benchmark's format at all (not JSON, no records, a CSV
// without the Question and Answer columns), or that cannot be read to its
// end (a read error, a gzip stream cut short or corrupt), is an error and
// nothing is written.
//
// The rows are for evaluation. Test of Time's data card prohibits training
// on it, and a test split is for evaluation whatever its licence: the rows
// say so in extra_info.training_allowed, and [Write] refuses to import them
// for training ([ErrTrainingRefused]).
//
// Gaia2's time split (Meta Agents Research Environments) is not imported:
// it can be scored only inside its runtime. Its ground truth is no answer
// string but a graph of oracle tool calls, which a judge pairs with the
// agent's calls and checks against the timestamps of a simulated event
// loop; a model's text alone cannot be scored against it.
package benchmarks
