"""Micro-batched scoring against the verifier service.

This module holds the process-wide state behind `timeaware.verl`: the
settings, one `Batcher` per distinct settings, and the cache of detail keys
per data source. `timeaware.verl` is a thin layer of VeRL-shaped functions on
top of it; keeping the state here means it is shared even when VeRL loads
``timeaware/verl.py`` a second time under another module name (its
``custom_reward_function.path`` loader does exactly that).

Contracts:

* `Batcher.submit` never raises and returns a `concurrent.futures.Future`
  that always completes with a result dict (never an exception).
* Items submitted by any thread or event loop within ``max_wait_ms`` of the
  oldest queued item travel together in one ``POST /v1/score/batch``
  request of at most ``max_batch`` items; a full batch leaves at once. At most
  ``max_inflight`` requests are in flight; while all are busy, new items keep
  accumulating into the next batch.
* Every result is ``{"score": float, <key>: float for each detail key of its
  data source>}``: the same keys, all finite, for every item of a data
  source, whether it was scored, rejected by the server or never reached it.
  The keys come from the server's ``GET /v1/rewards`` (fetched once), or from
  `BUILTIN_KEYS` while the server cannot be asked. Once a data source's keys
  are chosen they never change in this process.
* Items the server rejects carry the server's fallback score; items that got
  no answer (server down, timeout, 401, a success status whose body is not
  the expected JSON, a result without a numeric score, ...) carry
  ``fallback_score`` and count one fallback each.
* No silent zeros. With ``on_unreachable="raise"`` (the default), the first
  use of a service asks it for its registry and raises `VerifierUnreachable`
  naming the URL when it does not answer (or refuses the token), and a run of more than
  ``max_consecutive_fallbacks`` items in a row that got no answer raises it
  for the items past that count. With ``on_unreachable="fallback"`` both
  are logged at ERROR instead (the run every time it grows past the count)
  and the items keep the fallback score. Fallback counts are in `stats` and
  are reported to the server on the next request that reaches it
  (``timeaware_client_fallback_items_total``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from typing import Any

from timeaware.client import Client, InvalidAnswer, TimeawareError, to_jsonable

__all__ = [
    "BUILTIN_KEYS",
    "GROUP_FIELD",
    "GROUP_SIZE_FIELD",
    "GROUP_SOURCES",
    "Batcher",
    "RolloutLog",
    "RolloutLogError",
    "RunStopped",
    "Settings",
    "Unscored",
    "VerifierUnreachable",
    "coerce_setting",
    "configure",
    "count_outcomes",
    "count_unanswered",
    "fallback_result",
    "get_batcher",
    "played_without_verifier",
    "prepare_item",
    "reward_keys",
    "settings",
    "shutdown",
    "stats",
]

logger = logging.getLogger("timeaware")


class VerifierUnreachable(RuntimeError):
    """The verifier service cannot be reached, so rewards would be fallback
    scores. Raised at first use, and when too many items in a row get no
    answer, unless ``on_unreachable="fallback"``. The message names the URL."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(message)
        self.url = url


class RolloutLogError(OSError):
    """The rollout log (``rollout_log``) cannot be written: raised at the
    first use of the settings that name it, so that a run does not go on
    without the log it was asked to keep."""


