package conversation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// RecordError reports a malformed record with enough context to find it: the
// input name, the record's 1-based position, the line it starts on, its id when
// one could be read, and the offending field.
type RecordError struct {
	Source string // file name or other input label
	Record int    // 1-based position of the record in its input
	Line   int    // 1-based line on which the record starts (for a syntax error the Reader finds, the line of the error); 0 if unknown
	ID     string // record id, if it could be read
	Field  string // JSON path of the offending field, e.g. history[3].time
	Err    error
}

func (e *RecordError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "record %d", e.Record)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d", e.Line)
		if e.ID != "" {
			fmt.Fprintf(&b, ", id %s", e.ID)
		}
		b.WriteString(")")
	} else if e.ID != "" {
		fmt.Fprintf(&b, " (id %s)", e.ID)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *RecordError) Unwrap() error { return e.Err }

// RawRecord is one undecoded record and where it came from. Data belongs to
// the record: the Reader never reuses it, and ParseTrajectory's strings may
// share its memory, so it must not be modified once parsed. Splitting input
// into raw records is cheap and sequential; decoding them (ParseTrajectory)
// can then run on several goroutines.
type RawRecord struct {
	Source string
	Record int
	Line   int
	Data   []byte
}

// Reader streams records from a JSON array of objects or from JSONL (one
// object per line; blank lines are skipped). The layout is detected from the
// first non-space byte. Memory use is bounded by the largest single record.
type Reader struct {
	src    string
	r      *bufio.Reader
	line   int
	n      int
	array  bool
	start  bool
	done   bool
	maxRec int
}

// DefaultMaxRecordBytes bounds a single record so that a corrupt file (an
// unterminated string, say) fails fast instead of exhausting memory.
const DefaultMaxRecordBytes = 256 << 20

// NewReader returns a Reader over r. source names the input in errors.
func NewReader(r io.Reader, source string) *Reader {
	return &Reader{src: source, r: bufio.NewReaderSize(r, 1<<20), line: 1, maxRec: DefaultMaxRecordBytes}
}

// Next returns the next raw record, or io.EOF after the last one. Syntax
// errors that prevent finding record boundaries are returned as *RecordError.
func (rd *Reader) Next() (RawRecord, error) {
	if rd.done {
		return RawRecord{}, io.EOF
	}
	if !rd.start {
		rd.start = true
		// Editors on some systems begin UTF-8 files with a byte order mark.
		if b, err := rd.r.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
			_, _ = rd.r.Discard(3)
		}
		c, err := rd.skipSpace()
		if err == io.EOF {
			rd.done = true
			return RawRecord{}, io.EOF
		}
		if err != nil {
			return RawRecord{}, rd.fail(err)
		}
		switch c {
		case '[':
			rd.array = true
			_, _ = rd.r.ReadByte()
		case '{':
		default:
			return RawRecord{}, rd.fail(fmt.Errorf("input starts with %q: want a JSON array of records or JSONL objects", c))
		}
	}
	if rd.array {
		return rd.nextArray()
	}
	return rd.nextLine()
}

func (rd *Reader) fail(err error) error {
	rd.done = true
	return &RecordError{Source: rd.src, Record: rd.n + 1, Line: rd.line, Err: err}
}

// skipSpace peeks the next non-space byte without consuming it.
func (rd *Reader) skipSpace() (byte, error) {
	for {
		c, err := rd.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			rd.line++
		case ' ', '\t', '\r':
		default:
			_ = rd.r.UnreadByte()
			return c, nil
		}
	}
}

