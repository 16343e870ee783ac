package benchmarks

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Summary counts what an import found.
type Summary struct {
	// Files is the number of files read; Records their records.
	Files   int `json:"files"`
	Records int `json:"records"`
	// Converted counts the records written, NotConverted the others by
	// cause.
	Converted    int            `json:"converted"`
	NotConverted map[string]int `json:"not_converted"`
	// RepairedRecords counts the records with bytes that were not UTF-8
	// and were decoded as Windows-1252, RepairedBytes those bytes.
	RepairedRecords int `json:"repaired_records"`
	RepairedBytes   int `json:"repaired_bytes"`
}

func newSummary() *Summary { return &Summary{Files: 1, NotConverted: map[string]int{}} }

// Add adds o's counts to s.
func (s *Summary) Add(o *Summary) {
	s.Files += o.Files
	s.Records += o.Records
	s.Converted += o.Converted
	s.RepairedRecords += o.RepairedRecords
	s.RepairedBytes += o.RepairedBytes
	if s.NotConverted == nil {
		s.NotConverted = map[string]int{}
	}
	for k, v := range o.NotConverted {
		s.NotConverted[k] += v
	}
}

// String is the summary's line: "3 records converted, 2 not converted
// (missing 1, wrong_kind 1)", and the repairs when there were some.
func (s *Summary) String() string {
	not := 0
	var causes []string
	for _, k := range slices.Sorted(maps.Keys(s.NotConverted)) {
		not += s.NotConverted[k]
		causes = append(causes, fmt.Sprintf("%s %d", k, s.NotConverted[k]))
	}
	line := fmt.Sprintf("%d records converted, %d not converted", s.Converted, not)
	if not > 0 {
		line += " (" + strings.Join(causes, ", ") + ")"
	}
	if s.RepairedBytes > 0 {
		line += fmt.Sprintf("; %d bytes in %d records were not UTF-8 and were read as Windows-1252", s.RepairedBytes, s.RepairedRecords)
	}
	return line
}

// object is a record's fields, with getters whose errors name the field.
type object map[string]json.RawMessage

// shown is a value as the user reads it in a message, cut short.
func shown(raw json.RawMessage) string {
	var b bytes.Buffer
	s := string(bytes.TrimSpace(raw))
	if json.Compact(&b, raw) == nil {
		s = strings.NewReplacer(`","`, `", "`, `,"`, `, "`).Replace(b.String())
	}
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return s
}

// str is the string field key.
func (o object) str(key string) (string, *fieldError) {
	raw, ok := o[key]
	if !ok {
		return "", fieldErr(CauseMissing, key, "missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fieldErr(CauseWrongKind, key, "want a string, got %s", shown(raw))
	}
	return s, nil
}

// text is the non-empty string field key.
func (o object) text(key string) (string, *fieldError) {
	s, fe := o.str(key)
	if fe == nil && strings.TrimSpace(s) == "" {
		return "", fieldErr(CauseEmpty, key, "empty")
	}
	return s, fe
}

// optStr is the string field key, "" when it is not there or null.
func (o object) optStr(key string) (string, *fieldError) {
	if raw, ok := o[key]; !ok || string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	return o.str(key)
}

// id is the id field key, a string or a number, "" when absent or wrong.
func (o object) id(key string) string {
	raw := bytes.TrimSpace(o[key])
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// strList decodes raw, the field key, as a non-empty list of strings.
func strList(key string, raw json.RawMessage, present bool) ([]string, *fieldError) {
	if !present {
		return nil, fieldErr(CauseMissing, key, "missing")
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, fieldErr(CauseWrongKind, key, "want a list of strings, got %s", shown(raw))
	}
	if len(list) == 0 {
		return nil, fieldErr(CauseEmpty, key, "an empty list: want at least one answer")
	}
	return list, nil
}

// jsonRecords calls convert with each record of s: JSON lines (the
// released ".json" files of TimeQA and TempReason) or one JSON array (Test
// of Time's), told apart by the first byte after white space. A line or
// element that is not a JSON object is a record not converted; a file that
// holds no JSON record at all is the file's error.
func jsonRecords(ctx context.Context, s *source, f *fileRun, convert func(index int, o object) error) error {
	first, err := s.skipSpace()
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: no records", f.path)
	case err != nil:
		return s.readError(err)
	case first == '[':
		return jsonArray(ctx, s, f, convert)
	case first != '{':
		return fmt.Errorf("%s: not JSON: want JSON lines or a JSON array of records", f.path)
	}
	return jsonLines(ctx, s, f, convert)
}

// jsonLines is jsonRecords for JSON lines, read one line at a time; blank
// lines are not records.
func jsonLines(ctx context.Context, s *source, f *fileRun, convert func(index int, o object) error) error {
	index, objects := 0, 0
	var firstErr error
	for {
		line, err := s.line()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.readError(err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var o object
		if uerr := json.Unmarshal(line, &o); uerr != nil || o == nil {
			msg := "not a JSON object"
			if uerr != nil {
				msg += ": " + plainJSONError(uerr)
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: line %d: %s", f.path, index+1, msg)
			}
			err = f.done(index, "", nil, fieldErr(CauseNotJSON, "", "%s", msg), 0)
		} else {
			objects++
			err = convert(index, o)
		}
		if err != nil {
			return err
		}
		index++
	}
	if objects == 0 {
		return fmt.Errorf("%s: not JSON lines: no line is a record: %w", f.path, firstErr)
	}
	return nil
}

// jsonArray is jsonRecords for one JSON array, decoded one element at a
// time. A record that does not parse ends the reading: the file is cut
// short or broken there.
func jsonArray(ctx context.Context, s *source, f *fileRun, convert func(index int, o object) error) error {
	dec := json.NewDecoder(&spaceHolder{r: s.Reader})
	if _, err := dec.Token(); err != nil {
		if ferr := s.fail(); ferr != nil {
			return ferr
		}
		return fmt.Errorf("%s: not JSON: %s", f.path, plainJSONError(err))
	}
	index := 0
	for dec.More() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if s.fail() != nil || index == 0 {
				return notArray(s, f, err)
			}
			fe := fieldErr(CauseNotJSON, "", "not JSON: %s; the records after it are not read", plainJSONError(err))
			if errors.Is(err, io.ErrUnexpectedEOF) {
				fe = fieldErr(CauseTruncated, "", "the file ends inside the record")
			}
			return f.done(index, "", nil, fe, 0)
		}
		var o object
		var err error
		if json.Unmarshal(raw, &o) != nil || o == nil {
			err = f.done(index, "", nil, fieldErr(CauseNotJSON, "", "want a JSON object, got %s", shown(raw)), 0)
		} else {
			err = convert(index, o)
		}
		if err != nil {
			return err
		}
		index++
	}
	if _, err := dec.Token(); err != nil {
		if s.fail() != nil || index == 0 {
			return notArray(s, f, err)
		}
		return f.done(index, "", nil, fieldErr(CauseTruncated, "", "the file ends before the array is closed"), 0)
	}
	if index == 0 {
		return fmt.Errorf("%s: no records: an empty array", f.path)
	}
	return nil
}

