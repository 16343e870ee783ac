// Package scenario is the TicToc scenario catalog: every scenario of the
// TicToc benchmark with its time sensitivity, read-only or read+write I/O,
// the paper's train/test assignment and the trajectory id prefixes
// (aliases) that belong to it.
//
// [Load] reads and validates a catalog file; [Default] is the built-in one,
// scenarios.yaml in this package's directory, embedded so the binary works
// without the repository. A [Catalog] names a trajectory's scenario by its
// id ([Catalog.Resolve]) or by the record's own fields
// ([Catalog.ScenarioOf]); package splits builds the paper's fixed split from
// it, and prefpairs and synth/timestamps read sensitivities from it.
package scenario
