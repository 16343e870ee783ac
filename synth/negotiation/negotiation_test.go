package negotiation

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// TestNewRecruitMatchesSeed checks the built-in scenario against the Real-Time Deadlines paper,
// App. A.1, issue by issue, with each role's points listed as the paper
// prints them (best option first).
func TestNewRecruitMatchesSeed(t *testing.T) {
	s := DefaultScenarios()
	require.Len(t, s, 1)
	nr := s[0]
	assert.Equal(t, "new_recruit", nr.ID)
	paper := map[string]map[string]map[string]float64{
		"hr_manager": {
			"salary":     {"$30,000": 4800, "$33,000": 3600, "$39,000": 2400, "$41,000": 1200, "$44,000": 0},
			"start_date": {"Aug 1": 4000, "Aug 15": 3000, "Sep 1": 2000, "Sep 15": 1000, "Oct 1": 0},
			"location":   {"Los Angeles": 2800, "Phoenix": 2100, "Albuquerque": 1400, "San Antonio": 700, "El Paso": 0},
			"vacation":   {"0 days": 1200, "2 days": 900, "5 days": 600, "7 days": 300, "10 days": 0},
			"budget":     {"$2,500": 1800, "$2,000": 1500, "$1,500": 1200, "$1,000": 600, "$500": 300, "$0": 0},
			"review":     {"1 year": 1500, "6 months": 1200, "3 months": 600, "2 months": 300, "1 month": 0},
			"insurance":  {"3 months": 225, "2 months": 150, "1 month": 75, "day hired": 0},
		},
		"candidate": {
			"salary":     {"$44,000": 4800, "$41,000": 3600, "$39,000": 2400, "$33,000": 1200, "$30,000": 0},
			"vacation":   {"10 days": 4000, "7 days": 3000, "5 days": 2000, "2 days": 1000, "0 days": 0},
			"start_date": {"Oct 1": 1200, "Sep 15": 900, "Sep 1": 600, "Aug 15": 300, "Aug 1": 0},
			"insurance":  {"day hired": 900, "1 month": 600, "2 months": 300, "3 months": 0},
			"review":     {"1 month": 2500, "2 months": 2000, "3 months": 1500, "6 months": 500, "1 year": 0},
			"budget":     {"$2,500": 3000, "$2,000": 2500, "$1,500": 2000, "$1,000": 1500, "$500": 500, "$0": 0},
			"location":   {"El Paso": 2800, "San Antonio": 2100, "Albuquerque": 1400, "Phoenix": 700, "Los Angeles": 0},
		},
	}
	totals := map[string]float64{"hr_manager": 16325, "candidate": 19200}
	for role, issues := range paper {
		t.Run(role, func(t *testing.T) {
			assert.Equal(t, totals[role], nr.MaxPoints(role))
			assert.Equal(t, 0.0, nr.MinPoints(role))
			assert.Equal(t, 4500.0, nr.Roles[nr.Role(role)].BATNA)
			require.Len(t, nr.Issues, len(issues))
			for _, is := range nr.Issues {
				want := issues[is.ID]
				require.Len(t, is.Options, len(want), is.ID)
				for j, o := range is.Options {
					assert.Equal(t, want[o], is.Points[role][j], "%s %s", is.ID, o)
				}
			}
		})
	}
}

func testOptions(count int) Options {
	o := DefaultOptions()
	o.Seed, o.Count = 7, count
	return o
}

func buildRows(t *testing.T, o Options) []Row {
	t.Helper()
	var rows []Row
	_, err := Build(context.Background(), o, func(r *Row) error {
		rows = append(rows, *r)
		return nil
	})
	require.NoError(t, err)
	return rows
}

func TestRowsDeterministic(t *testing.T) {
	a := buildRows(t, testOptions(40))
	b := buildRows(t, testOptions(40))
	assert.Equal(t, a, b)
	short := buildRows(t, testOptions(10))
	assert.Equal(t, a[:10], short, "row i does not depend on the count")
	o := testOptions(40)
	o.Seed = 8
	assert.NotEqual(t, a, buildRows(t, o))
}

var timeLeft = regexp.MustCompile(`^\[(\d+) seconds left\]\n`)

