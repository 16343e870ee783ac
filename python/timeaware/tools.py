"""`GetDurationTool`: the ``get_duration`` timer tool with VeRL's tool interface.

The tool lets the model ask how long its rollout has been running. The time
is kept by the verifier service (``POST /v1/timers``): generation time scaled
by the speed factor, tool time unscaled, optional jitter; the service's
answer text (e.g. ``"3.42 seconds."``) is what the model reads, and the
reward later reads the same timer.

When ``verl`` is importable the class subclasses ``verl.tools.base_tool.BaseTool``
and returns ``verl.tools.schemas.ToolResponse`` objects; without VeRL it
uses a compatible standalone base (`StandaloneBaseTool`, `ToolResponse`).
VeRL versions whose ``BaseTool.create`` returns only the instance id (and
whose ``execute`` returns plain text) are supported too.

VeRL calls tools in one of two ways, and the tool handles both:

1. SGLang multi-turn rollout (``actor_rollout_ref.rollout.multi_turn``):
   ``create(request_id, **create_kwargs)`` once when the rollout starts,
   ``execute(request_id, parameters, **execute_kwargs)`` per call,
   ``calc_reward(request_id)`` and ``release(request_id)`` when it ends. The
   timer starts in ``create``; ``calc_reward`` returns its elapsed seconds,
   which VeRL hands the reward function as
   ``extra_info["rollout_reward_scores"]["get_duration"]``.
2. Agent loop (``ToolAgentLoop``): per tool call,
   ``create(create_kwargs=...)`` (no instance id), then
   ``execute(instance_id, parameters, agent_data=...)``, then ``release``;
   ``calc_reward`` is not called. A timer per call would measure nothing, so
   the tool keeps one timer per rollout: the first call creates it (keyed by
   ``agent_data.request_id``), back-dates it by the generation and tool time
   the agent loop has already recorded in ``agent_data.metrics`` (generation
   scaled by the speed factor), and stores its token in
   ``agent_data.extra_fields[timer_field]``; later calls reuse it. VeRL's
   reward loop merges those extra fields into ``extra_info``, where
   `timeaware.verl.compute_score` picks the token up, so the reward reads the
   same timer, live, when the rollout is scored.

Tool ``config`` (the ``config:`` block of VeRL's tool YAML), all optional:
``base_url`` (else env TIMEAWARE_URL), ``token`` (else env
TIMEAWARE_SERVE_TOKEN), ``timeout_s``, ``connect_timeout_s``, ``retries``,
defaults for the timer options ``speed_factor``, ``jitter``, ``ttl_s``,
``time_limit_s`` (a row's ``create_kwargs`` override them), ``timer_field``
(default ``timeaware_timer``) and ``use_agent_metrics`` (default true:
back-date an agent-loop timer as described above, and at each later call
report the tool seconds the agent loop measured since the previous call as a
tool span, so that they count unscaled).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

from timeaware.client import Client, ServerUnavailable
from timeaware.rows import TIMER_OPTIONS, timer_options
from timeaware.scoring import UNREACHABLE_FIELD

__all__ = ["DEFAULT_TOOL_SCHEMA", "TIMER_OPTIONS", "VERL_AVAILABLE", "GetDurationTool", "StandaloneBaseTool",
           "ToolResponse", "timer_options"]

logger = logging.getLogger("timeaware")

DEFAULT_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_duration",
        "description": "Get the total time elapsed since the task started, in seconds.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}


_UNAVAILABLE_TEXT = "The elapsed time is unavailable right now."


class _StandaloneToolResponse:
    """What a tool call returns to the model (VeRL's ToolResponse shape)."""

    def __init__(
        self, text: str | None = None, image: list[Any] | None = None, video: list[Any] | None = None
    ) -> None:
        self.text = text
        self.image = image
        self.video = video

    def is_empty(self) -> bool:
        return not self.text and not self.image and not self.video

    def is_text_only(self) -> bool:
        return bool(self.text) and not self.image and not self.video

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StandaloneToolResponse) and (self.text, self.image, self.video) == (
            other.text,
            other.image,
            other.video,
        )

    def __repr__(self) -> str:
        return f"ToolResponse(text={self.text!r})"


