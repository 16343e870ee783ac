package timestamps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/splits/scenario"
)

const v1Dir = "../../../shared/data/tictoc-v1"

// v1Inputs returns the v1 release files as inputs, read into memory.
func v1Inputs(t testing.TB) []Input {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(v1Dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 5)
	slices.Sort(paths)
	ins := make([]Input, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		ins[i] = Input{Name: filepath.Base(p), Reader: bytes.NewReader(b)}
	}
	return ins
}

// v1Raw returns every v1 record as compact JSON, in file order.
func v1Raw(t testing.TB) [][]byte {
	t.Helper()
	raws, _ := v1RawSources(t)
	return raws
}

// v1RawSources is v1Raw with the file name of each record.
func v1RawSources(t testing.TB) ([][]byte, []string) {
	t.Helper()
	var out [][]byte
	var sources []string
	for _, in := range v1Inputs(t) {
		rd := conversation.NewReader(in.Reader, in.Name)
		for {
			raw, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			out = append(out, jsonscan.AppendCompact(nil, raw.Data))
			sources = append(sources, in.Name)
		}
	}
	require.Len(t, out, 1379)
	return out, sources
}

func jsonl(records [][]byte) []Input {
	return []Input{{Name: "records.jsonl", Reader: bytes.NewReader(append(bytes.Join(records, []byte("\n")), '\n'))}}
}

func catalog(t testing.TB) *scenario.Catalog {
	t.Helper()
	c, err := scenario.Default()
	require.NoError(t, err)
	return c
}

func v1Options(t testing.TB, seed uint64) Options {
	opt := DefaultOptions()
	opt.Seed = seed
	opt.Catalog = catalog(t)
	return opt
}

// stamp runs Stream and returns the emitted records.
func stamp(t testing.TB, ins []Input, opt Options) ([][]byte, *Summary) {
	t.Helper()
	var out [][]byte
	sum, err := Stream(context.Background(), ins, opt, func(rec []byte) error {
		out = append(out, bytes.Clone(rec))
		return nil
	})
	require.NoError(t, err)
	return out, sum
}

func parse(t testing.TB, rec []byte) *conversation.Trajectory {
	t.Helper()
	tr, err := conversation.ParseTrajectory(conversation.RawRecord{Source: "out", Record: 1, Data: rec})
	require.NoError(t, err)
	return tr
}

// withoutTimes decodes a record and drops every message's time, leaving
// what stamping must not touch.
func withoutTimes(t testing.TB, rec []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec, &m))
	for _, msg := range m["history"].([]any) {
		delete(msg.(map[string]any), "time")
	}
	return m
}

func TestV1(t *testing.T) {
	raws, sources := v1RawSources(t)
	out, sum := stamp(t, v1Inputs(t), v1Options(t, 1))
	require.Len(t, out, len(raws))
	assert.Equal(t, 1379, sum.Records)
	assert.Equal(t, 1379, sum.Stamped)
	assert.Equal(t, map[string]int{FromCatalog: 1379}, sum.SensitivityFrom)
	assert.Equal(t, map[string]int{FromRecord: 1379}, sum.StartFrom)
	assert.Equal(t, 1379, sum.BySensitivity["low"]+sum.BySensitivity["medium"]+sum.BySensitivity["high"])
	for _, l := range scenario.Sensitivities {
		assert.Positive(t, sum.BySensitivity[l], l)
	}
	gaps := DefaultOptions().Gaps
	cat := catalog(t)
	for i, rec := range out {
		assert.NotContains(t, string(rec), "\n")
		in, got := parse(t, raws[i]), parse(t, rec)
		require.Equal(t, in.ID, got.ID)
		field, err := got.CheckTimes()
		require.NoError(t, err, "%s: %s", got.ID, field)
		assert.Equal(t, in.History[0].Time, got.History[0].Time, "%s: the start is the record's", got.ID)
		// The file's name held each record's class and elapse level: the
		// record now carries them, so that merged files read back.
		want := withoutTimes(t, raws[i])
		class, level := "tool", 0.0
		if strings.HasPrefix(sources[i], "preferNoTool") {
			class = "direct"
		}
		fmt.Sscanf(sources[i][strings.Index(sources[i], "elapse_")+len("elapse_"):], "%g", &level)
		want["preference"], want["elapse"] = class, level
		assert.Equal(t, want, withoutTimes(t, rec), "%s: only times, the class and the level may change", got.ID)

		sc, err := cat.Resolve(got.ID)
		require.NoError(t, err)
		penult := got.History[len(got.History)-2].Time
		for k, ft := range got.FinalTimes {
			gap := ft.Sub(penult).Seconds()
			g := gaps[sc.Sensitivity][k]
			assert.True(t, gap >= g.Min-0.5 && gap <= g.Max+0.5, "%s: %s gap %g s outside [%g, %g]", got.ID, levelNames[k], gap, g.Min, g.Max)
			if k > 0 {
				assert.True(t, ft.After(got.FinalTimes[k-1]), "%s: gap %d not after gap %d", got.ID, k, k-1)
			}
		}
		for j, m := range got.History[:len(got.History)-1] {
			assert.Equal(t, m.Time, m.Time.Round(time.Second), "%s: history[%d] not whole seconds", got.ID, j)
		}
	}
}

