package prefpairs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/prefpairs"
)

// The demo sample doubles as the hand-worked fixture: six trajectories, five
// annotators, one inconsistent submission (eli/s3) and two ties.
var demoDir = filepath.Join("..", "examples", "pairs")

func demoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(demoDir, name))
	require.NoError(t, err)
	return b
}

func demoOptions(t *testing.T) prefpairs.Options {
	t.Helper()
	votes, err := prefpairs.ReadVotes(bytes.NewReader(demoFile(t, "votes.jsonl")), "votes.jsonl")
	require.NoError(t, err)
	_, scores, _ := prefpairs.SummarizeVotes(votes, prefpairs.ConsistencyOptions{MaxInconsistencies: prefpairs.DefaultMaxInconsistencies})
	direct, err := prefpairs.ReadDirectAnswers(bytes.NewReader(demoFile(t, "direct.jsonl")), "direct.jsonl")
	require.NoError(t, err)
	opt := prefpairs.DefaultOptions()
	opt.Scores = scores
	opt.Direct = direct
	return opt
}

func build(t *testing.T, opt prefpairs.Options, inputs ...prefpairs.Input) ([]*prefpairs.Pair, *prefpairs.Summary, error) {
	t.Helper()
	var pairs []*prefpairs.Pair
	sum, err := prefpairs.Build(context.Background(), inputs, opt, func(p *prefpairs.Pair) error {
		pairs = append(pairs, p)
		return nil
	})
	return pairs, sum, err
}

func demoInput(t *testing.T) prefpairs.Input {
	return prefpairs.InputFromName("trajectories.jsonl", bytes.NewReader(demoFile(t, "trajectories.jsonl")))
}

func key(p *prefpairs.Pair) string { return fmt.Sprintf("%s/%d", p.ID, p.Elapse) }

// TestBuildHandWorked checks S, labels, margins and ties against values worked
// out by hand from examples/pairs/votes.jsonl. Kept votes per sample (ana, ben,
// chloe, dev; eli/s3 is dropped for three inconsistent trajectories):
//
//	flight_status_1   e0: 0,0,1,0 → S 0.25   e1: 2,3,2,1 → 2.00   e2: 3,3,3,3 → 3.00
//	parcel_tracker_1  e0: 0,0,0,0 → 0.00   e1: 1,2,1,2 → 1.50 tie  e2: 3,3,2,3 → 2.75
//	share_price_1     e0: 0,1,0,0 → 0.25   e1: 3,3,2,3 → 2.75   e2: 3,3,3,3 → 3.00
//	library_hours_1   e0: 0,0,0,0 → 0.00   e1: 0,0,0,1 → 0.25   e2: 1,0,1,0 → 0.50
//	weather_station_1 e0: 0,0,1,0 → 0.25   e1: 3,2,3,3 → 2.75   e2: 3,3,3,3 → 3.00
//	exchange_rate_1   e0: 0,0,0,1 → 0.25   e1: 2,1,1,2 → 1.50 tie  e2: 3,3,2,3 → 2.75
func TestBuildHandWorked(t *testing.T) {
	type want struct {
		s      float64
		label  string
		margin float64
	}
	d, tool := conversation.PreferDirect, conversation.PreferTool
	wants := map[string]want{
		"flight_status_1/0": {0.25, d, 1.25}, "flight_status_1/1": {2, tool, 0.5}, "flight_status_1/2": {3, tool, 1.5},
		"parcel_tracker_1/0": {0, d, 1.5}, "parcel_tracker_1/2": {2.75, tool, 1.25},
		"share_price_1/0": {0.25, d, 1.25}, "share_price_1/1": {2.75, tool, 1.25}, "share_price_1/2": {3, tool, 1.5},
		"library_hours_1/0": {0, d, 1.5}, "library_hours_1/1": {0.25, d, 1.25}, "library_hours_1/2": {0.5, d, 1.0},
		"weather_station_1/0": {0.25, d, 1.25}, "weather_station_1/1": {2.75, tool, 1.25}, "weather_station_1/2": {3, tool, 1.5},
		"exchange_rate_1/0": {0.25, d, 1.25}, "exchange_rate_1/2": {2.75, tool, 1.25},
	}
	pairs, sum, err := build(t, demoOptions(t), demoInput(t))
	require.NoError(t, err)
	require.Len(t, pairs, len(wants))
	for _, p := range pairs {
		w, ok := wants[key(p)]
		require.True(t, ok, "unexpected pair %s", key(p))
		require.NotNil(t, p.Score, key(p))
		assert.InDelta(t, w.s, *p.Score, 1e-12, key(p))
		assert.Equal(t, w.label, p.Label, key(p))
		assert.InDelta(t, w.margin, p.Margin, 1e-12, key(p))
		require.Len(t, p.Chosen, 1)
		require.Len(t, p.Rejected, 1)
		toolSide, directSide := p.Chosen[0], p.Rejected[0]
		if w.label == d {
			toolSide, directSide = directSide, toolSide
		}
		assert.NotEmpty(t, toolSide.ToolCalls, key(p))
		assert.Nil(t, toolSide.Content, key(p))
		assert.Empty(t, directSide.ToolCalls, key(p))
		require.NotNil(t, directSide.Content)
		assert.NotEmpty(t, *directSide.Content)
	}
	assert.Equal(t, 6, sum.Records)
	assert.Equal(t, 18, sum.Samples)
	assert.Equal(t, 16, sum.Pairs)
	assert.Equal(t, 2, sum.Dropped.Ties)
	assert.Equal(t, map[string]int{"direct": 8, "tool": 8}, sum.ByLabel)
	assert.Equal(t, map[string]int{"annotations": 16}, sum.ScoreSource)
	assert.Equal(t, map[string]int{"side_file": 16}, sum.DirectSource)
	assert.Equal(t, map[string]int{"high": 6, "medium": 7, "low": 3}, sum.BySensitivity)
}

