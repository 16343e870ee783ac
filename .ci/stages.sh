# Stages with their times, for .ci/run and make test.
#
# Sourced:   stage NAME CMD...   runs CMD under the heading "== NAME" and
#                                records how long it took and how it ended;
#            stages_report       prints every stage recorded, with the total.
# Run:       bash .ci/stages.sh make [--background T1,T2] TARGET... [--wait] TARGET...
#                                runs each make target as a stage, stopping at
#                                the first that fails (make test does this).
#                                The targets after --background run one after
#                                another in the background, their output kept
#                                aside, while the stages that follow run;
#                                --wait waits for them, prints their output and
#                                fails if they failed. A background job left
#                                running when the run ends is stopped.
#
# Stages nest: a run started inside a stage (make test inside .ci/run)
# records its stages, indented, in the outer run's record, and only the
# outermost run prints the report, when it exits, however it exits.

stage() {
    local name=$1
    shift
    echo "== $name"
    local t0=$SECONDS status=0
    local depth=${STAGES_DEPTH:-0}
    STAGES_DEPTH=$((depth + 1)) "$@" || status=$?
    local took=$((SECONDS - t0))
    local mark=ok
    if [ "$status" != 0 ]; then mark="FAILED (exit $status)"; fi
    # The record is written after the stage, so a nested stage's lines come
    # first: the report restores the order by each line's start time.
    printf '%s\t%s\t%s\t%s\t%s\n' "$(($(date +%s) - took))" "$depth" "$took" "$mark" "$name" >>"$STAGES_LOG"
    echo "== $name: $(stages_duration "$took"), $mark"
    return "$status"
}

stages_duration() {
    printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

stages_report() {
    [ -s "$STAGES_LOG" ] || return 0
    echo
    echo "== Time per stage"
    sort -s -t "$(printf '\t')" -k1,1n -k2,2n "$STAGES_LOG" | while IFS="$(printf '\t')" read -r _ depth took mark name; do
        printf '%*s%-*s %8s  %s\n' $((2 * depth)) "" $((44 - 2 * depth)) "$name" "$(stages_duration "$took")" "$mark"
    done
    echo "   total $(stages_duration $((SECONDS - STAGES_T0)))"
}

stages_outermost=
if [ -z "${STAGES_LOG:-}" ]; then
    # The outermost run: it owns the record and prints it at exit.
    STAGES_LOG=$(mktemp "${TMPDIR:-/tmp}/stages.XXXXXX")
    export STAGES_LOG
    STAGES_T0=$SECONDS
    stages_outermost=1
    trap 'stages_report; rm -f "$STAGES_LOG"' EXIT
fi
export STAGES_DEPTH=${STAGES_DEPTH:-0}

# The background job of a make run: its pid (a process group of its own
# where setsid is there, so that stopping it stops the make and pip under
# it) and the file its output goes to.
stages_bg_pid=
stages_bg_out=

stages_background() {
    stages_bg_out=$(mktemp "${TMPDIR:-/tmp}/stages-background.XXXXXX")
    local targets
    IFS=, read -r -a targets <<<"$1"
    local cmd='for t in "$@"; do stage "make $t (in the background)" "${MAKE:-make}" --no-print-directory "$t" || exit; done'
    echo "== in the background: make ${targets[*]}, its output shown at --wait"
    if command -v setsid >/dev/null; then
        setsid -w bash -c "source .ci/stages.sh; $cmd" stages "${targets[@]}" >"$stages_bg_out" 2>&1 &
    else
        bash -c "source .ci/stages.sh; $cmd" stages "${targets[@]}" >"$stages_bg_out" 2>&1 &
    fi
    stages_bg_pid=$!
}

stages_wait() {
    local status=0
    wait "$stages_bg_pid" || status=$?
    stages_bg_pid=
    cat "$stages_bg_out"
    rm -f "$stages_bg_out"
    return "$status"
}

stages_stop_background() {
    if [ -n "$stages_bg_pid" ]; then
        kill -TERM -- "-$stages_bg_pid" 2>/dev/null || kill -TERM "$stages_bg_pid" 2>/dev/null || true
        wait "$stages_bg_pid" 2>/dev/null || true
        echo "== the background stages were stopped; their output:"
        cat "$stages_bg_out"
        rm -f "$stages_bg_out"
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = make ]; then
    set -e
    shift
    if [ -n "$stages_outermost" ]; then
        trap 'stages_stop_background; stages_report; rm -f "$STAGES_LOG"' EXIT
    else
        trap 'stages_stop_background' EXIT
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --background)
            stages_background "$2"
            shift 2
            ;;
        --wait)
            stage "waiting for the background stages" stages_wait
            shift
            ;;
        *)
            stage "make $1" "${MAKE:-make}" --no-print-directory "$1"
            shift
            ;;
        esac
    done
fi
