package rewards

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/internal/shard"
)

// LinesOptions tunes ScoreLines.
type LinesOptions struct {
	// Shard, when its Count > 1, scores only the lines whose 0-based
	// number is in the shard (shard.Shard.HasIndex), so that shards of one
	// input together score every line once. Errors still name the input's
	// own line numbers.
	Shard shard.Shard
	// Before is the number of lines read before this input, when it is one
	// part of a dataset: a line's number for sharding counts from the
	// dataset's first line.
	Before int
}

// LinesSummary counts what ScoreLines did.
type LinesSummary struct {
	Items, Failed int
	// Skipped counts the lines left to other shards.
	Skipped int
	// Lines counts the lines read, blank ones included.
	Lines int
	// Sum is the sum of the scores, fallbacks included.
	Sum float64
	// FirstErrors are the first three item errors, "line N: error".
	FirstErrors []string
	// Logged counts the items that carried the reward a run logged for
	// them (a rollout log's "reward"), and Changed those whose reward
	// differs now; FirstChanges are the first three, "line N (data
	// source): logged -> now". Unscored counts the logged items that got
	// no reward then and cannot be scored now either: the same outcome,
	// not counted in Failed.
	Logged, Changed, Unscored int
	FirstChanges              []string
}

// changeTolerance is how far a reward may move and still count as the
// same: rewards are computed in float64 by the same code, so only a change
// of code, configuration or input moves one.
const changeTolerance = 1e-9

// loggedReward is the reward a rollout log holds for an item: present, and
// null for a rollout that got none.
type loggedReward struct {
	Reward json.RawMessage `json:"reward"`
}

// Mean is the mean score, 0 without items.
func (s *LinesSummary) Mean() float64 {
	if s.Items == 0 {
		return 0
	}
	return s.Sum / float64(s.Items)
}

// ScoreLines scores a JSONL stream of items (named name in errors) with rw
// and writes one result per line to w, in input order: the score, the
// reward's detail keys, and for an item that cannot be scored (not an
// item, another data source, an error of the reward) the fallback score
// and the error. A nil rw scores each item with the reward its own
// data_source names (an item without one, or naming none, is an error).
// An item that carries a "reward" member, as a rollout log's lines do,
// also gets "logged_reward" (that member's value) and "changed" (whether
// its reward now differs, or it was scored once and not now, or the other
// way round), counted in the summary; one logged as unscored that still
// cannot be scored is counted as Unscored, not Failed, and a line of
// another data source than rw's is not compared. A blank line, or one that cannot be
// read, stops it with an error naming the line.
func (s *Scorer) ScoreLines(ctx context.Context, rw *Reward, r io.Reader, name string, w io.Writer, opt LinesOptions) (*LinesSummary, error) {
	sum := &LinesSummary{}
	bw := bufio.NewWriterSize(w, 1<<16)
	lines := jsonscan.NewLineReader(r)
	var buf []byte
	for {
		line, n, err := lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, fmt.Errorf("%s: line %d: %w", name, n, err)
		}
		sum.Lines = n
		if !opt.Shard.HasIndex(int64(opt.Before + n - 1)) {
			sum.Skipped++
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return sum, fmt.Errorf("%s: line %d: empty line; every line must be one JSON item", name, n)
		}
		var it Item
		var res Result
		var logged loggedReward
		itemRw := rw
		otherSource := false
		itemErr := uniqueMembers(line)
		if itemErr == nil {
			itemErr = json.Unmarshal(line, &it)
		}
		if itemErr == nil {
			itemErr = json.Unmarshal(line, &logged)
		}
		switch {
		case itemErr != nil:
			itemErr = fmt.Errorf("not a valid item: %w", jsonscan.Explain("", line, itemErr))
		case rw == nil:
			itemRw, itemErr = lookupItemReward(it.DataSource)
		case it.DataSource != "" && it.DataSource != rw.DataSource:
			itemErr = fmt.Errorf("data_source: %q differs from the data source being scored, %s", it.DataSource, rw.DataSource)
			otherSource = true
		}
		if itemErr == nil {
			res = s.ScoreWith(ctx, itemRw, &it)
			itemErr = res.Err
		}
		// A logged reward is compared unless the line is another data
		// source's, left out of this run on purpose.
		compare := len(logged.Reward) > 0 && !otherSource
		stillUnscored := compare && itemErr != nil && string(bytes.TrimSpace(logged.Reward)) == "null"
		if itemErr != nil {
			res = Result{Score: s.cfg.FallbackScore}
			if stillUnscored {
				sum.Unscored++
			} else {
				sum.Failed++
				if len(sum.FirstErrors) < 3 {
					sum.FirstErrors = append(sum.FirstErrors, fmt.Sprintf("line %d: %v", n, itemErr))
				}
			}
		}
		sum.Items++
		sum.Sum += res.Score
		var keys []string
		if itemRw != nil {
			keys = itemRw.Keys
		}
		buf = res.AppendJSON(buf[:0], keys, itemErr)
		if compare {
			var changed bool
			if buf, changed, err = appendChange(buf, logged.Reward, res.Score, itemErr == nil); err != nil {
				return sum, fmt.Errorf("%s: line %d: reward: %w", name, n, err)
			}
			sum.Logged++
			if changed {
				sum.Changed++
				if len(sum.FirstChanges) < 3 {
					now := "unscored"
					if itemErr == nil {
						now = string(appendFloat(nil, res.Score))
					}
					was := string(bytes.TrimSpace(logged.Reward))
					if was == "null" {
						was = "unscored"
					}
					sum.FirstChanges = append(sum.FirstChanges, fmt.Sprintf("line %d (%s): %s -> %s", n, it.DataSource, was, now))
				}
			}
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return sum, fmt.Errorf("writing results: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return sum, fmt.Errorf("writing results: %w", err)
	}
	return sum, nil
}

// lookupItemReward is the reward an item's own data source names.
func lookupItemReward(ds string) (*Reward, error) {
	if ds == "" {
		return nil, errors.New("data_source: missing; scoring by each item's own data source needs it (or pass the reward to apply)")
	}
	rw, ok := Lookup(ds)
	if !ok {
		return nil, fmt.Errorf("data_source: %q is not a registered reward", ds)
	}
	return rw, nil
}

// appendChange closes a result object (buf ends with '}') with the reward
// a run logged for the item and whether it changed: a logged number that
// now differs by more than changeTolerance, or that the item no longer
// gets (scored is false), or a logged null (no reward then) that the item
// now gets. A logged value that is neither a number nor null is an error.
func appendChange(buf []byte, logged json.RawMessage, now float64, scored bool) ([]byte, bool, error) {
	var was *float64
	if err := json.Unmarshal(logged, &was); err != nil {
		return buf, false, errors.New("want the logged reward, a number or null")
	}
	changed := scored != (was != nil) || (was != nil && math.Abs(*was-now) > changeTolerance)
	buf = append(buf[:len(buf)-1], `,"logged_reward":`...)
	if was == nil {
		buf = append(buf, "null"...)
	} else {
		buf = appendFloat(buf, *was)
	}
	buf = append(buf, `,"changed":`...)
	buf = strconv.AppendBool(buf, changed)
	return append(buf, '}'), changed, nil
}

// uniqueMembers refuses a record that names a member twice (the verifier
// service refuses the same), naming where: a decoder would keep one of the
// two values, and which one is an accident.
func uniqueMembers(line []byte) error {
	var de *jsonscan.DuplicateKeyError
	if errors.As(jsonscan.Unique(line), &de) {
		return fmt.Errorf("%s: %w", de.Field(""), de)
	}
	return nil
}
