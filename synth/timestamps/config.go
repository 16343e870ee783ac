package timestamps

import (
	"errors"
	"math"
	"time"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/splits/scenario"
	"github.com/timeaware/timeaware/synth"
)

// Config is the model's settings as a config file writes them, under
// synth.timestamps: times, durations and gap lists as text, and a zero
// upper bound for none. Options turns it into Options.
type Config struct {
	// Start is an RFC 3339 time; "" for none.
	Start string
	// Sensitivity is low, medium or high (or an accepted spelling, see
	// conversation.NormalizeSensitivity); "" for none.
	Sensitivity string
	// Mode is replace or fill.
	Mode string
	// Read, Write and Generate are the speeds' distributions, Write's in
	// log space; a Max of 0 is no upper bound.
	Read, Write, Generate TruncatedNormal
	ToolSeconds           float64
	Jitter                Jitter
	// Gaps maps each sensitivity to its three mean final gaps, small to
	// large (ParseGapMeans).
	Gaps map[string]string
	// Resolution is a Go duration, 0 or more.
	Resolution string
	Workers    int
}

// Options reads c over DefaultOptions. A value it cannot read is a
// *synth.OptionError naming its key under synth.timestamps (start,
// sensitivity, mode, gaps.LEVEL, resolution); the first one found, in that
// order, is returned. Options does not validate the result: NewStamper
// does.
func (c Config) Options() (Options, error) {
	opt := DefaultOptions()
	bad := func(key string, err error) (Options, error) {
		return opt, &synth.OptionError{Family: "timestamps", Key: key, Err: err}
	}
	var err error
	if c.Start != "" {
		if opt.Start, err = conversation.ParseTime(c.Start); err != nil {
			return bad("start", err)
		}
	}
	if c.Sensitivity != "" {
		var ok bool
		if opt.Sensitivity, ok = conversation.NormalizeSensitivity(c.Sensitivity); !ok {
			return bad("sensitivity", errors.New("want low, medium or high"))
		}
	}
	if opt.Mode, err = ParseMode(c.Mode); err != nil {
		return bad("mode", err)
	}
	opt.Workers = c.Workers
	opt.Read, opt.Generate = unbounded(c.Read), unbounded(c.Generate)
	w := unbounded(c.Write)
	opt.Write = TruncatedLogNormal{Mu: w.Mu, Sigma: w.Sigma, Min: w.Min, Max: w.Max}
	opt.ToolSeconds, opt.Jitter = c.ToolSeconds, c.Jitter
	means := map[string][conversation.NumElapse]time.Duration{}
	for _, s := range scenario.Sensitivities {
		if means[s], err = ParseGapMeans(c.Gaps[s]); err != nil {
			return bad("gaps."+s, err)
		}
	}
	opt.Gaps = GapsFromMeans(means)
	if opt.Resolution, err = time.ParseDuration(c.Resolution); err != nil || opt.Resolution < 0 {
		return bad("resolution", errors.New("want a duration >= 0 such as 1s"))
	}
	return opt, nil
}

// unbounded is d with a Max of 0 read as no upper bound.
func unbounded(d TruncatedNormal) TruncatedNormal {
	if d.Max == 0 {
		d.Max = math.Inf(1)
	}
	return d
}