func TestConditions(t *testing.T) {
	rows := buildRows(t, testOptions(400))
	counts := map[string]int{}
	opens := map[bool]int{}
	roles := map[string]int{}
	for i, r := range rows {
		assert.Equal(t, rewards.NegotiationConditions[i%4], r.Condition, "conditions cycle by index")
		counts[r.Condition]++
		opens[r.FirstSpeaker == r.Role]++
		roles[r.Role]++
		gt, err := rewards.ParseNegotiationGroundTruth(json.RawMessage(r.GroundTruth))
		require.NoError(t, err, "row %d", i)
		assert.Equal(t, r.Role, gt.Role)
		assert.Equal(t, r.Condition, gt.Condition)
		assert.Equal(t, r.DeadlineS, gt.DeadlineS)
		assert.Equal(t, r.TurnLimit, gt.TurnLimit)
		assert.Equal(t, 150.0, gt.WPM)
		assert.NotContains(t, r.GroundTruth, "brief", "ground truths leave the briefs out")
		assert.Contains(t, r.System, "Your private payoff table")
		if r.FirstSpeaker == r.Role {
			assert.Nil(t, gt.Opening)
			assert.True(t, strings.HasSuffix(r.User, DefaultPrompts().Start), r.User)
		} else {
			require.NotNil(t, gt.Opening)
			assert.Equal(t, r.OtherRole, gt.Opening.Role)
			assert.Contains(t, r.User, `"action":{"action":"propose"`)
		}
		switch r.Condition {
		case rewards.NegotiationTurnLimit:
			assert.Zero(t, r.DeadlineS)
			assert.Contains(t, []int{5, 6, 7, 8, 9}, r.TurnLimit)
			assert.Contains(t, r.System, "at most "+strconv.Itoa(r.TurnLimit)+" messages")
			assert.NotContains(t, r.System, "words per minute")
			assert.Empty(t, r.TurnPrefix)
			assert.NotRegexp(t, `^\[`, r.User)
		case rewards.NegotiationControl:
			assert.Zero(t, r.TurnLimit)
			assert.Contains(t, r.System, "you have "+strconv.FormatFloat(r.DeadlineS, 'f', -1, 64)+" seconds")
			assert.Contains(t, r.System, "150 words per minute, so each word of a message's text uses up 0.4 seconds")
			assert.Empty(t, r.TurnPrefix)
			assert.NotRegexp(t, `^\[`, r.User)
		case rewards.NegotiationUrgency:
			assert.Contains(t, r.System, "150 words per minute")
			assert.Equal(t, DefaultPrompts().UrgencyPrefix, r.TurnPrefix)
			assert.True(t, strings.HasPrefix(r.User, r.TurnPrefix+"\n"))
		case rewards.NegotiationTimeAware:
			assert.Equal(t, "[{seconds} seconds left]", r.TurnPrefix)
			m := timeLeft.FindStringSubmatch(r.User)
			require.NotNil(t, m, r.User)
			want := r.DeadlineS
			if gt.Opening != nil {
				want -= rewards.SpeechSeconds(gt.Opening.Text, 150)
			}
			assert.Equal(t, strconv.Itoa(int(math.Floor(want))), m[1])
		}
	}
	assert.Equal(t, map[string]int{"control": 100, "time_aware": 100, "urgency": 100, "turn_limit": 100}, counts)
	for _, n := range opens {
		assert.InDelta(t, 200, n, 40, "first speakers are balanced: %v", opens)
	}
	for _, n := range roles {
		assert.InDelta(t, 200, n, 40, "roles are balanced: %v", roles)
	}
}

// The opening is the other role's best option on every issue. On New
// Recruit the roles agree only on the development budget ($2,500 is best for
// both), so accepting the opening earns the agent that issue alone: 1800 of
// the HR manager's 16325 points (0.1103), 3000 of the candidate's 19200
// (0.15625).
func TestRowScoresWithTheReward(t *testing.T) {
	o := testOptions(40)
	o.Conditions = []string{rewards.NegotiationTimeAware}
	rows := buildRows(t, o)
	s, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	require.NoError(t, err)
	scored := 0
	for _, r := range rows {
		if r.FirstSpeaker == r.Role {
			continue
		}
		scored++
		transcript := `{"role": "` + r.Role + `", "text": "I accept.", "action": {"action": "accept"}}`
		res := s.Score(context.Background(), &rewards.Item{DataSource: DataSource, SolutionStr: transcript, GroundTruth: json.RawMessage(strconv.Quote(r.GroundTruth))})
		require.NoError(t, res.Err)
		d := map[string]float64{}
		for i, k := range rewards.Negotiation.Keys {
			d[k] = res.Details[i]
		}
		self := map[string]float64{"hr_manager": 1800, "candidate": 3000}[r.Role]
		assert.Equal(t, 1.0, d["deal"])
		assert.InDelta(t, self/map[string]float64{"hr_manager": 16325, "candidate": 19200}[r.Role], res.Score, 1e-12)
		assert.Equal(t, self, d["points_self"])
		assert.Equal(t, map[string]float64{"hr_manager": 16325, "candidate": 19200}[r.OtherRole], d["points_other"])
		assert.Equal(t, 2.0, d["turns"], "the opening counts as a message")
		want := rewards.SpeechSeconds(DefaultPrompts().Opening, 150) + 0.8
		assert.InDelta(t, want, d["closed_at_s"], 1e-9)
	}
	assert.Positive(t, scored)
}