func TestBuildFilters(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*prefpairs.Options)
		pairs     int
		dropped   prefpairs.DropCounts
		wantPairs []string
	}{
		{name: "defaults", edit: func(*prefpairs.Options) {}, pairs: 16, dropped: prefpairs.DropCounts{Ties: 2}},
		// Only flight_status_1 at elapse 1 (S = 2.0) is between 0.5 and 2.5;
		// library_hours_1 at elapse 2 has S = 0.5 exactly and stays.
		{name: "confident only", edit: func(o *prefpairs.Options) { o.ConfidentOnly = true }, pairs: 15, dropped: prefpairs.DropCounts{Ties: 2, NotConfident: 1}},
		{
			name: "min margin 1.3", edit: func(o *prefpairs.Options) { o.MinMargin = 1.3 }, pairs: 5,
			dropped:   prefpairs.DropCounts{Ties: 2, BelowMinMargin: 11},
			wantPairs: []string{"flight_status_1/2", "parcel_tracker_1/0", "share_price_1/2", "library_hours_1/0", "weather_station_1/2"},
		},
		{name: "min margin 1.5 keeps S of 0 and 3", edit: func(o *prefpairs.Options) { o.MinMargin = 1.5 }, pairs: 5, dropped: prefpairs.DropCounts{Ties: 2, BelowMinMargin: 11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := demoOptions(t)
			tt.edit(&opt)
			pairs, sum, err := build(t, opt, demoInput(t))
			require.NoError(t, err)
			assert.Len(t, pairs, tt.pairs)
			assert.Equal(t, tt.dropped, sum.Dropped)
			if tt.wantPairs != nil {
				var got []string
				for _, p := range pairs {
					got = append(got, key(p))
				}
				assert.Equal(t, tt.wantPairs, got)
			}
		})
	}
}

