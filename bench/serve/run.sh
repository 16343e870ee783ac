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
#   (j) the verifier's cost per item for the length rewards: the same
#       corpus re-labelled for each of length/lcpo_exact, lcpo_max,
#       thinkprune, elastic, anytime and the group-wise kimi,
#       shorterbetter and alp in turn (the same responses and ground truths;
#       extra_info carries response_tokens, think_tokens and answer_tokens
#       derived from the text, one token per 4 bytes, and budgets drawn
#       from the corpus seed, some of which the responses run over; for a
#       group-wise reward, groups of 8 consecutive items answering one
#       problem, with its ground truth and one token_budget, every request
#       whole groups), and timely/general again as the reference, each measured as
#       (a) on the same server for a quarter of (a)'s seconds (at least 2)
#       after 1 s of warm-up, every score checked in a verification pass
#       first; items/s, server CPU per item and the ratio to timely/general's
#       items/s; a run in which the server answers any item with an item
#       error (a "failed" count above 0), or the reward refuses an item of
#       the corpus in process, fails; then length/lcpo_exact once more on a
#       second server given a tokenizer.json (rewards.length.tokenizer), its
#       counts the tokenizer's own, for what counting costs: the tokenizer
#       is $TIMEAWARE_BENCH_TOKENIZER, else one trained by
#       make_tokenizer.py (Qwen2-shaped, on the shared data), else
#       tokenizer/testdata/qwen2.json where the tokenizers library is missing;
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
# then the header flood, each run against a fresh server (same settings),
# which it stops with SIGTERM at the end:
#   (g) run (a) again beside 600 connections that each send a request head
#       of about 1 MB (POST /v1/score/batch, 300 padding headers,
#       Content-Length 32 MiB, the bearer token) and one body byte, and
#       reconnect once answered (loadgen -mode attack -headers);
#   (h) the same without the token;
#   (i) the same heads never finished: sent over 8 s, then a header line
#       a second, never the blank line (-headers-endless);
#   (k) the same beside -idle connections (default 2,000, more than the
#       1,490 the server's connection cap allows at 512 MiB) that each send
#       GET /healthz without the token, read the answer and then send
#       nothing, as the idle rollout workers of a large run do (-idle);
#   (l) (g) unpaced: the 600 connections send their heads as fast as they
#       can and reconnect at once after each answer;
#   (m) SIGTERM under load, each on a fresh server, three loads: 32 clients
#       x 64 items, 32 x 512 and 8 x 8,192 (loadgen -mode sigterm), clients
#       that never look at readiness and keep sending, reconnecting each
#       time the server closes a connection, until one is refused; 3 s of
#       load, then SIGTERM; each request is answered, unsent (refused
#       before it was written: the client may go elsewhere) or reset
#       (written, then lost); checks that none was reset, that the server
#       answered after SIGTERM (its shutdown grace) and exited 0;
#   (n) a long run's timers, on a fresh server: 5,000,000 timer creations
#       (loadgen -mode churn), rollout ids of 36 and 256 bytes, ttl 30 s, 32
#       clients as fast as the server takes them; more unexpired timers than
#       the index holds, so it refuses some (503 timer_index_full) until
#       timers expire; one timer in 1,000 is read back at 80% of its ttl
#       (must answer) and after it (must be 410); checks that nothing was
#       lost, every refusal was counted in /metrics, and the server's peak
#       resident memory stayed within its 512 MiB limit;
#   (o) a cluster's rollout workers, on a fresh server: 5,000 keep-alive
#       connections (loadgen -mode workers), more than the server's
#       connection cap (about 1,490 at 512 MiB), of which 4,000 idle
#       workers send one 64-item request every 20 s and 1,000 active ones
#       one every 900 ms; 20 s of warm-up (every worker connects and
#       speaks), 20 s measured; the same 1,000 active workers alone first,
#       as the quiet reference; checks that every request was answered 200
#       (a worker that speaks is served), the active workers' p99 within
#       twice the quiet one, and the peak RSS within 512 MiB;
#   (p) the workers of (o) over two replicas, each restarted once under the
#       load, one at a time (SIGTERM, then a new server on the same
#       address), 5 s into the measured window and about 5 s apart; the
#       load generator reads each replica's /readyz every 250 ms, and a
#       worker opens a new connection to a ready replica, as a Kubernetes
#       Service routes them; checks that no request was reset and every one
#       was served, every replica exited 0, and their peak RSS;
#   (q) the cluster profile: (o)'s quiet workers as the reference, then on
#       two fresh replicas at once, for (p)'s 50 s: (p)'s workers over both,
#       timer creations over both as in (n) (TIMEAWARE_BENCH_CLUSTER_CREATIONS,
#       default 1,000,000; ttl 30 s; loadgen -mode churn -replicas), and the
#       idle flood of (k) with the unpaced header flood of (l) at replica 0,
#       with /healthz polled there, for the first 25 s; then each replica
#       restarted once, one at a time, as in (p), with the workers and the
#       creations going on; reports the workers' items/s and p50/p99 against
#       the quiet run's, the creations made, refused (index full) and moved,
#       the probes, the floods' /healthz answers, resets (both loads) and
#       the replicas' peak RSS; checks that nothing was reset or lost, every
#       worker's request and every creation was answered as documented,
#       /healthz answered 99% of its polls, and each replica stayed within
#       512 MiB and exited 0;
#   (g), (h) and (i) paced at 128 MiB/s of flood in all, and reporting the batch
#   clients' items/s and p50/p99 next to (a)'s, GET /healthz polled every
#   50 ms on new connections (p50/p99/max, failures: no 200 within 1 s), how
#   the flood's connections ended and the server's peak resident memory;
#   each checks that no legitimate request failed, every /healthz poll was
#   answered, the server ran to the end and stopped cleanly, its peak stayed
#   within its 512 MiB limit and the batch p99 within twice (a)'s;
# and print a table with the ratio Go items/s / Python items/s and the
# checks, PASS or FAIL; a failed check fails the run.
#
# The server requires a bearer token (as it must beyond loopback); every
# client sends it, except the flood of run (h). The server and the load
# generator share the machine; the load generator also reports the CPU
# time each used, so that a run on a busy machine can still be read per CPU
# second. Nothing is written into the repository except bin/timeaware.
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
#   TIMEAWARE_BENCH_HEADERS    connections of the header flood runs (g), (h), (i) (default 600)
#   TIMEAWARE_BENCH_HEADER_RATE bytes per second the header flood sends, all connections together (default 134217728: 128 MiB/s)
#   TIMEAWARE_BENCH_IDLE       connections of the idle flood run (k) (default 2000)
#   TIMEAWARE_BENCH_FLOOD_SECONDS measured seconds of each flood run (default: the batch run's)
#   TIMEAWARE_BENCH_LENGTH_SECONDS measured seconds of each reward of run (j) (default: a quarter of the batch run's, at least 2)
#   TIMEAWARE_BENCH_TOKENIZER  the tokenizer.json of run (j)'s last row (default: one trained by make_tokenizer.py)
#   TIMEAWARE_SHARED           the shared data make_tokenizer.py trains on (default: ../shared beside the checkout)
#   TIMEAWARE_BENCH_ONLY       flood: only the quiet batch run (a) and the flood runs (g), (h), (i), (k), (l) (about 2 min);
#                              length: only (a) and the length rewards' run (j) (about 65 s);
#                              restart: only (a) and the SIGTERM runs (m) (about 40 s);
#                              timers: only (a) and the timer run (n) (about 8 min);
#                              workers: only (a) and the workers runs (o), (p) (about 3 min)
#                              cluster: only (a) and the cluster profile (q) (about 2 min)
#   TIMEAWARE_BENCH_WORKERS    connections of run (o) (default 5000), TIMEAWARE_BENCH_IDLE_WORKERS the idle ones among them (default 4000)
#   TIMEAWARE_BENCH_CREATIONS  timer creations of run (n) (default 5000000); TIMEAWARE_BENCH_TTL their ttl (default 30s)
#   TIMEAWARE_BENCH_CLUSTER_CREATIONS timer creations of run (q) (default 1000000)
#   TIMEAWARE_BENCH_BIN        the server binary to run (default: bin/timeaware, built with make build)
#   TIMEAWARE_BENCH_LOADGEN    a load generator built beforehand (go build -o FILE ./bench/serve/loadgen), for a machine without Go
#   TIMEAWARE_BENCH_CPUPROFILE write the server's CPU profile here (go tool pprof bin/timeaware FILE)
#   TIMEAWARE_BENCH_DIR        keep the corpus, logs and JSON results here (default: a temp dir removed at exit)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib.sh"
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
headers="${TIMEAWARE_BENCH_HEADERS:-600}"
header_rate="${TIMEAWARE_BENCH_HEADER_RATE:-134217728}"
flood_seconds="${TIMEAWARE_BENCH_FLOOD_SECONDS:-$seconds}"
idle="${TIMEAWARE_BENCH_IDLE:-2000}"
creations="${TIMEAWARE_BENCH_CREATIONS:-5000000}"
workers="${TIMEAWARE_BENCH_WORKERS:-5000}"
idle_workers="${TIMEAWARE_BENCH_IDLE_WORKERS:-4000}"
timer_ttl="${TIMEAWARE_BENCH_TTL:-30s}"
cluster_creations="${TIMEAWARE_BENCH_CLUSTER_CREATIONS:-1000000}"
# Run (j) measures each reward for length_ms milliseconds.
if [ -n "${TIMEAWARE_BENCH_LENGTH_SECONDS:-}" ]; then
    length_ms=$((TIMEAWARE_BENCH_LENGTH_SECONDS * 1000))
