#!/usr/bin/env bash
# Leakage-gate benchmark: `timeaware splits check` on TRAIN × TEST synthetic
# conversations (default 1,000,000 × 100,000, 200 words each, 1,000 planted
# near-duplicates), written as Parquet by bench/splits/gen, against
# datasketch's MinHashLSH with the same parameters (bench/splits/baseline.py)
# on the same files, in the same run.
#
#   bash bench/splits/run.sh [TRAIN] [TEST]        # or: make bench-splits
#
# Steps: generate the files (kept in TIMEAWARE_BENCH_DIR when set, and
# reused); time the gate under /usr/bin/time -v (wall time, CPU time, peak
# RSS); run the gate again on TRAIN/4 × TEST and TRAIN × TEST/4, so that
# peak memory can be read against each side; time the baseline; print a
# table with the ratio. Both must find 99% of the planted near-duplicates
# (at Jaccard about 0.9, LSH with 16 bands of 8 rows misses one in 8,000).
#
# Environment:
#   PYTHON               a Python with bench/splits/requirements.txt (make uses .venv-bench/bin/python; default .venv/bin/python)
#   TIMEAWARE_BENCH_DIR  keep the generated files here for reuse
#   TIMEAWARE_BENCH_NEAR planted near-duplicates (default 1000)
#   TIMEAWARE_BENCH_SKIP_BASELINE=1  time the gate alone
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../lib.sh"
train="${1:-1000000}"
test="${2:-100000}"
near="${TIMEAWARE_BENCH_NEAR:-1000}"
cd "$repo"
bench_python
bench_need_time run.sh
if [ -z "${TIMEAWARE_BENCH_SKIP_BASELINE:-}" ] && ! "$PYTHON" -c "import datasketch, pyarrow" 2>/dev/null; then
    echo "run.sh: $PYTHON lacks datasketch: $PYTHON -m pip install -r bench/splits/requirements.txt" >&2
    exit 2
fi
base="${TIMEAWARE_BENCH_DIR:-$(mktemp -d)}"
bench_build

# files TRAIN TEST: the directory of a generated pair, made once.
files() {
    local dir="$base/gate-$1-$2-$near"
    if [ ! -f "$dir/pairs-test.parquet" ]; then
        mkdir -p "$dir"
        echo "== generating $1 train and $2 test conversations in $dir" >&2
        go run ./bench/splits/gen -train "$1" -test "$2" -near "$(( near < $2 ? near : $2 ))" -out "$dir" >&2
    fi
    echo "$dir"
}

# gate DIR: run the gate, print "wall_s cpu_s rss_mb near_pairs".
gate() {
    /usr/bin/time -v -o "$1/time.txt" bin/timeaware splits check --json --test-fraction 0 --max-findings 0 \
        "$1/pairs-train.parquet" "$1/pairs-test.parquet" >"$1/report.json" || true
    "$PYTHON" - "$1" <<'PY'
import json, re, sys
d = sys.argv[1]
t = open(d + "/time.txt").read()
def field(name):
    return re.search(re.escape(name) + r": (.*)", t).group(1).strip()
wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
rep = json.load(open(d + "/report.json"))
near = next(c["count"] for c in rep["checks"] if c["name"] == "near_duplicates")
print(f"{wall_s:.2f} {cpu:.2f} {rss:.0f} {near}")
PY
}

main_dir="$(files "$train" "$test")"
echo "== timeaware splits check, $train x $test"
read -r g_wall g_cpu g_rss g_near < <(gate "$main_dir")
echo "   wall $g_wall s, cpu $g_cpu s, peak RSS $g_rss MB, near-duplicate pairs $g_near"

echo "== memory against each side"
small_train="$(files $((train / 4)) "$test")"
read -r st_wall _ st_rss _ < <(gate "$small_train")
small_test="$(files "$train" $((test / 4)))"
read -r sx_wall _ sx_rss _ < <(gate "$small_test")

b_json=""
if [ -z "${TIMEAWARE_BENCH_SKIP_BASELINE:-}" ]; then
    echo "== datasketch MinHashLSH baseline ($PYTHON), same files and parameters"
    b_json="$("$PYTHON" "$here/baseline.py" "$main_dir/pairs-train.parquet" "$main_dir/pairs-test.parquet")"
    echo "   $b_json"
fi

"$PYTHON" - "$train" "$test" "$near" "$g_wall" "$g_cpu" "$g_rss" "$g_near" \
    "$st_rss" "$st_wall" "$sx_rss" "$sx_wall" "$b_json" <<'PY'
import json, sys
(train, test, near, g_wall, g_cpu, g_rss, g_near, st_rss, st_wall, sx_rss, sx_wall, b) = sys.argv[1:]
train, test, near = int(train), int(test), int(near)
w = 46
print()
print(f"leakage gate benchmark: {train:,} train x {test:,} test conversations (200 words), {near:,} planted near-duplicates")
print(f"{'':{w}} {'value':>12}  notes")
print(f"{'timeaware splits check, wall s':{w}} {float(g_wall):>12.1f}  {float(g_cpu):.1f} CPU s; {(train + test) / float(g_wall):,.0f} rows/s")
print(f"{'timeaware peak RSS, MB':{w}} {float(g_rss):>12.0f}")
print(f"{'  with train / 4 (test as is), MB':{w}} {float(st_rss):>12.0f}  {float(st_wall):.1f} s")
print(f"{'  with test / 4 (train as is), MB':{w}} {float(sx_rss):>12.0f}  {float(sx_wall):.1f} s")
dt, dx = float(g_rss) - float(st_rss), float(g_rss) - float(sx_rss)
print(f"{'  MB per 100,000 train rows / test rows':{w}} {dt / (0.75 * train / 1e5):>6.1f} / {dx / (0.75 * test / 1e5):<5.1f}")
print(f"{'near-duplicate pairs found (of planted)':{w}} {int(g_near):>12,}  of {near:,}")
if b:
    b = json.loads(b)
    print(f"{'datasketch MinHashLSH, wall s':{w}} {b['seconds']:>12.1f}  {b['cpu_seconds']:.1f} CPU s, one process; peak RSS {b['peak_rss_mb']:.0f} MB")
    print(f"{'datasketch near-duplicate pairs found':{w}} {b['near_pairs']:>12,}  of {near:,}; exact {b['exact_pairs']}")
    print(f"{'ratio, wall time':{w}} {b['seconds'] / float(g_wall):>11.1f}x")
    print(f"{'ratio, CPU time':{w}} {b['cpu_seconds'] / float(g_cpu):>11.1f}x")
    if b["near_pairs"] < 0.99 * near:
        sys.exit(f"FAIL: datasketch found {b['near_pairs']} of {near} planted near-duplicates")
# LSH finds a pair at Jaccard 0.9 with probability 1 - (1 - 0.9^8)^16, about
# 0.9999: a miss among a thousand is chance, a percent is a bug.
if int(g_near) < 0.99 * near:
    sys.exit(f"FAIL: the gate found {g_near} of {near} planted near-duplicates")
PY
