package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

func (a *app) splitsCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check FILE [FILE ...]",
		Short: "Check train/test split files for leakage (for CI)",
		Long: `Check reads split files (Parquet, Arrow IPC or JSONL pairs datasets, or the
manifest of a split build) and runs the leakage gate:

  scenario_disjoint     no scenario has rows on both sides
  exact_duplicates      no test conversation appears in train after normalising
                        case, whitespace and time stamps
  near_duplicates       no train/test pair reaches the Jaccard threshold over word
                        shingles (MinHash with LSH banding, not all pairs)
  test_fraction         the test side's share of rows is within tolerance of the target
  sensitivity_coverage  every required sensitivity level has rows on both sides
  label_balance         the share of each label per side (reported, never fails)

A row's side comes from its split column, else from its file name (-train,
-test). The exit code is 1 when a check fails, 2 on bad usage. With
GITHUB_ACTIONS=true every finding is also printed as an ::error annotation.`,
		Example: `  timeaware splits check pairs-train.parquet pairs-test.parquet
  timeaware splits check pairs.parquet.manifest.json --json > gate.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSplitsCheck(cmd.Context(), cmd, args, asJSON)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.Float64("test-fraction", splits.DefaultTestFraction, "target share of rows on the test side (default: the manifest's target, else 0.35; 0 skips the check)")
	fs.Float64("tolerance", splits.DefaultTolerance, "allowed difference between the achieved and the target test fraction")
	fs.Float64("near-duplicate-threshold", splits.DefaultNearDuplicateThreshold, "Jaccard similarity from which a train/test pair is a near-duplicate (negative disables)")
	fs.Int("shingle-words", splits.DefaultShingleWords, "words per shingle")
	fs.Int("permutations", splits.DefaultPermutations, "MinHash signature length")
	fs.Int("bands", 0, "LSH bands (0: chosen from the permutations and the threshold)")
	fs.String("sensitivities", "low,medium,high", "levels that must have rows on both sides (comma-separated; empty disables)")
	fs.Int("max-findings", splits.DefaultMaxFindings, "findings listed per check, -1 for all (counts are always complete)")
	bindKey(fs, "test-fraction", "splits.test_fraction")
	bindKey(fs, "tolerance", "splits.tolerance")
	bindKey(fs, "near-duplicate-threshold", "splits.near_duplicate_threshold")
	bindKey(fs, "shingle-words", "splits.shingle_words")
	bindKey(fs, "permutations", "splits.permutations")
	bindKey(fs, "bands", "splits.bands")
	bindKey(fs, "sensitivities", "splits.sensitivities")
	bindKey(fs, "max-findings", "splits.max_findings")
	return cmd
}

// errGateFailed is returned when a check fails: the report has been printed,
// so the command exits 1 with a one-line reason.
var errGateFailed = errors.New("splits check failed")

func (a *app) runSplitsCheck(ctx context.Context, cmd *cobra.Command, args []string, asJSON bool) error {
	if len(args) == 0 {
		return usagef("splits check needs split files or a split manifest")
	}
	files, manifestTarget, err := expandSplitInputs(args)
	if err != nil {
		return err
	}
	v := a.v
	opt := splits.DefaultGateOptions()
	opt.NearDuplicateThreshold = v.GetFloat64("splits.near_duplicate_threshold")
	opt.ShingleWords = v.GetInt("splits.shingle_words")
	opt.Permutations = v.GetInt("splits.permutations")
	opt.Bands = v.GetInt("splits.bands")
	opt.Tolerance = v.GetFloat64("splits.tolerance")
	opt.MaxFindings = v.GetInt("splits.max_findings")
	opt.TestFraction = v.GetFloat64("splits.test_fraction")
	// A split manifest knows its own target: a group split's, or none for
	// the paper split, whose test share is whatever its scenarios hold. An
	// explicit setting (flag, environment or config file) still wins.
	explicit := cmd.Flags().Changed("test-fraction") || os.Getenv("TIMEAWARE_SPLITS_TEST_FRACTION") != "" || v.InConfig("splits.test_fraction")
	if manifestTarget != nil && !explicit {
		opt.TestFraction = *manifestTarget
	}
	opt.Sensitivities = []string{}
	for _, s := range strings.Split(v.GetString("splits.sensitivities"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			opt.Sensitivities = append(opt.Sensitivities, s)
		}
	}
	switch {
	case opt.ShingleWords < 1:
		return usagef("--shingle-words %d: want at least 1", opt.ShingleWords)
	case opt.Permutations < 1:
		return usagef("--permutations %d: want at least 1", opt.Permutations)
	case opt.Bands < 0 || (opt.Bands > 0 && opt.Permutations%opt.Bands != 0):
		return usagef("--bands %d: want a divisor of --permutations %d", opt.Bands, opt.Permutations)
	case opt.TestFraction < 0 || opt.TestFraction >= 1:
		return usagef("--test-fraction %g: want 0 (skip) or a share between 0 and 1", opt.TestFraction)
	case opt.Tolerance < 0:
		return usagef("--tolerance %g: want 0 or more", opt.Tolerance)
	case opt.NearDuplicateThreshold > 1 || opt.NearDuplicateThreshold == 0:
		return usagef("--near-duplicate-threshold %g: want a similarity in (0, 1], or a negative value to disable the check", opt.NearDuplicateThreshold)
	case opt.MaxFindings < -1:
		return usagef("--max-findings %d: want -1 (all) or more", opt.MaxFindings)
	}
	if opt.Bands == 0 {
		opt.Bands = splits.DefaultBands(opt.Permutations, opt.NearDuplicateThreshold)
	}
	report, err := splits.Check(ctx, splitRowSource(files), opt)
	if err != nil {
		return err
	}
	annotations := a.stdout
	if asJSON {
		annotations = a.stderr
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		printGateReport(a.stdout, report, files)
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		printGitHubAnnotations(annotations, report)
	}
	if !report.Passed {
		return errGateFailed
	}
	return nil
}

// expandSplitInputs turns the arguments into dataset files. A manifest
// (*.manifest.json) stands for the outputs it lists, each checked against
// the SHA-256 the manifest recorded, and supplies its split's target test
// fraction: a group split's target, or 0 (no target) for the paper split.
func expandSplitInputs(args []string) ([]string, *float64, error) {
	var files []string
	var target *float64
	for _, arg := range args {
		if !strings.HasSuffix(arg, ".manifest.json") {
			if _, err := os.Stat(arg); err != nil {
				return nil, nil, usagef("%s: %v", arg, unwrapPathError(err))
			}
			if _, ok := dataset.ForPath(arg); !ok {
				return nil, nil, usagef("%s: unknown dataset format (want a .parquet, .arrow or .jsonl file, or a .manifest.json)", arg)
			}
			files = append(files, arg)
			continue
		}
		b, err := os.ReadFile(arg)
		if err != nil {
			return nil, nil, usagef("%s: %v", arg, unwrapPathError(err))
		}
		var m struct {
			Outputs []manifestFile `json:"outputs"`
			Summary struct {
				Split *struct {
					Strategy string  `json:"strategy"`
					Target   float64 `json:"target_test_fraction"`
				} `json:"split"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, nil, usagef("%s: not a timeaware manifest: %v", arg, err)
		}
		if len(m.Outputs) == 0 {
			return nil, nil, usagef("%s: the manifest lists no outputs", arg)
		}
		for _, o := range m.Outputs {
			path := o.Path
			if _, err := os.Stat(path); err != nil {
				// Paths are recorded as given at build time; fall back to
				// the manifest's own directory.
				path = filepath.Join(filepath.Dir(arg), filepath.Base(o.Path))
				if _, err := os.Stat(path); err != nil {
					return nil, nil, usagef("%s: output %s: %v", arg, o.Path, unwrapPathError(err))
				}
			}
			if o.SHA256 != "" {
				got, err := hashFile(path, "")
				if err != nil {
					return nil, nil, err
				}
				if got.SHA256 != o.SHA256 {
					return nil, nil, fmt.Errorf("%s: %s has changed since the build (sha256 %s, manifest says %s)", arg, path, got.SHA256, o.SHA256)
				}
			}
			files = append(files, path)
		}
		if sp := m.Summary.Split; sp != nil {
			t := sp.Target
			target = &t
		}
	}
	return files, target, nil
}

