"""Unit tests of the Python adapter's batching, fallback and input handling,
against a tiny in-process stub of the verifier's HTTP API.

These check client-side logic only (how calls become batch requests, how
answers become results). The adapter's behaviour against the real server is
tested in test_adapter.py.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from timeaware import scoring
from timeaware import verl as tv
from timeaware.client import Client, InvalidAnswer, ServerUnavailable, TimeawareError, to_jsonable

STUB_KEYS = {"stub/echo": ["echo", "n"], "timely/general": list(scoring.BUILTIN_KEYS["timely/general"])}


class StubState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.batches: list[int] = []
        self.max_items = 10_000
        self.fail_next_with_503 = 0
        self.token: str | None = None
        self.delay_s = 0.0
        self.garbage = False
        self.garbage_body = b"not json at all"
        self.rewards_calls = 0
        self.fallback_reports: list[int] = []


def _make_handler(state: StubState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):  # keep pytest output clean
            pass

        def _send(self, status: int, doc, headers: dict | None = None) -> None:
            body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _authorised(self) -> bool:
            if state.token and self.headers.get("Authorization") != f"Bearer {state.token}":
                self._send(401, {"error": {"code": "unauthorized", "message": "bearer token required"}})
                return False
            return True

        def do_GET(self):
            if not self._authorised():
                return
            if self.path == "/v1/rewards":
                with state.lock:
                    state.rewards_calls += 1
                self._send(200, {"rewards": [{"data_source": k, "keys": v} for k, v in STUB_KEYS.items()]})
            else:
                self._send(404, {"error": {"code": "not_found", "message": self.path}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self._authorised():
                return
            if self.path != "/v1/score/batch":
                self._send(404, {"error": {"code": "not_found", "message": self.path}})
                return
            with state.lock:
                if state.fail_next_with_503 > 0:
                    state.fail_next_with_503 -= 1
                    self._send(503, {"error": {"code": "busy", "message": "try later"}}, {"Retry-After": "0"})
                    return
            items = json.loads(raw)["items"]
            with state.lock:
                state.batches.append(len(items))
                report = self.headers.get("Timeaware-Client-Fallbacks")
                if report is not None:
                    state.fallback_reports.append(int(report))
            if len(items) > state.max_items:
                self._send(413, {"error": {"code": "too_large", "message": "too many items"}})
                return
            if state.delay_s:
                time.sleep(state.delay_s)
            if state.garbage:
                self._send(200, state.garbage_body)
                return
            results = []
            for it in items:
                ei = it.get("extra_info") or {}
                if ei.get("bad"):
                    results.append({"score": -0.5, "echo": 0, "n": 0, "error": "extra_info.bad: rejected"})
                    continue
                r = {"score": float(ei.get("value", 0)), "echo": float(ei.get("value", 0)), "extra": 7}
                if "n" not in ei.get("omit", []):
                    r["n"] = len(it.get("solution_str", ""))
                results.append(r)
            self._send(200, {"results": results})

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients that time out on purpose break pipes; not news


@pytest.fixture
def stub():
    state = StubState()
    server = _QuietServer(("127.0.0.1", 0), _make_handler(state))
    server.daemon_threads = True
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    scoring.shutdown()
    scoring.configure(reset=True, url=url, max_wait_ms=20, retries=2)
    yield state, url
    scoring.shutdown()
    scoring.configure(reset=True)
    server.shutdown()
    server.server_close()


def test_concurrent_async_calls_become_fewer_larger_batches(stub):
    state, _ = stub

    async def main():
        return await asyncio.gather(
            *(tv.compute_score("stub/echo", "x" * (i % 7), None, {"value": i}) for i in range(200))
        )

    results = asyncio.run(main())
    assert [r["score"] for r in results] == [float(i) for i in range(200)]
    assert [r["n"] for r in results] == [float(i % 7) for i in range(200)]
    assert sum(state.batches) == 200
    assert len(state.batches) < 200
    assert max(state.batches) > 1
    assert all(set(r) == {"score", "echo", "n"} for r in results)


def test_threads_calling_sync_variant_are_batched_together(stub):
    state, _ = stub
    out: dict[int, dict] = {}
    barrier = threading.Barrier(40)

    def worker(i: int) -> None:
        barrier.wait()
        out[i] = tv.compute_score_sync("stub/echo", "", None, {"value": i})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: r["score"] for i, r in out.items()} == {i: float(i) for i in range(40)}
    assert sum(state.batches) == 40
    assert len(state.batches) < 40


def test_batch_variant_splits_at_max_batch_and_keeps_order(stub):
    state, url = stub
    scoring.configure(max_batch=100)
    n = 250
    results = tv.compute_score_batch(
        ["stub/echo"] * n, ["ab"] * n, [None] * n, [{"value": i} for i in range(n)]
    )
    assert [r["score"] for r in results] == [float(i) for i in range(n)]
    assert sorted(state.batches) == [50, 100, 100]


def test_async_batch_variant(stub):
    state, _ = stub
    n = 30
    results = asyncio.run(
        tv.compute_score_batch_async(
            ["stub/echo"] * n, [""] * n, [None] * n, [{"value": i} for i in range(n)]
        )
    )
    assert [r["score"] for r in results] == [float(i) for i in range(n)]
    assert state.batches == [n]


def test_results_have_exactly_the_registry_keys(stub):
    _, _ = stub
    r = tv.compute_score_sync("stub/echo", "abc", None, {"value": 2, "omit": ["n"]})
    # "extra" (not in the registry) is dropped; missing "n" is filled with 0.
    assert r == {"score": 2.0, "echo": 2.0, "n": 0.0}
    assert tv.reward_keys("stub/echo") == ["score", "echo", "n"]


def test_rejected_item_gets_server_fallback_and_companions_are_unaffected(stub):
    state, _ = stub

    async def main():
        return await asyncio.gather(
            tv.compute_score("stub/echo", "", None, {"value": 1}),
            tv.compute_score("stub/echo", "", None, {"bad": True}),
            tv.compute_score("stub/echo", "", None, {"value": 3}),
        )

    a, b, c = asyncio.run(main())
    assert a["score"] == 1.0 and c["score"] == 3.0
    assert b == {"score": -0.5, "echo": 0.0, "n": 0.0}
    assert scoring.stats()["item_errors"] == 1


def test_413_splits_the_batch_until_it_fits(stub):
    state, _ = stub
    state.max_items = 8
    n = 50
    results = tv.compute_score_batch(
        ["stub/echo"] * n, [""] * n, [None] * n, [{"value": i} for i in range(n)]
    )
    assert [r["score"] for r in results] == [float(i) for i in range(n)]
    assert sum(b for b in state.batches if b <= 8) == n


def test_503_with_retry_after_is_retried(stub):
    state, _ = stub
    state.fail_next_with_503 = 2
    r = tv.compute_score_sync("stub/echo", "", None, {"value": 5})
    assert r["score"] == 5.0
    assert state.fail_next_with_503 == 0


def test_nothing_listening_gives_fallback_quickly_with_builtin_keys(refused_url):
    scoring.shutdown()
    scoring.configure(reset=True, url=refused_url, fallback_score=-1, retries=1, on_unreachable="fallback")
    try:
        t0 = time.monotonic()
        r = tv.compute_score_sync("timely/general", "<answer>1</answer>", "1", {})
        assert time.monotonic() - t0 < 3
        assert r == {"score": -1.0, **{k: 0.0 for k in scoring.BUILTIN_KEYS["timely/general"]}}
        unknown = asyncio.run(tv.compute_score("no/such/source", "", None))
        assert unknown == {"score": -1.0}
    finally:
        scoring.shutdown()
        scoring.configure(reset=True)


def test_garbage_answer_gives_fallback(stub):
    state, _ = stub
    state.garbage = True
    r = tv.compute_score_sync("stub/echo", "", None, {"value": 9})
    assert r == {"score": 0.0, "echo": 0.0, "n": 0.0}
    assert scoring.stats()["fallbacks"] == 1


def test_a_garbage_answer_counts_each_item_one_fallback_reported_once(stub):
    """A 200 whose body is not the answer reached the server: the fallbacks
    its request reported are counted there and must not be reported again;
    each of its items counts one fallback, reported with the next request."""
    state, _ = stub
    scoring.configure(retries=0)
    state.fail_next_with_503 = 1  # no answer: one fallback, not yet reported
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 1})["score"] == 0.0
    state.garbage = True
    futures = scoring.get_batcher(scoring.settings()).submit_many(
        [("stub/echo", {"data_source": "stub/echo", "extra_info": {"value": 2}})] * 3
    )
    assert [f.result(timeout=5) for f in futures] == [{"score": 0.0, "echo": 0.0, "n": 0.0}] * 3
    state.garbage = False
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 5})["score"] == 5.0
    assert scoring.stats()["fallbacks"] == 4
    assert state.fallback_reports == [1, 3], "each fallback reported once: 1 with the garbage-answered request, 3 after"
    assert scoring.stats()["consecutive_fallbacks"] == 0


@pytest.mark.parametrize(
    "body",
    [
        b'{"results": [{}]}',
        b'{"results": [{"score": "0.9", "echo": 1}]}',
        b'{"results": [{"score": null}]}',
        b'{"results": [{"score": true}]}',
        b'{"results": [7]}',
        b'{"results": []}',
        b'{"answer": 1}',
        b"[1]",
        b"",
        b"\xff\xfe",
    ],
    ids=["empty result", "score as text", "null score", "boolean score", "number", "too few", "no results",
         "array", "empty body", "not UTF-8"],
)
def test_a_200_without_a_usable_result_counts_one_fallback(stub, body):
    state, _ = stub
    scoring.configure(retries=0, on_unreachable="fallback", max_consecutive_fallbacks=1)
    state.garbage, state.garbage_body = True, body
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 3}) == {"score": 0.0, "echo": 0.0, "n": 0.0}
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"]) == (1, 1)
    state.garbage = False
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 3})["score"] == 3.0
    assert state.fallback_reports == [1]
    assert scoring.stats()["fallbacks"] == 1


def test_missing_token_raises_at_first_use(stub):
    state, url = stub
    state.token = "s3cret"
    with pytest.raises(tv.VerifierUnreachable, match=r"401") as err:
        tv.compute_score_sync("timely/general", "", None, {"value": 4})
    assert url in str(err.value)
    assert state.batches == [], "nothing is scored before the check passes"
    ok = tv.compute_score_sync("stub/echo", "", None, {"value": 4}, token="s3cret")
    assert ok == {"score": 4.0, "echo": 4.0, "n": 0.0}


def test_missing_token_gives_fallback_and_token_is_sent(stub):
    state, url = stub
    state.token = "s3cret"
    scoring.configure(on_unreachable="fallback")
    # Without the token neither the registry nor scoring answers: the
    # fallback carries the built-in key list.
    timely = {"score": 0.0, **{k: 0.0 for k in scoring.BUILTIN_KEYS["timely/general"]}}
    assert tv.compute_score_sync("timely/general", "", None, {"value": 4}) == timely
    assert scoring.stats()["fallbacks"] == 1
    ok = tv.compute_score_sync("stub/echo", "", None, {"value": 4}, token="s3cret")
    assert ok == {"score": 4.0, "echo": 4.0, "n": 0.0}


def test_slow_server_read_timeout_gives_fallback(stub):
    state, _ = stub
    state.delay_s = 1.5
    t0 = time.monotonic()
    r = tv.compute_score_sync("stub/echo", "", None, {"value": 4}, timeout_s=0.2, retries=0)
    assert r["score"] == 0.0
    assert time.monotonic() - t0 < 1.4


def test_deadline_guard_returns_fallback(stub):
    state, _ = stub
    state.delay_s = 1.0
    r = asyncio.run(tv.compute_score("stub/echo", "", None, {"value": 4}, deadline_s=0.2))
    assert r == {"score": 0.0, "echo": 0.0, "n": 0.0}


def test_odd_inputs_never_raise(stub):
    class Weird:
        def __str__(self):
            raise RuntimeError("no str")

    class ArrayLike:
        def tolist(self):
            return [1, 2.5, float("nan")]

    odd = [
        ("stub/echo", None, None, None),
        ("stub/echo", b"bytes", {1, 2}, {"value": float("inf"), "x": ArrayLike(), "y": Weird()}),
        (None, 123, object(), "not a dict"),
        (b"stub/echo", "", [1, (2, 3)], {"value": 1}),
    ]
    for args in odd:
        r = tv.compute_score_sync(*args)
        assert isinstance(r, dict) and math.isfinite(r["score"])
    assert tv.compute_score_batch(None, None, None) == []
    assert len(tv.compute_score_batch(["stub/echo"] * 3, ["a"], None, None)) == 3


def test_to_jsonable_gives_valid_json():
    class Scalar:
        def item(self):
            return 3

    doc = to_jsonable(
        {"a": float("nan"), "b": [float("-inf"), 1.5], 3: {"s": {1}}, "c": Scalar(), "d": b"\xff"}
    )
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "3": {"s": [1]}, "c": 3, "d": "\ufffd"}


def test_prepare_item_moves_the_timer_into_place():
    s = scoring.Settings()
    ei = {"timeaware_timer": "tok-1", "rollout_reward_scores": {"get_duration": 2.5}}
    item = scoring.prepare_item("timely/general", "x", "42", ei, s)
    assert item["extra_info"]["timer"] == "tok-1"
    assert "timer" not in ei  # the caller's dict is untouched

    item = scoring.prepare_item(
        "timely/general", "x", "42", {"rollout_reward_scores": {"get_duration": 2.5}}, s
    )
    assert item["extra_info"]["elapsed_s"] == 2.5

    item = scoring.prepare_item(
        "timely/general", "x", "42", {"rollout_reward_scores": {"get_duration": -1.0}}, s
    )
    assert "elapsed_s" not in item["extra_info"]

    given = {
        "timer": "explicit",
        "timeaware_timer": "tok",
        "elapsed_s": 1.0,
        "rollout_reward_scores": {"get_duration": 9},
    }
    item = scoring.prepare_item("timely/general", "x", "42", given, s)
    assert item["extra_info"]["timer"] == "explicit" and item["extra_info"]["elapsed_s"] == 1.0

    item = scoring.prepare_item(
        "timely/general", "x", "42", {"elapsed_s": 4.0, "rollout_reward_scores": {"get_duration": 9}}, s
    )
    assert item["extra_info"]["elapsed_s"] == 4.0

    custom = scoring.Settings(tool_name="clock", timer_field="my_timer")
    item = scoring.prepare_item("timely/general", "x", "42", {"rollout_reward_scores": {"clock": 3}}, custom)
    assert item["extra_info"]["elapsed_s"] == 3.0
    item = scoring.prepare_item("timely/general", "x", "42", {"my_timer": "t"}, custom)
    assert item["extra_info"]["timer"] == "t"


def test_module_loaded_from_its_file_path_like_verl_does(stub):
    state, _ = stub
    spec = importlib.util.spec_from_file_location("custom_module_under_test", tv.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    r = module.compute_score_sync("stub/echo", "", None, {"value": 6})
    assert r["score"] == 6.0
    assert asyncio.iscoroutinefunction(module.compute_score)
    assert not asyncio.iscoroutinefunction(module.compute_score_sync)
    # State is shared with the package module.
    assert scoring.stats()["items"] == 1


def test_settings_from_env_configure_and_call_overrides(monkeypatch):
    monkeypatch.setenv("TIMEAWARE_URL", "http://example.invalid:9")
    monkeypatch.setenv("TIMEAWARE_MAX_BATCH", "17")
    monkeypatch.setenv("TIMEAWARE_MAX_WAIT_MS", "not-a-number")
    try:
        s = scoring.configure(reset=True)
        assert s.url == "http://example.invalid:9" and s.max_batch == 17 and s.max_wait_ms == 5.0
        s = scoring.configure(max_wait_ms=2)
        assert s.max_wait_ms == 2.0 and s.max_batch == 17
        assert scoring.settings({"max_batch": "3", "reward_router_address": "x"}).max_batch == 3
        assert scoring.settings({"max_batch": 0}).max_batch == 17  # invalid per-call value ignored
        with pytest.raises(ValueError):
            scoring.configure(no_such_setting=1)
        with pytest.raises(ValueError):
            scoring.configure(max_batch=0)
    finally:
        monkeypatch.undo()
        scoring.configure(reset=True)


def test_client_errors_carry_status_code_and_field(stub, refused_url):
    state, url = stub
    c = Client(url, retries=0)
    with pytest.raises(TimeawareError) as ei:
        c.request("GET", "/nope")
    assert ei.value.status == 404 and ei.value.code == "not_found"
    dead = Client(refused_url, retries=0)
    with pytest.raises(ServerUnavailable):
        dead.rewards()
    assert not dead.healthz()


@pytest.mark.parametrize("body", [b"<html>bad gateway</html>", b'{"results": [1, 2]}'], ids=["not JSON", "wrong shape"])
def test_a_success_status_with_a_body_that_is_not_the_answer_is_an_invalid_answer_not_retried(stub, body):
    state, url = stub
    state.garbage, state.garbage_body = True, body
    with pytest.raises(InvalidAnswer) as ei:
        Client(url, retries=3).score_batch([{"data_source": "stub/echo"}], client_fallbacks=2)
    assert ei.value.status == 200
    assert state.batches == [1] and state.fallback_reports == [2], "sent once: the service took it"


def test_a_keep_alive_connection_closed_by_the_server_costs_no_retry():
    class OneShot(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            body = b'{"rewards": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True  # hang up without saying so

    server = _QuietServer(("127.0.0.1", 0), OneShot)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        c = Client(f"http://127.0.0.1:{server.server_address[1]}", retries=0)
        for _ in range(3):
            assert c.rewards() == []
            time.sleep(0.05)
    finally:
        server.shutdown()
        server.server_close()


def test_nothing_listening_raises_at_first_use_naming_the_url(refused_url):
    url = refused_url
    scoring.shutdown()
    scoring.configure(reset=True, url=url, retries=0)
    try:
        t0 = time.monotonic()
        with pytest.raises(tv.VerifierUnreachable, match="cannot be reached") as err:
            asyncio.run(tv.compute_score("timely/general", "<answer>1</answer>", "1", {}))
        assert err.value.url == url and url in str(err.value)
        with pytest.raises(tv.VerifierUnreachable):
            tv.compute_score_sync("timely/general", "", "1", {})
        with pytest.raises(tv.VerifierUnreachable):
            tv.compute_score_batch(["timepuzzles"], [""], ["None"], [{}])
        with pytest.raises(tv.VerifierUnreachable):
            asyncio.run(tv.compute_score_batch_async(["timepuzzles"], [""], ["None"], [{}]))
        assert time.monotonic() - t0 < 3
    finally:
        scoring.shutdown()
        scoring.configure(reset=True)


def test_stats_without_overrides_counts_every_verifier_used(stub):
    """stats() after scoring with a setting of the call's own (as
    GRPOReward(url=...) passes its url) counts those items too; with the
    overrides it counts that batcher's alone. The runs of fallbacks are the
    longest of any batcher, not a sum."""
    state, url = stub

    async def main():
        return await asyncio.gather(
            tv.compute_score("stub/echo", "", None, {"value": 1}),
            tv.compute_score("stub/echo", "", None, {"value": 2}, max_wait_ms=5),
            tv.compute_score("stub/echo", "", None, {"value": 3}, max_wait_ms=5),
        )

    assert [r["score"] for r in asyncio.run(main())] == [1.0, 2.0, 3.0]
    assert scoring.stats()["items"] == 3
    assert scoring.stats({"max_wait_ms": 5})["items"] == 2
    assert scoring.stats({"max_wait_ms": 7})["items"] == 0, "a batcher never used counts nothing"
    scoring.configure(retries=0, on_unreachable="fallback")
    state.fail_next_with_503 = 2
    tv.compute_score_sync("stub/echo", "", None, {"value": 1})
    tv.compute_score_sync("stub/echo", "", None, {"value": 1})
    state.fail_next_with_503 = 1
    tv.compute_score_sync("stub/echo", "", None, {"value": 1}, max_wait_ms=5)
    st = scoring.stats()
    assert (st["fallbacks"], st["longest_fallback_run"]) == (3, 2)


def test_a_run_of_fallbacks_past_the_limit_raises_then_recovers(stub):
    state, url = stub
    scoring.configure(max_consecutive_fallbacks=3, retries=0)
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 1}) == {"score": 1.0, "echo": 1.0, "n": 0.0}
    state.fail_next_with_503 = 4  # four requests in a row get no usable answer
    for _ in range(3):
        assert tv.compute_score_sync("stub/echo", "", None, {"value": 2})["score"] == 0.0
    with pytest.raises(tv.VerifierUnreachable, match=r"4 items in a row .*max_consecutive_fallbacks=3") as err:
        tv.compute_score_sync("stub/echo", "", None, {"value": 2})
    assert url in str(err.value)
    # what the trainer does with them depends on the adapter: no promise of a 0
    assert "they are unscored (the fallback 0, or None where the adapter masks them" in str(err.value)
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["longest_fallback_run"], st["fallback_alarms"]) == (4, 4, 4, 1)
    # An answer ends the run, and its request reports the four fallbacks.
    assert tv.compute_score_sync("stub/echo", "", None, {"value": 5})["score"] == 5.0
    assert scoring.stats()["consecutive_fallbacks"] == 0
    assert state.fallback_reports == [4]
    # A batch that crosses the limit: the items before it fall back, the
    # ones past it raise.
    state.fail_next_with_503 = 1
    futures = scoring.get_batcher(scoring.settings()).submit_many(
        [("stub/echo", {"data_source": "stub/echo", "extra_info": {"value": 1}})] * 5
    )
    outcomes = [f.exception(timeout=5) for f in futures]
    assert [o is None for o in outcomes] == [True, True, True, False, False]
    assert all(isinstance(o, tv.VerifierUnreachable) for o in outcomes[3:])
    assert scoring.stats()["longest_fallback_run"] == 5


def test_fallback_mode_logs_every_run_past_the_limit_at_error(stub, caplog):
    state, url = stub
    scoring.configure(max_consecutive_fallbacks=2, retries=0, on_unreachable="fallback")
    state.garbage = True
    with caplog.at_level("ERROR", logger="timeaware"):
        scores = [tv.compute_score_sync("stub/echo", "", None, {"value": 1})["score"] for _ in range(5)]
    assert scores == [0.0] * 5
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 3, errors  # the 3rd, 4th and 5th item
    assert all(url in m for m in errors)
    assert scoring.stats()["fallback_alarms"] == 3


def test_fallback_mode_logs_an_unreachable_service_at_error(caplog, refused_url):
    url = refused_url
    scoring.shutdown()
    scoring.configure(reset=True, url=url, retries=0, on_unreachable="fallback")
    try:
        with caplog.at_level("ERROR", logger="timeaware"):
            r = tv.compute_score_sync("timepuzzles", "MY ANSWER: None", "None", {})
        assert r["score"] == 0.0
        assert any(r.levelname == "ERROR" and url in r.getMessage() for r in caplog.records)
    finally:
        scoring.shutdown()
        scoring.configure(reset=True)


@pytest.mark.parametrize(
    "name,value",
    [("on_unreachable", "sometimes"), ("max_consecutive_fallbacks", 0), ("max_consecutive_fallbacks", 1.5)],
)
def test_bad_guard_settings_are_rejected(name, value):
    with pytest.raises(ValueError, match=name):
        scoring.configure(**{name: value})
    scoring.configure(reset=True)


def test_concurrent_first_uses_share_one_reachability_check(stub):
    state, _ = stub

    async def many():
        return await asyncio.gather(*(tv.compute_score("stub/echo", "", None, {"value": i}) for i in range(50)))

    results = asyncio.run(many())
    assert [r["score"] for r in results] == [float(i) for i in range(50)]
    # One registry request for the check, at most one more for the key lists.
    assert 1 <= state.rewards_calls <= 2, state.rewards_calls


def test_a_negotiation_episode_is_scored_on_its_transcript():
    from timeaware import scoring

    s = scoring.settings()
    ei = {"role": "cand", "timeaware_transcript": '[{"role": "cand", "text": "hi"}]'}
    item = scoring.prepare_item("negotiation", "decoded tokens of both sides", "{}", ei, s)
    assert item["solution_str"] == '[{"role": "cand", "text": "hi"}]'
    assert "timeaware_transcript" not in item["extra_info"], "the transcript is not sent twice"
    assert ei["timeaware_transcript"], "extra_info is copied, never modified"
    other = scoring.prepare_item("timepuzzles", "MY ANSWER: 2024-01-01", "2024-01-01", ei, s)
    assert other["solution_str"] == "MY ANSWER: 2024-01-01", "other data sources keep their response"