class RunStopped(BaseException):
    """`VerifierUnreachable` (or `RolloutLogError`) for trainers that drop
    every ``Exception`` a reward function raises (OpenRLHF's executor logs
    it and goes on): a ``BaseException``, so it leaves their code and stops
    the run. The error it stands for is its ``__cause__``; ``url`` is the
    verifier's (None for a rollout log that cannot be written)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.url: str | None = getattr(cause, "url", None)


class Unscored(dict[str, float]):
    """A result that is a fallback, not a score: the item got no answer, the
    server rejected it, or it could not be sent. It holds the same keys and
    values as any result of its data source (``score`` is the fallback), so
    callers that only read the dict see no difference; ``reason`` says what
    went wrong, for callers that can leave such items out of training, and
    ``cause`` names it: ``verifier_unreachable`` (no answer, counted in the
    run of fallbacks), ``rejected`` (the verifier, or this adapter, could
    not score the item) or ``internal`` (a fault of this adapter)."""

    def __init__(self, values: Mapping[str, float], reason: str, cause: str = "verifier_unreachable") -> None:
        super().__init__(values)
        self.reason = reason
        self.cause = cause

    def __reduce__(self) -> tuple[Any, ...]:
        return (Unscored, (dict(self), self.reason, self.cause))


# Detail keys per data source, as the service's registry (GET /v1/rewards)
# lists them; used only while the server cannot be asked. The interop tests
# check this copy against the real server.
_TIMELY_KEYS = (
    "acc",
    "task_reward",
    "format_ok",
    "on_time",
    "elapsed_s",
    "time_limit_s",
    "time_ratio",
    "utilization",
    "reported_s",
)
_LENGTH_KEYS = ("correct", "response_tokens", "think_tokens", "answer_tokens", "token_budget", "within_budget",
                "overshoot_tokens")
_GROUP_KEYS = (*_LENGTH_KEYS, "group_size", "solve_rate", "group_min_tokens", "group_max_tokens",
               "shortest_correct_tokens", "length_term")
#: The data sources scored group-wise: all completions of one prompt
#: together, each carrying the group's key and size (the service's
#: registry marks them ``grouped``; the interop tests check this copy).
GROUP_SOURCES = frozenset({"length/kimi", "length/shorterbetter", "length/alp"})
BUILTIN_KEYS: dict[str, tuple[str, ...]] = {
    "timely/general": _TIMELY_KEYS,
    "timely/game": _TIMELY_KEYS,
    "timely/ml": _TIMELY_KEYS,
    "tictoc/decision": ("called_tool", "preferred_tool", "agree", "margin"),
    "timepuzzles": ("em", "f1", "jaccard", "parsed", "n_pred", "n_gold"),
    "negotiation": (
        "deal",
        "batna_used",
        "batna_taken",
        "out_of_budget",
        "closed_at_s",
        "closed_at_turn",
        "turns",
        "elapsed_s",
        "points_self",
        "points_other",
        "invalid_actions",
        "parsed",
    ),
    "traveler": ("parsed", "optimal", "best_score", "vague"),
    "length/lcpo_exact": _LENGTH_KEYS,
    "length/lcpo_max": _LENGTH_KEYS,
    "length/thinkprune": _LENGTH_KEYS,
    "length/elastic": _LENGTH_KEYS,
    "length/dapo": (*_LENGTH_KEYS, "overlong_penalty"),
    "length/cosine": _LENGTH_KEYS,
    "length/kimi": _GROUP_KEYS,
    "length/shorterbetter": _GROUP_KEYS,
    "length/alp": _GROUP_KEYS,
    "length/anytime": ("correct", "budgets", "think_tokens", *(f"r_{j}" for j in range(1, 9))),
    "timeqa": ("exact_match", "f1", "answered"),
    "tempreason": ("exact_match", "f1", "answered"),
    "tram": ("correct", "answered"),
    "test_of_time": ("correct", "parsed"),
}


@dataclasses.dataclass(frozen=True)
class Settings:
    """How the adapter talks to the service. Hashable: one batcher each.

    Attributes (environment variable in brackets, read at first use and on
    every `configure` call):
        url: service root [TIMEAWARE_URL], default http://127.0.0.1:8080.
        token: bearer token [TIMEAWARE_SERVE_TOKEN], default none.
        timeout_s: read timeout per HTTP attempt [TIMEAWARE_TIMEOUT_S].
        connect_timeout_s: connect timeout per attempt [TIMEAWARE_CONNECT_TIMEOUT_S].
        retries: extra attempts on connection errors, 429 and 503 [TIMEAWARE_RETRIES].
        max_batch: most items per batch request [TIMEAWARE_MAX_BATCH].
        max_wait_ms: longest an item waits for companions [TIMEAWARE_MAX_WAIT_MS].
        max_inflight: most batch requests in flight [TIMEAWARE_MAX_INFLIGHT].
        fallback_score: score of an item that got no answer [TIMEAWARE_FALLBACK_SCORE].
        deadline_s: a caller waits at most this long for its result, then
            takes the fallback; a guard, not a tuning knob [TIMEAWARE_DEADLINE_S].
        tool_name: name of the get_duration tool, the key under which VeRL
            reports its calc_reward in ``rollout_reward_scores`` [TIMEAWARE_TOOL_NAME].
        timer_field: ``extra_info`` key where the tool leaves the rollout's
            timer token in agent-loop rollouts [TIMEAWARE_TIMER_FIELD].
        on_unreachable: ``raise`` (default): a service that does not answer
            at first use, or a run of more than ``max_consecutive_fallbacks``
            unanswered items, raises `VerifierUnreachable`; ``fallback``:
            both are logged at ERROR and the items get ``fallback_score``
            [TIMEAWARE_ON_UNREACHABLE].
        max_consecutive_fallbacks: the longest run of items in a row that may
            get the fallback for want of an answer [TIMEAWARE_MAX_CONSECUTIVE_FALLBACKS].
        rollout_log: a directory where each process appends a line for every
            item it scores, with its reward (`RolloutLog`); ``timeaware score
            --input DIR`` re-scores it [TIMEAWARE_ROLLOUT_LOG]. None: no log.
    """

    url: str = "http://127.0.0.1:8080"
    token: str | None = None
    timeout_s: float = 10.0
    connect_timeout_s: float = 2.0
    retries: int = 2
    max_batch: int = 256
    max_wait_ms: float = 5.0
    max_inflight: int = 8
    fallback_score: float = 0.0
    deadline_s: float = 300.0
    tool_name: str = "get_duration"
    timer_field: str = "timeaware_timer"
    on_unreachable: str = "raise"
    max_consecutive_fallbacks: int = 64
    rollout_log: str | None = None

    def validated(self) -> Settings:
        """Return self, or raise ValueError naming the first bad field."""
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise ValueError(f"timeaware: url {self.url!r} is not an http(s) URL")
        for name in ("timeout_s", "connect_timeout_s", "deadline_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"timeaware: {name} must be a positive number, got {v!r}")
        if not (
            isinstance(self.max_wait_ms, (int, float))
            and math.isfinite(self.max_wait_ms)
            and self.max_wait_ms >= 0
        ):
            raise ValueError(f"timeaware: max_wait_ms must be >= 0, got {self.max_wait_ms!r}")
        if self.on_unreachable not in ("raise", "fallback"):
            raise ValueError(f"timeaware: on_unreachable must be 'raise' or 'fallback', got {self.on_unreachable!r}")
        for name in ("max_batch", "max_inflight", "max_consecutive_fallbacks"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 1):
                raise ValueError(f"timeaware: {name} must be an integer >= 1, got {v!r}")
        if not (isinstance(self.retries, int) and self.retries >= 0):
            raise ValueError(f"timeaware: retries must be an integer >= 0, got {self.retries!r}")
        if not (isinstance(self.fallback_score, (int, float)) and math.isfinite(self.fallback_score)):
            raise ValueError(f"timeaware: fallback_score must be finite, got {self.fallback_score!r}")
        return self


_FIELD_TYPES = {f.name: f.type for f in dataclasses.fields(Settings)}
_ENV = {
    "url": "TIMEAWARE_URL",
    "token": "TIMEAWARE_SERVE_TOKEN",
    "timeout_s": "TIMEAWARE_TIMEOUT_S",
    "connect_timeout_s": "TIMEAWARE_CONNECT_TIMEOUT_S",
    "retries": "TIMEAWARE_RETRIES",
    "max_batch": "TIMEAWARE_MAX_BATCH",
    "max_wait_ms": "TIMEAWARE_MAX_WAIT_MS",
    "max_inflight": "TIMEAWARE_MAX_INFLIGHT",
    "fallback_score": "TIMEAWARE_FALLBACK_SCORE",
    "deadline_s": "TIMEAWARE_DEADLINE_S",
    "tool_name": "TIMEAWARE_TOOL_NAME",
    "timer_field": "TIMEAWARE_TIMER_FIELD",
    "on_unreachable": "TIMEAWARE_ON_UNREACHABLE",
    "max_consecutive_fallbacks": "TIMEAWARE_MAX_CONSECUTIVE_FALLBACKS",
    "rollout_log": "TIMEAWARE_ROLLOUT_LOG",
}
_INT_FIELDS = frozenset({"retries", "max_batch", "max_inflight", "max_consecutive_fallbacks"})
_STR_FIELDS = frozenset({"url", "token", "tool_name", "timer_field", "on_unreachable", "rollout_log"})


def coerce_setting(name: str, value: Any) -> Any:
    """Convert a setting from text or number to its field type. Raises
    ValueError naming the setting for an unknown name or a value that is
    not of its type."""
    if name not in _FIELD_TYPES:
        raise ValueError(f"timeaware: unknown setting {name!r} (known: {', '.join(sorted(_FIELD_TYPES))})")
    try:
        return _coerce(name, value)
    except ValueError as exc:
        if str(exc).startswith("timeaware:"):
            raise
        raise ValueError(f"timeaware: {name} must be a number, got {value!r}") from exc


def _coerce(name: str, value: Any) -> Any:
    """Convert a setting from text or number to its field type (ValueError if impossible)."""
    if name in _STR_FIELDS:
        if value is None:
            return None
        return str(value).rstrip("/") if name == "url" else str(value)
    if name in _INT_FIELDS:
        f = float(value)
        if not f.is_integer():
            raise ValueError(f"timeaware: {name} must be an integer, got {value!r}")
        return int(f)
    return float(value)


def _from_env() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, var in _ENV.items():
        raw = os.environ.get(var)
        if raw is None or raw == "":
            continue
        try:
            out[name] = _coerce(name, raw)
        except ValueError:
            logger.warning("timeaware: ignoring %s=%r (not a valid %s)", var, raw, name)
    return out


_lock = threading.RLock()
_overrides: dict[str, Any] = {}
_base: Settings | None = None
_batchers: dict[Settings, Batcher] = {}
_first_use: dict[Settings, threading.Lock] = {}
_logs: dict[str, RolloutLog] = {}
_key_caches: dict[tuple[str, str | None], _KeyCache] = {}
_pid = os.getpid()


def _check_fork() -> None:
    """After a fork the parent's threads are gone: start afresh."""
    global _pid, _base
    if os.getpid() != _pid:
        _pid = os.getpid()
        _batchers.clear()
        _first_use.clear()
        _key_caches.clear()
        _logs.clear()
        _base = None


