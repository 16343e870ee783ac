package budget

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func buildTokens(t *testing.T, input string, opt TokenOptions) ([]TokenRow, *TokenSummary) {
	t.Helper()
	var rows []TokenRow
	sum, err := BuildTokens(context.Background(), strings.NewReader(input), "tasks.jsonl", opt, func(r *TokenRow) error {
		rows = append(rows, *r)
		return nil
	})
	require.NoError(t, err)
	return rows, sum
}

func tokenRowsByTask(rows []TokenRow) map[string][]TokenRow {
	m := map[string][]TokenRow{}
	for _, r := range rows {
		r.Index = 0 // the position in the input, which shuffling changes
		m[r.TaskID] = append(m[r.TaskID], r)
	}
	return m
}

// The default sentences, written out here rather than taken from
// DefaultTokenPrompts, with the number they must state.
var defaultSentences = map[TokenReward]*regexp.Regexp{
	RewardLCPOExact:  regexp.MustCompile(`\n\nSpend (\d+) tokens on your reasoning, as close to that count as you can, before you answer\.$`),
	RewardLCPOMax:    regexp.MustCompile(`\n\nSpend at most (\d+) tokens on your reasoning before you answer\.$`),
	RewardThinkPrune: regexp.MustCompile(`\n\nKeep your whole reply within (\d+) tokens; a reply that runs longer earns nothing\.$`),
}

func TestParseTokenReward(t *testing.T) {
	for _, name := range []string{"length/lcpo_exact", "length/lcpo_max", "length/thinkprune", "length/elastic"} {
		r, err := ParseTokenReward(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, string(r))
		assert.Equal(t, strings.TrimPrefix(name, "length/"), r.Key())
	}
	_, err := ParseTokenReward("length/anytime")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "extra_info.anytime", "the reason it is refused")
	for _, bad := range []string{"", "lcpo_max", "timely/general", "length/LCPO_MAX"} {
		_, err := ParseTokenReward(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "length/lcpo_exact, length/lcpo_max, length/thinkprune or length/elastic")
	}
	for _, s := range []string{"seconds", "tokens"} {
		u, err := ParseUnit(s)
		require.NoError(t, err)
		assert.Equal(t, s, string(u))
	}
	_, err = ParseUnit("words")
	assert.EqualError(t, err, `unit "words" is not seconds or tokens`)
}