func TestDeterministic(t *testing.T) {
	join := func(recs [][]byte) []byte { return bytes.Join(recs, []byte("\n")) }
	opt := v1Options(t, 42)
	first, _ := stamp(t, v1Inputs(t), opt)
	again, _ := stamp(t, v1Inputs(t), opt)
	assert.True(t, bytes.Equal(join(first), join(again)), "a rerun with the same seed differs")

	opt.Workers = 1
	serial, _ := stamp(t, v1Inputs(t), opt)
	assert.True(t, bytes.Equal(join(first), join(serial)), "one worker differs from many")

	other, _ := stamp(t, v1Inputs(t), v1Options(t, 43))
	assert.False(t, bytes.Equal(join(first), join(other)), "another seed gives the same output")
}

// TestOrderAndShardInvariance: a trajectory's times depend on the seed
// and its id only, whatever the order of the input, its layout (JSON array
// or JSONL) and the shard it is stamped in.
func TestOrderAndShardInvariance(t *testing.T) {
	opt := v1Options(t, 7)
	// The copies of a trajectory in the v1 files differ only in the class
	// and level their file names give them.
	fromName := regexp.MustCompile(`,"preference":"(tool|direct)","elapse":[0-2]}$`)
	byID := func(recs [][]byte) map[string]string {
		m := map[string]string{}
		for _, rec := range recs {
			rec = fromName.ReplaceAll(rec, []byte("}"))
			id := parse(t, rec).ID
			if prev, ok := m[id]; ok {
				require.Equal(t, prev, string(rec), "%s: the copies of a trajectory differ", id)
			}
			m[id] = string(rec)
		}
		return m
	}
	ordered, _ := stamp(t, v1Inputs(t), opt)
	want := byID(ordered)
	require.Len(t, want, 725)

	raws := v1Raw(t)
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(raws), func(i, j int) { raws[i], raws[j] = raws[j], raws[i] })
	shuffled, _ := stamp(t, jsonl(raws), opt)
	assert.Equal(t, want, byID(shuffled))

	const n = 3
	union := map[string]string{}
	total := 0
	for i := 0; i < n; i++ {
		opt := opt
		opt.Keep = func(id string) bool { return int(streamHash(0, 0, id)%n) == i }
		part, sum := stamp(t, jsonl(raws), opt)
		assert.Equal(t, 1379, sum.Records)
		assert.Equal(t, len(part), sum.Stamped)
		assert.Equal(t, 1379-len(part), sum.OtherShards)
		total += len(part)
		for id, rec := range byID(part) {
			_, dup := union[id]
			require.False(t, dup, "%s in two shards", id)
			union[id] = rec
		}
	}
	assert.Equal(t, 1379, total)
	assert.Equal(t, want, union)
}

