// Package splits divides TicToc trajectories into train and test sets by
// scenario.
//
// It holds three parts:
//
//   - the scenario catalog: every scenario of the TicToc benchmark with its
//     time sensitivity, read-only or read+write I/O, the paper's train/test
//     assignment and the trajectory id prefixes (aliases) that belong to it
//     (see [LoadCatalog], [DefaultCatalog] and [Catalog.Resolve]);
//   - the split strategies: the paper's fixed scenario split and a seeded,
//     sensitivity-stratified group split aiming at a target test fraction,
//     both of which keep every scenario, and every trajectory's elapse levels,
//     on one side only;
//   - the leakage gate: checks over finished split files for scenario
//     overlap, exact and near duplicates across splits, the test fraction,
//     sensitivity coverage and label balance.
package splits
