"""The Python adapter (python/, package `timeaware`) against the real
verifier service: `timeaware serve`, started from TIMEAWARE_BIN on a port the
kernel picks, with a private environment (conftest's `start_serve`), stopped
with SIGTERM (and required to exit cleanly) at teardown.

Covers the reward side (micro-batching into /v1/score/batch as seen in the
server's own /metrics, results and their order, the fallback contract when
the server is down, rejects an item, or wants a token, and the retries on
413 and 429), the get_duration tool in both of VeRL's calling conventions,
how a timer reaches the reward, expired timers, and timers shared by two
server processes through a common secret.
"""

from __future__ import annotations

import asyncio
import http.client
import math
import re
import socket
import threading
import time
from typing import Callable, Dict, List, Optional

import pytest

from timeaware import scoring
from timeaware import verl as tv
from timeaware.client import Client, TimeawareError
from timeaware.tools import GetDurationTool

pytestmark = pytest.mark.needs_binary

SECRET = "adapter-tests-0123456789abcdef"
DURATION_TEXT = re.compile(r"^\d+\.\d{2} seconds\.$")
TIMELY_KEYS = ["score", *scoring.BUILTIN_KEYS["timely/general"]]
ZERO_STATS = {
    "requests": 0,
    "items": 0,
    "item_errors": 0,
    "fallbacks": 0,
    "consecutive_fallbacks": 0,
    "longest_fallback_run": 0,
    "fallback_alarms": 0,
}


def metric(samples: Dict[str, float], name: str, **labels: str) -> float:
    key = name if not labels else name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return samples.get(key, 0.0)


@pytest.fixture
def make_server(start_serve, tmp_path):
    """make_server(env) -> a running ServeProcess with the tests' timer
    secret (env wins); stopped, and required to exit cleanly, at teardown."""
    servers = []

    def make(env: Optional[Dict[str, str]] = None):
        s = start_serve(tmp_path, {"TIMEAWARE_TIMERS_SECRET": SECRET, **(env or {})})
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


@pytest.fixture(scope="module")
def shared_server(start_serve, tmp_path_factory):
    s = start_serve(tmp_path_factory.mktemp("serve"), {"TIMEAWARE_TIMERS_SECRET": SECRET})
    yield s
    s.stop()


@pytest.fixture
def adapter():
    """Fresh adapter state pointed at a URL: adapter(url, **settings)."""

    def point(url: str, **settings) -> scoring.Settings:
        scoring.shutdown()
        return scoring.configure(reset=True, url=url, **settings)

    yield point
    scoring.shutdown()
    scoring.configure(reset=True)


def expected_timely(correct: bool, t: float, limit: float) -> float:
    if t > limit:
        return 0.0
    if not correct:
        return 0.1
    return 0.1 + 0.5 + 0.4 * math.sin(math.pi / 2 * t / limit)


def timely_item(i: int):
    """Item i: right or wrong answer, a time from 0 to the limit and beyond."""
    correct = i % 3 != 0
    limit = 10.0 + (i % 5)
    t = round(limit * ((i % 11) / 9.0), 3)  # i%11 in 10 runs past the limit
    answer = "42" if correct else "41"
    return (
        "timely/general",
        f"Let me think.\n<answer>{answer}</answer>",
        "42",
        {"elapsed_s": t, "time_limit_s": limit, "index": i},
    ), expected_timely(correct, t, limit)


# --------------------------------------------------------------------------- registry


def test_builtin_key_lists_match_the_server_registry(shared_server):
    entries = Client(shared_server.url).rewards()
    served = {e["data_source"]: tuple(e["keys"]) for e in entries}
    assert served == scoring.BUILTIN_KEYS, "update timeaware.scoring.BUILTIN_KEYS to the server's registry"
    grouped = {e["data_source"] for e in entries if e["grouped"] is True}
    assert grouped == scoring.GROUP_SOURCES, "update timeaware.scoring.GROUP_SOURCES to the server's registry"
    assert all(isinstance(e["grouped"], bool) for e in entries)


# --------------------------------------------------------------------------- reward side


def test_concurrent_compute_score_calls_are_batched_and_correct(shared_server, adapter):
    adapter(shared_server.url, max_wait_ms=20, max_batch=256)
    n = 200
    items = [timely_item(i) for i in range(n)]
    before = shared_server.metrics()

    async def main():
        return await asyncio.gather(*(tv.compute_score(*args) for args, _ in items))

    results = asyncio.run(main())
    after = shared_server.metrics()

    for i, ((args, want), got) in enumerate(zip(items, results)):
        assert list(got) == TIMELY_KEYS, i
        assert got["score"] == pytest.approx(want, abs=1e-9), (i, args, got)
        assert got["elapsed_s"] == pytest.approx(args[3]["elapsed_s"]), i
        assert got["acc"] == (1.0 if i % 3 else 0.0), i

    requests = metric(after, "timeaware_http_requests_total", route="/v1/score/batch", code="200") - metric(
        before, "timeaware_http_requests_total", route="/v1/score/batch", code="200"
    )
    items_sum = metric(after, "timeaware_batch_items_sum") - metric(before, "timeaware_batch_items_sum")
    batches = metric(after, "timeaware_batch_items_count") - metric(before, "timeaware_batch_items_count")
    scored_ok = metric(
        after, "timeaware_scored_items_total", data_source="timely/general", outcome="ok"
    ) - metric(before, "timeaware_scored_items_total", data_source="timely/general", outcome="ok")
    assert 1 <= requests < n, f"{n} calls went out as {requests} batch requests"
    assert batches == requests
    assert items_sum == n
    assert scored_ok == n
    assert tv.stats() == {**ZERO_STATS, "requests": requests, "items": n}