const modelRecord = `{"id":"model_1","sensitivity":"high","history":[` +
	`{"role":"system","content":"You help.","time":"2025-01-01T00:00:00Z"},` +
	`{"role":"user","content":"one two three"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_x","arguments":"{\"a\": 1}"}}]},` +
	`{"role":"tool","tool_call_id":"c1","name":"get_x","content":"result"},` +
	`{"role":"assistant","content":"w1 w2 w3 w4 w5 w6 w7 w8"},` +
	`{"role":"user","content":"a b c d e f g h i j"},` +
	`{"role":"user","content":"and now?"}],"function":[]}`

// pinned returns options whose speeds are fixed (to 1e-9) and without
// jitter or rounding, so that the model's arithmetic can be checked.
func pinned(r, w, g float64) Options {
	opt := DefaultOptions()
	opt.Read = TruncatedNormal{Mu: r, Sigma: 1, Min: r - 1e-9, Max: r + 1e-9}
	opt.Write = TruncatedLogNormal{Mu: math.Log(w), Sigma: 0.1, Min: w * (1 - 1e-12), Max: w * (1 + 1e-12)}
	opt.Generate = TruncatedNormal{Mu: g, Sigma: 1, Min: g - 1e-9, Max: g + 1e-9}
	opt.Jitter = Jitter{}
	opt.Resolution = 0
	return opt
}

func TestModel(t *testing.T) {
	opt := pinned(120, 30, 4)
	out, _ := stamp(t, jsonl([][]byte{[]byte(modelRecord)}), opt)
	require.Len(t, out, 1)
	got := parse(t, out[0])
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	want := []float64{
		0,             // system: the start
		0,             // first user message: opens at the start
		0.75,          // tool call: name + 2 argument words = 3 words at 4 words/s
		1.75,          // tool: 1 s
		3.75,          // 8 words at 4 words/s
		3.75 + 20 + 4, // writes 10 words at 30 wpm, reads 8 at 120 wpm
	}
	for i, w := range want {
		assert.InDelta(t, w, got.History[i].Time.Sub(start).Seconds(), 1e-6, "history[%d]", i)
	}
	for k, ft := range got.FinalTimes {
		g := opt.Gaps["high"][k]
		gap := ft.Sub(got.History[5].Time).Seconds()
		assert.True(t, gap >= g.Min && gap <= g.Max, "%s gap %g", levelNames[k], gap)
	}

	opt.Jitter = Jitter{User: 30, Assistant: 30, Tool: 30}
	opt.Resolution = time.Second
	for seed := uint64(0); seed < 200; seed++ {
		opt.Seed = seed
		out, _ := stamp(t, jsonl([][]byte{[]byte(modelRecord)}), opt)
		got := parse(t, out[0])
		field, err := got.CheckTimes()
		require.NoError(t, err, "seed %d: %s: large jitter made time go backwards", seed, field)
	}
}

// TestedDistributions recovers r, w, g and the final gaps from the
// times the stamper writes and tests them against the exact truncated
// distributions, so the test covers the stamper's use of the samplers too.
func TestStampedDistributions(t *testing.T) {
	const n = 6000
	var recs [][]byte
	sens := []string{"low", "medium", "high"}
	for i := 0; i < n; i++ {
		recs = append(recs, fmt.Appendf(nil, `{"id":"trial_%d","sensitivity":%q,"history":[`+
			`{"role":"system","content":"s","time":"2025-01-01T00:00:00Z"},`+
			`{"role":"user","content":"open"},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},`+
			`{"role":"tool","tool_call_id":"c","content":"r"},`+
			`{"role":"user","content":"1 2 3 4 5 6 7 8 9 10"},`+
			`{"role":"assistant","content":"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"},`+
			`{"role":"user","content":"1 2 3 4 5 6 7 8 9 10"},`+
			`{"role":"user","content":"q"}]}`, i, sens[i%3]))
	}
	opt := DefaultOptions()
	opt.Seed = 11
	opt.Jitter = Jitter{}
	opt.Resolution = 0
	out, _ := stamp(t, jsonl(recs), opt)
	require.Len(t, out, n)

	var rs, ws, gs []float64
	gaps := map[string]*[3][]float64{"low": {}, "medium": {}, "high": {}}
	for _, rec := range out {
		tr := parse(t, rec)
		d := func(i int) float64 { return tr.History[i].Time.Sub(tr.History[i-1].Time).Seconds() }
		w := 10 * 60 / d(4)
		g := 20 / d(5)
		r := 20 * 60 / (d(6) - 10*60/w)
		ws, gs, rs = append(ws, w), append(gs, g), append(rs, r)
		for k, ft := range tr.FinalTimes {
			gaps[tr.Sensitivity][k] = append(gaps[tr.Sensitivity][k], ft.Sub(tr.History[6].Time).Seconds())
		}
	}
	check := func(name string, xs []float64, d distribution) {
		slices.Sort(xs)
		D := ksStatistic(xs, d.CDF)
		assert.Less(t, D, ksCritical(len(xs)), "%s: KS D = %.5f", name, D)
	}
	check("read r", rs, opt.Read)
	check("write w", ws, opt.Write)
	check("generate g", gs, opt.Generate)
	for s, levels := range gaps {
		for k, xs := range levels {
			require.Len(t, xs, n/3)
			check(s+"/"+levelNames[k], xs, opt.Gaps[s][k])
		}
	}
}

