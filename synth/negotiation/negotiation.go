package negotiation

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/internal/shard"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// DataSource is the data_source of every negotiation row.
const DataSource = "negotiation"

// Ability is the ability of every negotiation row.
const Ability = "negotiation"

//go:embed scenarios.yaml
var scenariosYAML []byte

// DefaultScenarios returns the built-in scenarios: New Recruit
// with the payoff tables and BATNAs of the Real-Time Deadlines paper, App. A.1, and briefs of the
// project's own wording. scenarios.yaml also documents the file
// format LoadScenarios reads.
func DefaultScenarios() []rewards.NegotiationScenario {
	s, err := LoadScenarios(scenariosYAML)
	if err != nil {
		panic("negotiation: built-in negotiation scenarios: " + err.Error())
	}
	return s
}

// LoadScenarios reads scenarios from YAML or JSON: a mapping
// with a "scenarios" list, or a single scenario mapping (the fields of
// rewards.NegotiationScenario; see scenarios.yaml). Unknown
// fields are errors. Every scenario is validated and ids must be unique; an
// error names the field as "scenarios[i].issues[j].points.role".
func LoadScenarios(data []byte) ([]rewards.NegotiationScenario, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New(`want a mapping: {scenarios: [...]} or one scenario {id, roles, issues}`)
	}
	if _, list := m["scenarios"]; !list {
		m = map[string]any{"scenarios": []any{m}}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("not a scenario file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var file struct {
		Scenarios []rewards.NegotiationScenario `json:"scenarios"`
	}
	if err := dec.Decode(&file); err != nil {
		return nil, jsonscan.Explain("", b, err)
	}
	if len(file.Scenarios) == 0 {
		return nil, errors.New("scenarios: empty, want at least one")
	}
	ids := map[string]bool{}
	for i := range file.Scenarios {
		s := &file.Scenarios[i]
		if err := s.Validate(); err != nil {
			var fe *rewards.FieldError
			if errors.As(err, &fe) {
				return nil, fmt.Errorf("scenarios[%d].%s: %w", i, fe.Field, fe.Err)
			}
			return nil, fmt.Errorf("scenarios[%d]: %w", i, err)
		}
		if ids[s.ID] {
			return nil, fmt.Errorf("scenarios[%d].id: %q names two scenarios", i, s.ID)
		}
		ids[s.ID] = true
	}
	return file.Scenarios, nil
}

// Placeholders of Prompts.
const (
	PlaceholderRole           = "{role}"
	PlaceholderOther          = "{other}"
	PlaceholderIssues         = "{issues}"
	PlaceholderSeconds        = "{seconds}"
	PlaceholderWPM            = "{wpm}"
	PlaceholderSecondsPerWord = "{seconds_per_word}"
	PlaceholderTurns          = "{turns}"
)

// Prompts are the texts of a negotiation row other than the
// scenario's briefs and payoff tables. They are the project's own wording;
// the command layer replaces them from config.
type Prompts struct {
	// Brief opens the system prompt of a role whose scenario gives no brief;
	// {role} and {other} are the two roles' names.
	Brief string
	// Format explains the reply format; {other} is the other role's name,
	// {issues} the issue keys.
	Format string
	// Deadline states the clock budget (control, time_aware, urgency);
	// {seconds} is the deadline.
	Deadline string
	// Latency states the speech-latency rule; {wpm} is the rate and
	// {seconds_per_word} its cost per word.
	Latency string
	// TurnLimit states the turn budget (turn_limit); {turns} is the limit.
	TurnLimit string
	// TimeAwarePrefix precedes every turn the agent receives under
	// time_aware; {seconds} is the time left, in whole seconds rounded down.
	TimeAwarePrefix string
	// UrgencyPrefix precedes every turn the agent receives under urgency.
	UrgencyPrefix string
	// Start is the first user turn when the agent speaks first.
	Start string
	// Opening is the text of the other role's scripted first message when
	// it speaks first; its offer is that role's best option on every issue.
	Opening string
}

