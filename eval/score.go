package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/splits"
)

// ScoreOptions configures Score.
type ScoreOptions struct {
	// Reward scores every item, with the rewards' configuration Rewards;
	// nil scores each item with the reward its own data_source names.
	// Timers, when set, reads the timers that items name.
	Reward  *rewards.Reward
	Rewards rewards.Config
	Timers  rewards.TimeSource
	// Input is a JSONL file of items, "-" for Stdin, or a directory whose
	// JSONL parts (a sharded run's output) are read in name order as one
	// input.
	Input string
	Stdin io.Reader
	// Out is the results file, written atomically; "" writes the results
	// to Stdout as they are made.
	Out    string
	Stdout io.Writer
	// Shard, when its Count > 1, scores only the lines whose 0-based
	// number, counted across the parts, is in the shard.
	Shard shard.Shard
	// MaxErrors is the number of items that may fail; with more, Out is
	// not written and the error is a *FailuresError.
	MaxErrors int
}

// FailuresError is Score's error when more items failed than allowed.
type FailuresError struct {
	// Input names the input: "stdin", the file, or the directory of parts.
	Input string
	*rewards.LinesSummary
	MaxErrors int
}

func (e *FailuresError) Error() string {
	return fmt.Sprintf("eval: %s: %d of %d items could not be scored (at most %d may fail); first: %s",
		e.Input, e.Failed, e.Items, e.MaxErrors, strings.Join(e.FirstErrors, "; "))
}

// Score scores the items of a JSONL input offline with one reward, as the
// verifier service would (rewards.Scorer.ScoreLines), and writes a result
// a line, in input order. Errors name the input's own lines, those of a
// directory's parts prefixed with the part. A path that cannot be read or
// written is an *OptionError of Option "Input" or "Out"; a configuration
// the rewards refuse is a *rewards.ConfigError.
func Score(ctx context.Context, opt ScoreOptions) (*rewards.LinesSummary, error) {
	scorer, err := rewards.NewScorer(opt.Rewards, opt.Timers)
	if err != nil {
		return nil, err
	}
	inputs, err := scoreInputs(opt.Input)
	if err != nil {
		return nil, err
	}
	w := opt.Stdout
	var af *output.File
	if opt.Out != "" {
		if af, err = output.Create(opt.Out); err != nil {
			return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
		}
		defer af.Abort()
		w = af
	}
	sum := &rewards.LinesSummary{}
	lopt := rewards.LinesOptions{Shard: opt.Shard}
	name := opt.Input
	for _, p := range inputs {
		var part *rewards.LinesSummary
		if part, name, err = scorePart(ctx, opt, scorer, p, w, lopt); err != nil {
			return nil, err
		}
		lopt.Before += part.Lines
		sum.Items, sum.Failed, sum.Skipped = sum.Items+part.Items, sum.Failed+part.Failed, sum.Skipped+part.Skipped
		sum.Lines, sum.Sum = sum.Lines+part.Lines, sum.Sum+part.Sum
		sum.Logged, sum.Changed, sum.Unscored = sum.Logged+part.Logged, sum.Changed+part.Changed, sum.Unscored+part.Unscored
		for _, c := range part.FirstChanges {
			if len(sum.FirstChanges) < 3 {
				if len(inputs) > 1 {
					c = name + ": " + c
				}
				sum.FirstChanges = append(sum.FirstChanges, c)
			}
		}
		for _, e := range part.FirstErrors {
			if len(sum.FirstErrors) < 3 {
				if len(inputs) > 1 {
					e = name + ": " + e
				}
				sum.FirstErrors = append(sum.FirstErrors, e)
			}
		}
	}
	if len(inputs) > 1 {
		name = opt.Input
	}
	if sum.Items+sum.Failed+sum.Skipped == 0 {
		return nil, &OptionError{Option: "Input", Value: opt.Input, Err: dataset.ErrNoRecords}
	}
	if sum.Failed > opt.MaxErrors {
		return nil, &FailuresError{Input: name, LinesSummary: sum, MaxErrors: opt.MaxErrors}
	}
	if af != nil {
		if err := output.Commit(ctx, "", nil, af); err != nil {
			return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
		}
	}
	return sum, nil
}

// scoreInputs is what input stands for: itself ("-" or a file), or the
// JSONL parts of a directory.
func scoreInputs(input string) ([]string, error) {
	if input == "-" {
		return []string{input}, nil
	}
	st, err := os.Stat(input)
	if err != nil {
		return nil, &OptionError{Option: "Input", Value: input, Err: err}
	}
	if !st.IsDir() {
		return []string{input}, nil
	}
	all, err := splits.ExpandDir(input)
	if err != nil {
		return nil, &OptionError{Option: "Input", Value: input, Invalid: !isFileSystemError(err), Err: err}
	}
	var inputs []string
	for _, p := range all {
		if f, ok := dataset.ForPath(p); ok && f.Name == "jsonl" {
			inputs = append(inputs, p)
		}
	}
	if len(inputs) == 0 {
		return nil, &OptionError{Option: "Input", Value: input, Invalid: true, Err: errors.New("the directory holds no JSONL files")}
	}
	return inputs, nil
}

// scorePart scores one input file ("-": stdin), returning its summary and
// its name.
func scorePart(ctx context.Context, opt ScoreOptions, scorer *rewards.Scorer, path string, w io.Writer, lopt rewards.LinesOptions) (*rewards.LinesSummary, string, error) {
	r, name := opt.Stdin, "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, path, &OptionError{Option: "Input", Value: path, Err: err}
		}
		defer f.Close()
		r, name = f, path
	}
	sum, err := scorer.ScoreLines(ctx, opt.Reward, r, name, w, lopt)
	return sum, name, err
}