def test_sync_variant_batches_across_threads(shared_server, adapter):
    adapter(shared_server.url, max_wait_ms=30)
    n = 48
    items = [timely_item(i) for i in range(n)]
    got: Dict[int, dict] = {}
    barrier = threading.Barrier(n)

    def worker(i: int) -> None:
        barrier.wait()
        got[i] = tv.compute_score_sync(*items[i][0])

    before = shared_server.metrics()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = shared_server.metrics()
    for i in range(n):
        assert got[i]["score"] == pytest.approx(items[i][1], abs=1e-9)
        assert list(got[i]) == TIMELY_KEYS
    requests = metric(after, "timeaware_batch_items_count") - metric(before, "timeaware_batch_items_count")
    assert 1 <= requests < n
    assert metric(after, "timeaware_batch_items_sum") - metric(before, "timeaware_batch_items_sum") == n


def test_batch_variants_split_at_max_batch_and_keep_order(shared_server, adapter):
    adapter(shared_server.url, max_batch=128)
    n = 300
    items = [timely_item(i) for i in range(n)]
    columns = list(zip(*(args for args, _ in items)))
    before = shared_server.metrics()
    results = tv.compute_score_batch(*columns)
    mid = shared_server.metrics()
    assert [r["score"] for r in results] == pytest.approx([want for _, want in items], abs=1e-9)
    assert metric(mid, "timeaware_batch_items_count") - metric(before, "timeaware_batch_items_count") == 3

    results = asyncio.run(tv.compute_score_batch_async(*columns))
    assert [r["score"] for r in results] == pytest.approx([want for _, want in items], abs=1e-9)
    assert all(list(r) == TIMELY_KEYS for r in results)


def kimi_group(key: str, lengths: list, right: list):
    """The items of one length/kimi group, and the rewards by Kimi k1.5's
    formula: correctness plus λ = 0.5 − (n − min)/(max − min), a wrong
    answer keeping only a negative λ."""
    lo, hi = min(lengths), max(lengths)
    items, want = [], []
    for n, ok in zip(lengths, right):
        lam = 0.5 - (n - lo) / (hi - lo) if hi > lo else 0.0
        want.append((1.0 if ok else 0.0) + (lam if ok else min(0.0, lam)))
        items.append(("length/kimi", f"<answer>{42 if ok else 41}</answer>", "42",
                      {"answer_check": "", "response_tokens": n, scoring.GROUP_FIELD: key,
                       scoring.GROUP_SIZE_FIELD: len(lengths)}))
    return items, want


def test_groups_travel_whole_whatever_max_batch(shared_server, adapter):
    """The batcher cuts requests between groups, never inside one: groups of
    four under max_batch=5, a group of seven over it (sent alone), and plain
    items between them all score as whole groups."""
    adapter(shared_server.url, max_batch=5)
    items, want = [], []
    for g in range(3):
        its, w = kimi_group(f"g{g}", [100 + 50 * k for k in range(4)], [k != 1 for k in range(4)])
        plain, pw = timely_item(g)
        items += [*its, plain]
        want += [*w, pw]
    big, w = kimi_group("big", [100 * (k + 1) for k in range(7)], [k % 2 == 0 for k in range(7)])
    items += big
    want += w
    before = shared_server.metrics()
    for results in (tv.compute_score_batch(*zip(*items)), asyncio.run(tv.compute_score_batch_async(*zip(*items)))):
        assert [r["score"] for r in results] == pytest.approx(want, abs=1e-9)
        assert not any(isinstance(r, scoring.Unscored) for r in results)
    after = shared_server.metrics()
    # 3 × (4 + 1) + 7 items: 2 requests of 4 + 1, one of 5, one of 7 (over max_batch, alone), twice.
    assert metric(after, "timeaware_batch_items_count") - metric(before, "timeaware_batch_items_count") == 8
    assert tv.stats()["item_errors"] == 0