// DefaultPrompts returns the built-in texts.
func DefaultPrompts() Prompts {
	return Prompts{
		Brief: "You are the {role}, agreeing the terms of a contract with the {other}. Every term is worth points to you, as your private table below shows; " +
			"aim for the agreement that earns you the most points, and never reveal your points or your table.",
		Format: "Write every turn as one JSON object and nothing else: {\"text\": \"what you say to the {other}\", \"action\": ACTION}. ACTION is one of:\n" +
			"- {\"action\": \"propose\", \"offer\": {...}} puts a proposal on the table. The offer's keys are the issue keys ({issues}); each value is one of that issue's options, written as in your table, or null to leave the issue open.\n" +
			"- {\"action\": \"accept\"} accepts the {other}'s latest proposal as it stands. It makes a deal only if that proposal settles every issue.\n" +
			"- {\"action\": \"reject\"} turns down the {other}'s latest proposal.\n" +
			"- {\"action\": \"batna\"} ends the talks without a deal: both sides fall back on their alternatives.\n" +
			"- null when you only want to talk.\n" +
			"An accepted deal or a walk-away ends the negotiation at once.",
		Deadline: "The clock starts with the first message: you have {seconds} seconds to reach a deal. If the time runs out first, there is no deal and both sides fall back on their alternatives.",
		Latency: "Time passes while messages are spoken: every message, yours and the {other}'s, is read aloud at {wpm} words per minute, so each word of a message's text uses up {seconds_per_word} seconds. " +
			"The action does not count, only the text.",
		TurnLimit:       "The negotiation may last at most {turns} messages, counting both sides' messages. If the last one passes without a deal, there is no deal and both sides fall back on their alternatives.",
		TimeAwarePrefix: "[{seconds} seconds left]",
		UrgencyPrefix:   "[The deadline is close: move toward a deal.]",
		Start:           "The negotiation begins now, and you speak first.",
		Opening:         "Thank you for making the time. Here is where I would like to start; every item is open for discussion.",
	}
}

// Options configures a negotiation prompt set.
// DefaultOptions gives the documented defaults; Validate names
// the first bad field.
type Options struct {
	// Seed, with a row's index, seeds the row's draws (scenario, role, first
	// speaker, budget), so row i is the same whatever the count.
	Seed uint64
	// Count is the number of rows.
	Count int
	// Shard, when its Count > 1, makes Build write only the rows whose
	// index is in the shard: shards of one seed and count together hold
	// every row once.
	Shard shard.Shard
	// Conditions are cycled by row index: row i has Conditions[i mod n].
	Conditions []string
	// Scenarios are drawn uniformly per row.
	Scenarios []rewards.NegotiationScenario
	// DeadlinesS are the clock budgets drawn uniformly for clock conditions
	// (the Real-Time Deadlines paper: 240, 300 and 360 s).
	DeadlinesS []float64
	// TurnLimits are the message budgets drawn uniformly for turn_limit
	// (the Real-Time Deadlines paper, §4.2: 5 to 9 messages).
	TurnLimits []int
	// WPM is the speech rate: each message costs its words × 60 / WPM
	// seconds of the deadline.
	WPM float64
	// Split is extra_info.split.
	Split   string
	Prompts Prompts
}

// DefaultOptions returns the defaults: every condition, the
// built-in New Recruit scenario, deadlines of 240, 300 and 360 s, turn limits
// 5 to 9, 150 words per minute, split "train".
func DefaultOptions() Options {
	return Options{
		Count:      1,
		Conditions: slices.Clone(rewards.NegotiationConditions),
		Scenarios:  DefaultScenarios(),
		DeadlinesS: []float64{240, 300, 360},
		TurnLimits: []int{5, 6, 7, 8, 9},
		WPM:        rewards.DefaultNegotiationWPM,
		Split:      "train",
		Prompts:    DefaultPrompts(),
	}
}

const (
	maxRows     = 100_000_000
	maxDeadline = 1e6
	maxTurns    = 10000
	maxWPM      = 1e4
)

