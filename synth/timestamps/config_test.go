package timestamps

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/synth"
)

// paperConfig is the paper's model as examples/timeaware.yaml writes it.
func paperConfig() Config {
	return Config{Mode: "replace",
		Read: TruncatedNormal{Mu: 238, Sigma: 60, Min: 50}, Write: TruncatedNormal{Mu: 3.61, Sigma: 0.40, Min: 5},
		Generate: TruncatedNormal{Mu: 40, Sigma: 16, Min: 10}, ToolSeconds: 1, Jitter: Jitter{User: 1, Assistant: 0.5, Tool: 0.25},
		Gaps: map[string]string{"low": "3m,3d,90d", "medium": "3m,3h,3d", "high": "3s,3m,3h"}, Resolution: "1s"}
}

func TestConfigOptions(t *testing.T) {
	opt, err := paperConfig().Options()
	require.NoError(t, err)
	assert.Equal(t, DefaultOptions(), opt, "the documented defaults are the paper's model")

	c := paperConfig()
	c.Start, c.Sensitivity, c.Mode, c.Workers = "2025-03-01T09:00:00+01:00", " MID ", "fill", 3
	c.Read.Max, c.Write.Max = 400, 60
	c.ToolSeconds, c.Jitter = 2.5, Jitter{User: 3}
	c.Gaps["high"] = "1s, 1.5d ,2d"
	c.Resolution = "0s"
	opt, err = c.Options()
	require.NoError(t, err)
	assert.True(t, opt.Start.Equal(time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)), "%v", opt.Start)
	assert.Equal(t, "medium", opt.Sensitivity)
	assert.Equal(t, ModeFill, opt.Mode)
	assert.Equal(t, 3, opt.Workers)
	assert.Equal(t, TruncatedNormal{Mu: 238, Sigma: 60, Min: 50, Max: 400}, opt.Read, "an upper bound is kept")
	assert.Equal(t, TruncatedLogNormal{Mu: 3.61, Sigma: 0.40, Min: 5, Max: 60}, opt.Write)
	assert.Equal(t, TruncatedNormal{Mu: 40, Sigma: 16, Min: 10, Max: math.Inf(1)}, opt.Generate, "0 is no upper bound")
	assert.Equal(t, 2.5, opt.ToolSeconds)
	assert.Equal(t, Jitter{User: 3}, opt.Jitter)
	assert.Equal(t, PaperGap(time.Second), opt.Gaps["high"][0])
	assert.Equal(t, PaperGap(36*time.Hour), opt.Gaps["high"][1])
	assert.Equal(t, PaperGap(2*Day), opt.Gaps["high"][2])
	assert.Equal(t, PaperGap(3*Month), opt.Gaps["low"][2])
	assert.Equal(t, time.Duration(0), opt.Resolution)
	assert.True(t, opt.Catalog == nil && opt.Keep == nil && opt.Seed == 0, "the rest is the caller's")
}

func TestConfigOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		key    string
		reason string
	}{
		{"start", func(c *Config) { c.Start = "yesterday" }, "start", `invalid time "yesterday" (want RFC 3339, e.g. 2025-12-04T10:22:44Z)`},
		{"sensitivity", func(c *Config) { c.Sensitivity = "extreme" }, "sensitivity", "want low, medium or high"},
		{"mode", func(c *Config) { c.Mode = "merge" }, "mode", `mode "merge" is not replace or fill`},
		{"no mode", func(c *Config) { c.Mode = "" }, "mode", `mode "" is not replace or fill`},
		{"gaps", func(c *Config) { c.Gaps["medium"] = "3d,3h,3m" }, "gaps.medium", `"3d,3h,3m": the gaps must grow from small to large`},
		{"missing gaps", func(c *Config) { delete(c.Gaps, "high") }, "gaps.high", `"": want 3 durations (small, medium, large), e.g. 3m,3h,3d`},
		{"resolution", func(c *Config) { c.Resolution = "1 second" }, "resolution", "want a duration >= 0 such as 1s"},
		{"negative resolution", func(c *Config) { c.Resolution = "-1s" }, "resolution", "want a duration >= 0 such as 1s"},
		{"the first problem", func(c *Config) { c.Mode, c.Resolution = "merge", "" }, "mode", `mode "merge" is not replace or fill`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := paperConfig()
			tc.change(&c)
			_, err := c.Options()
			var oe *synth.OptionError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, "timestamps", oe.Family)
			assert.Equal(t, tc.key, oe.Key)
			assert.EqualError(t, oe.Err, tc.reason)
		})
	}
}

func TestConfigOptionsLeavesValidationToNewStamper(t *testing.T) {
	c := paperConfig()
	c.Read.Min = -5
	opt, err := c.Options()
	require.NoError(t, err)
	_, err = NewStamper(opt)
	assert.ErrorContains(t, err, "reading speed: lower bound -5 must be above 0")
}
