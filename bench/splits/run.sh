#!/usr/bin/env bash
# Leakage-gate benchmark: time and peak memory of `timeaware splits check` on
# TRAIN × TEST synthetic conversations (default 200,000 × 50,000, ~300 words
# each), written as Parquet by bench/splits/gen.
#
#   bash bench/splits/run.sh [TRAIN] [TEST]
#
# TIMEAWARE_BENCH_DIR keeps the generated files for reuse.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
train="${1:-200000}"
test="${2:-50000}"
cd "$repo"
if [ ! -x /usr/bin/time ]; then
    echo "run.sh: /usr/bin/time is missing (apt-get install time)" >&2
    exit 2
fi
work="${TIMEAWARE_BENCH_DIR:-$(mktemp -d)}/gate-$train-$test"
mkdir -p "$work"
echo "== building bin/timeaware"
go build -o bin/timeaware ./cmd/timeaware
if [ ! -f "$work/pairs-test.parquet" ]; then
    echo "== generating $train train and $test test conversations in $work"
    go run ./bench/splits/gen -train "$train" -test "$test" -out "$work"
fi
echo "== timeaware splits check"
/usr/bin/time -v -o "$work/time.txt" bin/timeaware splits check --test-fraction 0 \
    "$work/pairs-train.parquet" "$work/pairs-test.parquet" | sed 's/^/  /'
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$work/time.txt")
echo "splits check, $train train x $test test conversations: wall $wall, peak RSS $rss MB"
