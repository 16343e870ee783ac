"""timeaware's tasks as a ``verifiers`` environment (verifiers 0.4, ``verifiers.v1``).

`load_environment` reads a synth output and returns a ``verifiers`` ``Env``
whose rollouts are scored by the verifier service; ``vf-eval timeaware-env``
(the ``timeaware-env`` package beside this one, which re-exports the classes
below) runs the same environment from verifiers' own CLI. Each row plays by
its data source:

* Time Puzzles (``timepuzzles``) and TRAVELER (``traveler``): single turn,
  one model reply;
* ``timely/*`` (``synth budget``): a tool loop whose one tool,
  ``get_duration``, reads a timer the service keeps for the rollout, started
  with the row's speed factor, jitter and limit; the reward scores that
  timer's final reading, never a number the model wrote;
* ``negotiation``: a multi-turn episode, each model message one step of the
  service's negotiation environment against its scripted opponent (or the
  model opponent the service is configured with); the reward is the score
  the service gives the finished episode.

The task's one reward, ``timeaware``, asks the service (``POST
/v1/score/batch``, through `timeaware.verl`'s batching); its detail keys are
recorded as metrics ``timeaware/<key>``. A rollout the service gives no
score (a data source with no reward, an item it rejects, no answer) fails
with `Unscored`, which verifiers records as the trace's error, so the
trainer leaves it out; ``unscored="fallback"`` gives it the fallback score
instead. Either way it is counted in `stats`. A service that does not
answer stops `load_environment` with `timeaware.scoring.VerifierUnreachable`
naming its URL. A rollout played or scored while it did not answer (its
timer could not start, a negotiation step got no answer, the score got
none) also records the metric ``timeaware/verifier_unreachable`` and counts
in the adapters' run of fallbacks; past ``max_consecutive_fallbacks`` in a
row the reward raises `timeaware.scoring.RunStopped`, a ``BaseException``
that verifiers does not record as a rollout's error, so the run stops.

The harness (`TimeawareHarness`) runs the chat loop in this process: every
model call goes through the rollout's interception endpoint, so the trace
records it as with any harness, and ``get_duration`` and the negotiation
steps are answered here from the rollout's timer and episode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import verifiers.v1 as vf  # type: ignore[import-not-found,unused-ignore]
from openai import AsyncOpenAI  # type: ignore[import-not-found,unused-ignore]
from pydantic import Field  # type: ignore[import-not-found,unused-ignore]

from timeaware import scoring, verl
from timeaware.client import DEFAULT_URL, Client, ServerUnavailable, TimeawareError
from timeaware.episodes import NegotiationEpisode, parse_message
from timeaware.tools import GetDurationTool, timer_options

__all__ = [
    "FAMILIES",
    "TimeawareEnv",
    "TimeawareEnvConfig",
    "TimeawareHarness",
    "TimeawareHarnessConfig",
    "TimeawareTask",
    "TimeawareTaskData",
    "TimeawareTaskset",
    "TimeawareTasksetConfig",
    "Unscored",
    "family_of",
    "load_environment",
    "load_rows",
    "stats",
]

logger = logging.getLogger("timeaware")

#: The task families and what selects each: a row's ``data_source``.
FAMILIES = ("puzzles", "traveler", "timely", "negotiation")

#: The tool the ``timely/*`` rows are played with.
GET_DURATION_TOOL = {
    "type": "function",
    "function": {
        "name": "get_duration",
        "description": "Get the total time elapsed since the task started, in seconds.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}

_INFO_TIMER = "timeaware_timer"
_INFO_SCORE = "timeaware_score"
_INFO_DETAILS = "timeaware_details"
_INFO_UNREACHABLE = "timeaware_unreachable"

_lock = threading.Lock()
_ZERO = {"rollouts": 0, "scored": 0, "unscored": 0, "unreachable": 0, "fallbacks": 0, "tool_calls": 0,
         "tool_errors": 0}
_stats = dict(_ZERO)


def _count(**deltas: int) -> None:
    with _lock:
        for k, v in deltas.items():
            _stats[k] += v


def stats(*, reset: bool = False) -> dict[str, int]:
    """This process's counters: ``rollouts`` scored or tried, ``scored``,
    ``unscored`` (no score from the service), ``unreachable`` (of those, the
    service did not answer), ``fallbacks`` (of those, given the fallback
    score), ``tool_calls`` and ``tool_errors`` (``get_duration``
    calls the harness refused: broken arguments or an unknown tool).
    ``reset=True`` zeroes them after reading."""
    with _lock:
        out = dict(_stats)
        if reset:
            _stats.update(_ZERO)
    return out


class Unscored(RuntimeError):
    """A rollout the verifier service gave no score: ``reason`` says why.
    Raised by the reward, so verifiers records it as the trace's error."""

    def __init__(self, data_source: str, reason: str) -> None:
        super().__init__(f"timeaware: no score for this {data_source!r} rollout: {reason}")
        self.data_source = data_source
        self.reason = reason