func (rd *Reader) nextLine() (RawRecord, error) {
	for {
		c, err := rd.skipSpace()
		if err == io.EOF {
			rd.done = true
			return RawRecord{}, io.EOF
		}
		if err != nil {
			return RawRecord{}, rd.fail(err)
		}
		if c != '{' {
			return RawRecord{}, rd.fail(fmt.Errorf("line starts with %q: want a JSON object (JSONL holds one object per line)", c))
		}
		// A JSONL record is its line; ParseTrajectory checks that the line is
		// exactly one object, so finding the newline is all the scanning needed.
		var data []byte
		for {
			chunk, err := rd.r.ReadSlice('\n')
			data = append(data, chunk...)
			if err == bufio.ErrBufferFull {
				if len(data) > rd.maxRec {
					return RawRecord{}, rd.fail(fmt.Errorf("record larger than %d bytes", rd.maxRec))
				}
				continue
			}
			if err != nil && err != io.EOF {
				return RawRecord{}, rd.fail(err)
			}
			break
		}
		rd.n++
		rec := RawRecord{Source: rd.src, Record: rd.n, Line: rd.line, Data: data}
		rd.line++
		return rec, nil
	}
}

func (rd *Reader) nextArray() (RawRecord, error) {
	c, err := rd.skipSpace()
	if err != nil {
		if err == io.EOF {
			err = errors.New("the file ends before the array is closed")
		}
		return RawRecord{}, rd.fail(err)
	}
	if rd.n > 0 {
		switch c {
		case ']':
			return RawRecord{}, rd.finishArray()
		case ',':
			_, _ = rd.r.ReadByte()
			if c, err = rd.skipSpace(); err != nil {
				if err == io.EOF {
					err = errors.New("the file ends after a ','")
				}
				return RawRecord{}, rd.fail(err)
			}
		default:
			return RawRecord{}, rd.fail(fmt.Errorf("unexpected %q between records: want ',' or ']'", c))
		}
	} else if c == ']' {
		return RawRecord{}, rd.finishArray()
	}
	if c != '{' {
		return RawRecord{}, rd.fail(fmt.Errorf("array element starts with %q: want a JSON object", c))
	}
	start := rd.line
	data, err := rd.scanValue()
	if err != nil {
		return RawRecord{}, rd.fail(err)
	}
	rd.n++
	return RawRecord{Source: rd.src, Record: rd.n, Line: start, Data: data}, nil
}

func (rd *Reader) finishArray() error {
	_, _ = rd.r.ReadByte()
	rd.done = true
	if c, err := rd.skipSpace(); err == nil {
		return &RecordError{Source: rd.src, Record: rd.n + 1, Line: rd.line, Err: fmt.Errorf("unexpected %q after the closing ']'", c)}
	}
	return io.EOF
}

// scanValue reads one JSON object starting at the current '{', tracking
// strings and nesting only; full validation happens in ParseTrajectory.
func (rd *Reader) scanValue() ([]byte, error) {
	var buf []byte
	depth := 0
	inStr, esc := false, false
	for {
		if rd.r.Buffered() == 0 {
			if _, err := rd.r.Peek(1); err != nil {
				if err == io.EOF {
					return nil, errors.New("the file ends inside the record")
				}
				return nil, err
			}
		}
		chunk, _ := rd.r.Peek(rd.r.Buffered())
		for i, c := range chunk {
			if inStr {
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
				case c == '\n':
					return nil, errors.New("newline inside a JSON string")
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					buf = append(buf, chunk[:i+1]...)
					_, _ = rd.r.Discard(i + 1)
					return buf, nil
				}
			case '\n':
				rd.line++
			}
		}
		buf = append(buf, chunk...)
		_, _ = rd.r.Discard(len(chunk))
		if len(buf) > rd.maxRec {
			return nil, fmt.Errorf("record larger than %d bytes", rd.maxRec)
		}
	}
}

// wire types mirror the on-disk record; time and the optional per-level
// fields are decoded by hand so errors can name the field.
type wireRecord struct {
	ID           json.RawMessage `json:"id"`
	History      []wireMessage   `json:"history"`
	Function     json.RawMessage `json:"function"`
	Tools        json.RawMessage `json:"tools"`
	Scenario     string          `json:"scenario"`
	Sensitivity  string          `json:"sensitivity"`
	PrefScore    json.RawMessage `json:"pref_score"`
	Preference   json.RawMessage `json:"preference"`
	DirectAnswer json.RawMessage `json:"direct_answer"`
	ToolCall     json.RawMessage `json:"tool_call"`
	Elapse       json.RawMessage `json:"elapse"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    *string         `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Time       json.RawMessage `json:"time"`
}

