package scenario

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Values of Scenario.Sensitivity.
const (
	SensitivityLow    = "low"
	SensitivityMedium = "medium"
	SensitivityHigh   = "high"
)

// Values of Scenario.IO: the paper's R and R&W.
const (
	IOReadOnly  = "read_only"
	IOReadWrite = "read_write"
)

// Values of Scenario.PaperSplit.
const (
	PaperTrain = "train"
	PaperTest  = "test"
)

// Sensitivities lists the sensitivity levels from least to most time-sensitive.
var Sensitivities = []string{SensitivityLow, SensitivityMedium, SensitivityHigh}

// DefaultSource is the source name used in errors about the embedded
// catalog: the file's path in the repository.
const DefaultSource = "splits/scenario/scenarios.yaml"

// defaultYAML is the built-in catalog, embedded so the binary works without
// the repository.
//
//go:embed scenarios.yaml
var defaultYAML []byte

// ErrUnknown is wrapped by the error Catalog.Resolve returns for an id
// whose prefix is not in the catalog.
var ErrUnknown = errors.New("unknown scenario")

// Scenario is one TicToc scenario.
type Scenario struct {
	Name        string   `yaml:"name" json:"name"`
	Sensitivity string   `yaml:"sensitivity" json:"sensitivity"`
	IO          string   `yaml:"io" json:"io"`
	PaperSplit  string   `yaml:"paper_split" json:"paper_split"`
	Description string   `yaml:"description" json:"description,omitempty"`
	Aliases     []string `yaml:"aliases" json:"aliases"`
}

// Catalog is a validated set of scenarios, looked up by canonical name or by
// trajectory id. It is not modified after loading and is safe for concurrent use
// as long as callers do not modify the returned scenarios.
type Catalog struct {
	scenarios []*Scenario
	byName    map[string]*Scenario
	byAlias   map[string]*Scenario
}

// scenarioKeys are the keys a scenario entry may have.
var scenarioKeys = map[string]bool{
	"name": true, "sensitivity": true, "io": true,
	"paper_split": true, "description": true, "aliases": true,
}

// Load reads and validates a catalog in the layout of the built-in
// scenarios.yaml (DefaultSource). source names the input in error messages.
//
// The YAML is strict: unknown or repeated keys are errors, as is more than one
// document. Every scenario needs a unique name, a sensitivity of low, medium or
// high, an io of read_only or read_write, a paper_split of train or test and at
// least one alias. An alias belongs to one scenario only; it may equal that
// scenario's own name but not another's, and must not end in _<digits> (Resolve
// strips such a suffix, so the alias could never match). Errors name the source,
// the line, the scenario (1-based index and name) and the field.
func Load(r io.Reader, source string) (*Catalog, error) {
	if source == "" {
		source = "catalog"
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty catalog: want a top-level \"scenarios\" list", source)
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		return nil, fmt.Errorf("%s:%d: more than one YAML document", source, extra.Line)
	}

	root := deref(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = deref(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with a \"scenarios\" list at the top level", source, root.Line)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "scenarios":
			if list != nil {
				return nil, fmt.Errorf("%s:%d: field \"scenarios\" given twice", source, k.Line)
			}
			list = deref(v)
		default:
			return nil, fmt.Errorf("%s:%d: unknown top-level field %q (want only \"scenarios\")", source, k.Line, k.Value)
		}
	}
	if list == nil {
		return nil, fmt.Errorf("%s: no \"scenarios\" field", source)
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: field \"scenarios\" must be a list", source, list.Line)
	}
	if len(list.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: field \"scenarios\" is empty", source, list.Line)
	}

	c := &Catalog{
		byName:  make(map[string]*Scenario, len(list.Content)),
		byAlias: make(map[string]*Scenario, 2*len(list.Content)),
	}
	index := make(map[*Scenario]int, len(list.Content))
	lines := make(map[*Scenario]int, len(list.Content))
	label := func(s *Scenario) string { return scenarioLabel(index[s], s.Name) }

	for i, item := range list.Content {
		item = deref(item)
		n := i + 1
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: scenario %d: want a mapping of name, sensitivity, io, paper_split, description, aliases", source, item.Line, n)
		}
		name := ""
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "name" {
				name = item.Content[j+1].Value
			}
		}
		where := func(line int) string {
			return fmt.Sprintf("%s:%d: %s", source, line, scenarioLabel(n, name))
		}
		seen := make(map[string]int, len(item.Content)/2)
		for j := 0; j+1 < len(item.Content); j += 2 {
			k := item.Content[j]
			if !scenarioKeys[k.Value] {
				return nil, fmt.Errorf("%s: unknown field %q (want name, sensitivity, io, paper_split, description, aliases)", where(k.Line), k.Value)
			}
			if first, dup := seen[k.Value]; dup {
				return nil, fmt.Errorf("%s: field %q given twice (first on line %d)", where(k.Line), k.Value, first)
			}
			seen[k.Value] = k.Line
		}
		s := new(Scenario)
		if err := item.Decode(s); err != nil {
			return nil, fmt.Errorf("%s: %s", where(item.Line), yamlErrText(err))
		}
		if err := validateScenario(s); err != nil {
			return nil, fmt.Errorf("%s: %w", where(item.Line), err)
		}
		index[s], lines[s] = n, item.Line
		if prev, dup := c.byName[s.Name]; dup {
			return nil, fmt.Errorf("%s: name %q already used by %s", where(item.Line), s.Name, label(prev))
		}
		c.byName[s.Name] = s
		for _, a := range s.Aliases {
			if prev, dup := c.byAlias[a]; dup {
				if prev == s {
					return nil, fmt.Errorf("%s: alias %q listed twice", where(item.Line), a)
				}
				return nil, fmt.Errorf("%s: alias %q already belongs to %s", where(item.Line), a, label(prev))
			}
			c.byAlias[a] = s
		}
		c.scenarios = append(c.scenarios, s)
	}

	// An alias equal to another scenario's name would make Resolve and ByName
	// disagree; checked once all names are known.
	for _, s := range c.scenarios {
		for _, a := range s.Aliases {
			if other, ok := c.byName[a]; ok && other != s {
				return nil, fmt.Errorf("%s:%d: %s: alias %q is the name of %s",
					source, lines[s], label(s), a, label(other))
			}
		}
	}
	return c, nil
}

