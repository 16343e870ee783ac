package rewards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var extractAnswerCases = []struct {
	name     string
	response string
	tag      string
	want     string
	found    bool
}{
	// Tagged.
	{"tag plain", "Reasoning...\n<answer> 42 </answer>", "answer", "42", true},
	{"tag last pair wins", "<answer>1</answer> wait, no <answer>2</answer>", "answer", "2", true},
	{"tag unclosed trailing open is ignored", "<answer>1</answer> then <answer>2", "answer", "1", true},
	{"tag nearest open before last close", "<answer>a <answer>b</answer>", "answer", "b", true},
	{"tag no closing tag", "<answer>5", "answer", "", false},
	{"tag no opening tag", "5</answer>", "answer", "", false},
	{"tag missing", "The answer is 5.", "answer", "", false},
	{"tag empty", "<answer>  </answer>", "answer", "", false},
	{"tag is case-sensitive", "<ANSWER>5</ANSWER>", "answer", "", false},
	{"tag other name", "<final>7</final>", "final", "7", true},
	{"tag boxed inside", "<answer>so \\boxed{12}.</answer>", "answer", "12", true},
	{"tag boxed nested braces", "<answer>\\boxed{\\frac{3}{4}}</answer>", "answer", "\\frac{3}{4}", true},
	{"tag last boxed inside", "<answer>\\boxed{1} or \\boxed{2}</answer>", "answer", "2", true},
	{"tag fbox inside", "<answer>\\fbox{x+1}</answer>", "answer", "x+1", true},
	{"tag boxed outside is ignored", "\\boxed{9}<answer>8</answer>", "answer", "8", true},
	{"tag boxed unbalanced", "<answer>\\boxed{\\frac{1}{2}</answer>", "answer", "", false},
	{"tag boxed empty", "<answer>\\boxed{}</answer>", "answer", "", false},
	{"tag multiline", "<answer>\nx = 3\n</answer>", "answer", "x = 3", true},
	{"tag escaped braces in boxed", "<answer>\\boxed{\\{1, 2\\}}</answer>", "answer", "\\{1, 2\\}", true},
	// Untagged.
	{"boxed", "Thus the result is $\\boxed{5}$.", "", "5", true},
	{"last boxed", "First \\boxed{1}, then \\boxed{2}.", "", "2", true},
	{"boxed nested", "\\boxed{\\frac{1}{2}}", "", "\\frac{1}{2}", true},
	{"boxed deeply nested", "\\boxed{\\sqrt{\\frac{a^{2}}{b}}}", "", "\\sqrt{\\frac{a^{2}}{b}}", true},
	{"fbox after boxed", "\\boxed{1} \\fbox{3}", "", "3", true},
	{"boxed unbalanced", "\\boxed{\\frac{1}{2}", "", "", false},
	{"boxed unbalanced ignores earlier", "\\boxed{1} and \\boxed{2", "", "", false},
	{"boxed beats my answer", "MY ANSWER: 3\n\\boxed{4}", "", "4", true},
	{"my answer", "Work...\nMY ANSWER: 17", "", "17", true},
	{"my answer case-insensitive", "my answer: (C)", "", "(C)", true},
	{"my answer last line", "MY ANSWER: 1\nMY ANSWER: 2\n", "", "2", true},
	{"my answer beats later answer line", "MY ANSWER: 1\nAnswer: 2", "", "1", true},
	{"my answer markdown", "  **MY ANSWER:** 3.5.", "", "3.5", true},
	{"my answer not at line start", "I said MY ANSWER: 3", "", "", false},
	{"my answer empty", "MY ANSWER:   ", "", "", false},
	{"my answer crlf", "MY ANSWER: 6\r\n", "", "6", true},
	{"final answer is", "So the final answer is 12.", "", "12", true},
	{"final answer is colon", "The Final Answer is: $\\frac{1}{2}$.", "", "$\\frac{1}{2}$", true},
	{"answer line", "steps\nAnswer: 7\n", "", "7", true},
	{"final answer line markdown", "## Final Answer: **B**", "", "B", true},
	{"answer line bold", "**Answer:** 99", "", "99", true},
	{"last of final phrasings", "Answer: 1\nthe final answer is 2", "", "2", true},
	{"answer mid-line is ignored", "The answer: 5", "", "", false},
	{"nothing", "I don't know.", "", "", false},
	{"empty response", "", "", "", false},
	{"empty response tagged", "", "answer", "", false},
}

