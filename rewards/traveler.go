package rewards

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// travelerKeys are the details of the TRAVELER scorer:
//
//	parsed      1 if the response has a readable "ANSWER:" line
//	optimal     1 if no other answer would have scored higher
//	best_score  the highest score any answer could get (1 for crisp
//	            questions; below 1 for vague ones whose answer is uncertain)
//	vague       1 if the question is vague (soft accuracy), 0 if crisp
var travelerKeys = []string{"parsed", "optimal", "best_score", "vague"}

// Traveler scores answers to TRAVELER event-set questions (the TRAVELER paper): crisp
// accuracy for explicit and implicit questions, soft accuracy for vague ones
// from the probabilities that the adverbial applies to each matching event.
// The answer is read from the response's last "ANSWER:" line
// (ParseTravelerAnswer); an unreadable answer scores 0.
var Traveler = &Reward{
	DataSource: "traveler",
	Summary:    `TRAVELER event-set QA: the last "ANSWER:" line, crisp accuracy for explicit and implicit questions, soft accuracy for vague ones`,
	GroundTruth: `JSON object (or a JSON string holding one) {"category": "explicit"|"implicit"|"vague", ` +
		`"template": "who"|"did"|"how_often"|"when_last", "answer": ..., "probabilities": ...}; ` +
		`crisp (explicit, implicit): "answer" is a list of subjects (who; [] for nobody), "yes"/"no" (did), ` +
		`a count (how_often) or "YYYY-MM-DD"/"never" (when_last); ` +
		`vague (who, did, how_often): "probabilities" is the list of p in [0, 1] of the matching events (did, how_often) ` +
		`or an object subject → that list, naming every subject (who)`,
	Keys:  travelerKeys,
	score: scoreTraveler,
}

// Categories and templates of TRAVELER questions (the TRAVELER paper, Tables 2–3).
const (
	TravelerExplicit = "explicit"
	TravelerImplicit = "implicit"
	TravelerVague    = "vague"

	TravelerWho      = "who"
	TravelerDid      = "did"
	TravelerHowOften = "how_often"
	TravelerWhenLast = "when_last"
)

// TravelerMaxProbabilities bounds the probabilities of one vague ground
// truth (all subjects together): the how-often score is quadratic in their
// number, and generated event sets hold at most a few hundred events.
const TravelerMaxProbabilities = 4096

// TravelerGroundTruth is the ground_truth of a TRAVELER row, as written by
// synth traveler and read by the Traveler reward. Answer is set for crisp
// categories (explicit, implicit) and Probabilities for vague; the JSON
// shapes are those of Traveler.GroundTruth.
type TravelerGroundTruth struct {
	Category      string          `json:"category"`
	Template      string          `json:"template"`
	Answer        json.RawMessage `json:"answer,omitempty"`
	Probabilities json.RawMessage `json:"probabilities,omitempty"`
}

// TravelerAnswer is a parsed answer. Which field holds it depends on the
// template: Names (who; lower-case, sorted, no duplicates, empty for
// "nobody"), Yes (did), Count (how_often), Date (when_last; "" for "never").
type TravelerAnswer struct {
	Names []string
	Yes   bool
	Count int
	Date  string
}

// travelerGold is a validated ground truth.
type travelerGold struct {
	template string
	vague    bool
	crisp    TravelerAnswer
	probs    []float64
	// subjects holds the probabilities per subject (who), keyed by
	// travelerNameKey; names lists its keys in order, so that products are
	// taken in one order.
	subjects map[string][]float64
	names    []string
}