def test_a_group_the_service_refuses_is_rejected_whole_not_unanswered(make_server, adapter):
    """A group that is not whole (a member missing), or too big for the
    server's batch limit, is refused by the service: each member gets the
    fallback as rejected, with the service's reason, its companions in the
    request still score, and none counts in the run of unanswered items."""
    server = make_server({"TIMEAWARE_SERVE_MAX_BATCH_ITEMS": "6"})
    adapter(server.url)
    whole, want = kimi_group("whole", [100, 200, 300], [True, False, True])
    short, _ = kimi_group("short", [100, 200, 300, 400], [True] * 4)
    big, _ = kimi_group("big", [100 * (k + 1) for k in range(7)], [True] * 7)
    plain, pw = timely_item(1)
    results = tv.compute_score_batch(*zip(*[*whole, *short[:3], plain, *big]))
    assert [r["score"] for r in results[:3]] == pytest.approx(want, abs=1e-9)
    assert results[6]["score"] == pytest.approx(pw)
    for r in results[3:6]:
        assert isinstance(r, scoring.Unscored) and r.cause == "rejected", r
        assert "3 of its 4 members" in r.reason
    for r in results[7:]:
        assert isinstance(r, scoring.Unscored) and r.cause == "rejected", r
        assert "too_many_items" in r.reason or "more than 6" in r.reason
    st = tv.stats()
    assert st["consecutive_fallbacks"] == 0 and st["fallbacks"] == 0
    assert st["item_errors"] == 10


def test_rejected_item_gets_the_fallback_with_the_same_keys(shared_server, adapter):
    adapter(shared_server.url)
    good, want = timely_item(1)
    bad = ("timely/general", "<answer>42</answer>", "42", {"elapsed_s": 1.0, "time_limit_s": -5})
    missing_truth = ("timely/general", "<answer>42</answer>", None, {"elapsed_s": 1.0, "time_limit_s": 5})

    async def main():
        return await asyncio.gather(
            tv.compute_score(*good), tv.compute_score(*bad), tv.compute_score(*missing_truth)
        )

    ok, rejected, rejected2 = asyncio.run(main())
    assert ok["score"] == pytest.approx(want)
    for r in (rejected, rejected2):
        assert r == {k: 0.0 for k in TIMELY_KEYS}  # the server's fallback score is 0
    assert tv.stats()["item_errors"] == 2
    # Data sources the server does not know: the score alone, every time.
    assert asyncio.run(tv.compute_score("no/such/source", "x", "y")) == {"score": 0.0}


def test_server_limits_413_are_split_not_failed(make_server, adapter):
    server = make_server({"TIMEAWARE_SERVE_MAX_BATCH_ITEMS": "8"})
    adapter(server.url, max_batch=64)
    items = [timely_item(i) for i in range(40)]
    results = tv.compute_score_batch(*zip(*(args for args, _ in items)))
    assert [r["score"] for r in results] == pytest.approx([want for _, want in items], abs=1e-9)
    m = server.metrics()
    assert metric(m, "timeaware_http_requests_total", route="/v1/score/batch", code="413") >= 1
    assert metric(m, "timeaware_batch_items_sum") == 40


def test_stopped_server_gives_the_fallback_quickly(make_server, adapter):
    server = make_server()
    adapter(server.url, fallback_score=-1, retries=1)
    args, want = timely_item(2)
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)
    server.stop()
    t0 = time.monotonic()
    r = tv.compute_score_sync(*args)

    async def many():
        return await asyncio.gather(*(tv.compute_score(*args) for _ in range(20)))

    rs = asyncio.run(many())
    elapsed = time.monotonic() - t0
    assert r == {"score": -1.0, **{k: 0.0 for k in TIMELY_KEYS[1:]}}
    assert all(x == r for x in rs)
    assert elapsed < 3, f"fallback took {elapsed:.2f}s"


def test_nothing_listening_gives_the_fallback_with_builtin_keys(adapter, refused_url):
    adapter(refused_url, retries=0, on_unreachable="fallback")
    t0 = time.monotonic()
    r = asyncio.run(tv.compute_score("timely/general", "<answer>42</answer>", "42", {"elapsed_s": 1.0}))
    assert r == {k: 0.0 for k in TIMELY_KEYS}
    b = tv.compute_score_batch(["tictoc/decision", "timepuzzles"], ["", ""], ["tool", "2024-01-01"], [{}, {}])
    assert [list(x) for x in b] == [
        ["score", *scoring.BUILTIN_KEYS["tictoc/decision"]],
        ["score", *scoring.BUILTIN_KEYS["timepuzzles"]],
    ]
    assert time.monotonic() - t0 < 3


def test_bearer_token_is_required_when_the_server_has_one(make_server, adapter):
    server = make_server({"TIMEAWARE_SERVE_TOKEN": "t0ken-for-tests"})
    args, want = timely_item(4)
    adapter(server.url)
    # Without the token the first use fails loudly: every reward would be the fallback.
    with pytest.raises(tv.VerifierUnreachable, match="401") as unreachable:
        tv.compute_score_sync(*args)
    assert server.url in str(unreachable.value)
    adapter(server.url, on_unreachable="fallback")
    assert tv.compute_score_sync(*args) == {k: 0.0 for k in TIMELY_KEYS}
    with pytest.raises(TimeawareError) as err:
        Client(server.url, token="wrong").score_batch([])
    assert err.value.status == 401
    adapter(server.url, token="t0ken-for-tests")
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)
    # The token may also come per call (VeRL's custom_reward_function.reward_kwargs).
    scoring.configure(reset=True, url=server.url)
    assert tv.compute_score_sync(*args, token="t0ken-for-tests")["score"] == pytest.approx(want)
    m = server.metrics()
    assert metric(m, "timeaware_http_requests_total", route="/v1/score/batch", code="401") >= 1


