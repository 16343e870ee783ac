"""Interop tests for `timeaware synth negotiation`: the VeRL RL parquet read
back by pyarrow, one layout for every row, ground truths that parse as JSON,
the condition prefixes, and a transcript built from a row scored offline by
`timeaware score` with the negotiation reward.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN).
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from timeaware import scoring

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
