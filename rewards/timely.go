package rewards

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// timelyKeys are the details of the three Timely-RL rewards:
//
//	acc           general: 1 if the answer is right; game: s/s_max; ml: accuracy
//	task_reward   r of the formula (0.5 when right; (s/s_max)^(1/3); 0.5·accuracy)
//	format_ok     1 if the format check passed (always 1 for games and ML)
//	on_time       1 if t ≤ T_max, or when no limit or no time applies
//	elapsed_s     the measured time t (0 when none)
//	time_limit_s  T_max (0 when none)
//	time_ratio    t/T_max (0 when either is missing)
//	utilization   U(t) (0 when either is missing)
//	reported_s    the self-reported duration, when a duration tag is configured
var timelyKeys = []string{"acc", "task_reward", "format_ok", "on_time", "elapsed_s", "time_limit_s", "time_ratio", "utilization", "reported_s"}

const (
	kAcc = iota
	kTaskReward
	kFormatOK
	kOnTime
	kElapsed
	kLimit
	kRatio
	kUtil
	kReported
)

// TimelyGeneral is the Timely-RL reward for general reasoning (the Timely Machine paper,
// eq. 9–10, App. A.2.2): r = CorrectReward when the extracted answer equals
// ground_truth.
var TimelyGeneral = &Reward{
	DataSource:  "timely/general",
	Summary:     "Timely-RL reward for reasoning under a time budget: answer correctness plus time utilisation",
	GroundTruth: "string: the reference answer",
	Keys:        timelyKeys,
	score:       scoreTimelyGeneral,
}

// TimelyGame is the Timely-RL reward for interactive games (App. A.2.3):
// r = (score/max_score)^(1/3) from extra_info.score and extra_info.max_score.
var TimelyGame = &Reward{
	DataSource:  "timely/game",
	Summary:     "Timely-RL reward for interactive games: (score/max_score)^(1/3) plus time utilisation",
	GroundTruth: "unused (extra_info.score and extra_info.max_score carry the result)",
	Keys:        timelyKeys,
	score:       scoreTimelyGame,
}

// TimelyML is the Timely-RL reward for machine-learning tasks (App. A.2.4):
// r = 0.5·accuracy from extra_info.accuracy.
var TimelyML = &Reward{
	DataSource:  "timely/ml",
	Summary:     "Timely-RL reward for ML tasks: 0.5·accuracy plus time utilisation",
	GroundTruth: "unused (extra_info.accuracy carries the result)",
	Keys:        timelyKeys,
	score:       scoreTimelyML,
}

type timelyParams struct {
	cfg          TimelyConfig
	durationOpen string
	durationEnd  string
}

func newTimelyParams(c TimelyConfig) timelyParams {
	p := timelyParams{cfg: c}
	if c.DurationTag != "" {
		p.durationOpen, p.durationEnd = "<"+c.DurationTag+">", "</"+c.DurationTag+">"
	}
	return p
}

// Utilization returns U for a time ratio t/T_max under c's variant: sine
// (eq. 10), linear (eq. 11) or the step table (eq. 12). The ratio is clamped
// to [0, 1].
func Utilization(c TimelyConfig, ratio float64) float64 {
	x := min(max(ratio, 0), 1)
	switch c.Utilization {
	case UtilLinear:
		return x
	case UtilStep:
		n := len(c.StepTable)
		if n == 0 {
			return 0
		}
		return c.StepTable[min(int(x*float64(n)), n-1)]
	default:
		return math.Sin(math.Pi / 2 * x)
	}
}

// TimelyReward is eq. 9 for a well-formed response: 0 when t exceeds a
// positive tMax, r_f when r = 0, r_f + r + λ·U(t/T_max) otherwise. With
// tMax ≤ 0 no limit applies and U is 0.
func TimelyReward(c TimelyConfig, t, tMax, r float64) float64 {
	if tMax > 0 && t > tMax {
		return 0
	}
	if r <= 0 {
		return c.FormatReward
	}
	u := 0.0
	if tMax > 0 {
		u = Utilization(c, t/tMax)
	}
	return c.FormatReward + r + c.Lambda*u
}

