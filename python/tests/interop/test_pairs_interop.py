"""Interop tests for `timeaware pairs build`: its output read back by pyarrow and
Hugging Face datasets the way TRL users load DPO data, and its agreement
numbers checked against the `krippendorff` package.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN and
TIMEAWARE_SHARED). Run them with:

    pip install -r python/tests/interop/requirements.txt
    go build -o bin/timeaware ./cmd/timeaware
    python -m pytest python/tests/interop -q
"""
from __future__ import annotations

import ast
import json
import math
import os
import random
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.needs_binary

V1_ROWS = 1379
V1_TOOL = 1147
V1_DIRECT = 232
FORMATS = ("parquet", "arrow", "jsonl")
COLUMNS = [
    "prompt", "chosen", "rejected", "tools", "margin", "score",
    "id", "scenario", "sensitivity", "elapse", "label", "split",
]
MESSAGE_FIELDS = ["role", "content", "tool_calls", "tool_call_id", "name"]
TRAILING_N = re.compile(r"_\d+$")


# ---------------------------------------------------------------- helpers


def direct_answer_for(sample_id: str) -> str:
    return f"Going by what we looked up earlier in this chat, the answer for {sample_id} has not changed."


def manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".manifest.json")


def walk(obj, path=()):
    """Yield (path, value) for every node of a JSON document."""
    yield path, obj
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from walk(value, path + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from walk(value, path + (i,))


def find_key(obj, key: str) -> list:
    """Every value stored under `key` anywhere in a JSON document."""
    return [value for path, value in walk(obj) if path and path[-1] == key]


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def datasets_cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("hf-cache"))


def load_with_datasets(builder: str, path: Path, cache_dir: str):
    import datasets

    datasets.disable_progress_bars()
    return datasets.load_dataset(builder, data_files=str(path), split="train", cache_dir=cache_dir)


def read_jsonl(path: Path) -> list[dict]:
    with path.open("r", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def is_list_of_struct(t: pa.DataType) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t)) and pa.types.is_struct(
        t.value_type
    )


def struct_field_names(t: pa.DataType) -> list[str]:
    return [t.field(i).name for i in range(t.num_fields)]


def is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def check_schema(schema: pa.Schema, where: str) -> None:
    assert schema.names == COLUMNS, f"{where}: columns {schema.names}, want {COLUMNS}"
    for column in ("prompt", "chosen", "rejected"):
        t = schema.field(column).type
        assert is_list_of_struct(t), f"{where}: {column} is {t}, want list<struct>"
        names = struct_field_names(t.value_type)
        assert {"role", "content"} <= set(names), f"{where}: {column} message fields {names}"
        assert is_text(t.value_type.field("role").type), f"{where}: {column}.role is not a string"
        assert is_text(t.value_type.field("content").type), f"{where}: {column}.content is not a string"
    assert schema.field("margin").type == pa.float64(), f"{where}: margin is {schema.field('margin').type}"
    for column in ("tools", "id", "scenario", "label"):
        assert is_text(schema.field(column).type), f"{where}: {column} is {schema.field(column).type}"
    assert pa.types.is_integer(schema.field("elapse").type), f"{where}: elapse is {schema.field('elapse').type}"


