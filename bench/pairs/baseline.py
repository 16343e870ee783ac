#!/usr/bin/env python3
"""Python baseline of `timeaware pairs build` for label-only inputs.

A plain json + pyarrow implementation of the same transformation, used by
bench/pairs/run.sh to compare against the Go CLI. It supports only what the
benchmark needs: inputs named prefer(Tool|NoTool)_elapse_<k>.json[l] (the file
name gives the label and the elapse level), direct answers from each record's
`direct_answer` field, and time format `iso`. Output is Parquet (zstd) written
in batches of 10,000 rows with the same schema as the Go CLI.

    python bench/pairs/baseline.py --out pairs.parquet CORPUS_DIR_OR_FILES...

Prints one JSON line: {"rows": ..., "seconds": ..., "rows_per_s": ...}.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

BATCH_ROWS = 10_000
LABEL_ONLY_MARGIN = 1.0
INPUT_NAME = re.compile(r"^prefer(Tool|NoTool)_elapse_(\d+)\.jsonl?$")
TRAILING_N = re.compile(r"_\d+$")
CANONICAL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")

TOOL_CALL = pa.struct([
    pa.field("id", pa.string()),
    pa.field("type", pa.string()),
    pa.field("function", pa.struct([
        pa.field("name", pa.string()),
        pa.field("arguments", pa.string()),
    ])),
])
MESSAGE = pa.struct([
    pa.field("role", pa.string()),
    pa.field("content", pa.string(), nullable=True),
    pa.field("tool_calls", pa.list_(TOOL_CALL), nullable=True),
    pa.field("tool_call_id", pa.string(), nullable=True),
    pa.field("name", pa.string(), nullable=True),
])
SCHEMA = pa.schema([
    pa.field("prompt", pa.list_(MESSAGE)),
    pa.field("chosen", pa.list_(MESSAGE)),
    pa.field("rejected", pa.list_(MESSAGE)),
    pa.field("tools", pa.string()),
    pa.field("margin", pa.float64()),
    pa.field("score", pa.float64(), nullable=True),
    pa.field("id", pa.string()),
    pa.field("scenario", pa.string()),
    pa.field("sensitivity", pa.string(), nullable=True),
    pa.field("elapse", pa.int64()),
    pa.field("label", pa.string()),
    pa.field("split", pa.string(), nullable=True),
])


class DataError(Exception):
    pass


def render_time(value) -> str:
    """RFC 3339 in UTC with a Z; v1 strings already have that form."""
    if CANONICAL_TIME.match(value):
        return value
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def copy_calls(calls):
    return [
        {
            "id": c.get("id") or "",
            "type": c.get("type") or "function",
            "function": {
                "name": c["function"]["name"],
                "arguments": arguments_text(c["function"].get("arguments")),
            },
        }
        for c in calls
    ]


def arguments_text(arguments) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, separators=(",", ":"), ensure_ascii=False)


def load_catalog() -> dict:
    """alias -> (canonical scenario, sensitivity), from splits/scenario/scenarios.yaml."""
    import yaml

    path = Path(__file__).resolve().parents[2] / "splits" / "scenario" / "scenarios.yaml"
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    out = {}
    for s in doc["scenarios"]:
        for alias in [s["name"], *s["aliases"]]:
            out[alias] = (s["name"], s["sensitivity"])
    return out


CATALOG = load_catalog()


def build_row(record: dict, elapse: int, label: str) -> dict:
    rid = record["id"]
    alias = TRAILING_N.sub("", rid)
    if alias not in CATALOG:
        raise ValueError(f"{rid}: unknown scenario alias {alias!r}")
    scenario = CATALOG[alias]
    history = record["history"]
    prompt = []
    last_calls = None
    for message in history:
        when = message["time"]
        if isinstance(when, list):
            when = when[elapse]
        stamp = "[" + render_time(when) + "]"
        content = message.get("content")
        calls = message.get("tool_calls") or None
        if calls is not None:
            calls = copy_calls(calls)
            if message.get("role") == "assistant":
                last_calls = calls
        prompt.append({
            "role": message["role"],
            "content": stamp if content is None else stamp + " " + content,
            "tool_calls": calls,
            "tool_call_id": message.get("tool_call_id"),
            "name": message.get("name"),
        })
    if last_calls is None:
        raise DataError(f"{rid}: no assistant tool call in history to repeat")

    answer = record.get("direct_answer")
    if isinstance(answer, list):
        answer = answer[elapse] if elapse < len(answer) else None
    if not isinstance(answer, str):
        raise DataError(f"{rid}: missing direct_answer")

    refreshed = [
        {
            "id": (c["id"] + "_refresh") if c["id"] else f"call_refresh_{j}",
            "type": "function",
            "function": c["function"],
        }
        for j, c in enumerate(last_calls)
    ]
    tool = [{"role": "assistant", "content": None, "tool_calls": refreshed, "tool_call_id": None, "name": None}]
    direct = [{"role": "assistant", "content": answer, "tool_calls": None, "tool_call_id": None, "name": None}]
    chosen, rejected = (tool, direct) if label == "tool" else (direct, tool)
    return {
        "prompt": prompt,
        "chosen": chosen,
        "rejected": rejected,
        "tools": json.dumps(record.get("function") or [], separators=(",", ":"), ensure_ascii=False),
        "margin": LABEL_ONLY_MARGIN,
        "score": None,
        "id": rid,
        "scenario": scenario[0],
        "sensitivity": scenario[1],
        "elapse": elapse,
        "label": label,
        "split": None,
    }


def read_records(path: Path):
    if path.suffix == ".jsonl":
        with path.open("r", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)
    else:
        with path.open("r", encoding="utf-8") as f:
            yield from json.load(f)


def input_files(args: list[str]) -> list[Path]:
    files = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if INPUT_NAME.match(p.name)))
        else:
            files.append(path)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="corpus files or directories")
    parser.add_argument("--out", required=True, type=Path, help="output Parquet file")
    args = parser.parse_args(argv)

    files = input_files(args.inputs)
    if not files:
        parser.error("no input files")
    for path in files:
        if not INPUT_NAME.match(path.name):
            parser.error(f"{path}: name must be prefer(Tool|NoTool)_elapse_<k>.json[l]")

    started = time.perf_counter()
    rows = 0
    tmp = args.out.with_name(args.out.name + ".tmp")
    try:
        with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as writer:
            batch = []
            for path in files:
                kind, level = INPUT_NAME.match(path.name).groups()
                label = "tool" if kind == "Tool" else "direct"
                elapse = int(level)
                for record in read_records(path):
                    batch.append(build_row(record, elapse, label))
                    if len(batch) == BATCH_ROWS:
                        writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
                        rows += len(batch)
                        batch = []
            if batch:
                writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
                rows += len(batch)
        os.replace(tmp, args.out)
    except (DataError, KeyError, ValueError, IndexError) as err:
        tmp.unlink(missing_ok=True)
        print(f"baseline: {err}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    print(json.dumps({"rows": rows, "seconds": round(seconds, 3),
                      "rows_per_s": round(rows / seconds, 1) if seconds > 0 else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