def family_of(data_source: str) -> str:
    """The task family that plays a data source; ``single`` for one no family
    names (played single turn; the service decides whether it has a reward)."""
    if data_source == "timepuzzles":
        return "puzzles"
    if data_source == "traveler":
        return "traveler"
    if data_source.startswith("timely/"):
        return "timely"
    if data_source == "negotiation":
        return "negotiation"
    return "single"


def load_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a synth output: JSON Lines (``.jsonl``), or Parquet
    (``.parquet``, which needs pyarrow)."""
    p = Path(path)
    if p.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as exc:
            raise ImportError(f"timeaware: reading {p} needs pyarrow (pip install pyarrow), "
                              "or write the synth output as .jsonl") from exc

        return [dict(r) for r in pq.read_table(p).to_pylist()]
    rows = []
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"{p}:{n}: not a JSON object: {exc}") from exc
    return rows


def _object(value: Any) -> dict[str, Any]:
    """A column that holds an object, or its JSON text."""
    if isinstance(value, str) and value:
        value = json.loads(value)
    return dict(value) if isinstance(value, Mapping) else {}


class TimeawareTaskData(vf.TaskData):  # type: ignore[misc,unused-ignore]
    """One synth row as a verifiers task: its prompt, the columns the reward
    needs, and where the verifier service is (never its token, which is
    read from TIMEAWARE_SERVE_TOKEN)."""

    data_source: str
    family: str
    ground_truth: Any = None
    extra_info: dict[str, Any] = Field(default_factory=dict)
    verifier_url: str = DEFAULT_URL
    unscored: str = "error"
    opponent: dict[str, Any] = Field(default_factory=dict)
    max_turns: int = 16


class TimeawareTask(vf.Task[TimeawareTaskData]):  # type: ignore[misc,unused-ignore]
    """A synth row whose reward the verifier service computes."""

    @vf.reward  # type: ignore[untyped-decorator,unused-ignore]
    async def timeaware(self, task: TimeawareTaskData, trace: Any) -> float:
        """The service's score of the rollout (see the module docstring)."""
        _count(rollouts=1)
        try:
            return await self._score(task, trace)
        except (scoring.VerifierUnreachable, scoring.RolloutLogError) as exc:
            # verifiers records an Exception as the rollout's error and goes
            # on: the run would not stop.
            raise scoring.RunStopped(exc) from exc

    async def _score(self, task: TimeawareTaskData, trace: Any) -> float:
        outage = trace.info.get(_INFO_UNREACHABLE)
        if outage:
            # Played without the verifier: counted where the plain path's
            # items are, so the run stops at the same limit.
            _count(unreachable=1)
            trace.record_metric("timeaware/verifier_unreachable", 1.0)
            scoring.count_outcomes([False], {"url": task.verifier_url}, check=False)
            return self._unscored(task, trace, str(outage))
        if task.family == "negotiation":
            score = trace.info.get(_INFO_SCORE)
            if score is None:
                return self._unscored(task, trace, "the negotiation episode did not finish")
            details = trace.info.get(_INFO_DETAILS) or {}
            trace.record_metrics({f"timeaware/{k}": float(v) for k, v in details.items()
                                  if isinstance(v, (int, float))})
            scoring.count_outcomes([True], {"url": task.verifier_url}, check=False)
            _count(scored=1)
            return float(score)
        extra_info = dict(task.extra_info)
        token = trace.info.get(_INFO_TIMER)
        if token:
            extra_info["timer"] = token
        result = await verl.compute_score(task.data_source, trace.last_reply, task.ground_truth, extra_info,
                                          url=task.verifier_url)
        if isinstance(result, scoring.Unscored):
            if result.cause == "verifier_unreachable":
                _count(unreachable=1)
                trace.record_metric("timeaware/verifier_unreachable", 1.0)
            return self._unscored(task, trace, result.reason, float(result["score"]))
        trace.record_metrics({f"timeaware/{k}": float(v) for k, v in result.items() if k != "score"})
        _count(scored=1)
        return float(result["score"])

    def _unscored(self, task: TimeawareTaskData, trace: Any, reason: str, fallback: float | None = None) -> float:
        _count(unscored=1)
        logger.warning("timeaware: a %s rollout gets no score: %s", task.data_source, reason)
        if task.unscored != "fallback":
            raise Unscored(task.data_source, reason)
        _count(fallbacks=1)
        trace.record_metric("timeaware/unscored", 1.0)
        if fallback is None:
            fallback = float(scoring.settings({"url": task.verifier_url}).fallback_score)
        return fallback


