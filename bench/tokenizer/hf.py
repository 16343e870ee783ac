"""Times Hugging Face's tokenizers counting the pieces BenchmarkCount
counts (the text of --texts in pieces of --piece characters): each pass
encodes every piece with encode(piece, add_special_tokens=False), one at a
time (a trainer's own count), and with encode_batch (all cores). Prints
one JSON object: the best pass's MB/s of each, and the tokens counted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tokenizers import Tokenizer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--piece", type=int, default=8000)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    tok = Tokenizer.from_file(args.tokenizer)
    text = Path(args.texts).read_text(encoding="utf-8", errors="replace")
    pieces = [text[i:i + args.piece] for i in range(0, len(text), args.piece)]
    mb = sum(len(p.encode()) for p in pieces) / 1e6
    best_one, best_batch, tokens = float("inf"), float("inf"), 0
    for _ in range(args.passes):
        t = time.perf_counter()
        tokens = sum(len(tok.encode(p, add_special_tokens=False).ids) for p in pieces)
        best_one = min(best_one, time.perf_counter() - t)
        t = time.perf_counter()
        tok.encode_batch(pieces, add_special_tokens=False)
        best_batch = min(best_batch, time.perf_counter() - t)
    print(json.dumps({"tokens": tokens, "mb": mb, "encode_mb_s": mb / best_one, "encode_batch_mb_s": mb / best_batch}))


if __name__ == "__main__":
    main()