def configure(**kwargs: Any) -> Settings:
    """Set process-wide defaults (see `Settings` for the names) and return
    the resulting settings. Environment variables are re-read; explicit
    values here win over them. ``configure()`` with no argument just re-reads
    the environment; ``configure(reset=True)`` also forgets earlier calls.

    Raises ValueError for an unknown name or an invalid value (a setup
    mistake, unlike scoring, which never raises).
    """
    global _base
    reset = bool(kwargs.pop("reset", False))
    unknown = sorted(set(kwargs) - set(_FIELD_TYPES))
    if unknown:
        raise ValueError(f"timeaware: unknown setting(s) {', '.join(unknown)}")
    coerced = {k: _coerce(k, v) for k, v in kwargs.items()}
    with _lock:
        _check_fork()
        new = {} if reset else dict(_overrides)
        new.update(coerced)
        base = Settings(**{**_from_env(), **new}).validated()
        _overrides.clear()
        _overrides.update(new)
        _base = base
        return base


def settings(overrides: Mapping[str, Any] | None = None) -> Settings:
    """The settings in force, with per-call ``overrides`` (unknown names and
    invalid values are ignored with a warning). Never raises."""
    global _base
    with _lock:
        _check_fork()
        if _base is None:
            try:
                _base = Settings(**{**_from_env(), **_overrides}).validated()
            except ValueError as exc:
                logger.warning("%s; using the built-in defaults", exc)
                _base = Settings()
        base = _base
    if not overrides:
        return base
    picked: dict[str, Any] = {}
    for k, v in overrides.items():
        if k in _FIELD_TYPES:
            try:
                picked[k] = _coerce(k, v)
            except (TypeError, ValueError):
                logger.warning("timeaware: ignoring %s=%r", k, v)
    if not picked:
        return base
    try:
        return dataclasses.replace(base, **picked).validated()
    except ValueError as exc:
        logger.warning("%s; ignoring the per-call settings", exc)
        return base


def _finite(value: Any, default: float) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else default
    return default


def _answered(result: Any) -> bool:
    """Whether a batch result is an answer: an object whose score is a
    finite number (the server's fallback score for an item it rejected
    counts; a score that is text, a boolean or missing does not)."""
    if not isinstance(result, dict):
        return False
    score = result.get("score")
    return isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)


