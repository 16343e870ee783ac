"""TRL 1.16's GRPOTrainer with `timeaware.trl.GRPOReward` on our outputs.

Every expected reward is computed here from the row (exact match of the
puzzle's dates, the Timely-RL formula, the right TRAVELER answer, the
negotiation role's normalised BATNA, the TicToc label), never with the
reward code under test. The completions are scripted: once as the keyword
arguments GRPOTrainer passes to a reward function, once through a real
2-step GRPOTrainer run whose rollout function returns them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import subprocess

import pytest
from conftest import (
    LONG_THINK,
    SHORT_THINK,
    cpu_grpo_config,
    expected_counts,
    length_text,
    right_answer,
    scripted_ids,
    scripted_rollout,
)
from datasets import load_dataset
from oracles import elastic, kimi, lcpo_max, shorterbetter
from timeaware import scoring
from timeaware.trl import GRPOReward
from trl import GRPOTrainer

# The data sources, as the names of the session's outputs.
SOURCES = ["budget", "puzzles", "traveler", "negotiation", "pairs"]
WRONG_DATE = "1901-01-01"


def rows(name: str, synth_outputs, pairs_split, n: int = 4):
    """n rows of one output, with distinct prompts (the rollout function
    finds a row by its prompt); TRAVELER rows with a crisp answer only."""
    path = pairs_split["train"] if name == "pairs" else synth_outputs[name]
    ds = load_dataset("parquet", data_files=str(path), split="train")
    keep, seen = [], set()
    for i in range(len(ds)):
        row = ds[i]
        if name == "traveler" and "answer" not in json.loads(row["reward_model"]["ground_truth"]):
            continue
        key = json.dumps(row["prompt"])
        if name == "pairs" and sum(ds[j]["label"] == row["label"] for j in keep) == n // 2:
            continue  # as many tool as direct rows
        if key not in seen:
            seen.add(key)
            keep.append(i)
        if len(keep) == n:
            break
    assert len(keep) == n, f"{name}: only {len(keep)} usable rows"
    return ds.select(keep)


def completion(row, right: bool) -> str:
    """A scripted completion: right or wrong by the row's own ground truth."""
    if "label" in row and row.get("data_source") is None:  # a pairs row
        call = json.dumps({"name": "get_time", "parameters": {}})
        wants_tool = row["label"] == "tool"
        return call if wants_tool == right else "It is still the same, so here is the answer again."
    ds, gt = row["data_source"], row["reward_model"]["ground_truth"]
    if right:
        return right_answer(ds, gt, row["extra_info"])
    if ds == "timepuzzles":
        assert WRONG_DATE not in gt
        return f"Checked.\nMY ANSWER: {WRONG_DATE}"
    if ds.startswith("timely/"):
        return "Working it out.\n<answer>-1</answer>"
    if ds == "traveler":
        return "I cannot tell from these events."  # no ANSWER line
    return "Let us talk it over."  # negotiation: not a JSON message


def expected(row, right: bool, elapsed_s: float | None = None) -> float:
    """The reward of the scripted completion, from the row alone."""
    if row.get("data_source") is None:  # TicToc decision: 1 when the action taken is the preferred one
        return 1.0 if right else 0.0
    ds, gt = row["data_source"], row["reward_model"]["ground_truth"]
    if ds == "timepuzzles" or ds == "traveler":
        return 1.0 if right else 0.0
    if ds.startswith("timely/"):
        # Timely-RL: 0 if late; 0.1 if on time and wrong; 0.1 + 0.5 + 0.4·sin(π/2·min(t/T, 1)) if right.
        limit = row["extra_info"]["time_limit_s"]
        if elapsed_s is not None and elapsed_s > limit:
            return 0.0
        u = 0.0 if elapsed_s is None else math.sin(math.pi / 2 * min(elapsed_s / limit, 1.0))
        return 0.1 + 0.5 + 0.4 * u if right else 0.1
    assert ds == "negotiation"
    if not right:
        return 0.0
    g = json.loads(gt)
    role = g["role"]
    batna = next(r["batna"] for r in g["scenario"]["roles"] if r["id"] == role)
    best = sum(max(i["points"][role]) for i in g["scenario"]["issues"])
    worst = sum(min(i["points"][role]) for i in g["scenario"]["issues"])
    return min(max((batna - worst) / (best - worst), 0.0), 1.0)


