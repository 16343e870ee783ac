package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
)

// writeRowsTo writes rows as JSONL to path.
func writeRowsTo(t *testing.T, path string, rows ...any) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Rename(writeRows(t, rows...), path))
}

func TestReadData(t *testing.T) {
	dir := t.TempDir()
	writeRowsTo(t, filepath.Join(dir, "one", "a.jsonl"), puzzleRow(0, "2024-01-01"), puzzleRow(1, "2024-01-02"))
	writeRowsTo(t, filepath.Join(dir, "one", "b.jsonl"), puzzleRow(2, "2024-01-03"))
	writeRowsTo(t, filepath.Join(dir, "sides", "p-train.jsonl"), puzzleRow(3, "2024-01-04"))
	writeRowsTo(t, filepath.Join(dir, "sides", "p-test.jsonl"), puzzleRow(4, "2024-01-05"))
	writeRowsTo(t, filepath.Join(dir, "results", "r.jsonl"), puzzleRow(5, "2024-01-06"))
	writeRowsTo(t, filepath.Join(dir, "results", "cache", "c.jsonl"), puzzleRow(6, "2024-01-07"))
	writeRowsTo(t, filepath.Join(dir, "results", "test.jsonl"), puzzleRow(7, "2024-01-08"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644))

	t.Run("files and directories in order", func(t *testing.T) {
		rows, err := ReadData([]string{filepath.Join(dir, "sides", "p-test.jsonl"), filepath.Join(dir, "one")})
		require.NoError(t, err)
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		assert.Equal(t, []string{"p04", "p00", "p01", "p02"}, ids)
	})
	t.Run("skip leaves out the results and the cache", func(t *testing.T) {
		res := filepath.Join(dir, "results")
		rows, err := ReadData([]string{res}, filepath.Join(res, "r.jsonl"), filepath.Join(res, "cache"), "")
		require.NoError(t, err)
		require.Len(t, rows, 1)
		assert.Equal(t, "p07", rows[0].ID)
	})
	for _, tc := range []struct {
		name    string
		paths   []string
		skip    []string
		value   string
		invalid bool
		want    string
	}{
		{"both sides", []string{filepath.Join(dir, "sides")}, nil, filepath.Join(dir, "sides"), true, "holds both sides of a split"},
		{"nothing besides what is skipped", []string{filepath.Join(dir, "results")},
			[]string{filepath.Join(dir, "results", "r.jsonl"), filepath.Join(dir, "results", "cache"), filepath.Join(dir, "results", "test.jsonl")},
			filepath.Join(dir, "results"), true, "no dataset files besides the results and the cache"},
		{"missing", []string{filepath.Join(dir, "nope.jsonl")}, nil, filepath.Join(dir, "nope.jsonl"), false, "no such file or directory"},
		{"no rows", []string{filepath.Join(dir, "empty.jsonl"), filepath.Join(dir, "empty.jsonl")}, nil,
			filepath.Join(dir, "empty.jsonl") + ", " + filepath.Join(dir, "empty.jsonl"), false, "no records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadData(tc.paths, tc.skip...)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "Data", oe.Option)
			assert.Equal(t, tc.value, oe.Value)
			assert.Equal(t, tc.invalid, oe.Invalid)
			assert.Contains(t, oe.Err.Error(), tc.want)
		})
	}
	t.Run("a bad row names its file", func(t *testing.T) {
		bad := filepath.Join(dir, "bad", "bad.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(bad), 0o755))
		require.NoError(t, os.WriteFile(bad, []byte(`{"data_source": "timepuzzles", "prompt": [], "reward_model": {}}`+"\n"), 0o644))
		_, err := ReadData([]string{filepath.Dir(bad)})
		require.Error(t, err)
		assert.NotErrorAs(t, err, new(*OptionError))
		assert.Contains(t, err.Error(), bad+": row 1: prompt: empty")
	})
}

func readResultsFile(t *testing.T, path string) []*Result {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadResults(bufio.NewReader(f), path)
	require.NoError(t, err)
	return rs
}