def check_rows(rows: list[dict], v1_samples: dict, where: str) -> None:
    """The checks every format must pass, on rows as plain Python dicts."""
    assert len(rows) == V1_ROWS, f"{where}: {len(rows)} rows, want {V1_ROWS}"
    labels = Counter(row["label"] for row in rows)
    assert labels == {"tool": V1_TOOL, "direct": V1_DIRECT}, f"{where}: labels {dict(labels)}"
    keys = [(row["id"], row["elapse"]) for row in rows]
    assert len(set(keys)) == len(keys), f"{where}: duplicate (id, elapse) rows"
    assert set(keys) == set(v1_samples), f"{where}: rows are not the v1 samples"

    for row in rows:
        rid, elapse = row["id"], row["elapse"]
        sample = v1_samples[(rid, elapse)]
        assert row["label"] == sample["label"], f"{where}: {rid}@{elapse} label {row['label']}"
        assert is_number(row["margin"]) and row["margin"] == 1.0, f"{where}: {rid}@{elapse} margin {row['margin']!r}"
        assert row["score"] is None, f"{where}: {rid}@{elapse} score {row['score']!r}, want null"

        tool, direct = (row["chosen"], row["rejected"]) if row["label"] == "tool" else (row["rejected"], row["chosen"])
        assert len(tool) == 1 and len(direct) == 1, f"{where}: {rid}@{elapse} responses must hold one message"
        assert tool[0]["role"] == "assistant", f"{where}: {rid}@{elapse} tool response role {tool[0]['role']}"
        assert tool[0]["content"] is None, f"{where}: {rid}@{elapse} tool response content {tool[0]['content']!r}"
        assert tool[0].get("tool_calls"), f"{where}: {rid}@{elapse} tool response has no tool_calls"
        assert direct[0]["role"] == "assistant", f"{where}: {rid}@{elapse} direct response role"
        assert direct[0]["content"] == direct_answer_for(rid), f"{where}: {rid}@{elapse} direct text"
        assert not direct[0].get("tool_calls"), f"{where}: {rid}@{elapse} direct response has tool_calls"

        final_time = sample["record"]["history"][-1]["time"][elapse]
        last = row["prompt"][-1]
        assert last["role"] == "user", f"{where}: {rid}@{elapse} prompt ends with {last['role']}"
        assert last["content"].startswith(f"[{final_time}] "), (
            f"{where}: {rid}@{elapse} final message {last['content'][:40]!r} "
            f"does not start with '[{final_time}] '"
        )


def check_manifest(out: Path, where: str) -> None:
    path = manifest_path(out)
    assert path.is_file(), f"{where}: no manifest at {path}"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    nodes = list(walk(manifest))
    assert any(is_number(v) and v == V1_ROWS for _, v in nodes), f"{where}: manifest never says {V1_ROWS} rows"
    by_label = [
        v for _, v in nodes
        if isinstance(v, dict) and v.get("tool") == V1_TOOL and v.get("direct") == V1_DIRECT
    ]
    assert by_label, f"{where}: manifest has no row counts by label {{tool: {V1_TOOL}, direct: {V1_DIRECT}}}"


def json_arguments(text: str) -> str:
    """A call's arguments as the pairs hold them: JSON text as it is; a Python
    literal (four calls of the v1 release are a dict's repr) as compact JSON."""
    try:
        json.loads(text)
        return text
    except ValueError:
        return json.dumps(ast.literal_eval(text), separators=(",", ":"), ensure_ascii=False)


def expected_message(message: dict, elapse: int) -> dict:
    when = message["time"]
    if isinstance(when, list):
        when = when[elapse]
    content = message.get("content")
    calls = message.get("tool_calls") or None
    return {
        "role": message["role"],
        "content": f"[{when}]" if content is None else f"[{when}] {content}",
        "tool_calls": None if calls is None else [
            {"id": c["id"], "type": c.get("type", "function"),
             "function": {"name": c["function"]["name"], "arguments": json_arguments(c["function"]["arguments"])}}
            for c in calls
        ],
        "tool_call_id": message.get("tool_call_id"),
        "name": message.get("name"),
    }


def expected_tool_response(record: dict) -> list[dict]:
    calls = next(m["tool_calls"] for m in reversed(record["history"])
                 if m["role"] == "assistant" and m.get("tool_calls"))
    return [{
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": (c["id"] + "_refresh") if c.get("id") else f"call_refresh_{j}", "type": "function",
             "function": {"name": c["function"]["name"], "arguments": json_arguments(c["function"]["arguments"])}}
            for j, c in enumerate(calls)
        ],
        "tool_call_id": None,
        "name": None,
    }]


# ---------------------------------------------------------------- the v1 build


@pytest.fixture(scope="module")
def direct_answers_file(tmp_path_factory, v1_samples) -> Path:
    path = tmp_path_factory.mktemp("side") / "direct_answers.jsonl"
    ids = sorted({rid for rid, _ in v1_samples})
    with path.open("w", encoding="utf-8") as f:
        for rid in ids:
            f.write(json.dumps({"id": rid, "direct_answer": direct_answer_for(rid)}) + "\n")
    return path