func TestLoadScenarios(t *testing.T) {
	single := `{"id": "toy", "roles": [{"id": "a", "batna": 1}, {"id": "b", "batna": 2}],
	  "issues": [{"id": "price", "options": ["low", "high"], "points": {"a": [0, 5], "b": [5, 0]}}]}`
	s, err := LoadScenarios([]byte(single))
	require.NoError(t, err)
	require.Len(t, s, 1)
	assert.Equal(t, "toy", s[0].ID)
	assert.Equal(t, 5.0, s[0].MaxPoints("a"))

	list := "scenarios:\n  - " + strings.ReplaceAll(single, "\n", " ") + "\n  - " + strings.ReplaceAll(strings.Replace(single, `"toy"`, `"toy2"`, 1), "\n", " ") + "\n"
	s, err = LoadScenarios([]byte(list))
	require.NoError(t, err)
	assert.Len(t, s, 2)

	tests := []struct {
		name, doc, err string
	}{
		{"not yaml", "{", "not YAML or JSON"},
		{"a list", "- 1", "want a mapping"},
		{"unknown field", `{"id": "x", "rolez": []}`, `unknown field "rolez"`},
		{"empty list", "scenarios: []", "scenarios: empty"},
		{"numeric option", `{"id": "x", "roles": [], "issues": [{"id": "p", "options": [1, 2]}]}`, "scenarios[0].issues[0].options[0]: want a string, got 1"},
		{"text for a number", strings.Replace(single, `"b": [5, 0]`, `"b": [5, "none"]`, 1), `scenarios[0].issues[0].points.b[1]: want a number, got "none"`},
		{"duplicate id", "scenarios:\n  - " + strings.ReplaceAll(single, "\n", " ") + "\n  - " + strings.ReplaceAll(single, "\n", " ") + "\n", `scenarios[1].id: "toy" names two scenarios`},
		{"bad points", strings.Replace(single, `"b": [5, 0]`, `"b": [5]`, 1), "scenarios[0].issues[0].points.b: has 1 points for 2 options"},
		{"flat role", strings.Replace(single, `"a": [0, 5]`, `"a": [5, 5]`, 1), "scenarios[0].roles[0]: every agreement is worth the same to a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadScenarios([]byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		key string
		mod func(*Options)
	}{
		{"count", func(o *Options) { o.Count = 0 }},
		{"conditions", func(o *Options) { o.Conditions = nil }},
		{"conditions", func(o *Options) { o.Conditions = []string{"control", "control"} }},
		{"conditions", func(o *Options) { o.Conditions = []string{"calm"} }},
		{"scenarios", func(o *Options) { o.Scenarios = nil }},
		{"scenarios", func(o *Options) { o.Scenarios[0].Issues[0].Options = o.Scenarios[0].Issues[0].Options[:1] }},
		{"deadlines_s", func(o *Options) { o.DeadlinesS = nil }},
		{"deadlines_s", func(o *Options) { o.DeadlinesS = []float64{300, -1} }},
		{"turn_limits", func(o *Options) { o.TurnLimits = []int{0} }},
		{"turn_limits", func(o *Options) { o.TurnLimits = nil }},
		{"wpm", func(o *Options) { o.WPM = 0 }},
		{"wpm", func(o *Options) { o.WPM = math.NaN() }},
		{"split", func(o *Options) { o.Split = " " }},
		{"prompt.deadline", func(o *Options) { o.Prompts.Deadline = "Be quick." }},
		{"prompt.time_aware_prefix", func(o *Options) { o.Prompts.TimeAwarePrefix = "{seconds} {seconds}" }},
		{"prompt.turn_limit", func(o *Options) { o.Prompts.TurnLimit = "" }},
		{"prompt.opening", func(o *Options) { o.Prompts.Opening = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			o := testOptions(1)
			tc.mod(&o)
			err := o.Validate()
			var oe *synth.OptionError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, tc.key, oe.Key)
		})
	}
	o := testOptions(1)
	o.Conditions = []string{rewards.NegotiationControl}
	o.TurnLimits = nil
	assert.NoError(t, o.Validate(), "turn limits are needed only for turn_limit")
}

func TestParseConditions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", rewards.NegotiationConditions, ""},
		{"all", rewards.NegotiationConditions, ""},
		{"urgency, turn_limit", []string{"urgency", "turn_limit"}, ""},
		{"urgency,urgency", nil, "named twice"},
		{"fast", nil, `"fast" is not one of`},
	} {
		got, err := ParseConditions(tc.in)
		if tc.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

func TestBuildStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, testOptions(5), func(*Row) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)
	boom := errors.New("boom")
	n := 0
	_, err = Build(context.Background(), testOptions(5), func(*Row) error { n++; return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, n)
}
