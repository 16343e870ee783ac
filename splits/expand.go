package splits

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
)

// ArgFile is one dataset file an argument stands for, with its side.
type ArgFile struct {
	Path string
	// Side is Train, Test or Against, or "" when the file's rows' split
	// column decides.
	Side string
	// Preset is the preset for the command the manifest names, if the
	// file came from a manifest whose command has one.
	Preset *Preset
}

// ManifestSplit is what a manifest's summary says of its split (its
// "split", an output.SplitSummary or a pairs build's): enough to set the gate's
// target test fraction and tolerance.
type ManifestSplit struct {
	Strategy string  `json:"strategy"`
	Target   float64 `json:"target_test_fraction"`
	// Units counts the units a hash split assigned, for the tolerance its
	// randomness allows (UnitTolerance).
	Units map[string]int `json:"units"`
}

// ExpandArg turns an argument (of the gate's command line) into dataset
// files: a manifest (*.manifest.json) stands for the outputs it lists,
// each checked against the SHA-256 the manifest recorded, and tells its
// split; a directory stands for the dataset files under it (ExpandDir); a
// file must be of a dataset format. side, when set, is every file's side;
// otherwise each file's name (SideFromPath) or a manifest output's role
// (SideOf) says it, or its rows' split column will.
//
// An output changed since its build gives an error wrapping
// output.ErrChanged; every other error is about the argument itself.
func ExpandArg(arg, side string) ([]ArgFile, *ManifestSplit, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", arg, unwrapPathError(err))
	}
	if st.IsDir() {
		files, err := ExpandDir(arg)
		if err != nil {
			return nil, nil, err
		}
		var out []ArgFile
		for _, f := range files {
			s := side
			if s == "" {
				s = SideFromPath(arg, f)
			}
			out = append(out, ArgFile{Path: f, Side: s})
		}
		return out, nil, nil
	}
	if !strings.HasSuffix(arg, ".manifest.json") {
		if _, ok := dataset.ForPath(arg); !ok {
			return nil, nil, fmt.Errorf("%s: unknown dataset format (want a .parquet, .arrow or .jsonl file, a directory of them, or a .manifest.json)", arg)
		}
		if side == "" {
			side = SideFromPath(arg, arg)
		}
		return []ArgFile{{Path: arg, Side: side}}, nil, nil
	}
	m, err := output.ReadManifest(arg, true)
	if errors.Is(err, output.ErrChanged) {
		return nil, nil, fmt.Errorf("%s: %w", arg, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", arg, unwrapPathError(err))
	}
	var summary struct {
		Split *ManifestSplit `json:"split"`
	}
	if b, err := json.Marshal(m.Summary); err == nil {
		_ = json.Unmarshal(b, &summary)
	}
	preset, _ := PresetForCommand(m.Command)
	var out []ArgFile
	for _, o := range m.Outputs {
		if _, ok := dataset.ForPath(o.Path); !ok || slices.Contains(auxiliaryRoles, o.Role) {
			continue
		}
		s := side
		if s == "" {
			if rs, ok := SideOf(o.Role); ok {
				s = rs
			} else {
				s = SideFromPath(o.Path, o.Path)
			}
		}
		out = append(out, ArgFile{Path: o.Path, Side: s, Preset: preset})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: the manifest lists no dataset outputs", arg)
	}
	return out, summary.Split, nil
}

// auxiliaryRoles are the roles of outputs a manifest lists beside a
// dataset that are not its rows: synth budget's requests for a teacher.
var auxiliaryRoles = []string{"teacher_requests"}

// unwrapPathError drops an *os.PathError's operation and path, which the
// caller's message already names.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
