package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
	"github.com/timeaware/timeaware/tokenizer"
	"github.com/timeaware/timeaware/verifier"
)

// lengthRow is a re-labelled item as the service reads it.
type lengthRow struct {
	DataSource  string          `json:"data_source"`
	SolutionStr string          `json:"solution_str"`
	GroundTruth json.RawMessage `json:"ground_truth"`
	ExtraInfo   struct {
		AnswerCheck    string `json:"answer_check"`
		ResponseTokens *int   `json:"response_tokens"`
		ThinkTokens    *int   `json:"think_tokens"`
		AnswerTokens   *int   `json:"answer_tokens"`
		TokenBudget    *int   `json:"token_budget"`
		ThinkBudget    *int   `json:"think_budget"`
		AnswerBudget   *int   `json:"answer_budget"`
		Anytime        []struct {
			Budget  int    `json:"budget"`
			Summary string `json:"summary"`
		} `json:"anytime"`
	} `json:"extra_info"`
}

// quarterTokens is the oracle of the derived counts: a quarter of the
// bytes, halves rounded up, and 1 for a short text with a visible
// character.
func quarterTokens(s string) int {
	n := int(math.Round(float64(len(s)) / 4))
	if n == 0 && strings.ContainsFunc(s, func(r rune) bool { return r > ' ' }) {
		return 1
	}
	return n
}

