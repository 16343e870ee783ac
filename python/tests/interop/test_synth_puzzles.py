"""Interop tests for `timeaware synth puzzles`: the VeRL RL parquet read back
by pyarrow and Hugging Face datasets the way VeRL's RLHFDataset loads it, its
parity with the JSONL output, and `--solve` on a file edited from Python.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.needs_binary

COUNT = 70
SEED = 5
META_KEYS = {"kind", "level", "year", "month", "day", "weekday", "n", "leap", "animal", "season",
             "months", "weekdays", "op", "event", "relation", "start", "end", "years"}


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}


def run(timeaware_bin, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(timeaware_bin), *args], capture_output=True, text=True, timeout=120,
                          env=clean_env(), stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def puzzles(timeaware_bin, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("puzzles")
    out = {}
    for ext in ("parquet", "jsonl"):
        path = tmp / f"puzzles.{ext}"
        proc = run(timeaware_bin, "synth", "puzzles", "--count", str(COUNT), "--seed", str(SEED),
                   "--solutions", "0-6", "--out", str(path))
        assert proc.returncode == 0, proc.stderr
        out[ext] = path
    out["rows"] = pq.read_table(out["parquet"]).to_pylist()
    return out


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


def test_parquet_layout(puzzles):
    schema = pq.read_schema(puzzles["parquet"])
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info",
                            "constraints", "explicit_constraints", "constraints_meta", "solutions"]
    prompt = schema.field("prompt").type
    assert pa.types.is_list(prompt) and [f.name for f in prompt.value_type] == ["role", "content"]
    meta = schema.field("constraints_meta").type.value_type
    assert {f.name for f in meta} == META_KEYS
    rows = puzzles["rows"]
    assert len(rows) == COUNT
    first = key_paths(rows[0])
    for i, row in enumerate(rows):
        assert key_paths(row) - {p for p in key_paths(row) if p[:2] == ("constraints_meta", "[]")} == \
            first - {p for p in first if p[:2] == ("constraints_meta", "[]")}, f"row {i} has other keys"
        assert row["data_source"] == "timepuzzles"
        assert row["ability"] == "temporal_reasoning"
        assert row["reward_model"]["style"] == "rule"
        assert set(row["extra_info"]) == {"split", "index", "variant", "target_solutions", "first_date", "last_date",
                                          "id", "group"}
        assert row["extra_info"]["index"] == i
        assert row["extra_info"]["id"] == f"puzzles-s{SEED}-{i}"
        # The unit a split keeps on one side: the event the puzzle is anchored on.
        events = [f["event"] for f in row["constraints_meta"] if f["kind"] == "event"]
        assert row["extra_info"]["group"] == events[0] and len(events) == 1
        assert [m["role"] for m in row["prompt"]] == ["user"]
        assert all(set(m) == {"role", "content"} for m in row["prompt"])
        for fact in row["constraints_meta"]:
            assert set(fact) == META_KEYS


def test_answers_are_consistent(puzzles):
    counts = {}
    for i, row in enumerate(puzzles["rows"]):
        sols = row["solutions"]
        assert len(sols) == i % 7 == row["extra_info"]["target_solutions"]
        counts[len(sols)] = counts.get(len(sols), 0) + 1
        assert sols == sorted(set(sols))
        for s in sols:
            dt.date.fromisoformat(s)
            assert row["extra_info"]["first_date"] <= s <= row["extra_info"]["last_date"]
        assert row["reward_model"]["ground_truth"] == (",".join(sols) if sols else "None")
        n = len(row["constraints_meta"])
        assert len(row["constraints"]) == n == len(row["explicit_constraints"])
        user = row["prompt"][0]["content"]
        for k, c in enumerate(row["constraints"], 1):
            assert f"{k}. {c}" in user
        assert "MY ANSWER: " in user and "MY ANSWER: None" in user
        events = [f for f in row["constraints_meta"] if f["kind"] == "event"]
        assert len(events) == 1 and events[0]["relation"]
    assert counts == {k: 10 for k in range(7)}


def test_jsonl_equals_parquet(puzzles):
    with open(puzzles["jsonl"], encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    assert lines == puzzles["rows"]


def test_datasets_loads_like_verl(puzzles):
    import datasets

    ds = datasets.load_dataset("parquet", data_files=str(puzzles["parquet"]), split="train")
    assert len(ds) == COUNT
    row = ds[3]
    assert row["prompt"][0]["role"] == "user"
    assert row["reward_model"]["ground_truth"] == ",".join(row["solutions"])


def test_solve_flags_a_row_edited_in_python(puzzles, timeaware_bin, tmp_path):
    proc = run(timeaware_bin, "synth", "puzzles", "--solve", str(puzzles["parquet"]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{COUNT} puzzles checked, 0 differ" in proc.stdout
    table = pq.read_table(puzzles["parquet"])
    rows = table.to_pylist()
    rows[6]["solutions"] = ["2000-01-01"]
    rows[6]["reward_model"]["ground_truth"] = "2000-01-01"
    edited = tmp_path / "edited.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), edited)
    proc = run(timeaware_bin, "synth", "puzzles", "--solve", str(edited))
    assert proc.returncode == 1
    # A row is named by its position, its extra_info.id and its index.
    assert re.search(r"^row 7 \(id \S+, index 6\): stored 2000-01-01 ", proc.stdout, re.M), proc.stdout