// ParseConditions reads a condition list: "all", or
// comma-separated names from control, time_aware, urgency and turn_limit.
func ParseConditions(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return slices.Clone(rewards.NegotiationConditions), nil
	}
	var out []string
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if !slices.Contains(rewards.NegotiationConditions, c) {
			return nil, fmt.Errorf("%q is not one of all, %s", c, strings.Join(rewards.NegotiationConditions, ", "))
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("%q is named twice", c)
		}
		out = append(out, c)
	}
	return out, nil
}

// Validate reports the first invalid option as an *synth.OptionError whose Key is
// the config key under synth.negotiation (conditions and scenarios stand for
// the --condition and --scenario flags).
func (o *Options) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &synth.OptionError{Family: "negotiation", Key: key, Err: fmt.Errorf(format, args...)}
	}
	if o.Count < 1 || o.Count > maxRows {
		return bad("count", "%d is not from 1 to %d", o.Count, maxRows)
	}
	if len(o.Conditions) == 0 {
		return bad("conditions", "empty: give at least one")
	}
	clock, turns := false, false
	for i, c := range o.Conditions {
		if !slices.Contains(rewards.NegotiationConditions, c) {
			return bad("conditions", "entry %d %q is not one of %s", i+1, c, strings.Join(rewards.NegotiationConditions, ", "))
		}
		if slices.Index(o.Conditions, c) != i {
			return bad("conditions", "%q is named twice", c)
		}
		if c == rewards.NegotiationTurnLimit {
			turns = true
		} else {
			clock = true
		}
	}
	if len(o.Scenarios) == 0 {
		return bad("scenarios", "empty: give at least one")
	}
	ids := map[string]bool{}
	for i := range o.Scenarios {
		if err := o.Scenarios[i].Validate(); err != nil {
			return bad("scenarios", "scenarios[%d].%v", i, err)
		}
		if ids[o.Scenarios[i].ID] {
			return bad("scenarios", "scenarios[%d].id: %q names two scenarios", i, o.Scenarios[i].ID)
		}
		ids[o.Scenarios[i].ID] = true
	}
	if clock && len(o.DeadlinesS) == 0 {
		return bad("deadlines_s", "empty, but a clock condition is selected")
	}
	for i, d := range o.DeadlinesS {
		if !(d > 0 && d <= maxDeadline) {
			return bad("deadlines_s", "entry %d (%v) is not in (0, %g] seconds", i+1, d, float64(maxDeadline))
		}
	}
	if turns && len(o.TurnLimits) == 0 {
		return bad("turn_limits", "empty, but turn_limit is selected")
	}
	for i, n := range o.TurnLimits {
		if n < 1 || n > maxTurns {
			return bad("turn_limits", "entry %d (%d) is not from 1 to %d messages", i+1, n, maxTurns)
		}
	}
	if !(o.WPM >= 1 && o.WPM <= maxWPM) {
		return bad("wpm", "%v is not from 1 to %g words per minute", o.WPM, float64(maxWPM))
	}
	if strings.TrimSpace(o.Split) == "" {
		return bad("split", "empty")
	}
	p := &o.Prompts
	for _, t := range []struct {
		key, text, must string
	}{
		{"prompt.brief", p.Brief, ""},
		{"prompt.format", p.Format, ""},
		{"prompt.deadline", p.Deadline, PlaceholderSeconds},
		{"prompt.latency", p.Latency, ""},
		{"prompt.turn_limit", p.TurnLimit, PlaceholderTurns},
		{"prompt.time_aware_prefix", p.TimeAwarePrefix, PlaceholderSeconds},
		{"prompt.urgency_prefix", p.UrgencyPrefix, ""},
		{"prompt.start", p.Start, ""},
		{"prompt.opening", p.Opening, ""},
	} {
		if strings.TrimSpace(t.text) == "" {
			return bad(t.key, "empty")
		}
		if t.must != "" && strings.Count(t.text, t.must) != 1 {
			return bad(t.key, "%q must contain %s exactly once", t.text, t.must)
		}
	}
	return nil
}