@pytest.fixture(scope="module")
def v1_builds(tmp_path_factory, run_timeaware, v1_files, direct_answers_file) -> dict:
    """Build the v1 pairs once per format; returns format -> output path."""
    outputs = {}
    for fmt in FORMATS:
        out = tmp_path_factory.mktemp(f"build-{fmt}") / f"pairs.{fmt}"
        inputs = [arg for path in v1_files for arg in ("--input", path)]
        result = run_timeaware(
            "pairs", "build", *inputs,
            "--direct-answers", direct_answers_file,
            "--time-format", "iso", "--format", fmt, "--out", out,
        )
        assert result.returncode == 0, (
            f"pairs build --format {fmt} exited {result.returncode}\nstderr:\n{result.stderr}"
        )
        assert out.is_file(), f"pairs build --format {fmt} wrote no {out}"
        outputs[fmt] = out
    return outputs


@pytest.mark.parametrize("fmt", FORMATS)
def test_manifest_row_counts(v1_builds, fmt):
    check_manifest(v1_builds[fmt], fmt)


def test_parquet_with_pyarrow(v1_builds, v1_samples):
    table = pq.read_table(v1_builds["parquet"])
    check_schema(table.schema, "parquet/pyarrow")
    assert table.column("score").null_count == V1_ROWS
    check_rows(table.to_pylist(), v1_samples, "parquet/pyarrow")


def test_parquet_with_datasets(v1_builds, v1_samples, tmp_path_factory):
    ds = load_with_datasets("parquet", v1_builds["parquet"], datasets_cache(tmp_path_factory))
    assert ds.column_names == COLUMNS
    check_schema(ds.data.table.schema, "parquet/datasets")
    check_rows(ds.to_list(), v1_samples, "parquet/datasets")


def test_arrow_ipc_file(v1_builds, v1_samples):
    with pa.memory_map(str(v1_builds["arrow"]), "r") as source:
        table = ipc.open_file(source).read_all()
    check_schema(table.schema, "arrow")
    check_rows(table.to_pylist(), v1_samples, "arrow")


def test_parquet_and_arrow_schemas_identical(v1_builds):
    parquet_schema = pq.read_schema(v1_builds["parquet"])
    with pa.memory_map(str(v1_builds["arrow"]), "r") as source:
        arrow_schema = ipc.open_file(source).schema
    got_parquet = [(f.name, f.type) for f in parquet_schema]
    got_arrow = [(f.name, f.type) for f in arrow_schema]
    assert got_parquet == got_arrow, (
        "Parquet and Arrow schemas differ:\n"
        + "\n".join(f"  parquet {p}\n  arrow   {a}" for p, a in zip(got_parquet, got_arrow) if p != a)
    )


def test_jsonl_with_datasets(v1_builds, v1_samples, tmp_path_factory):
    ds = load_with_datasets("json", v1_builds["jsonl"], datasets_cache(tmp_path_factory))
    assert sorted(ds.column_names) == sorted(COLUMNS)
    schema = ds.data.table.schema
    for column in ("prompt", "chosen", "rejected"):
        t = schema.field(column).type
        assert is_list_of_struct(t), f"jsonl/datasets: {column} is {t}, want list<struct>"
        assert {"role", "content"} <= set(struct_field_names(t.value_type))
    check_rows(ds.to_list(), v1_samples, "jsonl/datasets")


def test_jsonl_plain(v1_builds, v1_samples):
    rows = read_jsonl(v1_builds["jsonl"])
    for row in rows:
        assert set(row) == set(COLUMNS), f"jsonl: row keys {sorted(row)}, want {sorted(COLUMNS)}"
        for column in ("prompt", "chosen", "rejected"):
            for message in row[column]:
                assert "role" in message and "content" in message, f"jsonl: {row['id']} {column} message {message}"
    check_rows(rows, v1_samples, "jsonl/json")


def test_jsonl_margin_reads_back_as_float(v1_builds, tmp_path_factory):
    """margin is float64 in every format, JSONL included: a value written as `1`
    instead of `1.0` makes json readers (datasets, json.loads) infer integers, and
    the JSONL then no longer has the schema of the Parquet/Arrow output."""
    rows = read_jsonl(v1_builds["jsonl"])
    ints = [row["id"] for row in rows if not isinstance(row["margin"], float)]
    assert not ints, f"jsonl: margin of {len(ints)} rows is not written as a float (e.g. {ints[0]})"
    ds = load_with_datasets("json", v1_builds["jsonl"], datasets_cache(tmp_path_factory))
    assert ds.data.table.schema.field("margin").type == pa.float64()