func TestBuildTimeRendering(t *testing.T) {
	tests := []struct {
		format   prefpairs.TimeFormat
		first    string // content of the system message
		toolTurn string // content of the assistant turn that only calls a tool
		final    string // final question of flight_status_1 at elapse 2
	}{
		{prefpairs.TimeNone, "You help travellers keep track of their flights.", "", "Is it still leaving on time, and from the same gate?"},
		{prefpairs.TimeISO, "[2026-03-02T07:10:00Z] You help travellers keep track of their flights.", "[2026-03-02T07:10:03Z]",
			"[2026-03-04T16:30:00Z] Is it still leaving on time, and from the same gate?"},
		{prefpairs.TimeISODelta, "[2026-03-02T07:10:00Z] You help travellers keep track of their flights.", "[2026-03-02T07:10:03Z; 3 seconds passed]",
			"[2026-03-04T16:30:00Z; 2 days passed] Is it still leaving on time, and from the same gate?"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			opt := demoOptions(t)
			opt.TimeFormat = tt.format
			pairs, _, err := build(t, opt, demoInput(t))
			require.NoError(t, err)
			var p *prefpairs.Pair
			for _, q := range pairs {
				if key(q) == "flight_status_1/2" {
					p = q
				}
			}
			require.NotNil(t, p)
			require.Len(t, p.Prompt, 6)
			assert.Equal(t, tt.first, p.Prompt[0].Text())
			if tt.format == prefpairs.TimeNone {
				assert.Nil(t, p.Prompt[2].Content, "a null content stays null without times")
			} else {
				assert.Equal(t, tt.toolTurn, p.Prompt[2].Text())
			}
			assert.Equal(t, tt.final, p.Prompt[5].Text())
			// Responses are what the model writes: never stamped.
			for _, m := range append(p.Chosen, p.Rejected...) {
				assert.False(t, strings.HasPrefix(m.Text(), "["), m.Text())
			}
		})
	}
}

func TestBuildToolResponse(t *testing.T) {
	find := func(pairs []*prefpairs.Pair, k string) *prefpairs.Pair {
		for _, p := range pairs {
			if key(p) == k {
				return p
			}
		}
		t.Fatalf("no pair %s", k)
		return nil
	}
	opt := demoOptions(t)
	pairs, _, err := build(t, opt, demoInput(t))
	require.NoError(t, err)
	p := find(pairs, "exchange_rate_1/2")
	require.Equal(t, conversation.PreferTool, p.Label)
	calls := p.Chosen[0].ToolCalls
	require.Len(t, calls, 2, "last_turn repeats both calls of the turn")
	assert.Equal(t, "call_001_refresh", calls[0].ID)
	assert.Equal(t, "call_002_refresh", calls[1].ID)
	assert.Equal(t, "get_rate", calls[1].Function.Name)
	assert.JSONEq(t, `{"base":"USD","quote":"JPY"}`, string(calls[1].Function.Arguments))

	opt.ToolResponse = prefpairs.RepeatLastCall
	pairs, _, err = build(t, opt, demoInput(t))
	require.NoError(t, err)
	calls = find(pairs, "exchange_rate_1/2").Chosen[0].ToolCalls
	require.Len(t, calls, 1)
	assert.Equal(t, "call_002_refresh", calls[0].ID)

	// A record's own tool_call wins.
	rec := `{"id":"x_1","tool_call":{"function":{"name":"lookup","arguments":{"q":"now"}}},"preference":"tool","direct_answer":"Same as before.",` +
		`"history":[{"role":"user","content":"hi","time":"2026-01-01T00:00:00Z"},{"role":"user","content":"again?","time":["2026-01-01T00:01:00Z","2026-01-01T01:00:00Z","2026-01-02T00:00:00Z"]}]}`
	pairs, _, err = build(t, prefpairs.DefaultOptions(), prefpairs.InputFromName("in.jsonl", strings.NewReader(rec)))
	require.NoError(t, err)
	require.Len(t, pairs, 3)
	require.Len(t, pairs[0].Chosen[0].ToolCalls, 1)
	assert.Equal(t, "lookup", pairs[0].Chosen[0].ToolCalls[0].Function.Name)
	assert.Equal(t, `{"q":"now"}`, string(pairs[0].Chosen[0].ToolCalls[0].Function.Arguments))
}

