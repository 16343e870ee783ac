package rewards

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
)

// tramKeys are the details of the TRAM reward:
//
//	correct   1 if the answer is right (the score)
//	answered  1 if the response has an answer line that names one option
//	          (multiple choice) or any answer (short answer)
var tramKeys = []string{"correct", "answered"}

// TRAM scores an answer to a TRAM question (Wang & Zhao, ACL 2024
// Findings), whose metric is accuracy; the benchmark ships no scoring
// script. A multiple-choice question is right when the option the final
// answer line names (ReadOptionLetter) is the gold letter; a short-answer
// question is right when the answer line's SQuAD normal form
// (NormalizeSQuAD) equals a gold answer's. The score is correct (0 or 1).
var TRAM = &Reward{
	DataSource:  "tram",
	Summary:     `TRAM: accuracy of the "Answer:" line, the option letter for multiple choice, SQuAD-normalised exact match for short answers`,
	GroundTruth: `JSON object (or a JSON string holding one) {"letter": "B", "options": {"A": "...", "B": "...", ...}} or {"answers": ["..."]}`,
	Keys:        tramKeys,
	score:       scoreTRAM,
}

func scoreTRAM(_ context.Context, _ *Scorer, it *Item, d []float64) (float64, error) {
	g, err := parseTRAMGold(it.GroundTruth)
	if err != nil {
		return 0, err
	}
	ans, ok := ExtractAnswer(it.SolutionStr, "")
	if !ok {
		return 0, nil
	}
	if g.answers != nil {
		em, _ := SQuADScores(ans, g.answers, false)
		d[0], d[1] = em, 1
		return em, nil
	}
	letter, ok := ReadOptionLetter(ans, g.options)
	if !ok {
		return 0, nil
	}
	d[1] = 1
	d[0] = b2f(letter == g.letter)
	return d[0], nil
}

type tramGold struct {
	letter  string
	options map[string]string
	answers []string
}

func parseTRAMGold(raw json.RawMessage) (*tramGold, error) {
	const want = `want {"letter": "B", "options": {"A": "...", ...}} or {"answers": ["..."]}`
	b, err := objectGroundTruth(raw, want)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, decodeError("ground_truth", b, err)
	}
	if a, ok := m["answers"]; ok {
		if _, has := m["letter"]; has {
			return nil, fieldErrorf("ground_truth", "has both answers and letter: %s", want)
		}
		answers, err := parseAnswersList(a)
		if err != nil {
			return nil, err
		}
		return &tramGold{answers: answers}, nil
	}
	g := &tramGold{}
	l := trimSpace(m["letter"])
	if len(l) == 0 || string(l) == "null" {
		return nil, fieldErrorf("ground_truth.letter", "missing: %s", want)
	}
	if err := json.Unmarshal(l, &g.letter); err != nil || len(g.letter) != 1 || g.letter[0] < 'A' || g.letter[0] > 'Z' {
		return nil, fieldErrorf("ground_truth.letter", "%s is not one capital letter A to Z", clipForError(string(l)))
	}
	o := trimSpace(m["options"])
	if len(o) == 0 || string(o) == "null" {
		return nil, fieldErrorf("ground_truth.options", "missing: want the options by letter, {\"A\": \"...\", ...}")
	}
	if err := json.Unmarshal(o, &g.options); err != nil {
		return nil, decodeError("ground_truth.options", o, err, "an object of option texts by letter")
	}
	for k := range g.options {
		if len(k) != 1 || k[0] < 'A' || k[0] > 'Z' {
			return nil, fieldErrorf("ground_truth.options", "key %s is not one capital letter A to Z", quoteForError(k))
		}
	}
	if _, ok := g.options[g.letter]; !ok {
		return nil, fieldErrorf("ground_truth.letter", "%s is not among the options", g.letter)
	}
	return g, nil
}

// ReadOptionLetter reads which option of a multiple-choice question an
// answer names. options maps capital letters to the options' texts. The
// answer names option X when it is, after trimming white space, quotes,
// backticks and asterisks:
//   - the letter: "B", "(B)", "B.", "B)", "B:", or any of these after
//     "Option" ("Option B", "option (b)"); the letter may be lower case;
//   - one of those forms followed by text ("B) 2 hours", "(B) 2 hours"),
//     unless that text is, by its SQuAD normal form, the text of another
//     option and not of X: the answer then contradicts itself;
//   - the text of exactly one option, compared by SQuAD normal form
//     (NormalizeSQuAD).
//
// A letter form naming one letter and an option text naming another, a
// text shared by two options, and anything else ("B or C", "A, B") name no
// option: ok is false. A letter form whose letter is not an option ("E"
// of A to C) is read (ok is true) and is simply not the gold letter.
func ReadOptionLetter(answer string, options map[string]string) (letter string, ok bool) {
	a := strings.Trim(answer, " \t\r\n\v\f\"'`*")
	byText := ""
	if n := NormalizeSQuAD(a); n != "" {
		keys := make([]string, 0, len(options))
		for k := range options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if NormalizeSQuAD(options[k]) == n {
				if byText != "" {
					return "", false // two options share the text
				}
				byText = k
			}
		}
	}
	l, rest, isForm := optionLetterForm(a)
	if !isForm {
		return byText, byText != ""
	}
	if byText != "" && byText != l {
		return "", false
	}
	if rest = NormalizeSQuAD(rest); rest != "" {
		if opt, has := options[l]; !has || NormalizeSQuAD(opt) != rest {
			for k, v := range options {
				if k != l && NormalizeSQuAD(v) == rest {
					return "", false
				}
			}
		}
	}
	return l, true
}

// optionLetterForm parses "[Option ](X|(X))[.|)|:][ text]" and returns the
// capital letter and the text after it.
func optionLetterForm(a string) (letter, rest string, ok bool) {
	if ansHasPrefixFold(a, "option") {
		t := strings.TrimLeft(a[len("option"):], " \t:")
		if len(t) == len(a)-len("option") {
			return "", "", false // "optionB"
		}
		a = t
	}
	paren := strings.HasPrefix(a, "(")
	if paren {
		a = a[1:]
	}
	if a == "" || !ansIsLetter(a[0]) {
		return "", "", false
	}
	letter = strings.ToUpper(a[:1])
	a = a[1:]
	if paren {
		if !strings.HasPrefix(a, ")") {
			return "", "", false
		}
		a = a[1:]
		if a != "" && a[0] != ' ' && a[0] != '.' && a[0] != ':' && a[0] != '\t' {
			return "", "", false
		}
	} else if a != "" {
		switch a[0] {
		case '.', ')', ':':
		default:
			return "", "", false
		}
	}
	a = strings.TrimLeft(a, ".:) \t")
	return letter, a, true
}
