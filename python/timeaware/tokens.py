"""Token counts of a response, for the service's token-budget rewards.

The ``length/*`` rewards (``length/lcpo_exact``, ``length/lcpo_max``,
``length/thinkprune``, ``length/elastic``, ``length/anytime``) score a
response's length in tokens, counted from the ids the model generated: the
trainer, which holds them, sends the counts in ``extra_info`` (the service
checks them against the text, with the model's tokenizer when it is given
``rewards.length.tokenizer``):

* ``response_tokens``: the response's tokens, padding excluded;
* ``think_tokens``: the tokens before the closing think tag
  (``</think>``), and ``answer_tokens``: the tokens after it. The tag's own
  tokens are in neither, so ``think_tokens + answer_tokens <=
  response_tokens``.

`token_counts` computes them from the ids alone, and with a tokenizer the
split at the tag; `timeaware.trl.GRPOReward` and
`timeaware.verl_tokens.TokenCountRewardManager` send them. Standard library
only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["ANYTIME_SOURCE", "LENGTH_PREFIX", "THINK_CLOSE", "THINK_OPEN", "counts_for", "is_length_source",
           "token_counts"]

#: The data sources whose rewards read token counts start with this.
LENGTH_PREFIX = "length/"
#: The reward whose response is a thinking cut at several budgets.
ANYTIME_SOURCE = "length/anytime"
#: The tag that opens a think block (the service's ``rewards.length.think_open``).
THINK_OPEN = "<think>"
#: The tag that closes it (the service's ``rewards.length.think_close``).
THINK_CLOSE = "</think>"


def is_length_source(data_source: Any) -> bool:
    """Whether the data source's reward reads token counts (``length/...``)."""
    return isinstance(data_source, str) and data_source.startswith(LENGTH_PREFIX)


def counts_for(
    data_source: Any,
    token_ids: Any,
    tokenizer: Any = None,
    *,
    think_open: str = THINK_OPEN,
    think_close: str = THINK_CLOSE,
    think_in_prompt: bool = False,
) -> dict[str, int] | None:
    """The counts an item of ``data_source`` carries, or None when its
    reward reads none (not ``length/...``): `token_counts`, where the
    response of ``length/anytime`` is the thinking, tags or not (that
    reward reads ``think_tokens`` as its length, unchecked against tags:
    the chat template may have opened the block in the prompt), and so is
    every response without the closing tag when ``think_in_prompt`` says
    the template opens the thinking in the prompt (the service's
    ``rewards.length.think_in_prompt``)."""
    if not is_length_source(data_source):
        return None
    return token_counts(token_ids, tokenizer, think_open=think_open, think_close=think_close,
                        untagged_thinking=think_in_prompt or data_source == ANYTIME_SOURCE)


