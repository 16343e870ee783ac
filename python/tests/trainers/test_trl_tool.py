"""TRL 1.16's GRPOTrainer with `timeaware.trl.GetDurationEnv` as its
``environment_factory``: each rollout's get_duration call reaches a timer
of its own on the verifier, and `GRPOReward` scores the rollout on that
timer's reading.

The expected rewards are computed here from the timer's own reading (read
from the server by its token) and the row's limit, with the Timely-RL
formula written out, never with the reward code under test.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from conftest import cpu_grpo_config, scripted_rollout
from datasets import load_dataset
from oracles import read_timer, timely_general
from timeaware.trl import GetDurationEnv, GRPOReward, ToolUnavailable
from transformers import AutoTokenizer
from trl import GRPOTrainer
from trl.chat_template_utils import qwen3_schema

SECONDS = re.compile(r"^\d+(\.\d+)? seconds\.$")


class Recorder(GRPOReward):
    """GRPOReward that keeps, call by call, its rewards and the timer token
    of each rollout's environment once scored."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[list, list, list]] = []

    async def __call__(self, *args, **kwargs):
        out = await super().__call__(*args, **kwargs)
        envs = kwargs["environments"]
        self.calls.append((out, [e.timer_token for e in envs], [e.calls for e in envs]))
        return out


def test_grpo_trainer_tool_call_reaches_the_timer_and_the_reward_reads_it(
    synth_outputs, tokenizer_dir, tiny_model_dir, adapter, server, tmp_path
):
    ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(4))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema  # our template writes <tool_call>{"name", "arguments"}</tool_call>
    script: list[list[tuple[int, bool]]] = []

    def first_turn(i: int, right: bool) -> str:
        # The right answer and a well-formed call; or a wrong answer and a
        # call with an argument the tool does not take.
        answer = ds[i]["reward_model"]["ground_truth"] if right else "-1"
        args = {} if right else {"when": "now"}
        call = json.dumps({"name": "get_duration", "arguments": args})
        return f"Working it out.\n<answer>{answer}</answer>\n<tool_call>{call}</tool_call>"

    # No sampling log-probs, as TRL's own generation without vLLM, whose
    # post-tool turns have none either.
    rollout = scripted_rollout(tokenizer, ds, first_turn, script, variant=lambda k: k % 2 == 0, logprobs=False)

    reward = Recorder()
    args = cpu_grpo_config(tmp_path / "out", max_completion_length=160, max_tool_calling_iterations=1, log_completions=False)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout, environment_factory=GetDurationEnv)
    completions_seen: list = []
    orig = trainer._calculate_rewards

    def spy(inputs, prompts, completions, completion_ids_list):
        completions_seen.append(completions)
        return orig(inputs, prompts, completions, completion_ids_list)

    trainer._calculate_rewards = spy
    trainer.train()

    assert len(script) == 2 and len(reward.calls) == 2
    tool_metrics = [h for h in trainer.state.log_history if "tools/call_frequency" in h]
    assert len(tool_metrics) == 2
    for h in tool_metrics:
        assert h["tools/call_frequency"] == 1.0  # every rollout made its one call
        assert h["tools/failure_frequency"] == 0.5  # the calls with a broken argument, counted by TRL
    for call, (got, tokens, calls), comps in zip(script, reward.calls, completions_seen):
        want = []
        for (i, right), token, n, comp in zip(call, tokens, calls, comps):
            row = ds[i]
            tool_msg = comp[1]
            assert tool_msg["role"] == "tool" and tool_msg["name"] == "get_duration", comp
            if right:
                # The call reached the rollout's timer: the model read its text.
                assert n == 1 and SECONDS.match(tool_msg["content"]), tool_msg
            else:
                # Broken arguments: a clear error as the tool's result, no crash, the tool never ran.
                assert n == 0
                assert "unexpected keyword argument 'when'" in tool_msg["content"], tool_msg
            # The reward read this rollout's timer: stopped when the rollout was
            # scored, created with the row's settings.
            reading = read_timer(server.url, token)
            limit = row["extra_info"]["time_limit_s"]
            ck = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]
            assert reading["stopped"] is True
            assert reading["time_limit_s"] == limit
            assert reading["speed_factor"] == ck["speed_factor"] and reading["jitter"] == ck["jitter"]
            assert reading["elapsed_s"] > 0
            want.append(timely_general(right, reading["elapsed_s"], limit))
        assert got == want or all(abs(g - w) < 1e-9 for g, w in zip(got, want)), (got, want)
    # Eight rollouts, eight timers.
    assert len({t for _, tokens, _ in reward.calls for t in tokens}) == 8
    assert reward.stats()["unscored"] == 0


