package puzzles

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/timeaware/timeaware/synth"
)

// Config is a puzzle set's settings as a config file writes them, under
// synth.puzzles: ranges, lists and seasons as text, and empty prompt texts
// for the defaults. Options turns it into Options.
type Config struct {
	// Years is a year range (ParseYears); Solutions and Facts are counts,
	// "K" or "A-B" with A <= B.
	Years, Solutions, Facts string
	// Kinds is a comma-separated list of calendar kinds; "" is every kind.
	Kinds string
	// Seasons is "name:month,month,...;name:...", months numbered from 1;
	// "" is none.
	Seasons string
	// LunarDisputedYears and LunarDisputedMonths are comma-separated lunar
	// years and months (ParseLunarRef); "" is none.
	LunarDisputedYears, LunarDisputedMonths string
	// Instruction and Conventions replace the default texts unless empty;
	// SystemPrompt is the system turn, none when empty.
	Instruction, Conventions, SystemPrompt string
	// Split, Ability, Disputed, YearSetReading, Explicit and MaxAttempts
	// are Options' fields of those names.
	Split, Ability, Disputed, YearSetReading string
	Explicit                                 bool
	MaxAttempts                              int
}

// Options reads c over DefaultOptions. A value it cannot read is a
// *synth.OptionError naming its key under synth.puzzles (years, solutions,
// facts, seasons, lunar_disputed_years, lunar_disputed_months); the first
// one found, in that order, is returned. Options does not validate the
// result: Options.Validate does.
func (c Config) Options() (Options, error) {
	o := DefaultOptions()
	bad := func(key string, err error) (Options, error) {
		return o, &synth.OptionError{Family: "puzzles", Key: key, Err: err}
	}
	var err error
	if o.FromYear, o.ToYear, err = ParseYears(c.Years); err != nil {
		return bad("years", err)
	}
	if o.MinSolutions, o.MaxSolutions, err = parseRange(c.Solutions); err != nil {
		return bad("solutions", err)
	}
	if o.MinFacts, o.MaxFacts, err = parseRange(c.Facts); err != nil {
		return bad("facts", err)
	}
	o.Kinds = parseKinds(c.Kinds)
	if o.Seasons, err = parseSeasons(c.Seasons); err != nil {
		return bad("seasons", err)
	}
	so, err := c.SolverOptions()
	if err != nil {
		return o, err
	}
	o.DisputedYears, o.DisputedMonths = so.DisputedYears, so.DisputedMonths
	o.Prompt.Instruction = cmp.Or(c.Instruction, o.Prompt.Instruction)
	o.Prompt.Conventions = cmp.Or(c.Conventions, o.Prompt.Conventions)
	o.Prompt.System, o.Explicit = c.SystemPrompt, c.Explicit
	o.Split, o.Ability, o.MaxAttempts = c.Split, c.Ability, c.MaxAttempts
	o.Disputed, o.YearSetReading = c.Disputed, c.YearSetReading
	return o, nil
}

// SolverOptions reads the disputed lunar data a solver treats as
// undecidable. A value it cannot read is a *synth.OptionError with Key
// lunar_disputed_years or lunar_disputed_months.
func (c Config) SolverOptions() (SolverOptions, error) {
	var so SolverOptions
	var err error
	if so.DisputedYears, err = parseLunarYears(c.LunarDisputedYears); err != nil {
		return so, &synth.OptionError{Family: "puzzles", Key: "lunar_disputed_years", Err: err}
	}
	if so.DisputedMonths, err = parseLunarRefs(c.LunarDisputedMonths); err != nil {
		return so, &synth.OptionError{Family: "puzzles", Key: "lunar_disputed_months", Err: err}
	}
	return so, nil
}

// parseRange reads a count range, "K" or "A-B", of non-negative integers
// with A <= B (Options.MinSolutions and MaxSolutions, MinFacts and
// MaxFacts).
func parseRange(s string) (lo, hi int, err error) {
	first, last, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		last = first
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(first))
	hi, err2 := strconv.Atoi(strings.TrimSpace(last))
	if err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return 0, 0, errors.New("want a number K or a range A-B with A <= B")
	}
	return lo, hi, nil
}

// parseKinds reads a comma-separated list of calendar kinds; "" is nil,
// every kind. The names are checked by Options.Validate.
func parseKinds(s string) []Kind {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []Kind
	for _, k := range strings.Split(s, ",") {
		out = append(out, Kind(strings.TrimSpace(k)))
	}
	return out
}

// parseSeasons reads seasons "name:month,month,...;name:...", months
// numbered from 1; "" is none. Options.Validate checks the names and that
// no month is in two seasons.
func parseSeasons(s string) ([]Season, error) {
	var out []Season
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, months, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%q is not %s", part, "name:month,month,...")
		}
		season := Season{Name: strings.TrimSpace(name)}
		for _, m := range strings.Split(months, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(m))
			if err != nil {
				return nil, fmt.Errorf("season %s: %q is not a month number", season.Name, strings.TrimSpace(m))
			}
			season.Months = append(season.Months, n)
		}
		out = append(out, season)
	}
	return out, nil
}

// parseLunarYears reads a comma-separated list of lunar years
// (Options.DisputedYears); "" is none.
func parseLunarYears(s string) ([]int, error) {
	var out []int
	for _, y := range strings.Split(s, ",") {
		if y = strings.TrimSpace(y); y == "" {
			continue
		}
		n, err := strconv.Atoi(y)
		if err != nil {
			return nil, fmt.Errorf("%q is not a year", y)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseLunarRefs reads a comma-separated list of lunar months
// (ParseLunarRef; Options.DisputedMonths); "" is none.
func parseLunarRefs(s string) ([]LunarRef, error) {
	var out []LunarRef
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		r, err := ParseLunarRef(m)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
