#!/usr/bin/env bash
# Contamination benchmark: `timeaware splits contamination` on TRAIN training
# rows of about 1 KB (default 1,000,000) against BENCH benchmark records
# (default 100,000, a fifth on the dev split, so 80,000 indexed), written as
# Parquet by bench/contamination/gen with 1,000 planted rows of each kind
# (exact copies of a test question, light paraphrases: case, punctuation and
# white space; partial spans: the first 80% of a question's words inside
# longer text), against datatrove's released n-gram filter
# (bench/contamination/baseline.py, NGramsDecontFilter over an index made by
# its own compute_hashes) on the planted rows and the first clean ones
# (DT_ROWS rows in all, default 10,000: datatrove runs at a few hundred rows
# a second), in the same run. Both use 8-grams. Throughput is compared in
# rows per second, and each tool must find every planted kind.
#
#   bash bench/contamination/run.sh [TRAIN] [BENCH]   # or: make bench-contamination
#
# Environment:
#   PYTHON                 a Python with bench/contamination/requirements.txt (make uses .venv-bench/bin/python; default .venv/bin/python)
#   TIMEAWARE_BENCH_DIR    keep the generated files here for reuse
#   TIMEAWARE_BENCH_DT_ROWS  rows datatrove filters (default 10000)
#   TIMEAWARE_BENCH_SKIP_BASELINE=1  time the check alone
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../lib.sh"
train="${1:-1000000}"
bench="${2:-100000}"
dt_rows="${TIMEAWARE_BENCH_DT_ROWS:-10000}"
planted=$(( train / 1000 < 1000 ? train / 1000 : 1000 ))
bench_count "$train" "run.sh [TRAIN] [BENCH]"
bench_count "$bench" "run.sh [TRAIN] [BENCH]"
cd "$repo"
bench_python
bench_need_time run.sh
if [ -z "${TIMEAWARE_BENCH_SKIP_BASELINE:-}" ] && ! "$PYTHON" -c "import datatrove, spacy, xxhash" 2>/dev/null; then
    echo "run.sh: $PYTHON lacks datatrove: $PYTHON -m pip install -r bench/contamination/requirements.txt" >&2
    exit 2
fi
base="${TIMEAWARE_BENCH_DIR:-$(mktemp -d)}"
bench_build
dir="$base/contamination-$train-$bench-$planted-$dt_rows"
if [ ! -f "$dir/truth.json" ]; then
    mkdir -p "$dir"
    echo "== generating $train training rows and $bench benchmark records in $dir" >&2
    go run ./bench/contamination/gen -train "$train" -bench "$bench" -planted "$planted" \
        -subset "$(( dt_rows > 3 * planted ? dt_rows : 3 * planted ))" -out "$dir" >&2
fi

echo "== timeaware splits contamination, $train x $bench"
/usr/bin/time -v -o "$dir/time.txt" bin/timeaware splits contamination --json --max-findings -1 \
    --benchmark "$dir/bench.parquet" "$dir/train.parquet" >"$dir/report.json" || true

b_json=""
if [ -z "${TIMEAWARE_BENCH_SKIP_BASELINE:-}" ]; then
    echo "== datatrove NGramsDecontFilter ($PYTHON), 8-grams, 2 tasks"
    b_json="$(/usr/bin/time -v -o "$dir/dt-time.txt" "$PYTHON" "$here/baseline.py" "$dir" 8 2 2>"$dir/dt-log.txt" | tail -1)"
    echo "   $b_json"
fi

"$PYTHON" - "$dir" "$train" "$bench" "$b_json" <<'PY'
import json, re, sys
d, train, bench, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def times(path):
    t = open(path).read()
    field = lambda name: re.search(re.escape(name) + r": (.*)", t).group(1).strip()
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return wall_s, cpu, int(field("Maximum resident set size (kbytes)")) / 1024
truth = json.load(open(d + "/truth.json"))
rep = json.load(open(d + "/report.json"))
ids = {f["id"] for b_ in rep["benchmarks"] for f in b_["findings"]}
kinds = sorted({p["kind"] for p in truth.values()})
recall = {k: sum(p["record"] in ids for p in truth.values() if p["kind"] == k) / sum(p["kind"] == k for p in truth.values()) for k in kinds}
wall, cpu, rss = times(d + "/time.txt")
w = 44
print()
print(f"contamination benchmark: {train:,} training rows (~1 KB) x {bench:,} benchmark records ({rep['records']:,} test, indexed), "
      f"{len(truth):,} planted rows")
print(f"{'':{w}} {'value':>12}  notes")
print(f"{'timeaware splits contamination, wall s':{w}} {wall:>12.2f}  {cpu:.1f} CPU s; {train / wall:,.0f} rows/s")
print(f"{'timeaware peak RSS, MB':{w}} {rss:>12.0f}  index: {rep['ngram_keys']:,} n-gram keys")
print(f"{'timeaware contaminated records':{w}} {rep['contaminated']:>12,}  in {rep['contaminated_rows']:,} rows")
print(f"{'timeaware recall per planted kind':{w}} {'':>12}  " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in recall.items()))
fail = [k for k, v in recall.items() if v < 1]
if b:
    b = json.loads(b)
    dwall, dcpu, drss = times(d + "/dt-time.txt")
    rate = b["rows"] / b["filter_seconds"]
    print(f"{'datatrove 0.10.1 NGramsDecontFilter, wall s':{w}} {dwall:>12.1f}  {b['rows']:,} rows (a subset): index {b['index_seconds']:.1f} s, "
          f"filter {b['filter_seconds']:.1f} s = {rate:,.0f} rows/s; peak RSS {drss:.0f} MB")
    print(f"{'datatrove recall per planted kind':{w}} {'':>12}  " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in b["recall"].items())
          + f"; {b['false_positives']} clean rows removed")
    print(f"{'ratio, rows/s (whole run vs its filter step)':{w}} {train / wall / rate:>11.1f}x")
    print(f"{'ratio, rows/s (whole runs)':{w}} {train / wall / (b['rows'] / dwall):>11.1f}x")
    fail += [f"datatrove {k}" for k, v in b["recall"].items() if v < 0.99]
if fail:
    sys.exit("FAIL: planted contamination missed: " + ", ".join(fail))
PY
