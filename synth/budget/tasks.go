package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Family is a Timely-RL task family (the Timely Machine paper, §4.1). It decides the data
// source of the rows, how a task's baseline time is found, and which task
// fields are allowed.
type Family string

// The task families and the rewards they are scored with.
const (
	// FamilyGeneral is general reasoning: a per-task budget, a reference
	// answer, the timely/general reward.
	FamilyGeneral Family = "general"
	// FamilyGame is interactive games: steps × per-step latency, the
	// timely/game reward.
	FamilyGame Family = "game"
	// FamilyML is machine-learning tasks: rounds × per-round latency, the
	// timely/ml reward.
	FamilyML Family = "ml"
)

// Families lists the families in the order they are documented.
var Families = []Family{FamilyGeneral, FamilyGame, FamilyML}

// ParseFamily returns the family with the given name.
func ParseFamily(s string) (Family, error) {
	for _, f := range Families {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("family %q is not general, game or ml", s)
}

// DataSource is the data_source of the family's rows: the key under which
// the rewards package registers the family's reward.
func (f Family) DataSource() string { return "timely/" + string(f) }

// Task is one line of a task file: what the model is asked and what the
// budget is computed from. Optional numbers are zero when the line does not
// set them.
type Task struct {
	ID       string
	Question string
	// Answer is the reference answer as text (a JSON number keeps its
	// literal); nil when the line has none, which only game and ML tasks may.
	Answer *string
	// BaselineSeconds is the measured time of an unconstrained run; 0 when
	// unknown.
	BaselineSeconds float64
	// Steps and StepLatencyS override the game family's defaults.
	Steps        int
	StepLatencyS float64
	// Rounds and RoundLatencyS override the ML family's defaults.
	Rounds        int
	RoundLatencyS float64
	// Ability and Split override the row's ability and extra_info.split.
	Ability string
	Split   string
	// Record is the task's 0-based position among the file's non-blank
	// lines, Line its 1-based line number.
	Record int
	Line   int
}

// LineError is a data error in one line of a JSONL input. It names the
// file, the line, the record's id when it could be read, and the field.
type LineError struct {
	Name  string
	Line  int
	ID    string
	Field string
	Err   error
}

func (e *LineError) Error() string {
	var b strings.Builder
	b.WriteString("budget: ")
	if e.Name != "" {
		b.WriteString(e.Name)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "line %d", e.Line)
	if e.ID != "" {
		fmt.Fprintf(&b, " (id %s)", e.ID)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *LineError) Unwrap() error { return e.Err }

// maxTaskSeconds bounds baselines and latencies: 10^7 s (116 days) is more
// than any budget a rollout timer can hold, and keeps every product finite.
const maxTaskSeconds = 1e7

// maxTaskCount bounds steps and rounds for the same reason.
const maxTaskCount = 1_000_000

var taskFields = []string{"id", "question", "answer", "baseline_seconds", "steps", "step_latency_s", "rounds", "round_latency_s", "ability", "split"}

// ParseTask decodes one task line for a family. The reader is strict: an
// unknown or misspelt field, a value of the wrong type, a field that the
// family does not use, or a general task without an answer is an error, so
// that no budget is silently computed from a default. The returned
// *LineError names the field (and the id when it was read); ParseTask leaves
// its Name and Line to the caller.
func ParseTask(line []byte, family Family) (*Task, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, &LineError{Err: jsonscan.Explain("", line, err)}
	}
	if raw == nil {
		return nil, &LineError{Err: errors.New("want an object, got null")}
	}
	t := &Task{}
	bad := func(field string, format string, args ...any) error {
		return &LineError{ID: t.ID, Field: field, Err: fmt.Errorf(format, args...)}
	}
	id, ok, err := jsonString(raw["id"])
	switch {
	case err != nil:
		return nil, bad("id", "%v", err)
	case !ok || strings.TrimSpace(id) == "":
		return nil, bad("id", "missing: every task needs a non-empty id")
	}
	t.ID = id
	for k := range raw {
		if !isTaskField(k) {
			return nil, bad(k, "unknown field (a task has %s)", strings.Join(taskFields, ", "))
		}
	}
	q, ok, err := jsonString(raw["question"])
	switch {
	case err != nil:
		return nil, bad("question", "%v", err)
	case !ok || strings.TrimSpace(q) == "":
		return nil, bad("question", "missing: every task needs the question text")
	}
	t.Question = q
	if v, ok := raw["answer"]; ok && !isNull(v) {
		a, err := jsonAnswer(v)
		if err != nil {
			return nil, bad("answer", "%v", err)
		}
		t.Answer = &a
	} else if family == FamilyGeneral {
		return nil, bad("answer", "missing: a general task needs its reference answer (the reward compares against it)")
	}
	if t.BaselineSeconds, err = jsonSeconds(raw["baseline_seconds"]); err != nil {
		return nil, bad("baseline_seconds", "%v", err)
	}
	for _, f := range []struct {
		name   string
		family Family
		count  *int
		secs   *float64
	}{
		{"steps", FamilyGame, &t.Steps, nil},
		{"step_latency_s", FamilyGame, nil, &t.StepLatencyS},
		{"rounds", FamilyML, &t.Rounds, nil},
		{"round_latency_s", FamilyML, nil, &t.RoundLatencyS},
	} {
		v, ok := raw[f.name]
		if !ok || isNull(v) {
			continue
		}
		if family != f.family {
			return nil, bad(f.name, "only a %s task has this field (this is a %s task set)", f.family, family)
		}
		if f.count != nil {
			if *f.count, err = jsonCount(v); err != nil {
				return nil, bad(f.name, "%v", err)
			}
		} else if *f.secs, err = jsonSeconds(v); err != nil {
			return nil, bad(f.name, "%v", err)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"ability", &t.Ability}, {"split", &t.Split}} {
		s, ok, err := jsonString(raw[f.name])
		switch {
		case err != nil:
			return nil, bad(f.name, "%v", err)
		case ok && strings.TrimSpace(s) == "":
			return nil, bad(f.name, "empty: leave the field out to use the default")
		}
		*f.dst = s
	}
	return t, nil
}

func isTaskField(k string) bool {
	for _, f := range taskFields {
		if f == k {
			return true
		}
	}
	return false
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsonString reads an optional string; ok is false for a missing or null
// value.
func jsonString(v json.RawMessage) (s string, ok bool, err error) {
	if v == nil || isNull(v) {
		return "", false, nil
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, fmt.Errorf("want a string, got %s", truncate(v))
	}
	return s, true, nil
}

// jsonAnswer reads a reference answer: a non-empty string, or a number kept
// as written.
func jsonAnswer(v json.RawMessage) (string, error) {
	b := bytes.TrimSpace(v)
	if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || math.IsInf(f, 0) {
			return "", fmt.Errorf("%s is not a finite number", truncate(b))
		}
		return string(b), nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("want a string or a number, got %s", truncate(v))
	}
	if strings.TrimSpace(s) == "" {
		return "", errors.New("empty: the reward cannot match an empty answer")
	}
	return s, nil
}

// jsonNumber reads an optional finite number; 0 with ok false when missing.
func jsonNumber(v json.RawMessage) (f float64, ok bool, err error) {
	if v == nil || isNull(v) {
		return 0, false, nil
	}
	b := bytes.TrimSpace(v)
	if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		return 0, false, fmt.Errorf("want a number, got %s", truncate(v))
	}
	f, err = strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("%s is not a finite number", truncate(b))
	}
	return f, true, nil
}