else
    length_ms=$((seconds * 1000 / 4))
    if [ "$length_ms" -lt 2000 ]; then length_ms=2000; fi
fi
length_rewards=(timely/general length/lcpo_exact length/lcpo_max length/thinkprune length/elastic length/anytime
    length/kimi length/shorterbetter length/alp)
only="${TIMEAWARE_BENCH_ONLY:-}"
case "$only" in
"") only=all ;;
cluster | flood | length | restart | timers | workers) ;;
*)
    echo "run.sh: TIMEAWARE_BENCH_ONLY=$only: want cluster, flood, length, restart, timers or workers, or leave it unset for every run" >&2
    exit 2
    ;;
esac
corpus_items=8192

# Open files: the server holds every attacking connection at once, and so
# does the load generator that opens them, beside the batch clients, the
# get_duration clients and the /healthz polls. Both inherit this shell's
# limit.
attackers=$((attack_stall + attack_announce + attack_flood + 1 + hogs))
if [ "$only" = flood ] || [ "$headers" -gt "$attackers" ]; then attackers="$headers"; fi
if [ "$idle" -gt "$attackers" ]; then attackers="$idle"; fi
if [ "$only" = length ] || [ "$only" = restart ] || [ "$only" = timers ]; then attackers=0; fi
if { [ "$only" = all ] || [ "$only" = workers ]; } && [ "$workers" -gt "$attackers" ]; then attackers="$workers"; fi
if [ "$only" = cluster ]; then attackers=$((workers + idle + headers)); fi
need_files=$((attackers + clients + gd_clients + 128))
soft_files="$(ulimit -Sn)"
hard_files="$(ulimit -Hn)"
if [ "$soft_files" != unlimited ] && [ "$soft_files" -lt "$need_files" ]; then
    if [ "$hard_files" = unlimited ] || [ "$hard_files" -ge "$need_files" ]; then
        ulimit -Sn "$need_files"
        echo "run.sh: raised the open-file limit from $soft_files to $need_files (hard limit $hard_files)" >&2
        soft_files="$need_files"
    else
        echo "run.sh: the attacks need $need_files open files in the server and in the load generator ($attackers attacking connections, $clients batch and $gd_clients get_duration clients, 128 spare), but the hard limit is $hard_files (ulimit -Hn); raise it (e.g. docker run --ulimit nofile=$need_files, or /etc/security/limits.conf) or lower TIMEAWARE_BENCH_HEADERS and TIMEAWARE_BENCH_ATTACK_STALL" >&2
        exit 1
    fi
fi

if [ -n "${TIMEAWARE_BENCH_DIR:-}" ]; then
    work="$TIMEAWARE_BENCH_DIR"
    mkdir -p "$work"
else
    work="$(mktemp -d "${TMPDIR:-/tmp}/timeaware-bench-serve.XXXXXX")"
