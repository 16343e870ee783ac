package rewards

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// squadKeys are the details of the TimeQA and TempReason rewards:
//
//	exact_match  1 if the answer's normal form equals a gold answer's
//	f1           the best token F1 against a gold answer (also the score)
//	answered     1 if the response has an answer line
var squadKeys = []string{"exact_match", "f1", "answered"}

// TimeQA scores an answer to a TimeQA question (Chen et al., NeurIPS 2021)
// as the official utils.py of wenhuchen/Time-Sensitive-QA does: SQuAD
// normalisation (NormalizeSQuAD), exact match and token F1 taken as the
// best over the gold answers, with F1 = 1 when the answer and a gold answer
// both normalise to no token (an unanswerable question's gold is [""]).
// The answer is the response's final answer line (ExtractAnswer, "Answer:
// ..."); a response without one scores 0 with answered = 0. An answer that
// normalises to Unanswerable is the empty answer the official script scores
// for a question the context does not answer (the importer's prompt asks
// for that word). The score is the F1; exact match is a detail.
var TimeQA = &Reward{
	DataSource:  "timeqa",
	Summary:     `TimeQA: token F1 (the score) and exact match of the "Answer:" line against the gold answers, as TimeQA's official utils.py computes them`,
	GroundTruth: `JSON object (or a JSON string holding one) {"answers": ["...", ...]}; [""] for an unanswerable question`,
	Keys:        squadKeys,
	score: func(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
		return scoreSQuADStyle(it, d, true, Unanswerable)
	},
}

// TempReason scores an answer to a TempReason question (Tan et al., ACL
// 2023) as its evaluation does, through the SQuAD v1.1 script (Hugging
// Face's "squad" metric): SQuAD normalisation (NormalizeSQuAD), exact match
// and token F1 taken as the best over the gold answers, with F1 = 0 when
// the answer and the gold answer share no token, even when both are empty.
// The answer is the response's final answer line (ExtractAnswer); a
// response without one scores 0 with answered = 0. The score is the F1;
// exact match is a detail.
var TempReason = &Reward{
	DataSource:  "tempreason",
	Summary:     `TempReason: token F1 (the score) and exact match of the "Answer:" line against the gold answers, as the SQuAD v1.1 script computes them`,
	GroundTruth: `JSON object (or a JSON string holding one) {"answers": ["...", ...]}`,
	Keys:        squadKeys,
	score: func(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
		return scoreSQuADStyle(it, d, false, "")
	},
}

// Unanswerable is the answer that says the context does not answer a
// TimeQA question: the empty answer of its gold [""].
const Unanswerable = "unanswerable"

// scoreSQuADStyle scores the answer line against {"answers": [...]};
// emptyMatches is TimeQA's F1 of two empty answers, and an answer that
// normalises to none (when not "") stands for the empty answer.
func scoreSQuADStyle(it *Item, d []float64, emptyMatches bool, none string) (float64, error) {
	golds, err := parseAnswersGold(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	pred, ok := ExtractAnswer(it.SolutionStr, "")
	if !ok {
		return 0, nil
	}
	if none != "" && NormalizeSQuAD(pred) == none {
		pred = ""
	}
	em, f1 := SQuADScores(pred, golds, emptyMatches)
	d[0], d[1], d[2] = em, f1, 1
	return f1, nil
}

// parseAnswersGold reads {"answers": ["...", ...]}, or the same object in a
// JSON string: at least one answer, each a string.
func parseAnswersGold(raw json.RawMessage) ([]string, error) {
	const want = `want {"answers": ["...", ...]}`
	b, err := objectGroundTruth(raw, want)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, decodeError("ground_truth", b, err)
	}
	return parseAnswersList(m["answers"])
}

func parseAnswersList(a json.RawMessage) ([]string, error) {
	a = trimSpace(a)
	if len(a) == 0 || string(a) == "null" {
		return nil, fieldErrorf("ground_truth.answers", "missing: want a list of answer strings")
	}
	var items []*string
	if err := json.Unmarshal(a, &items); err != nil {
		return nil, decodeError("ground_truth.answers", a, err, "a list of answer strings")
	}
	if len(items) == 0 {
		return nil, fieldErrorf("ground_truth.answers", "empty: want at least one answer (\"\" for an unanswerable question)")
	}
	answers := make([]string, len(items))
	for i, p := range items {
		if p == nil {
			return nil, fieldErrorf(fmt.Sprintf("ground_truth.answers[%d]", i), "null: want an answer string (\"\" for an unanswerable question)")
		}
		answers[i] = *p
	}
	return answers, nil
}

