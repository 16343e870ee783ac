package rewards

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Negotiation conditions (the Real-Time Deadlines paper, §3.2 and §4.2–4.3). The three clock
// conditions share the deadline and the speech latency and differ only in
// what each turn shows the agent; turn_limit replaces the clock with a
// number of messages.
const (
	NegotiationControl   = "control"
	NegotiationTimeAware = "time_aware"
	NegotiationUrgency   = "urgency"
	NegotiationTurnLimit = "turn_limit"
)

// NegotiationConditions lists the conditions in their canonical order.
var NegotiationConditions = []string{NegotiationControl, NegotiationTimeAware, NegotiationUrgency, NegotiationTurnLimit}

// DefaultNegotiationWPM is the speech rate of the Real-Time Deadlines paper, §3.3: every message
// costs its words at 150 words per minute of the deadline.
const DefaultNegotiationWPM = 150.0

// Negotiation actions, the "action" field of a message's action object.
const (
	NegotiationPropose = "propose"
	NegotiationAccept  = "accept"
	NegotiationReject  = "reject"
	NegotiationBATNA   = "batna"
	NegotiationMessage = "message"
)

// Limits that keep a hostile ground truth or transcript cheap to score.
const (
	negMaxIssues   = 64
	negMaxOptions  = 64
	negMaxPoints   = 1e9
	negMaxMessages = 10000
	negMaxDeadline = 1e6
	negMaxTurns    = 10000
	negMaxWPM      = 1e4
	// The speed factors a row may ask its timer for: a hundredth to a
	// hundred times the real clock.
	negMinSpeedFactor = 0.01
	negMaxSpeedFactor = 100.0
)

// NegotiationScenario is a bilateral multi-issue negotiation: two roles,
// each with an outside option (BATNA), and issues with a finite list of
// options, each worth a number of points to each role. A role's points for
// an agreement are the sum over issues of its points for the agreed option
// (the Real-Time Deadlines paper, §3.1: additive utilities, no cross-issue terms).
type NegotiationScenario struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Roles holds exactly two roles.
	Roles  []NegotiationRole  `json:"roles"`
	Issues []NegotiationIssue `json:"issues"`
}

// NegotiationRole is one side of a scenario.
type NegotiationRole struct {
	// ID names the role in transcripts, ground truths and points tables.
	ID string `json:"id"`
	// Name is how prompts call the role ("HR manager").
	Name string `json:"name,omitempty"`
	// BATNA is the role's points when no agreement is reached.
	BATNA float64 `json:"batna"`
	// Brief is the opening of the role's system prompt, its situation in
	// words. Scoring does not need it, and ground truths leave it out.
	Brief string `json:"brief,omitempty"`
}

// NegotiationIssue is one term of the contract.
type NegotiationIssue struct {
	// ID is the key of the issue in an offer.
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Options are the values the issue can take. An offer names one by its
	// label, compared without regard to case, spaces and punctuation other
	// than decimal points (see NormalizeNegotiationOption), so labels must
	// differ in letters, digits or decimal points.
	Options []string `json:"options"`
	// Points maps each role id to its points per option, parallel to Options.
	Points map[string][]float64 `json:"points"`
}

// Role returns the index of the role with the given id, or -1.
func (s *NegotiationScenario) Role(id string) int {
	for i := range s.Roles {
		if s.Roles[i].ID == id {
			return i
		}
	}
	return -1
}

// Other returns the id of the role that is not id.
func (s *NegotiationScenario) Other(id string) string {
	if s.Roles[0].ID == id {
		return s.Roles[1].ID
	}
	return s.Roles[0].ID
}

// MaxPoints is the role's best total: the sum of its best option per issue.
func (s *NegotiationScenario) MaxPoints(role string) float64 {
	var t float64
	for _, is := range s.Issues {
		best := math.Inf(-1)
		for _, p := range is.Points[role] {
			best = max(best, p)
		}
		t += best
	}
	return t
}