class TimeawareTasksetConfig(vf.TasksetConfig):  # type: ignore[misc,unused-ignore]
    """`TimeawareTaskset`'s settings (``--env.taskset.<name>`` on ``vf-eval``)."""

    data: str = ""
    """The synth output to play: JSON Lines or Parquet."""
    family: str = ""
    """The one family every row must belong to (puzzles, traveler, timely,
    negotiation); empty plays each row by its data source."""
    verifier_url: str = ""
    """The verifier service; empty reads TIMEAWARE_URL, else the default."""
    unscored: str = "error"
    """What a rollout the service gives no score gets: an error (``error``)
    or the fallback score (``fallback``)."""
    opponent_beta: float | None = None
    """The scripted negotiation opponent's concession exponent (the service's
    default when unset)."""
    opponent: str = "scripted"
    """The negotiation opponent: ``scripted``, or ``model`` (the service's)."""
    max_turns: int = 16
    """The most model calls a rollout makes (tool and negotiation loops)."""


class TimeawareTaskset(vf.Taskset[TimeawareTask, TimeawareTasksetConfig]):  # type: ignore[misc,unused-ignore]
    """The rows of a synth output, each a `TimeawareTask`. Construction
    checks the rows and asks the service for its registry, raising
    `timeaware.scoring.VerifierUnreachable` when it does not answer."""

    def __init__(self, config: TimeawareTasksetConfig) -> None:
        super().__init__(config)
        if config.family and config.family not in FAMILIES:
            raise ValueError(f"timeaware: the family must be one of {', '.join(FAMILIES)}, got {config.family!r}")
        if config.unscored not in ("error", "fallback"):
            raise ValueError(f"timeaware: unscored must be 'error' or 'fallback', got {config.unscored!r}")
        if config.opponent not in ("scripted", "model"):
            raise ValueError(f"timeaware: opponent must be 'scripted' or 'model', got {config.opponent!r}")
        if not config.data:
            raise ValueError("timeaware: no data; pass the path of a synth output (data=... or --env.taskset.data)")
        self.url = config.verifier_url or os.environ.get("TIMEAWARE_URL") or DEFAULT_URL
        self.rows = load_rows(config.data)
        for i, row in enumerate(self.rows):
            source = row.get("data_source")
            if not isinstance(source, str) or not source:
                raise ValueError(f"timeaware: row {i} of {config.data} has no data_source")
            if config.family and family_of(source) != config.family:
                raise ValueError(f"timeaware: row {i} of {config.data} is {source!r}, not a {config.family} row")
            if family_of(source) == "negotiation" and not _object(row.get("reward_model")).get("ground_truth"):
                raise ValueError(f"timeaware: negotiation row {i} of {config.data} has no reward_model.ground_truth")
        # The batcher's first use asks the service (raising when it does not
        # answer); from then on an outage counts toward the run's limit.
        scoring.get_batcher(scoring.settings({"url": self.url}))

    def load(self) -> Iterator[TimeawareTask]:
        opponent: dict[str, Any] = {"kind": "model"} if self.config.opponent == "model" else {}
        if self.config.opponent_beta is not None:
            opponent["beta"] = self.config.opponent_beta
        for i, row in enumerate(self.rows):
            source = row["data_source"]
            extra_info = _object(row.get("extra_info"))
            data = TimeawareTaskData(
                id=str(extra_info.get("id") or extra_info.get("request_id") or i),
                prompt=[dict(m) for m in row.get("prompt") or []],
                data_source=source,
                family=family_of(source),
                ground_truth=_object(row.get("reward_model")).get("ground_truth"),
                extra_info=extra_info,
                verifier_url=self.url,
                unscored=self.config.unscored,
                opponent=opponent,
                max_turns=self.config.max_turns,
            )
            yield TimeawareTask(data, self.config.task)


