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

records="${1:-1000000}"
if ! [[ "$records" =~ ^[0-9]+$ ]] || [ "$records" -le 0 ]; then
    echo "usage: bash bench/synth/timestamps.sh [RECORDS]" >&2
    exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
shared="${TIMEAWARE_SHARED:-$repo/../shared}"
source_dir="$shared/data/tictoc-v1"
PYTHON="${PYTHON:-python3}"
workers="${WORKERS:-0}"

if [ ! -x /usr/bin/time ]; then
    echo "timestamps.sh: /usr/bin/time is missing; install it with: apt-get update && apt-get install -y time" >&2
    exit 1
fi

if [ -n "${TIMEAWARE_BENCH_DIR:-}" ]; then
    work="$TIMEAWARE_BENCH_DIR"
    mkdir -p "$work"
else
    work="$(mktemp -d "${TMPDIR:-/tmp}/timeaware-bench-synth.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
# The same corpus as bench/pairs/run.sh makes, so TIMEAWARE_BENCH_DIR can be shared.
corpus="$work/corpus-$records"

echo "== building bin/timeaware" >&2
(cd "$repo" && go build -o bin/timeaware ./cmd/timeaware)

if [ -f "$corpus.done" ] && [ -d "$corpus" ]; then
    echo "== reusing corpus $corpus" >&2
else
    echo "== making corpus of $records records in $corpus" >&2
    rm -rf "$corpus" "$corpus.done"
    PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$repo/bench/pairs/make_corpus.py" \
        --samples "$records" --source "$source_dir" --out "$corpus" >&2
    touch "$corpus.done"
fi

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
