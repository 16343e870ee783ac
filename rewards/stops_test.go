package rewards

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rightAnswers holds, for every data source, a response that earns the
// stated score. TestStopStringsEveryReward requires an entry for each
// reward in All, so a new reward gets the check too.
var rightAnswers = map[string]struct {
	item  Item
	score float64
}{
	"timely/general": {Item{SolutionStr: "21 = 3 * 7.\n<answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{TimeLimitS: f64(10), ElapsedS: f64(5)}}, 0.1 + 0.5 + 0.4*0.7071067811865476},
	"timely/game": {Item{SolutionStr: "<answer>done</answer>",
		ExtraInfo: ExtraInfo{TimeLimitS: f64(10), ElapsedS: f64(10), Score: f64(8), MaxScore: f64(8)}}, 0.1 + 1 + 0.4},
	"timely/ml": {Item{SolutionStr: "<answer>trained</answer>",
		ExtraInfo: ExtraInfo{TimeLimitS: f64(10), ElapsedS: f64(10), Accuracy: f64(1)}}, 0.1 + 0.5 + 0.4},
	"tictoc/decision": {Item{SolutionStr: `<tool_call>{"name": "get_status", "arguments": {}}</tool_call>`,
		GroundTruth: json.RawMessage(`{"preferred": "tool", "margin": 1}`)}, 1},
	"timepuzzles": {Item{SolutionStr: "The Tuesday is the 15th.\nMY ANSWER: 2023-08-15",
		GroundTruth: json.RawMessage(`"2023-08-15"`)}, 1},
	"traveler": {Item{SolutionStr: "Tom did it twice.\nANSWER: 2",
		GroundTruth: json.RawMessage(`{"category": "explicit", "template": "how_often", "answer": 2}`)}, 1},
	"negotiation": {Item{SolutionStr: `{"role": "seller", "text": "High price, fast delivery?", "action": {"action": "propose", "offer": {"price": "high", "delivery": "fast"}}}
{"role": "buyer", "text": "Yes, it's a deal.", "action": {"action": "accept"}}`,
		GroundTruth: json.RawMessage(`{"scenario": {"id": "toy", "roles": [{"id": "seller", "batna": 3}, {"id": "buyer", "batna": 2}],
		  "issues": [{"id": "price", "options": ["low", "high"], "points": {"seller": [0, 8], "buyer": [6, 0]}},
		             {"id": "delivery", "options": ["slow", "fast"], "points": {"seller": [2, 1], "buyer": [0, 5]}}]},
		  "role": "seller", "condition": "time_aware", "deadline_s": 10, "first_speaker": "seller"}`)}, 8.0 / 9},
	// 1 − 0.0003·|500 − 400|
	"length/lcpo_exact": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400), ThinkTokens: f64(300), AnswerTokens: f64(90), TokenBudget: f64(500)}}, 0.97},
	// 1 · clip(0.0003·(500 − 400) + 0.5, 0, 1)
	"length/lcpo_max": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400), TokenBudget: f64(500)}}, 0.53},
	"length/thinkprune": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400), TokenBudget: f64(400)}}, 1},
	// right (+1), 1928 tokens of L_max 5000 with the default buffer 4096:
	// 1 + ((5000 − 4096) − 1928)/4096
	"length/dapo": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(1928), TokenBudget: f64(5000)}}, 1 + (904.0-1928)/4096},
	// 1 at length 0 to 0.5 at L_max: a quarter of the way, 0.75 + 0.25·cos(π/4)
	"length/cosine": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(1024)}}, 0.75 + 0.25*math.Sqrt2/2},
	// a group of one: no length term
	"length/kimi": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400)}, Group: "g", GroupSize: 1}, 1},
	// a group of one: SOL is its own length, α = 2
	"length/shorterbetter": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400)}}, 2},
	// a group of one pays the full weight: 1 − 1e-7·400
	"length/alp": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400)}}, 1 - 4e-5},
	"length/elastic": {Item{SolutionStr: "<think>Three sevens.</think><answer>21</answer>", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{ResponseTokens: f64(400), ThinkTokens: f64(300), AnswerTokens: f64(90)}}, 1},
	"timeqa":       {Item{SolutionStr: "He owned it then.\nAnswer: George Peter", GroundTruth: json.RawMessage(`"{\"answers\": [\"George Peter\"]}"`)}, 1},
	"tempreason":   {Item{SolutionStr: "Answer: the Oct, 1874.", GroundTruth: json.RawMessage(`{"answers": ["Oct, 1874"]}`)}, 1},
	"tram":         {Item{SolutionStr: "Answer: (C)", GroundTruth: json.RawMessage(`{"letter": "C", "options": {"A": "a", "B": "b", "C": "c"}}`)}, 1},
	"test_of_time": {Item{SolutionStr: "```json\n{\"explanation\": \"x\", \"answer\": \"E76\"}\n```", GroundTruth: json.RawMessage(`{"kind": "semantic", "label": {"answer": "E76"}}`)}, 1},
	// uniform over two budgets, right at the second only
	"length/anytime": {Item{SolutionStr: "<think>Three sevens", GroundTruth: json.RawMessage(`"21"`),
		ExtraInfo: ExtraInfo{Anytime: json.RawMessage(`[{"budget": 100, "summary": "<answer>7</answer>"}, {"budget": 200, "summary": "<answer>21</answer>"}]`)}}, 0.5},
}

