package main

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cast"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth"
)

// defaults holds every config key with its built-in value. examples/timeaware.yaml
// documents the same keys; a test keeps the two in step.
var defaults = map[string]any{
	"pairs.time_format":          "iso",
	"pairs.format":               "",
	"pairs.min_margin":           0.0,
	"pairs.confident_only":       false,
	"pairs.label_only_margin":    1.0,
	"pairs.tool_response":        "last_turn",
	"pairs.max_inconsistencies":  1,
	"pairs.workers":              0,
	"pairs.zstd_level":           1,
	"pairs.row_group_rows":       16384,
	"pairs.split":                "",
	"pairs.seed":                 0,
	"pairs.test_fraction":        0.35,
	"pairs.catalog":              "",
	"pairs.generate.url":         "",
	"pairs.generate.model":       "",
	"pairs.generate.api_key_env": "OPENAI_API_KEY",
	"pairs.generate.concurrency": 8,
	"pairs.generate.max_retries": 4,
	"pairs.generate.timeout":     "120s",
	"pairs.generate.cache_dir":   ".timeaware-cache/direct",
	"pairs.generate.temperature": 0.0,
	"pairs.generate.max_tokens":  0,
	"pairs.generate.instruction": "",

	"splits.test_fraction":            0.35,
	"splits.tolerance":                0.05,
	"splits.near_duplicate_threshold": 0.8,
	"splits.shingle_words":            5,
	"splits.permutations":             128,
	"splits.bands":                    0,
	"splits.sensitivities":            "low,medium,high",
	"splits.max_findings":             20,
	"splits.preset":                   "auto",
	"splits.text":                     "",
	"splits.group":                    "",
	"splits.id":                       "",
	"splits.split_column":             "",
	"splits.sensitivity_column":       "",
	"splits.label_column":             "",
	"splits.against_text":             "",

	// synth timestamps keys (synth_timestamps.go)
	"synth.timestamps.start":            "",
	"synth.timestamps.sensitivity":      "",
	"synth.timestamps.mode":             "replace",
	"synth.timestamps.catalog":          "",
	"synth.timestamps.workers":          0,
	"synth.timestamps.read.mu":          238.0,
	"synth.timestamps.read.sigma":       60.0,
	"synth.timestamps.read.min":         50.0,
	"synth.timestamps.read.max":         0.0,
	"synth.timestamps.write.mu":         3.61,
	"synth.timestamps.write.sigma":      0.40,
	"synth.timestamps.write.min":        5.0,
	"synth.timestamps.write.max":        0.0,
	"synth.timestamps.generate.mu":      40.0,
	"synth.timestamps.generate.sigma":   16.0,
	"synth.timestamps.generate.min":     10.0,
	"synth.timestamps.generate.max":     0.0,
	"synth.timestamps.tool_seconds":     1.0,
	"synth.timestamps.jitter.user":      1.0,
	"synth.timestamps.jitter.assistant": 0.5,
	"synth.timestamps.jitter.tool":      0.25,
	"synth.timestamps.gaps.low":         "3m,3d,90d",
	"synth.timestamps.gaps.medium":      "3m,3h,3d",
	"synth.timestamps.gaps.high":        "3s,3m,3h",
	"synth.timestamps.resolution":       "1s",

	// synth puzzles keys (synth_puzzles.go)
	"synth.puzzles.years":                 "1900-2030",
	"synth.puzzles.solutions":             "1-6",
	"synth.puzzles.facts":                 "4-6",
	"synth.puzzles.kinds":                 "",
	"synth.puzzles.seasons":               "winter:12,1,2;spring:3,4,5;summer:6,7,8;autumn:9,10,11",
	"synth.puzzles.kb":                    "",
	"synth.puzzles.year_sets":             "",
	"synth.puzzles.disputed":              "avoid",
	"synth.puzzles.year_set_reading":      "held",
	"synth.puzzles.lunar_disputed_years":  "1808,1814,1890,1896",
	"synth.puzzles.lunar_disputed_months": "1933-6,1954-11,1956-11,1978-8",
	"synth.puzzles.explicit":              false,
	"synth.puzzles.instruction":           "",
	"synth.puzzles.system_prompt":         "",
	"synth.puzzles.conventions":           "",
	"synth.puzzles.split":                 "train",
	"synth.puzzles.ability":               "temporal_reasoning",
	"synth.puzzles.format":                "",
	"synth.puzzles.workers":               0,
	"synth.puzzles.max_attempts":          100000,

	// synth traveler keys (synth_traveler.go)
	"synth.traveler.events":        "5-100",
	"synth.traveler.categories":    "explicit,implicit,vague",
	"synth.traveler.templates":     "who,did,how_often,when_last",
	"synth.traveler.window_days":   270,
	"synth.traveler.years":         "2023-2025",
	"synth.traveler.split":         "train",
	"synth.traveler.format":        "",
	"synth.traveler.system_prompt": "",

	// synth negotiation keys (synth_negotiation.go)
	"synth.negotiation.condition":                "all",
	"synth.negotiation.scenario":                 "",
	"synth.negotiation.wpm":                      150.0,
	"synth.negotiation.deadlines_s":              "240,300,360",
	"synth.negotiation.turn_limits":              "5,6,7,8,9",
	"synth.negotiation.split":                    "train",
	"synth.negotiation.format":                   "",
	"synth.negotiation.prompt.brief":             "",
	"synth.negotiation.prompt.format":            "",
	"synth.negotiation.prompt.deadline":          "",
	"synth.negotiation.prompt.latency":           "",
	"synth.negotiation.prompt.turn_limit":        "",
	"synth.negotiation.prompt.time_aware_prefix": "",
	"synth.negotiation.prompt.urgency_prefix":    "",
	"synth.negotiation.prompt.start":             "",
	"synth.negotiation.prompt.opening":           "",

	// synth budget keys (synth_budget.go)
	"synth.budget.multipliers":           "0.75,1,2,3",
	"synth.budget.every_multiplier":      false,
	"synth.budget.no_limit_fraction":     0.1,
	"synth.budget.baseline_log_mu":       3.4,
	"synth.budget.baseline_log_sigma":    0.5,
	"synth.budget.game_steps":            30,
	"synth.budget.game_step_latency_s":   2.0,
	"synth.budget.ml_rounds":             4,
	"synth.budget.ml_round_latency_s":    30.0,
	"synth.budget.speed_factors":         "0.5,1,2",
	"synth.budget.speed_factor_range":    "",
	"synth.budget.jitter":                0.05,
	"synth.budget.ttl_s":                 3600.0,
	"synth.budget.split":                 "train",
	"synth.budget.format":                "",
	"synth.budget.system_prompt.general": "",
	"synth.budget.system_prompt.game":    "",
	"synth.budget.system_prompt.ml":      "",
	"synth.budget.budget_sentence":       "",
	"synth.budget.no_limit_sentence":     "",
	"synth.budget.tool_description":      "",
	"synth.budget.teacher.model":         "",
	"synth.budget.teacher.temperature":   0.7,
	"synth.budget.teacher.max_tokens":    0,

	"serve.addr":                             "127.0.0.1:8080",
	"serve.addr_file":                        "",
	"serve.token":                            "",
	"serve.max_body_bytes":                   33554432,
	"serve.max_batch_items":                  8192,
	"serve.max_inflight":                     512,
	"serve.request_timeout":                  "30s",
	"serve.shutdown_timeout":                 "30s",
	"serve.shutdown_grace":                   "1s",
	"serve.body_timeout":                     "10s",
	"serve.header_timeout":                   "5s",
	"serve.max_header_bytes":                 32768,
	"serve.max_conns":                        0,
	"serve.auth_all":                         false,
	"serve.memory_limit":                     0,
	"serve.memory_budget":                    0,
	"serve.max_json_depth":                   64,
	"serve.max_string_bytes":                 8388608,
	"serve.allow_no_token":                   false,
	"serve.openrlhf_data_source":             "timely/general",
	"serve.negotiation_opponent_url":         "",
	"serve.negotiation_opponent_model":       "",
	"serve.negotiation_opponent_api_key_env": "OPENAI_API_KEY",

	"timers.secret":       "",
	"timers.default_ttl":  "1h",
	"timers.max_ttl":      "24h",
	"timers.max_rollouts": 1048576,

	"rewards.fallback_score":            0.0,
	"rewards.stop_strings":              slices.Clone(rewards.DefaultStopStrings),
	"rewards.timely.utilization":        "sin",
	"rewards.timely.step_table":         "0.25,0.5,0.75,1.0",
	"rewards.timely.format_reward":      0.1,
	"rewards.timely.lambda":             0.4,
	"rewards.timely.correct_reward":     0.5,
	"rewards.timely.ml_weight":          0.5,
	"rewards.timely.game_exponent":      1.0 / 3,
	"rewards.timely.answer_tag":         "answer",
	"rewards.timely.duration_tag":       "",
	"rewards.timely.honesty_tolerance":  0.0,
	"rewards.tictoc.margin_weighted":    false,
	"rewards.tictoc.tool_call_patterns": []string{},
	"rewards.timepuzzles.metric":        "em",
}

