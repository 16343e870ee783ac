#!/usr/bin/env bash
# Benchmark `timeaware pairs build` against the Python baseline.
#
#   bash bench/pairs/run.sh [SAMPLES]        # default 1000000
#
# Builds bin/timeaware, makes a synthetic corpus of SAMPLES samples from the
# v1 trajectories (bench/pairs/make_corpus.py), runs the Go CLI and
# bench/pairs/baseline.py on it, each under /usr/bin/time -v, and prints rows,
# wall seconds, rows/s and peak RSS for both, with the throughput and memory
# ratios. Nothing is written into the repository except bin/timeaware.
#
# Environment:
#   TIMEAWARE_BENCH_DIR  keep the corpus (and outputs) here and reuse a corpus
#                        of the same size on later runs; default: a temp dir
#                        removed at exit
#   TIMEAWARE_SHARED     shared data dir (default <repo>/../shared)
#   PYTHON               Python with pyarrow (default .venv/bin/python of the repository if
#                        present, else python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"

samples="${1:-1000000}"
bench_count "$samples" "bash bench/pairs/run.sh [SAMPLES]"
bench_python
bench_need_time run.sh
if ! "$PYTHON" -c 'import pyarrow.parquet' 2>/dev/null; then
    echo "run.sh: $PYTHON has no pyarrow; pip install -r python/tests/interop/requirements.txt" >&2
    exit 1
fi

bench_workdir bench
bench_build
bench_corpus "$samples"

go_out="$work/go.parquet"
py_out="$work/python.parquet"
rm -f "$go_out" "$go_out.manifest.json" "$py_out"

echo "== Go: timeaware pairs build" >&2
/usr/bin/time -v -o "$work/go.time" \
    "$repo/bin/timeaware" pairs build --input "$corpus" --time-format iso \
    --format parquet --out "$go_out" >&2

echo "== Python baseline" >&2
/usr/bin/time -v -o "$work/python.time" \
    env PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$here/baseline.py" --out "$py_out" "$corpus" >&2

"$PYTHON" - "$work" "$go_out" "$py_out" "$samples" <<'PY'
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

work, go_out, py_out, samples = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])


def measure(name):
    text = (work / f"{name}.time").read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    cpu = sum(float(re.search(rf"{k} time \(seconds\): (\S+)", text).group(1)) for k in ("User", "System"))
    return seconds, rss_kb / 1024, cpu


go_rows = pq.ParquetFile(go_out).metadata.num_rows
py_rows = pq.ParquetFile(py_out).metadata.num_rows
go_s, go_mb, go_cpu = measure("go")
py_s, py_mb, py_cpu = measure("python")
go_rps = go_rows / go_s if go_s else float("inf")
py_rps = py_rows / py_s if py_s else float("inf")

print(f"pairs build, {samples:,} samples (time format iso, Parquet zstd)")
print(f"{'':8} {'rows':>12} {'seconds':>9} {'CPU s':>8} {'rows/s':>12} {'µs CPU/row':>11} {'peak RSS MB':>12}")
print(f"{'Go':8} {go_rows:>12,} {go_s:>9.2f} {go_cpu:>8.2f} {go_rps:>12,.0f} {1e6 * go_cpu / go_rows:>11.1f} {go_mb:>12.1f}")
print(f"{'Python':8} {py_rows:>12,} {py_s:>9.2f} {py_cpu:>8.2f} {py_rps:>12,.0f} {1e6 * py_cpu / py_rows:>11.1f} {py_mb:>12.1f}")
print(f"throughput Go/Python (wall): {go_rps / py_rps:.2f}x")
print(f"per CPU second Go/Python:    {py_cpu / go_cpu:.2f}x")
print(f"peak RSS Python/Go:          {py_mb / go_mb:.2f}x")
if go_rows != py_rows:
    print(f"FAIL: row counts differ: Go {go_rows} vs Python {py_rows}", file=sys.stderr)
    sys.exit(1)
PY
