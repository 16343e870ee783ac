package traveler

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

const sharedSurvey = "../../../shared/data/vague-adverbials/survey_means.csv"

func TestSurveyEmbedded(t *testing.T) {
	b, err := os.ReadFile(sharedSurvey)
	require.NoError(t, err)
	assert.Equal(t, string(b), surveyCSV, "synth/traveler/survey_means.csv must be a copy of %s", sharedSurvey)
	for _, a := range Activities {
		for _, adv := range Adverbials {
			_, err := SurveyCurve(a.Survey, adv)
			assert.NoError(t, err)
		}
	}
	_, err = SurveyCurve("tom_washing_mug", Just)
	assert.ErrorContains(t, err, `no curve for event "tom_washing_mug"`)
}

func TestCurveInterpolation(t *testing.T) {
	lta, err := SurveyCurve("tom_eating_risotto", LongTimeAgo)
	require.NoError(t, err)
	// survey rows: 60 → 0.16, 240 → 0.2206, …, 5760 → 0.47, 10080 → 0.6127
	tests := []struct {
		minutes, want float64
	}{
		{60, 0.16},
		{240, 0.2206},
		{10080, 0.6127},
		{120, 0.16 + 0.5*(0.2206-0.16)}, // log 120 is halfway between log 60 and log 240
		{7620, 0.47 + math.Log(7620.0/5760)/math.Log(10080.0/5760)*(0.6127-0.47)}, // between 5760 and 10080
		{1, 0.16},     // held before the first knot
		{0, 0.16},     // an event right now
		{-5, 0.16},    // never negative in practice; held all the same
		{1e6, 0.6127}, // held after the last knot
		{math.Inf(1), 0.6127},
	}
	for _, tc := range tests {
		assert.InDelta(t, tc.want, lta.P(tc.minutes), 1e-12, "P(%v)", tc.minutes)
	}
	assert.InDelta(t, 0.16+0.5*(0.2206-0.16), lta.P(120), 1e-12)

	for key, c := range allCurves(t) {
		for i, m := range c.Minutes {
			assert.Equal(t, c.Means[i], c.P(m), "%v at knot %v", key, m)
			if i > 0 {
				mid := math.Sqrt(m * c.Minutes[i-1])
				assert.InDelta(t, (c.Means[i]+c.Means[i-1])/2, c.P(mid), 1e-9, "%v at the log-midpoint %v", key, mid)
			}
		}
	}
}

func allCurves(t *testing.T) map[[2]string]*Curve {
	t.Helper()
	all, err := parseSurvey(surveyCSV)
	require.NoError(t, err)
	require.Equal(t, 19*4, len(all), "19 events × 4 adverbials")
	return all
}

// TestCurvesMonotone: wherever the survey means are monotone, so is
// the interpolated curve, on a fine grid from 1 minute to 20 years.
func TestCurvesMonotone(t *testing.T) {
	monotone := 0
	for key, c := range allCurves(t) {
		dir := c.Monotone()
		if dir == 0 {
			continue
		}
		monotone++
		prev := c.P(1)
		for x := 0.0; x <= math.Log(20*365*24*60); x += 0.01 {
			p := c.P(math.Exp(x))
			if float64(dir)*(p-prev) < -1e-15 {
				t.Fatalf("%v: direction %d but P goes from %v to %v at %v minutes", key, dir, prev, p, math.Exp(x))
			}
			prev = p
		}
	}
	assert.Greater(t, monotone, 30)
	for _, a := range []string{"tom_eating_risotto", "tom_reading_book", "tom_watching_film"} {
		c, err := SurveyCurve(a, Just)
		require.NoError(t, err)
		assert.Equal(t, -1, c.Monotone(), "%s: just fades", a)
		c, err = SurveyCurve(a, LongTimeAgo)
		require.NoError(t, err)
		assert.Equal(t, 1, c.Monotone(), "%s: long time ago grows", a)
	}
}

func TestParseSurveyErrors(t *testing.T) {
	const head = "event,adverbial,minutes_ago,raters,mean_membership,sd\n"
	for _, tc := range []struct{ text, want string }{
		{"a,b,c,d,e,f\n1,2,3,4,5,6\n", "unexpected header"},
		{head + "x,just,ten,5,0.5,0.1\n", "line 2: bad minutes"},
		{head + "x,just,10,5,1.5,0.1\n", "line 2: bad minutes \"10\" or mean \"1.5\""},
		{head + "x,just,10,5,0.5,0.1\nx,just,10,5,0.4,0.1\n", "10 minutes twice"},
	} {
		_, err := parseSurvey(tc.text)
		assert.ErrorContains(t, err, tc.want)
	}
}

