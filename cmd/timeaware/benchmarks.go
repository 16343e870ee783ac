package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/benchmarks"
	"github.com/timeaware/timeaware/synth"
)

// shownNotConverted is how many lines about records not converted the
// import prints before it only counts them.
const shownNotConverted = 5

func (a *app) benchmarksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "benchmarks",
		Short: "Public temporal-reasoning benchmarks (TimeQA, TempReason, TRAM, Test of Time) as VeRL rows for evaluation",
	}
	cmd.AddCommand(a.benchmarksListCmd(), a.benchmarksImportCmd())
	return groupCommand(cmd)
}

func (a *app) benchmarksListCmd() *cobra.Command {
	var prompts bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "the importers: name, licence, whether training is allowed, splits and answer format",
		Long:    longHelp("benchmarks list"),
		Example: "  timeaware benchmarks list",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			for _, b := range benchmarks.All {
				var splits []string
				for _, s := range b.Splits {
					to := s.Split
					if s.Subset != "" {
						to = strings.TrimSpace(to + ", subset " + s.Subset)
					}
					splits = append(splits, s.Files+" → "+strings.TrimPrefix(to, ", "))
				}
				training := "training allowed on train and dev"
				if !b.TrainingAllowed {
					training = "no training"
				}
				fmt.Fprintf(a.stdout, "%s\t%s\t%s\tsplits: %s\tanswer: %s\n", b.Name, b.Licence, training, strings.Join(splits, "; "), b.AnswerFormat)
				for _, kind := range b.PromptKinds() {
					if prompts {
						fmt.Fprintf(a.stdout, "  prompt %s:\n    %s\n", promptKey(b, kind), strings.ReplaceAll(b.DefaultPrompt(kind), "\n", "\n    "))
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&prompts, "prompts", false, "also print the default prompt templates, each under its config key")
	return cmd
}

// promptKey is the config key of a benchmark's prompt template of kind.
func promptKey(b *benchmarks.Benchmark, kind string) string {
	key := "benchmarks.prompts." + strings.ReplaceAll(b.Name, "-", "_")
	if kind != "" {
		key += "_" + kind
	}
	return key
}

type benchmarksImportFlags struct {
	out, purpose, split, subset, context string
	labels                               bool
}

func (a *app) benchmarksImportCmd() *cobra.Command {
	var f benchmarksImportFlags
	cmd := &cobra.Command{
		Use:   "import NAME FILE... --out FILE",
		Short: "convert a benchmark's released files to VeRL rows for evaluation, naming every record not converted",
		Long:  longHelp("benchmarks import"),
		Example: `  timeaware benchmarks import tram examples/benchmarks/tram/arithmetic_shots_mcq.csv --out out/tram.jsonl
  timeaware benchmarks import timeqa examples/benchmarks/timeqa/human_train.easy.json.gzip --context none --out out/timeqa.parquet`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runBenchmarksImport(cmd, &f, args[0], args[1:])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", "output rows; the extension picks the format unless --format is given (required)")
	outputFormatFlag(fs, "benchmarks.format")
	labelFlag(fs, &f.labels)
	fs.StringVar(&f.purpose, "purpose", benchmarks.PurposeEval, "what the rows are for: eval, or train (refused for Test of Time and for test splits)")
	fs.StringVar(&f.split, "split", "", "the files' split, train, dev or test (default: from each file's name)")
	fs.StringVar(&f.subset, "subset", "", "the files' subset (default: from each file's name)")
	fs.StringVar(&f.context, "context", "", "the context in the prompt: for timeqa full (its page; the rule when not given) or none; for tempreason fact (fact_context; the rule when not given), closed (none) or open (context)")
	return cmd
}

func (a *app) runBenchmarksImport(cmd *cobra.Command, f *benchmarksImportFlags, name string, files []string) error {
	b, err := benchmarks.Lookup(name)
	if err != nil {
		return usageError{err}
	}
	if f.out == "" {
		return usagef("--out is required")
	}
	format, err := a.outputFormat("benchmarks.format", f.out)
	if err != nil {
		return err
	}
	opt := benchmarks.Options{Split: f.split, Subset: f.subset, Purpose: f.purpose, Context: f.context, Prompts: map[string]string{}}
	for _, kind := range b.PromptKinds() {
		opt.Prompts[kind] = a.v.GetString(promptKey(b, kind))
	}
	config := typedConfig(a.v, "benchmarks.")
	config["benchmark"], config["files"], config["purpose"], config["split"], config["subset"], config["context"] =
		name, files, f.purpose, f.split, f.subset, f.context
	o := synth.Output{Path: f.out, Format: format, Labels: f.labels, Manifest: manifest("benchmarks import", config)}
	var shown, more int
	w, err := benchmarks.Write(cmd.Context(), b, files, opt, o, func(r *benchmarks.Record) error {
		if line := r.Report(); line != "" {
			if shown < shownNotConverted {
				fmt.Fprintln(a.stderr, line)
				shown++
			} else {
				more++
			}
		}
		return nil
	})
	var (
		ie *benchmarks.InputError
		ne *benchmarks.NameError
		oe *benchmarks.OptionError
	)
	switch {
	case errors.As(err, &ie):
		return pathError("", ie.Path, ie.Err)
	case errors.As(err, &ne), errors.As(err, &oe), errors.Is(err, benchmarks.ErrTrainingRefused):
		return usageError{err}
	case err != nil:
		return pathError("out", f.out, err)
	}
	if more > 0 {
		fmt.Fprintf(a.stderr, "... and %d more records not converted\n", more)
	}
	fmt.Fprintf(a.stderr, "benchmarks import: %s\n", w.Summary)
	printWritten(a.stdout, "benchmarks import "+name, "row", w.Outputs, w.Split, w.ManifestPath)
	return nil
}