// Row is one RL prompt: the agent plays Role against the other
// role of Scenario under Condition. RecordBuilder writes it as a
// VeRL row.
type Row struct {
	// System is the role's system prompt: its brief, its payoff table and
	// BATNA, the reply format and the budget rules.
	System string
	// User is the first turn the agent receives: the per-turn prefix of the
	// condition (if any) and the other role's opening message, or Start
	// when the agent speaks first.
	User string
	// GroundTruth is the JSON of the rewards.NegotiationGroundTruth the
	// negotiation reward scores the transcript against.
	GroundTruth string
	Split       string
	Index       int64
	ScenarioID  string
	Role        string
	OtherRole   string
	Condition   string
	// FirstSpeaker is Role or OtherRole.
	FirstSpeaker string
	// DeadlineS is the clock budget (0 under turn_limit); TurnLimit the
	// message budget (0 under the clock conditions).
	DeadlineS float64
	TurnLimit int
	WPM       float64
	// TurnPrefix is the prefix template the environment puts before every
	// later turn it hands the agent ({seconds}: the time left, whole
	// seconds rounded down); empty under control and turn_limit.
	TurnPrefix string
	// ID names the row uniquely across sets: negotiation-s<seed>-<index>.
	ID string
}

// rowRand is the random stream of row index: PCG seeded from
// SHA-256 of a domain tag, the seed and the index.
func rowRand(seed uint64, index int64) *rand.Rand {
	const tag = "timeaware/synth/negotiation\x00"
	buf := make([]byte, 0, len(tag)+16)
	buf = append(buf, tag...)
	buf = binary.LittleEndian.AppendUint64(buf, seed)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(index))
	sum := sha256.Sum256(buf)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

// Generator builds negotiation rows. It is safe for concurrent use.
type Generator struct {
	opt Options
	// tables[s][r] is the payoff section of role r of scenario s.
	tables [][2]string
	// scoring[s] is scenario s without its briefs, as ground truths hold it.
	scoring []rewards.NegotiationScenario
}

// NewGenerator validates the options and returns a Generator.
func NewGenerator(opt Options) (*Generator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	n := &Generator{opt: opt}
	for _, s := range opt.Scenarios {
		g := s
		g.Roles = slices.Clone(s.Roles)
		for i := range g.Roles {
			g.Roles[i].Brief = ""
		}
		n.scoring = append(n.scoring, g)
		n.tables = append(n.tables, [2]string{table(&s, 0), table(&s, 1)})
	}
	return n, nil
}

