package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cast"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/timeaware/timeaware/examples"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/synth"
)

// defaults holds every config key with its built-in value: the documented
// configuration (examples/timeaware.yaml), which the binary embeds and
// "config defaults" prints, is their one home. Its values type the keys: a
// number with a decimal point is fractional, one without is whole, a list
// is a list of strings.
var defaults = must(flattenConfig(examples.DefaultConfig))

// flattenConfig reads a config file's keys (pairs.time_format, ...) and
// their values.
func flattenConfig(doc []byte) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any) error
	walk = func(prefix string, m map[string]any) error {
		for k, v := range m {
			switch x := v.(type) {
			case map[string]any:
				if err := walk(prefix+k+".", x); err != nil {
					return err
				}
			case string, bool, int, float64:
				out[prefix+k] = x
			case []any:
				list, err := cast.ToStringSliceE(x)
				if err != nil {
					return fmt.Errorf("config: %s%s: %w", prefix, k, err)
				}
				out[prefix+k] = list
			default:
				return fmt.Errorf("config: %s%s: %v is not text, a number, true or false, or a list", prefix, k, v)
			}
		}
		return nil
	}
	return out, walk("", m)
}

// must is v, or a panic for an error that only a broken build can cause.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
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
	if _, ok := os.LookupEnv(envName(key)); ok { // an empty one sets the key to "" too
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
	raw := a.v.Get(key)
	val := configText(raw)
	reason = sayOnce(fmt.Sprint(raw), reason)
	if _, list := defaults[key].([]string); list {
		if items, err := cast.ToStringSliceE(a.v.Get(key)); err == nil {
			val = showValue(strings.Join(items, ","))
		}
	}
	if slices.Contains(secretKeys, key) { // a secret's value is never printed
		return usageError{fmt.Errorf("%s: %w", a.origin(key), reason)}
	}
	return usageError{fmt.Errorf("%s: %w", a.setting(key, val), reason)}
}

// setting is a key's value as the user set it, named by where: "--flag
// VALUE", "TIMEAWARE_KEY=VALUE" or "--config F: key VALUE".
func (a *app) setting(key, val string) string {
	where := a.origin(key)
	if strings.HasPrefix(where, "TIMEAWARE_") {
		return where + "=" + val
	}
	return where + " " + val
}

// configText writes a config value as the user wrote it: a scalar as it
// is (showValue), a list or a mapping as JSON, shortened; never as Go
// prints a map or a slice.
func configText(v any) string {
	if k := reflect.ValueOf(v).Kind(); k == reflect.Map || k == reflect.Slice {
		if b, err := json.Marshal(v); err == nil {
			return jsonscan.Shorten(string(b))
		}
	}
	return showValue(fmt.Sprint(v))
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
	return usageError{fmt.Errorf("--%s %s: %w", flag, showValue(val), sayOnce(val, reason))}
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
