"""Our environments as OpenEnv environments, served by a thin process in
front of the verifier service.

``python -m timeaware.openenv --env KIND --verifier URL`` serves one kind of
environment with OpenEnv's own server (its WebSocket protocol, its
sessions, its capacity bound and its idle-session reaper; a connection idle
for the timeout is closed with its session, see `create_app`), so a user
connects with OpenEnv's own client (``GenericEnvClient`` or
`TimeawareEnvClient`; for TRL, `TimelySession` and `session_reward`):

* ``single``: the single-turn tasks (Time Puzzles, TRAVELER, ``timely/*``
  without the tool, every data source the verifier has a reward for). One
  step, `AnswerAction`, is the completion; it is scored with
  ``POST /v1/score`` and ends the episode.
* ``timely``: the ``timely/*`` tool environment. ``reset`` starts a timer on
  the verifier with the row's speed factor, jitter and limit; a
  `TimelyAction` either calls ``get_duration`` (read from that timer) or
  gives the final answer, which stops the timer and is scored on the
  stopped timer's reading.
* ``negotiation``: a negotiation row as a whole episode. ``reset`` starts
  the rollout's timer; each `NegotiationAction` is one step of the
  verifier's negotiation environment (``POST /v1/envs/negotiation/step``),
  and the step that ends the episode carries the service's score.

The environments hold no reward logic: every reading, reply and reward is
the verifier's, so a reward here equals the verifier's for the same
transcript. ``reset`` takes the dataset row's columns as keyword arguments
(``data_source``, ``reward_model``, ``extra_info``; ``prompt`` and others
are ignored), the way TRL's ``environment_factory`` hands them over.

Bad input gets a clear error (the client raises ``RuntimeError`` naming it)
or the documented fallback, and is counted in the counters
``GET /timeaware/stats`` returns: a row whose data source has no reward
(``unknown_data_source``, refused at ``reset``), a verifier that cannot be
reached (``verifier_unreachable``: an episode whose ``reset`` could not
reach it is still started, its observation's ``cause`` saying so;
``get_duration`` and a negotiation message read that the verifier is
unavailable, with that cause; a final answer ends the episode with no
reward, ``reward`` None, ``unscored`` saying why and ``cause``
``verifier_unreachable``, counted in ``unscored``; a ``timely`` episode
started without its timer is never scored), a tool call with broken arguments
(``bad_arguments``), a step after the episode ended (``after_end``), a
session closed for idleness (``idle_closed``; a message on a session
OpenEnv's reaper freed is refused, ``closed_session``), and sessions refused
at capacity (``refused_sessions``). No failure is ever a reward of 0.

Needs ``openenv`` (``pip install 'timeaware[openenv]'``); tested with
openenv 0.10.0.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import hmac
import ipaddress
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from openenv.core.client_types import StepResult  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_client import EnvClient  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_server.exceptions import SessionCapacityError  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_server.http_server import HTTPEnvServer  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_server.interfaces import Environment  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_server.mcp_types import Tool  # type: ignore[import-not-found,unused-ignore]
from openenv.core.env_server.types import (  # type: ignore[import-not-found,unused-ignore]
    Action,
    ConcurrencyConfig,
    Observation,
    State,
)
from openenv.core.harness import (  # type: ignore[import-not-found,unused-ignore]
    ResourceSession,
    ResourceSessionFactory,
    ToolResult,
    VerifyResult,
)
from pydantic import Field  # type: ignore[import-not-found,unused-ignore]
from websockets.protocol import State as WsState  # type: ignore[import-not-found,unused-ignore]

from timeaware import scoring
from timeaware.client import Client, ServerUnavailable, TimeawareError, ToolUnavailable
from timeaware.episodes import NegotiationEpisode
from timeaware.rows import mapping, timer_options

__all__ = [
    "CAUSES",
    "KINDS",
    "AnswerAction",
    "NegotiationAction",
    "SessionClosed",
    "SessionsLost",
    "TimeawareEnvClient",
    "TimeawareObservation",
    "TimeawareState",
    "TimelyAction",
    "TimelyHarnessSession",
    "TimelySession",
    "TimelySessionFactory",
    "create_app",
    "main",
    "session_reward",
]

logger = logging.getLogger("timeaware")

#: The kinds of environment a server can serve.
KINDS = ("single", "timely", "negotiation")
#: What the model reads when the verifier cannot read its timer.
DURATION_UNAVAILABLE = "The elapsed time is unavailable right now."
#: What the model reads when the verifier cannot take its negotiation message.
NEGOTIATION_UNAVAILABLE = "The other side cannot be reached right now; your message was not delivered."
#: The counters ``GET /timeaware/stats`` returns.
COUNTERS = ("sessions_opened", "sessions_closed", "idle_closed", "refused_sessions", "episodes", "scored",
            "unscored", "unknown_data_source", "verifier_unreachable", "bad_arguments", "after_end",
            "closed_session", "step_before_reset")


class AnswerAction(Action):  # type: ignore[misc,unused-ignore]
    """The ``single`` environment's one step: the model's completion."""

    answer: str


class TimelyAction(Action):  # type: ignore[misc,unused-ignore]
    """A step of the ``timely`` environment: a tool call (``tool`` is
    ``"get_duration"``, which takes no ``arguments``) or the final
    ``answer``, which ends the episode."""

    tool: str | None = None
    arguments: Any = None
    answer: str | None = None


class NegotiationAction(Action):  # type: ignore[misc,unused-ignore]
    """A message of the ``negotiation`` environment: what the model says
    (``text``) and what it does (``action``: ``{"action": "propose",
    "offer": {...}}``, ``accept``, ``reject``, ``batna`` or ``message``)."""

    text: str
    action: Any = None


#: The causes an observation names (``cause``): the verifier did not
#: answer; it refused the item or answered without a score; the episode
#: ended without a score.
CAUSES = ("verifier_unreachable", "rejected", "unfinished")


class TimeawareObservation(Observation):  # type: ignore[misc,unused-ignore]
    """What a step returns besides ``reward`` and ``done``: the text the
    model reads (the tool's reading, the other side's reply), the row's data
    source, the reward's details as the verifier returned them, the elapsed
    seconds of a timer reading, and, when the episode ended without a
    reward, why (``unscored``, in words). ``cause`` is one of `CAUSES`
    when the verifier did not answer (at ``reset``, a tool call, a message
    or the answer) or the episode ended without a reward; ``verifier_url``,
    given at ``reset``, is the verifier's, for a trainer to count its
    rollouts by."""

    text: str = ""
    data_source: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float | None = None
    unscored: str | None = None
    cause: str | None = None
    verifier_url: str | None = None


class TimeawareState(State):  # type: ignore[misc,unused-ignore]
    """An episode's state: its data source, whether it ended and its
    reward, the rollout's timer token (``timely``, ``negotiation``), and
    the episode's refused steps."""

    kind: str = ""
    data_source: str = ""
    done: bool = False
    reward: float | None = None
    timer: str | None = None
    refused: int = 0


