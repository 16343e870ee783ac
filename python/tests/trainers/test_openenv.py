"""Our environments as OpenEnv environments: `python -m timeaware.openenv`
in front of the real `timeaware serve`, driven with openenv-core's own
client (``GenericEnvClient``, dicts in and out) over its WebSocket protocol.

Every expected reward is computed here from the row (exact dates, the
Timely-RL formula on the timer's own reading, the negotiation role's points
from its payoff table), with the helpers the TRL tests use for the same
rows, never with the reward code under test.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import localstack
import pytest
from conftest import REPO_ROOT, TIMERS_SECRET, Server, cpu_grpo_config, right_answer, scripted_rollout
from datasets import load_dataset
from openenv.core import GenericEnvClient
from test_trl_grpo import completion, expected, rows
from test_trl_negotiation import (
    ACCEPT,
    WALK_AWAY,
    batna_payoff,
    negotiation_rows,
    opening_payoff,
    truth,
)
from test_trl_tool import read_timer, timely_general
from websockets.exceptions import ConnectionClosed

# What reset takes: the row's columns, as TRL's environment_factory hands them over.
COLUMNS = ("data_source", "reward_model", "extra_info")


class OpenEnvServer(localstack.AddrFileServer):
    """One `python -m timeaware.openenv` on ``port``, by default one the kernel chose."""

    what = "the OpenEnv server"

    def __init__(self, kind: str, verifier: str, log: Path, *args: str, port: int = 0,
                 env_extra: dict | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
        env.update(env_extra or {})
        super().__init__([sys.executable, "-m", "timeaware.openenv", "--env", kind, "--verifier", verifier,
                          "--port", str(port), *args], log, env, cwd=REPO_ROOT)

    def wait(self) -> OpenEnvServer:
        localstack.required(self.wait_ready, 60)
        return self

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/timeaware/stats", timeout=5) as r:
            return json.loads(r.read())


@pytest.fixture(scope="module")
def openenv_servers(server, tmp_path_factory):
    """The three kinds in front of the session's verifier, and a timely
    server bounded to 2 sessions that closes a session idle for 1 s."""
    d = tmp_path_factory.mktemp("openenv")
    specs = {"single": ("single",), "timely": ("timely",), "negotiation": ("negotiation", "--opponent-beta", "1"),
             "bounded": ("timely", "--max-sessions", "2", "--idle-timeout-s", "1")}
    started = {name: OpenEnvServer(spec[0], server.url, d / f"{name}.log", *spec[1:]) for name, spec in specs.items()}
    try:
        yield {name: s.wait() for name, s in started.items()}
    finally:
        for s in started.values():
            s.stop()


def row_kwargs(row) -> dict:
    return {k: row[k] for k in COLUMNS}


def client(srv: OpenEnvServer):
    return GenericEnvClient(base_url=srv.url).sync()


def counters_delta(srv: OpenEnvServer, before: dict) -> dict:
    after = srv.stats()["counters"]
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def settled_delta(srv: OpenEnvServer, before: dict, want: dict) -> dict:
    """counters_delta once it is want, or the last one seen after 60 s: a
    session is counted closed when the server has handled the client's
    close, which the client does not wait for (a loaded machine shows it)."""
    deadline = time.monotonic() + 60
    while (delta := counters_delta(srv, before)) != want and time.monotonic() < deadline:
        time.sleep(0.02)
    return delta


@pytest.mark.parametrize("name", ["puzzles", "traveler", "budget"])
def test_single_turn_reset_step_state_and_the_reward_is_ours(name, synth_outputs, pairs_split, openenv_servers):
    srv = openenv_servers["single"]
    ds = rows(name, synth_outputs, pairs_split, n=2)
    before = srv.stats()["counters"]
    for i in range(len(ds)):
        row = ds[i]
        for right in (True, False):
            with client(srv) as env:
                first = env.reset(**row_kwargs(row))
                assert (first.done, first.reward) == (False, None)
                assert first.observation["data_source"] == row["data_source"]
                st = env.state()
                assert (st["kind"], st["data_source"], st["step_count"], st["done"]) == \
                    ("single", row["data_source"], 0, False)
                res = env.step({"answer": completion(row, right)})
                # A budget row without the tool: no timer, so U(t) = 0 (Timely-RL's reward for no measured time).
                assert res.done and res.reward == pytest.approx(expected(row, right), abs=1e-9), (name, right)
                assert res.observation["unscored"] is None
                st = env.state()
                assert (st["step_count"], st["done"]) == (1, True)
                assert st["reward"] == pytest.approx(res.reward)
    want = {"sessions_opened": 4, "sessions_closed": 4, "episodes": 4, "scored": 4}
    assert settled_delta(srv, before, want) == want


def test_a_front_with_a_token_serves_only_the_clients_that_send_it(synth_outputs, pairs_split, server, tmp_path):
    """TIMEAWARE_OPENENV_TOKEN: OpenEnv's own client, which sends no token, is
    refused, and so is every route but /health; our client sends it."""
    from timeaware.openenv import TimeawareEnvClient

    srv = OpenEnvServer("single", server.url, tmp_path / "token.log",
                        env_extra={"TIMEAWARE_OPENENV_TOKEN": "front-secret"}).wait()
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(srv.url + "/timeaware/stats", timeout=5)
        assert refused.value.code == 401
        row = rows("puzzles", synth_outputs, pairs_split, n=1)[0]
        with pytest.raises(ConnectionError), client(srv) as env:
            env.reset(**row_kwargs(row))
        with pytest.raises(ConnectionError), TimeawareEnvClient(base_url=srv.url, token="wrong").sync() as env:
            env.reset(**row_kwargs(row))
        with TimeawareEnvClient(base_url=srv.url, token="front-secret").sync() as env:
            env.reset(**row_kwargs(row))
            res = env.step({"answer": completion(row, True)})
            assert res.done and res.reward == pytest.approx(expected(row, True), abs=1e-9)
    finally:
        srv.stop()


def test_a_front_beyond_loopback_needs_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    out = subprocess.run([sys.executable, "-m", "timeaware.openenv", "--env", "single", "--verifier", "http://127.0.0.1:9",
                          "--host", "0.0.0.0", "--port", "0"], env=env, cwd=REPO_ROOT, capture_output=True, text=True, check=False,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    assert "--host 0.0.0.0: listening beyond loopback needs TIMEAWARE_OPENENV_TOKEN" in out.stderr


def test_the_front_imports_no_trainer():
    """The front needs neither VeRL nor TRL: importing it loads neither."""
    code = "import sys, timeaware.openenv; print(sorted(m for m in ('verl', 'trl') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=False,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_timely_tool_environment_reads_the_timer_and_scores_its_reading(synth_outputs, server, openenv_servers):
    srv = openenv_servers["timely"]
    ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(2))
    for i, right in ((0, True), (1, False)):
        row = ds[i]
        with client(srv) as env:
            env.reset(**row_kwargs(row))
            timer = env.state()["timer"]
            # The timer was started with the row's limit and options.
            assert read_timer(server.url, timer)["time_limit_s"] == pytest.approx(row["extra_info"]["time_limit_s"])
            first = env.step({"tool": "get_duration", "arguments": {}})
            assert first.observation["text"].endswith(" seconds.") and not first.done and first.reward is None
            time.sleep(0.2)
            second = env.step({"tool": "get_duration"})
            assert second.observation["elapsed_s"] > first.observation["elapsed_s"]  # the same timer, running
            answer = row["reward_model"]["ground_truth"] if right else "-1"
            res = env.step({"answer": f"Working it out.\n<answer>{answer}</answer>"})
            st = env.state()
            # Scored on the stopped timer: its reading is the rollout's time, and it no longer moves.
            reading = read_timer(server.url, st["timer"])
            time.sleep(0.1)
            assert read_timer(server.url, st["timer"])["elapsed_s"] == reading["elapsed_s"]
            assert reading["elapsed_s"] >= second.observation["elapsed_s"]
            want = timely_general(right, reading["elapsed_s"], row["extra_info"]["time_limit_s"])
            assert res.done and res.reward == pytest.approx(want, abs=1e-9)
            assert res.observation["details"]["elapsed_s"] == pytest.approx(reading["elapsed_s"], abs=1e-9)
            assert (st["step_count"], st["done"]) == (3, True)


def test_negotiation_episodes_end_with_the_payoff_of_the_table(synth_outputs, openenv_servers):
    srv = openenv_servers["negotiation"]
    ds = negotiation_rows(synth_outputs, opens_other=1, opens_self=1)
    for i in range(len(ds)):
        row, g = ds[i], truth(ds[i])
        with client(srv) as env:
            env.reset(**row_kwargs(row))
            if g["first_speaker"] != g["role"]:
                res = env.step(ACCEPT)  # a deal on the other side's opening offer
                want = opening_payoff(g)
            else:
                offer = {"action": "propose", "offer": {x["id"]: x["options"][0] for x in g["scenario"]["issues"]}}
                reply = env.step({"text": "Here is my first proposal for every item.", "action": offer})
                assert not reply.done and reply.reward is None
                assert reply.observation["text"].startswith(row["extra_info"]["turn_prefix"].split("{")[0])
                res = env.step(WALK_AWAY)
                want = batna_payoff(g)
                assert res.observation["details"]["batna_taken"] == 1
            assert res.done and res.reward == pytest.approx(want, abs=1e-9)
            assert env.state()["reward"] == pytest.approx(want, abs=1e-9)


def test_concurrent_sessions_are_kept_apart(synth_outputs, server, openenv_servers):
    srv = openenv_servers["timely"]
    ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(4))

    async def episode(i: int, right: bool):
        async with GenericEnvClient(base_url=srv.url) as env:
            await env.reset(**row_kwargs(ds[i]))
            st = await env.state()
            for _ in range(i + 1):  # each session calls the tool a different number of times
                await env.step({"tool": "get_duration"})
                await asyncio.sleep(0.05)
            answer = ds[i]["reward_model"]["ground_truth"] if right else "-1"
            res = await env.step({"answer": f"<answer>{answer}</answer>"})
            return st, await env.state(), res

    async def all_of_them():
        return await asyncio.gather(*(episode(i, i % 2 == 0) for i in range(4)))

    out = asyncio.run(all_of_them())
    assert len({st["episode_id"] for st, _, _ in out}) == 4
    assert len({st["timer"] for st, _, _ in out}) == 4
    for i, (_, end, res) in enumerate(out):
        assert end["step_count"] == i + 2  # its own calls and its answer, nobody else's
        assert end["data_source"] == ds[i]["data_source"]
        reading = read_timer(server.url, end["timer"])
        assert reading["time_limit_s"] == pytest.approx(ds[i]["extra_info"]["time_limit_s"])
        want = timely_general(i % 2 == 0, reading["elapsed_s"], ds[i]["extra_info"]["time_limit_s"])
        assert res.reward == pytest.approx(want, abs=1e-9), i


def test_sessions_are_bounded_and_an_idle_one_is_closed(synth_outputs, server, openenv_servers):
    srv = openenv_servers["bounded"]
    row = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train")[0]
    before = srv.stats()["counters"]
    a, b, c = client(srv), client(srv), client(srv)
    a.reset(**row_kwargs(row))
    b.reset(**row_kwargs(row))
    assert srv.stats()["active_sessions"] == 2
    # A third is refused: OpenEnv's server sends CAPACITY_REACHED and closes
    # the connection; the client raises that error, or that the server closed
    # the connection when the close reaches it before its message is sent.
    with pytest.raises((RuntimeError, ConnectionClosed)) as refused:
        c.reset(**row_kwargs(row))
    assert isinstance(refused.value, ConnectionClosed) or "CAPACITY_REACHED" in str(refused.value), refused.value
    c.close()
    a.close()  # a client that closes frees its slot at once
    deadline = time.monotonic() + 10
    while srv.stats()["active_sessions"] != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    c = client(srv)
    c.reset(**row_kwargs(row))
    timers = [b.state()["timer"], c.state()["timer"]]
    # b and c are never closed by their clients: after 1 s without a message
    # the server closes their connections and sessions and stops their timers.
    t0 = time.monotonic()
    while srv.stats()["active_sessions"] and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    assert srv.stats()["active_sessions"] == 0
    assert time.monotonic() - t0 < 3, "closed on time, not at the reaper's next round"
    for t in timers:
        first = read_timer(server.url, t)
        time.sleep(0.05)
        assert first["stopped"] is True and read_timer(server.url, t)["elapsed_s"] == first["elapsed_s"]
    # A message on the closed session fails, saying why.
    with pytest.raises(ConnectionClosed, match=r"session closed after 1 s without a message; connect again"):
        b.step({"tool": "get_duration"})
    b.close()
    c.close()
    want = {"sessions_opened": 3, "sessions_closed": 3, "idle_closed": 2, "refused_sessions": 1}
    assert settled_delta(srv, before, want) == want


def test_bad_input_gets_a_clear_error_counted(synth_outputs, pairs_split, openenv_servers):
    single, timely, nego = openenv_servers["single"], openenv_servers["timely"], openenv_servers["negotiation"]
    puzzle = rows("puzzles", synth_outputs, pairs_split, n=1)[0]
    budget = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train")[0]
    before = {s: s.stats()["counters"] for s in (single, timely, nego)}
    with client(single) as env:
        # A row whose data source has no reward.
        with pytest.raises(RuntimeError, match=r"the verifier has no reward for data_source 'nope/unknown'"):
            env.reset(**{**row_kwargs(puzzle), "data_source": "nope/unknown"})
        with pytest.raises(RuntimeError, match="step before reset"):
            env.step({"answer": "MY ANSWER: 2000-01-01"})
        # A step after the episode ended.
        env.reset(**row_kwargs(puzzle))
        assert env.step({"answer": right_answer("timepuzzles", puzzle["reward_model"]["ground_truth"], {})}).reward == 1.0
        with pytest.raises(RuntimeError, match="the episode is over: reset the environment for a new one"):
            env.step({"answer": "again"})
        # An action the environment does not take: OpenEnv's validation error.
        env.reset(**row_kwargs(puzzle))
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"text": "not an answer"})
    with client(timely) as env:
        with pytest.raises(RuntimeError, match=r"needs a timely/\* row; got data_source 'timepuzzles'"):
            env.reset(**row_kwargs(puzzle))
        env.reset(**row_kwargs(budget))
        # Tool calls with broken arguments.
        for action, msg in (({"tool": "get_duration", "arguments": {"when": "now"}}, r"takes no arguments; got \['when'\]"),
                            ({"tool": "get_duration", "arguments": "now"}, "takes no arguments; got 'now'"),
                            ({"tool": "get_time"}, "unknown tool 'get_time'"),
                            ({"tool": "get_duration", "answer": "1"}, "either a tool call"),
                            ({}, "either a tool call")):
            with pytest.raises(RuntimeError, match=msg):
                env.step(action)
        st = env.state()
        assert (st["step_count"], st["refused"], st["done"]) == (0, 5, False)
        assert env.step({"tool": "get_duration"}).observation["text"].endswith(" seconds.")
    with client(nego) as env:
        row = negotiation_rows(synth_outputs, opens_other=0, opens_self=1)[0]
        env.reset(**row_kwargs(row))
        for action in ("propose", {"offer": {}}, ["accept"]):
            with pytest.raises(RuntimeError, match="action must be an object such as"):
                env.step({"text": "Here is my offer.", "action": action})
        assert (env.state()["step_count"], env.state()["refused"]) == (0, 3)
        # An action the rules do not know is the verifier's to judge: the message
        # is delivered, counted as no valid action, and the episode goes on.
        assert not env.step({"text": "Here is my offer.", "action": {"action": "fly"}}).done
    for srv, want in ((single, {"sessions_opened": 1, "sessions_closed": 1, "unknown_data_source": 1, "after_end": 1,
                                "episodes": 1, "scored": 1}),
                      (timely, {"sessions_opened": 1, "sessions_closed": 1, "unknown_data_source": 1, "bad_arguments": 5}),
                      (nego, {"sessions_opened": 1, "sessions_closed": 1, "bad_arguments": 3})):
        assert settled_delta(srv, before[srv], want) == want


def test_a_verifier_that_goes_down_gives_no_reward_never_a_zero(synth_outputs, timeaware_bin, tmp_path):
    env_vars = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env_vars["TIMEAWARE_TIMERS_SECRET"] = TIMERS_SECRET
    verifier = Server(timeaware_bin, tmp_path / "serve.log", env_vars)
    srv = OpenEnvServer("timely", verifier.url, tmp_path / "timely.log").wait()
    nego = OpenEnvServer("negotiation", verifier.url, tmp_path / "nego.log").wait()
    try:
        budget = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train")[0]
        negotiation = negotiation_rows(synth_outputs, opens_other=1, opens_self=0)[0]
        t, n = client(srv), client(nego)
        t.reset(**row_kwargs(budget))
        n.reset(**row_kwargs(negotiation))
        verifier.stop()
        # The tool and the other side say they are unavailable; the episode goes on.
        assert t.step({"tool": "get_duration"}).observation["text"] == "The elapsed time is unavailable right now."
        res = n.step(ACCEPT)
        assert not res.done and res.observation["text"].startswith("The other side cannot be reached right now")
        assert n.state()["step_count"] == 0
        # The final answer ends the episode with no reward, saying why: never a silent 0.
        res = t.step({"answer": f"<answer>{budget['reward_model']['ground_truth']}</answer>"})
        assert res.done and res.reward is None
        assert "cannot be reached" in res.observation["unscored"] and verifier.url in res.observation["unscored"]
        # A new episode cannot start without the verifier: refused, naming it.
        with pytest.raises(RuntimeError, match="cannot start the rollout's timer on the verifier at " + verifier.url):
            t.reset(**row_kwargs(budget))
        t.close()
        n.close()
        c = srv.stats()["counters"]
        assert (c["verifier_unreachable"], c["unscored"], c["scored"], c["episodes"]) == (3, 1, 0, 1)
        assert nego.stats()["counters"]["verifier_unreachable"] == 1
        # A server whose verifier was never there refuses the first episode, naming it.
        late = OpenEnvServer("single", verifier.url, tmp_path / "single.log").wait()
        try:
            with client(late) as env, pytest.raises(RuntimeError, match="cannot reach the verifier at " + verifier.url):
                env.reset(**row_kwargs(budget))
            assert late.stats()["counters"]["verifier_unreachable"] == 1
        finally:
            late.stop()
    finally:
        srv.stop()
        nego.stop()
        verifier.stop()


def mcp(srv: OpenEnvServer, method: str, **params) -> dict:
    """One JSON-RPC call on OpenEnv's HTTP route (/mcp), which names sessions by id."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(srv.url + "/mcp", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def test_a_session_by_id_expires_and_an_unknown_id_is_refused(openenv_servers):
    """OpenEnv's HTTP sessions, named by id, have no connection to close:
    a forgotten one is freed by OpenEnv's reaper (every 5 s here), after
    which its id, like one that never existed, is refused by name."""
    srv = openenv_servers["bounded"]
    before = srv.stats()["counters"]
    assert "Unknown session_id: no-such-session" in mcp(srv, "openenv/session/close", session_id="no-such-session")["error"]["message"]
    sid = mcp(srv, "openenv/session/create")["result"]["session_id"]
    assert srv.stats()["active_sessions"] == 1
    t0 = time.monotonic()
    while srv.stats()["active_sessions"] and time.monotonic() - t0 < 15:
        time.sleep(0.2)
    assert srv.stats()["active_sessions"] == 0
    assert f"Unknown session_id: {sid}" in mcp(srv, "openenv/session/close", session_id=sid)["error"]["message"]
    want = {"sessions_opened": 1, "sessions_closed": 1}
    assert settled_delta(srv, before, want) == want