// MinPoints is the role's worst total: the sum of its worst option per issue.
func (s *NegotiationScenario) MinPoints(role string) float64 {
	var t float64
	for _, is := range s.Issues {
		worst := math.Inf(1)
		for _, p := range is.Points[role] {
			worst = min(worst, p)
		}
		t += worst
	}
	return t
}

// Points is the role's total for an agreement given as one option index per
// issue.
func (s *NegotiationScenario) Points(role string, agreement []int) float64 {
	var t float64
	for i, o := range agreement {
		t += s.Issues[i].Points[role][o]
	}
	return t
}

// NormalizeNegotiationOption is the form in which option labels compare:
// lower case, letters, digits and decimal points only. Other characters are
// dropped, so "$44,000", "44 000" and "44000" match, as do "Aug 15" and
// "aug15" (a comma is a thousands separator, never a decimal one). A '.'
// between two digits is a decimal point and stays, without the trailing
// zeros of its fraction: "$4.50" and "4.5" match, "$4.00" and "4" too, but
// "1.5" and "15" do not.
func NormalizeNegotiationOption(label string) string {
	rs := []rune(label)
	b := make([]rune, 0, len(rs))
	for i, r := range rs {
		// An if-else chain rather than a switch: Go's coverage profile
		// leaves case expressions outside every block, and mutation
		// testing would count their mutants as not covered.
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b = append(b, unicode.ToLower(r))
		} else if r == '.' && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]) {
			b = append(b, '.')
		}
	}
	out := make([]rune, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '.' {
			out = append(out, b[i])
			continue
		}
		j := i + 1
		for j < len(b) && unicode.IsDigit(b[j]) {
			j++
		}
		frac := b[i+1 : j]
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		if len(frac) > 0 {
			out = append(append(out, '.'), frac...)
		}
		i = j - 1
	}
	return string(out)
}

// OptionIndex returns the option of issue i that an offer's value names: a
// label (a JSON string), or a number whose exact decimal value is the
// label's number (44000 or 4.4e4 for "$44,000", 4.5 for "$4.50"; see
// NormalizeNegotiationOption) with the label's sign (a label is negative
// when a minus sign comes before its first digit), so that -44000 names no
// option "$44,000". ok is false for anything else.
//
// A number that is no option's number names no option: 1.5 is neither "1"
// nor "15" nor the nearest option. The offer is then refused, like an
// unknown label, because rounding would make the model agree to terms it
// did not write, and a deal closed on them would be scored as if it had.
func (s *NegotiationScenario) OptionIndex(i int, v json.RawMessage) (int, bool) {
	v = trimSpace(v)
	var n string
	number, negative := false, false
	if len(v) > 0 && v[0] == '"' {
		var label string
		if json.Unmarshal(v, &label) != nil {
			return 0, false
		}
		n = NormalizeNegotiationOption(label)
	} else if len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		var num json.Number
		if json.Unmarshal(v, &num) != nil {
			return 0, false
		}
		var ok bool
		if n, negative, ok = decimalText(num.String()); !ok {
			return 0, false
		}
		number = true
	} else {
		return 0, false
	}
	if n == "" {
		return 0, false
	}
	for j, o := range s.Issues[i].Options {
		if NormalizeNegotiationOption(o) == n && (!number || negLabelNegative(o) == negative) {
			return j, true
		}
	}
	return 0, false
}

// decimalText writes the exact value of a JSON number literal the way
// NormalizeNegotiationOption writes a label's number: its digits without
// leading zeros, and a decimal point before the fraction when the fraction
// has a digit other than a trailing zero ("4.50e1" gives "45", "-0.5"
// gives "0.5"). negative is true for a value below zero. ok is false for an
// exponent beyond ±32767, whose text would be that many digits long.
func decimalText(lit string) (text string, negative, ok bool) {
	negative = strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(lit), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	trimmed := strings.TrimLeft(digits, "0")
	if trimmed == "" {
		return "0", false, true // -0 and 0e99999 are 0
	}
	// The decimal point follows this many digits of trimmed.
	point := len(intPart) - (len(digits) - len(trimmed))
	if hasExp {
		e, err := strconv.ParseInt(exp, 10, 16)
		if err != nil {
			return "", false, false
		}
		point += int(e)
	}
	digits = strings.TrimRight(trimmed, "0")
	// If-else, not a switch, for the coverage profile (see
	// NormalizeNegotiationOption).
	if point <= 0 {
		text = "0." + strings.Repeat("0", -point) + digits
	} else if point >= len(digits) {
		text = digits + strings.Repeat("0", point-len(digits))
	} else {
		text = digits[:point] + "." + digits[point:]
	}
	return text, negative, true
}

