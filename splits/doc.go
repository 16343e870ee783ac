// Package splits divides data into train and test sets by the unit that
// would leak, and checks any split for leakage.
//
// It holds three parts, beside the TicToc scenario catalog of its
// subpackage [github.com/timeaware/timeaware/splits/scenario]:
//
//   - the split strategies: the paper's fixed scenario split
//     ([PaperAssignment], from the catalog's paper_split fields) and a seeded,
//     sensitivity-stratified group split aiming at a target test fraction,
//     both of which keep every scenario, and every trajectory's elapse
//     levels, on one side only; and [UnitSplit] for synthetic data, which
//     puts whole units (tasks, answer sets, scenarios) on one side by a
//     seeded hash, which output.SplitSinks follows to write each row to the
//     train or test file of its unit's side;
//   - the dataset reader: [Input] files of any layout (Parquet, Arrow IPC,
//     JSONL) whose rows are made by [Columns] (paths into structs and
//     message lists), with a [Preset] for each of the toolkit's outputs,
//     found from a command line's files, directories and manifests by
//     [ExpandArg];
//   - the leakage gate ([Check]): split labels against files, groups on both
//     sides, repeated ids and texts, exact and near duplicates across
//     splits (MinHash with LSH banding), contamination against an outside
//     evaluation set, the test fraction, sensitivity coverage and label
//     balance; [CheckFiles] runs it over the files of a command line
//     ([ExpandArgs]), and the [Report] writes itself as text, JSON or
//     GitHub annotations.
package splits
