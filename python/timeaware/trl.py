"""TRL adapters: ``MarginDPOTrainer``, ``GRPOReward``, ``GetDurationEnv`` and
``NegotiationEnv``.

``GRPOReward`` is a reward function for ``trl.GRPOTrainer(reward_funcs=...)``
that scores every completion on the verifier service;
``GetDurationEnv`` gives each GRPOTrainer rollout the ``get_duration`` tool
on a timer of its own (``environment_factory=GetDurationEnv``), and
``NegotiationEnv`` plays each negotiation row as a whole episode against the
service's opponent (``environment_factory=NegotiationEnv``); see their
docstrings. The rest of this docstring is about ``MarginDPOTrainer``.

``timeaware pairs build`` gives every preference pair a ``margin`` δ = |S − 1.5|
from the mean human score S. The TicToc objective is offset DPO, which asks the
policy to prefer the chosen response by at least δ:

    loss = −log σ(β·(Δchosen − Δrejected) − δ),   Δ = log πθ(y|x) − log π_ref(y|x)

``trl.DPOTrainer`` reads ``prompt``, ``chosen`` and ``rejected`` and drops every
other column. ``MarginDPOTrainer`` is a drop-in replacement that keeps
``margin`` in the batch and subtracts it inside the sigmoid. Everything else
(datasets, chat templates, tools, PEFT, precomputed reference log-probs,
DeepSpeed) is TRL's own code path.

How: with the sigmoid loss, an offset δ equals raising the reference
log-probability of the chosen response by δ/β, so the trainer adds δ/β to
the reference log-probs of the chosen responses of each batch, whether TRL
computes them on the fly or precomputed them, and lets TRL compute the loss.
The logged ``rewards/chosen`` and ``rewards/margins`` therefore include the
offset: at the first step they read −δ, not 0.

Needs ``trl`` (``pip install 'timeaware[trl]'``); tested with TRL 1.16.
Importing this module imports TRL and torch, which a ``GRPOTrainer`` user has
loaded already; ``GRPOReward`` itself uses neither.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import math
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import torch
from trl import DPOTrainer

from timeaware import scoring, tokens, verl
from timeaware.client import Client, ServerUnavailable, TimeawareError, ToolUnavailable
from timeaware.episodes import NegotiationEpisode
from timeaware.tools import TIMER_OPTIONS, GetDurationTool, timer_options

__all__ = ["MARGIN_COLUMN", "GRPOReward", "GetDurationEnv", "MarginDPOTrainer", "NegotiationEnv", "ToolUnavailable"]

logger = logging.getLogger("timeaware")

#: The dataset column that holds each pair's offset δ.
MARGIN_COLUMN = "margin"


class _MarginCollator:
    """Wraps TRL's preference collator and adds the batch's margins."""

    def __init__(self, inner: Callable[[list[dict[str, Any]]], dict[str, Any]], column: str) -> None:
        self.inner = inner
        self.column = column

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self.inner(examples)
        margins = []
        for i, ex in enumerate(examples):
            if self.column not in ex or ex[self.column] is None:
                raise ValueError(
                    f"MarginDPOTrainer: example {i} of the batch has no {self.column!r}; "
                    "train on pairs that carry one (timeaware pairs build writes it)"
                )
            m = float(ex[self.column])
            if not math.isfinite(m):
                raise ValueError(f"MarginDPOTrainer: example {i} of the batch has {self.column} = {m}")
            margins.append(m)
        batch[self.column] = torch.tensor(margins, dtype=torch.float32)
        return batch


class MarginDPOTrainer(DPOTrainer):
    """``trl.DPOTrainer`` with each pair's ``margin`` as the offset of offset DPO.

    Takes the same arguments as ``DPOTrainer``. The training (and evaluation)
    dataset must have a numeric ``margin`` column; ``margin_column`` names
    another one. The loss must be TRL's default ``sigmoid`` with the default
    ``reverse_kl`` divergence, for which the offset is defined.

    At the first step, when the policy equals the reference, the loss of a
    pair is −log σ(−δ): 1.3133 for δ = 1.
    """

    # DPOTrainer's attributes that this class reads and sets.
    data_collator: Any
    _signature_columns: list[str] | None
    precompute_ref_logps: bool

    def __init__(self, *args: Any, margin_column: str = MARGIN_COLUMN, **kwargs: Any) -> None:
        self.margin_column = margin_column
        super().__init__(*args, **kwargs)
        if list(self.loss_types) != ["sigmoid"]:
            raise ValueError(
                f"MarginDPOTrainer: the margin offset is defined for loss_type='sigmoid'; got {self.loss_types}"
            )
        if self.f_divergence_type != "reverse_kl":
            raise ValueError(
                "MarginDPOTrainer: the margin offset is defined for f_divergence_type='reverse_kl'; "
                f"got {self.f_divergence_type!r}"
            )
        for name, ds in _datasets(self.train_dataset, self.eval_dataset):
            columns = getattr(ds, "column_names", None)
            if columns is not None and self.margin_column not in columns:
                raise ValueError(
                    f"MarginDPOTrainer: the {name} dataset has no {self.margin_column!r} column "
                    f"(columns: {', '.join(columns)})"
                )
        self.data_collator = _MarginCollator(self.data_collator, self.margin_column)

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        if self._signature_columns is not None and self.margin_column not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, self.margin_column]

    def compute_ref_log_probs(self, model: Any, inputs: dict[str, Any]) -> Any:
        inputs = {k: v for k, v in inputs.items() if k != self.margin_column}
        return super().compute_ref_log_probs(model, inputs)

    def _compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool) -> Any:
        inputs = dict(inputs)
        margin = inputs.pop(self.margin_column, None)
        if margin is None:
            raise ValueError(
                f"MarginDPOTrainer: the batch has no {self.margin_column!r}; pass batches made by the trainer's collator"
            )
        precomputed = self.precompute_ref_logps
        if not precomputed:
            ref_model = self.ref_model if self.ref_model is not None else model
            ref_chosen, ref_rejected = self.compute_ref_log_probs(ref_model, inputs)
            inputs["ref_chosen_logps"], inputs["ref_rejected_logps"] = ref_chosen, ref_rejected
        ref_chosen = inputs["ref_chosen_logps"]
        inputs["ref_chosen_logps"] = ref_chosen + margin.to(ref_chosen.device, ref_chosen.dtype) / self.beta
        # TRL reads the reference log-probs from the batch when they were
        # precomputed; say so for this call.
        self.precompute_ref_logps = True
        try:
            return super()._compute_loss(model, inputs, return_outputs)
        finally:
            self.precompute_ref_logps = precomputed


def _datasets(train: Any, evals: Any) -> Iterator[tuple[str, Any]]:
    if train is not None:
        yield "train", train
    if isinstance(evals, dict):
        for name, ds in evals.items():
            yield f"eval ({name})", ds
    elif evals is not None:
        yield "eval", evals


#: The data source of a ``pairs build`` row (it has ``label`` instead of ``data_source``).
DECISION_SOURCE = "tictoc/decision"


class GRPOReward:
    """A reward function for ``trl.GRPOTrainer(reward_funcs=GRPOReward())``.

    Every completion is scored by the verifier service with the reward of its
    row's data source, through the batching of `timeaware.verl` (one
    ``POST /v1/score/batch`` per call of at most ``max_batch`` items, the
    unreachable alarm, the fallback counters; stop strings are stripped by the
    service). The call is a coroutine, which TRL 1.16 awaits on its own event
    loop, beside its other async reward functions.

    TRL passes every dataset column except ``prompt`` as a keyword argument
    holding one value per completion. The columns read:

    * rows of ``timeaware synth`` (Time Puzzles, TRAVELER, ``timely/*``,
      negotiation): ``data_source``, ``reward_model`` (its ``ground_truth``)
      and ``extra_info``, as the synth commands write them;
    * rows of ``timeaware pairs build`` (``tictoc/decision``): ``label``
      (``tool`` or ``direct``) and ``margin``; the first assistant message of
      the completion is the decision;
    * optionally ``timeaware_timer`` (a timer token) and
      ``timeaware_transcript`` (a negotiation episode's transcript), which a
      rollout may return beside its completions; they reach the service as
      they do from VeRL (`timeaware.scoring.prepare_item`).

    When the trainer runs a `GetDurationEnv` per rollout
    (``environment_factory``), TRL hands this function the rollouts'
    environments; the reward stops each one's timer (the rollout has ended)
    and scores the completion with that timer's final reading, unless the
    row already carries a ``timeaware_timer``. A rollout whose timer could
    not be started (the verifier was down at ``reset``) gets no score, with
    the reason "the rollout's timer could not be started": scored without
    it, a timed row would be rewarded as an untimed one. When it runs a
    `NegotiationEnv` per rollout, a finished episode's reward is the score
    the service's negotiation environment returned with its last step (the
    ``negotiation`` reward of the whole transcript, on the row's table and
    clock), and the completion's text is not sent again; an episode that did
    not finish (the model stopped calling ``send`` before a deal, a
    walk-away or the budget's end) gets no score, as below, with the reason
    "the negotiation episode did not finish".

    A completion that gets no score (its row names no data source the
    service knows, or has neither ``data_source`` nor ``label``; the service
    did not answer; the item was rejected) gets ``None``, which TRL 1.16
    documents as "not applicable": the reward function is left out for that
    completion, and a completion every reward function left out gets no
    advantage. ``unscored="fallback"`` gives it the fallback score instead.
    Either way it is counted (`stats`, and the metric ``timeaware/unscored``,
    the share of the call's completions, through TRL's ``log_metric``, with
    ``timeaware/verifier_unreachable`` the share the verifier did not
    answer: their tool, environment or score got no answer) and
    logged at WARNING with its data source and reason. The service being
    down raises `timeaware.scoring.VerifierUnreachable` at first use, as in
    VeRL, unless ``on_unreachable="fallback"``.

    The token-budget rewards (data sources ``length/...``) read the
    response's length in tokens from ``extra_info``, counted from the
    generated ids: for those rows the reward puts the count of the completion's
    ids that TRL passes (``completion_ids``, padding excluded) into the
    item's ``extra_info.response_tokens``, and, given ``tokenizer`` (the
    trainer's ``processing_class``), the split at the closing think tag,
    ``think_tokens`` and ``answer_tokens`` (`timeaware.tokens.token_counts`).
    The trainer's ids are what was generated, so these counts replace any
    the row carries; without a tokenizer the row's ``think_tokens`` and
    ``answer_tokens`` are dropped (they would describe another text). Rows
    of other data sources are sent as they were: their rewards read no
    counts.

    The group-wise rewards (`timeaware.scoring.GROUP_SOURCES`, e.g.
    ``length/kimi``) score the ``num_generations`` completions of one prompt
    together. GRPOTrainer hands a reward function its process's share of the
    generation batch, each prompt's completions next to each other; this
    reward cuts that share into blocks of ``num_generations``, gives each
    block a key of its own (new at every call, so no key serves two steps)
    and sends each block whole in one request. The group size is
    ``num_generations`` when given, else the trainer's own
    (``num_generations`` in training, ``num_generations_eval`` in
    evaluation). A block that is not whole (the share is not a multiple of
    the group size, or a block mixes prompts: with several processes, make
    ``per_device_train_batch_size × steps_per_generation`` a multiple of
    ``num_generations`` so that no group is split across processes) gets no
    score, counted and logged as any unscored completion, with the reason;
    it is never scored as a smaller group.

    Args:
        name: the name TRL logs the reward under (``rewards/<name>/mean``).
        unscored: ``"none"`` (default) or ``"fallback"``.
        tokenizer: the trainer's tokenizer (``processing_class``), for the
            think and answer counts of ``length/...`` rows; without it only
            ``response_tokens`` is sent.
        think_open, think_close: the think tags, as the service's
            ``rewards.length.think_open`` and ``think_close`` are set.
        think_in_prompt: the chat template opens the thinking in the
            prompt, as the service's ``rewards.length.think_in_prompt``
            says: a completion without the closing tag is all thinking.
        num_generations: the size of a group for the group-wise rewards;
            None (default) takes the trainer's.
        **settings: per-reward settings (`timeaware.scoring.Settings`:
            ``url``, ``token``, ``fallback_score``, ...); the rest come from
            `timeaware.verl.configure` and the environment.
    """

    def __init__(self, name: str = "timeaware", *, unscored: str = "none", tokenizer: Any = None,
                 think_open: str = tokens.THINK_OPEN, think_close: str = tokens.THINK_CLOSE,
                 think_in_prompt: bool = False, num_generations: int | None = None, **settings: Any) -> None:
        if num_generations is not None and not (isinstance(num_generations, int) and num_generations >= 1):
            raise ValueError(f"GRPOReward: num_generations must be an integer >= 1, got {num_generations!r}")
        if unscored not in ("none", "fallback"):
            raise ValueError(f"GRPOReward: unscored must be 'none' or 'fallback', got {unscored!r}")
        unknown = sorted(set(settings) - {f for f in scoring.Settings.__dataclass_fields__})
        if unknown:
            raise ValueError(f"GRPOReward: unknown setting(s) {', '.join(unknown)}")
        if not think_close:
            raise ValueError("GRPOReward: think_close must not be empty")
        self.__name__ = name
        self.unscored = unscored
        self.tokenizer = tokenizer
        self.think_open = think_open
        self.think_close = think_close
        self.think_in_prompt = bool(think_in_prompt)
        self.num_generations = num_generations
        self.settings = dict(settings)
        self._lock = threading.Lock()
        self._stats = {"completions": 0, "scored": 0, "unscored": 0}

    async def _add_token_counts(self, items: list[Any], completion_ids: Any) -> None:
        """Put the token counts of completion i into item i's extra_info,
        for the items of ``length/...`` data sources, when TRL passed the
        ids; an item whose ids cannot be counted becomes a `_Skip`. With a
        tokenizer the counting decodes, off the event loop. Counts a row
        carries are dropped first: without TRL's ids the service then names
        the missing count instead of scoring the row's own."""
        ids = list(completion_ids) if isinstance(completion_ids, (list, tuple)) else []
        for it in items:
            if isinstance(it, tuple) and tokens.is_length_source(it[0]) and isinstance(it[3], dict):
                for stale in ("response_tokens", "think_tokens", "answer_tokens"):
                    it[3].pop(stale, None)
        todo = [i for i, it in enumerate(items)
                if isinstance(it, tuple) and tokens.is_length_source(it[0]) and i < len(ids)]
        if not todo:
            return

        def count() -> list[dict[str, int] | str]:
            out: list[dict[str, int] | str] = []
            for i in todo:
                try:
                    counts = tokens.counts_for(items[i][0], ids[i], self.tokenizer, think_open=self.think_open,
                                               think_close=self.think_close, think_in_prompt=self.think_in_prompt)
                    out.append(counts or {})
                except Exception as exc:  # noqa: BLE001 - odd ids fail alone
                    out.append(f"cannot count the completion's tokens ({exc!r})")
            return out

        counted = count() if self.tokenizer is None else await asyncio.get_running_loop().run_in_executor(None, count)
        for i, counts in zip(todo, counted):
            if isinstance(counts, str):
                items[i] = _Skip(items[i][0], counts)
                continue
            source, solution, ground_truth, extra = items[i]
            if not isinstance(extra, dict):  # an extra_info that is not an object is sent as {}
                extra = {}
                items[i] = (source, solution, ground_truth, extra)
            for stale in ("think_tokens", "answer_tokens"):
                extra.pop(stale, None)
            extra.update(counts)

    def stats(self) -> dict[str, int]:
        """Completions this reward was asked for, those scored, and those
        that got no score (None, or the fallback with ``unscored="fallback"``)."""
        with self._lock:
            return dict(self._stats)

    async def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Any = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score a batch of completions: one float (or None) per completion, in order."""
        comps = list(completions or [])
        n = len(comps)
        log_metric = kwargs.get("log_metric")
        s = scoring.settings(self.settings)
        envs = _environments(kwargs.get("environments"), n)
        timers = await _finish_timers(envs, n)
        items: list[tuple[str, str, Any, Any] | _Skip | float] = []
        for i in range(n):
            env = envs[i]
            if isinstance(env, NegotiationEnv):
                items.append(env._outcome())
                continue
            if isinstance(env, GetDurationEnv) and timers[i] is None and not _column(kwargs, s.timer_field, i):
                # Scored without its timer, a timed row would get the reward
                # of an untimed one: no limit, no utilisation.
                source = str(_column(kwargs, "data_source", i))
                if env.verifier_unreachable:
                    items.append(_Skip(source, f"the verifier at {env.verifier_url} could not be reached to start "
                                               "the rollout's timer", unreachable=True))
                else:
                    items.append(_Skip(source, "the rollout's timer could not be started"))
                continue
            try:
                row = _row_item(i, comps[i], kwargs, s, timers[i])
            except Exception as exc:  # noqa: BLE001 - an odd row fails alone
                row = f"cannot read the row ({exc!r})"
            items.append(_Skip("?", row) if isinstance(row, str) else row)
        _assign_groups(items, prompts, self.num_generations or _trainer_group_size(log_metric))
        await self._add_token_counts(items, completion_ids)
        # Rollouts a tool or an environment could not play because the
        # verifier did not answer count where the scored ones do: in the run
        # of fallbacks that stops the training past its limit.
        # An episode the environment scored ends the run, as a scored item does.
        played = [isinstance(it, float) for it in items if isinstance(it, float) or
                  (isinstance(it, _Skip) and it.unreachable)]
        if played:
            await asyncio.to_thread(scoring.count_outcomes, played, self.settings)
        sent = [it for it in items if isinstance(it, tuple)]
        results = iter(
            await verl.compute_score_batch_async(
                [it[0] for it in sent],
                [it[1] for it in sent],
                [it[2] for it in sent],
                [it[3] for it in sent],
                **self.settings,
            )
            if sent
            else []
        )
        rewards: list[float | None] = []
        reasons: dict[tuple[str, str], int] = {}
        unanswered = 0
        for it in items:
            if isinstance(it, float):
                rewards.append(it)
                continue
            if isinstance(it, _Skip):
                source, reason, score = it.source, it.reason, float(s.fallback_score)
                unanswered += it.unreachable
            else:
                r = next(results)
                if not isinstance(r, scoring.Unscored):
                    rewards.append(float(r["score"]))
                    continue
                source, reason, score = it[0], r.reason, float(r["score"])
                unanswered += r.cause == "verifier_unreachable"
            reasons[(source, reason)] = reasons.get((source, reason), 0) + 1
            rewards.append(score if self.unscored == "fallback" else None)
        missed = sum(reasons.values())
        with self._lock:
            self._stats["completions"] += n
            self._stats["scored"] += n - missed
            self._stats["unscored"] += missed
        if missed:
            what = "the fallback score" if self.unscored == "fallback" else "no reward (None)"
            detail = "; ".join(f"{c} x {src}: {why}" for (src, why), c in sorted(reasons.items()))
            logger.warning("timeaware: %d of %d completions get %s: %s", missed, n, what, detail)
        if callable(log_metric) and n:
            log_metric("timeaware/unscored", missed / n)
            log_metric("timeaware/verifier_unreachable", unanswered / n)
        return rewards


def _trainer_group_size(log_metric: Any) -> int | None:
    """The trainer's group size now: GRPOTrainer passes its own bound
    ``_log_metric`` as ``log_metric``, so the trainer is its ``__self__``;
    ``num_generations`` in training, ``num_generations_eval`` in evaluation,
    as the trainer itself chooses. None when the call did not come from a
    GRPOTrainer."""
    trainer = getattr(log_metric, "__self__", None)
    if trainer is None:
        return None
    training = getattr(getattr(trainer, "model", None), "training", True)
    n = getattr(trainer, "num_generations" if training else "num_generations_eval", None)
    return n if isinstance(n, int) and n >= 1 else None


def _assign_groups(items: list[Any], prompts: Sequence[Any] | None, size: int | None) -> None:
    """Give the items of group-wise data sources their group: blocks of
    ``size`` consecutive completions of one prompt, each block a key new to
    this call. An item that cannot be placed in a whole block becomes a
    `_Skip` naming why."""
    grouped = [i for i, it in enumerate(items) if isinstance(it, tuple) and it[0] in scoring.GROUP_SOURCES]
    if not grouped:
        return
    n = len(items)
    ps = list(prompts) if isinstance(prompts, (list, tuple)) else []
    call = uuid.uuid4().hex[:12]
    whole: dict[int, bool] = {}  # block -> whether its completions share one prompt
    for i in grouped:
        source = items[i][0]
        if size is None:
            items[i] = _Skip(source, "the group size is unknown: give GRPOReward(num_generations=...) outside a "
                                     "GRPOTrainer")
            continue
        if n % size:
            items[i] = _Skip(source, f"the call holds {n} completions, not whole groups of {size}: make "
                                     "per_device_train_batch_size × steps_per_generation a multiple of "
                                     "num_generations, so that no group is split across processes")
            continue
        block = i // size
        if block not in whole:  # without the prompts (outside a trainer) the blocks are taken as given
            whole[block] = len(ps) != n or len({json.dumps(ps[j], sort_keys=True, default=str)
                                                for j in range(block * size, block * size + size)}) == 1
        if not whole[block]:
            items[i] = _Skip(source, f"completions {block * size} to {block * size + size - 1} are not of one "
                                     f"prompt: the group of {size} is not whole in this call")
            continue
        extra = items[i][3] if isinstance(items[i][3], dict) else {}
        extra[scoring.GROUP_FIELD] = f"trl-{call}-{block}"
        extra[scoring.GROUP_SIZE_FIELD] = size
        items[i] = (items[i][0], items[i][1], items[i][2], extra)


class _Skip:
    """A completion that is not sent to the service: its data source (``?``
    when unknown), the reason it gets no score, and whether that reason is
    the verifier not answering."""

    __slots__ = ("reason", "source", "unreachable")

    def __init__(self, source: str, reason: str, *, unreachable: bool = False) -> None:
        self.source = source
        self.reason = reason
        self.unreachable = unreachable


def _environments(environments: Any, n: int) -> list[Any]:
    """The n rollouts' environments TRL passed (None where it passed none)."""
    envs = list(environments) if isinstance(environments, (list, tuple)) else []
    return (envs + [None] * n)[:n]


def _column(kwargs: Mapping[str, Any], name: str, i: int) -> Any:
    values = kwargs.get(name)
    if isinstance(values, (list, tuple)) and i < len(values):
        return values[i]
    return None


def _row_item(
    i: int, completion: Any, kwargs: Mapping[str, Any], s: scoring.Settings, timer: str | None = None
) -> tuple[str, str, Any, Any] | str:
    """(data_source, solution, ground_truth, extra_info) for completion i, or
    the reason it cannot be scored. ``timer`` is the rollout's timer token
    from its environment, used when the row has no timer column."""
    source = _column(kwargs, "data_source", i)
    extra: dict[str, Any] = {}
    if source is None:
        label = _column(kwargs, "label", i)
        if label not in ("tool", "direct"):
            return "the row has no data_source, and no label of a pairs row"
        source = DECISION_SOURCE
        ground_truth: Any = {"preferred": label}
        margin = _column(kwargs, "margin", i)
        if margin is not None:
            ground_truth["margin"] = margin
    else:
        rm = _column(kwargs, "reward_model", i)
        ground_truth = rm.get("ground_truth") if isinstance(rm, Mapping) else None
        ei = _column(kwargs, "extra_info", i)
        if isinstance(ei, Mapping):
            extra = dict(ei)
        elif isinstance(ei, str) and ei:
            extra = json.loads(ei)
    for field in (s.timer_field, scoring.TRANSCRIPT_FIELD):
        v = _column(kwargs, field, i)
        if isinstance(v, str) and v:
            extra[field] = v
    if timer and not extra.get(s.timer_field):
        extra[s.timer_field] = timer
    return str(source), _solution(completion, first_only=source == DECISION_SOURCE), ground_truth, extra


def _solution(completion: Any, *, first_only: bool) -> str:
    """The text a reward reads: a standard completion as it is; a
    conversational one as its messages' texts, one per line, an assistant
    message with tool calls as its JSON (the OpenAI form the decision reward
    detects). ``first_only`` keeps the first assistant message alone."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    parts = []
    for m in completion or []:
        if not isinstance(m, Mapping):
            parts.append(str(m))
            continue
        content = m.get("content")
        if not isinstance(content, str):
            content = "" if content is None else json.dumps(content)
        calls = m.get("tool_calls")
        if m.get("role") == "assistant" and calls:
            parts.append(json.dumps({"role": "assistant", "content": content, "tool_calls": calls}))
        else:
            parts.append(content)
        if first_only and m.get("role") == "assistant":
            break
    return "\n".join(parts)


_T = TypeVar("_T")


def _run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to completion from synchronous code (TRL calls an
    environment's ``reset`` from the training thread); from inside a running
    event loop, on a worker thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _finish_timers(environments: Any, n: int) -> list[str | None]:
    """The final timer token of each of the n rollouts whose environment is
    a `GetDurationEnv` (None for the others), their timers stopped."""
    envs = _environments(environments, n)

    async def finish(env: Any) -> str | None:
        return await env._finish() if isinstance(env, GetDurationEnv) else None

    return list(await asyncio.gather(*(finish(e) for e in envs)))


class GetDurationEnv:
    """The ``get_duration`` tool for ``trl.GRPOTrainer``, one timer per rollout.

    Pass the class as the trainer's ``environment_factory`` (with a
    ``functools.partial`` to give it settings)::

        GRPOTrainer(..., reward_funcs=GRPOReward(), environment_factory=GetDurationEnv)

    TRL 1.16 makes one environment per rollout and calls its ``reset`` with
    the rollout's dataset row before generation; its public method
    ``get_duration`` is the tool the model sees. ``reset`` starts a timer on
    the verifier (``POST /v1/timers``) with the row's speed factor, jitter,
    limit and TTL (`timeaware.tools.timer_options`: ``extra_info.tools_kwargs.get_duration.create_kwargs``
    of a ``synth budget`` row, else ``extra_info.timer`` and
    ``extra_info.time_limit_s``); each call reads it through
    ``POST /v1/tools/get_duration``, the same `timeaware.tools.GetDurationTool`
    VeRL uses. TRL hands the environments to the reward functions:
    `GRPOReward` stops each rollout's timer and scores the completion on its
    final reading, so a ``timely/*`` reward measures the rollout, never a
    number the model wrote. TRL has no end-of-rollout hook of its own; a
    timer not stopped by `GRPOReward` is stopped at the environment's next
    ``reset``, and the last batch's expire after their TTL.

    When the verifier cannot be reached the call raises `ToolUnavailable`
    ("The elapsed time is unavailable right now."): TRL counts it in its
    ``tools/failure_frequency`` metric and the model reads the text as the
    tool's error; the call also counts in ``failures`` (``calls`` and
    ``failures`` count the current rollout's calls). A call with arguments
    (the tool takes none) is refused by TRL the same way.

    Args:
        **config: the tool's settings, as `timeaware.tools.GetDurationTool`
            reads them: ``base_url`` (else env TIMEAWARE_URL), ``token``,
            ``timeout_s``, ``connect_timeout_s``, ``retries`` and defaults
            for the timer options, which a row's options override.
    """

    def __init__(self, **config: Any) -> None:
        self._tool = GetDurationTool(dict(config))
        self._instance: str | None = None
        self._final: str | None = None
        #: Calls of ``get_duration`` in the current rollout.
        self.calls = 0
        #: Calls of the current rollout answered without a reading (the verifier failed).
        self.failures = 0

    @property
    def verifier_unreachable(self) -> bool:
        """Whether the rollout's timer could not start because the verifier
        did not answer."""
        return self._instance is not None and self._final is None and self._tool.unreachable(self._instance)

    @property
    def verifier_url(self) -> str:
        """The verifier the tool calls."""
        return self._tool.verifier_url

    @property
    def timer_token(self) -> str | None:
        """The newest token of this rollout's timer (None before ``reset``,
        or when the timer could not be started)."""
        if self._final is not None:
            return self._final
        return self._tool.timer_token(self._instance) if self._instance is not None else None

    def reset(self, **row: Any) -> None:
        """Start the rollout: stop the previous rollout's timer if it still
        runs, and start a new timer with the row's options. Returns None (the
        prompt is left as it is). Does not raise when the verifier cannot be
        reached; the first ``get_duration`` call tries again."""
        if self._instance is not None:
            _run(self._tool.release(self._instance))
        iid = str(uuid.uuid4())
        _run(self._tool.create(iid, **timer_options(row.get("extra_info"), self._tool.name)))
        self._instance, self._final = iid, None
        self.calls = self.failures = 0

    async def get_duration(self) -> str:
        """Get the total time elapsed since the task started, in seconds.

        Returns:
            The elapsed time as text, for example "3.42 seconds."
        """
        if self._instance is None:
            raise RuntimeError("get_duration was called before the environment was reset")
        self.calls += 1
        resp, _, metrics = await self._tool.execute(self._instance, {})
        text = str(getattr(resp, "text", resp))
        if metrics.get("error"):
            self.failures += 1
            # Raised, so that TRL counts the call in tools/failure_frequency
            # and hands the model the text as the tool's error.
            raise ToolUnavailable(text)
        return text

    async def _finish(self) -> str | None:
        """End the rollout: stop its timer and keep the stopped timer's
        token, whose reading no longer moves. Returns that token (the running
        one when stopping failed, so the reward reads the timer live; None
        without a timer). A second call returns the same token."""
        if self._final is not None or self._instance is None:
            return self._final
        token = self._tool.timer_token(self._instance)
        if not token:
            return None
        self._final = await self._tool.stop(self._instance) or token
        return self._final


#: What the model reads when the service cannot take its message.
NEGOTIATION_UNAVAILABLE = "The other side cannot be reached right now; your message was not delivered."
#: What the model reads when the episode ends with its message.
NEGOTIATION_OVER = "The negotiation is over."


class NegotiationEnv:
    """A negotiation row played as a whole episode in ``trl.GRPOTrainer``.

    Pass the class as the trainer's ``environment_factory`` (with a
    ``functools.partial`` for settings), on rows of
    ``timeaware synth negotiation``::

        GRPOTrainer(..., reward_funcs=GRPOReward(), environment_factory=NegotiationEnv)

    TRL 1.16 makes one environment per rollout and calls its ``reset`` with
    the rollout's row before generation. ``reset`` starts the rollout's timer
    on the verifier (``POST /v1/timers``, with the row's timer options as
    `GetDurationEnv` reads them, else the environment's) and prepares the
    episode from the row's ``reward_model.ground_truth`` and
    ``extra_info.turn_prefix``. The row's prompt already holds the opening
    (the other side's first offer, or the word that the model speaks
    first), so ``reset`` adds nothing to it.

    The model's one tool is ``send``: its arguments are the message the rows
    ask for, ``text`` and ``action``. Each call is one step of the service's
    negotiation environment (``POST /v1/envs/negotiation/step``, through
    `timeaware.negotiation.NegotiationEpisode`, as VeRL's agent loop plays
    it), which charges the message its words and its think time, the time
    the rollout's timer ran since the previous message was charged, and
    answers with the opponent's reply as the model reads it (the condition's
    prefix first). When the episode ends (a deal, a walk-away, the budget
    spent) the tool answers "The negotiation is over." and the service's
    score is kept for `GRPOReward`, which gives it to the rollout.

    A ``send`` after the end is refused: the call raises, TRL hands the
    model the error as the tool's result and counts it in its
    ``tools/failure_frequency`` metric, and ``refused`` counts it here. When
    the service cannot take a step, the model reads that its message was not
    delivered, the episode stays where it was, and ``failures`` counts the
    call; a message the service refuses (HTTP 4xx) raises, as a step after
    the end does, and counts there too. ``steps``, ``refused`` and ``failures`` count the current
    rollout's calls.

    Args:
        opponent: the opponent, as the step route takes it: ``{"beta": b}``
            for the scripted concession opponent (default β = 1), or
            ``{"kind": "model"}`` for the model the service is configured
            with.
        base_url, token, timeout_s, retries: the service's client
            (`timeaware.client.Client`; default TIMEAWARE_URL and
            TIMEAWARE_SERVE_TOKEN).
        **timer: defaults for the timer's options (``speed_factor``,
            ``jitter``, ``ttl_s``, ``time_limit_s``), which a row's options
            override.
    """

    def __init__(self, *, opponent: Mapping[str, Any] | None = None, base_url: str | None = None,
                 token: str | None = None, timeout_s: float = 10.0, retries: int = 2, **timer: Any) -> None:
        unknown = sorted(set(timer) - set(TIMER_OPTIONS))
        if unknown:
            raise ValueError(f"NegotiationEnv: unknown setting(s) {', '.join(unknown)}")
        self.client = Client(base_url, token, timeout_s=timeout_s, retries=retries)
        self.opponent = dict(opponent or {})
        self.timer_defaults = {k: v for k, v in timer.items() if v is not None}
        self._row: dict[str, Any] | None = None
        self._rollout = ""
        #: The current rollout's episode (None before ``reset``, or while its timer could not be started).
        self.episode: NegotiationEpisode | None = None
        #: The score the service gave the finished episode (None until it ends).
        self.score: float | None = None
        #: The finished episode's details (deal, points, times), as the service returned them.
        self.details: dict[str, Any] = {}
        #: Messages of the current rollout the service took.
        self.steps = 0
        #: Calls of the current rollout refused because the episode was over.
        self.refused = 0
        #: Calls of the current rollout the service could not take.
        self.failures = 0

    @property
    def done(self) -> bool:
        """Whether the current rollout's episode has ended."""
        return self.episode is not None and self.episode.done

    def reset(self, **row: Any) -> None:
        """Start the rollout: its timer and its episode, from the row's
        ``reward_model.ground_truth`` and ``extra_info.turn_prefix``. Returns
        None: the row's prompt already holds the opening. A row without a
        ground truth raises ValueError; a verifier that cannot be reached
        does not raise, and the first ``send`` tries again."""
        rm = row.get("reward_model")
        ground_truth = rm.get("ground_truth") if isinstance(rm, Mapping) else None
        if not ground_truth:
            raise ValueError("NegotiationEnv: the row has no reward_model.ground_truth; "
                             "train on rows of timeaware synth negotiation")
        ei = row.get("extra_info")
        if isinstance(ei, str) and ei:
            ei = json.loads(ei)
        prefix = ei.get("turn_prefix") if isinstance(ei, Mapping) else None
        self._row = {"ground_truth": ground_truth, "turn_prefix": prefix or "",
                     "timer": {**self.timer_defaults, **timer_options(row.get("extra_info"), "send")}}
        self._rollout = str(uuid.uuid4())
        self.episode, self.score, self.details = None, None, {}
        self.steps = self.refused = self.failures = 0
        self.unreachable = False
        self._start()

    def _start(self) -> bool:
        """Start the episode's timer (once); False when the service cannot."""
        if self.episode is not None:
            return True
        if self._row is None:
            raise RuntimeError("send was called before the environment was reset")
        try:
            timer = self.client.create_timer(self._rollout, **self._row["timer"])["timer"]
        except TimeawareError as exc:
            logger.warning("timeaware: cannot start the negotiation's timer: %s", exc)
            self.unreachable = isinstance(exc, ServerUnavailable)
            return False
        self.episode = NegotiationEpisode(self.client, self._row["ground_truth"], timer,
                                           turn_prefix=self._row["turn_prefix"], opponent=self.opponent)
        return True

    def send(self, text: str, action: dict[str, Any] | None = None) -> str:
        """Say your next message to the other side, and act on the offers.

        Args:
            text: what you say; it costs time on the clock, word by word.
            action: what you do: {"action": "propose", "offer": {issue: option}}, {"action": "accept"}
                (the other side's latest offer), {"action": "reject"}, {"action": "batna"} (walk away)
                or {"action": "message"} (talk only; also when left out).

        Returns:
            The other side's answer as you read it, or "The negotiation is over."
        """
        if self.done:
            self.refused += 1
            raise RuntimeError("the negotiation is over: no message is delivered after it ended")
        if not self._start():
            self.failures += 1
            return NEGOTIATION_UNAVAILABLE
        assert self.episode is not None
        message: dict[str, Any] = {"text": str(text)}
        if action is not None:
            message["action"] = action
        try:
            out = self.episode.step(message)
        except ServerUnavailable as exc:
            logger.warning("timeaware: the negotiation step failed: %s", exc)
            self.failures += 1
            self.unreachable = True
            return NEGOTIATION_UNAVAILABLE
        except TimeawareError as exc:
            self.failures += 1
            raise RuntimeError(f"the service refused the message ({exc})") from exc
        self.steps += 1
        if out.get("done"):
            score = out.get("score")
            self.score = None if score is None else float(score)
            self.details = dict(out.get("details") or {})
            return NEGOTIATION_OVER
        return str(out.get("shown") or "")

    def _outcome(self) -> float | _Skip:
        """The rollout's reward: the finished episode's score, or why it has none."""
        if self.score is not None:
            return self.score
        if self.unreachable:
            return _Skip("negotiation", f"the verifier at {self.client.base_url} could not be reached during the "
                                        "episode", unreachable=True)
        return _Skip("negotiation", "the negotiation episode did not finish")