# --------------------------------------------------------------------------- timers and the reward


def _timely_from_details(r: dict) -> float:
    return expected_timely(r["acc"] == 1.0, r["elapsed_s"], r["time_limit_s"])


def test_reward_reads_a_timer_named_in_extra_info(shared_server, adapter):
    adapter(shared_server.url)
    c = Client(shared_server.url)
    tok = c.create_timer("reward-timer-1", time_limit_s=20)["timer"]
    tok = c.add_span(tok, seconds=3.0, simulated=True)["timer"]
    for ei in ({"timer": tok}, {"timeaware_timer": tok}):
        r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", ei)
        assert 3.0 <= r["elapsed_s"] < 13.0
        assert r["time_limit_s"] == 20.0  # from the timer
        assert r["score"] == pytest.approx(_timely_from_details(r), abs=1e-9)


def test_reward_uses_calc_reward_from_rollout_reward_scores(shared_server, adapter):
    adapter(shared_server.url)
    ei = {"time_limit_s": 6.0, "rollout_reward_scores": {"get_duration": 3.0, "user_turn_rewards": []}}
    r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", ei)
    assert r["elapsed_s"] == 3.0
    assert r["score"] == pytest.approx(0.6 + 0.4 * math.sin(math.pi / 4))


# --------------------------------------------------------------------------- the get_duration tool


def test_get_duration_tool_lifecycle_sglang_convention(shared_server, adapter):
    """create(id, **create_kwargs) -> execute -> calc_reward -> release, then
    the calc_reward value reaches the reward through rollout_reward_scores."""
    adapter(shared_server.url)
    tool = GetDurationTool({"type": "native", "base_url": shared_server.url, "speed_factor": 3.0}, None)
    assert tool.name == "get_duration"
    schema = tool.get_openai_tool_schema()
    assert schema["function"]["parameters"]["properties"] == {}

    async def rollout():
        iid, created = await tool.create(
            "rollout-sglang-1", time_limit_s=30, jitter=0.0, unknown_key="ignored"
        )
        assert iid == "rollout-sglang-1" and created.is_empty()
        await asyncio.sleep(0.05)
        resp, step_reward, metrics = await tool.execute(iid, {})
        assert DURATION_TEXT.match(resp.text), resp.text
        assert step_reward == 0.0 and metrics["elapsed_s"] >= 0.15  # 50 ms at speed factor 3
        elapsed = await tool.calc_reward(iid)
        assert elapsed >= metrics["elapsed_s"]
        token = tool.timer_token(iid)
        await tool.release(iid)
        return elapsed, token

    elapsed, token = asyncio.run(rollout())
    c = Client(shared_server.url)
    final = c.read_timer("rollout-sglang-1")  # the rollout id names the newest token on this replica
    assert final["stopped"] is True and final["speed_factor"] == 3.0 and final["time_limit_s"] == 30.0
    assert final["elapsed_s"] >= elapsed
    assert c.read_timer(token)["rollout_id"] == "rollout-sglang-1"

    ei = {"time_limit_s": 30.0, "rollout_reward_scores": {"get_duration": elapsed}}
    r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", ei)
    assert r["elapsed_s"] == pytest.approx(elapsed)
    assert r["score"] == pytest.approx(expected_timely(True, elapsed, 30.0))


def test_get_duration_tool_without_instance_id_uses_a_uuid(shared_server):
    tool = GetDurationTool({"base_url": shared_server.url})

    async def rollout():
        iid, _ = await tool.create()
        resp, _, _ = await tool.execute(iid, {})
        await tool.release(iid)
        return iid, resp.text

    iid, text = asyncio.run(rollout())
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", iid)
    assert DURATION_TEXT.match(text)
    assert Client(shared_server.url).read_timer(iid)["stopped"] is True


class FakeAgentData:
    """The attributes of VeRL's AgentData the tool reads."""

    def __init__(self, request_id: str, gen_s: float, tool_s: float) -> None:
        self.request_id = request_id
        self.extra_fields: dict = {}
        self.metrics = {"generate_sequences": gen_s, "tool_calls": tool_s}


