package splits

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// arrowGetter appends the text values of row i of a column path to out.
type arrowGetter func(i int, out []string) []string

// compileArrow builds the getter of the path segs (below the column arr,
// named at for messages), keeping only messages of role when role is set.
func compileArrow(arr arrow.Array, segs []string, role, at string) (arrowGetter, error) {
	if len(segs) == 0 {
		return leafArrow(arr, role, at)
	}
	switch a := arr.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		idx, ok := st.FieldIdx(segs[0])
		if !ok {
			return nil, fmt.Errorf("%s has no field %q (fields: %s)", at, segs[0], fieldNames(st))
		}
		g, err := compileArrow(a.Field(idx), segs[1:], role, at+"."+segs[0])
		if err != nil {
			return nil, err
		}
		return func(i int, out []string) []string {
			if a.IsNull(i) {
				return out
			}
			return g(i, out)
		}, nil
	case array.ListLike:
		g, err := compileArrow(a.ListValues(), segs, role, at+"[]")
		if err != nil {
			return nil, err
		}
		return eachElement(a, g), nil
	}
	return nil, fmt.Errorf("%s is %s: it has no field %q", at, arr.DataType(), segs[0])
}

// eachElement applies g to every element of row i of a list.
func eachElement(a array.ListLike, g arrowGetter) arrowGetter {
	return func(i int, out []string) []string {
		if a.IsNull(i) {
			return out
		}
		start, end := a.ValueOffsets(i)
		for k := start; k < end; k++ {
			out = g(int(k), out)
		}
		return out
	}
}

func fieldNames(st *arrow.StructType) string {
	names := make([]string, st.NumFields())
	for i, f := range st.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// leafArrow builds the getter of a value's text: strings as they are,
// numbers and booleans as written, lists element by element, messages
// their content.
func leafArrow(arr arrow.Array, role, at string) (arrowGetter, error) {
	switch a := arr.(type) {
	case *array.String:
		return strGetter(a.IsNull, a.Value), nil
	case *array.LargeString:
		return strGetter(a.IsNull, a.Value), nil
	case *array.StringView:
		return strGetter(a.IsNull, a.Value), nil
	case *array.Dictionary:
		dict, err := leafArrow(a.Dictionary(), "", at)
		if err != nil {
			return nil, err
		}
		return func(i int, out []string) []string {
			if a.IsNull(i) {
				return out
			}
			return dict(a.GetValueIndex(i), out)
		}, nil
	case *array.Null:
		return func(_ int, out []string) []string { return out }, nil
	case array.ListLike:
		g, err := leafArrow(a.ListValues(), role, at+"[]")
		if err != nil {
			return nil, err
		}
		return eachElement(a, g), nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		ci, ok := st.FieldIdx("content")
		if !ok {
			return nil, fmt.Errorf("%s is a struct without a content field (fields: %s): name one of its fields", at, fieldNames(st))
		}
		content, err := leafArrow(a.Field(ci), "", at+".content")
		if err != nil {
			return nil, err
		}
		var keep func(i int) bool
		if role != "" {
			ri, ok := st.FieldIdx("role")
			if !ok {
				return nil, fmt.Errorf("%s has no role field to keep %q messages by", at, role)
			}
			roles, err := leafArrow(a.Field(ri), "", at+".role")
			if err != nil {
				return nil, err
			}
			var buf []string
			keep = func(i int) bool {
				buf = roles(i, buf[:0])
				return len(buf) == 1 && buf[0] == role
			}
		}
		return func(i int, out []string) []string {
			if a.IsNull(i) || keep != nil && !keep(i) {
				return out
			}
			return content(i, out)
		}, nil
	}
	switch arr.DataType().ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return func(i int, out []string) []string {
			if arr.IsNull(i) {
				return out
			}
			return append(out, arr.ValueStr(i))
		}, nil
	}
	return nil, fmt.Errorf("%s is %s, which has no text", at, arr.DataType())
}

func strGetter(isNull func(int) bool, value func(int) string) arrowGetter {
	return func(i int, out []string) []string {
		if isNull(i) {
			return out
		}
		return append(out, value(i))
	}
}

// jsonWalker extracts column paths from JSON lines.
type jsonWalker struct {
	s     jsonscan.Scanner
	root  *jsonNode
	paths []colPath // the paths root was built for
	vals  [][]string
}

// jsonNode is a step of the path trie: the paths that end at it and the
// fields that go on.
type jsonNode struct {
	ends     []int // indexes of the paths ending here
	children map[string]*jsonNode
}

func (w *jsonWalker) build(paths []colPath) {
	w.paths = paths
	w.root = &jsonNode{}
	for k, p := range paths {
		n := w.root
		for _, seg := range p.segs {
			if n.children == nil {
				n.children = map[string]*jsonNode{}
			}
			c := n.children[seg]
			if c == nil {
				c = &jsonNode{}
				n.children[seg] = c
			}
			n = c
		}
		n.ends = append(n.ends, k)
	}
}

// extract returns the values of paths in one line, an object. A path
// missing from the line has no values.
func (w *jsonWalker) extract(line []byte, paths []colPath) ([][]string, error) {
	if w.root == nil || len(w.paths) != len(paths) {
		w.build(paths)
	}
	w.vals = make([][]string, len(paths))
	w.s.ResetLine(line)
	if w.s.Peek() != '{' {
		desc, err := w.s.Describe()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("want a JSON object, got %s", desc)
	}
	if err := w.walk(w.root, 0, true); err != nil {
		return nil, err
	}
	if w.s.Peek() != jsonscan.End {
		return nil, w.s.SyntaxError("after the object")
	}
	return w.vals, nil
}