// ParseTrajectory decodes and checks one record. Errors are *RecordError
// carrying the raw record's position, the id when readable, and the field.
func ParseTrajectory(raw RawRecord) (*Trajectory, error) {
	fail := func(id, field string, err error) error {
		field, err = jsonscan.ExplainField(field, nil, err) // a decoding error's path, placed at field
		return &RecordError{Source: raw.Source, Record: raw.Record, Line: raw.Line, ID: id, Field: field, Err: err}
	}
	w := wireRecords.Get().(*wireRecord)
	defer putWireRecord(w)
	if err := decodeWire(raw.Data, w); err != nil {
		return nil, fail(peekID(raw.Data), "", jsonscan.Explain("", raw.Data, err))
	}
	var id string
	var err error
	if len(w.ID) > 0 {
		id, err = unmarshalString(w.ID)
	}
	if len(w.ID) == 0 || err != nil || strings.TrimSpace(id) == "" {
		return nil, fail("", "id", errors.New("missing or not a non-empty string"))
	}
	t := &Trajectory{ID: id, Scenario: w.Scenario, Sensitivity: w.Sensitivity}
	toolsField, rawTools := "function", w.Function
	if isAbsent(rawTools) {
		toolsField, rawTools = "tools", w.Tools
	}
	if !isAbsent(rawTools) {
		if err := unmarshalTools(rawTools, &t.Tools); err != nil {
			return nil, fail(id, toolsField, jsonscan.Wanting("a list of tool schemas", err))
		}
		t.ToolsJSON = jsonscan.AppendCompact(make([]byte, 0, len(rawTools)), rawTools)
	}
	for i, tl := range t.Tools {
		if tl.Function.Name == "" {
			return nil, fail(id, fmt.Sprintf("%s[%d].function.name", toolsField, i), errors.New("missing"))
		}
	}
	if t.Sensitivity != "" {
		s, ok := NormalizeSensitivity(t.Sensitivity)
		if !ok {
			return nil, fail(id, "sensitivity", fmt.Errorf("%q is not low, medium or high", t.Sensitivity))
		}
		t.Sensitivity = s
	}
	if len(w.History) == 0 {
		return nil, fail(id, "history", errors.New("missing or empty"))
	}
	t.History = make([]Message, len(w.History))
	last := len(w.History) - 1
	for i, wm := range w.History {
		field := historyField(i)
		switch wm.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		case "":
			return nil, fail(id, field()+".role", errors.New("missing"))
		default:
			return nil, fail(id, field()+".role", fmt.Errorf("unknown role %q", wm.Role))
		}
		m := Message{Role: wm.Role, Content: wm.Content, ToolCalls: wm.ToolCalls, ToolCallID: wm.ToolCallID, Name: wm.Name}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return nil, fail(id, fmt.Sprintf("%s.tool_calls[%d].function.name", field(), j), errors.New("missing"))
			}
			if tc.Type == "" {
				m.ToolCalls[j].Type = "function"
			}
			args, err := JSONArguments(string(tc.Function.Arguments))
			if err != nil {
				return nil, fail(id, fmt.Sprintf("%s.tool_calls[%d].function.arguments", field(), j), err)
			}
			m.ToolCalls[j].Function.Arguments = Arguments(args)
		}
		if len(wm.Time) > 0 && !bytes.Equal(wm.Time, []byte("null")) {
			if wm.Time[0] == '[' {
				if i != last {
					return nil, fail(id, field()+".time", errors.New("a list of times is only allowed on the final message"))
				}
				var ss []string
				if err := unmarshalStrings(wm.Time, &ss); err != nil {
					return nil, fail(id, field()+".time", errors.New("want a list of RFC 3339 strings"))
				}
				if len(ss) != NumElapse {
					return nil, fail(id, field()+".time", fmt.Errorf("has %d times, want %d (small, medium, large)", len(ss), NumElapse))
				}
				t.FinalTimes = make([]time.Time, len(ss))
				for k, s := range ss {
					tm, err := ParseTime(s)
					if err != nil {
						return nil, fail(id, fmt.Sprintf("%s.time[%d]", field(), k), err)
					}
					t.FinalTimes[k] = tm
				}
			} else {
				s, err := unmarshalString(wm.Time)
				if err != nil {
					return nil, fail(id, field()+".time", errors.New("want an RFC 3339 string"))
				}
				tm, err := ParseTime(s)
				if err != nil {
					return nil, fail(id, field()+".time", err)
				}
				m.Time = tm
			}
		}
		t.History[i] = m
	}
	if t.PrefScore, err = perLevel[float64](w.PrefScore); err != nil {
		return nil, fail(id, "pref_score", err)
	}
	for k, s := range t.PrefScore {
		if s != nil && (*s < 0 || *s > 3) {
			return nil, fail(id, fmt.Sprintf("pref_score[%d]", k), fmt.Errorf("%g is outside [0, 3]", *s))
		}
	}
	var prefs []*string
	if prefs, err = perLevel[string](w.Preference); err != nil {
		return nil, fail(id, "preference", err)
	}
	for k, p := range prefs {
		v := ""
		if p != nil {
			var ok bool
			if v, ok = NormalizePreference(*p); !ok {
				return nil, fail(id, fmt.Sprintf("preference[%d]", k), fmt.Errorf("%q is not tool or direct", *p))
			}
		}
		t.Preference = append(t.Preference, v)
	}
	if t.DirectAnswer, err = perLevel[string](w.DirectAnswer); err != nil {
		return nil, fail(id, "direct_answer", err)
	}
	if len(w.Elapse) > 0 && !bytes.Equal(w.Elapse, []byte("null")) {
		var k int
		if json.Unmarshal(w.Elapse, &k) != nil || k < 0 || k >= NumElapse {
			return nil, fail(id, "elapse", fmt.Errorf("%s is not an elapse level 0 to %d", w.Elapse, NumElapse-1))
		}
		t.Elapse = &k
	}
	if len(w.ToolCall) > 0 && !bytes.Equal(w.ToolCall, []byte("null")) {
		if w.ToolCall[0] == '[' {
			err = json.Unmarshal(w.ToolCall, &t.ToolCall)
		} else {
			var tc ToolCall
			err = json.Unmarshal(w.ToolCall, &tc)
			t.ToolCall = []ToolCall{tc}
		}
		if err != nil {
			return nil, fail(id, "tool_call", jsonscan.Wanting("a tool call object or a list of them", jsonscan.Explain("", w.ToolCall, err)))
		}
		for j, tc := range t.ToolCall {
			if tc.Function.Name == "" {
				return nil, fail(id, fmt.Sprintf("tool_call[%d].function.name", j), errors.New("missing"))
			}
			if tc.Type == "" {
				t.ToolCall[j].Type = "function"
			}
		}
	}
	return t, nil
}

