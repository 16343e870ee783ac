package main

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
	"github.com/timeaware/timeaware/tokenizer"
)

// tokenizerError is the reason a tokenizer.json cannot be read, without
// the path that badKey shows already.
func tokenizerError(path string, err error) error {
	if reason, ok := strings.CutPrefix(err.Error(), path+": "); ok {
		return errors.New(reason)
	}
	return err
}

// rewardsConfig builds the rewards configuration from the rewards.* keys.
func (a *app) rewardsConfig() (rewards.Config, error) {
	v := a.v
	c := rewards.DefaultConfig()
	c.FallbackScore = v.GetFloat64("rewards.fallback_score")
	c.StopStrings = v.GetStringSlice("rewards.stop_strings")
	t := &c.Timely
	t.Utilization = v.GetString("rewards.timely.utilization")
	t.StepTable = nil
	if raw := strings.TrimSpace(v.GetString("rewards.timely.step_table")); raw != "" {
		for i, f := range strings.Split(raw, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return c, a.badKeyf("rewards.timely.step_table", "entry %d %q is not a number", i+1, strings.TrimSpace(f))
			}
			t.StepTable = append(t.StepTable, x)
		}
	}
	t.FormatReward = v.GetFloat64("rewards.timely.format_reward")
	t.Lambda = v.GetFloat64("rewards.timely.lambda")
	t.CorrectReward = v.GetFloat64("rewards.timely.correct_reward")
	t.MLWeight = v.GetFloat64("rewards.timely.ml_weight")
	t.GameExponent = v.GetFloat64("rewards.timely.game_exponent")
	t.AnswerTag = v.GetString("rewards.timely.answer_tag")
	t.DurationTag = v.GetString("rewards.timely.duration_tag")
	t.HonestyTolerance = v.GetFloat64("rewards.timely.honesty_tolerance")
	c.TicToc.MarginWeighted = v.GetBool("rewards.tictoc.margin_weighted")
	c.TicToc.ToolCallPatterns = v.GetStringSlice("rewards.tictoc.tool_call_patterns")
	c.TimePuzzles.Metric = v.GetString("rewards.timepuzzles.metric")
	lengthConfig(v, &c.Length)
	if path := v.GetString("rewards.length.tokenizer"); path != "" {
		tok, err := tokenizer.Load(path)
		if err != nil {
			return c, a.badKey("rewards.length.tokenizer", tokenizerError(path, err))
		}
		c.Length.Tokenizer = tok
	}
	if err := c.Validate(); err != nil {
		return c, a.rewardsError(err)
	}
	return c, nil
}

// timersError names the key of a timer store's option error (a
// *timers.OptionError) where the user set it; the secret's value is never
// shown.
func (a *app) timersError(err error) error {
	var oe *timers.OptionError
	if errors.As(err, &oe) {
		switch oe.Field {
		case "Secret":
			return usagef("%s: %v", a.origin("timers.secret"), oe.Err)
		case "DefaultTTL":
			return a.badKeyf("timers.default_ttl", "exceeds timers.max_ttl (%s)", a.v.GetString("timers.max_ttl"))
		}
	}
	return usageError{err}
}

// rewardsError names the key of a rewards configuration error (a
// *rewards.ConfigError) where the user set it.
func (a *app) rewardsError(err error) error {
	var ce *rewards.ConfigError
	if errors.As(err, &ce) {
		if _, known := defaults["rewards."+ce.Key]; known {
			return a.badKey("rewards."+ce.Key, ce.Err)
		}
	}
	return usageError{err}
}

// duration reads a duration key such as "30s".
func (a *app) duration(key string) (time.Duration, error) {
	d, err := time.ParseDuration(a.v.GetString(key))
	if err != nil || d <= 0 {
		return 0, a.badKeyf(key, "want a positive duration such as 30s or 1h")
	}
	return d, nil
}

// timerStore builds the timer store from the timers.* keys. Without a
// secret it returns a store with a random one, and shared=false: its timers
// are readable only by this process.
func (a *app) timerStore() (store *timers.Store, shared bool, err error) {
	v := a.v
	def, err := a.duration("timers.default_ttl")
	if err != nil {
		return nil, false, err
	}
	maxTTL, err := a.duration("timers.max_ttl")
	if err != nil {
		return nil, false, err
	}
	secret := []byte(v.GetString("timers.secret"))
	shared = len(secret) > 0
	if !shared {
		secret = timers.RandomSecret()
	}
	if v.GetInt64("timers.index_bytes") < 0 {
		return nil, false, a.badKeyf("timers.index_bytes", "want 0 (a quarter of serve.memory_limit) or more")
	}
	store, err = timers.New(timers.Options{Secret: secret, DefaultTTL: def, MaxTTL: maxTTL, MaxRollouts: v.GetInt("timers.max_rollouts"),
		MaxIndexBytes: v.GetInt64("timers.index_bytes"), MeasuredSpansOnly: v.GetBool("timers.measured_spans_only")})
	if err != nil {
		return nil, false, a.timersError(err)
	}
	return store, shared, nil
}

// lengthConfig reads the rewards.length keys but the tokenizer's file.
func lengthConfig(v *viper.Viper, l *rewards.LengthConfig) {
	l.AnswerTag = v.GetString("rewards.length.answer_tag")
	l.ThinkOpen = v.GetString("rewards.length.think_open")
	l.ThinkClose = v.GetString("rewards.length.think_close")
	l.ThinkInPrompt = v.GetBool("rewards.length.think_in_prompt")
	l.LCPOAlpha = v.GetFloat64("rewards.length.lcpo_alpha")
	l.LCPOMaxAlpha = v.GetFloat64("rewards.length.lcpo_max_alpha")
	l.LCPODelta = v.GetFloat64("rewards.length.lcpo_delta")
	l.ThinkPruneLimit = v.GetInt("rewards.length.thinkprune_limit")
	l.DAPOMaxTokens = v.GetInt("rewards.length.dapo_max_tokens")
	l.DAPOBufferTokens = v.GetInt("rewards.length.dapo_buffer_tokens")
	l.CosineMaxTokens = v.GetInt("rewards.length.cosine_max_tokens")
	l.CosineCorrectShort = v.GetFloat64("rewards.length.cosine_correct_short")
	l.CosineCorrectLong = v.GetFloat64("rewards.length.cosine_correct_long")
	l.CosineWrongShort = v.GetFloat64("rewards.length.cosine_wrong_short")
	l.CosineWrongLong = v.GetFloat64("rewards.length.cosine_wrong_long")
	l.KimiWeight = v.GetFloat64("rewards.length.kimi_weight")
	l.ShorterBetterAlpha = v.GetFloat64("rewards.length.shorterbetter_alpha")
	l.ShorterBetterBeta = v.GetFloat64("rewards.length.shorterbetter_beta")
	l.ALPBeta = v.GetFloat64("rewards.length.alp_beta")
	l.ALPNorm = v.GetFloat64("rewards.length.alp_norm")
	l.ElasticThinkBudget = v.GetInt("rewards.length.elastic_think_budget")
	l.ElasticAnswerBudget = v.GetInt("rewards.length.elastic_answer_budget")
	l.AnytimePrior = v.GetString("rewards.length.anytime_prior")
	l.MaxBytesPerToken = v.GetInt("rewards.length.max_bytes_per_token")
	l.CountSlack = v.GetInt("rewards.length.count_slack")
	l.CountSlackFraction = v.GetFloat64("rewards.length.count_slack_fraction")
}
