package splits

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// FieldSet is the column paths a dataset has: its top-level columns, the
// fields of its structs (a.b), and the fields of the structs in its lists
// (prompt.content). A JSONL file's are those of its first row.
type FieldSet struct {
	top   []string
	paths map[string]bool
	// empty is true for a JSONL file without a row, which has no columns.
	empty bool
}

// Has reports whether the dataset has the column path p (a role filter,
// prompt:user, is ignored).
func (f *FieldSet) Has(p string) bool {
	if i := strings.LastIndexByte(p, ':'); i >= 0 {
		p = p[:i]
	}
	return f.paths[strings.TrimSpace(p)]
}

// Top lists the top-level columns, in the dataset's order.
func (f *FieldSet) Top() []string { return slices.Clone(f.top) }

// Fields reads the column paths of the dataset file at path.
func Fields(path string) (*FieldSet, error) {
	format, ok := dataset.ForPath(path)
	if !ok {
		return nil, fmt.Errorf("splits: %s: unknown dataset format (want a .parquet, .arrow or .jsonl file)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("splits: %w", err)
	}
	defer f.Close()
	fs := &FieldSet{paths: map[string]bool{}}
	if format == dataset.JSONL {
		lines := jsonscan.NewLineReader(f)
		for {
			line, n, err := lines.Next()
			if err == io.EOF {
				fs.empty = true // an empty file has no columns
				return fs, nil
			}
			if err != nil {
				return nil, fmt.Errorf("splits: %s: line %d: %w", path, n, err)
			}
			if strings.TrimSpace(string(line)) == "" {
				continue
			}
			var obj map[string]any
			dec := json.NewDecoder(strings.NewReader(string(line)))
			dec.UseNumber()
			if err := dec.Decode(&obj); err != nil {
				return nil, fmt.Errorf("splits: %s: line %d: %w", path, n, jsonscan.Explain("", line, err))
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			fs.top = keys
			for _, k := range keys {
				fs.addJSON(k, obj[k])
			}
			return fs, nil
		}
	}
	rr, err := dataset.Open(f, path, format, dataset.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("splits: %w", err)
	}
	defer rr.Close()
	for _, fld := range rr.Schema().Fields() {
		fs.top = append(fs.top, fld.Name)
		fs.addArrow(fld.Name, fld.Type)
	}
	return fs, nil
}

func (f *FieldSet) addJSON(p string, v any) {
	f.paths[p] = true
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			f.addJSON(p+"."+k, x)
		}
	case []any:
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				for k, y := range m {
					f.addJSON(p+"."+k, y)
				}
			}
		}
	}
}

func (f *FieldSet) addArrow(p string, t arrow.DataType) {
	f.paths[p] = true
	switch t := t.(type) {
	case *arrow.StructType:
		for _, fld := range t.Fields() {
			f.addArrow(p+"."+fld.Name, fld.Type)
		}
	case arrow.ListLikeType:
		if st, ok := t.Elem().(*arrow.StructType); ok {
			for _, fld := range st.Fields() {
				f.addArrow(p+"."+fld.Name, fld.Type)
			}
		}
	}
}
