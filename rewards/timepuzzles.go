package rewards

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// timePuzzlesKeys are the details of the Time Puzzles scorer:
//
//	em       1 if the predicted set equals the gold set
//	f1       F1 of the predicted against the gold set
//	jaccard  |gold ∩ pred| / |gold ∪ pred|
//	parsed   1 if the response has a readable "MY ANSWER:" line
//	n_pred   dates predicted (0 for None or when unparsed)
//	n_gold   dates in the gold set
var timePuzzlesKeys = []string{"em", "f1", "jaccard", "parsed", "n_pred", "n_gold"}

// TimePuzzles scores a Time Puzzles answer (the Time Puzzles paper, App. B and E): the
// set of dates on the response's last "MY ANSWER:" line against the gold
// set, by exact match, F1 and Jaccard index, with both sets empty scoring 1
// and exactly one empty scoring 0. A response without a readable answer
// scores 0 on every metric. The score is the metric TimePuzzlesConfig.Metric
// names.
var TimePuzzles = &Reward{
	DataSource:  "timepuzzles",
	Summary:     `Time Puzzles: the dates on the last "MY ANSWER:" line against the gold set (exact match, F1 or Jaccard)`,
	GroundTruth: `string of comma-separated YYYY-MM-DD dates ("None" or "" for no date), or a JSON array of date strings`,
	Keys:        timePuzzlesKeys,
	score:       scoreTimePuzzles,
}

func scoreTimePuzzles(_ context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	gold, err := tpParseGold(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	d[5] = float64(len(gold))
	pred, ok := ParseDateAnswer(it.SolutionStr)
	if !ok {
		return 0, nil
	}
	em, f1, jac := SetMetrics(gold, pred)
	d[0], d[1], d[2], d[3], d[4] = em, f1, jac, 1, float64(len(pred))
	switch s.cfg.TimePuzzles.Metric {
	case MetricF1:
		return f1, nil
	case MetricJaccard:
		return jac, nil
	}
	return em, nil
}

const tpMarker = "MY ANSWER:"

// tpTrim is what surrounds a date or "None" in a model's answer line:
// markdown emphasis, quotes, brackets and a closing full stop.
const tpTrim = " \t\r*_`\"'.[](){}"

// ParseDateAnswer reads the answer of a Time Puzzles response in the format
// of the Time Puzzles paper, App. E: the text after the last "MY ANSWER:" (matched without
// regard to ASCII case) up to the end of its line, or the next line when
// nothing follows the marker on its own. The answer is "None" (ok with no
// dates) or YYYY-MM-DD dates separated by commas, semicolons or spaces,
// possibly wrapped in markdown, quotes or brackets. Every date must exist in
// the Gregorian calendar. The dates come back sorted without duplicates.
// ok is false when there is no marker, nothing after it, or any item that
// is not a valid date.
func ParseDateAnswer(response string) (dates []string, ok bool) {
	i := tpLastIndexUpper(response, tpMarker)
	if i < 0 {
		return nil, false
	}
	rest := strings.TrimLeft(response[i+len(tpMarker):], " \t\r\n")
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	rest = strings.Trim(rest, tpTrim)
	if rest == "" {
		return nil, false
	}
	if strings.EqualFold(rest, "none") {
		return []string{}, true
	}
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' }) {
		f = strings.Trim(f, tpTrim)
		if f == "" {
			continue
		}
		if !tpValidDate(f) {
			return nil, false
		}
		dates = append(dates, f)
	}
	if len(dates) == 0 {
		return nil, false
	}
	slices.Sort(dates)
	return slices.Compact(dates), true
}

// SetMetrics returns exact match, F1 and Jaccard index of a predicted set
// of answers against the gold set (the Time Puzzles paper, App. B, eq. 3–6). Duplicates
// are ignored and items compare as exact strings, so dates should be in one
// canonical form (ParseDateAnswer's). When both sets are empty all three
// are 1; when exactly one is empty all three are 0. Each is in [0, 1].
func SetMetrics(gold, pred []string) (em, f1, jaccard float64) {
	g := make(map[string]bool, len(gold))
	for _, x := range gold {
		g[x] = true
	}
	p := make(map[string]bool, len(pred))
	for _, x := range pred {
		p[x] = true
	}
	switch {
	case len(g) == 0 && len(p) == 0:
		return 1, 1, 1
	case len(g) == 0 || len(p) == 0:
		return 0, 0, 0
	}
	inter := 0
	for x := range p {
		if g[x] {
			inter++
		}
	}
	if inter == len(g) && inter == len(p) {
		em = 1
	}
	if inter > 0 {
		precision := float64(inter) / float64(len(p))
		recall := float64(inter) / float64(len(g))
		f1 = 2 * precision * recall / (precision + recall)
	}
	jaccard = float64(inter) / float64(len(g)+len(p)-inter)
	return em, f1, jaccard
}

// tpParseGold reads the gold set: a string of comma-separated dates
// ("None" or "" for the empty set, a JSON array text also accepted) or a
// JSON array of date strings. It returns the dates sorted without
// duplicates.
func tpParseGold(raw json.RawMessage) ([]string, error) {
	const want = `want comma-separated YYYY-MM-DD dates, "None", or a JSON array of dates`
	b := trimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return nil, fieldErrorf("ground_truth", "missing: %s", want)
	}
	var dates []string
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fieldErrorf("ground_truth", "not a valid JSON string: %v", err)
		}
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") {
			return tpParseGold(json.RawMessage(s))
		}
		if s == "" || strings.EqualFold(s, "none") {
			return []string{}, nil
		}
		for i, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				return nil, fieldErrorf("ground_truth", "item %d of %q is empty", i+1, clipForError(s))
			}
			if !tpValidDate(f) {
				return nil, fieldErrorf("ground_truth", "%s is not a YYYY-MM-DD calendar date", quoteForError(f))
			}
			dates = append(dates, f)
		}
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return nil, fieldErrorf("ground_truth", "not a valid JSON array: %v", err)
		}
		for i, it := range items {
			var f string
			if json.Unmarshal(it, &f) != nil {
				return nil, fieldErrorf("ground_truth", "item %d: %s is not a string: %s", i+1, clipForError(string(it)), want)
			}
			if !tpValidDate(f) {
				return nil, fieldErrorf("ground_truth", "item %d: %s is not a YYYY-MM-DD calendar date", i+1, quoteForError(f))
			}
			dates = append(dates, f)
		}
	default:
		return nil, fieldErrorf("ground_truth", "%s: %s", clipForError(string(b)), want)
	}
	slices.Sort(dates)
	return slices.Compact(dates), nil
}

// tpValidDate reports whether s is YYYY-MM-DD naming a day of the proleptic
// Gregorian calendar.
func tpValidDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	num := func(a, b int) int {
		n := 0
		for _, c := range []byte(s[a:b]) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d := num(0, 4), num(5, 7), num(8, 10)
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// tpLastIndexUpper is strings.LastIndex ignoring ASCII case; sub must
// be upper case. Byte offsets stay those of s, whatever else it holds.
func tpLastIndexUpper(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		match := true
		for j := 0; j < len(sub); j++ {
			c := s[i+j]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != sub[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
