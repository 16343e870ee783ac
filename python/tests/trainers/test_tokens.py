"""`timeaware.token_counts` on tokenizers trained here, against the
tokenizers' own offsets.

Three tokenizers: the session's byte-level BPE, which has never seen a think
tag and spells ``</think>`` in several pieces; the same with ``<think>`` and
``</think>`` added as tokens of their own (how reasoning models ship them);
and one trained on text full of think tags, whose merges join the tag's
pieces with the punctuation around them. The oracle reads the counts off the
character offsets the tokenizer reports for each token, with no decoding:
think = the tokens that start before the tag starts, answer = the other
tokens that end after it ends.
"""

from __future__ import annotations

import math
import random

import pytest
from conftest import localstack

from timeaware.tokens import THINK_CLOSE, THINK_OPEN, token_counts

WORDS = ["time", " is", " short", ".", "!", " <", "/", "think", ">", " the", " answer", " 42", "\n", "\n\n", " é",
         " 日本", " 🙂", "<answer>", "</answer>", " tokens", "..."]


class Counting:
    """A tokenizer's decode, counted."""

    def __init__(self, tok) -> None:
        self.tok = tok
        self.calls = 0

    def __call__(self, ids):
        self.calls += 1
        return self.tok.decode(ids, skip_special_tokens=False)


def response(rng: random.Random) -> str:
    def body(k: int) -> str:
        return "".join(rng.choice(WORDS) for _ in range(k))

    shape = rng.choice(["closed", "closed-no-open", "glued", "two-closes", "open", "none"])
    if shape == "closed":
        return THINK_OPEN + body(rng.randint(0, 60)) + THINK_CLOSE + body(rng.randint(0, 30))
    if shape == "closed-no-open":  # the chat template opened the block in the prompt
        return body(rng.randint(0, 60)) + THINK_CLOSE + body(rng.randint(0, 30))
    if shape == "glued":  # punctuation on both sides, which BPE may merge into the tag's pieces
        return body(rng.randint(0, 30)) + rng.choice([".", "!", "...", ")"]) + THINK_CLOSE + rng.choice(["<", "\n", "."]) + body(5)
    if shape == "two-closes":
        return body(rng.randint(0, 20)) + THINK_CLOSE + body(rng.randint(0, 10)) + THINK_CLOSE + body(3)
    if shape == "open":  # cut off while thinking
        return body(rng.randint(0, 5)) + THINK_OPEN + body(rng.randint(0, 60))
    return body(rng.randint(0, 60))


def oracle(tok, text: str, eos: bool) -> dict:
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = list(enc["input_ids"]), enc["offset_mapping"]
    n = len(ids) + eos
    if THINK_CLOSE in text:
        start = text.index(THINK_CLOSE)
        end = start + len(THINK_CLOSE)
        think = sum(s < start for s, _ in offsets)
        answer = sum(e > end and s >= start for s, e in offsets) + eos  # the end of sequence comes after the tag
        want = {"response_tokens": n, "think_tokens": think, "answer_tokens": answer}
        straddles = any(a < start < b or a < end < b for a, b in offsets)
    elif THINK_OPEN in text:
        want, straddles = {"response_tokens": n, "think_tokens": n, "answer_tokens": 0}, False
    else:
        want, straddles = {"response_tokens": n, "think_tokens": 0, "answer_tokens": n}, False
    return {"ids": ids + ([tok.eos_token_id] if eos else []), "want": want, "straddles": straddles}


@pytest.fixture(scope="module")
def tokenizers(tokenizer, tokenizer_dir, work):
    from transformers import AutoTokenizer

    added = AutoTokenizer.from_pretrained(tokenizer_dir)
    added.add_tokens([THINK_OPEN, THINK_CLOSE])
    rng = random.Random(7)
    corpus = [response(rng) for _ in range(4000)]
    glued_dir = localstack.train_tokenizer(corpus, work / "tokenizer-think", vocab_size=600)
    glued = AutoTokenizer.from_pretrained(glued_dir)
    return {"pieces": tokenizer, "added": added, "glued": glued}


@pytest.mark.parametrize("kind", ["pieces", "added", "glued"])
def test_counts_match_the_tokenizers_offsets(kind, tokenizers):
    tok = tokenizers[kind]
    rng = random.Random(28)
    tag_tokens, straddled = [], 0
    for case in range(600):
        text = response(rng)
        o = oracle(tok, text, eos=case % 2 == 0)
        decode = Counting(tok)
        got = token_counts(o["ids"], decode)
        assert got == o["want"], (case, text, tok.convert_ids_to_tokens(o["ids"]))
        assert token_counts(o["ids"], tok) == got, "a tokenizer and its decode function count the same"
        n = len(o["ids"])
        assert decode.calls <= 1 + 3 * math.ceil(math.log2(n + 1)) + 2, (case, decode.calls, n)
        if THINK_CLOSE in text:
            tag_tokens.append(n - got["think_tokens"] - got["answer_tokens"])
            straddled += o["straddles"]
    # The three tokenizers spell the tag differently: in 5 pieces, as one
    # token, and with merges that join it to the text around it.
    if kind == "added":
        assert set(tag_tokens) == {1}
    else:
        assert max(tag_tokens) >= 3, tag_tokens
    if kind == "glued":
        assert straddled > len(tag_tokens) // 3, (straddled, len(tag_tokens))  # tokens holding text and a piece of the tag
    else:
        assert straddled == 0


@pytest.mark.parametrize("kind", ["pieces", "added", "glued"])
def test_the_service_accepts_the_counts(kind, tokenizers, server):
    """The service checks the counts against the text it is sent (a part
    with text has tokens, no thinking without think tags, no answer after
    thinking that never closed): it takes every count token_counts gives,
    on the text a trainer decodes from the same ids (special tokens
    skipped)."""
    from timeaware.client import Client

    tok = tokenizers[kind]
    rng = random.Random(29)
    items = []
    for case in range(400):
        ids = oracle(tok, response(rng), eos=case % 2 == 0)["ids"]
        counts = token_counts(ids, tok)
        items.append({"data_source": "length/thinkprune", "solution_str": tok.decode(ids, skip_special_tokens=True),
                      "ground_truth": "42", "extra_info": dict(counts)})
    results = Client(server.url).score_batch(items)
    errors = [(it["solution_str"], it["extra_info"], r["error"]) for it, r in zip(items, results) if "error" in r]
    assert not errors, errors[:3]
    for it, r in zip(items, results):
        assert {k: r[k] for k in ("response_tokens", "think_tokens", "answer_tokens")} == it["extra_info"]