func fmtPoints(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func roleName(r *rewards.NegotiationRole) string {
	if r.Name != "" {
		return r.Name
	}
	return r.ID
}

// table renders role r's private payoff table and BATNA.
func table(s *rewards.NegotiationScenario, r int) string {
	role := s.Roles[r].ID
	var b strings.Builder
	b.WriteString("Your private payoff table, in points:\n")
	for _, is := range s.Issues {
		name := is.Name
		if name == "" {
			name = is.ID
		}
		fmt.Fprintf(&b, "- %s (key %q): ", name, is.ID)
		for j, o := range is.Options {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q = %s", o, fmtPoints(is.Points[role][j]))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "The best agreement possible is worth %s points to you. Without an agreement you get %s points from your alternative.",
		fmtPoints(s.MaxPoints(role)), fmtPoints(s.Roles[r].BATNA))
	return b.String()
}

// system is the system prompt of role ri of scenario s, whose payoff
// section is tbl, under a condition and its budget: the brief (the
// scenario's, else Prompts.Brief), the private payoff table, the reply
// format, and the rules of the clock (with the speech latency) or of the
// turn limit.
func (p *Prompts) system(s *rewards.NegotiationScenario, ri int, tbl, cond string, deadline float64, turns int, wpm float64) string {
	self, other := &s.Roles[ri], &s.Roles[1-ri]
	names := strings.NewReplacer(PlaceholderRole, roleName(self), PlaceholderOther, roleName(other))
	brief := self.Brief
	if strings.TrimSpace(brief) == "" {
		brief = names.Replace(p.Brief)
	}
	issueKeys := make([]string, len(s.Issues))
	for i, is := range s.Issues {
		issueKeys[i] = strconv.Quote(is.ID)
	}
	format := strings.NewReplacer(PlaceholderOther, roleName(other), PlaceholderIssues, strings.Join(issueKeys, ", ")).Replace(p.Format)
	var rules string
	if cond == rewards.NegotiationTurnLimit {
		rules = strings.Replace(p.TurnLimit, PlaceholderTurns, strconv.Itoa(turns), 1)
	} else {
		perWord := strconv.FormatFloat(60/wpm, 'f', -1, 64)
		if len(perWord) > 6 {
			perWord = strconv.FormatFloat(60/wpm, 'f', 3, 64)
		}
		rules = strings.Replace(p.Deadline, PlaceholderSeconds, fmtPoints(deadline), 1) + " " +
			strings.NewReplacer(PlaceholderWPM, fmtPoints(wpm), PlaceholderSecondsPerWord, perWord, PlaceholderOther, roleName(other)).Replace(p.Latency)
	}
	return brief + "\n\n" + tbl + "\n\n" + format + "\n\n" + rules
}

// Row returns row index. Its draws, in order: the scenario, the agent's
// role, the first speaker, the deadline and the turn limit; all are made
// whatever the condition, so changing the conditions does not shift them.
func (n *Generator) Row(index int64) (*Row, error) {
	o := &n.opt
	r := rowRand(o.Seed, index)
	si := r.IntN(len(o.Scenarios))
	ri := r.IntN(2)
	fi := r.IntN(2)
	var deadline float64
	if len(o.DeadlinesS) > 0 {
		deadline = o.DeadlinesS[r.IntN(len(o.DeadlinesS))]
	}
	var turns int
	if len(o.TurnLimits) > 0 {
		turns = o.TurnLimits[r.IntN(len(o.TurnLimits))]
	}
	cond := o.Conditions[int(index%int64(len(o.Conditions)))]
	s := &o.Scenarios[si]
	self, other := &s.Roles[ri], &s.Roles[1-ri]
	row := &Row{
		Split:        o.Split,
		Index:        index,
		ID:           "negotiation-s" + strconv.FormatUint(o.Seed, 10) + "-" + strconv.FormatInt(index, 10),
		ScenarioID:   s.ID,
		Role:         self.ID,
		OtherRole:    other.ID,
		Condition:    cond,
		FirstSpeaker: s.Roles[fi].ID,
		WPM:          o.WPM,
	}
	p := &o.Prompts
	if cond == rewards.NegotiationTurnLimit {
		row.TurnLimit = turns
	} else {
		row.DeadlineS = deadline
	}
	row.System = p.system(s, ri, n.tables[si][ri], cond, row.DeadlineS, row.TurnLimit, o.WPM)
	gt := rewards.NegotiationGroundTruth{
		Scenario:     n.scoring[si],
		Role:         self.ID,
		Condition:    cond,
		DeadlineS:    row.DeadlineS,
		TurnLimit:    row.TurnLimit,
		WPM:          o.WPM,
		FirstSpeaker: row.FirstSpeaker,
	}
	var body string
	spoken := 0.0
	if fi == ri {
		body = p.Start
	} else {
		open, shown, err := opening(s, 1-ri, p.Opening)
		if err != nil {
			return nil, err
		}
		gt.Opening = open
		body = shown
		spoken = rewards.SpeechSeconds(open.Text, o.WPM)
	}
	switch cond {
	case rewards.NegotiationTimeAware:
		row.TurnPrefix = p.TimeAwarePrefix
		left := strconv.FormatFloat(math.Floor(max(deadline-spoken, 0)), 'f', 0, 64)
		body = strings.Replace(p.TimeAwarePrefix, PlaceholderSeconds, left, 1) + "\n" + body
	case rewards.NegotiationUrgency:
		row.TurnPrefix = p.UrgencyPrefix
		body = p.UrgencyPrefix + "\n" + body
	}
	row.User = body
	b, err := json.Marshal(&gt)
	if err != nil {
		return nil, fmt.Errorf("negotiation: row %d: ground truth: %w", index, err)
	}
	row.GroundTruth = string(b)
	return row, nil
}

// opening is role r's scripted first message: the text and a
// proposal of r's best option on every issue (an anchor). It returns the
// message and how the agent sees it, {"text": ..., "action": ...}.
func opening(s *rewards.NegotiationScenario, r int, text string) (*rewards.NegotiationTurn, string, error) {
	role := s.Roles[r].ID
	var act bytes.Buffer
	act.WriteString(`{"action":"propose","offer":{`)
	for i, is := range s.Issues {
		best := 0
		for j, p := range is.Points[role] {
			if p > is.Points[role][best] {
				best = j
			}
		}
		if i > 0 {
			act.WriteByte(',')
		}
		k, _ := json.Marshal(is.ID)
		v, _ := json.Marshal(is.Options[best])
		act.Write(k)
		act.WriteByte(':')
		act.Write(v)
	}
	act.WriteString("}}")
	open := &rewards.NegotiationTurn{Role: role, Text: text, Action: json.RawMessage(act.Bytes())}
	shown, err := json.Marshal(struct {
		Text   string          `json:"text"`
		Action json.RawMessage `json:"action"`
	}{open.Text, open.Action})
	if err != nil {
		return nil, "", fmt.Errorf("negotiation: opening: %w", err)
	}
	return open, string(shown), nil
}

// Summary counts the rows of a build.
type Summary struct {
	Rows int `json:"rows"`
	// ByCondition, ByScenario, ByRole and ByFirstSpeaker count rows;
	// ByFirstSpeaker tells whether the agent ("self") or the other role opens.
	ByCondition    map[string]int `json:"by_condition"`
	ByScenario     map[string]int `json:"by_scenario"`
	ByRole         map[string]int `json:"by_role"`
	ByFirstSpeaker map[string]int `json:"by_first_speaker"`
	// ByBudget counts rows by budget: "300s" or "7 turns".
	ByBudget map[string]int `json:"by_budget"`
	// Skipped counts the rows left to other shards.
	Skipped int `json:"skipped_other_shards,omitempty"`
}

func (s *Summary) add(r *Row) {
	s.Rows++
	s.ByCondition[r.Condition]++
	s.ByScenario[r.ScenarioID]++
	s.ByRole[r.Role]++
	if r.FirstSpeaker == r.Role {
		s.ByFirstSpeaker["self"]++
	} else {
		s.ByFirstSpeaker["other"]++
	}
	if r.TurnLimit > 0 {
		s.ByBudget[strconv.Itoa(r.TurnLimit)+" turns"]++
	} else {
		s.ByBudget[fmtPoints(r.DeadlineS)+"s"]++
	}
}

// Build makes rows 0 to Count−1 in order and hands each to emit.
// It stops at the first error from emit, or when ctx is done.
func Build(ctx context.Context, opt Options, emit func(*Row) error) (*Summary, error) {
	n, err := NewGenerator(opt)
	if err != nil {
		return nil, err
	}
	sum := &Summary{ByCondition: map[string]int{}, ByScenario: map[string]int{}, ByRole: map[string]int{},
		ByFirstSpeaker: map[string]int{}, ByBudget: map[string]int{}}
	for i := range int64(opt.Count) {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if !opt.Shard.HasIndex(i) {
			sum.Skipped++
			continue
		}
		row, err := n.Row(i)
		if err != nil {
			return nil, err
		}
		sum.add(row)
		if err := emit(row); err != nil {
			return nil, err
		}
	}
	return sum, nil
}
