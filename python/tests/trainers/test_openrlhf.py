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

from conftest import right_answer


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
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server_url}/v1/openrlhf")
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