class StandaloneBaseTool:
    """The subset of ``verl.tools.base_tool.BaseTool`` this package relies
    on, for use without VeRL installed. ``tool_schema`` may be a dict or an
    object with ``.function.name``."""

    def __init__(self, config: dict[str, Any] | None, tool_schema: Any) -> None:
        self.config = config or {}
        self.tool_schema = tool_schema or self.get_openai_tool_schema()
        if self.tool_schema is None:
            raise ValueError("tool schema is not set")
        if isinstance(self.tool_schema, dict):
            self.name = self.tool_schema["function"]["name"]
        else:
            self.name = self.tool_schema.function.name

    def get_openai_tool_schema(self) -> Any:
        return getattr(self, "tool_schema", None)

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        return (instance_id or str(uuid.uuid4())), ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict[str, float]]:
        return ToolResponse(text=""), 0.0, {}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        return 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        return None


def _identity(fn: Any) -> Any:
    return fn


# VeRL's classes where VeRL is installed, else the standalone ones above.
_BaseTool: Any
_Schema: Any
ToolResponse: Any
_trace_op: Any
try:  # pragma: no cover - exercised only where VeRL is installed
    from verl.tools.base_tool import BaseTool as _VerlBaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema as _VerlSchema

    _BaseTool, _Schema = _VerlBaseTool, _VerlSchema
    try:
        from verl.tools.schemas import ToolResponse as _VerlToolResponse

        ToolResponse = _VerlToolResponse
        _TUPLE_API = True
    except ImportError:  # VeRL before ToolResponse: create -> id, execute -> text
        ToolResponse = _StandaloneToolResponse
        _TUPLE_API = False
    try:
        from verl.utils.rollout_trace import rollout_trace_op as _verl_trace_op

        _trace_op = _verl_trace_op
    except ImportError:
        _trace_op = _identity
    VERL_AVAILABLE = True
except ImportError:
    _BaseTool = StandaloneBaseTool
    _Schema = None
    ToolResponse = _StandaloneToolResponse
    _TUPLE_API = True
    _trace_op = _identity
    VERL_AVAILABLE = False

_F = TypeVar("_F", bound=Callable[..., Any])


def _trace(fn: _F) -> _F:
    """fn under VeRL's rollout tracing where VeRL has it, else fn itself."""
    return cast(_F, _trace_op(fn))


def _schema_object(schema: Any) -> Any:
    """VeRL's BaseTool needs a pydantic schema; accept a dict too."""
    if schema is None:
        schema = DEFAULT_TOOL_SCHEMA
    if _Schema is not None and isinstance(schema, dict):
        return _Schema.model_validate(schema)
    return schema


class _Instance:
    __slots__ = ("last_elapsed_s", "options", "rollout_id", "shared", "token", "unreachable")

    def __init__(self, rollout_id: str, options: dict[str, float]) -> None:
        self.rollout_id = rollout_id
        self.options = options
        self.token: str | None = None
        self.shared = False  # the token belongs to an agent-loop rollout, not to this instance
        self.last_elapsed_s: float | None = None
        # the verifier could not be reached when the timer was to start
        self.unreachable = False


_clients: dict[tuple[Any, ...], Client] = {}
_clients_lock = threading.Lock()


def _shared_client(
    base_url: str | None, token: str | None, timeout_s: float, connect_timeout_s: float, retries: int
) -> Client:
    """One Client per distinct configuration, so tool objects share keep-alive
    connections. The URL and token are resolved from the environment here,
    when the tool is built, so a tool built before TIMEAWARE_URL was set does
    not pin the default for the tools built after it."""
    base_url = base_url or os.environ.get("TIMEAWARE_URL") or None
    token = token or os.environ.get("TIMEAWARE_SERVE_TOKEN") or None
    key = (base_url, token, timeout_s, connect_timeout_s, retries)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = Client(
                base_url, token, timeout_s=timeout_s, connect_timeout_s=connect_timeout_s, retries=retries
            )
            _clients[key] = c
        return c