// negLabelNegative reports whether a minus sign ('-' or '−') comes before
// the first digit of an option label ("-5%", "− 2 days").
func negLabelNegative(label string) bool {
	for _, r := range label {
		if unicode.IsDigit(r) {
			return false
		}
		if r == '-' || r == '−' {
			return true
		}
	}
	return false
}

// Validate checks the scenario. A failure is a *FieldError whose Field is
// the path inside the scenario ("issues[2].points.candidate"), so callers
// can prefix where the scenario came from.
func (s *NegotiationScenario) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	if !negValidID(s.ID) {
		return bad("id", "%s is not an id (1 to 64 letters, digits, '_', '-' or '.')", quoteForError(s.ID))
	}
	if len(s.Roles) != 2 {
		return bad("roles", "has %d roles, want exactly 2", len(s.Roles))
	}
	for i, r := range s.Roles {
		if !negValidID(r.ID) {
			return bad(fmt.Sprintf("roles[%d].id", i), "%s is not an id (1 to 64 letters, digits, '_', '-' or '.')", quoteForError(r.ID))
		}
		if !finite(r.BATNA) || math.Abs(r.BATNA) > negMaxPoints {
			return bad(fmt.Sprintf("roles[%d].batna", i), "%v is not a number of points within ±%g", r.BATNA, negMaxPoints)
		}
	}
	if s.Roles[0].ID == s.Roles[1].ID {
		return bad("roles[1].id", "%s names both roles", quoteForError(s.Roles[0].ID))
	}
	if len(s.Issues) == 0 || len(s.Issues) > negMaxIssues {
		return bad("issues", "has %d issues, want 1 to %d", len(s.Issues), negMaxIssues)
	}
	ids := map[string]bool{}
	for i, is := range s.Issues {
		at := fmt.Sprintf("issues[%d]", i)
		if !negValidID(is.ID) {
			return bad(at+".id", "%s is not an id (1 to 64 letters, digits, '_', '-' or '.')", quoteForError(is.ID))
		}
		if ids[is.ID] {
			return bad(at+".id", "%s names two issues", quoteForError(is.ID))
		}
		ids[is.ID] = true
		if len(is.Options) < 2 || len(is.Options) > negMaxOptions {
			return bad(at+".options", "has %d options, want 2 to %d", len(is.Options), negMaxOptions)
		}
		seen := map[string]int{}
		for j, o := range is.Options {
			n := NormalizeNegotiationOption(o)
			if n == "" {
				return bad(fmt.Sprintf("%s.options[%d]", at, j), "%s has no letter or digit", quoteForError(o))
			}
			if k, dup := seen[n]; dup {
				return bad(fmt.Sprintf("%s.options[%d]", at, j), "%s reads the same as option %d %s (labels compare by letters, digits and decimal points only)", quoteForError(o), k, quoteForError(is.Options[k]))
			}
			seen[n] = j
		}
		if len(is.Points) != 2 {
			return bad(at+".points", "has %d roles, want one list for each of %s and %s", len(is.Points), s.Roles[0].ID, s.Roles[1].ID)
		}
		for _, r := range s.Roles {
			ps, ok := is.Points[r.ID]
			if !ok {
				return bad(at+".points", "no list for role %s", quoteForError(r.ID))
			}
			if len(ps) != len(is.Options) {
				return bad(at+".points."+r.ID, "has %d points for %d options", len(ps), len(is.Options))
			}
			for j, p := range ps {
				if !finite(p) || math.Abs(p) > negMaxPoints {
					return bad(fmt.Sprintf("%s.points.%s[%d]", at, r.ID, j), "%v is not a number of points within ±%g", p, negMaxPoints)
				}
			}
		}
	}
	for i, r := range s.Roles {
		if s.MaxPoints(r.ID) == s.MinPoints(r.ID) {
			return bad(fmt.Sprintf("roles[%d]", i), "every agreement is worth the same to %s, so its score would be undefined", r.ID)
		}
	}
	return nil
}

