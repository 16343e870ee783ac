#!/usr/bin/env bash
# Compare the Go side of each benchmark between another revision and the
# checkout, side by side on the same inputs.
#
#   bash bench/compare.sh BASE [CASE...]      # make bench-compare BASE=<rev>
#
# Builds bin/timeaware of BASE (in a temporary git worktree) and of the
# checkout (with whatever it has not committed), then runs every case on
# both, alternating (base, new, then new, base, ...) for ROUNDS rounds on
# the same corpus, so that a machine that speeds up or slows down during
# the run weighs on both alike. It prints, per case, each side's median and
# the ratio new/base of the medians, with the spread of the rounds' own
# ratios (min–max): below 1.00x the checkout is faster. The machine is
# shared and noisy, so read ratios, never absolute times, and a change
# inside the spread is no change. A case whose outputs differ between the
# two binaries says so (pairs and puzzles: the Parquet bytes, or their
# rows where only the footer's order differs; splits: the JSON report;
# timestamps: the output bytes), since a speed-up must not change them.
#
# Cases (all by default; name some to run those only):
#   pairs       pairs build → Parquet, CPU seconds (user + system)
#   splits      splits check, CPU seconds
#   timestamps  synth timestamps, CPU seconds
#   puzzles     synth puzzles, CPU seconds
#   score       the service's POST /v1/score/batch (timely/general), the
#               server's CPU µs per item, as bench-serve's run (a) measures it
#   anytime     the same with the length/anytime reward
#   duration    the service's POST /v1/tools/get_duration, CPU µs per call
#
# Environment:
#   ROUNDS               rounds per case (default 5)
#   SAMPLES              pairs and timestamps corpus (default 50000 samples)
#   TRAIN, TEST          splits check sizes (default 50000 and 12500)
#   PUZZLES              synth puzzles count (default 5000)
#   SERVE_SECONDS        measured seconds per service run (default 3)
#   TIMEAWARE_BENCH_DIR  keep the corpora here and reuse them; default: a
#                        temp dir removed at exit
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"

base_rev="${1:-}"
if [ -z "$base_rev" ]; then
    echo "usage: bash bench/compare.sh BASE [pairs|splits|timestamps|puzzles|score|anytime|duration ...]" >&2
    exit 2
fi
shift
all_cases=(pairs splits timestamps puzzles score anytime duration)
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${all_cases[@]}")
for c in "${cases[@]}"; do
    if ! printf '%s\n' "${all_cases[@]}" | grep -qx -- "$c"; then
        echo "bench/compare.sh: no case $c (cases: ${all_cases[*]})" >&2
        exit 2
    fi
done
rounds="${ROUNDS:-5}"
samples="${SAMPLES:-50000}"
train="${TRAIN:-50000}"
test_rows="${TEST:-12500}"
puzzles="${PUZZLES:-5000}"
serve_seconds="${SERVE_SECONDS:-3}"
bench_count "$rounds" "ROUNDS=N bash bench/compare.sh BASE"
bench_need_time compare.sh
bench_python

base_commit="$(cd "$repo" && git rev-parse --verify --quiet "$base_rev^{commit}")" || {
    echo "bench/compare.sh: $base_rev is not a revision of this repository" >&2
    exit 2
}

bench_workdir compare
src="$(mktemp -d "${TMPDIR:-/tmp}/timeaware-compare-src.XXXXXX")"
cleanup_src() {
    (cd "$repo" && git worktree remove --force "$src/base" 2>/dev/null) || true
    rm -rf "$src"
}
trap 'cleanup_src; [ -n "${TIMEAWARE_BENCH_DIR:-}" ] || rm -rf "$work"' EXIT

