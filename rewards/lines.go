package rewards

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

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
// and the error. A blank line, or one that cannot be read, stops it with
// an error naming the line.
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
		itemErr := uniqueMembers(line)
		if itemErr == nil {
			itemErr = json.Unmarshal(line, &it)
		}
		if itemErr != nil {
			itemErr = fmt.Errorf("not a valid item: %w", itemErr)
		} else if it.DataSource != "" && it.DataSource != rw.DataSource {
			itemErr = fmt.Errorf("data_source: %q differs from the data source being scored, %s", it.DataSource, rw.DataSource)
		} else {
			res = s.ScoreWith(ctx, rw, &it)
			itemErr = res.Err
		}
		if itemErr != nil {
			res = Result{Score: s.cfg.FallbackScore}
			sum.Failed++
			if len(sum.FirstErrors) < 3 {
				sum.FirstErrors = append(sum.FirstErrors, fmt.Sprintf("line %d: %v", n, itemErr))
			}
		}
		sum.Items++
		sum.Sum += res.Score
		buf = append(res.AppendJSON(buf[:0], rw.Keys, itemErr), '\n')
		if _, err := bw.Write(buf); err != nil {
			return sum, fmt.Errorf("writing results: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return sum, fmt.Errorf("writing results: %w", err)
	}
	return sum, nil
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