def test_rows_match_transformation(v1_builds, v1_samples, catalog):
    """Every Parquet row is exactly the documented transformation of its sample."""
    table = pq.read_table(v1_builds["parquet"])
    message_type = table.schema.field("prompt").type.value_type
    assert struct_field_names(message_type) == MESSAGE_FIELDS
    for row in table.to_pylist():
        rid, elapse = row["id"], row["elapse"]
        record = v1_samples[(rid, elapse)]["record"]
        where = f"{rid}@{elapse}"
        assert row["prompt"] == [expected_message(m, elapse) for m in record["history"]], f"{where}: prompt"
        tool = expected_tool_response(record)
        direct = [{"role": "assistant", "content": direct_answer_for(rid), "tool_calls": None,
                   "tool_call_id": None, "name": None}]
        want_chosen, want_rejected = (tool, direct) if row["label"] == "tool" else (direct, tool)
        assert row["chosen"] == want_chosen, f"{where}: chosen"
        assert row["rejected"] == want_rejected, f"{where}: rejected"
        assert json.loads(row["tools"]) == record["function"], f"{where}: tools"
        name, sensitivity, _ = catalog[TRAILING_N.sub("", rid)]
        assert row["scenario"] == name, f"{where}: scenario {row['scenario']}"
        assert row["sensitivity"] == sensitivity, f"{where}: sensitivity {row['sensitivity']}"
        assert row["split"] is None, f"{where}: split"


def test_datasets_rows_have_trl_conversational_layout(v1_builds, tmp_path_factory):
    """TRL's DPOTrainer takes conversational data as lists of {role, content}
    dicts in prompt/chosen/rejected, and tool schemas as JSON."""
    ds = load_with_datasets("parquet", v1_builds["parquet"], datasets_cache(tmp_path_factory))
    for row in (ds[0], ds[len(ds) - 1]):
        assert isinstance(row["prompt"], list) and isinstance(row["prompt"][0], dict)
        assert {"role", "content"} <= set(row["prompt"][0])
        assert row["prompt"][0]["role"] in ("system", "user")
        for column in ("chosen", "rejected"):
            assert isinstance(row[column], list) and len(row[column]) == 1
            assert {"role", "content"} <= set(row[column][0])
            assert row[column][0]["role"] == "assistant"
    for tools_text in set(ds["tools"]):
        tools = json.loads(tools_text)
        assert isinstance(tools, list) and tools, f"tools is not a non-empty JSON list: {tools_text[:80]}"
        for tool in tools:
            assert {"type", "function"} <= set(tool), f"tool schema keys {set(tool)}"
            assert tool["type"] == "function" and isinstance(tool["function"].get("name"), str)
    calls = [c for row in ds if row["label"] == "tool" for c in row["chosen"][0]["tool_calls"]]
    assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)


# ---------------------------------------------------------------- failures


