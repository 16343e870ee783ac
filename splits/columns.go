package splits

import (
	"fmt"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/splits/scenario"
)

// Columns says which columns of a dataset make the gate's rows. A column
// is named by a path: a top-level column, or fields of structs (JSON
// objects) joined by dots, as in reward_model.ground_truth. A path that
// meets a list goes on in each element. A value contributes its text: a
// string as it is, a number or boolean as written, a list every element,
// and a message (a struct with a content field) its content; a path ending
// in :ROLE (prompt:user) keeps only the messages of that role.
type Columns struct {
	// Preset names the preset the columns came from, if any.
	Preset string `json:"preset,omitempty"`
	// Text are the paths whose text is compared for duplicates, joined
	// with new lines. Required.
	Text []string `json:"text"`
	// Group is the unit that must not straddle the split (a scenario, a
	// task, a puzzle's answer set); "" skips the group check.
	Group string `json:"group,omitempty"`
	// GroupName is what a group is called in messages ("scenario").
	GroupName string `json:"group_name,omitempty"`
	// ID are the columns that identify a row together, as (id, elapse) do
	// for pairs. None skips the id check.
	ID []string `json:"id,omitempty"`
	// Source is the column of the record a row was made from: rows with
	// one source may share a text (a trajectory's elapse levels, a task's
	// budgets). Default: the first id column.
	Source string `json:"source,omitempty"`
	// Split is the row's own split label, checked against its file's side;
	// "" skips the split_label check.
	Split string `json:"split,omitempty"`
	// Sensitivity and Label feed the sensitivity_coverage and label_balance
	// checks; "" skips them.
	Sensitivity string `json:"sensitivity,omitempty"`
	Label       string `json:"label,omitempty"`
	// GroupFromID gives a row without a group one from its source (pairs:
	// the scenario alias of the trajectory id).
	GroupFromID func(string) string `json:"-"`
}

// colPath is a parsed column path.
type colPath struct {
	raw  string
	segs []string
	role string // keep only messages of this role; "" keeps all
}

func parsePath(raw string) (colPath, error) {
	p := colPath{raw: raw}
	s := strings.TrimSpace(raw)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p.role = strings.TrimSpace(s[i+1:])
		s = s[:i]
		if p.role == "" {
			return p, fmt.Errorf("column %q: empty role after ':'", raw)
		}
	}
	if s == "" {
		return p, fmt.Errorf("column %q: empty name", raw)
	}
	for _, seg := range strings.Split(s, ".") {
		if seg = strings.TrimSpace(seg); seg == "" {
			return p, fmt.Errorf("column %q: empty field name", raw)
		}
		p.segs = append(p.segs, seg)
	}
	return p, nil
}

// compiled are the parsed paths of a Columns.
type compiled struct {
	text                                  []colPath
	id                                    []colPath
	source, group, split, sensitivity, lb *colPath
}

func (c *Columns) compile() (*compiled, error) {
	if len(c.Text) == 0 {
		return nil, fmt.Errorf("splits: no text column")
	}
	var out compiled
	for _, raw := range c.Text {
		p, err := parsePath(raw)
		if err != nil {
			return nil, fmt.Errorf("splits: text %w", err)
		}
		out.text = append(out.text, p)
	}
	for _, raw := range c.ID {
		p, err := parsePath(raw)
		if err != nil {
			return nil, fmt.Errorf("splits: id %w", err)
		}
		if p.role != "" {
			return nil, fmt.Errorf("splits: id column %q: a role filter needs a text column", raw)
		}
		out.id = append(out.id, p)
	}
	one := func(what, raw string) (*colPath, error) {
		if raw == "" {
			return nil, nil
		}
		p, err := parsePath(raw)
		if err != nil {
			return nil, fmt.Errorf("splits: %s %w", what, err)
		}
		if p.role != "" {
			return nil, fmt.Errorf("splits: %s column %q: a role filter needs a text column", what, raw)
		}
		return &p, nil
	}
	var err error
	if out.source, err = one("source", c.Source); err != nil {
		return nil, err
	}
	if out.group, err = one("group", c.Group); err != nil {
		return nil, err
	}
	if out.split, err = one("split", c.Split); err != nil {
		return nil, err
	}
	if out.sensitivity, err = one("sensitivity", c.Sensitivity); err != nil {
		return nil, err
	}
	if out.lb, err = one("label", c.Label); err != nil {
		return nil, err
	}
	return &out, nil
}