def trl_kwargs(ds, completions: list, metrics: dict) -> dict:
    """The keyword arguments GRPOTrainer 1.16 passes a reward function
    (_calculate_rewards): every column but prompt as a list, one entry per
    completion, plus trainer_state, log_extra and log_metric."""
    per = len(completions) // len(ds)
    inputs = [ds[i] for i in range(len(ds)) for _ in range(per)]
    kw = {k: [x[k] for x in inputs] for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")}
    kw.update(
        prompts=[x["prompt"] for x in inputs],
        completions=completions,
        completion_ids=[[1, 2]] * len(completions),
        trainer_state=None,
        log_extra=lambda column, values: None,
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
    )
    return kw


@pytest.mark.parametrize("name", SOURCES)
def test_reward_call_as_trl_makes_it(name, synth_outputs, pairs_split, adapter):
    ds = rows(name, synth_outputs, pairs_split)
    if name == "budget":  # a measured time for U(t): half the budget for two rows, over it for the others
        ds = ds.map(
            lambda r, i: {"extra_info": {**r["extra_info"], "elapsed_s": r["extra_info"]["time_limit_s"] * (0.5 if i < 2 else 1.5)}},
            with_indices=True,
        )
    comps, want = [], []
    for i in range(len(ds)):
        row = ds[i]
        for right in (True, False):
            text = completion(row, right)
            if name == "pairs" and text.startswith("{"):
                # Conversational, with the call parsed out as TRL's parse_response gives it.
                call = json.loads(text)
                msg = {"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": call["name"], "arguments": call["parameters"]}}]}
            else:
                msg = {"role": "assistant", "content": text}
            comps.append([msg])
            want.append(expected(row, right, row["extra_info"].get("elapsed_s") if name == "budget" else None))
    reward = GRPOReward()
    assert reward.__name__ == "timeaware"
    metrics: dict = {}
    got = asyncio.run(reward(**trl_kwargs(ds, comps, metrics)))
    assert got == pytest.approx(want, abs=1e-9)
    assert metrics == {"timeaware/unscored": [0.0], "timeaware/verifier_unreachable": [0.0]}
    assert reward.stats() == {"completions": len(want), "scored": len(want), "unscored": 0}
    # A standard (not conversational) completion is scored as the same text.
    std = asyncio.run(reward(**trl_kwargs(ds.select([0]), [completion(ds[0], True)], metrics)))
    assert std == pytest.approx([expected(ds[0], True, ds[0]["extra_info"].get("elapsed_s") if name == "budget" else None)])


def test_rows_without_a_reward_are_left_out_counted_and_logged(synth_outputs, pairs_split, adapter, caplog):
    ds = rows("puzzles", synth_outputs, pairs_split, n=3)
    comps = [completion(ds[i], True) for i in range(3)]
    ds = ds.map(lambda r, i: {"data_source": ["timepuzzles", "no/such-reward", None][i]}, with_indices=True)
    metrics: dict = {}
    reward = GRPOReward()
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        got = asyncio.run(reward(**trl_kwargs(ds, comps, metrics)))
    assert got == [1.0, None, None]
    assert reward.stats() == {"completions": 3, "scored": 1, "unscored": 2}
    assert metrics["timeaware/unscored"] == [pytest.approx(2 / 3)]
    line = "\n".join(r.getMessage() for r in caplog.records if "completions get" in r.getMessage())
    assert "2 of 3 completions get no reward (None)" in line
    assert 'no/such-reward: rejected by the verifier: data_source: unknown data_source "no/such-reward"' in line
    assert "the row has no data_source, and no label of a pairs row" in line
    # With unscored="fallback" they get the fallback score, counted the same.
    fb = GRPOReward(unscored="fallback", fallback_score=-1.0)
    assert asyncio.run(fb(**trl_kwargs(ds, comps, {}))) == [1.0, 0.0, -1.0]  # the server's fallback, then ours
    assert fb.stats()["unscored"] == 2


