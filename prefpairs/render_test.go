package prefpairs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHumanizeDuration(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 seconds"},
		{time.Second, "1 second"},
		{1400 * time.Millisecond, "1 second"},
		{59 * time.Second, "59 seconds"},
		{59600 * time.Millisecond, "1 minute"},
		{2 * time.Minute, "2 minutes"},
		{150 * time.Second, "3 minutes"}, // 2.5 rounds half away from zero
		{59 * time.Minute, "59 minutes"},
		{3 * time.Hour, "3 hours"},
		{23*time.Hour + 40*time.Minute, "1 day"},
		{3 * day, "3 days"},
		{29 * day, "29 days"},
		{31 * day, "1 month"},
		{92 * day, "3 months"},
		{-2 * time.Minute, "2 minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, HumanizeDuration(tt.d))
		})
	}
}

func TestTimePrefix(t *testing.T) {
	timePrefix := func(f TimeFormat, at, prev time.Time) string { return string(appendTimePrefix(nil, f, at, prev)) }
	at := time.Date(2025, 12, 4, 10, 22, 44, 0, time.UTC)
	prev := at.Add(-2 * time.Minute)
	assert.Equal(t, "[2025-12-04T10:22:44Z]", timePrefix(TimeISO, at, prev))
	assert.Equal(t, "[2025-12-04T10:22:44Z; 2 minutes passed]", timePrefix(TimeISODelta, at, prev))
	assert.Equal(t, "[2025-12-04T10:22:44Z]", timePrefix(TimeISODelta, at, time.Time{}), "the first message has no gap")
	// Times in other zones are shown in UTC.
	assert.Equal(t, "[2025-12-04T10:22:44Z]", timePrefix(TimeISO, at.In(time.FixedZone("X", 3600)), prev))
}

func TestParseTimeFormat(t *testing.T) {
	for _, f := range TimeFormats {
		got, err := ParseTimeFormat(string(f))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	_, err := ParseTimeFormat("utc")
	require.ErrorContains(t, err, `unknown time format "utc"`)
}
