package splits

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// RowColumns are the dataset columns the gate reads: the metadata and the
// prompt, whose messages' contents make a row's Text.
var RowColumns = []string{"id", "scenario", "sensitivity", "label", "split", "prompt"}

// RecordRows turns a record batch of a pairs dataset (with at least
// RowColumns) into gate rows. first is the 1-based index of the batch's
// first row within file; rows with a null split get defaultSplit.
func RecordRows(rec arrow.Record, file string, first int, defaultSplit string) ([]Row, error) {
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("splits: %s: no column %q", file, name)
		}
		return rec.Column(idx[0]), nil
	}
	strs := map[string]*array.String{}
	for _, name := range RowColumns[:5] {
		a, err := col(name)
		if err != nil {
			return nil, err
		}
		s, ok := a.(*array.String)
		if !ok {
			return nil, fmt.Errorf("splits: %s: column %q is %s, want string", file, name, a.DataType())
		}
		strs[name] = s
	}
	pa, err := col("prompt")
	if err != nil {
		return nil, err
	}
	prompt, ok := pa.(*array.List)
	if !ok {
		return nil, fmt.Errorf("splits: %s: column \"prompt\" is %s, want a list of messages", file, pa.DataType())
	}
	msgs, ok := prompt.ListValues().(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("splits: %s: column \"prompt\" is %s, want a list of messages", file, pa.DataType())
	}
	st := msgs.DataType().(*arrow.StructType)
	ci, ok := st.FieldIdx("content")
	if !ok {
		return nil, fmt.Errorf("splits: %s: prompt messages have no content field", file)
	}
	content, ok := msgs.Field(ci).(*array.String)
	if !ok {
		return nil, fmt.Errorf("splits: %s: prompt content is %s, want string", file, msgs.Field(ci).DataType())
	}
	get := func(name string, i int) string {
		a := strs[name]
		if a.IsNull(i) {
			return ""
		}
		return a.Value(i)
	}
	rows := make([]Row, rec.NumRows())
	var b strings.Builder
	for i := range rows {
		b.Reset()
		if prompt.IsValid(i) {
			start, end := prompt.ValueOffsets(i)
			for k := start; k < end; k++ {
				if content.IsNull(int(k)) {
					continue
				}
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(content.Value(int(k)))
			}
		}
		split := get("split", i)
		if split == "" {
			split = defaultSplit
		}
		rows[i] = Row{
			File: file, Index: first + i, ID: get("id", i), Scenario: get("scenario", i),
			Sensitivity: get("sensitivity", i), Label: get("label", i), Split: split, Text: b.String(),
		}
	}
	return rows, nil
}

// SplitFromName guesses a file's side from its name: a base name ending in
// -train or _train (before the extension), or equal to train, is Train;
// likewise for test. It returns "" when the name says neither.
func SplitFromName(name string) string {
	base := name
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToLower(base)
	for _, side := range []string{Train, Test} {
		if base == side || strings.HasSuffix(base, "-"+side) || strings.HasSuffix(base, "_"+side) {
			return side
		}
	}
	return ""
}
