package rewards

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f64(x float64) *float64 { return &x }

func newTestScorer(t testing.TB, mod func(*Config)) *Scorer {
	t.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewScorer(cfg, nil)
	require.NoError(t, err)
	return s
}

// TestTimelyFormula checks eq. 9 with U from eq. 10 (sin), 11 (linear) and
// 12 (step, last entry 1.0) at the ratios the issue names, by hand:
// sin(π/8) = 0.38268343, sin(π/4) = 0.70710678, sin(π/2) = 1.
func TestTimelyFormula(t *testing.T) {
	const rf, lambda = 0.1, 0.4
	want := map[string]map[float64]float64{ // U(t/T_max)
		UtilSin:    {0: 0, 0.25: 0.3826834323650898, 0.5: 0.7071067811865476, 1: 1},
		UtilLinear: {0: 0, 0.25: 0.25, 0.5: 0.5, 1: 1},
		UtilStep:   {0: 0.25, 0.25: 0.5, 0.5: 0.75, 1: 1},
	}
	for variant, us := range want {
		for _, ratio := range []float64{0, 0.25, 0.5, 1, 1.01} {
			for _, r := range []float64{0, 0.5} {
				t.Run(fmt.Sprintf("%s/ratio=%v/r=%v", variant, ratio, r), func(t *testing.T) {
					c := DefaultConfig().Timely
					c.Utilization = variant
					const tMax = 40.0
					got := TimelyReward(c, ratio*tMax, tMax, r)
					var exp float64
					switch {
					case ratio > 1:
						exp = 0
					case r == 0:
						exp = rf
					default:
						exp = rf + r + lambda*us[ratio]
					}
					assert.InDelta(t, exp, got, 1e-12)
				})
			}
		}
	}
}

// TestTimelyFamilies scores items of the three task families end to end
// at the same ratios, with r = 0.5 and r = 0 produced the family's way:
// general by a right or wrong answer, games by s/s_max = 1/8 (cube root
// 0.5) or 0, ML by accuracy 1 or 0.
func TestTimelyFamilies(t *testing.T) {
	s := newTestScorer(t, nil)
	sinU := map[float64]float64{0: 0, 0.25: 0.3826834323650898, 0.5: 0.7071067811865476, 1: 1}
	family := func(name string, r float64, elapsed, limit float64) Item {
		ei := ExtraInfo{ElapsedS: f64(elapsed), TimeLimitS: f64(limit)}
		switch name {
		case "timely/general":
			ans := "17"
			if r == 0 {
				ans = "18"
			}
			return Item{DataSource: name, SolutionStr: "work... <answer>" + ans + "</answer>", GroundTruth: json.RawMessage(`"17"`), ExtraInfo: ei}
		case "timely/game":
			ei.Score, ei.MaxScore = f64(0), f64(80)
			if r > 0 {
				ei.Score = f64(10)
			}
			return Item{DataSource: name, ExtraInfo: ei}
		default:
			ei.Accuracy = f64(0)
			if r > 0 {
				ei.Accuracy = f64(1)
			}
			return Item{DataSource: name, ExtraInfo: ei}
		}
	}
	for _, name := range []string{"timely/general", "timely/game", "timely/ml"} {
		for _, ratio := range []float64{0, 0.25, 0.5, 1, 1.01} {
			for _, r := range []float64{0, 0.5} {
				t.Run(fmt.Sprintf("%s/ratio=%v/r=%v", name, ratio, r), func(t *testing.T) {
					it := family(name, r, ratio*120, 120)
					res := s.Score(context.Background(), &it)
					require.NoError(t, res.Err)
					exp := 0.0
					if ratio <= 1 {
						exp = 0.1
						if r > 0 {
							exp += 0.5 + 0.4*sinU[ratio]
						}
					}
					assert.InDelta(t, exp, res.Score, 1e-12)
					assert.InDelta(t, r, res.Details[kTaskReward], 1e-12)
					assert.Equal(t, b2f(ratio <= 1), res.Details[kOnTime])
				})
			}
		}
	}
}

