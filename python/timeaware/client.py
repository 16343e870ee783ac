"""A small HTTP client for the timeaware verifier service (`timeaware serve`).

Standard library only. One `Client` may be shared by any number of threads:
each thread keeps its own keep-alive connection to the server.

Contract:

* The base URL comes from the ``base_url`` argument, else ``TIMEAWARE_URL``,
  else ``http://127.0.0.1:8080``; the bearer token from ``token``, else
  ``TIMEAWARE_SERVE_TOKEN``, else none.
* The base URL may list replicas, comma-separated (replicas that share the
  timer secret, as `timeaware.ray.start_verifiers` starts them). A replica on
  this machine is used first, then the others in the order given; a request
  that cannot reach a replica, or that a replica answers 429/502/503/504 to,
  moves to the next one at once, and the client stays there, trying its
  first choice again after ``failback_s``.
* Every request has a connect timeout and a read timeout.
* Requests are retried with exponential backoff (plus jitter) on connection
  errors and on 429 and 503 answers, waiting what the server's
  ``Retry-After`` asks for (capped by ``max_retry_wait_s``). Read timeouts
  and 502/504 answers are retried only for requests marked idempotent,
  because the server may already have acted on them.
* A non-2xx answer that is not retried, or the last failed attempt, raises
  `TimeawareError`; connection failures and timeouts raise its subclass
  `ServerUnavailable`. A 2xx answer whose body is not the JSON the request
  expects raises its subclass `InvalidAnswer`, at once: the request reached
  the service, which has acted on it. Nothing else escapes except
  programming errors.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import math
import os
import random
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, cast

__all__ = [
    "DEFAULT_URL",
    "Client",
    "InvalidAnswer",
    "ServerUnavailable",
    "TimeawareError",
    "to_jsonable",
]

DEFAULT_URL = "http://127.0.0.1:8080"

# Statuses a client should retry whatever the method: the server said it did
# not process the request.
_RETRY_ALWAYS = frozenset({429, 503})
# Statuses retried only for idempotent requests (a proxy may have forwarded
# the request before failing).
_RETRY_IDEMPOTENT = frozenset({502, 504})


class TimeawareError(Exception):
    """A request to the service failed.

    Attributes:
        status: the HTTP status, or None when no answer arrived.
        code: the service's error code (``error.code``), when it sent one.
        field: the request field the service blamed (``error.field``), if any.
        message: the human-readable reason.
        retry_after: seconds the server asked the client to wait, if it did.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        field: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.field = field
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.code:
            parts.append(self.code)
        if self.field:
            parts.append(f"field {self.field}")
        prefix = " ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class ServerUnavailable(TimeawareError):
    """No usable answer: connection refused or reset, a timeout, or a
    retryable status (429/5xx) that persisted through every retry."""


class ToolUnavailable(RuntimeError):
    """A tool call the verifier could not answer. The environments for TRL
    (`timeaware.trl.GetDurationEnv`, `timeaware.openenv.TimelySession`)
    raise it so that TRL counts the call in ``tools/failure_frequency`` and
    gives the model its text as the tool's error."""


class InvalidAnswer(TimeawareError):
    """The service answered with a success status (``status``), but the body
    is not what the request expects: not JSON, or JSON of another shape.
    The request reached the service and was acted on, so it is not
    retried."""


