package rewards

// Tests written for mutation testing (issue 19, part a): answer.go,
// timely.go, timepuzzles.go, reward.go and config.go. Every expectation is
// worked by hand or is the paper's formula written out here; none calls the
// code under test to compute what it should return.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aTimers is a TimeSource with fixed answers, counting its calls.
type aTimers struct {
	elapsed, limit float64
	err            error
	panics         bool
	calls          int
	token          string
}

func (a *aTimers) Elapsed(_ context.Context, token string) (float64, float64, error) {
	a.calls++
	a.token = token
	if a.panics {
		panic("timer store exploded")
	}
	return a.elapsed, a.limit, a.err
}

func aScorer(t testing.TB, timers TimeSource, mod func(*Config)) *Scorer {
	t.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewScorer(cfg, timers)
	require.NoError(t, err)
	return s
}

// aSinU is eq. 10 written out: U = sin(π/2 · min(ratio, 1)), with ratios
// below 0 read as 0.
func aSinU(ratio float64) float64 {
	if ratio < 0 {
		ratio = 0
	}
	if ratio > 1 {
		ratio = 1
	}
	return math.Sin(math.Pi / 2 * ratio)
}

// TestAUtilization pins U(t) of eq. 10–12 at and around every bin edge, and
// the clamping of the ratio to [0, 1].
func TestAUtilization(t *testing.T) {
	step4 := TimelyConfig{Utilization: UtilStep, StepTable: []float64{0.25, 0.5, 0.75, 1.0}}
	step2 := TimelyConfig{Utilization: UtilStep, StepTable: []float64{0.3, 0.9}}
	tests := []struct {
		name  string
		c     TimelyConfig
		ratio float64
		want  float64
	}{
		{"sin 0", TimelyConfig{Utilization: UtilSin}, 0, 0},
		// sin(π/6) = 1/2 and sin(π/3) = √3/2, by hand.
		{"sin 1/3", TimelyConfig{Utilization: UtilSin}, 1.0 / 3, 0.5},
		{"sin 2/3", TimelyConfig{Utilization: UtilSin}, 2.0 / 3, math.Sqrt(3) / 2},
		{"sin 0.9", TimelyConfig{Utilization: UtilSin}, 0.9, aSinU(0.9)},
		{"sin 1", TimelyConfig{Utilization: UtilSin}, 1, 1},
		{"sin clamps above 1", TimelyConfig{Utilization: UtilSin}, 3, 1},
		{"sin clamps below 0", TimelyConfig{Utilization: UtilSin}, -0.5, 0},
		{"empty variant is sin", TimelyConfig{}, 0.5, math.Sqrt2 / 2},
		{"linear 0.3", TimelyConfig{Utilization: UtilLinear}, 0.3, 0.3},
		{"linear clamps above 1", TimelyConfig{Utilization: UtilLinear}, 1.7, 1},
		{"linear clamps below 0", TimelyConfig{Utilization: UtilLinear}, -2, 0},
		{"step below 0", step4, -1, 0.25},
		{"step 0", step4, 0, 0.25},
		{"step just below .25", step4, 0.2499, 0.25},
		{"step .25", step4, 0.25, 0.5},
		{"step just below .5", step4, 0.4999, 0.5},
		{"step .5", step4, 0.5, 0.75},
		{"step just below .75", step4, 0.7499, 0.75},
		{"step .75", step4, 0.75, 1},
		{"step 1 is the last bin", step4, 1, 1},
		{"step above 1", step4, 2.5, 1},
		{"two bins, first", step2, 0.4999, 0.3},
		{"two bins, second", step2, 0.5, 0.9},
		{"two bins, ratio 1", step2, 1, 0.9},
		{"one bin", TimelyConfig{Utilization: UtilStep, StepTable: []float64{0.6}}, 0.99, 0.6},
		{"step without a table", TimelyConfig{Utilization: UtilStep}, 0.5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, Utilization(tc.c, tc.ratio), 1e-12)
		})
	}
}

// TestATimelyReward is eq. 9 at its edges: t = T_max is on time, r just
// above 0 earns the utilisation term, a non-positive T_max means no limit.
func TestATimelyReward(t *testing.T) {
	c := TimelyConfig{Utilization: UtilLinear, FormatReward: 0.2, Lambda: 0.3}
	tests := []struct {
		name       string
		t, tMax, r float64
		want       float64
	}{
		{"on time at the limit", 10, 10, 0.5, 0.2 + 0.5 + 0.3*1},
		{"late by a hair", math.Nextafter(10, 11), 10, 0.5, 0},
		{"late and wrong", 11, 10, 0, 0},
		{"on time and wrong", 4, 10, 0, 0.2},
		{"negative r is wrong", 4, 10, -1, 0.2},
		{"small r earns U", 4, 10, 0.001, 0.2 + 0.001 + 0.3*0.4},
		{"quarter time", 2.5, 10, 1, 0.2 + 1 + 0.3*0.25},
		{"no limit: U is 0", 1e6, 0, 0.5, 0.2 + 0.5},
		{"negative limit: no limit", 1e6, -5, 0.5, 0.2 + 0.5},
		{"no limit and wrong", 1e6, 0, 0, 0.2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, TimelyReward(c, tc.t, tc.tMax, tc.r), 1e-12)
		})
	}
}

