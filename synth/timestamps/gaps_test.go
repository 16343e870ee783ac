package timestamps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGapMeans(t *testing.T) {
	tests := []struct {
		in   string
		want [3]time.Duration
		err  string
	}{
		{"3m,3d,90d", [3]time.Duration{3 * time.Minute, 72 * time.Hour, 90 * 24 * time.Hour}, ""},
		{" 3s , 3m , 3h ", [3]time.Duration{3 * time.Second, 3 * time.Minute, 3 * time.Hour}, ""},
		{"1.5d,2d,2.5d", [3]time.Duration{36 * time.Hour, 48 * time.Hour, 60 * time.Hour}, ""},
		{"90s,1h30m,3d", [3]time.Duration{90 * time.Second, 90 * time.Minute, 72 * time.Hour}, ""},
		{"3m,3h", [3]time.Duration{}, "want 3 durations"},
		{"3m,3h,3d,4d", [3]time.Duration{}, "want 3 durations"},
		{"3h,3m,3d", [3]time.Duration{}, "must grow"},
		{"3m,3m,3d", [3]time.Duration{}, "must grow"},
		{"0s,3m,3d", [3]time.Duration{}, "not positive"},
		{"3m,3x,3d", [3]time.Duration{}, `"3x" is not a duration`},
		{"3m,-1d,3d", [3]time.Duration{}, "not a number of days"},
		{"3m,3h,1e300d", [3]time.Duration{}, "not a number of days"},
		{"3m,3h,NaNd", [3]time.Duration{}, "not a number of days"},
		{"", [3]time.Duration{}, "want 3 durations"},
	}
	for _, tt := range tests {
		got, err := ParseGapMeans(tt.in)
		if tt.err != "" {
			require.Error(t, err, tt.in)
			assert.Contains(t, err.Error(), tt.err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// FuzzParseGapMeans: whatever the text, ParseGapMeans returns an error or
// three positive, growing durations, and they read back the same when
// written as Go durations.
func FuzzParseGapMeans(f *testing.F) {
	for _, s := range []string{"3m,3d,90d", "3s,3m,3h", "1.5d, 2d ,2.5d", "1h30m,2h,3h", "3m,3h,NaNd", "0.0000001d,1d,1e5d", ",,", "3d,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseGapMeans(s)
		if err != nil {
			return
		}
		require.Positive(t, got[0])
		require.Less(t, got[0], got[1])
		require.Less(t, got[1], got[2])
		again, err := ParseGapMeans(got[0].String() + "," + got[1].String() + "," + got[2].String())
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
