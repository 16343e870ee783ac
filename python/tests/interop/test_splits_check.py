"""The leakage gate on datasets as Hugging Face `datasets` writes them.

A user's splits reach the gate in the layouts `datasets` produces: a
DatasetDict saved with save_to_disk (a directory per split of Arrow IPC
stream shards), and Parquet shards named like the hub's
(data/train-00000-of-00002.parquet). The gate must read both, take each
file's side from those names, and catch a row that crosses over; and the
synth outputs it splits must load in `datasets` as two splits.
"""
from __future__ import annotations

import json
import random
import subprocess

import pyarrow.parquet as pq
import pytest
from datasets import Dataset, DatasetDict, load_dataset

pytestmark = pytest.mark.needs_binary

COLUMNS = ["--text", "question", "--group", "topic", "--id", "id"]


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)


def gate(timeaware_bin, *args):
    proc = run(timeaware_bin, "splits", "check", "--json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def failing(report):
    return sorted(c["name"] for c in report["checks"] if c["status"] == "fail")


def questions(n=80, seed=3):
    rng = random.Random(seed)
    rows = {"train": [], "test": []}
    for i in range(n):
        side = "test" if (i // 4) % 4 == 3 else "train"
        words = " ".join(f"w{rng.randrange(60000)}" for _ in range(30))
        rows[side].append({"id": f"q{i:03d}", "topic": f"topic-{i // 4}", "question": words, "answer": str(i)})
    return rows


def test_save_to_disk_dataset_dict(tmp_path, timeaware_bin):
    rows = questions()
    dd = DatasetDict({side: Dataset.from_list(r) for side, r in rows.items()})
    dd.save_to_disk(str(tmp_path / "ds"), num_shards={"train": 2, "test": 1})
    shards = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "ds").rglob("*.arrow"))
    assert shards == ["ds/test/data-00000-of-00001.arrow", "ds/train/data-00000-of-00002.arrow",
                      "ds/train/data-00001-of-00002.arrow"]

    code, report = gate(timeaware_bin, tmp_path / "ds", *COLUMNS)
    assert code == 0, failing(report)
    assert report["splits"]["train"]["rows"] == len(rows["train"])
    assert report["splits"]["test"]["rows"] == len(rows["test"])

    # A training question added to the test split under another id and topic.
    leaked = dict(rows["train"][5], id="leak-1", topic="elsewhere")
    DatasetDict({"train": Dataset.from_list(rows["train"]),
                 "test": Dataset.from_list(rows["test"] + [leaked])}).save_to_disk(str(tmp_path / "leaky"))
    code, report = gate(timeaware_bin, tmp_path / "leaky", *COLUMNS)
    assert code == 1
    assert failing(report) == ["exact_duplicates"]
    finding = next(c for c in report["checks"] if c["name"] == "exact_duplicates")["findings"][0]
    assert finding["ids"] == [rows["train"][5]["id"], "leak-1"]


def test_hub_style_parquet_shards(tmp_path, timeaware_bin):
    rows = questions(seed=4)
    data = tmp_path / "data"
    data.mkdir()
    Dataset.from_list(rows["train"][:30]).to_parquet(str(data / "train-00000-of-00002.parquet"))
    Dataset.from_list(rows["train"][30:]).to_parquet(str(data / "train-00001-of-00002.parquet"))
    Dataset.from_list(rows["test"]).to_parquet(str(data / "test-00000-of-00001.parquet"))
    code, report = gate(timeaware_bin, data, *COLUMNS)
    assert code == 0, failing(report)
    # `datasets` reads the same layout as the same splits.
    ds = load_dataset("parquet", data_dir=str(data))
    assert ds["train"].num_rows == report["splits"]["train"]["rows"]
    assert ds["test"].num_rows == report["splits"]["test"]["rows"]

    # A topic that straddles the split.
    moved = dict(rows["test"][0], id="q-moved")
    Dataset.from_list(rows["train"][30:] + [moved]).to_parquet(str(data / "train-00001-of-00002.parquet"))
    code, report = gate(timeaware_bin, data, *COLUMNS)
    assert code == 1
    assert failing(report) == ["exact_duplicates", "group_disjoint"]


@pytest.mark.parametrize("command,strategy", [("puzzles", "exact"), ("traveler", "hash")])
def test_synth_splits_load_as_two_splits(tmp_path, timeaware_bin, command, strategy):
    out = tmp_path / f"{command}.parquet"
    proc = run(timeaware_bin, "synth", command, "--count", 150, "--seed", 8, "--test-fraction", 0.3, "--out", out)
    assert proc.returncode == 0, proc.stderr
    train, test = tmp_path / f"{command}-train.parquet", tmp_path / f"{command}-test.parquet"
    manifest = json.loads((tmp_path / f"{command}.parquet.manifest.json").read_text())
    split = manifest["summary"]["split"]
    # Puzzles split exactly over the knowledge base's events, TRAVELER rows by a hash of their event set.
    assert split["strategy"] == strategy and split["target_test_fraction"] == 0.3
    ds = load_dataset("parquet", data_files={"train": str(train), "test": str(test)})
    assert ds["train"].num_rows == split["rows"]["train"] and ds["test"].num_rows == split["rows"]["test"]
    assert ds["train"].num_rows + ds["test"].num_rows == 150
    assert set(ds["train"]["extra_info"][i]["split"] for i in range(ds["train"].num_rows)) == {"train"}
    assert set(ds["test"]["extra_info"][i]["split"] for i in range(ds["test"].num_rows)) == {"test"}
    train_groups = {r["extra_info"]["group"] for r in pq.read_table(train).to_pylist()}
    test_groups = {r["extra_info"]["group"] for r in pq.read_table(test).to_pylist()}
    assert not train_groups & test_groups
    code, report = gate(timeaware_bin, tmp_path / f"{command}.parquet.manifest.json")
    assert code == 0, failing(report)
