"""`rewards.length.tokenizer`: the service counts the tokens of a length
item with the model's tokenizer.json and refuses a count that is not the
text's, and the counts it is held to are Hugging Face's tokenizers' own.

* ``tokenizer/testdata``'s texts (the Go tests' counts) are counted again
  here by the pinned tokenizers with the tokenizer files there, and
  compared: a release that counts differently fails this test instead of
  leaving the Go tests' counts stale.
* The session's tokenizer (trained here, saved by transformers) is given
  to a real ``timeaware serve``; the counts the adapter takes from
  scripted rollouts' ids (`timeaware.tokens.token_counts`, an end of
  sequence included) are all accepted with the default slack, and items
  with a count changed are refused exactly where the tokenizer's own
  encode of the parts puts them past the slack.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import timeaware
from conftest import LONG_THINK, SHORT_THINK, localstack, scripted_ids
from timeaware.tokens import token_counts

ROOT = Path(__file__).resolve().parents[3]


def test_the_go_tests_counts_are_tokenizers_own():
    made = subprocess.run([sys.executable, str(ROOT / "tokenizer" / "testdata" / "make.py"), "--check"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr


@pytest.fixture(scope="module")
def counting_server(timeaware_bin, tokenizer_dir, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env["TIMEAWARE_TIMERS_SECRET"] = localstack.TIMERS_SECRET
    env["TIMEAWARE_REWARDS_LENGTH_TOKENIZER"] = str(tokenizer_dir / "tokenizer.json")
    s = localstack.required(localstack.Server, timeaware_bin, work / "serve-tokenizer.log", env)
    yield s
    s.stop()


def items(tokenizer) -> list[dict]:
    out = []
    for i in range(24):
        think = (LONG_THINK * (1 + i % 4)) if i % 2 else SHORT_THINK
        text = f"<think>Row {i}. {think}</think>\n<answer>{42 if i % 3 else 41}</answer>"
        ids = scripted_ids(tokenizer, text)
        # the text a trainer decodes: special tokens kept (the end of
        # sequence, which the service removes) on even rows, skipped on odd
        decoded = tokenizer.decode(ids, skip_special_tokens=bool(i % 2))
        extra = {"token_budget": 64, **token_counts(ids, tokenizer)}
        out.append({"data_source": "length/lcpo_exact", "solution_str": decoded, "ground_truth": "42", "extra_info": extra})
    return out


def refused(tokenizer, item: dict) -> bool:
    """Whether the service must refuse item: the oracle, from the tokenizer's
    own encode of the parts as docs/length-rewards.md describes them (the
    stop strings at the end removed, the thinking between the tags, the
    answer after the closing one) and the default slack, 8 + 2%."""
    text = item["solution_str"]
    for stop in ("<|im_end|>", "<|endoftext|>"):
        text = text.removesuffix(stop)
    think = text[text.index("<think>") + len("<think>"):text.index("</think>")]
    answer = text[text.index("</think>") + len("</think>"):]
    ei = item["extra_info"]
    for key, part in (("response_tokens", text), ("think_tokens", think), ("answer_tokens", answer)):
        n = len(tokenizer(part, add_special_tokens=False)["input_ids"])
        if abs(ei[key] - n) > 8 + 0.02 * n:
            return True
    return False


def test_the_adapters_counts_are_taken(counting_server, tokenizer):
    client = timeaware.Client(counting_server.url, retries=0)
    batch = items(tokenizer)
    assert not any(refused(tokenizer, it) for it in batch), "the oracle refuses the adapter's own counts"
    results = client.score_batch(batch)
    assert [r.get("error") for r in results] == [None] * len(batch)
    assert [r["response_tokens"] for r in results] == [it["extra_info"]["response_tokens"] for it in batch]


ALL = ("response_tokens", "think_tokens", "answer_tokens")


@pytest.mark.parametrize("fields,change", [
    (ALL, lambda n: n * 2 // 3),
    (("response_tokens",), lambda n: n * 4 // 3),
    (("response_tokens", "think_tokens"), lambda n: n - 12),
    (("think_tokens",), lambda n: n // 2),
    (("think_tokens",), lambda n: n - 16),
    (("answer_tokens",), lambda n: n + 12),
], ids=["all-a-third-low", "response-a-third-high", "response-and-thinking-12-low", "thinking-halved",
        "thinking-16-low", "answer-12-high"])
def test_a_count_that_is_not_the_texts_is_refused(counting_server, tokenizer, fields, change):
    client = timeaware.Client(counting_server.url, retries=0)
    batch = items(tokenizer)
    for it in batch:
        ei = it["extra_info"]
        for f in fields:
            ei[f] = max(1, change(ei[f]))
        ei["response_tokens"] = max(ei["response_tokens"], ei["think_tokens"] + ei["answer_tokens"])
    want = [refused(tokenizer, it) for it in batch]
    assert any(want), "no item of this case is past the slack"
    results = client.score_batch(batch)
    got = [bool(r.get("error")) for r in results]
    assert got == want, [r.get("error") for r in results]
    for r in results:
        if r.get("error"):
            assert "rewards.length.tokenizer makes" in r["error"], r["error"]
