package splits

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Input is one dataset file for the gate.
type Input struct {
	Path string
	// Side is where the file's rows are: Train, Test or Against. "" lets
	// each row's split column decide, for a file that holds both sides.
	Side string
	// Columns make the rows; inputs of one check share them, except that
	// an outside evaluation set has its own.
	Columns *Columns
}

// Source returns the rows of the inputs, in order, as the gate reads them.
func Source(inputs []Input) RowSource {
	return func() (RowIterator, error) {
		for i := range inputs {
			if inputs[i].Columns == nil {
				return nil, fmt.Errorf("splits: %s: no columns", inputs[i].Path)
			}
		}
		return &inputRows{inputs: inputs}, nil
	}
}

// inputRows reads the inputs one after the other.
type inputRows struct {
	inputs []Input
	next   int
	cur    fileRows
	// noText holds the sides whose files' texts are not read (their rows
	// come without Text).
	noText []string
	// textCols is the number of text values the current file leaves out.
	textCols int
	// padded holds a row's values with the left-out texts in front.
	padded [][]string
}

// textSkipper is a RowIterator that can leave out the texts of the rows of
// files on some sides, for a pass over the rows that does not need them.
type textSkipper interface {
	// skipTexts must be called before the first Next.
	skipTexts(sides ...string)
}

func (r *inputRows) skipTexts(sides ...string) { r.noText = sides }

// fileRows yields the values of one file's rows.
type fileRows interface {
	// next returns the next row's values (io.EOF at the end), which may
	// be overwritten by the call after.
	next() (values, error)
	close()
}

// values are one row's extracted values, in compiled.paths order.
type values struct {
	row  int // 1-based
	vals [][]string
}

func (r *inputRows) Next() (Row, error) {
	for {
		if r.cur == nil {
			if r.next == len(r.inputs) {
				return Row{}, io.EOF
			}
			in := &r.inputs[r.next]
			noText := in.Side != "" && slices.Contains(r.noText, in.Side)
			fr, skipped, err := openFileRows(in, noText)
			if err != nil {
				return Row{}, err
			}
			r.cur, r.textCols = fr, skipped
		}
		v, err := r.cur.next()
		if err == io.EOF {
			r.cur.close()
			r.cur = nil
			r.next++
			continue
		}
		if err != nil {
			return Row{}, err
		}
		if r.textCols > 0 {
			r.padded = append(append(r.padded[:0], make([][]string, r.textCols)...), v.vals...)
			v.vals = r.padded
		}
		return makeRow(&r.inputs[r.next], v)
	}
}

func (r *inputRows) Close() error {
	if r.cur != nil {
		r.cur.close()
		r.cur = nil
	}
	return nil
}

// openFileRows opens an input by its format. With noText, the rows' values
// leave out the text columns, whose number it returns, unless the file has
// no other columns to read.
func openFileRows(in *Input, noText bool) (fileRows, int, error) {
	cc, err := in.Columns.compile()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", in.Path, err)
	}
	paths := cc.paths()
	skipped := 0
	if noText && len(paths) > len(cc.text) {
		skipped, paths = len(cc.text), paths[len(cc.text):]
	}
	fr, err := openPaths(in, cc, paths)
	return fr, skipped, err
}

// openPaths opens an input by its format, to read paths.
func openPaths(in *Input, cc *compiled, paths []colPath) (fileRows, error) {
	format, ok := dataset.ForPath(in.Path)
	if !ok {
		return nil, fmt.Errorf("splits: %s: unknown dataset format (want a .parquet, .arrow or .jsonl file)", in.Path)
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fmt.Errorf("splits: %w", err)
	}
	if format == dataset.JSONL {
		return &jsonRows{f: f, lines: jsonscan.NewLineReader(f), name: in.Path, cc: cc, paths: paths}, nil
	}
	var top []string
	for _, p := range paths {
		if !slices.Contains(top, p.segs[0]) {
			top = append(top, p.segs[0])
		}
	}
	rr, err := dataset.Open(f, in.Path, format, dataset.ReadOptions{Columns: top})
	if err != nil {
		f.Close()
		if errors.Is(err, dataset.ErrColumnNotFound) {
			return nil, fmt.Errorf("splits: %w (columns: %s)", err, strings.Join(fileColumns(in.Path, format), ", "))
		}
		return nil, fmt.Errorf("splits: %w", err)
	}
	return &arrowRows{f: f, rr: rr, name: in.Path, paths: paths}, nil
}

