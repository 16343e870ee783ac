"""VeRL reward functions backed by the timeaware verifier service.

Point VeRL's ``custom_reward_function`` at this file (or at a file of your
own that imports from it):

* `compute_score` (async): for VeRL's reward loop, which awaits coroutine
  reward functions and runs many of them concurrently. Concurrent calls are
  micro-batched into ``POST /v1/score/batch`` requests.
* `compute_score_sync`: the same for reward managers that call
  ``compute_score`` synchronously (the classic ``naive``/``dapo``/``prime``
  managers, or a reward loop that runs sync functions in a thread pool);
  concurrent calls from different threads are batched together too.
* `compute_score_batch` (and `compute_score_batch_async`): the signature of
  VeRL's ``batch`` reward manager, ``(data_sources, solution_strs,
  ground_truths, extra_infos, **kwargs) -> list``.

Contract shared by all of them:

* They raise only `VerifierUnreachable` (and on cancellation of the awaiting
  task): at first use when the service does not answer, and when more than
  ``max_consecutive_fallbacks`` items in a row got no answer, so that a
  training run never learns from fallback zeros unnoticed. The message names
  the URL. ``on_unreachable="fallback"`` turns both into ERROR logs. At
  first use, `timeaware.scoring.RolloutLogError` when the configured
  ``rollout_log`` cannot be written.
* Otherwise, whatever goes wrong (a timeout, 401, 413, a rejected item, odd
  input), the result is ``{"score": fallback, <detail keys>: 0.0}``.
* A result holds exactly ``score`` plus the detail keys the service lists
  for its data source (`reward_keys`), all finite floats, for every item.
  VeRL collects every key of the dict into per-key lists that must have one
  entry per sample, and averages them for validation metrics, so a key that
  only some items carry, or a text value, would break or be dropped there.
  The reason an item failed is therefore logged (logger ``timeaware``), not
  returned.
* ``**kwargs`` may carry settings for this call (the names of
  `timeaware.scoring.Settings`, e.g. ``url`` or ``fallback_score``, as set in
  ``custom_reward_function.reward_kwargs``); anything else VeRL passes
  (``reward_router_address``, ...) is ignored.
* How the measured time reaches the reward: see
  `timeaware.scoring.prepare_item` and the package README.

This module uses absolute imports only, so VeRL may load it from its file
path under another module name; its state lives in `timeaware.scoring`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Sequence
from typing import Any

from timeaware import scoring
from timeaware.scoring import VerifierUnreachable, configure, reward_keys, shutdown, stats

__all__ = [
    "VerifierUnreachable",
    "compute_score",
    "compute_score_batch",
    "compute_score_batch_async",
    "compute_score_sync",
    "configure",
    "reward_keys",
    "shutdown",
    "stats",
]

logger = logging.getLogger("timeaware")


def _submit(
    data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any, kwargs: dict[str, Any]
) -> tuple[concurrent.futures.Future[dict[str, float]], scoring.Settings]:
    s = scoring.settings(kwargs)
    fut: concurrent.futures.Future[dict[str, float]]
    why = scoring.played_without_verifier(extra_info, s)
    if why is not None:
        scoring.get_batcher(s).count_outcomes([False])
        fut = concurrent.futures.Future()
        fut.set_result(scoring.fallback_result(data_source, s, reason=why))
        return fut, s
    try:
        item = scoring.prepare_item(data_source, solution_str, ground_truth, extra_info, s)
        return scoring.get_batcher(s).submit(item["data_source"], item), s
    except (VerifierUnreachable, scoring.RolloutLogError):
        raise
    except Exception as exc:  # noqa: BLE001
        logger.warning("timeaware: cannot submit %r for scoring: %r", data_source, exc)
        fut = concurrent.futures.Future()
        fut.set_result(scoring.fallback_result(data_source, s, reason=f"cannot be sent: {exc!r}", cause="rejected"))
        return fut, s


def _wait(fut: concurrent.futures.Future[dict[str, float]], data_source: Any, s: scoring.Settings) -> dict[str, float]:
    try:
        return fut.result(timeout=s.deadline_s)
    except VerifierUnreachable:
        raise
    except Exception as exc:  # noqa: BLE001 - includes the deadline
        logger.warning("timeaware: no result for a %r item (%r); using the fallback", data_source, exc)
        return scoring.fallback_result(data_source, s, reason="no answer in time")


async def _first_use(kwargs: dict[str, Any]) -> None:
    """Run the first-use reachability check off the event loop's thread."""
    s = scoring.settings(kwargs)
    if not scoring.ready(s):
        await asyncio.get_running_loop().run_in_executor(None, scoring.get_batcher, s)


