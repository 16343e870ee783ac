#!/usr/bin/env bash
# Verifier service benchmark: `timeaware serve` on loopback, driven by
# bench/serve/loadgen, against the in-process Python reference reward
# (bench/serve/reference.py) on the same corpus, in the same run.
#
#   bash bench/serve/run.sh            # or: make bench-serve
#
# Steps: build bin/timeaware (make build) and the load generator; dump the
# deterministic corpus (8,192 timely/general items, ~2.3 KB each) as JSONL;
# start the server on a free loopback port with TIMEAWARE_TIMERS_SECRET set
# and wait for /healthz; then
#   (a) throughput and (c) latency: POST /v1/score/batch, 32 clients x 64
#       items, 2 s warm-up + 15 s measured (after a pass that checks every
#       score of the corpus against the in-process Go scorer);
#   (d) POST /v1/tools/get_duration over 256 timers, 64 clients, 2 s + 8 s;
#   (e) run (a) again with hostile clients beside it (loadgen -mode attack:
#       stalled bodies, announced-but-unsent bodies, ten-million-item
#       floods, deep nesting), reporting its throughput and p99 next to (a)'s
#       and the server's peak resident memory;
#   (f) run (a) again with -retry-429 beside memory hogs (loadgen -mode attack
#       -hog N: connections that each send all but the last bytes of a 30 MiB
#       batch body and stall, holding request memory): N x 32 MiB of buffers
#       exceed the server's 256 MiB request budget, so it sheds requests with
#       429 + Retry-After, which the batch clients count and retry; reports
#       throughput, latency (retries included) and the 429s next to (a)'s,
#       the hogs' answers and the server's peak resident memory;
# stop the server with SIGTERM; then
#   (b) the Python baseline: reference.compute_score over the same corpus in
#       one process, 7 passes, run once before the server starts and once
#       after it stops (the best pass counts), its score sum checked against
#       the in-process Go scorer's and the server's;
# and print a table with the ratio Go items/s / Python items/s.
#
# The server and the load generator share the machine; the load generator
# also reports the CPU time each used, so that a run on a busy machine can
# still be read per CPU second. Nothing is written into the repository
# except bin/timeaware.
#
# Environment:
#   PYTHON                     Python 3.9+ (default .venv/bin/python of the repository if present, else python3)
#   TIMEAWARE_BENCH_SECONDS    measured seconds of the batch run (default 15)
#   TIMEAWARE_BENCH_GD_SECONDS measured seconds of the get_duration run (default 8)
#   TIMEAWARE_BENCH_CLIENTS    batch clients (default 32); TIMEAWARE_BENCH_BATCH items per request (default 64)
#   TIMEAWARE_BENCH_GD_CLIENTS get_duration clients (default 64)
#   TIMEAWARE_BENCH_ATTACK_STALL, _ANNOUNCE, _FLOOD  hostile clients of run (e) (default 600, 64, 2)
#   TIMEAWARE_BENCH_HOGS       memory hogs of run (f) (default 12)
#   TIMEAWARE_BENCH_HOG_SECONDS measured seconds of run (f) (default twice the batch run's: 30 s, three of the hogs' 10 s body deadlines)
#   TIMEAWARE_BENCH_CPUPROFILE write the server's CPU profile here (go tool pprof bin/timeaware FILE)
#   TIMEAWARE_BENCH_DIR        keep the corpus, logs and JSON results here (default: a temp dir removed at exit)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$repo/.venv/bin/python" ]; then PYTHON="$repo/.venv/bin/python"; else PYTHON=python3; fi
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    # The baseline needs only the standard library.
    echo "run.sh: $PYTHON not found; using python3" >&2
    PYTHON=python3
fi
seconds="${TIMEAWARE_BENCH_SECONDS:-15}"
gd_seconds="${TIMEAWARE_BENCH_GD_SECONDS:-8}"
clients="${TIMEAWARE_BENCH_CLIENTS:-32}"
batch="${TIMEAWARE_BENCH_BATCH:-64}"
gd_clients="${TIMEAWARE_BENCH_GD_CLIENTS:-64}"
attack_stall="${TIMEAWARE_BENCH_ATTACK_STALL:-600}"
attack_announce="${TIMEAWARE_BENCH_ATTACK_ANNOUNCE:-64}"
attack_flood="${TIMEAWARE_BENCH_ATTACK_FLOOD:-2}"
hogs="${TIMEAWARE_BENCH_HOGS:-12}"
hog_seconds="${TIMEAWARE_BENCH_HOG_SECONDS:-$((seconds * 2))}"
corpus_items=8192