def test_grpo_trainer_drives_the_timely_environment_through_the_openenv_client(
    synth_outputs, tokenizer_dir, tiny_model_dir, server, openenv_servers, tmp_path
):
    """TRL 1.16's GRPOTrainer with an OpenEnv environment the way TRL's
    docs show it: a class holding the OpenEnv client as
    ``environment_factory``, its public method the tool, and a reward
    function reading the environments."""
    from timeaware.openenv import TimelySession, session_reward
    from transformers import AutoTokenizer
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen3_schema

    srv = openenv_servers["timely"]
    before = srv.stats()["counters"]
    ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(4))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema  # our template writes <tool_call>{"name", "arguments"}</tool_call>
    script: list[list[tuple[int, bool]]] = []

    def first_turn(i: int, right: bool) -> str:
        answer = ds[i]["reward_model"]["ground_truth"] if right else "-1"
        call = json.dumps({"name": "get_duration", "arguments": {}})
        return f"Working it out.\n<answer>{answer}</answer>\n<tool_call>{call}</tool_call>"

    rollout = scripted_rollout(tokenizer, ds, first_turn, script, variant=lambda k: k % 2 == 0, logprobs=False)
    seen: list[list[tuple[float | None, int, str]]] = []

    def reward(completions, environments, **kwargs):
        out = session_reward(completions, environments, **kwargs)
        seen.append([(r, e.calls, e._client.state().timer) for r, e in zip(out, environments)])
        return out

    args = cpu_grpo_config(tmp_path / "out", max_completion_length=160, max_tool_calling_iterations=1, log_completions=False)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                          processing_class=tokenizer, rollout_func=rollout,
                          environment_factory=functools.partial(TimelySession, base_url=srv.url))
    trainer.train()

    assert trainer.state.global_step == 2 and len(script) == 2 and len(seen) == 2
    for h in [h for h in trainer.state.log_history if "tools/call_frequency" in h]:
        assert h["tools/call_frequency"] == 1.0 and h["tools/failure_frequency"] == 0.0
    for call, got in zip(script, seen):
        for (i, right), (r, calls, timer) in zip(call, got):
            # The call reached the episode's timer; the reward is the verifier's
            # on that timer's stopped reading, computed here from the row.
            assert calls == 1
            reading = read_timer(server.url, timer)
            assert reading["stopped"] is True and reading["elapsed_s"] > 0
            limit = ds[i]["extra_info"]["time_limit_s"]
            assert r == pytest.approx(timely_general(right, reading["elapsed_s"], limit), abs=1e-9), (i, right)
    assert len({t for got in seen for _, _, t in got}) == 8  # eight rollouts, eight timers
    delta = counters_delta(srv, before)
    assert (delta["episodes"], delta["scored"], delta.get("unscored", 0)) == (8, 8, 0)