// wireRecords holds decoded records between records, so that the storage
// of their message lists is reused rather than allocated for every record.
var wireRecords = sync.Pool{New: func() any { return new(wireRecord) }}

// putWireRecord clears w, keeping the storage of its message list, and
// returns it to wireRecords. Nothing that ParseTrajectory returns points
// into w: the messages are copied out of it.
func putWireRecord(w *wireRecord) {
	h := w.History[:cap(w.History)]
	clear(h)
	*w = wireRecord{History: h[:0]}
	wireRecords.Put(w)
}

// historyField names history[i] without formatting it unless an error needs it.
func historyField(i int) func() string {
	return func() string { return fmt.Sprintf("history[%d]", i) }
}

func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// unmarshalString and unmarshalTools take the fast decoder's path when they
// can and the general decoder's otherwise.
func unmarshalString(raw []byte) (string, error) {
	if v, ok := decodeString(raw); ok {
		return v, nil
	}
	var s string // on the heap, as the general decoder needs it, only here
	err := json.Unmarshal(raw, &s)
	return s, err
}

func unmarshalStrings(raw []byte, ss *[]string) error {
	l := newLexer(raw)
	defer l.release()
	var out []string
	_, err := l.array(func() error {
		s, err := l.str()
		out = append(out, s)
		return err
	})
	if err == nil && l.Peek() == jsonscan.End {
		*ss = out
		return nil
	}
	return json.Unmarshal(raw, ss)
}

