package budget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/timers"
)

// taskLines returns n general tasks; every third has a baseline.
func taskLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		base := ""
		if i%3 == 0 {
			base = fmt.Sprintf(`,"baseline_seconds":%d.5`, 2+i%40)
		}
		lines[i] = fmt.Sprintf(`{"id":"task-%d","question":"What is %d + %d?","answer":%d%s}`, i, i, i, 2*i, base)
	}
	return lines
}

func build(t *testing.T, input string, opt Options) ([]Row, *Summary) {
	t.Helper()
	var rows []Row
	sum, err := Build(context.Background(), strings.NewReader(input), "tasks.jsonl", opt, func(r *Row) error {
		rows = append(rows, *r)
		return nil
	})
	require.NoError(t, err)
	return rows, sum
}

func byTask(rows []Row) map[string][]Row {
	m := map[string][]Row{}
	for _, r := range rows {
		r.Index = 0 // the position in the input, which shuffling changes
		m[r.TaskID] = append(m[r.TaskID], r)
	}
	return m
}

func TestIsDeterministicPerSeedAndTaskID(t *testing.T) {
	lines := taskLines(300)
	input := strings.Join(lines, "\n")
	opt := DefaultOptions(FamilyGeneral)
	opt.Seed = 11
	first, _ := build(t, input, opt)
	again, _ := build(t, input, opt)
	assert.Equal(t, first, again, "same seed, same rows")

	opt.Seed = 12
	other, _ := build(t, input, opt)
	assert.NotEqual(t, byTask(first), byTask(other), "another seed draws other budgets")

	shuffled := append([]string(nil), lines...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	opt.Seed = 11
	rows, _ := build(t, strings.Join(shuffled, "\n"), opt)
	assert.Equal(t, byTask(first), byTask(rows), "a task's rows do not depend on its position")

	union := map[string][]Row{}
	skipped := 0
	for i := range 3 {
		o := opt
		o.Select = func(id string) bool {
			h := 0
			for _, c := range id {
				h += int(c)
			}
			return h%3 == i
		}
		rows, sum := build(t, input, o)
		skipped += sum.Skipped
		for id, r := range byTask(rows) {
			require.NotContains(t, union, id)
			union[id] = r
		}
	}
	assert.Equal(t, byTask(first), union, "three shards give the rows of the whole")
	assert.Equal(t, 2*300, skipped)
}

func TestRowsPerFamily(t *testing.T) {
	one := func(f Family, line string, mutate func(*Options)) Row {
		t.Helper()
		opt := DefaultOptions(f)
		opt.Multipliers = []float64{2}
		opt.NoLimitFraction = 0
		opt.SpeedFactors = []float64{1.5}
		if mutate != nil {
			mutate(&opt)
		}
		rows, _ := build(t, line, opt)
		require.Len(t, rows, 1)
		return rows[0]
	}
	tests := []struct {
		name     string
		row      Row
		source   string
		baseline float64
		limit    float64
		ds       string
	}{
		{"general, task baseline", one(FamilyGeneral, `{"id":"a","question":"Q","answer":1,"baseline_seconds":3.333}`, nil),
			BaselineFromTask, 3.333, 6.67, "timely/general"},
		{"game, config steps and latency", one(FamilyGame, `{"id":"g","question":"Play"}`, nil),
			BaselineFromSteps, 60, 120, "timely/game"},
		{"game, task steps and latency", one(FamilyGame, `{"id":"g","question":"Play","steps":10,"step_latency_s":0.5}`, nil),
			BaselineFromSteps, 5, 10, "timely/game"},
		{"game, task steps, config latency", one(FamilyGame, `{"id":"g","question":"Play","steps":10}`, func(o *Options) { o.GameStepLatencyS = 3 }),
			BaselineFromSteps, 30, 60, "timely/game"},
		{"game, baseline wins over steps", one(FamilyGame, `{"id":"g","question":"Play","steps":10,"baseline_seconds":7}`, nil),
			BaselineFromTask, 7, 14, "timely/game"},
		{"ml, config rounds", one(FamilyML, `{"id":"m","question":"Train"}`, nil),
			BaselineFromRounds, 120, 240, "timely/ml"},
		{"ml, task rounds and latency", one(FamilyML, `{"id":"m","question":"Train","rounds":2,"round_latency_s":12.5}`, nil),
			BaselineFromRounds, 25, 50, "timely/ml"},
		{"general, a tiny budget is at least 0.01 s", one(FamilyGeneral, `{"id":"a","question":"Q","answer":1,"baseline_seconds":0.001}`, nil),
			BaselineFromTask, 0.001, 0.01, "timely/general"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.row
			assert.Equal(t, tt.source, r.BaselineSource)
			assert.InDelta(t, tt.baseline, r.BaselineS, 1e-9)
			assert.InDelta(t, tt.limit, r.TimeLimitS, 1e-9)
			assert.Equal(t, 2.0, r.Multiplier)
			assert.Equal(t, tt.ds, r.DataSource)
			assert.Equal(t, 1.5, r.SpeedFactor)
			assert.Equal(t, 0.05, r.Jitter)
			assert.Equal(t, 3600.0, r.TTLS)
			assert.True(t, strings.HasSuffix(r.User, "Your time budget for this task is "+strconv.FormatFloat(tt.limit, 'f', 2, 64)+" seconds."), r.User)
		})
	}
}