func TestTimelyDetails(t *testing.T) {
	tests := []struct {
		name  string
		mod   func(*Config)
		item  Item
		score float64
		check map[int]float64
		err   string
	}{
		{name: "no time: no limit applies, U is 0",
			item:  Item{DataSource: "timely/general", SolutionStr: "<answer>3</answer>", GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{TimeLimitS: f64(10)}},
			score: 0.6, check: map[int]float64{kOnTime: 1, kLimit: 0, kUtil: 0}},
		{name: "format fails without the answer tag",
			item:  Item{DataSource: "timely/general", SolutionStr: `so \boxed{3}`, GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{ElapsedS: f64(1), TimeLimitS: f64(10)}},
			score: 0, check: map[int]float64{kFormatOK: 0, kAcc: 0, kOnTime: 1}},
		{name: "no answer tag configured accepts boxed",
			mod:   func(c *Config) { c.Timely.AnswerTag = "" },
			item:  Item{DataSource: "timely/general", SolutionStr: `so \boxed{3}`, GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{ElapsedS: f64(10), TimeLimitS: f64(10)}},
			score: 1.0},
		{name: "duration tag required and read",
			mod:   func(c *Config) { c.Timely.DurationTag = "conclusion" },
			item:  Item{DataSource: "timely/general", SolutionStr: "<conclusion>total duration: 2.5 minutes</conclusion><answer>3</answer>", GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{ElapsedS: f64(150), TimeLimitS: f64(300)}},
			score: 0.6 + 0.4*0.7071067811865476, check: map[int]float64{kReported: 150}},
		{name: "duration tag missing fails the format",
			mod:   func(c *Config) { c.Timely.DurationTag = "conclusion" },
			item:  Item{DataSource: "timely/general", SolutionStr: "<answer>3</answer>", GroundTruth: json.RawMessage(`"3"`)},
			score: 0, check: map[int]float64{kFormatOK: 0, kAcc: 1}},
		{name: "dishonest duration fails the format",
			mod:   func(c *Config) { c.Timely.DurationTag = "conclusion"; c.Timely.HonestyTolerance = 0.2 },
			item:  Item{DataSource: "timely/general", SolutionStr: "<conclusion>total duration: 10 seconds</conclusion><answer>3</answer>", GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{ElapsedS: f64(40), TimeLimitS: f64(60)}},
			score: 0, check: map[int]float64{kReported: 10, kFormatOK: 0}},
		{name: "honest duration within tolerance",
			mod:   func(c *Config) { c.Timely.DurationTag = "conclusion"; c.Timely.HonestyTolerance = 0.2 },
			item:  Item{DataSource: "timely/general", SolutionStr: "<conclusion>total duration: 36 seconds</conclusion><answer>3</answer>", GroundTruth: json.RawMessage(`"3"`), ExtraInfo: ExtraInfo{ElapsedS: f64(40), TimeLimitS: f64(40)}},
			score: 1.0},
		{name: "game score above max is clamped",
			item:  Item{DataSource: "timely/game", ExtraInfo: ExtraInfo{Score: f64(500), MaxScore: f64(350), ElapsedS: f64(0), TimeLimitS: f64(10)}},
			score: 0.1 + 1, check: map[int]float64{kAcc: 1, kTaskReward: 1}},
		{name: "ground truth as a number",
			item:  Item{DataSource: "timely/general", SolutionStr: "<answer>1,000</answer>", GroundTruth: json.RawMessage(`1000`)},
			score: 0.6},
		{name: "missing ground truth", item: Item{DataSource: "timely/general", SolutionStr: "<answer>3</answer>"}, err: "ground_truth: missing"},
		{name: "ground truth object", item: Item{DataSource: "timely/general", GroundTruth: json.RawMessage(`{"a":1}`)}, err: "ground_truth: want a string or a number"},
		{name: "negative limit", item: Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1), TimeLimitS: f64(-1)}}, err: "extra_info.time_limit_s"},
		{name: "negative elapsed", item: Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1), ElapsedS: f64(-3)}}, err: "extra_info.elapsed_s"},
		{name: "zero max score", item: Item{DataSource: "timely/game", ExtraInfo: ExtraInfo{Score: f64(1), MaxScore: f64(0)}}, err: "extra_info.max_score"},
		{name: "missing score", item: Item{DataSource: "timely/game", ExtraInfo: ExtraInfo{MaxScore: f64(10)}}, err: "extra_info.score: missing"},
		{name: "accuracy out of range", item: Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(80)}}, err: "extra_info.accuracy: 80 is not in [0, 1]"},
		{name: "timer without a store", item: Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1), Timer: "x.y"}}, err: "extra_info.timer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestScorer(t, tc.mod)
			res := s.Score(context.Background(), &tc.item)
			if tc.err != "" {
				require.Error(t, res.Err)
				assert.Contains(t, res.Err.Error(), tc.err)
				assert.ErrorIs(t, res.Err, ErrInvalidItem)
				assert.Equal(t, 0.0, res.Score)
				return
			}
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			for k, v := range tc.check {
				assert.InDelta(t, v, res.Details[k], 1e-12, "detail %s", timelyKeys[k])
			}
		})
	}
}