// TestATimelyMeasure covers where the time comes from: the timer's elapsed
// time before elapsed_s, time_limit_s before the timer's limit, and the
// errors of each source.
func TestATimelyMeasure(t *testing.T) {
	timerErr := errors.New("token expired")
	tests := []struct {
		name    string
		timers  *aTimers
		ei      ExtraInfo
		score   float64
		details map[int]float64
		err     string
	}{
		{name: "timer time and limit",
			timers:  &aTimers{elapsed: 30, limit: 60},
			ei:      ExtraInfo{Timer: "tok", ElapsedS: f64(1)},
			score:   0.1 + 0.5 + 0.4*math.Sqrt2/2,
			details: map[int]float64{kElapsed: 30, kLimit: 60, kRatio: 0.5, kUtil: math.Sqrt2 / 2, kOnTime: 1}},
		{name: "time_limit_s below the timer's limit is refused",
			timers: &aTimers{elapsed: 30, limit: 60},
			ei:     ExtraInfo{Timer: "tok", TimeLimitS: f64(20)},
			err:    "extra_info.time_limit_s: 20 s disagrees with the limit of 60 s signed into extra_info.timer"},
		{name: "time_limit_s above the timer's limit is refused",
			timers: &aTimers{elapsed: 30, limit: 2},
			ei:     ExtraInfo{Timer: "tok", TimeLimitS: f64(1e9)},
			err:    "extra_info.time_limit_s: 1e+09 s disagrees with the limit of 2 s signed into extra_info.timer"},
		{name: "time_limit_s equal to the timer's limit",
			timers:  &aTimers{elapsed: 30, limit: 60},
			ei:      ExtraInfo{Timer: "tok", TimeLimitS: f64(60)},
			score:   0.1 + 0.5 + 0.4*math.Sqrt2/2,
			details: map[int]float64{kElapsed: 30, kLimit: 60, kRatio: 0.5, kUtil: math.Sqrt2 / 2, kOnTime: 1}},
		{name: "time_limit_s when the timer carries none",
			timers:  &aTimers{elapsed: 30, limit: 0},
			ei:      ExtraInfo{Timer: "tok", TimeLimitS: f64(20)},
			score:   0,
			details: map[int]float64{kElapsed: 30, kLimit: 20, kRatio: 1.5, kUtil: 1, kOnTime: 0, kTaskReward: 0.5, kAcc: 1, kFormatOK: 1}},
		{name: "timer without a limit: no limit applies",
			timers:  &aTimers{elapsed: 500, limit: 0},
			ei:      ExtraInfo{Timer: "tok"},
			score:   0.6,
			details: map[int]float64{kElapsed: 500, kLimit: 0, kRatio: 0, kUtil: 0, kOnTime: 1}},
		{name: "timer error",
			timers: &aTimers{err: timerErr},
			ei:     ExtraInfo{Timer: "tok", ElapsedS: f64(1)},
			err:    "extra_info.timer: token expired"},
		{name: "elapsed_s with its limit",
			ei:      ExtraInfo{ElapsedS: f64(20), TimeLimitS: f64(30)},
			score:   0.1 + 0.5 + 0.4*math.Sqrt(3)/2,
			details: map[int]float64{kElapsed: 20, kLimit: 30, kRatio: 2.0 / 3, kUtil: math.Sqrt(3) / 2, kOnTime: 1}},
		{name: "elapsed_s 0",
			ei:      ExtraInfo{ElapsedS: f64(0), TimeLimitS: f64(30)},
			score:   0.6,
			details: map[int]float64{kElapsed: 0, kLimit: 30, kRatio: 0, kUtil: 0, kOnTime: 1}},
		{name: "elapsed_s without a limit",
			ei:      ExtraInfo{ElapsedS: f64(20)},
			score:   0.6,
			details: map[int]float64{kElapsed: 20, kLimit: 0, kRatio: 0, kOnTime: 1}},
		{name: "late by elapsed_s",
			ei:      ExtraInfo{ElapsedS: f64(31), TimeLimitS: f64(30)},
			score:   0,
			details: map[int]float64{kElapsed: 31, kLimit: 30, kRatio: 31.0 / 30, kUtil: 1, kOnTime: 0, kFormatOK: 1, kAcc: 1}},
		{name: "elapsed_s NaN", ei: ExtraInfo{ElapsedS: f64(math.NaN())}, err: "extra_info.elapsed_s: NaN is not a non-negative"},
		{name: "elapsed_s +Inf", ei: ExtraInfo{ElapsedS: f64(math.Inf(1))}, err: "extra_info.elapsed_s"},
		{name: "time_limit_s 0", ei: ExtraInfo{ElapsedS: f64(1), TimeLimitS: f64(0)}, err: "extra_info.time_limit_s: 0 is not a positive number"},
		{name: "time_limit_s NaN", ei: ExtraInfo{ElapsedS: f64(1), TimeLimitS: f64(math.NaN())}, err: "extra_info.time_limit_s"},
		{name: "time_limit_s +Inf", ei: ExtraInfo{ElapsedS: f64(1), TimeLimitS: f64(math.Inf(1))}, err: "extra_info.time_limit_s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ts TimeSource
			if tc.timers != nil {
				ts = tc.timers
			}
			s := aScorer(t, ts, func(c *Config) { c.FallbackScore = -1 })
			it := Item{DataSource: "timely/general", SolutionStr: "<answer>4</answer>", GroundTruth: json.RawMessage(`"4"`), ExtraInfo: tc.ei}
			res := s.Score(context.Background(), &it)
			if tc.timers != nil {
				assert.Equal(t, 1, tc.timers.calls, "the timer is read once")
				assert.Equal(t, "tok", tc.timers.token)
			}
			if tc.err != "" {
				require.Error(t, res.Err)
				assert.ErrorContains(t, res.Err, tc.err)
				assert.ErrorIs(t, res.Err, ErrInvalidItem)
				assert.Equal(t, -1.0, res.Score)
				assert.Equal(t, make([]float64, len(timelyKeys)), res.Details)
				return
			}
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			for k, v := range tc.details {
				assert.InDelta(t, v, res.Details[k], 1e-12, "detail %s", timelyKeys[k])
			}
		})
	}
}