def _number(value: Any) -> float | None:
    """A finite float from a Python or numpy number, else None."""
    if isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)):
        item = getattr(value, "item", None)
        if not callable(item):
            return None
        try:
            value = item()
        except Exception:  # noqa: BLE001
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
    f = float(value)
    return f if math.isfinite(f) else None


class _KeyCache:
    """Detail keys per data source for one service: registry first, built-in
    copy while the registry cannot be fetched; fixed per data source once
    chosen."""

    _REFETCH_S = 30.0

    def __init__(self, client: Client) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._fixed: dict[str, tuple[str, ...]] = {}
        self._registry: dict[str, tuple[str, ...]] | None = None
        self._last_try = -math.inf
        self.source = "none"

    def keys(self, data_source: str, *, may_fetch: bool = True) -> tuple[str, ...]:
        with self._lock:
            fixed = self._fixed.get(data_source)
            if fixed is not None:
                return fixed
            if self._registry is None and may_fetch and time.monotonic() - self._last_try >= self._REFETCH_S:
                self._fetch()
            if self._registry is not None:
                keys = self._registry.get(data_source, ())
            else:
                keys = BUILTIN_KEYS.get(data_source, ())
                if not may_fetch and self.source == "none":
                    # Not asked yet: answer from the built-in copy without
                    # fixing the choice, so the registry can still decide.
                    return keys
            self._fixed[data_source] = keys
            return keys

    def prefetch(self) -> None:
        """Fetch the registry now unless it is known or was just tried."""
        with self._lock:
            if self._registry is None and time.monotonic() - self._last_try >= self._REFETCH_S:
                self._fetch()

    def _fetch(self) -> None:
        self._last_try = time.monotonic()
        try:
            entries = self._client.rewards(retries=0)
            reg: dict[str, tuple[str, ...]] = {}
            for e in entries:
                if isinstance(e, dict) and isinstance(e.get("data_source"), str):
                    keys = e.get("keys") or []
                    reg[e["data_source"]] = tuple(str(k) for k in keys if str(k) != "score")
            self._registry = reg
            self.source = "server"
        except Exception as exc:  # noqa: BLE001
            self.source = "builtin"
            logger.warning(
                "timeaware: cannot read the reward registry (%s); using the built-in key lists", exc
            )


def _key_cache(s: Settings) -> _KeyCache:
    with _lock:
        _check_fork()
        k = (s.url, s.token)
        kc = _key_caches.get(k)
        if kc is None:
            client = Client(
                s.url,
                s.token or "",
                timeout_s=min(s.timeout_s, 5.0),
                connect_timeout_s=s.connect_timeout_s,
                retries=0,
            )
            kc = _KeyCache(client)
            _key_caches[k] = kc
        return kc


def reward_keys(data_source: str, overrides: Mapping[str, Any] | None = None) -> list[str]:
    """The keys every result of ``data_source`` has: ``score`` then the
    details. May ask the server once; never raises."""
    try:
        return ["score", *_key_cache(settings(overrides)).keys(str(data_source))]
    except Exception:  # noqa: BLE001
        return ["score", *BUILTIN_KEYS.get(str(data_source), ())]


def fallback_result(
    data_source: Any, s: Settings | None = None, *, may_fetch: bool = False, reason: str = "not scored",
    cause: str = "verifier_unreachable",
) -> dict[str, float]:
    """``{"score": fallback_score, <each detail key>: 0.0}`` as an `Unscored`
    carrying ``reason`` and ``cause``. Never raises."""
    try:
        s = s or settings()
        keys = _key_cache(s).keys(str(data_source), may_fetch=may_fetch)
        fb = float(s.fallback_score)
    except Exception:  # noqa: BLE001
        keys, fb = BUILTIN_KEYS.get(str(data_source), ()), 0.0
    out = {"score": fb}
    for k in keys:
        out[k] = 0.0
    return Unscored(out, reason, cause)


#: The extra field where NegotiationAgentLoop leaves an episode's transcript.
TRANSCRIPT_FIELD = "timeaware_transcript"
#: The extra fields where an adapter leaves a rollout's group key and the
#: group's size for the group-wise rewards; `prepare_item` sends them as
#: the item's ``group`` and ``group_size``.
GROUP_FIELD = "timeaware_group"
GROUP_SIZE_FIELD = "timeaware_group_size"
#: The extra field where the get_duration tool marks an agent-loop rollout
#: whose timer could not start because the verifier did not answer.
UNREACHABLE_FIELD = "timeaware_unreachable"


def played_without_verifier(extra_info: Any, s: Settings) -> str | None:
    """Why a rollout was played without the verifier, so that its time was
    never measured and it must not be scored (scored, a timed row would get
    the reward of an untimed one), or None. That is a rollout with no timer
    and no ``elapsed_s`` whose extra fields carry `UNREACHABLE_FIELD` (the
    agent-loop tool could not start its timer), or whose tool's
    ``calc_reward`` in ``rollout_reward_scores`` is negative (the SGLang
    rollout's tool could not start or read its timer)."""
    if not isinstance(extra_info, Mapping) or extra_info.get("elapsed_s") is not None:
        return None
    for key in ("timer", s.timer_field):
        if isinstance(extra_info.get(key), str) and extra_info.get(key):
            return None
    mark = extra_info.get(UNREACHABLE_FIELD)
    if mark:
        return str(mark) if isinstance(mark, str) else "the verifier could not be reached to start the rollout's timer"
    scores = extra_info.get("rollout_reward_scores")
    if isinstance(scores, Mapping):
        v = _number(scores.get(s.tool_name))
        if v is not None and v < 0:
            return f"the {s.tool_name} tool could not reach the verifier to start or read the rollout's timer"
    return None


