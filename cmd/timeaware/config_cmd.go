package main

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"github.com/timeaware/timeaware/examples"
	"go.yaml.in/yaml/v3"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the default configuration, or the one in effect here",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "defaults",
		Short: "Print the default configuration: every key with its built-in value and meaning",
		Long: `defaults prints the documented default configuration (examples/timeaware.yaml
of the repository, built into the binary): every key, its built-in value and
what it means. Copy it, change what you need and pass it with --config.`,
		Example: `  timeaware config defaults > out/my.yaml
  timeaware --config out/my.yaml config show`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := a.stdout.Write(examples.DefaultConfig)
			return err
		},
	}, &cobra.Command{
		Use:   "show",
		Short: "Print the configuration in effect: built-in defaults, the --config file, TIMEAWARE_* variables",
		Long: `show prints every key with the value a command run here would use, as
YAML: the built-in default, overridden by the --config file, overridden by
TIMEAWARE_* environment variables (a command's own flags override these
again). A value other than the default names its source in a comment.
Secrets (timers.secret, serve.token) are never printed.`,
		Example: `  TIMEAWARE_PAIRS_TIME_FORMAT=iso_delta timeaware config show
  timeaware --config examples/timeaware.yaml config show`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			out, err := a.effectiveConfig()
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(out)
			return err
		},
	})
	return groupCommand(cmd)
}

// secretKeys are the keys whose values config show never prints.
var secretKeys = []string{"timers.secret", "serve.token"}

// effectiveConfig renders every key's value in effect as YAML, nested as
// in the config file, with the origin of each value other than the default
// in a line comment.
func (a *app) effectiveConfig() ([]byte, error) {
	defaultsOnly := viper.New()
	for k, v := range defaults {
		defaultsOnly.SetDefault(k, v)
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	sections := map[string]*yaml.Node{"": root}
	var section func(path string) *yaml.Node
	section = func(path string) *yaml.Node {
		if n, ok := sections[path]; ok {
			return n
		}
		parent, name := "", path
		if i := strings.LastIndexByte(path, '.'); i >= 0 {
			parent, name = path[:i], path[i+1:]
		}
		n := &yaml.Node{Kind: yaml.MappingNode}
		p := section(parent)
		p.Content = append(p.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, n)
		sections[path] = n
		return n
	}
	for _, key := range slices.Sorted(maps.Keys(defaults)) {
		val, err := configValue(a.v, key)
		if err != nil {
			return nil, a.badKey(key, err)
		}
		where := a.origin(key)
		if def, _ := configValue(defaultsOnly, key); reflect.DeepEqual(def, val) {
			where = key // set, but to the default: nothing to point at
		}
		secret := slices.Contains(secretKeys, key)
		if secret {
			val = ""
		}
		var v yaml.Node
		if err := v.Encode(val); err != nil {
			return nil, fmt.Errorf("config show: %s: %w", key, err)
		}
		if v.Kind == yaml.SequenceNode {
			v.Style = yaml.FlowStyle
		}
		switch {
		case secret && where != key:
			v.LineComment = "set by " + where + "; not shown"
		case where != key:
			v.LineComment = "from " + where
		}
		parent, name := "", key
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			parent, name = key[:i], key[i+1:]
		}
		s := section(parent)
		s.Content = append(s.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, &v)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("config show: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config show: %w", err)
	}
	return []byte(b.String()), nil
}