func negValidID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// NegotiationGroundTruth is the ground_truth of a negotiation row (a JSON
// object, or a JSON string holding one): the scenario with its payoffs, the
// role whose outcome is scored, and the condition with its budget.
type NegotiationGroundTruth struct {
	Scenario NegotiationScenario `json:"scenario"`
	// Role is the id of the scored role.
	Role      string `json:"role"`
	Condition string `json:"condition"`
	// DeadlineS is the clock budget in seconds of speech (clock conditions);
	// TurnLimit the number of messages, both sides together (turn_limit).
	// The one a condition does not use is 0.
	DeadlineS float64 `json:"deadline_s"`
	TurnLimit int     `json:"turn_limit"`
	// WPM is the speech rate that turns words into seconds; 0 means 150.
	WPM float64 `json:"wpm"`
	// TimerSpeedFactor is the speed factor α the agent's timer must have
	// when the episode is played on the service (POST /v1/timers with
	// speed_factor), which charges α·generation time as think time; 0
	// means 1, the real clock.
	TimerSpeedFactor float64 `json:"timer_speed_factor,omitempty"`
	// FirstSpeaker is the id of the role that opens.
	FirstSpeaker string `json:"first_speaker"`
	// Opening is the other role's scripted first message, shown in the
	// prompt, when the other role opens. A transcript that does not begin
	// with it is scored as if it did.
	Opening *NegotiationTurn `json:"opening,omitempty"`
}

// Validate checks the ground truth; a failure is a *FieldError naming the
// field under ground_truth.
func (g *NegotiationGroundTruth) Validate() error {
	if err := g.Scenario.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return &FieldError{Field: "ground_truth.scenario." + fe.Field, Err: fe.Err}
		}
		return fieldErrorf("ground_truth.scenario", "%v", err)
	}
	if g.Scenario.Role(g.Role) < 0 {
		return fieldErrorf("ground_truth.role", "%s is not a role of scenario %s", quoteForError(g.Role), g.Scenario.ID)
	}
	if g.Scenario.Role(g.FirstSpeaker) < 0 {
		return fieldErrorf("ground_truth.first_speaker", "%s is not a role of scenario %s", quoteForError(g.FirstSpeaker), g.Scenario.ID)
	}
	if !(g.WPM == 0 || g.WPM >= 1 && g.WPM <= negMaxWPM) {
		return fieldErrorf("ground_truth.wpm", "%v is not 0 (the default %g) or a speech rate from 1 to %g words per minute", g.WPM, DefaultNegotiationWPM, negMaxWPM)
	}
	if !(g.TimerSpeedFactor == 0 || g.TimerSpeedFactor >= negMinSpeedFactor && g.TimerSpeedFactor <= negMaxSpeedFactor) {
		return fieldErrorf("ground_truth.timer_speed_factor", "%v is not 0 (the default, 1) or a speed factor from %g to %g", g.TimerSpeedFactor, negMinSpeedFactor, negMaxSpeedFactor)
	}
	switch g.Condition {
	case NegotiationControl, NegotiationTimeAware, NegotiationUrgency:
		if !(g.DeadlineS > 0 && g.DeadlineS <= negMaxDeadline) {
			return fieldErrorf("ground_truth.deadline_s", "%v is not a deadline in (0, %g] seconds", g.DeadlineS, negMaxDeadline)
		}
	case NegotiationTurnLimit:
		if g.TurnLimit < 1 || g.TurnLimit > negMaxTurns {
			return fieldErrorf("ground_truth.turn_limit", "%d is not a number of messages from 1 to %d", g.TurnLimit, negMaxTurns)
		}
	default:
		return fieldErrorf("ground_truth.condition", "%s is not one of %s", quoteForError(g.Condition), strings.Join(NegotiationConditions, ", "))
	}
	if o := g.Opening; o != nil && (o.Role == g.Role || g.Scenario.Role(o.Role) < 0) {
		return fieldErrorf("ground_truth.opening.role", "%s is not the other role of scenario %s", quoteForError(o.Role), g.Scenario.ID)
	}
	return nil
}

