package puzzles

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/synth"
)

// defaultConfig is the documented config's synth.puzzles section.
func defaultConfig() Config {
	return Config{Years: "1900-2030", Solutions: "1-6", Facts: "4-6",
		Seasons:            "winter:12,1,2;spring:3,4,5;summer:6,7,8;autumn:9,10,11",
		LunarDisputedYears: "1808,1814,1890,1896", LunarDisputedMonths: "1933-6,1954-11,1956-11,1978-8",
		Split: "train", Ability: "temporal_reasoning", Disputed: "avoid", YearSetReading: "held", MaxAttempts: 100000}
}

func TestConfigDefaultsAreTheDefaultOptions(t *testing.T) {
	o, err := defaultConfig().Options()
	require.NoError(t, err)
	want := DefaultOptions()
	want.YearSetReading = YearSetsHeld
	assert.Equal(t, want, o)
	require.NoError(t, o.Validate())
}

func TestConfigOptions(t *testing.T) {
	c := defaultConfig()
	c.Years, c.Solutions, c.Facts, c.Kinds = " 1950 - 1960 ", "0", "3-5", "year, month ,weekday"
	c.Seasons, c.LunarDisputedYears, c.LunarDisputedMonths = " wet: 1,2 ; dry:3 ", "", " 2023-2l , 1933-6"
	c.Instruction, c.Conventions, c.SystemPrompt = "Solve {constraints}", "Ours.", "Be brief."
	c.Split, c.Ability, c.Disputed, c.YearSetReading = "eval", "dates", "allow", "rule"
	c.Explicit, c.MaxAttempts = true, 7
	o, err := c.Options()
	require.NoError(t, err)
	assert.Equal(t, [2]int{1950, 1960}, [2]int{o.FromYear, o.ToYear})
	assert.Equal(t, [4]int{0, 0, 3, 5}, [4]int{o.MinSolutions, o.MaxSolutions, o.MinFacts, o.MaxFacts})
	assert.Equal(t, []Kind{"year", "month", "weekday"}, o.Kinds)
	assert.Equal(t, []Season{{"wet", []int{1, 2}}, {"dry", []int{3}}}, o.Seasons)
	assert.Nil(t, o.DisputedYears, "an empty list is none, not the defaults")
	assert.Equal(t, []LunarRef{{2023, 2, true}, {1933, 6, false}}, o.DisputedMonths)
	assert.Equal(t, Prompt{Instruction: "Solve {constraints}", Conventions: "Ours.", System: "Be brief."}, o.Prompt)
	assert.Equal(t, []string{"eval", "dates", "allow", "rule"}, []string{o.Split, o.Ability, o.Disputed, o.YearSetReading})
	assert.True(t, o.Explicit)
	assert.Equal(t, 7, o.MaxAttempts)
	assert.Equal(t, DefaultKB(), o.KB, "files are read by ReadFiles")

	c = defaultConfig()
	c.Seasons, c.Kinds = "", " "
	o, err = c.Options()
	require.NoError(t, err)
	assert.Nil(t, o.Seasons, "no seasons turns the kind off")
	assert.Nil(t, o.Kinds, "no kinds is every kind")
}

func TestConfigErrorsNameTheirKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		key  string
		want string
	}{
		{"years", func(c *Config) { c.Years = "2030-1900" }, "years", `"2030-1900": want years`},
		{"solutions", func(c *Config) { c.Solutions = "3-1" }, "solutions", "want a number K or a range A-B with A <= B"},
		{"negative", func(c *Config) { c.Solutions = "-1" }, "solutions", "want a number K"},
		{"facts", func(c *Config) { c.Facts = "x" }, "facts", "want a number K"},
		{"season without months", func(c *Config) { c.Seasons = "wet" }, "seasons", `"wet" is not name:month,month,...`},
		{"season month", func(c *Config) { c.Seasons = "wet:1,x" }, "seasons", `season wet: "x" is not a month number`},
		{"lunar year", func(c *Config) { c.LunarDisputedYears = "1808,abc" }, "lunar_disputed_years", `"abc" is not a year`},
		{"lunar month", func(c *Config) { c.LunarDisputedMonths = "1933-x" }, "lunar_disputed_months", `"1933-x" is not a lunar month`},
		{"first bad key wins", func(c *Config) { c.Facts, c.Seasons = "x", "wet" }, "facts", "want a number K"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			tc.edit(&c)
			_, err := c.Options()
			var oe *synth.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "puzzles", oe.Family)
			assert.Equal(t, tc.key, oe.Key)
			assert.ErrorContains(t, oe.Err, tc.want)
		})
	}
}

func TestConfigSolverOptions(t *testing.T) {
	so, err := Config{LunarDisputedYears: "1808, 1814,", LunarDisputedMonths: "1933-6"}.SolverOptions()
	require.NoError(t, err)
	assert.Equal(t, SolverOptions{DisputedYears: []int{1808, 1814}, DisputedMonths: []LunarRef{{1933, 6, false}}}, so)
	_, err = Config{LunarDisputedMonths: "1933-13"}.SolverOptions()
	var oe *synth.OptionError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "lunar_disputed_months", oe.Key)
	so, err = Config{Years: "bad", Seasons: "bad"}.SolverOptions()
	require.NoError(t, err, "only the lunar data is read")
	assert.Equal(t, SolverOptions{}, so)
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"3", 3, 3, true}, {" 1 - 6 ", 1, 6, true}, {"0", 0, 0, true}, {"0-0", 0, 0, true},
		{"6-1", 0, 0, false}, {"-1", 0, 0, false}, {"1-", 0, 0, false}, {"", 0, 0, false}, {"a-b", 0, 0, false},
	} {
		lo, hi, err := parseRange(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, [2]int{tc.lo, tc.hi}, [2]int{lo, hi}, tc.in)
	}
}