def test_verifier_down(synth_outputs, pairs_split, adapter, caplog):
    ds = rows("puzzles", synth_outputs, pairs_split, n=2)
    comps = [completion(ds[i], True) for i in range(2)]
    down = {"url": "http://127.0.0.1:9", "retries": 0, "connect_timeout_s": 0.5}
    # By default the first use raises, naming the URL: no run trains on fallbacks unnoticed.
    with pytest.raises(scoring.VerifierUnreachable, match=r"127\.0\.0\.1:9"):
        asyncio.run(GRPOReward(**down)(**trl_kwargs(ds, comps, {})))
    reward = GRPOReward(on_unreachable="fallback", **down)
    metrics: dict = {}
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        got = asyncio.run(reward(**trl_kwargs(ds, comps, metrics)))
    assert got == [None, None]
    assert metrics == {"timeaware/unscored": [1.0], "timeaware/verifier_unreachable": [1.0]}
    assert reward.stats()["unscored"] == 2
    assert scoring.stats(down | {"on_unreachable": "fallback"})["fallbacks"] == 2
    assert any("2 of 2 completions get no reward (None)" in r.getMessage() and "no answer from the verifier at http://127.0.0.1:9" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match="unscored"):
        GRPOReward(unscored="zero")
    with pytest.raises(ValueError, match="unknown setting"):
        GRPOReward(urll="http://x")


class Recorder(GRPOReward):
    """GRPOReward that keeps what it returned, call by call."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.calls: list[list] = []

    async def __call__(self, *args, **kwargs):
        out = await super().__call__(*args, **kwargs)
        self.calls.append(out)
        return out


@pytest.mark.parametrize("name", SOURCES)
def test_grpo_trainer_two_steps(name, synth_outputs, pairs_split, tiny_model_dir, tokenizer, adapter, tmp_path,
                                timeaware_bin):
    ds = rows(name, synth_outputs, pairs_split)
    script: list[list[tuple[int, bool]]] = []
    # Each row's first completion right, its second wrong.
    rollout = scripted_rollout(tokenizer, ds, lambda i, right: completion(ds[i], right), script,
                               variant=lambda k: k % 2 == 0)

    # The run keeps a rollout log, which the binary re-scores below.
    log_dir = tmp_path / "rollouts"
    reward = Recorder(rollout_log=str(log_dir))
    args = cpu_grpo_config(tmp_path / "out", max_completion_length=256)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout)
    trainer.train()
    assert len(script) == 2 and len(reward.calls) == 2
    logged = [h["rewards/timeaware/mean"] for h in trainer.state.log_history if "rewards/timeaware/mean" in h]
    for call, got, mean in zip(script, reward.calls, logged):
        assert sorted(r for _, r in call) == [False, False, True, True], call  # each row right once, wrong once
        want = [expected(ds[i], right) for i, right in call]
        assert got == pytest.approx(want, abs=1e-9)
        assert mean == pytest.approx(sum(want) / len(want), abs=1e-6)
    assert len(logged) == 2
    assert reward.stats()["unscored"] == 0
    # Every rollout is in the log with the reward the trainer got, and the
    # binary re-scores the log by each line's data source to the same rewards.
    adapter.shutdown()
    (path,) = log_dir.iterdir()
    log = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [x["reward"] for x in log] == pytest.approx([r for call in reward.calls for r in call], abs=0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    res = subprocess.run([str(timeaware_bin), "score", "--input", str(log_dir)], capture_output=True, text=True,
                         timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    assert f"0 of {len(log)} logged rewards changed" in res.stderr


# Token-budget rewards: the counts come from the completion ids TRL passes.

def length_rows(tokenizer):
    """Four rows, two of length/lcpo_max and two of length/elastic, with
    budgets that put the long thoughts over and the short ones under; row 1
    carries counts of its own, which the trainer's must replace. Every row
    has the same extra_info fields (datasets fills a missing one with None)."""
    from datasets import Dataset

    thinks = {long: [expected_counts(tokenizer, length_text(i, long, True))["think_tokens"] for i in range(4)]
              for long in (False, True)}
    short, long = max(thinks[False]), min(thinks[True])
    assert short + 1 < long
    budget = (short + long) // 2
    rows = []
    for i, source in enumerate(["length/lcpo_max", "length/lcpo_max", "length/elastic", "length/elastic"]):
        extra = {"answer_check": "", "token_budget": [60, 20, budget, budget][i], "think_budget": budget, "answer_budget": 24,
                 "response_tokens": 999 if i == 1 else None, "think_tokens": 3 if i == 1 else None}
        rows.append({"prompt": [{"role": "user", "content": f"Question {i}: what is six times seven? "
                                 "Think first, then give the number in <answer></answer>."}],
                     "data_source": source, "reward_model": {"ground_truth": "42"}, "extra_info": extra})
    return Dataset.from_list(rows)


def length_right(i: int, long: bool) -> bool:
    return not (i == 1 and not long)  # row 1's short completion is wrong, every other right


def length_expected(row, counts: dict, right: bool) -> float:
    """The reward from the contract's formulas, on the counts and the correctness."""
    ei, c = row["extra_info"], 1.0 if right else 0.0
    if row["data_source"] == "length/lcpo_max":
        return lcpo_max(c, counts["response_tokens"], ei["token_budget"])
    return elastic(c, counts["think_tokens"], counts["answer_tokens"], ei["think_budget"], ei["answer_budget"])