def to_jsonable(value: Any) -> Any:
    """Return a copy of ``value`` that `json.dumps` accepts and that is valid
    JSON (no NaN or infinity).

    VeRL hands reward functions numpy scalars and arrays inside ``extra_info``
    and ``ground_truth``; those become Python numbers and lists. Non-finite
    floats become None, bytes are decoded as UTF-8 (with replacement), sets
    and tuples become lists, mapping keys become strings, and anything else
    unknown becomes its ``str()``. Never raises for acyclic input.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    # numpy arrays and scalars (and torch tensors) without importing them.
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        with contextlib.suppress(Exception):  # fall through to str()
            return to_jsonable(tolist())
    item = getattr(value, "item", None)
    if callable(item):
        with contextlib.suppress(Exception):
            return to_jsonable(item())
    try:
        return str(value)
    except Exception:  # noqa: BLE001
        return None


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
        return secs if math.isfinite(secs) and secs >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class _Connection(http.client.HTTPConnection):
    """HTTPConnection with separate connect and read timeouts."""

    def __init__(self, host: str, port: int | None, connect_timeout: float, read_timeout: float) -> None:
        super().__init__(host, port, timeout=connect_timeout)
        self._read_timeout = read_timeout

    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(self._read_timeout)


class _TLSConnection(http.client.HTTPSConnection):
    """HTTPSConnection with separate connect and read timeouts."""

    def __init__(self, host: str, port: int | None, connect_timeout: float, read_timeout: float) -> None:
        super().__init__(host, port, timeout=connect_timeout, context=ssl.create_default_context())
        self._read_timeout = read_timeout

    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(self._read_timeout)


class Client:
    """Client for the verifier service.

    Args:
        base_url: service root, e.g. ``http://127.0.0.1:8080`` (default: env
            ``TIMEAWARE_URL``, else `DEFAULT_URL`).
        token: bearer token (default: env ``TIMEAWARE_SERVE_TOKEN``).
        timeout_s: read timeout per attempt, seconds.
        connect_timeout_s: TCP (and TLS) connect timeout per attempt, seconds.
        retries: extra rounds after the first for retryable failures; a round
            tries every replica, moving on at once, and the client waits
            between rounds.
        backoff_s: first backoff; doubles per attempt, with +-50% jitter.
        max_retry_wait_s: cap on any single wait, including Retry-After.
        failback_s: after a move to another replica, how long to stay before
            trying the first choice again.

    Thread-safe. Each thread reuses one keep-alive connection.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 10.0,
        connect_timeout_s: float = 2.0,
        retries: int = 2,
        backoff_s: float = 0.1,
        max_retry_wait_s: float = 5.0,
        failback_s: float = 30.0,
    ) -> None:
        raw = base_url or os.environ.get("TIMEAWARE_URL") or DEFAULT_URL
        urls = [u.strip().rstrip("/") for u in raw.split(",") if u.strip()]
        if not urls:
            raise ValueError(f"timeaware: base URL {raw!r} names no URL")
        self._endpoints = []
        for url in urls:
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                raise ValueError(f"timeaware: base URL {url!r} is not an http(s) URL")
            self._endpoints.append(_Endpoint(url, parsed.scheme, parsed.hostname, parsed.port, parsed.path.rstrip("/")))
        if len(self._endpoints) > 1:
            # Replicas on this machine first; each group in a random order of
            # this client's own, so that clients spread over the replicas and
            # do not all move to the same one when theirs fails.
            rnd = random.Random()
            keyed = [(not _is_local(e.host), rnd.random(), e) for e in self._endpoints]
            self._endpoints = [e for _, _, e in sorted(keyed, key=lambda k: (k[0], k[1]))]
        self.base_url = ",".join(e.url for e in self._endpoints)
        # (current replica, when the client moved to it): one tuple, so that
        # threads always see the two together.
        self._state: tuple[int, float] = (0, 0.0)
        self.failback_s = float(failback_s)
        if token is None:
            token = os.environ.get("TIMEAWARE_SERVE_TOKEN") or None
        self.token = token or None
        self.timeout_s = float(timeout_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.retries = max(0, int(retries))
        self.backoff_s = max(0.0, float(backoff_s))
        self.max_retry_wait_s = max(0.0, float(max_retry_wait_s))
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, token={'set' if self.token else 'none'})"

    # ------------------------------------------------------------------ transport

    def _conns(self) -> dict[int, http.client.HTTPConnection]:
        conns = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        return conns

    def _connection(self, i: int) -> http.client.HTTPConnection:
        conns = self._conns()
        conn = conns.get(i)
        if conn is None:
            e = self._endpoints[i]
            cls = _TLSConnection if e.scheme == "https" else _Connection
            conn = conns[i] = cls(e.host, e.port, self.connect_timeout_s, self.timeout_s)
        return conn

    def _drop_connection(self, i: int) -> None:
        conn = self._conns().pop(i, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        """Close this thread's connections (others close when their threads end)."""
        for i in list(self._conns()):
            self._drop_connection(i)

    def _pick(self) -> int:
        """The replica to try first: the current one, or the first choice
        again once failback_s has passed since a move."""
        current, moved_at = self._state
        if current != 0 and time.monotonic() - moved_at >= self.failback_s:
            self._state = (0, 0.0)
            return 0
        return current

    def _move_from(self, i: int) -> int:
        """Make the replica after i current (when i still is) and return it."""
        nxt = (i + 1) % len(self._endpoints)
        if self._state[0] == i and nxt != i:
            self._state = (nxt, time.monotonic())
        return nxt

    def _once(
        self, i: int, method: str, path: str, body: bytes | None, extra: Mapping[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One attempt on replica i. Returns (status, headers, body). Raises
        `_ConnectFailed` when no connection could be made (the request was not
        sent), else OSError / http.client.HTTPException from sending or
        reading."""
        conn = self._connection(i)
        if conn.sock is None:
            try:
                conn.connect()
            except BaseException as exc:
                self._drop_connection(i)
                if isinstance(exc, (OSError, http.client.HTTPException)):
                    raise _ConnectFailed(exc) from exc
                raise
        headers = {"Accept": "application/json", "User-Agent": "timeaware-python"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if extra:
            headers.update(extra)
        try:
            conn.request(method, self._endpoints[i].prefix + path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except BaseException:
            self._drop_connection(i)
            raise
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        if resp.will_close:
            self._drop_connection(i)
        return resp.status, hdrs, data

    def _attempt(
        self, i: int, method: str, path: str, body: bytes | None, extra: Mapping[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """`_once`, repeated at once on a fresh connection when a reused
        keep-alive connection turns out to have been closed by the server
        (that costs no retry: the request never reached a handler)."""
        conn = self._conns().get(i)
        reused = conn is not None and conn.sock is not None
        try:
            return self._once(i, method, path, body, extra)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if not reused:
                raise
            return self._once(i, method, path, body, extra)

    def _sleep_before_retry(self, attempt: int, retry_after: float | None) -> None:
        if retry_after is not None:
            # What the server asked for, plus a little spread so that callers
            # told the same thing do not all return at the same instant.
            wait = retry_after * random.uniform(1.0, 1.2)
        else:
            wait = self.backoff_s * (2**attempt) * random.uniform(0.5, 1.5)
        time.sleep(min(wait, self.max_retry_wait_s))

    def request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        idempotent: bool | None = None,
        retries: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request and return the decoded JSON answer (None for an
        empty body); `_request` with the arguments and errors described
        there, less the status."""
        return self._request(method, path, payload, idempotent=idempotent, retries=retries, headers=headers)[1]

    def _request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        idempotent: bool | None = None,
        retries: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Send one request and return its 2xx status and the decoded JSON
        answer (None for an empty body).

        Args:
            method: HTTP method.
            path: path below the base URL, starting with ``/``.
            payload: JSON-serialisable body (passed through `to_jsonable`),
                or None for no body.
            idempotent: whether a timed-out attempt may be repeated; defaults
                to True for GET, HEAD and DELETE.
            retries: override of the client's retry count for this request.
            headers: extra request headers.

        Raises:
            ServerUnavailable: no answer, or a retryable status to the end.
            InvalidAnswer: a 2xx answer whose body is not JSON.
            TimeawareError: any other non-2xx answer.
        """
        method = method.upper()
        if idempotent is None:
            idempotent = method in ("GET", "HEAD", "DELETE")
        n = len(self._endpoints)
        # Each round tries every replica, moving on at once; the client waits
        # between rounds. A request that may have reached a replica is not
        # sent to another unless it is idempotent: a timer created twice
        # would leave an orphan bound to its rollout id.
        rounds = 1 + (self.retries if retries is None else max(0, int(retries)))
        body = None
        if payload is not None:
            body = json.dumps(to_jsonable(payload), ensure_ascii=False, allow_nan=False).encode("utf-8")
        last: TimeawareError | None = None
        i = self._pick()
        tries = rounds * n
        tried = 0  # replicas tried since the last wait
        for attempt in range(tries):
            url = self._endpoints[i].url
            retry_after: float | None = None
            may_move = True
            try:
                status, resp_headers, data = self._attempt(i, method, path, body, headers)
            except _ConnectFailed as exc:
                last = ServerUnavailable(f"{method} {path}: cannot connect to {url}: {exc.cause!r}")
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                # Typically a keep-alive socket the server had closed before
                # reading the request; repeating is safe for any method, on
                # the same replica.
                last = ServerUnavailable(f"{method} {path}: connection lost: {exc!r} ({url})")
                may_move = idempotent
            except (socket.timeout, TimeoutError) as exc:
                last = ServerUnavailable(f"{method} {path}: no answer within {self.timeout_s:g}s ({url})")
                if not idempotent:
                    # The server may have acted on it; do not repeat.
                    raise last from exc
            except (OSError, http.client.HTTPException) as exc:
                last = ServerUnavailable(f"{method} {path}: {exc!r} ({url})")
                may_move = idempotent
            else:
                if 200 <= status < 300:
                    if not data.strip():
                        return status, None
                    try:
                        return status, json.loads(data.decode("utf-8"))
                    except (UnicodeDecodeError, ValueError) as exc:
                        raise InvalidAnswer(
                            f"{method} {path}: answer is not JSON: {data[:200]!r}", status=status
                        ) from exc
                err = _error_from(method, path, status, resp_headers, data)
                retryable = status in _RETRY_ALWAYS or (idempotent and status in _RETRY_IDEMPOTENT)
                if not retryable:
                    raise err
                last = ServerUnavailable(
                    err.message, status=status, code=err.code, field=err.field, retry_after=err.retry_after
                )
                retry_after = err.retry_after
            if attempt + 1 >= tries:
                break
            tried += 1
            if n > 1 and may_move:
                i = self._move_from(i)
            if tried >= n or not may_move:
                # Every replica failed since the last wait (or the request
                # stays on its replica): back off.
                self._sleep_before_retry(attempt // n if n > 1 else attempt, retry_after)
                tried = 0
        assert last is not None
        raise last

    # ------------------------------------------------------------------ endpoints

    def healthz(self) -> bool:
        """True when ``GET /healthz`` answers 200 with status ok (one attempt
        per replica)."""
        try:
            doc = self.request("GET", "/healthz", retries=0)
        except TimeawareError:
            return False
        return isinstance(doc, dict) and doc.get("status") == "ok"

    def rewards(self, *, retries: int | None = None) -> list[dict[str, Any]]:
        """The reward registry: one entry per data source with its detail ``keys``."""
        status, doc = self._request("GET", "/v1/rewards", retries=retries)
        if not isinstance(doc, dict) or not isinstance(doc.get("rewards"), list):
            raise InvalidAnswer("GET /v1/rewards: answer has no rewards list", status=status)
        return cast("list[dict[str, Any]]", doc["rewards"])

    def score(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """Score one item with ``POST /v1/score``. Scoring is idempotent."""
        return cast("dict[str, Any]", self.request("POST", "/v1/score", item, idempotent=True))

    def score_batch(
        self, items: Sequence[Mapping[str, Any]], *, client_fallbacks: int = 0
    ) -> list[dict[str, Any]]:
        """Score items with ``POST /v1/score/batch``; results are in item order.

        ``client_fallbacks`` reports to the server how many items this client
        gave its fallback score since its last successful request (the
        server's ``timeaware_client_fallback_items_total``).

        Raises `InvalidAnswer` when the answer's ``results`` is not a list of
        the same length as ``items`` (the service took the request, and with
        it ``client_fallbacks``).
        """
        extra = {"Timeaware-Client-Fallbacks": str(int(client_fallbacks))} if client_fallbacks > 0 else None
        status, doc = self._request("POST", "/v1/score/batch", {"items": list(items)}, idempotent=True, headers=extra)
        results = doc.get("results") if isinstance(doc, dict) else None
        if not isinstance(results, list) or len(results) != len(items):
            raise InvalidAnswer(
                f"POST /v1/score/batch: expected {len(items)} results, got "
                f"{len(results) if isinstance(results, list) else type(results).__name__}",
                status=status,
            )
        return cast("list[dict[str, Any]]", results)

    def create_timer(
        self,
        rollout_id: str,
        *,
        speed_factor: float | None = None,
        jitter: float | None = None,
        ttl_s: float | None = None,
        time_limit_s: float | None = None,
    ) -> dict[str, Any]:
        """Start a timer for a rollout (``POST /v1/timers``). Returns the
        answer, whose ``timer`` is the signed token to keep."""
        body: dict[str, Any] = {"rollout_id": str(rollout_id)}
        for key, val in (
            ("speed_factor", speed_factor),
            ("jitter", jitter),
            ("ttl_s", ttl_s),
            ("time_limit_s", time_limit_s),
        ):
            if val is not None:
                body[key] = float(val)
        return cast("dict[str, Any]", self.request("POST", "/v1/timers", body, idempotent=False))

    def read_timer(self, timer: str) -> dict[str, Any]:
        """Read a timer (``GET /v1/timers/{timer}``) by token or rollout id."""
        return cast("dict[str, Any]", self.request("GET", "/v1/timers/" + urllib.parse.quote(timer, safe="")))

    def add_span(
        self,
        timer: str,
        *,
        seconds: float | None = None,
        simulated: bool = False,
        action: str | None = None,
    ) -> dict[str, Any]:
        """Report tool time to a timer (``POST /v1/timers/{timer}/spans``).

        Either ``seconds`` (time spent in a tool; with ``simulated`` it is
        latency added without wall time passing) or ``action`` ("start" or
        "end"). Returns the new reading; its ``timer`` token replaces the old
        one. Not retried after a timeout (a span must not count twice).
        """
        body: dict[str, Any] = {}
        if action is not None:
            body["action"] = action
        if seconds is not None:
            body["seconds"] = float(seconds)
            if simulated:
                body["simulated"] = True
        path = "/v1/timers/" + urllib.parse.quote(timer, safe="") + "/spans"
        return cast("dict[str, Any]", self.request("POST", path, body, idempotent=False))

    def stop_timer(self, timer: str) -> dict[str, Any]:
        """Stop a timer (``DELETE /v1/timers/{timer}``); returns the final reading."""
        return cast("dict[str, Any]", self.request("DELETE", "/v1/timers/" + urllib.parse.quote(timer, safe="")))

    def get_duration(
        self, *, timer: str | None = None, rollout_id: str | None = None
    ) -> dict[str, Any]:
        """The ``get_duration`` tool endpoint: ``{"text", "elapsed_s", ...}``.
        Reading a timer has no side effect, so it is retried like a GET."""
        body: dict[str, Any] = {}
        if timer:
            body["timer"] = timer
        if rollout_id:
            body["rollout_id"] = str(rollout_id)
        return cast("dict[str, Any]", self.request("POST", "/v1/tools/get_duration", body, idempotent=True))


class _Endpoint:
    """One replica's URL, split."""

    __slots__ = ("host", "port", "prefix", "scheme", "url")

    def __init__(self, url: str, scheme: str, host: str, port: int | None, prefix: str) -> None:
        self.url, self.scheme, self.host, self.port, self.prefix = url, scheme, host, port, prefix


_local_hosts: dict[str, bool] = {}


def _is_local(host: str) -> bool:
    """Whether host names this machine: a loopback name, or an address a
    socket can be bound to here."""
    if host in _local_hosts:
        return _local_hosts[host]
    local = host in ("localhost", "127.0.0.1", "::1")
    if not local:
        try:
            for family, _, _, _, addr in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP):
                with socket.socket(family, socket.SOCK_STREAM) as s:
                    try:
                        s.bind((addr[0], 0))
                        local = True
                        break
                    except OSError:
                        continue
        except OSError:
            local = False
    _local_hosts[host] = local
    return local


class _ConnectFailed(Exception):
    """No connection could be made; the request was not sent."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _error_from(
    method: str, path: str, status: int, headers: Mapping[str, str], data: bytes
) -> TimeawareError:
    """Build a TimeawareError from a non-2xx answer (JSON error body or text)."""
    code = field = None
    message = ""
    try:
        doc = json.loads(data.decode("utf-8")) if data else None
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict):
            code = err.get("code") if isinstance(err.get("code"), str) else None
            field = err.get("field") if isinstance(err.get("field"), str) else None
            message = str(err.get("message") or "")
        elif isinstance(err, str):
            message = err
    if not message:
        message = data[:300].decode("utf-8", errors="replace").strip() or http.client.responses.get(
            status, ""
        )
    return TimeawareError(
        f"{method} {path}: {message}",
        status=status,
        code=code,
        field=field,
        retry_after=_parse_retry_after(headers.get("retry-after")),
    )
