"""Negotiation episodes against the verifier's negotiation environment
(``POST /v1/envs/negotiation/step``), for any trainer: `NegotiationEpisode`
carries the service's signed state from step to step, and `parse_message`
reads the policy's ``{"text", "action"}`` message. The module needs only the
standard library and `timeaware.client`; the VeRL agent loop
(`timeaware.negotiation`) and TRL's environment (`timeaware.trl`) play
episodes with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from timeaware.client import Client

__all__ = ["STEP_PATH", "NegotiationEpisode", "parse_message"]

STEP_PATH = "/v1/envs/negotiation/step"

def parse_message(text: str) -> dict[str, Any]:
    """The policy's message: the JSON object {"text", "action"} it was asked
    for, or, when it wrote something else, that text with no action (the
    rules count no action; the episode goes on)."""
    t = text.strip()
    if t.startswith("{"):
        try:
            obj = json.loads(t)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            out: dict[str, Any] = {"text": obj["text"]}
            if "action" in obj:
                out["action"] = obj["action"]
            return out
    return {"text": text}


class NegotiationEpisode:
    """One episode of a row against the service's negotiation environment.

    The first `step` sends the row (its ground truth and turn prefix) and
    the opponent; each later one sends the state the previous step returned
    in their place. Every step sends the rollout's timer, which the service
    reads for the message's think time, so a message carries none.

    Args:
        client: the service's client.
        ground_truth: the row's ``reward_model.ground_truth``.
        timer: the rollout's timer token (``Client.create_timer``).
        turn_prefix: the row's ``extra_info.turn_prefix``.
        opponent: ``{"beta": ...}`` for the scripted opponent, or
            ``{"kind": "model"}`` for the server's model opponent.

    Attributes:
        state: the episode's signed state, None before the first step.
        transcript: the messages after the row's opening, both roles, each
            with the think time it was charged.
        done: whether the episode is over.
    """

    def __init__(self, client: Client, ground_truth: Any, timer: str, *, turn_prefix: str = "",
                 opponent: Mapping[str, Any] | None = None) -> None:
        self.client = client
        self.timer = timer
        self._row: dict[str, Any] = {"ground_truth": ground_truth, "turn_prefix": turn_prefix,
                                     "opponent": dict(opponent or {})}
        self.state: str | None = None
        self.transcript: list[dict[str, Any]] = []
        self.done = False

    def step(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send the agent's message (``text``, ``action``); return the
        service's answer: ``reply``, ``shown`` (the reply as the agent reads
        it), ``done``, and at the end ``score`` and ``details``. A step
        after the end raises RuntimeError."""
        if self.done:
            raise RuntimeError("the negotiation episode is over")
        body: dict[str, Any] = {"message": dict(message), "timer": self.timer}
        if self.state is None:
            body.update(self._row)
        else:
            body["state"] = self.state
        # Any replica of the same secret answers a state, so a retry may
        # go to another.
        out = cast("dict[str, Any]", self.client.request("POST", STEP_PATH, body, idempotent=True))
        self.state = out["state"]
        self.transcript = out["transcript"]
        self.done = bool(out["done"])
        return out