// TestSeedExample builds the TRAVELER paper's example by hand: Tom ate risotto
// in the kitchen at 2023-09-29 20:27 and 2023-09-22 22:27; asked at
// 2023-09-29 22:27 whether he did so "a long time ago", the two events are
// 2 hours and 1 week old and get p from the survey curve at those distances.
func TestSeedExample(t *testing.T) {
	g, err := NewGenerator(DefaultOptions())
	require.NoError(t, err)
	risotto := &Activities[1]
	require.Equal(t, "eat risotto", risotto.Name)
	at := func(s string) time.Time {
		tt, err := time.Parse("2006-01-02 15:04", s)
		require.NoError(t, err)
		return tt
	}
	row := &Row{
		Category: rewards.TravelerVague, Template: rewards.TravelerDid, Expression: LongTimeAgo,
		Subject: "Tom", Activity: risotto, Location: "kitchen", SpeechTime: at("2023-09-29 22:27"),
		Events: []Event{
			{"Tom", risotto, "kitchen", at("2023-09-29 20:27")},
			{"Mary", risotto, "kitchen", at("2023-09-28 10:00")},
			{"Tom", risotto, "living room", at("2023-09-20 10:00")},
			{"Tom", risotto, "kitchen", at("2023-09-22 22:27")},
		},
	}
	var gt rewards.TravelerGroundTruth
	require.NoError(t, g.vague(row, &gt))
	var ps []float64
	require.NoError(t, json.Unmarshal(gt.Probabilities, &ps))
	c, err := SurveyCurve("tom_eating_risotto", LongTimeAgo)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.InDelta(t, c.P(120), ps[0], 1e-6)
	assert.InDelta(t, 0.6127, ps[1], 1e-12, "one week is a survey knot")
	want := 1 - (1-ps[0])*(1-ps[1])
	assert.Equal(t, "yes", row.Answer)
	assert.InDelta(t, want, row.BestScore, 1e-12)
	assert.Equal(t, "Did Tom eat a risotto in the kitchen a long time ago?", question(row))
}

func rows(t *testing.T, opt Options, count int) []*Row {
	t.Helper()
	var rows []*Row
	_, err := Build(context.Background(), opt, count, func(r *Row) error {
		rows = append(rows, r)
		return nil
	})
	require.NoError(t, err)
	return rows
}

func TestDeterministic(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed = 7
	a := rows(t, opt, 40)
	b := rows(t, opt, 12)
	for i := range b {
		assert.Equal(t, a[i], b[i], "row %d depends on the seed and its index only", i)
	}
	opt.Seed = 8
	c := rows(t, opt, 12)
	differ := 0
	for i := range c {
		if c[i].User != a[i].User {
			differ++
		}
	}
	assert.Equal(t, 12, differ)
}