// TestATimerErrorIsWrapped: the timer store's error stays reachable with
// errors.Is, and the item is reported invalid.
func TestATimerErrorIsWrapped(t *testing.T) {
	timerErr := errors.New("unknown timer")
	s := aScorer(t, &aTimers{err: timerErr}, nil)
	res := s.Score(context.Background(), &Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1), Timer: "t"}})
	assert.ErrorIs(t, res.Err, timerErr)
	var fe *FieldError
	require.ErrorAs(t, res.Err, &fe)
	assert.Equal(t, "extra_info.timer", fe.Field)
}

// TestANonFiniteFromTimer: a timer store answering a non-finite time
// makes the item fail with the fallback score and zero details, whether
// the score or only a detail is not finite.
func TestANonFiniteFromTimer(t *testing.T) {
	for _, tc := range []struct {
		name           string
		elapsed, limit float64
		msg            string
	}{
		// No limit: R = r_f + r is finite, but elapsed_s is +Inf.
		{"infinite elapsed, no limit", math.Inf(1), 0, "rewards: timely/ml: a detail is not finite"},
		// With a limit, t/T_max and U are NaN, and so is R.
		{"NaN elapsed with a limit", math.NaN(), 10, "rewards: timely/ml: score is not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := aScorer(t, &aTimers{elapsed: tc.elapsed, limit: tc.limit}, func(c *Config) { c.FallbackScore = 0.05 })
			res := s.Score(context.Background(), &Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(1), Timer: "t"}})
			require.Error(t, res.Err)
			assert.EqualError(t, res.Err, tc.msg)
			assert.Equal(t, 0.05, res.Score)
			assert.Equal(t, make([]float64, len(timelyKeys)), res.Details)
		})
	}
}

// TestAPanicIsRecovered: a panic while scoring becomes an internal error
// with the fallback score and zero details.
func TestAPanicIsRecovered(t *testing.T) {
	s := aScorer(t, &aTimers{panics: true}, func(c *Config) { c.FallbackScore = 0.25 })
	res := s.Score(context.Background(), &Item{DataSource: "timely/ml", ExtraInfo: ExtraInfo{Accuracy: f64(0.5), Timer: "t"}})
	require.Error(t, res.Err)
	assert.EqualError(t, res.Err, "rewards: timely/ml: internal error: timer store exploded")
	assert.Equal(t, 0.25, res.Score)
	assert.Equal(t, make([]float64, len(timelyKeys)), res.Details)
}

// TestATimelyGeneralDetails checks every detail of general items, right,
// wrong and badly formed.
func TestATimelyGeneralDetails(t *testing.T) {
	// keys: acc, task_reward, format_ok, on_time, elapsed_s, time_limit_s, time_ratio, utilization, reported_s
	tests := []struct {
		name     string
		response string
		gt       string
		ei       ExtraInfo
		score    float64
		details  []float64
	}{
		{"right at a quarter", "<answer>12</answer>", `"12"`, ExtraInfo{ElapsedS: f64(10), TimeLimitS: f64(40)},
			0.1 + 0.5 + 0.4*aSinU(0.25), []float64{1, 0.5, 1, 1, 10, 40, 0.25, aSinU(0.25), 0}},
		{"wrong at a quarter", "<answer>13</answer>", `"12"`, ExtraInfo{ElapsedS: f64(10), TimeLimitS: f64(40)},
			0.1, []float64{0, 0, 1, 1, 10, 40, 0.25, aSinU(0.25), 0}},
		{"no tag: format fails", "12", `"12"`, ExtraInfo{ElapsedS: f64(10), TimeLimitS: f64(40)},
			0, []float64{0, 0, 0, 1, 10, 40, 0.25, aSinU(0.25), 0}},
		{"empty tag: format fails", "<answer> </answer>", `""`, ExtraInfo{ElapsedS: f64(10), TimeLimitS: f64(40)},
			0, []float64{0, 0, 0, 1, 10, 40, 0.25, aSinU(0.25), 0}},
		{"right but late", "<answer>12</answer>", `12`, ExtraInfo{ElapsedS: f64(50), TimeLimitS: f64(40)},
			0, []float64{1, 0.5, 1, 0, 50, 40, 1.25, 1, 0}},
		{"right, limit but no time", "<answer>12</answer>", `"12"`, ExtraInfo{TimeLimitS: f64(40)},
			0.6, []float64{1, 0.5, 1, 1, 0, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := aScorer(t, nil, nil)
			res := s.Score(context.Background(), &Item{DataSource: "timely/general", SolutionStr: tc.response, GroundTruth: json.RawMessage(tc.gt), ExtraInfo: tc.ei})
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.InDeltaSlice(t, tc.details, res.Details, 1e-12)
		})
	}
}

