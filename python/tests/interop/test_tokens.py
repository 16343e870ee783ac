"""`timeaware.token_counts`, the counts the ``length/*`` rewards read, on a
toy tokenizer whose tokens are pieces of text.

Each response is cut into pieces at random places, so the think tag falls
inside one piece, across several, or merged with its neighbours' text. The
oracle reads the answer off the pieces' character offsets, with no search:
think = the pieces that start before the tag starts, answer = the other
pieces that end after it ends. The trainers tier (python/tests/trainers/test_tokens.py)
does the same with tokenizers trained there.
"""

from __future__ import annotations

import math
import random

import pytest

import timeaware
from timeaware.tokens import THINK_CLOSE, THINK_OPEN, counts_for, is_length_source, token_counts

WORDS = ["time", "is", "short", "<", ">", "/", "think", "the", "answer", "42", "\n", " ", "é", "tokens", "</", "k>"]


class Pieces:
    """A tokenizer over a fixed list of text pieces: id i decodes to
    pieces[i]; counts its decodes."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.index: dict[str, int] = {}
        self.decodes = 0

    def encode(self, parts: list[str]) -> list[int]:
        for p in parts:
            if p not in self.index:
                self.index[p] = len(self.pieces)
                self.pieces.append(p)
        return [self.index[p] for p in parts]

    def decode(self, ids, skip_special_tokens=True):
        assert skip_special_tokens is False, "counts are taken on the text with every token in it"
        self.decodes += 1
        return "".join(self.pieces[i] for i in ids)


def cut(text: str, rng: random.Random, whole_tags: bool) -> list[str]:
    """text cut into pieces of 1 to 6 characters at random places; with
    ``whole_tags``, each tag is one piece of its own (an added token)."""
    if whole_tags:
        parts: list[str] = []
        for i, chunk in enumerate(text.split(THINK_CLOSE)):
            if i:
                parts.append(THINK_CLOSE)
            parts.extend(cut(chunk, rng, False))
        return parts
    parts, i = [], 0
    while i < len(text):
        k = rng.randint(1, 6)
        parts.append(text[i:i + k])
        i += k
    return parts


def oracle(parts: list[str], n: int) -> tuple[int, int]:
    text = "".join(parts)
    if THINK_CLOSE in text:
        start = text.index(THINK_CLOSE)
        end = start + len(THINK_CLOSE)
        offsets, pos = [], 0
        for p in parts:
            offsets.append((pos, pos + len(p)))
            pos += len(p)
        # A piece with text before the tag is thinking; one with text after
        # it (and none before) is answer.
        return sum(s < start for s, _ in offsets), sum(e > end and s >= start for s, e in offsets)
    if THINK_OPEN in text:
        return n, 0
    return 0, n


def response(rng: random.Random) -> str:
    body = lambda k: "".join(rng.choice(WORDS) for _ in range(k))  # noqa: E731
    shape = rng.choice(["closed", "closed-no-open", "two-closes", "open", "none", "tag-first", "tag-last"])
    if shape == "closed":
        return THINK_OPEN + body(rng.randint(0, 40)) + THINK_CLOSE + body(rng.randint(0, 20))
    if shape == "closed-no-open":  # the chat template opened the block in the prompt
        return body(rng.randint(0, 40)) + THINK_CLOSE + body(rng.randint(0, 20))
    if shape == "two-closes":
        return body(rng.randint(0, 20)) + THINK_CLOSE + body(rng.randint(0, 10)) + THINK_CLOSE + body(3)
    if shape == "open":  # cut off while thinking
        return body(rng.randint(0, 10)) + THINK_OPEN + body(rng.randint(0, 40))
    if shape == "tag-first":
        return THINK_CLOSE + body(rng.randint(0, 20))
    if shape == "tag-last":
        return body(rng.randint(0, 20)) + THINK_CLOSE
    return body(rng.randint(0, 40))


def test_fuzz_against_piece_offsets():
    rng = random.Random(28)
    tok = Pieces()
    shapes = {"split": 0, "whole": 0}
    for case in range(3000):
        text = response(rng)
        parts = cut(text, rng, whole_tags=case % 3 == 0)
        ids = tok.encode(parts)
        n = len(ids)
        tok.decodes = 0
        got = token_counts(ids, tok)
        want_think, want_answer = oracle(parts, n)
        assert got == {"response_tokens": n, "think_tokens": want_think, "answer_tokens": want_answer}, (case, parts)
        assert got["think_tokens"] + got["answer_tokens"] <= n
        # O(log n) decodes: one of the whole, a bisection for the tag's end,
        # a gallop and a bisection for its start.
        assert tok.decodes <= 1 + 3 * math.ceil(math.log2(n + 1)) + 2, (case, tok.decodes, n)
        if THINK_CLOSE in text:
            shapes["whole" if THINK_CLOSE in parts else "split"] += 1
    assert shapes["split"] > 500 and shapes["whole"] > 20, shapes


@pytest.mark.parametrize(
    ("parts", "think", "answer"),
    [
        # The tag as one token of its own, and in three pieces.
        (["<think>", "a", "b", "</think>", "c"], 3, 1),
        (["<think>", "a", "b", "</", "thi", "nk>", "c"], 3, 1),
        # Merged with the text on either side: those pieces count in that side.
        (["<think>", "a", "b</", "think>c", "d"], 3, 2),
        (["<think>", "a", "b", " </", "think>", "d"], 4, 1),
        (["x</think>y"], 1, 0),
        (["</think>y"], 0, 1),
        (["x</think>"], 1, 0),
        # At the very start and at the very end.
        (["</think>", "x"], 0, 1),
        (["x", "</think>"], 1, 0),
        (["</think>"], 0, 0),
        # The first closing tag splits the response.
        (["a", "</think>", "b", "</think>", "c"], 1, 3),
        # Cut off while thinking: all thinking; no tags: all answer.
        (["<think>", "a", "b"], 3, 0),
        (["pre", "<th", "ink>", "a"], 4, 0),
        (["a", "b", "c"], 0, 3),
        ([], 0, 0),
    ],
)
def test_hand_worked_splits(parts, think, answer):
    tok = Pieces()
    ids = tok.encode(parts)
    assert token_counts(ids, tok) == {"response_tokens": len(parts), "think_tokens": think, "answer_tokens": answer}


def test_without_a_tokenizer_only_the_length():
    assert token_counts([5, 6, 7]) == {"response_tokens": 3}
    assert token_counts(()) == {"response_tokens": 0}


def test_a_decode_function_and_other_tags():
    pieces = ["[r]", "x", "[/", "r]", "y", "z"]
    decode = lambda ids: "".join(pieces[i] for i in ids)  # noqa: E731
    assert token_counts([0, 1, 2, 3, 4, 5], decode, think_open="[r]", think_close="[/r]") == {
        "response_tokens": 6, "think_tokens": 2, "answer_tokens": 2}
    # With the default tags the text has none.
    assert token_counts([0, 1, 2, 3, 4, 5], decode)["think_tokens"] == 0


def test_ids_with_tolist_and_bad_input():
    class Row:
        def tolist(self):
            return [1, 2]

    assert token_counts(Row()) == {"response_tokens": 2}
    with pytest.raises(TypeError, match="ints"):
        token_counts([1, 2.5])
    with pytest.raises(TypeError, match="sequence"):
        token_counts("12")
    with pytest.raises(TypeError, match="decode"):
        token_counts([1], object())
    with pytest.raises(ValueError, match="think_close"):
        token_counts([1], lambda ids: "", think_close="")


def test_length_sources_and_the_package_export():
    assert is_length_source("length/lcpo_max") and is_length_source("length/elastic")
    assert not is_length_source("timely/general") and not is_length_source(None) and not is_length_source("lengthy")
    assert timeaware.token_counts is token_counts


def test_untagged_thinking_and_counts_per_data_source():
    tok = Pieces()
    plain = tok.encode(["a", "b", "c"])
    closed = tok.encode(["a", "</think>", "c"])
    assert token_counts(plain, tok, untagged_thinking=True) == {"response_tokens": 3, "think_tokens": 3, "answer_tokens": 0}
    assert token_counts(closed, tok, untagged_thinking=True) == token_counts(closed, tok)
    # The anytime reward's response is the thinking, tagged or not; the others' untagged response is the answer.
    assert counts_for("length/anytime", plain, tok)["think_tokens"] == 3
    assert counts_for("length/lcpo_max", plain, tok)["think_tokens"] == 0
    assert counts_for("length/elastic", closed, tok, think_close="c") == {
        "response_tokens": 3, "think_tokens": 2, "answer_tokens": 0}
    assert counts_for("timely/general", plain, tok) is None
    assert counts_for("length/thinkprune", plain) == {"response_tokens": 3}
    # A template that opens the thinking in the prompt: an untagged response
    # was cut while thinking, as the service's rewards.length.think_in_prompt reads it.
    assert counts_for("length/thinkprune", plain, tok, think_in_prompt=True) == {
        "response_tokens": 3, "think_tokens": 3, "answer_tokens": 0}
    assert counts_for("length/thinkprune", closed, tok, think_in_prompt=True) == counts_for("length/thinkprune", closed, tok)