// configValue returns a key's value converted to the type of its default,
// whichever layer set it (flag, TIMEAWARE_* variable, config file). Flags are
// typed by pflag, but variables and files are text to viper, and its GetX
// functions turn unparsable text into zero: this is the check that stops
// TIMEAWARE_PAIRS_LABEL_ONLY_MARGIN=abc from becoming a margin of 0. The
// error is the reason alone; checkConfig adds where the value came from.
func configValue(v *viper.Viper, key string) (any, error) {
	raw := v.Get(key)
	var (
		val  any
		err  error
		want string
	)
	switch defaults[key].(type) {
	case string:
		val, err = cast.ToStringE(raw)
		want = "text"
	case bool:
		val, err = cast.ToBoolE(raw)
		want = "true or false"
	case int:
		val, err = cast.ToIntE(raw)
		want = "a whole number"
	case []string:
		val, err = cast.ToStringSliceE(raw)
		want = "a list of strings"
	case float64:
		var f float64
		if f, err = cast.ToFloat64E(raw); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			err = errors.New("not a finite number")
		}
		val = f
		want = "a finite number"
	default:
		return nil, fmt.Errorf("config key %s has no type", key)
	}
	if err != nil {
		return nil, fmt.Errorf("want %s", want)
	}
	return val, nil
}