def test_get_duration_tool_agent_loop_convention(shared_server, adapter):
    """ToolAgentLoop: create(create_kwargs=...) -> execute(..., agent_data=...)
    -> release per call. One timer per rollout, back-dated by the agent
    loop's metrics, reaching the reward through extra_fields."""
    adapter(shared_server.url)
    tool = GetDurationTool({"base_url": shared_server.url})
    ad = FakeAgentData("agent-rollout-1", gen_s=2.0, tool_s=0.5)
    c = Client(shared_server.url)

    async def call() -> str:
        iid, _ = await tool.create(create_kwargs={"speed_factor": 2.0, "time_limit_s": 60})
        try:
            resp, _, _ = await tool.execute(iid, {}, agent_data=ad)
        finally:
            await tool.release(iid)
        return resp.text

    text1 = asyncio.run(call())
    assert DURATION_TEXT.match(text1)
    token1 = ad.extra_fields["timeaware_timer"]
    r1 = c.read_timer(token1)
    assert r1["rollout_id"] == "agent-rollout-1" and not r1["stopped"]
    assert r1["elapsed_s"] >= 2.0 * 2.0 + 0.5  # generation scaled by 2, earlier tool time as is
    assert r1["tool_s"] == pytest.approx(4.5)

    # Another tool ran for 0.25 s since; it ran on the wall clock, which
    # the service checks: a span may claim only wall time that passed.
    time.sleep(0.3)
    ad.metrics["tool_calls"] = 0.75
    text2 = asyncio.run(call())
    assert DURATION_TEXT.match(text2)
    token2 = ad.extra_fields["timeaware_timer"]
    r2 = c.read_timer(token2)
    assert token2 != token1 and not r2["stopped"]
    assert r2["tool_s"] == pytest.approx(4.5 + 0.25)

    # Tool time the wall clock cannot hold is capped at what passed.
    ad.metrics["tool_calls"] = 100.75
    asyncio.run(call())
    r3 = c.read_timer(ad.extra_fields["timeaware_timer"])
    assert 4.75 <= r3["tool_s"] < 4.75 + 5
    assert float(text2.split()[0]) >= float(text1.split()[0])

    # VeRL's reward loop merges the rollout's extra_fields into extra_info.
    extra_info = {"index": 0, **ad.extra_fields}
    r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", extra_info)
    assert r["time_limit_s"] == 60.0 and r["elapsed_s"] >= r3["elapsed_s"]
    assert r["score"] == pytest.approx(_timely_from_details(r), abs=1e-9)


def test_get_duration_tool_with_the_server_down_does_not_raise(refused_url):
    tool = GetDurationTool({"base_url": refused_url, "retries": 0})

    async def rollout():
        iid, _ = await tool.create("offline-1")
        resp, reward, metrics = await tool.execute(iid, {})
        score = await tool.calc_reward(iid)
        await tool.release(iid)
        ad = FakeAgentData("offline-2", 1.0, 0.0)
        iid2, _ = await tool.create(create_kwargs={})
        resp2, _, _ = await tool.execute(iid2, {}, agent_data=ad)
        await tool.release(iid2)
        return resp.text, reward, metrics, score, resp2.text, ad.extra_fields

    text, reward, metrics, score, text2, fields = asyncio.run(rollout())
    assert text == text2 == "The elapsed time is unavailable right now."
    assert reward == 0.0 and metrics == {"error": 1.0} and score == -1.0
    # The agent-loop rollout is marked, so that the reward does not score it as an untimed one.
    assert fields == {scoring.UNREACHABLE_FIELD: f"the verifier at {refused_url} could not be reached to start "
                                                 "the rollout's timer"}