// fileColumns lists a Parquet or Arrow file's top-level columns, for
// messages.
func fileColumns(path string, format *dataset.Format) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	rr, err := dataset.Open(f, path, format, dataset.ReadOptions{})
	if err != nil {
		return nil
	}
	defer rr.Close()
	var names []string
	for _, fld := range rr.Schema().Fields() {
		names = append(names, fld.Name)
	}
	return names
}

// arrowRows reads a Parquet or Arrow IPC file.
type arrowRows struct {
	f     *os.File
	rr    dataset.RecordReader
	name  string
	paths []colPath
	rec   arrow.Record
	get   []arrowGetter
	i, n  int
	seen  int
	// vals and lists hold the values of the row last read: a row's values
	// are dead once makeRow has taken the strings out of them.
	vals  []string
	lists [][]string
}

func (a *arrowRows) next() (values, error) {
	for a.rec == nil || a.i == a.n {
		if a.rec != nil {
			a.rec.Release()
			a.rec = nil
		}
		rec, err := a.rr.Next()
		if err != nil {
			return values{}, err
		}
		get := make([]arrowGetter, len(a.paths))
		for k, p := range a.paths {
			idx := rec.Schema().FieldIndices(p.segs[0])
			if len(idx) == 0 {
				rec.Release()
				return values{}, fmt.Errorf("splits: %s: no column %q", a.name, p.segs[0])
			}
			if get[k], err = compileArrow(rec.Column(idx[0]), p.segs[1:], p.role, p.segs[0]); err != nil {
				rec.Release()
				return values{}, fmt.Errorf("splits: %s: column %s: %w", a.name, p.raw, err)
			}
		}
		a.rec, a.get, a.i, a.n = rec, get, 0, int(rec.NumRows())
	}
	a.lists, a.vals = a.lists[:0], a.vals[:0]
	for _, g := range a.get {
		from := len(a.vals)
		a.vals = g(a.i, a.vals)
		a.lists = append(a.lists, a.vals[from:len(a.vals):len(a.vals)])
	}
	v := values{row: a.seen + 1, vals: a.lists}
	a.i++
	a.seen++
	return v, nil
}

func (a *arrowRows) close() {
	if a.rec != nil {
		a.rec.Release()
		a.rec = nil
	}
	a.rr.Close()
	a.f.Close()
}

// jsonRows reads a JSONL file.
type jsonRows struct {
	f     *os.File
	lines *jsonscan.LineReader
	name  string
	cc    *compiled
	paths []colPath
	walk  jsonWalker
}

