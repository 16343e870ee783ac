"""The leakage-gate benchmark's baseline: train/test near-duplicates with
datasketch's MinHashLSH, as a user would write it.

It reads the same Parquet files as `timeaware splits check` (a prompt
column of {role, content} messages), normalises each conversation the
same plain way (lower case, white space collapsed), hashes 5-word
shingles into a 128-permutation MinHash, indexes the test side in a
MinHashLSH with the gate's 16 bands of 8 rows, then queries every train
conversation and keeps the candidates whose estimated Jaccard reaches the
threshold; exact duplicates come from a dictionary of normalised texts.
One process, as a script would run. It prints one JSON object: counts of
what it found, seconds and CPU seconds.

    python bench/splits/baseline.py TRAIN.parquet TEST.parquet [--threshold 0.8]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time

import pyarrow.parquet as pq
from datasketch import MinHash, MinHashLSH

SHINGLE = 5
PERM = 128
BANDS, ROWS = 16, 8


def conversations(path):
    """Yields (id, normalised text) for each row of a pairs Parquet file."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(columns=["id", "prompt"], batch_size=8192):
        ids = batch.column("id").to_pylist()
        prompts = batch.column("prompt").to_pylist()
        for rid, msgs in zip(ids, prompts):
            text = "\n".join(m["content"] for m in msgs if m["content"] is not None)
            yield rid, " ".join(text.lower().split())


def minhash(text):
    words = text.split()
    m = MinHash(num_perm=PERM, seed=1)
    m.update_batch([" ".join(words[i:i + SHINGLE]).encode() for i in range(max(1, len(words) - SHINGLE + 1))])
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--threshold", type=float, default=0.8)
    args = ap.parse_args()
    start, cpu0 = time.perf_counter(), time.process_time()

    lsh = MinHashLSH(threshold=args.threshold, num_perm=PERM, params=(BANDS, ROWS))
    signatures, exact, test_rows = {}, {}, 0
    for rid, text in conversations(args.test):
        test_rows += 1
        if text in exact:
            exact[text].append(rid)
            continue
        exact[text] = [rid]
        m = minhash(text)
        signatures[rid] = m
        lsh.insert(rid, m)
    indexed = time.perf_counter()

    train_rows = exact_pairs = near_pairs = candidates = 0
    for rid, text in conversations(args.train):
        train_rows += 1
        same = exact.get(text, [])
        exact_pairs += len(same)
        m = minhash(text)
        for key in lsh.query(m):
            if key in same:
                continue
            candidates += 1
            if m.jaccard(signatures[key]) >= args.threshold:
                near_pairs += 1
    end = time.perf_counter()
    json.dump({
        "train_rows": train_rows, "test_rows": test_rows, "exact_pairs": exact_pairs, "near_pairs": near_pairs,
        "candidates": candidates, "seconds": round(end - start, 2), "index_seconds": round(indexed - start, 2),
        "cpu_seconds": round(time.process_time() - cpu0, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
