"""DAPO's soft overlong punishment and the cosine-scaled reward, held to
TRL's own functions: the service's `length/dapo` and `length/cosine` on the
same completions (their token counts) give what
`trl.rewards.get_soft_overlong_punishment` and
`trl.rewards.get_cosine_scaled_reward` give, TRL's code being the oracle.

TRL's cosine reward takes its correctness from `accuracy_reward`
(math_verify); here the answers are right or wrong by construction, so the
test hands TRL that correctness and compares the length terms, which are
what the two implement apart."""

from __future__ import annotations

import pytest

#: Lengths around every edge: the start, a quarter, half, the buffer's
#: start, one token in, the cap, one token over, far past it.
LENGTHS = (1, 100, 199, 200, 201, 300, 399, 400, 401, 800, 5000)
RIGHT, WRONG = "<answer>\\boxed{42}</answer>", "<answer>\\boxed{41}</answer>"


def score(server, source: str, n: int, text: str, budget: int) -> dict:
    from timeaware.client import Client

    item = {"data_source": source, "solution_str": text, "ground_truth": "42",
            "extra_info": {"response_tokens": n, "token_budget": budget}}
    (result,) = Client(server.url).score_batch([item])
    assert "error" not in result, result
    return result


@pytest.mark.parametrize("n", LENGTHS)
def test_dapo_penalty_is_trls(server, n):
    """TRL's punishment with L_max 4,496 and L_cache 4,096 (the service's
    default buffer): no penalty to 400 tokens, −1 from 4,496; the score adds
    the ±1 of a right or wrong answer."""
    from trl.rewards import get_soft_overlong_punishment

    cap = 4096 + 400
    ids = [[7] * (cap - 4096 + n)]
    (trl,) = get_soft_overlong_punishment(max_completion_len=cap, soft_punish_cache=4096)(completion_ids=ids)
    for text, sign in ((RIGHT, 1), (WRONG, -1)):
        got = score(server, "length/dapo", len(ids[0]), text, cap)
        assert got["overlong_penalty"] == pytest.approx(trl, abs=1e-12)
        assert got["score"] == pytest.approx(sign + trl, abs=1e-12)


@pytest.mark.parametrize("n", LENGTHS)
def test_cosine_is_trls(server, monkeypatch, n):
    """TRL's cosine reward at its defaults with max_len 400, for a right and
    a wrong answer of n tokens, past max_len included."""
    import trl.rewards.accuracy_rewards as accuracy
    from trl.rewards import get_cosine_scaled_reward

    monkeypatch.setattr(accuracy, "accuracy_reward", lambda completions, solution: [1.0, 0.0])
    completions = [[{"role": "assistant", "content": RIGHT}], [{"role": "assistant", "content": WRONG}]]
    trl = get_cosine_scaled_reward(max_len=400)(completions, ["$42$", "$42$"], [[7] * n, [7] * n])
    for text, want in zip((RIGHT, WRONG), trl, strict=True):
        assert score(server, "length/cosine", n, text, 400)["score"] == pytest.approx(want, abs=1e-12)