class _Shared:
    """What every session of one server shares: the verifier's client, the
    registry of data sources, the counters."""

    def __init__(self, kind: str, verifier_url: str, token: str | None, idle_timeout_s: float | None,
                 opponent: Mapping[str, Any] | None, timeout_s: float, retries: int) -> None:
        self.kind = kind
        self.url = verifier_url
        self.client = Client(verifier_url, token, timeout_s=timeout_s, retries=retries)
        self.idle_timeout_s = idle_timeout_s
        self.opponent = dict(opponent or {})
        self._lock = threading.Lock()
        self._sources: frozenset[str] | None = None
        self.counters = dict.fromkeys(COUNTERS, 0)
        log_dir = os.environ.get("TIMEAWARE_ROLLOUT_LOG")
        #: The rollout log (TIMEAWARE_ROLLOUT_LOG) of the items this server scores, or None.
        self.log = scoring.RolloutLog(log_dir) if log_dir else None

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] += n

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counters)

    def sources(self) -> frozenset[str]:
        """The data sources the verifier has a reward for (fetched once)."""
        if self._sources is None:
            self._sources = frozenset(str(r.get("data_source")) for r in self.client.rewards())
        return self._sources


class _Unreachable(Exception):
    """The verifier did not answer at reset: the episode is played without it."""


