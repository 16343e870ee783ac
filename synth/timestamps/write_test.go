package timestamps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/internal/shard"
)

// wtRecords writes n records of the model trajectory, ids model_<k>, at
// dir/name: JSONL, or a JSON array for a .json name.
func wtRecords(t *testing.T, dir, name string, from, n int) string {
	t.Helper()
	var recs []string
	for k := from; k < from+n; k++ {
		recs = append(recs, strings.Replace(modelRecord, `"model_1"`, `"model_`+string(rune('a'+k))+`"`, 1))
	}
	text := strings.Join(recs, "\n") + "\n"
	if filepath.Ext(name) == ".json" {
		text = "[" + strings.Join(recs, ",\n") + "]\n"
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// wtExpected is what Stream gives for the files, read in order: the
// records Write must frame.
func wtExpected(t *testing.T, opt Options, files ...string) [][]byte {
	t.Helper()
	var ins []Input
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		ins = append(ins, Input{Name: f, Reader: bytes.NewReader(b)})
	}
	recs, _ := stamp(t, ins, opt)
	return recs
}

func wtManifest() output.Manifest {
	return output.Manifest{Tool: "timeaware", Version: "test", Command: "synth timestamps", Config: map[string]any{"seed": 3},
		Inputs: []output.Entry{{Path: "catalog.yaml", Role: "catalog", SHA256: "00", Bytes: 2}}}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	files := []string{wtRecords(t, dir, "a.jsonl", 0, 3), wtRecords(t, dir, "b.json", 3, 2)}
	opt := v1Options(t, 3)
	want := wtExpected(t, opt, files...)
	require.Len(t, want, 5)

	for _, tc := range []struct {
		name, out, format string
		content           string
	}{
		{"jsonl", "out/stamped.jsonl", "jsonl", string(bytes.Join(want, []byte("\n"))) + "\n"},
		{"json", "out/stamped.json", "json", "[\n" + string(bytes.Join(want, []byte(",\n"))) + "\n]\n"},
		{"json by an upper-case extension", "out/stamped.JSON", "json", "[\n" + string(bytes.Join(want, []byte(",\n"))) + "\n]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			progress := 0
			var reading []*output.Input
			w, err := Write(context.Background(), files, opt, Output{Path: out, Manifest: wtManifest(),
				Progress: func() { progress++ }, Reading: func(in []*output.Input) { reading = in }})
			require.NoError(t, err)
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, tc.content, string(got))
			if tc.format == "json" {
				var arr []json.RawMessage
				require.NoError(t, json.Unmarshal(got, &arr))
				assert.Len(t, arr, 5)
			}
			assert.Equal(t, 5, progress, "once per record")
			require.Len(t, reading, 2)
			for i, in := range reading {
				assert.Equal(t, files[i], in.Path())
				st, err := os.Stat(files[i])
				require.NoError(t, err)
				assert.Equal(t, st.Size(), in.BytesRead(), "the inputs handed to Reading are those read")
			}

			assert.Equal(t, 5, w.Summary.Records)
			assert.Equal(t, 5, w.Summary.Stamped)
			assert.Nil(t, w.Split)
			assert.Equal(t, out+".manifest.json", w.ManifestPath)
			m, err := output.ReadManifest(w.ManifestPath, true)
			require.NoError(t, err, "the manifest checks out against the file")
			assert.Equal(t, "synth timestamps", m.Command)
			assert.Equal(t, "test", m.Version)
			assert.EqualValues(t, 3, m.Config["seed"])
			require.Len(t, m.Outputs, 1)
			assert.Equal(t, w.Outputs, m.Outputs)
			o := m.Outputs[0]
			assert.Equal(t, []any{out, "trajectories", tc.format, int64(len(got)), 5}, []any{o.Path, o.Role, o.Format, o.Bytes, *o.Rows})
			require.Len(t, m.Inputs, 3, "the files, then the caller's inputs")
			for i, f := range files {
				e, err := output.HashFile(f, "trajectories")
				require.NoError(t, err)
				assert.Equal(t, e, m.Inputs[i])
			}
			assert.Equal(t, wtManifest().Inputs[0], m.Inputs[2])
			var sum Summary
			b, err := json.Marshal(m.Summary)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &sum))
			assert.Equal(t, *w.Summary, sum)
		})
	}
}