// TestConfigTakesTheEdges: the least values the length keys allow are
// valid: no weight, no penalty, a buffer of 0 or the whole cap.
func TestConfigTakesTheEdges(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) {
			c.Length.KimiWeight, c.Length.ShorterBetterAlpha, c.Length.ShorterBetterBeta = 0, 0, 0
		},
		func(c *Config) { c.Length.ALPBeta, c.Length.ALPNorm = 0, 1e-300 },
		func(c *Config) { c.Length.DAPOBufferTokens = 0 },
		func(c *Config) { c.Length.DAPOBufferTokens = c.Length.DAPOMaxTokens },
		func(c *Config) { c.Length.LCPOMaxAlpha, c.Length.CosineMaxTokens = 0, 1 },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		assert.NoError(t, cfg.Validate())
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		key  string // the *ConfigError's key
		want string
	}{
		{"utilization", func(c *Config) { c.Timely.Utilization = "cubic" }, "timely.utilization", `"cubic" is not sin, linear or step`},
		{"empty step table", func(c *Config) { c.Timely.Utilization = UtilStep; c.Timely.StepTable = nil }, "timely.step_table", "empty, but utilization is step"},
		{"nan lambda", func(c *Config) { c.Timely.Lambda = math.NaN() }, "timely.lambda", "not a finite number"},
		{"exponent", func(c *Config) { c.Timely.GameExponent = 0 }, "timely.game_exponent", "0 must be positive"},
		{"honesty without tag", func(c *Config) { c.Timely.HonestyTolerance = 0.1 }, "timely.honesty_tolerance", "needs timely.duration_tag"},
		{"bad tag", func(c *Config) { c.Timely.AnswerTag = "an swer" }, "timely.answer_tag", `"an swer" is not a tag name`},
		{"metric", func(c *Config) { c.TimePuzzles.Metric = "bleu" }, "timepuzzles.metric", `"bleu" is not em, f1 or jaccard`},
		{"pattern", func(c *Config) { c.TicToc.ToolCallPatterns = []string{"("} }, "tictoc.tool_call_patterns", "missing closing )"},
		{"kimi weight", func(c *Config) { c.Length.KimiWeight = -0.5 }, "length.kimi_weight", "-0.5 must not be negative"},
		{"shorterbetter alpha", func(c *Config) { c.Length.ShorterBetterAlpha = -1 }, "length.shorterbetter_alpha", "-1 must not be negative"},
		{"shorterbetter beta", func(c *Config) { c.Length.ShorterBetterBeta = -0.001 }, "length.shorterbetter_beta", "-0.001 must not be negative"},
		{"alp beta", func(c *Config) { c.Length.ALPBeta = -1e-7 }, "length.alp_beta", "-1e-07 must not be negative"},
		{"alp norm zero", func(c *Config) { c.Length.ALPNorm = 0 }, "length.alp_norm", "0: want a positive number (N divides the penalty)"},
		{"alp norm negative", func(c *Config) { c.Length.ALPNorm = -4096 }, "length.alp_norm", "-4096: want a positive number"},
		{"alp norm nan", func(c *Config) { c.Length.ALPNorm = math.NaN() }, "length.alp_norm", "not a finite number"},
		{"dapo buffer past the cap", func(c *Config) { c.Length.DAPOBufferTokens = 20481 }, "length.dapo_buffer_tokens", "20481: want from 0 to dapo_max_tokens (20480)"},
		{"dapo negative buffer", func(c *Config) { c.Length.DAPOBufferTokens = -1 }, "length.dapo_buffer_tokens", "-1: want from 0"},
		{"cosine cap", func(c *Config) { c.Length.CosineMaxTokens = 0 }, "length.cosine_max_tokens", "0: a budget must be at least 1 token"},
		{"lcpo max alpha", func(c *Config) { c.Length.LCPOMaxAlpha = -1 }, "length.lcpo_max_alpha", "-1 must not be negative"},
		{"nan cosine value", func(c *Config) { c.Length.CosineWrongLong = math.NaN() }, "length.cosine_wrong_long", "not a finite number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			_, err := NewScorer(cfg, nil)
			require.Error(t, err)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce, "a caller can tell which key is wrong")
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, ce.Err.Error(), tc.want)
			assert.Equal(t, "rewards: "+tc.key+": "+ce.Err.Error(), err.Error())
		})
	}
}