func TestDrawnBaselineIsLogNormal(t *testing.T) {
	const n = 20000
	opt := DefaultOptions(FamilyGeneral)
	opt.BaselineLogMu, opt.BaselineLogSigma = 2, 0.7
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"id":"t%d","question":"Q","answer":1}`, i))
	}
	rows, sum := build(t, strings.Join(lines, "\n"), opt)
	require.Equal(t, n, sum.BaselineSource[BaselineDrawn])
	var mean, m2 float64
	for i, r := range rows {
		x := math.Log(r.BaselineS)
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	sd := math.Sqrt(m2 / (n - 1))
	// Standard errors: 0.7/√n ≈ 0.005 for the mean, ≈ 0.0035 for the sd.
	assert.InDelta(t, 2, mean, 0.025)
	assert.InDelta(t, 0.7, sd, 0.02)
}

func TestDrawFrequencies(t *testing.T) {
	const n = 8000
	opt := DefaultOptions(FamilyGeneral)
	opt.Seed = 3
	opt.NoLimitFraction = 0.25
	rows, sum := build(t, strings.Join(taskLines(n), "\n"), opt)
	require.Equal(t, n, sum.Rows)
	// Binomial counts: within 5 standard deviations.
	within := func(what string, got int, p float64) {
		sd := math.Sqrt(n * p * (1 - p))
		assert.InDelta(t, n*p, float64(got), 5*sd, what)
	}
	within("no limit", sum.NoLimit, 0.25)
	for _, m := range []string{"0.75", "1", "2", "3"} {
		within("multiplier "+m, sum.ByMultiplier[m], 0.75/4)
	}
	for _, a := range []string{"0.50", "1.00", "2.00"} {
		within("speed factor "+a, sum.BySpeedFactor[a], 1.0/3)
	}
	for _, r := range rows {
		if r.HasLimit() {
			continue
		}
		assert.Zero(t, r.Multiplier)
		assert.True(t, strings.HasSuffix(r.User, "\n\nThere is no time limit for this task."), r.User)
		assert.NotContains(t, r.User, "seconds")
	}
}

func TestEveryMultiplier(t *testing.T) {
	opt := DefaultOptions(FamilyGeneral)
	opt.EveryMultiplier = true
	opt.NoLimitFraction = 0.5
	rows, sum := build(t, strings.Join(taskLines(200), "\n"), opt)
	tasks := byTask(rows)
	require.Len(t, tasks, 200)
	extra := 0
	for id, rs := range tasks {
		require.True(t, len(rs) == 4 || len(rs) == 5, "%s has %d rows", id, len(rs))
		for i, r := range rs {
			assert.Equal(t, i, r.Variant)
			assert.Equal(t, id+"#"+strconv.Itoa(i), r.RequestID())
			if i < 4 {
				assert.Equal(t, opt.Multipliers[i], r.Multiplier)
				assert.InDelta(t, math.Max(math.Round(r.Multiplier*r.BaselineS*100)/100, 0.01), r.TimeLimitS, 1e-9)
				assert.Equal(t, rs[0].BaselineS, r.BaselineS, "one baseline per task")
			} else {
				assert.False(t, r.HasLimit())
				extra++
			}
		}
	}
	assert.Equal(t, extra, sum.NoLimit)
	assert.Equal(t, 800, sum.WithLimit)
	assert.InDelta(t, 100, extra, 5*math.Sqrt(50))
}

func TestSpeedFactorRange(t *testing.T) {
	opt := DefaultOptions(FamilyGeneral)
	opt.SpeedFactorRange = [2]float64{0.25, 4}
	rows, _ := build(t, strings.Join(taskLines(2000), "\n"), opt)
	below := 0
	for _, r := range rows {
		require.GreaterOrEqual(t, r.SpeedFactor, 0.25)
		require.LessOrEqual(t, r.SpeedFactor, 4.0)
		require.Equal(t, r.SpeedFactor, math.Round(r.SpeedFactor*100)/100, "two decimals")
		if r.SpeedFactor < 1 {
			below++
		}
	}
	// Log-uniform: half of the draws fall below the geometric midpoint 1.
	assert.InDelta(t, 1000, below, 5*math.Sqrt(500))
}

func TestLongBudgetExtendsTheTimer(t *testing.T) {
	opt := DefaultOptions(FamilyGeneral)
	opt.Multipliers = []float64{3}
	opt.NoLimitFraction = 0
	rows, _ := build(t, `{"id":"slow","question":"Q","answer":1,"baseline_seconds":1000.004}`, opt)
	require.Len(t, rows, 1)
	assert.Equal(t, 3000.01, rows[0].TimeLimitS)
	assert.Equal(t, 6001.0, rows[0].TTLS, "twice the budget, in whole seconds")
}

func TestTaskOverrides(t *testing.T) {
	opt := DefaultOptions(FamilyGeneral)
	opt.Split = "rl"
	rows, _ := build(t, `{"id":"a","question":"Q  \n","answer":"x","ability":"math","split":"val"}`+"\n"+`{"id":"b","question":"Q","answer":"y"}`, opt)
	require.Len(t, rows, 2)
	assert.Equal(t, "math", rows[0].Ability)
	assert.Equal(t, "val", rows[0].Split)
	assert.Equal(t, "general", rows[1].Ability)
	assert.Equal(t, "rl", rows[1].Split)
	assert.True(t, strings.HasPrefix(rows[0].User, "Q\n\n"), "trailing space of the question is trimmed: %q", rows[0].User)
	assert.Equal(t, []int64{0, 1}, []int64{rows[0].Index, rows[1].Index})
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		key    string
		mutate func(*Options)
	}{
		{"family", func(o *Options) { o.Family = "chess" }},
		{"multipliers", func(o *Options) { o.Multipliers = nil }},
		{"multipliers", func(o *Options) { o.Multipliers = []float64{1, -2} }},
		{"no_limit_fraction", func(o *Options) { o.NoLimitFraction = 1.5 }},
		{"no_limit_fraction", func(o *Options) { o.NoLimitFraction = math.NaN() }},
		{"baseline_log_mu", func(o *Options) { o.BaselineLogMu = math.Inf(1) }},
		{"baseline_log_sigma", func(o *Options) { o.BaselineLogSigma = -1 }},
		{"game_steps", func(o *Options) { o.GameSteps = 0 }},
		{"game_step_latency_s", func(o *Options) { o.GameStepLatencyS = 0 }},
		{"ml_rounds", func(o *Options) { o.MLRounds = -1 }},
		{"ml_round_latency_s", func(o *Options) { o.MLRoundLatencyS = math.NaN() }},
		{"speed_factors", func(o *Options) { o.SpeedFactors = nil }},
		{"speed_factors", func(o *Options) { o.SpeedFactors = []float64{0} }},
		{"speed_factor_range", func(o *Options) { o.SpeedFactorRange = [2]float64{2, 1} }},
		{"speed_factor_range", func(o *Options) { o.SpeedFactorRange = [2]float64{0.5, 0} }},
		{"speed_factor_range", func(o *Options) { o.SpeedFactorRange = [2]float64{0.001, 1} }},
		{"jitter", func(o *Options) { o.Jitter = 1.1 }},
		{"ttl_s", func(o *Options) { o.TTLS = 0 }},
		{"split", func(o *Options) { o.Split = " " }},
		{"system_prompt", func(o *Options) { o.Prompts.System = "" }},
		{"budget_sentence", func(o *Options) { o.Prompts.BudgetSentence = "You have some seconds." }},
		{"budget_sentence", func(o *Options) { o.Prompts.BudgetSentence = "{seconds} or {seconds}" }},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			o := DefaultOptions(FamilyGeneral)
			require.NoError(t, o.Validate())
			tt.mutate(&o)
			err := o.Validate()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "budget: "+tt.key+": "), err.Error())
		})
	}
	for _, f := range Families {
		o := DefaultOptions(f)
		assert.NoError(t, o.Validate(), f)
		o.SpeedFactors = nil
		o.SpeedFactorRange = [2]float64{0.5, 2}
		assert.NoError(t, o.Validate(), "a range replaces the set")
	}
}

func TestBuildStops(t *testing.T) {
	opt := DefaultOptions(FamilyGeneral)
	input := `{"id":"a","question":"Q","answer":1}` + "\n" + `{"id":"b","question":"Q"}` + "\n"
	_, err := Build(context.Background(), strings.NewReader(input), "tasks.jsonl", opt, func(*Row) error { return nil })
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LineError{Name: "tasks.jsonl", Line: 2, ID: "b", Field: "answer", Err: le.Err}, *le)

	boom := errors.New("disk full")
	_, err = Build(context.Background(), strings.NewReader(input), "tasks.jsonl", opt, func(*Row) error { return boom })
	assert.ErrorIs(t, err, boom)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Build(ctx, strings.NewReader(input), "tasks.jsonl", opt, func(*Row) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)

	bad := opt
	bad.Jitter = 2
	_, err = Build(context.Background(), strings.NewReader(input), "tasks.jsonl", bad, func(*Row) error { return nil })
	assert.ErrorContains(t, err, "budget: jitter:")

	huge := opt
	huge.Multipliers = []float64{1000}
	huge.NoLimitFraction = 0
	_, err = Build(context.Background(), strings.NewReader(`{"id":"z","question":"Q","answer":1,"baseline_seconds":1e6}`), "tasks.jsonl", huge, func(*Row) error { return nil })
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "baseline_seconds", le.Field)
	assert.Equal(t, 1, le.Line)
}

// TestRecordLayout pins the row layout VeRL reads: every nested key on
// every row, nulls where a row has no limit or no answer.
func TestRecordLayout(t *testing.T) {
	rows := []Row{
		{DataSource: "timely/general", System: "S", User: "Q\n\nYour time budget for this task is 6.90 seconds.", Ability: "general",
			GroundTruth: strp("155"), Split: "train", Index: 0, TaskID: "a", Variant: 0, Multiplier: 0.75, BaselineS: 9.2,
			BaselineSource: BaselineFromTask, Settings: timers.Settings{TimeLimitS: 6.9, SpeedFactor: 0.5, Jitter: 0.05, TTLS: 3600}},
		{DataSource: "timely/game", System: "S", User: "Play", Ability: "game", Split: "train", Index: 1, TaskID: "g", Variant: 1,
			BaselineS: 60, BaselineSource: BaselineFromSteps, Settings: timers.Settings{SpeedFactor: 2, Jitter: 0, TTLS: 3600}},
	}
	rb := NewRecordBuilder(nil)
	defer rb.Release()
	for i := range rows {
		rb.Append(&rows[i])
	}
	require.Equal(t, 2, rb.Len())
	rec := rb.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := dataset.JSONL.NewWriter(&buf, Schema, dataset.Options{})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	want := `{"data_source":"timely/general","prompt":[{"role":"system","content":"S"},{"role":"user","content":"Q\n\nYour time budget for this task is 6.90 seconds."}],"ability":"general","reward_model":{"style":"rule","ground_truth":"155"},"extra_info":{"split":"train","index":0,"task_id":"a","variant":0,"request_id":"a#0","multiplier":0.75,"baseline_s":9.2,"baseline_source":"task","time_limit_s":6.9,"timer":{"speed_factor":0.5,"jitter":0.05},"tools_kwargs":{"get_duration":{"create_kwargs":{"speed_factor":0.5,"jitter":0.05,"time_limit_s":6.9,"ttl_s":3600.0}}},"need_tools_kwargs":true},"agent_name":"tool_agent"}` + "\n" +
		`{"data_source":"timely/game","prompt":[{"role":"system","content":"S"},{"role":"user","content":"Play"}],"ability":"game","reward_model":{"style":"rule","ground_truth":null},"extra_info":{"split":"train","index":1,"task_id":"g","variant":1,"request_id":"g#1","multiplier":null,"baseline_s":60.0,"baseline_source":"steps","time_limit_s":null,"timer":{"speed_factor":2.0,"jitter":0.0},"tools_kwargs":{"get_duration":{"create_kwargs":{"speed_factor":2.0,"jitter":0.0,"time_limit_s":0.0,"ttl_s":3600.0}}},"need_tools_kwargs":true},"agent_name":"tool_agent"}` + "\n"
	assert.Equal(t, want, buf.String())

	var pq bytes.Buffer
	pw, err := dataset.Parquet.NewWriter(&pq, Schema, dataset.Options{})
	require.NoError(t, err)
	require.NoError(t, pw.Write(rec), "Parquet holds the layout: no empty struct")
	require.NoError(t, pw.Close())
}

func TestDefaultPromptsAskForTheRewardsAnswerTag(t *testing.T) {
	p := DefaultPrompts(FamilyGeneral)
	assert.Contains(t, p.System, "<answer>")
	assert.Contains(t, p.System, GetDurationName)
	for _, f := range Families {
		p := DefaultPrompts(f)
		assert.Contains(t, p.System, GetDurationName, f)
		assert.Equal(t, 1, strings.Count(p.BudgetSentence, SecondsPlaceholder))
	}
}
