# What the benchmark scripts share, as examples/args.sh is for the examples.
# A script sources it after `set -euo pipefail`:
#
#   here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
#   source "$here/../lib.sh"
#
# It sets repo (the checkout) and shared ($TIMEAWARE_SHARED, default
# <repo>/../shared), and defines the functions below.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${TIMEAWARE_SHARED:-$repo/../shared}"

# bench_count VALUE USAGE: VALUE must be a positive integer; otherwise print
# "usage: USAGE" and exit 2.
bench_count() {
    if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -le 0 ]; then
        echo "usage: $2" >&2
        exit 2
    fi
}

# bench_need_time SCRIPT: exit 1, naming SCRIPT, without GNU time at /usr/bin/time.
bench_need_time() {
    if [ ! -x /usr/bin/time ]; then
        echo "$1: /usr/bin/time is missing; install it with: apt-get update && apt-get install -y time" >&2
        exit 1
    fi
}

# bench_python: PYTHON, else the checkout's .venv/bin/python where it is, else python3.
bench_python() {
    if [ -z "${PYTHON:-}" ]; then
        if [ -x "$repo/.venv/bin/python" ]; then PYTHON="$repo/.venv/bin/python"; else PYTHON=python3; fi
    fi
}

# bench_workdir NAME: sets work to $TIMEAWARE_BENCH_DIR (kept, its inputs
# reused), else to a temporary directory timeaware-NAME.XXXXXX removed at exit.
bench_workdir() {
    if [ -n "${TIMEAWARE_BENCH_DIR:-}" ]; then
        work="$TIMEAWARE_BENCH_DIR"
        mkdir -p "$work"
    else
        work="$(mktemp -d "${TMPDIR:-/tmp}/timeaware-$1.XXXXXX")"
        trap 'rm -rf "$work"' EXIT
    fi
}

# bench_build: go build bin/timeaware from the checkout.
bench_build() {
    echo "== building bin/timeaware" >&2
    (cd "$repo" && go build -o bin/timeaware ./cmd/timeaware)
}

# bench_corpus SAMPLES: sets corpus to $work/corpus-SAMPLES, a folder of
# SAMPLES samples made from the TicToc v1 trajectories
# (bench/pairs/make_corpus.py, with $PYTHON), reused when a finished one is there.
bench_corpus() {
    corpus="$work/corpus-$1"
    if [ -f "$corpus.done" ] && [ -d "$corpus" ]; then
        echo "== reusing corpus $corpus" >&2
    else
        echo "== making corpus of $1 samples in $corpus" >&2
        rm -rf "$corpus" "$corpus.done"
        PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$repo/bench/pairs/make_corpus.py" \
            --samples "$1" --source "$shared/data/tictoc-v1" --out "$corpus" >&2
        touch "$corpus.done"
    fi
}

# bench_seconds TIMEFILE: the wall-clock seconds /usr/bin/time -v recorded.
bench_seconds() {
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$1"
}

# bench_rss_mb TIMEFILE: the peak resident set size /usr/bin/time -v recorded, in MB.
bench_rss_mb() {
    awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$1"
}

# bench_start_server NAME BIN LOG [FLAGS...]: start "BIN FLAGS... serve" on a
# free loopback port (port 0: the kernel picks one, which the server logs;
# $serve_addr, when set, is the address to listen on instead), its log in
# LOG. Sets server_pid, and url once /healthz answers ($loadgen -mode wait).
# NAME names the calling script in the error when the server does not start.
bench_start_server() {
    local name="$1" bin="$2" log="$3"
    shift 3
    "$bin" "$@" serve --addr "${serve_addr:-127.0.0.1:0}" 2>"$log" &
    server_pid=$!
    local addr=""
    for _ in $(seq 200); do
        addr="$(sed -n 's/.*msg=serving addr=\([^ ]*\).*/\1/p' "$log")"
        if [ -n "$addr" ] || ! kill -0 "$server_pid" 2>/dev/null; then break; fi
        sleep 0.05
    done
    if [ -z "$addr" ]; then
        echo "$name: the server did not start:" >&2
        cat "$log" >&2
        exit 1
    fi
    url="http://$addr"
    "$loadgen" -mode wait -url "$url" -timeout 30s
}
