"""A VeRL agent loop that plays negotiation rows (`timeaware synth
negotiation`) against the verifier's negotiation environment, so that GRPO
trains the policy on whole episodes.

VeRL 0.8 removed ``verl.interactions``; multi-turn environments are agent
loops chosen by a row's ``agent_name``. Register this one with an agent-loop
config (``actor_rollout_ref.rollout.agent.agent_loop_config_path``, see
``python/examples/negotiation_agent_loop.yaml``) and give the rows
``agent_name: timeaware_negotiation``.

Each rollout starts a timer (``POST /v1/timers``); each turn the policy
generates its message, ``{"text", "action"}`` as the row's prompt asks, and
the loop posts it to ``POST /v1/envs/negotiation/step`` of the service
(``TIMEAWARE_URL``, ``TIMEAWARE_SERVE_TOKEN``) with the timer, from which the
service charges the message its think time (`NegotiationEpisode`). The first
step sends the row's ground truth and turn prefix and the opponent; every
later one sends instead the state the previous step returned, which the
service signs, so no step can rewrite the episode. The opponent's answer,
with the condition's prefix, becomes the next user turn, until a deal, a
walk-away, the budget spent, ``max_turns`` or the response length. The
transcript is left in the rollout's extra fields, where
``timeaware.verl.compute_score`` finds it and scores the episode with the
``negotiation`` reward. Only the policy's tokens are trained on (response
mask 1); the opponent's turns are context (0).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from timeaware.client import Client
from timeaware.episodes import STEP_PATH, NegotiationEpisode, parse_message
from timeaware.scoring import TRANSCRIPT_FIELD

__all__ = ["AGENT_NAME", "STEP_PATH", "NegotiationAgentLoop", "NegotiationEpisode", "parse_message"]

#: The ``agent_name`` of the rows this loop plays.
AGENT_NAME = "timeaware_negotiation"

_T = TypeVar("_T")


@register(AGENT_NAME)
class NegotiationAgentLoop(AgentLoopBase):
    """Plays one negotiation row per rollout (see the module's doc).

    Args (from the agent-loop config, besides VeRL's own):
        opponent_beta: the scripted opponent's concession curve (1 linear,
            above 1 concedes early, below 1 late).
        max_turns: the most messages the policy sends in an episode.
        base_url, token: the service (default: TIMEAWARE_URL,
            TIMEAWARE_SERVE_TOKEN).
    """

    def __init__(self, *args: Any, opponent_beta: float = 1.0, max_turns: int = 12,
                 base_url: str | None = None, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.response_length = self.rollout_config.response_length
        self.opponent_beta = float(opponent_beta)
        self.max_turns = int(max_turns)
        self.client = Client(base_url, token)

    async def _call(self, fn: Callable[[], _T]) -> _T:
        # The client blocks; the loop must not.
        return await asyncio.get_running_loop().run_in_executor(None, fn)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages: list[dict[str, Any]] = [dict(m) for m in kwargs["raw_prompt"]]
        ground_truth = kwargs["reward_model"]["ground_truth"]
        extra = kwargs.get("extra_info") or {}
        prefix = extra.get("turn_prefix") or ""
        request_id = uuid4().hex
        metrics: dict[str, Any] = {}

        # The rollout's clock: the service charges each message the time
        # this timer has run since the previous one was charged.
        timer = (await self._call(lambda: self.client.create_timer(request_id)))["timer"]
        episode = NegotiationEpisode(self.client, ground_truth, timer, turn_prefix=prefix,
                                     opponent={"beta": self.opponent_beta})
        prompt_ids = await self.ct_build_initial_tokens(messages)
        response_mask: list[int] = []
        turns = 0
        while turns < self.max_turns and len(response_mask) < self.response_length:
            out = await self.server_manager.generate(
                request_id=request_id, prompt_ids=prompt_ids, sampling_params=sampling_params
            )
            turns += 1
            merge, response_mask, _ = await self.ct_merge_assistant_token(prompt_ids, out.token_ids, response_mask, None)
            prompt_ids = merge.token_ids
            text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            messages.append({"role": "assistant", "content": text})
            message = parse_message(text)
            step = await self._call(functools.partial(episode.step, message))
            if step["done"]:
                break
            previous = list(messages)
            messages.append({"role": "user", "content": step["shown"]})
            merge, response_mask, _ = await self.ct_merge_context_msg(previous, messages, prompt_ids, response_mask, None)
            prompt_ids = merge.token_ids

        n = len(response_mask)
        response_ids = prompt_ids[len(prompt_ids) - n:] if n else []
        metrics["negotiation_done"] = float(episode.done)
        return AgentLoopOutput(
            prompt_ids=prompt_ids[: len(prompt_ids) - n],
            response_ids=response_ids[: self.response_length],
            response_mask=response_mask[: self.response_length],
            num_turns=len(messages) - len(kwargs["raw_prompt"]) + 1,
            metrics=metrics,
            # after the row's opening, which the reward puts back
            extra_fields={TRANSCRIPT_FIELD: json.dumps(episode.transcript), "turn_scores": [], "tool_rewards": []},
        )