func scoreTraveler(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
	g, err := travelerParseGold(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	best := 1.0
	if g.vague {
		best = g.bestSoft()
		d[3] = 1
	}
	d[2] = best
	ans, ok := ParseTravelerAnswer(it.SolutionStr, g.template)
	if !ok {
		return 0, nil
	}
	d[0] = 1
	var score float64
	if g.vague {
		score = g.soft(ans)
	} else {
		score = b2f(travelerSame(g.template, g.crisp, ans))
	}
	d[1] = b2f(score >= best-1e-12)
	return score, nil
}

// soft is the soft accuracy of a vague answer (the TRAVELER paper): for "did", the
// probability that at least one matching event fits the adverbial,
// P = 1 − ∏(1 − p), for "yes" and 1 − P for "no"; for "who", the product
// over subjects of P_s (named) or 1 − P_s (not named), which is 0 for a name
// that is not a subject; for "how often", the probability that exactly the
// stated number of events fit, whose expectation is the soft count Σp.
// With every p in {0, 1} each reduces to crisp accuracy.
func (g *travelerGold) soft(a TravelerAnswer) float64 {
	switch g.template {
	case TravelerDid:
		p := TravelerAtLeastOne(g.probs)
		if a.Yes {
			return p
		}
		return 1 - p
	case TravelerHowOften:
		dist := TravelerCountDistribution(g.probs)
		if a.Count < len(dist) {
			return dist[a.Count]
		}
		return 0
	}
	score := 1.0
	named := map[string]bool{}
	for _, n := range a.Names {
		if _, ok := g.subjects[n]; !ok {
			return 0
		}
		named[n] = true
	}
	for _, s := range g.names {
		p := TravelerAtLeastOne(g.subjects[s])
		if named[s] {
			score *= p
		} else {
			score *= 1 - p
		}
	}
	return score
}

// bestSoft is the highest soft accuracy any answer can get.
func (g *travelerGold) bestSoft() float64 {
	switch g.template {
	case TravelerDid:
		p := TravelerAtLeastOne(g.probs)
		return max(p, 1-p)
	case TravelerHowOften:
		return slices.Max(TravelerCountDistribution(g.probs))
	}
	score := 1.0
	for _, s := range g.names {
		p := TravelerAtLeastOne(g.subjects[s])
		score *= max(p, 1-p)
	}
	return score
}

// TravelerAtLeastOne is 1 − ∏(1 − p_i): the probability that at least one
// of independent events with probabilities p_i happens (0 for none).
func TravelerAtLeastOne(ps []float64) float64 {
	none := 1.0
	for _, p := range ps {
		none *= 1 - p
	}
	return 1 - none
}

// TravelerCountDistribution is the Poisson-binomial distribution of the
// number of independent events, with probabilities p_i, that happen:
// element k is P(N = k), for k = 0 … len(ps). Its mean is Σp.
func TravelerCountDistribution(ps []float64) []float64 {
	dist := make([]float64, len(ps)+1)
	dist[0] = 1
	for i, p := range ps {
		for k := i + 1; k >= 1; k-- {
			dist[k] = dist[k]*(1-p) + dist[k-1]*p
		}
		dist[0] *= 1 - p
	}
	return dist
}

func travelerSame(template string, gold, got TravelerAnswer) bool {
	switch template {
	case TravelerWho:
		return slices.Equal(gold.Names, got.Names)
	case TravelerDid:
		return gold.Yes == got.Yes
	case TravelerHowOften:
		return gold.Count == got.Count
	}
	return gold.Date == got.Date
}

func travelerParseGold(raw json.RawMessage) (*travelerGold, error) {
	b, err := objectGroundTruth(raw, "want a TRAVELER object {category, template, answer or probabilities}")
	if err != nil {
		return nil, err
	}
	var gt TravelerGroundTruth
	if err := json.Unmarshal(b, &gt); err != nil {
		return nil, decodeError("ground_truth", b, err, "a TRAVELER object {category, template, answer or probabilities}")
	}
	g := &travelerGold{template: gt.Template}
	switch gt.Template {
	case TravelerWho, TravelerDid, TravelerHowOften, TravelerWhenLast:
	default:
		return nil, fieldErrorf("ground_truth.template", "%s: want who, did, how_often or when_last", quoteForError(gt.Template))
	}
	switch gt.Category {
	case TravelerExplicit, TravelerImplicit:
		if len(gt.Probabilities) > 0 {
			return nil, fieldErrorf("ground_truth.probabilities", "only vague questions have probabilities; %s questions have an answer", gt.Category)
		}
		a, err := travelerParseCrisp(gt.Template, gt.Answer)
		if err != nil {
			return nil, err
		}
		g.crisp = a
		return g, nil
	case TravelerVague:
		if len(gt.Answer) > 0 {
			return nil, fieldErrorf("ground_truth.answer", "vague questions have probabilities, not an answer")
		}
		g.vague = true
		return g, g.parseProbabilities(gt.Probabilities)
	}
	return nil, fieldErrorf("ground_truth.category", "%s: want explicit, implicit or vague", quoteForError(gt.Category))
}

func travelerParseCrisp(template string, raw json.RawMessage) (TravelerAnswer, error) {
	const field = "ground_truth.answer"
	var a TravelerAnswer
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return a, fieldErrorf(field, "missing")
	}
	switch template {
	case TravelerWho:
		var names []string
		if err := json.Unmarshal(b, &names); err != nil {
			return a, decodeError(field, b, err, "a list of subject names ([] for nobody)")
		}
		for i, n := range names {
			k := travelerNameKey(n)
			if k == "" {
				return a, fieldErrorf(field, "item %d: %s is not a name", i+1, quoteForError(n))
			}
			a.Names = append(a.Names, k)
		}
		slices.Sort(a.Names)
		a.Names = slices.Compact(a.Names)
	case TravelerDid:
		var s string
		if err := json.Unmarshal(b, &s); err != nil || (s != "yes" && s != "no") {
			return a, fieldErrorf(field, "%s: want \"yes\" or \"no\"", clipForError(string(b)))
		}
		a.Yes = s == "yes"
	case TravelerHowOften:
		var n float64
		if err := json.Unmarshal(b, &n); err != nil || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
			return a, fieldErrorf(field, "%s: want a whole number ≥ 0", clipForError(string(b)))
		}
		a.Count = int(n)
	case TravelerWhenLast:
		var s string
		if err := json.Unmarshal(b, &s); err != nil || (s != "never" && !tpValidDate(s)) {
			return a, fieldErrorf(field, "%s: want a YYYY-MM-DD date or \"never\"", clipForError(string(b)))
		}
		if s != "never" {
			a.Date = s
		}
	}
	return a, nil
}