// hostileItems are inputs every reward must survive: each yields a finite
// score and exactly the reward's keys, scored or failed.
func hostileItems(ds string) []Item {
	long := strings.Repeat(`\boxed{{{`, 5000) + strings.Repeat("}", 3)
	var out []Item
	for _, sol := range []string{"", "<answer></answer>", long, "MY ANSWER: 2024-13-45", `<tool_call>{"name":`, "\xff\xfe", `{"tool_calls":[]}`, strings.Repeat("a ", 100000)} {
		for _, gt := range []string{``, `null`, `""`, `"None"`, `0`, `-1e308`, `[]`, `{}`, `{"preferred":"tool","margin":99}`, `"\u0000"`, `[1,2]`,
			`{"answers": [""]}`, `{"letter": "B", "options": {"A": "x", "B": ""}}`, `{"kind": "arithmetic", "label": {"unordered_list": [1, [2], {}]}}`} {
			out = append(out, Item{DataSource: ds, SolutionStr: sol, GroundTruth: json.RawMessage(gt)})
		}
	}
	for _, ei := range []ExtraInfo{
		{ElapsedS: f64(1e308), TimeLimitS: f64(1e-308)},
		{Score: f64(-5), MaxScore: f64(1e-300), Accuracy: f64(1)},
		{Score: f64(math.MaxFloat64), MaxScore: f64(math.SmallestNonzeroFloat64), ElapsedS: f64(0), TimeLimitS: f64(math.MaxFloat64)},
		{Timer: "garbage"},
		{ResponseTokens: f64(-1), TokenBudget: f64(0.5), ThinkTokens: f64(math.NaN()), AnswerCheck: "negotiation"},
		{ResponseTokens: f64(1e300), TokenBudget: f64(1), ThinkTokens: f64(1e300), AnswerTokens: f64(1e300)},
		{ResponseTokens: f64(3), TokenBudget: f64(math.Inf(1)), ThinkBudget: f64(math.Copysign(0, -1)), AnswerBudget: f64(1e-300)},
		{ResponseTokens: f64(3), TokenBudget: f64(2), Anytime: json.RawMessage(`[{"budget": 1e300, "summary": "<answer>1</answer>"}]`)},
		{Anytime: json.RawMessage(`[{"budget": 1, "summary": null}, {}, 3]`)},
		{Anytime: json.RawMessage(`{"budget": 1}`)},
	} {
		out = append(out, Item{DataSource: ds, SolutionStr: "<answer>1</answer>", GroundTruth: json.RawMessage(`"1"`), ExtraInfo: ei})
	}
	return out
}

var keyName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestEveryReward runs the checks every entry of All must pass.
func TestEveryReward(t *testing.T) {
	seen := map[string]bool{}
	s := newTestScorer(t, func(c *Config) { c.FallbackScore = -0.25 })
	for _, r := range All {
		t.Run(r.DataSource, func(t *testing.T) {
			assert.False(t, seen[r.DataSource], "data source registered twice")
			seen[r.DataSource] = true
			assert.NotEmpty(t, r.Summary)
			assert.NotEmpty(t, r.GroundTruth)
			require.NotEmpty(t, r.Keys)
			keys := map[string]bool{}
			for _, k := range r.Keys {
				assert.Regexp(t, keyName, k)
				assert.NotContains(t, []string{"score", "error"}, k)
				assert.False(t, keys[k], "key %s twice", k)
				keys[k] = true
			}
			got, ok := Lookup(r.DataSource)
			assert.True(t, ok)
			assert.Same(t, r, got)

			for i, it := range hostileItems(r.DataSource) {
				res := s.Score(context.Background(), &it)
				require.Len(t, res.Details, len(r.Keys), "item %d", i)
				require.True(t, finite(res.Score), "item %d: score %v", i, res.Score)
				for j, d := range res.Details {
					require.True(t, finite(d), "item %d: %s = %v", i, r.Keys[j], d)
				}
				if res.Err != nil {
					assert.Equal(t, -0.25, res.Score, "item %d: a failed item gets the fallback", i)
					for _, d := range res.Details {
						assert.Zero(t, d)
					}
				}
			}
		})
	}
	res := s.Score(context.Background(), &Item{DataSource: "nope"})
	assert.ErrorIs(t, res.Err, ErrUnknownSource)
	assert.Equal(t, -0.25, res.Score)
}

func TestCanceledContext(t *testing.T) {
	s := newTestScorer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := s.Score(ctx, &Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1)}})
	assert.ErrorIs(t, res.Err, context.Canceled)
}

