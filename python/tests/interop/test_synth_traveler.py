"""Interop tests for `timeaware synth traveler`: the VeRL RL parquet read back by
pyarrow and Hugging Face datasets, and its rows scored through the real
`timeaware score` with the traveler reward.

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

N_ROWS = 90
SEED = 5
EVENT_LINE = re.compile(r"^- On (\d{4}-\d\d-\d\d) at (\d\d:\d\d), (Mary|Tom|Robot) (.+) in the (living room|kitchen)\.$")


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}


@pytest.fixture(scope="module")
def traveler(timeaware_bin, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("traveler")
    out = tmp / "traveler.parquet"
    proc = subprocess.run(
        [str(timeaware_bin), "synth", "traveler", "--count", str(N_ROWS), "--seed", str(SEED),
         "--events", "5-40", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return {"out": out, "tmp": tmp, "bin": timeaware_bin, "rows": pq.read_table(out).to_pylist()}


def test_schema_and_rows(traveler):
    schema = pq.read_schema(traveler["out"])
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    msg = schema.field("prompt").type.value_type
    assert pa.types.is_struct(msg)
    assert [(msg.field(i).name, msg.field(i).type) for i in range(msg.num_fields)] == [
        ("role", pa.string()), ("content", pa.string())]
    ei_type = schema.field("extra_info").type
    assert [ei_type.field(i).name for i in range(ei_type.num_fields)] == [
        "split", "index", "category", "template", "expression", "speech_time", "n_events", "answer", "best_score",
        "id", "group"]
    rows = traveler["rows"]
    assert len(rows) == N_ROWS
    for i, row in enumerate(rows):
        assert row["data_source"] == "traveler"
        assert row["ability"] == "temporal_reasoning"
        assert row["reward_model"]["style"] == "rule"
        ei = row["extra_info"]
        assert ei["index"] == i and ei["split"] == "train"
        assert ei["id"] == f"traveler-s{SEED}-{i}"
        assert ei["group"].startswith("events-") and len(ei["group"]) == len("events-") + 16
        assert ei["category"] == ("explicit", "implicit", "vague")[i % 3]
        gt = json.loads(row["reward_model"]["ground_truth"])
        assert gt["category"] == ei["category"] and gt["template"] == ei["template"]
        if ei["category"] == "vague":
            assert "answer" not in gt and "probabilities" in gt
            assert 0 < ei["best_score"] <= 1
        else:
            assert "probabilities" not in gt and "answer" in gt
            assert ei["best_score"] == 1.0
        if ei["template"] == "when_last":
            assert ei["category"] == "implicit" and ei["expression"] == ""
        system, user = row["prompt"]
        assert system["role"] == "system" and user["role"] == "user"
        lines = [l for l in user["content"].splitlines() if l.startswith("- On ")]
        assert len(lines) == ei["n_events"] and 5 <= ei["n_events"] <= 40
        assert all(EVENT_LINE.match(l) for l in lines), lines
        assert user["content"].startswith(f"It is now {ei['speech_time']}.")
        assert "\nANSWER: <answer>\n" in user["content"]


def test_datasets_loads_the_rows(traveler, tmp_path):
    import datasets

    datasets.disable_progress_bars()
    ds = datasets.load_dataset("parquet", data_files=str(traveler["out"]), split="train", cache_dir=str(tmp_path))
    assert len(ds) == N_ROWS
    for i, row in enumerate(ds):
        assert row == traveler["rows"][i]


def test_rows_score_through_the_cli(traveler):
    """Every row's gold answer, scored by `timeaware score`, gets 1 (crisp) or
    best_score (vague); a vague "did" answer's complement gets 1 - P."""
    items, want = [], []
    for row in traveler["rows"]:
        ei = row["extra_info"]
        gt = row["reward_model"]["ground_truth"]
        items.append({"data_source": "traveler", "solution_str": "Reviewed.\nANSWER: " + ei["answer"],
                      "ground_truth": gt, "extra_info": {}})
        want.append(ei["best_score"])
        if ei["category"] == "vague" and ei["template"] == "did":
            other = {"yes": "no", "no": "yes"}[ei["answer"]]
            items.append({"data_source": "traveler", "solution_str": "ANSWER: " + other, "ground_truth": gt, "extra_info": {}})
            ps = json.loads(gt)["probabilities"]
            p = 1 - math.prod(1 - x for x in ps)
            want.append(p if other == "yes" else 1 - p)
    src = traveler["tmp"] / "items.jsonl"
    src.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    out = traveler["tmp"] / "scores.jsonl"
    proc = subprocess.run(
        [str(traveler["bin"]), "score", "--data-source", "traveler", "--input", str(src), "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]
    assert len(results) == len(items)
    keys = ["score", *scoring.BUILTIN_KEYS["traveler"]]
    for r, w in zip(results, want):
        assert [k for k in keys if k in r] == keys
        assert r["score"] == pytest.approx(w, abs=1e-9)
        assert r["parsed"] == 1.0