func (g *travelerGold) parseProbabilities(raw json.RawMessage) error {
	const field = "ground_truth.probabilities"
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return fieldErrorf(field, "missing")
	}
	list := func(b []byte, path, where string) ([]float64, error) {
		var ps []float64
		if err := json.Unmarshal(b, &ps); err != nil {
			return nil, decodeError(path, b, err, "a list of probabilities")
		}
		for i, p := range ps {
			if !(p >= 0 && p <= 1) {
				return nil, fieldErrorf(field, "%sitem %d: %v is not in [0, 1]", where, i+1, p)
			}
		}
		return ps, nil
	}
	switch g.template {
	case TravelerWhenLast:
		return fieldErrorf("ground_truth.template", "when_last has no vague form")
	case TravelerDid, TravelerHowOften:
		ps, err := list(b, field, "")
		if err != nil {
			return err
		}
		if len(ps) > TravelerMaxProbabilities {
			return fieldErrorf(field, "%d probabilities, at most %d", len(ps), TravelerMaxProbabilities)
		}
		g.probs = ps
		return nil
	}
	var bySubject map[string]json.RawMessage
	if err := json.Unmarshal(b, &bySubject); err != nil {
		return decodeError(field, b, err, "an object subject → list of probabilities")
	}
	if len(bySubject) == 0 {
		return fieldErrorf(field, "names no subject")
	}
	g.subjects = make(map[string][]float64, len(bySubject))
	total := 0
	for name, rawPs := range bySubject {
		k := travelerNameKey(name)
		if k == "" {
			return fieldErrorf(field, "%s is not a name", quoteForError(name))
		}
		if _, dup := g.subjects[k]; dup {
			return fieldErrorf(field, "subject %s twice", quoteForError(name))
		}
		ps, err := list(rawPs, jsonscan.Member(field, name), name+": ")
		if err != nil {
			return err
		}
		total += len(ps)
		if total > TravelerMaxProbabilities {
			return fieldErrorf(field, "more than %d probabilities", TravelerMaxProbabilities)
		}
		g.subjects[k] = ps
		g.names = append(g.names, k)
	}
	slices.Sort(g.names)
	return nil
}

const travelerMarker = "ANSWER:"

// travelerTrim is what may surround an answer or one of its items:
// markdown emphasis, quotes, brackets and a closing full stop.
const travelerTrim = " \t\r*_`\"'.![](){}"