def test_a_rollout_played_without_its_timer_is_not_scored_and_counts(shared_server, adapter):
    """A timely rollout whose tool could not start its timer (the agent
    loop's mark, or the SGLang rollout's negative calc_reward) is not
    scored, even by a verifier that answers now: no time was measured. It
    counts in the run of fallbacks as an unanswered item, which a scored
    item ends and which raises past the limit."""
    adapter(shared_server.url, max_consecutive_fallbacks=2)
    marked = {"time_limit_s": 6.0, scoring.UNREACHABLE_FIELD: "the verifier at X could not be reached"}
    sglang = {"time_limit_s": 6.0, "rollout_reward_scores": {"get_duration": -1.0}}
    r = asyncio.run(tv.compute_score("timely/general", "<answer>42</answer>", "42", marked))
    assert isinstance(r, scoring.Unscored) and r.cause == "verifier_unreachable"
    assert r.reason == "the verifier at X could not be reached"
    assert r == {"score": 0.0, **{k: 0.0 for k in TIMELY_KEYS[1:]}}
    (r,) = tv.compute_score_batch(["timely/general"], ["<answer>42</answer>"], ["42"], [sglang])
    assert isinstance(r, scoring.Unscored) and "could not reach the verifier" in r.reason
    st = tv.stats()
    assert (st["requests"], st["fallbacks"], st["consecutive_fallbacks"]) == (0, 2, 2), "nothing was sent"
    # A timer, or a measured time, wins over the mark: scored, and the run ends.
    args, want = timely_item(3)
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)
    assert tv.stats()["consecutive_fallbacks"] == 0
    timed = {**sglang, "elapsed_s": 3.0}
    assert not isinstance(tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", timed), scoring.Unscored)
    tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", marked)
    tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", marked)
    with pytest.raises(tv.VerifierUnreachable, match="3 items in a row"):
        tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", sglang)


def test_get_duration_tool_reads_the_environment_when_it_is_built(shared_server, monkeypatch):
    # VeRL builds tool objects more than once (its dataset and each agent-loop
    # worker); one built before TIMEAWARE_URL was set must not pin the
    # default URL for the tools built after it.
    monkeypatch.delenv("TIMEAWARE_URL", raising=False)
    monkeypatch.delenv("TIMEAWARE_SERVE_TOKEN", raising=False)
    early = GetDurationTool({"retries": 0})
    monkeypatch.setenv("TIMEAWARE_URL", shared_server.url)
    monkeypatch.setenv("TIMEAWARE_SERVE_TOKEN", "a-token-set-later")
    late = GetDurationTool({"retries": 0})
    assert early._client.base_url == "http://127.0.0.1:8080"
    assert late._client.base_url == shared_server.url
    assert late._client.token == "a-token-set-later"
    assert GetDurationTool({"retries": 0})._client is late._client, "tools with one configuration share a client"


# --------------------------------------------------------------------------- timers across processes


def test_timers_work_across_two_servers_sharing_a_secret_and_a_restart(make_server, adapter):
    a = make_server()
    b = make_server()
    ca, cb = Client(a.url), Client(b.url)

    created = ca.create_timer("shared-rollout", speed_factor=1.0, time_limit_s=50)
    token = created["timer"]
    assert created["rollout_id"] == "shared-rollout"
    token = ca.add_span(token, seconds=5.0, simulated=True)["timer"]

    on_b = cb.read_timer(token)
    assert on_b["rollout_id"] == "shared-rollout" and on_b["elapsed_s"] >= 5.0 and on_b["tool_s"] == 5.0
    assert DURATION_TEXT.match(cb.get_duration(timer=token)["text"])
    # A rollout id is known where the timer was created or its token shown.
    assert cb.read_timer("shared-rollout")["timer"] == on_b["timer"]
    with pytest.raises(TimeawareError) as err:
        Client(make_server().url).read_timer("shared-rollout")
    assert err.value.status == 404

    # B scores an item whose timer A issued.
    adapter(b.url)
    r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", {"timer": token})
    assert r["elapsed_s"] >= 5.0 and r["time_limit_s"] == 50.0

    # A restarts (on another port: the token carries the timer, not the
    # address; same secret): the token still reads, and time went on.
    a.stop()
    a = make_server()
    ca = Client(a.url)
    again = ca.read_timer(token)
    assert again["rollout_id"] == "shared-rollout" and again["elapsed_s"] >= on_b["elapsed_s"]

    # Spans and stops issue new tokens; the stopped token reads the same everywhere.
    stopped = cb.stop_timer(token)
    assert stopped["stopped"] is True and stopped["timer"] != token
    assert ca.read_timer(stopped["timer"])["stopped"] is True
    assert ca.read_timer(stopped["timer"])["elapsed_s"] == pytest.approx(stopped["elapsed_s"])

    # A server with another secret rejects the token as invalid.
    other = make_server({"TIMEAWARE_TIMERS_SECRET": "another-secret-0123456789abcdef"})
    with pytest.raises(TimeawareError) as err:
        Client(other.url).read_timer(token)
    assert err.value.status == 400


def test_expired_timer_is_410_and_its_item_falls_back(shared_server, adapter):
    adapter(shared_server.url)
    c = Client(shared_server.url)
    token = c.create_timer("short-lived", ttl_s=0.2)["timer"]
    time.sleep(0.4)
    with pytest.raises(TimeawareError) as err:
        c.read_timer(token)
    assert err.value.status == 410
    r = tv.compute_score_sync("timely/general", "<answer>42</answer>", "42", {"timer": token})
    assert r == {k: 0.0 for k in TIMELY_KEYS}
    assert tv.stats()["item_errors"] == 1


def test_overloaded_server_429_is_retried_after_retry_after(make_server, adapter):
    """Seventy small requests whose bodies trickle in hold all of the
    server's request memory; the adapter's batch meanwhile gets 429 +
    Retry-After (or, on a new connection, 503 + Retry-After) and must come
    back later instead of falling back. Each step waits for the state the
    server reports on the test's own connection, opened before the flood so
    that reading it needs no memory: the slow requests have each taken
    their memory or been refused for want of it (how many fit depends on how
    many keep-alive connections the adapter keeps and on whether the server
    accepts connections faster than it reads bodies; what is left is less
    than a connection and less than the 64 KiB the batch's body first
    reserves); then the batch is refused."""
    # A connection reserves 16 KiB and twice its largest head with
    # net/http's 4 KiB (docs/serve.md); a body of Content-Length 900 first
    # reserves 901 bytes.
    conn, body = 16384 + 2 * (1024 + 4096), 901
    budget = 72 * conn + 70 * body
    server = make_server({"TIMEAWARE_SERVE_MEMORY_BUDGET": str(budget),
                          "TIMEAWARE_SERVE_MAX_HEADER_BYTES": "1024", "TIMEAWARE_SERVE_MAX_CONNS": "200"})
    adapter(server.url, retries=4)
    (source, text, truth, ei), want = timely_item(5)
    args = (source, "Let me think. " * 6000 + text, truth, ei)  # an 84 KB body
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)  # first use: the registry check
    scrape = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)

    def memory(m: Dict[str, float]) -> float:
        return metric(m, "timeaware_request_memory_bytes")

    def refused(m: Dict[str, float], reason: str) -> float:
        return metric(m, "timeaware_shed_requests_total", reason=reason)

    def wait_for(what: str, cond: Callable[[Dict[str, float]], bool]) -> Dict[str, float]:
        deadline = time.monotonic() + 60
        while not cond(m := server.metrics(scrape)):
            assert time.monotonic() < deadline, (
                f"the server did not reach this state: {what} (request memory {memory(m):.0f} of {budget} bytes, "
                f"refused for memory {refused(m, 'memory'):.0f}, connections refused {refused(m, 'connection_memory'):.0f})")
            time.sleep(0.01)
        return m

    # The first batch's body reservation is given back after its answer is
    # sent: wait until only the open connections (the adapter's and this
    # one) hold memory.
    base = memory(wait_for("only connections hold memory",
                           lambda m: memory(m) == conn * metric(m, "timeaware_open_connections")))
    holders = []
    for _ in range(70):
        c = socket.create_connection(("127.0.0.1", server.port))
        c.sendall(
            b"POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 900\r\n\r\n{\"it"
        )
        holders.append(c)

    def settled(m: Dict[str, float]) -> bool:
        # Each slow request holds its connection and body reservation, or
        # holds its connection and was answered 429 for its body, or was
        # answered 503 for its connection: which, depends on whether the
        # server accepted the connections faster than it read their bodies.
        body_refused, conn_refused = refused(m, "memory"), refused(m, "connection_memory")
        held = 70 - body_refused - conn_refused
        return memory(m) == base + held * (conn + body) + body_refused * conn

    full = wait_for("every slow request holds its memory or was refused for want of it", settled)
    assert budget - memory(full) < min(conn, 64 << 10), "no connection and no body of the batch fits"
    failed: List[BaseException] = []

    def finish_slow_requests_once_the_batch_is_refused():
        try:
            wait_for("the adapter's batch is refused",
                     lambda m: refused(m, "memory") + refused(m, "connection_memory")
                     > refused(full, "memory") + refused(full, "connection_memory"))
        except BaseException as exc:  # re-raised by the test below
            failed.append(exc)
        for c in holders:
            c.close()

    finisher = threading.Thread(target=finish_slow_requests_once_the_batch_is_refused)
    finisher.start()
    t0 = time.monotonic()
    try:
        r = tv.compute_score_sync(*args)
    finally:
        waited = time.monotonic() - t0
        finisher.join()
        scrape.close()
    if failed:
        raise failed[0]
    assert r["score"] == pytest.approx(want)
    assert tv.stats()["fallbacks"] == 0
    assert waited >= 1.0, "it waited the second Retry-After asks for instead of giving up"