func TestBuildSourcesAndLabels(t *testing.T) {
	times := `"time":["2026-01-01T00:01:00Z","2026-01-01T01:00:00Z","2026-01-02T00:00:00Z"]`
	history := `"history":[{"role":"user","content":"price?","time":"2026-01-01T00:00:00Z"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"price","arguments":"{}"}}],"time":"2026-01-01T00:00:01Z"},` +
		`{"role":"tool","tool_call_id":"c1","name":"price","content":"5","time":"2026-01-01T00:00:02Z"},` +
		`{"role":"user","content":"and now?",` + times + `}]`
	// pref_score per level (one null → unlabelled), a per-level direct answer.
	rec := `{"id":"shop_7","scenario":"shop","sensitivity":"High","pref_score":[0.5,null,3],"direct_answer":["It was 5.",null,"Still 5."],` + history + `}`
	pairs, sum, err := build(t, prefpairs.DefaultOptions(), prefpairs.InputFromName("records.jsonl", strings.NewReader(rec)))
	require.NoError(t, err)
	require.Len(t, pairs, 2)
	assert.Equal(t, "shop", pairs[0].Scenario)
	assert.Equal(t, "high", pairs[0].Sensitivity)
	assert.Equal(t, conversation.PreferDirect, pairs[0].Label)
	assert.InDelta(t, 1.0, pairs[0].Margin, 1e-12)
	assert.Equal(t, "It was 5.", pairs[0].Chosen[0].Text())
	assert.Equal(t, "Still 5.", pairs[1].Rejected[0].Text())
	assert.Equal(t, 1, sum.Dropped.Unlabelled)
	assert.Equal(t, map[string]int{"record": 2}, sum.ScoreSource)
	assert.JSONEq(t, `[]`, pairs[0].Tools)

	// A v1 file name gives the class and level; a label-only sample keeps a
	// null score and the configured margin; the scenario is the id alias.
	rec = `{"id":"shop_counter_12",` + history + `,"function":[{"type":"function","function":{"name":"price","parameters":{"type":"object"}}}]}`
	opt := prefpairs.DefaultOptions()
	opt.LabelOnlyMargin = 0.75
	opt.Direct, err = prefpairs.ReadDirectAnswers(strings.NewReader(`{"id":"shop_counter_12","direct_answer":"5, as before."}`), "d.jsonl")
	require.NoError(t, err)
	pairs, sum, err = build(t, opt, prefpairs.InputFromName("dir/preferNoTool_elapse_1.json", strings.NewReader("["+rec+"]")))
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	p := pairs[0]
	assert.Nil(t, p.Score)
	assert.Equal(t, 0.75, p.Margin)
	assert.Equal(t, 1, p.Elapse)
	assert.Equal(t, "shop_counter", p.Scenario)
	assert.Equal(t, conversation.PreferDirect, p.Label)
	assert.Equal(t, "[2026-01-01T01:00:00Z] and now?", p.Prompt[3].Text())
	assert.JSONEq(t, `[{"type":"function","function":{"name":"price","parameters":{"type":"object"}}}]`, p.Tools)
	require.Len(t, sum.Inputs, 1)
	assert.Equal(t, conversation.PreferDirect, sum.Inputs[0].Label)

	// Human scores win over the file name, and the disagreement is counted.
	opt.Scores = map[prefpairs.SampleKey]prefpairs.Score{{ID: "shop_counter_12", Elapse: 1}: {Mean: 2.5, Votes: 4}}
	pairs, sum, err = build(t, opt, prefpairs.InputFromName("preferNoTool_elapse_1.json", strings.NewReader("["+rec+"]")))
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	assert.Equal(t, conversation.PreferTool, pairs[0].Label)
	assert.Equal(t, 1, sum.LabelDisagreements)
	assert.Equal(t, map[string]int{"annotations": 1}, sum.ScoreSource)
	assert.Zero(t, sum.UnmatchedScores)

	// Votes for a sample no input has are counted, not silently ignored.
	opt.Scores[prefpairs.SampleKey{ID: "elsewhere_3", Elapse: 0}] = prefpairs.Score{Mean: 3, Votes: 2}
	_, sum, err = build(t, opt, prefpairs.InputFromName("preferNoTool_elapse_1.json", strings.NewReader("["+rec+"]")))
	require.NoError(t, err)
	assert.Equal(t, 1, sum.UnmatchedScores)
}

func TestInputFromName(t *testing.T) {
	tests := []struct {
		name   string
		label  string
		elapse int
	}{
		{"preferTool_elapse_2.json", conversation.PreferTool, 2},
		{"data/preferNoTool_elapse_0.jsonl", conversation.PreferDirect, 0},
		{"preferTool_elapse_3.json", "", -1},
		{"trajectories.jsonl", "", -1},
		{"xpreferTool_elapse_1.json", "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := prefpairs.InputFromName(tt.name, nil)
			assert.Equal(t, tt.label, in.Label)
			assert.Equal(t, tt.elapse, in.Elapse)
		})
	}
}