def test_get_duration_env_without_a_verifier_tells_the_model_and_counts(adapter):
    env = GetDurationEnv(base_url="http://127.0.0.1:9", retries=0, connect_timeout_s=0.5)
    row = {"extra_info": {"time_limit_s": 5.0, "timer": {"speed_factor": 2.0, "jitter": 0.0}}}
    env.reset(**row)  # the timer cannot start: no raise
    assert env.timer_token is None
    with pytest.raises(ToolUnavailable, match=r"^The elapsed time is unavailable right now\.$"):
        asyncio.run(env.get_duration())
    assert (env.calls, env.failures) == (1, 1)
    # The reward (on a live verifier) does not score the rollout as an
    # untimed one: no reward, counted; a rollout with a timer beside it is scored.
    timed = GetDurationEnv()
    timed.reset(**row)
    assert timed.timer_token
    reward = GRPOReward()
    kw = {"data_source": ["timely/general"] * 2, "reward_model": [{"ground_truth": "42"}] * 2,
          "extra_info": [row["extra_info"]] * 2, "environments": [env, timed]}
    got = asyncio.run(reward(prompts=[[]] * 2, completions=["<answer>42</answer>"] * 2, **kw))
    assert got[0] is None and got[1] is not None and got[1] > 0, got
    assert reward.stats() == {"completions": 2, "scored": 1, "unscored": 1}


def test_get_duration_env_reads_and_stops_its_own_timer(adapter, server):
    env = GetDurationEnv()
    # extra_info as a JSON string, the timer's options in extra_info.timer, the limit beside them.
    env.reset(extra_info=json.dumps({"time_limit_s": 30.0, "timer": {"speed_factor": 2.0, "jitter": 0.0}}))
    first = env.timer_token
    assert first
    assert SECONDS.match(asyncio.run(env.get_duration()))
    live = read_timer(server.url, first)
    assert (live["speed_factor"], live["time_limit_s"], live["stopped"]) == (2.0, 30.0, False)
    # The next rollout stops the previous timer and starts another.
    env.reset(extra_info={"time_limit_s": 9.0})
    assert env.timer_token and env.timer_token != first
    assert read_timer(server.url, first)["stopped"] is True
    assert read_timer(server.url, env.timer_token)["time_limit_s"] == 9.0


class _NoVerifierEnv(GetDurationEnv):
    """GetDurationEnv whose verifier is down (nothing listens on port 9)."""

    def __init__(self) -> None:
        super().__init__(base_url="http://127.0.0.1:9", retries=0, connect_timeout_s=0.5)


def test_a_tool_call_the_verifier_cannot_answer_counts_in_trls_failure_frequency(
    synth_outputs, tokenizer_dir, tiny_model_dir, adapter, tmp_path
):
    """Every rollout calls get_duration, well formed, with the tool's verifier
    down: TRL counts each call as a failure (it logged 0.0 when the tool
    answered with text), and the model reads the unavailable text as the
    tool's error."""
    ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(2))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema
    script: list[list[tuple[int, bool]]] = []
    call = json.dumps({"name": "get_duration", "arguments": {}})

    def first_turn(i: int, right: bool) -> str:
        return f"Checking the clock.\n<tool_call>{call}</tool_call>"

    rollout = scripted_rollout(tokenizer, ds, first_turn, script, logprobs=False)
    completions_seen: list = []

    def reward(completions, **kwargs):
        completions_seen.append(completions)
        return [0.0] * len(completions)  # the tool's failures are what this test reads

    args = cpu_grpo_config(tmp_path / "out", per_device_train_batch_size=2, max_steps=1, max_completion_length=160, max_tool_calling_iterations=1, log_completions=False)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout, environment_factory=_NoVerifierEnv)
    trainer.train()
    (h,) = [h for h in trainer.state.log_history if "tools/call_frequency" in h]
    assert h["tools/call_frequency"] == 1.0 and h["tools/failure_frequency"] == 1.0, h
    for comp in completions_seen[0]:
        assert comp[1]["role"] == "tool" and "The elapsed time is unavailable right now." in comp[1]["content"], comp


