#!/usr/bin/env bash
# Counting tokens: package tokenizer (what the verifier runs for
# rewards.length.tokenizer) against Hugging Face's tokenizers, the library
# a trainer counts with, on the same tokenizer and the same text, in one
# run.
#
#   bash bench/tokenizer/run.sh            # or: make bench-tokenizer
#
# The tokenizer is trained first (bench/serve/make_tokenizer.py: a
# Qwen2-shaped byte-level BPE on the shared data's TicToc trajectories and
# seed papers); the text is the seed papers, in pieces of 8,000 characters
# (about 2,000 tokens, a long response). Reports MB/s and ns per token of
# BenchmarkCount (its cache of words warm after the first pass) and of
# tokenizers' encode, one piece at a time and batched (all cores), the
# ratios, and whether both counted the same tokens.
#
# Environment:
#   PYTHON            Python with tokenizers (default .venv/bin/python: make venv)
#   TIMEAWARE_SHARED  the shared data (default ../shared beside the checkout)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"
bench_python
bench_workdir tokenizer

"$PYTHON" "$repo/bench/serve/make_tokenizer.py" --shared "$shared" --out "$work/tokenizer.json" >"$work/tokenizer.desc"
cat "$shared"/seeds/*.txt >"$work/texts.txt"
echo "== BenchmarkCount" >&2
(cd "$repo" && go test -run '^$' -bench '^BenchmarkCount$' -benchtime 3s ./tokenizer \
    -args -tokenizer "$work/tokenizer.json" -texts "$work/texts.txt" -piece 8000) | tee "$work/go.txt" >&2
echo "== tokenizers" >&2
"$PYTHON" "$here/hf.py" --tokenizer "$work/tokenizer.json" --texts "$work/texts.txt" --piece 8000 >"$work/hf.json"

"$PYTHON" - "$work" <<'PY'
import json, re, sys
from pathlib import Path
work = Path(sys.argv[1])
line = next(l for l in (work / "go.txt").read_text().splitlines() if l.startswith("BenchmarkCount"))
go_mb = float(re.search(r"([\d.]+) MB/s", line).group(1))
go_tokens = int(float(re.search(r"([\d.]+) tokens", line).group(1)))
hf = json.loads((work / "hf.json").read_text())
def ns(mb_s):
    return hf["mb"] / mb_s / hf["tokens"] * 1e9
print(f"counting tokens: {(work / 'tokenizer.desc').read_text().strip()};")
print(f"  the seed papers, {hf['mb']:.2f} MB in pieces of 8,000 characters, {hf['tokens']:,} tokens")
print(f"  {'':<44} {'MB/s':>8} {'ns/token':>9} {'ratio':>7}")
print(f"  {'package tokenizer (Count, one core)':<44} {go_mb:>8.1f} {ns(go_mb):>9.0f} {'1.00x':>7}")
for key, what in (("encode_mb_s", "tokenizers encode, one piece at a time"), ("encode_batch_mb_s", "tokenizers encode_batch, all cores")):
    print(f"  {what:<44} {hf[key]:>8.1f} {ns(hf[key]):>9.0f} {go_mb / hf[key]:>6.2f}x")
same = go_tokens == hf["tokens"]
print(f"  (ratio: package tokenizer's MB/s over the row's); the same count: "
      + ("yes" if same else f"NO, {go_tokens:,} against tokenizers' {hf['tokens']:,}"))
if not same:
    sys.exit(1)
PY
