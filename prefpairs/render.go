package prefpairs

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/timeaware/timeaware/conversation"
)

// TimeFormat says how message times are shown to the model.
type TimeFormat string

// Time renderings (the TicToc paper, §4 and App. B). With Ts the message's completion
// time in ISO 8601 UTC, each message's content is prefixed with:
const (
	TimeNone     TimeFormat = "none"      // nothing: the model sees no times
	TimeISO      TimeFormat = "iso"       // "[Ts] "
	TimeISODelta TimeFormat = "iso_delta" // "[Ts; 2 minutes passed] ", the gap since the previous message
)

// TimeFormats lists the accepted renderings.
var TimeFormats = []TimeFormat{TimeNone, TimeISO, TimeISODelta}

// ParseTimeFormat validates a rendering name.
func ParseTimeFormat(s string) (TimeFormat, error) {
	for _, f := range TimeFormats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown time format %q (want none, iso or iso_delta)", s)
}

// appendTimePrefix appends the stamp put in front of a message's content.
// prev is the previous message's time, or the zero time for the first
// message, which has no gap to report.
func appendTimePrefix(b []byte, f TimeFormat, at, prev time.Time) []byte {
	b = append(b, '[')
	b = conversation.AppendTime(b, at)
	if f == TimeISODelta && !prev.IsZero() {
		b = append(b, "; "...)
		b = append(b, HumanizeDuration(at.Sub(prev))...)
		b = append(b, " passed"...)
	}
	return append(b, ']')
}

// HumanizeDuration renders a gap the way a person would say it, rounded to
// the largest unit that keeps it at least 1: seconds, minutes, hours, days or
// months (of 30.44 days). Negative gaps render as their absolute value; the
// reader rejects histories whose times go backwards before this is reached.
func HumanizeDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	secs := math.Round(d.Seconds())
	units := []struct {
		name string
		size float64
		next float64 // how many of this unit make the next one
	}{
		{"second", 1, 60},
		{"minute", 60, 60},
		{"hour", 3600, 24},
		{"day", 86400, 30.436875},
		{"month", 86400 * 30.436875, math.Inf(1)},
	}
	for _, u := range units {
		n := math.Round(secs / u.size)
		if n < u.next {
			return plural(int64(n), u.name)
		}
	}
	return plural(int64(secs), "second")
}

func plural(n int64, unit string) string {
	s := strconv.FormatInt(n, 10) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}