// SpeedFactor is the speed factor the episode's timer must have.
func (g *NegotiationGroundTruth) SpeedFactor() float64 {
	if g.TimerSpeedFactor == 0 {
		return 1
	}
	return g.TimerSpeedFactor
}

// wpm is the speech rate in effect.
func (g *NegotiationGroundTruth) wpm() float64 {
	if g.WPM == 0 {
		return DefaultNegotiationWPM
	}
	return g.WPM
}

// SpeechSeconds is how long a message's text takes to speak at wpm words
// per minute: its whitespace-separated words × 60 / wpm. Only the text
// counts, never the action (the Real-Time Deadlines paper, §3.3).
func SpeechSeconds(text string, wpm float64) float64 {
	return float64(len(strings.Fields(text))) * 60 / wpm
}

// NegotiationTurn is one message of a transcript: the speaking role's id,
// what it says, and its action. Action is a JSON object (see
// ParseNegotiationAction), a JSON string holding one, or absent or null
// for a message that only talks.
type NegotiationTurn struct {
	Role   string          `json:"role"`
	Text   string          `json:"text"`
	Action json.RawMessage `json:"action,omitempty"`
	// ThinkS is the time the speaker took to produce the message (a
	// model's generation time, measured by its rollout timer); under the
	// clock conditions it is charged against the deadline before the
	// message's speech. Absent or 0 charges speech alone.
	ThinkS float64 `json:"think_s,omitempty"`
}

// NegotiationAction is a parsed action: Kind is one of propose, accept,
// reject, batna or message; Offer maps issue ids to option values (null
// leaves an issue open) for propose.
type NegotiationAction struct {
	Kind  string
	Offer map[string]json.RawMessage
}