func TestWriteShardAndNothing(t *testing.T) {
	dir := t.TempDir()
	files := []string{wtRecords(t, dir, "a.jsonl", 0, 6)}
	opt := v1Options(t, 9)
	sh := shard.Shard{Index: 1, Count: 2}
	opt.Keep = sh.HasID
	want := wtExpected(t, opt, files...)
	w, err := Write(context.Background(), files, opt, Output{Path: filepath.Join(dir, "part-1.jsonl"), Manifest: wtManifest()})
	require.NoError(t, err)
	assert.Equal(t, 6, w.Summary.Records)
	assert.Equal(t, len(want), w.Summary.Stamped)
	assert.Equal(t, 6-len(want), w.Summary.OtherShards)
	assert.Equal(t, len(want), *w.Outputs[0].Rows)

	// A shard that keeps none of the records writes an empty file, in
	// either format.
	opt.Keep = func(string) bool { return false }
	for name, content := range map[string]string{"none.json": "[]\n", "none.jsonl": ""} {
		out := filepath.Join(dir, name)
		w, err := Write(context.Background(), files, opt, Output{Path: out, Manifest: wtManifest()})
		require.NoError(t, err, name)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, content, string(got), name)
		assert.Equal(t, 0, *w.Outputs[0].Rows)
	}

	// No record at all, an empty array or an empty JSONL file, is refused
	// and writes nothing.
	for name, content := range map[string]string{"empty.json": "[]\n", "empty.jsonl": ""} {
		in := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(in, []byte(content), 0o644))
		out := filepath.Join(dir, "from-"+name)
		_, err := Write(context.Background(), []string{in}, opt, Output{Path: out, Manifest: wtManifest()})
		require.ErrorIs(t, err, dataset.ErrNoRecords, name)
		assert.EqualError(t, err, "timestamps: "+in+": no records")
		assert.NoFileExists(t, out)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	good := wtRecords(t, dir, "good.jsonl", 0, 2)
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"id":"x_1","history":[{"role":"robot"}]}`+"\n"), 0o644))
	opt := v1Options(t, 1)
	out := filepath.Join(dir, "out", "stamped.jsonl")

	// A first output, which the failures below leave as it is.
	_, err := Write(context.Background(), []string{good}, opt, Output{Path: out, Manifest: wtManifest()})
	require.NoError(t, err)
	before, err := os.ReadFile(out)
	require.NoError(t, err)
	manifest, err := os.ReadFile(out + ".manifest.json")
	require.NoError(t, err)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var we *WriteError
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		files []string
		check func(t *testing.T, err error)
	}{
		{"a bad record", context.Background(), []string{good, bad}, func(t *testing.T, err error) {
			var re *conversation.RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, bad, re.Source)
			assert.False(t, errors.As(err, &we), "not the output's failure")
		}},
		{"a missing input", context.Background(), []string{good, filepath.Join(dir, "none.jsonl")}, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.False(t, errors.As(err, &we), "not the output's failure")
		}},
		{"cancelled", cancelled, []string{good}, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, context.Canceled)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Write(tc.ctx, tc.files, opt, Output{Path: out, Manifest: wtManifest()})
			assert.Nil(t, w)
			tc.check(t, err)
			after, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the previous output stays")
			m, err := os.ReadFile(out + ".manifest.json")
			require.NoError(t, err)
			assert.Equal(t, manifest, m, "and its manifest")
			assert.ElementsMatch(t, []string{"stamped.jsonl", "stamped.jsonl.manifest.json"}, dirNames(t, filepath.Dir(out)), "no temporary file")
		})
	}

	// An output that cannot be created is the output's failure.
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	_, err = Write(context.Background(), []string{good}, opt, Output{Path: filepath.Join(blocker, "x.jsonl")})
	require.ErrorAs(t, err, &we)
	assert.ErrorIs(t, err, we.Err)
	assert.True(t, strings.HasPrefix(err.Error(), "timestamps: write: "), err.Error())

	// A name of no format writes nothing.
	_, err = Write(context.Background(), []string{good}, opt, Output{Path: filepath.Join(dir, "out.txt")})
	assert.EqualError(t, err, `unknown extension ".txt": want a .json (JSON array) or .jsonl (JSONL) file name`)
	assert.NoFileExists(t, filepath.Join(dir, "out.txt"))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestFormatOf(t *testing.T) {
	for _, tc := range []struct{ path, want, err string }{
		{"a.json", "json", ""},
		{"dir.jsonl/a.JSON", "json", ""},
		{"a.jsonl", "jsonl", ""},
		{"a.JsonL", "jsonl", ""},
		{"a.parquet", "", `unknown extension ".parquet": want a .json (JSON array) or .jsonl (JSONL) file name`},
		{"a.JSONS", "", `unknown extension ".JSONS": want a .json (JSON array) or .jsonl (JSONL) file name`},
		{"json", "", `unknown extension "": want a .json (JSON array) or .jsonl (JSONL) file name`},
	} {
		got, err := FormatOf(tc.path)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.path)
			continue
		}
		require.NoError(t, err, tc.path)
		assert.Equal(t, tc.want, got, tc.path)
	}
}