func TestFill(t *testing.T) {
	raws := v1Raw(t)
	opt := v1Options(t, 5)
	opt.Mode = ModeFill

	t.Run("complete records are kept as they are", func(t *testing.T) {
		out, sum := stamp(t, jsonl(raws[:50]), opt)
		assert.Equal(t, 0, sum.TimesFilled)
		for i, rec := range out {
			assert.JSONEq(t, string(raws[i]), string(rec))
		}
	})

	t.Run("missing times are filled between kept ones", func(t *testing.T) {
		var holes [][]byte
		for _, raw := range raws[:200] {
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			h := m["history"].([]any)
			for j := 1; j < len(h); j += 2 {
				delete(h[j].(map[string]any), "time")
			}
			b, err := json.Marshal(m)
			require.NoError(t, err)
			holes = append(holes, b)
		}
		out, sum := stamp(t, jsonl(holes), opt)
		assert.Positive(t, sum.TimesFilled)
		assert.Positive(t, sum.TimesKept)
		for i, rec := range out {
			in, got, hole := parse(t, raws[i]), parse(t, rec), parse(t, holes[i])
			field, err := got.CheckTimes()
			require.NoError(t, err, "%s: %s", got.ID, field)
			for j, m := range hole.History[:len(hole.History)-1] {
				if !m.Time.IsZero() {
					assert.Equal(t, in.History[j].Time, got.History[j].Time, "%s: kept history[%d]", got.ID, j)
				}
			}
			if len(hole.FinalTimes) == 3 {
				assert.Equal(t, in.FinalTimes, got.FinalTimes, "%s: kept final times", got.ID)
			}
		}
	})

	t.Run("a drawn time never passes the next kept one", func(t *testing.T) {
		rec := `{"id":"tight_1","sensitivity":"low","history":[` +
			`{"role":"user","content":"start","time":"2025-01-01T00:00:00Z"},` +
			`{"role":"assistant","content":"` + strings.Repeat("word ", 400) + `"},` +
			`{"role":"user","content":"` + strings.Repeat("word ", 100) + `"},` +
			`{"role":"assistant","content":"ok","time":"2025-01-01T00:00:02Z"},` +
			`{"role":"user","content":"q"}]}`
		out, _ := stamp(t, jsonl([][]byte{[]byte(rec)}), opt)
		got := parse(t, out[0])
		kept := time.Date(2025, 1, 1, 0, 0, 2, 0, time.UTC)
		assert.Equal(t, kept, got.History[3].Time)
		assert.False(t, got.History[1].Time.After(kept))
		assert.False(t, got.History[2].Time.After(kept))
		field, err := got.CheckTimes()
		require.NoError(t, err, field)
	})

	t.Run("filled times match replace mode up to the first kept one", func(t *testing.T) {
		var bare [][]byte
		for _, raw := range raws[:100] {
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			for j, msg := range m["history"].([]any) {
				if j > 0 {
					delete(msg.(map[string]any), "time")
				}
			}
			b, err := json.Marshal(m)
			require.NoError(t, err)
			bare = append(bare, b)
		}
		replaceOpt := opt
		replaceOpt.Mode = ModeReplace
		filled, _ := stamp(t, jsonl(bare), opt)
		replaced, _ := stamp(t, jsonl(raws[:100]), replaceOpt)
		for i := range filled {
			assert.JSONEq(t, string(replaced[i]), string(filled[i]))
		}
	})
}