func TestTokenOptionsNameTheBadKey(t *testing.T) {
	tests := []struct {
		name   string
		reward TokenReward
		mutate func(*TokenOptions)
		key    string
		want   string
	}{
		{"unknown reward", "length/long", nil, "token_reward", `reward "length/long" is not one of`},
		{"anytime", "length/anytime", nil, "token_reward", "extra_info.anytime"},
		{"game tasks", RewardLCPOMax, func(o *TokenOptions) { o.Family = FamilyGame }, "family", "game tasks are scored by their environment"},
		{"ml tasks", RewardThinkPrune, func(o *TokenOptions) { o.Family = FamilyML }, "family", "ml tasks"},
		{"no budgets", RewardLCPOMax, func(o *TokenOptions) { o.BudgetRange = [2]int{} }, "token_budget_range", "no range, and no token_budgets either"},
		{"zero budget", RewardLCPOMax, func(o *TokenOptions) { o.Budgets = []int{512, 0} }, "token_budgets", "entry 2 (0) is not a whole number of tokens from 1 to 10000000"},
		{"negative budget", RewardLCPOExact, func(o *TokenOptions) { o.Budgets = []int{-5} }, "token_budgets", "entry 1 (-5)"},
		{"huge budget", RewardLCPOExact, func(o *TokenOptions) { o.Budgets = []int{MaxTokenBudget + 1} }, "token_budgets", "entry 1 (10000001)"},
		{"range min > max", RewardLCPOMax, func(o *TokenOptions) { o.BudgetRange = [2]int{4000, 100} }, "token_budget_range", "[4000, 100] is not a range"},
		{"range from zero", RewardLCPOMax, func(o *TokenOptions) { o.BudgetRange = [2]int{0, 100} }, "token_budget_range", "[0, 100]"},
		{"range without a top", RewardLCPOMax, func(o *TokenOptions) { o.BudgetRange = [2]int{100, 0} }, "token_budget_range", "[100, 0]"},
		{"every budget of a range", RewardLCPOMax, func(o *TokenOptions) { o.EveryBudget = true }, "every_token_budget", "needs a set"},
		{"a bad range under a set", RewardLCPOMax, func(o *TokenOptions) { o.Budgets, o.BudgetRange = []int{0}, [2]int{1, 2} }, "token_budgets", "entry 1 (0)"},
		{"elastic think budget", RewardElastic, func(o *TokenOptions) { o.ThinkBudget = 0 }, "elastic_think_budget", "0 is not a whole number of tokens"},
		{"elastic answer budget", RewardElastic, func(o *TokenOptions) { o.AnswerBudget = -1 }, "elastic_answer_budget", "-1 is not"},
		{"empty split", RewardLCPOMax, func(o *TokenOptions) { o.Split = " " }, "split", "empty"},
		{"empty system prompt", RewardLCPOMax, func(o *TokenOptions) { o.Prompts.System = "" }, "token_system_prompt", "empty"},
		{"sentence without budget", RewardLCPOMax, func(o *TokenOptions) { o.Prompts.Sentence = "Be brief." }, "token_prompts.lcpo_max", `"Be brief." does not contain {budget}`},
		{"sentence with elastic's placeholders", RewardThinkPrune, func(o *TokenOptions) { o.Prompts.Sentence = "{budget} in all, {think_budget} thinking." },
			"token_prompts.thinkprune", "contains {think_budget}, which length/thinkprune rows do not fill (they fill {budget})"},
		{"elastic sentence without the answer budget", RewardElastic, func(o *TokenOptions) { o.Prompts.Sentence = "Think {think_budget} tokens." },
			"token_prompts.elastic", "does not contain {answer_budget}"},
		{"elastic sentence with one budget", RewardElastic, func(o *TokenOptions) { o.Prompts.Sentence = "{think_budget}, {answer_budget}, {budget}" },
			"token_prompts.elastic", "contains {budget}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultTokenOptions(tt.reward)
			if tt.mutate != nil {
				tt.mutate(&opt)
			}
			err := opt.Validate()
			var oe *synth.OptionError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, "budget", oe.Family)
			assert.Equal(t, tt.key, oe.Key)
			assert.Contains(t, oe.Err.Error(), tt.want)
			_, err = NewTokenGenerator(opt)
			assert.Error(t, err)
		})
	}
	for _, r := range TokenRewards {
		opt := DefaultTokenOptions(r)
		assert.NoError(t, opt.Validate(), r)
		opt.BudgetRange = [2]int{7, 7}
		assert.NoError(t, opt.Validate(), "a range of one value")
	}
}

func TestTokenBudgetsFromTheSet(t *testing.T) {
	const n = 4000
	lines := taskLines(n)
	for _, r := range []TokenReward{RewardLCPOExact, RewardLCPOMax, RewardThinkPrune} {
		t.Run(r.Key(), func(t *testing.T) {
			opt := DefaultTokenOptions(r)
			opt.Seed = 21
			opt.Budgets = []int{300, 1000, 2500}
			rows, sum := buildTokens(t, strings.Join(lines, "\n"), opt)
			require.Len(t, rows, n)
			counts := map[int]int{}
			for i, row := range rows {
				counts[row.TokenBudget]++
				m := defaultSentences[r].FindStringSubmatch(row.User)
				require.NotNil(t, m, row.User)
				assert.Equal(t, strconv.Itoa(row.TokenBudget), m[1], "the prompt states the row's budget")
				assert.Equal(t, fmt.Sprintf("What is %d + %d?\n\n", i, i), row.User[:len(row.User)-len(m[0])+2])
				assert.Equal(t, string(r), row.DataSource)
				assert.Equal(t, strconv.Itoa(2*i), row.GroundTruth)
				assert.Equal(t, "general", row.Ability)
				assert.Equal(t, "train", row.Split)
				assert.Equal(t, int64(i), row.Index)
				assert.Equal(t, fmt.Sprintf("task-%d#0", i), row.RequestID())
				assert.Zero(t, row.ThinkBudget+row.AnswerBudget)
				assert.Equal(t, "Work the problem through, then give your final answer inside <answer></answer>, for example <answer>42</answer>.", row.System)
			}
			require.Len(t, counts, 3, "only the set's budgets, each of them")
			for _, b := range opt.Budgets {
				// Binomial counts: within 5 standard deviations.
				p := 1.0 / 3
				assert.InDelta(t, n*p, float64(counts[b]), 5*math.Sqrt(n*p*(1-p)), "budget %d", b)
				assert.Equal(t, counts[b], sum.ByBudget[strconv.Itoa(b)])
			}
			assert.Equal(t, n, sum.Tasks)
			assert.Equal(t, n, sum.Rows)
			assert.Equal(t, 300, sum.BudgetMin)
			assert.Equal(t, 2500, sum.BudgetMax)
			assert.InDelta(t, float64(300*counts[300]+1000*counts[1000]+2500*counts[2500])/n, sum.BudgetMean, 1e-9)
			assert.Equal(t, UnitTokens, sum.Unit)
			assert.Equal(t, string(r), sum.DataSource)
		})
	}
}

