package traveler

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
)

// The vague-question oracle: what a vague TRAVELER row should score,
// worked out from what the model is shown (the user turn) and from the
// survey file itself, with its own reading of the CSV and its own arithmetic
// of the TRAVELER paper's soft accuracy. It shares nothing with the
// generator or the reward: not the survey parser, not the curves, not the
// activity table, not TravelerAtLeastOne or TravelerCountDistribution.
//
//	p(e)        survey mean of (activity's tom_* event, adverbial) at the
//	            event's age Δt in minutes, linear in ln(minutes) between the
//	            surveyed ages, held at the first/last mean outside them,
//	            rounded to 6 decimals (docs/traveler.md)
//	did         P = 1 − ∏(1 − p) for "yes", 1 − P for "no" (the paper's
//	            "Probabilistic Accuracy for Vague 'Did ...?'")
//	who         ∏ over subjects of P_s (named) or 1 − P_s (not named); 0 for
//	            a name that is no subject (the paper's footnote 4, P per subject)
//	how often   P(exactly k events fit), the coefficients of ∏(1 − p + p·x),
//	            whose mean is the paper's soft count Σp

const oracleSurveyPath = "../../../shared/data/vague-adverbials/survey_means.csv"

type oracleKnot struct{ minutes, mean float64 }