def prepare_item(
    data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any, s: Settings
) -> dict[str, Any]:
    """Build the JSON item the service scores from VeRL's arguments.

    ``extra_info`` is copied, never modified. The timer reaches the service
    as ``extra_info.timer``, taken from (first match wins):

    1. ``extra_info["timer"]`` as given;
    2. ``extra_info[s.timer_field]``: the token the get_duration tool stores
       in an agent-loop rollout's extra fields, which VeRL merges into
       ``extra_info``;
    3. otherwise, when ``extra_info`` has no ``elapsed_s``, the number
       ``extra_info["rollout_reward_scores"][s.tool_name]``, which is the
       tool's ``calc_reward`` (the elapsed seconds) in VeRL's SGLang
       multi-turn rollout, becomes ``extra_info["elapsed_s"]``. A negative
       value means the tool could not start or read its timer: such a
       rollout is not scored at all (`played_without_verifier`).

    A negotiation rollout of `timeaware.negotiation.NegotiationAgentLoop`
    is scored on the episode's whole transcript, which the loop leaves in
    ``extra_info["timeaware_transcript"]``, instead of the decoded response
    (the agent's turns and the opponent's, as tokens).

    A member of a group (for the group-wise rewards) carries its group's
    key and size in ``extra_info["timeaware_group"]`` and
    ``extra_info["timeaware_group_size"]``, where the adapters put them;
    they are sent as the item's ``group`` and ``group_size``.
    """
    ei: dict[str, Any] = dict(extra_info) if isinstance(extra_info, Mapping) else {}
    transcript = ei.pop(TRANSCRIPT_FIELD, None)
    group, group_size = ei.pop(GROUP_FIELD, None), ei.pop(GROUP_SIZE_FIELD, None)
    if isinstance(transcript, str) and transcript and str(data_source) == "negotiation":
        solution_str = transcript
    if not (isinstance(ei.get("timer"), str) and ei.get("timer")):
        token = ei.get(s.timer_field)
        if isinstance(token, str) and token:
            ei["timer"] = token
        elif ei.get("elapsed_s") is None:
            scores = ei.get("rollout_reward_scores")
            if isinstance(scores, Mapping):
                v = _number(scores.get(s.tool_name))
                if v is not None and v >= 0:
                    ei["elapsed_s"] = v
    if solution_str is None:
        solution_str = ""
    elif not isinstance(solution_str, str):
        solution_str = str(to_jsonable(solution_str))
    item = {
        "data_source": str(to_jsonable(data_source)),
        "solution_str": solution_str,
        "ground_truth": to_jsonable(ground_truth),
        "extra_info": to_jsonable(ei),
    }
    if group is not None:
        item["group"] = str(group)
        item["group_size"] = to_jsonable(group_size)
    return item


_ZERO_STATS: dict[str, int] = {
    "requests": 0,
    "items": 0,
    "item_errors": 0,
    "fallbacks": 0,
    "consecutive_fallbacks": 0,
    "longest_fallback_run": 0,
    "fallback_alarms": 0,
}


#: The extra_info fields that name a rollout's prompt, first found wins.
_PROMPT_ID_FIELDS = ("id", "index", "request_id", "prompt_id")


