package splits

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

// itRows are the rows of a small VeRL-like dataset, as JSON lines.
const itRows = `{"uid":"q1","n":3,"topic":"tides","split":"train","prompt":[{"role":"system","content":"Be brief."},{"role":"user","content":"When is high tide?"}],"meta":{"tags":["sea","time"],"source":{"name":"almanac"}},"answer":"at noon"}
{"uid":"q2","n":4,"topic":"trains","split":"test","prompt":[{"role":"user","content":"Which train is first?"}],"meta":{"tags":[],"source":{"name":"timetable"}},"answer":null}

{"uid":"q3","n":5,"topic":null,"split":"train","prompt":[],"meta":null,"answer":"none"}
`

var itSchema = arrow.NewSchema([]arrow.Field{
	{Name: "uid", Type: arrow.BinaryTypes.String},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "topic", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "split", Type: arrow.BinaryTypes.String},
	{Name: "prompt", Type: arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.String},
	))},
	{Name: "meta", Type: arrow.StructOf(
		arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		arrow.Field{Name: "source", Type: arrow.StructOf(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String})},
	), Nullable: true},
	{Name: "answer", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// itWrite writes itRows in the format of path's extension: JSONL as it is
// (blank line included), Parquet and Arrow through the dataset writers.
func itWrite(t *testing.T, path string) string {
	t.Helper()
	format, ok := dataset.ForPath(path)
	require.True(t, ok)
	if format == dataset.JSONL {
		require.NoError(t, os.WriteFile(path, []byte(itRows), 0o644))
		return path
	}
	jr, err := dataset.JSONL.NewReader(strings.NewReader(itRows), dataset.ReadOptions{Schema: itSchema})
	require.NoError(t, err)
	defer jr.Close()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, itSchema, dataset.Options{RowGroupRows: 2})
	require.NoError(t, err)
	for {
		rec, err := jr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// itRead reads every row of the inputs.
func itRead(t *testing.T, ins []Input) ([]Row, error) {
	t.Helper()
	it, err := Source(ins)()
	require.NoError(t, err)
	defer it.Close()
	var rows []Row
	for {
		r, err := it.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
}

func TestInputColumnsInEveryFormat(t *testing.T) {
	cols := &Columns{
		Text:  []string{"prompt:user", "meta.tags", "meta.source.name", "n"},
		Group: "topic", ID: []string{"uid", "n"}, Split: "split", Label: "answer",
	}
	dir := t.TempDir()
	var want []Row
	for _, name := range []string{"d.jsonl", "d.parquet", "d.arrow"} {
		path := itWrite(t, filepath.Join(dir, name))
		rows, err := itRead(t, []Input{{Path: path, Columns: cols}})
		require.NoError(t, err, name)
		for i := range rows {
			rows[i].File = ""
			if name == "d.jsonl" && rows[i].Index == 4 {
				rows[i].Index = 3 // the blank line: JSONL rows are numbered by line
			}
		}
		if want == nil {
			want = rows
			continue
		}
		assert.Equal(t, want, rows, "%s reads as JSONL does", name)
	}
	assert.Equal(t, []Row{
		{Index: 1, Side: Train, ID: "q1 (n 3)", Source: "q1", Group: "tides", Label: "at noon",
			Text: "When is high tide?\nsea\ntime\nalmanac\n3"},
		{Index: 2, Side: Test, ID: "q2 (n 4)", Source: "q2", Group: "trains",
			Text: "Which train is first?\ntimetable\n4"},
		{Index: 3, Side: Train, ID: "q3 (n 5)", Source: "q3", Label: "none", Text: "5"},
	}, want, "a file whose name says no side takes each row's split column")

	// A file with a side: the row's split is kept to be checked against it.
	path := itWrite(t, filepath.Join(dir, "x.jsonl"))
	rows, err := itRead(t, []Input{{Path: path, Side: Test, Columns: cols}})
	require.NoError(t, err)
	assert.Equal(t, []string{Test, Test, Test}, []string{rows[0].Side, rows[1].Side, rows[2].Side})
	assert.Equal(t, []string{"train", "test", "train"}, []string{rows[0].SplitLabel, rows[1].SplitLabel, rows[2].SplitLabel})
	// An outside evaluation set keeps none.
	rows, err = itRead(t, []Input{{Path: path, Side: Against, Columns: cols}})
	require.NoError(t, err)
	assert.Equal(t, "", rows[0].SplitLabel)

	// The whole prompt, system turn included.
	rows, err = itRead(t, []Input{{Path: path, Side: Train, Columns: &Columns{Text: []string{"prompt"}}}})
	require.NoError(t, err)
	assert.Equal(t, "Be brief.\nWhen is high tide?", rows[0].Text)
	rows, err = itRead(t, []Input{{Path: path, Side: Train, Columns: &Columns{Text: []string{"prompt.content"}}}})
	require.NoError(t, err)
	assert.Equal(t, "Be brief.\nWhen is high tide?", rows[0].Text)
}

// TestInputSkipTexts reads files of some sides without their texts, as
// the gate's second pass does: their rows are the same but for Text; a
// file whose rows say their side, or that has only text columns, keeps it.
func TestInputSkipTexts(t *testing.T) {
	cols := &Columns{Text: []string{"prompt:user", "meta.tags"}, Group: "topic", ID: []string{"uid", "n"}, Split: "split", Label: "answer"}
	dir := t.TempDir()
	for _, name := range []string{"d.jsonl", "d.parquet", "d.arrow"} {
		path := itWrite(t, filepath.Join(dir, name))
		ins := []Input{{Path: path, Side: Train, Columns: cols}, {Path: path, Side: Test, Columns: cols},
			{Path: path, Side: Against, Columns: cols}, {Path: path, Columns: cols},
			{Path: path, Side: Test, Columns: &Columns{Text: []string{"prompt"}}}}
		all, err := itRead(t, ins)
		require.NoError(t, err, name)
		it, err := Source(ins)()
		require.NoError(t, err)
		it.(textSkipper).skipTexts(Test, Against)
		var rows []Row
		for {
			r, err := it.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, name)
			rows = append(rows, r)
		}
		require.NoError(t, it.Close())
		require.Len(t, rows, len(all), name)
		require.NotEmpty(t, all[3].Text, name)
		for i := range all {
			want := all[i]
			if i >= 3 && i < 9 { // the test and outside files
				want.Text = ""
			}
			assert.Equal(t, want, rows[i], "%s row %d", name, i)
		}
		assert.NotEmpty(t, rows[12].Text, "%s: a file with only text columns keeps them", name)
	}
}

func TestInputErrors(t *testing.T) {
	dir := t.TempDir()
	jsonl := itWrite(t, filepath.Join(dir, "d.jsonl"))
	pq := itWrite(t, filepath.Join(dir, "d.parquet"))
	for _, tc := range []struct {
		name string
		path string
		cols Columns
		side string
		want string
	}{
		{"missing column", pq, Columns{Text: []string{"question"}}, Train, `column "question" not found (columns: uid, n, topic, split, prompt, meta, answer)`},
		{"missing field", pq, Columns{Text: []string{"meta.nope"}}, Train, `meta has no field "nope" (fields: tags, source)`},
		{"field of a string", pq, Columns{Text: []string{"uid.x"}}, Train, "uid is utf8: it has no field \"x\""},
		{"struct without content", pq, Columns{Text: []string{"meta"}}, Train, "meta is a struct without a content field (fields: tags, source): name one of its fields"},
		{"json object without content", jsonl, Columns{Text: []string{"meta"}}, Train, "line 1: meta: an object without content: name one of its fields"},
		{"list as an id", pq, Columns{Text: []string{"uid"}, ID: []string{"meta.tags"}}, Train, "row 1: column meta.tags holds 2 values; want one"},
		{"list as an id (json)", jsonl, Columns{Text: []string{"uid"}, ID: []string{"meta.tags"}}, Train, "d.jsonl: row 1: column meta.tags holds 2 values; want one"},
		{"no side, no split column", pq, Columns{Text: []string{"uid"}, ID: []string{"uid"}}, "", "d.parquet: row 1 (id q1): the file's name does not say train or test, and it has no split column"},
		{"no side, odd split", pq, Columns{Text: []string{"uid"}, Split: "answer"}, "", `row 1 (id ): the file's name does not say train or test, and its split column answer says "at noon"`},
		{"empty path", pq, Columns{Text: []string{"a..b"}}, Train, `text column "a..b": empty field name`},
		{"role on an id", pq, Columns{Text: []string{"uid"}, ID: []string{"prompt:user"}}, Train, "a role filter needs a text column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := tc.cols
			_, err := itRead(t, []Input{{Path: tc.path, Side: tc.side, Columns: &cols}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), tc.path)
		})
	}
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"uid":"a","prompt":[]}`+"\n"+`{"uid": "b", "prompt": [}`+"\n"), 0o644))
	_, err := itRead(t, []Input{{Path: bad, Side: Train, Columns: &Columns{Text: []string{"prompt"}}}})
	assert.ErrorContains(t, err, "bad.jsonl: line 2: invalid character '}' looking for beginning of value at byte 25")
	require.NoError(t, os.WriteFile(bad, []byte(`["not", "an object"]`+"\n"), 0o644))
	_, err = itRead(t, []Input{{Path: bad, Side: Train, Columns: &Columns{Text: []string{"prompt"}}}})
	assert.ErrorContains(t, err, "bad.jsonl: line 1: want a JSON object, got array")
}

func TestFieldsAndPresets(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"d.jsonl", "d.parquet", "d.arrow"} {
		fs, err := Fields(itWrite(t, filepath.Join(dir, name)))
		require.NoError(t, err)
		for _, p := range []string{"uid", "prompt", "prompt.content", "prompt:user", "meta.source.name", "meta.tags"} {
			assert.True(t, fs.Has(p), "%s has %s", name, p)
		}
		for _, p := range []string{"question", "meta.name", "prompt.name"} {
			assert.False(t, fs.Has(p), "%s lacks %s", name, p)
		}
		assert.ElementsMatch(t, []string{"uid", "n", "topic", "split", "prompt", "meta", "answer"}, fs.Top())
		_, ok := DetectPreset(fs.Has)
		assert.False(t, ok)
	}
	empty := filepath.Join(dir, "e.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	fs, err := Fields(empty)
	require.NoError(t, err)
	assert.Empty(t, fs.Top())

	// Each preset is recognised from its own columns and no other's.
	for _, p := range Presets {
		has := func(path string) bool { return slices.Contains(p.Requires, path) }
		got, ok := DetectPreset(has)
		require.True(t, ok, p.Name)
		assert.Equal(t, p.Name, got.Name)
		byName, ok := PresetByName(p.Name)
		assert.True(t, ok)
		assert.Same(t, p, byName)
		for _, c := range p.Commands {
			byCmd, ok := PresetForCommand(c)
			assert.True(t, ok)
			assert.Same(t, p, byCmd)
		}
		// Every column a preset reads is one it requires, or the role,
		// sensitivity and label columns only pairs have.
		cc, err := p.Columns.compile()
		require.NoError(t, err, p.Name)
		for _, path := range cc.paths() {
			assert.True(t, slices.Contains(p.Requires, path.segs[0]) || slices.ContainsFunc(p.Requires, func(r string) bool {
				return strings.HasPrefix(r, strings.Join(path.segs, "."))
			}) || slices.Contains([]string{"sensitivity", "label", "split"}, path.raw), "%s reads %s", p.Name, path.raw)
		}
	}
}

func TestExpandDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b/part-1.parquet", "a.jsonl", "b/part-0.parquet", ".hidden.parquet", ".cache/x.parquet", "notes.txt", "m.manifest.json", "c.arrow"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	files, err := ExpandDir(dir)
	require.NoError(t, err)
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(dir, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	assert.Equal(t, []string{"a.jsonl", "b/part-0.parquet", "b/part-1.parquet", "c.arrow"}, rel)
	_, err = ExpandDir(filepath.Join(dir, "b", ".."+string(filepath.Separator)+".cache"))
	assert.NoError(t, err, "a hidden directory named outright is read")
	empty := t.TempDir()
	_, err = ExpandDir(empty)
	assert.ErrorContains(t, err, "holds no dataset files")
}

// TestInputArrowTypes reads the string, number and dictionary types other
// writers use for text columns.
func TestInputArrowTypes(t *testing.T) {
	mem := memory.NewGoAllocator()
	ls := array.NewLargeStringBuilder(mem)
	ls.AppendValues([]string{"large one", "large two"}, nil)
	sv := array.NewStringViewBuilder(mem)
	sv.AppendValues([]string{"view one", "view two"}, nil)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	require.NoError(t, db.AppendString("topic a"))
	require.NoError(t, db.AppendString("topic a"))
	fl := array.NewFloat64Builder(mem)
	fl.AppendValues([]float64{1.5, 2}, nil)
	bl := array.NewBooleanBuilder(mem)
	bl.AppendValues([]bool{true, false}, nil)
	for _, tc := range []struct {
		arr  arrow.Array
		want []string
	}{
		{ls.NewArray(), []string{"large one", "large two"}},
		{sv.NewArray(), []string{"view one", "view two"}},
		{db.NewArray(), []string{"topic a", "topic a"}},
		{fl.NewArray(), []string{"1.5", "2"}},
		{bl.NewArray(), []string{"true", "false"}},
	} {
		g, err := compileArrow(tc.arr, nil, "", "c")
		require.NoError(t, err, tc.arr.DataType().String())
		assert.Equal(t, tc.want[:1], g(0, nil))
		assert.Equal(t, tc.want[1:], g(1, nil))
	}
	bin := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bin.Append([]byte{1})
	_, err := compileArrow(bin.NewArray(), nil, "", "blob")
	assert.EqualError(t, err, "blob is binary, which has no text")
}

// jsonReference extracts a path from a decoded JSON value the plain way:
// the oracle of FuzzJSONWalker.
func jsonReference(v any, segs []string, role string) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, jsonReference(e, segs, role)...)
		}
		return out
	case map[string]any:
		if len(segs) > 0 {
			return jsonReference(x[segs[0]], segs[1:], role)
		}
		content, ok := x["content"]
		if !ok {
			content, ok = x["text"]
		}
		if !ok {
			return []string{"<error>"}
		}
		if r, _ := x["role"].(string); role != "" && r != role {
			return nil
		}
		return jsonReference(content, nil, "")
	}
	if len(segs) > 0 {
		return nil
	}
	switch x := v.(type) {
	case string:
		return []string{x}
	case bool:
		if x {
			return []string{"true"}
		}
		return []string{"false"}
	case json.Number:
		return []string{x.String()}
	}
	return nil
}

// FuzzJSONWalker checks the JSONL path extraction against a plain
// encoding/json decoding: the same values for every path of a few shapes,
// and an error exactly when the line is not a JSON object (or a message
// lacks content).
func FuzzJSONWalker(f *testing.F) {
	for _, line := range strings.Split(itRows, "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"prompt":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"a":{"b":[{"c":1},{"c":"x"},null]}}`))
	f.Add([]byte(`{"prompt":"plain","a":[[1,2],[true]]}`))
	f.Add([]byte(`{"prompt":{"role":"user"}}`))
	f.Add([]byte(`{"a":{"b":{"c":{}}}}`))
	paths := []colPath{}
	for _, raw := range []string{"prompt", "prompt:user", "prompt.content", "a.b.c", "a", "uid", "meta.source.name"} {
		p, err := parsePath(raw)
		require.NoError(f, err)
		paths = append(paths, p)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var w jsonWalker
		got, err := w.extract(line, paths)
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var v any
		derr := dec.Decode(&v)
		obj, isObj := v.(map[string]any)
		if derr != nil || !isObj || dec.More() || !json.Valid(line) {
			require.Error(t, err, "%q is not one JSON object", line)
			return
		}
		var want [][]string
		failed := false
		for _, p := range paths {
			vals := jsonReference(obj, p.segs, p.role)
			if slices.Contains(vals, "<error>") {
				failed = true
			}
			want = append(want, vals)
		}
		if failed {
			require.Error(t, err, "%q has a message without content", line)
			return
		}
		require.NoError(t, err, "%q", line)
		for i := range paths {
			assert.Equal(t, len(want[i]), len(got[i]), "%s of %q", paths[i].raw, line)
			if len(want[i]) > 0 {
				assert.Equal(t, want[i], got[i], "%s of %q", paths[i].raw, line)
			}
		}
	})
}

