"""A VeRL reward manager that sends each response's token counts to the service.

The service's token-budget rewards (data sources ``length/...``) read the
response's length in tokens from ``extra_info`` (``response_tokens``, and
``think_tokens`` and ``answer_tokens``, the parts before and after the
closing think tag), counted from the generated ids. VeRL's reward
function (`timeaware.verl.compute_score`) gets the decoded text only, so the
counts are taken one step earlier, in the reward manager, which holds the
response's token ids. `TokenCountRewardManager` is VeRL 0.9.1's reward-loop
``naive`` manager with that step added; select it with VeRL's own hook::

    reward.reward_manager.source=importlib
    reward.reward_manager.name=TokenCountRewardManager
    reward.reward_manager.module.path=pkg://timeaware.verl_tokens

beside ``reward.custom_reward_function.path=pkg://timeaware.verl`` and
``name=compute_score`` as usual. The think tags default to ``<think>`` and
``</think>``; ``+reward.custom_reward_function.reward_kwargs.think_open=...``
and ``...think_close=...`` change them (set them as the service's
``rewards.length.think_open`` and ``think_close`` are; `compute_score`
ignores both), and ``...think_in_prompt=true`` matches the service's
``rewards.length.think_in_prompt``.

The group-wise rewards (`timeaware.scoring.GROUP_SOURCES`, e.g.
``length/kimi``) score the rollouts of one prompt together, and VeRL's reward
loop hands the manager one rollout at a time, as each finishes. For those
data sources the manager gathers the rollouts by their ``uid`` (the key VeRL
gives the ``actor_rollout_ref.rollout.n`` rollouts of one prompt in one
step) and, once the last has come, sends the group whole in one request;
each rollout's call returns when its group is scored. This needs every
rollout of a group to reach the same manager: set ``reward.num_workers=1``
(one reward-loop worker; its event loop awaits thousands of rollouts at
once, and the scoring itself is the service's). A group whose rollouts do
not all come within ``reward_kwargs.group_wait_s`` (600 s) stops the run,
naming the uid: it would otherwise be scored as a smaller group or not at
all. The group size is ``rollout.n``, or ``reward_kwargs.group_size``;
validation with ``val_kwargs.n`` other than ``rollout.n`` needs the latter.

VeRL 0.9.1's trainer scores every rollout through the reward loop
(``verl.experimental.reward_loop``); its older managers
(``verl.workers.reward_manager``) are no longer on the trainer's path, so
there is no counterpart for them here.

This module imports VeRL; `timeaware` and `timeaware.verl` do not import it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

from timeaware import scoring, tokens, verl

__all__ = ["GroupIncomplete", "TokenCountRewardManager"]

#: How long the rollouts of one group may take to come, by default.
GROUP_WAIT_S = 600.0


class GroupIncomplete(RuntimeError):
    """The rollouts of a group did not all reach the manager in time: the
    group size or the number of reward workers is wrong, or rollouts were
    lost. Raised so that the run stops instead of training on a group that
    is not whole."""


class _Gathering:
    """The rollouts of one group that have come: their items and the
    futures their calls await."""

    __slots__ = ("items", "waiters")

    def __init__(self) -> None:
        self.items: list[tuple[str, str, Any, dict[str, Any]]] = []
        self.waiters: list[asyncio.Future[dict[str, float]]] = []


class TokenCountRewardManager(NaiveRewardManager):
    """VeRL's reward-loop ``naive`` manager, which also puts the response's
    token counts into ``extra_info`` for ``length/...`` data sources.

    For each rollout of such a data source it takes the response's ids
    (``responses``, cut at the response's part of ``attention_mask``, as the
    ``naive`` manager cuts them before decoding), counts them
    (``response_tokens``) and, with the manager's tokenizer, splits them at
    the closing think tag (``think_tokens``, ``answer_tokens``; see
    `timeaware.tokens.token_counts`), and hands the rollout to the ``naive``
    manager with those counts in a copy of its ``extra_info``: they replace
    any the row carries, and the row's own ``extra_info``, which VeRL may
    share between the rollouts of one prompt, is not modified. Rollouts of
    other data sources go to the ``naive`` manager unchanged.
    """

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any, reward_router_address: Any = None,
                 reward_model_tokenizer: Any = None) -> None:
        super().__init__(config, tokenizer, compute_score, reward_router_address=reward_router_address,
                         reward_model_tokenizer=reward_model_tokenizer)
        kwargs = _reward_kwargs(config)
        self.think_open = str(kwargs.get("think_open", tokens.THINK_OPEN))
        self.think_close = str(kwargs.get("think_close", tokens.THINK_CLOSE))
        self.think_in_prompt = kwargs.get("think_in_prompt", False) is True
        if not self.think_close:
            raise ValueError("TokenCountRewardManager: reward_kwargs.think_close must not be empty")
        self.reward_kwargs = dict(kwargs)
        self.group_size = _positive_int(kwargs.get("group_size"), "reward_kwargs.group_size") or \
            _positive_int(_get(config, "actor_rollout_ref", "rollout", "n"), "actor_rollout_ref.rollout.n") or 1
        wait = kwargs.get("group_wait_s", GROUP_WAIT_S)
        if not (isinstance(wait, (int, float)) and math.isfinite(wait) and wait > 0):
            raise ValueError(f"TokenCountRewardManager: reward_kwargs.group_wait_s must be a positive number, got {wait!r}")
        self.group_wait_s = float(wait)
        self.num_workers = _get(config, "reward", "num_workers")
        self._groups: dict[str, _Gathering] = {}

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one rollout (its last sequence, as ``naive`` does), with its
        token counts in ``extra_info`` when its data source is ``length/...``."""
        data = data[-1:]
        item = data[0]
        source = item.non_tensor_batch.get("data_source")
        if not tokens.is_length_source(source):
            return dict(await super().run_single(data))
        response_ids = item.batch["responses"]
        response_length = response_ids.shape[-1]
        valid = int(item.batch["attention_mask"][-response_length:].sum())
        ids = response_ids[:valid].tolist()
        counts = await self.loop.run_in_executor(
            None,
            lambda: tokens.counts_for(source, ids, self.tokenizer, think_open=self.think_open,
                                      think_close=self.think_close, think_in_prompt=self.think_in_prompt) or {},
        )
        extra = item.non_tensor_batch.get("extra_info")
        extra = dict(extra) if isinstance(extra, Mapping) else {}
        for stale in ("think_tokens", "answer_tokens"):
            extra.pop(stale, None)
        extra.update(counts)
        if source in scoring.GROUP_SOURCES:
            return await self._gather(item, str(source), ids, extra)
        column = np.empty(1, dtype=object)
        column[0] = extra
        data.non_tensor_batch["extra_info"] = column
        return dict(await super().run_single(data))


    async def _gather(self, item: Any, source: str, ids: list[int], extra: dict[str, Any]) -> dict[str, Any]:
        """Hold a rollout of a group-wise data source until its group has
        come whole, score the group in one request, and return this
        rollout's share, as the ``naive`` manager returns a result."""
        uid = item.non_tensor_batch.get("uid")
        if uid is None:
            raise ValueError(f"TokenCountRewardManager: a {source} rollout has no uid: the group-wise rewards "
                             "score the rollouts of one prompt together, and VeRL's uid names them")
        if self.num_workers is not None and self.num_workers != 1:
            raise ValueError(f"TokenCountRewardManager: {source} scores the rollouts of one prompt together, and "
                             f"with reward.num_workers={self.num_workers} they reach different workers: set "
                             "reward.num_workers=1")
        for k, v in (item.non_tensor_batch.get("tool_extra_fields") or {}).items():
            extra.setdefault(k, v)
        extra[scoring.GROUP_FIELD] = f"verl-{uid}"
        extra[scoring.GROUP_SIZE_FIELD] = self.group_size
        text = await self.loop.run_in_executor(None, lambda: self.tokenizer.decode(ids, skip_special_tokens=True))
        ground_truth = item.non_tensor_batch["reward_model"]["ground_truth"]
        key = str(uid)
        g = self._groups.setdefault(key, _Gathering())
        waiter: asyncio.Future[dict[str, float]] = asyncio.get_running_loop().create_future()
        g.items.append((source, text, ground_truth, extra))
        g.waiters.append(waiter)
        if len(g.items) >= self.group_size:
            del self._groups[key]
            await self._score_group(g)
        try:
            result = await asyncio.wait_for(asyncio.shield(waiter), timeout=self.group_wait_s)
        except TimeoutError:
            have = len(g.items)
            if self._groups.get(key) is g:
                del self._groups[key]
            for w in g.waiters:
                if not w.done():
                    w.set_exception(GroupIncomplete(
                        f"TokenCountRewardManager: the group of uid {key} ({source}) has {have} of its "
                        f"{self.group_size} rollouts after {self.group_wait_s:g} s: check "
                        "reward_kwargs.group_size against rollout.n (val_kwargs.n in validation) and "
                        "reward.num_workers=1"))
            raise waiter.exception() from None  # type: ignore[misc]
        return {"reward_score": result["score"], "reward_extra_info": dict(result)}

    async def _score_group(self, g: _Gathering) -> None:
        """Score a whole group in one request and hand each call its result."""
        try:
            results = await verl.compute_score_batch_async(
                [it[0] for it in g.items], [it[1] for it in g.items], [it[2] for it in g.items],
                [it[3] for it in g.items], **self.reward_kwargs)
        except asyncio.CancelledError:
            for w in g.waiters:
                w.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - VerifierUnreachable and the like: every member's call raises it
            for w in g.waiters:
                if not w.done():
                    w.set_exception(exc)
            return
        for w, r in zip(g.waiters, results):
            if not w.done():
                w.set_result(r)


def _get(config: Any, *path: str) -> Any:
    """A nested config value, None when any step is missing."""
    for name in path:
        try:
            config = config.get(name) if isinstance(config, Mapping) or hasattr(config, "get") else getattr(config, name)
        except (AttributeError, KeyError, TypeError):
            return None
        if config is None:
            return None
    return config


def _positive_int(value: Any, name: str) -> int | None:
    """value as an integer >= 1, None when unset; ValueError naming the setting otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"TokenCountRewardManager: {name} must be an integer >= 1, got {value!r}")
    return value


def _reward_kwargs(config: Any) -> Mapping[str, Any]:
    """``reward.custom_reward_function.reward_kwargs`` of VeRL's config ({} when absent)."""
    try:
        kwargs = config.reward.custom_reward_function.get("reward_kwargs")
    except AttributeError:
        return {}
    return kwargs if isinstance(kwargs, Mapping) else {}
