package rewards

import (
	"context"

	"math"
)

// dapoKeys are the details of length/dapo: those of the other length
// rewards (token_budget is L_max, within_budget n_y ≤ L_max) and
//
//	overlong_penalty  R_length, from 0 down to −1
var dapoKeys = append(append([]string(nil), lengthKeys...), "overlong_penalty")

// lOverlong is the index of overlong_penalty among dapoKeys.
var lOverlong = keyIndex(dapoKeys, "overlong_penalty")

// DAPOOverlong is DAPO's rule-based reward with its soft overlong
// punishment ("DAPO: An Open-Source LLM Reinforcement Learning System at
// Scale", Eq. 7 for the correctness reward, Eq. 13 for the penalty added
// to it):
//
//	r = (2c − 1) + R_length(n_y)
//	R_length = 0                            if n_y ≤ L_max − L_cache
//	         = ((L_max − L_cache) − n_y)/L_cache   if n_y ≤ L_max
//	         = −1                           past L_max
//
// c is the answer check's correctness (±1 as in Eq. 7 when it is 0 or 1),
// n_y = extra_info.response_tokens, L_max = extra_info.token_budget, else
// LengthConfig.DAPOMaxTokens (20,480, the paper's generation cap of §4.1),
// and L_cache = LengthConfig.DAPOBufferTokens (4,096, its soft punish
// cache). The penalty is that of TRL's get_soft_overlong_punishment
// (trl/rewards/other_rewards.py), which a test holds it to; VeRL's DAPO
// reward manager scales it by a penalty factor (1.0 in the paper's
// script) and does not stop at −1 past L_max, a length its generation cap
// never lets a response reach. A thinking the server closed at its budget
// (vLLM's thinking_token_budget) is scored as any other: its answer after
// the closing tag is checked, and its tokens count in n_y.
var DAPOOverlong = &Reward{
	DataSource:  "length/dapo",
	Summary:     "DAPO: correctness as ±1 plus the soft overlong punishment, 0 to −1 over the last L_cache tokens before L_max",
	GroundTruth: lengthGroundTruth,
	Keys:        dapoKeys,
	score:       scoreDAPO,
}

func scoreDAPO(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	cfg := s.cfg.Length
	maxTokens, err := budgetOr("token_budget", it.ExtraInfo.TokenBudget, cfg.DAPOMaxTokens)
	if err != nil {
		return 0, err
	}
	buffer := float64(cfg.DAPOBufferTokens)
	if buffer > maxTokens {
		return 0, fieldErrorf("extra_info.token_budget", "%v is below the overlong buffer (rewards.length.dapo_buffer_tokens %d)", maxTokens, cfg.DAPOBufferTokens)
	}
	c, _, err := s.scoreLength(ctx, it, maxTokens, d)
	if err != nil {
		return 0, err
	}
	d[lOverlong] = OverlongPenalty(d[lResponse], maxTokens, buffer)
	return 2*c - 1 + d[lOverlong], nil
}

// OverlongPenalty is R_length of DAPO's Eq. 13 for a response of n tokens
// with the cap maxTokens (L_max) and the buffer (L_cache): 0 up to
// maxTokens − buffer, falling by 1/buffer a token to −1 at maxTokens, and
// −1 past it. A buffer of 0 is a hard cap: 0 up to maxTokens, −1 past it.
func OverlongPenalty(n, maxTokens, buffer float64) float64 {
	if n <= maxTokens-buffer {
		return 0
	}
	if n <= maxTokens {
		return (maxTokens - buffer - n) / buffer
	}
	return -1
}

// CosineScaled is the cosine length-scaled reward ("Demystifying Long
// Chain-of-Thought Reasoning in LLMs", its CosFn reward): a right answer
// earns more the shorter it is, a wrong one loses less the longer it
// thought, each along half a cosine from its value at length 0 to its
// value at L_max:
//
//	CosFn(n, a_0, a_L) = a_L + (a_0 − a_L)·(1 + cos(π·min(n, L_max)/L_max))/2
//	r = c·CosFn(n_y, r_0^c, r_L^c) + (1 − c)·CosFn(n_y, r_0^w, r_L^w)
//
// c is the answer check's correctness (so a 0/1 check picks one curve),
// n_y = extra_info.response_tokens and L_max = extra_info.token_budget,
// else LengthConfig.CosineMaxTokens. The values are LengthConfig's
// Cosine* keys; their defaults, r_0^c = 1, r_L^c = 0.5, r_0^w = −1 and
// r_L^w = −0.5, are those of TRL's get_cosine_scaled_reward
// (trl/rewards/accuracy_rewards.py), which a test holds this reward to,
// and like it a length past L_max counts as L_max. The authors' released
// scripts use r_0^c = 2, r_L^c = 1, r_0^w = −10, r_L^w = 0 with L_max =
// 14,336 and add an exceed-length penalty of −10 near L_max, which this
// reward leaves out: set the keys to their values to reproduce the rest. A
// thinking the server closed at its budget is scored as any other.
var CosineScaled = &Reward{
	DataSource:  "length/cosine",
	Summary:     "cosine-scaled: a right answer earns more the shorter it is, a wrong one loses less the longer, along a cosine to L_max",
	GroundTruth: lengthGroundTruth,
	Keys:        lengthKeys,
	score:       scoreCosine,
}

func scoreCosine(ctx context.Context, s *Scorer, it *Item, d []float64) (float64, error) {
	cfg := s.cfg.Length
	maxTokens, err := budgetOr("token_budget", it.ExtraInfo.TokenBudget, cfg.CosineMaxTokens)
	if err != nil {
		return 0, err
	}
	c, _, err := s.scoreLength(ctx, it, maxTokens, d)
	if err != nil {
		return 0, err
	}
	n := d[lResponse]
	right := CosineValue(n, maxTokens, cfg.CosineCorrectShort, cfg.CosineCorrectLong)
	wrong := CosineValue(n, maxTokens, cfg.CosineWrongShort, cfg.CosineWrongLong)
	return c*right + (1-c)*wrong, nil
}

// CosineValue is CosFn at n tokens: short at length 0, long at maxTokens
// and past it, along half a cosine between them.
func CosineValue(n, maxTokens, short, long float64) float64 {
	progress := min(n/maxTokens, 1)
	return long + (short-long)*(1+math.Cos(math.Pi*progress))/2
}
