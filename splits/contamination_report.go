package splits

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the report as an indented JSON document.
func (r *ContaminationReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a reader: the verdict, the index, and
// per benchmark its counts and the records found, each with its best
// training row and matching span.
func (r *ContaminationReport) WriteText(w io.Writer) error {
	p := &printer{w: w}
	verdict := "passed"
	if !r.Passed {
		verdict = "FAILED"
	}
	o := r.Options
	p.printf("splits contamination: %s — %s\n", verdict, r.Summary)
	p.printf("  index: %s, %s from %s; %d-grams, normalize %s, min overlap %.2f\n",
		plural(r.Records, "record", "records"), plural(r.Keys, "n-gram key", "n-gram keys"),
		plural(len(r.BenchmarkFiles), "file", "files"), o.NGram, o.Norm, o.MinOverlap)
	for _, b := range r.Benchmarks {
		p.printf("  %-7s %-14s %d of %d records contaminated (%d exact, %d near) in %s; %d other-split rows skipped\n",
			strings.ToUpper(b.Status), b.Name, b.Contaminated, b.Records, b.Exact, b.Near,
			plural(b.TrainingRows, "training row", "training rows"), b.Skipped)
		for _, f := range b.Findings {
			p.printf("            - %s\n", f.Message)
		}
		if b.Contaminated > len(b.Findings) && len(b.Findings) > 0 {
			p.printf("            ... and %d more (see --json, --max-findings)\n", b.Contaminated-len(b.Findings))
		}
	}
	return p.err
}

// WriteGitHubAnnotations writes a GitHub Actions ::error workflow command
// per listed finding of a benchmark over its tolerance (::warning when the
// check passed, as a tolerated finding), on the training row's file and,
// for JSONL, its line; a failed check without listed findings gets one
// ::error with the summary.
func (r *ContaminationReport) WriteGitHubAnnotations(w io.Writer) error {
	p := &printer{w: w}
	listed := false
	for _, b := range r.Benchmarks {
		level := "warning"
		if b.Status == StatusFail || (!r.Passed && r.Options.Scope == ScopeTotal) {
			level = "error"
		}
		title := "title=" + escapeProperty("splits contamination: "+b.Name)
		for _, f := range b.Findings {
			listed = true
			p.printf("::%s %s%s::%s\n", level, annotationPlace(f.File, f.Row), title, escapeData(f.Message))
		}
	}
	if !r.Passed && !listed {
		p.printf("::error %s::%s\n", "title="+escapeProperty("splits contamination"), escapeData(r.Summary))
	}
	return p.err
}

// String is the report's one line.
func (r *ContaminationReport) String() string {
	return fmt.Sprintf("passed=%v %s", r.Passed, r.Summary)
}