def test_rollouts_whose_tool_found_no_verifier_count_toward_the_stop(adapter, caplog):
    """A rollout whose timer could not start because the tool's verifier did
    not answer is unscored for that reason, counted in the run of fallbacks
    the plain path counts in, and stops the run past
    max_consecutive_fallbacks (it went unscored without limit before). With
    the verifier down from the start, the first reward stops, naming it."""
    from timeaware import scoring
    from timeaware.scoring import VerifierUnreachable

    row = {"extra_info": {"time_limit_s": 5.0}}

    def dead() -> GetDurationEnv:
        env = GetDurationEnv(base_url="http://127.0.0.1:9", retries=0, connect_timeout_s=0.5)
        env.reset(**row)
        return env

    def call(reward, envs):
        kw = {"data_source": ["timely/general"] * len(envs), "reward_model": [{"ground_truth": "42"}] * len(envs),
              "extra_info": [row["extra_info"]] * len(envs), "environments": envs}
        return asyncio.run(reward(prompts=[[]] * len(envs), completions=["<answer>42</answer>"] * len(envs), **kw))

    reward = GRPOReward(max_consecutive_fallbacks=3)
    logged: dict[str, float] = {}
    with caplog.at_level("WARNING", logger="timeaware"):
        kw = {"data_source": ["timely/general"] * 3, "reward_model": [{"ground_truth": "42"}] * 3,
              "extra_info": [row["extra_info"]] * 3, "environments": [dead(), dead(), None],
              "log_metric": logged.__setitem__}
        got = asyncio.run(reward(prompts=[[]] * 3, completions=["<answer>42</answer>"] * 3, **kw))
    # Two rollouts without their timer and one plain one, scored: the plain
    # one was sent after the tools' failures were counted, so it ends the run.
    assert got[:2] == [None, None] and got[2] is not None
    assert logged == {"timeaware/unscored": pytest.approx(2 / 3), "timeaware/verifier_unreachable": pytest.approx(2 / 3)}
    assert scoring.stats({"max_consecutive_fallbacks": 3})["consecutive_fallbacks"] == 0
    with caplog.at_level("WARNING", logger="timeaware"):
        assert call(reward, [dead(), dead()]) == [None, None]
    assert "could not be reached to start the rollout's timer" in caplog.text
    assert scoring.stats({"max_consecutive_fallbacks": 3})["fallbacks"] == 4
    with pytest.raises(VerifierUnreachable, match=r"4 items in a row .*max_consecutive_fallbacks=3"):
        call(reward, [dead(), dead()])
    down = GRPOReward(url="http://127.0.0.1:9", retries=0, connect_timeout_s=0.5)
    with pytest.raises(VerifierUnreachable, match=r"127\.0\.0\.1:9 cannot be reached"):
        call(down, [dead()])


def test_get_duration_env_rollouts_across_a_restart_of_the_verifier(restartable, adapter):
    """GetDurationEnv and GRPOReward while the verifier is killed and
    brought back on its address: the rollouts played while it was down get
    no reward and count in the run of fallbacks; once it is back, new
    rollouts are timed and scored again, and the run ends."""
    from timeaware import scoring

    adapter.configure(url=restartable.url, retries=0, connect_timeout_s=0.5, max_consecutive_fallbacks=8)
    row = {"extra_info": {"time_limit_s": 30.0}}
    reward = GRPOReward()

    def play(n):
        envs = []
        for _ in range(n):
            env = GetDurationEnv(base_url=restartable.url, retries=0, connect_timeout_s=0.5)
            env.reset(**row)
            envs.append(env)
        kw = {"data_source": ["timely/general"] * n, "reward_model": [{"ground_truth": "42"}] * n,
              "extra_info": [row["extra_info"]] * n, "environments": envs}
        return asyncio.run(reward(prompts=[[]] * n, completions=["<answer>42</answer>"] * n, **kw))

    assert all(r is not None and r > 0.6 - 1e-9 for r in play(2))
    restartable.stop()
    assert play(3) == [None, None, None]
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"]) == (3, 3), st
    restartable.start()
    assert all(r is not None and r > 0.6 - 1e-9 for r in play(2))
    assert scoring.stats()["consecutive_fallbacks"] == 0
    assert reward.stats() == {"completions": 7, "scored": 4, "unscored": 3}
