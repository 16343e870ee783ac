package splits

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// WriteJSON writes the report as an indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a reader: the verdict over the files
// checked, the columns, each side's rows, groups, sensitivities and
// labels, and each check with its findings.
func (r *Report) WriteText(w io.Writer, files int) error {
	p := &printer{w: w}
	failed := 0
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			failed++
		}
	}
	verdict := "passed"
	if !r.Passed {
		verdict = fmt.Sprintf("FAILED (%d of %d checks)", failed, len(r.Checks))
	}
	p.printf("splits check: %s — %s\n", verdict, plural(files, "file", "files"))
	if c := r.Columns; c != nil {
		preset := c.Preset
		if preset == "" {
			preset = PresetNone
		}
		p.printf("  columns: preset %s; text %s; group %s; id %s\n", preset, strings.Join(c.Text, ","), orDash(c.Group), orDash(strings.Join(c.ID, ",")))
	}
	for _, side := range sideNames {
		if st := r.Splits[side]; st != nil {
			p.printf("  %-8s %s\n", side+":", r.sideLine(side, st))
		}
	}
	for _, c := range r.Checks {
		p.printf("  %-7s %-21s %s\n", strings.ToUpper(c.Status), c.Name, c.Summary)
		for _, f := range c.Findings {
			p.printf("            - %s\n", f.Message)
		}
		if c.Count > len(c.Findings) && len(c.Findings) > 0 {
			p.printf("            ... and %d more (see --json, --max-findings)\n", c.Count-len(c.Findings))
		}
	}
	return p.err
}

// sideLine describes one side: its rows, and for a train or test side what
// the columns give of its groups, sensitivities and labels.
func (r *Report) sideLine(side string, st *SplitStats) string {
	line := fmt.Sprintf("%d rows", st.Rows)
	if side == Against {
		return line
	}
	c := r.Columns
	if c == nil || c.Group != "" {
		line += ", " + plural(st.Groups, r.Options.GroupName, r.Options.GroupName+"s")
	}
	if c == nil || c.Sensitivity != "" {
		line += "; sensitivity " + listOf(st.BySensitivity, strconv.Itoa)
	}
	if c == nil || c.Label != "" {
		line += "; labels " + listOf(st.LabelShare, func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" })
	}
	return line
}

// WriteGitHubAnnotations writes a GitHub Actions ::error workflow command
// per finding of every failed check (one per check without findings), so
// that the failures show on the pull request; a finding in a JSONL file
// names its line.
func (r *Report) WriteGitHubAnnotations(w io.Writer) error {
	p := &printer{w: w}
	for _, c := range r.Checks {
		if c.Status != StatusFail {
			continue
		}
		title := "title=" + escapeProperty("splits check: "+c.Name)
		if len(c.Findings) == 0 {
			p.printf("::error %s::%s\n", title, escapeData(c.Summary))
		}
		for _, f := range c.Findings {
			p.printf("::error %s%s::%s\n", annotationPlace(f.File, f.Row), title, escapeData(f.Message))
		}
	}
	return p.err
}

// annotationPlace is a GitHub annotation's file= and, for a JSONL file's
// row (its line, from 1), line= properties, each with its comma; none
// without a file.
func annotationPlace(file string, row int) string {
	if file == "" {
		return ""
	}
	where := "file=" + escapeProperty(file) + ","
	if strings.HasSuffix(file, ".jsonl") && row > 0 {
		where += "line=" + strconv.Itoa(row) + ","
	}
	return where
}

// printer writes until the first error, which it keeps.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listOf writes a map as "key value, key value" in key order; "-" when
// empty.
func listOf[V any](m map[string]V, value func(V) string) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+value(m[k]))
	}
	return strings.Join(parts, ", ")
}

// escapeData and escapeProperty follow the workflow commands' escaping
// rules.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
