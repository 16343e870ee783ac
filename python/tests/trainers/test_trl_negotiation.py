"""TRL 1.16's GRPOTrainer with `timeaware.trl.NegotiationEnv` as its
``environment_factory``: scripted tool calls play whole negotiation episodes
against the service's scripted opponent, and `GRPOReward` gives each
finished episode the service's score.

The expected rewards are computed here from the row's payoff table (the
role's points for the other side's opening offer, or its BATNA, normalised
over its agreements), never with the reward code under test.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from conftest import cpu_grpo_config, scripted_rollout
from datasets import load_dataset
from oracles import batna_payoff, opening_payoff
from timeaware.trl import (
    NEGOTIATION_OVER,
    NEGOTIATION_UNAVAILABLE,
    GRPOReward,
    NegotiationEnv,
)
from transformers import AutoTokenizer
from trl import GRPOTrainer
from trl.chat_template_utils import qwen3_schema

ACCEPT = {"text": "That works for me, I accept.", "action": {"action": "accept"}}
WALK_AWAY = {"text": "I will take my outside option.", "action": {"action": "batna"}}
AFTER = {"text": "One more thing about the start date."}


def truth(row) -> dict:
    return json.loads(row["reward_model"]["ground_truth"])


def negotiation_rows(synth_outputs, opens_other: int, opens_self: int):
    """Rows with distinct prompts: some where the other side opens with an
    offer, some where the model speaks first."""
    ds = load_dataset("parquet", data_files=str(synth_outputs["negotiation"]), split="train")
    keep, seen, counts = [], set(), {True: 0, False: 0}
    want = {True: opens_other, False: opens_self}
    for i in range(len(ds)):
        g = truth(ds[i])
        other = g["first_speaker"] != g["role"]
        key = json.dumps(ds[i]["prompt"])
        if key in seen or counts[other] == want[other]:
            continue
        seen.add(key)
        counts[other] += 1
        keep.append(i)
    assert counts == {True: opens_other, False: opens_self}, counts
    return ds.select(keep)


def calls(*messages: dict) -> str:
    """One assistant turn whose tool calls send the messages in order."""
    return "Let me answer.\n" + "".join(
        "<tool_call>" + json.dumps({"name": "send", "arguments": m}) + "</tool_call>" for m in messages
    )


class Recorder(GRPOReward):
    """GRPOReward that keeps, call by call, its rewards and each rollout's environment counters."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[list, list]] = []

    async def __call__(self, *args, **kwargs):
        out = await super().__call__(*args, **kwargs)
        self.calls.append((out, [(e.steps, e.refused, e.failures, e.done) for e in kwargs["environments"]]))
        return out


def test_grpo_trainer_plays_whole_episodes_and_rewards_the_payoff(
    synth_outputs, tokenizer_dir, tiny_model_dir, adapter, server, tmp_path, caplog
):
    ds = negotiation_rows(synth_outputs, opens_other=2, opens_self=2)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema  # our template writes <tool_call>{"name", "arguments"}</tool_call>
    script: list[list[tuple[int, int]]] = []

    def turn(i: int, take: int) -> str:
        # The first rollout of a row accepts the other side's opening and
        # then sends one more message; the second walks away.
        return calls(ACCEPT, AFTER) if take == 0 else calls(WALK_AWAY)

    rollout = scripted_rollout(tokenizer, ds, turn, script, logprobs=False)

    reward = Recorder()
    args = cpu_grpo_config(tmp_path / "out", max_completion_length=400, max_tool_calling_iterations=1, log_completions=False)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout, environment_factory=NegotiationEnv)
    completions_seen: list = []
    orig = trainer._calculate_rewards

    def spy(inputs, prompts, completions, completion_ids_list):
        completions_seen.append(completions)
        return orig(inputs, prompts, completions, completion_ids_list)

    trainer._calculate_rewards = spy
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        trainer.train()

    assert len(script) == 2 and len(reward.calls) == 2
    tool_metrics = [h for h in trainer.state.log_history if "tools/failure_frequency" in h]
    assert len(tool_metrics) == 2
    unfinished = 0
    for call, (got, counters), comps, h in zip(script, reward.calls, completions_seen, tool_metrics):
        n_calls = n_failed = 0
        for (i, take), r, (steps, refused, failures, done), comp in zip(call, got, counters, comps):
            g = truth(ds[i])
            opens_other = g["first_speaker"] != g["role"]
            results = [m for m in comp if m["role"] == "tool"]
            assert all(m["name"] == "send" for m in results), comp
            assert failures == 0
            if take == 1:
                # Walked away: over at once, worth the role's BATNA.
                assert [m["content"] for m in results] == [NEGOTIATION_OVER]
                assert (steps, refused, done) == (1, 0, True)
                assert r == pytest.approx(batna_payoff(g), abs=1e-9)
                n_calls += 1
            elif opens_other:
                # Accepted the opening: a deal on it; the message after the end is refused, as a tool error.
                assert results[0]["content"] == NEGOTIATION_OVER
                assert "the negotiation is over: no message is delivered after it ended" in results[1]["content"]
                assert (steps, refused, done) == (1, 1, True)
                assert r == pytest.approx(opening_payoff(g), abs=1e-9)
                assert abs(opening_payoff(g) - batna_payoff(g)) > 0.1  # a deal, not the fallback
                n_calls, n_failed = n_calls + 2, n_failed + 1
            else:
                # Nothing to accept when the model speaks first: the episode goes
                # on (the opponent answers each message) and is not finished, so no reward.
                assert (steps, refused, done) == (2, 0, False)
                prefix = ds[i]["extra_info"]["turn_prefix"].split("{")[0]
                for m in results:  # the opponent's counter-offer, after the condition's prefix
                    assert m["content"].startswith(prefix), m
                    assert json.loads(m["content"][m["content"].index("{"):])["action"]["action"] == "propose", m
                assert r is None
                n_calls += 2
                unfinished += 1
        assert h["tools/failure_frequency"] == pytest.approx(n_failed / n_calls)
        assert h["tools/call_frequency"] == pytest.approx(n_calls / len(call))
    assert unfinished == 2  # each self-opening row was sampled and accepted once
    assert reward.stats() == {"completions": 8, "scored": 6, "unscored": 2}
    assert any("negotiation: the negotiation episode did not finish" in r.getMessage() for r in caplog.records)