// TestBuildRecordElapse: a record that says its elapse level is a sample at
// that level alone, so one file can hold a trajectory's levels as
// separate records (a merged v1 directory).
func TestBuildRecordElapse(t *testing.T) {
	good := string(demoFile(t, "trajectories.jsonl"))
	firstLine := strings.SplitN(good, "\n", 2)[0]
	all, _, err := build(t, demoOptions(t), prefpairs.InputFromName("x.jsonl", strings.NewReader(firstLine)))
	require.NoError(t, err)
	require.Len(t, all, 3, "without a level, a record is a sample at all three")
	var lines []string
	for k := range 3 {
		lines = append(lines, strings.Replace(firstLine, `{"id"`, fmt.Sprintf(`{"elapse": %d, "id"`, k), 1))
	}
	split, _, err := build(t, demoOptions(t), prefpairs.InputFromName("x.jsonl", strings.NewReader(strings.Join(lines, "\n"))))
	require.NoError(t, err)
	require.Len(t, split, 3)
	for i := range all {
		assert.Equal(t, all[i], split[i], "the same samples from three records")
	}
	one, _, err := build(t, demoOptions(t), prefpairs.InputFromName("x.jsonl", strings.NewReader(lines[1])))
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, 1, one[0].Elapse)
	_, _, err = build(t, demoOptions(t), prefpairs.InputFromName("x.jsonl", strings.NewReader(lines[1]+"\n"+lines[1])))
	assert.ErrorContains(t, err, "sample at elapse 1 was already given")
}

func TestBuildErrors(t *testing.T) {
	good := string(demoFile(t, "trajectories.jsonl"))
	firstLine := strings.SplitN(good, "\n", 2)[0]
	tests := []struct {
		name    string
		inputs  []string // name=content
		edit    func(*prefpairs.Options)
		wantErr []string
		is      error
	}{
		{
			name:    "missing direct answers",
			inputs:  []string{"trajectories.jsonl=" + good},
			edit:    func(o *prefpairs.Options) { o.Direct = nil },
			wantErr: []string{"16 samples have no direct answer, first flight_status_1 (elapse 0)"},
			is:      prefpairs.ErrMissingDirect,
		},
		{
			name:    "duplicate sample",
			inputs:  []string{"a.jsonl=" + firstLine, "b.jsonl=" + firstLine},
			wantErr: []string{"b.jsonl: record 1 (id flight_status_1)", "already given by a.jsonl"},
		},
		{
			name:    "final message not from the user",
			inputs:  []string{"x.jsonl=" + strings.Replace(firstLine, `"role": "user", "content": "Is it still`, `"role": "assistant", "content": "Is it still`, 1)},
			wantErr: []string{"x.jsonl: record 1", "id flight_status_1", "history[5].role"},
		},
		{
			name:    "no tool call to repeat",
			inputs:  []string{"x.jsonl=" + `{"id":"q_1","preference":"tool","direct_answer":"ok","history":[{"role":"user","content":"hi","time":["2026-01-01T00:01:00Z","2026-01-01T01:00:00Z","2026-01-02T00:00:00Z"]}]}`},
			wantErr: []string{"id q_1", "history: no assistant tool call to repeat"},
		},
		{
			name:    "missing time with iso rendering",
			inputs:  []string{"x.jsonl=" + strings.Replace(firstLine, `"time": "2026-03-02T07:10:03Z"`, `"time": null`, 1)},
			wantErr: []string{"id flight_status_1", "history[2].time: missing"},
		},
		{
			name:    "time going backwards",
			inputs:  []string{"x.jsonl=" + strings.Replace(firstLine, `"time": "2026-03-02T07:10:04Z"`, `"time": "2026-03-01T07:10:04Z"`, 1)},
			wantErr: []string{"history[3].time", "earlier than the previous message"},
		},
		{
			name:    "malformed record",
			inputs:  []string{"x.jsonl=" + firstLine + "\n{\"id\": \"broken_1\", \"history\": 5}\n"},
			wantErr: []string{"x.jsonl: record 2 (line 2, id broken_1): history"},
		},
		{
			name:    "nothing labelled",
			inputs:  []string{"x.jsonl=" + firstLine},
			edit:    func(o *prefpairs.Options) { o.Scores = nil },
			wantErr: []string{"no pairs", "3 without a score or label"},
		},
		{
			name:    "invalid option",
			inputs:  []string{"x.jsonl=" + firstLine},
			edit:    func(o *prefpairs.Options) { o.MinMargin = 2 },
			wantErr: []string{"min_margin 2 is outside [0, 1.5]"},
		},
		{
			name:    "a record's level against its file's",
			inputs:  []string{"preferTool_elapse_1.json=[" + strings.Replace(firstLine, `{"id"`, `{"elapse": 2, "id"`, 1) + "]"},
			wantErr: []string{"preferTool_elapse_1.json: record 1", "id flight_status_1", "elapse: 2, but the file's name says elapse level 1"},
		},
		{
			name:    "an elapse level out of range",
			inputs:  []string{"x.jsonl=" + strings.Replace(firstLine, `{"id"`, `{"elapse": 3, "id"`, 1)},
			wantErr: []string{"x.jsonl: record 1", "elapse: 3 is not an elapse level 0 to 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := demoOptions(t)
			if tt.edit != nil {
				tt.edit(&opt)
			}
			var inputs []prefpairs.Input
			for _, in := range tt.inputs {
				name, content, _ := strings.Cut(in, "=")
				inputs = append(inputs, prefpairs.InputFromName(name, strings.NewReader(content)))
			}
			emitted := 0
			_, err := prefpairs.Build(context.Background(), inputs, opt, func(*prefpairs.Pair) error { emitted++; return nil })
			require.Error(t, err)
			for _, w := range tt.wantErr {
				assert.Contains(t, err.Error(), w)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
				assert.Zero(t, emitted, "no pair is emitted once a sample lacks its direct answer")
			}
		})
	}
}

