#!/usr/bin/env bash
# Benchmark `timeaware synth timestamps` on a large corpus.
#
#   bash bench/synth/timestamps.sh [RECORDS]       # default 1000000
#
# Builds bin/timeaware, makes a corpus of RECORDS TicToc records by re-keying
# the v1 trajectories (bench/pairs/make_corpus.py: five JSONL files, fresh ids
# "<alias>_<copy * 1,000,000 + n>", so the scenario catalog still resolves
# every id), stamps it under /usr/bin/time -v into one JSONL file, checks the
# output has one line per record, and prints records, wall seconds,
# records/s and peak RSS. Nothing is written into the repository except
# bin/timeaware.
#
# Environment:
#   TIMEAWARE_BENCH_DIR  keep the corpus (and output) here and reuse a corpus
#                        of the same size on later runs; default: a temp dir
#                        removed at exit
#   TIMEAWARE_SHARED     shared data dir (default <repo>/../shared)
#   PYTHON               Python 3 for the corpus script (default python3)
#   WORKERS              --workers for the stamping run (default 0: one per CPU)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"

records="${1:-1000000}"
bench_count "$records" "bash bench/synth/timestamps.sh [RECORDS]"
PYTHON="${PYTHON:-python3}"
workers="${WORKERS:-0}"
bench_need_time timestamps.sh
bench_workdir bench-synth
bench_build
# The same corpus as bench/pairs/run.sh makes, so TIMEAWARE_BENCH_DIR can be shared.
bench_corpus "$records"

out="$work/stamped.jsonl"
rm -f "$out"
echo "== timeaware synth timestamps" >&2
/usr/bin/time -v -o "$work/timestamps.time" \
    "$repo/bin/timeaware" synth timestamps --input "$corpus" --seed 1 \
    --workers "$workers" --out "$out" >&2

lines="$(wc -l < "$out")"
wall="$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/timestamps.time")"
rss_kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/timestamps.time")"
cpu="$(sed -n 's/.*Percent of CPU this job got: //p' "$work/timestamps.time")"
bytes_in="$(cat "$corpus"/*.jsonl | wc -c)"
bytes_out="$(wc -c < "$out")"

awk -v n="$lines" -v want="$records" -v wall="$wall" -v rss="$rss_kb" -v cpu="$cpu" \
    -v bin="$bytes_in" -v bout="$bytes_out" -v cores="$(nproc)" 'BEGIN {
    k = split(wall, p, ":"); s = 0
    for (i = 1; i <= k; i++) s = s * 60 + p[i]
    printf "synth timestamps, %d records (JSONL in %.0f MB, out %.0f MB; %d cores, CPU %s)\n", want, bin / 1e6, bout / 1e6, cores, cpu
    printf "%12s %9s %12s %12s\n", "records", "seconds", "records/s", "peak RSS MB"
    printf "%12d %9.2f %12.0f %12.1f\n", n, s, (s > 0 ? n / s : 0), rss / 1024
    if (n != want) { printf "FAIL: %d lines written, want %d\n", n, want > "/dev/stderr"; exit 1 }
}'
