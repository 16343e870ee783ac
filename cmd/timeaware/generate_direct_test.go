package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeChatServer speaks enough of OpenAI chat completions: it answers
// "generated: " + the content of the last message and counts the requests.
func fakeChatServer(t *testing.T, requests *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
			t.Errorf("Authorization = %q", got)
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"messages"`
			ToolChoice string `json:"tool_choice"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			t.Errorf("bad request body: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.Model != "test" {
			t.Errorf("model = %q, want test", req.Model)
		}
		if req.ToolChoice != "none" {
			t.Errorf("tool_choice = %q, want none", req.ToolChoice)
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role != "user" || last.Content == nil {
			t.Errorf("last message is %s, want the user's question", last.Role)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{
				"message":       map[string]any{"role": "assistant", "content": "generated: " + *last.Content},
				"finish_reason": "stop",
			}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPairsBuildGenerateDirect(t *testing.T) {
	var requests atomic.Int64
	srv := fakeChatServer(t, &requests)
	t.Setenv("TIMEAWARE_PAIRS_GENERATE_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	t.Setenv("OPENAI_API_KEY", "test-key")
	out := filepath.Join(t.TempDir(), "pairs.jsonl")
	args := []string{"pairs", "build", "--input", demoTrajectories, "--annotations", demoVotes,
		"--generate-direct", srv.URL + "/v1", "--model", "test", "--out", out}

	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "pairs build: 16 pairs")
	assert.Contains(t, stdout, "direct from: generated 16")
	assert.Contains(t, stdout, "generator:   16 requests, 0 cache hits, 0 retries, 0 failures")
	assert.EqualValues(t, 16, requests.Load(), "one request per pair")

	rows := readPairsJSONL(t, out)
	require.Len(t, rows, 16)
	for i, r := range rows {
		question := r.Prompt[len(r.Prompt)-1].text(t)
		assert.Equal(t, "generated: "+question, r.directReply(t), "row %d (%s, elapse %d)", i+1, r.ID, r.Elapse)
	}
	m := requireManifestRows(t, out, "jsonl", 16)
	require.NotNil(t, m.Summary.Generator, "manifest has generator stats")
	assert.EqualValues(t, 16, m.Summary.Generator.Requests)
	assert.EqualValues(t, 0, m.Summary.Generator.CacheHits)
	assert.EqualValues(t, 0, m.Summary.Generator.Failures)
	first, err := os.ReadFile(out)
	require.NoError(t, err)

	t.Run("second run uses the cache", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
		assert.EqualValues(t, 16, requests.Load(), "no new requests")
		assert.Contains(t, stdout, "generator:   0 requests, 16 cache hits, 0 retries, 0 failures")
		m := requireManifestRows(t, out, "jsonl", 16)
		require.NotNil(t, m.Summary.Generator)
		assert.EqualValues(t, 0, m.Summary.Generator.Requests)
		assert.EqualValues(t, 16, m.Summary.Generator.CacheHits)
		second, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, string(first), string(second), "same output from the cache")
	})
}