func TestFieldsOfJSONL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("\n  \n"+`{"b":{"c":[{"d":1}],"e":null},"a":[{"x":1},2,[{"y":3}]],"":"no name"}`+"\n"+`{"z":1}`+"\n"), 0o644))
	fs, err := Fields(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"", "a", "b"}, fs.Top(), "the first row's columns, sorted; blank lines skipped")
	for path, want := range map[string]bool{
		"a": true, "a.x": true, "a.y": false, "b": true, "b.c": true, "b.c.d": true, "b.e": true, "b.d": false,
		"z": false, "b.c:user": true, " b.c ": true, ":user": true, "x": false,
	} {
		assert.Equal(t, want, fs.Has(path), path)
	}
	top := fs.Top()
	top[0] = "changed"
	assert.Equal(t, "", fs.Top()[0], "Top returns a copy")

	for _, tc := range []struct{ name, content, err string }{
		{"not an object", "\n[1, 2]\n", "d.jsonl: line 2: want an object, got a list"},
		{"bad JSON", `{"a": }` + "\n", "d.jsonl: line 1: invalid JSON at byte 7: invalid character '}' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
			_, err := Fields(p)
			assert.ErrorContains(t, err, "splits: "+p+": line")
			assert.ErrorContains(t, err, tc.err)
		})
	}
	_, err = Fields(filepath.Join(dir, "d.csv"))
	assert.EqualError(t, err, "splits: "+filepath.Join(dir, "d.csv")+": unknown dataset format (want a .parquet, .arrow or .jsonl file)")
	_, err = Fields(filepath.Join(dir, "missing.parquet"))
	assert.ErrorContains(t, err, "missing.parquet: no such file")
}