func TestSensitivitySource(t *testing.T) {
	rec := func(id, extra string) []byte {
		return []byte(`{"id":"` + id + `"` + extra + `,"history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`)
	}
	cat := catalog(t)
	byAlias, err := cat.Resolve("live_medical_device_monitor_in_context_cnt_1")
	require.NoError(t, err)
	tests := []struct {
		name     string
		rec      []byte
		catalog  bool
		option   string
		want     string
		wantFrom string
		wantErr  string
	}{
		{"record field wins", rec("live_medical_device_monitor_in_context_cnt_1", `,"sensitivity":"low"`), true, "medium", "low", FromRecord, ""},
		{"catalog by id", rec("live_medical_device_monitor_in_context_cnt_1", ""), true, "low", byAlias.Sensitivity, FromCatalog, ""},
		{"catalog by scenario", rec("x_1", `,"scenario":"`+byAlias.Name+`"`), true, "", byAlias.Sensitivity, FromCatalog, ""},
		{"option for an unknown alias", rec("nowhere_1", ""), true, "medium", "medium", FromOption, ""},
		{"option without a catalog", rec("live_medical_device_monitor_in_context_cnt_1", ""), false, "high", "high", FromOption, ""},
		{"none", rec("nowhere_1", ""), true, "", "", "", `the scenario catalog does not know "nowhere"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Sensitivity = tt.option
			if tt.catalog {
				opt.Catalog = cat
			}
			st, err := NewStamper(opt)
			require.NoError(t, err)
			tr := parse(t, tt.rec)
			info, err := st.Stamp(tr)
			if tt.wantErr != "" {
				var fe *FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, "sensitivity", fe.Field)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, info.Sensitivity)
			assert.Equal(t, tt.wantFrom, info.SensitivityFrom)
		})
	}
}

func TestStart(t *testing.T) {
	rec := `{"id":"s_1","sensitivity":"high","history":[{"role":"system","content":"sys"},{"role":"user","content":"hi"%s},{"role":"assistant","content":"hello"},{"role":"user","content":"q"}]}`
	start := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	own := time.Date(2023, 1, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		userTime  string
		option    time.Time
		want      time.Time
		wantFrom  string
		wantField string
	}{
		{"the opening message's time", `,"time":"2023-01-01T09:00:00Z"`, start, own, FromRecord, ""},
		{"the option when the record has none", "", start, start, FromOption, ""},
		{"neither", "", time.Time{}, time.Time{}, "", "history[0].time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Start = tt.option
			st, err := NewStamper(opt)
			require.NoError(t, err)
			tr := parse(t, []byte(fmt.Sprintf(rec, tt.userTime)))
			info, err := st.Stamp(tr)
			if tt.wantField != "" {
				var fe *FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.wantField, fe.Field)
				assert.Equal(t, "s_1", fe.ID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantFrom, info.StartFrom)
			assert.Equal(t, tt.want, tr.History[0].Time, "system message")
			assert.Equal(t, tt.want, tr.History[1].Time, "opening user message")
			assert.False(t, tr.History[2].Time.Before(tt.want))
		})
	}
}

func TestStreamErrors(t *testing.T) {
	const ok = `{"role":"user","content":"q","time":["2025-01-01T00:01:00Z","2025-01-01T00:02:00Z","2025-01-01T00:03:00Z"]}`
	tests := []struct {
		name      string
		mode      Mode
		input     string
		record    int
		id        string
		field     string
		errSubstr string
	}{
		{"no start", ModeReplace, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi"},{"role":"user","content":"q"}]}`,
			1, "a_1", "history[0].time", "no start time"},
		{"no sensitivity", ModeReplace, `{"id":"nowhere_1","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`,
			1, "nowhere_1", "sensitivity", "no default sensitivity"},
		{"final message not the user's", ModeReplace, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"assistant","content":"q"}]}`,
			1, "a_1", "history[1].role", `the final message is "assistant"`},
		{"malformed record", ModeReplace, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},` + ok + "]}\n" + `{"id":"b_2","history":[{"role":"robot"}]}`,
			2, "b_2", "history[0].role", `unknown role "robot"`},
		{"fill: times go backwards", ModeFill, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"assistant","content":"x"},{"role":"user","content":"y","time":"2024-12-31T23:59:59Z"},{"role":"user","content":"q"}]}`,
			1, "a_1", "history[2].time", "is earlier than history[0].time"},
		{"fill: final time before the last kept", ModeFill, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:05:00Z"},` + ok + `]}`,
			1, "a_1", "history[1].time[0]", "is earlier than history[0].time"},
		{"fill: one final time", ModeFill, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q","time":"2025-01-01T00:00:09Z"}]}`,
			1, "a_1", "history[1].time", "use replace mode"},
		{"duplicate time key", ModeReplace, `{"id":"a_1","sensitivity":"low","history":[{"role":"user","content":"hi","time":"2025-01-01T00:00:00Z","Time":"2025-01-01T00:00:00Z"},{"role":"user","content":"q"}]}`,
			1, "a_1", "history[0].time", "more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Mode = tt.mode
			opt.Catalog = catalog(t)
			emitted := 0
			_, err := Stream(context.Background(), []Input{{Name: "in.jsonl", Reader: strings.NewReader(tt.input)}}, opt,
				func([]byte) error { emitted++; return nil })
			var re *conversation.RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "in.jsonl", re.Source)
			assert.Equal(t, tt.record, re.Record)
			assert.Equal(t, tt.id, re.ID)
			assert.Equal(t, tt.field, re.Field)
			assert.Contains(t, err.Error(), tt.errSubstr)
			assert.LessOrEqual(t, emitted, tt.record-1)
		})
	}

	t.Run("emit error stops the run", func(t *testing.T) {
		boom := errors.New("disk full")
		_, err := Stream(context.Background(), v1Inputs(t), v1Options(t, 1), func([]byte) error { return boom })
		assert.ErrorIs(t, err, boom)
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Stream(ctx, v1Inputs(t), v1Options(t, 1), func([]byte) error { return nil })
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("syntax error names the input", func(t *testing.T) {
		_, err := Stream(context.Background(), []Input{{Name: "bad.json", Reader: strings.NewReader(`[{"id": "a_1"`)}}, DefaultOptions(), func([]byte) error { return nil })
		var re *conversation.RecordError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "bad.json", re.Source)
	})
}

