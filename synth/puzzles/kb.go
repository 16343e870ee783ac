package puzzles

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty: want a header line %q", name, strings.Join(kBColumns, ","))
	}
	if err != nil {
		return nil, cSVError(name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(kBColumns, h) {
			line, c := cr.FieldPos(i)
			return nil, fmt.Errorf("%s: line %d, column %d: unknown column %q (want %s)", name, line, c, h, strings.Join(kBColumns, ", "))
		}
		if _, dup := col[h]; dup {
			line, c := cr.FieldPos(i)
			return nil, fmt.Errorf("%s: line %d, column %d: column %q given twice", name, line, c, h)
		}
		col[h] = i
	}
	for _, need := range kBColumns[:2] {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: line 1: missing column %q", name, need)
		}
	}
	var out []Event
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, cSVError(name, err)
		}
		field := func(c string) (string, int) {
			i, ok := col[c]
			if !ok || i >= len(rec) {
				return "", -1
			}
			return strings.TrimSpace(rec[i]), i
		}
		bad := func(i int, c string, format string, args ...any) error {
			line, column := cr.FieldPos(0)
			if i >= 0 {
				line, column = cr.FieldPos(i)
			}
			return fmt.Errorf("%s: line %d, column %d (%s): %s", name, line, column, c, fmt.Sprintf(format, args...))
		}
		if len(rec) != len(header) {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("%s: line %d: %d fields, the header has %d", name, line, len(rec), len(header))
		}
		var e Event
		var i int
		e.Event, i = field("event")
		if e.Event == "" {
			return nil, bad(i, "event", "empty: name the event")
		}
		if strings.ContainsAny(e.Event, "\r\n") {
			return nil, bad(i, "event", "spans lines")
		}
		e.Start, i = field("start")
		if e.sy, e.sm, e.sd, e.startPrec, err = parsePartial(e.Start); err != nil {
			return nil, bad(i, "start", "%v", err)
		}
		e.End, i = field("end")
		if e.End != "" {
			if e.ey, e.em, e.ed, e.endPrec, err = parsePartial(e.End); err != nil {
				return nil, bad(i, "end", "%v", err)
			}
			if partialLast(e.ey, e.em, e.ed, e.endPrec) < dayNumber(e.sy, e.sm, e.sd) {
				return nil, bad(i, "end", "%s is before start %s", e.End, e.Start)
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no events after the header", name)
	}
	return out, nil
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