// FuzzEveryReward feeds arbitrary responses, ground truths and numbers to
// every reward: no panic, finite values, fixed keys.
func FuzzEveryReward(f *testing.F) {
	f.Add("<answer>\\boxed{\\frac{1}{2}}</answer>", `"0.5"`, 3.0, 10.0, 1.0)
	f.Add(`<tool_call>{"name":"get","arguments":{}}</tool_call>`, `{"preferred":"direct","margin":0.5}`, 0.0, 0.0, 0.0)
	f.Add("MY ANSWER: 2024-02-29, 2023-01-01", `"2024-02-29"`, -1.0, 5.0, 2.0)
	s := newTestScorer(f, nil)
	f.Fuzz(func(t *testing.T, sol, gt string, a, b, c float64) {
		for _, r := range All {
			it := Item{DataSource: r.DataSource, SolutionStr: sol, GroundTruth: json.RawMessage(gt),
				ExtraInfo: ExtraInfo{ElapsedS: &a, TimeLimitS: &b, Score: &c, MaxScore: &b, Accuracy: &c,
					ResponseTokens: &b, ThinkTokens: &a, AnswerTokens: &c, TokenBudget: &a, ThinkBudget: &c, AnswerBudget: &b,
					Anytime: json.RawMessage(gt)}}
			res := s.Score(context.Background(), &it)
			if len(res.Details) != len(r.Keys) || !finite(res.Score) {
				t.Fatalf("%s: %d details for %d keys, score %v", r.DataSource, len(res.Details), len(r.Keys), res.Score)
			}
			for _, d := range res.Details {
				if !finite(d) {
					t.Fatalf("%s: non-finite detail", r.DataSource)
				}
			}
		}
	})
}

func BenchmarkTimelyGeneral(b *testing.B) {
	s := newTestScorer(b, nil)
	sol := strings.Repeat("Let me reason about the problem step by step. ", 40) + `<answer>\boxed{\frac{3}{4}}</answer>`
	it := Item{DataSource: "timely/general", SolutionStr: sol, GroundTruth: json.RawMessage(`"0.75"`), ExtraInfo: ExtraInfo{ElapsedS: f64(12), TimeLimitS: f64(30)}}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res := s.Score(ctx, &it); res.Err != nil || res.Score < 0.6 {
			b.Fatal(res)
		}
	}
}

func TestGroundTruthText(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{`"42"`, "42", ""},
		{` "a\"b" `, `a"b`, ""},
		{`"\\frac{1}{2}"`, `\frac{1}{2}`, ""},
		{`"é"`, "é", ""},
		{`12.5`, "12.5", ""},
		{`"`, "", "not a valid string"},
		{`"abc`, "", "not a valid string"},
		{`true`, "", "want a string or a number"},
		{`-`, "", "not a valid number"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := groundTruthText(json.RawMessage(tc.raw))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestTimerSettingsObject: a budgeted row carries the timer's settings in
// extra_info.timer; scored without a token, it takes its time from elapsed_s.
func TestTimerSettingsObject(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, tc := range []struct {
		extra string
		score float64
		err   string
	}{
		{`{"timer":{"speed_factor":2,"jitter":0.05},"elapsed_s":5,"time_limit_s":10}`, 0.6 + 0.4*0.7071067811865476, ""},
		{`{"timer":null,"elapsed_s":10,"time_limit_s":10}`, 1.0, ""},
		{`{"timer":7}`, 0, "extra_info.timer: want a timer token"},
	} {
		t.Run(tc.extra, func(t *testing.T) {
			var it Item
			err := json.Unmarshal([]byte(`{"data_source":"timely/general","solution_str":"<answer>2</answer>","ground_truth":"2","extra_info":`+tc.extra+`}`), &it)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
		})
	}
}

func TestHermesCalls(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []HermesCall
	}{
		{`<tool_call>{"name": "get_duration", "arguments": {}}</tool_call>`, []HermesCall{{"get_duration", json.RawMessage(`{}`)}}},
		{"a<tool_call>\n{\"name\":\"f\"}\n</tool_call><tool_call>{\"name\":\"g\",\"arguments\":{\"x\":1}}<|im_end|>", []HermesCall{{"f", nil}, {"g", json.RawMessage(`{"x":1}`)}}},
		{`<think><tool_call>{"name":"f"}</tool_call></think>Sure.`, nil},
		{`<tool_call>{"arguments":{}}</tool_call>`, nil},
		{`<tool_call>{"name":"f"} and more text</tool_call>`, nil},
		{`no calls`, nil},
	} {
		assert.Equal(t, tc.want, HermesCalls(tc.in), tc.in)
		assert.Equal(t, len(tc.want) > 0, DetectToolCall(tc.in), tc.in)
	}
}