// oracleReadSurvey reads the survey file as plain comma-separated lines:
// event,adverbial,minutes_ago,raters,mean_membership,sd. Curves are keyed
// "event|adverbial" with knots in ascending minutes.
func oracleReadSurvey(t *testing.T) map[string][]oracleKnot {
	t.Helper()
	b, err := os.ReadFile(oracleSurveyPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	require.Equal(t, "event,adverbial,minutes_ago,raters,mean_membership,sd", strings.TrimRight(lines[0], "\r"))
	curves := map[string][]oracleKnot{}
	for i, line := range lines[1:] {
		f := strings.Split(strings.TrimRight(line, "\r"), ",")
		require.Len(t, f, 6, "survey line %d", i+2)
		m, err := strconv.ParseFloat(f[2], 64)
		require.NoError(t, err, "survey line %d", i+2)
		p, err := strconv.ParseFloat(f[4], 64)
		require.NoError(t, err, "survey line %d", i+2)
		curves[f[0]+"|"+f[1]] = append(curves[f[0]+"|"+f[1]], oracleKnot{m, p})
	}
	for _, ks := range curves {
		sort.Slice(ks, func(i, j int) bool { return ks[i].minutes < ks[j].minutes })
	}
	return curves
}

// oracleP is the survey curve at an age in minutes, rounded to 6 decimals.
func oracleP(ks []oracleKnot, minutes float64) float64 {
	var p float64
	switch first, last := ks[0], ks[len(ks)-1]; {
	case minutes <= first.minutes:
		p = first.mean
	case minutes >= last.minutes:
		p = last.mean
	default:
		for i := 1; i < len(ks); i++ {
			if minutes <= ks[i].minutes {
				a, b := ks[i-1], ks[i]
				frac := (math.Log(minutes) - math.Log(a.minutes)) / (math.Log(b.minutes) - math.Log(a.minutes))
				p = a.mean + frac*(b.mean-a.mean)
				break
			}
		}
	}
	return math.Round(p*1e6) / 1e6
}

// oracleActivities: the TRAVELER household's event types as the prompt
// words them (simple past in event lines and who questions, bare infinitive
// in did and how-often questions) and the survey event rated for each.
var oracleActivities = []struct{ past, base, survey string }{
	{"watched a film", "watch a film", "tom_watching_film"},
	{"ate a risotto", "eat a risotto", "tom_eating_risotto"},
	{"read a book", "read a book", "tom_reading_book"},
	{"danced a lively salsa", "dance a lively salsa", "tom_dancing_salsa"},
	{"stored a wine bottle", "store a wine bottle", "tom_storing_wineBottle"},
	{"drank a juice", "drink a juice", "tom_drinking_juice"},
	{"chatted with a friend", "chat with a friend", "tom_chatting_friend"},
}

var oracleSubjects = []string{"Mary", "Robot", "Tom"}

// oracleQuestion is a vague question read back from the user turn.
type oracleQuestion struct {
	template, subject, survey, location, adverbial string
}

type oracleEvent struct {
	at                        time.Time
	subject, survey, location string
}

var (
	oracleNowRe   = regexp.MustCompile(`^It is now (\d{4}-\d{2}-\d{2} \d{2}:\d{2})\. `)
	oracleEventRe = regexp.MustCompile(`^- On (\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2}), (\w+) (.+) in the (living room|kitchen)\.$`)
)

// oracleReadPrompt reads the speech time, the events and the question of a
// user turn.
func oracleReadPrompt(t *testing.T, user string) (time.Time, []oracleEvent, oracleQuestion) {
	t.Helper()
	lines := strings.Split(user, "\n")
	m := oracleNowRe.FindStringSubmatch(lines[0])
	require.NotNil(t, m, "first line %q", lines[0])
	now, err := time.Parse("2006-01-02 15:04", m[1])
	require.NoError(t, err)
	var events []oracleEvent
	var q oracleQuestion
	found := false
	for _, line := range lines[1:] {
		if m := oracleEventRe.FindStringSubmatch(line); m != nil {
			at, err := time.Parse("2006-01-02 15:04", m[1]+" "+m[2])
			require.NoError(t, err)
			e := oracleEvent{at: at, subject: m[3], location: m[5]}
			for _, a := range oracleActivities {
				if a.past == m[4] {
					e.survey = a.survey
				}
			}
			require.NotEmpty(t, e.survey, "activity of %q", line)
			events = append(events, e)
			continue
		}
		if text, ok := strings.CutPrefix(line, "Question: "); ok {
			q = oracleReadQuestion(t, text)
			found = true
		}
	}
	require.True(t, found, "no question in %q", user)
	return now, events, q
}

func oracleReadQuestion(t *testing.T, text string) oracleQuestion {
	t.Helper()
	s, ok := strings.CutSuffix(text, "?")
	require.True(t, ok, text)
	var q oracleQuestion
	for _, post := range []struct{ words, adverbial string }{{" a long time ago", "long time ago"}, {" some time ago", "some time ago"}, {" recently", "recently"}} {
		if rest, ok := strings.CutSuffix(s, post.words); ok {
			s, q.adverbial = rest, post.adverbial
		}
	}
	i := strings.LastIndex(s, " in the ")
	require.GreaterOrEqual(t, i, 0, text)
	s, q.location = s[:i], s[i+len(" in the "):]
	var phrase string
	if rest, ok := strings.CutPrefix(s, "Who "); ok {
		q.template, phrase = rewards.TravelerWho, rest
	} else {
		for _, p := range []struct{ prefix, template string }{{"How often did ", rewards.TravelerHowOften}, {"Did ", rewards.TravelerDid}} {
			if rest, ok := strings.CutPrefix(s, p.prefix); ok {
				q.template = p.template
				q.subject, phrase, _ = strings.Cut(rest, " ")
				break
			}
		}
	}
	require.NotEmpty(t, q.template, "question %q", text)
	if rest, ok := strings.CutPrefix(phrase, "just "); ok {
		require.Empty(t, q.adverbial, text)
		phrase, q.adverbial = rest, "just"
	}
	require.NotEmpty(t, q.adverbial, "no vague adverbial in %q", text)
	for _, a := range oracleActivities {
		if (q.template == rewards.TravelerWho && phrase == a.past) || (q.template != rewards.TravelerWho && phrase == a.base) {
			q.survey = a.survey
		}
	}
	require.NotEmpty(t, q.survey, "activity of %q", text)
	return q
}

// oracleTruth is what the oracle expects of a vague row: the probabilities
// of the matching events (per subject for who) and the score of each answer
// worth trying.
type oracleTruth struct {
	probs     []float64
	bySubject map[string][]float64
	scores    map[string]float64
	best      float64
}

func oracleAtLeastOne(ps []float64) float64 {
	none := 1.0
	for _, p := range ps {
		none *= 1 - p
	}
	return 1 - none
}

// oracleCounts are the coefficients of ∏(1 − p + p·x): element k is the
// probability that exactly k of the events fit.
func oracleCounts(ps []float64) []float64 {
	poly := []float64{1}
	for _, p := range ps {
		next := make([]float64, len(poly)+1)
		for k, c := range poly {
			next[k] += c * (1 - p)
			next[k+1] += c * p
		}
		poly = next
	}
	return poly
}

func oracleCompute(t *testing.T, curves map[string][]oracleKnot, user string) oracleTruth {
	t.Helper()
	now, events, q := oracleReadPrompt(t, user)
	ks := curves[q.survey+"|"+q.adverbial]
	require.NotEmpty(t, ks, "no survey curve for %s / %s", q.survey, q.adverbial)
	o := oracleTruth{scores: map[string]float64{}}
	p := func(e oracleEvent) float64 {
		age := now.Sub(e.at)
		require.Positive(t, age, "events happen before now")
		return oracleP(ks, age.Minutes())
	}
	match := func(e oracleEvent) bool { return e.survey == q.survey && e.location == q.location }
	switch q.template {
	case rewards.TravelerDid, rewards.TravelerHowOften:
		o.probs = []float64{}
		for _, e := range events {
			if match(e) && e.subject == q.subject {
				o.probs = append(o.probs, p(e))
			}
		}
		if q.template == rewards.TravelerDid {
			P := oracleAtLeastOne(o.probs)
			o.scores["yes"], o.scores["no"] = P, 1-P
			break
		}
		counts := oracleCounts(o.probs)
		for k, c := range counts {
			o.scores[strconv.Itoa(k)] = c
		}
		o.scores[strconv.Itoa(len(counts))] = 0
	default:
		o.bySubject = map[string][]float64{}
		for _, s := range oracleSubjects {
			o.bySubject[s] = []float64{}
		}
		for _, e := range events {
			if match(e) {
				o.bySubject[e.subject] = append(o.bySubject[e.subject], p(e))
			}
		}
		for mask := range 1 << len(oracleSubjects) {
			score := 1.0
			var named []string
			for i, s := range oracleSubjects {
				P := oracleAtLeastOne(o.bySubject[s])
				if mask&(1<<i) != 0 {
					named = append(named, s)
					score *= P
				} else {
					score *= 1 - P
				}
			}
			ans := "nobody"
			if len(named) > 0 {
				ans = strings.Join(named, ", ")
			}
			o.scores[ans] = score
		}
		o.scores["Mary, Tom, Peter"] = 0
	}
	for _, s := range o.scores {
		o.best = max(o.best, s)
	}
	return o
}

// oracleCheckRow scores the row's gold answer and every other answer worth
// trying with the traveler reward and compares each with the oracle.
func oracleCheckRow(t *testing.T, s *rewards.Scorer, row *Row, o oracleTruth) {
	t.Helper()
	what := fmt.Sprintf("row %d: %s", row.Index, question(row))
	var gt struct {
		Category, Template string
		Probabilities      json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(row.GroundTruth), &gt))
	require.Equal(t, rewards.TravelerVague, gt.Category, what)
	if o.bySubject != nil {
		var by map[string][]float64
		require.NoError(t, json.Unmarshal(gt.Probabilities, &by))
		assert.Equal(t, o.bySubject, by, "%s: probabilities per subject", what)
	} else {
		var ps []float64
		require.NoError(t, json.Unmarshal(gt.Probabilities, &ps))
		assert.Equal(t, o.probs, ps, "%s: probabilities", what)
	}
	assert.InDelta(t, o.best, row.BestScore, 1e-12, "%s: extra_info.best_score", what)
	gold, ok := o.scores[row.Answer]
	require.True(t, ok, "%s: gold answer %q is not one the oracle scored", what, row.Answer)
	assert.InDelta(t, o.best, gold, 1e-12, "%s: the gold answer %q is an optimal one", what, row.Answer)
	for ans, want := range o.scores {
		res := s.Score(context.Background(), &rewards.Item{DataSource: DataSource, GroundTruth: json.RawMessage(row.GroundTruth),
			SolutionStr: "Going through the events.\nANSWER: " + ans})
		require.NoError(t, res.Err, what)
		assert.InDelta(t, want, res.Score, 1e-12, "%s: score of %q", what, ans)
		assert.InDelta(t, o.best, res.Details[2], 1e-12, "%s: best_score detail", what)
		if gap := o.best - want; gap < 1e-13 {
			assert.Equal(t, 1.0, res.Details[1], "%s: %q is optimal", what, ans)
		} else if gap > 1e-10 {
			assert.Equal(t, 0.0, res.Details[1], "%s: %q is not optimal", what, ans)
		}
	}
}