func (j *jsonRows) next() (values, error) {
	for {
		line, n, err := j.lines.Next()
		if err == io.EOF {
			return values{}, io.EOF
		}
		if err != nil {
			return values{}, fmt.Errorf("splits: %s: line %d: %w", j.name, n, err)
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		vals, err := j.walk.extract(line, j.paths)
		if err != nil {
			return values{}, fmt.Errorf("splits: %s: line %d: %w", j.name, n, err)
		}
		return values{row: n, vals: vals}, nil
	}
}

func (j *jsonRows) close() { j.f.Close() }

// makeRow turns a row's values into a gate row.
func makeRow(in *Input, v values) (Row, error) {
	c := in.Columns
	r := Row{File: in.Path, Index: v.row}
	k := 0
	text := v.vals[k:len(c.Text)]
	k += len(c.Text)
	var partsBuf [16]string
	parts := partsBuf[:0]
	for _, t := range text {
		parts = append(parts, t...)
	}
	r.Text = strings.Join(parts, "\n")
	scalar := func(col string) (string, error) {
		vs := v.vals[k]
		k++
		switch len(vs) {
		case 0:
			return "", nil
		case 1:
			return vs[0], nil
		}
		return "", fmt.Errorf("splits: %s: row %d: column %s holds %d values; want one", in.Path, v.row, col, len(vs))
	}
	var idsBuf [4]string
	ids := idsBuf[:0]
	for _, col := range c.ID {
		s, err := scalar(col)
		if err != nil {
			return Row{}, err
		}
		ids = append(ids, s)
	}
	r.ID = displayID(c.ID, ids)
	var err error
	cols := [...]string{c.Source, c.Group, c.Split, c.Sensitivity, c.Label}
	var got [len(cols)]string
	for i, col := range cols {
		if col == "" {
			continue
		}
		if got[i], err = scalar(col); err != nil {
			return Row{}, err
		}
	}
	r.Source, r.Group, r.SplitLabel, r.Sensitivity, r.Label = got[0], got[1], got[2], got[3], got[4]
	if r.Source == "" && len(ids) > 0 {
		r.Source = ids[0]
	}
	r.Side = in.Side
	if in.Side == "" {
		side, ok := SideOf(r.SplitLabel)
		if !ok {
			what := fmt.Sprintf("its split column %s says %q", c.Split, r.SplitLabel)
			if c.Split == "" {
				what = "it has no split column"
			}
			return Row{}, fmt.Errorf("splits: %s: row %d (id %s): the file's name does not say train or test, and %s", in.Path, v.row, r.ID, what)
		}
		r.Side, r.SplitLabel = side, ""
	} else if in.Side == Against {
		r.SplitLabel = ""
	}
	return r, nil
}

// displayID renders a row's identity: the first id column's value, then
// the others named by their last field: "flight_3 (elapse 2)".
func displayID(cols, vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	if len(vals) == 1 {
		return vals[0]
	}
	size := len(vals[0]) + 3
	for i := 1; i < len(vals); i++ {
		size += len(cols[i]) + len(vals[i]) + 3
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(vals[0])
	b.WriteString(" (")
	for i := 1; i < len(vals); i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		name := cols[i]
		if j := strings.LastIndexByte(name, '.'); j >= 0 {
			name = name[j+1:]
		}
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(vals[i])
	}
	b.WriteByte(')')
	return b.String()
}

// dataExtensions are the file extensions a directory's datasets have.
func dataExtensions() []string {
	var exts []string
	for _, f := range dataset.All {
		exts = append(exts, f.Extensions...)
	}
	return exts
}

// ExpandDir lists the dataset files under dir (Parquet, Arrow IPC, JSONL;
// hidden files and directories are skipped), sorted by path, as a sharded
// dataset's parts. It is an error for dir to hold none.
func ExpandDir(dir string) ([]string, error) {
	exts := dataExtensions()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		name := strings.ToLower(d.Name())
		for _, e := range exts {
			if strings.HasSuffix(name, e) {
				files = append(files, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("splits: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("splits: %s holds no dataset files (%s)", dir, strings.Join(exts, ", "))
	}
	slices.Sort(files)
	return files, nil
}

// SideFromPath finds a file's side from its path below root (the argument
// it was found under, root itself included): its base name first, then
// the directories from the nearest up to root. A name says train when it
// is train or training, ends in -train or _train, or starts with train- or
// train_ (as Hugging Face shards train-00000-of-00004.parquet do); test,
// validation, eval and their kin likewise say test (see SideOf). It
// returns "" when no name says.
func SideFromPath(root, path string) string {
	rel, err := filepath.Rel(filepath.Dir(filepath.Clean(root)), path)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = filepath.Base(path)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		name := parts[i]
		if i == len(parts)-1 {
			if j := strings.IndexByte(name, '.'); j > 0 {
				name = name[:j]
			}
		}
		if s := sideFromName(name); s != "" {
			return s
		}
	}
	return ""
}

// sideFromName reads a name without its extension.
func sideFromName(name string) string {
	name = strings.ToLower(name)
	if s, ok := SideOf(name); ok {
		return s
	}
	for _, sep := range []string{"-", "_"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			if s, ok := SideOf(name[i+1:]); ok {
				return s
			}
		}
		if i := strings.Index(name, sep); i > 0 {
			if s, ok := SideOf(name[:i]); ok {
				return s
			}
		}
	}
	return ""
}
