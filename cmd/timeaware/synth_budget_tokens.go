package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth"
	"github.com/timeaware/timeaware/synth/budget"
)

// defineTokenFlags adds the flags of synth budget --unit tokens, each bound
// to its config key.
func defineTokenFlags(fs *pflag.FlagSet) {
	fs.String("unit", "", "budget unit: seconds (the get_duration timer, data sources timely/*; the default) or tokens (the length rewards, length/*)")
	fs.String("reward", "", "--unit tokens: the rows' length reward, "+tokenRewardList()+" (default length/lcpo_max)")
	fs.String("token-budget-range", "", "--unit tokens: MIN,MAX: draw each budget uniformly from the whole numbers MIN to MAX (default 100,4000)")
	fs.String("token-budgets", "", "--unit tokens: comma-separated token budgets to draw from instead of the range")
	fs.Bool("every-token-budget", false, "--unit tokens: one row per budget of --token-budgets for every task")
	bindKey(fs, "unit", "synth.budget.unit")
	bindKey(fs, "reward", "synth.budget.token_reward")
	bindKey(fs, "token-budgets", "synth.budget.token_budgets")
	bindKey(fs, "token-budget-range", "synth.budget.token_budget_range")
	bindKey(fs, "every-token-budget", "synth.budget.every_token_budget")
}

func tokenRewardList() string {
	names := make([]string, len(budget.TokenRewards))
	for i, r := range budget.TokenRewards {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// unitFlags are the flags that only one unit reads: given with the other,
// they are a usage error rather than silently unused.
var unitFlags = map[budget.Unit][]string{
	budget.UnitSeconds: {"every-multiplier", "teacher-requests", "teacher-model"},
	budget.UnitTokens:  {"reward", "token-budgets", "token-budget-range", "every-token-budget"},
}

// budgetUnit reads synth.budget.unit and refuses the flags of the other
// unit.
func (a *app) budgetUnit() (budget.Unit, error) {
	unit, err := budget.ParseUnit(a.v.GetString("synth.budget.unit"))
	if err != nil {
		return "", a.badKey("synth.budget.unit", err)
	}
	other := budget.UnitTokens
	if unit == budget.UnitTokens {
		other = budget.UnitSeconds
	}
	for _, name := range unitFlags[other] {
		if a.cmd != nil && a.cmd.Flags().Changed(name) {
			return "", usagef("--%s applies to --unit %s only; the unit here is %s", name, other, unit)
		}
	}
	return unit, nil
}

// isTokenKey reports whether a synth.budget key configures token budgets.
func isTokenKey(key string) bool {
	return strings.HasPrefix(key, "synth.budget.token_") || strings.HasPrefix(key, "synth.budget.elastic_") ||
		key == "synth.budget.every_token_budget"
}

// budgetConfig is the manifest's record of synth.budget: the keys the
// unit reads (and the unit itself, the split and the format).
func budgetConfig(a *app, unit budget.Unit) map[string]any {
	var omit []string
	for _, key := range slices.Sorted(maps.Keys(defaults)) {
		if !strings.HasPrefix(key, "synth.budget.") || isTokenKey(key) == (unit == budget.UnitTokens) {
			continue
		}
		switch key {
		case "synth.budget.unit", "synth.budget.split", "synth.budget.format":
			continue
		}
		omit = append(omit, key)
	}
	return typedConfig(a.v, "synth.budget.", omit...)
}

// answerTagKey is the tag the length rewards read the answer from; the
// default system message of token rows asks for the answer in it.
const answerTagKey = "rewards.length.answer_tag"

// tokenOptions reads the synth.budget token keys over the reward's
// defaults. The system message names the answer tag the length rewards
// read (rewards.length.answer_tag), unless token_system_prompt replaces it.
func (a *app) tokenOptions(family budget.Family) (budget.TokenOptions, error) {
	v := a.v
	reward, err := budget.ParseTokenReward(v.GetString("synth.budget.token_reward"))
	if err != nil {
		return budget.TokenOptions{}, a.badKey("synth.budget.token_reward", err)
	}
	if a.cmd != nil && a.cmd.Flags().Changed("token-budgets") && a.cmd.Flags().Changed("token-budget-range") {
		return budget.TokenOptions{}, usagef("--token-budgets and --token-budget-range both give the budgets; give one")
	}
	if reward == budget.RewardElastic {
		for _, name := range []string{"token-budgets", "token-budget-range", "every-token-budget"} {
			if a.cmd != nil && a.cmd.Flags().Changed(name) {
				return budget.TokenOptions{}, usagef("--%s is not used by %s, whose rows take synth.budget.elastic_think_budget and elastic_answer_budget", name, reward)
			}
		}
	}
	o := budget.DefaultTokenOptions(reward)
	o.Family = family
	o.Prompts = budget.DefaultTokenPrompts(reward, v.GetString(answerTagKey))
	if o.Budgets, err = a.intList("synth.budget.token_budgets"); err != nil {
		return o, err
	}
	rng, err := a.intList("synth.budget.token_budget_range")
	if err != nil {
		return o, err
	}
	switch len(rng) {
	case 0:
	case 2:
		o.BudgetRange = [2]int{rng[0], rng[1]}
	default:
		return o, a.badKeyf("synth.budget.token_budget_range", "want \"min,max\" or empty, got %d numbers", len(rng))
	}
	o.EveryBudget = v.GetBool("synth.budget.every_token_budget")
	o.ThinkBudget = v.GetInt("synth.budget.elastic_think_budget")
	o.AnswerBudget = v.GetInt("synth.budget.elastic_answer_budget")
	o.Split = v.GetString("synth.budget.split")
	if s := v.GetString("synth.budget.token_system_prompt"); s != "" {
		o.Prompts.System = s
	}
	if s := v.GetString("synth.budget.token_prompts." + reward.Key()); s != "" {
		o.Prompts.Sentence = s
	}
	return o, nil
}

// intList reads a key's comma-separated list of whole numbers.
func (a *app) intList(key string) ([]int, error) {
	raw := strings.TrimSpace(a.v.GetString(key))
	if raw == "" {
		return nil, nil
	}
	var out []int
	for i, s := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, a.badKeyf(key, "entry %d %q is not a whole number", i+1, strings.TrimSpace(s))
		}
		out = append(out, n)
	}
	return out, nil
}