func TestExtractAnswer(t *testing.T) {
	for _, tc := range extractAnswerCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ExtractAnswer(tc.response, tc.tag)
			assert.Equal(t, tc.found, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestExtractAnswerLongInputs(t *testing.T) {
	const n = 1 << 20
	inputs := map[string]string{
		"open braces":     `\boxed{` + strings.Repeat("{", n),
		"many boxed":      strings.Repeat(`\boxed{`, n/8),
		"many open tags":  strings.Repeat("<answer>", n/8) + "</answer>",
		"many close tags": strings.Repeat("</answer>", n/8),
		"many lines":      strings.Repeat("final answer\nanswer\n", n/20),
		"backslashes":     `\boxed{` + strings.Repeat(`\`, n),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			for _, tag := range []string{"answer", ""} {
				ExtractAnswer(in, tag)
				EqualAnswers(in, in)
			}
			assert.Less(t, time.Since(start), 5*time.Second, "scans should be linear")
		})
	}
}

var equalAnswersCases = []struct {
	pred, ref string
	want      bool
}{
	// Integers.
	{"42", "42", true},
	{" 42 ", "42", true},
	{"042", "42", true},
	{"+7", "7", true},
	{"12", "21", false},
	{"2", "-2", false},
	{"-2", "-2", true},
	{"-0", "0", true},
	{"1000000", "1000001", false},
	// Decimals and scientific notation.
	{".5", "0.5", true},
	{"-0.50", "-.5", true},
	{"0.5", "1/2", true},
	{"3.14", "3.14159", false},
	{"1e3", "1000", true},
	{"1E3", "1000.0", true},
	{"2.5e-3", "0.0025", true},
	{"1e3", "100", false},
	{"0.1", "0.10000000001", false},
	{"0.1", "0.1000000000000001", true},
	{"1000000000", "1000000001", false},
	{"123456789012", "123456789013", false},
	{"0.1", "0.1000001", false},
	{"1e400", "1e400", true},
	{"1e", "1", false},
	// Thousands separators.
	{"1,000", "1000", true},
	{"1{,}000", "1000", true},
	{"12,345,678", "12345678", true},
	{"1,234.5", "1234.5", true},
	{"1\\,000", "1000", true},
	{"1,000", "1.000", false},
	{"1.000", "1", true},
	{"1,00", "100", false},
	{"1,2", "1.2", false},
	{"1,000,", "1000", false},
	{"(1,2)", "(1, 2)", true},
	// Fractions.
	{"3/4", "0.75", true},
	{"3/4", "\\frac{3}{4}", true},
	{"\\frac34", "0.75", true},
	{"\\frac{3}{4}", "\\dfrac{3}{4}", true},
	{"\\tfrac{3}{4}", "3/4", true},
	{"-\\frac{1}{2}", "-0.5", true},
	{"\\frac{-1}{2}", "-1/2", true},
	{"3/-4", "-0.75", true},
	{"-\\frac{1}{2}", "\\frac{1}{2}", false},
	{"0.33", "1/3", false},
	{"0.333333333333", "1/3", true},
	{"6/8", "3/4", true},
	{"\\frac{1}{0}", "1/0", false},
	{"1/0", "1/0", true},
	{"1/0", "0", false},
	{"\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{2}", true},
	{"\\frac{\\sqrt{3}}{2}", "\\dfrac{\\sqrt{3}}{2}", true},
	{"\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{2}}{2}", false},
	{"\\frac{1}{2}", "\\frac{1}{3}", false},
	{"1/2/3", "1/6", false},
	// Percentages.
	{"50%", "50", true},
	{"50\\%", "50%", true},
	{"50%", "0.5", true},
	{"0.5", "50%", true},
	{"50%", "5", false},
	{"50%", "0.05", false},
	{"50%", "0.5%", false},
	{"12.5%", "\\frac{1}{8}", true},
	{"$50\\%$", "50", true},
	// LaTeX wrappers and delimiters.
	{"$5$", "5", true},
	{"$$5$$", "5", true},
	{"\\(5\\)", "5", true},
	{"\\[5\\]", "5", true},
	{"\\boxed{5}", "5", true},
	{"\\boxed{\\frac{1}{2}}", "0.5", true},
	{"$\\boxed{5}$", "\\fbox{5}", true},
	{"\\text{5}", "5", true},
	{"\\text{B}", "B", true},
	{"\\textbf{B}", "(B)", true},
	{"\\mathrm{B}", "b", true},
	{"\\text{(B)}", "B", true},
	{"10\\text{ apples}", "10 apples", true},
	{"\\left(1, 2\\right)", "(1,2)", true},
	{"\\left[0, 1\\right)", "[0,1)", true},
	{"x \\leftarrow y", "x\\leftarrowy", true},
	{"x \\leftarrow y", "x(y", false},
	{"5\\!", "5", true},
	{"5\\;", "5", true},
	{"1~000", "1000", true},
	{"\\displaystyle\\frac{1}{2}", "0.5", true},
	{"\\text{5", "5", false},
	// Degrees, currency, periods.
	{"90^\\circ", "90", true},
	{"90^{\\circ}", "90", true},
	{"90°", "90", true},
	{"\\$5", "5", true},
	{"$5", "5.00", true},
	{"\\$1,000", "1000", true},
	{"5.", "5", true},
	{"\\frac{1}{2}.", "1/2", true},
	{"\u22125", "-5", true},
	// Assignments.
	{"x = 5", "5", true},
	{"x=\\frac{1}{2}", "0.5", true},
	{"y = 3", "x = 3", true},
	{"x = 5", "x = 6", false},
	{"xy = 5", "5", false},
	{"x =", "x=", true},
	// Multiple choice and text.
	{"(B)", "B", true},
	{"(b)", "B", true},
	{"(B)", "C", false},
	{"(AB)", "AB", false},
	{"x", "y", false},
	{"x", "X", true},
	{"Paris", "paris", true},
	{"New York", "NewYork", true},
	{"yes", "no", false},
	{"\\sqrt{2}", "\\sqrt{2}", true},
	{"\\sqrt{2}", "\\sqrt{3}", false},
	{"\\pi", "3.14159", false},
	{"five", "5", false},
	{"a\u212a", "ak", false}, // Kelvin sign: only ASCII letters fold
	// Empty answers equal nothing.
	{"", "", false},
	{"   ", "", false},
	{"$$", "$", false},
	{".", ".", false},
	{"", "0", false},
}

func TestEqualAnswers(t *testing.T) {
	require.GreaterOrEqual(t, len(equalAnswersCases), 100)
	for _, tc := range equalAnswersCases {
		t.Run(fmt.Sprintf("%q~%q", tc.pred, tc.ref), func(t *testing.T) {
			assert.Equal(t, tc.want, EqualAnswers(tc.pred, tc.ref), "EqualAnswers(%q, %q)", tc.pred, tc.ref)
			assert.Equal(t, tc.want, EqualAnswers(tc.ref, tc.pred), "EqualAnswers(%q, %q)", tc.ref, tc.pred)
		})
	}
}

func TestExtractAnswerThenEqualAnswers(t *testing.T) {
	cases := []struct {
		name, response, tag, ref string
		want                     bool
	}{
		{"tagged boxed fraction", "We have 3 of 4 parts.\n<answer>\\boxed{\\frac{3}{4}}</answer>", "answer", "0.75", true},
		{"tagged prose answer", "<answer>The answer is 5</answer>", "answer", "5", false},
		{"tagged dollars", "<answer>$\\$1{,}250$</answer>", "answer", "1250", true},
		{"tagged percent", "<answer>\\boxed{25\\%}</answer>", "answer", "0.25", true},
		{"tagged choice", "Option B fits.\n<answer>(B)</answer>", "answer", "B", true},
		{"tagged wrong choice", "<answer>(C)</answer>", "answer", "B", false},
		{"tagged assignment", "<answer>x = -\\frac{1}{2}</answer>", "answer", "-0.5", true},
		{"untagged boxed", "Adding gives $\\boxed{12}$.", "", "12", true},
		{"untagged boxed wrong", "Adding gives $\\boxed{21}$.", "", "12", false},
		{"untagged my answer", "Thinking.\nMY ANSWER: 90^\\circ", "", "90", true},
		{"untagged final answer", "Hence the final answer is $\\frac{1}{3}$.", "", "1/3", true},
		{"untagged final answer close", "Hence the final answer is 0.33.", "", "1/3", false},
		{"untagged answer line", "Answer: \\text{Paris}", "", "paris", true},
		{"no answer", "I give up.", "", "5", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans, ok := ExtractAnswer(tc.response, tc.tag)
			assert.Equal(t, tc.want, ok && EqualAnswers(ans, tc.ref), "extracted %q (found %v)", ans, ok)
		})
	}
}

func FuzzExtractAnswer(f *testing.F) {
	for _, tc := range extractAnswerCases {
		f.Add(tc.response, tc.tag)
	}
	f.Add(`<answer>\boxed{\frac{3}{4}}</answer>`, "answer")
	f.Add(`\\boxed{\{}`, "")
	f.Fuzz(func(t *testing.T, response, tag string) {
		got, ok := ExtractAnswer(response, tag)
		if !ok {
			require.Empty(t, got)
			return
		}
		require.NotEmpty(t, got)
		require.Contains(t, response, got)
		require.Equal(t, got, strings.Trim(got, ansSpace), "answer not trimmed")
		again, ok2 := ExtractAnswer(response, tag)
		require.True(t, ok2)
		require.Equal(t, got, again)
	})
}

func FuzzEqualAnswers(f *testing.F) {
	for _, tc := range equalAnswersCases {
		f.Add(tc.pred, tc.ref)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab := EqualAnswers(a, b)
		require.Equal(t, ab, EqualAnswers(b, a), "not symmetric")
		require.Equal(t, ansNormalizeAnswer(a) != "", EqualAnswers(a, a), "reflexivity, normalised %q", ansNormalizeAnswer(a))
		require.Equal(t, ansNormalizeAnswer(b) != "", EqualAnswers(b, b), "reflexivity, normalised %q", ansNormalizeAnswer(b))
		if ansNormalizeAnswer(a) == ansNormalizeAnswer(b) {
			require.Equal(t, ansNormalizeAnswer(a) != "", ab, "same normal form %q", ansNormalizeAnswer(a))
		}
	})
}

// benchResponse is a realistic ~2 KB reasoning response in the default
// answer-tag format.
var benchResponse = func() string {
	var b strings.Builder
	b.WriteString("<think>\nWe need the probability that a randomly chosen card from the box is red, given the counts.\n")
	steps := []string{
		"The box holds 12 red cards and 4 blue cards, so 16 cards in total.",
		"Each card is equally likely to be drawn, so the probability is the count of red cards over the total.",
		"That gives $\\frac{12}{16}$, which simplifies by dividing numerator and denominator by 4.",
		"Check: $12 \\div 4 = 3$ and $16 \\div 4 = 4$, so the fraction is $\\frac{3}{4}$.",
		"As a sanity check, the blue probability is $\\frac{4}{16} = \\frac{1}{4}$, and $\\frac{3}{4} + \\frac{1}{4} = 1$.",
		"The time budget is fine: this took a few short steps, well under the limit.",
	}
	for b.Len() < 1900 {
		for _, s := range steps {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	b.WriteString("</think>\nThe probability of drawing a red card is three quarters.\n<answer>\\boxed{\\frac{3}{4}}</answer>")
	return b.String()
}()

func BenchmarkExtractAndCheck(b *testing.B) {
	b.SetBytes(int64(len(benchResponse)))
	b.ReportAllocs()
	for b.Loop() {
		ans, ok := ExtractAnswer(benchResponse, "answer")
		if !ok || !EqualAnswers(ans, "0.75") {
			b.Fatalf("extracted %q (found %v)", ans, ok)
		}
	}
}
