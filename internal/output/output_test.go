package output

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
)

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)

// counter is a Builder of consecutive numbers.
type counter struct {
	b    *array.Int64Builder
	next int64
}

func newCounter() *counter { return &counter{b: array.NewInt64Builder(memory.DefaultAllocator)} }

func (c *counter) add(n int) {
	for range n {
		c.b.Append(c.next)
		c.next++
	}
}

func (c *counter) Len() int { return c.b.Len() }

func (c *counter) NewRecord() arrow.Record {
	arr := c.b.NewArray()
	defer arr.Release()
	return array.NewRecord(testSchema, []arrow.Array{arr}, int64(arr.Len()))
}

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readNumbers reads a dataset of testSchema (or wider) back.
func readNumbers(t *testing.T, path string, schema *arrow.Schema) []int64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rr, err := dataset.Open(f, path, nil, dataset.ReadOptions{Schema: schema})
	require.NoError(t, err)
	defer rr.Close()
	var out []int64
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
}

func TestSinkWritesBatchesAndCommitsWithItsManifest(t *testing.T) {
	for _, format := range dataset.All {
		t.Run(format.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "n"+format.Extensions[0])
			s, err := NewSink(path, format, testSchema, SinkOptions{})
			require.NoError(t, err)
			c := newCounter()
			for range 3 {
				c.add(BatchRows / 2)
				require.NoError(t, s.FlushFull(c))
			}
			c.add(10)
			require.NoError(t, s.Drain(c))
			assert.NoFileExists(t, path, "nothing is visible before the commit")
			m := &Manifest{Tool: "timeaware", Command: "test", Outputs: []Entry{s.Entry("numbers", format.Name)}}
			require.NoError(t, Commit(context.Background(), ManifestPath(path), m, s.File()))

			want := make([]int64, 3*BatchRows/2+10)
			for i := range want {
				want[i] = int64(i)
			}
			assert.Equal(t, want, readNumbers(t, path, testSchema))
			e := m.Outputs[0]
			assert.Equal(t, len(want), *e.Rows)
			assert.Equal(t, sha(t, path), e.SHA256)
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), e.Bytes)
			assert.Equal(t, Entry{Path: path, Role: "numbers", Format: format.Name, SHA256: e.SHA256, Bytes: e.Bytes, Rows: e.Rows}, e)

			back, err := ReadManifest(ManifestPath(path), true)
			require.NoError(t, err)
			assert.Equal(t, m.Outputs, back.Outputs)
		})
	}
}

func TestSinkTransform(t *testing.T) {
	wide := arrow.NewSchema(append(testSchema.Fields(), arrow.Field{Name: "twice", Type: arrow.PrimitiveTypes.Int64}), nil)
	opt := SinkOptions{
		Schema: func(*arrow.Schema) *arrow.Schema { return wide },
		Transform: func(rec arrow.Record) (arrow.Record, error) {
			b := array.NewInt64Builder(memory.DefaultAllocator)
			defer b.Release()
			for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
				b.Append(2 * v)
			}
			twice := b.NewArray()
			defer twice.Release()
			return array.NewRecord(wide, []arrow.Array{rec.Column(0), twice}, rec.NumRows()), nil
		},
	}
	path := filepath.Join(t.TempDir(), "w.parquet")
	s, err := NewSink(path, dataset.Parquet, testSchema, opt)
	require.NoError(t, err)
	c := newCounter()
	c.add(5)
	require.NoError(t, s.Drain(c))
	require.NoError(t, s.File().Commit())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rr, err := dataset.Open(f, path, nil, dataset.ReadOptions{Schema: wide})
	require.NoError(t, err)
	defer rr.Close()
	rec, err := rr.Next()
	require.NoError(t, err)
	defer rec.Release()
	assert.Equal(t, []int64{0, 2, 4, 6, 8}, rec.Column(1).(*array.Int64).Int64Values())
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.jsonl")
	require.NoError(t, os.WriteFile(data, []byte("{}\n"), 0o644))
	e, err := HashFile(data, "rows")
	require.NoError(t, err)
	// Recorded under another directory: found beside the manifest.
	e.Path = filepath.Join("/elsewhere", "d.jsonl")
	mp := filepath.Join(dir, "d.jsonl.manifest.json")
	require.NoError(t, WriteManifest(mp, &Manifest{Tool: "timeaware", Outputs: []Entry{e}}))
	m, err := ReadManifest(mp, true)
	require.NoError(t, err)
	assert.Equal(t, data, m.Outputs[0].Path)

	require.NoError(t, os.WriteFile(data, []byte("{}\n{}\n"), 0o644))
	_, err = ReadManifest(mp, true)
	assert.ErrorContains(t, err, data+" has changed since the build")
	_, err = ReadManifest(mp, false)
	assert.NoError(t, err, "without verifying, a changed file is read")

	require.NoError(t, os.Remove(data))
	_, err = ReadManifest(mp, false)
	assert.ErrorContains(t, err, "output /elsewhere/d.jsonl")

	require.NoError(t, os.WriteFile(mp, []byte("not json"), 0o644))
	_, err = ReadManifest(mp, false)
	assert.ErrorContains(t, err, "not a timeaware manifest")

	// A path relative to the manifest's directory, into a subdirectory (the
	// merged manifest of a sharded run names its parts so), read from
	// another working directory.
	part := filepath.Join(dir, "run", "train", "part-00000-of-00002.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(part), 0o755))
	require.NoError(t, os.WriteFile(part, []byte("{}\n"), 0o644))
	e, err = HashFile(part, "pairs")
	require.NoError(t, err)
	e.Path = filepath.Join("run", "train", "part-00000-of-00002.jsonl")
	mp = filepath.Join(dir, "run.manifest.json")
	require.NoError(t, WriteManifest(mp, &Manifest{Tool: "timeaware", Outputs: []Entry{e}}))
	m, err = ReadManifest(mp, true)
	require.NoError(t, err)
	assert.Equal(t, part, m.Outputs[0].Path)
}

func TestInputHashesWhatIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	content := []byte("line one\nline two\n")
	require.NoError(t, os.WriteFile(path, content, 0o644))
	in := OpenInput(path)
	b, err := io.ReadAll(in)
	require.NoError(t, err)
	in.Close()
	assert.Equal(t, content, b)
	h := sha256.Sum256(content)
	assert.Equal(t, Entry{Path: path, Role: "tasks", SHA256: hex.EncodeToString(h[:]), Bytes: int64(len(content))}, in.Entry("tasks"))

	missing := OpenInput(filepath.Join(t.TempDir(), "none"))
	_, err = missing.Read(make([]byte, 4))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = missing.Read(make([]byte, 4))
	assert.ErrorIs(t, err, os.ErrNotExist, "the error stays")
}

func TestSidePath(t *testing.T) {
	assert.Equal(t, "out/pairs-train.parquet", SidePath("out/pairs.parquet", "train"))
	assert.Equal(t, "p-test", SidePath("p", "test"))
	assert.Equal(t, "a.b-test.jsonl", SidePath("a.b.jsonl", "test"))
}
