"""OpenRLHF 0.11.2's remote reward path against `timeaware serve`.

Rows of every synth output go through OpenRLHF's own `PromptDataset` (chat
template applied, `--label_key label`), its own `SingleTurnAgentExecutor`
(which decodes prompt + response with special tokens kept) and its own
aiohttp client posting to `/v1/openrlhf`. Only the LLM engine is scripted:
it returns the tokens of a right answer followed by the end-of-turn token,
as a model that stops would.
"""

from __future__ import annotations

import asyncio
import json
import math
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset
from openrlhf.datasets.prompts_dataset import PromptDataset
from openrlhf.utils.agent import SingleTurnAgentExecutor

import timeaware.openrlhf
from conftest import right_answer
from timeaware.openrlhf import RunStopped

#: The reward file a user names in --reward.remote_url.
REWARD_FILE = timeaware.openrlhf.__file__


class ScriptedEngine:
    """Stands in for OpenRLHF's vLLM engine: answers with fixed token ids."""

    def __init__(self, token_ids):
        self.token_ids = token_ids

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        out = SimpleNamespace(token_ids=list(self.token_ids), text=None, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def strategy(label_key="label"):
    data = SimpleNamespace(input_key="prompt", label_key=label_key, apply_chat_template=True, image_key="images")
    return SimpleNamespace(args=SimpleNamespace(data=data), is_rank_0=lambda: True)


def rows(path):
    """The rows of a synth output the way OpenRLHF loads them, with the parts
    of the item pyarrow reads from the same file."""
    ds = load_dataset("parquet", data_files=str(path), split="train")
    table = pq.read_table(path).to_pylist()
    return ds, table


def score(server_url, tokenizer, prompt, label, response):
    return execute(f"{server_url}/v1/openrlhf", tokenizer, prompt, label, response)


def execute(remote_rm_url, tokenizer, prompt, label, response):
    """One rollout through OpenRLHF's executor with the reward at
    ``remote_rm_url``: the route's URL, or the path of a reward file."""
    executor = SingleTurnAgentExecutor(remote_rm_url=remote_rm_url)
    ids = tokenizer(response, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    params = SimpleNamespace(max_tokens=len(ids), logprobs=None)
    return asyncio.run(executor.execute(prompt, label, params, 1 << 16, tokenizer, ScriptedEngine(ids)))


@pytest.mark.parametrize("name", ["budget", "puzzles", "traveler", "negotiation"])
def test_every_data_source_through_openrlhf(name, synth_outputs, tokenizer, server):
    ds, table = rows(synth_outputs[name])
    prompts = PromptDataset(ds, tokenizer, strategy())
    checked = 0
    for i, (datasource, prompt, label, _) in enumerate(prompts):
        row = table[i]
        if name == "traveler" and json.loads(row["reward_model"]["ground_truth"])["category"] == "vague":
            continue  # soft accuracy: no single right answer scores 1
        assert json.loads(label) == {
            "data_source": row["data_source"],
            "ground_truth": row["reward_model"]["ground_truth"],
            "extra_info": json.loads(json.dumps(row["extra_info"])),
        }, f"row {i}: the label column holds the row's item"
        response = right_answer(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
        out = score(server.url, tokenizer, prompt, label, response)
        query = tokenizer.decode(out["observation_tokens"], skip_special_tokens=False)
        assert query.endswith("<|im_end|>"), "OpenRLHF keeps the end-of-turn token in the query"
        logs = out["extra_logs"]
        assert logs["failed"] == [0.0], f"row {i}: {logs}"
        # One query per request: OpenRLHF keeps the lists as they come.
        (reward,) = out["reward"]
        if name == "negotiation":
            gt = json.loads(row["reward_model"]["ground_truth"])
            roles = {r["id"]: r for r in gt["scenario"]["roles"]}
            assert logs["parsed"] == [1.0] and logs["batna_taken"] == [1.0], f"row {i}: {logs}"
            assert logs["points_self"] == [roles[gt["role"]]["batna"]], f"row {i}: {logs}"
            assert 0.0 < reward < 1.0, f"row {i}: {reward}"
        elif name == "budget":
            # A Timely row scored by OpenRLHF's single-turn path, which
            # measures no time: no limit applies, r_f + r (the label's
            # elapsed_s, when an agent provides it, is tested below).
            assert reward == pytest.approx(0.6), f"row {i}: {logs}"
            assert logs["acc"] == [1.0] and logs["on_time"] == [1.0], f"row {i}: {logs}"
        else:
            assert reward == pytest.approx(1.0), f"row {i}: {logs}"
        assert out["scores"] == out["reward"]
        checked += 1
    assert checked >= 4, f"only {checked} rows of {name} were checked"


def test_timely_label_with_elapsed_time_scores_the_timely_reward(tokenizer, server):
    label = json.dumps(
        {"data_source": "timely/general", "ground_truth": "21", "extra_info": {"time_limit_s": 10, "elapsed_s": 5}}
    )
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is 3 * 7?"}], tokenize=False,
                                           add_generation_prompt=True)
    out = score(server.url, tokenizer, prompt, label, "3 * 7 = 21.\n<answer>21</answer>")
    want = 0.1 + 0.5 + 0.4 * math.sin(math.pi / 4)
    assert want == pytest.approx(0.8828, abs=1e-4)
    assert out["reward"] == [pytest.approx(want, abs=1e-9)]
    assert out["extra_logs"]["on_time"] == [1.0] and out["extra_logs"]["elapsed_s"] == [5.0]
    late = json.loads(label)
    late["extra_info"]["elapsed_s"] = 11
    assert score(server.url, tokenizer, prompt, json.dumps(late), "<answer>21</answer>")["reward"] == [0.0]


def test_plain_label_is_the_ground_truth_of_the_route_data_source(tokenizer, server):
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Which day?"}], tokenize=False,
                                           add_generation_prompt=True)
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/v1/openrlhf?data_source=timepuzzles")
    ids = tokenizer("MY ANSWER: 2023-08-15", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    out = asyncio.run(executor.execute(prompt, "2023-08-15", SimpleNamespace(max_tokens=len(ids), logprobs=None),
                                       1 << 16, tokenizer, ScriptedEngine(ids)))
    assert out["reward"] == [1.0], out["extra_logs"]


def test_token_budget_labels(tokenizer, server):
    """A length/* label through OpenRLHF's own executor: its remote path
    posts text without token ids, so a label without the counts gets the
    fallback with failed 1 (never a reward on a guess); one whose extra_info
    carries them, as an agent function of the user's would add, scores
    LCPO-Max from the contract's formula."""
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is 3 * 7? Think for at most 500 tokens."}],
                                           tokenize=False, add_generation_prompt=True)
    item = {"data_source": "length/lcpo_max", "ground_truth": "21", "extra_info": {"token_budget": 500, "answer_check": ""}}
    out = score(server.url, tokenizer, prompt, json.dumps(item), "<answer>21</answer>")
    assert out["reward"] == [0.0] and out["extra_logs"]["failed"] == [1.0], out["extra_logs"]
    item["extra_info"]["response_tokens"] = 400
    out = score(server.url, tokenizer, prompt, json.dumps(item), "<answer>21</answer>")
    assert out["extra_logs"]["failed"] == [0.0], out["extra_logs"]
    # 1 · clip(0.0003 · (500 − 400) + 0.5, 0, 1)
    assert out["reward"] == [pytest.approx(0.53, abs=1e-12)]
    assert out["extra_logs"]["within_budget"] == [1.0]


@pytest.mark.parametrize("name", ["budget", "puzzles", "traveler", "negotiation"])
def test_the_reward_file_scores_as_the_route(name, synth_outputs, tokenizer, server, adapter):
    """timeaware/openrlhf.py as OpenRLHF loads a reward file: each rollout
    gets the reward and details the /v1/openrlhf route gives it (the route
    is the oracle: Go code, not the file's), right answers and wrong ones."""
    ds, table = rows(synth_outputs[name])
    prompts = PromptDataset(ds, tokenizer, strategy())
    for i, (_, prompt, label, _) in enumerate(prompts):
        if i == 6:
            break
        row = table[i]
        right = right_answer(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
        for response in (right, "<answer>no idea</answer>"):
            via_route = score(server.url, tokenizer, prompt, label, response)
            via_file = execute(REWARD_FILE, tokenizer, prompt, label, response)
            assert via_file["reward"] == via_route["reward"], f"row {i}"
            assert via_file["scores"] == via_route["scores"]
            logs = via_file["extra_logs"]
            assert logs["timeaware/unanswered"] == [0.0] and logs["timeaware/rejected"] == [0.0], logs
            keys = adapter.reward_keys(row["data_source"])[1:]
            assert set(logs) == {"failed", "timeaware/rejected", "timeaware/unanswered", *keys}
            for k in ("failed", *keys):
                assert logs[k] == via_route["extra_logs"][k], f"row {i}: extra_logs[{k!r}]"
    assert adapter.stats()["fallbacks"] == 0


def test_the_reward_file_without_a_verifier_stops_the_run_naming_it(tokenizer, adapter):
    """Down from the start: the first rollout leaves OpenRLHF's executor
    (which logs and drops any Exception of a reward function) as RunStopped,
    naming the URL."""
    adapter.configure(url="http://127.0.0.1:9", retries=0, connect_timeout_s=0.5)
    label = json.dumps({"data_source": "timepuzzles", "ground_truth": "2023-08-15", "extra_info": {}})
    with pytest.raises(RunStopped, match=r"the verifier at http://127\.0\.0\.1:9 cannot be reached") as err:
        execute(REWARD_FILE, tokenizer, "Which day?", label, "MY ANSWER: 2023-08-15")
    assert err.value.url == "http://127.0.0.1:9"
    assert isinstance(err.value.__cause__, adapter.VerifierUnreachable)


def test_the_reward_file_counts_an_outage_stops_at_the_limit_and_resumes(tokenizer, restartable, adapter):
    """The verifier killed mid-run: each rollout it did not answer gets the
    fallback, says so in extra_logs (OpenRLHF's metrics), and counts; the
    one past max_consecutive_fallbacks stops the run. Brought back on the
    same address, it scores again and the run of fallbacks ends."""
    adapter.configure(url=restartable.url, retries=0, connect_timeout_s=0.5, max_consecutive_fallbacks=2)
    label = json.dumps({"data_source": "timepuzzles", "ground_truth": "2023-08-15", "extra_info": {}})

    def rollout():
        return execute(REWARD_FILE, tokenizer, "Which day?", label, "MY ANSWER: 2023-08-15")

    out = rollout()
    assert out["reward"] == [1.0] and out["extra_logs"]["timeaware/unanswered"] == [0.0]
    restartable.stop()
    for _ in range(2):
        out = rollout()
        assert out["reward"] == [0.0], "the fallback score"
        assert out["extra_logs"]["timeaware/unanswered"] == [1.0] and out["extra_logs"]["failed"] == [1.0]
        assert out["extra_logs"]["timeaware/rejected"] == [0.0]
    with pytest.raises(RunStopped, match=r"3 items in a row got no answer from the verifier at " + restartable.url):
        rollout()
    st = adapter.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["fallback_alarms"]) == (3, 3, 1), st
    restartable.start()
    out = rollout()
    assert out["reward"] == [1.0] and out["extra_logs"]["timeaware/unanswered"] == [0.0]
    assert adapter.stats()["consecutive_fallbacks"] == 0


def test_the_reward_file_names_a_label_it_cannot_score(tokenizer, server, adapter, monkeypatch):
    """A bare ground truth with no data source to score it by is rejected,
    counted as such, not as an outage; with TIMEAWARE_OPENRLHF_DATA_SOURCE it
    is scored by that reward."""
    monkeypatch.delenv("TIMEAWARE_OPENRLHF_DATA_SOURCE", raising=False)
    out = execute(REWARD_FILE, tokenizer, "Which day?", "2023-08-15", "MY ANSWER: 2023-08-15")
    assert out["reward"] == [0.0]
    assert out["extra_logs"]["timeaware/rejected"] == [1.0] and out["extra_logs"]["timeaware/unanswered"] == [0.0]
    monkeypatch.setenv("TIMEAWARE_OPENRLHF_DATA_SOURCE", "timepuzzles")
    out = execute(REWARD_FILE, tokenizer, "Which day?", "2023-08-15", "MY ANSWER: 2023-08-15")
    assert out["reward"] == [1.0] and out["extra_logs"]["timeaware/rejected"] == [0.0]
    scored_keys = set(out["extra_logs"])
    # A label it cannot read still logs its data source's keys: OpenRLHF
    # fails on a batch whose rollouts log different keys.
    bad = json.dumps({"data_source": "timepuzzles", "ground_truth": "2023-08-15", "extra_info": "{oops"})
    out = execute(REWARD_FILE, tokenizer, "Which day?", bad, "MY ANSWER: 2023-08-15")
    assert out["reward"] == [0.0] and out["extra_logs"]["timeaware/rejected"] == [1.0]
    assert set(out["extra_logs"]) == scored_keys