// SQuADScores returns the exact match and token F1 of a predicted answer
// against gold answers, each the best over the golds, as the SQuAD v1.1
// evaluation script and TimeQA's utils.py compute them: both sides are
// normalised by NormalizeSQuAD and split into tokens at white space; EM is
// 1 when the normal forms are equal; F1 is the harmonic mean of precision
// and recall of the tokens in common (counted with multiplicity). The two
// scripts differ only when a side has no token: with emptyMatches (TimeQA's
// compute_f1) F1 is then 1 if both have none and 0 otherwise; without it
// (SQuAD v1.1's f1_score) F1 is 0 whenever no token is shared. With no gold
// answers both are 0.
func SQuADScores(pred string, golds []string, emptyMatches bool) (em, f1 float64) {
	pt := SQuADTokens(pred)
	pn := strings.Join(pt, " ")
	for _, g := range golds {
		gt := SQuADTokens(g)
		if strings.Join(gt, " ") == pn {
			em = 1
		}
		f1 = max(f1, tokenF1(pt, gt, emptyMatches))
	}
	return em, f1
}

// tokenF1 is the F1 of the predicted tokens against the gold ones.
func tokenF1(pred, gold []string, emptyMatches bool) float64 {
	if emptyMatches && (len(pred) == 0 || len(gold) == 0) {
		return b2f(len(pred) == len(gold))
	}
	counts := make(map[string]int, len(gold))
	for _, t := range gold {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	// The scripts' order of operations, so that the values are the same
	// floating-point numbers.
	precision := 1.0 * float64(same) / float64(len(pred))
	recall := 1.0 * float64(same) / float64(len(gold))
	return (2 * precision * recall) / (precision + recall)
}

// SQuADTokens returns the tokens of s's SQuAD normal form
// (NormalizeSQuAD), split at white space.
func SQuADTokens(s string) []string {
	return strings.FieldsFunc(squadRemoveArticles(squadRemovePunct(pyLower(s))), pyIsSpace)
}

// NormalizeSQuAD returns the normal form of an answer used by the SQuAD
// v1.1 evaluation script, and by TimeQA's utils.py, ported with Python 3's
// semantics:
//  1. lower case, as Python's str.lower: full Unicode lower-case mapping,
//     so İ (U+0130) becomes i and a combining dot above, and a capital
//     sigma at the end of a word becomes ς;
//  2. every ASCII punctuation character (Python's string.punctuation,
//     !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~) is removed; other punctuation stays;
//  3. each whole word "a", "an" or "the" becomes a space, a word being a
//     maximal run of Python's regular-expression word characters (letters
//     and numbers of any script; a combining mark is not one, so "the"
//     followed by an accent is still the word "the");
//  4. runs of white space (Python's str.split: Unicode white space and the
//     separators U+001C to U+001F) become one space, with none at either
//     end.
func NormalizeSQuAD(s string) string { return strings.Join(SQuADTokens(s), " ") }

// squadRemovePunct drops the characters of Python's string.punctuation.
func squadRemovePunct(s string) string {
	if strings.IndexFunc(s, isASCIIPunct) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isASCIIPunct(r) {
			return -1
		}
		return r
	}, s)
}

func isASCIIPunct(r rune) bool {
	return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
}

// squadRemoveArticles replaces each maximal run of word characters that is
// "a", "an" or "the" by a space: what re.sub(r"\b(a|an|the)\b", " ", s)
// does, since the articles are made of word characters, so a match's
// boundaries are those of a whole run.
func squadRemoveArticles(s string) string {
	var b strings.Builder
	start := -1 // start of the current run of word characters
	flush := func(end int) {
		if w := s[start:end]; w == "a" || w == "an" || w == "the" {
			b.WriteByte(' ')
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	b.Grow(len(s))
	for i, r := range s {
		if pyIsWord(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		flush(len(s))
	}
	return b.String()
}

// pyIsWord reports whether r is a word character (\w) of Python's re on a
// str pattern: alphanumeric in Python's sense (letters Lu, Ll, Lt, Lm, Lo
// and numbers Nd, Nl, No) or the underscore.
func pyIsWord(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// pyIsSpace reports whether str.split() splits at r: Unicode white space,
// plus the information separators U+001C to U+001F, which Python counts.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyLower is Python 3's str.lower: the full lower-case mapping, which
// differs from the simple one for İ (U+0130, to "i̇") and for Σ in the
// Final_Sigma context (to ς).
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma at rs[i] is in Unicode's
// Final_Sigma context, as CPython's handle_capital_sigma tests it: a cased
// letter before it and none after it, skipping case-ignorable characters.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifiers, and the word-break classes MidLetter, MidNumLet
// and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027, 0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