func TestBuildMissingDirectNamesFirstIDs(t *testing.T) {
	opt := demoOptions(t)
	// Keep only the direct answers of the first two trajectories.
	var keep []string
	for i, line := range strings.Split(strings.TrimSpace(string(demoFile(t, "direct.jsonl"))), "\n") {
		if i < 2 {
			keep = append(keep, line)
		}
	}
	var err error
	opt.Direct, err = prefpairs.ReadDirectAnswers(strings.NewReader(strings.Join(keep, "\n")), "d.jsonl")
	require.NoError(t, err)
	_, sum, err := build(t, opt, demoInput(t))
	require.ErrorIs(t, err, prefpairs.ErrMissingDirect)
	assert.Contains(t, err.Error(), "11 samples have no direct answer, first share_price_1 (elapse 0), share_price_1 (elapse 1)")
	assert.Equal(t, 11, sum.MissingDirect)
	assert.Len(t, sum.MissingDirectIDs, 10, "the error lists the first ten")
}

type fakeGenerator struct{ calls atomic.Int64 }

func (g *fakeGenerator) Generate(_ context.Context, req prefpairs.DirectRequest) (string, error) {
	g.calls.Add(1)
	if req.Key.ID == "broken_1" {
		return "", errors.New("model returned no text")
	}
	last := req.Messages[len(req.Messages)-1]
	return fmt.Sprintf("generated for %s at %d after %q", req.Key.ID, req.Key.Elapse, last.Text()), nil
}

func TestBuildGeneratedDirect(t *testing.T) {
	opt := demoOptions(t)
	opt.Direct = nil
	gen := &fakeGenerator{}
	opt.Generator, opt.Generated = gen, &prefpairs.GenerationProgress{}
	pairs, sum, err := build(t, opt, demoInput(t))
	require.NoError(t, err)
	assert.Len(t, pairs, 16)
	assert.EqualValues(t, 16, gen.calls.Load(), "only samples that become pairs are generated")
	assert.EqualValues(t, 16, opt.Generated.Queued(), "the progress counts the replies queued")
	assert.EqualValues(t, 16, opt.Generated.Done(), "and those returned")
	assert.Equal(t, map[string]int{"generated": 16}, sum.DirectSource)
	for _, p := range pairs {
		direct := p.Rejected[0]
		if p.Label == conversation.PreferDirect {
			direct = p.Chosen[0]
		}
		// The generator sees the rendered prompt, times included.
		assert.Contains(t, direct.Text(), fmt.Sprintf("generated for %s at %d after \"[", p.ID, p.Elapse))
	}
}