def token_counts(
    token_ids: Any,
    tokenizer: Any = None,
    *,
    think_open: str = THINK_OPEN,
    think_close: str = THINK_CLOSE,
    untagged_thinking: bool = False,
) -> dict[str, int]:
    """The counts a ``length/*`` item carries in ``extra_info``.

    Args:
        token_ids: the response's token ids, padding removed: a sequence of
            ints, or anything with ``tolist()`` (a 1-D tensor or array).
        tokenizer: optional; an object with ``decode(ids,
            skip_special_tokens=False)`` (a Hugging Face tokenizer) or a
            function from a list of ids to text.
        think_open, think_close: the think tags, as the service is
            configured (``rewards.length.think_open`` and ``think_close``).
        untagged_thinking: a response without think tags is all thinking
            (``think_tokens = n``) rather than all answer. For
            ``length/anytime``, whose response is the thinking z that the
            chat template may have opened in the prompt (`counts_for`).

    Returns:
        ``{"response_tokens": n}``, the number of ids; with a tokenizer also
        ``think_tokens`` and ``answer_tokens``:

        * the text has the closing tag (the first one splits it):
          ``think_tokens`` is the number of tokens that hold any text
          before the tag, ``answer_tokens`` the number of tokens that hold
          any text after it. A tag that is one token of its own and a tag
          spread over several BPE pieces count the same way; a piece that
          holds a part of the tag and text of one side (``.</``, ``k>\n``)
          counts in that side, so a part with text has at least one token,
          as the service checks; the rest of the tag's pieces count in
          neither part. (A token holding the whole tag and text on both
          sides counts as thinking.)
        * no closing tag, but the opening one: the think block never
          closed (the response was cut off while thinking), so every
          token is thinking: ``think_tokens = n``, ``answer_tokens = 0``.
        * neither tag: no thinking, ``think_tokens = 0``,
          ``answer_tokens = n`` (with ``untagged_thinking``, the other way
          round).

        The tag is found by binary search over the decoded text of
        prefixes and suffixes of the ids: O(log n) decodes, none of more
        than n ids.

    Raises:
        TypeError: an id is not an integer, or the tokenizer neither has
            ``decode`` nor is callable.
        ValueError: an empty ``think_close``.
    """
    ids = _ids(token_ids)
    n = len(ids)
    counts = {"response_tokens": n}
    if tokenizer is None:
        return counts
    if not think_close:
        raise ValueError("token_counts: think_close must not be empty")
    decode = _decoder(tokenizer)
    text = decode(ids)
    if think_close in text:
        end = _tag_end(ids, decode, think_close)
        start = _tag_start(ids, decode, think_close, end)
        # ids[start] holds the tag's first character, ids[end - 1] its last;
        # either may hold text of the part beside it too.
        window = decode(ids[start:end])
        at = window.find(think_close)
        before = at > 0
        after = at + len(think_close) < len(window) and not (before and start == end - 1)
        counts["think_tokens"] = start + before
        counts["answer_tokens"] = n - end + after
    elif (think_open and think_open in text) or untagged_thinking:
        counts["think_tokens"] = n
        counts["answer_tokens"] = 0
    else:
        counts["think_tokens"] = 0
        counts["answer_tokens"] = n
    return counts


def _ids(token_ids: Any) -> list[int]:
    if hasattr(token_ids, "tolist"):
        token_ids = token_ids.tolist()
    if isinstance(token_ids, (str, bytes)) or not isinstance(token_ids, Sequence):
        raise TypeError(f"token_counts: token_ids must be a sequence of ints, got {type(token_ids).__name__}")
    try:
        return [operator.index(t) for t in token_ids]
    except TypeError as exc:
        raise TypeError(f"token_counts: token_ids must be ints ({exc})") from None


def _decoder(tokenizer: Any) -> Callable[[list[int]], str]:
    decode = getattr(tokenizer, "decode", None)
    if callable(decode):
        return lambda ids: str(decode(ids, skip_special_tokens=False))
    if callable(tokenizer):
        return lambda ids: str(tokenizer(ids))
    raise TypeError(f"token_counts: the tokenizer has no decode method and is not a function: {type(tokenizer).__name__}")


def _tag_end(ids: list[int], decode: Callable[[list[int]], str], tag: str) -> int:
    """The smallest k such that the first k ids decode to text holding the
    tag (the whole response does)."""
    lo, hi = 1, len(ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if tag in decode(ids[:mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _tag_start(ids: list[int], decode: Callable[[list[int]], str], tag: str, end: int) -> int:
    """The largest j < end such that ids[j:end] still decode to text holding
    the tag: the tokens before j hold none of it. The tag is a few tokens
    long, so the search gallops back from ``end`` (windows of 1, 2, 4, ...
    tokens) before it bisects: its decodes are short."""
    width = 1
    while width < end and tag not in decode(ids[end - width:end]):
        width *= 2
    # ids[end - width:end] holds the tag (or the window reached the start,
    # and ids[0:end] does); the window half as wide does not.
    lo, hi = max(0, end - width), end - width // 2 - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tag in decode(ids[mid:end]):
            lo = mid
        else:
            hi = mid - 1
    return lo