// ParseNegotiationAction reads a message's action:
//
//	{"action": "propose", "offer": {"salary": "$39,000", "location": null, ...}}
//	{"action": "accept"}   accept the other side's latest proposal
//	{"action": "reject"}   turn it down
//	{"action": "batna"}    walk away to the outside option
//	{"action": "message"}, null or absent: talk only
//
// A JSON string holding such an object is read as the object (models often
// emit their action as text). Other fields of the object are ignored.
func ParseNegotiationAction(raw json.RawMessage) (NegotiationAction, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return NegotiationAction{Kind: NegotiationMessage}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return NegotiationAction{}, fmt.Errorf("not a valid JSON string: %w", err)
		}
		inner := trimSpace([]byte(s))
		if len(inner) == 0 || inner[0] != '{' {
			return NegotiationAction{}, fmt.Errorf("the string %s does not hold a JSON object", quoteForError(s))
		}
		raw = inner
	}
	var obj struct {
		Action *string                    `json:"action"`
		Offer  map[string]json.RawMessage `json:"offer"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return NegotiationAction{}, fmt.Errorf("not an action object: %w", jsonscan.Explain("", raw, err))
	}
	if obj.Action == nil {
		return NegotiationAction{}, errors.New(`no "action" field`)
	}
	switch k := strings.ToLower(strings.TrimSpace(*obj.Action)); k {
	case NegotiationPropose:
		if len(obj.Offer) == 0 {
			return NegotiationAction{}, errors.New(`propose without an "offer" object`)
		}
		return NegotiationAction{Kind: k, Offer: obj.Offer}, nil
	case NegotiationAccept, NegotiationReject, NegotiationBATNA, NegotiationMessage:
		return NegotiationAction{Kind: k}, nil
	default:
		return NegotiationAction{}, fmt.Errorf("action %s is not propose, accept, reject, batna or message", quoteForError(*obj.Action))
	}
}

// ParseNegotiationTranscript reads a transcript: a JSON array of messages,
// one message object (which may span lines), or JSON lines, one message per
// line (blank lines skipped). Each message is an object {"role", "text",
// "action"} (NegotiationTurn) with a text string; role, when present, is a
// string, and a message without one comes back with Role "" (the reward
// gives it to the scored role: a model's reply is its own turn, written in
// the {"text", "action"} form its prompt asks for). Other fields are
// ignored. An empty transcript is an error.
func ParseNegotiationTranscript(s string) ([]NegotiationTurn, error) {
	b := trimSpace([]byte(s))
	if len(b) == 0 {
		return nil, errors.New("empty transcript")
	}
	var raws []json.RawMessage
	if b[0] == '{' && json.Valid(b) {
		raws = []json.RawMessage{b}
	} else if b[0] == '[' {
		if err := json.Unmarshal(b, &raws); err != nil {
			return nil, fmt.Errorf("not a JSON array of messages: %w", err)
		}
	} else {
		for n, line := range bytes.Split(b, []byte("\n")) {
			line = trimSpace(line)
			if len(line) == 0 {
				continue
			}
			if !json.Valid(line) {
				return nil, fmt.Errorf("line %d is not JSON", n+1)
			}
			raws = append(raws, line)
		}
	}
	if len(raws) == 0 {
		return nil, errors.New("empty transcript")
	}
	if len(raws) > negMaxMessages {
		return nil, fmt.Errorf("%d messages, more than %d", len(raws), negMaxMessages)
	}
	out := make([]NegotiationTurn, len(raws))
	for i, r := range raws {
		var m struct {
			Role   *string         `json:"role"`
			Text   *string         `json:"text"`
			Action json.RawMessage `json:"action"`
			ThinkS *float64        `json:"think_s"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, jsonscan.Explain("", r, err))
		}
		if m.Text == nil {
			return nil, fmt.Errorf("message %d: text must be a string", i+1)
		}
		out[i] = NegotiationTurn{Text: *m.Text, Action: m.Action}
		if m.ThinkS != nil {
			if !(*m.ThinkS >= 0 && *m.ThinkS <= negMaxDeadline) {
				return nil, fmt.Errorf("message %d: think_s %v is not a number of seconds from 0 to %g", i+1, *m.ThinkS, negMaxDeadline)
			}
			out[i].ThinkS = *m.ThinkS
		}
		if m.Role != nil {
			out[i].Role = *m.Role
		}
	}
	return out, nil
}

// NegotiationOutcome is what a transcript came to under a ground truth.
type NegotiationOutcome struct {
	// Deal is true when a complete proposal was accepted within the budget;
	// Agreement then holds its option index per issue.
	Deal      bool
	Agreement []int
	// BATNATaken is true when a role walked away within the budget.
	BATNATaken bool
	// OutOfBudget is true when the deadline or turn limit passed first.
	OutOfBudget bool
	// ClosedAtS and ClosedAtTurn are the speech time and the message number
	// at which an accept or a walk-away ended the negotiation (0 otherwise).
	ClosedAtS    float64
	ClosedAtTurn int
	// Turns counts the messages delivered within the budget, up to the one
	// that ended the negotiation; ElapsedS is their speech time (the deadline
	// itself when the clock ran out).
	Turns    int
	ElapsedS float64
	// Invalid counts delivered messages whose action did nothing: unreadable,
	// an offer naming an unknown issue or option, an accept with no complete
	// proposal of the other side standing, a reject with none standing.
	Invalid int
}

