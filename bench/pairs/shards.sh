#!/usr/bin/env bash
# Scaling of `timeaware pairs build` by shards on this machine.
#
#   bash bench/pairs/shards.sh [SAMPLES] [SHARDS...]   # default 1000000, shards 1 2 4
#
# Makes (or reuses) the bench-pairs corpus, then for each N runs the N
# shards `pairs build --shard i/N` at once, each under /usr/bin/time -v, and
# prints N, wall seconds for all of them, samples/s, and each shard's wall
# seconds, CPU seconds and peak RSS. The shards of each N are checked to hold
# the single run's row count. This is what `python -m timeaware.ray --shards
# N` runs on one node, without Ray's scheduling.
#
# Environment: TIMEAWARE_BENCH_DIR (keep the corpus), TIMEAWARE_SHARED, PYTHON,
# as for bench/pairs/run.sh.
set -euo pipefail

samples="${1:-1000000}"
shift || true
shard_counts=("${@:-1 2 4}")
if [ "$#" -eq 0 ]; then shard_counts=(1 2 4); fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"
bench_python
bench_workdir shards
bench_build
bench_corpus "$samples"

printf '%-7s %9s %11s  %s\n' shards "wall s" "samples/s" "per shard: wall s, CPU s, peak RSS MB"
for n in "${shard_counts[@]}"; do
    rm -rf "$work/out-$n"; mkdir -p "$work/out-$n"
    start=$(date +%s.%N)
    pids=()
    for ((i = 0; i < n; i++)); do
        /usr/bin/time -v -o "$work/out-$n/$i.time" "$repo/bin/timeaware" pairs build --input "$corpus" \
            --time-format iso --format parquet --shard "$i/$n" --out "$work/out-$n/part-$i.parquet" >/dev/null 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    end=$(date +%s.%N)
    "$PYTHON" - "$work/out-$n" "$n" "$start" "$end" "$samples" <<'PY'
import re, sys
from pathlib import Path
import pyarrow.parquet as pq
d, n, start, end, samples = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rows, cells = 0, []
for i in range(n):
    t = (d / f"{i}.time").read_text()
    def f(key):
        return re.search(re.escape(key) + r": (.*)", t).group(1).strip()
    h, m, s = ([0, 0] + [float(x) for x in f("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")])[-3:]
    wall = h * 3600 + m * 60 + s
    cpu = float(f("User time (seconds)")) + float(f("System time (seconds)"))
    rss = int(f("Maximum resident set size (kbytes)")) / 1024
    rows += pq.ParquetFile(d / f"part-{i}.parquet").metadata.num_rows
    cells.append(f"{wall:.1f}, {cpu:.1f}, {rss:.0f}")
total = end - start
print(f"{n:<7d} {total:9.2f} {samples / total:11,.0f}  " + "; ".join(cells) + f"   ({rows:,} rows)")
PY
done