func TestTokenBudgetsFromTheRangeAreUniformIntegersBothEndsIncluded(t *testing.T) {
	const n = 6000
	opt := DefaultTokenOptions(RewardLCPOMax)
	opt.Seed = 5
	opt.BudgetRange = [2]int{98, 103}
	rows, _ := buildTokens(t, strings.Join(taskLines(n), "\n"), opt)
	counts := map[int]int{}
	for _, r := range rows {
		counts[r.TokenBudget]++
	}
	require.Len(t, counts, 6, "every integer from 98 to 103, and nothing else: %v", counts)
	for b := 98; b <= 103; b++ {
		p := 1.0 / 6
		assert.InDelta(t, n*p, float64(counts[b]), 5*math.Sqrt(n*p*(1-p)), "budget %d", b)
	}

	opt.BudgetRange = [2]int{100, 4000} // L1's range of n_gold
	rows, sum := buildTokens(t, strings.Join(taskLines(n), "\n"), opt)
	var mean float64
	for _, r := range rows {
		require.True(t, r.TokenBudget >= 100 && r.TokenBudget <= 4000, r.TokenBudget)
		mean += float64(r.TokenBudget) / n
	}
	// Uniform on 100..4000: mean 2050, sd ≈ 1126, standard error ≈ 14.5.
	assert.InDelta(t, 2050, mean, 5*1126/math.Sqrt(n))
	assert.Less(t, 50, len(sum.ByBudget))
}

func TestTokenBudgetsAreDeterministicPerSeedAndTaskID(t *testing.T) {
	lines := taskLines(300)
	input := strings.Join(lines, "\n")
	for _, set := range [][]int{nil, {512, 1024, 2048, 4096}} {
		opt := DefaultTokenOptions(RewardLCPOExact)
		opt.Seed, opt.Budgets = 11, set
		first, _ := buildTokens(t, input, opt)
		again, _ := buildTokens(t, input, opt)
		assert.Equal(t, first, again, "same seed, same rows")

		opt.Seed = 12
		other, _ := buildTokens(t, input, opt)
		assert.NotEqual(t, tokenRowsByTask(first), tokenRowsByTask(other), "another seed draws other budgets")

		shuffled := append([]string(nil), lines...)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		opt.Seed = 11
		rows, _ := buildTokens(t, strings.Join(shuffled, "\n"), opt)
		assert.Equal(t, tokenRowsByTask(first), tokenRowsByTask(rows), "a task's rows do not depend on its position")

		union := map[string][]TokenRow{}
		skipped := 0
		for i := range 3 {
			o := opt
			o.Select = func(id string) bool { n, _ := strconv.Atoi(strings.TrimPrefix(id, "task-")); return n%3 == i }
			rows, sum := buildTokens(t, input, o)
			skipped += sum.Skipped
			for id, r := range tokenRowsByTask(rows) {
				require.NotContains(t, union, id)
				union[id] = r
			}
		}
		assert.Equal(t, tokenRowsByTask(first), union, "three shards give the rows of the whole")
		assert.Equal(t, 2*300, skipped)
	}
}

func TestEveryTokenBudget(t *testing.T) {
	opt := DefaultTokenOptions(RewardThinkPrune)
	opt.EveryBudget = true
	opt.Budgets = []int{4000, 3000, 2000}
	rows, sum := buildTokens(t, strings.Join(taskLines(5), "\n"), opt)
	require.Len(t, rows, 15)
	for i, r := range rows {
		assert.Equal(t, fmt.Sprintf("task-%d", i/3), r.TaskID)
		assert.Equal(t, i%3, r.Variant)
		assert.Equal(t, opt.Budgets[i%3], r.TokenBudget, "the set's budgets in their order")
		assert.Equal(t, fmt.Sprintf("task-%d#%d", i/3, i%3), r.RequestID())
	}
	assert.Equal(t, map[string]int{"2000": 5, "3000": 5, "4000": 5}, sum.ByBudget)
}