// TestRunFiles: the results of every row and sample are written in input
// order and reported; a rerun on the cache asks nothing again.
func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	gold := []string{"2024-01-01", "2024-02-02", "2024-03-03"}
	var rows []any
	for i, g := range gold {
		rows = append(rows, puzzleRow(i, g))
	}
	data := filepath.Join(dir, "data", "puzzles.jsonl")
	writeRowsTo(t, data, rows...)
	model := newScript(t, func(req wireReq) answer {
		if strings.Contains(lastUser(req), "puzzle 1:") {
			return answer{text: "MY ANSWER: 1999-12-31"}
		}
		for i, g := range gold {
			if strings.Contains(lastUser(req), "puzzle "+string(rune('0'+i))+":") {
				return answer{text: "MY ANSWER: " + g}
			}
		}
		return answer{text: "?"}
	})
	out := filepath.Join(dir, "data", "results.jsonl")
	var calls atomic.Int64
	opt := FilesOptions{Data: []string{filepath.Join(dir, "data")}, Out: out,
		Model: chat.Options{URL: model.URL, Model: "scripted", Concurrency: 2, CacheDir: out + ".cache"},
		Run:   Options{Rewards: rewards.DefaultConfig(), Samples: 2, Temperature: 0.5, Seed: 3},
		Progress: func(total int) {
			calls.Add(1)
			assert.Equal(t, 6, total)
		}}
	rep, err := RunFiles(context.Background(), opt)
	require.NoError(t, err)
	assert.Equal(t, int64(6), calls.Load())
	assert.Equal(t, 3, rep.Rows)
	assert.Equal(t, 6, rep.Total)
	assert.Equal(t, 6, rep.Done)
	assert.Zero(t, rep.Failed)
	assert.False(t, rep.GaveUp || rep.Interrupted)
	assert.Equal(t, int64(6), rep.Requests.Requests)
	assert.Equal(t, "scripted", rep.Model)
	assert.Equal(t, out, rep.Results)
	assert.Equal(t, 2, rep.Concurrency)
	assert.InDelta(t, 2.0/3, rep.DataSources["timepuzzles"].Metrics["em"].Mean, 1e-12)
	res := readResultsFile(t, out)
	require.Len(t, res, 6)
	for i, r := range res {
		assert.Equal(t, i, r.Index, "input order")
		assert.Equal(t, i/2, r.Row)
		assert.Equal(t, i%2, r.Sample)
	}

	var js map[string]json.RawMessage
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &js))
	keys := []string{}
	for k := range js {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"endpoint", "model", "results", "concurrency", "requests", "data_sources"}, keys,
		"the report's keys, none of the run's counts")
	assert.True(t, strings.HasPrefix(string(b), `{"endpoint":`), "the endpoint first: %s", b)

	again, err := RunFiles(context.Background(), opt)
	require.NoError(t, err, "the results and the cache in the data directory are not read as data")
	assert.Equal(t, int64(6), again.Requests.CacheHits)
	assert.Zero(t, again.Requests.Requests)
}

// TestRunFilesStopsAfterMaxErrors: an endpoint that fails every request
// is asked no more once MaxErrors is passed; the finished results are
// written.
func TestRunFilesStopsAfterMaxErrors(t *testing.T) {
	dir := t.TempDir()
	var rows []any
	for i := range 20 {
		rows = append(rows, puzzleRow(i, "2024-01-01"))
	}
	data := filepath.Join(dir, "rows.jsonl")
	writeRowsTo(t, data, rows...)
	var hits atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no such model", http.StatusNotFound)
	}))
	defer down.Close()
	out := filepath.Join(dir, "r.jsonl")
	rep, err := RunFiles(context.Background(), FilesOptions{Data: []string{data}, Out: out, MaxErrors: 1,
		Model: chat.Options{URL: down.URL, Model: "m", Concurrency: 1, Backoff: time.Millisecond},
		Run:   Options{Rewards: rewards.DefaultConfig(), Workers: 1}})
	require.NoError(t, err)
	assert.True(t, rep.GaveUp)
	assert.False(t, rep.Interrupted)
	assert.Equal(t, 2, rep.Failed)
	assert.Equal(t, 2, rep.Done)
	assert.Equal(t, 20, rep.Total)
	require.Len(t, rep.FirstErrors, 2)
	assert.Contains(t, rep.FirstErrors[0], "p00 (timepuzzles): ")
	assert.Contains(t, rep.FirstErrors[0], "HTTP 404")
	assert.Len(t, readResultsFile(t, out), 2)
	assert.Equal(t, 18, rep.Missing)
}