// Play runs a transcript under the ground truth's rules. Messages are
// delivered in order; each costs SpeechSeconds of its text (plus its
// ThinkS under the clock conditions), and a message
// whose speech would end after the deadline (or, under turn_limit, one past
// the turn limit) is not delivered: the budget has run out. An accept takes
// the other side's latest standing proposal, which must settle every issue;
// accept and batna end the negotiation, and later messages are ignored. A
// message from a role the scenario does not have is an error.
func (g *NegotiationGroundTruth) Play(msgs []NegotiationTurn) (NegotiationOutcome, error) {
	if g.Opening != nil && (len(msgs) == 0 || msgs[0].Role != g.Opening.Role) {
		msgs = append([]NegotiationTurn{*g.Opening}, msgs...)
	}
	var (
		out      NegotiationOutcome
		elapsed  float64
		standing []int
		proposer string
	)
	wpm := g.wpm()
	for i, m := range msgs {
		if g.Scenario.Role(m.Role) < 0 {
			return NegotiationOutcome{}, fmt.Errorf("message %d: role %s is not a role of scenario %s", i+1, quoteForError(m.Role), g.Scenario.ID)
		}
	}
	for i, m := range msgs {
		turn := i + 1
		dt := SpeechSeconds(m.Text, wpm)
		if m.ThinkS > 0 && g.Condition != NegotiationTurnLimit {
			dt += m.ThinkS
		}
		if g.Condition == NegotiationTurnLimit {
			if turn > g.TurnLimit {
				out.OutOfBudget = true
				break
			}
		} else if elapsed+dt > g.DeadlineS {
			out.OutOfBudget = true
			elapsed = g.DeadlineS
			break
		}
		elapsed += dt
		out.Turns = turn
		act, err := ParseNegotiationAction(m.Action)
		if err != nil {
			out.Invalid++
			continue
		}
		switch act.Kind {
		case NegotiationPropose:
			offer, ok := g.resolveOffer(act.Offer)
			if !ok {
				out.Invalid++
				continue
			}
			standing, proposer = offer, m.Role
		case NegotiationAccept:
			if standing == nil || proposer == m.Role || !negComplete(standing) {
				out.Invalid++
				continue
			}
			out.Deal, out.Agreement = true, standing
			out.ClosedAtS, out.ClosedAtTurn = elapsed, turn
		case NegotiationReject:
			if standing == nil || proposer == m.Role {
				out.Invalid++
				continue
			}
			standing, proposer = nil, ""
		case NegotiationBATNA:
			out.BATNATaken = true
			out.ClosedAtS, out.ClosedAtTurn = elapsed, turn
		}
		if out.Deal || out.BATNATaken {
			break
		}
	}
	out.ElapsedS = elapsed
	return out, nil
}

