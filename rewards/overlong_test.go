package rewards

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// n is extra_info with n response tokens and, when budget > 0, that token
// budget.
func n(tokensUsed, budget float64) ExtraInfo {
	ei := ExtraInfo{ResponseTokens: tokens(tokensUsed)}
	if budget > 0 {
		ei.TokenBudget = tokens(budget)
	}
	return ei
}

// TestDAPOOverlongByHand: DAPO's Eq. 7 plus Eq. 13, worked by hand at the
// paper's L_max 20,480 and L_cache 4,096 (no penalty up to 16,384), on a
// small cap of 10 with a buffer of 4 (from 6 on), and with no buffer.
func TestDAPOOverlongByHand(t *testing.T) {
	runLengthCases(t, DAPOOverlong, nil, []lengthCase{
		// +1 + 0
		{name: "short and right", sol: right, ei: n(100, 0), score: 1, within: 1},
		// −1 + 0
		{name: "short and wrong", sol: wrong, ei: n(100, 0), score: -1, within: 1},
		// at 16,384 = 20,480 − 4,096 no penalty yet
		{name: "at the start of the buffer", sol: right, ei: n(16384, 0), score: 1, within: 1},
		// 1 + (16,384 − 16,385)/4,096
		{name: "one token into the buffer", sol: right, ei: n(16385, 0), score: 1 - 1.0/4096, within: 1},
		// −1 + (16,384 − 18,432)/4,096 = −1 − 0.5
		{name: "half through the buffer, wrong", sol: wrong, ei: n(18432, 0), score: -1.5, within: 1},
		// 1 + (16,384 − 20,480)/4,096 = 1 − 1
		{name: "exactly at the cap", sol: right, ei: n(20480, 0), score: 0, within: 1},
		// past L_max the penalty stays −1
		{name: "one token over the cap", sol: right, ei: n(20481, 0), score: 0, over: 1},
		// no answer: −1, and −1 at the cap
		{name: "a thinking cut off is a missing answer", sol: cut, ei: n(20480, 0), score: -2, within: 1},
		// the row's cap 8,000: 1 + (3,904 − 6,000)/4,096
		{name: "the row's own cap", sol: right, ei: n(6000, 8000), score: 1 + (3904.0-6000)/4096, within: 1},
		// a cap equal to the buffer: the penalty runs from 0 tokens,
		// 1 + (0 − 2,048)/4,096
		{name: "a cap as long as the buffer", sol: right, ei: n(2048, 4096), score: 0.5, within: 1},
	})
	runLengthCases(t, DAPOOverlong, func(c *Config) { c.Length.DAPOMaxTokens, c.Length.DAPOBufferTokens = 10, 4 }, []lengthCase{
		{name: "small cap, at 6", sol: right, ei: n(6, 0), score: 1, within: 1},
		// 1 + (6 − 7)/4
		{name: "small cap, at 7", sol: right, ei: n(7, 0), score: 0.75, within: 1},
		// −1 + (6 − 9)/4
		{name: "small cap, at 9, wrong", sol: wrong, ei: n(9, 0), score: -1.75, within: 1},
		{name: "small cap, at 10", sol: right, ei: n(10, 0), score: 0, within: 1},
		{name: "small cap, at 11", sol: right, ei: n(11, 0), score: 0, over: 1},
	})
	runLengthCases(t, DAPOOverlong, func(c *Config) { c.Length.DAPOMaxTokens, c.Length.DAPOBufferTokens = 10, 0 }, []lengthCase{
		{name: "no buffer, at the cap", sol: right, ei: n(10, 0), score: 1, within: 1},
		{name: "no buffer, one over", sol: right, ei: n(11, 0), score: 0, over: 1},
	})

	s := newTestScorer(t, nil)
	it := Item{DataSource: DAPOOverlong.DataSource, SolutionStr: right, GroundTruth: json.RawMessage(`"42"`), ExtraInfo: n(18432, 0)}
	res := s.Score(context.Background(), &it)
	require.NoError(t, res.Err)
	assert.Equal(t, -0.5, detailMap(DAPOOverlong, res)["overlong_penalty"])
	assert.Equal(t, 20480.0, detailMap(DAPOOverlong, res)["token_budget"])

	it.ExtraInfo = n(500, 1000)
	res = s.Score(context.Background(), &it)
	require.ErrorIs(t, res.Err, ErrInvalidItem)
	assert.EqualError(t, res.Err, "extra_info.token_budget: 1000 is below the overlong buffer (rewards.length.dapo_buffer_tokens 4096)")
}

// TestCosineScaledByHand: CosFn worked by hand with TRL's defaults (right:
// 1 at length 0 to 0.5 at L_max; wrong: −1 to −0.5), at a quarter, half
// and all of an L_max of 400, past it, and with the authors' script values.
func TestCosineScaledByHand(t *testing.T) {
	quarter := 0.5 + 0.5*(1+math.Sqrt2/2)/2 // cos(π/4) = √2/2
	runLengthCases(t, CosineScaled, nil, []lengthCase{
		{name: "a quarter, right", sol: right, ei: n(100, 400), score: quarter, within: 1},
		{name: "a quarter, wrong", sol: wrong, ei: n(100, 400), score: -quarter, within: 1},
		// cos(π/2) = 0: halfway between the ends
		{name: "half, right", sol: right, ei: n(200, 400), score: 0.75, within: 1},
		{name: "half, wrong", sol: wrong, ei: n(200, 400), score: -0.75, within: 1},
		{name: "at L_max, right", sol: right, ei: n(400, 400), score: 0.5, within: 1},
		{name: "at L_max, wrong", sol: wrong, ei: n(400, 400), score: -0.5, within: 1},
		{name: "past L_max counts as L_max", sol: right, ei: n(900, 400), score: 0.5, over: 500},
		// half of the default L_max, 4,096
		{name: "the default L_max", sol: right, ei: n(2048, 0), score: 0.75, within: 1},
		{name: "a thinking cut off is wrong", sol: cut, ei: n(200, 400), score: -0.75, within: 1},
	})
	// The authors' script values: right 2 → 1, wrong −10 → 0.
	runLengthCases(t, CosineScaled, func(c *Config) {
		c.Length.CosineCorrectShort, c.Length.CosineCorrectLong, c.Length.CosineWrongShort, c.Length.CosineWrongLong = 2, 1, -10, 0
	}, []lengthCase{
		{name: "script values, half, right", sol: right, ei: n(200, 400), score: 1.5, within: 1},
		{name: "script values, half, wrong", sol: wrong, ei: n(200, 400), score: -5, within: 1},
		{name: "script values, at L_max, wrong", sol: wrong, ei: n(400, 400), score: 0, within: 1},
	})
}
