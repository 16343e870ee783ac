package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/rewards"
)

// The corpus: timely/general items as VeRL sends them, built from a fixed
// seed so that the load generator, the dumped JSONL and the Python baseline
// all see the same bytes. Each response is 1–3 KB of reasoning ending in
// <answer>…</answer>; answers are integers, fractions, decimals, grouped
// thousands, LaTeX expressions, multiple-choice letters and words, written
// in one of several equivalent forms when right, or a plausible wrong value.
// A few responses break the answer format, and some rollouts run past
// their time limit.

// corpusItem is one item and what the generator meant it to score.
type corpusItem struct {
	line     []byte // the item as one JSON object, no newline
	wantAcc  bool   // the answer is meant to be right
	wantFmt  bool   // the answer tag is meant to parse
	expected float64
	late     bool
}

type corpus struct {
	// reward scores the items: timely/general, or a length reward for a
	// re-labelled corpus (length.go).
	reward      *rewards.Reward
	items       []corpusItem
	bytes       int
	hash        uint64
	scoreSum    float64 // in-process Go scorer, index order
	correct     int
	formatFails int
	late        int
	overBudget  int // length rewards: items whose within_budget is 0
	// groupSize is the size of a group-wise reward's groups, consecutive
	// items from the first; 0 for the other rewards.
	groupSize int
}

// correctKey is the detail that says whether an item's answer is right:
// timely/general's acc, the length rewards' correct.
func (c *corpus) correctKey() string {
	if c.reward == rewards.TimelyGeneral {
		return "acc"
	}
	return "correct"
}

type extraInfo struct {
	ElapsedS   *float64 `json:"elapsed_s,omitempty"`
	TimeLimitS *float64 `json:"time_limit_s,omitempty"`
	Index      int      `json:"index"`
	Split      string   `json:"split"`
}

type itemJSON struct {
	DataSource  string    `json:"data_source"`
	SolutionStr string    `json:"solution_str"`
	GroundTruth any       `json:"ground_truth"`
	ExtraInfo   extraInfo `json:"extra_info"`
}

// problem is a reference answer with equivalent right forms and wrong forms.
type problem struct {
	kind  string
	gt    any // string, or int for a numeric ground truth
	right []string
	wrong []string
}

func buildCorpus(n int, seed uint64) (*corpus, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), nil)
	if err != nil {
		return nil, err
	}
	accIdx, fmtIdx := keyIndex("acc"), keyIndex("format_ok")
	c := &corpus{items: make([]corpusItem, n), reward: rewards.TimelyGeneral}
	h := fnv.New64a()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ctx := context.Background()
	for i := range n {
		p := genProblem(r)
		ci := corpusItem{wantFmt: true}
		var final string
		if r.IntN(100) < 55 {
			ci.wantAcc = true
			final = p.right[r.IntN(len(p.right))]
		} else {
			final = p.wrong[r.IntN(len(p.wrong))]
		}
		resp, fmtOK := genResponse(r, p, final)
		if !fmtOK {
			ci.wantFmt, ci.wantAcc = false, false
		}
		limits := [...]float64{30, 60, 120, 300, 600}
		limit := limits[r.IntN(len(limits))]
		elapsed := math.Round(limit*(0.05+1.15*r.Float64())*100) / 100
		ei := extraInfo{ElapsedS: &elapsed, Index: i, Split: "train"}
		if r.IntN(100) >= 4 { // a few rows carry no budget
			ei.TimeLimitS = &limit
			ci.late = elapsed > limit
		}
		buf.Reset()
		if err := enc.Encode(itemJSON{DataSource: "timely/general", SolutionStr: resp, GroundTruth: p.gt, ExtraInfo: ei}); err != nil {
			return nil, err
		}
		ci.line = bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n"))

		var it rewards.Item
		if err := json.Unmarshal(ci.line, &it); err != nil {
			return nil, err
		}
		res := scorer.ScoreWith(ctx, rewards.TimelyGeneral, &it)
		if res.Err != nil {
			return nil, fmt.Errorf("corpus item %d: the Go scorer failed: %v", i, res.Err)
		}
		gotAcc, gotFmt := res.Details[accIdx] == 1, res.Details[fmtIdx] == 1
		if gotAcc != ci.wantAcc || gotFmt != ci.wantFmt {
			return nil, fmt.Errorf("corpus item %d (%s, gt %v, answer %q): meant acc=%v format_ok=%v, the Go scorer says acc=%v format_ok=%v",
				i, p.kind, p.gt, final, ci.wantAcc, ci.wantFmt, gotAcc, gotFmt)
		}
		ci.expected = res.Score
		c.items[i] = ci
		c.bytes += len(ci.line) + 1
		h.Write(ci.line)
		h.Write([]byte{'\n'})
		c.scoreSum += res.Score
		if gotAcc {
			c.correct++
		}
		if !gotFmt {
			c.formatFails++
		}
		if ci.late {
			c.late++
		}
	}
	c.hash = h.Sum64()
	return c, nil
}