// measure returns the rollout's measured time and its limit. The time comes
// from the timer the item names, else from extra_info.elapsed_s. The limit
// a timer carries is signed by the service that issued it and decides: an
// extra_info.time_limit_s that disagrees with it is an error naming both
// (a row cannot loosen its rollout's budget); without a timer, or when the
// timer carries no limit, the limit is extra_info.time_limit_s. timed is
// false when no time is known, in which case no limit applies. A running timer gives a
// later time at every reading, so a scorer measures once and hands that
// time to everything that needs it (the honesty check and the reward).
func (s *Scorer) measure(ctx context.Context, it *Item) (t float64, timed bool, limit float64, err error) {
	ei := &it.ExtraInfo
	if ei.TimeLimitS != nil {
		limit = *ei.TimeLimitS
		if !finite(limit) || limit <= 0 {
			return 0, false, 0, fieldErrorf("extra_info.time_limit_s", "%v is not a positive number of seconds", limit)
		}
	}
	switch {
	case ei.Timer != "":
		if s.timers == nil {
			return 0, false, 0, &FieldError{Field: "extra_info.timer", Err: errNoTimeSource}
		}
		el, tl, err := s.timers.Elapsed(ctx, string(ei.Timer))
		if err != nil {
			return 0, false, 0, &FieldError{Field: "extra_info.timer", Err: err}
		}
		if tl > 0 {
			if limit > 0 && limit != tl {
				return 0, false, 0, fieldErrorf("extra_info.time_limit_s", "%v s disagrees with the limit of %v s signed into extra_info.timer; the timer's limit decides: drop time_limit_s or make it match", limit, tl)
			}
			limit = tl
		}
		return el, true, limit, nil
	case ei.ElapsedS != nil:
		t = *ei.ElapsedS
		if !finite(t) || t < 0 {
			return 0, false, 0, fieldErrorf("extra_info.elapsed_s", "%v is not a non-negative number of seconds", t)
		}
		return t, true, limit, nil
	}
	return 0, false, limit, nil
}

// finishTimely fills the time details and returns R for task reward r and
// the rollout's time t (timed and limit as measure returns them).
func (s *Scorer) finishTimely(t float64, timed bool, limit, r float64, formatOK bool, d []float64) float64 {
	d[kTaskReward] = r
	d[kFormatOK] = b2f(formatOK)
	d[kElapsed] = t
	if !timed {
		limit = 0
	}
	d[kLimit] = limit
	onTime := true
	if timed && limit > 0 {
		d[kRatio] = t / limit
		d[kUtil] = Utilization(s.timely.cfg, d[kRatio])
		onTime = t <= limit
	}
	d[kOnTime] = b2f(onTime)
	if !formatOK {
		return 0
	}
	return TimelyReward(s.timely.cfg, t, limit, r)
}

