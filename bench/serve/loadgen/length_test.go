package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	Group     string `json:"group"`
	GroupSize int    `json:"group_size"`
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
// and scores every item without an error (relabel's own check). A
// group-wise reward's corpus comes in whole groups of -group-size
// consecutive items: each keeps its base item's reasoning and correctness,
// the members answer one problem, and share its ground truth and budget.
func TestRelabelLength(t *testing.T) {
	base, err := buildCorpus(600, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lengthRewards {
		t.Run(r.DataSource, func(t *testing.T) {
			cp, err := relabel(base, r, 7, byteCounter{}, defaultGroupSize)
			if err != nil {
				t.Fatal(err)
			}
			again, err := relabel(base, r, 7, byteCounter{}, defaultGroupSize)
			if err != nil || again.hash != cp.hash || again.scoreSum != cp.scoreSum {
				t.Fatalf("two builds differ (%v)", err)
			}
			other, err := relabel(base, r, 8, byteCounter{}, defaultGroupSize)
			if err != nil || other.hash == cp.hash {
				t.Fatalf("another seed gave the same budgets (%v)", err)
			}
			if cp.correct != base.correct || cp.reward != r || len(cp.items) != len(base.items) {
				t.Fatalf("corpus %+v", statsOf(cp))
			}
			over, under := 0, 0
			var first lengthRow // the first member of the item's group
			for i, it := range cp.items {
				var row, orig lengthRow
				if err := json.Unmarshal(it.line, &row); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(base.items[i].line, &orig); err != nil {
					t.Fatal(err)
				}
				ei := row.ExtraInfo
				if r.Grouped() {
					if i%defaultGroupSize == 0 {
						first = row
					}
					checkMember(t, i, row, first, orig.SolutionStr, base.items[i].wantFmt)
				} else if row.SolutionStr != orig.SolutionStr || !bytes.Equal(row.GroundTruth, orig.GroundTruth) || row.Group != "" || row.GroupSize != 0 {
					t.Fatalf("item %d: %q, ground truth %s, group %q of %d; want the base item's, no group", i, row.SolutionStr[:40], row.GroundTruth, row.Group, row.GroupSize)
				}
				if row.DataSource != r.DataSource || ei.AnswerCheck != "timely/general" {
					t.Fatalf("item %d: %s, answer_check %q", i, row.DataSource, ei.AnswerCheck)
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
		c := config{mode: "batch", url: ts.URL, client: "raw", reward: r.DataSource, groupSize: defaultGroupSize, corpusN: n, seed: 3,
			clients: 2, batch: b, items: n, checkEvery: 1, timeout: 10 * time.Second}
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
	cp, err := relabel(base, rewards.LCPOExact, 7, tok, defaultGroupSize)
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

// checkMember checks item i of a group-wise corpus against its group's
// first member and its base item's response orig: the key and size of
// its group, the group's ground truth and budget, and the base item's
// reasoning, its answer replaced when the base's answer parses.
func checkMember(t *testing.T, i int, row, first lengthRow, orig string, wantFmt bool) {
	t.Helper()
	require.Equal(t, "g"+strconv.Itoa(i/defaultGroupSize), row.Group, "item %d", i)
	require.Equal(t, defaultGroupSize, row.GroupSize, "item %d", i)
	require.JSONEq(t, string(first.GroundTruth), string(row.GroundTruth), "item %d: the group's ground truth", i)
	require.NotNil(t, row.ExtraInfo.TokenBudget, "item %d", i)
	require.Equal(t, *first.ExtraInfo.TokenBudget, *row.ExtraInfo.TokenBudget, "item %d: the group's budget", i)
	if !wantFmt {
		require.Equal(t, orig, row.SolutionStr, "item %d: a response whose answer does not parse is kept", i)
		return
	}
	require.True(t, strings.HasPrefix(row.SolutionStr, orig[:strings.LastIndex(orig, "\n\n")+2]), "item %d: the base item's reasoning", i)
	require.True(t, strings.HasSuffix(row.SolutionStr, "</answer>"), "item %d: %q", i, answerTail(row.SolutionStr))
}

// groupOracle is a group-wise reward's score of each member of a group
// from its tokens and correctness, as the papers write it (rewards/group.go).
func groupOracle(r *rewards.Reward, n []float64, c []bool) []float64 {
	lo, hi, sum, shortest, solved := math.Inf(1), math.Inf(-1), 0.0, math.Inf(1), 0.0
	for i := range n {
		lo, hi, sum = min(lo, n[i]), max(hi, n[i]), sum+n[i]
		if c[i] {
			shortest = min(shortest, n[i])
			solved++
		}
	}
	out := make([]float64, len(n))
	for i := range n {
		ci := 0.0
		if c[i] {
			ci = 1
		}
		switch r {
		case rewards.Kimi:
			lambda := 0.0
			if hi > lo {
				lambda = 0.5 - (n[i]-lo)/(hi-lo)
			}
			out[i] = ci + ci*lambda + (1-ci)*min(0, lambda)
		case rewards.ShorterBetter:
			sol := sum / float64(len(n))
			if !math.IsInf(shortest, 1) {
				sol = shortest
			}
			out[i] = 2*ci - 0.001*math.Abs(n[i]-sol)
		case rewards.ALP:
			out[i] = ci - 1e-7*max(solved/float64(len(n)), 1/float64(len(n)))*n[i]
		}
	}
	return out
}

// A group-wise reward's corpus is what a GRPO trainer sends: groups whose
// members differ in length and mostly mix right and wrong answers, each
// item's expected score its group's score under the papers' formulas;
// groups that do not divide the corpus are refused.
func TestRelabelGroups(t *testing.T) {
	base, err := buildCorpus(600, 7)
	require.NoError(t, err)
	for _, r := range []*rewards.Reward{rewards.Kimi, rewards.ShorterBetter, rewards.ALP} {
		t.Run(r.DataSource, func(t *testing.T) {
			for _, g := range []int{defaultGroupSize, 4, 1} {
				cp, err := relabel(base, r, 7, byteCounter{}, g)
				require.NoError(t, err, "groups of %d", g)
				require.Equal(t, g, cp.groupSize)
				mixed := 0
				for lo := 0; lo < len(cp.items); lo += g {
					n, c := make([]float64, g), make([]bool, g)
					for j := range g {
						var row lengthRow
						require.NoError(t, json.Unmarshal(cp.items[lo+j].line, &row))
						require.Equal(t, "g"+strconv.Itoa(lo/g), row.Group)
						n[j], c[j] = float64(*row.ExtraInfo.ResponseTokens), cp.items[lo+j].wantAcc
					}
					if g > 1 {
						assert.NotEqual(t, slices.Min(n), slices.Max(n), "group %d: every member as long", lo/g)
					}
					if slices.Contains(c, true) && slices.Contains(c, false) {
						mixed++
					}
					for j, want := range groupOracle(r, n, c) {
						assert.InDelta(t, want, cp.items[lo+j].expected, 1e-9, "item %d", lo+j)
					}
				}
				if g == defaultGroupSize {
					assert.Greater(t, mixed, len(cp.items)/g*9/10, "groups mixing right and wrong answers")
				}
			}
			_, err := relabel(base, r, 7, byteCounter{}, 7)
			require.ErrorContains(t, err, "-group-size 7 does not divide the corpus's 600 items")
		})
	}
}

func TestGroupBatch(t *testing.T) {
	for _, tc := range []struct {
		batch, group, n, want int
	}{
		{64, 0, 600, 64},    // not group-wise
		{64, 8, 600, 64},    // whole groups already
		{60, 8, 600, 56},    // rounded down
		{5, 8, 600, 8},      // one group at least
		{1000, 8, 600, 600}, // no more than the corpus
		{64, 1, 600, 64},
	} {
		cp := &corpus{items: make([]corpusItem, tc.n), groupSize: tc.group}
		assert.Equal(t, tc.want, groupBatch(tc.batch, cp), "batch %d, groups of %d, %d items", tc.batch, tc.group, tc.n)
	}
}

// Every request of a group-wise corpus holds whole groups, each once, as
// the service's own grouping (rewards.GroupItems) finds them, including
// the batches that wrap at the corpus's end; a batch that would split a
// group is refused.
func TestBatchBodiesWholeGroups(t *testing.T) {
	base, err := buildCorpus(600, 3)
	require.NoError(t, err)
	cp, err := relabel(base, rewards.ShorterBetter, 3, byteCounter{}, defaultGroupSize)
	require.NoError(t, err)
	for _, tc := range []struct {
		batch int
		err   string
	}{
		{64, ""},
		{8, ""},
		{600, ""},
		{60, "-batch 60: length/shorterbetter scores groups of 8 whole; want a multiple of 8"},
		{608, "at most the corpus's 600 items"},
	} {
		c := config{url: "http://127.0.0.1:1", batch: tc.batch}
		bodies, _, err := batchBodies(c, cp)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		for k, bb := range bodies {
			var req struct {
				Items []rewards.Item `json:"items"`
			}
			require.NoError(t, json.Unmarshal(bb.req.body, &req), "batch %d", k)
			require.Len(t, req.Items, tc.batch)
			groups, err := rewards.GroupItems(req.Items, nil)
			require.NoError(t, err, "batch %d of %d items", k, tc.batch)
			require.Len(t, groups, tc.batch/defaultGroupSize)
		}
	}
}

// The service refuses a request that splits a group (so that a run that
// passes sent whole groups), and a run whose -batch splits groups is cut
// to whole ones.
func TestBatchGroups(t *testing.T) {
	ts := benchServer(t, 1<<30, nil)
	base, err := buildCorpus(64, 3)
	require.NoError(t, err)
	cp, err := relabel(base, rewards.Kimi, 3, byteCounter{}, defaultGroupSize)
	require.NoError(t, err)
	var body bytes.Buffer
	body.WriteString(`{"items":[`)
	for j := range 4 {
		if j > 0 {
			body.WriteByte(',')
		}
		body.Write(cp.items[j].line)
	}
	body.WriteString(`]}`)
	resp, err := http.Post(ts.URL+"/v1/score/batch", "application/json", &body)
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(answer), "invalid_group")

	for _, tc := range []struct {
		reward      *rewards.Reward
		batch, size int
	}{
		{rewards.Kimi, 60, 8},
		{rewards.ShorterBetter, 30, 4},
		{rewards.Kimi, 16, 16},
	} {
		c := config{mode: "batch", url: ts.URL, client: "raw", reward: tc.reward.DataSource, groupSize: tc.size, corpusN: 256, seed: 5,
			clients: 2, batch: tc.batch, items: 512, checkEvery: 1, timeout: 10 * time.Second}
		assert.NoError(t, runBatch(c), "%s, -batch %d, -group-size %d", tc.reward.DataSource, tc.batch, tc.size)
	}
}