// TestCrispOracle checks the crisp ground truth of many rows
// against an oracle that matches dates as text: an event is "on D" when its
// date string is D, "this month" when it shares now's YYYY-MM, and so on.
func TestCrispOracle(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed = 11
	opt.Categories = []string{rewards.TravelerExplicit, rewards.TravelerImplicit}
	opt.MinEvents, opt.MaxEvents = 5, 60
	rows := rows(t, opt, 3000)
	seen := map[string]int{}
	for _, row := range rows {
		now := row.SpeechTime
		in := func(e *Event) bool {
			ts := e.Time.Format("2006-01-02 15:04")
			x := row.Expression
			switch {
			case strings.HasPrefix(x, "on "):
				return strings.HasPrefix(ts, x[3:]+" ")
			case strings.HasPrefix(x, "in the year "):
				return strings.HasPrefix(ts, x[12:]+"-")
			case strings.HasPrefix(x, "in "):
				return strings.HasPrefix(ts, x[3:]+"-")
			case x == "today":
				return ts[:10] == now.Format("2006-01-02")
			case x == "yesterday":
				return ts[:10] == now.AddDate(0, 0, -1).Format("2006-01-02")
			case x == "this month":
				return ts[:7] == now.Format("2006-01")
			case x == "last month":
				first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
				return ts[:7] == first.AddDate(0, -1, 0).Format("2006-01")
			case x == "this year":
				return ts[:4] == now.Format("2006")
			case x == "":
				return true
			}
			t.Fatalf("unknown expression %q", x)
			return false
		}
		subjects := map[string]bool{}
		count, last := 0, ""
		for i := range row.Events {
			e := &row.Events[i]
			require.True(t, e.Time.Before(now), "events happen before now")
			require.LessOrEqual(t, now.Sub(e.Time), time.Duration(opt.WindowDays)*24*time.Hour)
			if e.Activity.Name != row.Activity.Name || e.Location != row.Location || (row.Subject != "" && e.Subject != row.Subject) || !in(e) {
				continue
			}
			count++
			subjects[e.Subject] = true
			if d := e.Time.Format("2006-01-02"); d > last {
				last = d
			}
		}
		var want string
		switch row.Template {
		case rewards.TravelerWho:
			var names []string
			for _, s := range []string{"Mary", "Robot", "Tom"} {
				if subjects[s] {
					names = append(names, s)
				}
			}
			want = nameList(names)
		case rewards.TravelerDid:
			want = map[bool]string{true: "yes", false: "no"}[count > 0]
		case rewards.TravelerHowOften:
			want = strconv.Itoa(count)
		case rewards.TravelerWhenLast:
			require.Equal(t, rewards.TravelerImplicit, row.Category)
			want = last
			if last == "" {
				want = "never"
			}
		}
		require.Equal(t, want, row.Answer, "row %d: %s", row.Index, question(row))
		seen[row.Template+"/"+map[bool]string{true: "some", false: "none"}[count > 0]]++
		assert.Equal(t, 1.0, row.BestScore)
	}
	for _, tmpl := range Templates {
		assert.Greater(t, seen[tmpl+"/some"], 20, "%s questions with matching events", tmpl)
		assert.Greater(t, seen[tmpl+"/none"], 20, "%s questions without", tmpl)
	}
}

// TestRewardsEndToEnd scores generated rows with the traveler
// reward: the gold answer scores 1 on crisp questions and the row's best
// score on vague ones, where the best score is the soft accuracy recomputed
// here from the probabilities; a wrong crisp answer scores 0.
func TestRewardsEndToEnd(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed = 5
	rows := rows(t, opt, 900)
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	score := func(row *Row, answer string) rewards.Result {
		res := s.Score(context.Background(), &rewards.Item{DataSource: DataSource, GroundTruth: json.RawMessage(row.GroundTruth),
			SolutionStr: "Going through the events.\nANSWER: " + answer})
		require.NoError(t, res.Err, row.GroundTruth)
		return res
	}
	byCategory := map[string]int{}
	for _, row := range rows {
		byCategory[row.Category]++
		res := score(row, row.Answer)
		assert.Equal(t, 1.0, res.Details[0], "parsed")
		assert.Equal(t, 1.0, res.Details[1], "optimal")
		assert.InDelta(t, row.BestScore, res.Details[2], 1e-12)
		var gt struct {
			Probabilities json.RawMessage `json:"probabilities"`
		}
		require.NoError(t, json.Unmarshal([]byte(row.GroundTruth), &gt))
		if row.Category != rewards.TravelerVague {
			assert.Equal(t, 1.0, res.Score, "row %d", row.Index)
			if row.Template == rewards.TravelerDid {
				other := map[string]string{"yes": "no", "no": "yes"}[row.Answer]
				assert.Equal(t, 0.0, score(row, other).Score)
			}
			continue
		}
		assert.InDelta(t, row.BestScore, res.Score, 1e-12)
		switch row.Template {
		case rewards.TravelerDid:
			var ps []float64
			require.NoError(t, json.Unmarshal(gt.Probabilities, &ps))
			none := 1.0
			for _, p := range ps {
				none *= 1 - p
			}
			assert.InDelta(t, 1-none, score(row, "yes").Score, 1e-12)
			assert.InDelta(t, none, score(row, "no").Score, 1e-12)
		case rewards.TravelerHowOften:
			var ps []float64
			require.NoError(t, json.Unmarshal(gt.Probabilities, &ps))
			total, expect := 0.0, 0.0
			for k := 0; k <= len(ps); k++ {
				sk := score(row, strconv.Itoa(k)).Score
				total += sk
				expect += float64(k) * sk
			}
			assert.InDelta(t, 1, total, 1e-9, "P(N = k) sums to 1")
			sum := 0.0
			for _, p := range ps {
				sum += p
			}
			assert.InDelta(t, sum, expect, 1e-9, "the expected count is the soft count Σp")
		case rewards.TravelerWho:
			var by map[string][]float64
			require.NoError(t, json.Unmarshal(gt.Probabilities, &by))
			assert.Len(t, by, 3, "every subject is named")
			total := 0.0
			for _, ans := range []string{"nobody", "Mary", "Robot", "Tom", "Mary, Robot", "Mary, Tom", "Robot, Tom", "Mary, Robot, Tom"} {
				total += score(row, ans).Score
			}
			assert.InDelta(t, 1, total, 1e-9, "the eight answers' probabilities sum to 1")
		}
	}
	assert.Equal(t, 300, byCategory[rewards.TravelerVague])
}