// walk reads the value at the scanner for node n: into the fields that
// paths go on in (in each element of an array), and, when ends is set, as
// text for the paths that end at n.
func (w *jsonWalker) walk(n *jsonNode, depth int, ends bool) error {
	if depth > jsonscan.MaxDepth {
		return jsonscan.SyntaxError{Err: jsonscan.ErrTooDeep}
	}
	c := w.s.Peek()
	start := w.s.Pos()
	switch {
	case c == '{' && len(n.children) > 0:
		w.s.Skip(1)
		if w.s.Peek() == '}' {
			w.s.Skip(1)
			break
		}
		for {
			if w.s.Peek() != '"' {
				return w.s.SyntaxError("looking for beginning of object key string")
			}
			key, err := w.s.ReadString()
			if err != nil {
				return err
			}
			child := n.children[string(key)]
			if err := w.s.Expect(':', "after object key"); err != nil {
				return err
			}
			if child == nil {
				err = w.s.SkipValue(depth + 1)
			} else {
				err = w.walk(child, depth+1, true)
			}
			if err != nil {
				return err
			}
			if more, err := w.s.More('}', "after object key:value pair"); !more {
				if err != nil {
					return err
				}
				break
			}
		}
	case c == '[' && len(n.children) > 0:
		w.s.Skip(1)
		if w.s.Peek() == ']' {
			w.s.Skip(1)
			break
		}
		for {
			if err := w.walk(n, depth+1, false); err != nil {
				return err
			}
			if more, err := w.s.More(']', "after array element"); !more {
				if err != nil {
					return err
				}
				break
			}
		}
	default:
		if err := w.s.SkipValue(depth); err != nil {
			return err
		}
	}
	if !ends || len(n.ends) == 0 {
		return nil
	}
	raw := w.s.Bytes(start, w.s.Pos())
	for _, k := range n.ends {
		var err error
		if w.vals[k], err = jsonText(raw, w.paths[k].role, w.vals[k]); err != nil {
			return fmt.Errorf("%s: %w", w.paths[k].raw, err)
		}
	}
	return nil
}

// jsonText appends the text of the JSON value raw: a string as it is, a
// number or boolean as written, an array element by element, a message
// (an object with content, or a content part with text) its text.
func jsonText(raw []byte, role string, out []string) ([]string, error) {
	var s jsonscan.Scanner
	s.Reset(raw)
	return textValue(&s, role, out, 0)
}

func textValue(s *jsonscan.Scanner, role string, out []string, depth int) ([]string, error) {
	if depth > jsonscan.MaxDepth {
		return out, jsonscan.SyntaxError{Err: jsonscan.ErrTooDeep}
	}
	switch c := s.Peek(); {
	case c == '"':
		v, err := s.ReadString()
		if err != nil {
			return out, err
		}
		return append(out, string(v)), nil
	case jsonscan.IsNumberStart(c):
		v, err := s.ReadNumber()
		if err != nil {
			return out, err
		}
		return append(out, string(v)), nil
	case c == 't':
		return append(out, "true"), s.Literal("true")
	case c == 'f':
		return append(out, "false"), s.Literal("false")
	case c == 'n':
		return out, s.Literal("null")
	case c == '[':
		s.Skip(1)
		if s.Peek() == ']' {
			s.Skip(1)
			return out, nil
		}
		for {
			var err error
			if out, err = textValue(s, role, out, depth+1); err != nil {
				return out, err
			}
			more, err := s.More(']', "after array element")
			if !more {
				return out, err
			}
		}
	case c == '{':
		return messageText(s, role, out, depth)
	}
	return out, s.SyntaxError("looking for beginning of value")
}

// messageText reads an object as a message {role, content} or a content
// part {type, text}.
func messageText(s *jsonscan.Scanner, role string, out []string, depth int) ([]string, error) {
	s.Skip(1)
	var gotRole string
	var content []string
	has := false
	if s.Peek() == '}' {
		s.Skip(1)
		return out, errors.New("an object without content: name one of its fields")
	}
	for {
		if s.Peek() != '"' {
			return out, s.SyntaxError("looking for beginning of object key string")
		}
		key, err := s.ReadString()
		if err != nil {
			return out, err
		}
		k := string(key)
		if err := s.Expect(':', "after object key"); err != nil {
			return out, err
		}
		switch k {
		case "content", "text":
			has = true
			if content, err = textValue(s, "", content, depth+1); err != nil {
				return out, err
			}
		case "role":
			var r []string
			if r, err = textValue(s, "", nil, depth+1); err != nil {
				return out, err
			}
			if len(r) == 1 {
				gotRole = r[0]
			}
		default:
			if err := s.SkipValue(depth + 1); err != nil {
				return out, err
			}
		}
		more, err := s.More('}', "after object key:value pair")
		if !more {
			if err != nil {
				return out, err
			}
			break
		}
	}
	if !has {
		return out, errors.New("an object without content: name one of its fields")
	}
	if role != "" && gotRole != role {
		return out, nil
	}
	return append(out, content...), nil
}
