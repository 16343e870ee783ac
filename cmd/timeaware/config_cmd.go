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
		Long:  longHelp("config defaults"),
		Example: `  timeaware config defaults > out/my.yaml
  timeaware --config out/my.yaml config show`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := a.stdout.Write(examples.DefaultConfig)
			return err
		},
	}, &cobra.Command{
		Use:   "show",
		Short: "Print the configuration in effect: built-in defaults, the --config file, TIMEAWARE_* variables",
		Long:  longHelp("config show"),
		Example: `  TIMEAWARE_PAIRS_TIME_FORMAT=iso_delta timeaware config show
  timeaware --config examples/timeaware.yaml config show`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := a.checkSettings(); err != nil {
				return err
			}
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
	tree := newYAMLTree()
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
		tree.add(key, &v)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(tree.root); err != nil {
		return nil, fmt.Errorf("config show: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config show: %w", err)
	}
	return []byte(b.String()), nil
}

// yamlTree nests dotted keys into YAML mappings, in the order they are
// added: pairs.time_format goes under pairs.
type yamlTree struct {
	root     *yaml.Node
	sections map[string]*yaml.Node
}

func newYAMLTree() *yamlTree {
	root := &yaml.Node{Kind: yaml.MappingNode}
	return &yamlTree{root: root, sections: map[string]*yaml.Node{"": root}}
}

// section is the mapping of a dotted path, made with its parents if new.
func (t *yamlTree) section(path string) *yaml.Node {
	if n, ok := t.sections[path]; ok {
		return n
	}
	parent, name := splitKey(path)
	n := &yaml.Node{Kind: yaml.MappingNode}
	p := t.section(parent)
	p.Content = append(p.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, n)
	t.sections[path] = n
	return n
}

// add puts v under key's last part in its section.
func (t *yamlTree) add(key string, v *yaml.Node) {
	parent, name := splitKey(key)
	s := t.section(parent)
	s.Content = append(s.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, v)
}

// splitKey splits a dotted key at its last dot: "a.b.c" is "a.b" and "c".
func splitKey(key string) (parent, name string) {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}