if [ -n "${TIMEAWARE_BENCH_DIR:-}" ]; then
    work="$TIMEAWARE_BENCH_DIR"
    mkdir -p "$work"
else
    work="$(mktemp -d "${TMPDIR:-/tmp}/timeaware-bench-serve.XXXXXX")"
fi
server_pid=""
attack_pid=""
cleanup() {
    if [ -n "$attack_pid" ] && kill -0 "$attack_pid" 2>/dev/null; then
        kill -TERM "$attack_pid" 2>/dev/null || true
        wait "$attack_pid" 2>/dev/null || true
    fi
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ -z "${TIMEAWARE_BENCH_DIR:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

echo "== building bin/timeaware and the load generator" >&2
make -C "$repo" --no-print-directory build >&2
(cd "$repo" && go build -o "$work/loadgen" ./bench/serve/loadgen)
loadgen="$work/loadgen"

echo "== dumping the corpus ($corpus_items items)" >&2
"$loadgen" -dump-corpus "$work/corpus.jsonl" -corpus "$corpus_items" -json >"$work/dump.json"

# The Python baseline runs twice, before the server starts and after it
# stops, and the faster run counts: other work on a shared machine then
# has to coincide with both to depress it.
run_baseline() { # OUT EXPECT_SUM EXPECT_CORRECT
    PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$here/baseline.py" --corpus "$work/corpus.jsonl" --passes 7 \
        --expect-sum "$2" --expect-correct "$3" --json >"$1"
}
expected() { # FILE SUM_KEY CORRECT_KEY
    "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(repr(d[sys.argv[2]]), d[sys.argv[3]])' "$@"
}
echo "== (b) Python baseline, first run: reference.compute_score in process ($PYTHON)" >&2
read -r expect_sum expect_correct < <(expected "$work/dump.json" expected_score_sum expected_correct)
run_baseline "$work/python-1.json" "$expect_sum" "$expect_correct"

echo "== starting timeaware serve on loopback" >&2
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
profile_flag=()
if [ -n "${TIMEAWARE_BENCH_CPUPROFILE:-}" ]; then
    profile_flag=(--cpuprofile "$TIMEAWARE_BENCH_CPUPROFILE")
fi
# Port 0: the kernel picks a free port, which the server logs.
# A 512 MiB memory limit (request budget 256 MiB): run (e) shows that the
# service stays within it under attack.
TIMEAWARE_TIMERS_SECRET="bench-serve-secret-$$-0123456789abcdef" TIMEAWARE_SERVE_MEMORY_LIMIT=536870912 \
    "$repo/bin/timeaware" "${profile_flag[@]}" serve --addr 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!
addr=""
for _ in $(seq 200); do
    addr="$(sed -n 's/.*msg=serving addr=\([^ ]*\).*/\1/p' "$work/server.log")"
    if [ -n "$addr" ] || ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.05
done
if [ -z "$addr" ]; then
    echo "run.sh: the server did not start:" >&2
    cat "$work/server.log" >&2
    exit 1
fi
url="http://$addr"
"$loadgen" -mode wait -url "$url" -timeout 30s

echo "== (a, c) POST /v1/score/batch: $clients clients x $batch items, ${seconds}s measured" >&2
"$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
    -corpus "$corpus_items" -warmup 2s -duration "${seconds}s" -json >"$work/batch.json"

echo "== (d) POST /v1/tools/get_duration: $gd_clients clients, ${gd_seconds}s measured" >&2
"$loadgen" -mode get_duration -url "$url" -server-pid "$server_pid" -clients "$gd_clients" -timers 256 \
    -warmup 2s -duration "${gd_seconds}s" -json >"$work/get_duration.json"

echo "== (e) POST /v1/score/batch again, with hostile clients beside it: ${attack_stall} stalled bodies, ${attack_announce} announced 32 MiB bodies, ${attack_flood} ten-million-item floods, deep nesting" >&2
"$loadgen" -mode attack -url "$url" -server-pid "$server_pid" -stall "$attack_stall" -announce "$attack_announce" \
    -flood "$attack_flood" -duration "$((seconds + 4))s" -json >"$work/attack.json" &
attack_pid=$!
sleep 1
"$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
    -corpus "$corpus_items" -warmup 2s -duration "${seconds}s" -json >"$work/batch-attack.json"
wait "$attack_pid"
attack_pid=""

# Each hog's buffer grows by doubling to 32 MiB as its 30 MiB arrive, all of
# it reserved from the request budget (half the 512 MiB limit: 256 MiB), so
# eight hogs would fill the budget by themselves; twelve ask for 384 MiB.
# Who holds the budget is a race, renewed each time held hogs reach the
# server's 10 s body deadline, so the run is measured over 30 s by default.
# The attack runs until the batch run ends (SIGTERM), its verification pass
# included. The peak resident memory is reset first (clear_refs 5), so that
# run (f) reports its own.
echo "== (f) POST /v1/score/batch again, retrying 429s, beside ${hogs} memory hogs (30 MiB bodies held short of their last bytes), ${hog_seconds}s measured" >&2
echo 5 >"/proc/$server_pid/clear_refs" 2>/dev/null || echo "run.sh: could not reset the server's peak RSS; run (f) reports the peak since it started" >&2
"$loadgen" -mode attack -url "$url" -server-pid "$server_pid" -stall 0 -announce 0 -flood 0 -deep 0 -hog "$hogs" \
    -duration 1h -json >"$work/hog.json" &
attack_pid=$!
sleep 1
"$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
    -corpus "$corpus_items" -warmup 2s -duration "${hog_seconds}s" -retry-429 -json >"$work/batch-hog.json"
kill -TERM "$attack_pid"
wait "$attack_pid"
attack_pid=""

echo "== stopping the server (SIGTERM)" >&2
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
if [ "$status" -ne 0 ]; then
    echo "run.sh: the server exited with status $status:" >&2
    tail -5 "$work/server.log" >&2
    exit 1
fi

echo "== (b) Python baseline, second run" >&2
read -r expect_sum expect_correct < <(expected "$work/batch.json" server_score_sum server_correct)
run_baseline "$work/python-2.json" "$expect_sum" "$expect_correct"

"$PYTHON" - "$work" "$load_before" "$(nproc 2>/dev/null || echo '?')" <<'PY'
import json
import sys
from pathlib import Path

work, load, ncpu = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
dump = json.loads((work / "dump.json").read_text())
b = json.loads((work / "batch.json").read_text())
g = json.loads((work / "get_duration.json").read_text())
ba = json.loads((work / "batch-attack.json").read_text())
at = json.loads((work / "attack.json").read_text())
bh = json.loads((work / "batch-hog.json").read_text())
hg = json.loads((work / "hog.json").read_text())
runs = [json.loads((work / f"python-{i}.json").read_text()) for i in (1, 2)]
p = max(runs, key=lambda r: r["items_per_s"])
py_cpu = min(r["cpu_us_per_item"] for r in runs)
if dump["corpus_hash"] != b["corpus_hash"]:
    sys.exit(f"FAIL: the load generator's corpus ({b['corpus_hash']}) is not the dumped one ({dump['corpus_hash']})")

ratio = b["items_per_s"] / p["items_per_s"]
go_cpu = b.get("server_cpu_us_per_item")
print()
print(f"timeaware serve benchmark: {ncpu} CPUs shared by the server and the load generator "
      f"(load average before the run: {load})")
print(f"corpus: {dump['corpus_items']:,} timely/general items, {dump['corpus_bytes'] / dump['corpus_items']:,.0f} B each; "
      f"{dump['expected_correct']:,} right, {dump['format_fails']} bad format, {dump['late']:,} late")
print()
w = 44
print(f"{'':{w}} {'value':>14}  notes")
print(f"{'Go  POST /v1/score/batch, items/s':{w}} {b['items_per_s']:>14,.0f}  "
      f"{b['clients']} clients x {b['batch']} items, {b['seconds']:.0f} s, {b['requests_per_s']:,.0f} req/s")
print(f"{'Python reference.compute_score, items/s':{w}} {p['items_per_s']:>14,.0f}  "
      f"in process, 1 core; best pass of 2 runs x {p['passes']} (runs: "
      + ", ".join(f"{r['items_per_s']:,.0f}" for r in runs) + ")")
print(f"{'ratio Go / Python':{w}} {ratio:>13.2f}x  goal >= 3x")
if go_cpu:
    print(f"{'CPU per item, Go server / Python (us)':{w}} {go_cpu:>7.1f} / {py_cpu:<5.1f} "
          f"items per CPU-second ratio {py_cpu / go_cpu:.2f}x; "
          f"server used {b['server_cpu_s'] / b['seconds']:.2f} cores, load generator {b['loadgen_cpu_s'] / b['seconds']:.2f}")
print(f"{'batch latency p50 / p99 (ms)':{w}} {b['p50_ms']:>7.1f} / {b['p99_ms']:<5.1f} "
      f"per {b['batch']}-item request at {b['clients']} concurrent clients (p90 {b['p90_ms']:.1f}, max {b['max_ms']:.1f})")
print(f"{'get_duration calls/s':{w}} {g['calls_per_s']:>14,.0f}  goal >= 20,000/s; {g['clients']} clients, {g['seconds']:.0f} s")
gd_cpu = g.get("server_cpu_us_per_call")
extra = ""
if gd_cpu:
    extra = (f"; server {gd_cpu:.0f} us CPU per call, {g['server_cpu_s'] / g['seconds']:.2f} cores, "
             f"load generator {g['loadgen_cpu_s'] / g['seconds']:.2f}")
print(f"{'get_duration latency p50 / p99 (ms)':{w}} {g['p50_ms']:>7.2f} / {g['p99_ms']:<5.2f} (max {g['max_ms']:.1f}){extra}")
print(f"{'under attack: batch items/s':{w}} {ba['items_per_s']:>14,.0f}  "
      f"{ba['items_per_s'] / b['items_per_s']:.2f}x of (a) in the same run; {at['stalled_connections']} stalled bodies, "
      f"{at['announced_connections']} announced 32 MiB bodies, {at['flood_clients']} 10M-item floods, 1 deep-nesting client")
print(f"{'under attack: batch latency p50 / p99 (ms)':{w}} {ba['p50_ms']:>7.1f} / {ba['p99_ms']:<5.1f} "
      f"(without: {b['p50_ms']:.1f} / {b['p99_ms']:.1f}); legitimate errors {ba['errors']}")
print(f"{'attackers got':{w}} {', '.join(f'{v:,} x {k}' for k, v in sorted(at['statuses'].items()))}; "
      f"server peak RSS {at.get('server_peak_rss_mb', 0):.0f} MiB (memory limit 512 MiB)")
print(f"{'memory hogs: batch items/s':{w}} {bh['items_per_s']:>14,.0f}  "
      f"{bh['items_per_s'] / b['items_per_s']:.2f}x of (a); {hg['hog_connections']} hogs of {hg['hog_bytes'] / 2**20:.0f} MiB "
      f"against a 256 MiB request budget; 429s retried after Retry-After")
print(f"{'memory hogs: batch latency p50 / p99 (ms)':{w}} {bh['p50_ms']:>7.1f} / {bh['p99_ms']:<5.1f} "
      f"(without: {b['p50_ms']:.1f} / {b['p99_ms']:.1f}; retries included, max {bh['max_ms']:.0f}); legitimate errors {bh['errors']}")
print(f"{'memory hogs: shed (429)':{w}} {bh['shed']:>14,}  "
      f"answers to {bh['shed_requests']:,} of the requests sent in the measured window ({bh['requests']:,} completed, "
      f"{bh['shed_unfinished']} still shed at its end); the verification pass before it took {bh['verify_seconds']:.1f} s "
      f"through {bh['shed_verify']:,} 429s")
ps = bh.get("items_per_second", [])
print(f"{'memory hogs: seconds with nothing scored':{w}} {sum(1 for v in ps if v == 0):>14}  "
      f"of {len(ps)}; items scored in each second: {' '.join(f'{v // 1000}k' if v else '0' for v in ps)}")
print(f"{'hogs got':{w}} {', '.join(f'{v:,} x {k}' for k, v in sorted(hg['hog_statuses'].items()))}; "
      f"server peak RSS {hg.get('server_peak_rss_mb', 0):.0f} MiB (memory limit 512 MiB)")
print(f"checks: {dump['corpus_items']:,} server scores equal the in-process Go scorer; Python score sum "
      f"{p['score_sum']:.6f} = server {b['server_score_sum']:.6f}; errors {b['errors'] + g['errors']}, "
      f"mismatches {b['mismatches'] + g['mismatches'] + ba['mismatches'] + bh['mismatches']}")
if ba["errors"]:
    sys.exit(f"FAIL: {ba['errors']} legitimate requests failed under attack")
if bh["errors"]:
    sys.exit(f"FAIL: {bh['errors']} legitimate requests failed beside the memory hogs for a reason other than shedding")
for name, run in (("(e)", at), ("(f)", hg)):
    if run.get("server_peak_rss_mb", 0) > 512:
        sys.exit(f"FAIL: run {name}: the server's peak resident memory {run['server_peak_rss_mb']:.0f} MiB exceeds its 512 MiB memory limit")
if bh["shed_all"] == 0:
    print("note: the memory hogs never made the server shed a legitimate request")
PY