// TestATimelyConfigParameters: r_f, λ, r, the ML weight and the game
// exponent come from the configuration.
func TestATimelyConfigParameters(t *testing.T) {
	mod := func(c *Config) {
		c.Timely.FormatReward = 0.05
		c.Timely.Lambda = 0.2
		c.Timely.CorrectReward = 0.7
		c.Timely.MLWeight = 0.8
		c.Timely.GameExponent = 0.5
		c.Timely.Utilization = UtilLinear
	}
	s := aScorer(t, nil, mod)
	ei := func(e ExtraInfo) ExtraInfo { e.ElapsedS, e.TimeLimitS = f64(30), f64(40); return e }
	tests := []struct {
		name    string
		it      Item
		score   float64
		acc, tr float64
	}{
		{"general", Item{DataSource: "timely/general", SolutionStr: "<answer>x</answer>", GroundTruth: json.RawMessage(`"X"`), ExtraInfo: ei(ExtraInfo{})},
			0.05 + 0.7 + 0.2*0.75, 1, 0.7},
		// r = 0.8 · 0.625 = 0.5.
		{"ml", Item{DataSource: "timely/ml", ExtraInfo: ei(ExtraInfo{Accuracy: f64(0.625)})},
			0.05 + 0.5 + 0.2*0.75, 0.625, 0.5},
		// r = (9/16)^(1/2) = 3/4.
		{"game", Item{DataSource: "timely/game", ExtraInfo: ei(ExtraInfo{Score: f64(18), MaxScore: f64(32)})},
			0.05 + 0.75 + 0.2*0.75, 18.0 / 32, 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := s.Score(context.Background(), &tc.it)
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.InDelta(t, tc.acc, res.Details[kAcc], 1e-12)
			assert.InDelta(t, tc.tr, res.Details[kTaskReward], 1e-12)
			assert.Equal(t, 1.0, res.Details[kFormatOK])
		})
	}
}

// TestATimelyGameAndML checks r of the game and ML families (App. A.2.3–4)
// and their input checks.
func TestATimelyGameAndML(t *testing.T) {
	tests := []struct {
		name    string
		ds      string
		ei      ExtraInfo
		score   float64
		acc, tr float64
		err     string
	}{
		// (27/64)^(1/3) = 3/4; U = 0 at t = 0.
		{name: "game cube root", ds: "timely/game", ei: ExtraInfo{Score: f64(27), MaxScore: f64(64), ElapsedS: f64(0), TimeLimitS: f64(5)},
			score: 0.1 + 0.75, acc: 27.0 / 64, tr: 0.75},
		{name: "game negative score is 0", ds: "timely/game", ei: ExtraInfo{Score: f64(-3), MaxScore: f64(64)},
			score: 0.1, acc: 0, tr: 0},
		{name: "game full score", ds: "timely/game", ei: ExtraInfo{Score: f64(64), MaxScore: f64(64)},
			score: 0.1 + 1, acc: 1, tr: 1},
		{name: "game max score NaN", ds: "timely/game", ei: ExtraInfo{Score: f64(1), MaxScore: f64(math.NaN())}, err: "extra_info.max_score: NaN is not a positive number"},
		{name: "game max score +Inf", ds: "timely/game", ei: ExtraInfo{Score: f64(1), MaxScore: f64(math.Inf(1))}, err: "extra_info.max_score"},
		{name: "game max score negative", ds: "timely/game", ei: ExtraInfo{Score: f64(1), MaxScore: f64(-2)}, err: "extra_info.max_score: -2 is not a positive number"},
		{name: "game missing max score", ds: "timely/game", ei: ExtraInfo{Score: f64(1)}, err: "extra_info.max_score: missing"},
		{name: "game score NaN", ds: "timely/game", ei: ExtraInfo{Score: f64(math.NaN()), MaxScore: f64(10)}, err: "extra_info.score: not a finite number"},
		{name: "game score -Inf", ds: "timely/game", ei: ExtraInfo{Score: f64(math.Inf(-1)), MaxScore: f64(10)}, err: "extra_info.score: not a finite number"},
		{name: "ml accuracy 0", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(0)}, score: 0.1, acc: 0, tr: 0},
		{name: "ml accuracy 1", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(1)}, score: 0.6, acc: 1, tr: 0.5},
		{name: "ml accuracy 0.3", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(0.3), ElapsedS: f64(9), TimeLimitS: f64(9)},
			score: 0.1 + 0.15 + 0.4, acc: 0.3, tr: 0.15},
		{name: "ml accuracy below 0", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(-0.01)}, err: "extra_info.accuracy: -0.01 is not in [0, 1]"},
		{name: "ml accuracy above 1", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(1.01)}, err: "extra_info.accuracy: 1.01 is not in [0, 1]"},
		{name: "ml accuracy NaN", ds: "timely/ml", ei: ExtraInfo{Accuracy: f64(math.NaN())}, err: "extra_info.accuracy: NaN is not in [0, 1]"},
		{name: "ml accuracy missing", ds: "timely/ml", ei: ExtraInfo{}, err: "extra_info.accuracy: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := aScorer(t, nil, nil)
			res := s.Score(context.Background(), &Item{DataSource: tc.ds, ExtraInfo: tc.ei})
			if tc.err != "" {
				require.Error(t, res.Err)
				assert.ErrorContains(t, res.Err, tc.err)
				assert.ErrorIs(t, res.Err, ErrInvalidItem)
				return
			}
			require.NoError(t, res.Err)
			assert.InDelta(t, tc.score, res.Score, 1e-12)
			assert.InDelta(t, tc.acc, res.Details[kAcc], 1e-12)
			assert.InDelta(t, tc.tr, res.Details[kTaskReward], 1e-12)
			assert.Equal(t, 1.0, res.Details[kFormatOK])
		})
	}
}