// splitRowSource reads the files in order, as many times as the gate asks.
func splitRowSource(files []string) splits.RowSource {
	return func() (splits.RowIterator, error) {
		return &splitRows{files: files}, nil
	}
}

type splitRows struct {
	files []string
	next  int // index of the next file to open
	f     *os.File
	rr    dataset.RecordReader
	name  string
	side  string
	rows  []splits.Row
	seen  int
}

func (s *splitRows) Next() (splits.Row, error) {
	for len(s.rows) == 0 {
		if s.rr == nil {
			if s.next == len(s.files) {
				return splits.Row{}, io.EOF
			}
			if err := s.open(s.files[s.next]); err != nil {
				return splits.Row{}, err
			}
			s.next++
		}
		rec, err := s.rr.Next()
		if err == io.EOF {
			s.closeFile()
			continue
		}
		if err != nil {
			return splits.Row{}, err
		}
		rows, err := splits.RecordRows(rec, s.name, s.seen+1, s.side)
		s.seen += int(rec.NumRows())
		rec.Release()
		if err != nil {
			return splits.Row{}, err
		}
		s.rows = rows
	}
	r := s.rows[0]
	s.rows = s.rows[1:]
	return r, nil
}

func (s *splitRows) open(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	rr, err := dataset.Open(f, path, nil, dataset.ReadOptions{Schema: prefpairs.Schema, Columns: splits.RowColumns})
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.rr, s.name, s.side, s.seen = f, rr, path, splits.SplitFromName(path), 0
	return nil
}

