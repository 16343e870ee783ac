package conversation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessageText(t *testing.T) {
	s := "hi"
	assert.Equal(t, "hi", (&Message{Content: &s}).Text())
	assert.Equal(t, "", (&Message{}).Text())
}

func TestFinalAndLastToolCallTurn(t *testing.T) {
	var empty Trajectory
	assert.Nil(t, empty.Final())
	assert.Equal(t, -1, empty.LastToolCallTurn())

	call := []ToolCall{{Type: "function", Function: FunctionCall{Name: "f"}}}
	tr := Trajectory{History: []Message{
		{Role: RoleUser},
		{Role: RoleAssistant, ToolCalls: call},
		{Role: RoleTool, ToolCalls: call}, // only assistant turns count
		{Role: RoleAssistant, ToolCalls: call},
		{Role: RoleTool},
		{Role: RoleAssistant},
		{Role: RoleUser},
	}}
	assert.Equal(t, 3, tr.LastToolCallTurn())
	assert.Same(t, &tr.History[6], tr.Final())
}

func TestTimeFormatting(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"2025-12-04T10:22:44Z", "2025-12-04T10:22:44Z"},
		{"2025-12-04T11:22:44+01:00", "2025-12-04T10:22:44Z"},
		{"2025-12-04T10:22:44.250Z", "2025-12-04T10:22:44.25Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tm, err := ParseTime(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, FormatTime(tm))
		})
	}
	for _, bad := range []string{"", "2025-12-04", "2025-12-04 10:22:44Z", "2025-12-04T10:22:44", "yesterday"} {
		t.Run("bad "+bad, func(t *testing.T) {
			tm, err := ParseTime(bad)
			require.Error(t, err)
			assert.True(t, tm.IsZero())
			assert.Contains(t, err.Error(), "want RFC 3339")
		})
	}
	assert.Equal(t, "2025-01-02T03:04:05Z", FormatTime(time.Date(2025, 1, 2, 4, 4, 5, 0, time.FixedZone("", 3600))))
}

func TestNormalize(t *testing.T) {
	sens := map[string]string{"low": "low", " LOW ": "low", "Medium": "medium", "mid": "medium", "HIGH": "high"}
	for in, want := range sens {
		got, ok := NormalizeSensitivity(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "extreme", "hi"} {
		_, ok := NormalizeSensitivity(bad)
		assert.False(t, ok, bad)
	}

	prefs := map[string]string{
		"tool": PreferTool, "preferTool": PreferTool, "prefer_tool": PreferTool, "Prefer-Tool": PreferTool,
		"direct": PreferDirect, "NoTool": PreferDirect, "preferNoTool": PreferDirect, "prefer_notool": PreferDirect,
		"prefer-notool": PreferDirect, "no_tool": PreferDirect, " Direct ": PreferDirect,
	}
	for in, want := range prefs {
		got, ok := NormalizePreference(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "maybe", "no tool", "lean_tool"} {
		_, ok := NormalizePreference(bad)
		assert.False(t, ok, bad)
	}
}

func TestScenarioAlias(t *testing.T) {
	for _, tt := range []struct{ id, want string }{
		{"flight_rep_fail_3", "flight_rep_fail"},
		{"cloud_server_load_balancer_usr_confirm_12", "cloud_server_load_balancer_usr_confirm"},
		{"Pharmacy_Medicine_Fulfillment_&_Hold_usr_confirm_0", "Pharmacy_Medicine_Fulfillment_&_Hold_usr_confirm"},
		{"weatherforecast", "weatherforecast"},
		{"abc_", "abc_"},
		{"_12", "_12"},
		{"a_1_2", "a_1"},
		{"x12", "x12"},
		{"", ""},
	} {
		assert.Equal(t, tt.want, ScenarioAlias(tt.id), tt.id)
	}
}