fi
server_pid=""
attack_pid=""
replica_pids=()
url=""
cleanup() {
    for pid in "${replica_pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
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

if [ -n "${TIMEAWARE_BENCH_BIN:-}" ]; then
    bin="$(cd "$(dirname "$TIMEAWARE_BENCH_BIN")" && pwd)/$(basename "$TIMEAWARE_BENCH_BIN")"
    if [ ! -x "$bin" ]; then
        echo "run.sh: TIMEAWARE_BENCH_BIN=$TIMEAWARE_BENCH_BIN is not an executable file" >&2
        exit 1
    fi
    bin_desc="$bin"
    if rev="$(git -C "$(dirname "$bin")" rev-parse --short HEAD 2>/dev/null)"; then
        bin_desc="$bin_desc (in a checkout at commit $rev)"
    fi
    echo "== the server is $bin" >&2
else
    echo "== building bin/timeaware and the load generator" >&2
    make -C "$repo" --no-print-directory build >&2
    bin="$repo/bin/timeaware"
    bin_desc="bin/timeaware"
    if rev="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"; then
        bin_desc="$bin_desc built at commit $rev"
        if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
            bin_desc="$bin_desc with uncommitted changes"
        fi
    fi
fi
if [ -n "${TIMEAWARE_BENCH_LOADGEN:-}" ]; then
    loadgen="$TIMEAWARE_BENCH_LOADGEN"
else
    (cd "$repo" && go build -o "$work/loadgen" ./bench/serve/loadgen)
    loadgen="$work/loadgen"
fi

# The service requires this token on its /v1 routes; the load generator's
# -token defaults to the same variable, so every client sends it.
export TIMEAWARE_SERVE_TOKEN="bench-serve-token-$$-0123456789abcdef"

# start_server LOG [FLAGS...]: start the server on a free loopback port
# (port 0: the kernel picks one, which the server logs; $serve_addr, when
# set, is the address to listen on instead), with a 512 MiB
# memory limit (request budget 256 MiB): the attack runs show that it stays
# within it. Sets server_pid and url once /healthz answers.
start_server() {
    local log="$1"
    shift
    TIMEAWARE_TIMERS_SECRET="bench-serve-secret-$$-0123456789abcdef" TIMEAWARE_SERVE_MEMORY_LIMIT=536870912 \
        bench_start_server run.sh "$bin" "$log" "$@"
}

# alive PID: whether the process runs (a zombie, dead but not yet waited
# for, does not).
alive() {
    local state
    state="$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

if [ "$only" = all ]; then
    echo "== dumping the corpus ($corpus_items items)" >&2
    "$loadgen" -dump-corpus "$work/corpus.jsonl" -corpus "$corpus_items" -json >"$work/dump.json"
fi

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
if [ "$only" = all ]; then
    echo "== (b) Python baseline, first run: reference.compute_score in process ($PYTHON)" >&2
    read -r expect_sum expect_correct < <(expected "$work/dump.json" expected_score_sum expected_correct)
    run_baseline "$work/python-1.json" "$expect_sum" "$expect_correct"
fi

echo "== starting timeaware serve on loopback" >&2
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
profile_flag=()
if [ -n "${TIMEAWARE_BENCH_CPUPROFILE:-}" ]; then
    profile_flag=(--cpuprofile "$TIMEAWARE_BENCH_CPUPROFILE")
fi
start_server "$work/server.log" "${profile_flag[@]}"

echo "== (a, c) POST /v1/score/batch: $clients clients x $batch items, ${seconds}s measured" >&2
"$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
    -corpus "$corpus_items" -warmup 2s -duration "${seconds}s" -json >"$work/batch.json"

# Run (j): each reward in turn on the same server, timely/general first as
# the reference. A failed run is recorded (length-NAME.status and the
# load generator's messages in length-NAME.log), not fatal: the table
# reports it, and the run fails at the end.
if [ "$only" = all ] || [ "$only" = length ]; then
    echo "== (j) POST /v1/score/batch, the corpus re-labelled for each length reward: $clients clients x $batch items, ${length_ms} ms measured each" >&2
    for reward in "${length_rewards[@]}"; do
        name="${reward#length/}"
        name="${name//\//-}"
        echo "== (j) $reward" >&2
        reward_status=0
        "$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
            -corpus "$corpus_items" -reward "$reward" -warmup 1s -duration "${length_ms}ms" -json \
            >"$work/length-$name.json" 2>"$work/length-$name.log" || reward_status=$?
        cat "$work/length-$name.log" >&2
        echo "$reward_status" >"$work/length-$name.status"
    done

    bench_tok="${TIMEAWARE_BENCH_TOKENIZER:-}"
    if [ -n "$bench_tok" ]; then
        echo "the tokenizer of \$TIMEAWARE_BENCH_TOKENIZER, $bench_tok" >"$work/tokenizer.desc"
    elif PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$here/make_tokenizer.py" --shared "$shared" --out "$work/tokenizer.json" \
        >"$work/tokenizer.desc"; then
        bench_tok="$work/tokenizer.json"
    else
        bench_tok="$repo/tokenizer/testdata/qwen2.json"
        echo "tokenizer/testdata/qwen2.json, a Qwen2-shaped byte-level BPE of 700 tokens (the tokenizers library is not installed)" >"$work/tokenizer.desc"
    fi
    echo "== (j) length/lcpo_exact on a second server given $(cat "$work/tokenizer.desc")" >&2
    main_pid="$server_pid" main_url="$url"
    TIMEAWARE_REWARDS_LENGTH_TOKENIZER="$bench_tok" start_server "$work/server-tokenizer.log"
    reward_status=0
    "$loadgen" -mode batch -url "$url" -server-pid "$server_pid" -clients "$clients" -batch "$batch" \
        -corpus "$corpus_items" -reward length/lcpo_exact -tokenizer "$bench_tok" -warmup 1s -duration "${length_ms}ms" -json \
        >"$work/length-tokenizer.json" 2>"$work/length-tokenizer.log" || reward_status=$?
    cat "$work/length-tokenizer.log" >&2
    echo "$reward_status" >"$work/length-tokenizer.status"
    kill "$server_pid" && wait "$server_pid" || true
    server_pid="$main_pid" url="$main_url"
fi

if [ "$only" = all ]; then
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
fi

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

if [ "$only" = all ]; then
    echo "== (b) Python baseline, second run" >&2
    read -r expect_sum expect_correct < <(expected "$work/batch.json" server_score_sum server_correct)
    run_baseline "$work/python-2.json" "$expect_sum" "$expect_correct"
fi

# flood_run NAME WHAT ATTACK_FLAGS...: run (a) again on a fresh server
# beside the header flood the flags describe, polling /healthz, and record
# whether the batch run, the attack and the server ended well
# (run-NAME.json). A failure is recorded, not fatal: the table reports it
# beside the figures, and the run fails at the end.
flood_run() {
    local name="$1" what="$2"
    shift 2
    echo "== ($name) POST /v1/score/batch again, beside $what; ${flood_seconds}s measured; GET /healthz every 50 ms" >&2
    start_server "$work/server-$name.log"
    local pid="$server_pid"
    "$loadgen" -mode attack -url "$url" -server-pid "$pid" -stall 0 -announce 0 -flood 0 -deep 0 \
        -header-rate "$header_rate" "$@" -healthz 50ms -duration 1h -json >"$work/attack-$name.json" &
    attack_pid=$!
    sleep 2
    local batch_status=0 attack_status=0 server_status=0 ran=true
    "$loadgen" -mode batch -url "$url" -server-pid "$pid" -clients "$clients" -batch "$batch" \
        -corpus "$corpus_items" -warmup 2s -duration "${flood_seconds}s" -json >"$work/batch-$name.json" || batch_status=$?
    alive "$pid" || ran=false
    kill -TERM "$attack_pid" 2>/dev/null || true
    wait "$attack_pid" || attack_status=$?
    attack_pid=""
    if [ "$ran" = true ]; then kill -TERM "$pid" 2>/dev/null || true; fi
    wait "$pid" || server_status=$?
    server_pid=""
    if [ "$server_status" -ne 0 ]; then
        echo "run.sh: ($name): the server exited with status $server_status:" >&2
        tail -5 "$work/server-$name.log" >&2
    fi
    printf '{"batch_status": %d, "attack_status": %d, "server_ran_to_the_end": %s, "server_status": %d}\n' \
        "$batch_status" "$attack_status" "$ran" "$server_status" >"$work/run-$name.json"
}
if [ "$only" = all ] || [ "$only" = flood ]; then
    flood_run g "$headers connections each sending ~1 MB of headers with the token" -headers "$headers"
    flood_run h "$headers connections each sending ~1 MB of headers without the token" -headers "$headers" -header-auth=false
    flood_run i "$headers connections trickling ~1 MB of headers that never end" -headers-endless "$headers"
    # The idle flood's connections become replaceable once idle for
    # serve.evict_idle_after (1 s): until then a newcomer is refused with
    # Retry-After, by design, so the polls start once that has passed.
    flood_run k "$idle connections idle after one GET /healthz each" -idle "$idle" -healthz-after 1500ms
    flood_run l "$headers connections each sending ~1 MB of headers with the token, unpaced" -headers "$headers" -header-rate 1099511627776
fi

# restart_run BATCH CLIENTS: run (m) for one load on a fresh server
# (sigterm-BATCH.json, run-m-BATCH.json). A failure is recorded, not fatal.
restart_run() {
    local b="$1" c="$2"
    echo "== (m) SIGTERM under load: $c clients x $b items that never look at readiness; 3 s, then SIGTERM" >&2
    start_server "$work/server-m-$b.log"
    local pid="$server_pid" lg_status=0 server_status=0
    "$loadgen" -mode sigterm -url "$url" -server-pid "$pid" -clients "$c" -batch "$b" -corpus "$corpus_items" \
        -retry-429 -warmup 3s -duration 30s -json >"$work/sigterm-$b.json" || lg_status=$?
    wait "$pid" || server_status=$?
    server_pid=""
    if [ "$server_status" -ne 0 ]; then
        echo "run.sh: (m) $b items: the server exited with status $server_status:" >&2
        tail -5 "$work/server-m-$b.log" >&2
    fi
    printf '{"loadgen_status": %d, "server_status": %d}\n' "$lg_status" "$server_status" >"$work/run-m-$b.json"
}
restart_loads=("64 32" "512 32" "8192 8")
if [ "$only" = all ] || [ "$only" = restart ]; then
    for load in "${restart_loads[@]}"; do
        # shellcheck disable=SC2086 # two words: the batch and the clients
        restart_run $load
    done
fi

# workers_run NAME WORKERS IDLE: run (o) on a fresh server (workers-NAME.json,
# run-o-NAME.json). A failure is recorded, not fatal.
workers_run() {
    local name="$1" n="$2" idle_n="$3" lg_status=0 server_status=0
    echo "== (o) $name: $n keep-alive workers, $idle_n of them idle, on a fresh server; 20 s warm-up, 20 s measured" >&2
    start_server "$work/server-o-$name.log"
    "$loadgen" -mode workers -url "$url" -server-pid "$server_pid" -workers "$n" -idle-workers "$idle_n" -batch 64 \
        -corpus "$corpus_items" -speak-every 20s -active-every 900ms -warmup 20s -duration 20s -json \
        >"$work/workers-$name.json" || lg_status=$?
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" || server_status=$?
    server_pid=""
    printf '{"loadgen_status": %d, "server_status": %d}\n' "$lg_status" "$server_status" >"$work/run-o-$name.json"
}
if [ "$only" = all ] || [ "$only" = workers ] || [ "$only" = cluster ]; then
    workers_run quiet "$((workers - idle_workers))" 0
fi
if [ "$only" = all ] || [ "$only" = workers ]; then
    workers_run cluster "$workers" "$idle_workers"
fi

# peak_kb PID: the process's peak resident memory in kB (0 once it is gone).
peak_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null || echo 0; }

# The two replicas of runs (p) and (q). start_replicas NAME starts them on
# free addresses (urls, replica_pids); restart_replicas NAME gives each in
# turn SIGTERM and, once it has exited, a new server on its address, 4 s
# apart; stop_replicas stops them. replicas_restarts, replicas_bad_exits
# (exits other than 0) and replicas_peak_kb (the highest peak of any of
# their processes) count what happened.
start_replicas() {
    urls=() replicas_restarts=0 replicas_bad_exits=0 replicas_peak_kb=0
    for i in 0 1; do
        start_server "$work/server-$1-$i.log"
        replica_pids[i]="$server_pid"
        urls[i]="$url"
    done
    server_pid=""
}
# stop_replica I [LOG]: SIGTERM to replica I and wait for it, its peak RSS
# kept; an exit other than 0 is counted, with LOG's end shown.
stop_replica() {
    local pid="${replica_pids[$1]}" kb exit_status=0
    kb="$(peak_kb "$pid")"
    if [ "${kb:-0}" -gt "$replicas_peak_kb" ]; then replicas_peak_kb="$kb"; fi
    kill -TERM "$pid"
    wait "$pid" || exit_status=$?
    if [ "$exit_status" -ne 0 ]; then
        replicas_bad_exits=$((replicas_bad_exits + 1))
        if [ -n "${2:-}" ]; then tail -5 "$2" >&2; fi
    fi
}
restart_replicas() {
    for i in 0 1; do
        echo "== ($1) SIGTERM to replica $i (${urls[i]})" >&2
        stop_replica "$i" "$work/server-$1-$i.log"
        serve_addr="${urls[i]#http://}" start_server "$work/server-$1-$i-again.log"
        replica_pids[i]="$server_pid"
        server_pid=""
        replicas_restarts=$((replicas_restarts + 1))
        sleep 4
    done
}
stop_replicas() {
    for i in 0 1; do stop_replica "$i"; done
    replica_pids=()
}
# replicas_peak_mb: replicas_peak_kb in MiB.
replicas_peak_mb() { awk -v kb="$replicas_peak_kb" 'BEGIN { print kb / 1024 }'; }

# Run (p): the workers of (o) over two replicas, each restarted once under
# the load, one at a time, on its own address (workers-p.json, run-p.json).
if [ "$only" = all ] || [ "$only" = workers ]; then
    echo "== (p) $workers workers ($idle_workers idle) over two replicas, each restarted once under the load; 20 s warm-up, 30 s measured" >&2
    start_replicas p
    p_status=0
    "$loadgen" -mode workers -url "${urls[0]}" -replicas "${urls[0]},${urls[1]}" -workers "$workers" -idle-workers "$idle_workers" \
        -batch 64 -corpus "$corpus_items" -speak-every 20s -active-every 900ms -warmup 20s -duration 30s -json \
        >"$work/workers-p.json" &
    p_loadgen=$!
    sleep 25
    restart_replicas p
    wait "$p_loadgen" || p_status=$?
    stop_replicas
    printf '{"loadgen_status": %d, "restarts": %d, "bad_exits": %d, "peak_rss_mb": %.1f}\n' \
        "$p_status" "$replicas_restarts" "$replicas_bad_exits" "$(replicas_peak_mb)" >"$work/run-p.json"
fi

# Run (q): the cluster profile on two replicas (workers-q.json, churn-q.json,
# attack-q.json, run-q.json). A failure is recorded, not fatal.
if [ "$only" = all ] || [ "$only" = cluster ]; then
    echo "== (q) the cluster profile: $workers workers ($idle_workers idle) and $cluster_creations timer creations over two replicas, the idle and unpaced floods at replica 0 for 25 s, then each replica restarted once" >&2
    start_replicas q
    q_workers_status=0 q_churn_status=0 q_attack_status=0
    "$loadgen" -mode attack -url "${urls[0]}" -server-pid "${replica_pids[0]}" -stall 0 -announce 0 -flood 0 -deep 0 \
        -idle "$idle" -headers "$headers" -header-rate 1099511627776 -healthz 50ms -healthz-after 1500ms -duration 1h -json \
        >"$work/attack-q.json" &
    q_attack=$!
    "$loadgen" -mode churn -url "${urls[0]}" -replicas "${urls[0]},${urls[1]}" -clients 32 -creations "$cluster_creations" \
        -ttl "$timer_ttl" -id-bytes 36,256 -json >"$work/churn-q.json" &
    q_churn=$!
    "$loadgen" -mode workers -url "${urls[0]}" -replicas "${urls[0]},${urls[1]}" -workers "$workers" -idle-workers "$idle_workers" \
        -batch 64 -corpus "$corpus_items" -speak-every 20s -active-every 900ms -warmup 20s -duration 30s -json \
        >"$work/workers-q.json" &
    q_loadgen=$!
    sleep 25
    kill -TERM "$q_attack" 2>/dev/null || true
    wait "$q_attack" || q_attack_status=$?
    restart_replicas q
    wait "$q_loadgen" || q_workers_status=$?
    wait "$q_churn" || q_churn_status=$?
    stop_replicas
    printf '{"workers_status": %d, "churn_status": %d, "attack_status": %d, "restarts": %d, "bad_exits": %d, "peak_rss_mb": %.1f}\n' \
        "$q_workers_status" "$q_churn_status" "$q_attack_status" "$replicas_restarts" "$replicas_bad_exits" \
        "$(replicas_peak_mb)" >"$work/run-q.json"
fi

if [ "$only" = all ] || [ "$only" = timers ]; then
    echo "== (n) $creations timer creations, ttl $timer_ttl, rollout ids of 36 and 256 bytes, on a fresh server" >&2
    start_server "$work/server-n.log"
    churn_status=0 churn_server_status=0
    "$loadgen" -mode churn -url "$url" -server-pid "$server_pid" -clients 32 -creations "$creations" -ttl "$timer_ttl" \
        -id-bytes 36,256 -json >"$work/churn.json" || churn_status=$?
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" || churn_server_status=$?
    server_pid=""
    printf '{"loadgen_status": %d, "server_status": %d}\n' "$churn_status" "$churn_server_status" >"$work/run-n.json"
fi

"$PYTHON" - "$work" "$load_before" "$(nproc 2>/dev/null || echo '?')" "$only" "$bin_desc" "$soft_files" "$hard_files" "${length_rewards[*]}" <<'PY'
import json
import sys
from pathlib import Path

work, load, ncpu, only, bin_desc, soft_files, hard_files, length_rewards = sys.argv[1:9]
work = Path(work)


def load_json(name):
    """A loadgen summary, or None when the run that writes it failed first."""
    f = work / name
    text = f.read_text().strip() if f.exists() else ""
    return json.loads(text.splitlines()[-1]) if text else None


b = load_json("batch.json")
failures = []
w = 44
print()
print(f"timeaware serve benchmark: {ncpu} CPUs shared by the server and the load generator "
      f"(load average before the run: {load}); open files: {soft_files} (hard limit {hard_files})")
print(f"server: {bin_desc}")
if only == "all":
    dump = load_json("dump.json")
    g = load_json("get_duration.json")
    ba = load_json("batch-attack.json")
    at = load_json("attack.json")
    bh = load_json("batch-hog.json")
    hg = load_json("hog.json")
    runs = [load_json(f"python-{i}.json") for i in (1, 2)]
    p = max(runs, key=lambda r: r["items_per_s"])
    py_cpu = min(r["cpu_us_per_item"] for r in runs)
    if dump["corpus_hash"] != b["corpus_hash"]:
        sys.exit(f"FAIL: the load generator's corpus ({b['corpus_hash']}) is not the dumped one ({dump['corpus_hash']})")
    ratio = b["items_per_s"] / p["items_per_s"]
    go_cpu = b.get("server_cpu_us_per_item")
    print(f"corpus: {dump['corpus_items']:,} timely/general items, {dump['corpus_bytes'] / dump['corpus_items']:,.0f} B each; "
          f"{dump['expected_correct']:,} right, {dump['format_fails']} bad format, {dump['late']:,} late")
    print()
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
        failures.append(f"{ba['errors']} legitimate requests failed under attack")
    if bh["errors"]:
        failures.append(f"{bh['errors']} legitimate requests failed beside the memory hogs for a reason other than shedding")
    for name, run in (("(e)", at), ("(f)", hg)):
        if run.get("server_peak_rss_mb", 0) > 512:
            failures.append(f"run {name}: the server's peak resident memory {run['server_peak_rss_mb']:.0f} MiB exceeds its 512 MiB memory limit")
    if bh["shed_all"] == 0:
        print("note: the memory hogs never made the server shed a legitimate request")
else:
    print()
    print(f"{'':{w}} {'value':>14}  notes")
    print(f"{'(a) Go POST /v1/score/batch, items/s':{w}} {b['items_per_s']:>14,.0f}  "
          f"{b['clients']} clients x {b['batch']} items, {b['seconds']:.0f} s, no attack")
    print(f"{'(a) batch latency p50 / p99 (ms)':{w}} {b['p50_ms']:>7.1f} / {b['p99_ms']:<5.1f} "
          f"(p90 {b['p90_ms']:.1f}, max {b['max_ms']:.1f}); errors {b['errors']}, mismatches {b['mismatches']}")


def report(run, checks):
    """Print each (text, ok) check of a run, PASS or FAIL; a FAIL fails the benchmark."""
    for text, ok in checks:
        print(f"    check: {text:<{w + 26}} {'PASS' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"{run}: {text}")


def outcomes(counts, means):
    return ", ".join(f"{v:,} x {k} ({means.get(k, 0):.1f} s)" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "none"


def length_run():
    """Run (j): one row per reward, each measured as (a) on the same server."""
    names = length_rewards.split()
    runs = {}
    for reward in names:
        name = reward.removeprefix("length/").replace("/", "-")
        status_file = work / f"length-{name}.status"
        status = int(status_file.read_text()) if status_file.exists() else None
        log = work / f"length-{name}.log"
        why = [l for l in (log.read_text().splitlines() if log.exists() else []) if l.startswith("loadgen:")]
        runs[reward] = (load_json(f"length-{name}.json"), status, why[-1][:400] if why else "")
    ref = runs[names[0]][0]
    first = next((r for r, _, _ in runs.values() if r), None)
    print()
    print("(j) the corpus re-labelled for each length reward on the server of (a): the same responses and ground truths, "
          "answer_check timely/general;")
    print("    token counts derived from the text (1 per 4 bytes, rounded), budgets drawn from the corpus seed; "
          + (f"{first['clients']} clients x {first['batch']} items, {first['seconds']:.2f} s measured each after 1 s warm-up, "
             f"every score checked first" if first else "no run completed"))
    grouped = {reward: r["group_size"] for reward, (r, _, _) in runs.items() if r and r.get("group_size")}
    if grouped:
        sizes = sorted(set(grouped.values()))
        print(f"    group-wise ({', '.join(grouped)}): groups of {'/'.join(map(str, sizes))} consecutive items answering one problem "
              f"(its ground truth, one token_budget), every request whole groups, each group checked against the "
              f"in-process scorer's score of it whole")
    print(f"    {'reward':<20} {'items/s':>10} {'server CPU us/item':>19} {'ratio':>7}  notes")
    for reward, (r, status, why) in runs.items():
        if r is None or status != 0:
            text = why or f"status {status}; see above"
            print(f"    {reward:<20} {'-':>10} {'-':>19} {'-':>7}  FAIL: {text}")
            failures.append(f"run (j) {reward}: {text}")
            continue
        cpu = r.get("server_cpu_us_per_item")
        ratio = f"{r['items_per_s'] / ref['items_per_s']:.2f}x" if ref else "-"
        over = (f"{r['over_budget']:,} of {r['corpus_items']:,} over budget; " if reward.startswith("length/") and reward != "length/anytime"
                else "")
        cores = f"server used {r['server_cpu_s'] / r['seconds']:.2f} cores; " if r.get("server_cpu_s") is not None else ""
        if r.get("group_size"):
            over += f"{r['corpus_items'] // r['group_size']:,} groups of {r['group_size']}" + (
                f", {r['batch']} items a request; " if first and r["batch"] != first["batch"] else "; ")
        print(f"    {reward:<20} {r['items_per_s']:>10,.0f} {(f'{cpu:.1f}' if cpu else '-'):>19} {ratio:>7}  "
              f"{cores}{over}{r['corpus_bytes'] / r['corpus_items']:,.0f} B/item; p50/p99 {r['p50_ms']:.1f}/{r['p99_ms']:.1f} ms; "
              f"failed items {r['failed_items']}, errors {r['errors']}, mismatches {r['mismatches']}")
        if r["failed_items"] or r["errors"] or r["mismatches"]:
            failures.append(f"run (j) {reward}: {r['failed_items']} failed items, {r['errors']} errors, {r['mismatches']} mismatches")
    print(f"    (ratio: items/s over timely/general's in this run (j); (a) measured timely/general at {b['items_per_s']:,.0f} items/s"
          + (f", {b['server_cpu_us_per_item']:.1f} us of server CPU per item)" if b.get("server_cpu_us_per_item") else ")"))
    tok_status = work / "length-tokenizer.status"
    t = load_json("length-tokenizer.json")
    plain = runs.get("length/lcpo_exact", (None,))[0]
    desc = (work / "tokenizer.desc").read_text().strip() if (work / "tokenizer.desc").exists() else "?"
    print(f"    length/lcpo_exact again on a second server given {desc} (rewards.length.tokenizer), the counts its own:")
    if t is None or not tok_status.exists() or int(tok_status.read_text()) != 0:
        log = work / "length-tokenizer.log"
        why = [l for l in (log.read_text().splitlines() if log.exists() else []) if l.startswith("loadgen:")]
        text = why[-1][:400] if why else "see above"
        print(f"    {'+ tokenizer':<20} FAIL: {text}")
        failures.append(f"run (j) with a tokenizer: {text}")
    else:
        cpu, pcpu = t.get("server_cpu_us_per_item"), (plain or {}).get("server_cpu_us_per_item")
        extra = f"; counting costs {cpu - pcpu:.1f} us of server CPU per item" if cpu and pcpu else ""
        ratio = f"{t['items_per_s'] / plain['items_per_s']:.2f}x" if plain else "-"
        print(f"    {'+ tokenizer':<20} {t['items_per_s']:>10,.0f} {(f'{cpu:.1f}' if cpu else '-'):>19} {ratio:>7}  "
              f"(ratio: over length/lcpo_exact's without it){extra}; p50/p99 {t['p50_ms']:.1f}/{t['p99_ms']:.1f} ms; "
              f"failed items {t['failed_items']}, errors {t['errors']}, mismatches {t['mismatches']}")
        if t["failed_items"] or t["errors"] or t["mismatches"]:
            failures.append(f"run (j) with a tokenizer: {t['failed_items']} failed items, {t['errors']} errors, {t['mismatches']} mismatches")


if only in ("all", "length"):
    length_run()

if only in ("all", "flood"):
    print()
    print("floods: each run on a fresh server, GET /healthz polled every 50 ms on new connections "
          "(failed: no 200 within 1 s); connections' ends with their mean seconds from dial (idle: from the answer)")
    for name, what in (("g", "header flood, token"), ("h", "header flood, no token"), ("i", "endless headers"),
                       ("k", "idle connections"), ("l", "header flood, unpaced")):
        fb, fa, fr = load_json(f"batch-{name}.json"), load_json(f"attack-{name}.json"), load_json(f"run-{name}.json")
        tag = f"({name}) {what}"
        checks = []
        if fb is None:
            print(f"{tag + ': batch':{w}} {'-':>14}  the batch run failed before its summary (status {fr['batch_status']}; see above)")
            checks.append(("the batch run completed", False))
        else:
            print(f"{tag + ': batch items/s':{w}} {fb['items_per_s']:>14,.0f}  {fb['items_per_s'] / b['items_per_s']:.2f}x of (a); "
                  f"latency p50 / p99 {fb['p50_ms']:.1f} / {fb['p99_ms']:.1f} ms (max {fb['max_ms']:.0f}); "
                  f"legitimate errors {fb['errors']}, mismatches {fb['mismatches']}")
            checks.append((f"no legitimate request failed ({fb['errors']} errors, {fb['mismatches']} mismatches)",
                           fb["errors"] == 0 and fb["mismatches"] == 0 and fr["batch_status"] == 0))
            checks.append((f"batch p99 {fb['p99_ms']:.1f} ms within 2x (a)'s {b['p99_ms']:.1f} ms", fb["p99_ms"] <= 2 * b["p99_ms"]))
        if fa is None:
            print(f"{tag + ': flood':{w}} {'-':>14}  the attack failed before its summary (status {fr['attack_status']}; see above)")
            checks.append(("the attack completed", False))
        else:
            if fa.get("idle_connections"):
                conns, ends, means = fa["idle_connections"], fa["idle_outcomes"], fa["idle_mean_s"]
                print(f"{'    flood':{w}} {conns:>14,}  connections, each idle after one GET /healthz without the token, "
                      f"not reopened; the flood used {fa['loadgen_cpu_s'] / fa['seconds']:.2f} cores")
            else:
                conns = fa["header_connections"] or fa["endless_connections"]
                ends = fa["header_outcomes"] if fa["header_connections"] else fa["endless_outcomes"]
                means = fa["header_mean_s"] if fa["header_connections"] else fa["endless_mean_s"]
                paced = "unpaced" if fa["header_rate_mb_s"] > 1e5 else f"paced at {fa['header_rate_mb_s']:.0f} MB/s"
                print(f"{'    flood':{w}} {conns:>14,}  connections, heads of {fa['header_bytes'] / 1e6:.1f} MB "
                      f"({fa['header_pad']} padding headers{', with the token' if fa['header_auth'] else ', no token'}); "
                      f"{fa['header_sent_mb']:,.0f} MB sent in {fa['seconds']:.0f} s on {fa['header_connections_opened']:,} connections "
                      f"({paced}); the flood used {fa['loadgen_cpu_s'] / fa['seconds']:.2f} cores")
            print(f"{'    flood connections ended':{w}} {'':>14}  {outcomes(ends, means)}")
            h = fa["healthz"]
            print(f"{'    GET /healthz p50 / p99 / max (ms)':{w}} {h['p50_ms']:>7.1f} / {h['p99_ms']:.1f} / {h['max_ms']:.0f}; "
                  f"{h['failures']} of {h['polls']} polls failed; longest without an answer {h['longest_gap_ms']:,.0f} ms")
            for e in h.get("first_errors", [])[:3]:
                print(f"{'':{w}} {'':>14}  {e}")
            checks.append((f"/healthz answered every poll ({h['failures']} of {h['polls']} failed)", h["failures"] == 0))
            rss = fa.get("server_peak_rss_mb")
            if rss is not None:
                print(f"{'    server peak RSS (MiB)':{w}} {rss:>14,.0f}  memory limit 512 MiB")
                checks.append((f"peak RSS {rss:.0f} MiB within the 512 MiB limit", rss <= 512))
        if fr["server_ran_to_the_end"]:
            checks.append((f"the server ran to the end and stopped cleanly (status {fr['server_status']})", fr["server_status"] == 0))
        else:
            checks.append((f"the server ran to the end (it exited during the run, status {fr['server_status']})", False))
        report(f"run ({name})", checks)
if only in ("all", "restart"):
    print()
    print("(m) SIGTERM under load, each on a fresh server: clients that never look at readiness send until a connection "
          "is refused; unsent: refused before the request was written; reset: written, then lost")
    for b_items in (64, 512, 8192):
        r, st = load_json(f"sigterm-{b_items}.json"), load_json(f"run-m-{b_items}.json")
        tag = f"(m) {b_items}-item batches"
        checks = []
        if r is None:
            print(f"{tag:{w}} {'-':>14}  the load generator failed before its summary (status {st['loadgen_status']}; see above)")
            checks.append(("the load generator completed", False))
        else:
            print(f"{tag + ': reset':{w}} {r['reset']:>14,}  {r['clients']} clients; answered {r['answered_before']:,} before SIGTERM "
                  f"and {r['answered_after']:,} after; {r['unsent']} unsent; {r['shed']:,} 429s retried; "
                  f"{r['other']} other answers; last client refused {r['stopped_s']:.2f} s after SIGTERM, "
                  f"server gone after {r['exited_s']:.2f} s")
            checks.append((f"no request reset ({r['reset']})", r["reset"] == 0 and st["loadgen_status"] == 0))
            checks.append((f"requests answered after SIGTERM ({r['answered_after']:,})", r["answered_after"] > 0))
        checks.append((f"the server exited 0 (status {st['server_status']})", st["server_status"] == 0))
        report(f"run (m) {b_items} items", checks)
if only in ("all", "workers"):
    print()
    q, qs = load_json("workers-quiet.json"), load_json("run-o-quiet.json")
    r, st = load_json("workers-cluster.json"), load_json("run-o-cluster.json")
    checks = []
    for name, x, xs in (("quiet", q, qs), ("cluster", r, st)):
        if x is None:
            print(f"{'(o) ' + name:{w}} {'-':>14}  the load generator failed before its summary (status {xs['loadgen_status']}; see above)")
            checks.append((f"the {name} run completed", False))
            continue
        idle = (f"; idle: {x['idle_requests']:,} requests, p50 / p99 {x['idle_latency']['p50_ms']:.1f} / {x['idle_latency']['p99_ms']:.1f} ms"
                if x["idle_workers"] else "")
        print(f"{'(o) ' + name + ': items/s':{w}} {x['items_per_s']:>14,.0f}  {x['workers']:,} workers, {x['idle_workers']:,} idle; "
              f"active: {x['active_requests']:,} requests, p50 / p99 {x['active_latency']['p50_ms']:.1f} / "
              f"{x['active_latency']['p99_ms']:.1f} ms{idle}")
        print(f"{'    not served (503 / 429 / failed)':{w}} {x['refused'] + x['shed'] + x['failed']:>14,}  "
              f"{x['refused']} / {x['shed']} / {x['failed']}; the server closed {x['evicted'].get('idle', 0):,.0f} idle and "
              f"{x['evicted'].get('closing', 0):,.0f} closing connections to make room, held at most "
              f"{x['server_open_connections_max']:,.0f}; peak RSS {x.get('server_peak_rss_mb', 0):.0f} MiB")
        checks.append((f"{name}: every request served ({x['refused'] + x['shed'] + x['failed']} not)",
                       x["refused"] + x["shed"] + x["failed"] == 0 and xs["loadgen_status"] == 0))
        checks.append((f"{name}: peak RSS {x.get('server_peak_rss_mb', 0):.0f} MiB within the 512 MiB limit",
                       0 < x.get("server_peak_rss_mb", 0) <= 512))
        checks.append((f"{name}: the server stopped cleanly (status {xs['server_status']})", xs["server_status"] == 0))
    if q and r:
        qa, ra = q["active_latency"]["p99_ms"], r["active_latency"]["p99_ms"]
        checks.append((f"active p99 {ra:.1f} ms within 2x the quiet {qa:.1f} ms", ra <= 2 * qa))
    report("run (o)", checks)

if only in ("all", "workers"):
    r, st = load_json("workers-p.json"), load_json("run-p.json")
    checks = []
    if r is None:
        print(f"{'(p) restarts':{w}} {'-':>14}  the load generator failed before its summary (status {st['loadgen_status']}; see above)")
        checks.append(("the load generator completed", False))
    else:
        print(f"{'(p) two replicas, restarted: items/s':{w}} {r['items_per_s']:>14,.0f}  {r['workers']:,} workers, {r['idle_workers']:,} idle; "
              f"{st['restarts']} restarts one at a time in the measured window; active p50 / p99 "
              f"{r['active_latency']['p50_ms']:.1f} / {r['active_latency']['p99_ms']:.1f} ms, idle "
              f"{r['idle_latency']['p50_ms']:.1f} / {r['idle_latency']['p99_ms']:.1f} ms")
        print(f"{'    reset / moved / not served':{w}} {r['reset']:>14,}  {r['moved']:,} requests moved to the other replica before "
              f"they were sent; {r['resent']:,} resent on a fresh connection after the server closed a kept-alive one under them; "
              f"{r['refused']} x 503, {r['shed']} x 429, {r['failed']} failed; peak RSS of the replicas "
              f"{st['peak_rss_mb']:.0f} MiB")
        checks.append((f"no request reset ({r['reset']})", r["reset"] == 0))
        checks.append((f"every request served ({r['refused'] + r['shed'] + r['failed']} not)",
                       r["refused"] + r["shed"] + r["failed"] == 0 and st["loadgen_status"] == 0))
    checks.append((f"every replica exited 0 ({st['bad_exits']} did not)", st["bad_exits"] == 0))
    checks.append((f"peak RSS {st['peak_rss_mb']:.0f} MiB within the 512 MiB limit", 0 < st["peak_rss_mb"] <= 512))
    report("run (p)", checks)

if only in ("all", "cluster"):
    q, r, ch, fa, st = (load_json("workers-quiet.json"), load_json("workers-q.json"), load_json("churn-q.json"),
                        load_json("attack-q.json"), load_json("run-q.json"))
    checks = []
    print()
    print("(q) the cluster profile: two replicas, each restarted once under the load; the workers of (o) and timer creations "
          "over both, the idle and unpaced floods at replica 0 for the first 25 s")
    if r is None:
        print(f"{'(q) workers':{w}} {'-':>14}  the load generator failed before its summary (status {st['workers_status']}; see above)")
        checks.append(("the workers' load generator completed", False))
    else:
        ref = (f" (quiet, one replica: {q['active_latency']['p50_ms']:.1f} / {q['active_latency']['p99_ms']:.1f} ms)" if q else "")
        print(f"{'(q) workers: items/s':{w}} {r['items_per_s']:>14,.0f}  {r['workers']:,} workers, {r['idle_workers']:,} idle; "
              f"active p50 / p99 {r['active_latency']['p50_ms']:.1f} / {r['active_latency']['p99_ms']:.1f} ms{ref}; idle "
              f"{r['idle_latency']['p50_ms']:.1f} / {r['idle_latency']['p99_ms']:.1f} ms")
        print(f"{'    reset / moved / not served':{w}} {r['reset']:>14,}  {r['moved']:,} moved to the other replica before they "
              f"were sent; {r['resent']:,} resent on a fresh connection; {r['refused']} x 503, {r['shed']} x 429, {r['failed']} failed")
        checks.append((f"no worker's request reset ({r['reset']})", r["reset"] == 0))
        checks.append((f"every worker's request served ({r['refused'] + r['shed'] + r['failed']} not)",
                       r["refused"] + r["shed"] + r["failed"] == 0 and st["workers_status"] == 0))
    if ch is None:
        print(f"{'(q) timers':{w}} {'-':>14}  the churn failed before its summary (status {st['churn_status']}; see above)")
        checks.append(("the timer creations completed", False))
    else:
        print(f"{'(q) timers: created':{w}} {ch['created']:>14,}  of {ch['creations']:,} in {ch['seconds']:.0f} s "
              f"({ch['created_per_s']:,.0f}/s), ttl {ch['ttl_s']:.0f} s; {ch['refused']:,} refused while an index was full "
              f"(503 timer_index_full), {ch['other']} other answers; {ch['moved']:,} moved, {ch['resent']:,} resent")
        print(f"{'    probes':{w}} {ch['probes']:>14,}  {ch['probes_lost']} lost before their ttl, {ch['probes_alive']} still read after it")
        checks.append((f"every creation created or refused as documented ({ch['other']} other answers)",
                       ch["other"] == 0 and ch["created"] + ch["refused"] == ch["creations"] and st["churn_status"] == 0))
        checks.append((f"no timer lost before its ttl ({ch['probes_lost']}), none read after it ({ch['probes_alive']})",
                       ch["probes_lost"] == 0 and ch["probes_alive"] == 0))
    if fa is None:
        print(f"{'(q) floods':{w}} {'-':>14}  the attack failed before its summary (status {st['attack_status']}; see above)")
        checks.append(("the floods completed", False))
    else:
        h = fa["healthz"]
        answered = 1 - h["failures"] / h["polls"] if h["polls"] else 0
        print(f"{'(q) floods: /healthz answered':{w}} {answered:>14.1%}  {h['polls'] - h['failures']:,} of {h['polls']:,} polls at replica 0 "
              f"beside {fa.get('idle_connections', 0):,} idle connections and {fa.get('header_connections', 0):,} unpaced header "
              f"floods; p50 / p99 {h['p50_ms']:.1f} / {h['p99_ms']:.1f} ms")
        checks.append((f"/healthz answered at least 99% of its polls ({answered:.1%})", answered >= 0.99))
    print(f"{'(q) replicas: peak RSS (MiB)':{w}} {st['peak_rss_mb']:>14,.0f}  memory limit 512 MiB each; {st['restarts']} restarts, "
          f"{st['bad_exits']} exits other than 0")
    checks.append((f"every replica exited 0 ({st['bad_exits']} did not)", st["bad_exits"] == 0))
    checks.append((f"peak RSS {st['peak_rss_mb']:.0f} MiB within the 512 MiB limit", 0 < st["peak_rss_mb"] <= 512))
    report("run (q)", checks)

if only in ("all", "timers"):
    print()
    r, st = load_json("churn.json"), load_json("run-n.json")
    checks = []
    if r is None:
        print(f"{'(n) timers':{w}} {'-':>14}  the load generator failed before its summary (status {st['loadgen_status']}; see above)")
        checks.append(("the load generator completed", False))
    else:
        print(f"(n) a long run's timers on a fresh server: {r['creations']:,} creations by {r['clients']} clients, rollout ids of "
              f"{' and '.join(map(str, r['id_bytes']))} bytes, ttl {r['ttl_s']:.0f} s")
        print(f"{'(n) created / s':{w}} {r['created_per_s']:>14,.0f}  {r['created']:,} created in {r['seconds']:.0f} s")
        print(f"{'(n) refused, index full (503)':{w}} {r['refused']:>14,}  the server counted {r['refused_by_server']:,.0f}; "
              f"other answers {r['other']}")
        print(f"{'(n) held at most':{w}} {r['held_max']:>14,.0f}  timers; index at most {r['index_bytes_max'] / 2**20:.1f} MiB "
              f"of its {r['index_limit_bytes'] / 2**20:.1f} MiB")
        print(f"{'(n) probes':{w}} {r['probes']:>14,}  {r['probes_lost']} lost before their ttl, {r['probes_alive']} still read after it")
        rss = r.get("server_peak_rss_mb", 0)
        print(f"{'(n) server peak RSS (MiB)':{w}} {rss:>14,.0f}  memory limit 512 MiB")
        checks.append((f"every creation created or refused ({r['created']:,} + {r['refused']:,} of {r['creations']:,})",
                       r["created"] + r["refused"] == r["creations"] and r["other"] == 0 and st["loadgen_status"] == 0))
        checks.append((f"every refusal counted in /metrics ({r['refused_by_server']:,.0f})", r["refused_by_server"] == r["refused"]))
        checks.append((f"no timer lost before its ttl ({r['probes_lost']} of {r['probes']:,} probes)", r["probes_lost"] == 0 and r["probes"] > 0))
        checks.append((f"no timer read after its ttl ({r['probes_alive']})", r["probes_alive"] == 0))
        checks.append((f"peak RSS {rss:.0f} MiB within the 512 MiB limit", 0 < rss <= 512))
    checks.append((f"the server stopped cleanly (status {st['server_status']})", st["server_status"] == 0))
    report("run (n)", checks)
if failures:
    sys.exit("FAIL: " + "; ".join(failures))
PY