class _Episode(Environment):  # type: ignore[misc,unused-ignore]
    """The session handling the three kinds share: the row, the step
    counter, the after-the-end and closed-session refusals, the timer."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, shared: _Shared) -> None:
        super().__init__()
        self.shared = shared
        self.shared.count("sessions_opened")
        self._state = TimeawareState(kind=shared.kind)
        self._row: dict[str, Any] | None = None
        #: Why the verifier could not be used at reset (None when it was).
        self._unreachable: str | None = None
        self._closed = False
        self._lock = threading.Lock()

    # -- what the kinds share

    def _begin(self) -> None:
        """Called at every message: refuse one to a closed session."""
        if self._closed:
            self.shared.count("closed_session")
            idle = self.shared.idle_timeout_s
            raise RuntimeError("this session was closed by the server"
                               + (f" after {idle:g} s without a message" if idle else "")
                               + "; connect again for a new session")

    def _check_row(self, row: Mapping[str, Any]) -> tuple[str, Any, dict[str, Any]]:
        """The row's data source, ground truth and extra info; a row this
        kind cannot play, or whose data source has no reward, raises."""
        source = row.get("data_source")
        ground_truth = mapping(row.get("reward_model")).get("ground_truth")
        extra = dict(mapping(row.get("extra_info")))
        want = {"timely": "a timely/* row", "negotiation": "a negotiation row"}.get(self.shared.kind)
        fits = {"timely": isinstance(source, str) and source.startswith("timely/"),
                "negotiation": source == "negotiation"}.get(self.shared.kind, True)
        if not isinstance(source, str) or not source or not fits:
            self.shared.count("unknown_data_source")
            raise ValueError(f"the {self.shared.kind} environment needs {want or 'a row with a data_source'}; "
                             f"got data_source {source!r}")
        if ground_truth is None or ground_truth == "":
            self.shared.count("unknown_data_source")
            raise ValueError("the row has no reward_model.ground_truth")
        self._row = {"data_source": source, "ground_truth": ground_truth, "extra_info": extra}
        try:
            known = self.shared.sources()
        except ServerUnavailable as exc:
            raise _Unreachable(f"the verifier at {self.shared.url} cannot be reached: {exc}") from exc
        except TimeawareError as exc:
            self.shared.count("verifier_unreachable")
            raise RuntimeError(f"the verifier at {self.shared.url} refused to list its rewards: {exc}") from exc
        if source not in known:
            self.shared.count("unknown_data_source")
            raise ValueError(f"the verifier has no reward for data_source {source!r} "
                             f"(it has: {', '.join(sorted(known))})")
        return source, ground_truth, extra

    def _start_timer(self, extra: Mapping[str, Any], tool_name: str) -> str:
        opts = {k: float(v) for k, v in timer_options(extra, tool_name).items()}
        try:
            doc = self.shared.client.create_timer(str(self._state.episode_id), **opts)
        except ServerUnavailable as exc:
            raise _Unreachable(f"the verifier at {self.shared.url} cannot be reached to start the rollout's "
                               f"timer: {exc}") from exc
        except TimeawareError as exc:
            raise RuntimeError(f"the verifier at {self.shared.url} refused the rollout's timer: {exc}") from exc
        return str(doc["timer"])

    def _stop_timer(self) -> str | None:
        """Stop the episode's timer; the stopped timer's token (the running
        one when the verifier could not stop it)."""
        token = self._state.timer
        if not token:
            return None
        try:
            doc = self.shared.client.stop_timer(token)
        except TimeawareError as exc:
            logger.warning("timeaware: cannot stop the timer of episode %s: %s", self._state.episode_id, exc)
            return token
        new = doc.get("timer") if isinstance(doc, dict) else None
        self._state.timer = new if isinstance(new, str) and new else token
        return self._state.timer

    def _start(self, episode_id: str | None) -> None:
        """Start an episode: stop the previous one's timer, fresh state."""
        if self._row is not None and not self._state.done:
            self._stop_timer()
        self._state = TimeawareState(kind=self.shared.kind, episode_id=episode_id or str(uuid.uuid4()))
        self._row = None
        self._unreachable = None

    def _stepping(self) -> dict[str, Any]:
        """The row of the episode a step belongs to; a step before reset or
        after the end raises."""
        if self._row is None:
            self.shared.count("step_before_reset")
            idle = self.shared.idle_timeout_s
            raise RuntimeError("step before reset: this session has no episode (a client that reconnects on its "
                               "own after the server closed its session" + (f", idle for {idle:g} s," if idle else "")
                               + " has lost that episode): reset the environment with a row first")
        if self._state.done:
            self._state.refused += 1
            self.shared.count("after_end")
            raise RuntimeError("the episode is over: reset the environment for a new one")
        self._state.step_count += 1
        return self._row

    def _finish(self, source: str, result: Mapping[str, Any] | None, reason: str = "",
                cause: str = "rejected") -> TimeawareObservation:
        """End the episode with the verifier's result, or with no reward,
        why, and the cause (one of `CAUSES`)."""
        self._state.done = True
        self.shared.count("episodes")
        if result is None or not isinstance(result.get("score"), (int, float)):
            self.shared.count("unscored")
            why = reason or "the verifier returned no score"
            logger.warning("timeaware: episode %s (%s) ends without a reward: %s", self._state.episode_id, source, why)
            return TimeawareObservation(done=True, reward=None, data_source=source, unscored=why, cause=cause,
                                        verifier_url=self.shared.url)
        self.shared.count("scored")
        score = float(result["score"])
        self._state.reward = score
        details = {k: v for k, v in result.items() if k != "score"}
        return TimeawareObservation(done=True, reward=score, data_source=source, details=details)

    def _score(self, source: str, completion: str, ground_truth: Any, extra: Mapping[str, Any]) -> \
            TimeawareObservation:
        item = {"data_source": source, "solution_str": completion, "ground_truth": ground_truth,
                "extra_info": dict(extra)}
        try:
            result = self.shared.client.score(item)
        except ServerUnavailable as exc:
            self.shared.count("verifier_unreachable")
            return self._logged(item, None, self._finish(
                source, None, f"the verifier at {self.shared.url} cannot be reached: {exc}", "verifier_unreachable"))
        except TimeawareError as exc:
            return self._logged(item, None, self._finish(source, None, f"the verifier refused the item: {exc}"))
        return self._logged(item, result, self._finish(source, result))

    def _logged(self, item: dict[str, Any], result: Mapping[str, Any] | None,
                obs: TimeawareObservation) -> TimeawareObservation:
        """Write the scored item to the rollout log, if there is one."""
        if self.shared.log is not None:
            scored = None if obs.reward is None else {"score": obs.reward, **dict(result or {})}
            try:
                self.shared.log.write([(item, scored, obs.unscored or "")])
            except Exception as exc:  # noqa: BLE001 - the log is a record, never a reason to fail a step
                logger.warning("timeaware: cannot write the rollout log: %r", exc)
        return obs

    # -- OpenEnv's interface

    def reset(self, seed: int | None = None, episode_id: str | None = None, **row: Any) -> TimeawareObservation:
        """Start an episode on the row given as keyword arguments."""
        with self._lock:
            self._begin()
            self._start(episode_id)
            try:
                source, ground_truth, extra = self._check_row(row)
                self._state.data_source = source
                self._reset(source, ground_truth, extra)
            except _Unreachable as exc:
                # The episode is played without the verifier: counted here,
                # its tool calls and messages read that the verifier is
                # unavailable, and it ends without a reward, never scored
                # without its timer.
                assert self._row is not None
                self.shared.count("verifier_unreachable")
                self._unreachable = str(exc)
                self._state.data_source = self._row["data_source"]
                logger.warning("timeaware: episode %s starts without the verifier: %s", self._state.episode_id, exc)
                return TimeawareObservation(data_source=self._row["data_source"], cause="verifier_unreachable",
                                            unscored=self._unreachable, verifier_url=self.shared.url)
            except BaseException:
                self._row = None
                raise
            return TimeawareObservation(data_source=source, verifier_url=self.shared.url)

    def _reset(self, source: str, ground_truth: Any, extra: dict[str, Any]) -> None:
        """What a kind does at reset besides the shared checks."""

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> TimeawareObservation:
        """One step of the episode."""
        with self._lock:
            self._begin()
            row = self._stepping()
            return self._step(row, action)

    def _step(self, row: dict[str, Any], action: Any) -> TimeawareObservation:
        raise NotImplementedError

    @property
    def state(self) -> TimeawareState:
        """The current episode's state."""
        self._begin()
        return self._state

    def close(self) -> None:
        """Free the session: stop a running timer. Called by the server when
        the client disconnects or when the session was idle too long."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._row is not None and not self._state.done:
                self._stop_timer()
            self.shared.count("sessions_closed")


class SingleTurnEnvironment(_Episode):
    """The single-turn tasks: one `AnswerAction`, scored by the verifier."""

    def _step(self, row: dict[str, Any], action: Any) -> TimeawareObservation:
        return self._score(row["data_source"], str(action.answer), row["ground_truth"], row["extra_info"])


class TimelyEnvironment(_Episode):
    """The ``timely/*`` tool environment: ``get_duration`` on the episode's
    timer, then the answer, scored on the stopped timer's reading."""

    TOOL = "get_duration"

    def _reset(self, source: str, ground_truth: Any, extra: dict[str, Any]) -> None:
        self._state.timer = self._start_timer(extra, self.TOOL)

    def _step(self, row: dict[str, Any], action: Any) -> TimeawareObservation:
        source = row["data_source"]
        if (action.tool is None) == (action.answer is None):
            self._bad("a step is either a tool call (tool) or the final answer (answer), not both or neither")
        if action.tool is not None:
            if action.tool != self.TOOL:
                self._bad(f"unknown tool {action.tool!r}; the tool is {self.TOOL!r}")
            if action.arguments not in (None, {}):
                what = sorted(action.arguments) if isinstance(action.arguments, Mapping) else action.arguments
                self._bad(f"{self.TOOL} takes no arguments; got {what!r}")
            if self._unreachable is not None:
                self.shared.count("verifier_unreachable")
                return TimeawareObservation(text=DURATION_UNAVAILABLE, data_source=source,
                                            cause="verifier_unreachable", verifier_url=self.shared.url)
            try:
                doc = self.shared.client.get_duration(timer=self._state.timer)
            except TimeawareError as exc:
                self.shared.count("verifier_unreachable")
                logger.warning("timeaware: get_duration failed for episode %s: %s", self._state.episode_id, exc)
                return TimeawareObservation(text=DURATION_UNAVAILABLE, data_source=source,
                                            cause="verifier_unreachable", verifier_url=self.shared.url)
            elapsed = doc.get("elapsed_s")
            return TimeawareObservation(text=str(doc.get("text") or ""), data_source=source,
                                        elapsed_s=float(elapsed) if isinstance(elapsed, (int, float)) else None)
        if self._unreachable is not None:
            return self._finish(source, None, self._unreachable, "verifier_unreachable")
        token = self._stop_timer()
        extra = {**row["extra_info"], "timer": token}
        return self._score(source, str(action.answer), row["ground_truth"], extra)

    def _bad(self, message: str) -> None:
        self._state.step_count -= 1
        self._state.refused += 1
        self.shared.count("bad_arguments")
        raise ValueError(message)


class NegotiationEnvironment(_Episode):
    """A negotiation row as a whole episode against the verifier's opponent."""

    def __init__(self, shared: _Shared) -> None:
        super().__init__(shared)
        self.episode: NegotiationEpisode | None = None

    def _reset(self, source: str, ground_truth: Any, extra: dict[str, Any]) -> None:
        self.episode = None
        self._state.timer = self._start_timer(extra, "send")
        self.episode = NegotiationEpisode(self.shared.client, ground_truth, self._state.timer,
                                          turn_prefix=str(extra.get("turn_prefix") or ""),
                                          opponent=self.shared.opponent)

    def _step(self, row: dict[str, Any], action: Any) -> TimeawareObservation:
        if action.action is not None and not (isinstance(action.action, Mapping)
                                              and isinstance(action.action.get("action"), str)):
            self._state.step_count -= 1
            self._state.refused += 1
            self.shared.count("bad_arguments")
            raise ValueError('action must be an object such as {"action": "propose", "offer": {...}} or '
                             f'{{"action": "accept"}}; got {action.action!r}')
        message: dict[str, Any] = {"text": action.text}
        if action.action is not None:
            message["action"] = action.action
        unavailable = TimeawareObservation(text=NEGOTIATION_UNAVAILABLE, data_source="negotiation",
                                           cause="verifier_unreachable", verifier_url=self.shared.url)
        if self.episode is None or self._unreachable is not None:  # started without the verifier
            self._state.step_count -= 1
            self.shared.count("verifier_unreachable")
            return unavailable
        try:
            out = self.episode.step(message)
        except ServerUnavailable as exc:
            self._state.step_count -= 1
            self.shared.count("verifier_unreachable")
            logger.warning("timeaware: the negotiation step failed: %s", exc)
            return unavailable
        except TimeawareError as exc:
            self._state.step_count -= 1
            self._state.refused += 1
            self.shared.count("bad_arguments")
            raise ValueError(f"the verifier refused the message: {exc}") from exc
        shown = str(out.get("shown") or "")
        if not out.get("done"):
            return TimeawareObservation(text=shown, data_source="negotiation")
        self._stop_timer()
        result = {"score": out.get("score"), **dict(out.get("details") or {})}
        obs = self._finish("negotiation", result if out.get("score") is not None else None,
                           "the negotiation environment ended the episode without a score", "unfinished")
        obs.text = shown
        return obs


_ENVIRONMENTS: dict[str, tuple[type[_Episode], type[Any]]] = {
    "single": (SingleTurnEnvironment, AnswerAction),
    "timely": (TimelyEnvironment, TimelyAction),
    "negotiation": (NegotiationEnvironment, NegotiationAction),
}


class _Server(HTTPEnvServer):  # type: ignore[misc,unused-ignore]
    """OpenEnv's server, counting the sessions it refuses at capacity."""

    def __init__(self, shared: _Shared, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared = shared

    async def _create_session(self) -> Any:
        try:
            return await super()._create_session()
        except SessionCapacityError:
            self.shared.count("refused_sessions")
            raise


class _IdleClose:
    """ASGI middleware: a WebSocket connection (one session) that sends no
    message for ``timeout_s`` is closed with code 1001 and a reason that
    says so; the session's handler then sees the client gone and frees the
    session (its environment closed, its timer stopped). OpenEnv's own
    reaper frees an idle session but leaves its connection open; this
    closes both, on time."""

    def __init__(self, app: Any, timeout_s: float | None, shared: _Shared) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.shared = shared

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "websocket" or self.timeout_s is None:
            await self.app(scope, receive, send)
            return
        timeout = self.timeout_s
        closed = False

        async def timed_receive() -> Any:
            nonlocal closed
            if closed:
                return {"type": "websocket.disconnect", "code": 1001}
            try:
                return await asyncio.wait_for(receive(), timeout)
            except asyncio.TimeoutError:
                closed = True
                self.shared.count("idle_closed")
                await send({"type": "websocket.close", "code": 1001,
                            "reason": f"session closed after {timeout:g} s without a message; connect again"})
                return {"type": "websocket.disconnect", "code": 1001}

        async def guarded_send(message: Any) -> None:
            if not closed:
                await send(message)

        await self.app(scope, timed_receive, guarded_send)


class _RequireToken:
    """ASGI middleware: every request but ``GET /health`` must carry
    ``Authorization: Bearer <token>``, compared in constant time; an HTTP
    request without it gets 401, a WebSocket is closed with code 1008
    before it is accepted."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.want = ("bearer " + token).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket") or scope.get("path") == "/health" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "missing or wrong bearer token"})
            return
        body = b'{"detail":"missing or wrong bearer token"}'
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="timeaware"'),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Any) -> bool:
        for name, value in scope.get("headers") or []:
            if name.lower() == b"authorization":
                scheme, _, rest = value.partition(b" ")
                return hmac.compare_digest(scheme.lower() + b" " + rest.strip(), self.want)
        return False


def _loopback(host: str) -> bool:
    """Whether host names only this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def create_app(kind: str, verifier_url: str | None = None, *, token: str | None = None, max_sessions: int = 64,
               idle_timeout_s: float | None = 300.0, opponent: Mapping[str, Any] | None = None,
               timeout_s: float = 10.0, retries: int = 2, access_token: str | None = None) -> Any:
    """A FastAPI application serving one kind of environment (`KINDS`)
    with OpenEnv's routes (``/ws``, ``/reset``, ``/step``, ``/state``,
    ``/schema``, ``/health``), plus ``GET /timeaware/stats``: the
    counters, the open sessions and the bound.

    Args:
        kind: ``single``, ``timely`` or ``negotiation``.
        verifier_url: the verifier (default env TIMEAWARE_URL).
        token: the verifier's bearer token (default env TIMEAWARE_SERVE_TOKEN).
        max_sessions: sessions open at once; one more is refused with
            OpenEnv's ``CAPACITY_REACHED`` error.
        idle_timeout_s: a session without a message for this long is closed
            and its timer stopped: its WebSocket connection is closed with
            code 1001 and a reason saying so, and OpenEnv's reaper frees a
            session that has no connection of its own (its ``/mcp`` HTTP
            sessions); None keeps sessions open.
        opponent: the negotiation opponent, as the verifier's step route
            takes it (``{"beta": b}``, or ``{"kind": "model"}``).
        timeout_s, retries: the verifier client's read timeout and retries.
        access_token: the bearer token this application's own clients must
            send (all routes but ``/health``); None lets anyone who reaches
            it in, and spend the verifier's token.
    """
    if kind not in _ENVIRONMENTS:
        raise ValueError(f"unknown environment {kind!r}; one of {', '.join(KINDS)}")
    from fastapi import FastAPI  # type: ignore[import-not-found,unused-ignore]

    url = verifier_url or os.environ.get("TIMEAWARE_URL") or ""
    if not url:
        raise ValueError("no verifier URL: pass --verifier or set TIMEAWARE_URL")
    shared = _Shared(kind, url, token, idle_timeout_s, opponent, timeout_s, retries)
    env_cls, action_cls = _ENVIRONMENTS[kind]
    server = _Server(shared, functools.partial(env_cls, shared), action_cls, TimeawareObservation,
                     concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                          session_timeout=idle_timeout_s))
    app = FastAPI(title=f"timeaware OpenEnv: {kind}")
    server.register_routes(app)

    def stats() -> dict[str, Any]:
        return {"env": kind, "verifier": url, "active_sessions": server.active_sessions,
                "max_sessions": server.max_concurrent_envs, "idle_timeout_s": idle_timeout_s,
                "counters": shared.stats()}

    app.add_api_route("/timeaware/stats", stats, methods=["GET"])
    app.add_middleware(_IdleClose, timeout_s=idle_timeout_s, shared=shared)
    if access_token:
        app.add_middleware(_RequireToken, token=access_token)
    app.state.timeaware = shared
    return app


class SessionClosed(RuntimeError):
    """The server closed the client's session (idle past its timeout, or
    restarted), and with it the episode in progress: reset for a new one.
    ``code`` and ``reason`` are the WebSocket close's, e.g. 1001 and
    ``session closed after 300 s without a message; connect again``."""

    def __init__(self, code: int | None, reason: str) -> None:
        what = f"code {code}: {reason}" if reason else f"code {code}"
        super().__init__(f"the server closed this session ({what}); its episode is lost: reset for a new one")
        self.code = code
        self.reason = reason


async def _queued_error(ws: Any) -> dict[str, Any] | None:
    """The error a closed connection's server sent before closing it and
    that no call has read (a refusal at capacity), or None."""
    try:
        raw = await asyncio.wait_for(ws.recv(), timeout=0.05)
        frame = json.loads(raw)
    except Exception:  # noqa: BLE001 - closed with nothing queued, or not JSON
        return None
    if isinstance(frame, dict) and frame.get("type") == "error":
        return dict(frame.get("data") or {})
    return None


class SessionsLost(RuntimeError):
    """More than ``max_consecutive_fallbacks`` rollouts in a row lost their
    episode because the server closed their session (idle past its
    timeout): every rollout would get no reward."""


_lost_lock = threading.Lock()
_lost_run = 0


def _count_lost_sessions(lost: Sequence[bool]) -> None:
    """Count, in order, rollouts whose session the server closed (True) or
    not; raise `SessionsLost` once more than ``max_consecutive_fallbacks``
    were lost in a row. A run that loses every episode to the idle close
    would otherwise train on nothing, one warning at a time."""
    global _lost_run
    limit = scoring.settings().max_consecutive_fallbacks
    with _lost_lock:
        for gone in lost:
            _lost_run = _lost_run + 1 if gone else 0
        run = _lost_run
    if run > limit and any(lost):
        raise SessionsLost(f"timeaware: {run} rollouts in a row lost their episode because the OpenEnv server "
                           f"closed their session (more than max_consecutive_fallbacks={limit}): a rollout takes "
                           "longer than the server's --idle-timeout-s; raise it above the longest rollout")


class TimeawareEnvClient(EnvClient):  # type: ignore[misc,unused-ignore]
    """OpenEnv's WebSocket client for our environments: actions are
    `AnswerAction`, `TimelyAction`, `NegotiationAction` or plain dicts;
    observations are `TimeawareObservation`, the state `TimeawareState`.
    Async; ``.sync()`` gives OpenEnv's synchronous wrapper. ``token`` (default
    env TIMEAWARE_OPENENV_TOKEN) is sent as the bearer token a server
    started with one requires.

    OpenEnv's client opens a new session, silently, when the server has
    closed the last one; a step there fails with "step before reset"
    and the episode would be lost without a word. This client counts each
    such reconnection (``reconnects``), and a step or state call whose
    episode went with the closed session raises `SessionClosed` with the
    server's close reason and counts it (``lost_episodes``); the next
    ``reset`` starts a new episode on a new session."""

    def __init__(self, base_url: str, *args: Any, token: str | None = None, **kwargs: Any) -> None:
        bearer = token if token is not None else os.environ.get("TIMEAWARE_OPENENV_TOKEN") or None
        headers = dict(kwargs.pop("headers", None) or {})
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        super().__init__(base_url, *args, headers=headers or None, **kwargs)
        #: Sessions the server closed that this client replaced with a new one.
        self.reconnects = 0
        #: Episodes lost with a session the server closed.
        self.lost_episodes = 0
        self._episode = False
        self._lost: SessionClosed | None = None

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("type") == "reset":
            self._lost = None
        elif self._lost is not None:
            raise SessionClosed(self._lost.code, self._lost.reason)  # until a reset starts a new episode
        ws = getattr(self, "_ws", None)
        if ws is not None and ws.state in (WsState.CLOSING, WsState.CLOSED):
            refused = await _queued_error(ws)
            if refused is not None:
                # The server refused the session it closed (at capacity): say
                # so, rather than be refused again on a new one (and counted
                # twice).
                self._ws, self._ws_loop = None, None
                raise RuntimeError(f"Server error: {refused.get('message', 'Unknown error')} "
                                   f"(code: {refused.get('code', 'UNKNOWN')})")
            self.reconnects += 1
            lost, self._episode = self._episode, False
            if lost and message.get("type") != "reset":
                self.lost_episodes += 1
                err = SessionClosed(ws.close_code, str(ws.close_reason or ""))
                self._lost = err
                logger.warning("timeaware: %s", err)
                # The next call opens the new session, counted once, here.
                self._ws, self._ws_loop = None, None
                raise err
        response = await super()._send_and_receive(message)
        if message.get("type") == "reset":
            self._episode = True
        return dict(response)

    def _step_payload(self, action: Any) -> dict[str, Any]:
        if isinstance(action, Mapping):
            return dict(action)
        return dict(action.model_dump(exclude_none=True))

    def _parse_result(self, payload: Mapping[str, Any]) -> Any:
        obs = TimeawareObservation(**dict(payload.get("observation") or {}),
                                   reward=payload.get("reward"), done=bool(payload.get("done")))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: Mapping[str, Any]) -> Any:
        return TimeawareState(**dict(payload))


class TimelySession:
    """The ``timely`` environment as TRL's GRPOTrainer uses an OpenEnv
    environment: pass it (with ``functools.partial`` for the URL) as
    ``environment_factory``, and `session_reward` as a reward function::

        GRPOTrainer(..., reward_funcs=session_reward,
                    environment_factory=functools.partial(TimelySession, base_url=URL))

    Each instance holds one session of the server at ``base_url`` (default
    env TIMEAWARE_OPENENV_URL) through OpenEnv's client. ``reset`` starts an
    episode on the rollout's row (its timer starts on the verifier); its one
    public method, ``get_duration``, is the tool the model sees. The reward
    function sends each rollout's completion as the episode's answer, and
    the reward is what the environment returned: the verifier's, on the
    stopped timer's reading. A refused tool call raises, which TRL hands
    the model as the tool's result and counts as a failed call; so does a
    call the verifier could not answer (`timeaware.client.ToolUnavailable`).
    """

    def __init__(self, base_url: str | None = None) -> None:
        url = base_url or os.environ.get("TIMEAWARE_OPENENV_URL") or ""
        if not url:
            raise ValueError("TimelySession: no server URL: pass base_url or set TIMEAWARE_OPENENV_URL")
        self._client = TimeawareEnvClient(base_url=url).sync()
        #: The episode's reward once answered (None before, or when it got none).
        self.reward: float | None = None
        #: Why the answered episode got no reward (None when it got one).
        self.unscored: str | None = None
        #: What kept the episode from a reward, one of `CAUSES` or
        #: ``session_closed`` (the server closed the session, idle too
        #: long), None when nothing did.
        self.cause: str | None = None
        #: The verifier the server scores with, as its reset said.
        self.verifier_url: str | None = None
        #: Calls of ``get_duration`` in the current episode.
        self.calls = 0

    def reset(self, **row: Any) -> None:
        """Start the rollout's episode on its row; the prompt is left as it is."""
        self.reward, self.unscored, self.cause, self.calls = None, None, None, 0
        obs = self._client.reset(**{k: row[k] for k in ("data_source", "reward_model", "extra_info")
                                    if k in row}).observation
        self.verifier_url = obs.verifier_url or self.verifier_url
        if obs.cause:
            self.cause, self.unscored = obs.cause, obs.unscored

    def get_duration(self) -> str:
        """Get the total time elapsed since the task started, in seconds.

        Returns:
            The elapsed time as text, for example "3.42 seconds."
        """
        self.calls += 1
        obs = self._client.step(TimelyAction(tool="get_duration")).observation
        if obs.cause == "verifier_unreachable":
            raise ToolUnavailable(str(obs.text))
        return str(obs.text)

    def _answer(self, completion: Any) -> float | None:
        """End the episode with the completion as its answer; its reward."""
        try:
            res = self._client.step(TimelyAction(answer=_completion_text(completion)))
        except SessionClosed as exc:
            # The server closed the session (idle too long): the episode is
            # gone, not the verifier; the next reset starts a new one.
            self.reward, self.unscored, self.cause = None, str(exc), "session_closed"
            return None
        self.reward = None if res.reward is None else float(res.reward)
        self.unscored = res.observation.unscored
        if self.reward is None:
            self.cause = res.observation.cause or self.cause or "rejected"
        return self.reward


#: The get_duration tool as OpenEnv's harness sessions list it (MCP's tool spec).
GET_DURATION_DESCRIPTION = "Get the total time elapsed since the task started, in seconds."


def _row_key(prompt: Any) -> str:
    """A prompt's conversation as a key: its messages' roles and texts."""
    if isinstance(prompt, str):
        return json.dumps([["user", prompt]])
    return json.dumps([[str(m.get("role")), str(m.get("content"))] for m in prompt or [] if isinstance(m, Mapping)])


class TimelyHarnessSession(ResourceSession):  # type: ignore[misc,unused-ignore]
    """One rollout of the ``timely`` environment as an OpenEnv harness
    session (``openenv.core.harness``), which OpenEnv's white-box harness
    adapters drive (``MCPHarnessAdapter``) and TRL's async GRPO OpenEnv
    harness with them. Made by `TimelySessionFactory`.

    Its episode starts at once on the row (its timer on the verifier); the
    initial messages are the row's prompt; its one tool is
    ``get_duration``. `verify` sends the transcript's assistant text as the
    episode's answer and forwards the environment's reward: None when it
    has none (OpenEnv's harness leaves the rollout out), never 0. A call
    the verifier could not answer is a tool error (TRL's failure counts),
    and rollouts it did not answer count in the adapters' run of fallbacks,
    which past ``max_consecutive_fallbacks`` raises
    `timeaware.scoring.RunStopped` (TRL's harness logs and drops any
    ``Exception`` of a session, so the run would not stop otherwise)."""

    def __init__(self, base_url: str, row: Mapping[str, Any], episode_id: str | None = None) -> None:
        self._client = TimeawareEnvClient(base_url=base_url).sync()
        self._prompt = row.get("prompt") or []
        try:
            obs = self._client.reset(episode_id=episode_id, **{k: row[k] for k in ("data_source", "reward_model",
                                                                                 "extra_info") if k in row}).observation
        except BaseException:
            self._client.close()
            raise
        #: The verifier the server scores with, as the reset said.
        self.verifier_url: str | None = obs.verifier_url
        #: What kept the episode from a reward (one of `CAUSES`), or None.
        self.cause: str | None = obs.cause
        self.timer: str | None = None
        self._closed = False

    def initial_messages(self) -> list[dict[str, Any]]:
        if isinstance(self._prompt, str):
            return [{"role": "user", "content": self._prompt}]
        return [dict(m) for m in self._prompt]

    def list_tools(self) -> list[Any]:
        return [Tool(name="get_duration", description=GET_DURATION_DESCRIPTION,
                     input_schema={"type": "object", "properties": {}, "required": []})]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if name != "get_duration":
            return ToolResult(data=f"Error: there is no tool {name!r}; the one tool is get_duration.",
                              error="unknown_tool")
        if arguments:
            return ToolResult(data=f"Error: get_duration takes no arguments; got {sorted(arguments)!r}.",
                              error="bad_arguments")
        obs = self._client.step(TimelyAction(tool="get_duration")).observation
        if obs.cause == "verifier_unreachable":
            return ToolResult(data=str(obs.text), error="verifier_unreachable")
        return ToolResult(data=str(obs.text), metadata={"elapsed_s": obs.elapsed_s})

    def verify(self, transcript: list[dict[str, Any]], final_state: Any | None = None) -> Any:
        details: dict[str, Any] = {}
        try:
            res = self._client.step(TimelyAction(answer=_completion_text(transcript)))
            #: The episode's timer token once verified (its stopped reading is the reward's time).
            self.timer = self._client.state().timer
            reward = None if res.reward is None else float(res.reward)
            cause = None if reward is not None else (res.observation.cause or self.cause or "rejected")
            why, details = res.observation.unscored, dict(res.observation.details)
        except SessionClosed as exc:
            reward, cause, why = None, "session_closed", str(exc)
        metrics = {"timeaware/unscored": float(reward is None),
                   "timeaware/verifier_unreachable": float(cause == "verifier_unreachable")}
        if reward is None:
            logger.warning("timeaware: a rollout gets no reward (%s): %s", cause, why)
        try:
            _count_lost_sessions([cause == "session_closed"])
            if self.verifier_url and (reward is not None or cause == "verifier_unreachable"):
                scoring.count_outcomes([reward is not None], {"url": self.verifier_url}, check=False)
        except (scoring.VerifierUnreachable, scoring.RolloutLogError, SessionsLost) as exc:
            # TRL's harness drops any Exception of a session.
            raise scoring.RunStopped(exc) from exc
        return VerifyResult(env_reward=reward, done=True, metrics=metrics,
                            artifacts={"details": details, "cause": cause})

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()


class TimelySessionFactory(ResourceSessionFactory):  # type: ignore[misc,unused-ignore]
    """Makes a `TimelyHarnessSession` per rollout on the server at
    ``base_url`` (default env TIMEAWARE_OPENENV_URL). A harness hands
    ``create`` the rollout's prompt, not its row, so the factory holds the
    rows (a ``datasets.Dataset`` or a list of dicts, as the synth commands
    write them) and finds each by its prompt. For TRL's async GRPO::

        HarnessRolloutWorker(..., harness_adapter=MCPHarnessAdapter(),
                             harness_session_factory=functools.partial(TimelySessionFactory, URL, rows=ds))

    ``**kwargs`` (TRL passes ``sampling=`` to loop-owning factories) are
    ignored: the trainer samples every turn."""

    def __init__(self, base_url: str | None = None, *, rows: Any = (), **kwargs: Any) -> None:
        url = base_url or os.environ.get("TIMEAWARE_OPENENV_URL") or ""
        if not url:
            raise ValueError("TimelySessionFactory: no server URL: pass base_url or set TIMEAWARE_OPENENV_URL")
        self.base_url = url
        self._rows: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            self._rows.setdefault(_row_key(row.get("prompt")), row)
        if not self._rows:
            raise ValueError("TimelySessionFactory: no rows; pass the dataset the trainer plays as rows=")

    def create(self, task: Any, seed: int | None = None, episode_id: str | None = None) -> TimelyHarnessSession:
        row = self._rows.get(_row_key(task))
        if row is None:
            raise ValueError("TimelySessionFactory: no row has this prompt; pass the dataset the trainer plays as "
                             "rows=")
        return TimelyHarnessSession(self.base_url, row, episode_id)


def _completion_text(completion: Any) -> str:
    """What the model wrote: a string as it is; a conversation as its
    assistant messages' texts, one per line (tool results left out)."""
    if isinstance(completion, str):
        return completion
    return "\n".join(str(m.get("content") or "") for m in completion or []
                     if isinstance(m, Mapping) and m.get("role") == "assistant")


def session_reward(completions: Sequence[Any], environments: Sequence[Any] | None = None,
                   **kwargs: Any) -> list[float | None]:
    """A reward function for TRL's GRPOTrainer with `TimelySession`
    environments: each rollout's completion ends its episode, and its reward
    is the environment's. An episode without a reward gets None (TRL leaves
    the completion out of this reward), logged with the reason; never 0.

    Rollouts the verifier did not answer (``cause`` ``verifier_unreachable``)
    count, with the ones it scored, in the run of fallbacks of the adapters
    (`timeaware.scoring.count_outcomes`, on the verifier the server names;
    this process need not reach it, nor hold its token): the run stops with
    `timeaware.scoring.VerifierUnreachable` at the same
    ``max_consecutive_fallbacks``. TRL's ``log_metric`` gets the share of the
    call's rollouts without a reward (``timeaware/unscored``) and of those
    the verifier did not answer (``timeaware/verifier_unreachable``)."""
    if environments is None or len(environments) != len(completions):
        raise ValueError("session_reward: pass environment_factory=TimelySession to the trainer")
    out: list[float | None] = []
    outcomes: dict[str, list[bool]] = {}
    unreachable = 0
    for comp, env in zip(completions, environments):
        r = env._answer(comp)
        if r is None:
            logger.warning("timeaware: a rollout gets no reward (%s): %s", env.cause, env.unscored)
        if env.verifier_url and (r is not None or env.cause == "verifier_unreachable"):
            outcomes.setdefault(env.verifier_url, []).append(r is not None)
        unreachable += r is None and env.cause == "verifier_unreachable"
        out.append(r)
    log_metric = kwargs.get("log_metric")
    if callable(log_metric) and out:
        log_metric("timeaware/unscored", sum(r is None for r in out) / len(out))
        log_metric("timeaware/verifier_unreachable", unreachable / len(out))
    _count_lost_sessions([env.cause == "session_closed" for env in environments])
    for url, answered in outcomes.items():
        scoring.count_outcomes(answered, {"url": url}, check=False)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m timeaware.openenv``: serve one kind of environment."""
    p = argparse.ArgumentParser(prog="python -m timeaware.openenv",
                                description="Serve our environments to OpenEnv clients, in front of the verifier.")
    p.add_argument("--env", required=True, choices=KINDS, help="the environment to serve")
    p.add_argument("--verifier", default=os.environ.get("TIMEAWARE_URL"),
                   help="the verifier's URL (default env TIMEAWARE_URL)")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (beyond loopback, TIMEAWARE_OPENENV_TOKEN must be set)")
    p.add_argument("--allow-no-token", action="store_true",
                   help="listen beyond loopback without TIMEAWARE_OPENENV_TOKEN (anyone who reaches the port plays, on the verifier's token)")
    p.add_argument("--port", type=int, default=8000, help="0 lets the kernel choose")
    p.add_argument("--addr-file", help="write host:port here once listening")
    p.add_argument("--max-sessions", type=int, default=64)
    p.add_argument("--idle-timeout-s", type=float, default=300.0, help="0 keeps idle sessions open")
    p.add_argument("--opponent-beta", type=float, default=None, help="the scripted opponent's concession β")
    p.add_argument("--model-opponent", action="store_true", help="the verifier's model opponent")
    a = p.parse_args(argv)
    if not a.verifier:
        p.error("no verifier URL: pass --verifier or set TIMEAWARE_URL")
    if a.max_sessions < 1:
        p.error("--max-sessions must be at least 1")
    access = os.environ.get("TIMEAWARE_OPENENV_TOKEN") or None
    if access is None and not _loopback(a.host) and not a.allow_no_token:
        p.error(f"--host {a.host}: listening beyond loopback needs TIMEAWARE_OPENENV_TOKEN, the bearer token its "
                "clients must send (it forwards the verifier's token for them); pass --allow-no-token to let anyone in")
    opponent: dict[str, Any] = {"kind": "model"} if a.model_opponent else {}
    if a.opponent_beta is not None:
        opponent["beta"] = a.opponent_beta
    app = create_app(a.env, a.verifier, token=os.environ.get("TIMEAWARE_SERVE_TOKEN") or None,
                     max_sessions=a.max_sessions, idle_timeout_s=a.idle_timeout_s or None, opponent=opponent,
                     access_token=access)
    import uvicorn  # type: ignore[import-not-found,unused-ignore]

    sock = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((a.host, a.port))
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    if a.addr_file:
        addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        # Written once the socket is bound and listening; the reaper starts with the app.
        sock.listen(128)
        tmp = a.addr_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(addr + "\n")
        os.replace(tmp, a.addr_file)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