// endings are the texts trainers leave after a response: each family's
// end-of-turn token, padding after it, and white space between them.
var endings = []string{
	"<|im_end|>", "<|im_end|>\n", "<|im_end|><|endoftext|><|endoftext|>", // Qwen, padded batch
	"<|endoftext|>",                           // GPT-2 family
	"<|eot_id|>", "<|eot_id|><|end_of_text|>", // Llama 3
	"<|eom_id|>", "<|eot_id|><|finetune_right_pad_id|><|finetune_right_pad_id|>",
	"</s>", " </s>", "\n</s>\n", // Llama 2, Mistral
	"<|return|>", "<|end|>", // GPT (harmony)
	"<end_of_turn>\n<eos>", "<eos><pad><pad>", // Gemma
	"<｜end▁of▁sentence｜>", // DeepSeek
}

// TestStopStringsEveryReward scores every reward's right answer with each
// family's trailing tokens: the score and every detail stay as they are
// without them.
func TestStopStringsEveryReward(t *testing.T) {
	s := newTestScorer(t, nil)
	for _, r := range All {
		t.Run(r.DataSource, func(t *testing.T) {
			ex, ok := rightAnswers[r.DataSource]
			require.True(t, ok, "rightAnswers has no entry for %s", r.DataSource)
			it := ex.item
			it.DataSource = r.DataSource
			clean := s.Score(context.Background(), &it)
			require.NoError(t, clean.Err)
			require.InDelta(t, ex.score, clean.Score, 1e-12)
			for _, end := range endings {
				dirty := it
				dirty.SolutionStr += end
				res := s.Score(context.Background(), &dirty)
				require.NoError(t, res.Err, "ending %q", end)
				assert.InDelta(t, ex.score, res.Score, 1e-12, "ending %q", end)
				assert.Equal(t, clean.Details, res.Details, "ending %q", end)
			}
		})
	}
}

// TestStopStringsConfig: an empty list turns the stripping off (the
// response is read as sent), a custom list strips only its own strings, and
// an empty entry is a config error naming it.
func TestStopStringsConfig(t *testing.T) {
	it := Item{DataSource: "timepuzzles", SolutionStr: "MY ANSWER: 2023-08-15<|im_end|>", GroundTruth: json.RawMessage(`"2023-08-15"`)}
	off := newTestScorer(t, func(c *Config) { c.StopStrings = nil })
	assert.Zero(t, off.Score(context.Background(), &it).Score)

	custom := newTestScorer(t, func(c *Config) { c.StopStrings = []string{"[END]"} })
	it.SolutionStr = "MY ANSWER: 2023-08-15 [END]\n[END]"
	assert.Equal(t, 1.0, custom.Score(context.Background(), &it).Score)
	it.SolutionStr = "MY ANSWER: 2023-08-15<|im_end|>"
	assert.Zero(t, custom.Score(context.Background(), &it).Score)

	cfg := DefaultConfig()
	cfg.StopStrings = []string{"</s>", " "}
	_, err := NewScorer(cfg, nil)
	assert.EqualError(t, err, "rewards: stop_strings: entry 2 is empty")
}

func TestTrimStops(t *testing.T) {
	stops := []string{"<|im_end|>", "<|endoftext|>", "</s>"}
	tests := []struct{ in, want string }{
		{"", ""},
		{"answer", "answer"},
		{"answer  \n", "answer  \n"}, // no stop string: white space stays
		{"answer<|im_end|>", "answer"},
		{"answer \n<|im_end|>\n<|endoftext|><|endoftext|>", "answer"},
		{"<|im_end|>", ""},
		{"a </s> b", "a </s> b"},                   // only at the end
		{"a<|im_end|>b<|im_end|>", "a<|im_end|>b"}, // one run at the end
		{"answer<|im_end", "answer<|im_end"},       // a cut-off token is not a stop string
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, trimStops(tt.in, stops), "%q", tt.in)
	}
	assert.Equal(t, "x</s>", trimStops("x</s>", nil))
	assert.Equal(t, "x</s>", trimStops("x</s>", []string{""}), "an empty stop string is ignored, not looped on")
}
