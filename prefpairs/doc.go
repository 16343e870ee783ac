// Package prefpairs turns human-labelled TicToc trajectories into DPO
// preference pairs: for every sample (trajectory, elapse level) the preferred
// action — call the tool again or answer directly — becomes the chosen
// response, the other the rejected one, and the pair carries the margin
// |S − 1.5| from the mean human score S.
//
// Build reads nothing from disk by itself: callers hand it readers, option
// structs and a context, and it streams pairs to a callback, so a corpus of
// any size is built in bounded memory. BuildDataset is the whole dataset
// build on files: it reads the trajectories, votes and direct replies,
// splits the pairs by scenario into train and test (SplitOptions), and
// writes the pair files and their manifest in one commit.
package prefpairs

// SampleKey names one sample: a trajectory id and an elapse level (0 small,
// 1 medium, 2 large).
type SampleKey struct {
	ID     string
	Elapse int
}