// Each length reward's corpus keeps the base corpus's responses and ground
// truths, carries token counts that agree with the text, has budgets that
// some responses run over and some do not, is the same for the same seed,
// and scores every item without an error (relabel's own check).
func TestRelabelLength(t *testing.T) {
	base, err := buildCorpus(600, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lengthRewards {
		t.Run(r.DataSource, func(t *testing.T) {
			cp, err := relabel(base, r, 7, byteCounter{})
			if err != nil {
				t.Fatal(err)
			}
			again, err := relabel(base, r, 7, byteCounter{})
			if err != nil || again.hash != cp.hash || again.scoreSum != cp.scoreSum {
				t.Fatalf("two builds differ (%v)", err)
			}
			other, err := relabel(base, r, 8, byteCounter{})
			if err != nil || other.hash == cp.hash {
				t.Fatalf("another seed gave the same budgets (%v)", err)
			}
			if cp.correct != base.correct || cp.reward != r || len(cp.items) != len(base.items) {
				t.Fatalf("corpus %+v", statsOf(cp))
			}
			over, under := 0, 0
			for i, it := range cp.items {
				var row, orig lengthRow
				if err := json.Unmarshal(it.line, &row); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(base.items[i].line, &orig); err != nil {
					t.Fatal(err)
				}
				ei := row.ExtraInfo
				if row.DataSource != r.DataSource || row.SolutionStr != orig.SolutionStr || !bytes.Equal(row.GroundTruth, orig.GroundTruth) || ei.AnswerCheck != "timely/general" {
					t.Fatalf("item %d: %s %q, ground truth %s, answer_check %q; want the base item's", i, row.DataSource, row.SolutionStr[:40], row.GroundTruth, ei.AnswerCheck)
				}
				s := row.SolutionStr
				think, answer := 0, quarterTokens(s)
				if before, after, found := strings.Cut(s, "</think>"); found {
					think, answer = quarterTokens(strings.TrimPrefix(before, "<think>")), quarterTokens(after)
				}
				if ei.ResponseTokens == nil || *ei.ResponseTokens != quarterTokens(s) || *ei.ThinkTokens != think || *ei.AnswerTokens != answer {
					t.Fatalf("item %d: counts %v %v %v, want %d %d %d", i, *ei.ResponseTokens, *ei.ThinkTokens, *ei.AnswerTokens, quarterTokens(s), think, answer)
				}
				if think+answer > *ei.ResponseTokens {
					t.Fatalf("item %d: think %d + answer %d > response %d", i, think, answer, *ei.ResponseTokens)
				}
				var within bool
				switch r {
				case rewards.Elastic:
					if ei.TokenBudget != nil || ei.ThinkBudget == nil || ei.AnswerBudget == nil {
						t.Fatalf("item %d: budgets %v %v %v", i, ei.TokenBudget, ei.ThinkBudget, ei.AnswerBudget)
					}
					within = think <= *ei.ThinkBudget && answer <= *ei.AnswerBudget
				case rewards.Anytime:
					if ei.TokenBudget != nil || len(ei.Anytime) != 4 {
						t.Fatalf("item %d: token_budget %v, %d anytime entries", i, ei.TokenBudget, len(ei.Anytime))
					}
					for j, a := range ei.Anytime {
						if a.Budget <= 0 || j > 0 && a.Budget <= ei.Anytime[j-1].Budget || len(a.Summary) > 120 || !strings.HasSuffix(s, a.Summary) && j == 3 {
							t.Fatalf("item %d: anytime %+v", i, ei.Anytime)
						}
					}
					within = ei.Anytime[0].Summary == ei.Anytime[3].Summary
				default:
					if ei.TokenBudget == nil || ei.ThinkBudget != nil {
						t.Fatalf("item %d: budgets %v %v", i, ei.TokenBudget, ei.ThinkBudget)
					}
					within = *ei.ResponseTokens <= *ei.TokenBudget
				}
				if within {
					under++
				} else {
					over++
				}
			}
			if over < len(cp.items)/10 || under < len(cp.items)/10 {
				t.Errorf("%d over budget, %d within (anytime: summaries that differ from the final one): want a mix", over, under)
			}
			if r != rewards.Anytime && over != cp.overBudget {
				t.Errorf("the corpus counts %d over budget, the oracle %d", cp.overBudget, over)
			}
		})
	}
}

func TestFailedCount(t *testing.T) {
	for _, tc := range []struct {
		body string
		n    int
		ok   bool
	}{
		{`{"results":[{"score":1}],"failed":0}`, 0, true},
		{`{"results":[{"score":1},{"score":0,"error":"x"}],"failed":12}` + "\n", 12, true},
		{`{"results":[],"failed":}`, 0, false},
		{`{"results":[],"failed":3`, 0, false},
		{`{"results":[],"fail":3}`, 0, false},
		{`{"error":{"code":"bad_request"}}`, 0, false},
	} {
		n, ok := failedCount([]byte(tc.body))
		if n != tc.n || ok != tc.ok {
			t.Errorf("failedCount(%s) = %d, %v; want %d, %v", tc.body, n, ok, tc.n, tc.ok)
		}
	}
}

// benchServer is the service with the default reward config, its batch
// requests after the first `intact` rewritten by edit.
func benchServer(t *testing.T, intact int64, edit func([]byte) []byte) *httptest.Server {
	t.Helper()
	store, err := timers.New(timers.Options{Secret: []byte("loadgen test secret, 32 bytes..")})
	if err != nil {
		t.Fatal(err)
	}
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := verifier.New(verifier.Options{Scorer: scorer, Timers: store})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	var seen atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if seen.Add(1) > intact {
			body = edit(body)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// The service scores each length reward's corpus as the in-process scorer
// does, with no item error; one that it refuses after the verification
// pass fails the run, the item errors counted.
func TestBatchLengthRewards(t *testing.T) {
	const n, b = 256, 64
	for _, r := range lengthRewards {
		ts := benchServer(t, 1<<30, nil)
		c := config{mode: "batch", url: ts.URL, client: "raw", reward: r.DataSource, corpusN: n, seed: 3, clients: 2, batch: b,
			items: n, checkEvery: 1, timeout: 10 * time.Second}
		if err := runBatch(c); err != nil {
			t.Errorf("%s: %v", r.DataSource, err)
		}
	}

	ts := benchServer(t, n/b, func(body []byte) []byte {
		return bytes.Replace(body, []byte(`"answer_check":"timely/general"`), []byte(`"answer_check":"nope"`), 1)
	})
	c := config{mode: "batch", url: ts.URL, client: "raw", reward: rewards.ThinkPrune.DataSource, corpusN: n, seed: 3, clients: 2, batch: b,
		items: n, checkEvery: 1 << 20, timeout: 10 * time.Second}
	err := runBatch(c)
	if err == nil || !strings.Contains(err.Error(), "4 responses with item errors") || !strings.Contains(err.Error(), "extra_info.answer_check") {
		t.Errorf("a refused item in the timed run: got %v, want the run failed on 4 responses with item errors naming extra_info.answer_check", err)
	}

	if _, err := lookupBenchReward("length/nope"); err == nil || !strings.Contains(err.Error(), "length/anytime") {
		t.Errorf("an unknown -reward: %v", err)
	}
}

// With -tokenizer, a length corpus carries the tokenizer's counts, which a
// scorer given the same tokenizer takes (relabel's own check) and which
// differ from the default's; the flag is refused for timely/general.
func TestRelabelWithTokenizer(t *testing.T) {
	path := filepath.Join("..", "..", "..", "tokenizer", "testdata", "qwen2.json")
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	base, err := buildCorpus(200, 7)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := relabel(base, rewards.LCPOExact, 7, tok)
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, it := range cp.items {
		var row lengthRow
		if err := json.Unmarshal(it.line, &row); err != nil {
			t.Fatal(err)
		}
		n, err := tok.Count(row.SolutionStr)
		if err != nil || *row.ExtraInfo.ResponseTokens != n {
			t.Fatalf("item %d: response_tokens %v, the tokenizer counts %d (%v)", i, *row.ExtraInfo.ResponseTokens, n, err)
		}
		if n != quarterTokens(row.SolutionStr) {
			differ++
		}
	}
	if differ < len(cp.items)/2 {
		t.Fatalf("only %d of %d counts differ from one token per 4 bytes", differ, len(cp.items))
	}
	_, err = loadCorpus(config{reward: "timely/general", tokenizer: path, corpusN: 10, seed: 1})
	if err == nil || !strings.Contains(err.Error(), "-tokenizer: timely/general has no token counts") {
		t.Fatalf("timely/general with -tokenizer: %v", err)
	}
	_, err = loadCorpus(config{reward: "length/lcpo_max", tokenizer: "missing.json", corpusN: 10, seed: 1})
	if err == nil || !strings.Contains(err.Error(), "-tokenizer: open missing.json") {
		t.Fatalf("a missing tokenizer: %v", err)
	}
}