# What the checkout is when it is built (the run may outlast later commits).
new_head="$(cd "$repo" && git rev-parse --short=12 HEAD)"
new_dirty="$(cd "$repo" && git status --porcelain --untracked-files=no | wc -l)"
echo "== building the base ($base_rev, ${base_commit:0:12}) and the checkout" >&2
(cd "$repo" && git worktree add --detach --quiet "$src/base" "$base_commit")
mkdir -p "$work/base" "$work/new"
(cd "$src/base" && go build -o "$work/base/timeaware" ./cmd/timeaware)
(cd "$repo" && go build -o "$work/new/timeaware" ./cmd/timeaware && go build -o "$work/loadgen" ./bench/serve/loadgen)
loadgen="$work/loadgen"
results="$work/results.tsv"
: >"$results"

# cpu_of CMD...: run CMD under /usr/bin/time and print its user + system CPU seconds.
cpu_of() {
    /usr/bin/time -f '%U %S' -o "$work/time.txt" "$@" >/dev/null 2>"$work/cmd.err" || {
        echo "bench/compare.sh: failed: $*" >&2
        cat "$work/cmd.err" >&2
        exit 1
    }
    awk '{ printf "%.3f", $1 + $2 }' "$work/time.txt"
}

# record CASE SIDE ROUND VALUE UNIT
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; }

# same CASE FILE_BASE FILE_NEW: note whether the two sides' outputs are
# byte-identical (1), or, for Parquet files, hold the same schema and rows
# with only the footer's bytes apart (2: Arrow writes a column chunk's
# encoding statistics in map order, so two runs of one binary can differ
# there), or differ (0).
same() {
    if cmp -s "$2" "$3"; then
        record "$1" same 0 1 outputs
    elif [[ "$2" == *.parquet ]] && "$PYTHON" - "$2" "$3" <<'PY'
import sys
import pyarrow.parquet as pq

a, b = (pq.read_table(p) for p in sys.argv[1:])
sys.exit(0 if a.schema.equals(b.schema, check_metadata=True) and a.equals(b) else 1)
PY
    then
        record "$1" same 0 2 outputs
    else
        record "$1" same 0 0 outputs
    fi
}

# alternate CASE UNIT FN: run FN SIDE OUT for ROUNDS rounds, base first in
# odd rounds and the checkout first in even ones; FN prints the value.
alternate() {
    local name="$1" unit="$2" fn="$3" r side
    for ((r = 1; r <= rounds; r++)); do
        local order=(base new)
        ((r % 2 == 0)) && order=(new base)
        for side in "${order[@]}"; do
            record "$name" "$side" "$r" "$("$fn" "$side" "$work/out-$name-$side")" "$unit"
        done
    done
    echo "   $name: $rounds rounds" >&2
}

run_pairs() {
    rm -f "$2.parquet" "$2.parquet.manifest.json"
    cpu_of "$work/$1/timeaware" pairs build --input "$corpus" --time-format iso --format parquet --out "$2.parquet"
}

run_splits() {
    cpu_of sh -c '"$1" splits check --json --test-fraction 0 --max-findings 0 "$2" "$3" >"$4" || [ $? -eq 1 ]' sh \
        "$work/$1/timeaware" "$gate/pairs-train.parquet" "$gate/pairs-test.parquet" "$2.json"
}

run_timestamps() {
    rm -f "$2.jsonl" "$2.jsonl.manifest.json"
    cpu_of "$work/$1/timeaware" synth timestamps --input "$corpus" --seed 1 --out "$2.jsonl"
}

run_puzzles() {
    rm -f "$2.parquet" "$2.parquet.manifest.json"
    cpu_of "$work/$1/timeaware" synth puzzles --count "$puzzles" --seed 1 --out "$2.parquet"
}

