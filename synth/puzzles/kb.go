package puzzles

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Event is one row of a Time Puzzles knowledge base: a public event
// or period an event fact can refer to.
type Event struct {
	// Event is a noun phrase naming it ("the first crewed Moon landing",
	// "the lifetime of Albert Einstein"); puzzles quote it as written.
	Event string
	// Start is YYYY, YYYY-MM or YYYY-MM-DD; End is empty for a point event,
	// else the last year or day of a period (the same forms, inclusive).
	Start, End string

	startPrec, endPrec int
	sy, sm, sd         int
	ey, em, ed         int
}

// kBColumns are the columns of a knowledge-base CSV, in any order;
// end may be missing.
var kBColumns = []string{"event", "start", "end"}

//go:embed kb.csv
var defaultKB string

// DefaultKB returns the built-in knowledge base: well-known public
// events (dates as commonly recorded where they happened) and periods (US
// presidencies, lifetimes, world wars), written for this project.
func DefaultKB() []Event {
	kb, err := ParseKB(strings.NewReader(defaultKB), "built-in knowledge base")
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return kb
}

// ParseKB reads a knowledge-base CSV: a header naming the columns
// event, start and (optionally) end, then one event per row (see
// Event). Blank lines are skipped. An error names the file, the line
// and the column (1-based, in bytes) and, for a bad value, the field.
func ParseKB(r io.Reader, name string) ([]Event, error) {
	var out []Event
	err := readTable(r, name, kBColumns, 2, func(row *tableRow) error {
		var e Event
		var i int
		var err error
		e.Event, i = row.field("event")
		if e.Event == "" {
			return row.bad(i, "event", "empty: name the event")
		}
		if strings.ContainsAny(e.Event, "\r\n") {
			return row.bad(i, "event", "spans lines")
		}
		e.Start, i = row.field("start")
		if e.sy, e.sm, e.sd, e.startPrec, err = parsePartial(e.Start); err != nil {
			return row.bad(i, "start", "%v", err)
		}
		e.End, i = row.field("end")
		if e.End != "" {
			if e.ey, e.em, e.ed, e.endPrec, err = parsePartial(e.End); err != nil {
				return row.bad(i, "end", "%v", err)
			}
			if partialLast(e.ey, e.em, e.ed, e.endPrec) < dayNumber(e.sy, e.sm, e.sd) {
				return row.bad(i, "end", "%s is before start %s", e.End, e.Start)
			}
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no events after the header", name)
	}
	return out, nil
}

// tableRow is one data row of a CSV read by readTable.
type tableRow struct {
	cr   *csv.Reader
	col  map[string]int
	rec  []string
	name string
}

// field returns the trimmed value of column c and its index, or "" and -1
// when the file has no such column.
func (r *tableRow) field(c string) (string, int) {
	i, ok := r.col[c]
	if !ok || i >= len(r.rec) {
		return "", -1
	}
	return strings.TrimSpace(r.rec[i]), i
}

// bad is an error at field i (column c) of the row: file, line, column.
func (r *tableRow) bad(i int, c string, format string, args ...any) error {
	line, column := r.cr.FieldPos(0)
	if i >= 0 {
		line, column = r.cr.FieldPos(i)
	}
	return fmt.Errorf("%s: line %d, column %d (%s): %s", r.name, line, column, c, fmt.Sprintf(format, args...))
}

// readTable reads a CSV whose header names columns from columns, in any
// order, the first required of them mandatory, and calls row with each data
// row. Blank lines are skipped.
func readTable(r io.Reader, name string, columns []string, required int, row func(*tableRow) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty: want a header line %q", name, strings.Join(columns, ","))
	}
	if err != nil {
		return cSVError(name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(columns, h) {
			line, c := cr.FieldPos(i)
			return fmt.Errorf("%s: line %d, column %d: unknown column %q (want %s)", name, line, c, h, strings.Join(columns, ", "))
		}
		if _, dup := col[h]; dup {
			line, c := cr.FieldPos(i)
			return fmt.Errorf("%s: line %d, column %d: column %q given twice", name, line, c, h)
		}
		col[h] = i
	}
	for _, need := range columns[:required] {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("%s: line 1: missing column %q", name, need)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return cSVError(name, err)
		}
		if len(rec) != len(header) {
			line, _ := cr.FieldPos(0)
			return fmt.Errorf("%s: line %d: %d fields, the header has %d", name, line, len(rec), len(header))
		}
		for i, f := range rec {
			if !utf8.ValidString(f) {
				line, c := cr.FieldPos(i)
				return fmt.Errorf("%s: line %d, column %d: not UTF-8 text (save the file as UTF-8)", name, line, c)
			}
		}
		if err := row(&tableRow{cr: cr, col: col, rec: rec, name: name}); err != nil {
			return err
		}
	}
}

func cSVError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: line %d, column %d: %w", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// partialLast is the last day a partial date covers.
func partialLast(y, m, d, prec int) int {
	switch prec {
	case 1:
		return dayNumber(y, 12, 31)
	case 2:
		return dayNumber(y, m, daysIn(y, m))
	}
	return dayNumber(y, m, d)
}

// relations lists the event facts e supports, as facts with Kind, Level,
// Event, Relation, Start and End set.
func (e *Event) relations() []Fact {
	f := func(r Relation, lvl Level, start, end string) Fact {
		return Fact{Kind: KindEvent, Level: lvl, Event: e.Event, Relation: r, Start: start, End: end}
	}
	ys := fmt.Sprintf("%04d", e.sy)
	var out []Fact
	if e.End == "" {
		switch e.startPrec {
		case 3:
			out = append(out, f(SameDay, LevelDay, e.Start, ""), f(Anniversary, LevelDay, e.Start, ""))
			fallthrough
		case 2:
			out = append(out, f(SameMonth, LevelMonth, e.Start[:7], ""))
		}
		return append(out, f(SameYear, LevelYear, ys, ""))
	}
	if e.startPrec == 3 && e.endPrec == 3 {
		days := dayNumber(e.ey, e.em, e.ed) - dayNumber(e.sy, e.sm, e.sd) + 1
		lvl := LevelYear
		switch {
		case days <= 31:
			lvl = LevelDay
		case days <= 366:
			lvl = LevelMonth
		}
		out = append(out, f(During, lvl, e.Start, e.End))
	}
	return append(out, f(DuringYears, LevelYear, ys, fmt.Sprintf("%04d", e.ey)))
}
