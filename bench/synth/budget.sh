#!/usr/bin/env bash
# Benchmark `timeaware synth budget`: budgeted VeRL rows written per second and
# peak memory on a JSONL input of TASKS general tasks (default 1,000,000), a
# third of them with a baseline_seconds, the rest drawn.
#
#   bash bench/synth/budget.sh [TASKS]
#
# Builds bin/timeaware, generates the tasks, then runs the build twice under
# /usr/bin/time -v: Parquet rows only, and Parquet rows plus teacher requests
# (--teacher-requests). Prints rows, wall seconds, rows/s and peak RSS.
#
# Environment:
#   TIMEAWARE_BENCH_DIR  keep the input (and outputs) here and reuse an input of
#                        the same size on later runs; default: a temp dir
#                        removed at exit
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"

tasks="${1:-1000000}"
bench_count "$tasks" "bash bench/synth/budget.sh [TASKS]"
bench_need_time budget.sh
bench_workdir bench
input="$work/tasks-$tasks.jsonl"
bench_build

if [ -f "$input.done" ] && [ -f "$input" ]; then
    echo "== reusing $input" >&2
else
    echo "== writing $tasks tasks to $input" >&2
    rm -f "$input" "$input.done"
    awk -v n="$tasks" 'BEGIN {
        for (i = 0; i < n; i++) {
            base = (i % 3 == 0) ? sprintf(",\"baseline_seconds\":%.1f", 2 + (i % 97) / 2) : ""
            printf "{\"id\":\"task-%d\",\"question\":\"A tank holds %d litres and drains %d litres a minute. After how many minutes is it empty? Show the steps.\",\"answer\":%d%s}\n", i, (i % 50 + 1) * 12, i % 50 + 1, 12, base
        }
    }' > "$input"
    touch "$input.done"
fi
bytes=$(stat -c %s "$input")

run() {
    local name="$1"
    shift
    rm -f "$work/$name.parquet" "$work/$name.parquet.manifest.json" "$work/$name-teacher.jsonl"
    echo "== timeaware synth budget ($name)" >&2
    /usr/bin/time -v -o "$work/$name.time" "$repo/bin/timeaware" synth budget --input "$input" \
        --family general --seed 1 --out "$work/$name.parquet" "$@" > "$work/$name.out"
    sed 's/^/  /' "$work/$name.out" >&2
    local rows secs rss
    rows=$(sed -n 's/^synth budget: \([0-9]*\) rows written.*/\1/p' "$work/$name.out")
    secs=$(bench_seconds "$work/$name.time")
    rss=$(bench_rss_mb "$work/$name.time")
    printf '%-26s %10s %9.2f %12.0f %12s\n' "$name" "$rows" "$secs" "$(awk -v r="$rows" -v s="$secs" 'BEGIN {print (s > 0 ? r / s : 0)}')" "$rss"
}

printf 'synth budget, %s tasks (%s MB of JSONL), family general, Parquet zstd, %s CPUs\n' \
    "$tasks" "$(awk -v b="$bytes" 'BEGIN {printf "%.0f", b / 1048576}')" "$(nproc)"
printf '%-26s %10s %9s %12s %12s\n' "" "rows" "seconds" "rows/s" "peak RSS MB"
run "rows"
run "rows+teacher" --teacher-requests "$work/rows+teacher-teacher.jsonl" --teacher-model bench-teacher
