#!/usr/bin/env bash
# Benchmark `timeaware synth puzzles`: Time Puzzles generated per second and
# peak memory for COUNT puzzles (default 100,000) with the default options
# (years 1900-2030, 1 to 6 solutions, every fact kind), written as Parquet.
#
#   bash bench/synth/puzzles.sh [COUNT]
#
# Builds bin/timeaware and runs the command twice under /usr/bin/time -v: on
# one core (--workers 1, pinned with taskset when it is there), then with one
# worker per core. Prints puzzles, wall seconds, puzzles/s and peak RSS.
#
# Environment:
#   TIMEAWARE_BENCH_DIR  keep the outputs here; default: a temp dir removed
#                        at exit
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"

count="${1:-100000}"
bench_count "$count" "bash bench/synth/puzzles.sh [COUNT]"
bench_need_time puzzles.sh
bench_workdir bench
bench_build

run() {
    local name="$1" workers="$2"
    shift 2
    local out="$work/puzzles-$name.parquet"
    rm -f "$out" "$out.manifest.json"
    echo "== timeaware synth puzzles ($name)" >&2
    /usr/bin/time -v -o "$work/$name.time" "$@" "$repo/bin/timeaware" synth puzzles \
        --count "$count" --seed 1 --workers "$workers" --out "$out" > "$work/$name.out"
    sed 's/^/  /' "$work/$name.out" >&2
    local rows secs rss
    rows=$(sed -n 's/^synth puzzles: \([0-9]*\) puzzles written.*/\1/p' "$work/$name.out")
    secs=$(bench_seconds "$work/$name.time")
    rss=$(bench_rss_mb "$work/$name.time")
    printf '%-12s %10s %9.2f %12.0f %12s %10s\n' "$name" "$rows" "$secs" \
        "$(awk -v r="$rows" -v s="$secs" 'BEGIN {print (s > 0 ? r / s : 0)}')" "$rss" \
        "$(du -m "$out" | cut -f1)"
}

pin=()
if command -v taskset > /dev/null; then
    pin=(taskset -c 0)
fi
printf 'synth puzzles, %s puzzles, default options, Parquet zstd, %s CPUs\n' "$count" "$(nproc)"
printf '%-12s %10s %9s %12s %12s %10s\n' "" "puzzles" "seconds" "puzzles/s" "peak RSS MB" "file MB"
run "one core" 1 "${pin[@]}"
run "all cores" 0