def test_length_rows_get_the_completion_ids_counts(tokenizer, synth_outputs, pairs_split, recorded):
    ds = length_rows(tokenizer)
    texts = [length_text(i, long, length_right(i, long)) for i in range(4) for long in (False, True)]
    ids = [scripted_ids(tokenizer, t) for t in texts]
    kw = trl_kwargs(ds, [[{"role": "assistant", "content": t}] for t in texts], {})
    kw["completion_ids"] = ids
    # Without a tokenizer: the length only, and the row's own think count is dropped.
    asyncio.run(GRPOReward()(**kw))
    sent = [item["extra_info"] for item, _ in recorded.take()]
    assert [e["response_tokens"] for e in sent] == [len(x) for x in ids]
    assert all("think_tokens" not in e and "answer_tokens" not in e for e in sent), sent
    # With the trainer's tokenizer: the split at </think> too.
    got = asyncio.run(GRPOReward(tokenizer=tokenizer)(**kw))
    scored = recorded.take()
    for k, ((item, result), text) in enumerate(zip(scored, texts)):
        counts = expected_counts(tokenizer, text)
        assert {f: item["extra_info"][f] for f in counts} == counts, (k, text)
        row = ds[k // 2]
        assert got[k] == pytest.approx(length_expected(row, counts, length_right(k // 2, k % 2 == 1)), abs=1e-9), k
        assert {f: result[f] for f in counts} == {f: float(v) for f, v in counts.items()}, k
    # The anytime reward's response is the thinking, which a chat template
    # may have opened in the prompt: untagged, it is all thinking.
    from datasets import Dataset

    anytime = Dataset.from_list([{
        "prompt": [{"role": "user", "content": "What is six times seven?"}], "data_source": "length/anytime",
        "reward_model": {"ground_truth": "42"},
        "extra_info": {"answer_check": "", "anytime": [{"budget": 4, "summary": "<answer>41</answer>"},
                                                       {"budget": 8, "summary": "<answer>42</answer>"}]}}])
    thought = LONG_THINK
    kw = trl_kwargs(anytime, [thought], {})
    kw["completion_ids"] = [scripted_ids(tokenizer, thought)]
    assert asyncio.run(GRPOReward(tokenizer=tokenizer)(**kw)) == [pytest.approx(0.5)]  # uniform prior: (0 + 1) / 2
    ((item, result),) = recorded.take()
    n = len(kw["completion_ids"][0])
    assert {k: item["extra_info"][k] for k in ("response_tokens", "think_tokens", "answer_tokens")} == {
        "response_tokens": n, "think_tokens": n, "answer_tokens": 0}
    assert result["think_tokens"] == n
    # Under a template that opens the thinking in the prompt, an untagged
    # completion is a thinking that never closed.
    one = ds.select([0])
    kw = trl_kwargs(one, [[{"role": "assistant", "content": "Six sevens are <answer>42</answer> I think, but"}]], {})
    kw["completion_ids"] = [scripted_ids(tokenizer, "Six sevens are <answer>42</answer> I think, but")]
    asyncio.run(GRPOReward(tokenizer=tokenizer, think_in_prompt=True)(**kw))
    ((item, _),) = recorded.take()
    n = len(kw["completion_ids"][0])
    assert {k: item["extra_info"][k] for k in ("think_tokens", "answer_tokens")} == {"think_tokens": n, "answer_tokens": 0}
    # Without TRL's ids, a row's own counts are not sent: the service names the missing count.
    kw = trl_kwargs(one, [[{"role": "assistant", "content": texts[0]}]], {})
    kw["completion_ids"] = None
    kw["extra_info"] = [{**one[0]["extra_info"], "response_tokens": 1, "think_tokens": 0, "answer_tokens": 1}]
    assert asyncio.run(GRPOReward()(**kw)) == [None]
    ((item, result),) = recorded.take()
    assert not {"response_tokens", "think_tokens", "answer_tokens"} & set(item["extra_info"])
    assert "extra_info.response_tokens" in result.get("error", ""), result
    # Rows of other data sources are sent as before: no counts.
    puzzles = rows("puzzles", synth_outputs, pairs_split, n=1)
    kw = trl_kwargs(puzzles, [completion(puzzles[0], True)], {})
    assert asyncio.run(GRPOReward(tokenizer=tokenizer)(**kw)) == [1.0]
    ((item, _),) = recorded.take()
    assert not {"response_tokens", "think_tokens", "answer_tokens"} & set(item["extra_info"])


def test_grpo_trainer_sends_token_counts(tiny_model_dir, tokenizer, recorded, tmp_path):
    ds = length_rows(tokenizer)
    script: list[list[tuple[int, bool]]] = []
    # Each row's first completion short, its second long.
    rollout = scripted_rollout(tokenizer, ds, lambda i, long: length_text(i, long, length_right(i, long)), script,
                               variant=lambda k: k % 2 == 1)
    reward = Recorder(tokenizer=tokenizer)
    args = cpu_grpo_config(tmp_path / "out", max_completion_length=256)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout)
    trainer.train()
    assert len(script) == 2 and len(reward.calls) == 2
    assert sorted(i for call in script for i, _ in call) == [0, 0, 1, 1, 2, 2, 3, 3], script
    scored = recorded.take()
    assert len(scored) == 8
    by_text = {item["solution_str"]: (item, result) for item, result in scored}
    for call, got in zip(script, reward.calls):
        want = []
        for i, long in call:
            text = length_text(i, long, length_right(i, long))
            item, result = by_text[text]
            counts = expected_counts(tokenizer, text)
            # What reached the service: the length of the ids the trainer generated, and their split.
            assert counts["response_tokens"] == len(scripted_ids(tokenizer, text))
            assert {f: item["extra_info"][f] for f in counts} == counts, (i, long)
            want.append(length_expected(ds[i], counts, length_right(i, long)))
        assert got == pytest.approx(want, abs=1e-9), call
    # The budgets tell the completions apart: long thoughts over the elastic budget, lcpo rewards by length.
    assert len({round(r, 9) for call in reward.calls for r in call}) >= 4, reward.calls


# Group-wise rewards: the completions of one prompt are scored together.

GROUP_SOURCES = ["length/kimi", "length/shorterbetter"]
GROUP_ORACLES = {"length/kimi": kimi, "length/shorterbetter": shorterbetter}


def group_rows():
    from datasets import Dataset

    return Dataset.from_list([{
        "prompt": [{"role": "user", "content": f"Question {i}: what is six times seven? Think, then answer."}],
        "data_source": source, "reward_model": {"ground_truth": "42"}, "extra_info": {"answer_check": ""},
    } for i, source in enumerate(GROUP_SOURCES)])


def group_text(i: int, k: int) -> str:
    """The k-th completion of group row i: a thought k+1 sentences long,
    right but for k = 1 (and k = 2 of row 1, so the groups differ)."""
    right = k != 1 and (i, k) != (1, 2)
    return f"<think>Question {i}. " + " ".join([SHORT_THINK] * (k + 1)) + f"</think>\n<answer>{42 if right else 41}</answer>"


def group_expected(tokenizer, source: str, texts: list[str]) -> list[float]:
    lengths = [expected_counts(tokenizer, t)["response_tokens"] for t in texts]
    return GROUP_ORACLES[source](["<answer>42</answer>" in t for t in texts], lengths)


def test_grpo_trainer_sends_whole_groups(tiny_model_dir, tokenizer, recorded, tmp_path):
    """A 2-step GRPOTrainer run on rows of the group-wise rewards: each call
    holds two prompts of four completions, each group reaches the service
    whole in one request, with a key of its own and the trainer's group size,
    and every completion gets the reward its group gives it."""
    ds = group_rows()
    script: list[list[tuple[int, int]]] = []
    rollout = scripted_rollout(tokenizer, ds, group_text, script)
    reward = Recorder(tokenizer=tokenizer)  # the group size is the trainer's
    args = cpu_grpo_config(tmp_path / "out", per_device_train_batch_size=8, num_generations=4,
                           max_completion_length=256)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout)
    trainer.train()
    assert len(script) == 2 and len(reward.calls) == 2
    keys = set()
    for batch in recorded.take_batches():
        groups: dict[str, list[dict]] = {}
        for item in batch:
            groups.setdefault(item["group"], []).append(item)
        for key, members in groups.items():
            assert len(members) == 4 and all(m["group_size"] == 4 for m in members), key
            assert len({m["data_source"] for m in members}) == 1
            assert key not in keys, "a key serves one group only"
            keys.add(key)
    assert len(keys) == 4  # two groups a step
    for call, got in zip(script, reward.calls):
        assert sorted(k for _, k in call) == [0, 0, 1, 1, 2, 2, 3, 3], call
        want = [0.0] * len(call)
        for i in (0, 1):
            at = [j for j, (row, _) in enumerate(call) if row == i]
            texts = [group_text(i, call[j][1]) for j in at]
            for j, w in zip(at, group_expected(tokenizer, GROUP_SOURCES[i], texts)):
                want[j] = w
        assert got == pytest.approx(want, abs=1e-9), call
    assert reward.stats()["unscored"] == 0
    # Kimi's term spreads the right answers from +0.5 to −0.5 by length.
    assert len({round(r, 9) for r in reward.calls[0]}) >= 5


def test_groups_that_are_not_whole_in_a_call_get_no_score(tokenizer, recorded, caplog):
    """A call whose completions are not whole groups (a group split across
    processes, a block of two prompts, no group size) scores none of the
    group-wise completions, never a smaller group, and names why."""
    ds = group_rows()
    texts = [group_text(0, k) for k in range(4)] + [group_text(1, k) for k in range(4)]
    kw = trl_kwargs(ds.select([0, 0, 0, 0, 1, 1, 1, 1]), [[{"role": "assistant", "content": t}] for t in texts], {})
    kw["completion_ids"] = [scripted_ids(tokenizer, t) for t in texts]
    # Whole: two groups of four.
    got = asyncio.run(GRPOReward(num_generations=4)(**kw))
    assert got == pytest.approx(group_expected(tokenizer, GROUP_SOURCES[0], texts[:4]) +
                                group_expected(tokenizer, GROUP_SOURCES[1], texts[4:]), abs=1e-9)
    assert [len(b) for b in recorded.take_batches()] == [8]
    recorded.take()
    # Six of them: what one process holds when a group is split across two.
    part = {k: v[:6] if isinstance(v, list) else v for k, v in kw.items()}
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        assert asyncio.run(GRPOReward(num_generations=4)(**part)) == [None] * 6
    assert "not whole groups of 4" in caplog.text and "multiple of num_generations" in caplog.text
    assert recorded.take() == []
    # Groups of three: the first block is one prompt's, the second mixes two.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        got = asyncio.run(GRPOReward(num_generations=3)(**part))
    assert got[:3] == pytest.approx(group_expected(tokenizer, GROUP_SOURCES[0], texts[:3]), abs=1e-9)
    assert got[3:] == [None] * 3
    assert "completions 3 to 5 are not of one prompt" in caplog.text
    recorded.take()
    # Outside a trainer, without num_generations: the size is unknown.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="timeaware"):
        assert asyncio.run(GRPOReward()(**kw)) == [None] * 8
    assert "num_generations" in caplog.text
    with pytest.raises(ValueError, match="num_generations"):
        GRPOReward(num_generations=0)


def test_grpo_trainer_across_an_outage_of_the_verifier(synth_outputs, pairs_split, tiny_model_dir, tokenizer,
                                                         restartable, adapter, tmp_path):
    """GRPOReward in a 5-step GRPOTrainer run whose verifier is killed after
    step 1, brought back after step 2 and killed again after step 3: the
    rollouts it did not answer get None (masked, never 0), TRL's logs show
    timeaware/verifier_unreachable, a step it answers ends the run of
    fallbacks, and step 5's rollouts, the 5th to 8th unanswered in a row,
    stop the run past max_consecutive_fallbacks (6), naming the URL."""
    ds = rows("puzzles", synth_outputs, pairs_split)
    script: list = []
    rollout = scripted_rollout(tokenizer, ds, lambda i, right: completion(ds[i], right), script,
                               variant=lambda k: k % 2 == 0)

    class Outages(Recorder):
        async def __call__(self, *args, **kwargs):
            try:
                return await super().__call__(*args, **kwargs)
            finally:
                n = len(self.calls)
                if n in (1, 3):
                    restartable.stop()
                elif n == 2:
                    restartable.start()

    reward = Outages(url=restartable.url, retries=0, connect_timeout_s=0.5, max_consecutive_fallbacks=6)
    args = cpu_grpo_config(tmp_path / "out", max_completion_length=256, max_steps=5)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout)
    with pytest.raises(scoring.VerifierUnreachable, match=r"8 items in a row got no answer from the verifier at "
                       + re.escape(restartable.url)):
        trainer.train()
    assert len(reward.calls) == 4, "the fifth call raised"
    assert [all(r is not None for r in c) for c in reward.calls] == [True, False, True, False]
    assert all(r is None for r in reward.calls[1] + reward.calls[3])
    logged = [h["timeaware/verifier_unreachable"] for h in trainer.state.log_history
              if "timeaware/verifier_unreachable" in h]
    assert logged == [0.0, 1.0, 0.0, 1.0]
    st = scoring.stats({"url": restartable.url, "retries": 0, "connect_timeout_s": 0.5,
                        "max_consecutive_fallbacks": 6})
    assert (st["fallbacks"], st["fallback_alarms"]) == (12, 1), st
