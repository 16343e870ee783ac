"""Interop tests for `timeaware synth negotiation`: the VeRL RL parquet read
back by pyarrow, one layout for every row, ground truths that parse as JSON,
the condition prefixes, a transcript built from a row scored offline by
`timeaware score` with the negotiation reward, and rows played through
`timeaware serve`'s negotiation environment with the Python episode client
(`timeaware.negotiation.NegotiationEpisode`): the signed state carried from
step to step, the timer on every step, and the service's refusals.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN).
"""
from __future__ import annotations

import base64
import json
import math
import os
import re
import subprocess
import sys
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from timeaware import scoring
from timeaware.client import Client, TimeawareError

pytestmark = pytest.mark.needs_binary

N_ROWS = 40
SEED = 11
CONDITIONS = ["control", "time_aware", "urgency", "turn_limit"]
TIME_LEFT = re.compile(r"^\[(\d+) seconds left\]\n")
# The New Recruit best totals (the Real-Time Deadlines paper, App. A.1) and the BATNA of both roles.
MAX_POINTS = {"hr_manager": 16325, "candidate": 19200}
BATNA = 4500


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env.update(extra)
    return env


def run(timeaware_bin, *args, stdin=None):
    return subprocess.run(
        [str(timeaware_bin), *map(str, args)],
        input=stdin, capture_output=True, text=True, timeout=120, env=clean_env(),
    )