def test_missing_direct_answers_fail_cleanly(tmp_path, run_timeaware, v1_files, v1_samples):
    # Inputs go in file-name order. The first record of the first file is left
    # out, plus two ids that sort after it: whether the CLI stops at the first
    # missing id or lists them sorted, that id comes first.
    first_id = json.loads(v1_files[0].read_text(encoding="utf-8"))[0]["id"]
    later = sorted(rid for rid, _ in v1_samples if rid > first_id)
    missing = [first_id, later[-1], later[len(later) // 2]]
    assert len(set(missing)) == 3

    side = tmp_path / "side" / "direct_answers.jsonl"
    side.parent.mkdir()
    with side.open("w", encoding="utf-8") as f:
        for rid in sorted({rid for rid, _ in v1_samples} - set(missing)):
            f.write(json.dumps({"id": rid, "direct_answer": direct_answer_for(rid)}) + "\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    inputs = [arg for path in v1_files for arg in ("--input", path)]
    result = run_timeaware(
        "pairs", "build", *inputs, "--direct-answers", side,
        "--time-format", "iso", "--format", "parquet", "--out", out_dir / "pairs.parquet",
    )
    assert result.returncode == 1, f"exit {result.returncode}, want 1\nstderr:\n{result.stderr}"
    assert first_id in result.stderr, f"stderr does not name missing id {first_id}:\n{result.stderr}"
    assert sorted(os.listdir(out_dir)) == [], f"left behind in the output dir: {os.listdir(out_dir)}"


@pytest.mark.parametrize("flag,value", [("--format", "xml"), ("--time-format", "unix_epoch")])
def test_bad_usage_exits_2(tmp_path, run_timeaware, v1_files, direct_answers_file, flag, value):
    args = {"--format": "parquet", "--time-format": "iso"}
    args[flag] = value
    result = run_timeaware(
        "pairs", "build", "--input", v1_files[0], "--direct-answers", direct_answers_file,
        "--format", args["--format"], "--time-format", args["--time-format"], "--out", tmp_path / "pairs.out",
    )
    assert result.returncode == 2, f"{flag} {value}: exit {result.returncode}, want 2\nstderr:\n{result.stderr}"
    assert not (tmp_path / "pairs.out").exists()


# ---------------------------------------------------------------- annotations


CHOICES = ("direct", "lean_direct", "lean_tool", "tool")  # scored 0..3
ANNOTATORS = [f"annotator-{i}" for i in range(1, 7)]
TIED = [0, 0, 1, 2, 3, 3]  # mean 1.5 at every level for the first trajectory


def test_annotations_alpha_and_pairs(tmp_path, run_timeaware, v1_samples):
    import krippendorff
    import numpy as np

    records = {}
    for (rid, _), sample in sorted(v1_samples.items()):
        records.setdefault(rid, sample["record"])
    ids = sorted(records)[:: len(records) // 20][:20]
    assert len(ids) == 20

    trajectories = tmp_path / "trajectories.jsonl"
    with trajectories.open("w", encoding="utf-8") as f:
        for rid in ids:
            record = dict(records[rid])
            assert isinstance(record["history"][-1]["time"], list) and len(record["history"][-1]["time"]) == 3
            record["direct_answer"] = direct_answer_for(rid)
            f.write(json.dumps(record) + "\n")

    # Each annotator's scores for a trajectory never decrease with elapse, so
    # the consistency filter keeps every survey.
    rng = random.Random(20240601)
    score = {}
    for t, rid in enumerate(ids):
        for a, annotator in enumerate(ANNOTATORS):
            levels = [TIED[a]] * 3 if t == 0 else sorted(rng.randint(0, 3) for _ in range(3))
            for elapse, value in enumerate(levels):
                score[(annotator, rid, elapse)] = value

    votes = tmp_path / "votes.jsonl"
    with votes.open("w", encoding="utf-8") as f:
        for rid in ids:
            for elapse in range(3):
                for annotator in ANNOTATORS:
                    f.write(json.dumps({
                        "sample_id": rid, "elapse": elapse, "annotator": annotator,
                        "survey": f"survey-{annotator}", "choice": CHOICES[score[(annotator, rid, elapse)]],
                    }) + "\n")

    units = [(rid, elapse) for rid in ids for elapse in range(3)]
    data = np.array([[score[(a, rid, e)] for rid, e in units] for a in ANNOTATORS], dtype=float)
    want_interval = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    want_ordinal = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    mean = {unit: data[:, i].mean() for i, unit in enumerate(units)}
    ties = sum(1 for s in mean.values() if s == 1.5)
    assert ties >= 3 and len(set(mean.values())) > 5, "test data should have ties and varied scores"

    out = tmp_path / "out" / "pairs.parquet"
    out.parent.mkdir()
    result = run_timeaware(
        "pairs", "build", "--input", trajectories, "--annotations", votes,
        "--time-format", "iso", "--format", "parquet", "--out", out,
    )
    assert result.returncode == 0, f"exit {result.returncode}\nstderr:\n{result.stderr}"

    manifest = json.loads(manifest_path(out).read_text(encoding="utf-8"))
    for key, want in (("alpha_interval", want_interval), ("alpha_ordinal", want_ordinal)):
        found = [v for v in find_key(manifest, key) if is_number(v)]
        assert found, f"manifest has no numeric {key!r} anywhere"
        for got in found:
            assert math.isclose(got, want, rel_tol=0, abs_tol=1e-9), f"{key}: manifest {got}, krippendorff {want}"

    table = pq.read_table(out)
    assert table.num_rows == len(units) - ties, f"{table.num_rows} pairs, want {len(units) - ties} (S != 1.5)"
    for row in table.to_pylist():
        s = mean[(row["id"], row["elapse"])]
        where = f"{row['id']}@{row['elapse']}"
        assert row["score"] is not None and math.isclose(row["score"], s, abs_tol=1e-9), f"{where}: score {row['score']}, want {s}"
        assert math.isclose(row["margin"], abs(s - 1.5), abs_tol=1e-9), f"{where}: margin {row['margin']}"
        assert row["label"] == ("tool" if s > 1.5 else "direct"), f"{where}: label {row['label']} for S={s}"


def test_paper_split_files(tmp_path, run_timeaware, v1_dir, v1_samples, catalog, direct_answers_file):
    """--split paper writes one file per side; the test side holds exactly the
    v1 scenarios the paper lists as test, and no trajectory is on both sides."""
    out = tmp_path / "pairs.parquet"
    proc = run_timeaware("pairs", "build", "--input", str(v1_dir), "--direct-answers", str(direct_answers_file),
                         "--split", "paper", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    train = pq.read_table(tmp_path / "pairs-train.parquet").to_pylist()
    test = pq.read_table(tmp_path / "pairs-test.parquet").to_pylist()
    assert len(train) + len(test) == len(v1_samples)
    assert {r["split"] for r in train} == {"train"} and {r["split"] for r in test} == {"test"}
    present = {catalog[TRAILING_N.sub("", rid)] for rid, _ in v1_samples}
    want_test = {name for name, _, paper in present if paper == "test"}
    assert {r["scenario"] for r in test} == want_test
    assert not ({r["id"] for r in train} & {r["id"] for r in test})
    manifest = json.loads((tmp_path / "pairs.parquet.manifest.json").read_text())
    split = next(s for s in find_key(manifest, "split") if isinstance(s, dict))
    assert split["strategy"] == "paper"
    assert sorted(split["test_scenarios_present"]) == sorted(want_test)
    assert abs(split["test_fraction"] - len(test) / len(v1_samples)) < 1e-12


def test_large_parquet_is_the_same_bytes_every_run_and_reads_back(run_timeaware, v1_dir, tmp_path):
    """50,000 pairs, whose message dictionaries outgrow some row groups and
    fall back to plain pages (the chunk lists PLAIN again after RLE): two runs of `pairs build` write the
    same bytes (the footer's page-encoding statistics in one order, as
    Arrow would otherwise write them in map order), and pyarrow and
    datasets read the file whole."""
    import subprocess
    import sys

    import datasets

    corpus = tmp_path / "corpus"
    make = Path(__file__).resolve().parents[3] / "bench" / "pairs" / "make_corpus.py"
    subprocess.run([sys.executable, str(make), "--samples", "50000", "--source", str(v1_dir), "--out", str(corpus)],
                   check=True, capture_output=True, timeout=300)
    outs = []
    for k in range(2):
        out = tmp_path / f"pairs-{k}.parquet"
        res = run_timeaware("pairs", "build", "--input", corpus, "--time-format", "iso", "--format", "parquet",
                            "--out", out)
        assert res.returncode == 0, res.stderr
        outs.append(out)
    meta = pq.ParquetFile(outs[0]).metadata
    fell_back = [meta.row_group(r).column(c).path_in_schema for r in range(meta.num_row_groups)
                 for c in range(meta.num_columns) if meta.row_group(r).column(c).encodings.count("PLAIN") == 2]
    assert fell_back, "no column chunk fell back to plain pages: the test would show nothing"
    assert outs[0].read_bytes() == outs[1].read_bytes()
    table = pq.read_table(outs[0])
    assert table.num_rows == 50000
    ds = datasets.load_dataset("parquet", data_files=str(outs[0]), split="train",
                               cache_dir=str(tmp_path / "hf"))
    assert len(ds) == 50000 and set(table.column_names) <= set(ds.column_names)