def test_negotiation_env_steps_on_the_rows_clock(synth_outputs, adapter, server):
    ds = negotiation_rows(synth_outputs, opens_other=0, opens_self=1)
    row = ds[0]
    g = truth(row)
    env = NegotiationEnv(opponent={"beta": 1.0})
    with pytest.raises(RuntimeError, match="before the environment was reset"):
        env.send("Hello.")
    assert env.reset(**row) is None  # the prompt already holds the opening
    offer = {"action": "propose", "offer": {i["id"]: i["options"][0] for i in g["scenario"]["issues"]}}
    shown = env.send("Here is my first proposal for every item.", offer)
    # The opponent's answer as the model reads it: the condition's prefix, then its message.
    prefix = row["extra_info"]["turn_prefix"]
    assert shown.startswith(prefix.split("{")[0])
    reply = json.loads(shown[shown.index("{"):])
    assert set(reply) >= {"text", "action"}
    assert (env.steps, env.done) == (1, False)
    # Both messages are on the clock: the agent's with its think time from the rollout's timer.
    transcript = env.episode.transcript
    assert [m["role"] for m in transcript] == [g["role"], next(r["id"] for r in g["scenario"]["roles"] if r["id"] != g["role"])]
    assert transcript[0]["think_s"] > 0
    assert env.send("I will take my outside option.", {"action": "batna"}) == NEGOTIATION_OVER
    assert env.score == pytest.approx(batna_payoff(g), abs=1e-9)
    assert env.details["batna_taken"] == 1
    with pytest.raises(RuntimeError, match="the negotiation is over"):
        env.send("Wait.")
    assert env.refused == 1
    # The next rollout starts afresh.
    env.reset(**row)
    assert (env.steps, env.refused, env.done, env.score) == (0, 0, False, None)


def test_negotiation_env_without_a_verifier_tells_the_model_and_counts(synth_outputs, adapter):
    ds = negotiation_rows(synth_outputs, opens_other=1, opens_self=0)
    env = NegotiationEnv(base_url="http://127.0.0.1:9", retries=0)
    env.reset(**ds[0])  # the timer cannot start: no raise
    assert env.send("I accept.", {"action": "accept"}) == NEGOTIATION_UNAVAILABLE
    assert (env.steps, env.failures, env.done) == (0, 1, False)
    with pytest.raises(ValueError, match="reward_model.ground_truth"):
        env.reset(prompt=[], reward_model={"ground_truth": ""})
    with pytest.raises(ValueError, match="unknown setting"):
        NegotiationEnv(speed=2.0)


def test_an_episode_the_verifier_did_not_answer_is_named_so_and_counts_toward_the_stop(synth_outputs, adapter, caplog):
    """An episode cut short because the verifier did not answer is unscored
    as such, not as an episode the model left unfinished (which the docs
    say to expect early in training), and counts toward the stop."""
    from timeaware.scoring import VerifierUnreachable

    ds = negotiation_rows(synth_outputs, opens_other=1, opens_self=0)

    def dead() -> NegotiationEnv:
        env = NegotiationEnv(base_url="http://127.0.0.1:9", retries=0)
        env.reset(**ds[0])
        env.send("I accept.", {"action": "accept"})
        return env

    def call(reward, envs):
        return asyncio.run(reward(prompts=[[]] * len(envs), completions=["x"] * len(envs),
                                  data_source=["negotiation"] * len(envs), environments=envs))

    reward = GRPOReward(max_consecutive_fallbacks=2)
    with caplog.at_level("WARNING", logger="timeaware"):
        assert call(reward, [dead(), dead()]) == [None, None]
    assert "could not be reached during the episode" in caplog.text
    assert "did not finish" not in caplog.text
    with pytest.raises(VerifierUnreachable, match="max_consecutive_fallbacks=2"):
        call(reward, [dead()])