// runSynthBudgetTokens is synth budget --unit tokens, from the point where
// the flags common to both units are checked.
func (a *app) runSynthBudgetTokens(ctx context.Context, f *synthBudgetFlags, family budget.Family, sel func(string) bool) error {
	opt, err := a.tokenOptions(family)
	if err != nil {
		return err
	}
	opt.Seed, opt.Select = f.seed, sel
	config := budgetConfig(a, budget.UnitTokens)
	config["family"], config["test_fraction"] = string(family), f.testFraction
	if _, ok := defaults[answerTagKey]; ok {
		config[answerTagKey] = a.v.GetString(answerTagKey)
	}
	o, prog, err := a.synthOutput(&f.dataFlags, "synth.budget.format", f.labels, f.testFraction, "synth budget", config, 0)
	if err != nil {
		return err
	}
	tasks := output.OpenInput(f.input)
	prog.Reading([]*output.Input{tasks})
	w, err := budget.WriteTokens(ctx, opt, tasks, o)
	prog.Done()
	if err != nil {
		return a.budgetError(err, budgetKeys(family))
	}
	printWritten(a.stdout, "synth budget", "row", w.Outputs, w.Split, w.ManifestPath, tokenBudgetLines(w)...)
	return nil
}

// tokenBudgetLines are the summary lines of a token-budgeted build.
func tokenBudgetLines(w *synth.Written[*budget.TokenSummary]) []string {
	s := w.Summary
	tasks := fmt.Sprintf("tasks:       %d read", s.Tasks)
	if s.Skipped > 0 {
		tasks += fmt.Sprintf(", %d left to other shards", s.Skipped)
	}
	lines := []string{tasks + fmt.Sprintf("; family %s, data source %s", s.Family, s.DataSource)}
	if s.ThinkBudget > 0 {
		return append(lines, fmt.Sprintf("budgets:     thinking %d tokens, answer %d tokens (token_budget %d) in every row",
			s.ThinkBudget, s.AnswerBudget, s.ThinkBudget+s.AnswerBudget))
	}
	if len(s.ByBudget) <= 8 {
		byBudget := map[int]int{}
		for k, n := range s.ByBudget {
			b, _ := strconv.Atoi(k)
			byBudget[b] = n
		}
		parts := make([]string, 0, len(byBudget))
		for _, b := range slices.Sorted(maps.Keys(byBudget)) {
			parts = append(parts, fmt.Sprintf("%d %d", b, byBudget[b]))
		}
		lines = append(lines, "budgets:     "+strings.Join(parts, ", "))
	} else {
		lines = append(lines, fmt.Sprintf("budgets:     %d values from %d to %d (counts in the manifest)", len(s.ByBudget), s.BudgetMin, s.BudgetMax))
	}
	if s.Rows > 0 {
		lines = append(lines, fmt.Sprintf("tokens:      min %d, mean %.1f, max %d", s.BudgetMin, s.BudgetMean, s.BudgetMax))
	}
	return lines
}