func TestElasticRowsCarryBothBudgets(t *testing.T) {
	opt := DefaultTokenOptions(RewardElastic)
	opt.ThinkBudget, opt.AnswerBudget = 900, 250
	opt.Budgets = []int{1, 2} // not used by elastic rows
	opt.EveryBudget = true
	rows, sum := buildTokens(t, `{"id":"a","question":"Q?  ","answer":"x","split":"val","ability":"math"}`, opt)
	require.Len(t, rows, 1)
	r := rows[0]
	assert.Equal(t, "length/elastic", r.DataSource)
	assert.Equal(t, 900, r.ThinkBudget)
	assert.Equal(t, 250, r.AnswerBudget)
	assert.Equal(t, 1150, r.TokenBudget, "token_budget is t + s")
	assert.Equal(t, "Q?\n\nSpend at most 900 tokens on your thinking and at most 250 tokens on the answer that follows it.", r.User)
	assert.Equal(t, "val", r.Split)
	assert.Equal(t, "math", r.Ability)
	assert.Equal(t, "x", r.GroundTruth)
	assert.Equal(t, 900, sum.ThinkBudget)
	assert.Equal(t, 250, sum.AnswerBudget)
	assert.Equal(t, map[string]int{"1150": 1}, sum.ByBudget)
}

func TestTokenPromptsFromConfig(t *testing.T) {
	opt := DefaultTokenOptions(RewardLCPOMax)
	opt.Budgets = []int{64}
	opt.Prompts = TokenPrompts{System: "Be terse.", Sentence: "At most {budget} tokens ({budget} is a hard cap)."}
	rows, _ := buildTokens(t, `{"id":"a","question":"Q","answer":1}`, opt)
	assert.Equal(t, "Q\n\nAt most 64 tokens (64 is a hard cap).", rows[0].User, "every placeholder is filled")
	assert.Equal(t, "Be terse.", rows[0].System)

	p := DefaultTokenPrompts(RewardLCPOMax, "final")
	assert.Equal(t, "Work the problem through, then give your final answer inside <final></final>, for example <final>42</final>.", p.System,
		"the system message names the reward's answer tag")
	assert.Equal(t, `Work the problem through, then give your final answer as \boxed{}, for example \boxed{42}.`,
		DefaultTokenPrompts(RewardElastic, "").System, "without a tag the plain check reads \\boxed{}")
}

func TestTokenRowsOfGameOrMLTasksAreRefused(t *testing.T) {
	opt := DefaultTokenOptions(RewardLCPOMax)
	opt.Family = FamilyGame
	_, err := BuildTokens(context.Background(), strings.NewReader(`{"id":"g","question":"Play"}`), "games.jsonl", opt, func(*TokenRow) error { return nil })
	var oe *synth.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "family", oe.Key)

	g, err := NewTokenGenerator(DefaultTokenOptions(RewardLCPOMax))
	require.NoError(t, err)
	_, err = g.Rows(&Task{ID: "g", Question: "Play"}, nil)
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "answer", le.Field)
}

func TestBuildTokensNamesTheBadLine(t *testing.T) {
	_, err := BuildTokens(context.Background(), strings.NewReader(`{"id":"a","question":"Q","answer":1}`+"\n\n"+`{"id":"b","question":"Q"}`),
		"tasks.jsonl", DefaultTokenOptions(RewardLCPOMax), func(*TokenRow) error { return nil })
	assert.EqualError(t, err, "budget: tasks.jsonl: line 3 (id b): answer: missing: a general task needs its reference answer (the reward compares against it)")
}

// writeTokens writes tasks' token rows with WriteTokens and returns the
// result and the output's path.
func writeTokens(t *testing.T, tasks, name string, format *dataset.Format, opt TokenOptions, testFraction float64) (*synth.Written[*TokenSummary], string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	o := synth.Output{Path: out, Format: format, TestFraction: testFraction,
		Manifest: output.Manifest{Tool: "timeaware", Version: "test", Command: "synth budget", Config: map[string]any{"seed": 7}}}
	w, err := WriteTokens(context.Background(), opt, output.OpenInput(tasks), o)
	require.NoError(t, err)
	return w, out
}