func TestBuildPreservesInputOrderAndSplit(t *testing.T) {
	opt := demoOptions(t)
	opt.Workers = 4
	opt.Split = func(p *prefpairs.Pair) (string, error) {
		if p.Sensitivity == "high" {
			return "test", nil
		}
		return "train", nil
	}
	// Many copies of the sample, re-keyed, through several workers.
	var buf bytes.Buffer
	lines := strings.Split(strings.TrimSpace(string(demoFile(t, "trajectories.jsonl"))), "\n")
	var want []string
	for c := 0; c < 50; c++ {
		for _, l := range lines {
			buf.WriteString(strings.Replace(l, `_1", "scenario"`, fmt.Sprintf(`_%d", "scenario"`, c+1), 1))
			buf.WriteByte('\n')
		}
	}
	opt.Scores = nil
	opt.Direct = nil
	opt.Generator = &fakeGenerator{}
	// Label every sample through the record's own preference.
	data := strings.ReplaceAll(buf.String(), `"sensitivity"`, `"preference": ["direct", "tool", "tool"], "sensitivity"`)
	pairs, sum, err := build(t, opt, prefpairs.InputFromName("many.jsonl", strings.NewReader(data)))
	require.NoError(t, err)
	require.Len(t, pairs, 50*6*3)
	for c := 0; c < 50; c++ {
		for _, l := range lines {
			id := strings.Split(strings.Split(l, `"id": "`)[1], `"`)[0]
			id = strings.TrimSuffix(id, "_1") + fmt.Sprintf("_%d", c+1)
			for e := 0; e < 3; e++ {
				want = append(want, fmt.Sprintf("%s/%d", id, e))
			}
		}
	}
	for i, p := range pairs {
		require.Equal(t, want[i], key(p), "pair %d out of order", i)
		if p.Sensitivity == "high" {
			assert.Equal(t, "test", p.Split)
		} else {
			assert.Equal(t, "train", p.Split)
		}
	}
	assert.Equal(t, map[string]int{"test": 300, "train": 600}, sum.BySplit)
}

func TestBuildStopsOnEmitError(t *testing.T) {
	boom := errors.New("disk full")
	n := 0
	_, err := prefpairs.Build(context.Background(), []prefpairs.Input{demoInput(t)}, demoOptions(t), func(*prefpairs.Pair) error {
		n++
		if n == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 3, n)
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := prefpairs.Build(ctx, []prefpairs.Input{demoInput(t)}, demoOptions(t), func(*prefpairs.Pair) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}

func TestBuildShards(t *testing.T) {
	all, _, err := build(t, demoOptions(t), demoInput(t))
	require.NoError(t, err)
	seen := map[string]int{}
	total := 0
	for i := 0; i < 3; i++ {
		opt := demoOptions(t)
		opt.Shard = shard.Shard{Index: i, Count: 3}
		pairs, _, err := build(t, opt, demoInput(t))
		if err != nil {
			require.ErrorContains(t, err, "no pairs") // a shard may be empty
			continue
		}
		ids := map[string]bool{}
		for _, p := range pairs {
			seen[key(p)]++
			ids[p.ID] = true
		}
		for id := range ids {
			assert.True(t, opt.Shard.HasID(id))
		}
		total += len(pairs)
	}
	assert.Equal(t, len(all), total, "the shards partition the pairs")
	for k, n := range seen {
		assert.Equal(t, 1, n, k)
	}
}

func TestBuildScenarioHookAndCountOnly(t *testing.T) {
	opt := demoOptions(t)
	opt.Scenario = func(tr *conversation.Trajectory) (string, string, error) {
		if tr.ID == "library_hours_1" {
			return "", "", errors.New(`unknown scenario alias "library_hours"`)
		}
		return strings.ToUpper(tr.Scenario), "medium", nil
	}
	_, _, err := build(t, opt, demoInput(t))
	require.ErrorContains(t, err, `record 4 (line 4, id library_hours_1): id: unknown scenario alias "library_hours"`)

	opt.Scenario = func(tr *conversation.Trajectory) (string, string, error) {
		return strings.ToUpper(tr.Scenario), "medium", nil
	}
	opt.Direct = nil // count-only needs no direct replies
	opt.CountOnly = true
	pairs, sum, err := build(t, opt, demoInput(t))
	require.NoError(t, err)
	require.Len(t, pairs, 16)
	for _, p := range pairs {
		assert.Equal(t, strings.ToUpper(p.Scenario), p.Scenario)
		assert.Equal(t, "medium", p.Sensitivity)
		assert.Nil(t, p.Prompt)
		assert.Nil(t, p.Chosen)
	}
	assert.Equal(t, map[string]int{"medium": 16}, sum.BySensitivity)
}