// TestAHonesty checks the self-reported duration against the measured one:
// a difference above max(tolerance·t, 1 s) fails the format check.
func TestAHonesty(t *testing.T) {
	tests := []struct {
		name     string
		tol      float64
		reported string
		ei       ExtraInfo
		formatOK bool
	}{
		// tolerance 0.2 of 40 s is 8 s.
		{"8 s short of 40 is allowed", 0.2, "32 seconds", ExtraInfo{ElapsedS: f64(40)}, true},
		{"8 s over 40 is allowed", 0.2, "48 seconds", ExtraInfo{ElapsedS: f64(40)}, true},
		{"8.5 s short of 40 fails", 0.2, "31.5 seconds", ExtraInfo{ElapsedS: f64(40)}, false},
		{"8.5 s over 40 fails", 0.2, "48.5 seconds", ExtraInfo{ElapsedS: f64(40)}, false},
		// 0.2 of 2 s is 0.4 s, below the 1 s floor.
		{"1 s off 2 s is allowed", 0.2, "3 seconds", ExtraInfo{ElapsedS: f64(2)}, true},
		{"1.5 s off 2 s fails", 0.2, "3.5 seconds", ExtraInfo{ElapsedS: f64(2)}, false},
		// The timer says 105 s: 0.1 of it is 10.5 s.
		{"the timer's time is used", 0.1, "100 seconds", ExtraInfo{Timer: "t", ElapsedS: f64(40)}, true},
		{"the timer's time is checked", 0.1, "40 seconds", ExtraInfo{Timer: "t", ElapsedS: f64(40)}, false},
		{"no time: nothing to check", 0.1, "1000 seconds", ExtraInfo{}, true},
		{"tolerance 0: nothing checked", 0, "1000 seconds", ExtraInfo{ElapsedS: f64(40)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := aScorer(t, &aTimers{elapsed: 105}, func(c *Config) {
				c.Timely.DurationTag = "conclusion"
				c.Timely.HonestyTolerance = tc.tol
			})
			it := Item{DataSource: "timely/general", GroundTruth: json.RawMessage(`"4"`), ExtraInfo: tc.ei,
				SolutionStr: "<conclusion>total duration: " + tc.reported + "</conclusion>\n<answer>4</answer>"}
			res := s.Score(context.Background(), &it)
			require.NoError(t, res.Err)
			assert.Equal(t, b2f(tc.formatOK), res.Details[kFormatOK])
			// No limit applies, so U = 0: a well-formed right answer scores r_f + r.
			assert.InDelta(t, 0.6*b2f(tc.formatOK), res.Score, 1e-12)
		})
	}
}

// TestAHonestyMeasureError: a bad elapsed_s fails the item when the
// honesty check reads it too.
func TestAHonestyMeasureError(t *testing.T) {
	s := aScorer(t, nil, func(c *Config) { c.Timely.DurationTag = "d"; c.Timely.HonestyTolerance = 0.5 })
	res := s.Score(context.Background(), &Item{DataSource: "timely/general", SolutionStr: "<d>3 s</d><answer>4</answer>", GroundTruth: json.RawMessage(`"4"`), ExtraInfo: ExtraInfo{ElapsedS: f64(-1)}})
	assert.ErrorContains(t, res.Err, "extra_info.elapsed_s")
}

