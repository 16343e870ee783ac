package splits

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only space", " \t\n\r ", ""},
		{"lower case and trim", "  Hello World  ", "hello world"},
		{"whitespace runs", "a\t\tb\n\nc \r\n d", "a b c d"},
		{"stamp", "[2025-12-04T10:22:44Z] What is the tide?", "what is the tide?"},
		{"stamp with delta", "[2025-12-04T10:22:44Z; 2 minutes passed] And now?", "and now?"},
		{"stamp with long delta", "[2025-12-04T10:22:44Z; 1 day, 3 hours and 2 minutes passed] x", "x"},
		{"stamps on every message", "[2025-12-04T10:22:44Z] Hi\n[2025-12-04T10:24:44Z; 2 minutes passed] Again",
			"hi again"},
		{"fraction and offset", "[2025-12-04T10:22:44.123+01:00] A", "a"},
		{"negative offset and delta", "[2025-12-04T10:22:44-05:30; 90 seconds passed] B", "b"},
		{"lower-case t and z", "[2025-12-04t10:22:44z] C", "c"},
		{"stamp mid text", "before [2025-12-04T10:22:44Z] after", "before after"},
		{"not a stamp: no zone", "[2025-12-04T10:22:44] x", "[2025-12-04t10:22:44] x"},
		{"not a stamp: date only", "[2025-12-04] x", "[2025-12-04] x"},
		{"not a stamp: note without passed", "[2025-12-04T10:22:44Z; later] x", "[2025-12-04t10:22:44z; later] x"},
		{"not a stamp: unclosed", "[2025-12-04T10:22:44Z x", "[2025-12-04t10:22:44z x"},
		{"brackets kept", "see [1] and [note]", "see [1] and [note]"},
		{"unicode case", "ÉCOLE Straße ΣΟΦΙΑ İstanbul", "école straße σοφια istanbul"},
		{"unicode spaces", "a\u00a0\u2003b\u3000c", "a b c"},
		{"invalid utf-8", "A\xffB", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

func TestNormalizeSameText(t *testing.T) {
	a := "[2025-12-04T10:22:44Z] When is HIGH tide?\n[2025-12-04T10:22:50Z] It is at 14:05."
	b := "  [2026-01-01T00:00:00Z; 3 hours passed]   when is high TIDE?   [2026-01-01T00:01:00Z]\tit is at 14:05.  "
	assert.Equal(t, Normalize(a), Normalize(b))
	assert.Equal(t, Fingerprint(a), Fingerprint(b))
	assert.NotEqual(t, Fingerprint(a), Fingerprint(a+" more"))
}

func FuzzNormalize(f *testing.F) {
	f.Add("[2025-12-04T10:22:44Z; 2 minutes passed] Hello  World")
	f.Add("ÉCOLE\u00a0x [2025")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		assert.NotContains(t, n, "  ")
		assert.Equal(t, strings.TrimSpace(n), n)
		if !strings.Contains(s, "[") && utf8.ValidString(s) {
			assert.Equal(t, strings.Join(strings.Fields(strings.ToLower(s)), " "), n)
		}
	})
}