// TestInputListPathsInEveryFormat reads a field of the messages of a list
// column from each format, and names the list when the field is missing.
func TestInputListPathsInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"d.jsonl", "d.parquet", "d.arrow"} {
		path := itWrite(t, filepath.Join(dir, name))
		rows, err := itRead(t, []Input{{Path: path, Side: Train, Columns: &Columns{Text: []string{"prompt.role", "prompt.content"}}}})
		require.NoError(t, err, name)
		require.Len(t, rows, 3, name)
		assert.Equal(t, []string{"system\nuser\nBe brief.\nWhen is high tide?", "user\nWhich train is first?", ""},
			[]string{rows[0].Text, rows[1].Text, rows[2].Text}, name)
		if name == "d.jsonl" {
			continue // a JSON row may lack any field
		}
		_, err = itRead(t, []Input{{Path: path, Side: Train, Columns: &Columns{Text: []string{"prompt.name"}}}})
		assert.ErrorContains(t, err, `column prompt.name: prompt[] has no field "name" (fields: role, content)`, name)
	}
}

// TestInputJSONDepthLimit reads lines with arrays nested as deep as
// encoding/json allows (10,000 levels, the object included), on the path
// read and in a field skipped, and fails one level deeper, as
// encoding/json does.
func TestInputJSONDepthLimit(t *testing.T) {
	dir := t.TempDir()
	nested := func(arrays int) string {
		return strings.Repeat("[", arrays) + `"x"` + strings.Repeat("]", arrays)
	}
	for _, tc := range []struct {
		name, line string
		err        bool
	}{
		{"on the path, deepest", `{"id":"r1","a":` + nested(9999) + "}", false},
		{"on the path, too deep", `{"id":"r1","a":` + nested(10000) + "}", true},
		{"skipped, deepest", `{"id":"r1","junk":` + nested(9999) + "}", false},
		{"skipped, too deep", `{"id":"r1","junk":` + nested(10000) + "}", true},
		{"in an object on the path, deepest", `{"id":"r1","a":{"c":` + nested(9998) + "}}", false},
		{"in an object on the path, too deep", `{"id":"r1","a":{"c":` + nested(9999) + "}}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, !tc.err, json.Valid([]byte(tc.line)), "encoding/json agrees")
			p := filepath.Join(dir, "d.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(tc.line+"\n"), 0o644))
			rows, err := itRead(t, []Input{{Path: p, Side: Train, Columns: &Columns{Text: []string{"a.b"}, ID: []string{"id"}}}})
			if tc.err {
				assert.ErrorContains(t, err, p+": line 1: ")
				assert.ErrorContains(t, err, "exceeded max depth")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []Row{{File: p, Index: 1, Side: Train, ID: "r1", Source: "r1"}}, rows)
		})
	}
}