class RolloutLog:
    """Appends a JSON line for every item a process scores to
    ``<directory>/rollouts-<host>-<pid>.jsonl``, so that processes never
    share a file: the item as it was sent (``data_source``,
    ``solution_str``, ``ground_truth``, ``extra_info`` with the timer it
    was scored on), ``prompt_id`` (the first of extra_info's ``id``,
    ``index``, ``request_id``, ``prompt_id``), ``reward`` (None when the
    item got none), ``details``, ``unscored`` (why not) and ``time``. Each
    batch's lines are written and flushed together; a crash loses at most
    the batch being written, never a line already there. ``timeaware score
    --input <directory>`` re-scores the log by each line's data source and
    reports the rewards that changed."""

    def __init__(self, directory: str) -> None:
        try:
            os.makedirs(directory, exist_ok=True)
            self.path = os.path.join(directory, f"rollouts-{socket.gethostname()}-{os.getpid()}.jsonl")
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held for the process
        except OSError as exc:
            raise RolloutLogError(f"timeaware: rollout_log {directory}: cannot write the rollout log there: {exc}") \
                from exc
        self._lock = threading.Lock()

    def write(self, entries: Sequence[tuple[dict[str, Any], dict[str, float] | None, str]]) -> None:
        """Log (payload, result or None, reason unscored) entries."""
        lines = []
        now = time.time()
        for payload, result, why in entries:
            extra = payload.get("extra_info")
            pid = next((extra[k] for k in _PROMPT_ID_FIELDS if isinstance(extra, Mapping) and extra.get(k) is not None),
                       None)
            scored = result is not None and not isinstance(result, Unscored)
            rec = {
                "prompt_id": pid,
                "data_source": payload.get("data_source"),
                "solution_str": payload.get("solution_str"),
                "ground_truth": payload.get("ground_truth"),
                "extra_info": extra,
                "reward": float(result["score"]) if scored and result is not None else None,
                "details": {k: v for k, v in (result or {}).items() if k != "score"} if scored else {},
                "unscored": None if scored else (getattr(result, "reason", None) or why),
                "time": now,
            }
            lines.append(json.dumps(rec, ensure_ascii=False, allow_nan=False, default=str))
        if not lines:
            return
        with self._lock:
            self._file.write("\n".join(lines) + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _rollout_log(directory: str) -> RolloutLog:
    directory = os.path.abspath(directory)
    with _lock:
        _check_fork()
        log = _logs.get(directory)
        if log is None:
            log = RolloutLog(directory)
            _logs[directory] = log
        return log


class _Pending:
    __slots__ = ("data_source", "enqueued", "future", "payload", "unit")

    def __init__(self, data_source: str, payload: dict[str, Any], future: Future[dict[str, float]]) -> None:
        self.data_source = data_source
        self.payload = payload
        self.future = future
        self.enqueued = time.monotonic()
        self.unit = 0  # items of one unit (a group) travel in one request


def _units(pending: Sequence[_Pending], first: int) -> list[list[_Pending]]:
    """Cut queued items into the units a request never splits: the members
    of one group (consecutive items with the same ``group`` key) together,
    every other item alone. Units are numbered from ``first``."""
    units: list[list[_Pending]] = []
    for p in pending:
        key = p.payload.get("group")
        if units and key and units[-1][0].payload.get("group") == key:
            units[-1].append(p)
        else:
            units.append([p])
        p.unit = first + len(units)
    return units


class _RateLimitedLog:
    """Log the first few messages of a kind, then one in every hundred."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def warning(self, kind: str, msg: str, *args: Any) -> None:
        with self._lock:
            n = self._counts.get(kind, 0) + 1
            self._counts[kind] = n
        if n <= 5 or n % 100 == 0:
            logger.warning(msg + (f" (seen {n} times)" if n > 5 else ""), *args)


class Batcher:
    """Collects items from any thread or event loop and scores them in
    batches. See the module docstring for the contract."""

    def __init__(self, s: Settings) -> None:
        self.settings = s
        self.client = Client(
            s.url,
            s.token or "",
            timeout_s=s.timeout_s,
            connect_timeout_s=s.connect_timeout_s,
            retries=s.retries,
        )
        self._keys = _key_cache(s)
        self._log_file = _rollout_log(s.rollout_log) if s.rollout_log else None
        self._cond = threading.Condition()
        self._queue: deque[list[_Pending]] = deque()  # units, see _units
        self._queued = 0  # items in the queue
        self._next_unit = 0
        self._closed = False
        self._slots = threading.BoundedSemaphore(s.max_inflight)
        self._pool = ThreadPoolExecutor(max_workers=s.max_inflight, thread_name_prefix="timeaware-score")
        self._log = _RateLimitedLog()
        self._stats_lock = threading.Lock()
        self._stats = dict(_ZERO_STATS)
        self._unreported = 0  # fallbacks not yet reported to the server
        self._thread = threading.Thread(target=self._run, name="timeaware-batcher", daemon=True)
        self._thread.start()
        # Learn the key lists early, so that even a result produced before
        # any answer (the deadline guard) has the registry's keys.
        self._pool.submit(self._keys.prefetch)

    # ------------------------------------------------------------------ public

    def submit(self, data_source: str, payload: dict[str, Any]) -> Future[dict[str, float]]:
        """Queue one prepared item; the future completes with its result dict."""
        return self.submit_many([(data_source, payload)])[0]

    def submit_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> list[Future[dict[str, float]]]:
        """Queue prepared ``(data_source, payload)`` items together, so that
        they are cut into as few requests as ``max_batch`` allows."""
        pending = [_Pending(ds, payload, Future()) for ds, payload in items]
        with self._cond:
            closed = self._closed
            if not closed and pending:
                was_empty = not self._queue
                units = _units(pending, self._next_unit)
                self._next_unit += len(units)
                self._queue.extend(units)
                self._queued += len(pending)
                if was_empty or self._queued >= self.settings.max_batch:
                    self._cond.notify()
        if closed:
            for p in pending:
                self._resolve(p, None)
        return [p.future for p in pending]

    def count_outcomes(self, answered: Sequence[bool]) -> None:
        """Count rollouts scored on a path that did not go through this
        batcher (a tool's, an environment's or another route's), in order:
        True for one the verifier answered, which ends the run of fallbacks,
        False for one that got no answer, counted as this batcher counts its
        own: in the run, the fallbacks and those to report to the server.
        Raises `VerifierUnreachable` once the run passes the limit (in
        "raise" mode)."""
        missed = sum(1 for a in answered if not a)
        errs = self._count_run([{} if a else None for a in answered])
        with self._stats_lock:
            self._stats["fallbacks"] += missed
            self._unreported += missed
        if errs:
            raise next(iter(errs.values()))

    def count_unanswered(self, n: int) -> None:
        """`count_outcomes` for n rollouts that got no answer."""
        self.count_outcomes([False] * n)

    def stats(self) -> dict[str, int]:
        """Counters: batch requests sent, items sent, items the server
        rejected, items that got the client fallback, the current run of
        fallbacks in a row and the longest such run, and how many times the
        run guard fired (raised, or logged at ERROR)."""
        with self._stats_lock:
            return dict(self._stats)

    def close(self, timeout_s: float = 5.0) -> None:
        """Send what is queued, then stop. Later submits get the fallback."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout_s)
        self._pool.shutdown(wait=True)

    # ------------------------------------------------------------------ internals

    def _run(self) -> None:
        max_batch = self.settings.max_batch
        max_wait = self.settings.max_wait_ms / 1000.0
        while True:
            self._slots.acquire()
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:  # closed and drained
                    self._slots.release()
                    return
                deadline = self._queue[0][0].enqueued + max_wait
                while self._queued < max_batch and not self._closed:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                # Whole units only: a group larger than max_batch leaves
                # alone, in a request of its own.
                batch: list[_Pending] = []
                while self._queue and (not batch or len(batch) + len(self._queue[0]) <= max_batch):
                    batch.extend(self._queue.popleft())
                self._queued -= len(batch)
            try:
                self._pool.submit(self._send, batch)
            except RuntimeError:  # pool shut down underneath us
                self._send(batch)

    def _send(self, batch: list[_Pending]) -> None:
        try:
            results = self._score_or_fallback([p.payload for p in batch], [p.unit for p in batch])
            over = self._count_run(results)
            for i, (p, raw) in enumerate(zip(batch, results)):
                if over is not None and i in over:
                    with self._stats_lock:
                        self._stats["fallbacks"] += 1
                        self._unreported += 1
                    # A caller that gave up (its deadline, a cancelled
                    # task) cancelled the future: nothing to set.
                    with contextlib.suppress(InvalidStateError):
                        p.future.set_exception(over[i])
                    continue
                self._resolve(p, raw)
        except BaseException as exc:  # noqa: BLE001 - must resolve every future
            self._log.warning("internal", "timeaware: scoring failed unexpectedly: %r", exc)
        finally:
            try:
                for p in batch:
                    if not p.future.done():
                        self._resolve(p, None)
                if self._log_file is not None:
                    self._write_log(batch)
            finally:
                self._slots.release()

    def _write_log(self, batch: list[_Pending]) -> None:
        """Write the batch's items and results to the rollout log; a log
        that cannot be written is logged, never raised."""
        try:
            entries: list[tuple[dict[str, Any], dict[str, float] | None, str]] = []
            for p in batch:
                if p.future.cancelled():
                    entries.append((p.payload, None, "the caller stopped waiting"))
                    continue
                exc = p.future.exception()
                entries.append((p.payload, None if exc is not None else p.future.result(), repr(exc)))
            assert self._log_file is not None
            self._log_file.write(entries)
        except Exception as exc:  # noqa: BLE001
            self._log.warning("rollout_log", "timeaware: cannot write the rollout log: %r", exc)

    def _score(self, payloads: Sequence[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """Results for payloads, None where the client must fall back: no
        answer, or a result that is not an object with a numeric score. The
        fallbacks not yet reported go with the request, and count as
        reported once it is answered with a success status, whatever the
        body: the service took the request, and with it the report."""
        with self._stats_lock:
            self._stats["requests"] += 1
            self._stats["items"] += len(payloads)
            report, self._unreported = self._unreported, 0
        try:
            results = self.client.score_batch(payloads, client_fallbacks=report)
        except InvalidAnswer:
            raise
        except BaseException:
            with self._stats_lock:
                self._unreported += report
            raise
        return [r if _answered(r) else None for r in results]

    def _score_or_fallback(
        self, payloads: Sequence[dict[str, Any]], units: Sequence[int]
    ) -> list[dict[str, Any] | None]:
        """`_score`, with None for every item when the request fails. A 400
        or 413 for several units (items, or a group's members) is retried in
        halves, cut between units, so that one bad or huge item does not take
        its batch companions down with it; a group the service refuses whole
        (a 400 for its one unit) is rejected, each member carrying the
        service's reason."""
        try:
            return self._score(payloads)
        except TimeawareError as exc:
            mid = _unit_cut(units)
            if exc.status in (400, 413) and mid > 0:
                return (self._score_or_fallback(payloads[:mid], units[:mid])
                        + self._score_or_fallback(payloads[mid:], units[mid:]))
            if exc.status in (400, 413) and len(payloads) > 1:
                fb = float(self.settings.fallback_score)
                return [{"score": fb, "error": str(exc)} for _ in payloads]
            self._log.warning(
                f"request:{exc.status}",
                "timeaware: %d item(s) get the fallback score: %s",
                len(payloads),
                exc,
            )
            return [None] * len(payloads)
        except Exception as exc:  # noqa: BLE001
            self._log.warning(
                "request:other", "timeaware: %d item(s) get the fallback score: %r", len(payloads), exc
            )
            return [None] * len(payloads)

    def _count_run(self, results: Sequence[dict[str, Any] | None]) -> dict[int, VerifierUnreachable] | None:
        """Track the run of unanswered items in a row. Returns, when the run
        passes ``max_consecutive_fallbacks`` in "raise" mode, the error for
        each position past the limit (keyed by position); logs at ERROR in
        "fallback" mode."""
        s = self.settings
        limit = s.max_consecutive_fallbacks
        past: list[int] = []
        with self._stats_lock:
            st = self._stats
            for i, raw in enumerate(results):
                if raw is None:
                    st["consecutive_fallbacks"] += 1
                    st["longest_fallback_run"] = max(st["longest_fallback_run"], st["consecutive_fallbacks"])
                    if st["consecutive_fallbacks"] > limit:
                        past.append(i)
                else:
                    st["consecutive_fallbacks"] = 0
            run = st["consecutive_fallbacks"]
            if past:
                st["fallback_alarms"] += 1
        if not past:
            return None
        msg = (
            f"timeaware: {run} items in a row got no answer from the verifier at {s.url} "
            f"(more than max_consecutive_fallbacks={limit}); they are unscored (the fallback "
            f"{s.fallback_score:g}, or None where the adapter masks them, as timeaware.trl.GRPOReward "
            f"does). Check the service, or raise max_consecutive_fallbacks"
        )
        if s.on_unreachable == "fallback":
            logger.error("%s.", msg)
            return None
        err = VerifierUnreachable(s.url, msg + ', or set on_unreachable="fallback" to train on the fallback.')
        return {i: err for i in past}

    def _resolve(self, p: _Pending, raw: dict[str, Any] | None) -> None:
        try:
            s = self.settings
            keys = self._keys.keys(p.data_source)
            if raw is None:
                with self._stats_lock:
                    self._stats["fallbacks"] += 1
                    self._unreported += 1
                out = {"score": float(s.fallback_score)}
                for k in keys:
                    out[k] = 0.0
                out = Unscored(out, f"no answer from the verifier at {s.url}")
            else:
                err = raw.get("error")
                if err:
                    with self._stats_lock:
                        self._stats["item_errors"] += 1
                    self._log.warning(
                        "item:" + p.data_source, "timeaware: %s item not scored: %s", p.data_source, err
                    )
                out = {"score": _finite(raw.get("score"), float(s.fallback_score))}
                for k in keys:
                    out[k] = _finite(raw.get(k), 0.0)
                if err:
                    out = Unscored(out, f"rejected by the verifier: {err}", "rejected")
        except BaseException:  # noqa: BLE001
            out = fallback_result(p.data_source, self.settings, reason="internal error", cause="internal")
        with contextlib.suppress(Exception):  # already resolved
            p.future.set_result(out)


def _unit_cut(units: Sequence[int]) -> int:
    """The position nearest the middle where one unit ends and the next
    begins; 0 when all items are of one unit."""
    mid = len(units) // 2
    for d in range(len(units)):
        for i in (mid - d, mid + d):
            if 0 < i < len(units) and units[i] != units[i - 1]:
                return i
    return 0


def check_reachable(s: Settings) -> None:
    """Ask the service for its reward registry (``GET /v1/rewards``, with the
    configured retries), which needs the bearer token when the service has
    one. When no answer comes, or an error such as 401: raise
    `VerifierUnreachable` naming the URL and the reason, or, with
    ``on_unreachable="fallback"``, log at ERROR."""
    client = Client(
        s.url, s.token or "", timeout_s=s.timeout_s, connect_timeout_s=s.connect_timeout_s, retries=s.retries
    )
    try:
        client.rewards()
        return
    except TimeawareError as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - e.g. an answer that is not the registry
        reason = repr(exc)
    finally:
        client.close()
    msg = (
        f"timeaware: the verifier at {s.url} cannot be reached ({reason}). Start `timeaware serve` there "
        "or point TIMEAWARE_URL (or configure(url=...)) at it"
    )
    if s.on_unreachable == "fallback":
        logger.error(
            "%s; on_unreachable=fallback: rewards get the fallback score %g until it answers.", msg, s.fallback_score
        )
        return
    raise VerifierUnreachable(s.url, msg + '; on_unreachable="fallback" trains on fallback scores instead.')


def ready(s: Settings) -> bool:
    """Whether the batcher for these settings exists (its first-use check passed)."""
    with _lock:
        _check_fork()
        return s in _batchers


def get_batcher(s: Settings, *, check: bool = True) -> Batcher:
    """The batcher for these settings, started on first use after
    `check_reachable` (which may raise `VerifierUnreachable`; the next call
    checks again), or without it when ``check`` is False. Concurrent first
    uses share one check."""
    with _lock:
        _check_fork()
        b = _batchers.get(s)
        if b is not None:
            return b
        gate = _first_use.setdefault(s, threading.Lock())
    with gate:
        with _lock:
            b = _batchers.get(s)
            if b is not None:
                return b
        if check:
            check_reachable(s)
        with _lock:
            b = _batchers.get(s)
            if b is None:
                b = Batcher(s)
                _batchers[s] = b
            return b


# _RUN_STATS are the counters of a run of fallbacks, which stats() takes
# the largest of across batchers instead of summing.
_RUN_STATS = ("consecutive_fallbacks", "longest_fallback_run")


def stats(overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
    """Counters of the scoring this process did.

    Without ``overrides``, of every verifier it scored with: the settings
    of the environment and every ``url`` or other setting an adapter was
    given (``GRPOReward(url=...)``), the counts summed and the runs of
    fallbacks the longest. With ``overrides``, of the batcher of those
    settings only.
    """
    with _lock:
        if overrides:
            b = _batchers.get(settings(overrides))
            batchers = [b] if b is not None else []
        else:
            batchers = list(_batchers.values())
    out = dict(_ZERO_STATS)
    for b in batchers:
        for k, v in b.stats().items():
            out[k] = max(out[k], v) if k in _RUN_STATS else out[k] + v
    return out


def count_unanswered(n: int, overrides: Mapping[str, Any] | None = None) -> None:
    """Count n rollouts that got no answer from the verifier on a path that
    did not send them through the batcher (a tool's or an environment's
    call that failed), in the same run of fallbacks that
    ``max_consecutive_fallbacks`` bounds and the same counters (`stats`).

    Raises `VerifierUnreachable` as scoring does: at the first use of a
    verifier that does not answer, naming its URL, and once the run passes
    the limit (in "raise" mode)."""
    if n > 0:
        get_batcher(settings(overrides)).count_unanswered(n)


def count_outcomes(answered: Sequence[bool], overrides: Mapping[str, Any] | None = None, *,
                   check: bool = True) -> None:
    """Count, in order, rollouts a path scored without the batcher: True
    for one the verifier answered (it ends the run of fallbacks), False for
    one it did not (counted as `count_unanswered` counts it). Raises
    `VerifierUnreachable` as `count_unanswered` does; with ``check`` False,
    only once the run passes the limit, for a path whose own server found
    the verifier down (this process may not be able to ask it). Answers
    alone ask nothing of the verifier: they end the run of a batcher
    already in use."""
    if not answered:
        return
    s = settings(overrides)
    if all(answered):
        with _lock:
            _check_fork()
            b = _batchers.get(s)
        if b is not None:
            b.count_outcomes(answered)
        return
    get_batcher(s, check=check).count_outcomes(answered)


def shutdown() -> None:
    """Flush and stop every batcher, close the rollout logs and forget the key caches. The next
    scoring call starts afresh (tests use this between servers)."""
    with _lock:
        batchers = list(_batchers.values())
        _batchers.clear()
        _first_use.clear()
        _key_caches.clear()
        logs = list(_logs.values())
        _logs.clear()
    for b in batchers:
        with contextlib.suppress(Exception):
            b.close()
    for log in logs:
        with contextlib.suppress(Exception):
            log.close()