// validateScenario checks one scenario's fields; the error names the field.
func validateScenario(s *Scenario) error {
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("name is missing or empty")
	}
	if s.Name != strings.TrimSpace(s.Name) {
		return fmt.Errorf("name %q has leading or trailing space", s.Name)
	}
	switch s.Sensitivity {
	case SensitivityLow, SensitivityMedium, SensitivityHigh:
	case "":
		return errors.New("sensitivity is missing (want low, medium or high)")
	default:
		return fmt.Errorf("sensitivity %q is not low, medium or high", s.Sensitivity)
	}
	switch s.IO {
	case IOReadOnly, IOReadWrite:
	case "":
		return errors.New("io is missing (want read_only or read_write)")
	default:
		return fmt.Errorf("io %q is not read_only or read_write", s.IO)
	}
	switch s.PaperSplit {
	case PaperTrain, PaperTest:
	case "":
		return errors.New("paper_split is missing (want train or test)")
	default:
		return fmt.Errorf("paper_split %q is not train or test", s.PaperSplit)
	}
	if len(s.Aliases) == 0 {
		return errors.New("aliases is empty: list at least one trajectory id prefix")
	}
	for _, a := range s.Aliases {
		if strings.TrimSpace(a) == "" {
			return errors.New("aliases has an empty entry")
		}
		if AliasOf(a) != a {
			return fmt.Errorf("aliases entry %q ends in _<digits>, which is stripped from ids before lookup", a)
		}
	}
	return nil
}

func scenarioLabel(n int, name string) string {
	if name == "" {
		return fmt.Sprintf("scenario %d", n)
	}
	return fmt.Sprintf("scenario %d (%s)", n, name)
}

// deref follows YAML alias nodes (*anchor) to the node they point at.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// yamlErrText flattens a yaml decoding error onto one line.
func yamlErrText(err error) string {
	return jsonscan.ExplainYAML(err).Error()
}

// Default loads the built-in catalog, embedded from scenarios.yaml. Each
// call returns a fresh Catalog.
func Default() (*Catalog, error) {
	return Load(bytes.NewReader(defaultYAML), DefaultSource)
}

// Scenarios returns the scenarios in file order. The slice is a copy; the
// scenarios are shared with the catalog and must not be modified.
func (c *Catalog) Scenarios() []*Scenario {
	return append([]*Scenario(nil), c.scenarios...)
}

// ByName returns the scenario with exactly this canonical name.
func (c *Catalog) ByName(name string) (*Scenario, bool) {
	s, ok := c.byName[name]
	return s, ok
}

// Resolve returns the scenario a trajectory id belongs to. The id's prefix
// (AliasOf) is looked up among the aliases and, failing that, the canonical
// names. An unknown prefix gives an error wrapping ErrUnknown that
// names the prefix and the id.
func (c *Catalog) Resolve(id string) (*Scenario, error) {
	prefix := AliasOf(id)
	if s, ok := c.byAlias[prefix]; ok {
		return s, nil
	}
	if s, ok := c.byName[prefix]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("scenario: id %q: %w alias %q (add it to the catalog's aliases)", id, ErrUnknown, prefix)
}

// ScenarioOf names a trajectory's scenario and sensitivity from the
// catalog (prefpairs.Options.Scenario): the record's own scenario field
// when it has one (a canonical name or an alias), otherwise its id's alias
// (Resolve). Either must be in the catalog: a misspelt scenario would
// otherwise form a group of its own and could land on the other side of a
// split from its siblings, unseen by the gate. An id that is itself an
// alias must agree with the field. A sensitivity in the record wins over
// the catalog's.
func (c *Catalog) ScenarioOf(t *conversation.Trajectory) (name, sensitivity string, err error) {
	var sc *Scenario
	if t.Scenario != "" {
		s, ok := c.ByName(t.Scenario)
		if !ok {
			s2, err := c.Resolve(t.Scenario)
			if err != nil {
				return "", "", fmt.Errorf("scenario %q is not in the scenario catalog (add it, or give --catalog)", t.Scenario)
			}
			s = s2
		}
		if byID, err := c.Resolve(t.ID); err == nil && byID != s {
			return "", "", fmt.Errorf("scenario %q contradicts the id, whose alias belongs to %q", t.Scenario, byID.Name)
		}
		sc = s
	} else {
		s, err := c.Resolve(t.ID)
		if err != nil {
			return "", "", err
		}
		sc = s
	}
	sens := t.Sensitivity
	if sens == "" {
		sens = sc.Sensitivity
	}
	return sc.Name, sens, nil
}

// Counts returns the number of scenarios per sensitivity level; all three
// levels are present, possibly with zero.
func (c *Catalog) Counts() map[string]int {
	m := make(map[string]int, len(Sensitivities))
	for _, l := range Sensitivities {
		m[l] = 0
	}
	for _, s := range c.scenarios {
		m[s.Sensitivity]++
	}
	return m
}

// AliasOf returns a trajectory id's scenario alias: the id without a trailing
// _<digits>. An id without such a suffix (or one that is only a suffix, such
// as "_3") is returned whole.
func AliasOf(id string) string {
	return conversation.ScenarioAlias(id)
}