func TestRunFilesInterrupted(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "rows.jsonl")
	writeRowsTo(t, data, puzzleRow(0, "2024-01-01"), puzzleRow(1, "2024-01-01"), puzzleRow(2, "2024-01-01"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hits atomic.Int64
	model := newScript(t, func(wireReq) answer {
		if hits.Add(1) == 2 {
			cancel()
			return answer{text: "MY ANSWER: 2024-01-01", delay: 50 * time.Millisecond}
		}
		return answer{text: "MY ANSWER: 2024-01-01"}
	})
	out := filepath.Join(dir, "r.jsonl")
	rep, err := RunFiles(ctx, FilesOptions{Data: []string{data}, Out: out,
		Model: chat.Options{URL: model.URL, Model: "m", Concurrency: 1}, Run: Options{Rewards: rewards.DefaultConfig(), Workers: 1}})
	require.NoError(t, err)
	assert.True(t, rep.Interrupted)
	assert.False(t, rep.GaveUp)
	assert.Equal(t, 1, rep.Done)
	assert.Len(t, readResultsFile(t, out), 1, "what finished is written")
}

func TestRunFilesOptionErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "rows.jsonl")
	writeRowsTo(t, data, puzzleRow(0, "2024-01-01"))
	badTruth := filepath.Join(dir, "truth.jsonl")
	writeRowsTo(t, badTruth, puzzleRow(0, "2024-02-30"))
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	base := func() FilesOptions {
		return FilesOptions{Data: []string{data}, Out: filepath.Join(dir, "r.jsonl"),
			Model: chat.Options{URL: "http://127.0.0.1:9/v1", Model: "m"}, Run: Options{Rewards: rewards.DefaultConfig()}}
	}
	for _, tc := range []struct {
		name    string
		edit    func(*FilesOptions)
		option  string
		invalid bool
	}{
		{"endpoint", func(o *FilesOptions) { o.Model.URL = "ftp://h" }, "Endpoint", true},
		{"opponent endpoint", func(o *FilesOptions) { o.OpponentURL, o.OpponentModel = "ftp://o", "m" }, "OpponentEndpoint", true},
		{"out under a file", func(o *FilesOptions) { o.Out = filepath.Join(notDir, "r.jsonl") }, "Out", false},
		{"missing data", func(o *FilesOptions) { o.Data = []string{filepath.Join(dir, "nope")} }, "Data", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := base()
			tc.edit(&opt)
			_, err := RunFiles(context.Background(), opt)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.option, oe.Option)
			assert.Equal(t, tc.invalid, oe.Invalid)
		})
	}
	t.Run("a row its reward cannot read fails before any request", func(t *testing.T) {
		opt := base()
		opt.Data = []string{badTruth}
		_, err := RunFiles(context.Background(), opt)
		require.Error(t, err)
		assert.Contains(t, err.Error(), badTruth+": row 1: ground_truth")
		assert.NoFileExists(t, opt.Out)
	})
}

func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	line := func(score float64) string {
		r := Result{DataSource: "timepuzzles", RequestID: "p1", Score: score, Details: map[string]float64{"em": score, "f1": score, "jaccard": score}}
		j, err := json.Marshal(r)
		require.NoError(t, err)
		return string(j) + "\n"
	}
	require.NoError(t, os.WriteFile(a, []byte(line(0)), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(line(1)), 0o644))
	cmp, err := CompareFiles(a, b, ReportOptions{Resamples: 10})
	require.NoError(t, err)
	assert.Equal(t, 1.0, cmp.DataSources["timepuzzles"].Metrics["em"].Diff)
	for i, args := range [][2]string{{filepath.Join(dir, "nope"), b}, {a, filepath.Join(dir, "nope")}} {
		_, err := CompareFiles(args[0], args[1], ReportOptions{})
		var oe *OptionError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, []string{"A", "B"}[i], oe.Option)
		assert.Equal(t, filepath.Join(dir, "nope"), oe.Value)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	}
}
