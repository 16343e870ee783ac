"""Our environments as OpenEnv environments: `python -m timeaware.openenv`
in front of the real `timeaware serve`, driven with OpenEnv's own
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
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import localstack
import pytest
from conftest import REPO_ROOT, cpu_grpo_config, right_answer, scripted_rollout
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
from test_trl_tool import SECONDS, read_timer, timely_general
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
    # Ours, connected first (a with block), reads the refusal the server sent
    # before closing: one refusal, not a second on a new connection.
    from timeaware.openenv import TimeawareEnvClient

    with TimeawareEnvClient(base_url=srv.url).sync() as d, \
            pytest.raises(RuntimeError, match=r"CAPACITY_REACHED") as refused:
        d.reset(**row_kwargs(row))
    assert d.reconnects == 0
    a.close()  # a client that closes frees its slot at once
    deadline = time.monotonic() + 10
    while srv.stats()["active_sessions"] != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    from timeaware.openenv import SessionClosed, TimelyAction

    c = TimeawareEnvClient(base_url=srv.url).sync()
    c.reset(**row_kwargs(row))
    timers = [b.state()["timer"], c.state().timer]
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
    # OpenEnv's own client opens a new session on its own; the step there is
    # refused, saying what became of the episode.
    with pytest.raises(RuntimeError, match=r"step before reset: this session has no episode \(a client that "
                       r"reconnects on its own after the server closed its session, idle for 1 s,"):
        b.step({"tool": "get_duration"})
    # Ours says the server closed the session, with the server's reason, and
    # counts it; its next reset starts a new episode on a new session.
    with pytest.raises(SessionClosed, match=r"^the server closed this session \(code 1001: session closed after "
                       r"1 s without a message; connect again\); its episode is lost: reset for a new one$"):
        c.step(TimelyAction(tool="get_duration"))
    assert (c.reconnects, c.lost_episodes) == (1, 1)
    c.reset(**row_kwargs(row))
    assert c.step(TimelyAction(tool="get_duration")).observation.text.endswith(" seconds.")
    assert (c.reconnects, c.lost_episodes) == (1, 1)
    b.close()
    c.close()
    want = {"sessions_opened": 5, "sessions_closed": 5, "idle_closed": 2, "refused_sessions": 2,
            "step_before_reset": 1}
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
                                "step_before_reset": 1, "episodes": 1, "scored": 1}),
                      (timely, {"sessions_opened": 1, "sessions_closed": 1, "unknown_data_source": 1, "bad_arguments": 5}),
                      (nego, {"sessions_opened": 1, "sessions_closed": 1, "bad_arguments": 3})):
        assert settled_delta(srv, before[srv], want) == want


def test_a_verifier_that_goes_down_gives_no_reward_never_a_zero(synth_outputs, restartable, tmp_path):
    verifier = restartable
    srv = OpenEnvServer("timely", verifier.url, tmp_path / "timely.log").wait()
    nego = OpenEnvServer("negotiation", verifier.url, tmp_path / "nego.log").wait()
    unavailable = {"cause": "verifier_unreachable", "verifier_url": verifier.url}
    try:
        budget = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train")[0]
        negotiation = negotiation_rows(synth_outputs, opens_other=1, opens_self=0)[0]
        t, n = client(srv), client(nego)
        first = t.reset(**row_kwargs(budget)).observation
        assert (first["cause"], first["verifier_url"]) == (None, verifier.url)
        n.reset(**row_kwargs(negotiation))
        verifier.stop()
        # The tool and the other side say they are unavailable, naming the
        # cause; the episode goes on.
        obs = t.step({"tool": "get_duration"}).observation
        assert obs["text"] == "The elapsed time is unavailable right now."
        assert {k: obs[k] for k in unavailable} == unavailable
        res = n.step(ACCEPT)
        assert not res.done and res.observation["text"].startswith("The other side cannot be reached right now")
        assert res.observation["cause"] == "verifier_unreachable"
        assert n.state()["step_count"] == 0
        # The final answer ends the episode with no reward, saying why: never a silent 0.
        answer = {"answer": f"<answer>{budget['reward_model']['ground_truth']}</answer>"}
        res = t.step(answer)
        assert res.done and res.reward is None
        assert "cannot be reached" in res.observation["unscored"] and verifier.url in res.observation["unscored"]
        assert res.observation["cause"] == "verifier_unreachable"
        # A new episode starts without the verifier, saying so: its tool
        # reads unavailable and its answer gets no reward, with that cause.
        obs = t.reset(**row_kwargs(budget)).observation
        assert {k: obs[k] for k in unavailable} == unavailable
        assert "cannot be reached to start the rollout's timer" in obs["unscored"]
        assert t.step({"tool": "get_duration"}).observation["cause"] == "verifier_unreachable"
        n.reset(**row_kwargs(negotiation))
        assert n.step(ACCEPT).observation["cause"] == "verifier_unreachable"
        # The verifier comes back before the answer: the episode that started
        # without its timer is still not scored (no measured time).
        verifier.start()
        res = t.step(answer)
        assert res.done and res.reward is None and res.observation["cause"] == "verifier_unreachable"
        c = srv.stats()["counters"]
        assert (c["verifier_unreachable"], c["unscored"], c["scored"], c["episodes"]) == (4, 2, 0, 2)
        assert nego.stats()["counters"]["verifier_unreachable"] == 3
        # The next episode is played with it and scored.
        assert t.reset(**row_kwargs(budget)).observation["cause"] is None
        assert t.step(answer).reward is not None
        t.close()
        n.close()
        # A server whose verifier is not there at its first episode starts it
        # without the verifier; the answer is scored once the verifier is back.
        verifier.stop()
        late = OpenEnvServer("single", verifier.url, tmp_path / "single.log").wait()
        try:
            with client(late) as env:
                obs = env.reset(**row_kwargs(budget)).observation
                assert obs["cause"] == "verifier_unreachable" and "cannot be reached" in obs["unscored"]
                verifier.start()
                res = env.step({"answer": completion_of(budget)})
                assert res.done and res.reward is not None and res.observation["cause"] is None
            assert late.stats()["counters"]["verifier_unreachable"] == 1
        finally:
            late.stop()
    finally:
        srv.stop()
        nego.stop()


def completion_of(row) -> str:
    return f"<answer>{row['reward_model']['ground_truth']}</answer>"


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


def test_grpo_trainer_on_openenv_counts_an_outage_and_stops_at_the_limit(
    synth_outputs, tokenizer_dir, tiny_model_dir, restartable, adapter, tmp_path
):
    """TimelySession and session_reward through GRPOTrainer while the
    verifier behind the OpenEnv server comes and goes: down from the start
    (step 1), back after a restart (step 2), killed mid-run (steps 3 and 4).
    Rollouts it did not answer get no reward, make their get_duration call
    a failed one in TRL's metrics, show as timeaware/verifier_unreachable,
    and count in the adapters' run of fallbacks, which stops the run with
    VerifierUnreachable naming the verifier once it passes the limit (6
    here: step 4's rollouts are the 5th to 8th in a row). A step the
    verifier answers ends the run."""
    from timeaware.openenv import TimelySession, session_reward
    from timeaware.scoring import VerifierUnreachable
    from transformers import AutoTokenizer
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen3_schema

    verifier = restartable
    srv = OpenEnvServer("timely", verifier.url, tmp_path / "timely.log").wait()
    try:
        verifier.stop()
        # The trainer's process is not pointed at the verifier: the OpenEnv
        # server names it.
        adapter.configure(url="http://127.0.0.1:9", max_consecutive_fallbacks=6)
        ds = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(4))
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        tokenizer.response_schema = qwen3_schema
        script: list = []

        def first_turn(i: int, right: bool) -> str:
            call = json.dumps({"name": "get_duration", "arguments": {}})
            return f"<answer>{ds[i]['reward_model']['ground_truth']}</answer>\n<tool_call>{call}</tool_call>"

        rollout = scripted_rollout(tokenizer, ds, first_turn, script, logprobs=False)
        rewards: list[list] = []
        stats: list[dict] = []

        def reward(completions, environments, **kwargs):
            try:
                out = session_reward(completions, environments, **kwargs)
            finally:
                stats.append(adapter.stats())
            rewards.append(out)
            # Between steps, as a supervisor would: back after step 1, killed after step 2.
            if len(rewards) == 1:
                verifier.start()
            elif len(rewards) == 2:
                verifier.stop()
            return out

        args = cpu_grpo_config(tmp_path / "out", max_completion_length=160, max_tool_calling_iterations=1,
                               log_completions=False, max_steps=4)
        trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=reward, args=args, train_dataset=ds,
                              processing_class=tokenizer, rollout_func=rollout,
                              environment_factory=functools.partial(TimelySession, base_url=srv.url))
        with pytest.raises(VerifierUnreachable, match=r"^timeaware: 8 items in a row got no answer from the "
                           r"verifier at " + verifier.url) as err:
            trainer.train()
        assert err.value.url == verifier.url
        assert len(script) == 4 and len(stats) == 4
        assert rewards[0] == [None] * 4 and rewards[2] == [None] * 4
        assert all(r is not None and r > 0 for r in rewards[1]), rewards[1]
        runs = [(s["fallbacks"], s["consecutive_fallbacks"], s["fallback_alarms"]) for s in stats]
        assert runs == [(4, 4, 0), (4, 0, 0), (8, 4, 0), (12, 8, 1)], runs
        logged = [h for h in trainer.state.log_history if "timeaware/verifier_unreachable" in h]
        assert [h["timeaware/verifier_unreachable"] for h in logged] == [1.0, 0.0, 1.0]
        assert [h["timeaware/unscored"] for h in logged] == [1.0, 0.0, 1.0]
        assert [h["tools/failure_frequency"] for h in logged] == [1.0, 0.0, 1.0]
        c = srv.stats()["counters"]
        assert (c["episodes"], c["scored"], c["unscored"]) == (16, 4, 12), c
    finally:
        srv.stop()


class HarnessLoop:
    """TRL 1.16's async GRPO OpenEnv harness loop (``_HarnessRolloutLoop``)
    with only its vLLM call scripted: its own ``_run_session`` drives the
    session factory through OpenEnv's ``MCPHarnessAdapter`` and TRL's own
    ``_sample_turn`` (chat template, response parsing, turn records), then
    reconciles the turns into training sequences. The loop is built without
    its constructor, which starts the multi-process rollout machinery."""

    def __init__(self, factory, tokenizer, reply):
        import threading

        from openenv.core.harness import HarnessRunLimits, MCPHarnessAdapter
        from trl.experimental.async_grpo.openenv_harness import _HarnessRolloutLoop

        loop = _HarnessRolloutLoop.__new__(_HarnessRolloutLoop)
        loop._factory, loop._adapter = factory, MCPHarnessAdapter()
        loop._limits = HarnessRunLimits(max_turns=3, sampling={})
        loop._rollout_reward_fn, loop._live_sessions, loop._stop_event = None, set(), threading.Event()
        loop._fork_threshold_tokens = 0
        loop.tokenizer, loop.chat_template, loop.chat_template_kwargs = tokenizer, None, {}
        self._events = asyncio.new_event_loop()
        threading.Thread(target=self._events.run_forever, daemon=True).start()
        loop._loop = self._events

        async def generate(prompt_ids):
            text = tokenizer.decode(prompt_ids, skip_special_tokens=False)
            ids = tokenizer(reply(text), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            return ids, [0.0] * len(ids)

        loop._generate_one_turn = generate
        self.loop = loop

    def run(self, prompt):
        return self.loop._run_session(prompt, 0)

    def close(self):
        self._events.call_soon_threadsafe(self._events.stop)


def test_trls_async_grpo_harness_plays_the_timely_environment(synth_outputs, tokenizer_dir, server, openenv_servers,
                                                               restartable, tmp_path, adapter):
    """TimelySessionFactory in TRL's async GRPO OpenEnv harness: the model
    calls get_duration (the timer's reading comes back as the tool's
    result), answers, and the harness's reward is the verifier's on the
    stopped timer, computed here from the row. With the verifier down, the
    tool call is a failed one, the rollout gets no reward (TRL leaves it
    out), and such rollouts stop the run past the limit with RunStopped,
    which the harness does not swallow."""
    from timeaware.openenv import TimelySessionFactory
    from timeaware.scoring import RunStopped
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen3_schema

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema
    rows = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train").select(range(2))
    call = json.dumps({"name": "get_duration", "arguments": {}})

    def reply_for(text):
        if "Let me check the clock." not in text:  # the first turn
            return f"Let me check the clock.\n<tool_call>{call}</tool_call>"
        row = next(r for r in rows if r["prompt"][-1]["content"] in text)
        return f"<answer>{row['reward_model']['ground_truth']}</answer>"

    sessions = []

    class Recording(TimelySessionFactory):
        def create(self, task, seed=None, episode_id=None):
            sessions.append(super().create(task, seed, episode_id))
            return sessions[-1]

    harness = HarnessLoop(Recording(openenv_servers["timely"].url, rows=rows), tokenizer, reply_for)
    try:
        for row in rows:
            (completion, completion_ids, sequences, calls, failures, reward), metrics = harness.run(row["prompt"])
            assert (calls, failures) == (1, 0) and metrics["turns"] == 2 and sequences, (completion, metrics)
            tool = next(m for m in completion if m["role"] == "tool")
            assert SECONDS.match(tool["content"]), tool
            reading = read_timer(server.url, sessions[-1].timer)
            assert reading["stopped"] is True
            limit = row["extra_info"]["time_limit_s"]
            assert reward == pytest.approx(timely_general(True, reading["elapsed_s"], limit), abs=1e-9)
    finally:
        harness.close()

    # The verifier goes down: no reward, a failed call, counted; past the limit the run stops.
    adapter.configure(max_consecutive_fallbacks=2)
    srv = OpenEnvServer("timely", restartable.url, tmp_path / "harness.log").wait()
    harness = HarnessLoop(TimelySessionFactory(srv.url, rows=rows), tokenizer, reply_for)
    try:
        restartable.stop()
        for row in rows:
            (_, _, _, calls, failures, reward), _ = harness.run(row["prompt"])
            assert (calls, failures, reward) == (1, 1, None)
        with pytest.raises(RunStopped, match=r"3 items in a row got no answer from the verifier at "
                           + re.escape(restartable.url)):
            harness.run(rows[0]["prompt"])
    finally:
        harness.close()
        srv.stop()


def test_a_timely_session_the_server_closed_gives_no_reward_and_starts_again(synth_outputs, openenv_servers, adapter):
    """TimelySession on a server that closed its session for idleness: the
    tool call raises SessionClosed with the server's reason (TRL hands it to
    the model and counts a failed call), the rollout gets no reward with the
    cause session_closed instead of failing the training step, and the next
    reset plays a new episode on a new session."""
    from timeaware.openenv import SessionClosed, TimelySession, session_reward

    srv = openenv_servers["bounded"]
    row = load_dataset("parquet", data_files=str(synth_outputs["budget"]), split="train")[0]
    env = TimelySession(base_url=srv.url)
    env.reset(**row_kwargs(row))
    deadline = time.monotonic() + 10
    while srv.stats()["active_sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.stats()["active_sessions"] == 0, "closed after 1 s without a message"
    with pytest.raises(SessionClosed, match=r"session closed after 1 s without a message"):
        env.get_duration()
    answer = [{"role": "assistant", "content": f"<answer>{row['reward_model']['ground_truth']}</answer>"}]
    logged: dict = {}
    assert session_reward([answer], [env], log_metric=logged.__setitem__) == [None]
    assert env.cause == "session_closed" and "session closed after 1 s" in env.unscored
    assert logged == {"timeaware/unscored": 1.0, "timeaware/verifier_unreachable": 0.0}
    env.reset(**row_kwargs(row))
    assert SECONDS.match(env.get_duration())
    assert session_reward([answer], [env]) == [pytest.approx(env.reward)] and env.reward > 0
    assert env._client.lost_episodes == 1

    # Every episode lost to the idle close: the run stops past the limit
    # instead of training on nothing.
    from timeaware.openenv import SessionsLost

    adapter.configure(max_consecutive_fallbacks=1)

    def lose_one():
        env.reset(**row_kwargs(row))
        t0 = time.monotonic()
        while srv.stats()["active_sessions"] and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        return session_reward([answer], [env])

    assert lose_one() == [None]
    with pytest.raises(SessionsLost, match=r"^timeaware: 2 rollouts in a row lost their episode because the OpenEnv "
                       r"server closed their session \(more than max_consecutive_fallbacks=1\)"):
        lose_one()
    env.reset(**row_kwargs(row))
    assert session_reward([answer], [env])[0] is not None, "a scored rollout ends the run"