// TestVagueOracleHandWorked checks the oracle, the generator and the reward
// against rows worked out by hand from survey_means.csv. Each row is written
// as the generator's Row, so the user turn the oracle reads is the one a
// model would see.
func TestVagueOracleHandWorked(t *testing.T) {
	curves := oracleReadSurvey(t)
	g, err := NewGenerator(DefaultOptions())
	require.NoError(t, err)
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	act := func(name string) *Activity {
		for i := range Activities {
			if Activities[i].Name == name {
				return &Activities[i]
			}
		}
		t.Fatalf("no activity %q", name)
		return nil
	}
	now := time.Date(2023, 9, 29, 22, 27, 0, 0, time.UTC)
	ago := func(minutes int) time.Time { return now.Add(-time.Duration(minutes) * time.Minute) }
	risotto, juice, film := act("eat risotto"), act("drink juice"), act("watch film")

	tests := []struct {
		name   string
		row    *Row
		probs  []float64            // did, how_often
		by     map[string][]float64 // who
		scores map[string]float64
		answer string
		best   float64
	}{
		{
			// The TRAVELER paper's example: "Did Tom eat risotto in the kitchen a long
			// time ago?" with Tom's kitchen risottos 2 hours and 1 week (10080
			// minutes) old; Mary's risotto and Tom's in the living room do not match.
			// tom_eating_risotto / long time ago: 60 → 0.1600, 240 → 0.2206, …, 10080 → 0.6127.
			//   p(120)   = 0.1600 + (ln 120 − ln 60)/(ln 240 − ln 60)·(0.2206 − 0.1600)
			//            = 0.1600 + (ln 2/ln 4)·0.0606 = 0.1600 + 0.5·0.0606 = 0.1903
			//   p(10080) = 0.6127 (a surveyed age)
			//   yes: 1 − (1 − 0.1903)(1 − 0.6127) = 1 − 0.8097·0.3873 = 1 − 0.31359681 = 0.68640319
			//   no:  0.31359681
			name: "did, long time ago",
			row: &Row{Category: rewards.TravelerVague, Template: rewards.TravelerDid, Expression: LongTimeAgo,
				Subject: "Tom", Activity: risotto, Location: "kitchen", SpeechTime: now,
				Events: []Event{
					{"Tom", risotto, "kitchen", ago(120)},
					{"Mary", risotto, "kitchen", ago(700)},
					{"Tom", risotto, "living room", ago(3000)},
					{"Tom", risotto, "kitchen", ago(10080)},
				}},
			probs:  []float64{0.1903, 0.6127},
			scores: map[string]float64{"yes": 0.68640319, "no": 0.31359681},
			answer: "yes", best: 0.68640319,
		},
		{
			// "How often did Mary drink a juice in the living room recently?" with
			// Mary's living-room juices 3 minutes, 60 minutes and 10 days (14400
			// minutes) old; Tom's juice and Mary's kitchen juice do not match.
			// tom_drinking_juice / recently: 5 → 0.9096, 30 → 0.7553, 120 → 0.5815, …, 2880 → 0.2074.
			//   p(3)     = 0.9096 (before the first surveyed age: held)
			//   p(60)    = 0.7553 + (ln 60 − ln 30)/(ln 120 − ln 30)·(0.5815 − 0.7553)
			//            = 0.7553 + 0.5·(−0.1738) = 0.6684
			//   p(14400) = 0.2074 (after the last surveyed age: held)
			// With q = 1 − p = (0.0904, 0.3316, 0.7926):
			//   P(0) = 0.0904·0.3316·0.7926 = 0.02997664·0.7926 = 0.023759484864
			//   P(1) = (0.9096·0.3316 + 0.0904·0.6684)·0.7926 + 0.0904·0.3316·0.2074
			//        = (0.30162336 + 0.06042336)·0.7926 + 0.02997664·0.2074
			//        = 0.286958230272 + 0.006217155136 = 0.293175385408
			//   P(2) = 0.9096·0.6684·0.7926 + (0.30162336 + 0.06042336)·0.2074
			//        = 0.60797664·0.7926 + 0.36204672·0.2074
			//        = 0.481882284864 + 0.075088489728 = 0.556970774592
			//   P(3) = 0.60797664·0.2074 = 0.126094355136
			//   P(4) = 0 (three events)
			// The four sum to 1, and 1·P(1) + 2·P(2) + 3·P(3) = 1.7854 = Σp, the
			// paper's soft count.
			name: "how often, recently",
			row: &Row{Category: rewards.TravelerVague, Template: rewards.TravelerHowOften, Expression: Recently,
				Subject: "Mary", Activity: juice, Location: "living room", SpeechTime: now,
				Events: []Event{
					{"Mary", juice, "living room", ago(3)},
					{"Tom", juice, "living room", ago(60)},
					{"Mary", juice, "living room", ago(60)},
					{"Mary", juice, "kitchen", ago(200)},
					{"Mary", juice, "living room", ago(14400)},
				}},
			probs: []float64{0.9096, 0.6684, 0.2074},
			scores: map[string]float64{"0": 0.023759484864, "1": 0.293175385408, "2": 0.556970774592,
				"3": 0.126094355136, "4": 0},
			answer: "2", best: 0.556970774592,
		},
		{
			// "Who just watched a film in the kitchen?" with Mary's kitchen film 5
			// minutes old, Tom's 1 minute and 240 minutes old, and the robot's
			// film in the living room (so the robot has no matching event).
			// tom_watching_film / just: 5 → 0.9583, 30 → 0.9062, 120 → 0.6927, 360 → 0.5532, ….
			//   Mary: p(5) = 0.9583
			//   Tom:  p(1) = 0.9583 (held before 5 minutes);
			//         p(240) = 0.6927 + (ln 240 − ln 120)/(ln 360 − ln 120)·(0.5532 − 0.6927)
			//                = 0.6927 − (ln 2/ln 3)·0.1395 = 0.6927 − 0.6309298·0.1395
			//                = 0.6927 − 0.0880147 = 0.6046853 → 0.604685 (6 decimals)
			//   P_Mary = 0.9583
			//   P_Tom  = 1 − (1 − 0.9583)(1 − 0.604685) = 1 − 0.0417·0.395315 = 1 − 0.0164846355 = 0.9835153645
			//   P_Robot = 0
			// Answers (the robot not named: factor 1 − 0 = 1; named: factor 0):
			//   Mary, Tom: 0.9583·0.9835153645 = 0.94250277380035
			//   Mary:      0.9583·0.0164846355 = 0.01579722619965
			//   Tom:       0.0417·0.9835153645 = 0.04101259069965
			//   nobody:    0.0417·0.0164846355 = 0.00068740930035
			name: "who, just",
			row: &Row{Category: rewards.TravelerVague, Template: rewards.TravelerWho, Expression: Just,
				Activity: film, Location: "kitchen", SpeechTime: now,
				Events: []Event{
					{"Tom", film, "kitchen", ago(240)},
					{"Mary", film, "kitchen", ago(5)},
					{"Robot", film, "living room", ago(5)},
					{"Tom", film, "kitchen", ago(1)},
				}},
			by: map[string][]float64{"Mary": {0.9583}, "Robot": {}, "Tom": {0.604685, 0.9583}},
			scores: map[string]float64{"Mary, Tom": 0.94250277380035, "Mary": 0.01579722619965, "Tom": 0.04101259069965,
				"nobody": 0.00068740930035, "Robot": 0, "Mary, Robot": 0, "Robot, Tom": 0, "Mary, Robot, Tom": 0, "Mary, Tom, Peter": 0},
			answer: "Mary, Tom", best: 0.94250277380035,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := tc.row
			var gt rewards.TravelerGroundTruth
			require.NoError(t, g.vague(row, &gt))
			gt.Category, gt.Template = row.Category, row.Template
			b, err := json.Marshal(gt)
			require.NoError(t, err)
			row.GroundTruth = string(b)
			row.User = user(row)

			// The oracle against the hand arithmetic.
			o := oracleCompute(t, curves, row.User)
			if tc.by != nil {
				assert.Equal(t, tc.by, o.bySubject)
			} else {
				assert.Equal(t, tc.probs, o.probs)
			}
			require.Len(t, o.scores, len(tc.scores))
			for ans, want := range tc.scores {
				assert.InDelta(t, want, o.scores[ans], 1e-12, "oracle score of %q", ans)
			}
			assert.InDelta(t, tc.best, o.best, 1e-12)

			// The generator and the reward against the oracle, hence against
			// the hand arithmetic.
			assert.Equal(t, tc.answer, row.Answer)
			oracleCheckRow(t, s, row, o)
		})
	}
}

// TestVagueOracle: on generated vague rows of every template and adverbial,
// the ground truth's probabilities, the row's best score and gold answer,
// and the reward's score of every answer worth trying all equal what the
// oracle works out from the user turn and the survey file.
func TestVagueOracle(t *testing.T) {
	curves := oracleReadSurvey(t)
	opt := DefaultOptions()
	opt.Seed = 23
	opt.Categories = []string{rewards.TravelerVague}
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	seen := map[string]int{}
	for _, row := range rows(t, opt, 600) {
		o := oracleCompute(t, curves, row.User)
		oracleCheckRow(t, s, row, o)
		if t.Failed() {
			t.Fatalf("stopped at row %d, the first that disagrees with the oracle", row.Index)
		}
		seen[row.Template]++
		seen[row.Expression]++
		if o.best < 1-1e-9 {
			seen["uncertain"]++
		}
	}
	for _, k := range []string{rewards.TravelerWho, rewards.TravelerDid, rewards.TravelerHowOften, Just, Recently, SomeTimeAgo, LongTimeAgo} {
		assert.Greater(t, seen[k], 100, "%s rows", k)
	}
	assert.Greater(t, seen["uncertain"], 400, "rows whose best score is below 1")
}
