#!/usr/bin/env python3
"""Write a synthetic TicToc-style corpus for the `pairs build` benchmark.

The corpus is made by re-keying the v1 trajectories: the five v1 files are
cycled through, each contributing samples in proportion to its own size, and
every copy gets a fresh id "<scenario alias>_<copy * 1,000,000 + n>" so that ids
still end in "_<digits>" and (id, elapse) pairs stay unique. Each output file
is named after its source with a .jsonl suffix (one record per line), so the
file name still carries the label and elapse level. Every record gains a
`direct_answer` string built from its final user question.

Output is streamed: only the (small) v1 sources are held in memory.
The result is deterministic for a given --samples and source directory.

    python bench/pairs/make_corpus.py --samples 100000 --out /tmp/corpus
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data" / "tictoc-v1"
SOURCE_NAME = re.compile(r"^prefer(Tool|NoTool)_elapse_(\d+)\.jsonl?$")
TRAILING_N = re.compile(r"^(.*)_(\d+)$")

# Openers for the synthetic direct answers. The answer text is ours; it only
# needs to be plausible, deterministic and not identical across records.
OPENERS = (
    "Based on the information gathered earlier in this conversation",
    "Going by what we already looked up above",
    "From the details retrieved a moment ago",
    "Using the results we already have in this chat",
    "Relying on the data fetched earlier",
    "Drawing on the lookup we did before",
    "According to the information already on hand",
)
CLOSERS = (
    "the earlier answer still applies.",
    "nothing needs to be looked up again.",
    "I can answer without calling the tool a second time.",
    "the previous result covers it.",
    "here is the short answer from what we found.",
)


def load_records(path: Path) -> list:
    """Read a source file: a JSON array, or JSONL with one record per line."""
    with path.open("r", encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json.loads(stripped)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def allocate(total: int, sizes: list[int]) -> list[int]:
    """Split total across files in proportion to sizes (largest remainder)."""
    whole = sum(sizes)
    exact = [total * s / whole for s in sizes]
    counts = [int(x) for x in exact]
    short = total - sum(counts)
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[:short]:
        counts[i] += 1
    return counts


def question_of(record: dict) -> str:
    history = record.get("history") or []
    for message in reversed(history):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


class Template:
    """A source record pre-serialised around the parts that change per copy."""

    def __init__(self, record: dict):
        match = TRAILING_N.match(str(record["id"]))
        if not match:
            raise ValueError(f"id {record['id']!r} does not end in _<digits>")
        self.alias, self.n = match.group(1), match.group(2)
        rest = {k: v for k, v in record.items() if k not in ("id", "direct_answer")}
        # Keys other than id/history/function (none in v1) are kept too.
        self.body = "".join(
            f", {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in rest.items()
        )
        question = " ".join(question_of(record).split())
        if len(question) > 160:
            question = question[:157].rstrip() + "..."
        self.question = question

    def line(self, copy: int, serial: int) -> str:
        # The alias stays resolvable through the scenario catalog; the number
        # stays unique per (copy, original number).
        new_id = f"{self.alias}_{copy * 1_000_000 + int(self.n)}"
        opener = OPENERS[serial % len(OPENERS)]
        closer = CLOSERS[(serial // len(OPENERS)) % len(CLOSERS)]
        answer = f'{opener} (note {serial}): on "{self.question}", {closer}'
        return (
            "{" + f'"id": {json.dumps(new_id, ensure_ascii=False)}' + self.body
            + f', "direct_answer": {json.dumps(answer, ensure_ascii=False)}' + "}\n"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1_000_000, help="total samples (default 1,000,000)")
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                        help=f"directory with the v1 files (default {DEFAULT_SOURCE})")
    args = parser.parse_args(argv)
    if args.samples < 0:
        parser.error("--samples must be >= 0")

    sources = sorted(p for p in args.source.iterdir() if SOURCE_NAME.match(p.name)) if args.source.is_dir() else []
    if not sources:
        print(f"make_corpus: no prefer(Tool|NoTool)_elapse_<k>.json files in {args.source}", file=sys.stderr)
        return 1
    records = {p: load_records(p) for p in sources}
    counts = allocate(args.samples, [len(records[p]) for p in sources])

    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    serial = 0
    summary = {}
    for path, count in zip(sources, counts):
        templates = [Template(r) for r in records[path]]
        out_path = args.out / (path.name.rsplit(".", 1)[0] + ".jsonl")
        tmp_path = out_path.with_name(out_path.name + ".tmp")
        with tmp_path.open("w", encoding="utf-8", newline="\n") as out:
            size = len(templates)
            buf = []
            for i in range(count):
                buf.append(templates[i % size].line(i // size, serial))
                serial += 1
                if len(buf) >= 4096:
                    out.write("".join(buf))
                    buf.clear()
            out.write("".join(buf))
        os.replace(tmp_path, out_path)
        summary[out_path.name] = count
    print(json.dumps({
        "samples": args.samples,
        "out": str(args.out),
        "files": summary,
        "seconds": round(time.perf_counter() - started, 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
