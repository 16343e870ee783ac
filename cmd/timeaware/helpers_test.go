package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Paths relative to the package directory, where go test runs.
const (
	v1Dir            = "../../../shared/data/tictoc-v1"
	demoTrajectories = "../../examples/pairs/trajectories.jsonl"
	demoVotes        = "../../examples/pairs/votes.jsonl"
	demoDirect       = "../../examples/pairs/direct.jsonl"
	configExample    = "../../examples/timeaware.yaml"
)

// runCLI runs the command in process and returns its exit code and streams.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// pairMessage is one message of an output row. Content stays raw so that a
// JSON null can be told apart from a missing key or an empty string.
type pairMessage struct {
	Role      string            `json:"role"`
	Content   json.RawMessage   `json:"content"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
}

// text returns the content as a string; it fails the test on null.
func (m pairMessage) text(t *testing.T) string {
	t.Helper()
	var s *string
	require.NoError(t, json.Unmarshal(m.Content, &s))
	require.NotNil(t, s, "content is null")
	return *s
}

type pairRow struct {
	Prompt   []pairMessage   `json:"prompt"`
	Chosen   []pairMessage   `json:"chosen"`
	Rejected []pairMessage   `json:"rejected"`
	Tools    string          `json:"tools"`
	Margin   float64         `json:"margin"`
	Score    json.RawMessage `json:"score"`
	ID       string          `json:"id"`
	Scenario string          `json:"scenario"`
	Elapse   int             `json:"elapse"`
	Label    string          `json:"label"`
	Split    string          `json:"split"`
}

// directReply is the text of the row's direct (non-tool) response.
func (r pairRow) directReply(t *testing.T) string {
	t.Helper()
	m := r.Rejected
	if r.Label == "direct" {
		m = r.Chosen
	}
	require.Len(t, m, 1)
	return m[0].text(t)
}

func readPairsJSONL(t *testing.T, path string) []pairRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []pairRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var r pairRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "%s: line %d", path, line)
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

type testManifest struct {
	Tool    string `json:"tool"`
	Command string `json:"command"`
	Outputs []struct {
		Path   string `json:"path"`
		Format string `json:"format"`
		SHA256 string `json:"sha256"`
		Bytes  int64  `json:"bytes"`
		Rows   *int   `json:"rows"`
	} `json:"outputs"`
	Inputs []struct {
		Path   string `json:"path"`
		Role   string `json:"role"`
		SHA256 string `json:"sha256"`
		Bytes  int64  `json:"bytes"`
	} `json:"inputs"`
	Config  map[string]any `json:"config"`
	Summary struct {
		Pairs     int `json:"pairs"`
		Generator *struct {
			Requests  int64 `json:"requests"`
			CacheHits int64 `json:"cache_hits"`
			Retries   int64 `json:"retries"`
			Failures  int64 `json:"failures"`
		} `json:"generator"`
	} `json:"summary"`
}

func readManifest(t *testing.T, out string) testManifest {
	t.Helper()
	b, err := os.ReadFile(out + ".manifest.json")
	require.NoError(t, err, "manifest of %s", out)
	var m testManifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// requireManifestRows checks the manifest's single output and its row count.
func requireManifestRows(t *testing.T, out, format string, rows int) testManifest {
	t.Helper()
	m := readManifest(t, out)
	require.Len(t, m.Outputs, 1)
	require.Equal(t, out, m.Outputs[0].Path)
	require.Equal(t, format, m.Outputs[0].Format)
	require.NotNil(t, m.Outputs[0].Rows)
	require.Equal(t, rows, *m.Outputs[0].Rows)
	require.Equal(t, rows, m.Summary.Pairs)
	require.Equal(t, sha256File(t, out), m.Outputs[0].SHA256)
	return m
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// dirNames lists every entry of dir, hidden ones included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	return path
}

// v1Record is what the tests need of a TicToc v1 record.
type v1Record struct {
	ID      string `json:"id"`
	History []struct {
		Role string          `json:"role"`
		Time json.RawMessage `json:"time"`
	} `json:"history"`
}

// v1Sample is one record of a v1 file: the file fixes the label and elapse.
type v1Sample struct {
	File      string // base name
	Record    int    // 1-based
	ID        string
	Elapse    int
	Label     string // "tool" or "direct"
	FinalTime string // history[-1].time[Elapse], verbatim
}

type v1Data struct {
	Files   []string            // base names, sorted as the CLI reads them
	Samples []v1Sample          // in the CLI's reading order
	IDs     []string            // distinct, sorted
	ByKey   map[string]v1Sample // "id\x00elapse"
}

func v1Key(id string, elapse int) string { return id + "\x00" + strconv.Itoa(elapse) }

var v1FileName = regexp.MustCompile(`^prefer(Tool|NoTool)_elapse_([0-2])\.json$`)

var loadV1 = sync.OnceValues(func() (*v1Data, error) {
	names, err := filepath.Glob(filepath.Join(v1Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	d := &v1Data{ByKey: map[string]v1Sample{}}
	ids := map[string]bool{}
	for _, path := range names {
		base := filepath.Base(path)
		m := v1FileName.FindStringSubmatch(base)
		if m == nil {
			return nil, fmt.Errorf("unexpected v1 file %s", base)
		}
		label := "tool"
		if m[1] == "NoTool" {
			label = "direct"
		}
		elapse, _ := strconv.Atoi(m[2])
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var recs []v1Record
		if err := json.Unmarshal(b, &recs); err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
		d.Files = append(d.Files, base)
		for i, r := range recs {
			var times []string
			last := r.History[len(r.History)-1]
			if err := json.Unmarshal(last.Time, &times); err != nil || len(times) != 3 {
				return nil, fmt.Errorf("%s: record %d: final time %s", base, i+1, last.Time)
			}
			s := v1Sample{File: base, Record: i + 1, ID: r.ID, Elapse: elapse, Label: label, FinalTime: times[elapse]}
			d.Samples = append(d.Samples, s)
			d.ByKey[v1Key(r.ID, elapse)] = s
			ids[r.ID] = true
		}
	}
	for id := range ids {
		d.IDs = append(d.IDs, id)
	}
	sort.Strings(d.IDs)
	return d, nil
})

func v1(t *testing.T) *v1Data {
	t.Helper()
	d, err := loadV1()
	require.NoError(t, err)
	require.Len(t, d.Files, 5)
	require.Len(t, d.IDs, 725)
	require.Len(t, d.Samples, 1379)
	return d
}

// ourDirectAnswer is the direct reply the tests give for a trajectory.
func ourDirectAnswer(id string) string {
	return "Going by what this conversation already shows, here is the answer for " + id + " without a new lookup."
}

// writeDirectAnswers writes a side file with our reply for every id except
// those in skip.
func writeDirectAnswers(t *testing.T, path string, ids []string, skip map[string]bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, id := range ids {
		if skip[id] {
			continue
		}
		require.NoError(t, enc.Encode(map[string]string{"id": id, "direct_answer": ourDirectAnswer(id)}))
	}
	return writeFile(t, path, b.String())
}