func TestNewStamperErrors(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Options)
		want   string
	}{
		{"mode", func(o *Options) { o.Mode = "merge" }, `mode "merge"`},
		{"sensitivity", func(o *Options) { o.Sensitivity = "extreme" }, `sensitivity "extreme"`},
		{"read sigma", func(o *Options) { o.Read.Sigma = 0 }, "reading speed: standard deviation"},
		{"read lower bound", func(o *Options) { o.Read.Min = 0 }, "reading speed: lower bound 0 must be above 0"},
		{"write lower bound", func(o *Options) { o.Write.Min = 0 }, "writing speed: lower bound 0"},
		{"generate interval", func(o *Options) { o.Generate.Max = 5 }, "generation speed: truncation interval"},
		{"tool seconds", func(o *Options) { o.ToolSeconds = -1 }, "tool seconds -1"},
		{"jitter", func(o *Options) { o.Jitter.User = math.NaN() }, "user jitter NaN"},
		{"missing gaps", func(o *Options) { delete(o.Gaps, "medium") }, "no final gaps for sensitivity medium"},
		{"bad gap", func(o *Options) { g := o.Gaps["high"]; g[2].Sigma = -1; o.Gaps["high"] = g }, "final gap high/large"},
		{"negative gap", func(o *Options) { g := o.Gaps["low"]; g[0].Min = -1; o.Gaps["low"] = g }, "final gap low/small: lower bound -1 s is negative"},
		{"resolution", func(o *Options) { o.Resolution = -time.Second }, "resolution -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			tt.modify(&opt)
			_, err := NewStamper(opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := NewStamper(Options{})
	assert.Error(t, err, "the zero Options are not usable")
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"replace", "fill"} {
		m, err := ParseMode(s)
		require.NoError(t, err)
		assert.Equal(t, Mode(s), m)
	}
	_, err := ParseMode("ModeReplace")
	assert.Error(t, err)
}

func TestCountWords(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   ", 0},
		{"one", 1},
		{" one  two\tthree\nfour ", 4},
		{"{\"a\": 1}", 2},
		{"no-break\u00a0space", 2},
		{"ideographic\u3000space", 2},
		{"naïve café", 2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, countWords(tt.in), "%q", tt.in)
	}
}

