package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	json "github.com/goccy/go-json"
	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/output"
	"github.com/timeaware/timeaware/rewards"
)

func (a *app) scoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "score --data-source NAME --input FILE.jsonl [--out FILE]",
		Short: "Score JSONL items offline with the service's reward functions",
		Long: `score reads items {data_source, solution_str, ground_truth, extra_info}, one
JSON object per line, scores each with the reward registered for --data-source
(the same code the verifier service runs), and writes one JSON result per input
line, in order: {"score": x, <detail keys>...}, plus "error" for an item that
could not be scored (it then gets rewards.fallback_score).

An item's own data_source, when present, must name the same reward. Items
whose extra_info names a timer need timers.secret (TIMEAWARE_TIMERS_SECRET),
the secret of the service that issued the timer.

More than --max-errors failed items fail the run (exit 1); with --out, no file
is written then.`,
		Args: cobra.NoArgs,
		RunE: a.runScore,
	}
	fs := cmd.Flags()
	fs.String("data-source", "", "reward to apply (see GET /v1/rewards): "+dataSources())
	fs.String("input", "", "JSONL items to score (- for stdin)")
	fs.String("out", "", "write results here (default stdout); written atomically")
	fs.Int("max-errors", 0, "items that may fail before the run fails")
	return cmd
}

func dataSources() string {
	var b bytes.Buffer
	for i, r := range rewards.All {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.DataSource)
	}
	return b.String()
}

func (a *app) runScore(cmd *cobra.Command, _ []string) error {
	fs := cmd.Flags()
	ds, _ := fs.GetString("data-source")
	in, _ := fs.GetString("input")
	out, _ := fs.GetString("out")
	maxErrors, _ := fs.GetInt("max-errors")
	if ds == "" {
		return usagef("--data-source is required: one of %s", dataSources())
	}
	rw, ok := rewards.Lookup(ds)
	if !ok {
		return usagef("--data-source %q is not a registered reward: one of %s", ds, dataSources())
	}
	if in == "" {
		return usagef("--input is required (a JSONL file, or - for stdin)")
	}
	if maxErrors < 0 {
		return usagef("--max-errors %d must not be negative", maxErrors)
	}
	cfg, err := rewardsConfig(a.v)
	if err != nil {
		return err
	}
	store, shared, err := timerStore(a.v)
	if err != nil {
		return err
	}
	var ts rewards.TimeSource
	if shared {
		ts = store
	}
	scorer, err := rewards.NewScorer(cfg, ts)
	if err != nil {
		return usageError{err}
	}

	var r io.Reader = a.stdin
	name := "stdin"
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return usagef("--input: %v", err)
		}
		defer f.Close()
		r, name = f, in
	}
	var w io.Writer = a.stdout
	var af *output.File
	if out != "" {
		if af, err = output.Create(out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer af.Abort()
		w = af
	}
	bw := bufio.NewWriterSize(w, 1<<16)

	var (
		n, failed int
		sum       float64
		firstErrs []string
		line      []byte
	)
	br := bufio.NewReaderSize(r, 1<<20)
	ctx := cmd.Context()
	for lineNo := 1; ; lineNo++ {
		line, err = readLine(br, line[:0])
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: line %d: %w", name, lineNo, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return fmt.Errorf("%s: line %d: empty line; every line must be one JSON item", name, lineNo)
		}
		var it rewards.Item
		var res rewards.Result
		itemErr := json.Unmarshal(line, &it)
		switch {
		case itemErr != nil:
			itemErr = fmt.Errorf("not a valid item: %w", itemErr)
		case it.DataSource != "" && it.DataSource != rw.DataSource:
			itemErr = fmt.Errorf("data_source: %q differs from --data-source %s", it.DataSource, rw.DataSource)
		default:
			res = scorer.ScoreWith(ctx, rw, &it)
			itemErr = res.Err
		}
		if itemErr != nil {
			res = rewards.Result{Score: cfg.FallbackScore}
			failed++
			if len(firstErrs) < 3 {
				firstErrs = append(firstErrs, fmt.Sprintf("line %d: %v", lineNo, itemErr))
			}
		}
		n++
		sum += res.Score
		if _, err := bw.Write(append(res.AppendJSON(nil, rw.Keys, itemErr), '\n')); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		if err == io.EOF {
			break
		}
	}
	if failed > maxErrors {
		return fmt.Errorf("%s: %d of %d items could not be scored (--max-errors %d); first: %s", name, failed, n, maxErrors, joinErrs(firstErrs))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if af != nil {
		if err := af.Commit(); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	mean := 0.0
	if n > 0 {
		mean = sum / float64(n)
	}
	fmt.Fprintf(a.stderr, "scored %d items with %s: mean score %.4f, %d failed\n", n, rw.DataSource, mean, failed)
	if failed > 0 {
		fmt.Fprintf(a.stderr, "failed items: %s\n", joinErrs(firstErrs))
	}
	return nil
}

func joinErrs(errs []string) string {
	var b bytes.Buffer
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e)
	}
	return b.String()
}

// readLine reads one line of any length without its newline.
func readLine(br *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		dst = append(dst, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(dst) > 0 && dst[len(dst)-1] == '\n' {
			dst = dst[:len(dst)-1]
			if len(dst) > 0 && dst[len(dst)-1] == '\r' {
				dst = dst[:len(dst)-1]
			}
		}
		return dst, err
	}
}