func jsonSeconds(v json.RawMessage) (float64, error) {
	f, ok, err := jsonNumber(v)
	if err != nil || !ok {
		return 0, err
	}
	if !(f > 0 && f <= maxTaskSeconds) {
		return 0, fmt.Errorf("%v is not a positive number of seconds up to %g", f, float64(maxTaskSeconds))
	}
	return f, nil
}

func jsonCount(v json.RawMessage) (int, error) {
	f, ok, err := jsonNumber(v)
	if err != nil || !ok {
		return 0, err
	}
	if f != math.Trunc(f) || f < 1 || f > maxTaskCount {
		return 0, fmt.Errorf("%v is not a whole number from 1 to %d", f, maxTaskCount)
	}
	return int(f), nil
}

func truncate(b []byte) string {
	const n = 40
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// TaskReader reads a JSONL task file one task at a time, skipping blank
// lines. Memory stays bounded by the longest line.
type TaskReader struct {
	lines  lineReader
	family Family
	record int
}

// NewTaskReader reads tasks of a family from r; name is the file name used
// in errors.
func NewTaskReader(r io.Reader, name string, family Family) *TaskReader {
	return &TaskReader{lines: newLineReader(r, name), family: family}
}

// Next returns the next task, or io.EOF after the last one. A bad line
// yields a *LineError naming the file, the line, the id and the field; the
// reader should not be used after an error.
func (r *TaskReader) Next() (*Task, error) {
	line, err := r.lines.next()
	if err != nil {
		return nil, err
	}
	t, err := ParseTask(line, r.family)
	if err != nil {
		return nil, r.lines.annotate(err)
	}
	t.Record, t.Line = r.record, r.lines.line
	r.record++
	return t, nil
}

// lineReader yields the non-blank lines of a JSONL stream (read by
// dataset.LineReader), without their line ending.
type lineReader struct {
	lines *jsonscan.LineReader
	name  string
	line  int
}

func newLineReader(r io.Reader, name string) lineReader {
	return lineReader{lines: jsonscan.NewLineReader(r), name: name}
}

// next returns the next non-blank line; the slice is valid until the next
// call.
func (l *lineReader) next() ([]byte, error) {
	for {
		b, n, err := l.lines.Next()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("budget: %s: line %d: %w", l.name, n, err)
		}
		l.line = n
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		if len(bytes.TrimSpace(b)) > 0 {
			return b, nil
		}
	}
}

// annotate fills the file and line of a *LineError.
func (l *lineReader) annotate(err error) error {
	var le *LineError
	if errors.As(err, &le) {
		le.Name, le.Line = l.name, l.line
		return le
	}
	return fmt.Errorf("budget: %s: line %d: %w", l.name, l.line, err)
}
