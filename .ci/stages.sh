# Stages with their times, for .ci/run and make test.
#
# Sourced:   stage NAME CMD...   runs CMD under the heading "== NAME" and
#                                records how long it took and how it ended;
#            stages_report       prints every stage recorded, with the total.
# Run:       bash .ci/stages.sh make TARGET...
#                                runs each make target as a stage, stopping at
#                                the first that fails (make test does this).
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

if [ -z "${STAGES_LOG:-}" ]; then
    # The outermost run: it owns the record and prints it at exit.
    STAGES_LOG=$(mktemp "${TMPDIR:-/tmp}/stages.XXXXXX")
    export STAGES_LOG
    STAGES_T0=$SECONDS
    trap 'stages_report; rm -f "$STAGES_LOG"' EXIT
fi
export STAGES_DEPTH=${STAGES_DEPTH:-0}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = make ]; then
    set -e
    shift
    for target in "$@"; do
        stage "make $target" "${MAKE:-make}" --no-print-directory "$target"
    done
fi