class TimeawareHarnessConfig(vf.HarnessConfig):  # type: ignore[misc,unused-ignore]
    """`TimeawareHarness`'s settings; it has none of its own."""


class TimeawareHarness(vf.Harness[TimeawareHarnessConfig]):  # type: ignore[misc,unused-ignore]
    """Plays a `TimeawareTask` in this process: one reply, the
    ``get_duration`` tool loop, or a negotiation episode, by the row's
    family. Every model call goes through the rollout's endpoint."""

    APPENDS_SYSTEM_PROMPT = True
    # A resumed segment would start the rollout's timer and episode again.
    SUPPORTS_RESUME = False
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any, tool_interception_url: str | None = None) -> Any:
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages.extend(m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else dict(m)
                            for m in prompt or [])
        model = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        try:
            if data.family == "timely":
                await self._tool_loop(model, ctx.model, messages, trace, data)
            elif data.family == "negotiation":
                await self._negotiate(model, ctx.model, messages, trace, data)
            else:
                await model.chat.completions.create(model=ctx.model, messages=messages)
        finally:
            await model.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def _tool_loop(self, model: Any, name: str, messages: list[dict[str, Any]], trace: Any,
                         data: TimeawareTaskData) -> None:
        tool = GetDurationTool({"base_url": data.verifier_url})
        rollout = str(trace.id)
        await tool.create(rollout, **timer_options(data.extra_info, tool.name))
        try:
            for _ in range(data.max_turns):
                out = await model.chat.completions.create(model=name, messages=messages, tools=[GET_DURATION_TOOL])
                msg = out.choices[0].message
                messages.append(msg.model_dump(exclude_none=True))
                if not msg.tool_calls:
                    break
                for call in msg.tool_calls:
                    _count(tool_calls=1)
                    text = _refusal(call)
                    if text is None:
                        resp, _, _ = await tool.execute(rollout, {})
                        text = str(getattr(resp, "text", resp))
                    else:
                        _count(tool_errors=1)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        finally:
            token = tool.timer_token(rollout)
            if token:
                trace.info[_INFO_TIMER] = await tool.stop(rollout) or token
            elif tool.unreachable(rollout):
                # No timer: the rollout's time was never measured, so it is
                # not scored, even by a verifier that is back by now.
                trace.info[_INFO_UNREACHABLE] = (f"the verifier at {data.verifier_url} could not be reached to "
                                                 "start the rollout's timer")
            await tool.release(rollout)

    async def _negotiate(self, model: Any, name: str, messages: list[dict[str, Any]], trace: Any,
                         data: TimeawareTaskData) -> None:
        client = Client(data.verifier_url, os.environ.get("TIMEAWARE_SERVE_TOKEN"))
        try:
            timer = (await asyncio.to_thread(client.create_timer, str(trace.id),
                                             **timer_options(data.extra_info, "send")))["timer"]
            episode = NegotiationEpisode(client, data.ground_truth, timer,
                                         turn_prefix=str(data.extra_info.get("turn_prefix") or ""),
                                         opponent=data.opponent)
            for _ in range(data.max_turns):
                out = await model.chat.completions.create(model=name, messages=messages)
                reply = out.choices[0].message.content or ""
                messages.append({"role": "assistant", "content": reply})
                step = await asyncio.to_thread(episode.step, parse_message(reply))
                if step.get("done"):
                    trace.info[_INFO_SCORE] = step.get("score")
                    trace.info[_INFO_DETAILS] = dict(step.get("details") or {})
                    return
                messages.append({"role": "user", "content": str(step.get("shown") or "")})
        except ServerUnavailable as exc:
            trace.info[_INFO_UNREACHABLE] = f"the verifier at {data.verifier_url} cannot be reached: {exc}"
        except TimeawareError as exc:
            raise RuntimeError(f"timeaware: the negotiation step failed at {data.verifier_url}: {exc}") from exc
        finally:
            client.close()


