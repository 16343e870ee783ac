package splits

import (
	"fmt"
	"slices"
	"strings"
)

// PresetAuto and PresetNone are the preset choices besides a preset's
// name: recognise the dataset, or use none.
const (
	PresetAuto = "auto"
	PresetNone = "none"
)

// Dataset is a file to resolve columns for, with the preset its manifest
// names, if any.
type Dataset struct {
	Path   string
	Preset *Preset
}

// Overrides are the columns a user names over a preset's. A nil field
// keeps the preset's column; a pointer to "" drops it; Text and ID are
// comma-separated paths.
type Overrides struct {
	Preset                                     string // PresetAuto (or ""), PresetNone or a preset's name
	Text, Group, ID, Split, Sensitivity, Label *string
}

// ResolveColumns decides the columns of the train and test datasets: the
// preset (named, from a manifest, or recognised from each file's columns,
// all of which must agree), then the overrides; every column named must
// be in every file. Its errors are for a user to mend: they name the file
// and the column, and list the file's columns.
func ResolveColumns(sets []Dataset, o Overrides) (*Columns, error) {
	fields := map[string]*FieldSet{}
	fieldsOf := func(path string) (*FieldSet, error) {
		if fs, ok := fields[path]; ok {
			return fs, nil
		}
		fs, err := Fields(path)
		if err != nil {
			return nil, err
		}
		fields[path] = fs
		return fs, nil
	}
	var preset *Preset
	switch strings.TrimSpace(o.Preset) {
	case PresetNone:
	case PresetAuto, "":
		var from string
		for _, d := range sets {
			p := d.Preset
			if p == nil {
				fs, err := fieldsOf(d.Path)
				if err != nil {
					return nil, err
				}
				p, _ = DetectPreset(fs.Has)
			}
			if p == nil {
				continue
			}
			if preset != nil && p != preset {
				return nil, fmt.Errorf("%s looks like %s output and %s like %s output: check one kind at a time, or name the columns with --preset none and --text", from, preset.Name, d.Path, p.Name)
			}
			preset, from = p, d.Path
		}
	default:
		p, ok := PresetByName(strings.TrimSpace(o.Preset))
		if !ok {
			return nil, fmt.Errorf("--preset %s: want auto, none or one of %s", o.Preset, PresetNames())
		}
		preset = p
	}
	var cols Columns
	if preset != nil {
		cols = preset.Columns
		cols.ID = slices.Clone(cols.ID)
		cols.Text = slices.Clone(cols.Text)
	}
	if o.Text != nil {
		cols.Text = SplitList(*o.Text)
	}
	if o.Group != nil {
		cols.Group, cols.GroupName, cols.GroupFromID = *o.Group, "", nil
	}
	if o.ID != nil {
		cols.ID = SplitList(*o.ID)
	}
	for _, f := range []struct {
		src *string
		dst *string
	}{{o.Split, &cols.Split}, {o.Sensitivity, &cols.Sensitivity}, {o.Label, &cols.Label}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if cols.Group == "" {
		cols.GroupFromID = nil
	}
	if cols.GroupName == "" && cols.Group != "" {
		name := cols.Group
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		cols.GroupName = name
	}
	if len(cols.Text) == 0 {
		fs, err := fieldsOf(sets[0].Path)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s is not a timeaware output the gate knows (%s): name its columns with --text (and --group, --id); its columns are %s",
			sets[0].Path, PresetNames(), strings.Join(fs.Top(), ", "))
	}
	named := []struct {
		flag  string
		paths []string
	}{
		{"--text", cols.Text}, {"--id", cols.ID}, {"--group", []string{cols.Group}}, {"--split-column", []string{cols.Split}},
		{"--sensitivity-column", []string{cols.Sensitivity}}, {"--label-column", []string{cols.Label}},
		{"the preset's source column", []string{cols.Source}},
	}
	for _, d := range sets {
		fs, err := fieldsOf(d.Path)
		if err != nil {
			return nil, err
		}
		for _, n := range named {
			for _, p := range n.paths {
				if p != "" && !fs.Has(p) {
					return nil, fmt.Errorf("%s: %s %s: no such column (its columns are %s)", d.Path, n.flag, p, strings.Join(fs.Top(), ", "))
				}
			}
		}
	}
	return &cols, nil
}

// AgainstColumns decides the text columns of an outside evaluation set:
// text when given, else each file's own preset's, else the gate's.
func AgainstColumns(sets []Dataset, text []string, gate *Columns) (*Columns, error) {
	for _, d := range sets {
		fs, err := Fields(d.Path)
		if err != nil {
			return nil, err
		}
		t := text
		if t == nil {
			if p, ok := DetectPreset(fs.Has); ok {
				t = p.Columns.Text
			} else {
				t = gate.Text
			}
		}
		for _, p := range t {
			if !fs.Has(p) {
				return nil, fmt.Errorf("--against %s: no text column %s (its columns are %s); name it with --against-text", d.Path, p, strings.Join(fs.Top(), ", "))
			}
		}
		if text == nil {
			text = t
		}
	}
	return &Columns{Text: text}, nil
}

// PresetNames lists the presets' names, comma-separated.
func PresetNames() string {
	var names []string
	for _, p := range Presets {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// SplitList splits a comma-separated list, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
