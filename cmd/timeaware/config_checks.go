package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/synth/budget"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// configCheck validates the keys under a section of the configuration
// with the option builders of the commands that read them, so that a
// value is refused in the same words wherever it is read.
type configCheck struct {
	section string
	check   func(a *app) error
}

// configChecks holds a check for every section of the configuration;
// config show runs them all, so that what it shows is what the commands
// accept. A new section is one line here: a test fails on a key that no
// check covers.
var configChecks = []configCheck{
	{"pairs", func(a *app) error {
		if err := a.formatKey("pairs.format"); err != nil {
			return err
		}
		return a.pairsOptions(&prefpairs.DatasetOptions{})
	}},
	{"splits", func(a *app) error { _, err := a.gateOptions(); return err }},
	{"splits.contamination", func(a *app) error { _, err := a.contaminationOptions(); return err }},
	// The prompt templates are free text: any value is one.
	{"benchmarks", func(a *app) error { return a.formatKey("benchmarks.format") }},
	{"synth.timestamps", func(a *app) error { _, _, err := a.timestampsOptions(&synthTimestampsFlags{}); return err }},
	{"synth.budget", (*app).checkBudgetKeys},
	{"synth.puzzles", func(a *app) error {
		if err := a.formatKey("synth.puzzles.format"); err != nil {
			return err
		}
		_, _, err := a.puzzleOptions()
		return err
	}},
	{"synth.traveler", func(a *app) error {
		if err := a.formatKey("synth.traveler.format"); err != nil {
			return err
		}
		opt, err := a.travelerOptions()
		if err != nil {
			return err
		}
		if err := opt.Validate(); err != nil {
			return a.optionError(err, travelerKeys)
		}
		return nil
	}},
	{"synth.negotiation", func(a *app) error {
		if err := a.formatKey("synth.negotiation.format"); err != nil {
			return err
		}
		opt, err := a.negotiationOptions()
		if err != nil {
			return err
		}
		opt.Count = 1 // a flag's, checked by the command
		if path := a.v.GetString("synth.negotiation.scenario"); path != "" {
			if opt.Scenarios, _, err = negotiation.ReadScenarios(path); err != nil {
				return a.keyFileError("synth.negotiation.scenario", "scenario", path, err)
			}
		}
		if err := opt.Validate(); err != nil {
			return a.optionError(err, negotiationKeys)
		}
		return nil
	}},
	{"rewards", func(a *app) error { _, err := a.rewardsConfig(); return err }},
	{"timers", func(a *app) error { _, _, err := a.timerStore(); return err }},
	{"serve", func(a *app) error {
		_, err := a.serveOptions(slog.New(slog.NewTextHandler(io.Discard, nil)))
		return err
	}},
}

// checkBudgetKeys checks the synth.budget keys as synth budget reads them:
// its unit, the options of every family, and the token budgets'.
func (a *app) checkBudgetKeys() error {
	if err := a.formatKey("synth.budget.format"); err != nil {
		return err
	}
	if _, err := a.budgetUnit(); err != nil {
		return err
	}
	for _, family := range budget.Families {
		opt, err := a.budgetOptions(family)
		if err != nil {
			return err
		}
		if err := opt.Validate(); err != nil {
			return a.budgetError(err, budgetKeys(family))
		}
	}
	opt, err := a.tokenOptions(budget.FamilyGeneral)
	if err != nil {
		return err
	}
	if err := opt.Validate(); err != nil {
		return a.budgetError(err, budgetKeys(budget.FamilyGeneral))
	}
	return nil
}

// formatKey checks an output format key: empty (the output's extension
// decides) or a format's name.
func (a *app) formatKey(key string) error {
	if a.v.GetString(key) == "" {
		return nil
	}
	_, err := a.outputFormat(key, "")
	return err
}

// checkSettings runs every check of configChecks: nil when the commands
// accept every value in effect, else the error of the one section refused,
// or of each, a line each, under a line that counts them (the exit code is
// the first one's).
func (a *app) checkSettings() error {
	var errs []error
	for _, c := range configChecks {
		err := c.check(a)
		if err != nil {
			err = a.setBy(c.section, err)
		}
		// serve reads the rewards and timers keys too: one line a setting.
		if err != nil && !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == err.Error() }) {
			errs = append(errs, err)
		}
	}
	if len(errs) <= 1 {
		return errors.Join(errs...)
	}
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = "  " + a.describe(err)
	}
	return &settingsError{msg: fmt.Sprintf("%d settings are refused:\n%s", len(errs), strings.Join(lines, "\n")), first: errs[0]}
}

// settingsError is several refused settings: its text lists them all, and
// it unwraps to the first, whose kind sets the exit code.
type settingsError struct {
	msg   string
	first error
}

func (e *settingsError) Error() string { return e.msg }
func (e *settingsError) Unwrap() error { return e.first }

// setBy puts in front of a section's error where its values were set (the
// config file, TIMEAWARE_* variables), when the error does not say: an
// option builder may name the key, or only what the keys describe
// ("reading speed"), and config show must say where to look.
func (a *app) setBy(section string, err error) error {
	msg := a.describe(err)
	if strings.HasPrefix(msg, "--") || strings.HasPrefix(msg, "TIMEAWARE_") {
		return err
	}
	var where []string
	for _, key := range slices.Sorted(maps.Keys(defaults)) {
		if !strings.HasPrefix(key, section+".") {
			continue
		}
		origin, _, _ := strings.Cut(a.origin(key), ": ")
		if origin != key && !slices.Contains(where, origin) {
			where = append(where, origin)
		}
	}
	if len(where) == 0 {
		return err
	}
	return &prefixedError{prefix: strings.Join(where, ", ") + ": ", err: err}
}

// prefixedError is err with a prefix to its text; it unwraps to err, whose
// kind sets the exit code.
type prefixedError struct {
	prefix string
	err    error
}

func (e *prefixedError) Error() string { return e.prefix + e.err.Error() }
func (e *prefixedError) Unwrap() error { return e.err }