func TestAReportedDuration(t *testing.T) {
	tests := []struct {
		body  string
		want  float64
		found bool
	}{
		{"<d>total duration: 12.5 seconds</d>", 12.5, true},
		{"<d>90 s</d>", 90, true},
		{"<d>took 0.9s</d>", 0.9, true},
		{"<d>500 ms</d>", 0.5, true},
		{"<d>250 Milliseconds</d>", 0.25, true},
		{"<d>3 min</d>", 180, true},
		{"<d>2.5 Minutes</d>", 150, true},
		{"<d>1.5 hours</d>", 5400, true},
		{"<d>2h</d>", 7200, true},
		{"<d>7.</d>", 7, true},
		{"<d>about 19 seconds, not 20</d>", 19, true},
		{"<d>1 s</d> later <d>2 s</d>", 2, true},
		{"<d>1 s</d> later <d>", 0, false},
		{"<d>no number</d>", 0, false},
		{"<d>1.2.3 s</d>", 0, false},
		{"<d></d>", 0, false},
		{"3 s</d>", 0, false},
		{"<d>3 s", 0, false},
		{"<d>3 s</x>", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			got, found := reportedDuration(tc.body, "<d>", "</d>")
			assert.Equal(t, tc.found, found)
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

func TestAGroundTruthText(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{`"\\"`, `\`, ""},
		{`"\\\\"`, `\\`, ""},
		{`"a b"`, "a b", ""},
		{"\"\xff\"", "\ufffd", ""},
		{`""`, "", ""},
		{`"\u0041"`, "A", ""},
		{`0`, "0", ""},
		{`9`, "9", ""},
		{`-3`, "-3", ""},
		{"\t\n\r 7 \r\n\t", "7", ""},
		{"\n\"x\"\t", "x", ""},
		{`"""`, "", "not a valid string"},
		{"\"\x01\"", "", "not a valid string"},
		{"\"a\tb\"", "", "not a valid string"},
		{`"abc`, "", "not a valid string"},
		{`/`, "", "want a string or a number"},
		{`:`, "", "want a string or a number"},
		{`01x`, "", "not a valid number"},
		{" \t\r\n", "", "missing"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.raw), func(t *testing.T) {
			got, err := groundTruthText(json.RawMessage(tc.raw))
			if tc.err != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestATimerToken reads extra_info.timer in its three shapes.
func TestATimerToken(t *testing.T) {
	for _, tc := range []struct {
		raw, want, err string
	}{
		{`"abc.def"`, "abc.def", ""},
		{` "x" `, "x", ""},
		{`"a\"b"`, `a"b`, ""},
		{`null`, "", ""},
		{` `, "", ""},
		{`{"speed_factor": 2}`, "", ""},
		{`"abc`, "", "extra_info.timer: not a valid string"},
		{`7`, "", "extra_info.timer: want a timer token"},
		{`[]`, "", "extra_info.timer: want a timer token"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			tok := TimerToken("previous")
			err := tok.UnmarshalJSON([]byte(tc.raw))
			if tc.err != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorIs(t, err, ErrInvalidItem)
				return
			}
			require.NoError(t, err)
			switch tc.raw {
			case `null`, ` `:
				assert.Equal(t, TimerToken("previous"), tok, "null leaves the token as it was")
			default:
				assert.Equal(t, TimerToken(tc.want), tok)
			}
		})
	}
}

// TestATimerTokenInItem: a string timer in a decoded item is read from the
// store, and its time is the one scored.
func TestATimerTokenInItem(t *testing.T) {
	var it Item
	require.NoError(t, json.Unmarshal([]byte(`{"data_source":"timely/ml","extra_info":{"timer":"tok.sig","accuracy":1,"elapsed_s":999}}`), &it))
	assert.Equal(t, TimerToken("tok.sig"), it.ExtraInfo.Timer)
	timers := &aTimers{elapsed: 5, limit: 10}
	res := aScorer(t, timers, nil).Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, "tok.sig", timers.token)
	assert.InDelta(t, 0.1+0.5+0.4*math.Sqrt2/2, res.Score, 1e-12)
}

func TestAConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" for a valid configuration
	}{
		{"default", func(*Config) {}, ""},
		{"linear", func(c *Config) { c.Timely.Utilization = UtilLinear }, ""},
		{"step", func(c *Config) { c.Timely.Utilization = UtilStep }, ""},
		{"f1", func(c *Config) { c.TimePuzzles.Metric = MetricF1 }, ""},
		{"jaccard", func(c *Config) { c.TimePuzzles.Metric = MetricJaccard }, ""},
		{"honesty with a tag", func(c *Config) { c.Timely.HonestyTolerance = 0.1; c.Timely.DurationTag = "d" }, ""},
		{"every tag character", func(c *Config) { c.Timely.AnswerTag = "az_AZ-09"; c.Timely.DurationTag = "mM5" }, ""},
		{"no tags", func(c *Config) { c.Timely.AnswerTag = "" }, ""},
		{"tiny exponent", func(c *Config) { c.Timely.GameExponent = 1e-9 }, ""},
		{"nan step entry", func(c *Config) { c.Timely.StepTable = []float64{0.1, 0.2, math.NaN()} }, "rewards: timely.step_table: entry 3 is not a finite number"},
		{"inf step entry", func(c *Config) { c.Timely.StepTable = []float64{math.Inf(-1)} }, "rewards: timely.step_table: entry 1 is not a finite number"},
		{"inf fallback", func(c *Config) { c.FallbackScore = math.Inf(1) }, "rewards: fallback_score: not a finite number"},
		{"nan honesty", func(c *Config) { c.Timely.HonestyTolerance = math.NaN() }, "rewards: timely.honesty_tolerance: not a finite number"},
		{"negative exponent", func(c *Config) { c.Timely.GameExponent = -1 }, "rewards: timely.game_exponent: -1 must be positive"},
		{"negative honesty", func(c *Config) { c.Timely.HonestyTolerance = -0.1; c.Timely.DurationTag = "d" }, "rewards: timely.honesty_tolerance: -0.1 must not be negative"},
		{"honesty without a tag", func(c *Config) { c.Timely.HonestyTolerance = 1e-9 }, "rewards: timely.honesty_tolerance: needs timely.duration_tag"},
		{"empty utilization", func(c *Config) { c.Timely.Utilization = "" }, `rewards: timely.utilization: "" is not sin, linear or step`},
		{"blank stop string", func(c *Config) { c.StopStrings = []string{"\t\n"} }, "rewards: stop_strings: entry 1 is empty"},
		{"empty metric", func(c *Config) { c.TimePuzzles.Metric = "" }, `rewards: timepuzzles.metric: "" is not em, f1 or jaccard`},
		{"duration tag", func(c *Config) { c.Timely.DurationTag = "a.b" }, `rewards: timely.duration_tag: "a.b" is not a tag name`},
	}
	for _, bad := range []string{"a`", "a{", "a@", "a[", "a/", "a:", "a b", "é", "a>"} {
		tests = append(tests, struct {
			name string
			mod  func(*Config)
			want string
		}{"tag " + bad, func(c *Config) { c.Timely.AnswerTag = bad }, fmt.Sprintf("rewards: timely.answer_tag: %q is not a tag name", bad)})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			err := cfg.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// aExtractCases pin the edges of ExtractAnswer's rules: labels at the very
// start of a line or of the response, a label with nothing after it (which
// ends the search: the rule applies and finds an empty answer), and case
// folding of every letter of the labels.
var aExtractCases = []struct {
	name     string
	response string
	tag      string
	want     string
	found    bool
}{
	{"tag at the very start", "<answer>5</answer>", "answer", "5", true},
	{"tag pair only", "<a></a>", "a", "", false},
	{"close tag first", "</answer>", "answer", "", false},
	{"boxed at the very start", `\boxed{8} is it`, "", "8", true},
	{"fbox at the very start", `\fbox{8}`, "", "8", true},
	{"boxed with escaped brace", `\boxed{\}}`, "", `\}`, true},
	{"final answer is at the line start", "Final answer is 7", "", "7", true},
	{"final answer is upper case", "THE FINAL ANSWER IS 3.", "", "3", true},
	{"final answer is, on an earlier line", "the final answer is 4\nwell", "", "4", true},
	{"empty my answer line ends the search", "MY ANSWER: 3\nmy answer:", "", "", false},
	{"empty answer line ends the search", "Answer: 5\nAnswer:", "", "", false},
	{"empty final answer line ends the search", "Answer: 5\nFinal answer:", "", "", false},
	{"label on the first line after a blank", "\nAnswer: 4", "", "4", true},
	{"my answer on the first line", "My Answer: 12\nno label here", "", "12", true},
	{"final answer label", "Final Answer: 6", "", "6", true},
	{"answer line after my-answer-less text", "x\n> - Answer: *9*.", "", "9", true},
	{"short line", "Ans", "", "", false},
}

func TestAExtractAnswer(t *testing.T) {
	for _, tc := range aExtractCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ExtractAnswer(tc.response, tc.tag)
			assert.Equal(t, tc.found, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// aEqualCases pin the edges of EqualAnswers: letters and digits at the
// ends of their ranges, the numeric tolerance at its bound and its growth
// with the magnitude, group lengths of thousands separators, and
// malformed LaTeX that must neither panic nor match.
var aEqualCases = []struct {
	pred, ref string
	want      bool
}{
	// ASCII letters at the ends of the alphabet fold and count as letters.
	{"Z", "z", true},
	{"AZ", "az", true},
	{"a = 5", "5", true},
	{"A = 5", "5", true},
	{"z = 5", "5", true},
	{"Z=5", "5", true},
	{"`=5", "5", false}, // '`' precedes 'a'
	{"{=5", "5", false}, // '{' follows 'z'
	{"@=5", "5", false}, // '@' precedes 'A'
	{"[=5", "5", false}, // '[' follows 'Z'
	{"(a)", "A", true},
	{"(z)", "Z", true},
	{"(@)", "@", false},
	{"(1)", "1", false},
	// Digits at the ends of their range.
	{"9", "9.0", true},
	{"19", "19.00", true},
	{"0", "0.0", true},
	{"/5", "0", false}, // '/' precedes '0'
	{":5", "5", false}, // ':' follows '9'
	// The tolerance: |a−b| ≤ 1e-12·max(1, |a|, |b|).
	{"0", "1e-12", true},
	{"0", "1.0000001e-12", false},
	{"0", "-1e-12", true},
	{"1e20", "100000000000010000000", true},  // differ by 1e7 ≤ 1e8
	{"1e20", "100000000001000000000", false}, // differ by 1e9 > 1e8
	{"-1e20", "-100000000000010000000", true},
	// Percentages against plain numbers and each other.
	{"25%", "25", true},
	{"25%", "0.25", true},
	{"25%", "2.5", false},
	{"25%", "25%", true},
	{"25%", "0.25%", false},
	{"%", "%", true},
	{".%", "0", false},
	{".%", ".%", true},
	// Thousands separators: one to three digits, then groups of three.
	{"123,456", "123456", true},
	{"1234,567", "1234567", false},
	{",123", "123", false},
	{"1,234,5678", "12345678", false},
	{"1,000.", "1000", true},
	{"1,000.5x", "1000.5", false},
	// A group or fraction that is not all digits makes no number (not 0).
	{"1,000.5x", "0", false},
	{"1,00a", "0", false},
	{"a,000", "0", false},
	{"1,000.%", "1000%", true},
	// Fractions and ratios.
	{"\\frac{6}{3}", "2", true},
	{"\\frac{6}{3}x", "2", false},
	{"\\frac\\pi2", "1.57", false},
	{"\\frac{1}", "1", false},
	{"\\frac{1}{2", "0.5", false},
	{"1/2", "2", false},
	{"8/2", "4", true},
	{"-8/2", "-4", true},
	{"8/-2", "-4", true},
	{"+8/+2", "4", true},
	{"1/x", "1/x", true},
	// Exponents.
	{"1e+3", "1000", true},
	{"1E-3", "0.001", true},
	{"1e3x", "1000", false},
	{"5e", "5e", true},
	{"1.5.2", "1.5", false},
	// Wrappers: every one is stripped or unwrapped.
	{"\\textit{b}", "B", true},
	{"\\textrm{b}", "B", true},
	{"\\mathbf{b}", "B", true},
	{"\\mbox{b}", "B", true},
	{"\\fbox{b}", "B", true},
	{"a\\boxed{b}", "ab", true},
	{"\\text{{a}b}", "{a}b", true},
	{"\\text{a}}", "a}", true},
	{"}\\text{a}", "}a", true},
	{"\\text{a}\\", "a\\", true},
	{"\\\\text{a}", "\\\\texta", false},
	{"\\\\text{a}", "\\\\text{a}", true},
	{"\\text{\\}}", "\\}", true},
	{"\\(\\)", "\\(\\)", false},
	{"\\[\\]", "\\[\\]", false},
	{"\\(5", "5", false},
	{"\\[5\\]\\]", "5\\]", true},
	{"$$$5$$$", "5", true},
	{"15$", "15", true},
	{"$15", "15", true},
	{"\\fbox{5}x", "5x", true},
	{"\\boxed{5}x", "5x", true},
	{"\\boxed{5}}", "5}", true},
	{"\\fbox{5}}", "5}", true},
	// A box only formed once ~ is dropped is stripped too.
	{"\\~boxed{5}", "5", true},
	{"\\~fbox{5}", "5", true},
	{"\\~boxed{5}}", "5}", false}, // the brace closing the box is not the last
	// \left and \right as delimiters, not as prefixes of other commands.
	{"5\\right", "5", true},
	{"\\left5", "5", true},
	{"\\right", "x", false},
	{"\\rightarrow", "\\rightarrow", true},
	{"\\rightarrow", "arrow", false},
	{"\\left.5\\right|", ".5|", true},
	// Adjacent tokens are all replaced.
	{"1\\,\\,000", "1000", true},
	{"1\\!\\;\\:000", "1000", true},
	{"90^\\circ^{\\circ}°", "90", true},
	{"\\dfrac12\\tfrac12", "\\frac12\\frac12", true},
	{"\u2212\u22125", "--5", true},
	{"5\\", "5\\", true},
	{"5\\", "5", false},
}

func TestAEqualAnswers(t *testing.T) {
	for _, tc := range aEqualCases {
		t.Run(fmt.Sprintf("%q~%q", tc.pred, tc.ref), func(t *testing.T) {
			assert.Equal(t, tc.want, EqualAnswers(tc.pred, tc.ref), "EqualAnswers(%q, %q)", tc.pred, tc.ref)
			assert.Equal(t, tc.want, EqualAnswers(tc.ref, tc.pred), "EqualAnswers(%q, %q)", tc.ref, tc.pred)
		})
	}
}

// TestAValidDateEdges: years from 0000 (a leap year of the proleptic
// Gregorian calendar, divisible by 400), every month's last day, and
// digits at the ends of their range.
func TestAValidDateEdges(t *testing.T) {
	valid := []string{"0000-01-01", "0000-02-29", "9999-12-31", "1999-09-09", "2024-01-31", "2023-02-28",
		"2024-03-31", "2024-04-30", "2024-05-31", "2024-06-30", "2024-07-31", "2024-08-31", "2024-09-30",
		"2024-10-31", "2024-11-30", "1600-02-29", "2004-02-29"}
	invalid := []string{"2024-03-32", "2024-04-31", "2024-06-31", "2024-09-31", "2024-11-31", "2023-02-29",
		"1700-02-29", "2024-01-/1", "2024-01-:1", "/024-01-01", ":024-01-01", "2024-1:-01", "2024-01-01 ",
		"2024_01-01", "2024-01_01", "-024-01-01"}
	for _, s := range valid {
		assert.True(t, tpValidDate(s), s)
	}
	for _, s := range invalid {
		assert.False(t, tpValidDate(s), s)
	}
}

// TestAParseDateAnswerEdges: the marker at the very start of the response
// and in mixed case, separators, and the line the answer is read from.
func TestAParseDateAnswerEdges(t *testing.T) {
	for _, tc := range []struct {
		name, response string
		dates          []string
		ok             bool
	}{
		{"marker at the start, mixed case", "mY aNsWeR: 2024-02-29", []string{"2024-02-29"}, true},
		{"tab separated", "MY ANSWER: 2024-02-29\t2024-01-01", []string{"2024-01-01", "2024-02-29"}, true},
		{"blank lines before the answer", "MY ANSWER:\n\n  2024-02-29\n2024-03-01", []string{"2024-02-29"}, true},
		{"only separators", "MY ANSWER: ,;", nil, false},
		{"marker split by a line", "MY\nANSWER: 2024-02-29", nil, false},
		{"marker too short", "Y ANSWER: 2024-02-29", nil, false},
		{"year zero", "MY ANSWER: 0000-02-29", []string{"0000-02-29"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dates, ok := ParseDateAnswer(tc.response)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.dates, dates)
		})
	}
}

// TestAHelperContracts checks helpers against their own doc comments, on
// inputs their callers never pass: ansStripOuter strips an empty $…$,
// tpLastIndexUpper folds every lower-case letter, plainJSONString accepts
// every byte from the space up.
func TestAHelperContracts(t *testing.T) {
	for in, want := range map[string]string{"$$": "", "$5$": "5", " $$ 5 $$. ": "5", "$$$$": "", `\(\)`: "", "5$": "5$"} {
		assert.Equal(t, want, ansStripOuter(in), "ansStripOuter(%q)", in)
	}
	for _, tc := range []struct {
		s, sub string
		want   int
	}{{"xyz", "Z", 2}, {"xyZ z!", "Z", 4}, {"az", "AZ", 0}, {"abc", "Z", -1}, {"", "Z", -1}} {
		assert.Equal(t, tc.want, tpLastIndexUpper(tc.s, tc.sub), "tpLastIndexUpper(%q, %q)", tc.s, tc.sub)
	}
	for in, want := range map[string]bool{"a b": true, " ": true, "~\x7f": true, "": true, "é": true,
		"a\tb": false, "\x1f": false, `a\b`: false, `a"b`: false, "\xff": false} {
		assert.Equal(t, want, plainJSONString([]byte(in)), "plainJSONString(%q)", in)
	}
}