func TestSeedStream(t *testing.T) {
	draw := func(seed uint64, id string) uint64 {
		var p rand.PCG
		seedStream(&p, seed, id)
		return p.Uint64()
	}
	assert.Equal(t, draw(1, "a_1"), draw(1, "a_1"))
	assert.NotEqual(t, draw(1, "a_1"), draw(2, "a_1"))
	assert.NotEqual(t, draw(1, "a_1"), draw(1, "a_2"))
	assert.NotEqual(t, draw(1, "a_1"), draw(1, "a_1 "))
}

func ExampleStream() {
	record := `{"id":"flight_status_7","sensitivity":"high","history":[` +
		`{"role":"user","content":"Is flight BA117 on time?","time":"2025-03-01T08:00:00Z"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"flight_status","arguments":"{\"flight\": \"BA117\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","name":"flight_status","content":"{\"status\": \"on time\"}"},` +
		`{"role":"assistant","content":"BA117 is on time."},` +
		`{"role":"user","content":"Is it still on time?"}]}`
	opt := DefaultOptions()
	opt.Seed = 1
	_, err := Stream(context.Background(), []Input{{Name: "example.jsonl", Reader: strings.NewReader(record)}}, opt,
		func(rec []byte) error {
			tr, err := conversation.ParseTrajectory(conversation.RawRecord{Data: rec})
			if err != nil {
				return err
			}
			for i, m := range tr.History[:len(tr.History)-1] {
				fmt.Println(i, m.Role, conversation.FormatTime(m.Time))
			}
			for k, ft := range tr.FinalTimes {
				fmt.Println("final", levelNames[k], conversation.FormatTime(ft))
			}
			return nil
		})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0 user 2025-03-01T08:00:00Z
	// 1 assistant 2025-03-01T08:00:00Z
	// 2 tool 2025-03-01T08:00:01Z
	// 3 assistant 2025-03-01T08:00:02Z
	// final small 2025-03-01T08:00:05Z
	// final medium 2025-03-01T08:02:54Z
	// final large 2025-03-01T11:34:34Z
}

func BenchmarkStamp(b *testing.B) {
	raws := v1Raw(b)
	trs := make([]*conversation.Trajectory, len(raws))
	for i, raw := range raws {
		trs[i] = parse(b, raw)
	}
	st, err := NewStamper(v1Options(b, 1))
	require.NoError(b, err)
	var buf []byte
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		i := n % len(raws)
		if _, err := st.Stamp(trs[i]); err != nil {
			b.Fatal(err)
		}
		if buf, err = RewriteTimes(buf[:0], raws[i], trs[i]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkStream is the whole pipeline on the v1 records as JSONL:
// split, decode, stamp, rewrite, in order, on GOMAXPROCS workers.
func BenchmarkStream(b *testing.B) {
	raws := v1Raw(b)
	data := append(bytes.Join(raws, []byte("\n")), '\n')
	opt := v1Options(b, 1)
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		sum, err := Stream(context.Background(), []Input{{Name: "v1.jsonl", Reader: bytes.NewReader(data)}}, opt, func([]byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		n += sum.Stamped
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}
