package rewards

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfflineReadersRefuseDuplicateMembers: offline scoring refuses a
// record that names a member twice, as the verifier service does, naming
// where; a decoder would otherwise keep one of the two values by accident.
func TestOfflineReadersRefuseDuplicateMembers(t *testing.T) {
	s := newTestScorer(t, func(c *Config) { c.FallbackScore = -0.5 })
	ok := `{"solution_str": "<answer>42</answer>", "ground_truth": "42", "extra_info": {"elapsed_s": 1, "time_limit_s": 10}}`
	for _, tc := range []struct{ name, line, field string }{
		{"same name", `{"solution_str": "<answer>42</answer>", "ground_truth": "42", "extra_info": {"elapsed_s": 1, "time_limit_s": 10, "elapsed_s": 99}}`, "extra_info.elapsed_s"},
		{"other case", `{"solution_str": "<answer>42</answer>", "ground_truth": "42", "Ground_Truth": "41"}`, "Ground_Truth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			sum, err := s.ScoreLines(context.Background(), TimelyGeneral, strings.NewReader(ok+"\n"+tc.line+"\n"+ok+"\n"), "in.jsonl", &out, LinesOptions{})
			require.NoError(t, err)
			assert.Equal(t, 3, sum.Items)
			assert.Equal(t, 1, sum.Failed)
			require.Len(t, sum.FirstErrors, 1)
			assert.Contains(t, sum.FirstErrors[0], "line 2: not a valid item: "+tc.field+": duplicate key")
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, lines, 3)
			var second map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[1]), &second))
			assert.Equal(t, -0.5, second["score"])
			assert.Contains(t, second["error"], "duplicate key")
		})
	}

	good := `{"solution_str": "It is 3 pm.", "ground_truth": "direct", "extra_info": {"k": "v"}}`
	dup := `{"solution_str": "It is 3 pm.", "ground_truth": "direct", "extra_info": {"k": "v", "K": "w"}}`
	ev := NewDecisionEvaluator([]string{"k"})
	err := ReadDecisions(strings.NewReader(good+"\n"+dup+"\n"), "d.jsonl", s, []string{"k"}, ev)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `d.jsonl: line 2: extra_info.K: duplicate key "K"`), "%v", err)
	assert.Equal(t, Confusion{TN: 1}, ev.Overall())
}