func (s *splitRows) closeFile() {
	if s.rr != nil {
		s.rr.Close()
		s.rr = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

func (s *splitRows) Close() error {
	s.closeFile()
	return nil
}

func printGateReport(w io.Writer, r *splits.Report, files []string) {
	failed := 0
	for _, c := range r.Checks {
		if c.Status == splits.StatusFail {
			failed++
		}
	}
	verdict := "passed"
	if !r.Passed {
		verdict = fmt.Sprintf("FAILED (%d of %d checks)", failed, len(r.Checks))
	}
	fmt.Fprintf(w, "splits check: %s — %d files\n", verdict, len(files))
	for _, side := range []string{splits.Train, splits.Test} {
		st := r.Splits[side]
		if st == nil {
			continue
		}
		fmt.Fprintf(w, "  %-6s %d rows, %d scenarios; sensitivity %s; labels %s\n", side+":", st.Rows, st.Scenarios, countList(st.BySensitivity), shareList(st.LabelShare))
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-7s %-21s %s\n", strings.ToUpper(c.Status), c.Name, c.Summary)
		for _, f := range c.Findings {
			fmt.Fprintf(w, "            - %s\n", f.Message)
		}
		if c.Count > len(c.Findings) && len(c.Findings) > 0 {
			fmt.Fprintf(w, "            ... and %d more (see --json, --max-findings)\n", c.Count-len(c.Findings))
		}
	}
}

func shareList(m map[string]float64) string {
	return mapList(m, func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" })
}

// printGitHubAnnotations writes an ::error workflow command per finding of
// every failed check (or one per check without findings), so that failures
// show up on the pull request.
func printGitHubAnnotations(w io.Writer, r *splits.Report) {
	for _, c := range r.Checks {
		if c.Status != splits.StatusFail {
			continue
		}
		title := "splits check: " + c.Name
		if len(c.Findings) == 0 {
			fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty(title), escapeData(c.Summary))
			continue
		}
		for _, f := range c.Findings {
			props := "title=" + escapeProperty(title)
			if f.File != "" {
				props = "file=" + escapeProperty(f.File) + "," + props
				if strings.HasSuffix(f.File, ".jsonl") && f.Row > 0 {
					props = "file=" + escapeProperty(f.File) + ",line=" + fmt.Sprint(f.Row) + ",title=" + escapeProperty(title)
				}
			}
			fmt.Fprintf(w, "::error %s::%s\n", props, escapeData(f.Message))
		}
	}
}

// escapeData and escapeProperty follow the workflow-command escaping rules.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