def test_server_down_raises_at_first_use_or_logs_counts_and_reports(make_server, adapter, caplog):
    server = make_server()
    server.stop()
    adapter(server.url, retries=0)
    with pytest.raises(tv.VerifierUnreachable) as err:
        asyncio.run(tv.compute_score("timely/general", "<answer>42</answer>", "42", {"elapsed_s": 1.0}))
    assert server.url in str(err.value)

    adapter(server.url, retries=0, on_unreachable="fallback")
    args, want = timely_item(1)
    with caplog.at_level("ERROR", logger="timeaware"):
        down = [tv.compute_score_sync(*args)["score"] for _ in range(3)]
    assert down == [0.0, 0.0, 0.0]
    assert any(r.levelname == "ERROR" and server.url in r.getMessage() for r in caplog.records)
    assert tv.stats()["fallbacks"] == 3
    server.restart()  # at the URL the adapter knows
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)
    assert metric(server.metrics(), "timeaware_client_fallback_items_total") == 3
    assert tv.stats()["consecutive_fallbacks"] == 0


def test_outcomes_of_other_paths_share_the_run_of_the_batcher(shared_server, adapter):
    """count_outcomes, as a tool, an environment or a reward file calls it:
    answers alone ask nothing of the verifier; unanswered rollouts join the
    run the batcher's own items make, in order, and the one past the limit
    raises, naming the URL."""
    s = adapter(shared_server.url, retries=0, max_consecutive_fallbacks=2)
    scoring.count_outcomes([True, True])
    assert not scoring.ready(s), "answers alone started no batcher"
    scoring.count_outcomes([False, False])
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["longest_fallback_run"]) == (2, 2, 2)
    # An item the batcher scores ends the run the other path made.
    args, want = timely_item(2)
    assert tv.compute_score_sync(*args)["score"] == pytest.approx(want)
    assert scoring.stats()["consecutive_fallbacks"] == 0
    scoring.count_outcomes([False, True, False, False])
    assert scoring.stats()["consecutive_fallbacks"] == 2
    with pytest.raises(scoring.VerifierUnreachable, match=r"^timeaware: 3 items in a row got no answer from the "
                       + re.escape(f"verifier at {shared_server.url} ")):
        scoring.count_outcomes([False])
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["fallback_alarms"]) == (6, 3, 1)
    scoring.count_outcomes([True])
    assert scoring.stats()["consecutive_fallbacks"] == 0
    scoring.count_outcomes([])
    assert scoring.stats()["fallbacks"] == 6