// TestInputOpenErrors checks the errors of inputs that cannot be read at
// all; each names the file.
func TestInputOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good := itWrite(t, filepath.Join(dir, "good.jsonl"))
	cols := &Columns{Text: []string{"uid"}}
	_, err := Source([]Input{{Path: good, Columns: cols}, {Path: "x.jsonl"}})()
	assert.EqualError(t, err, "splits: x.jsonl: no columns")

	corrupt := filepath.Join(dir, "corrupt.parquet")
	require.NoError(t, os.WriteFile(corrupt, []byte("not parquet at all"), 0o644))
	for _, tc := range []struct{ name, path, want string }{
		{"unknown format", filepath.Join(dir, "d.csv"), "splits: " + filepath.Join(dir, "d.csv") + ": unknown dataset format (want a .parquet, .arrow or .jsonl file)"},
		{"missing file", filepath.Join(dir, "missing.jsonl"), "missing.jsonl: no such file"},
		{"missing Parquet file", filepath.Join(dir, "missing.parquet"), "missing.parquet: no such file"},
		{"not Parquet", corrupt, "corrupt.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first input is read before the second fails.
			rows, err := itRead(t, []Input{{Path: good, Side: Train, Columns: cols}, {Path: tc.path, Side: Test, Columns: cols}})
			require.Error(t, err)
			assert.Len(t, rows, 3)
			assert.True(t, strings.HasPrefix(err.Error(), "splits: "), err.Error())
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