@pytest.fixture(scope="module")
def negotiation(timeaware_bin, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("negotiation")
    out = tmp / "negotiation.parquet"
    proc = run(timeaware_bin, "synth", "negotiation", "--count", N_ROWS, "--seed", SEED, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return {"out": out, "rows": pq.read_table(out).to_pylist(), "tmp": tmp}


def key_paths(obj, prefix=()):
    paths = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            paths.add(prefix + (k,))
            paths |= key_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for v in obj:
            paths |= key_paths(v, prefix + ("[]",))
    return paths


def test_rows_have_the_verl_layout(negotiation):
    schema = pq.read_schema(negotiation["out"])
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert schema.field("reward_model").type.field("ground_truth").type == pa.string()
    rows = negotiation["rows"]
    assert len(rows) == N_ROWS
    first = key_paths(rows[0])
    for i, row in enumerate(rows):
        assert key_paths(row) == first, f"row {i} has other nested keys"
        assert row["data_source"] == "negotiation" and row["ability"] == "negotiation"
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        ei = row["extra_info"]
        assert ei["index"] == i and ei["split"] == "train"
        assert ei["id"] == f"negotiation-s{SEED}-{i}"
        assert ei["condition"] == CONDITIONS[i % 4]
        assert ei["scenario_id"] == "new_recruit"
        assert {ei["role"], ei["other_role"]} == {"hr_manager", "candidate"}
        gt = json.loads(row["reward_model"]["ground_truth"])
        assert row["reward_model"]["style"] == "rule"
        assert gt["role"] == ei["role"] and gt["condition"] == ei["condition"]
        assert gt["deadline_s"] == ei["deadline_s"] and gt["turn_limit"] == ei["turn_limit"]
        assert gt["wpm"] == ei["wpm"] == 150
        if ei["condition"] == "turn_limit":
            assert ei["deadline_s"] == 0 and ei["turn_limit"] in range(5, 10)
        else:
            assert ei["turn_limit"] == 0 and ei["deadline_s"] in (240, 300, 360)


def test_prefixes_follow_the_condition(negotiation):
    for row in negotiation["rows"]:
        ei = row["extra_info"]
        user = row["prompt"][1]["content"]
        gt = json.loads(row["reward_model"]["ground_truth"])
        if ei["condition"] == "time_aware":
            m = TIME_LEFT.match(user)
            assert m, user
            spoken = len(gt["opening"]["text"].split()) * 60 / 150 if gt.get("opening") else 0
            assert int(m.group(1)) == math.floor(ei["deadline_s"] - spoken)
            assert ei["turn_prefix"] == "[{seconds} seconds left]"
        elif ei["condition"] == "urgency":
            assert user.startswith(ei["turn_prefix"] + "\n") and ei["turn_prefix"]
        else:
            assert ei["turn_prefix"] == "" and not user.startswith("[")


def test_transcripts_score_through_the_cli(negotiation, timeaware_bin):
    """The agent walks away at once: BATNA for both, score 4500 / its best total."""
    items = []
    for row in negotiation["rows"]:
        role = row["extra_info"]["role"]
        transcript = json.dumps({"role": role, "text": "No, thank you.", "action": {"action": "batna"}})
        items.append({
            "data_source": "negotiation",
            "solution_str": transcript,
            "ground_truth": row["reward_model"]["ground_truth"],
            "extra_info": row["extra_info"],
        })
    inp = negotiation["tmp"] / "items.jsonl"
    inp.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    proc = run(timeaware_bin, "score", "--data-source", "negotiation", "--input", inp)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == N_ROWS
    for row, res in zip(negotiation["rows"], results):
        assert list(res) == ["score", *scoring.BUILTIN_KEYS["negotiation"]]
        role = row["extra_info"]["role"]
        assert res["score"] == pytest.approx(BATNA / MAX_POINTS[role])
        assert res["deal"] == 0 and res["batna_taken"] == 1 and res["batna_used"] == 1
        assert res["points_self"] == res["points_other"] == BATNA
        opened_by_other = row["extra_info"]["first_speaker"] != role
        assert res["turns"] == (2 if opened_by_other else 1)


# The environment: rows played against `timeaware serve`.


@pytest.fixture(scope="module")
def episode_class():
    """timeaware.negotiation's NegotiationEpisode. The module registers a
    VeRL agent loop, and this venv has no VeRL: a stand-in for VeRL's
    agent-loop module lets it import; the episode client uses none of it
    (the trainers tier runs the loop itself on the real VeRL)."""
    names = ["verl", "verl.experimental", "verl.experimental.agent_loop", "verl.experimental.agent_loop.agent_loop"]
    with pytest.MonkeyPatch.context() as mp:
        for name in names:
            mp.setitem(sys.modules, name, types.ModuleType(name))
        loop = sys.modules[names[-1]]
        loop.AgentLoopBase = object
        loop.AgentLoopOutput = dict
        loop.register = lambda name: (lambda cls: cls)
        mp.delitem(sys.modules, "timeaware.negotiation", raising=False)
        import timeaware.negotiation as mod

        yield mod.NegotiationEpisode
        mp.delitem(sys.modules, "timeaware.negotiation", raising=False)


@pytest.fixture(scope="module")
def env_server(start_serve, tmp_path_factory):
    s = start_serve(tmp_path_factory.mktemp("negotiation-serve"))
    yield s
    s.stop()


class RecordingClient(Client):
    """A Client that keeps the bodies it posts to the step route."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.steps: list = []

    def request(self, method, path, payload=None, **kwargs):
        if path.endswith("/negotiation/step"):
            self.steps.append(json.loads(json.dumps(payload)))
        return super().request(method, path, payload, **kwargs)


def points(gt: dict, role: str, offer: dict) -> float:
    """The role's points for a complete offer, from the row's payoff table."""
    total = 0
    for issue in gt["scenario"]["issues"]:
        total += issue["points"][role][issue["options"].index(offer[issue["id"]])]
    return total


def row_of(negotiation, condition: str) -> dict:
    return next(r for r in negotiation["rows"] if r["extra_info"]["condition"] == condition)


def test_episode_carries_the_signed_state(negotiation, env_server, episode_class):
    """The agent talks, then accepts the counter-proposal: the first step
    sends the row, the second only the state the first returned, both the
    timer; the deal scores what the payoff table says the counter is worth
    to the agent, and each message was charged think time by the timer."""
    row = row_of(negotiation, "time_aware")
    gt = json.loads(row["reward_model"]["ground_truth"])
    role = row["extra_info"]["role"]
    client = RecordingClient(env_server.url)
    timer = client.create_timer("py-negotiation-1")["timer"]
    ep = episode_class(client, row["reward_model"]["ground_truth"], timer,
                       turn_prefix=row["extra_info"]["turn_prefix"], opponent={"beta": 1})

    first = ep.step({"text": "Hello, let us find a deal.", "action": {"action": "message"}})
    assert first["done"] is False and TIME_LEFT.match(first["shown"])
    counter = first["reply"]["action"]
    assert counter["action"] == "propose"
    end = ep.step({"text": "Agreed.", "action": {"action": "accept"}})
    assert end["done"] is True and ep.done

    first_body, second_body = client.steps
    assert set(first_body) == {"ground_truth", "turn_prefix", "opponent", "message", "timer"}
    assert set(second_body) == {"state", "message", "timer"}
    assert first_body["timer"] == second_body["timer"] == timer
    assert second_body["state"] == first["state"]
    assert "think_s" not in first_body["message"] and "think_s" not in second_body["message"]

    lo = sum(min(i["points"][role]) for i in gt["scenario"]["issues"])
    hi = sum(max(i["points"][role]) for i in gt["scenario"]["issues"])
    assert end["details"]["deal"] == 1
    assert end["details"]["points_self"] == points(gt, role, counter["offer"])
    assert end["score"] == pytest.approx((points(gt, role, counter["offer"]) - lo) / (hi - lo))
    mine = [m for m in ep.transcript if m["role"] == role]
    assert len(mine) == 2 and all(m["think_s"] > 0 for m in mine), "the timer's time is on the clock"
    with pytest.raises(RuntimeError, match="over"):
        ep.step({"text": "One more thing."})
    assert len(client.steps) == 2, "a finished episode sends nothing"


def test_the_service_refuses_what_a_client_could_rewrite(negotiation, env_server, episode_class):
    """The refusals a client meets through the Python client: its own
    think_s, a missing timer, an edited state, a state beside the row, the
    state of a finished episode."""
    row = row_of(negotiation, "control")
    client = Client(env_server.url)
    timer = client.create_timer("py-negotiation-2")["timer"]
    gt = row["reward_model"]["ground_truth"]

    def refused(body: dict) -> TimeawareError:
        with pytest.raises(TimeawareError) as err:
            client.request("POST", "/v1/envs/negotiation/step", body, idempotent=True)
        assert err.value.status == 400
        return err.value

    e = refused({"ground_truth": gt, "timer": timer, "message": {"text": "Hi.", "think_s": 0}})
    assert e.field == "message.think_s"
    e = refused({"ground_truth": gt, "message": {"text": "Hi."}})
    assert e.field == "timer"

    ep = episode_class(client, gt, timer)
    ep.step({"text": "Hi.", "action": {"action": "message"}})
    raw = base64.urlsafe_b64decode(ep.state + "=" * (-len(ep.state) % 4))
    assert b'"beta":0' in raw, "the state is signed, not hidden"
    edited = base64.urlsafe_b64encode(raw.replace(b'"beta":0', b'"beta":9', 1)).rstrip(b"=").decode()
    e = refused({"state": edited, "timer": timer, "message": {"text": "Deal?"}})
    assert (e.code, e.field) == ("invalid_state", "state")
    e = refused({"state": ep.state, "ground_truth": gt, "timer": timer, "message": {"text": "Deal?"}})
    assert e.field == "ground_truth"

    final = ep.step({"text": "No, thank you.", "action": {"action": "batna"}})
    assert final["done"] is True and final["details"]["batna_taken"] == 1
    e = refused({"state": final["state"], "timer": timer, "message": {"text": "Wait."}})
    assert (e.code, e.field) == ("episode_over", "state")