def _float_option(name: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        logger.warning("timeaware: ignoring get_duration option %s=%r (not a number)", name, value)
        return None
    if not math.isfinite(f):
        logger.warning("timeaware: ignoring get_duration option %s=%r (not finite)", name, value)
        return None
    return f


class GetDurationTool(_BaseTool):
    """The ``get_duration`` tool. See the module docstring for the VeRL
    call sequences it supports and for its ``config``.

    Per-instance ``create_kwargs``: ``speed_factor``, ``jitter`` (relative
    sigma), ``ttl_s``, ``time_limit_s``. Unknown keys are ignored.
    """

    def __init__(self, config: dict[str, Any] | None = None, tool_schema: Any = None) -> None:
        config = dict(config or {})
        schema = _schema_object(tool_schema)
        if VERL_AVAILABLE:
            # VeRL's BaseTool.__init__ sets config, tool_schema and name, and
            # prints the schema, eleven lines for every rollout's tool: set
            # them here, quietly (a trainers-tier test holds this to what
            # VeRL's sets).
            self.config = config
            self.tool_schema = schema or self.get_openai_tool_schema()
            self.name = self.tool_schema.function.name
        else:
            super().__init__(config, schema)
        token = config.get("token")
        self._client = _shared_client(
            config.get("base_url") or config.get("url"),
            str(token) if token else None,
            float(config.get("timeout_s", 5.0)),
            float(config.get("connect_timeout_s", 2.0)),
            int(config.get("retries", 2)),
        )
        self._defaults: dict[str, float] = {}
        for k in TIMER_OPTIONS:
            v = _float_option(k, config.get(k))
            if v is not None:
                self._defaults[k] = v
        self.timer_field = str(config.get("timer_field") or "timeaware_timer")
        self._tool_field = self.timer_field + "_tool_s"
        self.use_agent_metrics = bool(config.get("use_agent_metrics", True))
        self._instances: dict[str, _Instance] = {}
        self._rollout_locks: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()

    def get_openai_tool_schema(self) -> Any:
        schema = getattr(self, "tool_schema", None)
        return schema if schema is not None else _schema_object(DEFAULT_TOOL_SCHEMA)

    # ------------------------------------------------------------------ helpers

    def _options(self, create_kwargs: dict[str, Any]) -> dict[str, float]:
        opts = dict(self._defaults)
        for k in TIMER_OPTIONS:
            v = _float_option(k, create_kwargs.get(k))
            if v is not None:
                opts[k] = v
        return opts

    async def _start_timer(self, rollout_id: str, options: dict[str, float]) -> str:
        doc = await asyncio.to_thread(self._client.create_timer, rollout_id, **options)
        token = doc.get("timer") if isinstance(doc, dict) else None
        if not isinstance(token, str) or not token:
            raise RuntimeError("POST /v1/timers answered without a timer token")
        return token

    def _response(self, text: str) -> Any:
        return ToolResponse(text=text)

    def _instance(self, instance_id: str) -> _Instance:
        inst = self._instances.get(instance_id)
        if inst is None:  # execute without create: behave as if created with defaults
            inst = _Instance(str(instance_id), dict(self._defaults))
            self._instances[instance_id] = inst
        return inst

    async def _rollout_token(self, agent_data: Any, inst: _Instance) -> str:
        """The agent-loop rollout's timer token: created on first use, and
        kept in step with the tool time the agent loop has measured."""
        fields = getattr(agent_data, "extra_fields", None)
        if not isinstance(fields, dict):
            raise TypeError("agent_data has no extra_fields dict")
        try:
            lock = self._rollout_locks.get(agent_data)
            if lock is None:
                lock = asyncio.Lock()
                self._rollout_locks[agent_data] = lock
        except TypeError:  # not weak-referenceable: parallel first calls may race
            lock = asyncio.Lock()
        async with lock:
            token = fields.get(self.timer_field)
            gen_s, tool_s = self._agent_metrics(agent_data)
            if not (isinstance(token, str) and token):
                rollout_id = str(getattr(agent_data, "request_id", None) or inst.rollout_id)
                try:
                    token = await self._start_timer(rollout_id, inst.options)
                except ServerUnavailable:
                    # Marked, so that the reward does not score the rollout
                    # as an untimed one (scoring.played_without_verifier).
                    fields[UNREACHABLE_FIELD] = (f"the verifier at {self.verifier_url} could not be "
                                                 "reached to start the rollout's timer")
                    raise
                fields.pop(UNREACHABLE_FIELD, None)
                if self.use_agent_metrics:
                    # Time the rollout spent before its timer existed.
                    past = gen_s * inst.options.get("speed_factor", 1.0) + tool_s
                    token = await self._span(token, past, simulated=True) or token
            elif self.use_agent_metrics:
                # Tool time measured since the last call: wall time that
                # must count unscaled, not as (scaled) generation. If the
                # report fails, it is tried again at the next call.
                done = _float_option("tool_s", fields.get(self._tool_field)) or 0.0
                new = await self._span(token, tool_s - done, simulated=False)
                if new is None:
                    tool_s = done
                else:
                    token = new
            fields[self.timer_field] = token
            fields[self._tool_field] = tool_s
            inst.token, inst.shared = token, True
            return token

    @staticmethod
    def _agent_metrics(agent_data: Any) -> tuple[float, float]:
        """(generation seconds, tool seconds) the agent loop has accumulated
        in ``agent_data.metrics`` so far; zeros when it has none."""
        metrics = getattr(agent_data, "metrics", None)
        if not isinstance(metrics, dict):
            return 0.0, 0.0
        gen = _float_option("generate_sequences", metrics.get("generate_sequences")) or 0.0
        tools = _float_option("tool_calls", metrics.get("tool_calls")) or 0.0
        return max(0.0, gen), max(0.0, tools)

    async def _span(self, token: str, seconds: float, *, simulated: bool) -> str | None:
        """Report a tool span of ``seconds`` (nothing to do below a
        millisecond). Returns the newest token, or None when the report
        failed."""
        if not seconds > 1e-3:
            return token
        try:
            doc = await asyncio.to_thread(self._client.add_span, token, seconds=seconds, simulated=simulated)
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: could not report %.3fs of tool time to the timer: %s", seconds, exc)
            return None
        new = doc.get("timer") if isinstance(doc, dict) else None
        return new if isinstance(new, str) and new else None

    # ------------------------------------------------------------------ VeRL interface

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> Any:
        """Register an instance. Options come from ``create_kwargs=`` (agent
        loop) and/or keyword arguments (SGLang rollout passes the row's
        create_kwargs unpacked). With an ``instance_id`` (or when not called
        the agent-loop way) a timer starts now, with rollout id =
        ``instance_id`` or a new uuid4; in the agent-loop convention the
        timer is the rollout's, found or made at the first `execute`.

        Returns ``(instance_id, ToolResponse())`` (``instance_id`` alone on
        VeRL versions before ToolResponse). Does not raise when the service
        is unreachable: `execute` retries starting the timer.
        """
        nested = kwargs.pop("create_kwargs", None)
        agent_loop_call = instance_id is None and nested is not None
        merged: dict[str, Any] = dict(nested) if isinstance(nested, dict) else {}
        merged.update(kwargs)
        iid = str(instance_id) if instance_id is not None else str(uuid.uuid4())
        inst = _Instance(iid, self._options(merged))
        self._instances[iid] = inst
        if not agent_loop_call:
            try:
                inst.token = await self._start_timer(iid, inst.options)
            except Exception as exc:  # noqa: BLE001
                inst.unreachable = isinstance(exc, ServerUnavailable)
                logger.warning("timeaware: could not start the timer for %s: %s", iid, exc)
        return (iid, ToolResponse()) if _TUPLE_API else iid

    @property
    def verifier_url(self) -> str:
        """The verifier this tool calls."""
        return str(self._client.base_url)

    def unreachable(self, instance_id: str) -> bool:
        """Whether the verifier could not be reached to start the instance's
        timer (so its rollout is unscored for that reason)."""
        inst = self._instances.get(instance_id)
        return inst is not None and inst.unreachable and not inst.token

    @_trace
    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict[str, float]]:
        """Answer a ``get_duration`` call with the timer's text, e.g.
        ``"3.42 seconds."``. Returns ``(ToolResponse(text=...), 0.0,
        {"elapsed_s": seconds})``; the step reward is always 0. When the
        service cannot be reached the text says the time is unavailable and
        the metrics hold ``{"error": 1.0}``; nothing is raised."""
        inst = self._instance(instance_id)
        agent_data = kwargs.get("agent_data")
        try:
            if agent_data is not None:
                token = await self._rollout_token(agent_data, inst)
            else:
                if not inst.token:
                    try:
                        inst.token = await self._start_timer(inst.rollout_id, inst.options)
                    except ServerUnavailable:
                        inst.unreachable = True
                        raise
                    inst.unreachable = False
                token = inst.token
            doc = await asyncio.to_thread(self._client.get_duration, timer=token)
            text = doc.get("text")
            elapsed = _float_option("elapsed_s", doc.get("elapsed_s"))
            if not isinstance(text, str) or not text:
                raise RuntimeError("get_duration answered without text")
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: get_duration failed for %s: %s", instance_id, exc)
            resp = self._response(_UNAVAILABLE_TEXT)
            return (resp if _TUPLE_API else _UNAVAILABLE_TEXT), 0.0, {"error": 1.0}
        inst.last_elapsed_s = elapsed
        metrics = {"elapsed_s": elapsed} if elapsed is not None else {}
        return (self._response(text) if _TUPLE_API else text), 0.0, metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The timer's elapsed seconds now (what the reward should use as
        the rollout's measured time), or -1.0 when it cannot be read. The
        reward adapter ignores negative values."""
        inst = self._instances.get(instance_id)
        if inst is None or not inst.token:
            return -1.0
        try:
            doc = await asyncio.to_thread(self._client.read_timer, inst.token)
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: could not read the timer of %s: %s", instance_id, exc)
            return -1.0
        elapsed = _float_option("elapsed_s", doc.get("elapsed_s") if isinstance(doc, dict) else None)
        if elapsed is None or elapsed < 0:
            return -1.0
        inst.last_elapsed_s = elapsed
        return elapsed

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance and stop its timer, unless the timer belongs
        to an agent-loop rollout (that one lives on until the reward has
        read it and expires after its TTL). Never raises."""
        inst = self._instances.pop(instance_id, None)
        if inst is None or not inst.token or inst.shared:
            return
        try:
            await asyncio.to_thread(self._client.stop_timer, inst.token)
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: could not stop the timer of %s: %s", instance_id, exc)
        return

    # ------------------------------------------------------------------ extras

    async def stop(self, instance_id: str) -> str | None:
        """Stop an instance's timer now and forget the instance (a later
        `release` has nothing to do). Returns the stopped timer's token,
        whose reading no longer moves, or None when the instance has no
        timer or the service could not stop it (then the timer runs on until
        its TTL). Never raises."""
        inst = self._instances.get(instance_id)
        if inst is None or not inst.token:
            return None
        try:
            doc = await asyncio.to_thread(self._client.stop_timer, inst.token)
        except Exception as exc:  # noqa: BLE001
            logger.warning("timeaware: could not stop the timer of %s: %s", instance_id, exc)
            return None
        self._instances.pop(instance_id, None)
        token = doc.get("timer") if isinstance(doc, dict) else None
        return token if isinstance(token, str) and token else inst.token

    def timer_token(self, instance_id: str) -> str | None:
        """The latest timer token of an instance (None before it has one)."""
        inst = self._instances.get(instance_id)
        return inst.token if inst is not None else None
