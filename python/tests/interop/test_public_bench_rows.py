"""Interop tests for `timeaware benchmarks import`: the rows of every sample in
examples/benchmarks, written as Parquet, read back by pyarrow and Hugging Face
datasets in VeRL's RL layout, and each row's own right answer (built here from
its ground truth) scored 1 by the real `timeaware score` with the benchmark's
reward, and a wrong one 0.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.needs_binary

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "benchmarks"
BENCHMARKS = {"tram": "tram", "timeqa": "timeqa", "tempreason": "tempreason", "test-of-time": "test_of_time"}
EXTRA = ["benchmark", "split", "subset", "id", "category", "licence", "training_allowed", "index", "question"]


@pytest.fixture(scope="module")
def imported(run_timeaware, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("benchmarks")
    out = {}
    for name in BENCHMARKS:
        files = sorted(p for p in (SAMPLES / name).rglob("*") if p.is_file() and p.name != "LICENSE")
        path = tmp / f"{name}.parquet"
        proc = run_timeaware("benchmarks", "import", name, *files, "--out", path)
        assert proc.returncode == 0, proc.stderr
        out[name] = path
    return out


def right_answer(gt: dict, data_source: str) -> str:
    if "letter" in gt:
        return f"Answer: {gt['letter']}"
    if "answers" in gt:
        answer = gt["answers"][0] or "unanswerable"
        return f"Answer: {answer}"
    assert data_source == "test_of_time"
    return "My reasoning.\n" + json.dumps(gt["label"])


def test_rows_read_by_pyarrow_and_datasets(imported):
    datasets = pytest.importorskip("datasets")
    for name, path in imported.items():
        schema = pq.read_schema(path)
        assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"], name
        ei = schema.field("extra_info").type
        assert [ei.field(i).name for i in range(ei.num_fields)] == EXTRA, name
        rows = pq.read_table(path).to_pylist()
        ds = datasets.load_dataset("parquet", data_files=str(path), split="train")
        assert ds.num_rows == len(rows) > 0, name
        assert ds[0]["reward_model"] == rows[0]["reward_model"], name
        for row in rows:
            assert row["data_source"] == BENCHMARKS[name]
            assert [m["role"] for m in row["prompt"]] == ["user"]
            info = row["extra_info"]
            assert info["benchmark"] == name and info["id"] and info["licence"]
            # the item's own text: every line of it is in the prompt
            lines = [ln for ln in info["question"].splitlines() if ln.strip()]
            assert lines and all(ln in row["prompt"][0]["content"] for ln in lines), (name, info["id"])
            assert "Answer:" not in info["question"], (name, info["id"])
            assert info["training_allowed"] == (name != "test-of-time" and info["split"] != "test"), (name, info["id"])
            json.loads(row["reward_model"]["ground_truth"])


def test_rows_score_through_the_cli(imported, run_timeaware, tmp_path):
    items = []
    for path in imported.values():
        for row in pq.read_table(path).to_pylist():
            gt = json.loads(row["reward_model"]["ground_truth"])
            base = {"data_source": row["data_source"], "ground_truth": row["reward_model"]["ground_truth"],
                    "extra_info": row["extra_info"]}
            items.append({**base, "solution_str": right_answer(gt, row["data_source"])})
            items.append({**base, "solution_str": "I would rather not say."})
    inp, out = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    inp.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    proc = run_timeaware("score", "--input", inp, "--out", out)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(results) == len(items)
    for it, res in zip(items, results):
        want = 0 if it["solution_str"] == "I would rather not say." else 1
        assert res["score"] == want, (it["data_source"], it["extra_info"]["id"], it["solution_str"], res)
