#!/usr/bin/env python3
"""In-process Python baseline for the verifier service benchmark.

Loads the corpus that `loadgen -dump-corpus` wrote (JSONL items
{data_source, solution_str, ground_truth, extra_info}) into memory as a list
of dicts, the way a VeRL reward manager holds a batch, then times a plain
loop calling bench/serve/reference.py's compute_score on every item, for
several passes, on one core (as VeRL's naive reward manager does):

    python bench/serve/baseline.py --corpus corpus.jsonl [--passes 7]
        [--expect-sum X --expect-correct N] [--json]

It reports the best and median pass in items/s, and the CPU time per item.
With --expect-sum (the score sum the Go server returned for the same
corpus) and --expect-correct (its count of right answers) it checks that
both sides did the same work, and exits 1 when they differ.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import compute_score  # noqa: E402


def run_pass(items):
    score = compute_score
    return [score(it["data_source"], it["solution_str"], it["ground_truth"], it["extra_info"]) for it in items]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="JSONL items from loadgen -dump-corpus")
    ap.add_argument("--passes", type=int, default=7, help="timed passes over the corpus (default 7)")
    ap.add_argument("--expect-sum", type=float, help="score sum the Go server gave for the corpus")
    ap.add_argument("--expect-correct", type=int, help="items the Go server scored as right")
    ap.add_argument("--json", action="store_true", help="print a one-line JSON summary on stdout")
    args = ap.parse_args(argv)
    if args.passes < 1:
        ap.error("--passes must be at least 1")

    with open(args.corpus, encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    n = len(items)
    if n == 0:
        print("baseline: the corpus is empty", file=sys.stderr)
        return 1

    walls, cpus, first = [], [], None
    for _ in range(args.passes):
        c0, t0 = time.process_time(), time.perf_counter()
        results = run_pass(items)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if first is None:
            first = results

    score_sum = 0.0
    for r in first:  # index order, as the Go side sums
        score_sum += r["score"]
    correct = sum(1 for r in first if r["acc"] == 1.0)
    best, median = min(walls), statistics.median(walls)
    summary = {
        "mode": "python",
        "items": n,
        "passes": args.passes,
        "best_s": best,
        "median_s": median,
        "items_per_s": n / best,
        "items_per_s_median": n / median,
        "cpu_us_per_item": min(cpus) / n * 1e6,
        "score_sum": score_sum,
        "correct": correct,
    }
    print(f"python baseline: {n} items x {args.passes} passes: best {n / best:,.0f} items/s, "
          f"median {n / median:,.0f} items/s, {summary['cpu_us_per_item']:.1f} µs CPU per item; "
          f"score sum {score_sum:.6f}, {correct} right", file=sys.stderr)

    failures = []
    if args.expect_sum is not None:
        # The time-derived details may differ from Go in the last bit of a
        # float (math.sin), so the sums agree to rounding, not bit for bit.
        tol = 1e-9 * max(1.0, n)
        if abs(score_sum - args.expect_sum) > tol:
            failures.append(f"score sum {score_sum!r} differs from the Go server's {args.expect_sum!r}")
    if args.expect_correct is not None and correct != args.expect_correct:
        failures.append(f"{correct} right answers, the Go server found {args.expect_correct}")
    summary["checked"] = args.expect_sum is not None or args.expect_correct is not None
    summary["ok"] = not failures
    if args.json:
        print(json.dumps(summary))
    for msg in failures:
        print(f"baseline: FAIL: {msg}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