// checkConfig validates every key; see configValue.
func (a *app) checkConfig() error {
	keys := slices.Sorted(maps.Keys(defaults))
	for _, key := range keys {
		if _, err := configValue(a.v, key); err != nil {
			return a.badKey(key, err)
		}
	}
	return nil
}

// origin says where the value of a config key came from, as the user set
// it: the flag ("--time-format"), the variable
// ("TIMEAWARE_PAIRS_TIME_FORMAT"), the config file and key ("--config
// my.yaml: pairs.time_format"), else the key itself (a built-in default).
// Precedence is viper's: a flag given, then a variable, then the file.
func (a *app) origin(key string) string {
	if a.cmd != nil {
		var flag string
		a.cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if k, ok := f.Annotations[configKey]; ok && k[0] == key && f.Changed {
				flag = "--" + f.Name
			}
		})
		if flag != "" {
			return flag
		}
	}
	if val, ok := os.LookupEnv(envName(key)); ok && val != "" {
		return envName(key)
	}
	if a.configFile != "" && a.v.InConfig(key) {
		return "--config " + a.configFile + ": " + key
	}
	return key
}

// badKey is the usage error of a config key's value, named where the user
// set it and in the CLI's one shape: "--time-format utc: reason",
// "TIMEAWARE_PAIRS_TIME_FORMAT=utc: reason", "--config my.yaml:
// pairs.time_format utc: reason".
func (a *app) badKey(key string, reason error) error {
	val := showValue(fmt.Sprint(a.v.Get(key)))
	if _, list := defaults[key].([]string); list {
		if items, err := cast.ToStringSliceE(a.v.Get(key)); err == nil {
			val = showValue(strings.Join(items, ","))
		}
	}
	where := a.origin(key)
	if slices.Contains(secretKeys, key) { // a secret's value is never printed
		return usageError{fmt.Errorf("%s: %w", where, reason)}
	}
	if strings.HasPrefix(where, "TIMEAWARE_") {
		return usageError{fmt.Errorf("%s=%s: %w", where, val, reason)}
	}
	return usageError{fmt.Errorf("%s %s: %w", where, val, reason)}
}

// badKeyf is badKey with a reason made from a format.
func (a *app) badKeyf(key, format string, args ...any) error {
	return a.badKey(key, fmt.Errorf(format, args...))
}

// typedConfig returns the keys under prefix with their typed values, for
// manifests: a value reads the same whether it came from a flag or a file.
func typedConfig(v *viper.Viper, prefix string, omit ...string) map[string]any {
	out := map[string]any{}
	for key := range defaults {
		if !strings.HasPrefix(key, prefix) || slices.Contains(omit, key) {
			continue
		}
		if val, err := configValue(v, key); err == nil {
			out[key] = val
		}
	}
	return out
}

// flagValueError is the usage error of a flag that no config key sets:
// "--count 0: reason".
func (a *app) flagValueError(flag string, reason error) error {
	val := ""
	if a.cmd != nil {
		if f := a.cmd.Flags().Lookup(flag); f != nil {
			val = f.Value.String()
		}
	}
	return usageError{fmt.Errorf("--%s %s: %w", flag, showValue(val), reason)}
}

// optionError names a task family's bad option (a *synth.OptionError)
// where the user set it: the origin of its config key (synth.FAMILY.KEY,
// or keys[KEY] when the option's key is named otherwise), or the flag
// ("--count") of an option that only a flag sets. Any other error is a
// usage error as it is.
func (a *app) optionError(err error, keys map[string]string) error {
	var oe *synth.OptionError
	if !errors.As(err, &oe) {
		return usageError{err}
	}
	key := "synth." + oe.Family + "." + oe.Key
	if k, ok := keys[oe.Key]; ok {
		key = k
	}
	if flag, ok := strings.CutPrefix(key, "--"); ok {
		return a.flagValueError(flag, oe.Err)
	}
	if _, ok := defaults[key]; !ok {
		return usagef("%s: %w", key, oe.Err)
	}
	return a.badKey(key, oe.Err)
}