func TestWriteTokensTypesTheBudgetsAsIntegers(t *testing.T) {
	tasks := writeInput(t, t.TempDir(), "tasks.jsonl", taskLines(9))
	for _, r := range TokenRewards {
		t.Run(r.Key(), func(t *testing.T) {
			w, out := writeTokens(t, tasks, "rows.parquet", dataset.Parquet, DefaultTokenOptions(r), 0)
			assert.Equal(t, 9, w.Summary.Rows)
			f, err := os.Open(out)
			require.NoError(t, err)
			defer f.Close()
			rd, err := dataset.Open(f, out, nil, dataset.ReadOptions{})
			require.NoError(t, err)
			defer rd.Close()
			schema := rd.Schema()
			assert.Equal(t, []string{"data_source", "prompt", "ability", "reward_model", "extra_info"}, fieldNames(schema.Fields()),
				"no agent_name: VeRL's default agent loop")
			ei := schema.Field(4).Type.(*arrow.StructType)
			want := []string{"split", "index", "task_id", "variant", "request_id", "answer_check", "token_budget"}
			if r == RewardElastic {
				want = append(want, "think_budget", "answer_budget")
			}
			assert.Equal(t, want, fieldNames(ei.Fields()))
			for _, name := range []string{"index", "variant", "token_budget", "think_budget", "answer_budget"} {
				if i, ok := ei.FieldIdx(name); ok {
					assert.Equal(t, arrow.INT64, ei.Field(i).Type.ID(), name)
				}
			}

			m, err := output.ReadManifest(w.ManifestPath, true)
			require.NoError(t, err)
			require.Len(t, m.Inputs, 1)
			assert.Equal(t, fileSHA(t, tasks), m.Inputs[0].SHA256)
			assert.Equal(t, RoleTasks, m.Inputs[0].Role)
			assert.Equal(t, string(r), m.Summary.(map[string]any)["data_source"])
		})
	}
}

func fieldNames(fs []arrow.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func TestWriteTokensSplitsTasksWhole(t *testing.T) {
	tasks := writeInput(t, t.TempDir(), "tasks.jsonl", taskLines(10))
	opt := DefaultTokenOptions(RewardThinkPrune)
	opt.EveryBudget, opt.Budgets = true, []int{512, 1024, 2048, 4096}
	w, out := writeTokens(t, tasks, "rows.jsonl", dataset.JSONL, opt, 0.3)
	require.Len(t, w.Outputs, 2)
	side := map[string]string{}
	perSide := map[string]int{}
	for _, s := range []string{output.Train, output.Test} {
		for _, row := range jsonLines(t, output.SidePath(out, s)) {
			ei := row["extra_info"].(map[string]any)
			id := ei["task_id"].(string)
			assert.Equal(t, s, ei["split"])
			if prev, ok := side[id]; ok {
				assert.Equal(t, prev, s, "task %s straddles the split", id)
			}
			side[id] = s
			perSide[s]++
		}
	}
	assert.Equal(t, map[string]int{output.Train: 7 * 4, output.Test: 3 * 4}, perSide, "round(0.3 × 10) tasks with their four rows on the test side")
}

func TestWriteTokensFailsWithoutFiles(t *testing.T) {
	dir := t.TempDir()
	tasks := writeInput(t, dir, "tasks.jsonl", []string{`{"id":"a","question":"Q","answer":1}`, `{"id":"b","question":"Q","answer":1,"steps":3}`})
	out := filepath.Join(dir, "rows.parquet")
	o := synth.Output{Path: out, Format: dataset.Parquet}
	_, err := WriteTokens(context.Background(), DefaultTokenOptions(RewardLCPOMax), output.OpenInput(tasks), o)
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "steps", le.Field)
	bad := DefaultTokenOptions(RewardLCPOMax)
	bad.Budgets = []int{0}
	_, err = WriteTokens(context.Background(), bad, output.OpenInput(tasks), o)
	var oe *synth.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, []string{"tasks.jsonl"}, entries(t, dir), "nothing written")
	var fe *FileError
	assert.False(t, errors.As(err, &fe), "a bad line or option is not the output's error")

	// An output that cannot be created is the output's error, naming it.
	good := writeInput(t, dir, "good.jsonl", []string{`{"id":"a","question":"Q","answer":1}`})
	o.Path = filepath.Join(tasks, "rows.parquet")
	_, err = WriteTokens(context.Background(), DefaultTokenOptions(RewardLCPOMax), output.OpenInput(good), o)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, FileError{Role: RoleRows, Path: o.Path, Err: fe.Err}, *fe)
}