# serve SIDE MODE FIELD LOADGEN_FLAGS...: start SIDE's server, run the load
# generator in MODE against it, print FIELD of its JSON, stop the server.
serve() {
    local side="$1" mode="$2" field="$3"
    shift 3
    local server_pid url
    TIMEAWARE_TIMERS_SECRET="bench-compare-secret-0123456789abcdef" \
        bench_start_server "bench/compare.sh ($side)" "$work/$side/timeaware" "$work/serve-$side.log"
    local pid="$server_pid" addr="${url#http://}"
    "$loadgen" -mode "$mode" -url "http://$addr" -server-pid "$pid" -warmup 1s -duration "${serve_seconds}s" -json "$@" \
        >"$work/loadgen.json" 2>"$work/loadgen.err" || {
        echo "bench/compare.sh: the load generator failed against the $side server:" >&2
        cat "$work/loadgen.err" >&2
        kill "$pid"
        exit 1
    }
    kill -TERM "$pid"
    wait "$pid" || true
    "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/loadgen.json" "$field"
}

run_score() { serve "$1" batch server_cpu_us_per_item -clients 32 -batch 64 -corpus 8192; }
run_anytime() { serve "$1" batch server_cpu_us_per_item -clients 32 -batch 64 -corpus 8192 -reward length/anytime; }
run_duration() { serve "$1" get_duration server_cpu_us_per_call -clients 64 -timers 256; }

export TIMEAWARE_SERVE_TOKEN="bench-compare-token-0123456789abcdef"
for c in "${cases[@]}"; do
    echo "== $c" >&2
    case "$c" in
    pairs | timestamps)
        bench_corpus "$samples"
        alternate "$c" "CPU s" "run_$c"
        ext=parquet
        [ "$c" = timestamps ] && ext=jsonl
        same "$c" "$work/out-$c-base.$ext" "$work/out-$c-new.$ext"
        ;;
    splits)
        gate="$work/gate-$train-$test_rows"
        if [ ! -f "$gate/pairs-test.parquet" ]; then
            mkdir -p "$gate"
            (cd "$repo" && go run ./bench/splits/gen -train "$train" -test "$test_rows" \
                -near "$(( 1000 < test_rows ? 1000 : test_rows ))" -out "$gate") >&2
        fi
        alternate splits "CPU s" run_splits
        same splits "$work/out-splits-base.json" "$work/out-splits-new.json"
        ;;
    puzzles)
        alternate puzzles "CPU s" run_puzzles
        same puzzles "$work/out-puzzles-base.parquet" "$work/out-puzzles-new.parquet"
        ;;
    score) alternate score "server CPU µs/item" run_score ;;
    anytime) alternate anytime "server CPU µs/item" run_anytime ;;
    duration) alternate duration "server CPU µs/call" run_duration ;;
    esac
done

"$PYTHON" - "$results" "$base_rev" "${base_commit:0:12}" "$new_head" "$new_dirty" "$rounds" <<'PY'
import statistics
import sys

path, base_rev, base_commit, head, dirty, rounds = sys.argv[1:]
rows = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8") if line.strip()]
cases = []
for case, *_ in rows:
    if case not in cases:
        cases.append(case)
here = head + (f" with {dirty} changed files" if int(dirty) else "")
print(f"bench-compare: {base_rev} ({base_commit}) against the checkout ({here}), {rounds} rounds alternating")
print(f"{'case':<12} {'unit':<20} {'base median':>12} {'new median':>12} {'new/base':>9}  {'rounds min–max':>15}  outputs")
for case in cases:
    vals = {"base": {}, "new": {}}
    unit, same = "", None
    for c, side, r, v, u in rows:
        if c != case:
            continue
        if side == "same":
            same = {"1": "identical", "2": "same rows (footer order)"}.get(v, "DIFFER")
            continue
        vals[side][int(r)] = float(v)
        unit = u
    b, n = statistics.median(vals["base"].values()), statistics.median(vals["new"].values())
    per = [vals["new"][r] / vals["base"][r] for r in vals["base"] if r in vals["new"] and vals["base"][r] > 0]
    spread = f"{min(per):.2f}–{max(per):.2f}x" if per else "-"
    outputs = same or ""
    print(f"{case:<12} {unit:<20} {b:>12.3f} {n:>12.3f} {n / b:>8.2f}x  {spread:>15}  {outputs}")
PY