// paths lists every path the columns read, text first.
func (c *compiled) paths() []colPath {
	ps := slices.Clone(c.text)
	ps = append(ps, c.id...)
	for _, p := range []*colPath{c.source, c.group, c.split, c.sensitivity, c.lb} {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return ps
}

// Skips returns the checks these columns cannot feed, with the reason, for
// GateOptions.Skip.
func (c *Columns) Skips() map[string]string {
	m := map[string]string{}
	if c.Split == "" {
		m[CheckSplitLabel] = "the dataset has no split column (--split-column)"
	}
	if c.Group == "" {
		m[CheckGroupDisjoint] = "the dataset has no group column (--group)"
	}
	if len(c.ID) == 0 {
		m[CheckDuplicateIDs] = "the dataset has no id column (--id)"
	}
	if c.Sensitivity == "" {
		m[CheckSensitivityCoverage] = "the dataset has no sensitivity column (--sensitivity-column)"
	}
	if c.Label == "" {
		m[CheckLabelBalance] = "the dataset has no label column (--label-column)"
	}
	return m
}

// Preset is the columns of one of the toolkit's own outputs, found from
// the manifest that describes a file or from the file's columns.
type Preset struct {
	Name string
	// Commands are the manifest commands of the outputs it describes.
	Commands []string
	// Requires are the paths a dataset must have to be this preset's.
	Requires []string
	Columns  Columns
}

// The presets of the toolkit's outputs.
var (
	// PairsPreset: preference pairs of pairs build. The prompt (the whole
	// conversation before the reply) is the text; a trajectory's elapse
	// levels share it.
	PairsPreset = &Preset{
		Name:     "pairs",
		Commands: []string{"pairs build"},
		Requires: []string{"id", "scenario", "elapse", "prompt", "chosen", "rejected"},
		Columns: Columns{Preset: "pairs", Text: []string{"prompt"}, Group: "scenario", GroupName: "scenario",
			ID: []string{"id", "elapse"}, Source: "id", Split: "split", Sensitivity: "sensitivity", Label: "label", GroupFromID: scenario.AliasOf},
	}
	// BudgetPreset: time-budgeted rows of synth budget; a task's variants
	// (its budgets) stay together.
	BudgetPreset = &Preset{
		Name:     "budget",
		Commands: []string{"synth budget"},
		Requires: []string{"prompt", "extra_info.task_id", "extra_info.request_id", "extra_info.split"},
		Columns: Columns{Preset: "budget", Text: []string{"prompt:user"}, Group: "extra_info.task_id", GroupName: "task",
			ID: []string{"extra_info.request_id"}, Source: "extra_info.task_id", Split: "extra_info.split"},
	}
	// PuzzlesPreset: Time Puzzles of synth puzzles. The text is the
	// puzzle's facts, not the prompt, whose fixed instructions would make
	// any two puzzles look alike; puzzles anchored on one knowledge-base
	// event stay together.
	PuzzlesPreset = &Preset{
		Name:     "puzzles",
		Commands: []string{"synth puzzles"},
		Requires: []string{"constraints", "constraints_meta", "extra_info.id", "extra_info.group", "extra_info.split"},
		Columns: Columns{Preset: "puzzles", Text: []string{"constraints"}, Group: "extra_info.group", GroupName: "event",
			ID: []string{"extra_info.id"}, Source: "extra_info.group", Split: "extra_info.split"},
	}
	// TravelerPreset: TRAVELER questions of synth traveler; questions over
	// one event set stay together.
	TravelerPreset = &Preset{
		Name:     "traveler",
		Commands: []string{"synth traveler"},
		Requires: []string{"prompt", "extra_info.speech_time", "extra_info.id", "extra_info.group", "extra_info.split"},
		Columns: Columns{Preset: "traveler", Text: []string{"prompt:user"}, Group: "extra_info.group", GroupName: "event set",
			ID: []string{"extra_info.id"}, Source: "extra_info.group", Split: "extra_info.split"},
	}
	// NegotiationPreset: negotiation openings of synth negotiation; a
	// scenario's rows stay together, and may repeat an opening.
	NegotiationPreset = &Preset{
		Name:     "negotiation",
		Commands: []string{"synth negotiation"},
		Requires: []string{"prompt", "extra_info.scenario_id", "extra_info.id", "extra_info.split"},
		Columns: Columns{Preset: "negotiation", Text: []string{"prompt"}, Group: "extra_info.scenario_id", GroupName: "scenario",
			ID: []string{"extra_info.id"}, Source: "extra_info.scenario_id", Split: "extra_info.split"},
	}
)

// Presets lists the presets, in the order they are tried on a dataset's
// columns. Adding one is a Preset value and a line here.
var Presets = []*Preset{PairsPreset, BudgetPreset, PuzzlesPreset, TravelerPreset, NegotiationPreset}

// PresetByName returns the preset called name.
func PresetByName(name string) (*Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// PresetForCommand returns the preset of a manifest's command.
func PresetForCommand(command string) (*Preset, bool) {
	for _, p := range Presets {
		if slices.Contains(p.Commands, command) {
			return p, true
		}
	}
	return nil, false
}

// DetectPreset returns the first preset whose required paths the dataset
// has.
func DetectPreset(has func(path string) bool) (*Preset, bool) {
	for _, p := range Presets {
		ok := true
		for _, r := range p.Requires {
			if !has(r) {
				ok = false
				break
			}
		}
		if ok {
			return p, true
		}
	}
	return nil, false
}
