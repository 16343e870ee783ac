package rewards

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnytimeFastReadsTheCommonShapeOnly: the reflection-free reader takes
// the lists clients send and leaves everything else to decodeStrict.
func TestAnytimeFastReadsTheCommonShapeOnly(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	str := func(x string) *string { return &x }
	got, ok := anytimeFast([]byte(` [ {"budget": 4, "summary": "<answer>41</answer>"}, {"summary":"é \n","budget":8.5e0} ] `))
	require.True(t, ok)
	assert.Equal(t, []anytimeEntry{{Budget: f(4), Summary: str("<answer>41</answer>")}, {Budget: f(8.5), Summary: str("é \n")}}, got)
	got, ok = anytimeFast([]byte(` [ ] `))
	require.True(t, ok)
	assert.Empty(t, got)
	got, ok = anytimeFast([]byte(`[{}]`))
	require.True(t, ok)
	assert.Equal(t, []anytimeEntry{{}}, got)
	for _, in := range []string{
		`[{"Budget": 4, "summary": "a"}]`,              // another case
		`[{"budget": 4, "budget": 5, "summary": "a"}]`, // a member twice
		`[{"budget": 4, "summary": "a", "note": 1}]`,   // an unknown member
		`[{"budget": null, "summary": "a"}]`,           // a null
		`[{"budget": "4", "summary": "a"}]`,            // a string budget
		`[{"budget": 1e400, "summary": "a"}]`,          // out of range
		`[{"budget": 4, "summary": "\xff"}]`,           // not UTF-8
		`[{"budget": 4, "summary": "a"}] []`,           // text after the list
		`[{"budget": 4, "summary": "a"},]`,             // a trailing comma
		`{"budget": 4}`,                                // not a list
		`[null]`,
		`[] 1`,                            // text after an empty list
		`[{"budget": 4 "summary": "a"}]`,  // no comma
		`[{"budget" 4}]`,                  // no colon
		`[{"budget": -, "summary": "a"}]`, // not a number
		`[{"budget": 4, "summary": "a}]`,  // cut inside a string
		`[{"budget": 4}`,                  // cut short
		`[{4: 1}]`,                        // a key that is not a string
	} {
		_, ok := anytimeFast([]byte(in))
		assert.False(t, ok, "%s", in)
	}
}

// FuzzAnytimeFast: what the fast reader reads, decodeStrict reads the same.
func FuzzAnytimeFast(f *testing.F) {
	for _, s := range []string{`[{"budget":4,"summary":"a"},{"budget":8,"summary":"b"}]`, `[]`, `[{}]`,
		`[{"budget":4,"Summary":"a"}]`, `[{"budget":-0.0,"summary":"\u00e9"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := anytimeFast(b)
		if !ok {
			return
		}
		var want []anytimeEntry
		require.NoError(t, decodeStrict(b, &want), "%q", b)
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, want[i], got[i], "%q entry %d", b, i)
		}
	})
}