// ParseTravelerAnswer reads the answer of a TRAVELER response: the text
// after the last "ANSWER:" (any ASCII case; "FINAL ANSWER:" and
// "MY ANSWER:" end in it too) up to the end of its line, or the next line
// when nothing follows the marker on its own. Per template:
//
//	who        "nobody" (or "none", "no one"), or names separated by commas,
//	           semicolons, "&" or "and" ("Mary, Tom", "Mary and the robot");
//	           a leading "the" is dropped and names compare without case
//	did        "yes" or "no", possibly followed by more words ("Yes, he did")
//	how_often  a whole number, possibly followed by "time(s)" ("3 times"),
//	           or "never", "once", "twice"
//	when_last  a YYYY-MM-DD calendar date, or "never"
//
// The answer may be wrapped in markdown, quotes or brackets. ok is false
// when there is no marker, nothing after it, or the text is not an answer of
// the template's kind. Asking for a template that does not exist gives
// ok false.
func ParseTravelerAnswer(response, template string) (TravelerAnswer, bool) {
	var a TravelerAnswer
	i := tpLastIndexUpper(response, travelerMarker)
	if i < 0 {
		return a, false
	}
	rest := strings.TrimLeft(response[i+len(travelerMarker):], " \t\r\n")
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	rest = strings.Trim(rest, travelerTrim)
	if rest == "" {
		return a, false
	}
	low := strings.ToLower(rest)
	switch template {
	case TravelerWho:
		switch low {
		case "nobody", "none", "no one", "noone":
			return a, true
		}
		for _, part := range strings.FieldsFunc(low, func(r rune) bool { return r == ',' || r == ';' || r == '&' }) {
			var seg []string
			for _, w := range append(strings.Fields(part), "and") {
				w = strings.Trim(w, travelerTrim)
				if w != "and" {
					if w != "" {
						seg = append(seg, w)
					}
					continue
				}
				if len(seg) == 2 && seg[0] == "the" {
					seg = seg[1:]
				}
				if len(seg) == 1 && seg[0] != "the" && travelerNameKey(seg[0]) != "" {
					a.Names = append(a.Names, seg[0])
				} else if len(seg) != 0 {
					return a, false
				}
				seg = seg[:0]
			}
		}
		if len(a.Names) == 0 {
			return a, false
		}
		slices.Sort(a.Names)
		a.Names = slices.Compact(a.Names)
		return a, true
	case TravelerDid:
		word := travelerFirstWord(low)
		switch word {
		case "yes":
			a.Yes = true
			return a, true
		case "no":
			return a, true
		}
		return a, false
	case TravelerHowOften:
		fields := strings.Fields(low)
		if len(fields) == 0 || len(fields) > 2 || (len(fields) == 2 && fields[1] != "times" && fields[1] != "time") {
			return a, false
		}
		switch w := strings.Trim(fields[0], travelerTrim); w {
		case "never":
			return a, len(fields) == 1
		case "once":
			a.Count = 1
			return a, len(fields) == 1
		case "twice":
			a.Count = 2
			return a, len(fields) == 1
		default:
			n, err := strconv.Atoi(w)
			if err != nil || n < 0 || w[0] == '+' || w[0] == '-' {
				return a, false
			}
			a.Count = n
			return a, true
		}
	case TravelerWhenLast:
		if low == "never" {
			return a, true
		}
		if tpValidDate(rest) {
			a.Date = rest
			return a, true
		}
	}
	return a, false
}

// FormatTravelerAnswer is the text of an answer as ParseTravelerAnswer
// reads it back: names joined by ", " or "nobody", "yes"/"no", the count,
// the date or "never".
func FormatTravelerAnswer(template string, a TravelerAnswer) string {
	switch template {
	case TravelerWho:
		if len(a.Names) == 0 {
			return "nobody"
		}
		return strings.Join(a.Names, ", ")
	case TravelerDid:
		if a.Yes {
			return "yes"
		}
		return "no"
	case TravelerHowOften:
		return strconv.Itoa(a.Count)
	}
	if a.Date == "" {
		return "never"
	}
	return a.Date
}

// travelerFirstWord is s up to its first space or punctuation.
func travelerFirstWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z') })
	if end < 0 {
		return s
	}
	return s[:end]
}

// travelerNameKey is the comparison form of a subject name: lower case,
// without a leading "the", one word of ASCII letters, digits, hyphens or
// apostrophes other than "and" and "the". It is "" for anything else.
func travelerNameKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "the ")
	s = strings.TrimSpace(s)
	if s == "" || s == "and" || s == "the" || len(s) > 64 {
		return ""
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '\'') {
			return ""
		}
	}
	return s
}
