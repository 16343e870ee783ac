package timestamps

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/timeaware/timeaware/conversation"
)

// ParseGapMeans reads the three mean final gaps of a sensitivity, small to
// large, as a config file writes them: comma-separated durations, each a Go
// duration (90s, 3m, 1h30m) or a number of days (3d, 90d, 1.5d). Each must
// be positive and larger than the one before.
func ParseGapMeans(s string) ([conversation.NumElapse]time.Duration, error) {
	var out [conversation.NumElapse]time.Duration
	parts := strings.Split(s, ",")
	if len(parts) != len(out) {
		return out, fmt.Errorf("%q: want %d durations (small, medium, large), e.g. 3m,3h,3d", s, len(out))
	}
	for k, part := range parts {
		d, err := parseSpan(strings.TrimSpace(part))
		if err != nil {
			return out, fmt.Errorf("%q: %w", s, err)
		}
		if d <= 0 {
			return out, fmt.Errorf("%q: gap %q is not positive", s, part)
		}
		if k > 0 && d <= out[k-1] {
			return out, fmt.Errorf("%q: the gaps must grow from small to large", s)
		}
		out[k] = d
	}
	return out, nil
}

// parseSpan reads a Go duration or a number of days ("3d").
func parseSpan(s string) (time.Duration, error) {
	if num, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(days) || days < 0 || days*float64(Day) >= math.MaxInt64 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(days * float64(Day)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 3s, 3m, 3h or 3d", s)
	}
	return d, nil
}
