"""Margin-aware DPO for TRL: ``MarginDPOTrainer``.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
from trl import DPOTrainer

__all__ = ["MARGIN_COLUMN", "MarginDPOTrainer"]

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