// notArray is the file's error when decoding its array failed with err
// before a record was read, or when reading the file failed.
func notArray(s *source, f *fileRun, err error) error {
	if ferr := s.fail(); ferr != nil {
		return ferr
	}
	return fmt.Errorf("%s: not a JSON array of records: %s", f.path, plainJSONError(err))
}

// plainJSONError says a decoder's error without the decoder's words for Go
// types.
func plainJSONError(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && !strings.Contains(se.Error(), "unexpected end"):
		return fmt.Sprintf("%s (byte %d)", se.Error(), se.Offset)
	case se != nil, errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the text ends too soon"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "a value of the wrong kind: " + te.Value
	}
	return err.Error()
}

// repairUTF8 returns s with every byte that is not UTF-8 decoded as
// Windows-1252 (0x92 is ’), and the number of bytes it decoded.
func repairUTF8(s string) (string, int) {
	if utf8.ValidString(s) {
		return s, 0
	}
	var b strings.Builder
	n := 0
	dec := charmap.Windows1252.DecodeByte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(dec(s[i]))
			n++
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String(), n
}

// csvRow is one data row of a CSV file: its fields by the header's names.
type csvRow struct {
	fields   map[string]string
	repaired int
	line     int
}

// csvRecords reads s, a CSV file with a header, and calls convert with
// each data row whose fields parse and match the header in number; the
// others are records not converted. A file without a header, or whose
// header lacks one of need, is the file's error, and so is onHeader's.
func csvRecords(ctx context.Context, s *source, f *fileRun, need []string, onHeader func([]string) error,
	convert func(index int, header []string, row csvRow) error) error {
	r := csv.NewReader(s.Reader)
	r.FieldsPerRecord = -1
	header, err := csvHeader(r, s, f, need)
	if err != nil {
		return err
	}
	if err := onHeader(header); err != nil {
		return err
	}
	for index := 0; ; index++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if ferr := s.fail(); ferr != nil {
			return ferr
		}
		line := 0
		var fe *fieldError
		if err != nil {
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				line = pe.StartLine
			}
			fe = fieldErr(CauseBadRow, "", "line %d: %s", line, plainCSVError(err))
		} else if line, _ = r.FieldPos(0); len(rec) != len(header) {
			fe = fieldErr(CauseBadRow, "", "line %d: want %d fields as in the header, got %d", line, len(header), len(rec))
		}
		if fe != nil {
			err = f.done(index, "", nil, fe, 0)
		} else {
			err = convert(index, header, newCSVRow(header, rec, line))
		}
		if err != nil {
			return err
		}
	}
}

// csvHeader reads the header of a CSV file, its names trimmed and
// repaired, and checks it has each column of need.
func csvHeader(r *csv.Reader, s *source, f *fileRun, need []string) ([]string, error) {
	header, err := r.Read()
	if err != nil {
		if ferr := s.fail(); ferr != nil {
			return nil, ferr
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no records: an empty file", f.path)
		}
		return nil, fmt.Errorf("%s: not CSV: the header: %s", f.path, plainCSVError(err))
	}
	for i, h := range header {
		header[i], _ = repairUTF8(strings.TrimSpace(h))
	}
	for _, n := range need {
		if !slices.Contains(header, n) {
			return nil, fmt.Errorf("%s: not a %s CSV file: the header %q has no %s column", f.path, f.b.Name, strings.Join(header, ","), n)
		}
	}
	return header, nil
}

// newCSVRow is the row of rec, whose fields match header in number, at
// line: its fields repaired, and the bytes repaired counted.
func newCSVRow(header, rec []string, line int) csvRow {
	row := csvRow{fields: map[string]string{}, line: line}
	for i, v := range rec {
		v, n := repairUTF8(v)
		row.fields[header[i]] = v
		row.repaired += n
	}
	return row
}

// plainCSVError is a CSV reader's error without the reader's line prefix.
func plainCSVError(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// jsonText is v as JSON text, without HTML escapes.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("benchmarks: " + err.Error()) // strings, maps and raw JSON always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}