func TestRowsShape(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed = 3
	opt.MinEvents, opt.MaxEvents = 7, 9
	for _, row := range rows(t, opt, 60) {
		assert.Contains(t, []int{7, 8, 9}, len(row.Events))
		assert.Equal(t, row.Category, Categories[row.Index%3])
		assert.Equal(t, len(row.Events), strings.Count(row.User, "\n- On "))
		assert.Contains(t, row.User, "It is now "+row.SpeechTime.Format("2006-01-02 15:04")+".")
		assert.Contains(t, row.User, "Question: "+question(row)+"\n")
		assert.True(t, strings.HasSuffix(row.User, "where <answer> is "+answerForm[row.Template]+"."))
		assert.Equal(t, row.Category == rewards.TravelerVague, strings.Contains(row.User, "vague time expression"))
		assert.Equal(t, DefaultSystemPrompt, row.System)
		y := row.SpeechTime.Year()
		assert.True(t, y >= 2023 && y <= 2025)
	}
	q := &Row{Template: rewards.TravelerWho, Expression: Just, Activity: &Activities[0], Location: "kitchen"}
	assert.Equal(t, "Who just watched a film in the kitchen?", question(q))
	q = &Row{Template: rewards.TravelerHowOften, Expression: "last month", Subject: "Robot", Activity: &Activities[5], Location: "living room"}
	assert.Equal(t, "How often did Robot drink a juice in the living room last month?", question(q))
	q = &Row{Template: rewards.TravelerWhenLast, Subject: "Mary", Activity: &Activities[6], Location: "kitchen"}
	assert.Equal(t, "When was the last time Mary chatted with a friend in the kitchen?", question(q))
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name, key, want string
		mod             func(*Options)
	}{
		{"no events", "events", "want A-B", func(o *Options) { o.MinEvents = 0 }},
		{"reversed", "events", "9-5", func(o *Options) { o.MinEvents, o.MaxEvents = 9, 5 }},
		{"too many", "events", "≤ 1000", func(o *Options) { o.MaxEvents = 1001 }},
		{"unknown category", "categories", `"fuzzy"`, func(o *Options) { o.Categories = []string{"fuzzy"} }},
		{"no category", "categories", "empty", func(o *Options) { o.Categories = nil }},
		{"twice", "templates", `"did" twice`, func(o *Options) { o.Templates = []string{"did", "did"} }},
		{"when_last explicit", "templates", "explicit category", func(o *Options) {
			o.Categories, o.Templates = []string{"explicit", "implicit"}, []string{"when_last"}
		}},
		{"window", "window_days", "0 is not", func(o *Options) { o.WindowDays = 0 }},
		{"years", "years", "2030-2020", func(o *Options) { o.FirstYear, o.LastYear = 2030, 2020 }},
		{"split", "split", "empty", func(o *Options) { o.Split = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mod(&o)
			err := o.Validate()
			var oe *synth.OptionError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, tc.key, oe.Key)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	o := DefaultOptions()
	o.Categories, o.Templates = []string{"implicit"}, []string{"when_last"}
	assert.NoError(t, o.Validate())
	_, err := Build(context.Background(), DefaultOptions(), 0, nil)
	assert.ErrorContains(t, err, "count: 0")
}

func TestBuildStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, DefaultOptions(), 10, func(*Row) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)
	boom := errors.New("disk full")
	n := 0
	_, err = Build(context.Background(), DefaultOptions(), 10, func(*Row) error { n++; return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, n)
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{{"5-100", 5, 100, true}, {" 10 - 20 ", 10, 20, true}, {"50", 50, 50, true}, {"5-", 0, 0, false}, {"-5", 0, 0, false}, {"a-b", 0, 0, false}} {
		lo, hi, err := ParseRange(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, [2]int{tc.lo, tc.hi}, [2]int{lo, hi})
	}
}