// resolveOffer maps an offer onto option indices (-1 for an open issue).
// Every key must name an issue and every non-null value one of its options.
func (g *NegotiationGroundTruth) resolveOffer(offer map[string]json.RawMessage) ([]int, bool) {
	res := make([]int, len(g.Scenario.Issues))
	for i := range res {
		res[i] = -1
	}
	for k, v := range offer {
		i := -1
		for j := range g.Scenario.Issues {
			if g.Scenario.Issues[j].ID == k {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, false
		}
		if t := trimSpace(v); len(t) == 0 || string(t) == "null" {
			continue
		}
		o, ok := g.Scenario.OptionIndex(i, v)
		if !ok {
			return nil, false
		}
		res[i] = o
	}
	return res, true
}

func negComplete(offer []int) bool {
	for _, o := range offer {
		if o < 0 {
			return false
		}
	}
	return true
}

// negotiationKeys are the details of the negotiation scorer:
//
//	deal             1 if a complete proposal was accepted within the budget
//	batna_used       1 if there was no deal, so both sides got their BATNA
//	batna_taken      1 if a side walked away (action batna) within the budget
//	out_of_budget    1 if the deadline or the turn limit passed first
//	closed_at_s      speech seconds when an accept or walk-away ended it (0 if none)
//	closed_at_turn   message number of that accept or walk-away (0 if none)
//	turns            messages delivered within the budget
//	elapsed_s        their speech seconds (the deadline if the clock ran out)
//	points_self      the scored role's points: the deal's, or its BATNA
//	points_other     the other role's points likewise
//	invalid_actions  delivered messages whose action did nothing
//	parsed           1 if the transcript was readable
var negotiationKeys = []string{"deal", "batna_used", "batna_taken", "out_of_budget", "closed_at_s", "closed_at_turn",
	"turns", "elapsed_s", "points_self", "points_other", "invalid_actions", "parsed"}

// Negotiation scores a deadline negotiation (the Real-Time Deadlines paper, §3) from its
// transcript: the JSON actions are read, each message is charged its words
// at the ground truth's speech rate (150 wpm by default) against the
// deadline, or counted against the turn limit, and the negotiation ends in a
// deal (a complete proposal accepted in time), a walk-away, or no deal when
// the budget or the transcript runs out. Each side gets the deal's points
// from its payoff table, or its BATNA without a deal. The score is the
// scored role's points normalised by its range over all agreements,
// (points − min) / (max − min) clamped to [0, 1]; for New Recruit, whose
// worst agreement is worth 0 to either side, that is points / max (16,325
// for the HR manager, 19,200 for the candidate), and a BATNA of 4,500 scores
// 0.2757 and 0.2344. An unreadable transcript (not a JSON array or JSON lines
// of {role, text, action}, or a role the scenario lacks) scores 0 with
// parsed = 0, below any BATNA; a malformed ground truth is an error.
var Negotiation = &Reward{
	DataSource: "negotiation",
	Summary:    "deadline negotiation: JSON actions of a transcript, speech at 150 wpm against the deadline (or a turn limit), the deal's or the BATNA's points of the scored role, normalised",
	GroundTruth: `JSON object (or a string holding one) {scenario: {id, roles: [{id, batna}, {id, batna}], issues: [{id, options, points: {role: [...]}}]}, ` +
		`role, condition (control|time_aware|urgency|turn_limit), deadline_s, turn_limit, wpm, first_speaker, opening?}; solution_str is the transcript, ` +
		`a JSON array or JSON lines of {role, text, action}`,
	Keys:  negotiationKeys,
	score: scoreNegotiation,
}

func scoreNegotiation(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
	gt, err := ParseNegotiationGroundTruth(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	msgs, err := ParseNegotiationTranscript(it.SolutionStr)
	if err != nil {
		return 0, nil
	}
	for i := range msgs {
		if msgs[i].Role == "" {
			msgs[i].Role = gt.Role
		}
	}
	out, err := gt.Play(msgs)
	if err != nil {
		return 0, nil
	}
	s := &gt.Scenario
	other := s.Other(gt.Role)
	self, opp := s.Roles[s.Role(gt.Role)].BATNA, s.Roles[s.Role(other)].BATNA
	if out.Deal {
		self, opp = s.Points(gt.Role, out.Agreement), s.Points(other, out.Agreement)
	}
	d[0], d[1], d[2], d[3] = b2f(out.Deal), b2f(!out.Deal), b2f(out.BATNATaken), b2f(out.OutOfBudget)
	d[4], d[5], d[6], d[7] = out.ClosedAtS, float64(out.ClosedAtTurn), float64(out.Turns), out.ElapsedS
	d[8], d[9], d[10], d[11] = self, opp, float64(out.Invalid), 1
	lo, hi := s.MinPoints(gt.Role), s.MaxPoints(gt.Role)
	return min(max((self-lo)/(hi-lo), 0), 1), nil
}

// ParseNegotiationGroundTruth reads and validates a negotiation ground
// truth: a JSON object, or a JSON string holding one (VeRL rows store
// ground_truth as a string). Unknown fields are errors, so a misspelt key
// does not silently fall back to a default.
func ParseNegotiationGroundTruth(raw json.RawMessage) (*NegotiationGroundTruth, error) {
	const want = "want the negotiation object {scenario, role, condition, deadline_s, turn_limit, wpm, first_speaker}"
	b, err := objectGroundTruth(raw, want)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var gt NegotiationGroundTruth
	if err := dec.Decode(&gt); err != nil {
		return nil, decodeError("ground_truth", b, err)
	}
	if dec.More() {
		return nil, fieldErrorf("ground_truth", "text after the object")
	}
	if err := gt.Validate(); err != nil {
		return nil, err
	}
	return &gt, nil
}