func unmarshalTools(raw []byte, tools *[]Tool) error {
	if v, err := decodeTools(raw); err == nil {
		*tools = v
		return nil
	}
	*tools = nil
	return jsonscan.Explain("", raw, json.Unmarshal(raw, tools))
}

// decodeWire decodes a record with the fast decoder, falling back to the
// general one for anything unusual (and for its error messages).
func decodeWire(data []byte, w *wireRecord) error {
	if decodeRecord(data, w) == nil {
		return nil
	}
	*w = wireRecord{}
	return json.Unmarshal(data, w)
}

// perLevel decodes a field that is absent, one value for every elapse level,
// or a list of NumElapse values (null entries allowed).
func perLevel[T any](raw json.RawMessage) ([]*T, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '[' {
		var vs []*T
		if err := json.Unmarshal(raw, &vs); err != nil {
			return nil, jsonscan.Explain("", raw, err)
		}
		if len(vs) != 1 && len(vs) != NumElapse {
			return nil, fmt.Errorf("a list of %d values: want one value for every level or a list of %d (one per elapse level)", len(vs), NumElapse)
		}
		return vs, nil
	}
	var v T
	if sp, ok := any(&v).(*string); ok {
		if s, ok := decodeString(raw); ok {
			*sp = s
			return []*T{&v}, nil
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		err = jsonscan.Explain("", raw, err)
		var de *jsonscan.DecodeError
		if errors.As(err, &de) && de.Want != "" {
			err = jsonscan.Wanting(fmt.Sprintf("%s or a list of %d (one per elapse level)", de.Want, NumElapse), err)
		}
		return nil, err
	}
	return []*T{&v}, nil
}

// peekID makes a best effort to read the id of a record that failed to
// decode, so the error can still name it.
func peekID(data []byte) string {
	var probe struct {
		ID string `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&probe) == nil {
		return probe.ID
	}
	return ""
}

// NormalizeSensitivity maps accepted spellings to low, medium or high.
func NormalizeSensitivity(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low":
		return "low", true
	case "medium", "mid":
		return "medium", true
	case "high":
		return "high", true
	}
	return "", false
}

// Preference classes.
const (
	PreferTool   = "tool"
	PreferDirect = "direct"
)

// NormalizePreference maps accepted spellings to PreferTool or PreferDirect.
func NormalizePreference(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "tool", "prefertool", "prefer_tool", "prefer-tool":
		return PreferTool, true
	case "direct", "notool", "prefernotool", "prefer_notool", "prefer-notool", "no_tool":
		return PreferDirect, true
	}
	return "", false
}

// idKeys is the one member RecordID looks for.
var idKeys = jsonscan.Keys{"id"}

// RecordID reads a record's top-level "id" string without decoding the
// rest of the record, so that a shard can pass over the records of other
// shards cheaply. When ok, id is the id ParseTrajectory reads. It is not ok
// when the record is not a JSON object, has no "id" string, names it twice
// or with other letter case (encoding/json's case folding is left to the
// full decoder), or is malformed: the caller then parses the record, which
// reports what is wrong.
func RecordID(data []byte) (id string, ok bool) {
	var s jsonscan.Scanner
	s.Reset(data)
	if s.Expect('{', "") != nil || s.Peek() == '}' {
		return "", false
	}
	for {
		if s.Peek() != '"' {
			return "", false
		}
		key, err := s.ReadString()
		if err != nil {
			return "", false
		}
		idx, folded := idKeys.Index(key)
		if folded || s.Expect(':', "") != nil {
			return "", false
		}
		if idx == 0 {
			if ok || s.Peek() != '"' {
				return "", false
			}
			v, err := s.ReadString()
			if err != nil {
				return "", false
			}
			id, ok = string(v), true
		} else if s.SkipValue(1) != nil {
			return "", false
		}
		more, err := s.More('}', "")
		if err != nil {
			return "", false
		}
		if !more {
			return id, ok
		}
	}
}