func scoreTimelyGeneral(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	ref, err := groundTruthText(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	t, timed, limit, err := s.measure(ctx, it)
	if err != nil {
		return 0, err
	}
	p := &s.timely
	ans, ok := ExtractAnswer(it.SolutionStr, p.cfg.AnswerTag)
	formatOK := ok
	correct := ok && EqualAnswers(ans, ref)
	if p.durationOpen != "" {
		rep, found := reportedDuration(it.SolutionStr, p.durationOpen, p.durationEnd)
		d[kReported] = rep
		formatOK = formatOK && found
		if found && p.cfg.HonestyTolerance > 0 && timed && math.Abs(rep-t) > max(p.cfg.HonestyTolerance*t, 1) {
			formatOK = false
		}
	}
	d[kAcc] = b2f(correct)
	r := 0.0
	if correct {
		r = p.cfg.CorrectReward
	}
	return s.finishTimely(t, timed, limit, r, formatOK, d), nil
}

func scoreTimelyGame(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	ei := &it.ExtraInfo
	if ei.Score == nil {
		return 0, fieldErrorf("extra_info.score", "missing: a game reward needs the achieved score")
	}
	if ei.MaxScore == nil {
		return 0, fieldErrorf("extra_info.max_score", "missing: a game reward needs the game's maximum score")
	}
	sc, mx := *ei.Score, *ei.MaxScore
	if !finite(mx) || mx <= 0 {
		return 0, fieldErrorf("extra_info.max_score", "%v is not a positive number", mx)
	}
	if !finite(sc) {
		return 0, fieldErrorf("extra_info.score", "not a finite number")
	}
	t, timed, limit, err := s.measure(ctx, it)
	if err != nil {
		return 0, err
	}
	frac := min(max(sc/mx, 0), 1)
	d[kAcc] = frac
	r := math.Pow(frac, s.timely.cfg.GameExponent)
	return s.finishTimely(t, timed, limit, r, true, d), nil
}

func scoreTimelyML(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	ei := &it.ExtraInfo
	if ei.Accuracy == nil {
		return 0, fieldErrorf("extra_info.accuracy", "missing: an ML reward needs the test accuracy")
	}
	acc := *ei.Accuracy
	if !finite(acc) || acc < 0 || acc > 1 {
		return 0, fieldErrorf("extra_info.accuracy", "%v is not in [0, 1]", acc)
	}
	t, timed, limit, err := s.measure(ctx, it)
	if err != nil {
		return 0, err
	}
	d[kAcc] = acc
	return s.finishTimely(t, timed, limit, s.timely.cfg.MLWeight*acc, true, d), nil
}

// groundTruthText accepts a JSON string or number as the reference answer.
func groundTruthText(raw json.RawMessage) (string, error) {
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return "", fieldErrorf("ground_truth", "missing: this data source needs the reference answer")
	}
	switch c := b[0]; {
	case c == '"':
		if len(b) >= 2 && b[len(b)-1] == '"' && plainJSONString(b[1:len(b)-1]) {
			return string(b[1 : len(b)-1]), nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", fieldErrorf("ground_truth", "not a valid string: %v", err)
		}
		return s, nil
	case c == '-' || c >= '0' && c <= '9':
		if _, err := strconv.ParseFloat(string(b), 64); err != nil {
			return "", fieldErrorf("ground_truth", "not a valid number")
		}
		return string(b), nil
	}
	return "", fieldErrorf("ground_truth", "want a string or a number")
}

// plainJSONString reports whether b, the inside of a JSON string, has no
// escapes, quotes or control bytes, so its bytes are the string's.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// reportedDuration reads the first number inside the last <tag>…</tag> as a
// duration; a following unit of minutes, hours or milliseconds converts it
// to seconds.
func reportedDuration(s, open, end string) (float64, bool) {
	i := strings.LastIndex(s, open)
	if i < 0 {
		return 0, false
	}
	body := s[i+len(open):]
	j := strings.Index(body, end)
	if j < 0 {
		return 0, false
	}
	body = body[:j]
	k := strings.IndexFunc(body, func(r rune) bool { return r >= '0' && r <= '9' })
	if k < 0 {
		return 0, false
	}
	e := k
	for e < len(body) && (body[e] >= '0' && body[e] <= '9' || body[e] == '.') {
		e++
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(body[k:e], "."), 64)
	if err != nil || !finite(v) {
		return 0, false
	}
	unit := strings.ToLower(strings.TrimSpace(body[e:]))
	switch {
	case strings.HasPrefix(unit, "ms"), strings.HasPrefix(unit, "milli"):
		v /= 1000
	case strings.HasPrefix(unit, "min"):
		v *= 60
	case strings.HasPrefix(unit, "h"):
		v *= 3600
	}
	return v, true
}