func keyIndex(k string) int {
	for i, key := range rewards.TimelyGeneral.Keys {
		if key == k {
			return i
		}
	}
	panic("timely/general has no detail " + k)
}

func genProblem(r *rand.Rand) problem {
	switch k := r.IntN(100); {
	case k < 24:
		return genInteger(r)
	case k < 44:
		return genFraction(r)
	case k < 58:
		return genDecimal(r)
	case k < 66:
		return genThousands(r)
	case k < 82:
		return genLatex(r)
	case k < 92:
		return genChoice(r)
	default:
		return genWord(r)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func genInteger(r *rand.Rand) problem {
	n := r.IntN(2400) - 300
	if r.IntN(4) == 0 {
		n = r.IntN(20)
	}
	s := itoa(n)
	p := problem{kind: "integer", gt: s}
	if r.IntN(5) == 0 {
		p.gt = n // VeRL rows sometimes carry a numeric ground truth
	}
	p.right = []string{s, `\boxed{` + s + `}`, "$" + s + "$", "x = " + s, s + ".", `\(` + s + `\)`}
	if n < 0 {
		p.right = append(p.right, "\u2212"+itoa(-n), `$-`+itoa(-n)+`$`)
	}
	for _, w := range []int{n + 1, n - 1, n * 10, n + 12, -n} {
		if w != n {
			p.wrong = append(p.wrong, itoa(w))
		}
	}
	p.wrong = append(p.wrong, `\boxed{`+itoa(n+2)+`}`)
	return p
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// terminating returns num/den as an exact short decimal, if there is one.
func terminating(num, den int) (string, bool) {
	for _, scale := range []int{10, 100, 1000, 10000} {
		if num*scale%den == 0 {
			return strconv.FormatFloat(float64(num)/float64(den), 'f', -1, 64), true
		}
	}
	return "", false
}

func genFraction(r *rand.Rand) problem {
	dens := [...]int{2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 25}
	den := dens[r.IntN(len(dens))]
	num := 1 + r.IntN(3*den)
	for gcd(num, den) != 1 || num%den == 0 {
		num = 1 + r.IntN(3*den)
	}
	ns, ds := itoa(num), itoa(den)
	frac := `\frac{` + ns + `}{` + ds + `}`
	p := problem{kind: "fraction", gt: ns + "/" + ds}
	if r.IntN(2) == 0 {
		p.gt = frac
	}
	p.right = []string{frac, ns + "/" + ds, `\dfrac{` + ns + `}{` + ds + `}`, `$\tfrac{` + ns + `}{` + ds + `}$`, `\boxed{\frac{` + ns + `}{` + ds + `}}`}
	if d, ok := terminating(num, den); ok {
		p.right = append(p.right, d)
		if 100%den == 0 {
			p.right = append(p.right, itoa(num*100/den)+`\%`)
		}
	} else {
		// A rounded decimal of a repeating fraction is wrong.
		p.wrong = append(p.wrong, strconv.FormatFloat(float64(num)/float64(den), 'f', 2, 64))
	}
	p.wrong = append(p.wrong, `\frac{`+ds+`}{`+ns+`}`, `\frac{`+itoa(num+1)+`}{`+ds+`}`, ns+"/"+itoa(den+1))
	return p
}

func genDecimal(r *rand.Rand) problem {
	cents := 1 + r.IntN(99999)
	for cents%10 == 0 {
		cents = 1 + r.IntN(99999)
	}
	v := float64(cents) / 100
	s := strconv.FormatFloat(v, 'f', 2, 64)
	p := problem{kind: "decimal", gt: s}
	p.right = []string{s, s + "0", "$" + s + "$", `\boxed{` + s + `}`}
	if gcd(cents, 100) > 1 {
		g := gcd(cents, 100)
		p.right = append(p.right, `\frac{`+itoa(cents/g)+`}{`+itoa(100/g)+`}`)
	}
	for _, w := range []float64{v + 0.1, v - 0.01, v * 10, math.Round(v)} {
		if math.Abs(w-v) > 1e-6 && w >= 0 {
			p.wrong = append(p.wrong, strconv.FormatFloat(w, 'f', 2, 64))
		}
	}
	return p
}

func grouped(n int) string {
	s := itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func genThousands(r *rand.Rand) problem {
	n := 1000 + r.IntN(4_999_000)
	g := grouped(n)
	p := problem{kind: "thousands", gt: itoa(n)}
	p.right = []string{g, strings.ReplaceAll(g, ",", "{,}"), `\$` + g, itoa(n), `\text{` + g + `}`}
	p.wrong = []string{grouped(n + 1000), grouped(n - 9), grouped(n * 10), strings.ReplaceAll(g, ",", ".")}
	return p
}

func genLatex(r *rand.Rand) problem {
	a, b := 2+r.IntN(8), []int{2, 3, 5, 6, 7, 10, 11}[r.IntN(7)]
	if a == b { // the swapped form would equal the reference
		a++
	}
	as, bs := itoa(a), itoa(b)
	switch r.IntN(4) {
	case 0:
		e := as + `\sqrt{` + bs + `}`
		return problem{kind: "latex", gt: e,
			right: []string{e, as + ` \sqrt{` + bs + `}`, "$" + e + "$", `\boxed{` + e + `}`, `\displaystyle ` + e},
			wrong: []string{bs + `\sqrt{` + as + `}`, itoa(a+1) + `\sqrt{` + bs + `}`, `\sqrt{` + bs + `}`}}
	case 1:
		c := a + 1 + r.IntN(5)
		cs := itoa(c)
		e := `\frac{` + as + `\pi}{` + cs + `}`
		return problem{kind: "latex", gt: e,
			right: []string{e, `\dfrac{` + as + `\pi}{` + cs + `}`, `\frac{` + as + ` \pi}{` + cs + `}`, "$" + e + "$"},
			wrong: []string{`\frac{` + cs + `\pi}{` + as + `}`, `\frac{\pi}{` + cs + `}`, `\frac{` + as + `\pi}{` + itoa(c+1) + `}`}}
	case 2:
		if a*b == a+b { // a = b = 2 would make the swapped coefficients equal
			b, bs = 3, "3"
		}
		e := "x^2+" + itoa(a+b) + "x+" + itoa(a*b)
		return problem{kind: "latex", gt: e,
			right: []string{e, "x^2 + " + itoa(a+b) + "x + " + itoa(a*b), "$" + e + "$", `\(` + e + `\)`},
			wrong: []string{"x^2+" + itoa(a*b) + "x+" + itoa(a+b), "x^2-" + itoa(a+b) + "x+" + itoa(a*b), "(x+" + as + ")(x+" + bs + ")"}}
	default:
		lo, hi := -a, b+a
		e := "(" + itoa(lo) + "," + itoa(hi) + ")"
		return problem{kind: "latex", gt: e,
			right: []string{e, `\left(` + itoa(lo) + ", " + itoa(hi) + `\right)`, "$(" + itoa(lo) + ", " + itoa(hi) + ")$"},
			wrong: []string{"[" + itoa(lo) + "," + itoa(hi) + "]", "(" + itoa(lo+1) + "," + itoa(hi) + ")", "(" + itoa(hi) + "," + itoa(lo) + ")"}}
	}
}

func genChoice(r *rand.Rand) problem {
	letters := "ABCDE"
	k := r.IntN(5)
	l := letters[k : k+1]
	p := problem{kind: "choice", gt: l,
		right: []string{l, "(" + l + ")", `\text{` + l + `}`, strings.ToLower(l), `\textbf{(` + l + `)}`}}
	for i := range 5 {
		if i != k {
			p.wrong = append(p.wrong, "("+letters[i:i+1]+")")
		}
	}
	return p
}

var words = []string{"Tuesday", "Paris", "north-east", "photosynthesis", "equilibrium", "Saturn", "December", "isosceles", "prime", "Newton"}

func genWord(r *rand.Rand) problem {
	k := r.IntN(len(words))
	w := words[k]
	p := problem{kind: "word", gt: w, right: []string{w, strings.ToLower(w), `\text{` + w + `}`}}
	for i := 1; i <= 3; i++ {
		p.wrong = append(p.wrong, words[(k+i)%len(words)])
	}
	return p
}

var openers = []string{
	"Let me work through this carefully, step by step.",
	"Okay, so I need to figure out what the question is really asking before computing anything.",
	"First, let me restate the problem in my own words.",
	"We are given the quantities in the statement; let me write them down.",
	"Hmm, this looks like a standard problem, but the details matter.",
}

var steps = []string{
	"Write $a = %d$ and $b = %d$, so that $a + b = %d$.",
	"Multiplying both sides by %d gives $%dx = %d$.",
	"Then $\\frac{%d}{%d}$ simplifies once we cancel the common factor.",
	"Checking the units: %d minutes is %d seconds, which is within the budget.",
	"If we substitute $x = %d$ into the equation we get $%d - %d = 0$, which is consistent.",
	"Wait, let me double-check that. %d times %d is %d, yes.",
	"The remaining case is when $n > %d$; there the sum exceeds %d, so it can be discarded.",
	"Using the formula $S_n = \\frac{n(n+1)}{2}$ with $n = %d$ gives $S_n = %d$.",
	"So far the elapsed time is about %d seconds out of a %d second budget, so I should wrap up soon.",
	"Let me consider the alternative approach: $%d^2 = %d$, and $\\sqrt{%d}$ is not an integer.",
	"Hence the intermediate value is \\boxed{%d}, but that is not the final answer yet.",
	"Note that $%d \\equiv %d \\pmod{%d}$, which rules out the odd cases.",
	"Since $\\left(%d + %d\\right)^2 = %d$, the expansion checks out.",
	"Plugging in the numbers: %d, %d, and %d. The pattern increases by a constant step.",
	"Actually, I made an arithmetic slip above; recomputing, the difference is %d rather than %d.",
}

func fill(r *rand.Rand, tmpl string) string {
	n := strings.Count(tmpl, "%d")
	args := make([]any, n)
	for i := range args {
		args[i] = r.IntN(500)
	}
	return fmt.Sprintf(tmpl, args...)
}

// genResponse writes a reasoning response ending in the final answer, and
// reports whether its answer tag is meant to parse.
func genResponse(r *rand.Rand, p problem, final string) (string, bool) {
	target := 1000 + r.IntN(2000)
	var b strings.Builder
	b.Grow(target + 256)
	think := r.IntN(2) == 0
	if think {
		b.WriteString("<think>\n")
	}
	b.WriteString(openers[r.IntN(len(openers))])
	b.WriteString("\n\n")
	for b.Len() < target {
		if r.IntN(5) == 0 {
			fmt.Fprintf(&b, "Step %d: ", 1+r.IntN(9))
		}
		b.WriteString(fill(r, steps[r.IntN(len(steps))]))
		if r.IntN(3) == 0 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	if think {
		b.WriteString("\n</think>\n\n")
	} else {
		b.WriteString("\n\n")
	}
	b.WriteString("Therefore, the final answer is as follows.\n\n")
	switch k := r.IntN(100); {
	case k < 2: // no tag at all
		b.WriteString("The answer is " + final + ".")
		return b.String(), false
	case k < 4: // unclosed tag (truncated generation)
		b.WriteString("<answer>" + final)
		return b.String(), false
	case k < 5: // empty tag
		b.WriteString("<answer>  </answer>")
		return b.String(), false
	}
	if r.IntN(4) == 0 {
		b.WriteString("<answer>\n" + final + "\n</answer>")
	} else {
		b.WriteString("<answer>" + final + "</answer>")
	}
	return b.String(), true
}
