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

VeRL 0.9.1's trainer scores every rollout through the reward loop
(``verl.experimental.reward_loop``); its older managers
(``verl.workers.reward_manager``) are no longer on the trainer's path, so
there is no counterpart for them here.

This module imports VeRL; `timeaware` and `timeaware.verl` do not import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

from timeaware import tokens

__all__ = ["TokenCountRewardManager"]


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
        column = np.empty(1, dtype=object)
        column[0] = extra
        data.non_tensor_batch["extra_info"] = column
        return dict(await super().run_single(data))


def _reward_kwargs(config: Any) -> Mapping[str, Any]:
    """``reward.custom_reward_function.reward_kwargs`` of VeRL's config ({} when absent)."""
    try:
        kwargs = config.reward.custom_reward_function.get("reward_kwargs")
    except AttributeError:
        return {}
    return kwargs if isinstance(kwargs, Mapping) else {}