async def compute_score(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """Score one rollout; concurrent awaits are batched. Raises only `VerifierUnreachable`."""
    await _first_use(kwargs)
    fut, s = _submit(data_source, solution_str, ground_truth, extra_info, kwargs)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(fut), timeout=s.deadline_s)
    except (asyncio.CancelledError, VerifierUnreachable):
        raise
    except Exception as exc:  # noqa: BLE001
        logger.warning("timeaware: no result for a %r item (%r); using the fallback", data_source, exc)
        return scoring.fallback_result(data_source, s, reason="no answer in time")


def compute_score_sync(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """Blocking `compute_score`. Thread-safe; calls made from several
    threads at once are batched together. A lone caller waits up to
    ``max_wait_ms`` for companions before its request leaves. Do not call it
    on an event loop's thread (it blocks the loop); await `compute_score`
    there. Raises only `VerifierUnreachable`."""
    fut, s = _submit(data_source, solution_str, ground_truth, extra_info, kwargs)
    return _wait(fut, data_source, s)


def _submit_all(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any] | None,
    ground_truths: Sequence[Any] | None,
    extra_infos: Sequence[Any] | None,
    kwargs: dict[str, Any],
) -> list[tuple[concurrent.futures.Future[dict[str, float]], Any, scoring.Settings]]:
    def column(values: Sequence[Any] | None, n: int) -> list[Any]:
        if values is None:
            return [None] * n
        try:
            out = list(values)
        except TypeError:
            return [None] * n
        return (out + [None] * n)[:n]

    try:
        sources = list(data_sources)
    except TypeError:
        sources = []
    n = len(sources)
    sols = column(solution_strs, n)
    gts = column(ground_truths, n)
    eis = column(extra_infos, n)
    s = scoring.settings(kwargs)
    prepared: list[Any] = []
    unplayed: dict[int, str] = {}
    for i in range(n):
        why = scoring.played_without_verifier(eis[i], s)
        if why is not None:
            unplayed[i] = why
            prepared.append(None)
            continue
        try:
            item = scoring.prepare_item(sources[i], sols[i], gts[i], eis[i], s)
            prepared.append((item["data_source"], item))
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: cannot submit %r for scoring: %r", sources[i], exc)
            prepared.append(None)
    if unplayed:
        scoring.get_batcher(s).count_outcomes([False] * len(unplayed))
    try:
        futures = iter(scoring.get_batcher(s).submit_many([p for p in prepared if p is not None]))
    except (VerifierUnreachable, scoring.RolloutLogError):
        raise
    except Exception as exc:  # noqa: BLE001
        logger.warning("timeaware: cannot submit a batch for scoring: %r", exc)
        prepared, futures = [None] * n, iter(())
    out = []
    for i, p in enumerate(prepared):
        if p is None:
            fut: concurrent.futures.Future[dict[str, float]] = concurrent.futures.Future()
            if i in unplayed:
                fut.set_result(scoring.fallback_result(sources[i], s, reason=unplayed[i]))
            else:
                fut.set_result(scoring.fallback_result(sources[i], s, reason="cannot be sent", cause="rejected"))
        else:
            fut = next(futures)
        out.append((fut, sources[i], s))
    return out


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """Score a whole batch (VeRL's ``batch`` reward manager signature).

    Returns one result per entry of ``data_sources``, in order; a shorter
    ``solution_strs``/``ground_truths``/``extra_infos`` is padded with None.
    The items are split into requests of at most ``max_batch`` and sent
    concurrently (up to ``max_inflight``). Raises only `VerifierUnreachable`.
    """
    return [
        _wait(fut, ds, s)
        for fut, ds, s in _submit_all(data_sources, solution_strs, ground_truths, extra_infos, kwargs)
    ]


async def compute_score_batch_async(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """Awaitable `compute_score_batch` (VeRL's reward-loop ``batch`` manager
    awaits a coroutine batch function). Raises only `VerifierUnreachable`."""
    await _first_use(kwargs)
    pending = _submit_all(data_sources, solution_strs, ground_truths, extra_infos, kwargs)

    async def one(fut: concurrent.futures.Future[dict[str, float]], ds: Any, s: scoring.Settings) -> dict[str, float]:
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), timeout=s.deadline_s)
        except (asyncio.CancelledError, VerifierUnreachable):
            raise
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: no result for a %r item (%r); using the fallback", ds, exc)
            return scoring.fallback_result(ds, s, reason="no answer in time")

    return list(await asyncio.gather(*(one(*p) for p in pending)))