def _refusal(call: Any) -> str | None:
    """Why a tool call is refused (the text the model reads), or None."""
    fn = call.function
    if fn.name != "get_duration":
        return f"Error: there is no tool {fn.name!r}; the one tool is get_duration."
    raw = fn.arguments or ""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return f"Error: the arguments {raw!r} are not JSON; get_duration takes no arguments: call it with {{}}."
    if args != {}:
        return f"Error: get_duration takes no arguments; got {raw!r}: call it with {{}}."
    return None


class TimeawareEnvConfig(vf.EnvConfig):  # type: ignore[misc,unused-ignore]
    """The single-agent env's config with the harness run in this process
    (a subprocess runtime: the harness starts no program)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class TimeawareEnv(vf.Env[TimeawareEnvConfig]):  # type: ignore[misc,unused-ignore]
    """One agent plays each task (as verifiers' single-agent env does), on a
    local runtime by default."""

    async def run(self, task: Any, agents: Any) -> None:
        await agents.agent.run(task)


def load_environment(task: str = "", *, data: str | os.PathLike[str], verifier_url: str = "",
                     unscored: str = "error", opponent: str = "scripted", opponent_beta: float | None = None,
                     max_turns: int = 16, **env: Any) -> Any:
    """The verifiers environment for a synth output.

    Args:
        task: the family every row must belong to (``puzzles``,
            ``traveler``, ``timely``, ``negotiation``); empty plays each row
            by its data source.
        data: the synth output (JSON Lines or Parquet).
        verifier_url: the verifier service (default TIMEAWARE_URL, else
            http://127.0.0.1:8080); its token is TIMEAWARE_SERVE_TOKEN.
        unscored: ``error`` (a rollout without a score fails) or
            ``fallback`` (it gets the fallback score); counted either way.
        opponent, opponent_beta: the negotiation opponent.
        max_turns: the most model calls of a rollout.
        **env: further fields of the env's config (verifiers' ``EnvConfig``).

    Returns:
        a ``verifiers.v1.Env``; raises `timeaware.scoring.VerifierUnreachable`
        when the service does not answer.
    """
    taskset = {"id": "timeaware-env", "data": str(data), "family": task, "verifier_url": verifier_url,
               "unscored": unscored, "opponent": opponent, "opponent_beta": opponent_beta, "max_turns": max_turns}
    config = TimeawareEnvConfig.model_validate({**env, "taskset": taskset})
    return vf.load_environment(config)
