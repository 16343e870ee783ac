package prefpairs_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/prefpairs"
)

// The tests in this file pin the boundaries of Build's options and filters
// and the counts of its summary.

// record is a small trajectory without times: the assistant calls get_x,
// the tool answers, and the user asks again. extra holds more top-level
// fields, each followed by a comma.
func record(id, extra string) string {
	return `{"id":"` + id + `",` + extra + `"history":[` +
		`{"role":"user","content":"x?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_x","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"1"},` +
		`{"role":"user","content":"and now?"}]}`
}

func noTimes() prefpairs.Options {
	opt := prefpairs.DefaultOptions()
	opt.TimeFormat = prefpairs.TimeNone
	return opt
}

// TestShardOfOneHasEverything: a count of 0 or 1 does not shard, whatever
// the index.
func TestShardOfOneHasEverything(t *testing.T) {
	for _, sh := range []shard.Shard{{}, {Index: 0, Count: 1}, {Index: 3, Count: 1}, {Index: 1, Count: 0}} {
		for _, id := range []string{"", "a_1", "flight_status_1", "weather_station_9"} {
			assert.True(t, sh.HasID(id), "%+v has %q", sh, id)
		}
	}
}

// TestBuildOptionBounds: the bounds of the options are inclusive where the
// documentation says so, and an unsharded build (count 1) takes any index.
func TestBuildOptionBounds(t *testing.T) {
	tests := []struct {
		name string
		edit func(*prefpairs.Options)
		err  string
	}{
		{name: "min margin 0", edit: func(o *prefpairs.Options) { o.MinMargin = 0 }},
		{name: "min margin 1.5", edit: func(o *prefpairs.Options) { o.MinMargin = 1.5 }},
		{name: "negative min margin", edit: func(o *prefpairs.Options) { o.MinMargin = -0.01 }, err: "min_margin -0.01 is outside [0, 1.5]"},
		{name: "label-only margin 0", edit: func(o *prefpairs.Options) { o.LabelOnlyMargin = 0 }},
		{name: "label-only margin 1.5", edit: func(o *prefpairs.Options) { o.LabelOnlyMargin = 1.5 }},
		{name: "label-only margin past 1.5", edit: func(o *prefpairs.Options) { o.LabelOnlyMargin = 1.51 }, err: "label_only_margin 1.51 is outside [0, 1.5]"},
		{name: "negative label-only margin", edit: func(o *prefpairs.Options) { o.LabelOnlyMargin = -1 }, err: "label_only_margin -1 is outside"},
		{name: "shard 1/2", edit: func(o *prefpairs.Options) { o.Shard = shard.Shard{Index: 1, Count: 2} }},
		{name: "shard 2/2", edit: func(o *prefpairs.Options) { o.Shard = shard.Shard{Index: 2, Count: 2} }, err: "shard 2/2: want 0 <= i < n"},
		{name: "shard -1/2", edit: func(o *prefpairs.Options) { o.Shard = shard.Shard{Index: -1, Count: 2} }, err: "shard -1/2"},
		{name: "count 1 with index 3", edit: func(o *prefpairs.Options) { o.Shard = shard.Shard{Index: 3, Count: 1} }},
		{name: "tool response", edit: func(o *prefpairs.Options) { o.ToolResponse = "all" }, err: `tool_response "all" is not last_turn or last_call`},
		{name: "time format", edit: func(o *prefpairs.Options) { o.TimeFormat = "unix" }, err: `unknown time format "unix"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := noTimes()
			tc.edit(&opt)
			// Two label-only samples (margin opt.LabelOnlyMargin) and two
			// scored ones (S 0 and 3, margin 1.5), each in its own shard
			// of two.
			var in strings.Builder
			for _, id := range []string{"a_1", "b_1", "c_1", "d_1", "e_1", "f_1"} {
				in.WriteString(record(id, `"elapse":0,"preference":"tool","direct_answer":"d",`) + "\n")
			}
			for _, id := range []string{"s_1", "s_2", "s_3", "s_4"} {
				in.WriteString(record(id, `"elapse":1,"pref_score":[0,0,3],"direct_answer":"d",`) + "\n")
			}
			pairs, sum, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(in.String())))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Nil(t, sum)
				return
			}
			if err != nil {
				require.ErrorContains(t, err, "no pairs") // a shard may be empty
			}
			for _, p := range pairs {
				assert.True(t, opt.Shard.HasID(p.ID))
				assert.GreaterOrEqual(t, p.Margin, opt.MinMargin)
			}
			if opt.Shard.Count <= 1 {
				assert.Equal(t, 10, sum.Records, "an unsharded build reads every record")
				wantPairs := 10
				if opt.MinMargin > opt.LabelOnlyMargin {
					wantPairs = 4
				}
				assert.Len(t, pairs, wantPairs)
			}
		})
	}
}

// TestBuildConfidentBounds: the confident-only filter keeps S = 0.5 and
// S = 2.5 and drops what lies strictly between.
func TestBuildConfidentBounds(t *testing.T) {
	tests := []struct {
		scores string
		keep   []int // elapse levels kept
	}{
		{"[0.5,2.5,2.49]", []int{0, 1}},
		{"[0.51,1.4,1.6]", nil},
		{"[0,3,2.5]", []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.scores, func(t *testing.T) {
			opt := noTimes()
			opt.ConfidentOnly = true
			rec := record("q_1", `"pref_score":`+tc.scores+`,"direct_answer":"d",`)
			pairs, sum, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(rec)))
			if len(tc.keep) == 0 {
				require.ErrorContains(t, err, "no pairs")
			} else {
				require.NoError(t, err)
			}
			var got []int
			for _, p := range pairs {
				got = append(got, p.Elapse)
			}
			assert.Equal(t, tc.keep, got)
			assert.Equal(t, 3-len(tc.keep), sum.Dropped.NotConfident)
		})
	}
}

// TestBuildRepeatsAFirstTurnCallWithoutIDs: the turn to repeat may be the
// conversation's first message, and calls without ids get numbered ones.
func TestBuildRepeatsAFirstTurnCallWithoutIDs(t *testing.T) {
	rec := `{"id":"z_1","elapse":2,"preference":"tool","direct_answer":"d","history":[` +
		`{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"a","arguments":"{}"}},{"type":"function","function":{"name":"b","arguments":"{\"k\":1}"}}]},` +
		`{"role":"tool","content":"1"},{"role":"tool","content":"2"},` +
		`{"role":"user","content":"and now?"}]}`
	for _, tc := range []struct {
		mode      prefpairs.ToolResponse
		ids, fns  []string
		arguments string
	}{
		{prefpairs.RepeatLastTurn, []string{"call_refresh_0", "call_refresh_1"}, []string{"a", "b"}, `{"k":1}`},
		{prefpairs.RepeatLastCall, []string{"call_refresh_0"}, []string{"b"}, `{"k":1}`},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			opt := noTimes()
			opt.ToolResponse = tc.mode
			pairs, _, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(rec)))
			require.NoError(t, err)
			require.Len(t, pairs, 1)
			require.Len(t, pairs[0].Chosen, 1)
			calls := pairs[0].Chosen[0].ToolCalls
			var ids, fns []string
			for _, c := range calls {
				ids = append(ids, c.ID)
				fns = append(fns, c.Function.Name)
			}
			assert.Equal(t, tc.ids, ids)
			assert.Equal(t, tc.fns, fns)
			assert.JSONEq(t, tc.arguments, string(calls[len(calls)-1].Function.Arguments))
			assert.Equal(t, "d", pairs[0].Rejected[0].Text())
		})
	}
}

// TestBuildInputSummaries: each input's summary names its class and level
// (a level of 0 included) and counts its records and samples.
func TestBuildInputSummaries(t *testing.T) {
	v1 := "[" + record("a_1", `"direct_answer":"d",`) + "," + record("b_1", `"direct_answer":"d",`) + "]"
	jsonl := record("c_1", `"preference":"direct","direct_answer":"d",`) + "\n" +
		record("d_1", `"pref_score":[1.5,null,3],"direct_answer":"d",`) + "\n" +
		record("e_1", `"direct_answer":"d",`) + "\n"
	_, sum, err := build(t, noTimes(),
		prefpairs.InputFromName("preferTool_elapse_0.json", strings.NewReader(v1)),
		prefpairs.InputFromName("more.jsonl", strings.NewReader(jsonl)))
	require.NoError(t, err)
	require.Len(t, sum.Inputs, 2)
	first, second := sum.Inputs[0], sum.Inputs[1]
	assert.Equal(t, "preferTool_elapse_0.json", first.Name)
	assert.Equal(t, conversation.PreferTool, first.Label)
	require.NotNil(t, first.Elapse, "a file at elapse level 0 names its level")
	assert.Equal(t, 0, *first.Elapse)
	assert.Equal(t, 2, first.Records)
	assert.Equal(t, 2, first.Samples, "one sample per record at the file's level")
	assert.Equal(t, "more.jsonl", second.Name)
	assert.Empty(t, second.Label)
	assert.Nil(t, second.Elapse)
	assert.Equal(t, 3, second.Records)
	assert.Equal(t, 9, second.Samples, "three levels per record")
	assert.Equal(t, 5, sum.Records)
	assert.Equal(t, 11, sum.Samples)
	// c_1: 3 labelled; d_1: a tie, an unlabelled level and S 3; e_1: none.
	assert.Equal(t, 2+3+1, sum.Pairs)
	assert.Equal(t, prefpairs.DropCounts{Ties: 1, Unlabelled: 1 + 3}, sum.Dropped)
}

// TestBuildShardsSkipOtherShardsRecords: a record of another shard is passed
// over on its id, even when the rest of it is malformed, so only the shard
// that owns it reports it. Scores of the shard's own trajectories count as
// matched; a score for a trajectory that no input has counts as unmatched
// in its shard alone.
func TestBuildShardsSkipOtherShardsRecords(t *testing.T) {
	var reported, unmatched int
	for i := range 2 {
		opt := demoOptions(t)
		opt.CountOnly = true
		opt.Shard = shard.Shard{Index: i, Count: 2}
		opt.Scores[prefpairs.SampleKey{ID: "elsewhere_3", Elapse: 0}] = prefpairs.Score{Mean: 3, Votes: 2}
		data := string(demoFile(t, "trajectories.jsonl")) + `{"id": "broken_7", "history": 5}` + "\n"
		_, sum, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(data)))
		if err != nil && strings.Contains(err.Error(), "broken_7") {
			reported++
			continue
		}
		if err != nil {
			require.ErrorContains(t, err, "no pairs") // a shard may be empty
		}
		assert.Contains(t, []int{0, 1}, sum.UnmatchedScores, "shard %d", i)
		unmatched += sum.UnmatchedScores
	}
	assert.Equal(t, 1, reported, "the malformed record is reported by its own shard alone")
	if reported == 1 {
		// The shard that stopped at broken_7 did not count its scores.
		assert.LessOrEqual(t, unmatched, 1)
	}

	// Without the malformed record, both shards finish and the one unmatched
	// score is counted once.
	unmatched = 0
	for i := range 2 {
		opt := demoOptions(t)
		opt.CountOnly = true
		opt.Shard = shard.Shard{Index: i, Count: 2}
		opt.Scores[prefpairs.SampleKey{ID: "elsewhere_3", Elapse: 0}] = prefpairs.Score{Mean: 3, Votes: 2}
		_, sum, err := build(t, opt, demoInput(t))
		if err != nil {
			require.ErrorContains(t, err, "no pairs")
		}
		assert.Contains(t, []int{0, 1}, sum.UnmatchedScores, "shard %d", i)
		unmatched += sum.UnmatchedScores
	}
	assert.Equal(t, 1, unmatched)
}

// barrierGenerator blocks each call until want calls are in flight at once,
// and records whether that happened; after wait without it, calls stop
// blocking so that a build with less concurrency ends quickly.
type barrierGenerator struct {
	want     int
	wait     time.Duration
	mu       sync.Mutex
	inFlight int
	reached  chan struct{}
	gaveUp   chan struct{}
	once     sync.Once
	giveUp   sync.Once
}

func newBarrierGenerator(want int, wait time.Duration) *barrierGenerator {
	return &barrierGenerator{want: want, wait: wait, reached: make(chan struct{}), gaveUp: make(chan struct{})}
}

func (g *barrierGenerator) Generate(ctx context.Context, req prefpairs.DirectRequest) (string, error) {
	g.mu.Lock()
	g.inFlight++
	if g.inFlight >= g.want {
		g.once.Do(func() { close(g.reached) })
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.reached:
	case <-g.gaveUp:
	case <-time.After(g.wait):
		g.giveUp.Do(func() { close(g.gaveUp) })
	}
	return "direct reply to " + req.Key.ID, nil
}

func (g *barrierGenerator) wasReached() bool {
	select {
	case <-g.reached:
		return true
	default:
		return false
	}
}

// TestBuildGeneratesWithAtLeast16Workers: with Workers 0 and a generator,
// the build runs at least 16 batches at once, so at least 16 replies are
// generated concurrently even on a small machine.
func TestBuildGeneratesWithAtLeast16Workers(t *testing.T) {
	var in strings.Builder
	for i := range 17 * 64 { // batches of 64 records
		in.WriteString(record(fmt.Sprintf("w_%d", i), `"elapse":0,"preference":"tool",`) + "\n")
	}
	gen := newBarrierGenerator(16, 3*time.Second)
	opt := noTimes()
	opt.Generator = gen
	pairs, sum, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(in.String())))
	require.NoError(t, err)
	assert.Len(t, pairs, 17*64)
	assert.Equal(t, map[string]int{"generated": 17 * 64}, sum.DirectSource)
	assert.True(t, gen.wasReached(), "16 replies were generated at once")
}

// TestBuildHonoursWorkers: an explicit Workers 1 runs one batch at a time,
// generator or not.
func TestBuildHonoursWorkers(t *testing.T) {
	var in strings.Builder
	for i := range 2 * 64 {
		in.WriteString(record(fmt.Sprintf("w_%d", i), `"elapse":0,"preference":"tool",`) + "\n")
	}
	gen := newBarrierGenerator(2, 200*time.Millisecond)
	opt := noTimes()
	opt.Generator = gen
	opt.Workers = 1
	pairs, _, err := build(t, opt, prefpairs.InputFromName("in.jsonl", strings.NewReader(in.String())))
	require.NoError(t, err)
	assert.Len(t, pairs, 2*64)
	assert.False(t, gen.wasReached(), "two replies were generated at once")
}