// TestTokenRowsGolden holds small outputs of the demo tasks to their
// golden files, byte for byte; go test ./synth/budget -update rewrites
// them.
func TestTokenRowsGolden(t *testing.T) {
	const tasks = "../../examples/budget/tasks.jsonl"
	for _, c := range []struct {
		name   string
		reward TokenReward
		mutate func(*TokenOptions)
	}{
		{"lcpo_max_set", RewardLCPOMax, func(o *TokenOptions) { o.Budgets = []int{512, 1024, 2048, 4096} }},
		{"lcpo_exact_range", RewardLCPOExact, nil},
		{"elastic", RewardElastic, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := DefaultTokenOptions(c.reward)
			opt.Seed = 19
			if c.mutate != nil {
				c.mutate(&opt)
			}
			_, out := writeTokens(t, tasks, "rows.jsonl", dataset.JSONL, opt, 0)
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			golden := filepath.Join("testdata", "tokens_"+c.name+".golden.jsonl")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./synth/budget -run TestTokenRowsGolden -update to write it")
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestTokenRewardsAreTheLengthRewards: every reward a token row can name
// is registered in rewards.All, and every length reward there is either
// one of them or anytime, which ParseTokenReward refuses with its reason.
func TestTokenRewardsAreTheLengthRewards(t *testing.T) {
	for _, r := range TokenRewards {
		_, ok := rewards.Lookup(string(r))
		assert.True(t, ok, "%s is not a registered reward", r)
	}
	for _, r := range rewards.All {
		if !strings.HasPrefix(r.DataSource, "length/") {
			continue
		}
		_, err := ParseTokenReward(r.DataSource)
		if r.DataSource == rewards.Anytime.DataSource {
			assert.ErrorContains(t, err, "extra_info.anytime")
			continue
		}
		if r.DataSource == rewards.DAPOOverlong.DataSource || r.DataSource == rewards.CosineScaled.DataSource {
			assert.ErrorContains(t, err, "the generation cap, which a prompt does not state")
			continue
		}
		if r.DataSource == rewards.ALP.DataSource {
			assert.ErrorContains(t, err, "the solve rate of its group, which a prompt does not state")
			continue
		}
		if r.Grouped() {
			assert.ErrorContains(t, err, "the other completions of its group, which a prompt does not state")
			continue
		}
		assert.NoError(t, err, r.DataSource)
	}
}

// TestTokenBudgetBounds: the least and the greatest budget are accepted,
// in a set and in a range, and each elastic budget.
func TestTokenBudgetBounds(t *testing.T) {
	opt := DefaultTokenOptions(RewardLCPOMax)
	opt.Budgets = []int{1, MaxTokenBudget}
	require.NoError(t, opt.Validate())
	opt.Budgets, opt.BudgetRange = nil, [2]int{1, MaxTokenBudget}
	require.NoError(t, opt.Validate())
	opt = DefaultTokenOptions(RewardElastic)
	opt.ThinkBudget, opt.AnswerBudget = 1, MaxTokenBudget
	require.NoError(t, opt.Validate())
	opt.ThinkBudget = MaxTokenBudget + 1
	require.Error(t, opt.Validate())
}

// TestTokenSummaryAdd: the summary's least, greatest and mean budget and
// its counts over rows in any order.
func TestTokenSummaryAdd(t *testing.T) {
	s := &TokenSummary{ByBudget: map[string]int{}}
	for _, b := range []int{1000, 300, 300, 2500} {
		s.add(&TokenRow{TokenBudget: b})
	}
	assert.Equal(t, 4, s.Rows)
	assert.Equal(t, 300, s.BudgetMin)
	assert.Equal(t, 2500, s.BudgetMax)
	assert.InDelta(t, (1000+300+2500+300)/4.0, s.BudgetMean, 1e-12)
	assert.Equal(t, map[string]int{"300": 2, "1000": 1, "2500": 1}, s.ByBudget)
}
