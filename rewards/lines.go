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

// maxPendingLines bounds the lines ScoreLines holds back while a group's
// members are still to come.
const maxPendingLines = 1 << 16

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
// another data source than rw's is not compared. The members of a group of
// a group-wise reward (GroupSize above 1) are scored together once the
// last of them is read, their results still written in input order; a
// group whose members are not all in the stream, or that is not one
// prompt's, fails each member (GroupItems says why), and one whose
// members lie more than maxPendingLines apart stops it. A blank line, or
// one that cannot be read, stops it with an error naming the line.
func (s *Scorer) ScoreLines(ctx context.Context, rw *Reward, r io.Reader, name string, w io.Writer, opt LinesOptions) (*LinesSummary, error) {
	ls := &lineScorer{s: s, ctx: ctx, sum: &LinesSummary{}, bw: bufio.NewWriterSize(w, 1<<16), groups: map[[2]string][]*pendingLine{}}
	lines := jsonscan.NewLineReader(r)
	for {
		line, n, err := lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ls.sum, fmt.Errorf("%s: line %d: %w", name, n, err)
		}
		ls.sum.Lines = n
		if !opt.Shard.HasIndex(int64(opt.Before + n - 1)) {
			ls.sum.Skipped++
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return ls.sum, fmt.Errorf("%s: line %d: empty line; every line must be one JSON item", name, n)
		}
		p := &pendingLine{n: n, rw: rw}
		p.itemErr = uniqueMembers(line)
		if p.itemErr == nil {
			p.itemErr = json.Unmarshal(line, &p.it)
		}
		if p.itemErr == nil {
			p.itemErr = json.Unmarshal(line, &p.logged)
		}
		if p.itemErr != nil {
			p.itemErr = fmt.Errorf("not a valid item: %w", jsonscan.Explain("", line, p.itemErr))
		} else if rw == nil {
			p.rw, p.itemErr = lookupItemReward(p.it.DataSource)
		} else if p.it.DataSource != "" && p.it.DataSource != rw.DataSource {
			p.itemErr = fmt.Errorf("data_source: %q differs from the data source being scored, %s", p.it.DataSource, rw.DataSource)
			p.otherSource = true
		}
		ls.queue = append(ls.queue, p)
		if len(ls.queue) > maxPendingLines {
			return ls.sum, fmt.Errorf("%s: line %d: group %q of line %d waits on more than %d lines: write a group's lines together",
				name, n, ls.queue[0].it.Group, ls.queue[0].n, maxPendingLines)
		}
		if p.itemErr == nil && p.rw.Grouped() && p.it.GroupSize > 1 {
			ls.addMember(p)
		} else {
			if p.itemErr == nil {
				p.res = s.ScoreWith(ctx, p.rw, &p.it)
				p.itemErr = p.res.Err
			}
			p.done = true
		}
		if err := ls.flush(name); err != nil {
			return ls.sum, err
		}
	}
	for _, members := range ls.groups {
		ls.scoreGroup(members) // fails: the group is short
	}
	if err := ls.flush(name); err != nil {
		return ls.sum, err
	}
	if err := ls.bw.Flush(); err != nil {
		return ls.sum, fmt.Errorf("writing results: %w", err)
	}
	return ls.sum, nil
}

// pendingLine is one line of ScoreLines, until its result is written.
type pendingLine struct {
	n           int
	it          Item
	logged      loggedReward
	rw          *Reward
	otherSource bool
	res         Result
	itemErr     error
	done        bool
}

// lineScorer is the state of one ScoreLines: the lines read but not yet
// written, in order, and the groups still waiting on members.
type lineScorer struct {
	s      *Scorer
	ctx    context.Context
	sum    *LinesSummary
	bw     *bufio.Writer
	buf    []byte
	queue  []*pendingLine
	groups map[[2]string][]*pendingLine
}

// addMember adds a member to its group, and scores the group once it has
// as many members as it says.
func (ls *lineScorer) addMember(p *pendingLine) {
	k := [2]string{p.rw.DataSource, p.it.Group}
	ls.groups[k] = append(ls.groups[k], p)
	if len(ls.groups[k]) >= p.it.GroupSize {
		ls.scoreGroup(ls.groups[k])
		delete(ls.groups, k)
	}
}

// scoreGroup scores a group's members together, or fails each with the
// reason the group is not whole and of one prompt.
func (ls *lineScorer) scoreGroup(members []*pendingLine) {
	items := make([]Item, len(members))
	for i, p := range members {
		items[i] = p.it
	}
	var res []Result
	if groups, err := GroupItems(items, nil); err != nil {
		for range members {
			res = append(res, Result{Score: ls.s.cfg.FallbackScore, Err: err})
		}
	} else {
		ptrs := make([]*Item, len(items))
		for i, m := range groups[0].Members {
			ptrs[i] = &items[m]
		}
		res = ls.s.ScoreGroup(ls.ctx, groups[0].Reward, ptrs)
	}
	for i, p := range members {
		p.res, p.itemErr, p.done = res[i], res[i].Err, true
	}
}

// flush writes the results at the head of the queue that are known.
func (ls *lineScorer) flush(name string) error {
	k := 0
	for ; k < len(ls.queue) && ls.queue[k].done; k++ {
		if err := ls.write(name, ls.queue[k]); err != nil {
			return err
		}
	}
	ls.queue = append(ls.queue[:0], ls.queue[k:]...)
	return nil
}

// write counts a line's result in the summary and writes it.
func (ls *lineScorer) write(name string, p *pendingLine) error {
	sum, res, itemErr := ls.sum, p.res, p.itemErr
	// A logged reward is compared unless the line is another data
	// source's, left out of this run on purpose.
	compare := len(p.logged.Reward) > 0 && !p.otherSource
	stillUnscored := compare && itemErr != nil && string(bytes.TrimSpace(p.logged.Reward)) == "null"
	if itemErr != nil {
		res = Result{Score: ls.s.cfg.FallbackScore}
		if stillUnscored {
			sum.Unscored++
		} else {
			sum.Failed++
			if len(sum.FirstErrors) < 3 {
				sum.FirstErrors = append(sum.FirstErrors, fmt.Sprintf("line %d: %v", p.n, itemErr))
			}
		}
	}
	sum.Items++
	sum.Sum += res.Score
	var keys []string
	if p.rw != nil {
		keys = p.rw.Keys
	}
	buf := res.AppendJSON(ls.buf[:0], keys, itemErr)
	if compare {
		var changed bool
		var err error
		if buf, changed, err = appendChange(buf, p.logged.Reward, res.Score, itemErr == nil); err != nil {
			return fmt.Errorf("%s: line %d: reward: %w", name, p.n, err)
		}
		sum.Logged++
		if changed {
			sum.Changed++
			if len(sum.FirstChanges) < 3 {
				now := "unscored"
				if itemErr == nil {
					now = string(appendFloat(nil, res.Score))
				}
				was := string(bytes.TrimSpace(p.logged.Reward))
				if was == "null" {
					was = "unscored"
				}
				sum.FirstChanges = append(sum.FirstChanges, fmt.Sprintf("line %d (%s): %s -> %s", p.n, p.it.DataSource, was, now))
			}
		}
	}
	ls.buf = append(buf, '\n')
	if _, err := ls.bw.Write(ls.buf); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
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