def test_the_rollout_log_records_every_item_and_the_binary_rescores_it(shared_server, adapter, timeaware_bin,
                                                                       tmp_path):
    """With rollout_log set, every item the batcher scores is a line of this
    process's log, with its reward (None when it got none). `timeaware score
    --input DIR` re-scores the log by each line's data source: the same
    rewards (a timed rollout reads its stopped timer again), and a changed
    reward configuration changes exactly the rewards it moves."""
    import json
    import os
    import subprocess

    log_dir = tmp_path / "log"
    adapter(shared_server.url, rollout_log=str(log_dir))
    client = Client(shared_server.url)
    timer = client.stop_timer(client.create_timer("log-1", time_limit_s=30.0)["timer"])["timer"]
    items = [
        ("timely/general", "<answer>42</answer>", "42", {"time_limit_s": 30.0, "timer": timer, "id": "row-1"}),
        ("timely/general", "<answer>41</answer>", "42", {"time_limit_s": 10.0, "elapsed_s": 4.0, "index": 2}),
        ("timepuzzles", "MY ANSWER: 2023-08-15", "2023-08-15", {}),
        ("nosuch/source", "x", "y", {}),  # rejected: no reward
    ]
    got = tv.compute_score_batch(*[list(c) for c in zip(*items)])
    scoring.shutdown()  # flushed and closed
    (path,) = log_dir.iterdir()
    assert re.fullmatch(rf"rollouts-{re.escape(socket.gethostname())}-{os.getpid()}\.jsonl", path.name)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["data_source"] for x in lines] == [i[0] for i in items]
    assert [x["prompt_id"] for x in lines] == ["row-1", 2, None, None]
    assert [x["reward"] for x in lines[:3]] == [r["score"] for r in got[:3]]
    assert lines[3]["reward"] is None and "rejected by the verifier" in lines[3]["unscored"]
    assert lines[0]["extra_info"]["timer"] == timer, "the timer the item was scored on"
    assert lines[1]["details"]["elapsed_s"] == 4.0 and lines[1]["unscored"] is None

    def rescore(**env):
        base = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
        return subprocess.run([str(timeaware_bin), "score", "--input", str(log_dir)],
                              capture_output=True, text=True, timeout=60,
                              env={**base, "TIMEAWARE_TIMERS_SECRET": SECRET, **env})

    res = rescore()
    assert res.returncode == 0, res.stderr
    assert "0 of 4 logged rewards changed; 1 unscored then and now" in res.stderr
    results = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["score"] for r in results[:3]] == [r["score"] for r in got[:3]]
    # A step table instead of the sine: only the right, on-time answer moves.
    res = rescore(TIMEAWARE_REWARDS_TIMELY_UTILIZATION="step")
    assert res.returncode == 0, res.stderr
    assert "1 of 4 logged rewards changed; 1 unscored then and now" in res.stderr
    assert "changed: line 1 (timely/general): " in res.stderr


def test_a_rollout_log_that_cannot_be_written_fails_the_first_use(shared_server, adapter, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    adapter(shared_server.url, rollout_log=str(blocker / "log"))
    for score in (lambda: tv.compute_score_sync("timepuzzles", "MY ANSWER: 2023-08-15", "2023-08-15", {}),
                  lambda: tv.compute_score_batch(["timepuzzles"], ["MY ANSWER: 2023-08-15"], ["2023-08-15"]),
                  lambda: asyncio.run(tv.compute_score("timepuzzles", "MY ANSWER: 2023-08-15", "2023-08-15"))):
        with pytest.raises(scoring.RolloutLogError, match=r"rollout_log .*/file/log: cannot write the rollout log "
                           r"there: \[Errno 20\] Not a directory"):
            score()


def test_a_caller_that_stops_waiting_does_not_stall_the_batcher(shared_server, adapter, tmp_path):
    """A future its caller cancelled (a deadline, a cancelled task) before
    its batch was answered: the batch still frees its slot, with a rollout
    log as without one, so later items are scored; the log says the caller
    stopped waiting."""
    import json

    # Items wait a second for companions, so the cancel below always comes
    # before the batch is sent, however loaded the machine.
    s = adapter(shared_server.url, rollout_log=str(tmp_path / "log"), max_inflight=1, max_wait_ms=1000)
    b = scoring.get_batcher(s)
    item = scoring.prepare_item("timepuzzles", "MY ANSWER: 2023-08-15", "2023-08-15", {}, s)
    for _ in range(3):
        (gone,) = b.submit_many([("timepuzzles", item)])
        assert gone.cancel(), "cancelled while it waited for companions"
        (kept,) = b.submit_many([("timepuzzles", item)])
        assert kept.result(timeout=20)["score"] == 1.0
    scoring.shutdown()
    (path,) = (tmp_path / "log").iterdir()
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6
    assert sorted(x["unscored"] or "" for x in lines) == [""] * 3 + ["the caller stopped waiting"] * 3
