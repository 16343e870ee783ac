#!/usr/bin/env python3
"""What the rollout log costs the Python adapter: scores N items through
timeaware.verl.compute_score_batch, in batches as a VeRL batch reward
manager sends them, against the verifier at TIMEAWARE_URL, with the log on
when TIMEAWARE_ROLLOUT_LOG names a directory. Time it against itself with
the log off, in the same run:

    bin/timeaware serve --addr 127.0.0.1:8080 &
    TIMEAWARE_URL=http://127.0.0.1:8080 farm-bench -n 7 \\
        -- env TIMEAWARE_ROLLOUT_LOG=/tmp/rollout-log .venv/bin/python bench/serve/rollout_log.py \\
        --vs '.venv/bin/python bench/serve/rollout_log.py'

The items are examples/score/rollouts.jsonl's, cycled; the log directory
is emptied first, so every run writes the same lines.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from timeaware import scoring, verl

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=20000, help="items to score (default 20000)")
    ap.add_argument("--batch", type=int, default=512, help="items per compute_score_batch call (default 512)")
    args = ap.parse_args()
    log = os.environ.get("TIMEAWARE_ROLLOUT_LOG")
    if log:
        shutil.rmtree(log, ignore_errors=True)
    rows = [json.loads(line) for line in (REPO / "examples" / "score" / "rollouts.jsonl").read_text().splitlines()]
    items = [rows[i % len(rows)] for i in range(args.items)]
    total = 0.0
    for start in range(0, len(items), args.batch):
        chunk = items[start:start + args.batch]
        out = verl.compute_score_batch([it["data_source"] for it in chunk], [it["solution_str"] for it in chunk],
                                       [it["ground_truth"] for it in chunk], [it["extra_info"] for it in chunk])
        total += sum(r["score"] for r in out)
    fallbacks = scoring.stats()["fallbacks"]
    scoring.shutdown()
    if fallbacks:
        print(f"{fallbacks} items got no answer: is the verifier at TIMEAWARE_URL running?")
        return 1
    print(f"scored {len(items)} items, score sum {total:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
